/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/preview.h"

#include "rollout/rollout.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "admin/reloads.h"
#include "protocol/sub.h"
#include "rest/rest.h"
#include "util/jsonw.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

#define DIR_MAX PATH_MAX

struct preview {
	struct xd_http_exchange *x;
	struct xd_sessions *sessions;
	const struct xd_rest *rest; /* NULL: REST-JSON is off */
	struct xd_rollout *rollout; /* NULL: no `rollout:` */
};

int xd_preview_asked(struct xd_http_exchange *x)
{
	char v[16];
	int rc = xd_http_query_get(x->query, "dry_run", v, sizeof(v));

	if (rc == 0)
		return 0;
	if (rc > 0 && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0))
		return 1;
	if (rc > 0 && (strcmp(v, "0") == 0 || strcmp(v, "false") == 0))
		return 0;
	xd_http_text(x, 400, "dry_run must be 1, true, 0 or false");
	return -1;
}

/* One (key, node) pair a stream or a REST-JSON poller contributes to
 * the reach. */
struct hit {
	size_t key;
	const char *id;
	bool rest;
};

/* A connected node's id, and whether it polls by REST-JSON. */
struct id {
	const char *id;
	bool rest;
};

/* A node asking by name for a resource the dry run removes. */
struct ask {
	size_t key, section, res;
	const char *id;
};

/* Bound on those collected: a fleet asking for thousands of removed
 * names is told of in part. */
#define ASKS_MAX 100000

struct collect {
	const struct xd_diff *d;
	struct hit *hits;
	size_t nhits, cap;
	struct ask *asks;
	size_t nasks, capasks;
	struct id *ids; /* every connected node, for the count */
	size_t nids, capids;
};

/* The diff key whose change reaches a client of snapshot key `key`,
 * served the default snapshot now or not, or SIZE_MAX. */
static size_t reached_by(const struct xd_diff *d, const char *key,
			 bool served_default)
{
	size_t dflt = SIZE_MAX;

	for (size_t i = 0; i < d->nkeys; i++) {
		if (strcmp(d->keys[i].key, key) == 0)
			return i;
		if (strcmp(d->keys[i].key, XD_CACHE_DEFAULT_KEY) == 0)
			dflt = i;
	}
	/* its key is not in the diff: it has a snapshot of its own before
	 * and after, or none either way and is served the default one */
	return served_default ? dflt : SIZE_MAX;
}

/* Counts node `id` as connected and, when key k's change reaches it,
 * as reached. */
static void add_node(struct collect *c, const char *id, size_t k, bool rest)
{
	c->ids = xd_grow(c->ids, &c->capids, c->nids + 1, sizeof(*c->ids));
	c->ids[c->nids++] = (struct id){id, rest};
	if (k == SIZE_MAX)
		return;
	c->hits = xd_grow(c->hits, &c->cap, c->nhits + 1, sizeof(*c->hits));
	c->hits[c->nhits++] = (struct hit){k, id, rest};
}

/* The resources removed from key k that `v` asks for by name (or by a
 * locator of that name, rule P1). */
static void asked(struct collect *c, size_t k, const struct xd_client_view *v)
{
	const struct xd_diff_key *dk = &c->d->keys[k];

	for (size_t i = 0; i < v->ntypes; i++) {
		const struct xd_sub *sub = v->types[i].sub;
		const char *url = v->types[i].type_url;
		enum xd_rtype rt;
		enum xd_ctype ct;
		int t;

		if (sub == NULL || sub->want.all || url == NULL)
			continue;
		if (xd_rtype_from_url(url, strlen(url), &rt) == 0)
			t = (int)rt;
		else if (xd_ctype_from_url(url, strlen(url), &ct) == 0)
			t = XD_RTYPE_COUNT + (int)ct;
		else
			continue;
		for (size_t s = 0; s < dk->nsections; s++) {
			const struct xd_diff_section *ds = &dk->sections[s];

			if (ds->section != t)
				continue;
			for (size_t r = 0; r < ds->nres && c->nasks < ASKS_MAX; r++) {
				const char *name = ds->res[r].name;

				if (ds->res[r].change != XD_DIFF_REMOVED ||
				    !xd_client_type_asks_for(&v->types[i], name,
							     strlen(name)))
					continue;
				c->asks = xd_grow(c->asks, &c->capasks, c->nasks + 1,
						  sizeof(*c->asks));
				c->asks[c->nasks++] = (struct ask){k, s, r, v->node_id};
			}
		}
	}
}

