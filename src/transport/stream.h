/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One xDS stream: a server-side gRPC call and its operations.
 *
 * The stream keeps exactly one receive outstanding and at most one send
 * in flight; the layer above (the handler) decides what to send, and is
 * told when the send completes so it can compute the next one from the
 * newest state rather than queueing stale versions (docs/design.md §7).
 *
 * States (one place changes them, logged at debug as "a -> b (why)"):
 *   ACTIVE     receiving requests, may send
 *   FINISHING  status sent (by us, or answering the client's half-close);
 *              no more sends, waiting for the call to close
 *   CLOSED     gRPC reported the call over (RECV_CLOSE_ON_SERVER); the
 *              handler has had on_close; freed once no batch is in flight
 *
 * Ownership: the stream owns the call, its metadata and every byte
 * buffer it sends or receives; it frees itself. The handler owns its
 * per-stream state, created by open() and released in on_close().
 * Thread: loop thread only.
 */
#ifndef XD_TRANSPORT_STREAM_H
#define XD_TRANSPORT_STREAM_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/methods.h"

struct xd_stream;

struct xd_stream_handler {
	/* A new stream; returns the handler's per-stream state, or NULL
	 * after xd_stream_finish() to refuse it. */
	void *(*open)(void *ctx, struct xd_stream *s);
	/* A request arrived; `data` is valid during the call only. */
	void (*on_request)(void *st, struct xd_stream *s, const uint8_t *data,
			   size_t len);
	/* The send in flight completed; another may be started. */
	void (*on_send_done)(void *st, struct xd_stream *s);
	/* The call is over; release `st`. No further calls follow. */
	void (*on_close)(void *st, struct xd_stream *s);
	/* Optional: the client half-closed (no more requests). The handler
	 * ends the stream when it has sent what it owes (a unary answer
	 * still being sent must not be cut off by the status). NULL: the
	 * stream ends with OK at once. */
	void (*on_end)(void *st, struct xd_stream *s);
	void *ctx;
};

/*
 * Takes over an accepted call (and its metadata array, whose contents
 * move into the stream). `gone(gone_arg)` runs when the stream is freed.
 */
void xd_stream_start(grpc_call *call, grpc_metadata_array *md,
		     const struct xd_method *method,
		     const struct xd_stream_handler *handler,
		     void (*gone)(void *arg), void *gone_arg);

/* True when a send may start: ACTIVE and no send in flight. */
bool xd_stream_can_send(const struct xd_stream *s);

/*
 * Sends one message; the stream takes `bb` (destroyed after the send).
 * Only when xd_stream_can_send(). Returns 0, or -1 if the call refused
 * the batch (the stream is then cancelled and `bb` destroyed).
 */
int xd_stream_send(struct xd_stream *s, grpc_byte_buffer *bb);

/*
 * Ends the stream with a status and message (copied), e.g. a client
 * error as INVALID_ARGUMENT, and logs it at info level (any status but
 * OK), with the peer and identity. A status that refuses the client is
 * counted (refusals.h). Further calls are ignored.
 */
void xd_stream_finish(struct xd_stream *s, grpc_status_code code,
		      const char *message);

/* The same, for a caller that logged why already, at its own level and
 * rate (refusals, limits): the stream's line goes at debug level only,
 * so that one refused client is not two lines, nor a flood of them
 * unlimited. */
void xd_stream_finish_logged(struct xd_stream *s, grpc_status_code code,
			     const char *message);

/* The same for a status that answers what the client asked rather than
 * refuses the client (a health check of a service xdsd does not serve
 * is NOT_FOUND by the protocol): logged at debug level, not counted as
 * a refusal. */
void xd_stream_finish_answer(struct xd_stream *s, grpc_status_code code,
			     const char *message);

uint64_t xd_stream_id(const struct xd_stream *s);
const struct xd_method *xd_stream_method(const struct xd_stream *s);
const char *xd_stream_peer(const struct xd_stream *s);

/* The identity the client's certificate proves (URI SAN, else DNS SAN,
 * else subject CN), or NULL without one (plaintext, or no mTLS). */
const char *xd_stream_identity(const struct xd_stream *s);

/* The same for any call, malloc'd (a call refused before it became a
 * stream is logged with it too). */
char *xd_call_identity(grpc_call *call);

#endif
