/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/body.h"

#include <stdlib.h>
#include <string.h>

#include "protocol/derived.h"
#include "util/buf.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"
#include "xds/message.h"

static unsigned long long computed;
/* bodies alive and their bytes (xd_body_live) */
static size_t live, live_bytes;

/*
 * Where the body for `w` is memoized, and under which key: the ledger's
 * state (its table, wildcard and name sets) and the target's, so that
 * every client in an equal state finds one body. A client that holds
 * another table than the one it is served is in a transition (a
 * reload): its body lives on the table it holds, keyed by the one
 * served, and goes when the last client holding it moves on and that
 * superseded table is freed. Kept on the served table, which lives on,
 * it would only wait there for eviction, however large.
 */
static struct xd_table *make_key(const struct xd_want *w,
				 struct xd_derived_key *key)
{
	const struct xd_ledger *l = w->ledger;
	struct xd_table *home = l->table != NULL ? l->table : w->table;

	memset(key, 0, sizeof(*key));
	key->words[0] = (uint64_t)w->sub.all |
			(uint64_t)l->names.all << 1 |
			(uint64_t)w->full_state << 2 | (uint64_t)w->form << 3 |
			(uint64_t)(l->table != NULL) << 6 |
			(uint64_t)w->heartbeat << 7;
	key->words[1] = xd_table_id(w->table) == xd_table_id(home) ?
				0 : xd_table_id(w->table);
	key->sets[0] = w->sub.set;
	key->sets[1] = l->names.set;
	key->sets[2] = l->resend;
	key->sets[3] = l->gone;
	return home;
}

/* ---------------- the difference ---------------- */

/*
 * What one response carries: the difference between what the client
 * holds (its ledger) and what it should hold (its subscription served
 * from the table). The forms' functions below add to it in any order
 * and as often as a resource is reached (by its name, an alias, a
 * locator, a glob, a wildcard); settle() then makes each part a set,
 * so that a response names a resource once (rule S11).
 */
struct diff {
	const struct xd_entry **send;  /* resources to carry */
	size_t nsend, cap_send;
	struct xd_name *missing;       /* delta: names that do not exist */
	size_t nmissing, cap_missing;
	struct xd_name *removed;       /* delta: removed_resources */
	size_t nremoved, cap_removed;
	const struct xd_entry **gone;  /* delta: variants removed, rule P1 */
	size_t ngone, cap_gone;
	bool changed;                  /* full state: content differs */
	size_t ttl_subscribed, ttl_sent; /* entries with a TTL: rule L1 */
};

static void add_send(struct diff *d, const struct xd_entry *e)
{
	d->send = xd_grow(d->send, &d->cap_send, d->nsend + 1, sizeof(*d->send));
	d->send[d->nsend++] = e;
	if (e->ttl != NULL)
		d->ttl_sent++;
}

static void add_gone(struct diff *d, const struct xd_entry *e)
{
	d->gone = xd_grow(d->gone, &d->cap_gone, d->ngone + 1, sizeof(*d->gone));
	d->gone[d->ngone++] = e;
}

static void add_name(struct xd_name **v, size_t *n, size_t *cap,
		     const char *name, size_t len)
{
	*v = xd_grow(*v, cap, *n + 1, sizeof(**v));
	(*v)[(*n)++] = (struct xd_name){name, len};
}

static void add_removed(struct diff *d, const char *name, size_t len)
{
	add_name(&d->removed, &d->nremoved, &d->cap_removed, name, len);
}

/* `key` is subscribed: by a wildcard, by itself, or, in delta, by the
 * glob collection it belongs to (rule X2). */
static bool subscribed(const struct xd_want *w, const char *key, size_t len)
{
	return w->sub.all || xd_nameset_has(w->sub.set, key, len) ||
	       (xd_form_delta(w->form) &&
		xd_derived_in_glob(w->sub.set, key, len));
}

/* Whether two entries of one name are the same variant (rule P1): both
 * plain, or with equal constraints. */
static bool same_variant(const struct xd_entry *a, const struct xd_entry *b)
{
	return a->constraints.len == b->constraints.len &&
	       (a->constraints.data == NULL) == (b->constraints.data == NULL) &&
	       (a->constraints.len == 0 ||
		memcmp(a->constraints.data, b->constraints.data,
		       a->constraints.len) == 0);
}

