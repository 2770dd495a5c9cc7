/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/parsed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/xalloc.h"

struct xd_parsed_cache {
	struct xd_parsed **files; /* sorted by path, then kind */
	size_t n;
	/* those the last keep() let go, until xd_parsed_cache_release */
	struct xd_parsed **dropped;
	size_t ndropped;
};

/* `p` holds f's bytes and stat from now on. */
static void take_read(struct xd_parsed *p, const struct xd_snapfile *f)
{
	if (p->bytes != f->bytes) {
		xd_snapbytes_unref(p->bytes);
		p->bytes = f->bytes != NULL ? xd_snapbytes_ref(f->bytes) : NULL;
	}
	p->st = f->st;
}

/* An empty record of `f`, whose bytes hash to `h`. */
static struct xd_parsed *parsed_new(const struct xd_snapfile *f,
				    XXH128_hash_t h)
{
	struct xd_parsed *p = xd_calloc(1, sizeof(*p));

	p->refs = 1;
	p->path = xd_strdup(f->path);
	p->json = f->json;
	p->len = f->len;
	p->hash_lo = h.low64;
	p->hash_hi = h.high64;
	take_read(p, f);
	p->arena = (struct xd_arena)XD_ARENA_INIT;
	p->scratch = (struct xd_arena)XD_ARENA_INIT;
	return p;
}

static const char *dup_in(struct xd_arena *a, const void *data, size_t n)
{
	char *d = xd_arena_alloc(a, n + 1);

	if (n > 0)
		memcpy(d, data, n);
	d[n] = '\0';
	return d;
}

struct xd_parsed_op *xd_parsed_push(struct xd_parsed *p,
				    enum xd_parsed_kind kind,
				    const char *name,
				    struct xd_span constraints)
{
	/* an ENTRY's copy is needed only until xd_parsed_resolve */
	struct xd_arena *a = kind == XD_PARSED_ENTRY ? &p->scratch : &p->arena;
	struct xd_parsed_op *op;

	p->ops = xd_grow(p->ops, &p->cap, p->nops + 1, sizeof(*p->ops));
	op = &p->ops[p->nops++];
	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)kind;
	op->diag_at = (uint32_t)xd_diag_total(&p->diag);
	op->name = dup_in(a, name, strlen(name));
	if (constraints.data != NULL) {
		op->variant = true;
		op->constraints = (struct xd_span){
			(const uint8_t *)dup_in(a, constraints.data,
						constraints.len),
			constraints.len};
	}
	p->ndup += kind == XD_PARSED_DUP;
	return op;
}

const char *xd_parsed_op_name(const struct xd_parsed_op *op)
{
	return op->e != NULL ? op->e->name : op->name;
}

struct xd_span xd_parsed_op_constraints(const struct xd_parsed_op *op)
{
	return op->e != NULL ? op->e->constraints : op->constraints;
}

void xd_parsed_op_path(const struct xd_parsed_op *op, char *buf,
		       size_t size)
{
	snprintf(buf, size, "%s[%u]", xd_section(op->section).key, op->index);
}

/* The entry of a name: the plain resource, or the variant with these
 * constraints (data not NULL). */
static const struct xd_entry *entry_of(const struct xd_table *t,
				       const char *name,
				       struct xd_span constraints)
{
	size_t len = strlen(name), n;
	const struct xd_entry *v;

	if (constraints.data == NULL)
		return xd_table_find(t, name, len);
	v = xd_table_variants_of(t, name, len, &n);
	for (size_t i = 0; i < n; i++)
		if (v[i].constraints.len == constraints.len &&
		    memcmp(v[i].constraints.data, constraints.data,
			   constraints.len) == 0)
			return &v[i];
	return NULL;
}

void xd_parsed_resolve(struct xd_parsed *p)
{
	for (size_t i = 0; i < p->nops; i++) {
		struct xd_parsed_op *op = &p->ops[i];

		if (op->kind != XD_PARSED_ENTRY)
			continue;
		XD_ASSERT_INFO(p->tables[op->section] != NULL,
			       "%s:%u: section %u has no table", p->path,
			       op->line, op->section);
		op->e = entry_of(p->tables[op->section], op->name,
				 op->constraints);
		/* the builder took it: its table has it */
		XD_ASSERT_INFO(op->e != NULL, "%s:%u: '%s' not in its table",
			       p->path, op->line, op->name);
		op->name = NULL;
		op->constraints = (struct xd_span){0};
	}
	xd_arena_free(&p->scratch);
}

