/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/stream.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <stdlib.h>
#include <string.h>

#include "transport/refusals.h"
#include "transport/tag.h"
#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

enum state {
	ACTIVE,
	FINISHING,
	CLOSED,
};

static const char *const state_names[] = {"active", "finishing", "closed"};

struct xd_stream {
	uint64_t id;
	grpc_call *call;
	grpc_metadata_array md;
	const struct xd_method *method;
	char *peer; /* gpr_malloc'd by grpc_call_get_peer */
	char *identity; /* the client certificate's, or NULL */
	enum state state;

	const struct xd_stream_handler *handler;
	void *st; /* handler's state; NULL once on_close ran */

	void (*gone)(void *arg);
	void *gone_arg;

	unsigned ops; /* batches in flight; the stream is freed at 0 */
	struct xd_tag t_close, t_recv, t_send, t_status;
	int cancelled;
	grpc_byte_buffer *recv_bb;
	grpc_byte_buffer *send_bb; /* the send in flight, or NULL */
	grpc_slice status_msg;
};

static uint64_t next_id = 1;

/* For a broken invariant's message: which stream, of which client. */
#define WHO(s) "stream %llu (%s from %s)", (unsigned long long)(s)->id, \
		(s)->method->name, (s)->peer

static void set_state(struct xd_stream *s, enum state to, const char *why)
{
	/* ACTIVE -> FINISHING -> CLOSED, FINISHING skipped at times, never
	 * back: a move back would send on a finished call, or free twice */
	XD_ASSERT_INFO(to > s->state, "stream %llu (%s from %s): %s -> %s",
		       (unsigned long long)s->id, s->method->name, s->peer,
		       state_names[s->state], state_names[to]);
	xd_debug("stream %llu: %s -> %s (%s)", (unsigned long long)s->id,
		 state_names[s->state], state_names[to], why);
	s->state = to;
}

static void stream_free(struct xd_stream *s)
{
	XD_ASSERT_INFO(s->state == CLOSED && s->ops == 0 && s->st == NULL,
		       WHO(s));
	xd_debug("stream %llu: freed", (unsigned long long)s->id);
	grpc_call_unref(s->call);
	grpc_metadata_array_destroy(&s->md);
	grpc_slice_unref(s->status_msg);
	gpr_free(s->peer);
	free(s->identity);
	if (s->gone != NULL)
		s->gone(s->gone_arg);
	free(s);
}

static void maybe_free(struct xd_stream *s)
{
	if (s->state == CLOSED && s->ops == 0)
		stream_free(s);
}

/*
 * Every batch goes through here. A refused batch is a bug in this
 * module's state machine (docs/grpc-core.md §3.3: it may poison the call),
 * so the call is cancelled and the stream winds down.
 */
static int start_batch(struct xd_stream *s, const grpc_op *ops, size_t n,
		       struct xd_tag *tag)
{
	grpc_call_error err = grpc_call_start_batch(s->call, ops, n, tag, NULL);

	if (err != GRPC_CALL_OK) {
		xd_error("stream %llu: gRPC refused a batch (error %d); cancelling",
			 (unsigned long long)s->id, (int)err);
		grpc_call_cancel(s->call, NULL);
		if (s->state == ACTIVE)
			set_state(s, FINISHING, "batch refused");
		return -1;
	}
	s->ops++;
	return 0;
}

/* A batch of `s` completed: one fewer in flight. */
static void batch_done(struct xd_stream *s)
{
	XD_ASSERT_INFO(s->ops > 0, WHO(s));
	s->ops--;
}

static void start_recv(struct xd_stream *s)
{
	grpc_op op = {.op = GRPC_OP_RECV_MESSAGE};

	op.data.recv_message.recv_message = &s->recv_bb;
	start_batch(s, &op, 1, &s->t_recv);
}

static void on_close_done(struct xd_tag *tag, bool ok XD_UNUSED)
{
	struct xd_stream *s = xd_container_of(tag, struct xd_stream, t_close);
	void *st = s->st;

	batch_done(s);
	set_state(s, CLOSED, s->cancelled ? "cancelled" : "status delivered");
	if (st != NULL) {
		s->st = NULL;
		s->handler->on_close(st, s);
	}
	maybe_free(s);
}

/* Requests arrive as a byte buffer of one or more slices; the handler
 * gets contiguous bytes. */
