/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/clients.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "protocol/nameset.h"
#include "rest/rest.h"
#include "util/jsonw.h"
#include "util/text.h"
#include "util/xalloc.h"

int xd_clients_filter_parse(struct xd_clients_filter *f, const char *query,
			    char *glob_buf, size_t glob_cap, char *why,
			    size_t why_len)
{
	char state[16], pending[32];
	uint64_t ms;
	int rc;

	f->node_glob = NULL;
	f->state = -1;
	f->pending_ms = -1;
	rc = xd_http_query_get(query, "node", glob_buf, glob_cap);
	if (rc < 0) {
		snprintf(why, why_len, "node: a glob of at most %zu bytes, percent-encoded",
			 glob_cap - 1);
		return -1;
	}
	if (rc > 0)
		f->node_glob = glob_buf;
	rc = xd_http_query_get(query, "state", state, sizeof(state));
	for (int s = XD_SUB_SYNCED; rc > 0 && s <= XD_SUB_NACKED; s++)
		if (strcmp(state, xd_sub_sync_name((enum xd_sub_sync)s)) == 0)
			f->state = s;
	if (rc != 0 && f->state < 0) {
		snprintf(why, why_len, "state must be synced, pending or nacked");
		return -1;
	}
	rc = xd_http_query_get(query, "pending", pending, sizeof(pending));
	if (rc != 0 && (rc < 0 || xd_text_duration(pending, &ms) != NULL ||
			ms > INT64_MAX)) {
		snprintf(why, why_len, "pending must be a duration such as 30s, 1m or 0");
		return -1;
	}
	if (rc > 0)
		f->pending_ms = (int64_t)ms;
	return 0;
}

/* nacked is worse than pending, which is worse than synced. */
enum xd_sub_sync xd_clients_state(const struct xd_client_view *c)
{
	enum xd_sub_sync w = XD_SUB_SYNCED;

	for (size_t i = 0; i < c->ntypes; i++) {
		if (c->types[i].sync == XD_SUB_NACKED)
			return XD_SUB_NACKED;
		if (c->types[i].sync == XD_SUB_PENDING)
			w = XD_SUB_PENDING;
	}
	if (!c->has_node || c->snapshot == NULL)
		return XD_SUB_PENDING;
	return w;
}

/* Whether a response of `c` has waited at least `ms` for its answer. */
static bool waits(const struct xd_client_view *c, uint64_t ms)
{
	for (size_t i = 0; i < c->ntypes; i++)
		if (c->types[i].pending_since_ms != 0 &&
		    c->types[i].pending_ms >= ms)
			return true;
	return false;
}

bool xd_clients_match(const struct xd_clients_filter *f,
		      const struct xd_client_view *c, enum xd_sub_sync *state)
{
	*state = xd_clients_state(c);
	if (f->state >= 0 && (int)*state != f->state)
		return false;
	if (f->pending_ms >= 0 && !waits(c, (uint64_t)f->pending_ms))
		return false;
	return f->node_glob == NULL || fnmatch(f->node_glob, c->node_id, 0) == 0;
}

const char *xd_clients_type_name(const struct xd_client_type *ct)
{
	enum xd_rtype t;
	enum xd_ctype c;

	if (xd_rtype_from_url(ct->type_url, strlen(ct->type_url), &t) == 0)
		return xd_rtype_info(t)->snapshot_key;
	if (xd_ctype_from_url(ct->type_url, strlen(ct->type_url), &c) == 0)
		return xd_ctype_info(c)->snapshot_key;
	return ct->type_url;
}

static void version_or_null(struct xd_jw *w, const char *v)
{
	if (v == NULL || v[0] == '\0')
		xd_jw_null(w);
	else
		xd_jw_str(w, v);
}

/* The names of a type shown in /clients that the client asks for and
 * is not served, at most this many (their count is whole). */
#define MISSING_SHOWN 32

struct missing_ctx {
	struct xd_jw *w;
	size_t shown;
};

static void missing_json(void *arg, struct xd_name name, bool denied)
{
	struct missing_ctx *m = arg;

	if (m->shown++ >= MISSING_SHOWN)
		return;
	xd_jw_obj(m->w);
	xd_jw_key(m->w, "name");
	xd_jw_strn(m->w, name.data, name.len);
	xd_jw_key(m->w, "error");
	xd_jw_str(m->w, denied ? "PERMISSION_DENIED" : "NOT_FOUND");
	xd_jw_obj_end(m->w);
}

