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
 * During a staged rollout (rollout/rollout.h) the cache holds two sets:
 * the stable one, which every node is served, and the candidate, which
 * only canary watchers are served (xd_cache_stage). Promoting makes the
 * candidate the stable set; rolling back drops it. Each of these
 * notifies exactly the watchers whose served snapshot changed, so a
 * non-canary never hears of a candidate, and a canary hears of nothing
 * when its candidate is promoted.
 *
 * Ownership: the cache holds a reference to every snapshot in it.
 * Watchers are embedded in their owners, which must unwatch before they
 * go. Thread: loop thread only.
 */
#ifndef XD_CACHE_CACHE_H
#define XD_CACHE_CACHE_H

#include <stdbool.h>
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
	/* Served the candidate set during a rollout; set before watching,
	 * never changed while watching. */
	bool canary;
	/* private */
	struct xd_list link;
	struct xd_cache_entry *entry;
};

struct xd_cache *xd_cache_new(void);
void xd_cache_free(struct xd_cache *c);

/*
 * Installs a complete set of snapshots, replacing the current one (and
 * dropping any staged candidate): keys absent from `snaps` lose theirs.
 * A snapshot equal in content to the one it replaces is dropped and the
 * old one kept, so nothing is notified. Takes over the references.
 * Returns the number of keys whose snapshot changed.
 *
 * A set sorted by key (a load's) after one that was, nothing staged,
 * costs what changes: it is walked beside the set remembered from the
 * last replace (a pointer compare for a key whose snapshot is the one
 * served), and only the entries of the keys that change are touched;
 * a changed default, which may reach every entry, is a full replace.
 */
size_t xd_cache_replace(struct xd_cache *c, struct xd_snapshot **snaps,
			size_t n);

/* The snapshot serving `key`: its own, else the default, else NULL.
 * Borrowed: valid until the next xd_cache_replace. */
struct xd_snapshot *xd_cache_get(const struct xd_cache *c, const char *key);

/* The same for a canary (`canary` true) or another node: during a
 * rollout, a canary's comes from the candidate set. Borrowed: valid
 * until the cache next changes. */
struct xd_snapshot *xd_cache_get_for(const struct xd_cache *c,
				     const char *key, bool canary);

/*
 * Stages `snaps` as the candidate set (in place of any staged before),
 * served to canary watchers only; the stable set stays as it is.
 * Snapshots equal in content to the stable one of their key are
 * replaced by it (and to the staged one by that), so canaries of keys
 * the change leaves alone are not notified. Takes over the references.
 * Returns the number of keys whose candidate differs from their stable
 * snapshot; with none, nothing stays staged. `*same`: the candidate set
 * is the very one staged before (xd_cache_candidates would list the
 * same snapshots; none staged before or after counts as the same).
 */
size_t xd_cache_stage(struct xd_cache *c, struct xd_snapshot **snaps,
		      size_t n, bool *same);

/* Whether a candidate set is staged. */
bool xd_cache_staged(const struct xd_cache *c);

/* The candidate becomes the stable set (other watchers notified of
 * what changes for them). Returns the number of keys changed. */
size_t xd_cache_promote(struct xd_cache *c);

/* The candidate is dropped; canaries are served the stable set again. */
void xd_cache_unstage(struct xd_cache *c);

void xd_cache_watch(struct xd_cache *c, const char *key, struct xd_watch *w);
void xd_cache_unwatch(struct xd_watch *w);

/* The snapshots in the cache (new references, sorted by key); free the
 * array and unref each. The stable set. */
struct xd_snapshot **xd_cache_snapshots(const struct xd_cache *c, size_t *n);

/* The same of the staged candidate set (none when nothing is staged). */
struct xd_snapshot **xd_cache_candidates(const struct xd_cache *c, size_t *n);

/* The same of every key with a snapshot of its own in either set (its
 * stable one where it has one): the keys some node may be served now. */
struct xd_snapshot **xd_cache_owned(const struct xd_cache *c, size_t *n);
/* The watchers of `key` (its streams), whichever snapshot serves it. */
size_t xd_cache_watchers(const struct xd_cache *c, const char *key);

/* Keys with a snapshot of their own. */
size_t xd_cache_count(const struct xd_cache *c);

#endif
