/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/preview.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "admin/reloads.h"
#include "util/jsonw.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

#define DIR_MAX PATH_MAX

struct preview {
	struct xd_http_exchange *x;
	struct xd_sessions *sessions;
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

/* One (key, node) pair a stream contributes to the reach. */
struct hit {
	size_t key;
	const char *id;
};

struct collect {
	const struct xd_diff *d;
	struct hit *hits;
	size_t nhits, cap;
	const char **ids; /* every connected node, for the count */
	size_t nids, capids;
};

/* The diff key whose change reaches the client of `v`, or SIZE_MAX. */
static size_t reached_by(const struct xd_diff *d,
			 const struct xd_client_view *v)
{
	size_t dflt = SIZE_MAX;

	for (size_t i = 0; i < d->nkeys; i++) {
		if (strcmp(d->keys[i].key, v->key) == 0)
			return i;
		if (strcmp(d->keys[i].key, XD_CACHE_DEFAULT_KEY) == 0)
			dflt = i;
	}
	/* its key is not in the diff: it has a snapshot of its own before
	 * and after, or none either way and is served the default one */
	if (v->snapshot != NULL &&
	    strcmp(xd_snapshot_key(xd_snapshot_base((struct xd_snapshot *)v->snapshot)),
		   XD_CACHE_DEFAULT_KEY) == 0)
		return dflt;
	return SIZE_MAX;
}

static void visit(void *ctx, const struct xd_client_view *v)
{
	struct collect *c = ctx;
	size_t k;

	if (!v->has_node)
		return;
	c->ids = xd_grow(c->ids, &c->capids, c->nids + 1, sizeof(*c->ids));
	c->ids[c->nids++] = v->node_id;
	k = reached_by(c->d, v);
	if (k == SIZE_MAX)
		return;
	c->hits = xd_grow(c->hits, &c->cap, c->nhits + 1, sizeof(*c->hits));
	c->hits[c->nhits++] = (struct hit){k, v->node_id};
}

static int by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Whom each key's change reaches; the node ids listed are copies, the
 * answer owing nothing to the sessions. */
static void reach_of(struct xd_sessions *sessions, const struct xd_diff *d,
		     struct xd_reach *out)
{
	struct collect c = {.d = d};

	XD_ASSERT_LOOP();
	out->keys = xd_calloc(d->nkeys + 1, sizeof(*out->keys));
	xd_sessions_visit(sessions, visit, &c);
	/* distinct node ids: a node may have several streams */
	if (c.nids > 1)
		qsort(c.ids, c.nids, sizeof(*c.ids), by_id);
	out->connected = 0;
	for (size_t i = 0; i < c.nids; i++)
		if (i == 0 || strcmp(c.ids[i], c.ids[i - 1]) != 0)
			out->connected++;
	if (c.nhits > 1)
		qsort(c.hits, c.nhits, sizeof(*c.hits), by_hit);
	for (size_t i = 0; i < c.nhits; i++) {
		struct xd_reach_key *rk = &out->keys[c.hits[i].key];

		if (i > 0 && c.hits[i].key == c.hits[i - 1].key &&
		    strcmp(c.hits[i].id, c.hits[i - 1].id) == 0)
			continue;
		rk->nodes++;
		if (rk->nids < XD_PREVIEW_NODE_IDS) {
			if (rk->ids == NULL)
				rk->ids = xd_calloc(XD_PREVIEW_NODE_IDS, sizeof(char *));
			rk->ids[rk->nids++] = xd_strdup(c.hits[i].id);
		}
	}
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
}

static void answer(void *arg, const struct xd_reload_record *rec)
{
	struct preview *p = arg;
	struct xd_http_exchange *x = p->x;
	struct xd_reach reach = {0};
	struct xd_jw w;

	xd_jw_init(&w, &x->out);
	if (rec->diff != NULL) {
		reach_of(p->sessions, rec->diff, &reach);
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

void xd_preview_start(struct xd_http_exchange *x,
		      const struct xd_admin_deps *deps)
{
	char dir[DIR_MAX];
	int rc = xd_http_query_get(x->query, "snapshots", dir, sizeof(dir));
	struct preview *p;

	if (rc < 0 || (rc > 0 && dir[0] != '/')) {
		xd_http_text(x, 400, "snapshots: an absolute path of a directory on xdsd's machine, percent-encoded");
		return;
	}
	xd_info("admin: dry run asked by %s%s%s", x->peer,
		rc > 0 ? " of " : "", rc > 0 ? dir : "");
	p = xd_calloc(1, sizeof(*p));
	p->x = x;
	p->sessions = deps->sessions;
	xd_reload_dry_run(deps->reloader, rc > 0 ? dir : NULL, answer, p);
}
