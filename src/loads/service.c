/* SPDX-License-Identifier: Apache-2.0 */
#include "loads/service.h"

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <stdlib.h>
#include <string.h>

#include "loads/report.h"
#include "protocol/client.h"
#include "util/bucket.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/list.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"
#include "xds/message.h"

struct xd_lrs_service {
	const struct xd_config *cfg;
	struct xd_loads *store;
	struct xd_stream_handler handler;
	struct xd_list calls; /* struct call.link, admitted ones */
	size_t reporters;
	unsigned long long streams, reports, refused;
};

/*
 * One StreamLoadStats call. States, in order: NEW (no request yet),
 * ADMITTED (its node admitted; the one response due, then sent), and
 * the stream's own end.
 */
struct call {
	struct xd_lrs_service *svc;
	struct xd_stream *stream;
	struct xd_client client; /* who it is: admission, as for xDS */
	struct xd_bucket requests;
	struct xd_list link;     /* in svc->calls once admitted */
	bool answered;           /* the one response is sent */
	bool ended;              /* the client sent all it will */
	unsigned long long reports;
};

/* Every line about a call says which, as a session's do. */
#define CLOG(level, c, ...)                                               \
	xd_log_about((level),                                             \
		     (&(struct xd_log_ctx){xd_stream_id((c)->stream),    \
					   xd_stream_method((c)->stream)->name, \
					   xd_stream_peer((c)->stream),   \
					   (c)->client.node_id,           \
					   (c)->client.node_cluster,      \
					   xd_stream_identity((c)->stream)}), \
		     __VA_ARGS__)

/* Refusals a client can make in numbers: a few a second in the log. */
static struct xd_log_limit refusal_log = XD_LOG_LIMIT_INIT(5, 1000);

/* Ends the call with `code` because of its client, logged as a warning
 * at a bounded rate (every one is counted). */
static void refuse(struct call *c, grpc_status_code code, const char *why)
{
	unsigned long dropped;

	c->svc->refused++;
	if (xd_log_limit_take(&refusal_log, &dropped))
		CLOG(XD_LOG_WARN, c, "load reports refused: %s%s", why,
		     dropped ? " (and more such streams, not logged)" : "");
	xd_stream_finish_logged(c->stream, code, why);
}

/* The one response: report every cluster every interval. */
static void answer(struct call *c)
{
	uint8_t buf[XD_LRS_RESPONSE_MAX];
	uint32_t interval = (uint32_t)c->svc->cfg->load_reports.interval_ms;
	size_t len = xd_lrs_response_put(buf, interval);
	grpc_slice slice = grpc_slice_from_copied_buffer((const char *)buf, len);
	grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);

	grpc_slice_unref(slice);
	c->answered = true;
	CLOG(XD_LOG_DEBUG, c, "LRS: asking for the load of every cluster every %u ms",
	     interval);
	xd_stream_send(c->stream, bb);
}

/* Sends what is due if the stream may send; ends it once the client is
 * done and the response went. */
static void pump(struct call *c)
{
	if (!xd_stream_can_send(c->stream))
		return;
	if (c->client.state == XD_CLIENT_ADMITTED && !c->answered) {
		answer(c);
		return;
	}
	if (!c->ended)
		return;
	if (c->client.state == XD_CLIENT_NEW)
		xd_stream_finish(c->stream, GRPC_STATUS_INVALID_ARGUMENT,
				 "StreamLoadStats needs a request with the node");
	else
		xd_stream_finish(c->stream, GRPC_STATUS_OK, "");
}

/* The node of the first request, admitted as an xDS stream's is. */
static bool admit(struct call *c, struct xd_span node)
{
	char why[512];

	switch (xd_client_admit(&c->client, node, why, sizeof(why))) {
	case XD_CLIENT_ADMIT:
		break;
	case XD_CLIENT_SAME:
		return true;
	case XD_CLIENT_OVER_LIMIT:
		refuse(c, GRPC_STATUS_RESOURCE_EXHAUSTED, why);
		return false;
	case XD_CLIENT_FORBIDDEN:
		refuse(c, GRPC_STATUS_PERMISSION_DENIED, why);
		return false;
	case XD_CLIENT_MALFORMED:
	case XD_CLIENT_CHANGED:
		refuse(c, GRPC_STATUS_INVALID_ARGUMENT, why);
		return false;
	}
	c->svc->streams++;
	c->svc->reporters++;
	xd_list_push_back(&c->svc->calls, &c->link);
	CLOG(XD_LOG_INFO, c, "%s", "reporting load");
	return true;
}

struct taking {
	struct call *c;
	uint64_t now_ms;
	int64_t wall_ms;
};

static void take_cluster(void *arg, const struct xd_load_cluster *cl)
{
	struct taking *t = arg;
	struct xd_name node = {t->c->client.node_id,
			       strlen(t->c->client.node_id)};

	xd_loads_count_cluster(t->c->svc->store);
	if (cl->dropped > 0)
		xd_loads_add(t->c->svc->store, node, cl, NULL, t->now_ms,
			     t->wall_ms);
}

