/* SPDX-License-Identifier: Apache-2.0 */
#include "client.h"

#include <check.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdlib.h>
#include <string.h>

#include "xdtest.h"

#define CLUSTER_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"

struct xdc_conn {
	grpc_channel *channel;
	grpc_completion_queue *cq; /* pluck: each wait names its tag */
	int streams;
};

enum { T_START, T_SEND, T_RECV, T_STATUS, T_CLOSE, T_COUNT };

struct xdc_stream {
	struct xdc_conn *conn;
	grpc_call *call;
	char tags[T_COUNT];          /* distinct addresses as tags */
	bool pending[T_COUNT];       /* operation under way */
	bool ok[T_COUNT];            /* result of the last completion */
	grpc_metadata_array initial_md, trailing_md;
	grpc_byte_buffer *recv_bb;
	grpc_status_code status;
	grpc_slice details;
	bool status_done;
};

static bool grpc_up;

static void grpc_down(void)
{
	grpc_shutdown_blocking();
}

static gpr_timespec deadline_ms(int ms)
{
	return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
			    gpr_time_from_millis(ms, GPR_TIMESPAN));
}

/* Waits for one tag; true if it completed (its ok is recorded). */
static bool wait_tag(struct xdc_stream *s, int kind, int timeout_ms)
{
	grpc_event ev;

	if (!s->pending[kind])
		return true;
	ev = grpc_completion_queue_pluck(s->conn->cq, &s->tags[kind],
					 deadline_ms(timeout_ms), NULL);
	if (ev.type == GRPC_QUEUE_TIMEOUT)
		return false;
	ck_assert_int_eq(ev.type, GRPC_OP_COMPLETE);
	s->pending[kind] = false;
	s->ok[kind] = ev.success != 0;
	if (kind == T_STATUS)
		s->status_done = true;
	return true;
}

static void start(struct xdc_stream *s, const grpc_op *ops, size_t n,
		  int kind)
{
	grpc_call_error err;

	ck_assert_msg(!s->pending[kind], "operation %d already under way", kind);
	err = grpc_call_start_batch(s->call, ops, n, &s->tags[kind], NULL);
	ck_assert_msg(err == GRPC_CALL_OK, "start_batch: %d", (int)err);
	s->pending[kind] = true;
}

/* A channel with `creds` (released here), expecting a server
 * certificate for `name` over TLS. */
static struct xdc_conn *connect_with(const char *target,
				     grpc_channel_credentials *creds,
				     bool small_window, const char *name)
{
	struct xdc_conn *c = calloc(1, sizeof(*c));
	/* Channels to one target share a TCP connection unless each has its
	 * own subchannel pool; a test "client" is one connection, as an
	 * Envoy is. The TLS tests' server certificate is for "localhost". */
	grpc_arg args_v[] = {
		{.type = GRPC_ARG_INTEGER,
		 .key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
		 .value.integer = 1},
		{.type = GRPC_ARG_STRING,
		 .key = (char *)GRPC_SSL_TARGET_NAME_OVERRIDE_ARG,
		 .value.string = (char *)name},
		{.type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_HTTP2_BDP_PROBE,
		 .value.integer = 0},
	};
	grpc_channel_args args = {.num_args = small_window ? 3 : 2,
				  .args = args_v};

	ck_assert(c != NULL);
	c->channel = grpc_channel_create(target, creds, &args);
	grpc_channel_credentials_release(creds);
	c->cq = grpc_completion_queue_create_for_pluck(NULL);
	return c;
}

static void grpc_once(void)
{
	if (!grpc_up) {
		grpc_init();
		atexit(grpc_down);
		grpc_up = true;
	}
}

struct xdc_conn *xdc_connect(const char *target)
{
	grpc_once();
	return connect_with(target, grpc_insecure_credentials_create(), false,
			    "localhost");
}

struct xdc_conn *xdc_connect_small_window(const char *target)
{
	grpc_once();
	return connect_with(target, grpc_insecure_credentials_create(), true,
			    "localhost");
}

