/* SPDX-License-Identifier: Apache-2.0 */
#include "rest/rest.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "protocol/client.h"
#include "protocol/derived.h"
#include "protocol/request.h"
#include "rest/answer.h"
#include "rest/printed.h"
#include "schema/transcode.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/list.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* Every held request keeps its connection: this bounds both. */
#define REST_MAX_CONNECTIONS 1024
#define REST_IDLE_MS 120000
#define PATH_PREFIX "/v3/discovery:"
/* Refusals' warnings, at most this many a second: a client may send
 * bad requests as fast as its rate allows, and /metrics counts them
 * all anyway. */
#define REFUSAL_LOG_BURST 10
#define REFUSAL_LOG_WINDOW_MS 1000

static const char *const refusal_names[XD_REST_REFUSAL_COUNT] = {
	[XD_REST_UNAUTHENTICATED] = "unauthenticated",
	[XD_REST_LIMITS] = "limits",
	[XD_REST_INVALID_ARGUMENT] = "invalid_argument",
	[XD_REST_NO_SNAPSHOT] = "no_snapshot",
	[XD_REST_UNKNOWN_PATH] = "unknown_path",
	[XD_REST_METHOD] = "method",
};


struct xd_rest {
	struct xd_rest_deps deps;
	uv_loop_t *loop;
	struct xd_http_server *http;
	const struct xd_msgdesc *request_type, *response_type;
	struct xd_rest_printed *printed; /* answers' JSON, shared */
	struct xd_rest_pollers *pollers; /* who polled lately */
	struct xd_list held;   /* polls waiting for a change */
	struct xd_rest_stats stats; /* .waiting: the polls in `held` */
	struct xd_log_limit log_refused;
	size_t alive;          /* polls whose timer is not closed yet */
	uint64_t next_id;
	bool http_stopped;
	void (*done)(void *arg);
	void *done_arg;
};

/*
 * One request. Held ones wait in `held` with a cache watch and a timer;
 * the timer also carries the watch's news to the next loop iteration,
 * so a change is acted on outside the cache's notification.
 */
struct poll {
	struct xd_rest *rest;
	struct xd_http_exchange *x; /* NULL once answered */
	uint64_t id;
	enum xd_rtype type;
	struct xd_client client;    /* who asks: node, form, key */
	struct xd_buf bytes;        /* the request, as protobuf */
	struct xd_request req;      /* points into `bytes` */
	bool parsed;
	char version[17];           /* what it was held at */

	struct xd_watch watch;
	uv_timer_t timer;
	bool has_timer;
	uint64_t since_ms, deadline_ms;
	struct xd_list link;
};

static void poll_free(struct poll *p)
{
	if (p->parsed)
		xd_request_free(&p->req);
	xd_buf_free(&p->bytes);
	xd_client_clear(&p->client);
	free(p);
}

static void maybe_done(struct xd_rest *r)
{
	void (*done)(void *);
	void *arg;

	if (!r->http_stopped || r->alive > 0)
		return;
	done = r->done;
	arg = r->done_arg;
	xd_rest_printed_free(r->printed);
	xd_rest_pollers_free(r->pollers);
	free(r);
	if (done != NULL)
		done(arg);
}

static void timer_closed(uv_handle_t *h)
{
	struct poll *p = h->data;
	struct xd_rest *r = p->rest;

	poll_free(p);
	(void)XD_UNREF(r->alive);
	maybe_done(r);
}

/* The poll is answered (or its client gone): stop waiting, free it. */
static void poll_end(struct poll *p)
{
	/* answered, or its client gone: nobody waits on the exchange */
	XD_ASSERT_INFO(p->x == NULL, "rest request %llu", (unsigned long long)p->id);
	if (xd_list_linked(&p->link)) {
		xd_list_remove(&p->link);
		p->rest->stats.waiting--;
		xd_cache_unwatch(&p->watch);
	}
	if (p->has_timer)
		uv_close((uv_handle_t *)&p->timer, timer_closed);
	else
		poll_free(p);
}

/* ---------------- answers ---------------- */

