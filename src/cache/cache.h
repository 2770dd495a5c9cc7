/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snapshot cache: node key -> current snapshot, and the streams
 * watching each key.
 *
 * A node's key is its `cluster` (or `id`, by configuration); nodes whose
 * key has no snapshot of its own are served the "default" snapshot.
 * Installing a new set of snapshots (start-up, reload) notifies exactly
 * the watchers whose snapshot content changed: a reload that touches one
 * key disturbs no other.
 *
 * Ownership: the cache holds a reference to every snapshot in it.
 * Watchers are embedded in their owners, which must unwatch before they
 * go. Thread: loop thread only.
 */
#ifndef XD_CACHE_CACHE_H
#define XD_CACHE_CACHE_H

#include <stddef.h>

#include "util/list.h"

#include "snapshot/snapshot.h"

#define XD_CACHE_DEFAULT_KEY "default"

struct xd_cache;
struct xd_cache_entry;

struct xd_watch {
	/* Called when the snapshot serving the watched key changed. It
	 * must not unwatch or free others; it may unwatch itself. */
	void (*changed)(struct xd_watch *w);
	/* private */
	struct xd_list link;
	struct xd_cache_entry *entry;
};

struct xd_cache *xd_cache_new(void);
void xd_cache_free(struct xd_cache *c);

/*
 * Installs a complete set of snapshots, replacing the current one: keys
 * absent from `snaps` lose theirs. A snapshot equal in content to the
 * one it replaces is dropped and the old one kept, so nothing is
 * notified. Takes over the references. Returns the number of keys whose
 * snapshot changed.
 */
size_t xd_cache_replace(struct xd_cache *c, struct xd_snapshot **snaps,
			size_t n);

/* The snapshot serving `key`: its own, else the default, else NULL.
 * Borrowed: valid until the next xd_cache_replace. */
struct xd_snapshot *xd_cache_get(const struct xd_cache *c, const char *key);

void xd_cache_watch(struct xd_cache *c, const char *key, struct xd_watch *w);
void xd_cache_unwatch(struct xd_watch *w);

/* The snapshots in the cache (new references, sorted by key); free the
 * array and unref each. */
struct xd_snapshot **xd_cache_snapshots(const struct xd_cache *c, size_t *n);

/* Keys with a snapshot of their own. */
size_t xd_cache_count(const struct xd_cache *c);

#endif
