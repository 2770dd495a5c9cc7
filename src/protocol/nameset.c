/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/nameset.h"

#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "util/loop_thread.h"
#include "util/xalloc.h"

struct xd_nameset {
	unsigned refs;
	uint64_t id;
	uint64_t hash;             /* of the sorted names: the intern key */
	struct xd_nameset *next;   /* intern bucket chain */
	size_t count;
	struct xd_key *keys;       /* sorted; point into `bytes`, each
				      read once (key.h) */
	struct xd_dparam *params;  /* the locators' parameters, in order */
	uint32_t *index;           /* open addressing: position + 1 */
	size_t mask;
	char *bytes;
	size_t size;               /* what the set allocated */
	size_t globs;              /* glob collections among the names */
	size_t locators;           /* locator keys among them */
};

/* The intern table, and every set's count, are the loop thread's: the
 * functions that touch either check it (XD_ASSERT_LOOP). A set's names
 * never change, so reading them needs no check. */
static struct {
	struct xd_nameset **buckets;
	size_t mask, live;
	uint64_t next_id;
} interned = {NULL, 0, 0, 1};

static int cmp_name(const void *pa, const void *pb)
{
	const struct xd_name *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->data, b->data, n);

	if (c != 0)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static uint64_t set_hash(const struct xd_name *names, size_t n)
{
	XXH3_state_t st;

	XXH3_64bits_reset(&st);
	for (size_t i = 0; i < n; i++) {
		uint32_t len = (uint32_t)names[i].len;

		/* length-prefixed, so {"ab"} and {"a","b"} differ */
		XXH3_64bits_update(&st, &len, sizeof(len));
		XXH3_64bits_update(&st, names[i].data, names[i].len);
	}
	return XXH3_64bits_digest(&st);
}

static bool same(const struct xd_nameset *s, const struct xd_name *names,
		 size_t n)
{
	if (s->count != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s->keys[i].text.len != names[i].len ||
		    memcmp(s->keys[i].text.data, names[i].data, names[i].len) != 0)
			return false;
	return true;
}

static void intern_grow(void)
{
	size_t n = interned.buckets ? (interned.mask + 1) * 2 : 256;
	struct xd_nameset **b = xd_calloc(n, sizeof(*b));

	for (size_t i = 0; interned.buckets && i <= interned.mask; i++) {
		struct xd_nameset *s = interned.buckets[i], *next;

		for (; s != NULL; s = next) {
			next = s->next;
			s->next = b[s->hash & (n - 1)];
			b[s->hash & (n - 1)] = s;
		}
	}
	free(interned.buckets);
	interned.buckets = b;
	interned.mask = n - 1;
}

/* Makes a set from sorted, unique names (copied). */
static struct xd_nameset *create(const struct xd_name *names, size_t n,
				 uint64_t hash)
{
	struct xd_nameset *s = xd_calloc(1, sizeof(*s));
	size_t bytes = 0, slots = 16, nparams = 0, cap_params = 0;
	char *p;

	for (size_t i = 0; i < n; i++)
		bytes += names[i].len + 1;
	while (slots < n * 2)
		slots *= 2;
	s->keys = xd_malloc((n ? n : 1) * sizeof(*s->keys));
	s->bytes = xd_malloc(bytes ? bytes : 1);
	s->index = xd_calloc(slots, sizeof(*s->index));
	s->mask = slots - 1;
	p = s->bytes;
	for (size_t i = 0; i < n; i++) {
		struct xd_dparam params[XD_DPARAM_MAX];
		struct xd_key *key = &s->keys[i];
		size_t k;

		memcpy(p, names[i].data, names[i].len);
		p[names[i].len] = '\0';
		xd_key_read((struct xd_name){p, names[i].len}, key, params);
		p += names[i].len + 1;
		k = XXH3_64bits(key->text.data, key->text.len) & s->mask;
		while (s->index[k] != 0)
			k = (k + 1) & s->mask;
		s->index[k] = (uint32_t)i + 1;
		s->globs += key->kind == XD_KEY_GLOB;
		s->locators += key->kind == XD_KEY_LOCATOR;
		if (key->nparams > 0) {
			s->params = xd_grow(s->params, &cap_params,
					    nparams + key->nparams,
					    sizeof(*s->params));
			memcpy(s->params + nparams, params,
			       key->nparams * sizeof(*params));
			nparams += key->nparams;
		}
	}
	/* the parameters where they stay, in the order of their keys */
	for (size_t i = 0, at = 0; i < n && nparams > 0; i++) {
		if (s->keys[i].nparams > 0)
			s->keys[i].params = s->params + at;
		at += s->keys[i].nparams;
	}
	s->count = n;
	s->hash = hash;
	s->size = sizeof(*s) + (n ? n : 1) * sizeof(*s->keys) +
		  (bytes ? bytes : 1) + slots * sizeof(*s->index) +
		  cap_params * sizeof(*s->params);
	s->refs = 1;
	s->id = interned.next_id++;
	return s;
}

/* Interns sorted, unique names. */
static struct xd_nameset *intern_sorted(const struct xd_name *names, size_t n)
{
	uint64_t h = set_hash(names, n);
	struct xd_nameset *s;

