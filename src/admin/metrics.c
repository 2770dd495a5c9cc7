/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/metrics.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "admin/process.h"
#include "transport/conns.h"
#include "transport/handshakes.h"
#include "transport/methods.h"
#include "transport/refusals.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/loop_thread.h"
#include "util/trim.h"
#include "util/xalloc.h"

/* ---------------- exposition format ---------------- */

static void head(struct xd_buf *out, const char *name, const char *type,
		 const char *help)
{
	xd_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
		      type);
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(struct xd_buf *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			xd_buf_putc(out, '\\');
		if (*s == '\n') {
			xd_buf_append(out, "\\n", 2);
			continue;
		}
		xd_buf_putc(out, (uint8_t)*s);
	}
}

static void value(struct xd_buf *out, double v)
{
	if (isnan(v))
		xd_buf_printf(out, " NaN\n");
	else if (v == (double)(long long)v && fabs(v) < 1e15)
		xd_buf_printf(out, " %lld\n", (long long)v);
	else
		xd_buf_printf(out, " %.9g\n", v);
}

/* name{k1="v1",k2="v2"} v; NULL keys end the labels. */
static void sample(struct xd_buf *out, const char *name, const char *k1,
		   const char *v1, const char *k2, const char *v2, double v)
{
	xd_buf_printf(out, "%s", name);
	if (k1 != NULL) {
		xd_buf_printf(out, "{%s=\"", k1);
		label_value(out, v1);
		xd_buf_putc(out, '"');
		if (k2 != NULL) {
			xd_buf_printf(out, ",%s=\"", k2);
			label_value(out, v2);
			xd_buf_putc(out, '"');
		}
		xd_buf_putc(out, '}');
	}
	value(out, v);
}

/* One histogram's series, with one label (key NULL: none) before le. */
static void histogram(struct xd_buf *out, const char *name, const char *key,
		      const char *val, const struct xd_histogram *h)
{
	struct xd_buf lbl = XD_BUF_INIT;
	const char *l, *comma, *open, *close;

	if (key != NULL) {
		xd_buf_printf(&lbl, "%s=\"", key);
		label_value(&lbl, val);
		xd_buf_putc(&lbl, '"');
	}
	xd_buf_putc(&lbl, '\0');
	l = (const char *)lbl.data;
	comma = key != NULL ? "," : "";
	open = key != NULL ? "{" : "";
	close = key != NULL ? "}" : "";
	/* the +Inf bucket is the count: no finite one may hold more */
	XD_ASSERT_INFO(h->nbounds == 0 ||
			       xd_histogram_cumulative(h, h->nbounds - 1) <= h->count,
		       "%s{%s}", name, l);
	for (size_t i = 0; i < h->nbounds; i++)
		xd_buf_printf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, l,
			      comma, h->bounds[i],
			      (unsigned long long)xd_histogram_cumulative(h, i));
	xd_buf_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, l, comma,
		      (unsigned long long)h->count);
	xd_buf_printf(out, "%s_sum%s%s%s", name, open, l, close);
	value(out, h->sum);
	xd_buf_printf(out, "%s_count%s%s%s %llu\n", name, open, l, close,
		      (unsigned long long)h->count);
	xd_buf_free(&lbl);
}

/* ---------------- xdsd's metrics ---------------- */

static const char *type_label(int t)
{
	return t == XD_RTYPE_COUNT ? "other" :
				     xd_rtype_info((enum xd_rtype)t)->snapshot_key;
}

static void streams(struct xd_buf *out, const struct xd_sessions_stats *st)
{
	size_t n;
	const struct xd_method *methods = xd_methods(&n);

	head(out, "xdsd_streams", "gauge", "Streams open now, by method.");
	for (size_t i = 0; i < n; i++) {
		const struct xd_method *m = &methods[i];

		sample(out, "xdsd_streams", "method",
		       m->aggregated ? "ADS" : xd_rtype_info(m->type)->service,
		       "mode", m->delta ? "delta" : "sotw",
		       (double)st->streams[i]);
	}
}

