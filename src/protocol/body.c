#include "protocol/body.h"

#include <stdlib.h>
#include <string.h>

#include "protocol/derived.h"
#include "util/buf.h"
#include "util/xalloc.h"
#include "xds/dynparam.h"
#include "xds/message.h"
#include "xds/xdstp.h"

static unsigned long long computed;
/* bodies alive and their bytes (xd_body_live) */
static size_t live, live_bytes;

/*
 * Where the body for `w` is memoized, and under which key. A client that
 * holds another table than the one it is served is in a transition (a
 * reload): its body lives on the table it holds, keyed by the one
 * served, and goes when the last client holding it moves on and that
 * superseded table is freed. Kept on the served table, which lives on,
 * it would only wait there for eviction, however large.
 */
static struct xd_table *make_key(const struct xd_want *w,
				 struct xd_derived_key *key)
{
	struct xd_table *home = w->held != NULL ? w->held : w->table;

	memset(key, 0, sizeof(*key));
	key->words[0] = (uint64_t)w->sub.all |
			(uint64_t)w->held_names.all << 1 |
			(uint64_t)w->full_state << 2 | (uint64_t)w->form << 3 |
			(uint64_t)(w->held != NULL) << 6 |
			(uint64_t)w->heartbeat << 7;
	key->words[1] = xd_table_id(w->table) == xd_table_id(home) ?
				0 : xd_table_id(w->table);
	key->sets[0] = w->sub.set;
	key->sets[1] = w->held_names.set;
	key->sets[2] = w->force;
	key->sets[3] = w->removed;
	return home;
}

/* ---------------- lookups ---------------- */

/* An entry by name, or by alias (VHDS subscribes by alias, rule D10);
 * for a locator key, the variant its parameters pick (rule P1). */
static const struct xd_entry *lookup(const struct xd_table *t,
				     const char *name, size_t len)
{
	const struct xd_entry *e;

	if (xd_locator_is(name, len))
		return xd_table_find_locator(t, name, len);
	e = xd_table_find(t, name, len);

	return e != NULL ? e : xd_table_find_alias(t, name, len);
}

static bool names_has(const struct xd_names *n, const char *name, size_t len)
{
	return n->all || xd_nameset_has(n->set, name, len);
}

/* `name` is among `n`: by a wildcard, by itself, or, in delta, by the
 * glob collection it belongs to (rule X2). */
static bool covers(const struct xd_want *w, const struct xd_names *n,
		   const char *name, size_t len)
{
	return names_has(n, name, len) ||
	       (xd_form_delta(w->form) &&
		xd_derived_in_glob(n->set, name, len));
}

/* The version of `name` the client holds, or NULL. */
static const struct xd_entry *held_entry(const struct xd_want *w,
					 const char *name, size_t len)
{
	if (w->held == NULL || !covers(w, &w->held_names, name, len))
		return NULL;
	return lookup(w->held, name, len);
}

/*
 * The client holds, under the alias `name` (VHDS), a resource that
 * still exists under its own name, but the alias now resolves to
 * nothing in the table: the alias is gone, not the resource. So the
 * alias is "does not exist" (rule D8), and the resource is not removed:
 * it may be carried in the same response, and Envoy refuses a name that
 * is in both resources and removed_resources (rule D4).
 */
static bool alias_gone(const struct xd_want *w, const char *name, size_t len)
{
	const struct xd_entry *h = held_entry(w, name, len);

	if (xd_locator_is(name, len))
		return false; /* a locator is no alias: find_removed says it */
	return h != NULL &&
	       (h->name_len != len || memcmp(h->name, name, len) != 0) &&
	       xd_table_find(w->table, h->name, h->name_len) != NULL;
}

/* The client was told `name` does not exist (delta): it was among the
 * names it held explicitly (beside a wildcard or not), and was absent. */
static bool known_missing(const struct xd_want *w, const char *name,
			  size_t len)
{
	return w->held != NULL &&
	       xd_nameset_has(w->held_names.set, name, len) &&
	       lookup(w->held, name, len) == NULL;
}

/* ---------------- selection ---------------- */

struct pick {
	const struct xd_entry **send;  /* resources to carry */
	size_t nsend;
	struct xd_name *missing;       /* delta: names that do not exist */
	size_t nmissing;
	struct xd_name *removed;       /* delta: removed_resources */
	size_t nremoved;
	const struct xd_entry **gone;  /* delta: removed_resource_names */
	size_t ngone, cap_gone;
	size_t cap_send, cap_names, cap_removed;
	bool changed;                  /* full state: content differs */
	size_t ttl_subscribed, ttl_sent; /* entries with a TTL: rule L1 */
};