/*
 * Whether another key the client subscribes to still picks the variant
 * `h` (plain or not) in the table: the client holds one copy of it,
 * whichever locators led to it, and keeps it (rule P1). A linear walk,
 * but only when a locator changed what it picks.
 */
static bool still_picked(const struct xd_want *w, const struct xd_entry *h)
{
	for (size_t i = 0; i < xd_nameset_count(w->sub.set); i++) {
		const struct xd_key *k = xd_nameset_key(w->sub.set, i);
		struct xd_name base = xd_key_base(k);
		const struct xd_entry *e;

		if (base.len != h->name_len ||
		    memcmp(base.data, h->name, base.len) != 0)
			continue;
		e = xd_ledger_lookup(w->table, k);
		if (e != NULL && same_variant(e, h))
			return true;
	}
	return false;
}

/*
 * Delta: the entry `h` the client holds under a locator is no longer
 * what any of its keys picks (rule P1): it is removed, a variant as a
 * ResourceName with its constraints, which is how the client told it
 * apart; a plain resource by its name, unless the client also asks for
 * it by that name.
 */
static void drop_variant(const struct xd_want *w, struct diff *d,
			 const struct xd_entry *h)
{
	if (still_picked(w, h))
		return;
	d->changed = true;
	if (h->constraints.data != NULL)
		add_gone(d, h);
	else if (!subscribed(w, h->name, h->name_len))
		add_removed(d, h->name, h->name_len);
}

/*
 * One subscribed resource `e` of the table, reached by key `k`: carried
 * when the ledger has no entry under that key, another version, or owes
 * it (rules S7, S9, D3, D5); in a full-state response, carried anyway
 * (rule S8). In delta a held variant that is not the one the key picks
 * now goes (rule P1).
 */
static void want(const struct xd_want *w, struct diff *d,
		 const struct xd_entry *e, const struct xd_key *k)
{
	const struct xd_ledger *l = w->ledger;
	bool delta = xd_form_delta(w->form);
	const char *key = k->text.data;
	size_t len = k->text.len;
	const struct xd_entry *h = xd_ledger_entry(l, k, delta);
	/* Asked for again (rule D5), by name or by its glob collection;
	 * but not what a reconnecting client said it holds (rule D7),
	 * which it names one by one. */
	bool owed = xd_nameset_has(l->resend, key, len) ||
		    (delta && xd_derived_in_glob(l->resend, key, len) &&
		     xd_ledger_find(l, key, len) == NULL);

	if (e->ttl != NULL)
		d->ttl_subscribed++;
	if (h != NULL && h != e && delta && !same_variant(h, e))
		drop_variant(w, d, h);
	if (h == NULL || h->hash != e->hash || owed) {
		add_send(d, e);
		d->changed = true;
	} else if (w->full_state) {
		add_send(d, e);
	}
}

/*
 * Delta, a key that names nothing in the table (rule D8): said once
 * (encode() puts it in removed_resources, as Envoy reads it), unless
 *   - the client holds a resource under it that is gone: that is a
 *     removal (rule D4; said once, not twice). An alias
 *     whose resource stays under its own name is the exception: the
 *     alias is what went, and is said not to exist (rule D10);
 *   - the client said it held it and it was gone already (rule D7: a
 *     removal too);
 *   - the ledger records it told the client so, and the client did
 *     not subscribe to it again (rule D5).
 */
static void want_absent(const struct xd_want *w, struct diff *d,
			const struct xd_key *k, enum xd_name_kind kind)
{
	const struct xd_ledger *l = w->ledger;
	struct xd_name key = k->text, base = xd_key_base(k);
	const struct xd_entry *h = xd_ledger_entry(l, k, true);
	const struct xd_held *rec = xd_ledger_find(l, key.data, key.len);
	bool alias_gone = h != NULL && kind != XD_NAME_LOCATOR &&
			  (h->name_len != key.len ||
			   memcmp(h->name, key.data, key.len) != 0) &&
			  xd_table_find(w->table, h->name, h->name_len) != NULL;
	bool told = l->table != NULL && rec != NULL && rec->entry == NULL;

	/* a locator that picks nothing is missing under its name (rule P1) */
	if ((h == NULL || alias_gone) &&
	    !xd_nameset_has(l->gone, key.data, key.len) &&
	    (!told || xd_nameset_has(l->resend, key.data, key.len)))
		add_name(&d->missing, &d->nmissing, &d->cap_missing, base.data,
			 base.len);
}

