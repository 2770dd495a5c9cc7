/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/health_service.h"

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "transport/methods.h"
#include "util/common.h"
#include "util/list.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"
#include "wire/wire.h"

typedef Grpc__Health__V1__HealthCheckResponse__ServingStatus status_t;

/* HealthCheckRequest's one field (health.proto): the service's name. */
#define REQUEST_SERVICE 1

#define SERVING GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
#define NOT_SERVING \
	GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING
#define SERVICE_UNKNOWN \
	GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN
/* none sent yet (UNKNOWN, 0, is never sent) */
#define NONE_SENT \
	GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__UNKNOWN

struct xd_health_service {
	uv_loop_t *loop;
	struct xd_stream_handler handler;
	bool serving;
	bool stopping;
	struct xd_list watchers; /* struct call.link, Watch calls only */
	size_t nwatchers;
	/* while stopping, until every watcher was told */
	uv_timer_t *stop_timer; /* NULL: none; closed, then freed */
	void (*stop_done)(void *arg);
	void *stop_arg;
};

/* One Check or Watch call. */
struct call {
	struct xd_health_service *svc;
	struct xd_stream *stream;
	struct xd_list link; /* in svc->watchers while a Watch */
	bool watch;
	bool asked;   /* its one request came */
	bool ended;   /* the client sent all it will */
	bool known;   /* the name asked for is one xdsd serves */
	status_t sent; /* the last status sent, NONE_SENT before */
};

/* "" or the service of one of xd_methods. */
static bool known_service(const uint8_t *name, size_t nlen)
{
	size_t len, n;
	const struct xd_method *m = xd_methods(&n);
	const char *svc;

	if (nlen == 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		svc = xd_method_service(&m[i], &len);
		if (svc != NULL && len == nlen && memcmp(svc, name, len) == 0)
			return true;
	}
	return false;
}

static const char *status_name(status_t st)
{
	switch (st) {
	case SERVING:
		return "SERVING";
	case NOT_SERVING:
		return "NOT_SERVING";
	case SERVICE_UNKNOWN:
		return "SERVICE_UNKNOWN";
	default:
		return "UNKNOWN";
	}
}

/*
 * A HealthCheckRequest: the service named in *name (not terminated;
 * "" when absent). Read like every request on the listener, with the
 * wire reader over the bytes received: nothing is copied or allocated
 * for a peer's input, unknown fields are skipped as protobuf skips
 * them, and of a field repeated the last counts. Returns 0, or -1 for
 * bytes that are no such message.
 */
static int parse_request(const uint8_t *p, size_t len, const uint8_t **name,
			 size_t *nlen)
{
	const uint8_t *end = p + len;
	struct xd_wire_field f;
	int rc;

	*name = (const uint8_t *)"";
	*nlen = 0;
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number != REQUEST_SERVICE)
			continue;
		if (f.wt != XD_WT_LEN)
			return -1;
		*name = f.data;
		*nlen = f.len;
	}
	return rc;
}

/* What `c` is to be told now. */
static status_t status_of(const struct call *c)
{
	if (!c->known)
		return SERVICE_UNKNOWN;
	return c->svc->serving && !c->svc->stopping ? SERVING : NOT_SERVING;
}

static void send_status(struct call *c, status_t st)
{
	Grpc__Health__V1__HealthCheckResponse resp =
		GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
	grpc_slice slice;
	grpc_byte_buffer *bb;

	resp.status = st;
	slice = grpc_slice_malloc(
		grpc__health__v1__health_check_response__get_packed_size(&resp));
	grpc__health__v1__health_check_response__pack(
		&resp, GRPC_SLICE_START_PTR(slice));
	bb = grpc_raw_byte_buffer_create(&slice, 1);
	grpc_slice_unref(slice);
	c->sent = st;
	xd_debug("stream %llu: %s: %s",
		 (unsigned long long)xd_stream_id(c->stream),
		 xd_stream_method(c->stream)->name, status_name(st));
	xd_stream_send(c->stream, bb);
}

