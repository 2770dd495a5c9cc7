/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The keys under the etcd prefix as xdsd last read them: etcd key ->
 * value, kept sorted by key, filled by a Range and changed by Watch
 * events. It is what a reload of the etcd source loads (etcd.c hands
 * it to the reloader as snapshot texts).
 *
 * Bounds: as many keys as the prefix holds; a value over
 * XD_SNAPSHOT_MAX_FILE is refused by whoever puts it (etcd.c), as a
 * file that large is refused from the directory.
 *
 * Ownership: the map owns copies of keys and values. Thread: the loop
 * thread (the etcd source's).
 */
#ifndef XD_ETCD_KVMAP_H
#define XD_ETCD_KVMAP_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot/files.h"
#include "util/diag.h"

struct xd_kv {
	char *key;
	char *value;
	size_t len;
};

struct xd_kvmap {
	struct xd_kv *v; /* sorted by key (strcmp) */
	size_t n, cap;
};

/* Sets `key` (NUL-free, `klen` bytes) to `len` bytes of `value`. */
void xd_kvmap_put(struct xd_kvmap *m, const char *key, size_t klen,
		  const char *value, size_t len);

/* Removes `key`; nothing when it is absent. */
void xd_kvmap_delete(struct xd_kvmap *m, const char *key, size_t klen);

/* Removes everything. */
void xd_kvmap_clear(struct xd_kvmap *m);

/*
 * The snapshot files the map holds under `prefix`, as a directory of
 * them would give them (files.h, xd_snapkeys_from_texts): a key
 * `<prefix><name>` is the file `<name>`, and errors name the etcd key.
 * No snapshot at all is an error too, as an empty directory is.
 */
void xd_kvmap_snapshot_keys(const struct xd_kvmap *m, const char *prefix,
			    struct xd_snapkey **keys, size_t *n,
			    struct xd_diag *diag);

#endif
