/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/csds_service.h"

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
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
};

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
	if (loopback_peer(peer))
		return true;
	if (identity == NULL)
		return false;
	for (size_t i = 0; i < cfg->ncsds_allow; i++)
		if (xd_text_glob(cfg->csds_allow[i], identity))
			return true;
	return false;
}

static void *csds_open(void *ctx, struct xd_stream *s)
{
	struct xd_csds_service *svc = ctx;
	const char *peer = xd_stream_peer(s);
	const char *identity = xd_stream_identity(s);
	struct call *c;
	unsigned long dropped;

	if (!xd_csds_allowed(svc->cfg, peer, identity)) {
		char msg[384];

		snprintf(msg, sizeof(msg),
			 "%s%.200s%s may not call the client status service (csds_allow)",
			 identity ? "identity '" : "a peer without an identity",
			 identity ? identity : "", identity ? "'" : "");
		if (xd_log_limit_take(&refusal_log, &dropped))
			xd_warn("stream %llu (%s from %.*s): refused: %s%s",
				(unsigned long long)xd_stream_id(s),
				xd_stream_method(s)->name,
				XD_LOG_CLIP(strlen(peer)), peer, msg,
				dropped ? " (and more such calls, not logged)" : "");
		xd_stream_finish_logged(s, GRPC_STATUS_PERMISSION_DENIED, msg);
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
	xd_csds_build_free(c->build);
	c->build = NULL;
	xd_csds_query_free(&c->query);
	xd_buf_free(&c->out);
	if (c->idle != NULL)
		uv_idle_stop(c->idle);
}

/* One slice of the answer being built; sent once whole. */
static void build_step(struct call *c)
{
	struct xd_stream *s = c->stream;
	grpc_slice slice;
	grpc_byte_buffer *bb;
	size_t len;
	uint8_t *data;
	int rc = xd_csds_build_step(c->build, &c->out,
				    uv_hrtime() + XD_CSDS_SLICE_NS);

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
		char msg[160];

		free(data);
		snprintf(msg, sizeof(msg),
			 "the answer would exceed %u MiB; narrow node_matchers or set exclude_resource_contents",
			 XD_CSDS_RESPONSE_MAX >> 20);
		xd_stream_finish(s, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
		return;
	}
	xd_debug("stream %llu: %s answered (%zu bytes)",
		 (unsigned long long)xd_stream_id(s), xd_stream_method(s)->name,
		 len);
	/* the slice takes the bytes over; an empty answer has none */
	slice = data != NULL ? grpc_slice_new(data, len, free) :
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
	c->query = c->pending[c->head];
	c->head = (c->head + 1) % XD_CSDS_MAX_PENDING;
	c->npending--;
	c->build = xd_csds_build_new(c->svc->sessions, &c->query,
				     XD_CSDS_RESPONSE_MAX);
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
	free(svc);
}

const struct xd_stream_handler *
xd_csds_service_handler(struct xd_csds_service *svc)
{
	return &svc->handler;
}
