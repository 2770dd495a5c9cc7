/* SPDX-License-Identifier: Apache-2.0 */
#include "cache/cache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/clock.h"
#include "util/common.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct xd_cache_entry {
	struct xd_cache *cache;
	char *key;
	struct xd_snapshot *snap; /* its own, or NULL */
	struct xd_list watchers;
	struct xd_cache_entry *next; /* bucket chain */
	bool given;   /* in the set being installed */
	bool changed; /* its own snapshot changed in this install */
};

#define BUCKETS 1024

struct xd_cache {
	struct xd_cache_entry *buckets[BUCKETS];
	struct xd_cache_entry *dflt; /* the default key's entry, if any */
	size_t owned;
};

static size_t bucket(const char *key)
{
	return XXH3_64bits(key, strlen(key)) % BUCKETS;
}

static struct xd_cache_entry *find(const struct xd_cache *c, const char *key)
{
	struct xd_cache_entry *e = c->buckets[bucket(key)];

	while (e != NULL && strcmp(e->key, key) != 0)
		e = e->next;
	return e;
}

static struct xd_cache_entry *get(struct xd_cache *c, const char *key)
{
	struct xd_cache_entry *e = find(c, key);

	if (e != NULL)
		return e;
	e = xd_calloc(1, sizeof(*e));
	e->key = xd_strdup(key);
	e->cache = c;
	xd_list_init(&e->watchers);
	e->next = c->buckets[bucket(key)];
	c->buckets[bucket(key)] = e;
	if (strcmp(key, XD_CACHE_DEFAULT_KEY) == 0)
		c->dflt = e;
	return e;
}

/* Drops an entry that serves nobody and has nothing. */
static void maybe_drop(struct xd_cache_entry *e)
{
	struct xd_cache *c = e->cache;
	struct xd_cache_entry **p;

	if (e->snap != NULL || !xd_list_empty(&e->watchers))
		return;
	for (p = &c->buckets[bucket(e->key)]; *p != e; p = &(*p)->next)
		;
	*p = e->next;
	if (c->dflt == e)
		c->dflt = NULL;
	free(e->key);
	free(e);
}

struct xd_cache *xd_cache_new(void)
{
	return xd_calloc(1, sizeof(struct xd_cache));
}

void xd_cache_free(struct xd_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < BUCKETS; i++) {
		struct xd_cache_entry *e = c->buckets[i], *next;

		for (; e != NULL; e = next) {
			struct xd_list *n, *tmp;

			next = e->next;
			xd_list_for_each_safe(n, tmp, &e->watchers) {
				struct xd_watch *w = xd_container_of(n, struct xd_watch, link);

				xd_list_remove(n);
				w->entry = NULL;
			}
			xd_snapshot_unref(e->snap);
			free(e->key);
			free(e);
		}
	}
	free(c);
}

static void notify(struct xd_cache_entry *e)
{
	struct xd_list *n, *tmp;

	xd_list_for_each_safe(n, tmp, &e->watchers) {
		struct xd_watch *w = xd_container_of(n, struct xd_watch, link);

		w->changed(w);
	}
}

/* When the new content began to be served (status, convergence). */
static void stamp(struct xd_snapshot *s)
{
	uint64_t now = xd_mono_ms();

	xd_snapshot_set_since(s, xd_wall_ms());
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_table_publish(xd_snapshot_table(s, (enum xd_rtype)t), now);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		xd_table_publish(xd_snapshot_collection(s, (enum xd_ctype)c), now);
}

