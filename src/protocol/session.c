/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/session.h"

#include <grpc/byte_buffer.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "protocol/body.h"
#include "protocol/client.h"
#include "protocol/derived.h"
#include "protocol/request.h"
#include "protocol/sequence.h"
#include "protocol/sub.h"
#include "protocol/typeset.h"
#include "protocol/withheld.h"
#include "util/bucket.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"
#include "xds/message.h"

/* Sessions pumped per loop iteration when a snapshot change fans out. */
#define PUMP_BATCH 256
/* How often sessions in a wait (rule A2, sequence.h) look again. */
#define EDS_WAIT_TICK_MS 100
/* Streams the ack_timeout sweep looks at per loop iteration. */
#define SWEEP_BATCH 1024

struct xd_session {
	struct xd_sessions *mgr;
	struct xd_stream *stream;
	const struct xd_method *method;
	struct xd_client client; /* who it is: node, form, key, view */
	uint64_t opened_mono_ms;
	uv_timer_t *beat_timer; /* the next heartbeat (rule L1), once needed */
	struct xd_watch watch;
	struct xd_snapshot *snap; /* the target; NULL until one exists */

	struct xd_typeset types; /* every type it asked for */
	uint64_t next_nonce;

	/* the sequencer's waits for the client (rule A2) */
	struct xd_seq_waits waits;

	struct xd_bucket requests; /* max_requests_per_second */

	struct xd_list all;     /* in the manager's list of every session */
	struct xd_list queued;  /* in the manager's pump queue */
	struct xd_list waiting; /* in the manager's wait list */
};

struct xd_sessions {
	uv_loop_t *loop;
	struct xd_cache *cache;
	const struct xd_config *cfg;
	struct xd_stream_handler handler;
	uv_idle_t pump_idle;
	uv_timer_t wait_timer;
	/* ack_timeout: one sweep over every stream each half timeout */
	uv_timer_t sweep_timer;
	struct xd_sessions_cursor sweep; /* open while a sweep goes on */
	struct xd_list all;     /* every session, oldest first */
	struct xd_list queue;   /* sessions to pump, oldest first */
	struct xd_list waiting; /* sessions in a wait of the sequencer's */
	struct xd_list cursors; /* open walks (xd_sessions_cursor): few */
	struct xd_sessions_stats stats;
	int closing; /* handles whose close callback is still due */
	xd_sessions_event_fn on_event; /* canaries' events, or NULL */
	void *on_event_arg;
	xd_sessions_canary_fn canary_rule; /* who is a canary, or NULL */
	void *canary_arg;
};

static void view(const struct xd_session *ss, struct xd_client_view *v,
		 uint64_t now_mono);

/* A canary's event (xd_sessions_on_event), with the stream as it is
 * now; nothing at all for the others. */
static void event(const struct xd_session *ss, enum xd_sessions_event_kind k,
		  const char *type, const char *version, uint64_t nonce,
		  const char *message, size_t message_len)
{
	struct xd_client_view v;

	if (!ss->client.canary || ss->mgr->on_event == NULL)
		return;
	view(ss, &v, xd_mono_ms());
	ss->mgr->on_event(ss->mgr->on_event_arg,
			  &(struct xd_sessions_event){k, &v, type, version,
						      nonce, message,
						      message_len});
}

/* ---------------- logging ---------------- */

/* Every line about a stream says which (xd_log_ctx: its number,
 * method, peer, identity, node id and cluster, clipped and escaped by
 * the log);
 * client-supplied strings in the message are clipped here. The context
 * is made only when the level is logged (xd_log_about). */
#define SLOG(level, ss, ...)                                              \
	xd_log_about((level),                                             \
		     (&(struct xd_log_ctx){xd_stream_id((ss)->stream),   \
					   (ss)->method->name,            \
					   xd_stream_peer((ss)->stream),  \
					   (ss)->client.node_id,          \
					   (ss)->client.node_cluster,     \
					   xd_stream_identity((ss)->stream)}), \
		     __VA_ARGS__)

/* "client connected" and "client disconnected": one line each per
 * stream at info, a few dozen a second at most (a fleet reconnecting
 * at once, or a client looping, must not flood the log); the next line
 * written says how many were not. */
static struct xd_log_limit presence_log = XD_LOG_LIMIT_INIT(20, 1000);

#define PRESENCE_LOG(ss, fmt, ...)                                        \
	do {                                                              \
		unsigned long dropped_;                                   \
                                                                          \
		if (XD_LOG_INFO <= xd_log_threshold &&                   \
		    xd_log_limit_take(&presence_log, &dropped_)) {        \
			if (dropped_ > 0)                                 \
				SLOG(XD_LOG_INFO, ss,                     \
				     fmt " (%lu connect and disconnect lines not logged)", \
				     __VA_ARGS__, dropped_);              \
			else                                              \
				SLOG(XD_LOG_INFO, ss, fmt, __VA_ARGS__);  \
		}                                                         \
	} while (0)

/* A NACK's message is what an operator needs most: it gets more room. */
#define NACK_LOG_MAX 1024