/*
 * Delta, a glob collection subscribed (rule X2): each member is wanted
 * as a subscribed name is. An empty collection is said by listing the
 * glob's name as removed, once: not again while the ledger holds it
 * empty, unless the client subscribes to it again.
 */
static void want_glob(const struct xd_want *w, struct diff *d,
		      struct xd_name g)
{
	const struct xd_ledger *l = w->ledger;
	struct xd_nameset *members = xd_derived_glob(w->table, g);
	size_t n = xd_nameset_count(members);

	for (size_t i = 0; i < n && !w->sub.all; i++) {
		struct xd_name m = xd_nameset_at(members, i);
		struct xd_key mk = xd_key_of_name(m.data, m.len);

		want(w, d, xd_table_find(w->table, m.data, m.len), &mk);
	}
	xd_nameset_unref(members);
	if (n > 0)
		return;
	if (l->table != NULL && xd_ledger_find(l, g.data, g.len) != NULL &&
	    !xd_nameset_has(l->resend, g.data, g.len)) {
		struct xd_nameset *before = xd_derived_glob(l->table, g);
		bool told = xd_nameset_count(before) == 0;

		xd_nameset_unref(before);
		if (told)
			return;
	}
	add_removed(d, g.data, g.len);
}

/*
 * What the ledger holds that the table has not, while it is still
 * subscribed (rules D4, D7, X2, P1; in full-state SotW it only tells
 * that the content changed, rule S8). A resource is gone when no
 * resource of the table has its name: that its name is now another
 * one's alias (VHDS) does not keep it, the client would hold it beside
 * the other for good.
 */
static void held_gone(const struct xd_want *w, struct diff *d)
{
	const struct xd_ledger *l = w->ledger;
	bool delta = xd_form_delta(w->form);

	if (l->table == NULL)
		return;
	for (size_t i = 0; l->names.all && i < xd_table_count(l->table); i++) {
		const struct xd_entry *e = xd_table_at(l->table, i);

		if (xd_table_find(w->table, e->name, e->name_len) == NULL &&
		    subscribed(w, e->name, e->name_len)) {
			d->changed = true;
			add_removed(d, e->name, e->name_len);
		}
	}
	for (size_t i = 0; !l->names.all && i < l->nheld; i++) {
		const struct xd_held *h = &l->held[i];
		struct xd_name k = h->key;

		switch (h->kind) {
		case XD_NAME_GLOB:
			if (delta) {
				/* its members the ledger's table has, gone
				 * from this one (rule X2) */
				struct xd_nameset *m = xd_derived_glob(l->table, k);

				for (size_t j = 0; j < xd_nameset_count(m); j++) {
					struct xd_name x = xd_nameset_at(m, j);

					if (xd_table_find(w->table, x.data, x.len) == NULL &&
					    subscribed(w, x.data, x.len)) {
						d->changed = true;
						add_removed(d, x.data, x.len);
					}
				}
				xd_nameset_unref(m);
				break;
			}
			/* in SotW a glob is a name as any other */
			/* fall through */
		case XD_NAME_PLAIN:
		case XD_NAME_ALIAS:
		case XD_NAME_MEMBER:
			/* held under its own name or an alias: removed
			 * under its name when the resource is gone,
			 * whatever the alias resolves to now */
			if (h->entry != NULL &&
			    xd_table_find(w->table, h->entry->name,
					  h->entry->name_len) == NULL &&
			    subscribed(w, k.data, k.len)) {
				d->changed = true;
				add_removed(d, h->entry->name, h->entry->name_len);
			}
			break;
		case XD_NAME_LOCATOR:
			/* no variant matches now (rule P1; another that
			 * matches is want()'s) */
			if (h->entry != NULL &&
			    xd_ledger_lookup(w->table, h->asked) == NULL &&
			    subscribed(w, k.data, k.len))
				drop_variant(w, d, h->entry);
			break;
		}
	}
	/* names the client reported holding that were gone already (rule D7) */
	for (size_t i = 0; i < xd_nameset_count(l->gone); i++) {
		struct xd_name n = xd_nameset_at(l->gone, i);

		if (xd_table_find(w->table, n.data, n.len) == NULL &&
		    subscribed(w, n.data, n.len))
			add_removed(d, n.data, n.len);
	}
}