size_t xd_cache_replace(struct xd_cache *c, struct xd_snapshot **snaps,
			size_t n)
{
	struct xd_cache_entry **all;
	size_t nall = 0, changed = 0, cap;
	bool default_changed;

	XD_ASSERT_LOOP();
	/* Every entry, so that keys losing their snapshot are seen too. */
	for (size_t i = 0; i < BUCKETS; i++)
		for (struct xd_cache_entry *e = c->buckets[i]; e; e = e->next)
			nall++;
	cap = nall + n;
	all = xd_malloc((cap + 1) * sizeof(*all));
	nall = 0;
	for (size_t i = 0; i < BUCKETS; i++)
		for (struct xd_cache_entry *e = c->buckets[i]; e; e = e->next) {
			e->given = false;
			e->changed = false;
			all[nall++] = e;
		}
	for (size_t i = 0; i < n; i++) {
		struct xd_cache_entry *e = find(c, xd_snapshot_key(snaps[i]));

		if (e == NULL) {
			e = get(c, xd_snapshot_key(snaps[i]));
			e->changed = false;
			XD_ASSERT(nall < cap);
			all[nall++] = e;
		}
		/* one snapshot per key: a second would leak the first */
		XD_ASSERT_INFO(!e->given, "snapshot key '%s'", e->key);
		e->given = true;
		if (e->snap != NULL && xd_snapshot_same(e->snap, snaps[i])) {
			xd_snapshot_unref(snaps[i]);
		} else {
			xd_snapshot_unref(e->snap);
			e->snap = snaps[i];
			e->changed = true;
			stamp(e->snap);
		}
		snaps[i] = NULL;
	}
	c->owned = 0;
	for (size_t i = 0; i < nall; i++) {
		struct xd_cache_entry *e = all[i];

		if (!e->given && e->snap != NULL) {
			xd_snapshot_unref(e->snap);
			e->snap = NULL;
			e->changed = true;
		}
		if (e->snap != NULL)
			c->owned++;
	}
	default_changed = c->dflt != NULL && c->dflt->changed;
	for (size_t i = 0; i < nall; i++) {
		struct xd_cache_entry *e = all[i];

		if (e->changed)
			changed++;
		/* watchers of a key without its own snapshot are served the
		 * default, so they see its changes too */
		if (e->changed || (default_changed && e->snap == NULL))
			notify(e);
	}
	for (size_t i = 0; i < nall; i++)
		maybe_drop(all[i]);
	free(all);
	return changed;
}

struct xd_snapshot *xd_cache_get(const struct xd_cache *c, const char *key)
{
	struct xd_cache_entry *e;

	XD_ASSERT_LOOP();
	e = find(c, key);
	if (e != NULL && e->snap != NULL)
		return e->snap;
	return c->dflt != NULL ? c->dflt->snap : NULL;
}

void xd_cache_watch(struct xd_cache *c, const char *key, struct xd_watch *w)
{
	struct xd_cache_entry *e;

	XD_ASSERT_LOOP();
	/* one key at a time: a watcher on two lists corrupts both */
	XD_ASSERT_INFO(w->entry == NULL && w->changed != NULL,
		       "watch of snapshot key '%s'", key);
	e = get(c, key);
	w->entry = e;
	xd_list_push_back(&e->watchers, &w->link);
}

void xd_cache_unwatch(struct xd_watch *w)
{
	struct xd_cache_entry *e = w->entry;

	XD_ASSERT_LOOP();
	if (e == NULL)
		return;
	xd_list_remove(&w->link);
	w->entry = NULL;
	maybe_drop(e);
}

size_t xd_cache_count(const struct xd_cache *c)
{
	return c->owned;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(xd_snapshot_key(*(struct xd_snapshot *const *)a),
		      xd_snapshot_key(*(struct xd_snapshot *const *)b));
}

struct xd_snapshot **xd_cache_snapshots(const struct xd_cache *c, size_t *n)
{
	struct xd_snapshot **v;

	XD_ASSERT_LOOP();
	v = xd_calloc(c->owned + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < BUCKETS; i++)
		for (struct xd_cache_entry *e = c->buckets[i]; e; e = e->next)
			if (e->snap != NULL) {
				/* `owned` counts them (xd_cache_replace) */
				XD_ASSERT(*n < c->owned);
				v[(*n)++] = xd_snapshot_ref(e->snap);
			}
	if (*n > 1)
		qsort(v, *n, sizeof(*v), by_key);
	return v;
}
