/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/ledger.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "protocol/derived.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* The intern table: ledgers by the ids of what they are made of. */
static struct {
	struct xd_ledger **buckets;
	size_t mask, live;
	uint64_t next_id;
} interned = {NULL, 0, 0, 1};

static uint64_t state_hash(const struct xd_table *table, bool all,
			   const struct xd_nameset *names,
			   const struct xd_nameset *resend,
			   const struct xd_nameset *gone)
{
	uint64_t w[5] = {
		table != NULL ? xd_table_id(table) : 0,
		all,
		xd_nameset_id(names),
		xd_nameset_id(resend),
		xd_nameset_id(gone),
	};

	return XXH3_64bits(w, sizeof(w));
}

static void intern_grow(void)
{
	size_t n = interned.buckets != NULL ? (interned.mask + 1) * 2 : 256;
	struct xd_ledger **b = xd_calloc(n, sizeof(*b));

	for (size_t i = 0; interned.buckets != NULL && i <= interned.mask; i++) {
		struct xd_ledger *l = interned.buckets[i], *next;

		for (; l != NULL; l = next) {
			next = l->next;
			l->next = b[l->hash & (n - 1)];
			b[l->hash & (n - 1)] = l;
		}
	}
	free(interned.buckets);
	interned.buckets = b;
	interned.mask = n - 1;
}

const struct xd_entry *xd_ledger_lookup(const struct xd_table *t,
					const struct xd_key *k)
{
	const struct xd_entry *e;

	if (t == NULL)
		return NULL;
	if (k->kind == XD_KEY_LOCATOR)
		return xd_table_find_variant(t, xd_key_base(k), k->params,
					     k->nparams);
	e = xd_table_find(t, k->text.data, k->text.len);
	return e != NULL ? e : xd_table_find_alias(t, k->text.data, k->text.len);
}

enum xd_name_kind xd_name_kind_of(const struct xd_table *t,
				  const struct xd_key *k,
				  const struct xd_entry **entry)
{
	const struct xd_entry *e = NULL;
	enum xd_name_kind kind;

	/* what the key is, from its record (key.h); what it stands for
	 * here, by looking it up: a ledger's keys once, a target's per
	 * body (docs/engine.md) */
	switch ((enum xd_key_kind)k->kind) {
	case XD_KEY_LOCATOR:
		kind = XD_NAME_LOCATOR;
		e = xd_ledger_lookup(t, k);
		break;
	case XD_KEY_GLOB:
		kind = XD_NAME_GLOB;
		e = xd_ledger_lookup(t, k);
		break;
	case XD_KEY_PLAIN:
	default:
		kind = XD_NAME_PLAIN;
		if (t == NULL)
			break;
		if ((e = xd_table_find(t, k->text.data, k->text.len)) == NULL &&
		    (e = xd_table_find_alias(t, k->text.data, k->text.len)) != NULL)
			kind = XD_NAME_ALIAS;
		break;
	}
	if (entry != NULL)
		*entry = e;
	return kind;
}

/* Each key of the set read against the table, once per state. */
static void read_keys(struct xd_ledger *l)
{
	l->nheld = xd_nameset_count(l->names.set);
	l->held = xd_calloc(l->nheld + 1, sizeof(*l->held));
	for (size_t i = 0; i < l->nheld; i++) {
		struct xd_held *h = &l->held[i];

		h->asked = xd_nameset_key(l->names.set, i);
		h->key = h->asked->text;
		h->kind = xd_name_kind_of(l->table, h->asked, &h->entry);
		/* only an xdstp name can be a glob's member (rule X2) */
		if (h->kind == XD_NAME_PLAIN && h->asked->xdstp &&
		    xd_derived_in_glob(l->names.set, h->key.data, h->key.len))
			h->kind = XD_NAME_MEMBER;
	}
}

