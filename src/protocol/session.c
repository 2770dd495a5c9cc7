#include "protocol/session.h"

#include <grpc/byte_buffer.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/authorize.h"
#include "protocol/body.h"
#include "protocol/derived.h"
#include "protocol/node.h"
#include "protocol/request.h"
#include "protocol/sequence.h"
#include "protocol/sub.h"
#include "util/bucket.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "xds/message.h"

/* Sessions pumped per loop iteration when a snapshot change fans out. */
#define PUMP_BATCH 256
/* How often sessions in an EDS wait (rule A2, sequence.h) look again. */
#define EDS_WAIT_TICK_MS 100

/* A type xdsd does not serve, asked for on an aggregated stream: an
 * empty table of its URL, served like any other (docs/protocol.md §8.1). */
struct unknown_type {
	struct xd_table *table; /* NULL: a free slot */
	struct xd_sub sub;
};

/* A list collection type (rule X3), asked for on an aggregated stream:
 * its subscription, and the table it is served from, the snapshot's as
 * the stream's identity may see it (NULL until it is asked for). */
struct coll_type {
	struct xd_table *table;
	struct xd_sub sub;
};

struct xd_session {
	struct xd_sessions *mgr;
	struct xd_stream *stream;
	const struct xd_method *method;

	bool have_node;
	char *node_id, *node_cluster;
	/* for operators: locality and user agent (clipped), and since when */
	char *region, *zone, *sub_zone, *ua_name, *ua_version;
	int64_t since_ms;       /* Unix ms */
	uint64_t opened_mono_ms;
	bool wrapped; /* SotW resources wrapped in Resource (rule L2) */
	bool ttl;     /* the node takes TTLs (rule L1) */
	uv_timer_t *beat_timer; /* the next heartbeat (rule L1), once needed */
	struct xd_watch watch;
	struct xd_snapshot *snap; /* the target; NULL until one exists */

	struct xd_sub subs[XD_RTYPE_COUNT];
	struct unknown_type unknown[XD_SESSION_MAX_UNKNOWN];
	struct coll_type colls[XD_CTYPE_COUNT];
	uint64_t next_nonce;

	/* endpoints waiting for the client's subscription (rule A2) */
	struct xd_eds_wait eds_wait;

	struct xd_bucket requests; /* max_requests_per_second */

	struct xd_list all;     /* in the manager's list of every session */
	struct xd_list queued;  /* in the manager's pump queue */
	struct xd_list waiting; /* in the manager's EDS-wait list */
};

struct xd_sessions {
	uv_loop_t *loop;
	struct xd_cache *cache;
	enum xd_node_key node_key;
	const struct xd_config *cfg;
	struct xd_stream_handler handler;
	uv_idle_t pump_idle;
	uv_timer_t wait_timer;
	struct xd_list all;     /* every session, oldest first */
	struct xd_list queue;   /* sessions to pump, oldest first */
	struct xd_list waiting; /* sessions in an EDS wait */
	struct xd_sessions_stats stats;
	int closing; /* handles whose close callback is still due */
};

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
					   (ss)->node_id,                 \
					   (ss)->node_cluster,            \
					   xd_stream_identity((ss)->stream)}), \
		     __VA_ARGS__)

/* A NACK's message is what an operator needs most: it gets more room. */
#define NACK_LOG_MAX 1024

static const char *tname(enum xd_rtype t)
{
	return xd_rtype_info(t)->service;
}

