/*
 * A small HTTP/1.1 server on the libuv loop: the admin endpoint's and
 * REST-JSON xDS's transport (rest.h). Requests are parsed by http_parser
 * (Debian's libhttp-parser), never by hand.
 *
 * Each connection handles its requests one at a time, in order
 * (pipelined requests wait their turn), keep-alive by default. The
 * handler gets a whole request (method, path, query, body) and fills in
 * the response, then calls xd_http_reply, at once or later from the loop
 * (a reload answers when it is over). A connection closed by the client
 * meanwhile is freed after that reply, which then goes nowhere; a
 * handler that holds requests for long (REST-JSON's long polls) sets
 * `gone` to hear of it at once.
 *
 * Bounds: a request's head (request line and headers) at most 16 KiB
 * (431 when over), its body at most `max_body` (413), at most
 * `max_connections` connections at once (more are closed at once), and
 * a connection idle for `idle_ms` is closed. A request http_parser
 * refuses gets 400; the connection then closes.
 *
 * A HEAD request is handled as the handler likes (usually as GET); its
 * response goes without the body.
 *
 * Ownership: the server owns its connections; an exchange belongs to
 * its connection and is valid until xd_http_reply. Thread: loop only.
 */
#ifndef XD_HTTP_HTTP_H
#define XD_HTTP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

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
	const char *listen;     /* host:port, [v6]:port or unix:/path */
	size_t max_body;        /* bytes */
	size_t max_connections;
	uint64_t idle_ms;
	/* Called for every well-formed request. */
	void (*handle)(void *ctx, struct xd_http_exchange *x);
	void *ctx;
};

/*
 * Listens and serves. Returns 0, or -1 with the reason in `why` (a
 * sentence, e.g. "cannot listen on 127.0.0.1:18080: address in use").
 */
int xd_http_start(struct xd_http_server **out, uv_loop_t *loop,
		  const struct xd_http_opts *opts, char *why, size_t why_len);

/* The bound TCP port (the real one for port 0), or 0 for a unix socket. */
int xd_http_port(const struct xd_http_server *s);

/* Sends the response of `x` (status, type, body); `x` is then gone. */
void xd_http_reply(struct xd_http_exchange *x);

/* Shorthand: a text/plain response with this status and text. */
void xd_http_text(struct xd_http_exchange *x, int status, const char *text);

/*
 * The value of `key` in a query string ("a=1&b=x%2Fy"), percent- and
 * plus-decoded into `out` (room for `cap` bytes). Returns 1, 0 when the
 * key is absent, or -1 when its value is malformed or too long.
 */
int xd_http_query_get(const char *query, const char *key, char *out,
		      size_t cap);

/* Stops listening and closes every connection; `done(arg)` runs once
 * every handle is closed. Pending exchanges are dropped. */
void xd_http_stop(struct xd_http_server *s, void (*done)(void *arg),
		  void *arg);

#endif
