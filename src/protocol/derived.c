/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/derived.h"

#include <stdlib.h>
#include <string.h>

#include "protocol/ledger.h"
#include "util/buf.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"
#include "xds/xdstp.h"

struct slot {
	enum xd_derived_kind kind;
	struct xd_derived_key key; /* holds a reference to each set */
	struct xd_derived_owned owned;
	size_t bytes; /* of the slot, the value and the key's sets */
};

struct shared_entry;

/* A table's memo: its attachment (table.h), made, read and freed on the
 * loop thread, as the registry of shared tables below is; the entry
 * points check it (XD_ASSERT_LOOP). */
struct cache {
	struct slot slots[XD_DERIVED_SLOTS]; /* oldest first */
	size_t used;
	size_t bytes; /* of every slot */
	/* the table is a registered union or view: its registry entry */
	struct shared_entry *shared;
};

static void shared_forget(struct shared_entry *e);

static void release(struct slot *s)
{
	if (s->owned.release != NULL)
		s->owned.release(s->owned.value);
	for (int i = 0; i < 4; i++)
		xd_nameset_unref(s->key.sets[i]);
}

static void cache_free(void *p)
{
	struct cache *c = p;

	XD_ASSERT_LOOP();
	for (size_t i = 0; i < c->used; i++)
		release(&c->slots[i]);
	if (c->shared != NULL)
		shared_forget(c->shared);
	free(c);
}

static struct cache *cache_of(struct xd_table *t)
{
	struct xd_table_attachment *a = xd_table_attachment(t);

	if (a->p == NULL) {
		struct cache *c = xd_calloc(1, sizeof(*c));

		a->p = c;
		a->free_fn = cache_free;
	}
	return a->p;
}

static bool same_key(const struct xd_derived_key *a,
		     const struct xd_derived_key *b)
{
	/* Sets are interned and the slot holds its own: equal sets are
	 * one object, and a set in a slot cannot be freed and its address
	 * reused while it is there. */
	for (int i = 0; i < 4; i++)
		if (a->sets[i] != b->sets[i])
			return false;
	return a->words[0] == b->words[0] && a->words[1] == b->words[1] &&
	       a->words[2] == b->words[2];
}

bool xd_derived_find(struct xd_table *t, enum xd_derived_kind kind,
		     const struct xd_derived_key *key,
		     union xd_derived_value *out)
{
	struct cache *c;

	XD_ASSERT_LOOP();
	c = cache_of(t);
	for (size_t i = 0; i < c->used; i++) {
		struct slot *s = &c->slots[i];

		if (s->kind == kind && same_key(&s->key, key)) {
			*out = s->owned.value;
			return true;
		}
	}
	return false;
}

static size_t slot_bytes(const struct slot *s)
{
	size_t n = sizeof(*s) + s->owned.bytes;

	for (int i = 0; i < 4; i++)
		if (s->key.sets[i] != NULL)
			n += xd_nameset_bytes(s->key.sets[i]);
	return n;
}

static void evict_oldest(struct cache *c)
{
	c->bytes -= c->slots[0].bytes;
	release(&c->slots[0]);
	c->used--;
	memmove(&c->slots[0], &c->slots[1], c->used * sizeof(c->slots[0]));
}

void xd_derived_store(struct xd_table *t, enum xd_derived_kind kind,
		      const struct xd_derived_key *key,
		      struct xd_derived_owned owned)
{
	size_t budget = 2 * xd_table_wire_bytes(t);
	struct slot s = {.kind = kind, .key = *key, .owned = owned};
	struct cache *c;

	XD_ASSERT_LOOP();
	c = cache_of(t);
	/* the references first: making room may free the last other one */
	for (int i = 0; i < 4; i++)
		if (s.key.sets[i] != NULL)
			xd_nameset_ref(s.key.sets[i]);
	s.bytes = slot_bytes(&s);
	if (budget < XD_DERIVED_MIN_BYTES)
		budget = XD_DERIVED_MIN_BYTES;
	/* the newest always stays, even alone over the budget */
	while (c->used > 0 &&
	       (c->used == XD_DERIVED_SLOTS || c->bytes + s.bytes > budget))
		evict_oldest(c);
	c->slots[c->used++] = s;
	c->bytes += s.bytes;
}

/*
 * Tables made from others and shared by every client that needs the
 * same one: unions, by (newer id, older id), and views, by (table id,
 * the set of its restricted names shown). Entries are weak: such a table
 * is held by its clients, and removes itself here when freed (its
 * cache's destructor runs then), so the registry never keeps one alive
 * and never holds a dangling one. A view's entry holds its set, so that
 * the next client shown the same names interns the same set and finds
 * the view.
 */
enum shared_kind {
	SHARED_UNION,
	SHARED_VIEW,
};

struct shared_entry {
	enum shared_kind kind;
	uint64_t a, b;
	struct xd_nameset *set; /* a view's shown names (a reference) */
	struct xd_table *t;
	struct shared_entry *next;
};

#define SHARED_BUCKETS 256
static struct shared_entry *shared[SHARED_BUCKETS];