/* A collection type in logs and for operators: its snapshot section. */
static const char *cname(int c)
{
	return xd_ctype_info((enum xd_ctype)c)->snapshot_key;
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

		if (ss->eds_wait.state == XD_EDS_WAIT_RUNNING &&
		    now >= ss->eds_wait.until)
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

/* The collection tables of the types asked for, from ss->snap as the
 * stream's identity may see them (derived.h; a view is shared, and
 * stays the same table while the snapshot does). */
static void follow_collections(struct xd_session *ss)
{
	for (int c = 0; c < XD_CTYPE_COUNT; c++) {
		struct coll_type *ct = &ss->colls[c];

		if (!xd_sub_active(&ct->sub))
			continue;
		xd_table_unref(ct->table);
		ct->table = ss->snap == NULL ? NULL :
			xd_derived_view(xd_snapshot_collection(ss->snap,
							       (enum xd_ctype)c),
					xd_stream_identity(ss->stream));
	}
}

/*
 * Follows the cache: the snapshot serving this node now, as the stream's
 * identity may see it (derived.h: resources it may not be served do not
 * exist for it). ss->snap is that view; its base is what the cache gave.
 */
static void refresh_snapshot(struct xd_session *ss)
{
	struct xd_snapshot *now;
	const char *key;

	if (!ss->have_node)
		return;
	key = ss->mgr->node_key == XD_NODE_KEY_ID ? ss->node_id : ss->node_cluster;
	now = xd_cache_get(ss->mgr->cache, key);
	if (now == (ss->snap != NULL ? xd_snapshot_base(ss->snap) : NULL))
		return;
	xd_snapshot_unref(ss->snap);
	ss->snap = now != NULL ?
		xd_derived_snapshot_view(now, xd_stream_identity(ss->stream)) :
		NULL;
	follow_collections(ss);
	if (now != NULL)
		SLOG(XD_LOG_DEBUG, ss, "serving snapshot '%s'",
		     xd_snapshot_key(now));
}

/* ---------------- sending ---------------- */

static void send_bytes(struct xd_session *ss, enum xd_rtype type,
		       grpc_slice body, uint64_t nonce)
{
	struct xd_sessions_stats *st = &ss->mgr->stats;
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

	st->responses++;
	st->response_bytes += bytes;
	st->types[type].responses++;
	st->types[type].response_bytes += bytes;
	bb = grpc_raw_byte_buffer_create(parts, 2); /* takes its own refs */
	grpc_slice_unref(tail);
	xd_stream_send(ss->stream, bb);
}

/* TTLs go in Resource: in SotW only to clients that take it wrapped
 * (rules L1, L2). */
static enum xd_form form_of(const struct xd_session *ss)
{
	if (ss->method->delta)
		return ss->ttl ? XD_FORM_DELTA_TTL : XD_FORM_DELTA;
	if (!ss->wrapped)
		return XD_FORM_SOTW;
	return ss->ttl ? XD_FORM_SOTW_TTL : XD_FORM_SOTW_WRAPPED;
}

/* Sends a body that `sub` (of `table`) has due: the one place a
 * response gets its nonce. */
static void send_due(struct xd_session *ss, struct xd_sub *sub,
		     struct xd_table *table, struct xd_body *body,
		     const char *label)
{
	uint64_t nonce = ++ss->next_nonce, now = xd_mono_ms();

	xd_sub_sent(sub, table, nonce, now);
	if (body->refreshes_ttl)
		sub->ttl_refreshed_ms = now;
	SLOG(XD_LOG_DEBUG, ss,
	     "sending %.*s version %s nonce %llu: %zu resources, %zu missing, %zu removed",
	     XD_LOG_CLIP(strlen(label)), label, xd_table_version(table),
	     (unsigned long long)nonce, body->nresources, body->nmissing,
	     body->nremoved);
	send_bytes(ss, xd_table_type(table), body->slice, nonce);
}

/* Types xdsd does not serve go first: they never wait for others. */
static bool pump_unknown(struct xd_session *ss)
{
	for (int i = 0; i < XD_SESSION_MAX_UNKNOWN; i++) {
		struct unknown_type *u = &ss->unknown[i];
		struct xd_body *b;

		if (u->table == NULL)
			continue;
		/* SotW: one empty response, as for a type sent whole */
		b = xd_sub_next(&u->sub, u->table, form_of(ss),
				!ss->method->delta);
		if (b == NULL)
			continue;
		send_due(ss, &u->sub, u->table, b, xd_table_type_url(u->table));
		xd_body_unref(b);
		return true;
	}
	return false;
}

/*
 * List collections (rule X3) go once everything else is settled: the
 * sequencer has nothing to send and nothing in flight. Make before break
 * (rule A2) then holds for their inline members too, which refer to
 * what the types before them carry; a collection of locators costs one
 * round trip more at most, before the client asks for its members.
 */
static bool pump_collections(struct xd_session *ss)
{
	for (int c = 0; c < XD_CTYPE_COUNT; c++) {
		struct coll_type *ct = &ss->colls[c];
		struct xd_body *b;

		if (ct->table == NULL)
			continue;
		/* SotW: what changed, as for routes (rule S9) */
		b = xd_sub_next(&ct->sub, ct->table, form_of(ss), false);
		if (b == NULL)
			continue;
		send_due(ss, &ct->sub, ct->table, b, cname(c));
		xd_body_unref(b);
		return true;
	}
	return false;
}

/* Keeps the manager's wait list in step with the sequencer's EDS wait:
 * a session is on it while its wait runs, so the tick pumps it again. */
static void follow_eds_wait(struct xd_session *ss, enum xd_seq_eds eds)
{
	switch (eds) {
	case XD_SEQ_EDS_UNTOUCHED:
		break;
	case XD_SEQ_EDS_WAITING:
		wait_list_add(ss);
		break;
	case XD_SEQ_EDS_LATE:
		SLOG(XD_LOG_DEBUG, ss, "%s", "clusters' endpoints not subscribed in time; going on");
		/* fall through */
	case XD_SEQ_EDS_OVER:
		wait_list_remove(ss);
		break;
	}
}

/*
 * No snapshot serves this node: its key has none and there is no
 * default. The client is told so (and retries later, as xDS clients
 * do), and the operator reads why in the log, rather than both waiting
 * on a stream that never says anything.
 */
static void end_without_snapshot(struct xd_session *ss)
{
	bool by_id = ss->mgr->node_key == XD_NODE_KEY_ID;
	const char *key = by_id ? ss->node_id : ss->node_cluster;
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "no snapshot serves node %s '%.200s': xdsd has no snapshot '%.200s' and no default snapshot",
		 by_id ? "id" : "cluster", key, key[0] ? key : XD_CACHE_DEFAULT_KEY);
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
	uint64_t now = xd_mono_ms(), next = 0, due;

	if (!ss->ttl)
		return;
	/* the types, then the list collections (rule X3) */
	for (int t = 0; t < XD_RTYPE_COUNT + XD_CTYPE_COUNT; t++) {
		struct xd_sub *sub = t < XD_RTYPE_COUNT ?
					     &ss->subs[t] :
					     &ss->colls[t - XD_RTYPE_COUNT].sub;
		const char *label = t < XD_RTYPE_COUNT ?
					    tname((enum xd_rtype)t) :
					    cname(t - XD_RTYPE_COUNT);
		struct xd_body *b = xd_sub_heartbeat(sub, form_of(ss), now, &due);

		if (b != NULL) {
			SLOG(XD_LOG_DEBUG, ss, "heartbeat of %s: %zu resources",
			     label, b->nresources);
			send_due(ss, sub, xd_sub_held(sub), b, label);
			xd_body_unref(b);
			return;
		}
		if (due != 0 && (next == 0 || due < next))
			next = due;
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
	if (ss->have_node && ss->snap == NULL) {
		end_without_snapshot(ss);
		return;
	}
	if (pump_unknown(ss) || ss->snap == NULL)
		return;
	mode.aggregated = ss->method->aggregated;
	mode.delta = ss->method->delta;
	mode.type = ss->method->type;
	mode.form = form_of(ss);
	xd_seq_next(ss->subs, ss->snap, &mode, uv_now(ss->mgr->loop),
		    &ss->eds_wait, &st);
	follow_eds_wait(ss, st.eds);
	if (st.action == XD_SEQ_IDLE && !pump_collections(ss))
		pump_heartbeats(ss);
	if (st.action != XD_SEQ_SEND)
		return;
	send_due(ss, &ss->subs[st.type], st.table, st.body, tname(st.type));
	xd_seq_step_clear(&st);
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

/* Every name the stream subscribes to, all types together. */
static size_t names_subscribed(const struct xd_session *ss)
{
	size_t n = 0;

	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		n += xd_nameset_count(ss->subs[t].want.set);
	for (int i = 0; i < XD_SESSION_MAX_UNKNOWN; i++)
		if (ss->unknown[i].table != NULL)
			n += xd_nameset_count(ss->unknown[i].sub.want.set);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		n += xd_nameset_count(ss->colls[c].sub.want.set);
	return n;
}

/* ---------------- requests ---------------- */

/*
 * With mTLS, whether the client's identity may speak for the node it
 * claims (authorize.h). The stream ends with PERMISSION_DENIED before
 * anything is sent when it may not.
 */
static bool authorized(struct xd_session *ss)
{
	const struct xd_config *cfg = ss->mgr->cfg;
	const char *identity = xd_stream_identity(ss->stream);
	char msg[512];

	if (cfg->nauthorize == 0)
		return true;
	if (identity != NULL &&
	    xd_authorize(cfg->authorize, cfg->nauthorize, identity, ss->node_id,
			 ss->node_cluster, NULL))
		return true;
	snprintf(msg, sizeof(msg),
		 "identity '%.200s' may not speak for node id '%.100s' cluster '%.100s'",
		 identity != NULL ? identity : "(none)", ss->node_id,
		 ss->node_cluster);
	SLOG(XD_LOG_WARN, ss, "%s", msg);
	xd_stream_finish_logged(ss->stream, GRPC_STATUS_PERMISSION_DENIED, msg);
	return false;
}

/* Locality and user agent are shown to operators, never acted on: a
 * bounded, NUL-free copy. */
#define NODE_TEXT_MAX 256

static char *clipped(struct xd_name n)
{
	/* xd_strndup stops at a NUL, and takes an absent field (NULL, 0) */
	return xd_strndup(n.data, n.len > NODE_TEXT_MAX ? NODE_TEXT_MAX : n.len);
}

static bool set_node(struct xd_session *ss, struct xd_span span)
{
	const struct xd_config *cfg = ss->mgr->cfg;
	struct xd_node n;
	const char *why, *key;

	if (span.len > cfg->max_node_size) {
		end_over_limit(ss, "the node is %u bytes; the limit is %llu (max_node_size)",
			       span.len, (unsigned long long)cfg->max_node_size);
		return false;
	}
	if (xd_node_parse(&n, span.data, span.len, &why) != 0) {
		xd_stream_finish(ss->stream, GRPC_STATUS_INVALID_ARGUMENT, why);
		return false;
	}
	if (n.id.len > cfg->max_node_id_size ||
	    n.cluster.len > cfg->max_node_id_size) {
		end_over_limit(ss, "the node %s is %zu bytes; the limit is %llu (max_node_id_size)",
			       n.id.len > cfg->max_node_id_size ? "id" : "cluster",
			       n.id.len > cfg->max_node_id_size ? n.id.len : n.cluster.len,
			       (unsigned long long)cfg->max_node_id_size);
		return false;
	}
	if (ss->have_node) {
		/* rule S1: one node per stream */
		bool same = n.id.len == strlen(ss->node_id) &&
			    memcmp(n.id.data, ss->node_id, n.id.len) == 0 &&
			    n.cluster.len == strlen(ss->node_cluster) &&
			    memcmp(n.cluster.data, ss->node_cluster,
				   n.cluster.len) == 0;

		if (!same)
			xd_stream_finish(ss->stream, GRPC_STATUS_INVALID_ARGUMENT,
					 "the node changed on the stream");
		return same;
	}
	ss->node_id = xd_strndup(n.id.data, n.id.len);
	ss->node_cluster = xd_strndup(n.cluster.data, n.cluster.len);
	ss->region = clipped(n.region);
	ss->zone = clipped(n.zone);
	ss->sub_zone = clipped(n.sub_zone);
	ss->ua_name = clipped(n.user_agent_name);
	ss->ua_version = clipped(n.user_agent_version);
	if (!authorized(ss))
		return false;
	ss->wrapped = (n.features & XD_FEATURE_RESOURCE_IN_SOTW) != 0;
	ss->ttl = (n.features & XD_FEATURE_RESOURCE_TTL) != 0;
	ss->have_node = true;
	key = ss->mgr->node_key == XD_NODE_KEY_ID ? ss->node_id : ss->node_cluster;
	xd_cache_watch(ss->mgr->cache, key[0] != '\0' ? key : XD_CACHE_DEFAULT_KEY,
		       &ss->watch);
	SLOG(XD_LOG_DEBUG, ss, "node cluster '%.*s'%s%s",
	     XD_LOG_CLIP(strlen(ss->node_cluster)), ss->node_cluster,
	     ss->wrapped ? ", resources wrapped" : "",
	     ss->ttl ? ", TTLs taken" : "");
	return true;
}

/* The slot of an unknown type URL, taken on first use; NULL (and the
 * stream ended) when the stream already has all it may have. */
static struct unknown_type *unknown_slot(struct xd_session *ss,
					 struct xd_name url)
{
	struct unknown_type *free_slot = NULL;

	for (int i = 0; i < XD_SESSION_MAX_UNKNOWN; i++) {
		struct unknown_type *u = &ss->unknown[i];
		const char *have;

		if (u->table == NULL) {
			if (free_slot == NULL)
				free_slot = u;
			continue;
		}
		have = xd_table_type_url(u->table);
		if (strlen(have) == url.len && memcmp(have, url.data, url.len) == 0)
			return u;
	}
	if (free_slot == NULL) {
		xd_stream_finish(ss->stream, GRPC_STATUS_INVALID_ARGUMENT,
				 "too many unknown type URLs on one stream");
		return NULL;
	}
	free_slot->table = xd_table_empty_unknown(url.data, url.len);
	xd_sub_init(&free_slot->sub, xd_stream_id(ss->stream),
		    xd_table_type_url(free_slot->table));
	SLOG(XD_LOG_WARN, ss, "type '%.*s' is not served; answering with no resources",
	     XD_LOG_CLIP(url.len), url.data);
	return free_slot;
}

/* Where a request goes: one type's subscription on this stream, the
 * table it is answered from, and how that type behaves. */
struct route {
	struct xd_sub *sub;
	struct xd_table *current; /* may be NULL before a snapshot */
	bool wildcard_ok, full_state;
	const char *label;        /* "CDS", or an unknown type's URL */
	enum xd_rtype type;       /* XD_RTYPE_COUNT: a type xdsd does not serve */
};

/* A list collection type (rule X3): served from the snapshot's
 * collections, by name only (no wildcard), in SotW as routes are (not
 * full state: a client names the collections it wants). */
static void route_collection(struct xd_session *ss, enum xd_ctype c,
			     struct route *out)
{
	struct coll_type *ct = &ss->colls[c];

	refresh_snapshot(ss);
	if (ct->table == NULL && ss->snap != NULL)
		ct->table = xd_derived_view(xd_snapshot_collection(ss->snap, c),
					    xd_stream_identity(ss->stream));
	out->sub = &ct->sub;
	out->current = ct->table;
	out->wildcard_ok = false;
	out->full_state = false;
	out->label = cname(c);
	out->type = XD_RTYPE_COUNT;
}

/*
 * Finds the type a request is about (rule T3). Returns false, the stream
 * ended with a status, when it belongs to none this stream may serve.
 */
static bool route_request(struct xd_session *ss, const struct xd_request *r,
			  struct route *out)
{
	const struct xd_method *m = ss->method;
	enum xd_rtype t = m->type;
	char msg[512];

	if (!m->aggregated) {
		if (r->type_url.len > 0 &&
		    (xd_rtype_from_url(r->type_url.data, r->type_url.len, &t) != 0 ||
		     t != m->type)) {
			snprintf(msg, sizeof(msg),
				 "type_url '%.*s' does not belong to %s (expected %s)",
				 (int)(r->type_url.len > 200 ? 200 : r->type_url.len),
				 r->type_url.data, m->name,
				 xd_rtype_info(m->type)->type_url);
			xd_stream_finish(ss->stream, GRPC_STATUS_INVALID_ARGUMENT, msg);
			return false;
		}
	} else if (r->type_url.len == 0) {
		xd_stream_finish(ss->stream, GRPC_STATUS_INVALID_ARGUMENT,
				 "type_url is required on the aggregated service");
		return false;
	} else if (xd_rtype_from_url(r->type_url.data, r->type_url.len, &t) != 0) {
		struct unknown_type *u;
		enum xd_ctype c;

		if (xd_ctype_from_url(r->type_url.data, r->type_url.len, &c) == 0) {
			route_collection(ss, c, out);
			return true;
		}
		u = unknown_slot(ss, r->type_url);
		if (u == NULL)
			return false;
		out->sub = &u->sub;
		out->current = u->table;
		out->wildcard_ok = false;
		out->full_state = true; /* SotW: one empty response */
		out->label = xd_table_type_url(u->table);
		out->type = XD_RTYPE_COUNT;
		return true;
	}
	refresh_snapshot(ss);
	out->sub = &ss->subs[t];
	out->current = ss->snap ? xd_snapshot_table(ss->snap, t) : NULL;
	out->wildcard_ok = xd_rtype_info(t)->wildcard_ok;
	out->full_state = xd_rtype_info(t)->full_state;
	out->label = tname(t);
	out->type = t;
	return true;
}

/* The node of the stream's first request (rule S1). False: the stream
 * ended with a status. */
static bool accept_node(struct xd_session *ss, const struct xd_request *r)
{
	if (r->node.len > 0)
		return set_node(ss, r->node);
	if (ss->have_node)
		return true;
	/* rule S1 wants the node first; serve such a client the default
	 * snapshot rather than nothing. */
	SLOG(XD_LOG_WARN, ss, "%s", "first request without a node; serving the default snapshot");
	return set_node(ss, (struct xd_span){NULL, 0});
}

/*
 * An ACK of content that began to be served while the client was
 * connected: how long the change took to reach it (each table once per
 * stream; the first sync of a new client is not a convergence).
 */
static void observe_convergence(struct xd_session *ss, const struct route *rt)
{
	struct xd_sessions_stats *st = &ss->mgr->stats;
	struct xd_sub *sub = rt->sub;
	uint64_t published, now = xd_mono_ms();
	struct xd_convergence_sample *sample;
	double seconds;

	if (rt->type == XD_RTYPE_COUNT || xd_sub_held(sub) == NULL ||
	    xd_table_id(xd_sub_held(sub)) == sub->converged_id)
		return;
	sub->converged_id = xd_table_id(xd_sub_held(sub));
	published = xd_table_published(xd_sub_held(sub));
	if (published == 0 || published < ss->opened_mono_ms || now < published)
		return;
	seconds = (double)(now - published) / 1000.0;
	xd_histogram_observe(&st->types[rt->type].convergence, seconds);
	sample = &st->recent[st->recent_next];
	sample->at_ms = xd_wall_ms();
	sample->seconds = (float)seconds;
	sample->type = rt->type;
	st->recent_next = (st->recent_next + 1) % XD_SESSIONS_RECENT;
	if (st->nrecent < XD_SESSIONS_RECENT)
		st->nrecent++;
}

/* One line per request handled (tests count them: proto_env.c). */
static void log_verdict(struct xd_session *ss, const struct xd_request *r,
			const struct route *rt, enum xd_sub_verdict v)
{
	int label_len = XD_LOG_CLIP(strlen(rt->label));

	switch (v) {
	case XD_SUB_STALE:
		SLOG(XD_LOG_DEBUG, ss, "%.*s request with stale nonce '%.*s'",
		     label_len, rt->label, XD_LOG_CLIP(r->nonce.len), r->nonce.data);
		break;
	case XD_SUB_NACK:
		ss->mgr->stats.nacks++;
		ss->mgr->stats.types[rt->type].nacks++;
		SLOG(XD_LOG_WARN, ss, "NACK of %.*s version %s: %.*s", label_len,
		     rt->label,
		     xd_sub_held(rt->sub) ? xd_table_version(xd_sub_held(rt->sub)) : "",
		     (int)(r->error_message.len > NACK_LOG_MAX ? NACK_LOG_MAX :
								  r->error_message.len),
		     r->error_message.data);
		break;
	case XD_SUB_ACK:
		ss->mgr->stats.acks++;
		ss->mgr->stats.types[rt->type].acks++;
		observe_convergence(ss, rt);
		SLOG(XD_LOG_DEBUG, ss, "ACK of %.*s version %s", label_len,
		     rt->label, xd_table_version(xd_sub_held(rt->sub)));
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
	struct route rt;
	enum xd_sub_verdict v;
	const char *why;

	const struct xd_config *cfg = ss->mgr->cfg;

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
	if (!accept_node(ss, &r) || !route_request(ss, &r, &rt))
		goto out;
	if (ss->method->delta)
		v = xd_sub_delta_request(rt.sub, &r, rt.wildcard_ok, rt.current,
					 xd_wall_ms());
	else
		v = xd_sub_sotw_request(rt.sub, &r, rt.wildcard_ok,
					rt.full_state, rt.current, xd_wall_ms());
	log_verdict(ss, &r, &rt, v);
	if (names_subscribed(ss) > cfg->max_names_per_stream) {
		end_over_limit(ss, "the stream subscribes to %zu names; the limit is %llu (max_names_per_stream)",
			       names_subscribed(ss),
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
	struct xd_session *ss = xd_calloc(1, sizeof(*ss));

	ss->mgr = m;
	ss->stream = stream;
	ss->method = xd_stream_method(stream);
	ss->watch.changed = on_snapshot_changed;
	xd_list_init(&ss->watch.link);
	xd_list_init(&ss->queued);
	xd_list_init(&ss->waiting);
	xd_list_push_back(&m->all, &ss->all);
	ss->since_ms = xd_wall_ms();
	ss->opened_mono_ms = xd_mono_ms();
	m->stats.streams[ss->method - xd_methods]++;
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_sub_init(&ss->subs[t], xd_stream_id(stream),
			    tname((enum xd_rtype)t));
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		xd_sub_init(&ss->colls[c].sub, xd_stream_id(stream), cname(c));
	xd_bucket_init(&ss->requests, m->cfg->max_request_burst, uv_now(m->loop));
	m->stats.sessions++;
	return ss;
}

static void on_send_done(void *st, struct xd_stream *stream XD_UNUSED)
{
	pump(st);
}

static void on_close(void *st, struct xd_stream *stream XD_UNUSED)
{
	struct xd_session *ss = st;

	xd_list_remove(&ss->queued);
	xd_list_remove(&ss->all);
	wait_list_remove(ss);
	if (ss->beat_timer != NULL) /* it goes on its own; ss now */
		uv_close((uv_handle_t *)ss->beat_timer, free_handle);
	xd_cache_unwatch(&ss->watch);
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_sub_clear(&ss->subs[t]);
	for (int i = 0; i < XD_SESSION_MAX_UNKNOWN; i++) {
		if (ss->unknown[i].table != NULL)
			xd_sub_clear(&ss->unknown[i].sub);
		xd_table_unref(ss->unknown[i].table);
	}
	for (int c = 0; c < XD_CTYPE_COUNT; c++) {
		xd_sub_clear(&ss->colls[c].sub);
		xd_table_unref(ss->colls[c].table);
	}
	xd_snapshot_unref(ss->snap);
	free(ss->node_id);
	free(ss->node_cluster);
	free(ss->region);
	free(ss->zone);
	free(ss->sub_zone);
	free(ss->ua_name);
	free(ss->ua_version);
	ss->mgr->stats.streams[ss->method - xd_methods]--;
	ss->mgr->stats.sessions--;
	free(ss);
}

/* ---------------- manager ---------------- */

struct xd_sessions *xd_sessions_new(uv_loop_t *loop, struct xd_cache *cache,
				    const struct xd_config *cfg)
{
	struct xd_sessions *m = xd_calloc(1, sizeof(*m));

	m->loop = loop;
	m->cache = cache;
	m->node_key = cfg->node_key;
	m->cfg = cfg;
	m->handler.open = on_open;
	m->handler.on_request = on_request;
	m->handler.on_send_done = on_send_done;
	m->handler.on_close = on_close;
	m->handler.ctx = m;
	xd_list_init(&m->all);
	xd_list_init(&m->queue);
	xd_list_init(&m->waiting);
	m->stats.streams = xd_calloc(xd_method_count, sizeof(size_t));
	for (int t = 0; t <= XD_RTYPE_COUNT; t++)
		xd_histogram_init(&m->stats.types[t].convergence,
				  xd_histogram_push_bounds,
				  xd_histogram_push_nbounds);
	uv_idle_init(loop, &m->pump_idle);
	m->pump_idle.data = m;
	uv_timer_init(loop, &m->wait_timer);
	m->wait_timer.data = m;
	return m;
}

/* libuv runs close callbacks in no order one may rely on: the manager
 * goes with the last of its handles. */
static void free_after_close(uv_handle_t *h)
{
	struct xd_sessions *m = h->data;

	if (--m->closing == 0) {
		free(m->stats.streams);
		free(m);
	}
}

void xd_sessions_free(struct xd_sessions *m)
{
	if (m == NULL)
		return;
	m->closing = 2;
	uv_close((uv_handle_t *)&m->pump_idle, free_after_close);
	uv_close((uv_handle_t *)&m->wait_timer, free_after_close);
}

const struct xd_stream_handler *xd_sessions_handler(struct xd_sessions *m)
{
	return &m->handler;
}

const struct xd_sessions_stats *xd_sessions_stats(const struct xd_sessions *m)
{
	return &m->stats;
}

static void view_type(struct xd_client *c, const struct xd_sub *sub,
		      const struct xd_table *current, const char *label)
{
	struct xd_client_type *ct = &c->types[c->ntypes++];

	ct->type_url = current != NULL ? xd_table_type_url(current) : NULL;
	ct->label = label;
	ct->sub = sub;
	ct->current = current;
	ct->sync = xd_sub_sync(sub, current);
}

static void view(const struct xd_session *ss, struct xd_client *c)
{
	memset(c, 0, sizeof(*c));
	c->stream_id = xd_stream_id(ss->stream);
	c->method = ss->method;
	c->peer = xd_stream_peer(ss->stream);
	c->identity = xd_stream_identity(ss->stream);
	c->since_ms = ss->since_ms;
	c->has_node = ss->have_node;
	c->node_id = ss->node_id ? ss->node_id : "";
	c->node_cluster = ss->node_cluster ? ss->node_cluster : "";
	c->region = ss->region ? ss->region : "";
	c->zone = ss->zone ? ss->zone : "";
	c->sub_zone = ss->sub_zone ? ss->sub_zone : "";
	c->user_agent_name = ss->ua_name ? ss->ua_name : "";
	c->user_agent_version = ss->ua_version ? ss->ua_version : "";
	c->snapshot = ss->snap;
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_sub *sub = &ss->subs[t];

		if (!xd_sub_active(sub))
			continue;
		view_type(c, sub,
			  ss->snap ? xd_snapshot_table(ss->snap, (enum xd_rtype)t) :
				     NULL,
			  tname((enum xd_rtype)t));
		if (c->types[c->ntypes - 1].type_url == NULL)
			c->types[c->ntypes - 1].type_url =
				xd_rtype_info((enum xd_rtype)t)->type_url;
	}
	for (int k = 0; k < XD_CTYPE_COUNT; k++) {
		const struct coll_type *ct = &ss->colls[k];

		if (!xd_sub_active(&ct->sub))
			continue;
		view_type(c, &ct->sub, ct->table, cname(k));
		if (c->types[c->ntypes - 1].type_url == NULL)
			c->types[c->ntypes - 1].type_url =
				xd_ctype_info((enum xd_ctype)k)->type_url;
	}
	for (int i = 0; i < XD_SESSION_MAX_UNKNOWN; i++)
		if (ss->unknown[i].table != NULL)
			view_type(c, &ss->unknown[i].sub, ss->unknown[i].table,
				  xd_table_type_url(ss->unknown[i].table));
}

void xd_sessions_visit(struct xd_sessions *m,
		       void (*fn)(void *ctx, const struct xd_client *c),
		       void *ctx)
{
	struct xd_client c;
	struct xd_list *n;

	xd_list_for_each(n, &m->all) {
		view(xd_container_of(n, struct xd_session, all), &c);
		fn(ctx, &c);
	}
}
