/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One snapshot file parsed, checked and encoded on its own, and the cache
 * that lets a reload reuse the files that did not change
 * (docs/design.md §3, "Reloads cost what changed").
 *
 * A load (loader.h) parses each file of a key into an xd_parsed: one
 * finished table per section holding the file's resources (table.h,
 * encoded in their wire forms), the errors found in the file alone,
 * and the list of what it defined, in file order, so that merging the
 * files of a key reports duplicates across files, and interleaves them
 * with each file's own errors, exactly as one pass over every file
 * would. The key's tables are then merged from the files' tables
 * (xd_table_merge), which share their bytes.
 *
 * A file is known by its path, its kind (JSON or YAML) and its bytes:
 * their length and XXH3-128 hash. A file renamed is parsed again, since
 * its errors and every resource's "defined at" name its path. The
 * bytes need not be read to be known: the cache keeps each file's
 * bytes and what stat said as they were read, and a directory read
 * (files.h) takes the file those name as unchanged when its device,
 * inode, size, mtime and ctime are all the same, unless it had changed
 * within XD_SNAPSHOT_RACY_NS of that read. The ctime counts, which
 * nothing but the kernel sets: an edit that keeps the size and puts
 * the mtime back (`touch -d`, `cp -p`, a clock set back) is still read
 * and hashed. Files from elsewhere (etcd) have no stat: their bytes are
 * hashed on every load, as are those of a file read again.
 *
 * Ownership and threads: an xd_parsed changes only in the load using it
 * (xd_parsed_swap_table trades a table for an interchangeable one); its
 * tables are shared read-only with the snapshots made of them (their
 * references are atomic), while the xd_parsed itself, with its plain
 * reference count, belongs to the load using it and to the cache. The
 * cache belongs to the reloader, which hands it to the one load running
 * at a time on the thread pool (reload.c: start() to work_done()); the
 * loop thread never touches it meanwhile, and what it keeps of a load is
 * every file of that load, good or not, with its bytes (bounded by the
 * directory; the bytes are shared with the loads' files, whose last
 * good ones may be saved meanwhile on another thread: files.h).
 */
#ifndef XD_SNAPSHOT_PARSED_H
#define XD_SNAPSHOT_PARSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/files.h"
#include "snapshot/table.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/span.h"
#include "xds/rtype.h"

/* The sections of a snapshot file: one per type, then one per list
 * collection type (rule X3). */
#define XD_SNAP_SECTIONS (XD_RTYPE_COUNT + XD_CTYPE_COUNT)

enum xd_parsed_kind {
	XD_PARSED_ENTRY,  /* added to the file's table */
	XD_PARSED_DUP,    /* refused: its name was taken earlier in the file */
	XD_PARSED_BROKEN, /* refused for its errors (in the file's own): its
			   * name when one could be read ("" when not), so
			   * that what refers to it is not said missing too */
};

/* A resource the file defined, in file order. */
struct xd_parsed_op {
	uint8_t kind;          /* enum xd_parsed_kind */
	uint8_t section;       /* < XD_SNAP_SECTIONS */
	bool variant;          /* has "@dynamic_parameter_constraints" */
	bool open_secret;      /* a secret without "@allow" (loader.h) */
	uint32_t line, column;
	uint32_t index;        /* in its section's list: "clusters[index]" */
	uint32_t diag_at;      /* the file's own errors reported before it */
	/* An ENTRY's name and constraints are its entry's; a DUP's are
	 * here, in the arena (xd_parsed_op_name, _constraints). */
	const char *name;
	struct xd_span constraints;
	const struct xd_entry *e;   /* ENTRY: in tables[section] */
};

