/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/table.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/loop_thread.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "xds/dynparam.h"
#include "xds/message.h"
#include "xds/xdstp.h"

struct xd_table {
	atomic_uint refs;
	enum xd_rtype type;     /* XD_RTYPE_COUNT: a type xdsd does not serve */
	const char *type_url;   /* static, or in `arena` */
	uint64_t id;
	struct xd_entry *entries; /* sorted by name */
	size_t count;
	/* rule P1: variants, sorted by name, then constraints' bytes */
	struct xd_entry *variants;
	size_t nvariants;
	uint32_t *index;        /* open addressing: entry index + 1, 0 empty */
	size_t index_mask;
	uint32_t *alias_index;  /* same, over (alias, entry) pairs */
	const char **alias_names;
	uint32_t *alias_owner;
	size_t nalias, alias_mask;
	uint64_t vhash;
	char version[17];
	size_t restricted;      /* entries with e->restricted */
	size_t on_demand;       /* entries with e->on_demand */
	uint32_t min_ttl;       /* the shortest TTL of an entry, ms; 0: none */
	uint64_t ahash;         /* of their names and globs, and of the
				   on-demand names; 0 when none */
	struct xd_arena arena;  /* every byte the entries point to */
	size_t bytes;           /* what the table allocated (statistics) */
	size_t wire;            /* its entries' three wire forms, in bytes */
	struct xd_table *parts[2]; /* for a union: the tables it shares;
				      for a filter, parts[0] only */
	/* for a merge: the tables whose entries it holds, in order */
	struct xd_table **merged;
	size_t nmerged;
	struct xd_table_attachment attachment;
	uint64_t published_ms; /* loop thread: xd_table_publish */
};

struct xd_table_builder {
	enum xd_rtype type;
	const char *type_url; /* static; NULL for an unknown type's */
	struct xd_arena arena;
	size_t bytes; /* taken from the arena */
	struct xd_entry *entries;
	size_t count, cap;
	/* names seen so far, for duplicates: entry index + 1 */
	uint32_t *seen;
	size_t seen_mask;
};

static atomic_uint_fast64_t next_table_id = 1;
/* tables alive, and the bytes they allocated (xd_table_live) */
static atomic_size_t live_tables, live_bytes;

static void hex16(char out[17], uint64_t v)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--) {
		out[i] = digits[v & 15];
		v >>= 4;
	}
	out[16] = '\0';
}

static uint64_t name_hash(const char *name, size_t len)
{
	return XXH3_64bits(name, len);
}

/* What the builder tells duplicates by: the name, and for a variant
 * its constraints too (rule P1). */
static uint64_t entry_key_hash(const struct xd_entry *e)
{
	uint64_t h = name_hash(e->name, e->name_len);

	if (e->constraints.data != NULL)
		h ^= XXH3_64bits_withSeed(e->constraints.data,
					  e->constraints.len, 1);
	return h;
}