static void stop_timer_closed(uv_handle_t *h)
{
	free(h);
}

/* While stopping: the stop is over once every watcher holds
 * NOT_SERVING (or SERVICE_UNKNOWN), nothing of it still in flight. */
static void maybe_stopped(struct xd_health_service *svc)
{
	struct xd_list *n;
	void (*done)(void *);

	if (!svc->stopping || svc->stop_done == NULL)
		return;
	xd_list_for_each(n, &svc->watchers) {
		struct call *c = xd_container_of(n, struct call, link);

		if (!xd_stream_can_send(c->stream) || c->sent != status_of(c))
			return;
	}
	done = svc->stop_done;
	svc->stop_done = NULL;
	if (svc->stop_timer != NULL) {
		uv_close((uv_handle_t *)svc->stop_timer, stop_timer_closed);
		svc->stop_timer = NULL;
	}
	done(svc->stop_arg);
}

/* Sends what is due if the stream may send: a Check's one answer, a
 * Watch's status when it differs from the last sent. A Check ends once
 * answered. */
static void pump(struct call *c)
{
	struct xd_stream *s = c->stream;
	status_t want;

	if (!xd_stream_can_send(s))
		return;
	if (!c->asked) {
		if (c->ended)
			xd_stream_finish(s, GRPC_STATUS_INVALID_ARGUMENT,
					 c->watch ? "Watch needs a request" :
						    "Check needs a request");
		return;
	}
	want = status_of(c);
	if (!c->watch) {
		if (c->sent != NONE_SENT)
			xd_stream_finish(s, GRPC_STATUS_OK, "");
		else if (!c->known)
			/* the protocol's answer for a name not served, not
			 * a refusal of the client */
			xd_stream_finish_answer(s, GRPC_STATUS_NOT_FOUND,
						"xdsd serves no such service");
		else
			send_status(c, want);
		return;
	}
	if (c->sent != want)
		send_status(c, want);
}

static void *health_open(void *ctx, struct xd_stream *s)
{
	struct call *c = xd_calloc(1, sizeof(*c));

	c->svc = ctx;
	c->stream = s;
	c->watch = !xd_stream_method(s)->unary;
	c->sent = NONE_SENT;
	xd_list_init(&c->link);
	return c;
}

static void health_request(void *st, struct xd_stream *s, const uint8_t *data,
			   size_t len)
{
	struct call *c = st;
	const uint8_t *name;
	size_t nlen;

	if (c->asked) {
		xd_stream_finish(s, GRPC_STATUS_INVALID_ARGUMENT,
				 c->watch ? "Watch takes one request" :
					    "Check takes one request");
		return;
	}
	if (parse_request(data, len, &name, &nlen) != 0) {
		xd_stream_finish(s, GRPC_STATUS_INVALID_ARGUMENT,
				 "not a grpc.health.v1.HealthCheckRequest");
		return;
	}
	c->asked = true;
	c->known = known_service(name, nlen);
	xd_debug("stream %llu: %s of service '%.*s'%s",
		 (unsigned long long)xd_stream_id(s), xd_stream_method(s)->name,
		 XD_LOG_CLIP(nlen), (const char *)name,
		 c->known ? "" : " (not served)");
	if (c->watch) {
		xd_list_push_back(&c->svc->watchers, &c->link);
		c->svc->nwatchers++;
	}
	pump(c);
}

static void health_send_done(void *st, struct xd_stream *s XD_UNUSED)
{
	struct call *c = st;

	pump(c);
	if (c->watch)
		maybe_stopped(c->svc);
}

/* A Watch's client half-closes once it has asked: the watch goes on. */
static void health_end(void *st, struct xd_stream *s XD_UNUSED)
{
	struct call *c = st;

	c->ended = true;
	pump(c);
}