static const char *tname(enum xd_rtype t)
{
	return xd_rtype_info(t)->service;
}

/* A method's number, as the stream counts are kept (stats.h). */
static size_t method_index(const struct xd_method *m)
{
	size_t n;

	return (size_t)(m - xd_methods(&n));
}

/* ---------------- queues ---------------- */

static void pump(struct xd_session *ss);
static void on_pump_idle(uv_idle_t *h);
static void on_wait_tick(uv_timer_t *h);

static void enqueue(struct xd_session *ss)
{
	struct xd_sessions *m = ss->mgr;

	if (xd_list_linked(&ss->queued))
		return;
	xd_list_push_back(&m->queue, &ss->queued);
	uv_idle_start(&m->pump_idle, on_pump_idle);
}

static void on_pump_idle(uv_idle_t *h)
{
	struct xd_sessions *m = h->data;

	for (int i = 0; i < PUMP_BATCH && !xd_list_empty(&m->queue); i++) {
		struct xd_session *ss =
			xd_container_of(m->queue.next, struct xd_session, queued);

		xd_list_remove(&ss->queued);
		pump(ss);
	}
	if (xd_list_empty(&m->queue))
		uv_idle_stop(&m->pump_idle);
}

static void wait_list_remove(struct xd_session *ss)
{
	struct xd_sessions *m = ss->mgr;

	if (!xd_list_linked(&ss->waiting))
		return;
	xd_list_remove(&ss->waiting);
	if (xd_list_empty(&m->waiting))
		uv_timer_stop(&m->wait_timer);
}

static void on_wait_tick(uv_timer_t *h)
{
	struct xd_sessions *m = h->data;
	uint64_t now = uv_now(m->loop);
	struct xd_list *n, *tmp;

	xd_list_for_each_safe(n, tmp, &m->waiting) {
		struct xd_session *ss = xd_container_of(n, struct xd_session, waiting);

		if ((ss->waits.eds.state == XD_WAIT_RUNNING &&
		     now >= ss->waits.eds.until) ||
		    (ss->waits.uptake.state == XD_WAIT_RUNNING &&
		     now >= ss->waits.uptake.until))
			enqueue(ss);
	}
}

static void wait_list_add(struct xd_session *ss)
{
	struct xd_sessions *m = ss->mgr;

	if (xd_list_linked(&ss->waiting))
		return;
	if (xd_list_empty(&m->waiting))
		uv_timer_start(&m->wait_timer, on_wait_tick, EDS_WAIT_TICK_MS,
			       EDS_WAIT_TICK_MS);
	xd_list_push_back(&m->waiting, &ss->waiting);
}

/* ---------------- snapshot ---------------- */

static void on_snapshot_changed(struct xd_watch *w)
{
	struct xd_session *ss = xd_container_of(w, struct xd_session, watch);

	enqueue(ss);
}

/* Refusals by "@allow", a few a second: a fleet asking for a secret
 * it may not have must not flood the log (every one is counted). */
static struct xd_log_limit withheld_log = XD_LOG_LIMIT_INIT(5, 1000);

struct withheld_ctx {
	struct xd_session *ss;
	enum xd_rtype type;
};

static void tell_one_withheld(void *arg, struct xd_name name)
{
	struct withheld_ctx *w = arg;
	struct xd_session *ss = w->ss;
	const char *identity = xd_stream_identity(ss->stream);
	unsigned long dropped;

	xd_sessions_stats_withheld(&ss->mgr->stats, w->type);
	if (!xd_log_limit_take(&withheld_log, &dropped))
		return;
	if (identity != NULL)
		SLOG(XD_LOG_WARN, ss,
		     "may not be served %s '%.*s': its \"@allow\" names no glob that identity '%.*s' matches; told it may not have it%s",
		     tname(w->type), XD_LOG_CLIP(name.len), name.data,
		     XD_LOG_CLIP(strlen(identity)), identity,
		     dropped ? " (and more such names, not logged)" : "");
	else
		SLOG(XD_LOG_WARN, ss,
		     "may not be served %s '%.*s': a client without a certificate has no identity its \"@allow\" could admit; told it may not have it%s",
		     tname(w->type), XD_LOG_CLIP(name.len), name.data,
		     dropped ? " (and more such names, not logged)" : "");
}

/* Tells the operator of each name of type `t` the stream asks for and
 * its identity may not be served (withheld.h): once per name. */
static void tell_withheld(struct xd_session *ss, enum xd_rtype t)
{
	struct withheld_ctx w = {ss, t};

	if (ss->snap == NULL || t >= XD_RTYPE_COUNT)
		return;
	xd_withheld_tell(&ss->types.subs[t],
			 xd_snapshot_table(xd_snapshot_base(ss->snap), t),
			 xd_snapshot_table(ss->snap, t), tell_one_withheld, &w);
}

/*
 * Follows the cache: the snapshot serving this node now, as the stream's
 * identity may see it (derived.h: resources it may not be served do not
 * exist for it). ss->snap is that view; its base is what the cache gave.
 */