static void take_locality(void *arg, const struct xd_load_cluster *cl,
			  const struct xd_load_locality *l)
{
	struct taking *t = arg;
	struct xd_name node = {t->c->client.node_id,
			       strlen(t->c->client.node_id)};

	xd_loads_add(t->c->svc->store, node, cl, l, t->now_ms, t->wall_ms);
}

static void *lrs_open(void *ctx, struct xd_stream *s)
{
	struct xd_lrs_service *svc = ctx;
	struct call *c = xd_calloc(1, sizeof(*c));

	c->svc = svc;
	c->stream = s;
	xd_client_init(&c->client, svc->cfg, false, xd_stream_peer(s),
		       xd_stream_identity(s), xd_wall_ms());
	xd_bucket_init(&c->requests, svc->cfg->max_request_burst, xd_mono_ms());
	xd_list_init(&c->link);
	return c;
}

static void lrs_request(void *st, struct xd_stream *s XD_UNUSED,
			const uint8_t *data, size_t len)
{
	struct call *c = st;
	const struct xd_config *cfg = c->svc->cfg;
	struct taking t = {c, xd_mono_ms(), xd_wall_ms()};
	struct xd_load_report_sink sink = {take_cluster, take_locality, &t};
	size_t nclusters, nlocalities;
	struct xd_span node;
	char why[128];

	if (cfg->max_requests_per_second != 0 &&
	    !xd_bucket_take(&c->requests, cfg->max_requests_per_second,
			    cfg->max_request_burst, t.now_ms)) {
		snprintf(why, sizeof(why),
			 "more than %llu requests a second (max_requests_per_second, burst %llu)",
			 (unsigned long long)cfg->max_requests_per_second,
			 (unsigned long long)cfg->max_request_burst);
		refuse(c, GRPC_STATUS_RESOURCE_EXHAUSTED, why);
		return;
	}
	if (xd_load_report_read(data, len, &node, NULL, &nclusters,
				&nlocalities, why, sizeof(why)) != 0) {
		refuse(c, GRPC_STATUS_INVALID_ARGUMENT, why);
		return;
	}
	if (c->client.state == XD_CLIENT_NEW && node.len == 0) {
		refuse(c, GRPC_STATUS_INVALID_ARGUMENT,
		       "the first LoadStatsRequest names no node");
		return;
	}
	if (!admit(c, node))
		return;
	(void)xd_load_report_read(data, len, &node, &sink, &nclusters,
				  &nlocalities, why, sizeof(why));
	if (nclusters > 0) {
		c->reports++;
		c->svc->reports++;
	}
	CLOG(XD_LOG_DEBUG, c, "LRS: %zu cluster%s, %zu localit%s reported",
	     nclusters, nclusters == 1 ? "" : "s", nlocalities,
	     nlocalities == 1 ? "y" : "ies");
	pump(c);
}

static void lrs_send_done(void *st, struct xd_stream *s XD_UNUSED)
{
	pump(st);
}

static void lrs_end(void *st, struct xd_stream *s XD_UNUSED)
{
	struct call *c = st;

	c->ended = true;
	pump(c);
}

static void lrs_close(void *st, struct xd_stream *s XD_UNUSED)
{
	struct call *c = st;

	if (xd_list_linked(&c->link)) {
		xd_list_remove(&c->link);
		(void)XD_UNREF(c->svc->reporters);
		CLOG(XD_LOG_DEBUG, c, "LRS: the stream is over after %llu report%s",
		     c->reports, c->reports == 1 ? "" : "s");
	}
	xd_client_clear(&c->client);
	free(c);
}

struct xd_lrs_service *xd_lrs_service_new(const struct xd_config *cfg,
					  struct xd_loads *store)
{
	struct xd_lrs_service *svc = xd_calloc(1, sizeof(*svc));

	svc->cfg = cfg;
	svc->store = store;
	xd_list_init(&svc->calls);
	svc->handler.open = lrs_open;
	svc->handler.on_request = lrs_request;
	svc->handler.on_send_done = lrs_send_done;
	svc->handler.on_close = lrs_close;
	svc->handler.on_end = lrs_end;
	svc->handler.ctx = svc;
	return svc;
}

void xd_lrs_service_free(struct xd_lrs_service *svc)
{
	if (svc == NULL)
		return;
	/* every call closed first: the server's streams are gone */
	XD_ASSERT_INFO(xd_list_empty(&svc->calls), "%zu LRS streams",
		       svc->reporters);
	free(svc);
}

const struct xd_stream_handler *
xd_lrs_service_handler(struct xd_lrs_service *svc)
{
	return &svc->handler;
}

void xd_lrs_service_stats(const struct xd_lrs_service *svc,
			  struct xd_lrs_stats *out)
{
	*out = (struct xd_lrs_stats){svc->reporters, svc->streams, svc->reports,
				     svc->refused};
}