static void health_close(void *st, struct xd_stream *s XD_UNUSED)
{
	struct call *c = st;
	struct xd_health_service *svc = c->svc;

	if (xd_list_linked(&c->link)) {
		xd_list_remove(&c->link);
		(void)XD_UNREF(svc->nwatchers);
	}
	free(c);
	maybe_stopped(svc);
}

struct xd_health_service *xd_health_service_new(uv_loop_t *loop)
{
	struct xd_health_service *svc = xd_calloc(1, sizeof(*svc));

	svc->loop = loop;
	xd_list_init(&svc->watchers);
	svc->handler.open = health_open;
	svc->handler.on_request = health_request;
	svc->handler.on_send_done = health_send_done;
	svc->handler.on_close = health_close;
	svc->handler.on_end = health_end;
	svc->handler.ctx = svc;
	return svc;
}

void xd_health_service_free(struct xd_health_service *svc)
{
	if (svc == NULL)
		return;
	/* every call closed first (the server's streams are gone), and a
	 * stop's timer with them */
	XD_ASSERT_INFO(xd_list_empty(&svc->watchers) && svc->stop_timer == NULL,
		       "%zu health watchers", svc->nwatchers);
	free(svc);
}

const struct xd_stream_handler *
xd_health_service_handler(struct xd_health_service *svc)
{
	return &svc->handler;
}

/* Every watcher is told the status it is due now. */
static void tell_watchers(struct xd_health_service *svc)
{
	struct xd_list *n, *tmp;

	/* a send that fails ends its stream, which stays listed until
	 * its close: safe to walk on */
	xd_list_for_each_safe(n, tmp, &svc->watchers)
		pump(xd_container_of(n, struct call, link));
}

void xd_health_service_set_serving(struct xd_health_service *svc,
				   bool serving)
{
	XD_ASSERT_LOOP();
	if (svc->stopping || svc->serving == serving)
		return;
	svc->serving = serving;
	xd_info("gRPC health: %s -> %s (%zu watcher%s told)",
		serving ? "NOT_SERVING" : "SERVING",
		serving ? "SERVING" : "NOT_SERVING", svc->nwatchers,
		svc->nwatchers == 1 ? "" : "s");
	tell_watchers(svc);
}

bool xd_health_service_serving(const struct xd_health_service *svc)
{
	return svc->serving && !svc->stopping;
}

size_t xd_health_service_watchers(const struct xd_health_service *svc)
{
	return svc->nwatchers;
}

static void stop_timeout(uv_timer_t *t)
{
	struct xd_health_service *svc = t->data;
	void (*done)(void *) = svc->stop_done;

	xd_info("gRPC health: not every watcher took NOT_SERVING within %d ms; stopping anyway",
		XD_HEALTH_STOP_MS);
	svc->stop_done = NULL;
	uv_close((uv_handle_t *)svc->stop_timer, stop_timer_closed);
	svc->stop_timer = NULL;
	done(svc->stop_arg);
}

void xd_health_service_stop(struct xd_health_service *svc,
			    void (*done)(void *arg), void *arg)
{
	XD_ASSERT_LOOP();
	XD_ASSERT(!svc->stopping && done != NULL);
	if (svc->serving)
		xd_info("gRPC health: SERVING -> NOT_SERVING (stopping; %zu watcher%s told)",
			svc->nwatchers, svc->nwatchers == 1 ? "" : "s");
	svc->stopping = true;
	svc->stop_done = done;
	svc->stop_arg = arg;
	svc->stop_timer = xd_malloc(sizeof(*svc->stop_timer));
	uv_timer_init(svc->loop, svc->stop_timer);
	svc->stop_timer->data = svc;
	uv_timer_start(svc->stop_timer, stop_timeout, XD_HEALTH_STOP_MS, 0);
	tell_watchers(svc);
	maybe_stopped(svc);
}
