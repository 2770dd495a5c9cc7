/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/clients.h"
#include "admin/dump.h"
#include "admin/fleet.h"
#include "admin/guard.h"
#include "admin/loads.h"
#include "admin/metrics.h"
#include "admin/pager.h"
#include "admin/preview.h"
#include "admin/reloads.h"
#include "admin/rollout.h"
#include "admin/status.h"
#include "admin/status_page.h"
#include "http/http.h"
#include "util/common.h"
#include "util/jsonw.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* An admin request is a line and a few headers: a small body bound,
 * and few connections (operators and one scraper, not a fleet). */
#define ADMIN_MAX_BODY 4096
#define ADMIN_MAX_CONNECTIONS 64
#define ADMIN_IDLE_MS 60000

struct xd_admin {
	struct xd_admin_deps deps;
	struct xd_http_server *http;
	struct xd_pager *pager; /* the pages written in slices */
	struct xd_log_limit log_refused;
	char hostname[256]; /* the machine's, for the guard */
	unsigned long long refused; /* by the guard (guard.h) */
	unsigned long long dry_run_forbidden; /* dry runs of a directory
					       * not allowed (preview.h) */
	bool ready;
	void (*done)(void *arg);
	void *done_arg;
};

struct route {
	const char *method, *path;
	void (*fn)(struct xd_admin *a, struct xd_http_exchange *x);
};

static void healthz(struct xd_admin *a XD_UNUSED, struct xd_http_exchange *x)
{
	xd_http_text(x, 200, "ok");
}

static void ready(struct xd_admin *a, struct xd_http_exchange *x)
{
	if (a->ready)
		xd_http_text(x, 200, "ready");
	else
		xd_http_text(x, 503, "not serving");
}

static void metrics(struct xd_admin *a, struct xd_http_exchange *x)
{
	struct xd_admin_http own = {xd_http_stats(a->http), &a->refused,
				    xd_pager_stats(a->pager),
				    &a->dry_run_forbidden};

	x->content_type = XD_METRICS_CONTENT_TYPE;
	xd_pager_start(a->pager, x, &xd_metrics_pager,
		       xd_metrics_page_new(&a->deps, &own));
}

static void clients(struct xd_admin *a, struct xd_http_exchange *x)
{
	char why[256];
	struct xd_clients_page *k =
		xd_clients_page_new(a->deps.sessions, a->deps.rest, x->query,
				    why, sizeof(why));

	if (k == NULL) {
		xd_http_text(x, 400, why);
		return;
	}
	x->content_type = "application/json";
	xd_pager_start(a->pager, x, &xd_clients_pager, k);
}

static void loads(struct xd_admin *a, struct xd_http_exchange *x)
{
	char why[256];
	struct xd_loads_page *p;

	if (a->deps.loads == NULL) {
		xd_http_text(x, 404, "xdsd keeps no load reports here");
		return;
	}
	p = xd_loads_page_new(a->deps.loads, a->deps.lrs, a->deps.cfg, x->query,
			      why, sizeof(why));
	if (p == NULL) {
		xd_http_text(x, 400, why);
		return;
	}
	x->content_type = "application/json";
	xd_pager_start(a->pager, x, &xd_loads_pager, p);
}

static void config_dump(struct xd_admin *a, struct xd_http_exchange *x)
{
	xd_dump_handle(x, &a->deps, a->pager);
}

/* The reload's record, as xdsctl reads it (reloads.h). */
static void reload_answer(void *arg, const struct xd_reload_record *rec)
{
	struct xd_http_exchange *x = arg;
	struct xd_jw w;

	xd_jw_init(&w, &x->out);
	xd_reload_record_json(&w, rec);
	xd_buf_putc(&x->out, '\n');
	x->content_type = "application/json";
	/* refused snapshots or TLS files, the operator's input at fault:
	 * 422; a daemon going away: 503 */
	x->status = rec->ok ? 200 :
		    rec->nkept > 0 && strcmp(rec->errors[0], "xdsd is shutting down") == 0 ?
			      503 :
			      422;
	xd_http_reply(x);
}

static void status_page(struct xd_admin *a, struct xd_http_exchange *x)
{
	x->content_type = "text/html; charset=utf-8";
	xd_pager_start(a->pager, x, &xd_status_page_pager,
		       xd_status_page_new(&a->deps, a->ready));
}

/* /status.json: the streams counted over the turns, the rest read at
 * the last. */
struct status_json {
	struct xd_admin *a;
	struct xd_status_count *count;
};