/* A whole file, for PEM (NULL path: NULL). */
static char *pem_file(const char *path)
{
	char *text;

	if (path == NULL)
		return NULL;
	text = xdtest_read_file(path, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	return text;
}

struct xdc_conn *xdc_connect_tls(const char *target, const char *ca,
				 const char *cert, const char *key)
{
	return xdc_connect_tls_name(target, ca, cert, key, "localhost");
}

struct xdc_conn *xdc_connect_tls_name(const char *target, const char *ca,
				      const char *cert, const char *key,
				      const char *name)
{
	char *ca_pem, *cert_pem = pem_file(cert), *key_pem = pem_file(key);
	grpc_ssl_pem_key_cert_pair pair = {key_pem, cert_pem};
	grpc_channel_credentials *creds;

	grpc_once();
	ca_pem = pem_file(ca);
	creds = grpc_ssl_credentials_create(ca_pem, cert ? &pair : NULL, NULL,
					    NULL);
	free(ca_pem);
	free(cert_pem);
	free(key_pem);
	return connect_with(target, creds, false, name);
}

void xdc_conn_free(struct xdc_conn *c)
{
	grpc_event ev;

	if (c == NULL)
		return;
	ck_assert_msg(c->streams == 0, "connection freed with open streams");
	grpc_channel_destroy(c->channel);
	grpc_completion_queue_shutdown(c->cq);
	do {
		ev = grpc_completion_queue_pluck(c->cq, NULL,
						 gpr_inf_future(GPR_CLOCK_MONOTONIC),
						 NULL);
	} while (ev.type != GRPC_QUEUE_SHUTDOWN);
	grpc_completion_queue_destroy(c->cq);
	free(c);
}

struct xdc_stream *xdc_open(struct xdc_conn *c, const char *method)
{
	struct xdc_stream *s = calloc(1, sizeof(*s));
	grpc_slice m = grpc_slice_from_static_string(method);
	grpc_op ops[2] = {{.op = GRPC_OP_SEND_INITIAL_METADATA},
			  {.op = GRPC_OP_RECV_STATUS_ON_CLIENT}};
	grpc_op md = {.op = GRPC_OP_RECV_INITIAL_METADATA};

	ck_assert(s != NULL);
	s->conn = c;
	s->call = grpc_channel_create_call(c->channel, NULL,
					   GRPC_PROPAGATE_DEFAULTS, c->cq, m,
					   NULL,
					   gpr_inf_future(GPR_CLOCK_REALTIME),
					   NULL);
	ck_assert(s->call != NULL);
	grpc_metadata_array_init(&s->initial_md);
	grpc_metadata_array_init(&s->trailing_md);
	s->details = grpc_empty_slice();
	ops[1].data.recv_status_on_client.trailing_metadata = &s->trailing_md;
	ops[1].data.recv_status_on_client.status = &s->status;
	ops[1].data.recv_status_on_client.status_details = &s->details;
	start(s, ops, 2, T_STATUS);
	md.data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
	start(s, &md, 1, T_START);
	c->streams++;
	return s;
}

bool xdc_send(struct xdc_stream *s, const void *data, size_t len,
	      int timeout_ms)
{
	grpc_slice slice = grpc_slice_from_copied_buffer(data, len);
	grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
	grpc_op op = {.op = GRPC_OP_SEND_MESSAGE};
	bool done;

	grpc_slice_unref(slice);
	ck_assert(wait_tag(s, T_SEND, timeout_ms));
	op.data.send_message.send_message = bb;
	start(s, &op, 1, T_SEND);
	done = wait_tag(s, T_SEND, timeout_ms);
	if (done)
		grpc_byte_buffer_destroy(bb);
	else
		ck_abort_msg("send did not complete within %d ms", timeout_ms);
	return s->ok[T_SEND];
}

bool xdc_close_send(struct xdc_stream *s, int timeout_ms)
{
	grpc_op op = {.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT};

	start(s, &op, 1, T_CLOSE);
	return wait_tag(s, T_CLOSE, timeout_ms) && s->ok[T_CLOSE];
}

int xdc_recv(struct xdc_stream *s, uint8_t **data, size_t *len,
	     int timeout_ms)
{
	grpc_byte_buffer_reader reader;
	grpc_slice all;

	if (!s->pending[T_RECV]) {
		grpc_op op = {.op = GRPC_OP_RECV_MESSAGE};

		op.data.recv_message.recv_message = &s->recv_bb;
		start(s, &op, 1, T_RECV);
	}
	if (!wait_tag(s, T_RECV, timeout_ms))
		return -1;
	if (!s->ok[T_RECV] || s->recv_bb == NULL)
		return 0;
	ck_assert(grpc_byte_buffer_reader_init(&reader, s->recv_bb));
	all = grpc_byte_buffer_reader_readall(&reader);
	grpc_byte_buffer_reader_destroy(&reader);
	grpc_byte_buffer_destroy(s->recv_bb);
	s->recv_bb = NULL;
	*len = GRPC_SLICE_LENGTH(all);
	*data = malloc(*len + 1);
	ck_assert(*data != NULL);
	memcpy(*data, GRPC_SLICE_START_PTR(all), *len);
	grpc_slice_unref(all);
	return 1;
}

bool xdc_status(struct xdc_stream *s, grpc_status_code *code, char **details,
		int timeout_ms)
{
	if (!wait_tag(s, T_STATUS, timeout_ms))
		return false;
	if (code != NULL)
		*code = s->status;
	if (details != NULL)
		*details = grpc_slice_to_c_string(s->details);
	return true;
}

void xdc_expect_refused(struct xdc_stream *s, grpc_status_code code,
			const char *needle, int timeout_ms)
{
	grpc_status_code got;
	char *details = NULL;
	uint8_t *data;
	size_t len;

	ck_assert_msg(xdc_recv(s, &data, &len, timeout_ms) != 1,
		      "a refused client was sent a response");
	ck_assert(xdc_status(s, &got, &details, timeout_ms));
	ck_assert_msg(got == code, "status %d '%s', expected %d", (int)got,
		      details ? details : "", (int)code);
	if (needle != NULL)
		ck_assert_msg(details != NULL && strstr(details, needle) != NULL,
			      "status message '%s' lacks '%s'", details, needle);
	free(details);
}

bool xdc_drain_status(struct xdc_stream *s, grpc_status_code *code,
		      char **details, int timeout_ms)
{
	long long deadline = 0;
	uint8_t *data;
	size_t len;
	int r;
	gpr_timespec now = gpr_now(GPR_CLOCK_MONOTONIC);

	deadline = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 +
		   timeout_ms;
	for (;;) {
		now = gpr_now(GPR_CLOCK_MONOTONIC);
		long long left = deadline - ((long long)now.tv_sec * 1000 +
					     now.tv_nsec / 1000000);

		if (left <= 0)
			return false;
		r = xdc_recv(s, &data, &len, (int)left);
		if (r == 1) {
			free(data);
			continue;
		}
		if (r < 0)
			return false;
		break;
	}
	return xdc_status(s, code, details, timeout_ms);
}

void xdc_stream_free(struct xdc_stream *s)
{
	if (s == NULL)
		return;
	if (!s->status_done)
		grpc_call_cancel(s->call, NULL);
	/* Every started operation completes once the call is cancelled. */
	for (int k = 0; k < T_COUNT; k++)
		if (s->pending[k])
			ck_assert(wait_tag(s, k, 10000));
	if (s->recv_bb != NULL)
		grpc_byte_buffer_destroy(s->recv_bb);
	grpc_metadata_array_destroy(&s->initial_md);
	grpc_metadata_array_destroy(&s->trailing_md);
	grpc_slice_unref(s->details);
	grpc_call_unref(s->call);
	s->conn->streams--;
	free(s);
}

bool xdc_send_sotw(struct xdc_stream *s,
		   const Envoy__Service__Discovery__V3__DiscoveryRequest *req,
		   int timeout_ms)
{
	size_t n = envoy__service__discovery__v3__discovery_request__get_packed_size(req);
	uint8_t *buf = malloc(n + 1);
	bool ok;

	ck_assert(buf != NULL);
	envoy__service__discovery__v3__discovery_request__pack(req, buf);
	ok = xdc_send(s, buf, n, timeout_ms);
	free(buf);
	return ok;
}

bool xdc_send_delta(struct xdc_stream *s,
		    const Envoy__Service__Discovery__V3__DeltaDiscoveryRequest *req,
		    int timeout_ms)
{
	size_t n = envoy__service__discovery__v3__delta_discovery_request__get_packed_size(req);
	uint8_t *buf = malloc(n + 1);
	bool ok;

	ck_assert(buf != NULL);
	envoy__service__discovery__v3__delta_discovery_request__pack(req, buf);
	ok = xdc_send(s, buf, n, timeout_ms);
	free(buf);
	return ok;
}

Envoy__Service__Discovery__V3__DiscoveryResponse *
xdc_recv_sotw(struct xdc_stream *s, int timeout_ms)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r;
	uint8_t *data;
	size_t len;

	if (xdc_recv(s, &data, &len, timeout_ms) != 1)
		return NULL;
	r = envoy__service__discovery__v3__discovery_response__unpack(NULL, len, data);
	free(data);
	return r;
}

Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *
xdc_recv_delta(struct xdc_stream *s, int timeout_ms)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r;
	uint8_t *data;
	size_t len;

	if (xdc_recv(s, &data, &len, timeout_ms) != 1)
		return NULL;
	r = envoy__service__discovery__v3__delta_discovery_response__unpack(NULL, len, data);
	free(data);
	return r;
}