struct xd_parsed {
	unsigned refs;
	char *path;
	bool json;
	size_t len;
	uint64_t hash_lo, hash_hi; /* XXH3-128 of the bytes */
	/* The bytes as last read from disk, and what stat said of them
	 * (NULL, zero: not from disk): what the next read compares with. */
	struct xd_snapbytes *bytes;
	struct xd_snapstat st;
	struct xd_table *tables[XD_SNAP_SECTIONS]; /* NULL: none there */
	struct xd_parsed_op *ops;
	size_t nops, cap;
	size_t ndup, nopen; /* ops refused as duplicates; open secrets */
	struct xd_diag diag; /* the file's own errors, in file order */
	/* Of those, the BROKEN ops' own: when they are all of them, every
	 * resource of the file was read, and what is not there failed by
	 * name (or without one, in its section). */
	size_t item_errors;
	struct xd_arena arena;
	struct xd_arena scratch; /* ENTRY names until resolved */
};

/* A new op at the end of the list: `name` and `constraints` (NULL
 * data: none) copied, `diag_at` set, the rest zero. */
struct xd_parsed_op *xd_parsed_push(struct xd_parsed *p,
				    enum xd_parsed_kind kind,
				    const char *name,
				    struct xd_span constraints);

/* Once every table is finished: each ENTRY op pointed at its entry
 * (and its copy of the name dropped). */
void xd_parsed_resolve(struct xd_parsed *p);

/*
 * Section `s` of `p` held by `t` instead, a table interchangeable with
 * it (table.h: the same resources defined at the same places, such as
 * the one already served), each ENTRY op pointed at t's entry: so that
 * one table, not two equal ones, stays alive. By the load using `p`.
 */
void xd_parsed_swap_table(struct xd_parsed *p, unsigned s,
			  struct xd_table *t);

const char *xd_parsed_op_name(const struct xd_parsed_op *op);
struct xd_span xd_parsed_op_constraints(const struct xd_parsed_op *op);

/* Where it is in its file, as the transcoder names it: "clusters[2]". */
void xd_parsed_op_path(const struct xd_parsed_op *op, char *buf,
		       size_t size);

struct xd_parsed *xd_parsed_ref(struct xd_parsed *p);
void xd_parsed_unref(struct xd_parsed *p);

/* ---------------- the cache ---------------- */

struct xd_parsed_cache;

struct xd_parsed_cache *xd_parsed_cache_new(void);
void xd_parsed_cache_free(struct xd_parsed_cache *c);

/*
 * The record of `f` for the caller: the file parsed earlier with the
 * same path, kind and bytes (`*found` set; it now holds f's bytes and
 * stat, what the next read compares with), else a new empty one, its
 * identity computed, for the loader to fill. `c` may be NULL. The bytes
 * are hashed once, and not at all when they are the very bytes the
 * cached file holds (found unchanged by stat).
 */
struct xd_parsed *xd_parsed_cache_get(struct xd_parsed_cache *c,
				      const struct xd_snapfile *f,
				      bool *found);

/* xd_snapdir_known_fn (files.h) over `cache`: what the cache holds of
 * `path` read from disk. */
bool xd_parsed_cache_known(void *cache, const char *path, bool json,
			   struct xd_snapstat *st, struct xd_snapbytes **bytes);

/* From now on the cache holds exactly `files` (references taken): the
 * files of the latest load, so it never grows past one directory. What
 * it held before is let go by the next xd_parsed_cache_release (or
 * keep): a load on the thread pool keeps its files, and the loop thread
 * releases the old ones, whose tables may still carry what the loop
 * attached to them when a snapshot was served from them (table.h,
 * xd_table_attachment), freed only on the loop. */
void xd_parsed_cache_keep(struct xd_parsed_cache *c,
			  struct xd_parsed *const *files, size_t n);

/* Lets go of what the last keep() replaced (loop thread, when the
 * cache is used by loads on the thread pool). */
void xd_parsed_cache_release(struct xd_parsed_cache *c);

/* Files held (for tests and the log). */
size_t xd_parsed_cache_count(const struct xd_parsed_cache *c);

#endif
