/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTP/1.1 on the libuv loop: the admin endpoint's and REST-JSON xDS's
 * transport (rest.h). The protocol itself, parsing included, is GNU
 * libmicrohttpd's (docs/design.md §11); this module drives it from the
 * loop and keeps to xdsd's bounds. Handlers see whole requests.
 *
 * Each connection handles its requests one at a time, in order, keep-
 * alive by default. The handler gets a whole request (method, path,
 * query, headers, body) and fills in the response, then calls
 * xd_http_reply, at once or later from the loop (a reload answers when
 * it is over). xd_http_reply never calls a handler: a pipelined request
 * is read and handled on a later loop turn, after the answer before it
 * is sent. A connection closed by the client meanwhile is dropped after
 * that reply, which then goes nowhere; a handler that holds requests
 * for long (REST-JSON's long polls) sets `gone` to hear of it at once.
 *
 * Bounds, each refusal logged with the peer and counted (stats):
 * - a request's head (request line and headers) at most 16 KiB (431),
 *   its body at most `max_body` (413);
 * - a request head must be complete within `header_timeout_ms` of the
 *   connection opening or of the answer before it (slow heads are
 *   closed; this is also how long an idle keep-alive connection stays);
 * - at most `max_connections` connections at once, at most
 *   `max_per_address` of them from one client address (more are closed
 *   at once), but for the addresses in `trusted` (balancers and proxies,
 *   whose address every client behind them shares);
 * - nothing more is read from a connection while an answer is being
 *   sent, beyond one small buffer: a client that does not read what it
 *   asked for holds one answer, never more;
 * - a connection that sends or takes nothing for `idle_ms` while a
 *   request is under way is closed;
 * - a connection whose client has ended its stream closes as soon as
 *   nothing on it is being handled or answered (a held request is
 *   dropped at once), even when the end came with the client's last
 *   bytes;
 * - with `max_requests_per_second`, a connection sending more than that
 *   on average (bursts of `max_request_burst`) is answered 429 and
 *   closed.
 * A request libmicrohttpd cannot parse gets 400 and the connection
 * closes.
 *
 * A HEAD request is handled as the handler likes (usually as GET); its
 * response goes without the body.
 *
 * Ownership: the server owns its connections; an exchange is valid
 * until xd_http_reply, whether or not its connection still is.
 * Thread: loop only.
 */
#ifndef XD_HTTP_HTTP_H
#define XD_HTTP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <uv.h>

#include "util/address.h"
#include "util/buf.h"

struct xd_http_server;

/* One request and the response being written for it. */
struct xd_http_exchange {
	/* the request */
	const char *method; /* "GET", "POST", ... */
	const char *path;   /* percent-encoding left as sent */
	const char *query;  /* after '?', "" when none */
	const uint8_t *body;
	size_t body_len;
	const char *peer;   /* "127.0.0.1:40112", "unix" */

	/* the response: status 200 and an empty text body by default */
	int status;
	const char *content_type;
	const char *allow;  /* for 405: the methods the path takes */
	const char *location; /* for redirects */
	struct xd_buf out;

	/* Set by a handler that answers later: called once, from the loop,
	 * when the connection closes before xd_http_reply (the client went
	 * away, or the server stops). The handler must still call
	 * xd_http_reply, then or later; it sends nothing. */
	void (*gone)(struct xd_http_exchange *x);
	void *data; /* the handler's, for `gone` */
};

struct xd_http_opts {
	const char *name;       /* in log lines: "admin", "REST-JSON" */
	const char *listen;     /* host:port, [v6]:port or unix:/path */
	size_t max_body;        /* bytes */
	size_t max_connections;
	size_t max_per_address; /* 0: no limit but max_connections */
	const struct xd_cidr *trusted; /* exempt from max_per_address; */
	size_t ntrusted;               /* must outlive the server */
	uint64_t header_timeout_ms;
	uint64_t idle_ms;
	uint64_t max_requests_per_second; /* per connection; 0: no limit */
	uint64_t max_request_burst;
	/* Called for every well-formed request within the bounds. */
	void (*handle)(void *ctx, struct xd_http_exchange *x);
	void *ctx;
};

/* What the server refused and handled, for /metrics. */
struct xd_http_stats {
	unsigned long long requests;     /* handed to the handler */
	unsigned long long over_connections; /* closed: max_connections */
	unsigned long long over_per_address; /* closed: max_per_address */
	unsigned long long header_timeouts;  /* closed: head too slow */
	unsigned long long over_rate;    /* answered 429 */
	unsigned long long too_large;    /* answered 413 or 431 */
	size_t connections;              /* open now */
};

/*
 * Listens and serves. Returns 0, or -1 with the reason in `why` (a
 * sentence, e.g. "cannot listen on 127.0.0.1:18080: address in use").
 */
int xd_http_start(struct xd_http_server **out, uv_loop_t *loop,
		  const struct xd_http_opts *opts, char *why, size_t why_len);

/* The bound TCP port (the real one for port 0), or 0 for a unix socket. */
int xd_http_port(const struct xd_http_server *s);

/* The live counters (valid as long as the server). */
const struct xd_http_stats *xd_http_stats(const struct xd_http_server *s);

/*
 * The value of request header `name` (any case), or NULL. Valid from
 * the handler's call until xd_http_reply, while the connection lasts
 * (after `gone`, NULL).
 */
const char *xd_http_header(const struct xd_http_exchange *x,
			   const char *name);

/* Sends the response of `x` (status, type, body); `x` is then gone. */
void xd_http_reply(struct xd_http_exchange *x);

/*
 * The same with a body of `n` pieces the handler shares with other
 * answers (up to 4), instead of `out`: they are sent without a copy, and
 * `release(arg)` runs once they are no longer needed (sent, or the
 * connection gone), from the loop.
 */
void xd_http_reply_shared(struct xd_http_exchange *x, const struct iovec *iov,
			  int n, void (*release)(void *arg), void *arg);

/*
 * An answer sent while it is being written (a long admin page): the
 * head goes now, with the status and type set so far and no length
 * (chunked under HTTP/1.1; under HTTP/1.0 the connection closes after
 * it), then x->out's bytes as the client takes them. The handler goes
 * on appending to x->out: after each append it calls
 * xd_http_stream_push, and xd_http_stream_end after the last. The bytes
 * the client has taken are dropped from the front of x->out between
 * two appends (xd_http_stream_held), so x->out holds only what is
 * written and not yet sent.
 *
 * `room(x)` runs (from the loop, within the server's run) each time the
 * client has taken enough that at most `low` bytes are left unsent: a
 * writer that waits for room goes on then. While nothing is left to
 * send and the answer is not over, the connection waits (suspended)
 * until the next push, so a slow writer costs no polling; a client
 * that takes nothing is closed after `idle_ms`, as for any answer.
 * A connection that closes before the end calls `gone` as for a held
 * request; the handler then calls xd_http_stream_end, which frees `x`.
 */
void xd_http_stream_start(struct xd_http_exchange *x, size_t low,
			  void (*room)(struct xd_http_exchange *x));

/* More bytes are in x->out: sends them once the client takes them. */
void xd_http_stream_push(struct xd_http_exchange *x);

/* Drops the bytes sent from the front of x->out, moving the rest to the
 * start; returns how many are left unsent (x->out.len after it). */
size_t xd_http_stream_held(struct xd_http_exchange *x);

/* x->out ends the answer: it is over once they are sent; `x` is then
 * gone. */
void xd_http_stream_end(struct xd_http_exchange *x);

/* Shorthand: a text/plain response with this status and text (and a
 * newline), the text escaped as log lines are (log.h, xd_log_escape:
 * control characters and bytes that are not UTF-8 as \xNN). */
void xd_http_text(struct xd_http_exchange *x, int status, const char *text);

/*
 * The value of `key` in a query string ("a=1&b=x%2Fy"), percent- and
 * plus-decoded into `out` (room for `cap` bytes). Returns 1, 0 when the
 * key is absent, or -1 when its value is malformed or too long.
 */
int xd_http_query_get(const char *query, const char *key, char *out,
		      size_t cap);

/* Stops listening and closes every connection; `done(arg)` runs once
 * every handle is closed. Pending exchanges hear `gone`. */
void xd_http_stop(struct xd_http_server *s, void (*done)(void *arg),
		  void *arg);

#endif
