/* SPDX-License-Identifier: Apache-2.0 */
#include "envoy/verdict.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/bootstrap.h"
#include "envoy/run.h"
#include "util/xalloc.h"

/* Envoy's message, as much of it as a report carries. */
#define MSG_MAX 2048

struct item {
	enum xd_rtype t;
	const struct xd_entry *e;
};

struct items {
	struct item *v;
	size_t n, cap;
};

/* A refusal, kept to be given in file order. */
struct refusal {
	const struct xd_entry *e;
	char *text;
};

struct check {
	const char *envoy, *key;
	struct refusal *found; /* this snapshot's, in the order found */
	size_t nfound, capfound;
	struct xd_bootstrap_cache *bc;
	struct xd_snapshot *snap;
	struct xd_diag *diag;
	struct items ctx; /* good secrets, runtimes and clusters: under
			     every later layer */
	const struct xd_entry **bad; /* blamed, or standing with them */
	size_t nbad, capbad;
	/* the scoped routes listeners hold for SRDS; `scoped_all`: all */
	const struct xd_entry **scoped;
	size_t nscoped;
	bool scoped_all;
	/* the test under way: a cluster given without its endpoints; a
	 * route configuration whose virtual hosts are the items */
	const struct xd_entry *bare, *route;
	bool alone; /* the items are variants: no namesake under them */
	size_t runs, refused, unchecked;
	bool failed; /* no verdict: nothing more is asked */
	char msg[MSG_MAX];
};

static void push(struct items *l, enum xd_rtype t, const struct xd_entry *e)
{
	l->v = xd_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = (struct item){t, e};
}

static bool is_bad(const struct check *c, const struct xd_entry *e)
{
	for (size_t i = 0; i < c->nbad; i++)
		if (c->bad[i] == e)
			return true;
	return false;
}

static void mark_bad(struct check *c, const struct xd_entry *e)
{
	if (is_bad(c, e))
		return;
	c->bad = xd_grow(c->bad, &c->capbad, c->nbad + 1, sizeof(*c->bad));
	c->bad[c->nbad++] = e;
}

/* "FILE:LINE" of an entry, or "FILE" for a JSON file (no lines). */
static void where(const struct xd_entry *e, char *buf, size_t len)
{
	if (e->line > 0)
		snprintf(buf, len, "%s:%u", e->file, e->line);
	else
		snprintf(buf, len, "%s", e->file);
}

static void found(struct check *c, const struct xd_entry *e, char *text)
{
	c->found = xd_grow(c->found, &c->capfound, c->nfound + 1,
			   sizeof(*c->found));
	c->found[c->nfound++] = (struct refusal){e, text};
	c->refused++;
}

static void report(struct check *c, enum xd_rtype t, const struct xd_entry *e,
		   const char *msg)
{
	char at[4200];

	where(e, at, sizeof(at));
	found(c, e, xd_asprintf("%s: %s '%s': refused by envoy: %s", at,
				xd_rtype_info(t)->noun, e->name, msg));
}

static int by_place(const void *pa, const void *pb)
{
	const struct refusal *a = pa, *b = pb;
	int k;

	if (a->e == NULL || b->e == NULL) /* the snapshot's own: last */
		return (a->e == NULL) - (b->e == NULL);
	k = strcmp(a->e->file, b->e->file);
	if (k != 0)
		return k;
	return a->e->line < b->e->line ? -1 : a->e->line > b->e->line;
}

/* The snapshot's refusals into the diag, in the order of the files. */
static void give_found(struct check *c)
{
	if (c->nfound > 1)
		qsort(c->found, c->nfound, sizeof(*c->found), by_place);
	for (size_t i = 0; i < c->nfound; i++) {
		xd_diag_add(c->diag, "%s", c->found[i].text);
		free(c->found[i].text);
	}
	free(c->found);
	c->found = NULL;
	c->nfound = c->capfound = 0;
}

/* ---------------- one run ---------------- */