static void per_type(struct xd_buf *out, const struct xd_sessions_stats *st)
{
	static const struct {
		const char *name, *help;
		size_t offset;
	} counters[] = {
		{"xdsd_responses_total", "Responses sent, by resource type.",
		 offsetof(struct xd_type_stats, responses)},
		{"xdsd_response_bytes_total", "Bytes of responses sent, by resource type.",
		 offsetof(struct xd_type_stats, response_bytes)},
		{"xdsd_acks_total", "Responses clients accepted, by resource type.",
		 offsetof(struct xd_type_stats, acks)},
		{"xdsd_nacks_total", "Responses clients rejected, by resource type.",
		 offsetof(struct xd_type_stats, nacks)},
		{"xdsd_ack_timeouts_total",
		 "Responses not answered within ack_timeout, by resource type.",
		 offsetof(struct xd_type_stats, ack_timeouts)},
		{"xdsd_resources_withheld_total",
		 "Names clients asked for that their identity may not be served (@allow), once per stream and name, by resource type.",
		 offsetof(struct xd_type_stats, withheld)},
	};

	for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		head(out, counters[c].name, "counter", counters[c].help);
		for (int t = 0; t <= XD_RTYPE_COUNT; t++) {
			const char *base = (const char *)&st->types[t];

			sample(out, counters[c].name, "type", type_label(t), NULL,
			       NULL,
			       (double)*(const unsigned long long *)(const void *)
				       (base + counters[c].offset));
		}
	}
	head(out, "xdsd_convergence_seconds", "histogram",
	     "From a change being served to a client's ACK of it, for clients connected before the change.");
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		histogram(out, "xdsd_convergence_seconds", "type", type_label(t),
			  &st->types[t].convergence);
	head(out, "xdsd_ack_delay_seconds", "histogram",
	     "From a response being sent to the client's ACK or NACK of it, by resource type.");
	for (int t = 0; t <= XD_RTYPE_COUNT; t++)
		histogram(out, "xdsd_ack_delay_seconds", "type", type_label(t),
			  &st->types[t].ack_delay);
}

/* (stream, type) pairs by sync state, and the oldest response still
 * waiting for its answer: one walk over the streams. */
struct sync_count {
	unsigned long long n[XD_RTYPE_COUNT + 1][3];
	uint64_t oldest_ms;
	/* names asked for and not served (rules N1, N2): not found, and
	 * withheld by "@allow" */
	unsigned long long missing[XD_RTYPE_COUNT + 1][2];
};

static void count_sync(void *ctx, const struct xd_client_view *c)
{
	struct sync_count *sc = ctx;
	uint64_t oldest = xd_client_view_oldest(c);

	if (oldest > sc->oldest_ms)
		sc->oldest_ms = oldest;
	for (size_t i = 0; i < c->ntypes; i++) {
		const struct xd_client_type *ct = &c->types[i];
		int t = ct->current != NULL ? (int)xd_table_type(ct->current) :
					      XD_RTYPE_COUNT;

		size_t denied, n = xd_client_type_missing(ct, c->method->delta,
							  NULL, NULL, &denied);

		sc->n[t][ct->sync]++;
		sc->missing[t][0] += n - denied;
		sc->missing[t][1] += denied;
	}
}

static void subscriptions(struct xd_buf *out, const struct sync_count *scp)
{
	static const enum xd_sub_sync states[] = {XD_SUB_SYNCED, XD_SUB_PENDING,
						  XD_SUB_NACKED};
	const struct sync_count sc = *scp;

	head(out, "xdsd_subscriptions", "gauge",
	     "Resource types subscribed to on open streams, by sync state.");
	for (int t = 0; t <= XD_RTYPE_COUNT; t++)
		for (size_t s = 0; s < 3; s++)
			sample(out, "xdsd_subscriptions", "type", type_label(t),
			       "state", xd_sub_sync_name(states[s]),
			       (double)sc.n[t][states[s]]);
	head(out, "xdsd_requested_missing", "gauge",
	     "Names clients on open streams ask for that the snapshot serving them lacks (not_found) or that their identity may not be served (permission_denied), each stream counting its own, by resource type.");
	for (int t = 0; t <= XD_RTYPE_COUNT; t++) {
		sample(out, "xdsd_requested_missing", "type", type_label(t),
		       "reason", "not_found", (double)sc.missing[t][0]);
		sample(out, "xdsd_requested_missing", "type", type_label(t),
		       "reason", "permission_denied", (double)sc.missing[t][1]);
	}
	head(out, "xdsd_oldest_unacked_seconds", "gauge",
	     "Age of the oldest response still waiting for its ACK or NACK, over all streams and types (0: none).");
	sample(out, "xdsd_oldest_unacked_seconds", NULL, NULL, NULL, NULL,
	       (double)sc.oldest_ms / 1000.0);
}

