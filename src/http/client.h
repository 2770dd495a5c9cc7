/*
 * A blocking HTTP/1.1 client for one request at a time: what xdsctl and
 * the tests use to talk to the admin endpoint. The response is read by
 * http_parser, as the server reads requests.
 *
 * Each request opens its own connection (Connection: close): the admin
 * endpoint is asked a few things now and then, not streamed to.
 *
 * Thread: any; no shared state.
 */
#ifndef XD_HTTP_CLIENT_H
#define XD_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct xd_http_response {
	int status;
	char *content_type; /* "" when absent */
	char *body;         /* NUL-terminated; body_len bytes before it */
	size_t body_len;
};

/*
 * Sends `method` `path` (with `body`, may be NULL) to `target`
 * (host:port, [v6]:port or unix:/path) and reads the whole response
 * within `timeout_ms`. Returns 0, or -1 with a sentence in `why` (e.g.
 * "cannot connect to 127.0.0.1:18080: Connection refused").
 */
int xd_http_fetch(const char *target, const char *method, const char *path,
		  const char *body, size_t body_len, int timeout_ms,
		  struct xd_http_response *out, char *why, size_t why_len);

void xd_http_response_free(struct xd_http_response *r);

#endif