static size_t shared_bucket(enum shared_kind kind, uint64_t a, uint64_t b)
{
	return (size_t)((a * 31 + b) * 2 + kind) % SHARED_BUCKETS;
}

static struct xd_table *shared_find(enum shared_kind kind, uint64_t a,
				    uint64_t b)
{
	for (struct shared_entry *e = shared[shared_bucket(kind, a, b)];
	     e != NULL; e = e->next)
		if (e->kind == kind && e->a == a && e->b == b)
			return xd_table_ref(e->t);
	return NULL;
}

/* Registers `t` (the caller's new reference stays the caller's). */
static void shared_add(enum shared_kind kind, uint64_t a, uint64_t b,
		       struct xd_nameset *set, struct xd_table *t)
{
	struct shared_entry *e = xd_malloc(sizeof(*e));
	size_t k = shared_bucket(kind, a, b);

	*e = (struct shared_entry){kind, a, b, set ? xd_nameset_ref(set) : NULL,
				   t, shared[k]};
	shared[k] = e;
	cache_of(t)->shared = e;
}

static void shared_forget(struct shared_entry *dead)
{
	struct shared_entry **p = &shared[shared_bucket(dead->kind, dead->a,
							 dead->b)];

	while (*p != dead)
		p = &(*p)->next;
	*p = dead->next;
	xd_nameset_unref(dead->set);
	free(dead);
}

struct xd_table *xd_derived_union(struct xd_table *t, struct xd_table *old)
{
	uint64_t a = xd_table_id(t), b = xd_table_id(old);
	struct xd_table *u;

	XD_ASSERT_LOOP();
	if (xd_table_union_base(old) == t)
		return xd_table_ref(old);
	u = shared_find(SHARED_UNION, a, b);
	if (u == NULL) {
		u = xd_table_union(t, old);
		shared_add(SHARED_UNION, a, b, NULL, u);
	}
	return u;
}

/* ---------------- views ---------------- */

static void release_set(union xd_derived_value v);

/*
 * The restricted names of `t` that `identity` may see, memoized on `t`
 * by identity: the globs are matched once per (table, identity), not
 * once per client and reload. An identity is keyed as a one-name set,
 * interned like the others: exact, and held by the memo.
 */
static struct xd_nameset *shown(struct xd_table *t, const char *identity)
{
	struct xd_name id = {identity, identity ? strlen(identity) : 0};
	struct xd_nameset *idset = identity ? xd_nameset_intern(&id, 1) : NULL;
	struct xd_derived_key key = {.words = {identity != NULL},
				     .sets = {idset}};
	union xd_derived_value v;
	struct xd_name *names = NULL;
	size_t n = 0, cap = 0;

	if (xd_derived_find(t, XD_DERIVED_SHOWN, &key, &v)) {
		xd_nameset_unref(idset);
		return v.set;
	}
	for (size_t i = 0; i < xd_table_count(t); i++) {
		const struct xd_entry *e = xd_table_at(t, i);

		if (!e->restricted || !xd_entry_allows(e, identity))
			continue;
		names = xd_grow(names, &cap, n + 1, sizeof(*names));
		names[n++] = (struct xd_name){e->name, e->name_len};
	}
	v.set = xd_nameset_intern(names, n);
	free(names);
	xd_derived_store(t, XD_DERIVED_SHOWN, &key,
			 (struct xd_derived_owned){v, xd_nameset_bytes(v.set),
						   release_set});
	xd_nameset_unref(idset);
	return v.set;
}

static bool keep_shown(const struct xd_entry *e, void *arg)
{
	return !e->restricted ||
	       xd_nameset_has(arg, e->name, e->name_len);
}

struct xd_table *xd_derived_view(struct xd_table *t, const char *identity)
{
	struct xd_nameset *set;
	struct xd_table *v;

	XD_ASSERT_LOOP();
	/* the common case: nothing restricted, nothing to look up */
	if (xd_table_restricted(t) == 0)
		return xd_table_ref(t);
	set = shown(t, identity);
	if (xd_nameset_count(set) == xd_table_restricted(t))
		return xd_table_ref(t); /* it may see everything */
	v = shared_find(SHARED_VIEW, xd_table_id(t), xd_nameset_id(set));
	if (v == NULL) {
		v = xd_table_filter(t, keep_shown, set);
		shared_add(SHARED_VIEW, xd_table_id(t), xd_nameset_id(set), set,
			   v);
	}
	return v;
}

struct xd_snapshot *xd_derived_snapshot_view(struct xd_snapshot *s,
					     const char *identity)
{
	struct xd_table *tables[XD_RTYPE_COUNT];
	bool same = true;

	XD_ASSERT_LOOP();
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		struct xd_table *full = xd_snapshot_table(s, (enum xd_rtype)t);

		tables[t] = xd_derived_view(full, identity);
		same = same && tables[t] == full;
	}
	if (!same)
		return xd_snapshot_view_new(s, tables);
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_table_unref(tables[t]);
	return xd_snapshot_ref(s);
}

static void release_set(union xd_derived_value v)
{
	xd_nameset_unref(v.set);
}

