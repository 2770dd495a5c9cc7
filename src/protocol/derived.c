#include "protocol/derived.h"

#include <stdlib.h>
#include <string.h>

#include "protocol/body.h"
#include "util/buf.h"

#define SLOTS 64

struct slot {
	enum xd_derived_kind kind;
	uint64_t key[XD_DERIVED_KEY_WORDS];
	union xd_derived_value value;
};

struct cache {
	struct slot slots[SLOTS];
	size_t used, next;
	bool is_union; /* the table is a registered union */
	struct xd_table *owner;
};

static void union_forget(struct xd_table *u);

static void release(struct slot *s)
{
	switch (s->kind) {
	case XD_DERIVED_BODY:
		xd_body_unref(s->value.body);
		break;
	case XD_DERIVED_EDS_REFS:
		xd_nameset_unref(s->value.set);
		break;
	case XD_DERIVED_COVERED:
		break;
	}
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
		struct cache *c = calloc(1, sizeof(*c));

		if (c == NULL)
			abort();
		c->owner = t;
		a->p = c;
		a->free_fn = cache_free;
	}
	return a->p;
}

bool xd_derived_find(struct xd_table *t, enum xd_derived_kind kind,
		     const uint64_t key[XD_DERIVED_KEY_WORDS],
		     union xd_derived_value *out)
{
	struct cache *c = cache_of(t);

	for (size_t i = 0; i < c->used; i++) {
		struct slot *s = &c->slots[i];

		if (s->kind == kind &&
		    memcmp(s->key, key, sizeof(s->key)) == 0) {
			*out = s->value;
			return true;
		}
	}
	return false;
}

void xd_derived_store(struct xd_table *t, enum xd_derived_kind kind,
		      const uint64_t key[XD_DERIVED_KEY_WORDS],
		      union xd_derived_value value)
{
	struct cache *c = cache_of(t);
	struct slot *s;

	if (c->used < SLOTS) {
		s = &c->slots[c->used++];
	} else {
		s = &c->slots[c->next];
		c->next = (c->next + 1) % SLOTS;
		release(s);
	}
	s->kind = kind;
	memcpy(s->key, key, sizeof(s->key));
	s->value = value;
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
	e = malloc(sizeof(*e));
	if (e == NULL)
		abort();
	e->a = a;
	e->b = b;
	e->u = xd_table_union(t, old);
	if (e->u == NULL)
		abort();
	e->next = unions[union_bucket(a, b)];
	unions[union_bucket(a, b)] = e;
	c = cache_of(e->u);
	c->is_union = true;
	return e->u;
}

struct xd_nameset *xd_derived_eds_refs(struct xd_table *eds,
				       struct xd_table *cds, bool all,
				       struct xd_nameset *held)
{
	uint64_t key[XD_DERIVED_KEY_WORDS] = {xd_table_id(cds), all,
					      xd_nameset_id(held)};
	union xd_derived_value v;
	struct xd_name *names = NULL;
	size_t n = 0, cap = 0;

	if (xd_derived_find(eds, XD_DERIVED_EDS_REFS, key, &v))
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
	if (v.set == NULL)
		abort();
	xd_derived_store(eds, XD_DERIVED_EDS_REFS, key, v);
	return v.set;
}

bool xd_derived_covered(struct xd_table *eds, struct xd_nameset *need,
			bool all, struct xd_nameset *set)
{
	uint64_t key[XD_DERIVED_KEY_WORDS] = {xd_nameset_id(need), all,
					      xd_nameset_id(set)};
	union xd_derived_value v;

	if (all)
		return true;
	if (xd_derived_find(eds, XD_DERIVED_COVERED, key, &v))
		return v.flag;
	v.flag = true;
	for (size_t i = 0; v.flag && i < xd_nameset_count(need); i++) {
		struct xd_name n = xd_nameset_at(need, i);

		v.flag = xd_nameset_has(set, n.data, n.len);
	}
	xd_derived_store(eds, XD_DERIVED_COVERED, key, v);
	return v.flag;
}