static bool same_span(struct xd_span a, struct xd_span b)
{
	return (a.data == NULL) == (b.data == NULL) && a.len == b.len &&
	       (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static void *balloc(struct xd_table_builder *b, size_t n)
{
	b->bytes += (n + 7) & ~(size_t)7;
	return xd_arena_alloc(&b->arena, n);
}

static void *arena_dup(struct xd_table_builder *b, const void *p, size_t n)
{
	char *d = balloc(b, n + 1);

	if (n > 0)
		memcpy(d, p, n);
	d[n] = '\0';
	return d;
}

/* ---------------- index ---------------- */

static size_t index_size(size_t count)
{
	size_t n = 16;

	while (n < count * 2)
		n *= 2;
	return n;
}

static const struct xd_entry *probe(const struct xd_table *t,
				    const char *name, size_t len)
{
	size_t i = name_hash(name, len) & t->index_mask;

	for (;; i = (i + 1) & t->index_mask) {
		uint32_t slot = t->index[i];
		const struct xd_entry *e;

		if (slot == 0)
			return NULL;
		e = &t->entries[slot - 1];
		if (e->name_len == len && memcmp(e->name, name, len) == 0)
			return e;
	}
}

static void build_index(struct xd_table *t)
{
	size_t n = index_size(t->count), aliases = 0;

	t->index = xd_calloc(n, sizeof(*t->index));
	t->index_mask = n - 1;
	for (size_t k = 0; k < t->count; k++) {
		const struct xd_entry *e = &t->entries[k];
		size_t i = name_hash(e->name, e->name_len) & t->index_mask;

		while (t->index[i] != 0)
			i = (i + 1) & t->index_mask;
		t->index[i] = (uint32_t)k + 1;
		aliases += e->naliases;
	}
	if (aliases == 0)
		return;

	n = index_size(aliases);
	t->alias_index = xd_calloc(n, sizeof(*t->alias_index));
	t->alias_names = xd_calloc(aliases, sizeof(*t->alias_names));
	t->alias_owner = xd_calloc(aliases, sizeof(*t->alias_owner));
	t->alias_mask = n - 1;
	for (size_t k = 0; k < t->count; k++) {
		const struct xd_entry *e = &t->entries[k];

		for (uint32_t a = 0; a < e->naliases; a++) {
			const char *alias = e->aliases[a];
			size_t i = name_hash(alias, strlen(alias)) & t->alias_mask;

			while (t->alias_index[i] != 0)
				i = (i + 1) & t->alias_mask;
			t->alias_names[t->nalias] = alias;
			t->alias_owner[t->nalias] = (uint32_t)k;
			t->alias_index[i] = (uint32_t)++t->nalias;
		}
	}
}

/* ---------------- encoding ---------------- */

/*
 * Writes the three wire forms of `e` into the arena (xds/message.h),
 * each a whole `resources` field of its response:
 *   sotw     Any{type URL, msg}
 *   delta    Resource{version, Any{type URL, msg}, name, aliases}
 *   wrapped  Any{Resource type URL, the Resource above}
 * and points e->msg into the sotw form.
 */
static void encode_entry(struct xd_table_builder *b, struct xd_entry *e,
			 const uint8_t *msg)
{
	const char *url = b->type_url;
	struct xd_resource r = {
		.version = {e->version, 16},
		.type_url = url,
		.body = {msg, e->msg.len},
		.name = {e->name, e->name_len},
		.aliases = e->aliases,
		.naliases = e->naliases,
		.constraints = e->constraints,
	};
	size_t any = xd_any_size(url, e->msg.len), res = xd_resource_size(&r);
	size_t wany = xd_any_size(XD_RESOURCE_TYPE_URL, res);
	uint8_t *p, *end;

	e->sotw.len = (uint32_t)xd_msg_field_size(XD_RESPONSE_RESOURCES, any);
	p = balloc(b, e->sotw.len);
	e->sotw.data = p;
	p = xd_msg_put_header(p, XD_RESPONSE_RESOURCES, any);
	end = xd_any_put(p, url, msg, e->msg.len);
	e->msg.data = end - e->msg.len;

	e->delta.len = (uint32_t)xd_msg_field_size(XD_RESPONSE_RESOURCES, res);
	p = balloc(b, e->delta.len);
	e->delta.data = p;
	p = xd_msg_put_header(p, XD_RESPONSE_RESOURCES, res);
	xd_resource_put(p, &r);

	e->wrapped.len = (uint32_t)xd_msg_field_size(XD_RESPONSE_RESOURCES, wany);
	p = balloc(b, e->wrapped.len);
	e->wrapped.data = p;
	p = xd_msg_put_header(p, XD_RESPONSE_RESOURCES, wany);
	xd_any_put(p, XD_RESOURCE_TYPE_URL, e->delta.data + e->delta.len - res,
		   res);
}

/* ---------------- builder ---------------- */

struct xd_table_builder *xd_table_builder_new(enum xd_rtype type)
{
	struct xd_table_builder *b = xd_calloc(1, sizeof(*b));

	b->type = type;
	if (type < XD_RTYPE_COUNT)
		b->type_url = xd_rtype_info(type)->type_url;
	b->seen_mask = 63;
	b->seen = xd_calloc(b->seen_mask + 1, sizeof(*b->seen));
	return b;
}

struct xd_table_builder *xd_table_builder_new_url(const char *type_url)
{
	struct xd_table_builder *b = xd_table_builder_new(XD_RTYPE_COUNT);

	b->type_url = type_url;
	return b;
}

static void seen_grow(struct xd_table_builder *b)
{
	size_t n = (b->seen_mask + 1) * 2;
	uint32_t *seen = xd_calloc(n, sizeof(*seen));

	for (size_t k = 0; k < b->count; k++) {
		size_t i = entry_key_hash(&b->entries[k]) & (n - 1);

		while (seen[i] != 0)
			i = (i + 1) & (n - 1);
		seen[i] = (uint32_t)k + 1;
	}
	free(b->seen);
	b->seen = seen;
	b->seen_mask = n - 1;
}

static int add(struct xd_table_builder *b, const char *name,
	       const uint8_t *msg, size_t len, const struct xd_ref *refs,
	       size_t nrefs, const char *const *aliases, size_t naliases,
	       struct xd_span constraints, const char *file, uint32_t line,
	       const struct xd_entry **first)
{
	size_t name_len = strlen(name);
	struct xd_entry key = {.name = name, .name_len = (uint32_t)name_len,
			       .constraints = constraints};
	size_t i = entry_key_hash(&key) & b->seen_mask;
	uint64_t seed = 0;
	struct xd_entry *e;
	struct xd_ref *r;
	const char **al;

	/* entries are indexed by uint32_t (index, seen) */
	XD_ASSERT_INFO(b->count < UINT32_MAX && name_len < UINT32_MAX &&
		       len < UINT32_MAX, "%s '%s'", b->type_url, name);
	for (; b->seen[i] != 0; i = (i + 1) & b->seen_mask) {
		e = &b->entries[b->seen[i] - 1];
		if (e->name_len == name_len && memcmp(e->name, name, name_len) == 0 &&
		    same_span(e->constraints, constraints)) {
			if (first != NULL)
				*first = e;
			return -1;
		}
	}
	b->entries = xd_grow(b->entries, &b->cap, b->count + 1, sizeof(*b->entries));
	e = &b->entries[b->count];
	memset(e, 0, sizeof(*e));
	e->name = arena_dup(b, name, name_len);
	e->name_len = (uint32_t)name_len;
	if (constraints.data != NULL) {
		/* a variant's version depends on its constraints: a reload
		 * that changes them sends it again (rule P1) */
		e->constraints = (struct xd_span){
			arena_dup(b, constraints.data, constraints.len),
			constraints.len};
		seed = XXH3_64bits(constraints.data, constraints.len);
	}
	e->hash = XXH3_64bits_withSeed(msg, len, seed);
	hex16(e->version, e->hash);
	e->msg.len = (uint32_t)len;
	r = balloc(b, (nrefs ? nrefs : 1) * sizeof(*r));
	for (size_t k = 0; k < nrefs; k++) {
		r[k].type = refs[k].type;
		r[k].name = arena_dup(b, refs[k].name, strlen(refs[k].name));
	}
	e->refs = r;
	e->nrefs = (uint32_t)nrefs;
	al = balloc(b, (naliases ? naliases : 1) * sizeof(*al));
	for (size_t k = 0; k < naliases; k++)
		al[k] = arena_dup(b, aliases[k], strlen(aliases[k]));
	e->aliases = al;
	e->naliases = (uint32_t)naliases;
	e->file = file != NULL ? arena_dup(b, file, strlen(file)) : "";
	e->line = line;
	/* Encoded now, while the caller's message bytes are at hand; `msg`
	 * then points into the sotw form. */
	encode_entry(b, e, msg);
	b->seen[i] = (uint32_t)++b->count;
	if (b->count * 2 > b->seen_mask)
		seen_grow(b);
	return 0;
}

int xd_table_builder_add(struct xd_table_builder *b, const char *name,
			 const uint8_t *msg, size_t len,
			 const struct xd_ref *refs, size_t nrefs,
			 const char *const *aliases, size_t naliases,
			 const char *file, uint32_t line,
			 const struct xd_entry **first)
{
	return add(b, name, msg, len, refs, nrefs, aliases, naliases,
		   (struct xd_span){0}, file, line, first);
}

int xd_table_builder_add_variant(struct xd_table_builder *b, const char *name,
				 const uint8_t *msg, size_t len,
				 const struct xd_ref *refs, size_t nrefs,
				 struct xd_span constraints,
				 const char *file, uint32_t line,
				 const struct xd_entry **first)
{
	return add(b, name, msg, len, refs, nrefs, NULL, 0, constraints, file,
		   line, first);
}

/* One Resource form of `e` as a whole `resources` field: wrapped in an
 * Any (SotW, rule L2) or not (delta). */
static struct xd_span resource_field(struct xd_table_builder *b,
				     const struct xd_resource *r, bool wrap)
{
	size_t res = xd_resource_size(r);
	size_t inner = wrap ? xd_any_size(XD_RESOURCE_TYPE_URL, res) : res;
	struct xd_span out;
	uint8_t *p;

	out.len = (uint32_t)xd_msg_field_size(XD_RESPONSE_RESOURCES, inner);
	p = balloc(b, out.len);
	out.data = p;
	p = xd_msg_put_header(p, XD_RESPONSE_RESOURCES, inner);
	if (wrap) {
		p = xd_msg_put_header(p, XD_ANY_TYPE_URL,
				      strlen(XD_RESOURCE_TYPE_URL));
		memcpy(p, XD_RESOURCE_TYPE_URL, strlen(XD_RESOURCE_TYPE_URL));
		p = xd_msg_put_header(p + strlen(XD_RESOURCE_TYPE_URL),
				      XD_ANY_VALUE, res);
	}
	xd_resource_put(p, r);
	return out;
}

void xd_table_builder_ttl(struct xd_table_builder *b, uint32_t ms)
{
	struct xd_entry *e;

	/* of the entry just added, once */
	XD_ASSERT(b->count > 0 && ms > 0 && b->entries[b->count - 1].ttl == NULL);
	e = &b->entries[b->count - 1];
	struct xd_ttl_forms *f = balloc(b, sizeof(*f));
	const char *url = b->type_url;
	struct xd_resource r;

	/* The TTL is part of what the client is sent, so of the version;
	 * the forms already written carried the version without it. */
	e->hash = XXH3_64bits_withSeed(
		e->msg.data, e->msg.len,
		ms ^ (e->constraints.data != NULL ?
			      XXH3_64bits(e->constraints.data,
					  e->constraints.len) : 0));
	hex16(e->version, e->hash);
	encode_entry(b, e, e->msg.data);
	r = (struct xd_resource){
		.version = {e->version, 16},
		.type_url = url,
		.body = e->msg,
		.name = {e->name, e->name_len},
		.aliases = e->aliases,
		.naliases = e->naliases,
		.ttl_ms = ms,
		.constraints = e->constraints,
	};
	f->ms = ms;
	f->wrapped = resource_field(b, &r, true);
	f->delta = resource_field(b, &r, false);
	r.type_url = NULL;
	r.body = (struct xd_span){0};
	r.aliases = NULL;
	r.naliases = 0;
	f->beat_delta = resource_field(b, &r, false);
	e->ttl = f;
}

void xd_table_builder_on_demand(struct xd_table_builder *b)
{
	XD_ASSERT(b->count > 0); /* of the entry just added */
	b->entries[b->count - 1].on_demand = true;
}

void xd_table_builder_restrict(struct xd_table_builder *b,
			       const char *const *globs, size_t n)
{
	struct xd_entry *e;
	const char **g;

	XD_ASSERT(b->count > 0); /* of the entry just added */
	e = &b->entries[b->count - 1];
	g = balloc(b, (n ? n : 1) * sizeof(*g));

	for (size_t k = 0; k < n; k++)
		g[k] = arena_dup(b, globs[k], strlen(globs[k]));
	e->allow = g;
	e->nallow = (uint32_t)n;
	e->restricted = true;
}

static int by_name(const void *pa, const void *pb)
{
	const struct xd_entry *a = pa, *b = pb;
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);

	if (c != 0)
		return c;
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

int xd_entry_order(const struct xd_entry *a, const struct xd_entry *b)
{
	int c = by_name(a, b);
	size_t n;

	if (c != 0)
		return c;
	if ((a->constraints.data == NULL) != (b->constraints.data == NULL))
		return a->constraints.data == NULL ? -1 : 1;
	n = a->constraints.len < b->constraints.len ? a->constraints.len :
						      b->constraints.len;
	c = n > 0 ? memcmp(a->constraints.data, b->constraints.data, n) : 0;
	if (c != 0)
		return c;
	return (a->constraints.len > b->constraints.len) -
	       (a->constraints.len < b->constraints.len);
}

static int by_name_variant(const void *a, const void *b)
{
	return xd_entry_order(a, b);
}

/* The table's version: a hash of its sorted (name, version) pairs; and
 * apart, a hash of who may see what, and what only on demand
 * (xd_table_same). */
static void table_version(struct xd_table *t)
{
	XXH3_state_t st, ac;

	XXH3_64bits_reset(&st);
	XXH3_64bits_reset(&ac);
	t->restricted = 0;
	t->on_demand = 0;
	t->min_ttl = 0;
	for (size_t i = 0; i < t->count + t->nvariants; i++) {
		const struct xd_entry *e = i < t->count ?
			&t->entries[i] : &t->variants[i - t->count];

		if (e->ttl != NULL && (t->min_ttl == 0 || e->ttl->ms < t->min_ttl))
			t->min_ttl = e->ttl->ms;
		XXH3_64bits_update(&st, e->name, e->name_len + 1);
		XXH3_64bits_update(&st, e->version, 16);
		if (e->on_demand) {
			t->on_demand++;
			XXH3_64bits_update(&ac, e->name, e->name_len + 1);
			XXH3_64bits_update(&ac, "on demand", 10);
		}
		if (!e->restricted)
			continue;
		t->restricted++;
		XXH3_64bits_update(&ac, e->name, e->name_len + 1);
		XXH3_64bits_update(&ac, e->version, 16);
		for (uint32_t k = 0; k < e->nallow; k++)
			XXH3_64bits_update(&ac, e->allow[k],
					   strlen(e->allow[k]) + 1);
		/* where one entry's globs end (a glob is never empty) */
		XXH3_64bits_update(&ac, "", 1);
	}
	t->vhash = XXH3_64bits_digest(&st);
	t->ahash = t->restricted + t->on_demand > 0 ? XXH3_64bits_digest(&ac) : 0;
	hex16(t->version, t->vhash);
}

static struct xd_table *table_alloc(enum xd_rtype type)
{
	struct xd_table *t = xd_calloc(1, sizeof(*t));

	atomic_init(&t->refs, 1);
	t->type = type;
	if (type < XD_RTYPE_COUNT)
		t->type_url = xd_rtype_info(type)->type_url;
	t->id = atomic_fetch_add(&next_table_id, 1);
	atomic_fetch_add_explicit(&live_tables, 1, memory_order_relaxed);
	return t;
}

/* Counts what a finished table allocated, beside `arena` bytes. */
static void account(struct xd_table *t, size_t arena, size_t entries_cap)
{
	size_t index = (t->index_mask + 1) * sizeof(*t->index);

	if (t->nalias > 0)
		index += (t->alias_mask + 1) * sizeof(*t->alias_index) +
			 t->nalias * (sizeof(*t->alias_names) +
				      sizeof(*t->alias_owner));
	t->bytes = sizeof(*t) + arena + entries_cap * sizeof(*t->entries) +
		   index;
	t->bytes += t->nvariants * sizeof(*t->variants);
	for (size_t i = 0; i < t->count + t->nvariants; i++) {
		const struct xd_entry *e = i < t->count ?
			&t->entries[i] : &t->variants[i - t->count];

		t->wire += e->sotw.len + e->wrapped.len + e->delta.len;
		if (e->ttl != NULL)
			t->wire += e->ttl->wrapped.len + e->ttl->delta.len +
				   e->ttl->beat_delta.len;
	}
	atomic_fetch_add_explicit(&live_bytes, t->bytes, memory_order_relaxed);
}

/* Moves the variants out of the sorted entries into their own array
 * (rule P1), keeping both in order. */
static void split_variants(struct xd_table *t)
{
	size_t n = 0, v = 0;

	for (size_t i = 0; i < t->count; i++)
		v += t->entries[i].constraints.data != NULL;
	if (v == 0)
		return;
	t->variants = xd_malloc(v * sizeof(*t->variants));
	for (size_t i = 0; i < t->count; i++) {
		if (t->entries[i].constraints.data != NULL)
			t->variants[t->nvariants++] = t->entries[i];
		else
			t->entries[n++] = t->entries[i];
	}
	t->count = n;
}

static struct xd_entry *copy_variants(const struct xd_table *t,
				      size_t *n)
{
	struct xd_entry *v = NULL;

	*n = 0;
	if (t->nvariants == 0)
		return NULL;
	v = xd_malloc(t->nvariants * sizeof(*v));
	memcpy(v, t->variants, t->nvariants * sizeof(*v));
	*n = t->nvariants;
	return v;
}

struct xd_table *xd_table_builder_finish(struct xd_table_builder *b)
{
	struct xd_table *t = table_alloc(b->type);
	size_t arena = b->bytes, cap = b->cap;

	t->type_url = b->type_url; /* static */
	if (b->count > 1) /* an empty table has no array */
		qsort(b->entries, b->count, sizeof(*b->entries),
		      by_name_variant);
	t->entries = b->entries;
	t->count = b->count;
	split_variants(t);
	t->arena = b->arena;
	b->entries = NULL;
	b->arena = (struct xd_arena)XD_ARENA_INIT;
	xd_table_builder_free(b);
	table_version(t);
	build_index(t);
	account(t, arena, cap);
	return t;
}

void xd_table_builder_free(struct xd_table_builder *b)
{
	if (b == NULL)
		return;
	free(b->entries);
	free(b->seen);
	xd_arena_free(&b->arena);
	free(b);
}

struct xd_table *xd_table_empty(enum xd_rtype type)
{
	return xd_table_builder_finish(xd_table_builder_new(type));
}

struct xd_table *xd_table_empty_unknown(const char *type_url, size_t len)
{
	struct xd_table *t = xd_table_empty(XD_RTYPE_COUNT);
	char *url = xd_arena_alloc(&t->arena, len + 1);
	memcpy(url, type_url, len);
	url[len] = '\0';
	t->type_url = url;
	return t;
}

struct xd_table *xd_table_union(struct xd_table *a, struct xd_table *b)
{
	struct xd_table *t;
	size_t i = 0, j = 0, n = 0;

	XD_ASSERT_INFO(a->type == b->type, "tables %llu and %llu", (unsigned long long)a->id,
		       (unsigned long long)b->id);
	t = table_alloc(a->type);

	t->entries = xd_malloc((a->count + b->count + 1) * sizeof(*t->entries));
	/* Merge two sorted lists; on equal names `a` wins. */
	while (i < a->count || j < b->count) {
		int c = i == a->count ? 1 :
			j == b->count ? -1 :
					by_name(&a->entries[i], &b->entries[j]);

		if (c <= 0) {
			t->entries[n++] = a->entries[i++];
			if (c == 0)
				j++;
		} else {
			t->entries[n++] = b->entries[j++];
		}
	}
	t->count = n;
	/* variants: those of `a` (the table served); the make-before-break
	 * union keeps dropped plain resources only */
	t->variants = copy_variants(a, &t->nvariants);
	t->parts[0] = xd_table_ref(a);
	t->parts[1] = xd_table_ref(b);
	table_version(t);
	build_index(t);
	account(t, 0, a->count + b->count + 1);
	return t;
}

/* A sorted run of entries of one part: its plain ones, or its variants. */
struct run {
	const struct xd_entry *v;
	size_t n;
};

static int by_first(const void *a, const void *b)
{
	return xd_entry_order(((const struct run *)a)->v,
			      ((const struct run *)b)->v);
}

struct xd_table *xd_table_merge(struct xd_table *const *parts, size_t n,
				bool *clash)
{
	struct xd_table *t;
	struct run *runs = xd_calloc(2 * n + 1, sizeof(*runs));
	size_t total = 0, k = 0, nruns = 0;
	bool sorted = true;

	XD_ASSERT(n > 1);
	t = table_alloc(parts[0]->type);
	t->type_url = parts[0]->type_url; /* static, or in parts[0], kept */
	t->merged = xd_malloc(n * sizeof(*t->merged));
	for (size_t i = 0; i < n; i++) {
		XD_ASSERT_INFO(parts[i]->type == t->type &&
				       parts[i]->parts[0] == NULL &&
				       parts[i]->merged == NULL,
			       "table %llu merged into %s",
			       (unsigned long long)parts[i]->id, t->type_url);
		if (parts[i]->count > 0)
			runs[nruns++] = (struct run){parts[i]->entries,
						     parts[i]->count};
		if (parts[i]->nvariants > 0)
			runs[nruns++] = (struct run){parts[i]->variants,
						     parts[i]->nvariants};
		total += parts[i]->count + parts[i]->nvariants;
		t->merged[i] = xd_table_ref(parts[i]);
	}
	t->nmerged = n;
	/* Files usually hold ranges of names apart: their runs, by their
	 * first entries, are then the table in order, and sorting is a
	 * check. */
	qsort(runs, nruns, sizeof(*runs), by_first);
	t->entries = xd_malloc((total + 1) * sizeof(*t->entries));
	for (size_t r = 0; r < nruns; r++) {
		memcpy(&t->entries[k], runs[r].v, runs[r].n * sizeof(*t->entries));
		k += runs[r].n;
	}
	free(runs);
	t->count = total;
	*clash = false;
	for (size_t i = 1; i < total && sorted; i++)
		sorted = xd_entry_order(&t->entries[i - 1], &t->entries[i]) < 0;
	if (!sorted)
		qsort(t->entries, total, sizeof(*t->entries), by_name_variant);
	/* equal neighbours: the same name (and constraints) twice */
	for (size_t i = 1; i < total && !*clash; i++)
		*clash = xd_entry_order(&t->entries[i - 1], &t->entries[i]) == 0;
	split_variants(t);
	table_version(t);
	build_index(t);
	account(t, 0, total + 1);
	return t;
}

bool xd_table_merged_from(const struct xd_table *t,
			  struct xd_table *const *parts, size_t n)
{
	if (n == 1)
		return t == parts[0];
	if (t->nmerged != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (t->merged[i] != parts[i])
			return false;
	return true;
}

size_t xd_table_merged_count(const struct xd_table *t)
{
	return t->nmerged;
}

struct xd_table *xd_table_merged_part(const struct xd_table *t, size_t i)
{
	XD_ASSERT_INFO(i < t->nmerged, "part %zu of table %llu", i,
		       (unsigned long long)t->id);
	return t->merged[i];
}

struct xd_table *xd_table_union_base(const struct xd_table *t)
{
	return t->parts[1] != NULL ? t->parts[0] : NULL;
}

struct xd_table *xd_table_filter(struct xd_table *t,
				 bool (*keep)(const struct xd_entry *e,
					      void *arg),
				 void *arg)
{
	struct xd_table *f = table_alloc(t->type);
	size_t n = 0;

	f->type_url = t->type_url; /* static, or in t, which f keeps */
	f->entries = xd_malloc((t->count + 1) * sizeof(*f->entries));
	for (size_t i = 0; i < t->count; i++)
		if (keep(&t->entries[i], arg))
			f->entries[n++] = t->entries[i];
	f->count = n;
	if (t->nvariants > 0) {
		f->variants = xd_malloc(t->nvariants * sizeof(*f->variants));
		for (size_t i = 0; i < t->nvariants; i++)
			if (keep(&t->variants[i], arg))
				f->variants[f->nvariants++] = t->variants[i];
	}
	f->parts[0] = xd_table_ref(t);
	table_version(f);
	build_index(f);
	account(f, 0, t->count + 1);
	return f;
}

struct xd_table *xd_table_filter_source(const struct xd_table *t)
{
	if (t->parts[1] != NULL) /* a union: its base */
		t = t->parts[0];
	return t->parts[1] == NULL ? t->parts[0] : NULL;
}

uint32_t xd_table_min_ttl(const struct xd_table *t)
{
	return t->min_ttl;
}

size_t xd_table_restricted(const struct xd_table *t)
{
	return t->restricted;
}

bool xd_table_same(const struct xd_table *a, const struct xd_table *b)
{
	return a->vhash == b->vhash && a->ahash == b->ahash &&
	       a->restricted == b->restricted && a->on_demand == b->on_demand;
}

bool xd_table_interchangeable(const struct xd_table *a,
			       const struct xd_table *b)
{
	if (!xd_table_same(a, b) || a->count != b->count ||
	    a->nvariants != b->nvariants)
		return false;
	for (int k = 0; k < 2; k++) {
		const struct xd_table *t = k == 0 ? a : b;

		if (t->parts[0] != NULL || t->merged != NULL)
			return false;
	}
	for (size_t i = 0; i < a->count + a->nvariants; i++) {
		const struct xd_entry *x = i < a->count ?
			&a->entries[i] : &a->variants[i - a->count];
		const struct xd_entry *y = i < b->count ?
			&b->entries[i] : &b->variants[i - b->count];

		if (x->line != y->line || strcmp(x->file, y->file) != 0)
			return false;
	}
	return true;
}

bool xd_entry_allows(const struct xd_entry *e, const char *identity)
{
	if (!e->restricted)
		return true;
	if (identity == NULL)
		return false;
	for (uint32_t k = 0; k < e->nallow; k++)
		if (xd_text_glob(e->allow[k], identity))
			return true;
	return false;
}

/* For a broken invariant's message: which table. */
#define WHO(t) "table %llu (%s, version %s)", (unsigned long long)(t)->id, \
		(t)->type_url, (t)->version

struct xd_table *xd_table_ref(struct xd_table *t)
{
	unsigned old = atomic_fetch_add_explicit(&t->refs, 1,
						 memory_order_relaxed);

	/* a table at 0 is being freed: no reference can be taken */
	XD_ASSERT_INFO(old > 0, WHO(t));
	return t;
}

void xd_table_unref(struct xd_table *t)
{
	unsigned old;

	if (t == NULL)
		return;
	old = atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel);
	/* XD_UNREF's check, atomically: loader threads drop references */
	XD_ASSERT_INFO(old > 0, "reference dropped below zero: " WHO(t));
	if (old != 1)
		return;
	if (t->attachment.free_fn != NULL)
		t->attachment.free_fn(t->attachment.p);
	free(t->index);
	free(t->alias_index);
	free(t->alias_names);
	free(t->alias_owner);
	free(t->entries);
	free(t->variants);
	xd_arena_free(&t->arena);
	xd_table_unref(t->parts[0]);
	xd_table_unref(t->parts[1]);
	for (size_t i = 0; i < t->nmerged; i++)
		xd_table_unref(t->merged[i]);
	free(t->merged);
	atomic_fetch_sub_explicit(&live_bytes, t->bytes, memory_order_relaxed);
	atomic_fetch_sub_explicit(&live_tables, 1, memory_order_relaxed);
	free(t);
}

size_t xd_table_live(size_t *bytes)
{
	if (bytes != NULL)
		*bytes = atomic_load_explicit(&live_bytes, memory_order_relaxed);
	return atomic_load_explicit(&live_tables, memory_order_relaxed);
}

enum xd_rtype xd_table_type(const struct xd_table *t)
{
	return t->type;
}

const char *xd_table_type_url(const struct xd_table *t)
{
	return t->type_url;
}

uint64_t xd_table_id(const struct xd_table *t)
{
	return t->id;
}

size_t xd_table_count(const struct xd_table *t)
{
	return t->count;
}

size_t xd_table_wire_bytes(const struct xd_table *t)
{
	return t->wire;
}

const char *xd_table_version(const struct xd_table *t)
{
	return t->version;
}

uint64_t xd_table_vhash(const struct xd_table *t)
{
	return t->vhash;
}

void xd_table_publish(struct xd_table *t, uint64_t now_ms)
{
	XD_ASSERT_LOOP();
	if (t->published_ms == 0)
		t->published_ms = now_ms;
}

uint64_t xd_table_published(const struct xd_table *t)
{
	while (t->parts[0] != NULL)
		t = t->parts[0];
	return t->published_ms;
}

const struct xd_entry *xd_table_at(const struct xd_table *t, size_t i)
{
	XD_ASSERT_INFO(i < t->count, WHO(t));
	return &t->entries[i];
}

const struct xd_entry *xd_table_find(const struct xd_table *t,
				     const char *name, size_t len)
{
	return probe(t, name, len);
}

/* Where names that start with `prefix` begin in `t` (sorted by name,
 * bytewise, shorter first on a tie). */
static size_t lower_bound(const struct xd_table *t, const char *prefix,
			  size_t len)
{
	size_t lo = 0, hi = xd_table_count(t);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xd_entry *e = xd_table_at(t, mid);
		size_t n = e->name_len < len ? e->name_len : len;
		int c = memcmp(e->name, prefix, n);

		if (c < 0 || (c == 0 && e->name_len < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t xd_table_glob_members(const struct xd_table *t, const char *glob,
			     size_t len,
			     bool (*visit)(const struct xd_entry *e, void *arg),
			     void *arg)
{
	size_t prefix, n = 0, cap = len + 512;
	char *buf;

	/* Members share the glob's text up to its last '/' (before the
	 * parameters): one run of the sorted table holds them all, among
	 * deeper paths and other parameters, which the comparison drops. */
	{
		const char *q = memchr(glob, '?', len);

		prefix = (q != NULL ? (size_t)(q - glob) : len);
		prefix = prefix > 0 ? prefix - 1 : 0; /* before the '*' */
	}
	buf = xd_malloc(cap);
	for (size_t i = lower_bound(t, glob, prefix); i < xd_table_count(t); i++) {
		const struct xd_entry *e = xd_table_at(t, i);
		size_t g;

		if (e->name_len < prefix || memcmp(e->name, glob, prefix) != 0)
			break;
		if (e->name_len + 2 > cap) {
			cap = e->name_len + 2;
			buf = xd_realloc(buf, cap);
		}
		g = xd_xdstp_collection(e->name, e->name_len, buf);
		if (g == len && memcmp(buf, glob, g) == 0) {
			n++;
			if (!visit(e, arg))
				break;
		}
	}
	free(buf);
	return n;
}

const struct xd_entry *xd_table_variants_of(const struct xd_table *t,
					    const char *name, size_t len,
					    size_t *n)
{
	size_t lo = 0, hi = t->nvariants, k;

	while (lo < hi) { /* the first variant of the name */
		size_t mid = lo + (hi - lo) / 2;
		const struct xd_entry *e = &t->variants[mid];
		size_t m = e->name_len < len ? e->name_len : len;
		int c = m > 0 ? memcmp(e->name, name, m) : 0;

		if (c == 0)
			c = (e->name_len > len) - (e->name_len < len);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k < t->nvariants; k++)
		if (t->variants[k].name_len != len ||
		    memcmp(t->variants[k].name, name, len) != 0)
			break;
	*n = k - lo;
	return k > lo ? &t->variants[lo] : NULL;
}

const struct xd_entry *xd_table_find_variant(const struct xd_table *t,
					     struct xd_name name,
					     const struct xd_dparam *params,
					     size_t n)
{
	const struct xd_entry *v;
	size_t nv;

	v = xd_table_variants_of(t, name.data, name.len, &nv);
	for (size_t i = 0; i < nv; i++)
		if (xd_dpc_match(v[i].constraints.data, v[i].constraints.len,
				 params, n))
			return &v[i];
	return probe(t, name.data, name.len);
}

const struct xd_entry *xd_table_find_locator(const struct xd_table *t,
					     const char *key, size_t len)
{
	struct xd_dparam params[XD_DPARAM_MAX];
	struct xd_name name;
	size_t n;

	if (xd_locator_split(key, len, &name, params, &n) != 0)
		return NULL;
	return xd_table_find_variant(t, name, params, n);
}

const struct xd_entry *xd_table_variant_at(const struct xd_table *t, size_t i)
{
	XD_ASSERT_INFO(i < t->nvariants, WHO(t));
	return &t->variants[i];
}

size_t xd_table_variant_count(const struct xd_table *t)
{
	return t->nvariants;
}

const struct xd_entry *xd_table_find_alias(const struct xd_table *t,
					   const char *alias, size_t len)
{
	if (t->nalias == 0)
		return NULL;
	for (size_t i = name_hash(alias, len) & t->alias_mask;;
	     i = (i + 1) & t->alias_mask) {
		uint32_t slot = t->alias_index[i];
		const char *a;

		if (slot == 0)
			return NULL;
		a = t->alias_names[slot - 1];
		if (strlen(a) == len && memcmp(a, alias, len) == 0)
			return &t->entries[t->alias_owner[slot - 1]];
	}
}

struct xd_table_attachment *xd_table_attachment(struct xd_table *t)
{
	XD_ASSERT_LOOP();
	return &t->attachment;
}