/* The last good state (state_dir): 0 and no saves without one. */
static void last_good(struct xd_buf *out, const struct xd_laststate *s)
{
	const struct xd_laststate_info *i =
		s != NULL ? xd_laststate_info(s) : NULL;

	head(out, "xdsd_serving_last_good", "gauge",
	     "1 while the last good state is served because the snapshots were refused at start.");
	sample(out, "xdsd_serving_last_good", NULL, NULL, NULL, NULL,
	       i != NULL && i->serving ? 1 : 0);
	head(out, "xdsd_state_saves_total", "counter",
	     "Saves of the last good state to state_dir, by result (unchanged: the state on disk held those snapshots already, not rewritten).");
	sample(out, "xdsd_state_saves_total", "result", "ok", NULL, NULL,
	       i != NULL ? (double)i->saves_ok : 0);
	sample(out, "xdsd_state_saves_total", "result", "error", NULL, NULL,
	       i != NULL ? (double)i->saves_failed : 0);
	sample(out, "xdsd_state_saves_total", "result", "unchanged", NULL, NULL,
	       i != NULL ? (double)i->saves_unchanged : 0);
	head(out, "xdsd_state_save_failing", "gauge",
	     "1 while the newest save of the last good state failed: the state on disk is older than what is served.");
	sample(out, "xdsd_state_save_failing", NULL, NULL, NULL, NULL,
	       i != NULL && i->save_failing ? 1 : 0);
}

static void reloads(struct xd_buf *out, const struct xd_reloader *r)
{
	const struct xd_reload_stats *st = xd_reloader_stats(r);
	const struct xd_reload_record *last =
		xd_reload_history_count(r) > 0 ? xd_reload_history(r, 0) : NULL;

	head(out, "xdsd_reloads_total", "counter",
	     "Reloads of the snapshot directory, by result.");
	sample(out, "xdsd_reloads_total", "result", "ok", NULL, NULL,
	       (double)st->ok);
	sample(out, "xdsd_reloads_total", "result", "error", NULL, NULL,
	       (double)st->failed);
	head(out, "xdsd_reload_duration_seconds", "histogram",
	     "Time to load the snapshot directory on reload.");
	histogram(out, "xdsd_reload_duration_seconds", NULL, NULL, &st->duration);
	head(out, "xdsd_reload_dry_runs_total", "counter",
	     "Dry runs of a reload (POST /reload?dry_run=1), by result.");
	sample(out, "xdsd_reload_dry_runs_total", "result", "ok", NULL, NULL,
	       (double)st->dry_ok);
	sample(out, "xdsd_reload_dry_runs_total", "result", "refused", NULL, NULL,
	       (double)st->dry_refused);
	sample(out, "xdsd_reload_dry_runs_total", "result", "busy", NULL, NULL,
	       (double)st->dry_busy);
	last_good(out, xd_reloader_laststate(r));
	if (last == NULL)
		return;
	head(out, "xdsd_last_reload_successful", "gauge",
	     "Whether the last load of the snapshot directory was installed.");
	sample(out, "xdsd_last_reload_successful", NULL, NULL, NULL, NULL,
	       last->ok ? 1 : 0);
	head(out, "xdsd_last_reload_timestamp_seconds", "gauge",
	     "When the last load of the snapshot directory finished.");
	sample(out, "xdsd_last_reload_timestamp_seconds", NULL, NULL, NULL, NULL,
	       (double)last->at_ms / 1000.0);
}

static void snapshots(struct xd_buf *out, const struct xd_cache *cache)
{
	size_t n;
	struct xd_snapshot **snaps = xd_cache_snapshots(cache, &n);

	head(out, "xdsd_snapshot_resources", "gauge",
	     "Resources in each snapshot served, by type.");
	for (size_t i = 0; i < n; i++)
		for (int t = 0; t < XD_RTYPE_COUNT; t++)
			sample(out, "xdsd_snapshot_resources", "snapshot",
			       xd_snapshot_key(snaps[i]), "type", type_label(t),
			       (double)xd_table_count(xd_snapshot_table(
				       snaps[i], (enum xd_rtype)t)));
	head(out, "xdsd_snapshot_info", "gauge",
	     "The version of each snapshot served (a hash of its content).");
	for (size_t i = 0; i < n; i++)
		sample(out, "xdsd_snapshot_info", "snapshot",
		       xd_snapshot_key(snaps[i]), "version",
		       xd_snapshot_version(snaps[i]), 1);
	head(out, "xdsd_snapshot_since_timestamp_seconds", "gauge",
	     "Since when each snapshot's content has been served.");
	for (size_t i = 0; i < n; i++)
		sample(out, "xdsd_snapshot_since_timestamp_seconds", "snapshot",
		       xd_snapshot_key(snaps[i]), NULL, NULL,
		       (double)xd_snapshot_since(snaps[i]) / 1000.0);
	for (size_t i = 0; i < n; i++)
		xd_snapshot_unref(snaps[i]);
	free(snaps);
}

