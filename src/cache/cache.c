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
	struct xd_snapshot *snap; /* stable: its own, or NULL */
	struct xd_snapshot *cand; /* staged candidate: its own, or NULL */
	struct xd_list watchers;
	struct xd_cache_entry *next; /* bucket chain */
	bool given; /* in the set being installed */
	/* What it served others ([0]) and canaries ([1]) before the change
	 * being made: references, held until its watchers are told. */
	struct xd_snapshot *was[2];
};

/* The first number of buckets; doubled whenever the entries outnumber
 * them, so that finding a key's entry is one short chain at any number
 * of keys (a reload installs every key). */
#define BUCKETS_MIN 1024

struct xd_cache {
	struct xd_cache_entry **buckets;
	size_t nbuckets, nentries; /* nbuckets: a power of two */
	struct xd_cache_entry *dflt; /* the default key's entry, if any */
	size_t owned;
	/* A candidate set is staged: every entry's `cand` is its own
	 * snapshot in it. Otherwise every `cand` is NULL. */
	bool staged;
	/* A change is being made: entries stay, even empty ones, until
	 * its watchers have been told (a watcher may unwatch itself). */
	bool changing;
	/* The stable set as the last xd_cache_replace left it, sorted by
	 * key, a reference each: the next replace finds what changed by a
	 * walk of it beside the new set (both sorted), and
	 * xd_cache_snapshots needs no sort, so that a reload of many keys
	 * costs the loop what changed. Not known (NULL) once another
	 * change (a promotion) made the stable set. */
	struct xd_snapshot **sorted;
	size_t nsorted;
};

static size_t bucket(const struct xd_cache *c, const char *key)
{
	return XXH3_64bits(key, strlen(key)) & (c->nbuckets - 1);
}

/* Twice the buckets, every entry moved to its new one. */
static void grow(struct xd_cache *c)
{
	struct xd_cache_entry **old = c->buckets;
	size_t nold = c->nbuckets;

	c->nbuckets *= 2;
	c->buckets = xd_calloc(c->nbuckets, sizeof(*c->buckets));
	for (size_t i = 0; i < nold; i++)
		for (struct xd_cache_entry *e = old[i], *next; e != NULL; e = next) {
			size_t b = bucket(c, e->key);

			next = e->next;
			e->next = c->buckets[b];
			c->buckets[b] = e;
		}
	free(old);
}

static struct xd_cache_entry *find(const struct xd_cache *c, const char *key)
{
	struct xd_cache_entry *e = c->buckets[bucket(c, key)];

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
	if (++c->nentries > c->nbuckets)
		grow(c);
	e->next = c->buckets[bucket(c, key)];
	c->buckets[bucket(c, key)] = e;
	if (strcmp(key, XD_CACHE_DEFAULT_KEY) == 0)
		c->dflt = e;
	return e;
}

/* Drops an entry that serves nobody and has nothing. */
static void maybe_drop(struct xd_cache_entry *e)
{
	struct xd_cache *c = e->cache;
	struct xd_cache_entry **p;

	if (c->changing || e->snap != NULL || e->cand != NULL ||
	    !xd_list_empty(&e->watchers))
		return;
	for (p = &c->buckets[bucket(c, e->key)]; *p != e; p = &(*p)->next)
		;
	*p = e->next;
	c->nentries--;
	if (c->dflt == e)
		c->dflt = NULL;
	free(e->key);
	free(e);
}

static struct xd_snapshot *ref(struct xd_snapshot *s)
{
	return s != NULL ? xd_snapshot_ref(s) : NULL;
}

/* An entry's own snapshot for canaries or others (e may be NULL). */
static struct xd_snapshot *own(const struct xd_cache *c,
			       const struct xd_cache_entry *e, bool canary)
{
	if (e == NULL)
		return NULL;
	return canary && c->staged ? e->cand : e->snap;
}

/* What the watchers of `e` (NULL: a key without an entry) are served. */
static struct xd_snapshot *serving(const struct xd_cache *c,
				   const struct xd_cache_entry *e, bool canary)
{
	struct xd_snapshot *s = own(c, e, canary);

	return s != NULL ? s : own(c, c->dflt, canary);
}

/* The sorted stable set forgotten: another change made it. */
static void forget(struct xd_cache *c)
{
	for (size_t i = 0; i < c->nsorted; i++)
		xd_snapshot_unref(c->sorted[i]);
	free(c->sorted);
	c->sorted = NULL;
	c->nsorted = 0;
}

