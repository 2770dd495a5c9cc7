/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The keys under the etcd prefix as xdsd last read them: etcd key ->
 * value, kept sorted by key, and the changes to it that a Range and
 * Watch events bring. It is what a reload of the etcd source loads
 * (etcd.c hands it to the reloader as snapshot texts).
 *
 * The two live on two threads, so that nothing that grows with the
 * prefix runs on the loop: the loop thread (the etcd source) notes each
 * change as it arrives in a change list, its own, at the cost of that
 * change; as a reload starts, it hands the list over whole; the load,
 * on the thread pool, applies it to the map (one merge: the map's keys
 * plus the changes, sorted) and lists the snapshot files, whose values
 * are the map's bytes, shared, never copied. The map is touched by one
 * load at a time (the reloader runs one), never by the loop.
 *
 * A value is held once, in a struct xd_snapbytes (snapshot/files.h),
 * from the change that brought it to the map and the files of the loads
 * that read it.
 *
 * Bounds: as many keys as the prefix holds, and of those only the
 * names that a snapshot directory would count (xd_snapshot_name_counts:
 * the others are never noted); a value over XD_SNAPSHOT_MAX_FILE is
 * held as its size alone, and fails every load, as a file that large
 * fails a load of the directory. A change list holds what etcd sent
 * between two reloads.
 *
 * Ownership: the map and the list own their keys and references.
 * Thread: a list, whoever holds it; the map, the load holding it.
 */
#ifndef XD_ETCD_KVMAP_H
#define XD_ETCD_KVMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/files.h"
#include "util/diag.h"

struct xd_kv {
	char *key;
	struct xd_snapbytes *value; /* NULL: over XD_SNAPSHOT_MAX_FILE */
	size_t len;                 /* of the value */
};

struct xd_kvmap {
	struct xd_kv *v; /* sorted by key (strcmp) */
	size_t n, cap;
};

/* One change: `value` NULL with `deleted`, the key is gone. */
struct xd_kvchange {
	struct xd_kv kv;
	bool deleted;
};

struct xd_kvchanges {
	bool reset; /* the map is emptied before the changes (a Range) */
	struct xd_kvchange *v; /* in the order they came */
	size_t n, cap;
};

/*
 * Notes that `key` (NUL-free, `klen` bytes) is now `len` bytes of
 * `value`, copied (only the size, when over XD_SNAPSHOT_MAX_FILE).
 */
void xd_kvchanges_put(struct xd_kvchanges *c, const char *key, size_t klen,
		      const void *value, size_t len);

/* Notes that `key` is gone. */
void xd_kvchanges_delete(struct xd_kvchanges *c, const char *key,
			 size_t klen);

/* The changes of `c` after those of `to`, `c` left empty: a reset in
 * `c` supersedes what `to` held. */
void xd_kvchanges_append(struct xd_kvchanges *to, struct xd_kvchanges *c);

void xd_kvchanges_clear(struct xd_kvchanges *c);

/*
 * Applies `c` (emptied) to the map: emptied first when c->reset, then
 * each change in order, the last of a key winning. Costs the map's
 * keys plus the changes' (sorted).
 */
void xd_kvmap_apply(struct xd_kvmap *m, struct xd_kvchanges *c);

/* Removes everything. */
void xd_kvmap_clear(struct xd_kvmap *m);

/*
 * The snapshot files the map holds under `prefix`, as a directory of
 * them would give them (files.h, xd_snapkeys_from_texts): a key
 * `<prefix><name>` is the file `<name>`, its text the map's bytes
 * (shared), and errors name the etcd key. No snapshot at all is an
 * error too, as an empty directory is.
 */
void xd_kvmap_snapshot_keys(const struct xd_kvmap *m, const char *prefix,
			    struct xd_snapkey **keys, size_t *n,
			    struct xd_diag *diag);

#endif