char *xdc_server_property(struct xdc_stream *s, const char *name)
{
	grpc_auth_context *ctx = grpc_call_auth_context(s->call);
	grpc_auth_property_iterator it;
	const grpc_auth_property *p;
	char *v = NULL;

	if (ctx == NULL)
		return NULL;
	it = grpc_auth_context_find_properties_by_name(ctx, name);
	p = grpc_auth_property_iterator_next(&it);
	if (p != NULL) {
		v = malloc(p->value_length + 1);
		ck_assert(v != NULL);
		memcpy(v, p->value, p->value_length);
		v[p->value_length] = '\0';
	}
	grpc_auth_context_release(ctx);
	return v;
}

struct xdc_mute {
	grpc_channel *ch;
	grpc_completion_queue *cq;
	grpc_call *call;
	grpc_metadata_array md;
};

static void mute_wait(struct xdc_mute *m, void *tag)
{
	grpc_event ev = grpc_completion_queue_pluck(
		m->cq, tag, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
					 gpr_time_from_millis(5000, GPR_TIMESPAN)),
		NULL);

	ck_assert_int_eq(ev.type, GRPC_OP_COMPLETE);
}

struct xdc_mute *xdc_mute_open(const char *target, const char *id)
{
	grpc_arg args[] = {
		{.type = GRPC_ARG_INTEGER,
		 .key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
		 .value.integer = 1},
		{.type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_HTTP2_BDP_PROBE,
		 .value.integer = 0},
	};
	grpc_channel_args ca = {.num_args = 2, .args = args};
	struct xdc_mute *m = calloc(1, sizeof(*m));
	grpc_channel_credentials *creds;
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	uint8_t buf[1024];
	grpc_slice msg;
	grpc_byte_buffer *bb;
	grpc_op ops[3];