static bool namesake(const struct item *a, const struct item *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (items[i].t == a->t && strcmp(items[i].e->name, a->e->name) == 0)
			return true;
	return false;
}

/* Envoy's verdict on `items` on top of the good layers below; its
 * message in c->msg. */
static enum xd_envoy_verdict test(struct check *c, const struct item *items,
				  size_t n)
{
	struct xd_bootstrap *b = xd_bootstrap_new(c->bc, c->key);
	const struct xd_entry **vh = NULL;
	size_t nvh = 0, len;
	enum xd_envoy_verdict v;
	char *text;

	if (!c->scoped_all)
		xd_bootstrap_scoped_for_listeners(b, c->scoped, c->nscoped);
	for (size_t i = 0; i < c->ctx.n; i++)
		if (!c->alone || !namesake(&c->ctx.v[i], items, n))
			xd_bootstrap_add(b, c->ctx.v[i].t, c->ctx.v[i].e);
	if (c->route != NULL)
		vh = xd_calloc(n + 1, sizeof(*vh));
	for (size_t i = 0; i < n; i++) {
		if (c->route != NULL)
			vh[nvh++] = items[i].e;
		else if (items[i].e == c->bare)
			xd_bootstrap_add_bare_cluster(b, items[i].e);
		else
			xd_bootstrap_add(b, items[i].t, items[i].e);
	}
	if (c->route != NULL)
		xd_bootstrap_add_route_with(b, c->route, vh, nvh);
	free(vh);
	text = xd_bootstrap_finish(b, &len, c->diag);
	if (text == NULL) {
		c->failed = true;
		return XD_ENVOY_FAILED;
	}
	v = xd_envoy_validate(c->envoy, text, len, c->msg, sizeof(c->msg));
	free(text);
	c->runs++;
	if (v == XD_ENVOY_FAILED) {
		xd_diag_add(c->diag, "snapshot '%s': no verdict from envoy: %s",
			    c->key, c->msg);
		c->failed = true;
	}
	return v;
}

/* ---------------- who is to blame ---------------- */

static void bisect(struct check *c, const struct item *items, size_t n);

/* The endpoints an EDS cluster holds in its bootstrap; NULL if none. */
static const struct xd_entry *endpoints_of(struct check *c,
					   const struct xd_entry *e)
{
	for (uint32_t i = 0; i < e->nrefs; i++)
		if (e->refs[i].type == XD_ENDPOINT)
			return xd_bootstrap_find(c->bc, XD_ENDPOINT, e->refs[i].name);
	return NULL;
}

/* The one resource `it` is refused, for `why`: it, or what it holds
 * that Envoy refuses (its endpoints; some of its virtual hosts). */
static void blame(struct check *c, const struct item *it, const char *why)
{
	char *msg = xd_strdup(why);
	const struct xd_entry *la;
	size_t first, nvh;

	if (it->t == XD_CLUSTER && (la = endpoints_of(c, it->e)) != NULL) {
		enum xd_envoy_verdict v;

		c->bare = it->e;
		v = test(c, it, 1);
		c->bare = NULL;
		if (v == XD_ENVOY_ACCEPTED) {
			report(c, XD_ENDPOINT, la, msg);
			mark_bad(c, la);
			mark_bad(c, it->e);
			goto out;
		}
		if (c->failed)
			goto out;
	}
	if (it->t == XD_ROUTE &&
	    (nvh = xd_bootstrap_vhosts_of(c->bc, it->e, &first)) > 0) {
		const struct xd_table *vt = xd_snapshot_table(c->snap, XD_VIRTUAL_HOST);
		size_t before = c->refused;
		enum xd_envoy_verdict v;

		c->route = it->e;
		v = test(c, NULL, 0);
		if (v == XD_ENVOY_ACCEPTED) {
			struct items hosts = {0};

			for (size_t i = 0; i < nvh; i++)
				push(&hosts, XD_VIRTUAL_HOST, xd_table_at(vt, first + i));
			bisect(c, hosts.v, hosts.n);
			free(hosts.v);
		}
		c->route = NULL;
		if (c->failed)
			goto out;
		if (c->refused != before) {
			mark_bad(c, it->e);
			goto out;
		}
	}
	report(c, it->t, it->e, msg);
	mark_bad(c, it->e);
out:
	free(msg);
}