static void refresh_snapshot(struct xd_session *ss)
{
	struct xd_snapshot *now;

	if (ss->client.state != XD_CLIENT_ADMITTED)
		return;
	now = xd_cache_get_for(ss->mgr->cache, xd_client_key(&ss->client),
			       ss->client.canary);
	if (now == (ss->snap != NULL ? xd_snapshot_base(ss->snap) : NULL))
		return;
	xd_snapshot_unref(ss->snap);
	ss->snap = now != NULL ?
		xd_derived_snapshot_view(now, xd_stream_identity(ss->stream)) :
		NULL;
	xd_typeset_follow(&ss->types, ss->snap, xd_stream_identity(ss->stream));
	if (now != NULL)
		SLOG(XD_LOG_DEBUG, ss, "serving snapshot '%s'",
		     xd_snapshot_key(now));
	event(ss, XD_SESSIONS_SERVING, NULL, NULL, 0, NULL, 0);
	/* a reload may take from the identity a name it asked for */
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		tell_withheld(ss, (enum xd_rtype)t);
}

/* ---------------- sending ---------------- */

static void send_bytes(struct xd_session *ss, enum xd_rtype type,
		       grpc_slice body, uint64_t nonce)
{
	uint8_t nonce_field[XD_RESPONSE_NONCE_MAX];
	/* the stream's own nonce after the shared body */
	grpc_slice tail = grpc_slice_from_copied_buffer(
		(const char *)nonce_field,
		xd_response_put_nonce(nonce_field, nonce));
	grpc_slice parts[2];
	grpc_byte_buffer *bb;

	parts[0] = body;
	parts[1] = tail;
	size_t bytes = GRPC_SLICE_LENGTH(body) + GRPC_SLICE_LENGTH(tail);

	xd_sessions_stats_sent(&ss->mgr->stats, type, bytes);
	bb = grpc_raw_byte_buffer_create(parts, 2); /* takes its own refs */
	grpc_slice_unref(tail);
	xd_stream_send(ss->stream, bb);
}

/* Sends a body that `sub` (of `table`) has due: the one place a
 * response gets its nonce. */
static void send_due(struct xd_session *ss, struct xd_sub *sub,
		     struct xd_table *table, struct xd_body *body,
		     const char *label)
{
	uint64_t nonce = ++ss->next_nonce, now = xd_mono_ms();

	xd_sub_sent(sub, table, nonce, now, xd_wall_ms());
	if (body->refreshes_ttl)
		sub->ttl_refreshed_ms = now;
	SLOG(XD_LOG_DEBUG, ss,
	     "sending %.*s version %s nonce %llu: %zu resources, %zu missing, %zu removed",
	     XD_LOG_CLIP(strlen(label)), label, xd_table_version(table),
	     (unsigned long long)nonce, body->nresources, body->nmissing,
	     body->nremoved);
	send_bytes(ss, xd_table_type(table), body->slice, nonce);
	event(ss, XD_SESSIONS_SENT, label, xd_table_version(table), nonce, NULL,
	      0);
}

/* Types xdsd does not serve (`unknown`: they go first, never waiting
 * for others) or list collections: sends what one has due. */
static bool pump_extra(struct xd_session *ss, bool unknown)
{
	struct xd_sub *sub;
	struct xd_table *table;
	const char *label;
	struct xd_body *b = xd_typeset_next(&ss->types, unknown,
					    xd_client_form(&ss->client),
					    ss->method->delta, &sub, &table,
					    &label);

	if (b == NULL)
		return false;
	send_due(ss, sub, table, b, label);
	xd_body_unref(b);
	return true;
}

/* Keeps the manager's wait list in step with the sequencer's waits: a
 * session is on it while one runs, so the tick pumps it again. */
static void follow_waits(struct xd_session *ss, const struct xd_seq_step *st)
{
	if (st->eds == XD_WAITED_LATE)
		SLOG(XD_LOG_DEBUG, ss, "%s", "clusters' endpoints not subscribed in time; going on");
	if (st->uptake == XD_WAITED_LATE)
		SLOG(XD_LOG_DEBUG, ss, "%s", "new clusters and their endpoints not taken up in time; removing the old ones");
	if (ss->waits.eds.state == XD_WAIT_RUNNING ||
	    ss->waits.uptake.state == XD_WAIT_RUNNING)
		wait_list_add(ss);
	else
		wait_list_remove(ss);
}

/*
 * No snapshot serves this node: its key has none and there is no
 * default. The client is told so (and retries later, as xDS clients
 * do), and the operator reads why in the log, rather than both waiting
 * on a stream that never says anything.
 */
static void end_without_snapshot(struct xd_session *ss)
{
	char msg[512];

	xd_client_unserved(&ss->client, msg, sizeof(msg));
	SLOG(XD_LOG_WARN, ss, "%s", msg);
	xd_stream_finish_logged(ss->stream, GRPC_STATUS_NOT_FOUND, msg);
}

static void on_beat_timer(uv_timer_t *h)
{
	enqueue(h->data);
}