static bool status_json_step(void *st, struct xd_http_exchange *x,
			     uint64_t deadline_ns)
{
	struct status_json *s = st;
	const struct xd_status_overview *o =
		xd_status_count_step(s->count, deadline_ns);

	if (o == NULL)
		return false;
	xd_status_render(&x->out, &s->a->deps, s->a->ready, o);
	return true;
}

static void status_json_done(void *st)
{
	struct status_json *s = st;

	xd_status_count_free(s->count);
	free(s);
}

static const struct xd_pager_page status_json_page = {status_json_step,
						      status_json_done};

static void status_json(struct xd_admin *a, struct xd_http_exchange *x)
{
	struct status_json *s = xd_calloc(1, sizeof(*s));

	s->a = a;
	s->count = xd_status_count_new(a->deps.sessions, NULL, NULL);
	x->content_type = "application/json";
	xd_pager_start(a->pager, x, &status_json_page, s);
}

static void reload(struct xd_admin *a, struct xd_http_exchange *x)
{
	int dry = xd_preview_asked(x);

	if (dry != 0) {
		if (dry > 0)
			xd_preview_start(x, &a->deps, &a->dry_run_forbidden);
		return;
	}
	xd_info("admin: reload asked by %s", x->peer);
	xd_reload_request(a->deps.reloader, "admin", reload_answer, x);
}

/* A promote or abort asked of the fleet's rollout, until its record
 * took it. */
struct rollout_ask {
	struct xd_admin *a;
	struct xd_http_exchange *x;
	bool promote;
};

static void rollout_acted(void *arg, bool ok, const char *why)
{
	struct rollout_ask *q = arg;
	struct xd_http_exchange *x = q->x;
	struct xd_jw w;

	if (!ok) {
		xd_info("admin: rollout %s asked by %s: %s",
			q->promote ? "promote" : "abort", x->peer, why);
		xd_http_text(x, 409, why);
		free(q);
		return;
	}
	xd_jw_init(&w, &x->out);
	xd_rollout_json(&w, q->a->deps.rollout, q->a->deps.cache);
	xd_buf_putc(&x->out, '\n');
	x->content_type = "application/json";
	xd_http_reply(x);
	free(q);
}

/* POST /rollout/promote and /rollout/abort: the rollout's status once
 * the fleet's record took it, or 409 with why not (none under way, no
 * `rollout:`, the record cannot be written, another decision came
 * first). */
static void rollout_act(struct xd_admin *a, struct xd_http_exchange *x,
			bool promote)
{
	char who[300], why[512];
	struct rollout_ask *q;
	int rc;

	if (a->deps.rollout == NULL) {
		xd_http_text(x, 409, "no staged rollout: xdsd.yaml has no 'rollout:' section");
		return;
	}
	snprintf(who, sizeof(who), "admin from %s", x->peer);
	q = xd_calloc(1, sizeof(*q));
	q->a = a;
	q->x = x;
	q->promote = promote;
	rc = promote ? xd_rollout_promote(a->deps.rollout, who, rollout_acted,
					  q, why, sizeof(why)) :
		       xd_rollout_abort(a->deps.rollout, who, rollout_acted, q,
					why, sizeof(why));
	if (rc != 0) {
		free(q);
		xd_info("admin: rollout %s asked by %s: %s",
			promote ? "promote" : "abort", x->peer, why);
		xd_http_text(x, 409, why);
	}
}

static void rollout_promote(struct xd_admin *a, struct xd_http_exchange *x)
{
	rollout_act(a, x, true);
}

static void rollout_abort(struct xd_admin *a, struct xd_http_exchange *x)
{
	rollout_act(a, x, false);
}

static void fleet_json(struct xd_admin *a, struct xd_http_exchange *x)
{
	struct xd_jw w;

	x->content_type = "application/json";
	xd_jw_init(&w, &x->out);
	xd_fleet_view_json(&w, a->deps.fleet);
	xd_buf_putc(&x->out, '\n');
	x->status = 200;
	xd_http_reply(x);
}