static void add_send(struct pick *p, const struct xd_entry *e)
{
	p->send = xd_grow(p->send, &p->cap_send, p->nsend + 1, sizeof(*p->send));
	p->send[p->nsend++] = e;
	if (e->ttl != NULL)
		p->ttl_sent++;
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

static void add_name(struct xd_name **v, size_t *n, size_t *cap,
		     const char *name, size_t len)
{
	*v = xd_grow(*v, cap, *n + 1, sizeof(**v));
	(*v)[(*n)++] = (struct xd_name){name, len};
}

/*
 * Whether another name or locator the client subscribes to still picks
 * the variant `h` (plain or not) in the table: the client holds one copy
 * of it, whichever locators led to it, and must keep it (rule P1). A
 * linear walk, but only when a locator changed what it picks.
 */
static bool still_picked(const struct xd_want *w, const struct xd_entry *h)
{
	for (size_t i = 0; i < xd_nameset_count(w->sub.set); i++) {
		struct xd_name n = xd_nameset_at(w->sub.set, i), base = n;
		const struct xd_entry *e;

		xd_locator_split(n.data, n.len, &base, NULL, NULL);
		if (base.len != h->name_len ||
		    memcmp(base.data, h->name, base.len) != 0)
			continue;
		e = lookup(w->table, n.data, n.len);
		if (e != NULL && same_variant(e, h))
			return true;
	}
	return false;
}

/*
 * Delta: the resource `h` the client holds under a locator is no longer
 * what the locator picks (rule P1): it is removed, a variant as a
 * ResourceName with its constraints, which is how the client told it
 * apart; a plain resource by its name, unless the client also asks for
 * it by that name.
 */
static void drop_variant(const struct xd_want *w, struct pick *p,
			 const struct xd_entry *h)
{
	if (still_picked(w, h))
		return;
	p->changed = true;
	if (h->constraints.data != NULL) {
		p->gone = xd_grow(p->gone, &p->cap_gone, p->ngone + 1,
				  sizeof(*p->gone));
		p->gone[p->ngone++] = h;
	} else if (!covers(w, &w->sub, h->name, h->name_len)) {
		add_name(&p->removed, &p->nremoved, &p->cap_removed, h->name,
			 h->name_len);
	}
}

/* One subscribed resource that exists: send it if the client lacks it,
 * holds another version, or asked for it again. */
static void consider(const struct xd_want *w, struct pick *p,
		     const struct xd_entry *e, const char *asked,
		     size_t asked_len)
{
	const struct xd_entry *h = held_entry(w, asked, asked_len);
	/* Asked for again (rule D5), by name or by its glob collection;
	 * but not what a reconnecting client said it holds (rule D7),
	 * which it names one by one. */
	bool forced = xd_nameset_has(w->force, asked, asked_len) ||
		      (xd_form_delta(w->form) &&
		       xd_derived_in_glob(w->force, asked, asked_len) &&
		       !xd_nameset_has(w->held_names.set, asked, asked_len));

	if (e->ttl != NULL)
		p->ttl_subscribed++;
	if (h != NULL && h != e && xd_form_delta(w->form) &&
	    !same_variant(h, e))
		drop_variant(w, p, h); /* another variant now (rule P1) */
	if (h == NULL || h->hash != e->hash || forced) {
		add_send(p, e);
		p->changed = true;
	} else if (w->full_state) {
		/* unchanged, but full-state responses carry everything */
		add_send(p, e);
	}
}

static int by_name(const void *pa, const void *pb)
{
	const struct xd_name *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n > 0 ? memcmp(a->data, b->data, n) : 0;

	return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

/*
 * Members of the glob collection `g` that the client holds (those of
 * the held table) and that are gone from the table, while it still
 * subscribes to them (rule X2: removals are said, as in rule D4).
 */
static void removed_members(const struct xd_want *w, struct pick *p,
			    struct xd_name g)
{
	struct xd_nameset *members = xd_derived_glob(w->held, g);

	for (size_t i = 0; i < xd_nameset_count(members); i++) {
		struct xd_name m = xd_nameset_at(members, i);
		const struct xd_entry *e = xd_table_find(w->held, m.data, m.len);

		if (xd_table_find(w->table, m.data, m.len) == NULL &&
		    covers(w, &w->sub, m.data, m.len)) {
			p->changed = true;
			add_name(&p->removed, &p->nremoved, &p->cap_removed,
				 e->name, e->name_len);
		}
	}
	xd_nameset_unref(members);
}

/*
 * A glob collection subscribed (rule X2, delta): each member is
 * considered as a subscribed name is. An empty collection is said by
 * listing the glob's name in removed_resources, once: not again while
 * the client holds it empty, unless it subscribes to it again.
 */
static void select_glob(const struct xd_want *w, struct pick *p,
			struct xd_name g)
{
	struct xd_nameset *members = xd_derived_glob(w->table, g);
	size_t n = xd_nameset_count(members);

	for (size_t i = 0; i < n && !w->sub.all; i++) {
		struct xd_name m = xd_nameset_at(members, i);

		consider(w, p, xd_table_find(w->table, m.data, m.len), m.data,
			 m.len);
	}
	xd_nameset_unref(members);
	if (n > 0)
		return;
	if (w->held != NULL && xd_nameset_has(w->held_names.set, g.data, g.len) &&
	    !xd_nameset_has(w->force, g.data, g.len)) {
		struct xd_nameset *before = xd_derived_glob(w->held, g);
		bool told = xd_nameset_count(before) == 0;

		xd_nameset_unref(before);
		if (told)
			return;
	}
	add_name(&p->removed, &p->nremoved, &p->cap_removed, g.data, g.len);
}

/*
 * Resources the client holds that are gone from the table. A resource is
 * gone when no resource of the table has its name: that its name is now
 * another one's alias (VHDS) does not keep it, the client would hold it
 * beside the other for good.
 */
static void find_removed(const struct xd_want *w, struct pick *p)
{
	if (w->held == NULL)
		return;
	if (w->held_names.all) {
		for (size_t i = 0; i < xd_table_count(w->held); i++) {
			const struct xd_entry *e = xd_table_at(w->held, i);

			if (xd_table_find(w->table, e->name, e->name_len) == NULL &&
			    covers(w, &w->sub, e->name, e->name_len)) {
				p->changed = true;
				add_name(&p->removed, &p->nremoved,
					 &p->cap_removed, e->name, e->name_len);
			}
		}
	} else {
		for (size_t i = 0; i < xd_nameset_count(w->held_names.set); i++) {
			struct xd_name n = xd_nameset_at(w->held_names.set, i);
			const struct xd_entry *e = lookup(w->held, n.data, n.len);

			if (xd_form_delta(w->form) &&
			    xd_nameset_globs(w->held_names.set) > 0 &&
			    xd_xdstp_is_glob(n.data, n.len)) {
				removed_members(w, p, n);
				continue;
			}
			/* held under a locator, and no variant matches now
			 * (rule P1; another that matches is consider's) */
			if (xd_locator_is(n.data, n.len)) {
				if (e != NULL &&
				    lookup(w->table, n.data, n.len) == NULL &&
				    covers(w, &w->sub, n.data, n.len))
					drop_variant(w, p, e);
				continue;
			}

			/* held under `n`, its own name or an alias (VHDS):
			 * removed when the resource is gone, whatever the
			 * alias resolves to now (see alias_gone) */
			if (e != NULL &&
			    xd_table_find(w->table, e->name, e->name_len) == NULL &&
			    covers(w, &w->sub, n.data, n.len)) {
				p->changed = true;
				add_name(&p->removed, &p->nremoved,
					 &p->cap_removed, e->name, e->name_len);
			}
		}
	}
	/* names the client reported holding that were gone already (rule D7) */
	for (size_t i = 0; i < xd_nameset_count(w->removed); i++) {
		struct xd_name n = xd_nameset_at(w->removed, i);

		if (xd_table_find(w->table, n.data, n.len) == NULL &&
		    covers(w, &w->sub, n.data, n.len))
			add_name(&p->removed, &p->nremoved, &p->cap_removed,
				 n.data, n.len);
	}
	/* A resource held under its name and an alias, or two aliases
	 * (VHDS), is found once for each, and is removed under its name:
	 * a response names it once (rule S11). */
	if (p->nremoved > 1) {
		size_t u = 0;

		qsort(p->removed, p->nremoved, sizeof(*p->removed), by_name);
		for (size_t i = 0; i < p->nremoved; i++)
			if (u == 0 || by_name(&p->removed[u - 1], &p->removed[i]) != 0)
				p->removed[u++] = p->removed[i];
		p->nremoved = u;
	}
}

/*
 * A name that is removed is not also "does not exist" (rules D4, D8):
 * Envoy refuses a response that says both. It happens when the client
 * holds a resource under an alias (VHDS) and now asks for it by its
 * name too, as the resource goes: the name is new to the subscription,
 * so it is reported missing, and the resource held under the alias is
 * removed under that same name. The removal says all: drop the report.
 * find_removed left `removed` sorted and without repeats.
 */
static void unsay_removed_missing(struct pick *p)
{
	size_t u = 0;

	for (size_t i = 0; i < p->nmissing; i++)
		if (bsearch(&p->missing[i], p->removed, p->nremoved,
			    sizeof(*p->removed), by_name) == NULL)
			p->missing[u++] = p->missing[i];
	p->nmissing = u;
}

/*
 * A locator that picks nothing is reported under its name (rule P1), so
 * the report says the name: two locators of one name that both pick
 * nothing, or such a locator beside the plain name, report it once
 * (rule S11), and a name removed is not also reported missing
 * (unsay_removed_missing compares names). Left sorted by name.
 */
static void say_missing_by_name(struct pick *p)
{
	size_t u = 0;

	for (size_t i = 0; i < p->nmissing; i++)
		xd_locator_split(p->missing[i].data, p->missing[i].len,
				 &p->missing[i], NULL, NULL);
	qsort(p->missing, p->nmissing, sizeof(*p->missing), by_name);
	for (size_t i = 0; i < p->nmissing; i++)
		if (u == 0 || by_name(&p->missing[u - 1], &p->missing[i]) != 0)
			p->missing[u++] = p->missing[i];
	p->nmissing = u;
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

/*
 * Two locators of one name may pick two of its variants (rule P1). A
 * client that takes resources as plain Anys (no rule L2) has no
 * resource_name to tell them apart, only the name, and a response names
 * a resource once (rule S11): it gets one of them, the plain resource if
 * it is picked, else the variant locators try first.
 */
static void one_per_name(struct pick *p)
{
	size_t i, u = 0;

	for (i = 0; i < p->nsend && p->send[i]->constraints.len == 0; i++)
		;
	if (i == p->nsend)
		return; /* no variant: names are unique already */
	qsort(p->send, p->nsend, sizeof(*p->send), by_entry_order);
	for (i = 0; i < p->nsend; i++)
		if (u == 0 || p->send[u - 1]->name_len != p->send[i]->name_len ||
		    memcmp(p->send[u - 1]->name, p->send[i]->name,
			   p->send[i]->name_len) != 0)
			p->send[u++] = p->send[i];
	p->nsend = u;
}

static void select_resources(const struct xd_want *w, struct pick *p)
{
	bool delta = xd_form_delta(w->form);

	if (w->sub.all) {
		for (size_t i = 0; i < xd_table_count(w->table); i++) {
			const struct xd_entry *e = xd_table_at(w->table, i);

			consider(w, p, e, e->name, e->name_len);
		}
	}
	/* explicit names (alone, or beside a wildcard) */
	for (size_t i = 0; i < xd_nameset_count(w->sub.set); i++) {
		struct xd_name n = xd_nameset_at(w->sub.set, i);
		const struct xd_entry *e;

		if (delta && xd_nameset_globs(w->sub.set) > 0 &&
		    xd_xdstp_is_glob(n.data, n.len)) {
			select_glob(w, p, n);
			continue;
		}
		e = lookup(w->table, n.data, n.len);
		if (e != NULL) {
			if (!w->sub.all)
				consider(w, p, e, n.data, n.len);
		} else if (delta &&
			   (held_entry(w, n.data, n.len) == NULL ||
			    alias_gone(w, n.data, n.len)) &&
			   !xd_nameset_has(w->removed, n.data, n.len) &&
			   (!known_missing(w, n.data, n.len) ||
			    xd_nameset_has(w->force, n.data, n.len))) {
			/* Never held, or an alias that resolves to nothing
			 * now: "does not exist" (rule D8). A resource the
			 * client holds that is gone goes in removed_resources
			 * only (rule D4): Envoy refuses a name that is in both. */
			add_name(&p->missing, &p->nmissing, &p->cap_names,
				 n.data, n.len);
		}
	}
	/* A name and an alias of one resource pick it twice (VHDS); a
	 * response never carries a resource twice (rule S11). Entries lie in
	 * the table's array in name order, so address order keeps it. */
	if (p->nsend > 1 && !w->sub.all) {
		size_t u = 0;

		qsort(p->send, p->nsend, sizeof(*p->send), by_address);
		for (size_t i = 0; i < p->nsend; i++)
			if (u == 0 || p->send[u - 1] != p->send[i])
				p->send[u++] = p->send[i];
		p->nsend = u;
	}
	if (w->form == XD_FORM_SOTW && p->nsend > 1)
		one_per_name(p);
	if (delta || w->full_state)
		find_removed(w, p);
	if (p->nmissing > 0)
		say_missing_by_name(p);
	if (p->nmissing > 0 && p->nremoved > 0)
		unsay_removed_missing(p);
	if (p->ngone > 1) { /* held under two locators: removed once */
		size_t u = 0;

		qsort(p->gone, p->ngone, sizeof(*p->gone), by_address);
		for (size_t i = 0; i < p->ngone; i++)
			if (u == 0 || p->gone[u - 1] != p->gone[i])
				p->gone[u++] = p->gone[i];
		p->ngone = u;
	}
	if (w->full_state && w->held != NULL &&
	    (w->sub.all != w->held_names.all ||
	     w->sub.set != w->held_names.set))
		p->changed = true; /* the subscription grew (rule S7) */
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
static grpc_slice encode(const struct xd_want *w, const struct pick *p)
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
	/* names already (say_missing_by_name) */
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
 * A heartbeat: every resource with a TTL that the client holds, once.
 * Nothing else: a SotW response of only heartbeats refreshes TTLs and
 * is no state of the world, while one more resource with a body would
 * make it one, and drop every listener or cluster it left out.
 */
static void select_heartbeats(const struct xd_want *w, struct pick *p)
{
	if (w->held == NULL || xd_table_min_ttl(w->held) == 0)
		return;
	if (w->held_names.all) {
		for (size_t i = 0; i < xd_table_count(w->held); i++) {
			const struct xd_entry *e = xd_table_at(w->held, i);

			if (e->ttl != NULL)
				add_send(p, e);
		}
	}
	for (size_t i = 0; i < xd_nameset_count(w->held_names.set); i++) {
		struct xd_name n = xd_nameset_at(w->held_names.set, i);
		const struct xd_entry *e = lookup(w->held, n.data, n.len);

		if (e != NULL && e->ttl != NULL)
			add_send(p, e);
		/* a glob collection (rule X2): its members it holds */
		if (e == NULL && xd_nameset_globs(w->held_names.set) > 0 &&
		    xd_xdstp_is_glob(n.data, n.len)) {
			struct xd_nameset *m = xd_derived_glob(w->held, n);

			for (size_t k = 0; k < xd_nameset_count(m); k++) {
				struct xd_name x = xd_nameset_at(m, k);

				e = xd_table_find(w->held, x.data, x.len);
				if (e != NULL && e->ttl != NULL)
					add_send(p, e);
			}
			xd_nameset_unref(m);
		}
	}
	if (p->nsend > 1) { /* a glob or alias beside a name, a wildcard */
		size_t u = 0;

		qsort(p->send, p->nsend, sizeof(*p->send), by_address);
		for (size_t i = 0; i < p->nsend; i++)
			if (u == 0 || p->send[u - 1] != p->send[i])
				p->send[u++] = p->send[i];
		p->nsend = u;
	}
	p->ttl_subscribed = p->ttl_sent = p->nsend;
}

static struct xd_body *compute(const struct xd_want *w)
{
	struct xd_body *b = xd_calloc(1, sizeof(*b));
	struct pick p = {0};
	bool send;

	computed++;
	b->refs = 1;
	if (w->heartbeat)
		select_heartbeats(w, &p);
	else
		select_resources(w, &p);
	/* SotW cannot say "removed": a full-state response simply leaves
	 * the resource out (rule S8); the names only told us it changed. */
	if (!xd_form_delta(w->form))
		p.nremoved = p.ngone = 0;
	if (w->heartbeat)
		send = p.nsend > 0;
	else if (xd_form_delta(w->form))
		send = p.changed || p.nmissing > 0 || p.nremoved > 0 ||
		       p.ngone > 0;
	else if (w->full_state)
		send = w->held == NULL || p.changed;
	else
		send = p.nsend > 0;
	b->empty = !send;
	if (send) {
		b->slice = encode(w, &p);
		b->nresources = p.nsend;
		b->nmissing = p.nmissing;
		b->nremoved = p.nremoved + p.ngone;
		b->refreshes_ttl = xd_form_ttl(w->form) &&
				   p.ttl_sent == p.ttl_subscribed;
	} else {
		b->slice = grpc_empty_slice();
	}
	live++;
	live_bytes += sizeof(*b) + GRPC_SLICE_LENGTH(b->slice);
	free(p.send);
	free(p.missing);
	free(p.removed);
	free(p.gone);
	return b;
}

static void release_body(union xd_derived_value v)
{
	xd_body_unref(v.body);
}

struct xd_body *xd_body_get(const struct xd_want *w)
{
	struct xd_derived_key key;
	struct xd_table *home = make_key(w, &key);
	union xd_derived_value v;

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
	b->refs++;
	return b;
}

void xd_body_unref(struct xd_body *b)
{
	if (b == NULL || --b->refs > 0)
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