/*
 * Heartbeats (rule L1), once nothing else is due: the first type whose
 * resources with a TTL are due for one sends it; otherwise the stream's
 * one timer is set for the earliest. The timer is made the first time a
 * stream holds anything with a TTL, so other streams pay nothing.
 */
static void pump_heartbeats(struct xd_session *ss)
{
	uint64_t now = xd_mono_ms(), next;
	struct xd_sub *sub;
	const char *label;
	struct xd_body *b;

	if (!ss->client.ttl)
		return;
	b = xd_typeset_heartbeat(&ss->types, xd_client_form(&ss->client), now,
				 &sub, &label, &next);
	if (b != NULL) {
		SLOG(XD_LOG_DEBUG, ss, "heartbeat of %s: %zu resources", label,
		     b->nresources);
		send_due(ss, sub, xd_sub_held(sub), b, label);
		xd_body_unref(b);
		return;
	}
	if (next == 0) {
		if (ss->beat_timer != NULL)
			uv_timer_stop(ss->beat_timer);
		return;
	}
	if (ss->beat_timer == NULL) {
		ss->beat_timer = xd_malloc(sizeof(*ss->beat_timer));
		uv_timer_init(ss->mgr->loop, ss->beat_timer);
		ss->beat_timer->data = ss;
	}
	uv_timer_start(ss->beat_timer, on_beat_timer, next - now, 0);
}

static void free_handle(uv_handle_t *h)
{
	free(h);
}

/* Sends what the sequencer says is due (rule A2), if anything. */
static void pump(struct xd_session *ss)
{
	struct xd_seq_mode mode;
	struct xd_seq_step st;

	/* The target follows the cache even when nothing can be sent: a
	 * client that stopped reading must not keep a superseded snapshot
	 * (and every table of it) alive. */
	refresh_snapshot(ss);
	if (!xd_stream_can_send(ss->stream))
		return;
	if (ss->client.state == XD_CLIENT_ADMITTED && ss->snap == NULL) {
		end_without_snapshot(ss);
		return;
	}
	if (pump_extra(ss, true) || ss->snap == NULL)
		return;
	mode.aggregated = ss->method->aggregated;
	mode.delta = ss->method->delta;
	mode.type = ss->method->type;
	mode.form = xd_client_form(&ss->client);
	xd_seq_next(ss->types.subs, ss->snap, &mode, uv_now(ss->mgr->loop),
		    &ss->waits, &st);
	follow_waits(ss, &st);
	/* List collections (rule X3) go once everything else is settled:
	 * the sequencer has nothing to send and nothing in flight. Make
	 * before break (rule A2) then holds for their inline members too,
	 * which refer to what the types before them carry; a collection of
	 * locators costs one round trip more at most, before the client
	 * asks for its members. */
	if (st.action == XD_SEQ_IDLE && !pump_extra(ss, false))
		pump_heartbeats(ss);
	if (st.action != XD_SEQ_SEND)
		return;
	send_due(ss, &ss->types.subs[st.type], st.table, st.body, tname(st.type));
	xd_seq_step_clear(&st);
}

/* ---------------- ack_timeout ---------------- */

/* Warnings of unanswered responses, a few a second: a fleet that stops
 * answering at once must not flood the log. */
static struct xd_log_limit ack_log = XD_LOG_LIMIT_INIT(5, 1000);

/* Warns of each response of `ss` unanswered for ack_timeout, once. */
static void sweep_session(struct xd_session *ss, uint64_t now)
{
	struct xd_sessions *m = ss->mgr;
	struct xd_sub *subs[XD_TYPESET_MAX_SUBS];
	size_t n = xd_typeset_active(&ss->types, subs);
	unsigned long dropped;
	uint64_t since;

	for (size_t i = 0; i < n; i++) {
		struct xd_sub *sub = subs[i];

		if (sub->ack_overdue || !xd_sub_pending_since(sub, &since) ||
		    now - since < m->cfg->ack_timeout_ms)
			continue;
		XD_ASSERT_INFO(sub->sent != NULL, "stream %llu: %s in flight",
			       (unsigned long long)xd_stream_id(ss->stream),
			       sub->label);
		sub->ack_overdue = true;
		xd_sessions_stats_ack_timeout(&m->stats,
					      xd_table_type(sub->sent->table));
		if (xd_log_limit_take(&ack_log, &dropped))
			SLOG(XD_LOG_WARN, ss,
			     "%.*s version %s (nonce %llu) not answered in %llus (ack_timeout)%s",
			     XD_LOG_CLIP(strlen(sub->label)), sub->label,
			     sub->sent_version, (unsigned long long)sub->nonce,
			     (unsigned long long)((now - since) / 1000),
			     dropped ? " (and more such responses, not logged)" : "");
	}
}

static struct xd_session *cursor_take(struct xd_sessions_cursor *c);

/*
 * The sweep: SWEEP_BATCH streams per loop iteration, so that a large
 * fleet never holds the loop; the next sweep starts half a timeout
 * after this one ends, so a response is warned of between ack_timeout
 * and 1.5 times it after its send.
 */