struct xd_cache *xd_cache_new(void)
{
	struct xd_cache *c = xd_calloc(1, sizeof(*c));

	c->nbuckets = BUCKETS_MIN;
	c->buckets = xd_calloc(c->nbuckets, sizeof(*c->buckets));
	return c;
}

void xd_cache_free(struct xd_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nbuckets; i++) {
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
			xd_snapshot_unref(e->cand);
			free(e->key);
			free(e);
		}
	}
	forget(c);
	free(c->buckets);
	free(c);
}

/* When the new content began to be served to every node (status,
 * convergence): at its install, or at its promotion when staged. */
static void stamp(struct xd_snapshot *s)
{
	uint64_t now = xd_mono_ms();

	xd_snapshot_set_since(s, xd_wall_ms());
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_table_publish(xd_snapshot_table(s, (enum xd_rtype)t), now);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		xd_table_publish(xd_snapshot_collection(s, (enum xd_ctype)c), now);
}

/* The start of a change of `all` (and nothing else): each with what it
 * serves canaries and others now. */
static void hold(struct xd_cache *c, struct xd_cache_entry **all,
		 size_t nall)
{
	for (size_t i = 0; i < nall; i++) {
		all[i]->given = false;
		for (int k = 0; k < 2; k++)
			all[i]->was[k] = ref(serving(c, all[i], k));
	}
	c->changing = true;
}

/* The entries with a stable snapshot of their own, when `all` are every
 * entry. */
static void count_owned(struct xd_cache *c, struct xd_cache_entry **all,
			size_t nall)
{
	c->owned = 0;
	for (size_t i = 0; i < nall; i++)
		if (all[i]->snap != NULL)
			c->owned++;
}

/*
 * The start of a change: an entry for each key of `snaps` (so that
 * every key the change touches has one), and every entry, each with
 * what it serves canaries and others now. Free the array with
 * change_end.
 */
static struct xd_cache_entry **change_begin(struct xd_cache *c,
					    struct xd_snapshot *const *snaps,
					    size_t n, size_t *nall)
{
	struct xd_cache_entry **all;
	size_t cap = 0;

	XD_ASSERT_LOOP();
	XD_ASSERT(!c->changing); /* a watcher may not change the cache */
	for (size_t i = 0; i < n; i++)
		get(c, xd_snapshot_key(snaps[i]));
	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct xd_cache_entry *e = c->buckets[i]; e; e = e->next)
			cap++;
	all = xd_malloc((cap + 1) * sizeof(*all));
	*nall = 0;
	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct xd_cache_entry *e = c->buckets[i]; e; e = e->next) {
			XD_ASSERT(*nall < cap);
			all[(*nall)++] = e;
		}
	hold(c, all, *nall);
	return all;
}

/*
 * The end of a change of `all` (held): tells each watcher whose served
 * snapshot is another than before (compared while the old one is still
 * held, so an address reused by a new snapshot cannot hide a change),
 * then drops the entries left empty. `all` are freed.
 */
static void change_end(struct xd_cache *c, struct xd_cache_entry **all,
		       size_t nall)
{
	XD_ASSERT_INFO(c->staged || c->dflt == NULL || c->dflt->cand == NULL,
		       "candidate of key '%s' while nothing is staged",
		       c->dflt != NULL ? c->dflt->key : "");
	for (size_t i = 0; i < nall; i++) {
		struct xd_cache_entry *e = all[i];
		bool moved[2] = {serving(c, e, false) != e->was[0],
				 serving(c, e, true) != e->was[1]};
		struct xd_list *n, *tmp;

		xd_list_for_each_safe(n, tmp, &e->watchers) {
			struct xd_watch *w = xd_container_of(n, struct xd_watch, link);

			if (moved[w->canary])
				w->changed(w);
		}
	}
	c->changing = false;
	for (size_t i = 0; i < nall; i++) {
		for (int k = 0; k < 2; k++) {
			xd_snapshot_unref(all[i]->was[k]);
			all[i]->was[k] = NULL;
		}
		maybe_drop(all[i]);
	}
	free(all);
}

/* Drops every candidate (the caller ends the change). */
static void drop_candidates(struct xd_cache *c, struct xd_cache_entry **all,
			    size_t nall)
{
	for (size_t i = 0; i < nall; i++) {
		xd_snapshot_unref(all[i]->cand);
		all[i]->cand = NULL;
	}
	c->staged = false;
}