static void visit(void *ctx, const struct xd_client_view *v)
{
	struct collect *c = ctx;
	size_t k;

	if (!v->has_node)
		return;
	k = reached_by(c->d, v->key,
		       v->snapshot != NULL &&
			       strcmp(xd_snapshot_key(xd_snapshot_base(
					      (struct xd_snapshot *)v->snapshot)),
				      XD_CACHE_DEFAULT_KEY) == 0);
	add_node(c, v->node_id, k, false);
	/* a key that stays: what it loses, its nodes lose */
	if (k != SIZE_MAX && c->d->keys[k].change == XD_DIFF_CHANGED)
		asked(c, k, v);
}

/* A REST-JSON poller: reached as a stream of its key is (the names it
 * asks for are not kept, so it is not among those asking by name). */
static void visit_poller(void *ctx, const struct xd_rest_poller *p)
{
	struct collect *c = ctx;

	add_node(c, p->node_id, reached_by(c->d, p->key, p->served_default),
		 true);
}

static int by_id(const void *a, const void *b)
{
	const struct id *x = a, *y = b;

	return strcmp(x->id, y->id);
}

static int by_ask(const void *a, const void *b)
{
	const struct ask *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->section != y->section)
		return x->section < y->section ? -1 : 1;
	if (x->res != y->res)
		return x->res < y->res ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Nodes (distinct) per resource asked for. */
static void count_asks(struct collect *c, struct xd_reach *out)
{
	size_t cap = 0;

	if (c->nasks > 1)
		qsort(c->asks, c->nasks, sizeof(*c->asks), by_ask);
	for (size_t i = 0; i < c->nasks; i++) {
		const struct ask *a = &c->asks[i], *p = i > 0 ? &c->asks[i - 1] : NULL;
		bool same_res = p != NULL && p->key == a->key &&
				p->section == a->section && p->res == a->res;

		if (same_res && strcmp(p->id, a->id) == 0)
			continue;
		if (!same_res) {
			out->asked = xd_grow(out->asked, &cap, out->nasked + 1,
					     sizeof(*out->asked));
			out->asked[out->nasked++] = (struct xd_reach_asked){
				a->key, a->section, a->res, 0};
		}
		out->asked[out->nasked - 1].nodes++;
	}
}

/* By key, then node id, a node's REST-JSON hit first: the first of a
 * node's hits says whether it polls by REST-JSON. */
static int by_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	int c;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	c = strcmp(x->id, y->id);
	if (c != 0)
		return c;
	return (int)y->rest - (int)x->rest;
}

/* Whom each key's change reaches; the node ids listed are copies, the
 * answer owing nothing to the sessions or the pollers. A node is
 * counted once however many streams and polls it has, and as reached
 * by REST-JSON when it polls the key. */
static void reach_of(struct xd_sessions *sessions, const struct xd_rest *rest,
		     const struct xd_diff *d, struct xd_reach *out)
{
	struct collect c = {.d = d};

	XD_ASSERT_LOOP();
	out->keys = xd_calloc(d->nkeys + 1, sizeof(*out->keys));
	xd_sessions_visit(sessions, visit, &c);
	if (rest != NULL)
		xd_rest_visit_pollers(rest, visit_poller, &c);
	/* distinct node ids: a node may have several streams and polls */
	if (c.nids > 1)
		qsort(c.ids, c.nids, sizeof(*c.ids), by_id);
	out->connected = 0;
	out->rest_pollers = 0;
	for (size_t i = 0, j; i < c.nids; i = j) {
		bool rest_node = false;

		for (j = i; j < c.nids && strcmp(c.ids[j].id, c.ids[i].id) == 0; j++)
			rest_node |= c.ids[j].rest;
		out->connected++;
		out->rest_pollers += rest_node;
	}
	if (c.nhits > 1)
		qsort(c.hits, c.nhits, sizeof(*c.hits), by_hit);
	for (size_t i = 0; i < c.nhits; i++) {
		struct xd_reach_key *rk = &out->keys[c.hits[i].key];

		if (i > 0 && c.hits[i].key == c.hits[i - 1].key &&
		    strcmp(c.hits[i].id, c.hits[i - 1].id) == 0)
			continue;
		rk->nodes++;
		rk->rest += c.hits[i].rest;
		if (rk->nids < XD_PREVIEW_NODE_IDS) {
			if (rk->ids == NULL)
				rk->ids = xd_calloc(XD_PREVIEW_NODE_IDS, sizeof(char *));
			rk->ids[rk->nids++] = xd_strdup(c.hits[i].id);
		}
	}
	count_asks(&c, out);
	free(c.asks);
	free(c.hits);
	free(c.ids);
}

