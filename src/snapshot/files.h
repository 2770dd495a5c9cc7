/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snapshot directory on disk: which keys it defines, the files of
 * each, and their text.
 *
 *   DIR/<key>.yaml (.yml, .json)   the snapshot of <key>
 *   DIR/<key>/NAME.yaml (...)      files merged into the snapshot of <key>
 *
 * Hidden entries and other files are ignored. A key defined twice is
 * an error, as are unreadable files, files over XD_SNAPSHOT_MAX_FILE
 * and files with nothing but blanks and comments (a truncated file must
 * not tell every client to drop everything; an empty snapshot is `{}`).
 *
 * Symlinks are followed, and the files of one read are of one version:
 * if a path read leads elsewhere once everything is read (a symlink on
 * the way was swapped: a release link re-pointed, a Kubernetes
 * ConfigMap's ..data renamed over), everything is read again, up to
 * XD_SNAPSHOT_READ_TRIES times; then the read fails.
 *
 * A read can be told the files an earlier read found (their stat and
 * bytes, kept by the cache of parsed files, parsed.h): a file whose
 * device, inode, size, mtime and ctime are all as they were is taken
 * unchanged, its bytes shared, without opening it. The ctime is set by
 * the kernel alone, so an edit that puts the mtime back (`touch -d`,
 * `cp -p`, a clock set back) still changes what stat says. Stat is not
 * trusted for a file that had changed within XD_SNAPSHOT_RACY_NS of
 * being read (or claims to have changed later): a write in the same
 * tick of a coarse clock, or the same second of a filesystem that
 * counts seconds, leaves both times as they were. Such a file is read
 * again, and hashed (parsed.h), until a read finds it settled.
 *
 * Thread: any.
 */
#ifndef XD_SNAPSHOT_FILES_H
#define XD_SNAPSHOT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/diag.h"

/* Files larger than this are refused rather than read. */
#define XD_SNAPSHOT_MAX_FILE (256u << 20)

/* Reads of a directory that keeps changing while read, before giving up. */
#define XD_SNAPSHOT_READ_TRIES 5

/* A file changed this close to being read is read again next time. */
#define XD_SNAPSHOT_RACY_NS (2 * 1000000000LL)

/* What stat said of a file as it was read, and when it was read. */
struct xd_snapstat {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	int64_t read_ns; /* CLOCK_REALTIME before the read; 0: not a file */
};

/*
 * A file's bytes as read, shared by the loads that find the file
 * unchanged and the cache of parsed files; the references are atomic,
 * as a load's files are saved on another thread than the next load's
 * (reload/laststate.h). Immutable.
 */
struct xd_snapbytes;

/* `len` bytes of `data` copied, and a NUL: one reference. */
struct xd_snapbytes *xd_snapbytes_new(const void *data, size_t len);
/* The bytes, NUL-terminated. */
const char *xd_snapbytes_text(const struct xd_snapbytes *b);
struct xd_snapbytes *xd_snapbytes_ref(struct xd_snapbytes *b);
void xd_snapbytes_unref(struct xd_snapbytes *b); /* NULL: nothing */

struct xd_snapfile {
	char *path;
	char *text; /* NUL-terminated: in `bytes`, or its own when NULL */
	size_t len;
	bool json;
	bool unchanged; /* as an earlier read found it: not read again */
	struct xd_snapbytes *bytes; /* read from disk: what holds `text` */
	struct xd_snapstat st;      /* read from disk: what stat said */
};

struct xd_snapkey {
	char *key;
	struct xd_snapfile *files; /* sorted by name */
	size_t nfiles;
};

/*
 * The file an earlier read found at `path` (of kind `json`), if one is
 * known: what stat said of it then and its bytes (no reference taken).
 */
typedef bool (*xd_snapdir_known_fn)(void *arg, const char *path, bool json,
				    struct xd_snapstat *st,
				    struct xd_snapbytes **bytes);

/*
 * Lists `dir` and reads every file, but those that `known` (may be
 * NULL) has seen and stat finds unchanged. Returns 0, or -1 with every
 * problem in `diag` (keys and files that were fine are returned either
 * way).
 */
int xd_snapdir_read(const char *dir, xd_snapdir_known_fn known, void *arg,
		    struct xd_snapkey **keys, size_t *n,
		    struct xd_diag *diag);

/*
 * Whether a name in the directory ("<key>.yaml", "<key>/F.yaml") is a
 * snapshot file that a read counts: not hidden, a snapshot extension,
 * at most one folder deep. The others are skipped (READMEs, an etcd
 * lock or heartbeat key under the prefix).
 */
bool xd_snapshot_name_counts(const char *name);

/* A snapshot file's text held elsewhere than on disk (an etcd value). */
struct xd_snaptext {
	const char *name; /* as in the directory: "<key>.yaml", "<key>/F.yaml" */
	const char *path; /* how errors name it (the etcd key) */
	const char *text; /* `len` bytes; NULL when len > XD_SNAPSHOT_MAX_FILE */
	size_t len;
	/* what holds `text`, shared by the file made of it rather than
	 * copied (NULL: `text` is copied) */
	struct xd_snapbytes *bytes;
};

/*
 * The keys that `texts` (sorted by name) define, as a directory holding
 * them as files would: the same names count, the same mistakes (a key
 * defined twice, a text over XD_SNAPSHOT_MAX_FILE, a text with nothing
 * but blanks and comments) are errors. Texts are shared or copied (as
 * each says). Costs what the texts hold: the keys are indexed as
 * found. Returns 0, or -1 with every problem in
 * `diag` (the keys that were fine are returned either way).
 */
int xd_snapkeys_from_texts(const struct xd_snaptext *texts, size_t n,
			   struct xd_snapkey **keys, size_t *nkeys,
			   struct xd_diag *diag);

void xd_snapdir_free(struct xd_snapkey *keys, size_t n);

#endif
