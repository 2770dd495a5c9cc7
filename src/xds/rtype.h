/*
 * The xDS resource types xdsd serves (rule T1).
 *
 * The enum order is the make-before-break push order (rule A2): secrets
 * and runtime first, then clusters, endpoints, listeners, routes, scoped
 * routes, virtual hosts. Code that walks every type in order gets the
 * right sequence for free.
 *
 * Static data; thread: any.
 */
#ifndef XD_XDS_RTYPE_H
#define XD_XDS_RTYPE_H

#include <stdbool.h>
#include <stddef.h>

enum xd_rtype {
	XD_SECRET,
	XD_RUNTIME,
	XD_CLUSTER,
	XD_ENDPOINT,
	XD_LISTENER,
	XD_ROUTE,
	XD_SCOPED_ROUTE,
	XD_VIRTUAL_HOST,
	XD_RTYPE_COUNT,
};

struct xd_rtype_info {
	const char *type_url;      /* type.googleapis.com/<message> */
	const char *message;       /* full protobuf message name */
	const char *snapshot_key;  /* top-level key in snapshot files */
	const char *service;       /* LDS, RDS, ... */
	const char *noun;          /* for messages: "route configuration" */
	bool wildcard_ok;          /* LDS, CDS, SRDS (rules S2, D2); Envoy also
				      subscribes to SRDS by wildcard in SotW */
	bool full_state;           /* SotW responses carry every resource (rule S8) */
};

const struct xd_rtype_info *xd_rtype_info(enum xd_rtype t);

/* Finds a type by its type URL. Returns 0 or -1. */
int xd_rtype_from_url(const char *url, size_t len, enum xd_rtype *out);

#endif