static void reach_free(struct xd_reach *r, size_t nkeys)
{
	for (size_t i = 0; i < nkeys; i++) {
		for (size_t j = 0; j < r->keys[i].nids; j++)
			free(r->keys[i].ids[j]);
		free(r->keys[i].ids);
	}
	free(r->keys);
	free(r->asked);
}

static void answer(void *arg, const struct xd_reload_record *rec)
{
	struct preview *p = arg;
	struct xd_http_exchange *x = p->x;
	struct xd_reach reach = {0};
	struct xd_jw w;

	xd_jw_init(&w, &x->out);
	if (rec->diff != NULL) {
		reach_of(p->sessions, p->rest, rec->diff, &reach);
		/* with a staged rollout: the canaries that would prove each
		 * change, on any replica */
		for (size_t i = 0; p->rollout != NULL && i < rec->diff->nkeys; i++)
			reach.keys[i].canaries = xd_rollout_canaries_of(
				p->rollout, rec->diff->keys[i].key);
		reach.rollout = p->rollout != NULL;
		xd_reload_record_reach_json(&w, rec, &reach);
		reach_free(&reach, rec->diff->nkeys);
	} else {
		xd_reload_record_json(&w, rec);
	}
	xd_buf_putc(&x->out, '\n');
	x->content_type = "application/json";
	/* refused snapshots: 422; xdsd stopping or too busy: 503 */
	x->status = rec->ok ? 200 :
		    rec->nkept > 0 && (strcmp(rec->errors[0], "xdsd is shutting down") == 0 ||
				       strncmp(rec->errors[0], "too many dry runs", 17) == 0) ?
			      503 :
			      422;
	xd_http_reply(x);
	free(p);
}

/* Whether `path` is `root` or below it (both resolved, absolute). */
static bool at_or_below(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * Whether a dry run may read `real` (resolved: no symlink, no "..", so
 * that neither leads out): the snapshot directory itself, or a
 * directory at or below one of dry_run_dirs. A dry run quotes what it
 * reads in its errors, so any directory xdsd can read would let whoever
 * reaches the admin endpoint read files it cannot.
 */
static bool dir_allowed(const struct xd_config *cfg, const char *real)
{
	char root[PATH_MAX];

	if (realpath(cfg->snapshots, root) != NULL && strcmp(root, real) == 0)
		return true;
	for (size_t i = 0; i < cfg->ndry_run_dirs; i++)
		if (realpath(cfg->dry_run_dirs[i], root) != NULL &&
		    at_or_below(root, real))
			return true;
	return false;
}

/* Refusals of a directory are logged, a few a second. */
static struct xd_log_limit refusal_log = XD_LOG_LIMIT_INIT(5, 1000);

void xd_preview_start(struct xd_http_exchange *x,
		      const struct xd_admin_deps *deps,
		      unsigned long long *forbidden)
{
	char dir[DIR_MAX], real[PATH_MAX], why[DIR_MAX + 256];
	int rc = xd_http_query_get(x->query, "snapshots", dir, sizeof(dir));
	unsigned long dropped;
	struct preview *p;

	if (rc < 0 || (rc > 0 && dir[0] != '/')) {
		xd_http_text(x, 400, "snapshots: an absolute path of a directory on xdsd's machine, percent-encoded");
		return;
	}
	if (rc > 0 && (realpath(dir, real) == NULL || !dir_allowed(deps->cfg, real))) {
		/* the same answer whether it exists or not: no probing */
		snprintf(why, sizeof(why),
			 "snapshots: '%s' is not a directory a dry run may read: the snapshot directory, or one at or below a directory of dry_run_dirs (xdsd.yaml(5))",
			 dir);
		(*forbidden)++;
		if (xd_log_limit_take(&refusal_log, &dropped))
			xd_warn("admin: refused a dry run asked by %s: %s%s", x->peer, why,
				dropped ? " (and more such, not logged)" : "");
		xd_http_text(x, 403, why);
		return;
	}
	xd_info("admin: dry run asked by %s%s%s", x->peer,
		rc > 0 ? " of " : "", rc > 0 ? real : "");
	p = xd_calloc(1, sizeof(*p));
	p->x = x;
	p->sessions = deps->sessions;
	p->rest = deps->rest;
	p->rollout = deps->rollout;
	xd_reload_dry_run(deps->reloader, rc > 0 ? real : NULL, answer, p);
}