/*
 * The SotW body (rules S6-S11, L2, P1): every subscribed resource the
 * ledger lacks or holds at another version; in a full-state type (LDS,
 * CDS) every subscribed resource, sent when anything differs: one
 * changed or added, one the ledger holds gone (left out, rule S8), or
 * the subscription grown (rule S7). SotW cannot say a name does not
 * exist (rule S10): such names are left out.
 */
static void diff_sotw(const struct xd_want *w, struct diff *d)
{
	const struct xd_ledger *l = w->ledger;

	for (size_t i = 0; w->sub.all && i < xd_table_count(w->table); i++) {
		const struct xd_entry *e = xd_table_at(w->table, i);
		struct xd_key k = xd_key_of_name(e->name, e->name_len);

		want(w, d, e, &k);
	}
	/* explicit keys beside a wildcard add nothing: it has them all */
	for (size_t i = 0; !w->sub.all && i < xd_nameset_count(w->sub.set); i++) {
		const struct xd_key *k = xd_nameset_key(w->sub.set, i);
		const struct xd_entry *e = xd_ledger_lookup(w->table, k);

		if (e != NULL)
			want(w, d, e, k);
	}
	if (!w->full_state)
		return;
	held_gone(w, d);
	if (l->table != NULL && (w->sub.all != l->names.all ||
				 w->sub.set != l->names.set))
		d->changed = true; /* the subscription grew (rule S7) */
}

/*
 * The delta body (rules D3-D8, D10, X2, P1): subscribed resources the
 * ledger lacks, holds at another version (or as another variant), or
 * owes (rule D5); subscribed keys that name nothing, said once (rule
 * D8); what the ledger holds that is gone, as removed (rules D4, D7), a
 * glob's members included (rule X2), a variant by its ResourceName
 * (rule P1).
 */
static void diff_delta(const struct xd_want *w, struct diff *d)
{
	for (size_t i = 0; w->sub.all && i < xd_table_count(w->table); i++) {
		const struct xd_entry *e = xd_table_at(w->table, i);
		struct xd_key k = xd_key_of_name(e->name, e->name_len);

		want(w, d, e, &k);
	}
	for (size_t i = 0; i < xd_nameset_count(w->sub.set); i++) {
		const struct xd_key *k = xd_nameset_key(w->sub.set, i);
		const struct xd_entry *e;
		enum xd_name_kind kind = xd_name_kind_of(w->table, k, &e);

		if (kind == XD_NAME_GLOB)
			want_glob(w, d, k->text);
		else if (e == NULL)
			want_absent(w, d, k, kind);
		else if (!w->sub.all) /* a wildcard wanted it already */
			want(w, d, e, k);
	}
	held_gone(w, d);
}

/* ---------------- settling: each part a set ---------------- */