const char *xd_rest_refusal_name(enum xd_rest_refusal why)
{
	XD_ASSERT_INFO(why < XD_REST_REFUSAL_COUNT, "rest refusal %d", (int)why);
	return refusal_names[why];
}

/* Counts one refusal of `whom` and says so, as a gRPC stream's refusal
 * is (a warning with the peer, the node and why), a few a second. */
static void count_refusal(struct xd_rest *r, enum xd_rest_refusal why,
			  const char *whom, int status, const char *msg)
{
	unsigned long quiet;

	XD_ASSERT_INFO(why < XD_REST_REFUSAL_COUNT, "%s: refusal %d", whom,
		       (int)why);
	r->stats.refused++;
	r->stats.refusals[why]++;
	if (xd_log_limit_take(&r->log_refused, &quiet))
		xd_warn("%s: refused with %d (%s): %s (%lu more refused since)",
			whom, status, refusal_names[why], msg, quiet);
}

/* Ends the poll's exchange with an error `status` (counted by the
 * caller). */
static void reply_error(struct poll *p, int status, const char *msg)
{
	struct xd_http_exchange *x = p->x;

	XD_ASSERT_INFO(x != NULL, "rest request %llu answered twice",
		       (unsigned long long)p->id);
	p->x = NULL;
	xd_http_text(x, status, msg);
}

/* Refuses the poll: the client reads the message, the operator the
 * same with who sent it. */
