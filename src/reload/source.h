/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the snapshot files of a load come from: the first stage of a
 * change (docs/design.md §13). Every source the
 * reloader reads (the snapshot directory, etcd, the last good state)
 * is one of these, an ops table and its own state, and the reloader
 * calls a source only through it:
 *
 *   take(self, revision, changed), on the loop thread as a load starts:
 *     what the load will read (the source's own bookkeeping, moved, not
 *     copied: etcd's changes since the last take), the revision the
 *     source is at with it (`*revision`, 0 when it has none) and that
 *     of the newest change to the snapshots among them (`*changed`:
 *     the same on every replica that reads the same change; a staged
 *     rollout is known by it). NULL (the directory, the last good
 *     state): nothing to hand over, each read reads the source whole
 *     (with `taken` NULL), whenever a load wants it;
 *   read(self, taken, parsed, keys, n, at_ms, diag), on the thread
 *     pool, once for each take, in the order of the takes (one load at
 *     a time): hands over the snapshot files as they are now (`*keys`,
 *     `*n`, the caller's to free), reusing what `parsed` (may be NULL)
 *     knows of the files a load read before, when what it hands over
 *     was written (`*at_ms`, Unix ms: the last good state's save; 0
 *     for the others), and anything wrong with reading them in `diag`;
 *     frees what take returned. Returns 0; 1 when the
 *     source holds nothing at all (no last good state saved); -1 when
 *     something could not be read (in `diag`; the keys that could are
 *     handed over all the same);
 *   read_done(self, rc, error), on the loop thread once the load that
 *     read is over: what read returned and its first error ("" none),
 *     for the source's health (NULL: the source keeps its own, etcd's);
 *   health(self, out), on the loop thread: whether the source is up,
 *     its last error and when, the revision it is at (admin endpoint:
 *     /status.json, /metrics; `xdsctl status`);
 *   stop(self), xdsd stopping: no take follows (NULL: nothing to do;
 *     etcd's owner stops it, as the fleet writes through it).
 *
 * The reloader adds what it alone knows to a source's health: when a
 * load of what it read was last accepted (reload.h, xd_reloader_sources).
 *
 * Ownership: `self` is the source's; the reloader borrows it (it must
 * outlive the reloader's last load). Thread: as each op says.
 */
#ifndef XD_RELOAD_SOURCE_H
#define XD_RELOAD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/files.h"
#include "snapshot/parsed.h"
#include "util/diag.h"

#define XD_SOURCE_ERROR_MAX 512

struct xd_source_health {
	const char *name;  /* the source's kind: "files", "etcd",
			    * "last_good" (the metrics' label) */
	bool up;           /* it can be read now */
	int64_t since_ms;  /* when `up` last changed, Unix ms (0: never) */
	char last_error[XD_SOURCE_ERROR_MAX]; /* "" none yet */
	int64_t last_error_ms;
	int64_t revision;  /* etcd's; 0 for the others */
	/* the reloader's: when a load it read was last accepted (the
	 * last good state: when what it holds was saved), Unix ms, 0:
	 * never */
	int64_t last_good_ms;
};

struct xd_snapsource_ops {
	const char *name;
	void *(*take)(void *self, int64_t *revision, int64_t *changed);
	int (*read)(void *self, void *taken, struct xd_parsed_cache *parsed,
		    struct xd_snapkey **keys, size_t *n, int64_t *at_ms,
		    struct xd_diag *diag);
	void (*read_done)(void *self, int rc, const char *error);
	void (*health)(const void *self, struct xd_source_health *out);
	void (*stop)(void *self);
};

struct xd_snapsource {
	const struct xd_snapsource_ops *ops; /* NULL: no source */
	void *self;
};

/* ---------------- the snapshot directory ---------------- */

/*
 * The snapshot directory `dir` (borrowed: it must outlive the source)
 * as a source: a read lists it and reads every file, but those the
 * load's parsed files know unchanged (snapshot/files.h,
 * xd_snapdir_read); none at all is an error. Up while its last read
 * found nothing wrong.
 */
struct xd_source_dir;

struct xd_source_dir *xd_source_dir_new(const char *dir);
struct xd_snapsource xd_source_dir(struct xd_source_dir *d);
void xd_source_dir_free(struct xd_source_dir *d);

#endif