/* `items` refused together (each half passes): those `why` names (by
 * name, else by address), or the first as standing with the others;
 * either way none of them is under the layers above. */
static void together(struct check *c, const struct item *items, size_t n,
		     const char *why)
{
	size_t named = 0;
	char at[4200];

	for (int by_address = 0; by_address < 2 && named == 0; by_address++)
		for (size_t i = 0; i < n; i++)
			if (xd_bootstrap_named_in(c->bc, items[i].t, items[i].e,
						  why, by_address)) {
				report(c, items[i].t, items[i].e, why);
				named++;
			}
	if (named == 0) {
		where(items[0].e, at, sizeof(at));
		found(c, items[0].e,
		      xd_asprintf("%s: %s '%s': refused by envoy beside %zu other %ss of snapshot '%s': %s",
				  at, xd_rtype_info(items[0].t)->noun,
				  items[0].e->name, n - 1,
				  xd_rtype_info(items[0].t)->noun, c->key, why));
	}
	for (size_t i = 0; i < n; i++)
		mark_bad(c, items[i].e);
}

/*
 * `items`, which Envoy refused for `why`: those of them its message
 * names tried alone first, at most NAMED_MAX (a listener's address is
 * most of what it says of one). When some are refused, what is left
 * goes on without them: a common refusal costs three runs, not two per
 * halving. Returns whether any was.
 */
#define NAMED_MAX 4

static bool named_first(struct check *c, const struct item *items, size_t n,
			const char *why)
{
	struct items rest = {0};
	size_t tried = 0, before = c->nbad;

	for (size_t i = 0; i < n && !c->failed; i++) {
		if (tried == NAMED_MAX ||
		    !xd_bootstrap_named_in(c->bc, items[i].t, items[i].e, why,
					   true))
			continue;
		tried++;
		if (test(c, &items[i], 1) == XD_ENVOY_REFUSED)
			blame(c, &items[i], c->msg);
	}
	if (c->failed || c->nbad == before) {
		free(rest.v);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_bad(c, items[i].e))
			push(&rest, items[i].t, items[i].e);
	bisect(c, rest.v, rest.n);
	free(rest.v);
	return true;
}

/* Finds what Envoy refuses among `items`: those its message names,
 * then by halving. */
static void bisect(struct check *c, const struct item *items, size_t n)
{
	size_t before, h;
	char *whole;

	if (c->failed || n == 0 || test(c, items, n) != XD_ENVOY_REFUSED)
		return;
	if (n == 1) {
		blame(c, &items[0], c->msg);
		return;
	}
	whole = xd_strdup(c->msg);
	if (named_first(c, items, n, whole)) {
		free(whole);
		return;
	}
	before = c->nbad;
	h = n / 2;
	bisect(c, items, h);
	bisect(c, items + h, n - h);
	if (!c->failed && c->nbad == before)
		together(c, items, n, whole);
	free(whole);
}

/* ---------------- one snapshot ---------------- */

/* The layers' resources: of each name the plain one, else its first
 * variant, in `first`; every other variant in `more`. */
static void collect(struct xd_snapshot *snap, enum xd_rtype t,
		    struct items *first, struct items *more)
{
	const struct xd_table *tab = xd_snapshot_table(snap, t);
	const char *prev = NULL;

	for (size_t i = 0; i < xd_table_count(tab); i++)
		push(first, t, xd_table_at(tab, i));
	for (size_t i = 0; i < xd_table_variant_count(tab); i++) {
		const struct xd_entry *v = xd_table_variant_at(tab, i);
		bool lead = (prev == NULL || strcmp(prev, v->name) != 0) &&
			    xd_table_find(tab, v->name, v->name_len) == NULL;

		push(lead ? first : more, t, v);
		prev = v->name;
	}
}