static void deliver(struct xd_stream *s, grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader reader;
	grpc_slice all;

	if (!grpc_byte_buffer_reader_init(&reader, bb)) {
		xd_stream_finish(s, GRPC_STATUS_INTERNAL,
				 "cannot read the request");
		return;
	}
	all = grpc_byte_buffer_reader_readall(&reader);
	grpc_byte_buffer_reader_destroy(&reader);
	s->handler->on_request(s->st, s, GRPC_SLICE_START_PTR(all),
			       GRPC_SLICE_LENGTH(all));
	grpc_slice_unref(all);
}

static void on_recv_done(struct xd_tag *tag, bool ok)
{
	struct xd_stream *s = xd_container_of(tag, struct xd_stream, t_recv);
	grpc_byte_buffer *bb = s->recv_bb;

	batch_done(s);
	s->recv_bb = NULL;
	if (!ok) {
		/* The call is dead; RECV_CLOSE_ON_SERVER will say how. */
		grpc_byte_buffer_destroy(bb);
	} else if (bb == NULL) {
		/* Half-close by the client, or cancel_all_calls at shutdown:
		 * either way nothing more will arrive. */
		if (s->state == ACTIVE && s->st != NULL &&
		    s->handler->on_end != NULL)
			s->handler->on_end(s->st, s);
		else if (s->state == ACTIVE)
			xd_stream_finish(s, GRPC_STATUS_OK, "");
	} else {
		if (s->state == ACTIVE && s->st != NULL)
			deliver(s, bb);
		grpc_byte_buffer_destroy(bb);
		if (s->state == ACTIVE)
			start_recv(s);
	}
	maybe_free(s);
}

static void on_send_done(struct xd_tag *tag, bool ok)
{
	struct xd_stream *s = xd_container_of(tag, struct xd_stream, t_send);

	batch_done(s);
	grpc_byte_buffer_destroy(s->send_bb);
	s->send_bb = NULL;
	if (ok && s->state == ACTIVE && s->st != NULL)
		s->handler->on_send_done(s->st, s);
	maybe_free(s);
}

static void on_status_done(struct xd_tag *tag, bool ok XD_UNUSED)
{
	struct xd_stream *s = xd_container_of(tag, struct xd_stream, t_status);

	batch_done(s);
	maybe_free(s);
}

/* The first value of property `name`, copied, or NULL. */
static char *first_property(const grpc_auth_context *ctx, const char *name)
{
	grpc_auth_property_iterator it =
		grpc_auth_context_find_properties_by_name(ctx, name);
	const grpc_auth_property *p = grpc_auth_property_iterator_next(&it);

	return p != NULL ? xd_strndup(p->value, p->value_length) : NULL;
}

/*
 * Who the client proved to be: its certificate's URI SAN (a SPIFFE ID,
 * say), else its DNS SAN, else its subject's common name. NULL for a
 * client that presented no verified certificate (plaintext, or TLS
 * without client certificates).
 */
char *xd_call_identity(grpc_call *call)
{
	grpc_auth_context *ctx = grpc_call_auth_context(call);
	char *id = NULL;

	if (ctx == NULL)
		return NULL;
	if (grpc_auth_context_peer_is_authenticated(ctx)) {
		id = first_property(ctx, GRPC_PEER_URI_PROPERTY_NAME);
		if (id == NULL)
			id = first_property(ctx, GRPC_PEER_DNS_PROPERTY_NAME);
		if (id == NULL)
			id = first_property(ctx, GRPC_X509_CN_PROPERTY_NAME);
	}
	grpc_auth_context_release(ctx);
	return id;
}