/* The entry of snapshot `s` in a change, marked given once. */
static struct xd_cache_entry *given(struct xd_cache *c,
				    const struct xd_snapshot *s)
{
	struct xd_cache_entry *e = find(c, xd_snapshot_key(s));

	XD_ASSERT(e != NULL); /* change_begin made it */
	/* one snapshot per key: a second would leak the first */
	XD_ASSERT_INFO(!e->given, "snapshot key '%s'", e->key);
	e->given = true;
	return e;
}

/* The stable set is now the snapshots of `ents` (in key order). */
static void remember(struct xd_cache *c, struct xd_cache_entry **ents,
		     size_t n)
{
	forget(c);
	c->sorted = xd_malloc((n + 1) * sizeof(*c->sorted));
	for (size_t i = 0; i < n; i++)
		c->sorted[i] = xd_snapshot_ref(ents[i]->snap);
	c->nsorted = n;
}

static bool strictly_sorted(struct xd_snapshot *const *snaps, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (strcmp(xd_snapshot_key(snaps[i - 1]),
			   xd_snapshot_key(snaps[i])) >= 0)
			return false;
	return true;
}

/* A key whose own snapshot a replace by walk changes: to `snap` (NULL:
 * the key loses its own). */
struct touched {
	const char *key;
	struct xd_snapshot *snap;
};

/*
 * The walk of the remembered stable set beside `snaps` (both sorted by
 * key): the keys whose own snapshot changes, in `*t` (malloc'd), and,
 * when `next` is not NULL, the new sorted set in it, the references of
 * `snaps` and of the remembered set moved there or dropped (a snapshot
 * equal in content to the one it replaces is dropped, the old kept).
 * A snapshot the very one remembered is passed over by its address.
 */
static size_t walk(struct xd_cache *c, struct xd_snapshot **snaps, size_t n,
		   struct touched **t, struct xd_snapshot **next)
{
	struct xd_snapshot **old = c->sorted;
	size_t i = 0, j = 0, nt = 0, cap = 0, k = 0;

	*t = NULL;
	while (i < c->nsorted || j < n) {
		struct touched ch = {NULL, NULL};
		bool same = i < c->nsorted && j < n && old[i] == snaps[j];
		int cmp = same ? 0 :
			  i == c->nsorted ? 1 :
			  j == n ? -1 :
				   strcmp(xd_snapshot_key(old[i]),
					  xd_snapshot_key(snaps[j]));

		if (cmp < 0) {
			ch = (struct touched){xd_snapshot_key(old[i]), NULL};
			if (next != NULL)
				xd_snapshot_unref(old[i]);
			i++;
		} else if (cmp > 0 ||
			   (!same && !xd_snapshot_same(old[i], snaps[j]))) {
			ch = (struct touched){xd_snapshot_key(snaps[j]), snaps[j]};
			if (next != NULL) {
				if (cmp == 0)
					xd_snapshot_unref(old[i]);
				next[k++] = xd_snapshot_ref(snaps[j]);
			}
			i += cmp == 0;
			j++;
		} else {
			if (next != NULL) {
				/* the cache keeps the old one */
				xd_snapshot_unref(snaps[j]);
				next[k++] = old[i];
			}
			i++;
			j++;
		}
		if (ch.key != NULL) {
			*t = xd_grow(*t, &cap, nt + 1, sizeof(**t));
			(*t)[nt++] = ch;
		}
	}
	return nt;
}

/*
 * xd_cache_replace at the cost of what changes: with nothing staged,
 * the stable set remembered and `snaps` sorted, the keys whose own
 * snapshot changes are found by a walk, and only their entries are
 * changed and their watchers told. When the default snapshot changes,
 * every entry without one of its own may be served another: false, and
 * nothing done (the full replace tells them).
 */