/* Whether a route configuration `e` refers to was refused. */
static bool needs_refused(struct check *c, const struct xd_entry *e)
{
	for (uint32_t i = 0; i < e->nrefs; i++) {
		const struct xd_entry *r;

		if (e->refs[i].type != XD_ROUTE)
			continue;
		r = xd_bootstrap_find(c->bc, XD_ROUTE, e->refs[i].name);
		if (r != NULL && is_bad(c, r))
			return true;
	}
	return false;
}

/* The items of `l` not refused, onto the layers under the next. */
static void keep_good(struct check *c, const struct items *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (!is_bad(c, l->v[i].e))
			push(&c->ctx, l->v[i].t, l->v[i].e);
}

static void check_snapshot(struct check *c, struct xd_diag *notes)
{
	static const enum xd_rtype order[] = {XD_SECRET, XD_RUNTIME, XD_CLUSTER,
					      XD_ROUTE, XD_SCOPED_ROUTE,
					      XD_LISTENER};
	struct items first[XD_RTYPE_COUNT] = {{0}}, more = {0}, all = {0};
	struct items base = {0}, layer = {0};
	size_t api = 0, behind, before;
	enum xd_envoy_verdict v;
	char *whole = NULL;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		collect(c->snap, order[i], &first[order[i]], &more);
	/* API listeners: not for Envoy (verdict.h) */
	for (size_t i = 0, n = first[XD_LISTENER].n; i < n; i++) {
		if (xd_bootstrap_is_api_listener(c->bc, first[XD_LISTENER].v[i].e))
			api++;
		else
			first[XD_LISTENER].v[i - api] = first[XD_LISTENER].v[i];
	}
	first[XD_LISTENER].n -= api;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		for (size_t k = 0; k < first[order[i]].n; k++)
			push(&all, first[order[i]].v[k].t, first[order[i]].v[k].e);
	c->scoped_all = true;
	before = c->refused;
	behind = c->unchecked;
	v = test(c, all.v, all.n);
	if (c->failed)
		goto out;
	if (v == XD_ENVOY_ACCEPTED) {
		for (int t = XD_SECRET; t <= XD_CLUSTER; t++)
			keep_good(c, &first[t]);
	} else {
		whole = xd_strdup(c->msg);
		for (size_t i = 0; i < first[XD_SECRET].n; i++)
			push(&base, XD_SECRET, first[XD_SECRET].v[i].e);
		for (size_t i = 0; i < first[XD_RUNTIME].n; i++)
			push(&base, XD_RUNTIME, first[XD_RUNTIME].v[i].e);
		bisect(c, base.v, base.n);
		keep_good(c, &base);
		bisect(c, first[XD_CLUSTER].v, first[XD_CLUSTER].n);
		keep_good(c, &first[XD_CLUSTER]);
		bisect(c, first[XD_ROUTE].v, first[XD_ROUTE].n);
		for (size_t i = 0; i < first[XD_SCOPED_ROUTE].n; i++) {
			const struct xd_entry *e = first[XD_SCOPED_ROUTE].v[i].e;

			if (needs_refused(c, e))
				c->unchecked++;
			else
				push(&layer, XD_SCOPED_ROUTE, e);
		}
		bisect(c, layer.v, layer.n);
		c->scoped = xd_calloc(layer.n + 1, sizeof(*c->scoped));
		for (size_t i = 0; i < layer.n; i++)
			if (!is_bad(c, layer.v[i].e))
				c->scoped[c->nscoped++] = layer.v[i].e;
		c->scoped_all = false;
		layer.n = 0;
		for (size_t i = 0; i < first[XD_LISTENER].n; i++) {
			const struct xd_entry *e = first[XD_LISTENER].v[i].e;

			if (needs_refused(c, e))
				c->unchecked++;
			else
				push(&layer, XD_LISTENER, e);
		}
		bisect(c, layer.v, layer.n);
		if (!c->failed && c->refused == before) {
			/* every layer passes on its own: the snapshot is
			 * refused as a whole */
			found(c, NULL,
			      xd_asprintf("snapshot '%s': refused by envoy as a whole: %s",
					  c->key, whole));
		}
	}
	/* variants, one by one on top of the rest */
	c->alone = true;
	for (size_t i = 0; i < more.n && !c->failed; i++) {
		const struct item *it = &more.v[i];

		if (it->t == XD_LISTENER && xd_bootstrap_is_api_listener(c->bc, it->e))
			api++;
		else if (needs_refused(c, it->e))
			c->unchecked++;
		else if (test(c, it, 1) == XD_ENVOY_REFUSED)
			blame(c, it, c->msg);
	}
	c->alone = false;
	behind = c->unchecked - behind;
	c->unchecked += api;
	if (api > 0)
		xd_diag_add(notes, "snapshot '%s': %zu API listener%s (gRPC clients') not given to envoy",
			    c->key, api, api == 1 ? "" : "s");
	if (behind > 0)
		xd_diag_add(notes, "snapshot '%s': %zu resource%s not given to envoy, as %s a route configuration it refuses (or one of its virtual hosts)",
			    c->key, behind, behind == 1 ? "" : "s",
			    behind == 1 ? "it uses" : "they use");
out:
	give_found(c);
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		free(first[t].v);
	free(more.v);
	free(all.v);
	free(base.v);
	free(layer.v);
	free(whole);
}