void xd_stream_start(grpc_call *call, grpc_metadata_array *md,
		     const struct xd_method *method,
		     const struct xd_stream_handler *handler,
		     void (*gone)(void *arg), void *gone_arg)
{
	struct xd_stream *s;
	grpc_op ops[2] = {{.op = GRPC_OP_SEND_INITIAL_METADATA},
			  {.op = GRPC_OP_RECV_CLOSE_ON_SERVER}};

	XD_ASSERT_LOOP();
	XD_ASSERT(handler->open != NULL && handler->on_request != NULL &&
		  handler->on_send_done != NULL && handler->on_close != NULL);
	s = xd_calloc(1, sizeof(*s));
	s->id = next_id++;
	s->call = call;
	s->md = *md;
	grpc_metadata_array_init(md);
	s->method = method;
	s->peer = grpc_call_get_peer(call);
	s->identity = xd_call_identity(call);
	s->state = ACTIVE;
	s->handler = handler;
	s->gone = gone;
	s->gone_arg = gone_arg;
	s->t_close.done = on_close_done;
	s->t_recv.done = on_recv_done;
	s->t_send.done = on_send_done;
	s->t_status.done = on_status_done;
	s->status_msg = grpc_empty_slice();

	xd_debug("stream %llu: %s from %s%s%.*s%s", (unsigned long long)s->id,
		 method->name, s->peer, s->identity ? " (identity '" : "",
		 s->identity ? XD_LOG_CLIP(strlen(s->identity)) : 0,
		 s->identity ? s->identity : "", s->identity ? "')" : "");
	/* RECV_CLOSE_ON_SERVER first: it is the one reliable end signal,
	 * so it must be armed before anything can fail. */
	ops[1].data.recv_close_on_server.cancelled = &s->cancelled;
	if (start_batch(s, ops, 2, &s->t_close) != 0) {
		/* Nothing will ever complete on this call. */
		set_state(s, CLOSED, "cannot start");
		maybe_free(s);
		return;
	}
	s->st = handler->open(handler->ctx, s);
	if (s->st == NULL) {
		xd_stream_finish(s, GRPC_STATUS_UNAVAILABLE,
				 "stream refused");
		return;
	}
	if (s->state == ACTIVE)
		start_recv(s);
}

bool xd_stream_can_send(const struct xd_stream *s)
{
	return s->state == ACTIVE && s->send_bb == NULL;
}

int xd_stream_send(struct xd_stream *s, grpc_byte_buffer *bb)
{
	grpc_op op = {.op = GRPC_OP_SEND_MESSAGE};

	XD_ASSERT_LOOP();
	if (!xd_stream_can_send(s)) {
		/* The handler broke the one-send rule: a bug, not input. */
		xd_error("stream %llu: send while %s%s; dropped",
			 (unsigned long long)s->id, state_names[s->state],
			 s->send_bb ? " with a send in flight" : "");
		grpc_byte_buffer_destroy(bb);
		return -1;
	}
	op.data.send_message.send_message = bb;
	s->send_bb = bb;
	if (start_batch(s, &op, 1, &s->t_send) != 0) {
		s->send_bb = NULL;
		grpc_byte_buffer_destroy(bb);
		return -1;
	}
	return 0;
}

static void finish(struct xd_stream *s, grpc_status_code code,
		   const char *message, enum xd_log_level level, bool refusal)
{
	grpc_op op = {.op = GRPC_OP_SEND_STATUS_FROM_SERVER};

	XD_ASSERT_LOOP();
	if (s->state != ACTIVE)
		return;
	if (code != GRPC_STATUS_OK) {
		/* a refusal is counted here, whoever decided it */
		const char *refused =
			refusal ? xd_refusals_count(code, s->identity != NULL) :
				  NULL;

		xd_log(level, "stream %llu (%s from %s%s%.*s%s): ending with status %d%s%s%s: %s",
		       (unsigned long long)s->id, s->method->name, s->peer,
		       s->identity ? ", identity '" : "",
		       s->identity ? XD_LOG_CLIP(strlen(s->identity)) : 0,
		       s->identity ? s->identity : "", s->identity ? "'" : "",
		       (int)code, refused ? " (refused: " : "",
		       refused ? refused : "", refused ? ")" : "", message);
	}
	set_state(s, FINISHING, code == GRPC_STATUS_OK ? "end of requests" : "error");
	grpc_slice_unref(s->status_msg);
	s->status_msg = grpc_slice_from_copied_string(message);
	op.data.send_status_from_server.status = code;
	op.data.send_status_from_server.status_details =
		code == GRPC_STATUS_OK ? NULL : &s->status_msg;
	start_batch(s, &op, 1, &s->t_status);
}

void xd_stream_finish(struct xd_stream *s, grpc_status_code code,
		      const char *message)
{
	finish(s, code, message, XD_LOG_INFO, true);
}

void xd_stream_finish_logged(struct xd_stream *s, grpc_status_code code,
			     const char *message)
{
	finish(s, code, message, XD_LOG_DEBUG, true);
}

void xd_stream_finish_answer(struct xd_stream *s, grpc_status_code code,
			     const char *message)
{
	finish(s, code, message, XD_LOG_DEBUG, false);
}

uint64_t xd_stream_id(const struct xd_stream *s)
{
	return s->id;
}

const struct xd_method *xd_stream_method(const struct xd_stream *s)
{
	return s->method;
}

const char *xd_stream_peer(const struct xd_stream *s)
{
	return s->peer;
}

const char *xd_stream_identity(const struct xd_stream *s)
{
	return s->identity;
}