static bool replace_by_walk(struct xd_cache *c, struct xd_snapshot **snaps,
			    size_t n, size_t *changed)
{
	struct xd_cache_entry **ents;
	struct xd_snapshot **next;
	struct touched *t;
	size_t nt;

	if (c->staged || c->sorted == NULL || !strictly_sorted(snaps, n))
		return false;
	nt = walk(c, snaps, n, &t, NULL);
	for (size_t i = 0; i < nt; i++)
		if (strcmp(t[i].key, XD_CACHE_DEFAULT_KEY) == 0) {
			free(t);
			return false;
		}
	free(t);
	next = xd_malloc((n + 1) * sizeof(*next));
	/* the same walk, this time moving the references */
	nt = walk(c, snaps, n, &t, next);
	free(c->sorted);
	c->sorted = next;
	c->nsorted = n;
	ents = xd_malloc((nt + 1) * sizeof(*ents));
	for (size_t i = 0; i < nt; i++)
		ents[i] = get(c, t[i].key);
	hold(c, ents, nt);
	for (size_t i = 0; i < nt; i++) {
		struct xd_cache_entry *e = ents[i];

		if (t[i].snap != NULL && e->snap == NULL)
			c->owned++;
		else if (t[i].snap == NULL && e->snap != NULL)
			c->owned--;
		xd_snapshot_unref(e->snap);
		e->snap = t[i].snap; /* snaps' reference */
		if (e->snap != NULL)
			stamp(e->snap);
	}
	for (size_t i = 0; i < n; i++)
		snaps[i] = NULL;
	free(t);
	*changed = nt;
	change_end(c, ents, nt);
	return true;
}

size_t xd_cache_replace(struct xd_cache *c, struct xd_snapshot **snaps,
			size_t n)
{
	struct xd_cache_entry **all, **ents;
	size_t nall, changed = 0;
	bool sorted;

	XD_ASSERT_LOOP();
	if (replace_by_walk(c, snaps, n, &changed))
		return changed;
	sorted = strictly_sorted(snaps, n);
	ents = xd_malloc((n + 1) * sizeof(*ents));
	all = change_begin(c, snaps, n, &nall);
	drop_candidates(c, all, nall);
	for (size_t i = 0; i < n; i++) {
		struct xd_cache_entry *e = given(c, snaps[i]);

		ents[i] = e;
		if (e->snap != NULL && xd_snapshot_same(e->snap, snaps[i])) {
			xd_snapshot_unref(snaps[i]);
		} else {
			xd_snapshot_unref(e->snap);
			e->snap = snaps[i];
			changed++;
			stamp(e->snap);
		}
		snaps[i] = NULL;
	}
	/* keys absent from the set lose their snapshot */
	for (size_t i = 0; i < nall; i++)
		if (!all[i]->given && all[i]->snap != NULL) {
			xd_snapshot_unref(all[i]->snap);
			all[i]->snap = NULL;
			changed++;
		}
	if (sorted)
		remember(c, ents, n);
	free(ents);
	count_owned(c, all, nall);
	change_end(c, all, nall);
	return changed;
}

size_t xd_cache_stage(struct xd_cache *c, struct xd_snapshot **snaps,
		      size_t n, bool *same)
{
	struct xd_cache_entry **all;
	/* candidates there before, and those replaced or dropped (a
	 * candidate is NULL while nothing is staged) */
	size_t nall, differ = 0, had = 0, moved = 0;

	all = change_begin(c, snaps, n, &nall);
	for (size_t i = 0; i < nall && !c->staged; i++)
		XD_ASSERT_INFO(all[i]->cand == NULL,
			       "candidate of key '%s' while nothing is staged",
			       all[i]->key);
	for (size_t i = 0; i < n; i++) {
		struct xd_cache_entry *e = given(c, snaps[i]);
		struct xd_snapshot *s = snaps[i];

		/* the same content is the same snapshot: canaries of keys
		 * the change leaves alone are not disturbed */
		if (e->snap != NULL && xd_snapshot_same(e->snap, s)) {
			xd_snapshot_unref(s);
			s = xd_snapshot_ref(e->snap);
		} else if (e->cand != NULL && xd_snapshot_same(e->cand, s)) {
			xd_snapshot_unref(s);
			s = xd_snapshot_ref(e->cand);
		}
		/* compared while both are held: no address reused */
		had += e->cand != NULL;
		moved += e->cand != s;
		xd_snapshot_unref(e->cand);
		e->cand = s;
		snaps[i] = NULL;
	}
	for (size_t i = 0; i < nall; i++) {
		if (!all[i]->given && all[i]->cand != NULL) {
			had++;
			moved++;
			xd_snapshot_unref(all[i]->cand);
			all[i]->cand = NULL;
		}
		if (all[i]->cand != all[i]->snap)
			differ++;
	}
	c->staged = true;
	if (differ == 0)
		drop_candidates(c, all, nall);
	count_owned(c, all, nall);
	change_end(c, all, nall);
	/* none staged now: the same when none were */
	*same = differ > 0 ? moved == 0 : had == 0;
	return differ;
}

