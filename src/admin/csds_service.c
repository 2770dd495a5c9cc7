/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/csds_service.h"

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/csds.h"
#include "util/address.h"
#include "util/common.h"
#include "util/loop_thread.h"
#include "util/log.h"
#include "util/text.h"
#include "util/xalloc.h"

struct xd_csds_service {
	uv_loop_t *loop;
	const struct xd_config *cfg;
	struct xd_sessions *sessions;
	struct xd_stream_handler handler;
	/* answers being built, and what they hold (call.held) */
	size_t building, building_bytes;
	unsigned long long refused[XD_CSDS_REFUSED_COUNT];
};

/* Answers handed to gRPC, and their bytes, until gRPC frees them: on
 * whatever thread drops the last reference, after the send or with the
 * call (sent_free), so counted atomically. Process-wide: a message may
 * outlive the service, at shutdown. */
static atomic_size_t sent_answers, sent_bytes;

/* One CSDS call. Requests wait in a ring until the stream may send:
 * one send in flight (docs/design.md §7), each answer computed when it
 * goes out, from the state at that moment. */
struct call {
	struct xd_csds_service *svc;
	struct xd_stream *stream;
	struct xd_csds_query pending[XD_CSDS_MAX_PENDING];
	size_t head, npending;
	unsigned long requests;
	bool ended; /* the client sent all its requests */
	/* the answer being built over the loop's turns, for `query` */
	struct xd_csds_build *build;
	struct xd_csds_query query;
	struct xd_buf out;
	size_t held; /* of the service's building_bytes, this build's */
	uv_idle_t *idle; /* while building; closed with the call */
};

/* Refusals are logged, a few a second. */
static struct xd_log_limit refusal_log = XD_LOG_LIMIT_INIT(5, 1000);

/* A local client: a unix socket, or a loopback address as gRPC names
 * its peers (util/address.c reads the name). */
static bool loopback_peer(const char *peer)
{
	struct sockaddr_storage sa;

	if (strncmp(peer, "unix:", 5) == 0)
		return true;
	return xd_address_from_peer(peer, &sa) &&
	       xd_address_is_loopback((const struct sockaddr *)&sa);
}

bool xd_csds_allowed(const struct xd_config *cfg, const char *peer,
		     const char *identity)
{
	/* with client certificates, who calls is who the certificate
	 * says, as for every xDS stream: where from does not matter */
	if (cfg->tls.client_ca == NULL)
		return loopback_peer(peer);
	if (identity == NULL)
		return false;
	for (size_t i = 0; i < cfg->ncsds_allow; i++)
		if (xd_text_glob(cfg->csds_allow[i], identity))
			return true;
	return false;
}

const char *xd_csds_refusal_name(enum xd_csds_refusal r)
{
	static const char *const names[] = {
		[XD_CSDS_REFUSED_IDENTITY] = "identity",
		[XD_CSDS_REFUSED_ANSWERS] = "answers",
		[XD_CSDS_REFUSED_MEMORY] = "memory",
		[XD_CSDS_REFUSED_TOO_LARGE] = "too_large",
	};

	XD_ASSERT_INFO((size_t)r < XD_ARRAY_LEN(names), "csds refusal %d", (int)r);
	return names[r];
}

/* Ends the call refused for `why`: said (a few a second) with who
 * asked, counted, and `msg` its status's message. */
static void refuse(struct xd_csds_service *svc, struct xd_stream *s,
		   enum xd_csds_refusal why, grpc_status_code code,
		   const char *msg)
{
	const char *peer = xd_stream_peer(s);
	const char *identity = xd_stream_identity(s);
	unsigned long dropped;

	svc->refused[why]++;
	if (xd_log_limit_take(&refusal_log, &dropped))
		xd_warn("stream %llu (%s from %.*s%s%.*s%s): refused (%s): %s%s",
			(unsigned long long)xd_stream_id(s),
			xd_stream_method(s)->name, XD_LOG_CLIP(strlen(peer)),
			peer, identity ? ", identity '" : "",
			identity ? XD_LOG_CLIP(strlen(identity)) : 0,
			identity ? identity : "", identity ? "'" : "",
			xd_csds_refusal_name(why), msg,
			dropped ? " (and more such calls, not logged)" : "");
	xd_stream_finish_logged(s, code, msg);
}

static void *csds_open(void *ctx, struct xd_stream *s)
{
	struct xd_csds_service *svc = ctx;
	const char *identity = xd_stream_identity(s);
	struct call *c;

	if (!xd_csds_allowed(svc->cfg, xd_stream_peer(s), identity)) {
		char msg[384];

		if (svc->cfg->tls.client_ca != NULL)
			snprintf(msg, sizeof(msg),
				 "%s%.200s%s may not call the client status service (csds_allow)",
				 identity ? "identity '" : "a client without an identity",
				 identity ? identity : "", identity ? "'" : "");
		else
			snprintf(msg, sizeof(msg),
				 "only peers on loopback or the unix socket may call the client status service without client certificates (tls.client_ca, csds_allow)");
		refuse(svc, s, XD_CSDS_REFUSED_IDENTITY,
		       GRPC_STATUS_PERMISSION_DENIED, msg);
		return NULL;
	}
	c = xd_calloc(1, sizeof(*c));
	c->svc = svc;
	c->stream = s;
	return c;
}