	ck_assert(m != NULL);
	grpc_once();
	creds = grpc_insecure_credentials_create();
	m->ch = grpc_channel_create(target, creds, &ca);
	grpc_channel_credentials_release(creds);
	m->cq = grpc_completion_queue_create_for_pluck(NULL);
	m->call = grpc_channel_create_call(
		m->ch, NULL, GRPC_PROPAGATE_DEFAULTS, m->cq,
		grpc_slice_from_static_string(XDC_ADS), NULL,
		gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	node.id = (char *)id;
	node.cluster = "default";
	req.node = &node;
	req.type_url = CLUSTER_URL;
	ck_assert(envoy__service__discovery__v3__discovery_request__get_packed_size(&req) <= sizeof(buf));
	msg = grpc_slice_from_copied_buffer(
		(const char *)buf,
		envoy__service__discovery__v3__discovery_request__pack(&req, buf));
	bb = grpc_raw_byte_buffer_create(&msg, 1);
	grpc_slice_unref(msg);
	grpc_metadata_array_init(&m->md);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = bb;
	ops[2].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[2].data.recv_initial_metadata.recv_initial_metadata = &m->md;
	ck_assert_int_eq(grpc_call_start_batch(m->call, ops, 3, m, NULL),
			 GRPC_CALL_OK);
	mute_wait(m, m);
	grpc_byte_buffer_destroy(bb);
	return m;
}

void xdc_mute_close(struct xdc_mute *m)
{
	grpc_call_cancel(m->call, NULL);
	grpc_call_unref(m->call);
	grpc_metadata_array_destroy(&m->md);
	grpc_channel_destroy(m->ch);
	grpc_completion_queue_shutdown(m->cq);
	while (grpc_completion_queue_pluck(m->cq, NULL,
					   gpr_inf_future(GPR_CLOCK_REALTIME),
					   NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(m->cq);
	free(m);
}

struct xdc_stream *xdc_watch_clusters(struct xdc_conn *c, const char *id,
				      const char *cluster)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	struct xdc_stream *s = xdc_open(c, XDC_ADS);

	node.id = (char *)id;
	node.cluster = (char *)cluster;
	req.node = &node;
	req.type_url = CLUSTER_URL;
	xdc_send_sotw(s, &req, 5000);
	return s;
}

int xdc_next_clusters(struct xdc_stream *s, int timeout_ms, char **version)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(s, timeout_ms);
	Envoy__Service__Discovery__V3__DiscoveryRequest ack =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	int n;

	if (r == NULL)
		return -1;
	ack.type_url = CLUSTER_URL;
	ack.version_info = r->version_info;
	ack.response_nonce = r->nonce;
	xdc_send_sotw(s, &ack, 5000);
	n = (int)r->n_resources;
	if (version != NULL)
		*version = strdup(r->version_info);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	return n;
}
