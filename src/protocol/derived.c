#include "protocol/derived.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xalloc.h"

struct slot {
	enum xd_derived_kind kind;
	struct xd_derived_key key; /* holds a reference to each set */
	struct xd_derived_owned owned;
	size_t bytes; /* of the slot, the value and the key's sets */
};

struct cache {
	struct slot slots[XD_DERIVED_SLOTS]; /* oldest first */
	size_t used;
	size_t bytes; /* of every slot */
	bool is_union; /* the table is a registered union */
	struct xd_table *owner;
};

static void union_forget(struct xd_table *u);

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

	for (size_t i = 0; i < c->used; i++)
		release(&c->slots[i]);
	if (c->is_union)
		union_forget(c->owner);
	free(c);
}

static struct cache *cache_of(struct xd_table *t)
{
	struct xd_table_attachment *a = xd_table_attachment(t);

	if (a->p == NULL) {
		struct cache *c = xd_calloc(1, sizeof(*c));

		c->owner = t;
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
	struct cache *c = cache_of(t);

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
	struct cache *c = cache_of(t);
	size_t budget = 2 * xd_table_wire_bytes(t);
	struct slot s = {.kind = kind, .key = *key, .owned = owned};

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
 * Unions by (newer id, older id). Entries are weak: a union is held by
 * the clients in transition, and removes itself here when freed (its
 * cache's destructor runs then), so the registry never keeps one alive
 * and never holds a dangling one.
 */
struct union_entry {
	uint64_t a, b;
	struct xd_table *u;
	struct union_entry *next;
};

#define UNION_BUCKETS 64
static struct union_entry *unions[UNION_BUCKETS];

static size_t union_bucket(uint64_t a, uint64_t b)
{
	return (size_t)((a * 31 + b) % UNION_BUCKETS);
}

static void union_forget(struct xd_table *u)
{
	struct xd_table *a = xd_table_union_base(u);

	for (size_t i = 0; a != NULL && i < UNION_BUCKETS; i++) {
		for (struct union_entry **p = &unions[i]; *p != NULL;
		     p = &(*p)->next) {
			if ((*p)->u == u) {
				struct union_entry *dead = *p;

				*p = dead->next;
				free(dead);
				return;
			}
		}
	}
}

struct xd_table *xd_derived_union(struct xd_table *t, struct xd_table *old)
{
	uint64_t a = xd_table_id(t), b = xd_table_id(old);
	struct union_entry *e;
	struct cache *c;

	if (xd_table_union_base(old) == t)
		return xd_table_ref(old);
	for (e = unions[union_bucket(a, b)]; e != NULL; e = e->next)
		if (e->a == a && e->b == b)
			return xd_table_ref(e->u);
	e = xd_malloc(sizeof(*e));
	e->a = a;
	e->b = b;
	e->u = xd_table_union(t, old);
	e->next = unions[union_bucket(a, b)];
	unions[union_bucket(a, b)] = e;
	c = cache_of(e->u);
	c->is_union = true;
	return e->u;
}

static void release_set(union xd_derived_value v)
{
	xd_nameset_unref(v.set);
}

struct xd_nameset *xd_derived_eds_refs(struct xd_table *eds,
				       struct xd_table *cds, bool all,
				       struct xd_nameset *held)
{
	struct xd_derived_key key = {.words = {xd_table_id(eds), all},
				     .sets = {held}};
	union xd_derived_value v;
	struct xd_name *names = NULL;
	size_t n = 0, cap = 0;

	if (xd_derived_find(cds, XD_DERIVED_EDS_REFS, &key, &v))
		return v.set;
	for (size_t i = 0; i < xd_table_count(cds); i++) {
		const struct xd_entry *c = xd_table_at(cds, i);

		if (!all && !xd_nameset_has(held, c->name, c->name_len))
			continue;
		for (uint32_t r = 0; r < c->nrefs; r++) {
			const char *name = c->refs[r].name;

			if (c->refs[r].type != XD_ENDPOINT ||
			    xd_table_find(eds, name, strlen(name)) == NULL)
				continue;
			names = xd_grow(names, &cap, n + 1, sizeof(*names));
			names[n++] = (struct xd_name){name, strlen(name)};
		}
	}
	v.set = xd_nameset_intern(names, n);
	free(names);
	xd_derived_store(cds, XD_DERIVED_EDS_REFS, &key,
			 (struct xd_derived_owned){v, xd_nameset_bytes(v.set),
						   release_set});
	return v.set;
}

bool xd_derived_covered(struct xd_table *eds, struct xd_nameset *need,
			bool all, struct xd_nameset *set)
{
	struct xd_derived_key key = {.sets = {need, set}};
	union xd_derived_value v;

	if (all)
		return true;
	if (xd_derived_find(eds, XD_DERIVED_COVERED, &key, &v))
		return v.flag;
	v.flag = true;
	for (size_t i = 0; v.flag && i < xd_nameset_count(need); i++) {
		struct xd_name n = xd_nameset_at(need, i);

		v.flag = xd_nameset_has(set, n.data, n.len);
	}
	xd_derived_store(eds, XD_DERIVED_COVERED, &key,
			 (struct xd_derived_owned){v, 0, NULL});
	return v.flag;
}