static void pump(struct call *c, struct xd_stream *s);
static void on_idle(uv_idle_t *h);

static void build_end(struct call *c)
{
	struct xd_csds_service *svc = c->svc;

	XD_ASSERT_INFO(svc->building > 0 && svc->building_bytes >= c->held,
		       "stream %llu: %zu answers building, %zu bytes, %zu of them its",
		       (unsigned long long)xd_stream_id(c->stream),
		       svc->building, svc->building_bytes, c->held);
	svc->building--;
	svc->building_bytes -= c->held;
	c->held = 0;
	xd_csds_build_free(c->build);
	c->build = NULL;
	xd_csds_query_free(&c->query);
	xd_buf_free(&c->out);
	if (c->idle != NULL)
		uv_idle_stop(c->idle);
}

/* The bytes gRPC frees, on its thread: no longer held. */
static void sent_free(void *p, size_t len)
{
	free(p);
	atomic_fetch_sub_explicit(&sent_bytes, len, memory_order_relaxed);
	atomic_fetch_sub_explicit(&sent_answers, 1, memory_order_relaxed);
}

/* What every answer under way holds now. */
static size_t held_bytes(const struct xd_csds_service *svc)
{
	return svc->building_bytes +
	       atomic_load_explicit(&sent_bytes, memory_order_relaxed);
}

/* One slice of the answer being built; sent once whole. The build may
 * hold what the answers under way leave of their bound, and no more
 * than an answer may be. */
static void build_step(struct call *c)
{
	struct xd_csds_service *svc = c->svc;
	struct xd_stream *s = c->stream;
	grpc_slice slice;
	grpc_byte_buffer *bb;
	size_t len, others = held_bytes(svc) - c->held, max, alone;
	uint8_t *data;
	int rc;

	alone = svc->cfg->csds_max_memory < XD_CSDS_RESPONSE_MAX ?
			(size_t)svc->cfg->csds_max_memory :
			XD_CSDS_RESPONSE_MAX;
	max = others < alone ? alone - others : 0;
	rc = xd_csds_build_step(c->build, &c->out,
				uv_hrtime() + XD_CSDS_SLICE_NS, max);
	svc->building_bytes -= c->held;
	c->held = xd_csds_build_bytes(c->build) + c->out.len;
	svc->building_bytes += c->held;
	if (rc == 0) {
		if (c->idle == NULL) {
			c->idle = xd_malloc(sizeof(*c->idle));
			uv_idle_init(c->svc->loop, c->idle);
			c->idle->data = c;
		}
		if (!uv_is_active((uv_handle_t *)c->idle))
			uv_idle_start(c->idle, on_idle);
		return;
	}
	data = xd_buf_steal(&c->out, &len);
	build_end(c);
	if (!xd_stream_can_send(s)) {
		/* ended meanwhile (a refused request): nothing goes out */
		free(data);
		return;
	}
	if (rc < 0) {
		/* alone, or because of the answers under way */
		bool alone_over = max == alone;
		char msg[256];

		free(data);
		if (alone_over)
			snprintf(msg, sizeof(msg),
				 "the answer would exceed %zu KiB (csds_max_memory); narrow node_matchers or set exclude_resource_contents",
				 alone >> 10);
		else
			snprintf(msg, sizeof(msg),
				 "the client status answers under way would hold more than %zu KiB together with this one (csds_max_memory); try again when they are sent, or narrow node_matchers or set exclude_resource_contents",
				 alone >> 10);
		refuse(svc, s,
		       alone_over ? XD_CSDS_REFUSED_TOO_LARGE : XD_CSDS_REFUSED_MEMORY,
		       GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
		return;
	}
	xd_debug("stream %llu: %s answered (%zu bytes)",
		 (unsigned long long)xd_stream_id(s), xd_stream_method(s)->name,
		 len);
	/* the slice takes the bytes over, and they count as held until
	 * gRPC frees them; an empty answer has none */
	if (data != NULL) {
		atomic_fetch_add_explicit(&sent_answers, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&sent_bytes, len, memory_order_relaxed);
	}
	slice = data != NULL ? grpc_slice_new_with_len(data, len, sent_free) :
			       grpc_empty_slice();
	bb = grpc_raw_byte_buffer_create(&slice, 1);
	grpc_slice_unref(slice);
	xd_stream_send(s, bb);
}

static void on_idle(uv_idle_t *h)
{
	struct call *c = h->data;

	XD_ASSERT_INFO(c->build != NULL, "stream %llu",
		       (unsigned long long)xd_stream_id(c->stream));
	build_step(c);
}

/* Starts the next answer if one is due and the stream may send; ends
 * the call once the client is done and everything is answered. */
static void pump(struct call *c, struct xd_stream *s)
{
	if (c->build != NULL || !xd_stream_can_send(s))
		return;
	if (c->npending == 0) {
		if (!c->ended)
			return;
		if (xd_stream_method(s)->unary && c->requests == 0)
			xd_stream_finish(s, GRPC_STATUS_INVALID_ARGUMENT,
					 "FetchClientStatus needs a request");
		else
			xd_stream_finish(s, GRPC_STATUS_OK, "");
		return;
	}
	if (c->svc->building +
		    atomic_load_explicit(&sent_answers, memory_order_relaxed) >=
	    c->svc->cfg->csds_max_answers) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "%llu client status answers are being built or sent already (csds_max_answers); try again when they are done",
			 (unsigned long long)c->svc->cfg->csds_max_answers);
		refuse(c->svc, s, XD_CSDS_REFUSED_ANSWERS,
		       GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
		return;
	}
	c->query = c->pending[c->head];
	c->head = (c->head + 1) % XD_CSDS_MAX_PENDING;
	c->npending--;
	c->svc->building++;
	c->build = xd_csds_build_new(c->svc->sessions, &c->query);
	build_step(c);
}

