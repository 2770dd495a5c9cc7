/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A blocking HTTP/1.1 client for one request at a time: what xdsctl and
 * the tests use to talk to the admin endpoint. libcurl speaks HTTP and
 * reads what the peer sends (chunked bodies, interim 1xx answers,
 * connection reuse rules, header limits); this module maps xdsd's
 * addresses onto it, bounds the answer and turns libcurl's failures
 * into sentences that name the address.
 *
 * Each request has its own connection, closed once the answer is read:
 * the admin endpoint is asked a few things now and then, not streamed
 * to. Proxies named in the environment (http_proxy, all_proxy) are not
 * used and redirects are not followed: the address given is the one
 * asked, and a 302 is an answer like another.
 *
 * Bounds: the body at max_body bytes (XD_HTTP_MAX_BODY when 0), refused
 * as soon as a Content-Length announces more and, without one, as soon
 * as more arrives; the headers at XD_HTTP_MAX_HEAD bytes; the whole
 * exchange (resolving, connecting, sending, reading) at timeout_ms.
 *
 * Thread: any; no shared state (libcurl's global set-up is counted and
 * locked by libcurl itself, 7.84 and later).
 */
#ifndef XD_HTTP_CLIENT_H
#define XD_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* An answer bigger than this is not the admin endpoint talking. */
#define XD_HTTP_MAX_BODY ((size_t)1 << 30)
/* Every header of the answer, interim answers' included. */
#define XD_HTTP_MAX_HEAD (64 * 1024)

struct xd_http_request {
	const char *target; /* host:port, [v6]:port or unix:/path */
	const char *method; /* GET, HEAD, POST, or any other token */
	const char *path;   /* the request target, sent as it is */
	const char *body;   /* NULL: none (POST then sends an empty one) */
	size_t body_len;
	int timeout_ms;  /* the whole exchange; more than 0 (libcurl takes 0 as none) */
	size_t max_body; /* 0: XD_HTTP_MAX_BODY */
};

struct xd_http_response {
	int status;
	char *content_type; /* "" when absent */
	char *body;         /* NUL-terminated; body_len bytes before it */
	size_t body_len;
};

/*
 * Sends q and reads the whole final answer (interim 1xx ones are
 * skipped) into *out. Returns 0, or -1 with a sentence in `why`, e.g.
 * "cannot connect to 127.0.0.1:18080: Connection refused", "no answer
 * from 127.0.0.1:18080 within 300 ms", "answer from 127.0.0.1:18080 too
 * large: over 1073741824 bytes"; *out then holds nothing to free.
 */
int xd_http_fetch(const struct xd_http_request *q,
		  struct xd_http_response *out, char *why, size_t why_len);

void xd_http_response_free(struct xd_http_response *r);

#endif