void xd_parsed_swap_table(struct xd_parsed *p, unsigned s,
			  struct xd_table *t)
{
	XD_ASSERT_INFO(s < XD_SNAP_SECTIONS && p->tables[s] != NULL &&
			       xd_table_interchangeable(p->tables[s], t),
		       "%s: section %u swapped for another table", p->path, s);
	for (size_t i = 0; i < p->nops; i++) {
		struct xd_parsed_op *op = &p->ops[i];

		if (op->kind != XD_PARSED_ENTRY || op->section != s)
			continue;
		op->e = entry_of(t, op->e->name, op->e->constraints);
		XD_ASSERT_INFO(op->e != NULL, "%s:%u: gone from its table",
			       p->path, op->line);
	}
	xd_table_unref(p->tables[s]);
	p->tables[s] = xd_table_ref(t);
}

struct xd_parsed *xd_parsed_ref(struct xd_parsed *p)
{
	XD_ASSERT_INFO(p->refs > 0, "%s", p->path);
	p->refs++;
	return p;
}

void xd_parsed_unref(struct xd_parsed *p)
{
	if (p == NULL)
		return;
	if (!XD_UNREF(p->refs))
		return;
	for (size_t s = 0; s < XD_SNAP_SECTIONS; s++)
		xd_table_unref(p->tables[s]);
	free(p->ops);
	xd_diag_clear(&p->diag);
	xd_arena_free(&p->arena);
	xd_arena_free(&p->scratch);
	xd_snapbytes_unref(p->bytes);
	free(p->path);
	free(p);
}

/* ---------------- the cache ---------------- */

struct xd_parsed_cache *xd_parsed_cache_new(void)
{
	return xd_calloc(1, sizeof(struct xd_parsed_cache));
}

static void cache_clear(struct xd_parsed_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		xd_parsed_unref(c->files[i]);
	free(c->files);
	c->files = NULL;
	c->n = 0;
}

void xd_parsed_cache_release(struct xd_parsed_cache *c)
{
	for (size_t i = 0; i < c->ndropped; i++)
		xd_parsed_unref(c->dropped[i]);
	free(c->dropped);
	c->dropped = NULL;
	c->ndropped = 0;
}

void xd_parsed_cache_free(struct xd_parsed_cache *c)
{
	if (c == NULL)
		return;
	xd_parsed_cache_release(c);
	cache_clear(c);
	free(c);
}

static int order(const char *path, bool json, const struct xd_parsed *p)
{
	int r = strcmp(path, p->path);

	return r != 0 ? r : (int)json - (int)p->json;
}

static int by_path(const void *a, const void *b)
{
	const struct xd_parsed *pb = *(struct xd_parsed *const *)b;
	const struct xd_parsed *pa = *(struct xd_parsed *const *)a;

	return order(pa->path, pa->json, pb);
}

/* The file held for `path` and `json`: NULL if none. */
static struct xd_parsed *cache_at(const struct xd_parsed_cache *c,
				  const char *path, bool json)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = order(path, json, c->files[mid]);

		if (r == 0)
			return c->files[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

struct xd_parsed *xd_parsed_cache_get(struct xd_parsed_cache *c,
				      const struct xd_snapfile *f,
				      bool *found)
{
	struct xd_parsed *p = c != NULL ? cache_at(c, f->path, f->json) : NULL;
	XXH128_hash_t h;

	*found = false;
	if (p != NULL && f->bytes != NULL && p->bytes == f->bytes) {
		/* the bytes hashed when they were read */
		XD_ASSERT_INFO(p->len == f->len, "%s: %zu bytes, then %zu",
			       p->path, p->len, f->len);
		*found = true;
		return xd_parsed_ref(p);
	}
	h = XXH3_128bits(f->text, f->len);
	if (p != NULL && p->len == f->len && p->hash_lo == h.low64 &&
	    p->hash_hi == h.high64) {
		take_read(p, f);
		*found = true;
		return xd_parsed_ref(p);
	}
	return parsed_new(f, h);
}

bool xd_parsed_cache_known(void *cache, const char *path, bool json,
			   struct xd_snapstat *st, struct xd_snapbytes **bytes)
{
	const struct xd_parsed *p = cache_at(cache, path, json);

	if (p == NULL || p->bytes == NULL)
		return false;
	*st = p->st;
	*bytes = p->bytes;
	return true;
}

void xd_parsed_cache_keep(struct xd_parsed_cache *c,
			  struct xd_parsed *const *files, size_t n)
{
	struct xd_parsed **v = xd_calloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = xd_parsed_ref(files[i]);
	/* what the cache held is let go later, on the caller's thread:
	 * their tables may be served snapshots' too, which the loop
	 * thread attached its own to (table.h) and must free */
	xd_parsed_cache_release(c);
	c->dropped = c->files;
	c->ndropped = c->n;
	c->files = NULL;
	c->n = 0;
	qsort(v, n, sizeof(*v), by_path);
	c->files = v;
	c->n = n;
}

size_t xd_parsed_cache_count(const struct xd_parsed_cache *c)
{
	return c->n;
}