static int by_name(const void *pa, const void *pb)
{
	const struct xd_name *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n > 0 ? memcmp(a->data, b->data, n) : 0;

	return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

static int by_address(const void *a, const void *b)
{
	const struct xd_entry *x = *(const struct xd_entry *const *)a;
	const struct xd_entry *y = *(const struct xd_entry *const *)b;

	return x < y ? -1 : x > y;
}

static int by_entry_order(const void *a, const void *b)
{
	return xd_entry_order(*(const struct xd_entry *const *)a,
			      *(const struct xd_entry *const *)b);
}

static int same_entry_name(const void *a, const void *b)
{
	const struct xd_entry *x = *(const struct xd_entry *const *)a;
	const struct xd_entry *y = *(const struct xd_entry *const *)b;

	return x->name_len != y->name_len ||
	       memcmp(x->name, y->name, x->name_len) != 0;
}

/* Sorts `v` by `order` and keeps the first of each run `same` (or
 * `order`) calls equal. */
static size_t as_set(void *v, size_t n, size_t size,
		     int (*order)(const void *, const void *),
		     int (*same)(const void *, const void *))
{
	char *base = v;
	size_t u = 0;

	if (n < 2)
		return n;
	qsort(base, n, size, order);
	for (size_t i = 0; i < n; i++)
		if (u == 0 || (same != NULL ? same : order)(base + (u - 1) * size,
							    base + i * size) != 0)
			memmove(base + u++ * size, base + i * size, size);
	return u;
}

static bool any_variant(const struct diff *d)
{
	for (size_t i = 0; i < d->nsend; i++)
		if (d->send[i]->constraints.len != 0)
			return true;
	return false;
}

/*
 * Each part of the difference as a set (rule S11), and what the rules
 * say of two parts together:
 *   - resources in table order (entries lie in the table's array in
 *     name order, so address order keeps it); a client that takes
 *     plain Anys (XD_FORM_SOTW, no rule L2) has no resource_name to
 *     tell variants apart: one per name, the plain resource if picked,
 *     else the variant locators try first (rule P1);
 *   - a name removed is not also said missing (rules D4, D8); a
 *     locator that picks nothing is missing under its name (rule P1),
 *     as want_absent() said it, so two such locators are one name.
 */
static void settle(const struct xd_want *w, struct diff *d)
{
	d->nsend = as_set(d->send, d->nsend, sizeof(*d->send), by_address, NULL);
	if (w->form == XD_FORM_SOTW && any_variant(d))
		d->nsend = as_set(d->send, d->nsend, sizeof(*d->send),
				  by_entry_order, same_entry_name);
	d->nremoved = as_set(d->removed, d->nremoved, sizeof(*d->removed),
			     by_name, NULL);
	d->nmissing = as_set(d->missing, d->nmissing, sizeof(*d->missing),
			     by_name, NULL);
	if (d->nremoved > 0) {
		size_t u = 0;

		for (size_t i = 0; i < d->nmissing; i++)
			if (bsearch(&d->missing[i], d->removed, d->nremoved,
				    sizeof(*d->removed), by_name) == NULL)
				d->missing[u++] = d->missing[i];
		d->nmissing = u;
	}
	d->ngone = as_set(d->gone, d->ngone, sizeof(*d->gone), by_address, NULL);
}

/* ---------------- encoding ---------------- */

static const struct xd_span *span_of(const struct xd_entry *e,
				     enum xd_form form, bool heartbeat)
{
	switch (form) {
	case XD_FORM_SOTW:
		return &e->sotw;
	case XD_FORM_SOTW_TTL:
		if (e->ttl != NULL)
			return heartbeat ? &e->ttl->beat_wrapped :
					   &e->ttl->wrapped;
		/* fall through */
	case XD_FORM_SOTW_WRAPPED:
		return &e->wrapped;
	case XD_FORM_DELTA_TTL:
		if (e->ttl != NULL)
			return heartbeat ? &e->ttl->beat_delta : &e->ttl->delta;
		/* fall through */
	case XD_FORM_DELTA:
		break;
	}
	return &e->delta;
}

/* The response (xds/message.h): the resources in the form the client
 * takes, straight from the table. */
static grpc_slice encode(const struct xd_want *w, const struct diff *p)
{
	const char *url = xd_table_type_url(w->table);
	struct xd_span *spans = xd_malloc((p->nsend + 1) * sizeof(*spans));
	struct xd_removed_variant *gone =
		xd_malloc((p->ngone + 1) * sizeof(*gone));
	struct xd_name *missing = xd_malloc((p->nmissing + 1) * sizeof(*missing));
	struct xd_response r = {
		.version = {xd_table_version(w->table), 16},
		.resources = spans,
		.nresources = p->nsend,
		.missing = missing,
		.nmissing = p->nmissing,
		/* virtual hosts are asked for by alias (rule D10) */
		.missing_by_alias = xd_table_type(w->table) == XD_VIRTUAL_HOST,
		.removed_variants = gone,
		.nremoved_variants = p->ngone,
		.type_url = {url, strlen(url)},
		.removed = p->removed,
		.nremoved = p->nremoved,
	};
	grpc_slice s;

	for (size_t i = 0; i < p->nsend; i++)
		spans[i] = *span_of(p->send[i], w->form, w->heartbeat);
	for (size_t i = 0; i < p->ngone; i++)
		gone[i] = (struct xd_removed_variant){
			{p->gone[i]->name, p->gone[i]->name_len},
			p->gone[i]->constraints};
	/* names already (settle) */
	for (size_t i = 0; i < p->nmissing; i++)
		missing[i] = p->missing[i];
	s = grpc_slice_malloc(xd_response_size(&r));
	xd_response_put(GRPC_SLICE_START_PTR(s), &r);
	free(spans);
	free(gone);
	free(missing);
	return s;
}

/*
 * A heartbeat (rule L1): every resource with a TTL that the ledger
 * holds, once, at the version held. Nothing else: a SotW response of
 * only heartbeats refreshes TTLs and is no state of the world, while
 * one more resource with a body would make it one, and drop every
 * listener or cluster it left out.
 */
static void diff_heartbeat(const struct xd_want *w, struct diff *d)
{
	const struct xd_ledger *l = w->ledger;

	if (l->table == NULL || xd_table_min_ttl(l->table) == 0)
		return;
	for (size_t i = 0; l->names.all && i < xd_table_count(l->table); i++) {
		const struct xd_entry *e = xd_table_at(l->table, i);

		if (e->ttl != NULL)
			add_send(d, e);
	}
	for (size_t i = 0; i < l->nheld; i++) {
		const struct xd_held *h = &l->held[i];

		if (h->entry != NULL && h->entry->ttl != NULL)
			add_send(d, h->entry);
		/* a glob collection (rule X2): its members held */
		if (h->entry == NULL && h->kind == XD_NAME_GLOB) {
			struct xd_nameset *m = xd_derived_glob(l->table, h->key);

			for (size_t k = 0; k < xd_nameset_count(m); k++) {
				struct xd_name x = xd_nameset_at(m, k);
				const struct xd_entry *e =
					xd_table_find(l->table, x.data, x.len);

				if (e != NULL && e->ttl != NULL)
					add_send(d, e);
			}
			xd_nameset_unref(m);
		}
	}
	/* a glob or alias beside a name, a wildcard: each once */
	d->nsend = as_set(d->send, d->nsend, sizeof(*d->send), by_address, NULL);
	d->ttl_subscribed = d->ttl_sent = d->nsend;
}

static struct xd_body *compute(const struct xd_want *w)
{
	struct xd_body *b = xd_calloc(1, sizeof(*b));
	struct diff d = {0};
	bool send;

	computed++;
	b->refs = 1;
	if (w->heartbeat)
		diff_heartbeat(w, &d);
	else if (xd_form_delta(w->form))
		diff_delta(w, &d);
	else
		diff_sotw(w, &d);
	if (!w->heartbeat)
		settle(w, &d);
	/* SotW cannot say "removed": a full-state response simply leaves
	 * the resource out (rule S8); the names only told us it changed. */
	if (!xd_form_delta(w->form))
		d.nremoved = d.ngone = 0;
	if (w->heartbeat)
		send = d.nsend > 0;
	else if (xd_form_delta(w->form))
		send = d.changed || d.nmissing > 0 || d.nremoved > 0 ||
		       d.ngone > 0;
	else if (w->full_state)
		send = w->ledger->table == NULL || d.changed;
	else
		send = d.nsend > 0;
	b->empty = !send;
	if (send) {
		b->slice = encode(w, &d);
		b->nresources = d.nsend;
		b->nmissing = d.nmissing;
		b->nremoved = d.nremoved + d.ngone;
		b->refreshes_ttl = xd_form_ttl(w->form) &&
				   d.ttl_sent == d.ttl_subscribed;
	} else {
		b->slice = grpc_empty_slice();
	}
	live++;
	live_bytes += sizeof(*b) + GRPC_SLICE_LENGTH(b->slice);
	free(d.send);
	free(d.missing);
	free(d.removed);
	free(d.gone);
	return b;
}

static void release_body(union xd_derived_value v)
{
	xd_body_unref(v.body);
}

struct xd_body *xd_body_get(const struct xd_want *w)
{
	struct xd_derived_key key;
	struct xd_table *home;
	union xd_derived_value v;

	XD_ASSERT_LOOP();
	XD_ASSERT(w->ledger != NULL && w->table != NULL);
	home = make_key(w, &key);
	if (!xd_derived_find(home, XD_DERIVED_BODY, &key, &v)) {
		v.body = compute(w);
		xd_derived_store(home, XD_DERIVED_BODY, &key,
				 (struct xd_derived_owned){
					 v,
					 sizeof(*v.body) +
						 GRPC_SLICE_LENGTH(v.body->slice),
					 release_body});
	}
	return xd_body_ref(v.body);
}

struct xd_body *xd_body_ref(struct xd_body *b)
{
	XD_ASSERT(b->refs > 0);
	b->refs++;
	return b;
}

void xd_body_unref(struct xd_body *b)
{
	if (b == NULL || !XD_UNREF(b->refs))
		return;
	live--;
	live_bytes -= sizeof(*b) + GRPC_SLICE_LENGTH(b->slice);
	grpc_slice_unref(b->slice);
	free(b);
}

unsigned long long xd_body_computed(void)
{
	return computed;
}

size_t xd_body_live(size_t *bytes)
{
	if (bytes != NULL)
		*bytes = live_bytes;
	return live;
}