	if (interned.buckets == NULL)
		intern_grow();
	for (s = interned.buckets[h & interned.mask]; s != NULL; s = s->next)
		if (s->hash == h && same(s, names, n))
			return xd_nameset_ref(s);
	s = create(names, n, h);
	if (interned.live + 1 > interned.mask)
		intern_grow();
	s->next = interned.buckets[h & interned.mask];
	interned.buckets[h & interned.mask] = s;
	interned.live++;
	return s;
}

struct xd_nameset *xd_nameset_intern(const struct xd_name *names, size_t n)
{
	struct xd_name *sorted;
	struct xd_nameset *s;
	size_t u = 0;

	XD_ASSERT_LOOP();
	if (n == 0)
		return intern_sorted(NULL, 0);
	sorted = xd_malloc(n * sizeof(*sorted));
	memcpy(sorted, names, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_name);
	for (size_t i = 0; i < n; i++)
		if (u == 0 || cmp_name(&sorted[u - 1], &sorted[i]) != 0)
			sorted[u++] = sorted[i];
	s = intern_sorted(sorted, u);
	free(sorted);
	return s;
}

struct xd_nameset *xd_nameset_empty(void)
{
	XD_ASSERT_LOOP();
	return intern_sorted(NULL, 0);
}

/* `a` plus `b`: a merge of two sorted lists. */
struct xd_nameset *xd_nameset_union(const struct xd_nameset *a,
				    const struct xd_nameset *b)
{
	struct xd_name *out = xd_malloc((a->count + b->count + 1) * sizeof(*out));
	struct xd_nameset *s;
	size_t i = 0, j = 0, n = 0;

	XD_ASSERT_LOOP();
	while (i < a->count || j < b->count) {
		int c = i == a->count ? 1 :
			j == b->count ? -1 :
					cmp_name(&a->keys[i].text, &b->keys[j].text);

		if (c <= 0) {
			out[n++] = a->keys[i++].text;
			if (c == 0)
				j++;
		} else {
			out[n++] = b->keys[j++].text;
		}
	}
	s = intern_sorted(out, n);
	free(out);
	return s;
}

struct xd_nameset *xd_nameset_minus(const struct xd_nameset *a,
				    const struct xd_nameset *b)
{
	struct xd_name *out = xd_malloc((a->count + 1) * sizeof(*out));
	struct xd_nameset *s;
	size_t n = 0;

	XD_ASSERT_LOOP();
	for (size_t i = 0; i < a->count; i++)
		if (!xd_nameset_has(b, a->keys[i].text.data, a->keys[i].text.len))
			out[n++] = a->keys[i].text;
	s = intern_sorted(out, n);
	free(out);
	return s;
}

/* Which set, for a broken invariant's message. */
#define WHO(s) "name set %llu (%zu names)", (unsigned long long)(s)->id, \
		(s)->count

struct xd_nameset *xd_nameset_ref(struct xd_nameset *s)
{
	XD_ASSERT_LOOP();
	/* a set at 0 is being freed: no reference can be taken */
	XD_ASSERT_INFO(s->refs > 0, WHO(s));
	s->refs++;
	return s;
}

void xd_nameset_unref(struct xd_nameset *s)
{
	struct xd_nameset **p;

	if (s == NULL)
		return;
	XD_ASSERT_LOOP();
	/* dropping one that was never taken is a programmer's error, told
	 * here rather than found later as a use after free */
	XD_ASSERT_INFO(s->refs > 0, "reference dropped below zero: " WHO(s));
	if (--s->refs > 0)
		return;
	for (p = &interned.buckets[s->hash & interned.mask]; *p != s;
	     p = &(*p)->next)
		;
	*p = s->next;
	interned.live--;
	free(s->keys);
	free(s->params);
	free(s->bytes);
	free(s->index);
	free(s);
	if (interned.live == 0) {
		/* Nothing left: give the table back (tests check for leaks). */
		free(interned.buckets);
		interned.buckets = NULL;
		interned.mask = 0;
	}
}

size_t xd_nameset_count(const struct xd_nameset *s)
{
	return s->count;
}

uint64_t xd_nameset_id(const struct xd_nameset *s)
{
	return s->id;
}

size_t xd_nameset_bytes(const struct xd_nameset *s)
{
	return s->size;
}

struct xd_name xd_nameset_at(const struct xd_nameset *s, size_t i)
{
	return s->keys[i].text;
}

const struct xd_key *xd_nameset_key(const struct xd_nameset *s, size_t i)
{
	return &s->keys[i];
}

bool xd_nameset_has(const struct xd_nameset *s, const char *name, size_t len)
{
	for (size_t k = XXH3_64bits(name, len) & s->mask;;
	     k = (k + 1) & s->mask) {
		uint32_t slot = s->index[k];

		if (slot == 0)
			return false;
		if (s->keys[slot - 1].text.len == len &&
		    memcmp(s->keys[slot - 1].text.data, name, len) == 0)
			return true;
	}
}

size_t xd_nameset_globs(const struct xd_nameset *s)
{
	return s->globs;
}

size_t xd_nameset_locators(const struct xd_nameset *s)
{
	return s->locators;
}

size_t xd_nameset_live(void)
{
	XD_ASSERT_LOOP();
	return interned.live;
}