/* `open_fds` as counted over the turns (xd_fd_count). */
static void process(struct xd_buf *out, size_t open_fds)
{
	struct xd_process_stats p;

	if (xd_process_read(&p) != 0)
		return;
	p.open_fds = open_fds;
	head(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	sample(out, "process_resident_memory_bytes", NULL, NULL, NULL, NULL,
	       (double)p.resident_bytes);
	head(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	sample(out, "process_virtual_memory_bytes", NULL, NULL, NULL, NULL,
	       (double)p.virtual_bytes);
	head(out, "process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds.");
	sample(out, "process_cpu_seconds_total", NULL, NULL, NULL, NULL,
	       p.cpu_seconds);
	head(out, "process_open_fds", "gauge", "Number of open file descriptors.");
	sample(out, "process_open_fds", NULL, NULL, NULL, NULL, (double)p.open_fds);
	head(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
	sample(out, "process_max_fds", NULL, NULL, NULL, NULL, (double)p.max_fds);
	head(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
	sample(out, "process_start_time_seconds", NULL, NULL, NULL, NULL,
	       p.start_time_seconds);
}

/* REST-JSON (rest.h), when it is on. */
static void rest(struct xd_buf *out, const struct xd_rest *r)
{
	const struct xd_rest_stats *st = xd_rest_stats(r);

	head(out, "xdsd_rest_requests_total", "counter",
	     "REST-JSON requests to a type's path, by resource type.");
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (xd_rtype_info((enum xd_rtype)t)->rest_path != NULL)
			sample(out, "xdsd_rest_requests_total", "type",
			       type_label(t), NULL, NULL,
			       (double)st->requests[t]);
	head(out, "xdsd_rest_responses_total", "counter",
	     "REST-JSON DiscoveryResponses sent, by resource type.");
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (xd_rtype_info((enum xd_rtype)t)->rest_path != NULL)
			sample(out, "xdsd_rest_responses_total", "type",
			       type_label(t), NULL, NULL, (double)st->answers[t]);
	head(out, "xdsd_rest_refused_total", "counter",
	     "REST-JSON requests answered with an error status.");
	sample(out, "xdsd_rest_refused_total", NULL, NULL, NULL, NULL,
	       (double)st->refused);
	head(out, "xdsd_rest_polls_waiting", "gauge",
	     "REST-JSON requests held until their type changes.");
	sample(out, "xdsd_rest_polls_waiting", NULL, NULL, NULL, NULL,
	       (double)st->waiting);
	head(out, "xdsd_rest_pollers_dropped_total", "counter",
	     "REST-JSON pollers dropped from the full record of pollers, least recently seen first.");
	sample(out, "xdsd_rest_pollers_dropped_total", NULL, NULL, NULL, NULL,
	       (double)xd_rest_pollers_dropped_total(r));
	head(out, "xdsd_rest_answers_printed_total", "counter",
	     "REST-JSON answers printed as JSON; every other answer shared one of them.");
	sample(out, "xdsd_rest_answers_printed_total", NULL, NULL, NULL, NULL,
	       (double)xd_rest_printed_total(r));
}

/* The HTTP endpoints' connections, requests and refusals (http.h). */
static void http(struct xd_buf *out, const struct xd_admin_http *admin,
		 const struct xd_rest *rest)
{
	static const char refused[] = "xdsd_http_refused_total";
	struct endpoint {
		const char *name;
		const struct xd_http_stats *st;
		unsigned long long foreign; /* the admin guard's */
		unsigned long long dry_run_dir; /* the admin's dry runs' */
		const struct xd_rest_stats *rest; /* its requests' refusals */
	} ep[2];
	size_t n = 0;

	if (admin != NULL)
		ep[n++] = (struct endpoint){"admin", admin->http, *admin->foreign,
					    *admin->dry_run_dir, NULL};
	if (rest != NULL)
		ep[n++] = (struct endpoint){"rest", xd_rest_http_stats(rest), 0, 0,
					    xd_rest_stats(rest)};
	head(out, "xdsd_http_connections", "gauge",
	     "Open connections to an HTTP endpoint (admin, rest).");
	for (size_t i = 0; i < n; i++)
		sample(out, "xdsd_http_connections", "endpoint", ep[i].name,
		       NULL, NULL, (double)ep[i].st->connections);
	head(out, "xdsd_http_requests_total", "counter",
	     "Requests an HTTP endpoint handled.");
	for (size_t i = 0; i < n; i++)
		sample(out, "xdsd_http_requests_total", "endpoint", ep[i].name,
		       NULL, NULL, (double)ep[i].st->requests);
	head(out, refused, "counter",
	     "Connections and requests an HTTP endpoint refused, by reason.");
	for (size_t i = 0; i < n; i++) {
		const struct xd_http_stats *st = ep[i].st;
		const char *e = ep[i].name;

		sample(out, refused, "endpoint", e, "reason", "connections",
		       (double)st->over_connections);
		sample(out, refused, "endpoint", e, "reason", "per_address",
		       (double)st->over_per_address);
		sample(out, refused, "endpoint", e, "reason", "header_timeout",
		       (double)st->header_timeouts);
		sample(out, refused, "endpoint", e, "reason", "rate",
		       (double)st->over_rate);
		sample(out, refused, "endpoint", e, "reason", "too_large",
		       (double)st->too_large);
		sample(out, refused, "endpoint", e, "reason", "foreign_site",
		       (double)ep[i].foreign);
		if (ep[i].rest == NULL)
			sample(out, refused, "endpoint", e, "reason", "dry_run_dir",
			       (double)ep[i].dry_run_dir);
		for (int w = 0; ep[i].rest != NULL && w < XD_REST_REFUSAL_COUNT; w++)
			sample(out, refused, "endpoint", e, "reason",
			       xd_rest_refusal_name((enum xd_rest_refusal)w),
			       (double)ep[i].rest->refusals[w]);
	}
}

/* The admin's pages written between loop turns (pager.h): slices over
 * pages is how many turns a page takes; their buffers are bounded
 * (XD_PAGER_BUFFER, one item more at most). */
static void pages(struct xd_buf *out, const struct xd_admin_http *admin)
{
	const struct xd_pager_stats *p;

	if (admin == NULL || admin->pager == NULL)
		return;
	p = admin->pager;
	const struct {
		const char *name, *type, *help;
		double v;
	} family[] = {
		{"xdsd_admin_pages_total", "counter",
		 "Admin pages written in slices between loop turns and answered.",
		 (double)p->pages},
		{"xdsd_admin_page_slices_total", "counter",
		 "Slices those pages were written in, at most one per page and loop turn.",
		 (double)p->slices},
		{"xdsd_admin_page_buffer_bytes", "gauge",
		 "Bytes the buffers of the admin pages being written take now.",
		 (double)p->held},
		{"xdsd_admin_page_buffer_max_bytes", "gauge",
		 "The most bytes one admin page's buffer has taken since the start.",
		 (double)p->held_max},
	};

	for (size_t i = 0; i < sizeof(family) / sizeof(family[0]); i++) {
		head(out, family[i].name, family[i].type, family[i].help);
		sample(out, family[i].name, NULL, NULL, NULL, NULL, family[i].v);
	}
}

/* Streams refused, every reason (refusals.h), zeros included. */
static void refusals(struct xd_buf *out)
{
	head(out, "xdsd_streams_refused_total", "counter",
	     "Streams and calls xdsd ended with an error status because of their client, by reason.");
	for (int r = 0; r < XD_REFUSED_COUNT; r++)
		sample(out, "xdsd_streams_refused_total", "reason",
		       xd_refusal_name((enum xd_refusal)r), NULL, NULL,
		       (double)xd_refusals((enum xd_refusal)r));
}

/* Client connections as accepted (conns.h): refusals by reason, zeros
 * included, deadlines missed, and those open now. */
static void connections(struct xd_buf *out)
{
	size_t idle = xd_conns_idle(), open = xd_conns_open();

	head(out, "xdsd_connections_accepted_total", "counter",
	     "TCP connections accepted on the xDS listener.");
	sample(out, "xdsd_connections_accepted_total", NULL, NULL, NULL, NULL,
	       (double)xd_conns_accepted());
	head(out, "xdsd_connections_refused_total", "counter",
	     "Connections to the xDS listener refused as they were accepted, by reason.");
	for (int r = 0; r < XD_CONN_REFUSED_COUNT; r++)
		sample(out, "xdsd_connections_refused_total", "reason",
		       xd_conn_refusal_name((enum xd_conn_refusal)r), NULL,
		       NULL, (double)xd_conns_refused((enum xd_conn_refusal)r));
	head(out, "xdsd_connections_first_stream_timeouts_total", "counter",
	     "Connections closed for opening no stream within first_stream_timeout.");
	sample(out, "xdsd_connections_first_stream_timeouts_total", NULL, NULL,
	       NULL, NULL, (double)xd_conns_timed_out());
	head(out, "xdsd_connections", "gauge",
	     "TCP connections to the xDS listener open now, by whether they hold a stream.");
	/* two counters read one after the other: one may have moved */
	sample(out, "xdsd_connections", "state", "idle", NULL, NULL,
	       (double)idle);
	sample(out, "xdsd_connections", "state", "streaming", NULL, NULL,
	       (double)(open > idle ? open - idle : 0));
	head(out, "xdsd_heap_trims_total", "counter",
	     "Times freed heap memory was given back to the system after streams or connections went.");
	sample(out, "xdsd_heap_trims_total", NULL, NULL, NULL, NULL,
	       (double)xd_trims());
	head(out, "xdsd_connections_blocked_addresses", "gauge",
	     "Client addresses over max_idle_connections_per_address whose new connections are dropped now.");
	sample(out, "xdsd_connections_blocked_addresses", NULL, NULL, NULL,
	       NULL, (double)xd_conns_blocked());
}

/* Client status answers under way, what they hold, and the calls
 * refused, every reason (csds_service.h), zeros included. */
static void csds(struct xd_buf *out, const struct xd_csds_service *svc)
{
	struct xd_csds_stats st;

	xd_csds_service_stats(svc, &st);
	head(out, "xdsd_csds_answers", "gauge",
	     "Client status (CSDS) answers being built or sent now.");
	sample(out, "xdsd_csds_answers", NULL, NULL, NULL, NULL, (double)st.answers);
	head(out, "xdsd_csds_answer_bytes", "gauge",
	     "Bytes the client status answers being built or sent hold together.");
	sample(out, "xdsd_csds_answer_bytes", NULL, NULL, NULL, NULL, (double)st.bytes);
	head(out, "xdsd_csds_refused_total", "counter",
	     "Client status calls refused, by reason (identity: not allowed; answers, memory: too many answers under way, or too large together; too_large: the answer alone).");
	for (int r = 0; r < XD_CSDS_REFUSED_COUNT; r++)
		sample(out, "xdsd_csds_refused_total", "reason",
		       xd_csds_refusal_name((enum xd_csds_refusal)r), NULL, NULL,
		       (double)st.refused[r]);
}

/* With tls: the handshakes that failed, and when the certificates in
 * use expire. */
static void tls(struct xd_buf *out, const struct xd_tls *t)
{
	struct xd_tls_expiry cert, ca;

	head(out, "xdsd_tls_handshake_failures_total", "counter",
	     "TLS handshakes on the xDS listener that failed.");
	sample(out, "xdsd_tls_handshake_failures_total", NULL, NULL, NULL, NULL,
	       (double)xd_handshakes_failed());
	xd_tls_expiry(t, &cert, &ca);
	head(out, "xdsd_tls_certificate_expiry_timestamp_seconds", "gauge",
	     "When the certificate in use expires: the server's, and the client CA that expires first.");
	sample(out, "xdsd_tls_certificate_expiry_timestamp_seconds", "role",
	       "server", "file", cert.path, (double)cert.not_after);
	if (ca.path != NULL)
		sample(out, "xdsd_tls_certificate_expiry_timestamp_seconds",
		       "role", "client_ca", "file", ca.path,
		       (double)ca.not_after);
}

/* The staged rollout, when `rollout:` is set: one sample per state, 1
 * for the state it is in. */
static void rollout(struct xd_buf *out, const struct xd_rollout *ro)
{
	const struct xd_rollout_status *st;

	if (ro == NULL)
		return;
	st = xd_rollout_status(ro);
	head(out, "xdsd_rollout_state", "gauge",
	     "The staged rollout's state: 1 for the one it is in (idle before the first rollout).");
	for (int s = 0; s < XD_ROLLOUT_STATES; s++)
		sample(out, "xdsd_rollout_state", "state",
		       xd_rollout_state_name((enum xd_rollout_state)s), NULL,
		       NULL, st->state == (enum xd_rollout_state)s);
	head(out, "xdsd_rollout_nacks", "gauge",
	     "NACKs from canaries of the rollout under way, or of the last one.");
	sample(out, "xdsd_rollout_nacks", NULL, NULL, NULL, NULL,
	       (double)st->nacks);
}

/* The load reports (loads/store.h): per (cluster, locality) series,
 * bounded by load_reports.max_series, the rest in the one series of
 * XD_LOADS_OTHER; and the service's own figures. */
struct series_list {
	struct xd_load_series_view *v;
	size_t n, cap;
};

static void take_series(void *arg, const struct xd_load_series_view *v)
{
	struct series_list *l = arg;

	l->v = xd_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = *v;
}

static void loads(struct xd_buf *out, struct xd_loads *store,
		  const struct xd_lrs_service *lrs)
{
	static const struct {
		const char *name, *type, *help;
		size_t offset;
	} per_series[] = {
		{"xdsd_load_requests_total", "counter",
		 "Requests clients reported completed (succeeded or failed) to the endpoints of a cluster in a locality, over every load report (LRS); locality region/zone/sub_zone.",
		 offsetof(struct xd_load_series_view, requests)},
		{"xdsd_load_errors_total", "counter",
		 "Of those, the requests that failed.",
		 offsetof(struct xd_load_series_view, errors)},
		{"xdsd_load_dropped_total", "counter",
		 "Requests clients reported dropped before they reached a cluster (locality \"\").",
		 offsetof(struct xd_load_series_view, dropped)},
		{"xdsd_load_in_flight", "gauge",
		 "Requests in progress at the last report of each client that reported within the window, together.",
		 offsetof(struct xd_load_series_view, in_progress)},
	};
	struct series_list l = {0};
	struct xd_loads_stats ls;
	struct xd_lrs_stats rs;

	xd_loads_visit_series(store, xd_mono_ms(), take_series, &l);
	for (size_t m = 0; m < XD_ARRAY_LEN(per_series); m++) {
		head(out, per_series[m].name, per_series[m].type,
		     per_series[m].help);
		for (size_t i = 0; i < l.n; i++)
			sample(out, per_series[m].name, "cluster", l.v[i].cluster,
			       "locality", l.v[i].locality,
			       (double)*(const uint64_t *)(const void *)
				       ((const char *)&l.v[i] + per_series[m].offset));
	}
	free(l.v);
	xd_loads_stats(store, &ls);
	xd_lrs_service_stats(lrs, &rs);
	head(out, "xdsd_load_reporters", "gauge",
	     "Load reporting streams open now.");
	sample(out, "xdsd_load_reporters", NULL, NULL, NULL, NULL,
	       (double)rs.reporters);
	head(out, "xdsd_load_reports_total", "counter",
	     "LoadStatsRequests that carried load, over every stream.");
	sample(out, "xdsd_load_reports_total", NULL, NULL, NULL, NULL,
	       (double)rs.reports);
	head(out, "xdsd_load_entries", "gauge",
	     "(cluster, locality, node) triples whose reports are kept now (at most load_reports.max_entries).");
	sample(out, "xdsd_load_entries", NULL, NULL, NULL, NULL,
	       (double)ls.entries);
	head(out, "xdsd_load_refused_total", "counter",
	     "Locality reports not kept: max_entries triples were kept already.");
	sample(out, "xdsd_load_refused_total", NULL, NULL, NULL, NULL,
	       (double)ls.refused);
}

/* With source: etcd: the revision held, whether it is read and
 * watched, and how often it had to start again. */
static void etcd(struct xd_buf *out, const struct xd_config *cfg,
		 const struct xd_etcd_health *h)
{
	head(out, "xdsd_etcd_revision", "gauge",
	     "The etcd revision of the snapshot keys held (0: none read yet).");
	sample(out, "xdsd_etcd_revision", "prefix", cfg->etcd.prefix, NULL,
	       NULL, (double)h->revision);
	head(out, "xdsd_etcd_up", "gauge",
	     "1 while the etcd prefix is read and watched, 0 while etcd is being reached again.");
	sample(out, "xdsd_etcd_up", "prefix", cfg->etcd.prefix, NULL, NULL,
	       h->healthy ? 1 : 0);
	head(out, "xdsd_etcd_reconnects_total", "counter",
	     "Reads or watches of the etcd prefix started again after a failure.");
	sample(out, "xdsd_etcd_reconnects_total", "prefix", cfg->etcd.prefix,
	       NULL, NULL, (double)h->reconnects);
}

/* Every source a reload reads (reload/source.h): whether it is up,
 * and when a load of it was last accepted and it last failed. */
static void sources(struct xd_buf *out, const struct xd_reloader *r)
{
	struct xd_source_health h[XD_RELOAD_SOURCES];
	size_t n = xd_reloader_sources(r, h);

	head(out, "xdsd_source_up", "gauge",
	     "1 while the source can be read (files: the last read found nothing wrong; etcd: read and watched; last_good: the newest save succeeded).");
	for (size_t i = 0; i < n; i++)
		sample(out, "xdsd_source_up", "source", h[i].name, NULL, NULL,
		       h[i].up ? 1 : 0);
	head(out, "xdsd_source_last_good_timestamp_seconds", "gauge",
	     "When a load of what the source holds was last accepted (last_good: when it was saved), Unix time; 0: never.");
	for (size_t i = 0; i < n; i++)
		sample(out, "xdsd_source_last_good_timestamp_seconds", "source",
		       h[i].name, NULL, NULL, (double)h[i].last_good_ms / 1000);
	head(out, "xdsd_source_last_error_timestamp_seconds", "gauge",
	     "When the source last failed, Unix time; 0: never.");
	for (size_t i = 0; i < n; i++)
		sample(out, "xdsd_source_last_error_timestamp_seconds", "source",
		       h[i].name, NULL, NULL, (double)h[i].last_error_ms / 1000);
}

/* The scrape's place between two steps (pager.h): the per-stream
 * gauges are counted over the turns; the rest is read at the last. */
struct xd_metrics_page {
	const struct xd_admin_deps *deps;
	struct xd_admin_http admin;
	struct xd_sessions_cursor cur;
	struct sync_count sc;
	struct xd_fd_count fds; /* one a client: counted in slices too */
};

struct xd_metrics_page *xd_metrics_page_new(const struct xd_admin_deps *deps,
					    const struct xd_admin_http *admin)
{
	struct xd_metrics_page *p = xd_calloc(1, sizeof(*p));

	p->deps = deps;
	p->admin = *admin;
	xd_sessions_cursor_open(deps->sessions, &p->cur);
	xd_fd_count_start(&p->fds);
	return p;
}

static void page_free(void *st)
{
	struct xd_metrics_page *p = st;

	if (p == NULL)
		return;
	xd_sessions_cursor_close(&p->cur);
	xd_fd_count_stop(&p->fds);
	free(p);
}

static bool page_step(void *page, struct xd_http_exchange *x,
		      uint64_t deadline_ns)
{
	struct xd_metrics_page *p = page;
	struct xd_buf *out = &x->out;
	const struct xd_admin_deps *deps = p->deps;
	const struct xd_admin_http *admin = &p->admin;
	const struct xd_sessions_stats *st;

	/* the counters are the loop's, read unlocked */
	XD_ASSERT_LOOP();
	if (!xd_sessions_cursor_walk(&p->cur, count_sync, &p->sc, deadline_ns) ||
	    !xd_fd_count_step(&p->fds, deadline_ns))
		return false;
	st = xd_sessions_stats(deps->sessions);
	head(out, "xdsd_build_info", "gauge", "The xdsd version running.");
	sample(out, "xdsd_build_info", "version", PACKAGE_VERSION, NULL, NULL, 1);
	streams(out, st);
	head(out, "xdsd_requests_total", "counter", "Requests read from every stream.");
	sample(out, "xdsd_requests_total", NULL, NULL, NULL, NULL,
	       (double)st->requests);
	per_type(out, st);
	subscriptions(out, &p->sc);
	refusals(out);
	connections(out);
	if (deps->csds != NULL)
		csds(out, deps->csds);
	if (deps->tls != NULL)
		tls(out, deps->tls);
	if (deps->rest != NULL)
		rest(out, deps->rest);
	http(out, admin, deps->rest);
	pages(out, admin);
	reloads(out, deps->reloader);
	sources(out, deps->reloader);
	rollout(out, deps->rollout);
	if (deps->etcd != NULL)
		etcd(out, deps->cfg, deps->etcd);
	if (deps->loads != NULL && deps->lrs != NULL)
		loads(out, deps->loads, deps->lrs);
	snapshots(out, deps->cache);
	process(out, p->fds.n);
	return true;
}

const struct xd_pager_page xd_metrics_pager = {page_step, page_free};
