/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which requests the admin endpoint takes (xdsd(8), "ADMIN ENDPOINT"):
 * the defence against web pages. A page in an operator's browser can
 * send requests to 127.0.0.1:18080, and with a DNS name it controls
 * rebound to 127.0.0.1 it can even read the answers. So:
 *
 * - Host, when sent, must name the endpoint: an IP address (a page can
 *   only rebind a name), `localhost`, the machine's host name (and its
 *   first label), the host of admin_listen, or one of `admin_hosts:`.
 *   Anything else: 403.
 * - A request a browser marks as coming from another origin (Origin
 *   naming a host that is not one of those, Origin "null", or
 *   Sec-Fetch-Site cross-site or same-site): 403.
 * - A POST must say Content-Type: application/json, which a form or a
 *   "simple" cross-origin request cannot: 415 otherwise.
 *
 * Tools that send no Host and no Origin (HTTP/1.0, scripts) are let in:
 * what this guards against is a browser, and browsers send both.
 *
 * Thread: any; pure.
 */
#ifndef XD_ADMIN_GUARD_H
#define XD_ADMIN_GUARD_H

#include <stddef.h>

#include "config/config.h"

/* What a request brings that the guard looks at (NULL: not sent), and
 * the machine's host name (gethostname(2); NULL or "" when unknown). */
struct xd_admin_request {
	const char *hostname;
	const char *method;
	const char *host;           /* Host */
	const char *origin;         /* Origin */
	const char *fetch_site;     /* Sec-Fetch-Site */
	const char *content_type;   /* Content-Type */
};

/* 0 when the request may go on; else the status to answer (403, 415)
 * with the reason in `why`. */
int xd_admin_guard(const struct xd_config *cfg, const struct xd_admin_request *r,
		   char *why, size_t why_len);

#endif