static void on_sweep_tick(uv_timer_t *h)
{
	struct xd_sessions *m = h->data;
	struct xd_session *ss;
	uint64_t now = xd_mono_ms();

	XD_ASSERT_LOOP();
	/* a cursor: a stream that closes between two ticks is stepped
	 * over; one opened during the sweep waits for the next */
	if (m->sweep.m == NULL)
		xd_sessions_cursor_open(m, &m->sweep);
	for (int i = 0; i < SWEEP_BATCH && (ss = cursor_take(&m->sweep)) != NULL;
	     i++)
		sweep_session(ss, now); /* ends no stream */
	if (m->sweep.next != &m->all) {
		uv_timer_start(h, on_sweep_tick, 0, 0);
		return;
	}
	xd_sessions_cursor_close(&m->sweep);
	uv_timer_start(h, on_sweep_tick, m->cfg->ack_timeout_ms / 2, 0);
}

/* ---------------- limits ---------------- */

/* Warnings about limits, a few a second: a flood of refused clients
 * must not flood the log too. */
static struct xd_log_limit limit_log = XD_LOG_LIMIT_INIT(5, 1000);

/*
 * A client went over one of the limits on what a peer may make xdsd
 * hold or do (xdsd.yaml(5)): its stream ends with RESOURCE_EXHAUSTED,
 * naming the limit, and a warning says so.
 */