int xd_envoy_check(const struct xd_schema *s, struct xd_snapshot *const *snaps,
		   size_t n, const char *envoy, struct xd_diag *diag,
		   struct xd_diag *notes, struct xd_envoy_report *rep)
{
	struct check c = {.envoy = envoy, .diag = diag};
	char ver[512];

	memset(rep, 0, sizeof(*rep));
	rep->runs = 1;
	if (xd_envoy_version(envoy, ver, sizeof(ver)) != 0) {
		xd_diag_add(diag, "envoy: %s", ver);
		return -1;
	}
	snprintf(rep->version, sizeof(rep->version), "%.63s", ver);
	for (size_t i = 0; i < n && !c.failed; i++) {
		c.snap = snaps[i];
		c.key = xd_snapshot_key(snaps[i]);
		c.bc = xd_bootstrap_cache_new(s, snaps[i]);
		check_snapshot(&c, notes);
		xd_bootstrap_cache_free(c.bc);
		free(c.ctx.v);
		free(c.bad);
		free(c.scoped);
		c.ctx = (struct items){0};
		c.bad = NULL;
		c.nbad = c.capbad = 0;
		c.scoped = NULL;
		c.nscoped = 0;
	}
	rep->runs += c.runs;
	rep->refused = c.refused;
	rep->unchecked = c.unchecked;
	if (c.failed)
		return -1;
	return c.refused > 0 ? 1 : 0;
}

int xd_envoy_judge(const struct xd_schema *s, struct xd_snapshot *const *snaps,
		   size_t n, const char *envoy, const char *prog,
		   const char *dir, const char *outcome, FILE *out,
		   struct xd_envoy_report *rep)
{
	struct xd_diag refusals = XD_DIAG_INIT, notes = XD_DIAG_INIT;
	int v = xd_envoy_check(s, snaps, n, envoy, &refusals, &notes, rep);

	for (size_t i = 0; i < notes.count; i++)
		fprintf(out, "warning: %s\n", notes.msgs[i]);
	xd_diag_print(&refusals, out);
	if (v > 0)
		fprintf(out, "%s: %s: envoy %s (%s) refuses %zu resource%s of the snapshots (%zu run%s)",
			prog, dir, rep->version, envoy, rep->refused,
			rep->refused == 1 ? "" : "s", rep->runs,
			rep->runs == 1 ? "" : "s");
	else if (v < 0)
		fprintf(out, "%s: %s: no verdict from envoy '%s'", prog, dir, envoy);
	if (v != 0)
		fprintf(out, "%s%s\n", outcome[0] ? "; " : "", outcome);
	xd_diag_clear(&refusals);
	xd_diag_clear(&notes);
	return v;
}