static void csds_request(void *st, struct xd_stream *s, const uint8_t *data,
			 size_t len)
{
	struct call *c = st;
	struct xd_csds_query q;
	char why[256];

	/* the stream reads nothing after the client's half-close */
	XD_ASSERT_INFO(!c->ended, "stream %llu (%s from %s)",
		       (unsigned long long)xd_stream_id(s),
		       xd_stream_method(s)->name, xd_stream_peer(s));
	c->requests++;
	if (xd_stream_method(s)->unary && c->requests > 1) {
		xd_stream_finish(s, GRPC_STATUS_INVALID_ARGUMENT,
				 "FetchClientStatus takes one request");
		return;
	}
	if (xd_csds_query_parse(&q, data, len, why, sizeof(why)) != 0) {
		xd_stream_finish(s, GRPC_STATUS_INVALID_ARGUMENT, why);
		return;
	}
	if (c->npending == XD_CSDS_MAX_PENDING) {
		xd_csds_query_free(&q);
		snprintf(why, sizeof(why),
			 "%d requests already wait for their answers; read them first",
			 XD_CSDS_MAX_PENDING);
		xd_stream_finish(s, GRPC_STATUS_RESOURCE_EXHAUSTED, why);
		return;
	}
	c->pending[(c->head + c->npending) % XD_CSDS_MAX_PENDING] = q;
	c->npending++;
	pump(c, s);
}

static void csds_send_done(void *st, struct xd_stream *s)
{
	pump(st, s);
}

static void csds_end(void *st, struct xd_stream *s)
{
	struct call *c = st;

	c->ended = true;
	pump(c, s);
}

static void idle_closed(uv_handle_t *h)
{
	free(h);
}

static void csds_close(void *st, struct xd_stream *s XD_UNUSED)
{
	struct call *c = st;

	if (c->build != NULL)
		build_end(c);
	if (c->idle != NULL)
		uv_close((uv_handle_t *)c->idle, idle_closed);
	for (size_t i = 0; i < c->npending; i++)
		xd_csds_query_free(
			&c->pending[(c->head + i) % XD_CSDS_MAX_PENDING]);
	free(c);
}

struct xd_csds_service *xd_csds_service_new(uv_loop_t *loop,
					    const struct xd_config *cfg,
					    struct xd_sessions *sessions)
{
	struct xd_csds_service *svc = xd_calloc(1, sizeof(*svc));

	svc->loop = loop;
	svc->cfg = cfg;
	svc->sessions = sessions;
	svc->handler.open = csds_open;
	svc->handler.on_request = csds_request;
	svc->handler.on_send_done = csds_send_done;
	svc->handler.on_close = csds_close;
	svc->handler.on_end = csds_end;
	svc->handler.ctx = svc;
	return svc;
}

void xd_csds_service_free(struct xd_csds_service *svc)
{
	if (svc == NULL)
		return;
	/* every call closed first (the server's streams are gone) */
	XD_ASSERT_INFO(svc->building == 0, "%zu csds answers building",
		       svc->building);
	free(svc);
}

void xd_csds_service_stats(const struct xd_csds_service *svc,
			   struct xd_csds_stats *out)
{
	XD_ASSERT_LOOP();
	out->answers = svc->building +
		       atomic_load_explicit(&sent_answers, memory_order_relaxed);
	out->bytes = held_bytes(svc);
	memcpy(out->refused, svc->refused, sizeof(out->refused));
}

const struct xd_stream_handler *
xd_csds_service_handler(struct xd_csds_service *svc)
{
	return &svc->handler;
}