static const struct route routes[] = {
	{"GET", "/healthz", healthz},
	{"GET", "/ready", ready},
	{"GET", "/metrics", metrics},
	{"GET", "/clients", clients},
	{"GET", "/loads", loads},
	{"GET", "/config_dump", config_dump},
	{"POST", "/reload", reload},
	{"POST", "/rollout/promote", rollout_promote},
	{"POST", "/rollout/abort", rollout_abort},
	{"GET", "/status", status_page},
	{"GET", "/status.json", status_json},
	{"GET", "/fleet.json", fleet_json},
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

/* Whether the request may go on (guard.h); answered when not. */
static bool guarded(struct xd_admin *a, struct xd_http_exchange *x)
{
	struct xd_admin_request r = {
		.hostname = a->hostname,
		.method = x->method,
		.host = xd_http_header(x, "Host"),
		.origin = xd_http_header(x, "Origin"),
		.fetch_site = xd_http_header(x, "Sec-Fetch-Site"),
		.content_type = xd_http_header(x, "Content-Type"),
	};
	char why[512];
	unsigned long quiet;
	int status = xd_admin_guard(a->deps.cfg, &r, why, sizeof(why));

	if (status == 0)
		return true;
	a->refused++;
	if (xd_log_limit_take(&a->log_refused, &quiet))
		xd_warn("admin: refused %s %.200s from %s: %s (%lu more refused since)",
			x->method, x->path, x->peer, why, quiet);
	xd_http_text(x, status, why);
	return false;
}

static void handle(void *ctx, struct xd_http_exchange *x)
{
	struct xd_admin *a = ctx;
	const char *allow = NULL;
	bool head;

	/* every page reads the loop's live state, unlocked */
	XD_ASSERT_LOOP();
	if (!guarded(a, x))
		return;

	if (strcmp(x->path, "/") == 0 && strcmp(x->method, "GET") == 0) {
		x->status = 302;
		xd_buf_printf(&x->out, "see /status\n");
		x->location = "/status";
		xd_http_reply(x);
		return;
	}
	head = strcmp(x->method, "HEAD") == 0;
	for (size_t i = 0; i < NROUTES; i++) {
		if (strcmp(routes[i].path, x->path) != 0)
			continue;
		if (strcmp(routes[i].method, x->method) == 0 ||
		    (head && strcmp(routes[i].method, "GET") == 0)) {
			routes[i].fn(a, x);
			return;
		}
		allow = strcmp(routes[i].method, "GET") == 0 ? "GET, HEAD" :
							       routes[i].method;
	}
	if (allow != NULL) {
		x->allow = allow;
		xd_http_text(x, 405, "method not allowed");
		return;
	}
	xd_http_text(x, 404,
		     "no such page; xdsd's admin endpoint serves /status, /status.json, /fleet.json, /healthz, /ready, /metrics, /clients, /loads, /config_dump, POST /reload, POST /rollout/promote and POST /rollout/abort");
}

int xd_admin_start(struct xd_admin **out, uv_loop_t *loop,
		   const struct xd_admin_deps *deps)
{
	struct xd_admin *a = xd_calloc(1, sizeof(*a));
	struct xd_http_opts opts = {
		.name = "admin",
		.listen = deps->cfg->admin_listen,
		.max_body = ADMIN_MAX_BODY,
		.max_connections = ADMIN_MAX_CONNECTIONS,
		.max_per_address = deps->cfg->admin_max_connections_per_address,
		.trusted = deps->cfg->trusted_nets,
		.ntrusted = deps->cfg->ntrusted_proxies,
		.header_timeout_ms = deps->cfg->http_header_timeout_ms,
		.idle_ms = ADMIN_IDLE_MS,
		.handle = handle,
		.ctx = a,
	};
	char why[512];

	struct xd_log_limit limit = XD_LOG_LIMIT_INIT(10, 60000);

	XD_ASSERT_LOOP();
	a->deps = *deps;
	a->log_refused = limit;
	if (gethostname(a->hostname, sizeof(a->hostname) - 1) != 0)
		a->hostname[0] = '\0';
	if (xd_http_start(&a->http, loop, &opts, why, sizeof(why)) != 0) {
		xd_error("admin endpoint: %s (admin_listen; 'off' turns it off)", why);
		free(a);
		return -1;
	}
	a->pager = xd_pager_new(loop);
	if (xd_http_port(a->http) != 0)
		xd_info("admin endpoint listening on %s (admin port %d)",
			deps->cfg->admin_listen, xd_http_port(a->http));
	else
		xd_info("admin endpoint listening on %s",
			deps->cfg->admin_listen);
	*out = a;
	return 0;
}

void xd_admin_set_ready(struct xd_admin *a, bool on)
{
	a->ready = on;
}

int xd_admin_port(const struct xd_admin *a)
{
	return xd_http_port(a->http);
}

static void http_stopped(void *arg)
{
	struct xd_admin *a = arg;
	void (*done)(void *) = a->done;
	void *done_arg = a->done_arg;

	xd_pager_free(a->pager);
	free(a);
	if (done != NULL)
		done(done_arg);
}

void xd_admin_stop(struct xd_admin *a, void (*done)(void *arg), void *arg)
{
	XD_ASSERT_LOOP();
	a->done = done;
	a->done_arg = arg;
	xd_http_stop(a->http, http_stopped, a);
}