static void type_json(struct xd_jw *w, const struct xd_client_type *ct,
		      bool delta)
{
	struct missing_ctx m = {w, 0};
	size_t n;
	const struct xd_sub *sub = ct->sub;
	char when[32], nonce[24];

	xd_jw_obj(w);
	xd_jw_key(w, "type");
	xd_jw_str(w, xd_clients_type_name(ct));
	xd_jw_key(w, "type_url");
	xd_jw_str(w, ct->type_url);
	xd_jw_key(w, "wildcard");
	xd_jw_bool(w, sub->want.all);
	xd_jw_key(w, "names");
	xd_jw_uint(w, xd_nameset_count(sub->want.set));
	xd_jw_key(w, "sent_version");
	version_or_null(w, sub->sent_version);
	xd_jw_key(w, "nonce");
	if (sub->nonce == 0) {
		xd_jw_null(w);
	} else {
		snprintf(nonce, sizeof(nonce), "%llu", (unsigned long long)sub->nonce);
		xd_jw_str(w, nonce);
	}
	xd_jw_key(w, "acked_version");
	version_or_null(w, sub->acked_version);
	xd_jw_key(w, "current_version");
	version_or_null(w, ct->current ? xd_table_version(ct->current) : NULL);
	xd_jw_key(w, "acks");
	xd_jw_uint(w, sub->acks);
	xd_jw_key(w, "nacks");
	xd_jw_uint(w, sub->nacks);
	xd_jw_key(w, "last_nack");
	if (sub->nack_message == NULL) {
		xd_jw_null(w);
	} else {
		xd_jw_obj(w);
		xd_jw_key(w, "message");
		xd_jw_str(w, sub->nack_message);
		xd_jw_key(w, "at");
		xd_jw_time(when, sub->nack_at_ms);
		xd_jw_str(w, when);
		xd_jw_obj_end(w);
	}
	xd_jw_key(w, "in_flight");
	xd_jw_bool(w, sub->state == XD_SUB_IN_FLIGHT);
	xd_jw_key(w, "state");
	xd_jw_str(w, xd_sub_sync_name(ct->sync));
	xd_jw_key(w, "pending_since");
	if (ct->pending_since_ms == 0)
		xd_jw_null(w);
	else
		xd_jw_int(w, ct->pending_since_ms);
	xd_jw_key(w, "pending_seconds");
	xd_jw_num(w, (double)ct->pending_ms / 1000.0);
	/* rules N1, N2: what it asks for and is told it cannot have */
	xd_jw_key(w, "missing_names");
	xd_jw_arr(w);
	n = xd_client_type_missing(ct, delta, missing_json, &m, NULL);
	xd_jw_arr_end(w);
	xd_jw_key(w, "missing");
	xd_jw_uint(w, n);
	xd_jw_obj_end(w);
}

static void client_json(struct xd_jw *w, const struct xd_client_view *c,
			enum xd_sub_sync state)
{
	char when[32];

	xd_jw_obj(w);
	xd_jw_key(w, "stream");
	xd_jw_uint(w, c->stream_id);
	xd_jw_key(w, "method");
	xd_jw_str(w, c->method->aggregated ? "ADS" :
					     xd_rtype_info(c->method->type)->service);
	xd_jw_key(w, "mode");
	xd_jw_str(w, c->method->delta ? "delta" : "sotw");
	xd_jw_key(w, "peer");
	xd_jw_str(w, c->peer);
	xd_jw_key(w, "identity");
	xd_jw_str(w, c->identity);
	xd_jw_key(w, "connected_since");
	xd_jw_time(when, c->since_ms);
	xd_jw_str(w, when);
	xd_jw_key(w, "node");
	xd_jw_obj(w);
	xd_jw_key(w, "id");
	xd_jw_str(w, c->node_id);
	xd_jw_key(w, "cluster");
	xd_jw_str(w, c->node_cluster);
	xd_jw_key(w, "locality");
	xd_jw_obj(w);
	xd_jw_key(w, "region");
	xd_jw_str(w, c->region);
	xd_jw_key(w, "zone");
	xd_jw_str(w, c->zone);
	xd_jw_key(w, "sub_zone");
	xd_jw_str(w, c->sub_zone);
	xd_jw_obj_end(w);
	xd_jw_key(w, "user_agent");
	xd_jw_obj(w);
	xd_jw_key(w, "name");
	xd_jw_str(w, c->user_agent_name);
	xd_jw_key(w, "version");
	xd_jw_str(w, c->user_agent_version);
	xd_jw_obj_end(w);
	xd_jw_obj_end(w);
	xd_jw_key(w, "snapshot");
	xd_jw_str(w, c->snapshot ? xd_snapshot_key(c->snapshot) : NULL);
	xd_jw_key(w, "snapshot_version");
	xd_jw_str(w, c->snapshot ? xd_snapshot_version(c->snapshot) : NULL);
	/* served a staged rollout's change first (rollout:) */
	xd_jw_key(w, "canary");
	xd_jw_bool(w, c->canary);
	xd_jw_key(w, "state");
	xd_jw_str(w, xd_sub_sync_name(state));
	xd_jw_key(w, "types");
	xd_jw_arr(w);
	for (size_t i = 0; i < c->ntypes; i++)
		type_json(w, &c->types[i], c->method->delta);
	xd_jw_arr_end(w);
	xd_jw_obj_end(w);
}

