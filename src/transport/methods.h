/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC methods xdsd serves (rule T2): the two aggregated methods and
 * the SotW and incremental method of every per-type service, as the
 * type table (xds/rtype.h) names them; and, in tables of their own,
 * the two methods of the client status service (CSDS) and the two of
 * gRPC's health service, which other handlers serve (server.h).
 *
 * Static data (the per-type methods built once, on first use); thread:
 * any.
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
	bool unary;         /* one request, one response (FetchClientStatus,
			     * health Check) */
};

/* Every xDS method, the aggregated ones first, then each type's in push
 * order (SotW, delta); their count in *n. The same array at every call:
 * a method's index in it is the method's number (stats.h). */
const struct xd_method *xd_methods(size_t *n);

/* envoy.service.status.v3.ClientStatusDiscoveryService */
extern const struct xd_method xd_csds_methods[];
extern const size_t xd_csds_method_count;

/* grpc.health.v1.Health: Check (unary) and Watch (one request, a
 * response whenever the status changes). List is not served: an
 * unknown method, answered UNIMPLEMENTED, which its clients read as
 * "not supported". */
#define XD_HEALTH_SERVICE "grpc.health.v1.Health"
extern const struct xd_method xd_health_methods[];
extern const size_t xd_health_method_count;

/*
 * The service a method path names: "/pkg.Service/Method" gives
 * "pkg.Service", its length in *len. Static data; NULL for a path of
 * another form.
 */
const char *xd_method_service(const struct xd_method *m, size_t *len);

#endif