static void refuse(struct poll *p, enum xd_rest_refusal why, int status,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void refuse(struct poll *p, enum xd_rest_refusal why, int status,
		   const char *fmt, ...)
{
	const struct xd_client *c = &p->client;
	char msg[1024], whom[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* the node is named once read, even when it is what is refused */
	if (c->node_id != NULL)
		snprintf(whom, sizeof(whom),
			 "rest request %llu from %s (%s, node '%.*s' cluster '%.*s')",
			 (unsigned long long)p->id, c->peer,
			 xd_rtype_info(p->type)->service,
			 XD_LOG_CLIP(strlen(c->node_id)), c->node_id,
			 XD_LOG_CLIP(strlen(c->node_cluster)), c->node_cluster);
	else
		snprintf(whom, sizeof(whom),
			 "rest request %llu from %s (%s, no node read)",
			 (unsigned long long)p->id, c->peer,
			 xd_rtype_info(p->type)->service);
	count_refusal(p->rest, why, whom, status, msg);
	reply_error(p, status, msg);
}

/* What one answer sends: the shared JSON, and its own end. */
struct sent {
	struct xd_rest_json *json;
	char tail[48]; /* ,"nonce":"<up to 19 digits>"} and a newline */
};

static void sent_release(void *arg)
{
	struct sent *s = arg;

	xd_rest_json_unref(s->json);
	free(s);
}

/* Answers from `snap` (a view), with what it holds now: the body's JSON
 * as printed once for every answer that carries it (printed.h), and
 * this answer's nonce. */
static void answer(struct poll *p, struct xd_snapshot *snap, const char *why)
{
	struct xd_rest *r = p->rest;
	struct xd_http_exchange *x = p->x;
	struct xd_buf bare = XD_BUF_INIT;
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_rest_state st;
	struct xd_body *b;
	struct sent *s;
	struct iovec iov[2];
	size_t n = 0;

	xd_rest_state(snap, p->type, &p->req, &st);
	b = xd_rest_body(snap, p->type, &p->req, xd_client_form(&p->client));
	s = xd_calloc(1, sizeof(*s));
	if (b != NULL) {
		n = b->nresources;
		s->json = xd_rest_printed_get(r->printed, b,
					      GRPC_SLICE_START_PTR(b->slice),
					      GRPC_SLICE_LENGTH(b->slice), &diag);
		xd_body_unref(b);
	} else {
		xd_rest_encode_bare(snap, p->type, &bare);
		s->json = xd_rest_printed_get(r->printed, NULL, bare.data,
					      bare.len, &diag);
		xd_buf_free(&bare);
	}
	if (s->json == NULL) {
		/* the snapshot's bytes were checked at load: a bug */
		xd_error("rest request %llu: cannot print the response: %s",
			 (unsigned long long)p->id,
			 diag.count > 0 ? diag.msgs[0] : "?");
		xd_diag_clear(&diag);
		free(s);
		r->stats.refused++; /* a bug, not a refusal: logged above */
		reply_error(p, 500, "cannot print the response as JSON");
		return;
	}
	snprintf(s->tail, sizeof(s->tail), "%s\"nonce\":\"%llu\"}\n",
		 s->json->empty ? "" : ",", (unsigned long long)st.nonce);
	iov[0] = (struct iovec){s->json->text, s->json->len};
	iov[1] = (struct iovec){s->tail, strlen(s->tail)};
	x->content_type = "application/json";
	xd_debug("rest request %llu from %s (%s, node '%.*s' cluster '%.*s'): version %s nonce %llu, %zu resources (%s)",
		 (unsigned long long)p->id, x->peer,
		 xd_rtype_info(p->type)->service,
		 XD_LOG_CLIP(strlen(p->client.node_id)), p->client.node_id,
		 XD_LOG_CLIP(strlen(p->client.node_cluster)),
		 p->client.node_cluster,
		 st.version, (unsigned long long)st.nonce, n, why);
	p->x = NULL;
	r->stats.answers[p->type]++;
	xd_http_reply_shared(x, iov, 2, sent_release, s);
}

/* The snapshot serving the poll's node now, as a client without an
 * identity may see it (new reference), or NULL. */
static struct xd_snapshot *current(struct poll *p)
{
	struct xd_snapshot *s =
		xd_cache_get(p->rest->deps.cache, xd_client_key(&p->client));

	return s != NULL ? xd_derived_snapshot_view(s, NULL) : NULL;
}

static void no_snapshot(struct poll *p)
{
	char msg[512];

	xd_client_unserved(&p->client, msg, sizeof(msg));
	refuse(p, XD_REST_NO_SNAPSHOT, 404, "%s", msg);
}

/* ---------------- waiting ---------------- */

static void on_timer(uv_timer_t *t);

static void on_changed(struct xd_watch *w)
{
	struct poll *p = xd_container_of(w, struct poll, watch);

	/* looked at in the next iteration, outside the cache's loop */
	uv_timer_start(&p->timer, on_timer, 0, 0);
}

static void on_timer(uv_timer_t *t)
{
	struct poll *p = t->data;
	uint64_t now = xd_mono_ms();
	struct xd_snapshot *snap = current(p);
	struct xd_rest_state st;

	if (snap == NULL) {
		no_snapshot(p);
		poll_end(p);
		return;
	}
	xd_rest_state(snap, p->type, &p->req, &st);
	if (!st.current || now >= p->deadline_ms) {
		char why[64];

		snprintf(why, sizeof(why), "%s after %llu ms",
			 st.current ? "rest_poll_timeout" : "changed",
			 (unsigned long long)(now - p->since_ms));
		answer(p, snap, why);
		poll_end(p);
	} else {
		uv_timer_start(&p->timer, on_timer, p->deadline_ms - now, 0);
	}
	xd_snapshot_unref(snap);
}

/* The client went away, or the daemon stops. */
static void on_gone(struct xd_http_exchange *x)
{
	struct poll *p = x->data;

	xd_debug("rest request %llu from %s: closed while held",
		 (unsigned long long)p->id, x->peer);
	p->x = NULL;
	xd_http_reply(x); /* goes nowhere; frees the connection */
	poll_end(p);
}

static void hold(struct poll *p, const char *version)
{
	struct xd_rest *r = p->rest;

	/* held once, while its exchange is open */
	XD_ASSERT_INFO(p->x != NULL && !p->has_timer && !xd_list_linked(&p->link),
		       "rest request %llu", (unsigned long long)p->id);
	snprintf(p->version, sizeof(p->version), "%s", version);
	p->since_ms = xd_mono_ms();
	p->deadline_ms = p->since_ms + r->deps.cfg->rest_poll_timeout_ms;
	uv_timer_init(r->loop, &p->timer);
	p->timer.data = p;
	p->has_timer = true;
	r->alive++;
	p->watch.changed = on_changed;
	xd_cache_watch(r->deps.cache, xd_client_key(&p->client), &p->watch);
	xd_list_push_back(&r->held, &p->link);
	r->stats.waiting++;
	p->x->gone = on_gone;
	p->x->data = p;
	uv_timer_start(&p->timer, on_timer, r->deps.cfg->rest_poll_timeout_ms, 0);
	xd_debug("rest request %llu from %s (%s, node '%.*s' cluster '%.*s'): holds version %s%s; waiting (%zu waiting)",
		 (unsigned long long)p->id, p->x->peer,
		 xd_rtype_info(p->type)->service,
		 XD_LOG_CLIP(strlen(p->client.node_id)), p->client.node_id,
		 XD_LOG_CLIP(strlen(p->client.node_cluster)),
		 p->client.node_cluster,
		 version, p->req.has_error ? " (NACKed)" : "", r->stats.waiting);
}

/* ---------------- requests ---------------- */

/*
 * The body as a DiscoveryRequest, through the transcoder: the proto3
 * JSON mapping with every error's field path. False when answered.
 */
static bool read_body(struct poll *p)
{
	struct xd_rest *r = p->rest;
	struct xd_http_exchange *x = p->x;
	struct xd_diag diag = XD_DIAG_INIT;
	json_error_t jerr;
	const char *why;
	json_t *v;
	int rc;

	v = json_loadb((const char *)x->body, x->body_len,
		       JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (v == NULL) {
		refuse(p, XD_REST_INVALID_ARGUMENT, 400,
		       "request body:%d:%d: not JSON: %s", jerr.line,
		       jerr.column, jerr.text);
		return false;
	}
	rc = xd_transcode_json(r->deps.schema, r->request_type, v,
			       "request body", "", &p->bytes, &diag);
	json_decref(v);
	if (rc != 0) {
		struct xd_buf msg = XD_BUF_INIT;

		for (size_t i = 0; i < diag.count; i++)
			xd_buf_printf(&msg, "%s%s", i > 0 ? "\n" : "",
				      diag.msgs[i]);
		xd_buf_putc(&msg, '\0');
		refuse(p, XD_REST_INVALID_ARGUMENT, 400, "%s",
		       (const char *)msg.data);
		xd_buf_free(&msg);
		xd_diag_clear(&diag);
		return false;
	}
	if (xd_request_parse(&p->req, p->bytes.data, p->bytes.len, false,
			     &why) != 0) {
		refuse(p, XD_REST_INVALID_ARGUMENT, 400, "request body: %s", why);
		return false;
	}
	p->parsed = true;
	return true;
}

/* What the request says of itself: its type, node and size. False when
 * answered. */
static bool check_request(struct poll *p)
{
	const struct xd_config *cfg = p->rest->deps.cfg;
	const struct xd_rtype_info *info = xd_rtype_info(p->type);
	const struct xd_request *q = &p->req;
	char why[512];

	if (q->type_url.len > 0 &&
	    (q->type_url.len != strlen(info->type_url) ||
	     memcmp(q->type_url.data, info->type_url, q->type_url.len) != 0)) {
		refuse(p, XD_REST_INVALID_ARGUMENT, 400,
		       "request body: type_url: '%.*s' is not the type of %s%s (%s)",
		       XD_LOG_CLIP(q->type_url.len), q->type_url.data,
		       PATH_PREFIX, p->x->path + strlen(PATH_PREFIX),
		       info->type_url);
		return false;
	}
	/* as a gRPC stream's first request: one client module decides */
	switch (xd_client_admit(&p->client, q->node, why, sizeof(why))) {
	case XD_CLIENT_ADMIT:
		break;
	case XD_CLIENT_FORBIDDEN:
		refuse(p, XD_REST_UNAUTHENTICATED, 403, "%s", why);
		return false;
	case XD_CLIENT_OVER_LIMIT:
		refuse(p, XD_REST_LIMITS, 400, "request body: node: %s", why);
		return false;
	default:
		refuse(p, XD_REST_INVALID_ARGUMENT, 400, "request body: node: %s",
		       why);
		return false;
	}
	if (q->nnames > cfg->max_names_per_stream) {
		refuse(p, XD_REST_LIMITS, 400,
		       "request body: resource_names: %zu names; the limit is %llu (max_names_per_stream)",
		       q->nnames, (unsigned long long)cfg->max_names_per_stream);
		return false;
	}
	if (q->node.len == 0)
		xd_warn("rest request %llu from %s: no node; serving the default snapshot",
			(unsigned long long)p->id, p->x->peer);
	if (q->has_error)
		xd_warn("rest request %llu from %s (%s, node '%.*s' cluster '%.*s'): NACK of nonce '%.*s': %.*s",
			(unsigned long long)p->id, p->x->peer, info->service,
			XD_LOG_CLIP(strlen(p->client.node_id)), p->client.node_id,
			XD_LOG_CLIP(strlen(p->client.node_cluster)),
			p->client.node_cluster,
			XD_LOG_CLIP(q->nonce.len), q->nonce.data,
			XD_LOG_CLIP(q->error_message.len), q->error_message.data);
	return true;
}

static void serve(struct xd_rest *r, struct xd_http_exchange *x,
		  enum xd_rtype type)
{
	struct poll *p = xd_calloc(1, sizeof(*p));
	struct xd_snapshot *snap;
	struct xd_rest_state st;

	p->rest = r;
	p->x = x;
	p->id = ++r->next_id;
	p->type = type;
	xd_list_init(&p->link);
	/* no certificate, so no identity: authorize: rules refuse it */
	xd_client_init(&p->client, r->deps.cfg, false, x->peer, NULL,
		       xd_wall_ms());
	r->stats.requests[type]++;
	if (!read_body(p) || !check_request(p)) {
		poll_free(p);
		return;
	}
	snap = current(p);
	if (snap == NULL) {
		no_snapshot(p);
		poll_free(p);
		return;
	}
	xd_rest_pollers_seen(r->pollers, p->client.node_id,
			     xd_client_key(&p->client), x->peer, type,
			     strcmp(xd_snapshot_key(xd_snapshot_base(snap)),
				    XD_CACHE_DEFAULT_KEY) == 0,
			     xd_mono_ms(), xd_wall_ms());
	xd_rest_state(snap, type, &p->req, &st);
	if (st.current) {
		hold(p, st.version);
	} else {
		answer(p, snap, "new to the client");
		poll_free(p);
	}
	xd_snapshot_unref(snap);
}

/* Refuses a request that is for no type, before a poll exists. */
static void refuse_path(struct xd_rest *r, struct xd_http_exchange *x,
			enum xd_rest_refusal why, int status, const char *msg)
{
	char whom[512];

	snprintf(whom, sizeof(whom), "rest: %.*s %.*s from %s",
		 XD_LOG_CLIP(strlen(x->method)), x->method,
		 XD_LOG_CLIP(strlen(x->path)), x->path, x->peer);
	count_refusal(r, why, whom, status, msg);
	xd_http_text(x, status, msg);
}

static void handle(void *ctx, struct xd_http_exchange *x)
{
	struct xd_rest *r = ctx;

	XD_ASSERT_LOOP(); /* the cache, its watches and the tables' memos */
	if (strncmp(x->path, PATH_PREFIX, strlen(PATH_PREFIX)) == 0) {
		const char *name = x->path + strlen(PATH_PREFIX);

		/* the paths of Envoy's REST subscriptions, by type (none
		 * for virtual hosts, which exist in delta only) */
		for (int t = 0; t < XD_RTYPE_COUNT; t++) {
			const char *path = xd_rtype_info((enum xd_rtype)t)->rest_path;

			if (path == NULL || strcmp(path, name) != 0)
				continue;
			if (strcmp(x->method, "POST") != 0) {
				x->allow = "POST";
				refuse_path(r, x, XD_REST_METHOD, 405,
					    "method not allowed: POST a DiscoveryRequest in JSON");
				return;
			}
			serve(r, x, (enum xd_rtype)t);
			return;
		}
	}
	refuse_path(r, x, XD_REST_UNKNOWN_PATH, 404,
		    "no such resource; xdsd's REST-JSON endpoint serves POST /v3/discovery:listeners, routes, scoped-routes, clusters, endpoints, secrets and runtime");
}

/* ---------------- the endpoint ---------------- */

int xd_rest_start(struct xd_rest **out, uv_loop_t *loop,
		  const struct xd_rest_deps *deps)
{
	struct xd_rest *r = xd_calloc(1, sizeof(*r));
	struct xd_http_opts opts = {
		.name = "rest",
		.listen = deps->cfg->rest_listen,
		.max_body = deps->cfg->max_request_size,
		.max_connections = REST_MAX_CONNECTIONS,
		.max_per_address = deps->cfg->rest_max_connections_per_address,
		.trusted = deps->cfg->trusted_nets,
		.ntrusted = deps->cfg->ntrusted_proxies,
		.header_timeout_ms = deps->cfg->http_header_timeout_ms,
		.idle_ms = REST_IDLE_MS,
		/* as a gRPC stream's requests (max_requests_per_second) */
		.max_requests_per_second = deps->cfg->max_requests_per_second,
		.max_request_burst = deps->cfg->max_request_burst,
		.handle = handle,
		.ctx = r,
	};
	char why[512];

	XD_ASSERT_LOOP();
	r->deps = *deps;
	r->loop = loop;
	r->log_refused = (struct xd_log_limit)XD_LOG_LIMIT_INIT(
		REFUSAL_LOG_BURST, REFUSAL_LOG_WINDOW_MS);
	xd_list_init(&r->held);
	r->request_type = xd_schema_find_message(
		deps->schema, "envoy.service.discovery.v3.DiscoveryRequest");
	r->response_type = xd_schema_find_message(
		deps->schema, "envoy.service.discovery.v3.DiscoveryResponse");
	if (r->request_type == NULL || r->response_type == NULL) {
		xd_error("REST-JSON: the schema has no DiscoveryRequest or DiscoveryResponse");
		free(r);
		return -1;
	}
	if (xd_http_start(&r->http, loop, &opts, why, sizeof(why)) != 0) {
		xd_error("REST-JSON endpoint: %s (rest_listen; 'off' turns it off)",
			 why);
		free(r);
		return -1;
	}
	r->printed = xd_rest_printed_new(deps->schema, r->response_type);
	r->pollers = xd_rest_pollers_new(deps->cfg->rest_poll_timeout_ms);
	if (xd_http_port(r->http) != 0)
		xd_info("REST-JSON endpoint listening on %s (rest port %d)",
			deps->cfg->rest_listen, xd_http_port(r->http));
	else
		xd_info("REST-JSON endpoint listening on %s",
			deps->cfg->rest_listen);
	*out = r;
	return 0;
}

const struct xd_rest_stats *xd_rest_stats(const struct xd_rest *r)
{
	return &r->stats;
}

unsigned long long xd_rest_printed_total(const struct xd_rest *r)
{
	return xd_rest_printed_count(r->printed);
}

void xd_rest_visit_pollers(const struct xd_rest *r,
			   void (*fn)(void *ctx, const struct xd_rest_poller *p),
			   void *ctx)
{
	xd_rest_pollers_visit(r->pollers, xd_mono_ms(), fn, ctx);
}

unsigned long long xd_rest_pollers_dropped_total(const struct xd_rest *r)
{
	return xd_rest_pollers_dropped(r->pollers);
}

const struct xd_http_stats *xd_rest_http_stats(const struct xd_rest *r)
{
	return xd_http_stats(r->http);
}

int xd_rest_port(const struct xd_rest *r)
{
	return xd_http_port(r->http);
}

static void http_stopped(void *arg)
{
	struct xd_rest *r = arg;

	r->http_stopped = true;
	maybe_done(r);
}

void xd_rest_stop(struct xd_rest *r, void (*done)(void *arg), void *arg)
{
	XD_ASSERT_LOOP();
	r->done = done;
	r->done_arg = arg;
	/* closing the connections ends every held request (on_gone) */
	xd_http_stop(r->http, http_stopped, r);
}