/* Streams written between two looks at the clock and at what the page
 * holds unsent: a stream's object is a kilobyte or two. */
#define CLIENTS_BATCH 16

struct xd_clients_page {
	struct xd_sessions_cursor cur;
	const struct xd_rest *rest; /* NULL: REST-JSON is off */
	struct xd_clients_filter f;
	char glob[XD_CLIENTS_GLOB_MAX];
	struct xd_jw w;
	bool begun;
	size_t shown, all;
};

static void each(void *ctx, const struct xd_client_view *c)
{
	struct xd_clients_page *k = ctx;
	enum xd_sub_sync state;

	k->all++;
	if (!xd_clients_match(&k->f, c, &state))
		return;
	k->shown++;
	client_json(&k->w, c, state);
}

/* A fresh REST-JSON poller of a node the filter takes: pollers have
 * no sync state, so a state or pending filter leaves them all out. */
static void poller(void *ctx, const struct xd_rest_poller *p)
{
	struct xd_clients_page *k = ctx;
	struct xd_jw *w = &k->w;
	char when[32];

	if (k->f.state >= 0 || k->f.pending_ms >= 0 ||
	    (k->f.node_glob != NULL && fnmatch(k->f.node_glob, p->node_id, 0) != 0))
		return;
	xd_jw_obj(w);
	xd_jw_key(w, "node");
	xd_jw_str(w, p->node_id);
	xd_jw_key(w, "key");
	xd_jw_str(w, p->key);
	xd_jw_key(w, "peer");
	xd_jw_str(w, p->peer);
	xd_jw_key(w, "types");
	xd_jw_arr(w);
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (p->types & (1u << t))
			xd_jw_str(w, xd_section(t).key);
	xd_jw_arr_end(w);
	xd_jw_key(w, "last_seen");
	xd_jw_time(when, p->last_seen_wall_ms);
	xd_jw_str(w, when);
	xd_jw_obj_end(w);
}

struct xd_clients_page *xd_clients_page_new(struct xd_sessions *sessions,
					    const struct xd_rest *rest,
					    const char *query, char *why,
					    size_t why_len)
{
	struct xd_clients_page *k = xd_calloc(1, sizeof(*k));

	if (xd_clients_filter_parse(&k->f, query, k->glob, sizeof(k->glob), why,
				    why_len) != 0) {
		free(k);
		return NULL;
	}
	xd_sessions_cursor_open(sessions, &k->cur);
	k->rest = rest;
	return k;
}

static bool page_step(void *st, struct xd_http_exchange *x,
		      uint64_t deadline_ns)
{
	struct xd_clients_page *k = st;
	struct xd_buf *out = &x->out;
	struct xd_jw *w = &k->w;

	if (!k->begun) {
		k->begun = true;
		xd_jw_init(w, out);
		xd_jw_obj(w);
		xd_jw_key(w, "clients");
		xd_jw_arr(w);
	}
	/* the writer appends to `out`, the same buffer at every step */
	XD_ASSERT(w->out == out);
	while (xd_sessions_cursor_visit(&k->cur, CLIENTS_BATCH, each, k))
		if (xd_pager_enough(x, deadline_ns))
			return false;
	xd_jw_arr_end(w);
	xd_jw_key(w, "count");
	xd_jw_uint(w, k->shown);
	xd_jw_key(w, "streams");
	xd_jw_uint(w, k->all);
	/* written at once: the record is bounded (XD_REST_POLLERS_MAX) */
	xd_jw_key(w, "rest_pollers");
	xd_jw_arr(w);
	if (k->rest != NULL)
		xd_rest_visit_pollers(k->rest, poller, k);
	xd_jw_arr_end(w);
	xd_jw_obj_end(w);
	/* one document, every object closed: a strict parser reads it */
	XD_ASSERT(w->depth == 0 && !w->after_key);
	xd_buf_putc(out, '\n');
	return true;
}

static void page_free(void *st)
{
	struct xd_clients_page *k = st;

	if (k == NULL)
		return;
	xd_sessions_cursor_close(&k->cur);
	free(k);
}

const struct xd_pager_page xd_clients_pager = {page_step, page_free};