struct xd_ledger *xd_ledger_make(struct xd_table *table, bool all,
				 struct xd_nameset *names,
				 struct xd_nameset *resend,
				 struct xd_nameset *gone)
{
	struct xd_nameset *none = xd_nameset_empty();
	struct xd_ledger *l;
	uint64_t hash;

	XD_ASSERT_LOOP();
	XD_ASSERT(names != NULL);
	if (resend == NULL)
		resend = none;
	if (gone == NULL)
		gone = none;
	hash = state_hash(table, all, names, resend, gone);
	for (l = interned.buckets != NULL ? interned.buckets[hash & interned.mask] :
					    NULL;
	     l != NULL; l = l->next) {
		if (l->hash == hash && l->table == table && l->names.all == all &&
		    l->names.set == names && l->resend == resend &&
		    l->gone == gone) {
			xd_nameset_unref(none);
			return xd_ledger_ref(l);
		}
	}
	l = xd_calloc(1, sizeof(*l));
	l->refs = 1;
	l->id = interned.next_id++;
	l->table = table != NULL ? xd_table_ref(table) : NULL;
	l->names = (struct xd_names){all, xd_nameset_ref(names)};
	l->resend = xd_nameset_ref(resend);
	l->gone = xd_nameset_ref(gone);
	l->hash = hash;
	read_keys(l);
	if (interned.buckets == NULL || interned.live >= interned.mask + 1)
		intern_grow();
	l->next = interned.buckets[hash & interned.mask];
	interned.buckets[hash & interned.mask] = l;
	interned.live++;
	xd_nameset_unref(none);
	return l;
}

struct xd_ledger *xd_ledger_empty(void)
{
	struct xd_nameset *none = xd_nameset_empty();
	struct xd_ledger *l = xd_ledger_make(NULL, false, none, none, none);

	xd_nameset_unref(none);
	return l;
}

struct xd_ledger *xd_ledger_ref(struct xd_ledger *l)
{
	XD_ASSERT(l->refs > 0);
	l->refs++;
	return l;
}

void xd_ledger_unref(struct xd_ledger *l)
{
	struct xd_ledger **pp;

	if (l == NULL || !XD_UNREF(l->refs))
		return;
	XD_ASSERT_LOOP();
	for (pp = &interned.buckets[l->hash & interned.mask]; *pp != l;
	     pp = &(*pp)->next)
		XD_ASSERT(*pp != NULL);
	*pp = l->next;
	interned.live--;
	xd_table_unref(l->table);
	xd_nameset_unref(l->names.set);
	xd_nameset_unref(l->resend);
	xd_nameset_unref(l->gone);
	free(l->held);
	free(l);
}

static int cmp_key(const struct xd_name *a, const char *key, size_t len)
{
	size_t n = a->len < len ? a->len : len;
	int c = n > 0 ? memcmp(a->data, key, n) : 0;

	return c != 0 ? c : (a->len > len) - (a->len < len);
}

const struct xd_held *xd_ledger_find(const struct xd_ledger *l,
				     const char *key, size_t len)
{
	size_t lo = 0, hi = l->nheld;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_key(&l->held[mid].key, key, len);

		if (c == 0)
			return &l->held[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool xd_ledger_covers(const struct xd_ledger *l, const char *key, size_t len,
		      bool delta)
{
	return l->names.all || xd_ledger_find(l, key, len) != NULL ||
	       (delta && xd_derived_in_glob(l->names.set, key, len));
}

const struct xd_entry *xd_ledger_entry(const struct xd_ledger *l,
				       const struct xd_key *k, bool delta)
{
	const struct xd_held *h;

	if (l->table == NULL)
		return NULL;
	if ((h = xd_ledger_find(l, k->text.data, k->text.len)) != NULL)
		return h->entry;
	if (!xd_ledger_covers(l, k->text.data, k->text.len, delta))
		return NULL;
	return xd_ledger_lookup(l->table, k);
}

size_t xd_ledger_live(void)
{
	return interned.live;
}
