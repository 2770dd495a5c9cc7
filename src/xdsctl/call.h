/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Asking xdsd's admin endpoint: one HTTP request per call, on
 * xd_http_fetch (http/client.h), and what its answers mean for xdsctl's
 * exit status.
 *
 * Ownership: an xc_answer owns its body and JSON; xc_answer_free
 * releases them.
 */
#ifndef XD_XDSCTL_CALL_H
#define XD_XDSCTL_CALL_H

#include <jansson.h>
#include <stddef.h>

#include "util/buf.h"
#include "xdsctl/ctl.h"

struct xc_answer {
	int status;
	char *body; /* NUL-terminated, len bytes before it */
	size_t len;
	char *type;   /* Content-Type, "" when absent */
	json_t *json; /* the body parsed when it is JSON, else NULL */
};

/*
 * Sends `method` `path` (with its query) to o->admin within
 * o->timeout_ms. Returns XC_OK with *a filled, or XC_UNREACHABLE having
 * said why on stderr (*a then holds nothing to free).
 */
int xc_call(const struct xc_opts *o, const char *method, const char *path,
	    struct xc_answer *a);

/* xc_call for a GET that must answer 200 with a JSON object; any other
 * answer is explained (xc_refused) and its exit status returned. */
int xc_get_json(const struct xc_opts *o, const char *path,
		struct xc_answer *a);

/*
 * Says on stderr why `a` is not what the command wanted, and returns the
 * exit status: XC_FAILED when xdsd refused the request with its reason
 * (400, 404, 409, 422 or 503, as text or as a JSON record with errors),
 * XC_UNREACHABLE when the answer is not one xdsd gives (its 404 for an
 * unknown page, another server's error page, a server error).
 */
int xc_refused(const struct xc_opts *o, const char *path,
	       const struct xc_answer *a);

/* The body exactly as it came, for --json. */
void xc_print_raw(const struct xc_answer *a);

void xc_answer_free(struct xc_answer *a);

/* Appends "?key=value" (or "&key=value") to `path`, the value
 * percent-encoded. */
void xc_query_add(struct xd_buf *path, const char *key, const char *value);

#endif