struct xd_nameset *xd_derived_refs(struct xd_table *to, struct xd_table *from,
				   bool all, struct xd_nameset *held)
{
	struct xd_derived_key key = {.words = {xd_table_id(to), all},
				     .sets = {held}};
	union xd_derived_value v;
	struct xd_name *names = NULL;
	size_t n = 0, cap = 0;

	XD_ASSERT_LOOP();
	if (xd_derived_find(from, XD_DERIVED_REFS, &key, &v))
		return v.set;
	for (size_t i = 0; i < xd_table_count(from); i++) {
		const struct xd_entry *c = xd_table_at(from, i);

		if (!all && !xd_nameset_has(held, c->name, c->name_len))
			continue;
		for (uint32_t r = 0; r < c->nrefs; r++) {
			const char *name = c->refs[r].name;

			if (c->refs[r].type != xd_table_type(to) ||
			    xd_table_find(to, name, strlen(name)) == NULL)
				continue;
			names = xd_grow(names, &cap, n + 1, sizeof(*names));
			names[n++] = (struct xd_name){name, strlen(name)};
		}
	}
	v.set = xd_nameset_intern(names, n);
	free(names);
	xd_derived_store(from, XD_DERIVED_REFS, &key,
			 (struct xd_derived_owned){v, xd_nameset_bytes(v.set),
						   release_set});
	return v.set;
}

bool xd_derived_covered(struct xd_table *eds, struct xd_nameset *need,
			bool all, struct xd_nameset *set)
{
	struct xd_derived_key key = {.sets = {need, set}};
	union xd_derived_value v;

	XD_ASSERT_LOOP();
	if (all)
		return true;
	if (xd_derived_find(eds, XD_DERIVED_COVERED, &key, &v))
		return v.flag;
	v.flag = true;
	for (size_t i = 0; v.flag && i < xd_nameset_count(need); i++) {
		struct xd_name n = xd_nameset_at(need, i);

		v.flag = xd_nameset_has(set, n.data, n.len) ||
			 xd_derived_in_glob(set, n.data, n.len);
	}
	xd_derived_store(eds, XD_DERIVED_COVERED, &key,
			 (struct xd_derived_owned){v, 0, NULL});
	return v.flag;
}

bool xd_derived_held(struct xd_table *t, struct xd_nameset *need,
		     const struct xd_ledger *held)
{
	struct xd_derived_key key = {.words = {held->id}, .sets = {need}};
	union xd_derived_value v;

	XD_ASSERT_LOOP();
	if (xd_derived_find(t, XD_DERIVED_HELD, &key, &v))
		return v.flag;
	v.flag = true;
	for (size_t i = 0; v.flag && i < xd_nameset_count(need); i++) {
		const struct xd_key *k = xd_nameset_key(need, i);
		const struct xd_entry *want = xd_ledger_lookup(t, k), *has;

		if (want == NULL)
			continue;
		has = xd_ledger_entry(held, k);
		v.flag = has != NULL && has->hash == want->hash;
	}
	xd_derived_store(t, XD_DERIVED_HELD, &key,
			 (struct xd_derived_owned){v, 0, NULL});
	return v.flag;
}

bool xd_derived_in_glob(const struct xd_nameset *set, const char *name,
			size_t len)
{
	char stack[512];
	char *buf;
	size_t g;
	bool in;

	if (xd_nameset_globs(set) == 0 || !xd_xdstp_is(name, len))
		return false;
	buf = len + 2 <= sizeof(stack) ? stack : xd_malloc(len + 2);
	g = xd_xdstp_collection(name, len, buf);
	in = g > 0 && xd_nameset_has(set, buf, g);
	if (buf != stack)
		free(buf);
	return in;
}

/* A glob's members, as xd_table_glob_members finds them. */
struct glob_names {
	struct xd_name *names;
	size_t n, cap;
};

static bool add_member(const struct xd_entry *e, void *arg)
{
	/* the names point into the table, which the result lives with */
	struct glob_names *g = arg;

	g->names = xd_grow(g->names, &g->cap, g->n + 1, sizeof(*g->names));
	g->names[g->n++] = (struct xd_name){e->name, e->name_len};
	return true;
}

struct xd_nameset *xd_derived_glob(struct xd_table *t, struct xd_name glob)
{
	struct xd_nameset *key_set;
	struct xd_derived_key key;
	union xd_derived_value v;
	struct glob_names g = {0};

	XD_ASSERT_LOOP();
	key_set = xd_nameset_intern(&glob, 1);
	key = (struct xd_derived_key){.sets = {key_set}};
	if (xd_derived_find(t, XD_DERIVED_GLOB, &key, &v)) {
		xd_nameset_unref(key_set);
		return xd_nameset_ref(v.set);
	}
	xd_table_glob_members(t, glob.data, glob.len, add_member, &g);
	v.set = xd_nameset_intern(g.names, g.n);
	free(g.names);
	xd_derived_store(t, XD_DERIVED_GLOB, &key,
			 (struct xd_derived_owned){v, xd_nameset_bytes(v.set),
						   release_set});
	xd_nameset_unref(key_set);
	return xd_nameset_ref(v.set);
}
