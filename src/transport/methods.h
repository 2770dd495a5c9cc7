/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC methods xdsd serves (rule T2): the two aggregated methods and
 * the SotW and incremental method of every per-type service; and, in a
 * table of their own, the two methods of the client status service
 * (CSDS), which another handler serves (server.h).
 *
 * Static data; thread: any.
 */
#ifndef XD_TRANSPORT_METHODS_H
#define XD_TRANSPORT_METHODS_H

#include <stdbool.h>
#include <stddef.h>

#include "xds/rtype.h"

struct xd_method {
	const char *path;   /* "/package.Service/Method" */
	const char *name;   /* short, for logs: "ADS", "delta CDS" */
	bool aggregated;    /* ADS: the type URL comes with each request */
	enum xd_rtype type; /* the implied type when !aggregated */
	bool delta;         /* incremental (Delta*) rather than SotW */
	bool unary;         /* one request, one response (FetchClientStatus) */
};

extern const struct xd_method xd_methods[];
extern const size_t xd_method_count;

/* envoy.service.status.v3.ClientStatusDiscoveryService */
extern const struct xd_method xd_csds_methods[];
extern const size_t xd_csds_method_count;

#endif