static void end_over_limit(struct xd_session *ss, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void end_over_limit(struct xd_session *ss, const char *fmt, ...)
{
	unsigned long dropped;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (xd_log_limit_take(&limit_log, &dropped))
		SLOG(XD_LOG_WARN, ss, "%s%s", msg,
		     dropped ? " (and more such streams, not logged)" : "");
	xd_stream_finish_logged(ss->stream, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
}

/* ---------------- requests ---------------- */

/*
 * Admission of the node a request carries (client.h; rule S1). When it
 * is refused, the stream ends with a status (and a warning says why
 * where an operator acts on it). The first admitted node picks the
 * snapshot.
 */
static bool accept_node(struct xd_session *ss, const struct xd_request *r)
{
	struct xd_client *c = &ss->client;
	char why[512];

	/* rule S1 wants the node first; serve such a client the default
	 * snapshot rather than nothing. */
	if (r->node.len == 0 && c->state == XD_CLIENT_NEW)
		SLOG(XD_LOG_WARN, ss, "%s", "first request without a node; serving the default snapshot");
	switch (xd_client_admit(c, r->node, why, sizeof(why))) {
	case XD_CLIENT_SAME:
		return true;
	case XD_CLIENT_ADMIT:
		break;
	case XD_CLIENT_OVER_LIMIT:
		end_over_limit(ss, "%s", why);
		return false;
	case XD_CLIENT_FORBIDDEN:
		SLOG(XD_LOG_WARN, ss, "%s", why);
		xd_stream_finish_logged(ss->stream, GRPC_STATUS_PERMISSION_DENIED,
					why);
		return false;
	case XD_CLIENT_MALFORMED:
	case XD_CLIENT_CHANGED:
		xd_stream_finish(ss->stream, GRPC_STATUS_INVALID_ARGUMENT, why);
		return false;
	}
	/* the rollout's say, once: a node stays a canary or not for its
	 * stream's life */
	c->canary = ss->mgr->canary_rule != NULL &&
		    ss->mgr->canary_rule(ss->mgr->canary_arg, c);
	ss->watch.canary = c->canary;
	xd_cache_watch(ss->mgr->cache, xd_client_key(c), &ss->watch);
	event(ss, XD_SESSIONS_ADMITTED, NULL, NULL, 0, NULL, 0);
	PRESENCE_LOG(ss, "client connected, snapshot key '%.*s'",
		     XD_LOG_CLIP(strlen(xd_client_key(c))), xd_client_key(c));
	SLOG(XD_LOG_DEBUG, ss, "node cluster '%.*s'%s%s%s",
	     XD_LOG_CLIP(strlen(c->node_cluster)), c->node_cluster,
	     c->wrapped ? ", resources wrapped" : "",
	     c->ttl ? ", TTLs taken" : "", c->canary ? ", a canary" : "");
	return true;
}

/* One line per request handled (tests count them: proto_env.c). */
static void log_verdict(struct xd_session *ss, const struct xd_request *r,
			const struct xd_route *rt, enum xd_sub_verdict v)
{
	int label_len = XD_LOG_CLIP(strlen(rt->label));

	switch (v) {
	case XD_SUB_STALE:
		SLOG(XD_LOG_DEBUG, ss, "%.*s request with stale nonce '%.*s'",
		     label_len, rt->label, XD_LOG_CLIP(r->nonce.len), r->nonce.data);
		break;
	case XD_SUB_NACK:
		xd_sessions_stats_answered(&ss->mgr->stats, rt->type, rt->sub,
					   false, ss->opened_mono_ms,
					   xd_mono_ms(), xd_wall_ms());
		SLOG(XD_LOG_WARN, ss, "NACK of %.*s version %s: %.*s", label_len,
		     rt->label,
		     xd_sub_held(rt->sub) ? xd_table_version(xd_sub_held(rt->sub)) : "",
		     (int)(r->error_message.len > NACK_LOG_MAX ? NACK_LOG_MAX :
								  r->error_message.len),
		     r->error_message.data);
		event(ss, XD_SESSIONS_NACK, rt->label, rt->sub->sent_version,
		      rt->sub->nonce, (const char *)r->error_message.data,
		      r->error_message.len);
		break;
	case XD_SUB_ACK:
		xd_sessions_stats_answered(&ss->mgr->stats, rt->type, rt->sub,
					   true, ss->opened_mono_ms,
					   xd_mono_ms(), xd_wall_ms());
		SLOG(XD_LOG_DEBUG, ss, "ACK of %.*s version %s", label_len,
		     rt->label, xd_table_version(xd_sub_held(rt->sub)));
		event(ss, XD_SESSIONS_ACK, rt->label,
		      xd_table_version(xd_sub_held(rt->sub)), rt->sub->nonce,
		      NULL, 0);
		break;
	case XD_SUB_REQUEST:
		SLOG(XD_LOG_DEBUG, ss, "%.*s request: %zu names", label_len,
		     rt->label, r->nnames);
		break;
	}
}

static void on_request(void *st, struct xd_stream *stream,
		       const uint8_t *data, size_t len)
{
	struct xd_session *ss = st;
	struct xd_request r;
	const struct xd_typeset_method tm = {ss->method->name,
					     ss->method->aggregated,
					     ss->method->type,
					     ss->method->delta};
	struct xd_route rt;
	char msg[512];
	enum xd_sub_verdict v;
	const char *why;

	const struct xd_config *cfg = ss->mgr->cfg;

	XD_ASSERT_LOOP();
	ss->mgr->stats.requests++;
	if (cfg->max_requests_per_second != 0 &&
	    !xd_bucket_take(&ss->requests, cfg->max_requests_per_second,
			    cfg->max_request_burst, uv_now(ss->mgr->loop))) {
		end_over_limit(ss, "more than %llu requests a second (max_requests_per_second, burst %llu)",
			       (unsigned long long)cfg->max_requests_per_second,
			       (unsigned long long)cfg->max_request_burst);
		return;
	}
	if (xd_request_parse(&r, data, len, ss->method->delta, &why) != 0) {
		xd_stream_finish(stream, GRPC_STATUS_INVALID_ARGUMENT, why);
		return;
	}
	if (!accept_node(ss, &r))
		goto out;
	XD_ASSERT_INFO(ss->client.state == XD_CLIENT_ADMITTED, "stream %llu",
		       (unsigned long long)xd_stream_id(stream));
	refresh_snapshot(ss);
	if (xd_typeset_route(&ss->types, &tm, &r, ss->snap,
			     xd_stream_identity(stream), &rt, msg,
			     sizeof(msg)) != 0) {
		xd_stream_finish(stream, GRPC_STATUS_INVALID_ARGUMENT, msg);
		goto out;
	}
	if (rt.new_unknown && rt.delta_only)
		SLOG(XD_LOG_WARN, ss, "type '%.*s' is served by incremental xDS only; answering this SotW stream with no resources",
		     XD_LOG_CLIP(r.type_url.len), r.type_url.data);
	else if (rt.new_unknown)
		SLOG(XD_LOG_WARN, ss, "type '%.*s' is not served; answering with no resources",
		     XD_LOG_CLIP(r.type_url.len), r.type_url.data);
	if (ss->method->delta)
		v = xd_sub_delta_request(rt.sub, &r, rt.wildcard_ok, rt.current,
					 xd_wall_ms());
	else
		v = xd_sub_sotw_request(rt.sub, &r, rt.wildcard_ok,
					rt.full_state, rt.current, xd_wall_ms());
	log_verdict(ss, &r, &rt, v);
	tell_withheld(ss, rt.type);
	if (xd_typeset_names(&ss->types) > cfg->max_names_per_stream) {
		end_over_limit(ss, "the stream subscribes to %zu names; the limit is %llu (max_names_per_stream)",
			       xd_typeset_names(&ss->types),
			       (unsigned long long)cfg->max_names_per_stream);
		goto out;
	}
	pump(ss);
out:
	xd_request_free(&r);
}

/* ---------------- stream handler ---------------- */

static void *on_open(void *ctx, struct xd_stream *stream)
{
	struct xd_sessions *m = ctx;
	struct xd_session *ss;

	XD_ASSERT_LOOP();
	ss = xd_calloc(1, sizeof(*ss));
	ss->mgr = m;
	ss->stream = stream;
	ss->method = xd_stream_method(stream);
	ss->watch.changed = on_snapshot_changed;
	xd_list_init(&ss->watch.link);
	xd_list_init(&ss->queued);
	xd_list_init(&ss->waiting);
	xd_list_push_back(&m->all, &ss->all);
	xd_client_init(&ss->client, m->cfg, ss->method->delta,
		       xd_stream_peer(stream), xd_stream_identity(stream),
		       xd_wall_ms());
	ss->opened_mono_ms = xd_mono_ms();
	m->stats.streams[method_index(ss->method)]++;
	xd_typeset_init(&ss->types, xd_stream_id(stream));
	xd_bucket_init(&ss->requests, m->cfg->max_request_burst, uv_now(m->loop));
	m->stats.sessions++;
	return ss;
}

static void on_send_done(void *st, struct xd_stream *stream XD_UNUSED)
{
	pump(st);
}

/* Every open walk that would visit `ss` next goes on after it. */
static void cursors_skip(const struct xd_session *ss)
{
	struct xd_list *n;

	xd_list_for_each(n, &ss->mgr->cursors) {
		struct xd_sessions_cursor *c =
			xd_container_of(n, struct xd_sessions_cursor, link);

		if (c->next == &ss->all)
			c->next = ss->all.next;
	}
}

static void on_close(void *st, struct xd_stream *stream XD_UNUSED)
{
	struct xd_session *ss = st;

	/* a stream whose node was never admitted never said it connected */
	if (ss->client.state == XD_CLIENT_ADMITTED)
		PRESENCE_LOG(ss, "client disconnected after %.1f s",
			     (double)(xd_mono_ms() - ss->opened_mono_ms) / 1000);
	xd_list_remove(&ss->queued);
	cursors_skip(ss);
	xd_list_remove(&ss->all);
	if (ss->client.state == XD_CLIENT_ADMITTED)
		event(ss, XD_SESSIONS_GONE, NULL, NULL, 0, NULL, 0);
	wait_list_remove(ss);
	if (ss->beat_timer != NULL) /* it goes on its own; ss now */
		uv_close((uv_handle_t *)ss->beat_timer, free_handle);
	xd_cache_unwatch(&ss->watch);
	xd_typeset_clear(&ss->types);
	xd_snapshot_unref(ss->snap);
	xd_client_clear(&ss->client);
	ss->mgr->stats.streams[method_index(ss->method)]--;
	ss->mgr->stats.sessions--;
	free(ss);
}

/* ---------------- manager ---------------- */

struct xd_sessions *xd_sessions_new(uv_loop_t *loop, struct xd_cache *cache,
				    const struct xd_config *cfg)
{
	struct xd_sessions *m;
	size_t nmethods;

	XD_ASSERT_LOOP();
	m = xd_calloc(1, sizeof(*m));
	m->loop = loop;
	m->cache = cache;
	m->cfg = cfg;
	m->handler.open = on_open;
	m->handler.on_request = on_request;
	m->handler.on_send_done = on_send_done;
	m->handler.on_close = on_close;
	m->handler.ctx = m;
	xd_list_init(&m->all);
	xd_list_init(&m->cursors);
	xd_list_init(&m->queue);
	xd_list_init(&m->waiting);
	xd_methods(&nmethods);
	xd_sessions_stats_init(&m->stats, nmethods);
	uv_idle_init(loop, &m->pump_idle);
	m->pump_idle.data = m;
	uv_timer_init(loop, &m->wait_timer);
	m->wait_timer.data = m;
	uv_timer_init(loop, &m->sweep_timer);
	m->sweep_timer.data = m;
	if (cfg->ack_timeout_ms != 0)
		uv_timer_start(&m->sweep_timer, on_sweep_tick,
			       cfg->ack_timeout_ms / 2, 0);
	return m;
}

/* libuv runs close callbacks in no order one may rely on: the manager
 * goes with the last of its handles. */
static void free_after_close(uv_handle_t *h)
{
	struct xd_sessions *m = h->data;

	if (--m->closing == 0) {
		xd_sessions_stats_free(&m->stats);
		free(m);
	}
}

void xd_sessions_free(struct xd_sessions *m)
{
	if (m == NULL)
		return;
	xd_sessions_cursor_close(&m->sweep);
	/* a page still walking the streams would read freed sessions */
	XD_ASSERT(xd_list_empty(&m->cursors));
	m->closing = 3;
	uv_close((uv_handle_t *)&m->pump_idle, free_after_close);
	uv_close((uv_handle_t *)&m->wait_timer, free_after_close);
	uv_close((uv_handle_t *)&m->sweep_timer, free_after_close);
}

const struct xd_stream_handler *xd_sessions_handler(struct xd_sessions *m)
{
	return &m->handler;
}

const struct xd_sessions_stats *xd_sessions_stats(const struct xd_sessions *m)
{
	return &m->stats;
}

/* The stream as an operator sees it: the client's view (client.h),
 * with the stream's own fields and its types in push order. */
static void view(const struct xd_session *ss, struct xd_client_view *v,
		 uint64_t now_mono)
{
	xd_client_view(&ss->client, v);
	v->stream_id = xd_stream_id(ss->stream);
	v->method = ss->method;
	v->snapshot = ss->snap;
	v->canary = ss->client.canary;
	xd_typeset_view(&ss->types, ss->snap, v);
	xd_client_view_ages(v, now_mono);
}

void xd_sessions_visit(struct xd_sessions *m,
		       void (*fn)(void *ctx, const struct xd_client_view *c),
		       void *ctx)
{
	struct xd_client_view v;
	struct xd_list *n;
	/* one reading for the whole visit: ages compare across streams */
	uint64_t now_mono = xd_mono_ms();

	XD_ASSERT_LOOP();
	xd_list_for_each(n, &m->all) {
		view(xd_container_of(n, struct xd_session, all), &v, now_mono);
		fn(ctx, &v);
	}
}

void xd_sessions_cursor_open(struct xd_sessions *m,
			     struct xd_sessions_cursor *c)
{
	XD_ASSERT_LOOP();
	c->m = m;
	c->next = m->all.next;
	c->last_id = xd_list_empty(&m->all) ?
			     0 :
			     xd_stream_id(xd_container_of(m->all.prev,
							  struct xd_session, all)
						  ->stream);
	xd_list_init(&c->link);
	xd_list_push_back(&m->cursors, &c->link);
}

/* The cursor's next stream, which it moves past; NULL once the walk is
 * over. The caller ends no stream before it takes the next. */
static struct xd_session *cursor_take(struct xd_sessions_cursor *c)
{
	struct xd_sessions *m = c->m;
	struct xd_session *ss;

	/* a closed cursor is never moved past a closing stream */
	XD_ASSERT(xd_list_linked(&c->link));
	if (c->next == &m->all)
		return NULL;
	ss = xd_container_of(c->next, struct xd_session, all);
	if (xd_stream_id(ss->stream) > c->last_id) {
		c->next = &m->all; /* opened after the walk began */
		return NULL;
	}
	c->next = c->next->next;
	return ss;
}

bool xd_sessions_cursor_visit(struct xd_sessions_cursor *c, size_t max,
			      void (*fn)(void *ctx,
					 const struct xd_client_view *v),
			      void *ctx)
{
	const struct xd_session *ss;
	struct xd_client_view v;
	/* a new reading at each call: a response sent since the last one
	 * must not look sent in the future */
	uint64_t now_mono = xd_mono_ms();

	XD_ASSERT_LOOP();
	for (size_t i = 0; i < max && (ss = cursor_take(c)) != NULL; i++) {
		view(ss, &v, now_mono); /* fn ends no stream */
		fn(ctx, &v);
	}
	return c->next != &c->m->all;
}

/* Streams visited between two looks at the clock: a view and its
 * rendering cost microseconds. */
#define CURSOR_BATCH 32

bool xd_sessions_cursor_walk(struct xd_sessions_cursor *c,
			     void (*fn)(void *ctx,
					const struct xd_client_view *v),
			     void *ctx, uint64_t deadline_ns)
{
	while (xd_sessions_cursor_visit(c, CURSOR_BATCH, fn, ctx))
		if (uv_hrtime() >= deadline_ns)
			return false;
	return true;
}

void xd_sessions_cursor_close(struct xd_sessions_cursor *c)
{
	if (c->m == NULL)
		return;
	XD_ASSERT_LOOP();
	xd_list_remove(&c->link);
	c->m = NULL;
}

void xd_sessions_set_canary_rule(struct xd_sessions *m,
				 xd_sessions_canary_fn rule, void *arg)
{
	XD_ASSERT_LOOP();
	m->canary_rule = rule;
	m->canary_arg = arg;
}

void xd_sessions_on_event(struct xd_sessions *m, xd_sessions_event_fn fn,
			  void *arg)
{
	XD_ASSERT_LOOP();
	m->on_event = fn;
	m->on_event_arg = arg;
}

void xd_sessions_each_node(struct xd_sessions *m,
			   void (*fn)(void *ctx, const char *key,
				      const char *node_id, bool canary),
			   void *ctx)
{
	struct xd_list *n;

	XD_ASSERT_LOOP();
	xd_list_for_each(n, &m->all) {
		const struct xd_session *ss =
			xd_container_of(n, struct xd_session, all);

		if (ss->client.state != XD_CLIENT_ADMITTED)
			continue;
		fn(ctx, xd_client_key(&ss->client),
		   ss->client.node_id != NULL ? ss->client.node_id : "",
		   ss->client.canary);
	}
}

static int cmp_hash(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t xd_sessions_nodes(struct xd_sessions *m)
{
	size_t cap = m->stats.sessions + 1, n = 0, distinct = 0;
	uint64_t *ids;
	struct xd_list *l;

	XD_ASSERT_LOOP();
	ids = xd_reallocarray(NULL, cap, sizeof(*ids));
	xd_list_for_each(l, &m->all) {
		const struct xd_session *ss =
			xd_container_of(l, struct xd_session, all);

		if (ss->client.state != XD_CLIENT_ADMITTED || n == cap)
			continue;
		ids[n++] = XXH3_64bits(ss->client.node_id != NULL ? ss->client.node_id : "",
				       ss->client.node_id != NULL ? strlen(ss->client.node_id) : 0);
	}
	qsort(ids, n, sizeof(*ids), cmp_hash);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || ids[i] != ids[i - 1];
	free(ids);
	return distinct;
}