bool xd_cache_staged(const struct xd_cache *c)
{
	XD_ASSERT_LOOP();
	return c->staged;
}

size_t xd_cache_promote(struct xd_cache *c)
{
	struct xd_cache_entry **all;
	size_t nall, changed = 0;

	all = change_begin(c, NULL, 0, &nall);
	XD_ASSERT_INFO(c->staged, "promotion of %zu keys with nothing staged",
		       nall);
	for (size_t i = 0; i < nall; i++) {
		struct xd_cache_entry *e = all[i];

		if (e->cand == e->snap)
			continue;
		changed++;
		if (e->cand != NULL)
			stamp(e->cand);
		xd_snapshot_unref(e->snap);
		e->snap = ref(e->cand);
	}
	forget(c); /* the stable set is the candidates' now */
	drop_candidates(c, all, nall);
	count_owned(c, all, nall);
	change_end(c, all, nall);
	return changed;
}

void xd_cache_unstage(struct xd_cache *c)
{
	struct xd_cache_entry **all;
	size_t nall;

	all = change_begin(c, NULL, 0, &nall);
	drop_candidates(c, all, nall);
	count_owned(c, all, nall);
	change_end(c, all, nall);
}

struct xd_snapshot *xd_cache_get(const struct xd_cache *c, const char *key)
{
	XD_ASSERT_LOOP(); /* here too: the failure names this function */
	return xd_cache_get_for(c, key, false);
}

struct xd_snapshot *xd_cache_get_for(const struct xd_cache *c,
				     const char *key, bool canary)
{
	XD_ASSERT_LOOP();
	return serving(c, find(c, key), canary);
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

size_t xd_cache_watchers(const struct xd_cache *c, const char *key)
{
	const struct xd_cache_entry *e;
	const struct xd_list *n;
	size_t count = 0;

	XD_ASSERT_LOOP();
	e = find(c, key);
	if (e == NULL)
		return 0;
	for (n = e->watchers.next; n != &e->watchers; n = n->next)
		count++;
	return count;
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

/* Which own snapshot set_of takes of an entry. */
enum which { STABLE, CANDIDATE, EITHER };

static struct xd_snapshot *pick(const struct xd_cache *c,
				const struct xd_cache_entry *e, enum which w)
{
	if (w == EITHER)
		return e->snap != NULL ? e->snap : own(c, e, true);
	return own(c, e, w == CANDIDATE);
}

/* The own snapshots `w` takes, sorted by key. */
static struct xd_snapshot **set_of(const struct xd_cache *c, enum which w,
				   size_t *n)
{
	struct xd_snapshot **v;
	size_t cap = 0;

	XD_ASSERT_LOOP();
	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct xd_cache_entry *e = c->buckets[i]; e; e = e->next)
			cap += pick(c, e, w) != NULL;
	v = xd_calloc(cap + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct xd_cache_entry *e = c->buckets[i]; e; e = e->next)
			if (pick(c, e, w) != NULL) {
				XD_ASSERT(*n < cap);
				v[(*n)++] = xd_snapshot_ref(pick(c, e, w));
			}
	if (*n > 1)
		qsort(v, *n, sizeof(*v), by_key);
	return v;
}

struct xd_snapshot **xd_cache_snapshots(const struct xd_cache *c, size_t *n)
{
	struct xd_snapshot **v;

	XD_ASSERT_LOOP();
	if (c->sorted == NULL)
		return set_of(c, STABLE, n);
	/* remembered, sorted: no sort, no walk of every entry */
	v = xd_malloc((c->nsorted + 1) * sizeof(*v));
	for (size_t i = 0; i < c->nsorted; i++)
		v[i] = xd_snapshot_ref(c->sorted[i]);
	*n = c->nsorted;
	return v;
}

struct xd_snapshot **xd_cache_candidates(const struct xd_cache *c, size_t *n)
{
	if (!c->staged) {
		*n = 0;
		return xd_calloc(1, sizeof(struct xd_snapshot *));
	}
	return set_of(c, CANDIDATE, n);
}

struct xd_snapshot **xd_cache_owned(const struct xd_cache *c, size_t *n)
{
	return set_of(c, EITHER, n);
}
