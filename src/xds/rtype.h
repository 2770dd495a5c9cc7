/* SPDX-License-Identifier: Apache-2.0 */
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
	bool wildcard_ok;          /* LDS, CDS, SRDS, VHDS (rules S2, D2);
				      Envoy also subscribes to SRDS by
				      wildcard in SotW, and opens VHDS with
				      one (its "base configuration") */
	bool full_state;           /* SotW responses carry every resource (rule S8):
				      LDS, CDS, and SRDS for Envoy */
};

const struct xd_rtype_info *xd_rtype_info(enum xd_rtype t);

/* Finds a type by its type URL. Returns 0 or -1. */
int xd_rtype_from_url(const char *url, size_t len, enum xd_rtype *out);

/*
 * List collections (docs/protocol.md rule X3): the <T>Collection types
 * of Envoy's API, whose entries are locators of resources of type
 * `member` or such resources inline. They stand apart from the types
 * above: no per-type method serves them, only the aggregated ones, and
 * the make-before-break order (rule A2) knows nothing of them.
 */
enum xd_ctype {
	XD_LISTENER_COLLECTION,
	XD_CLUSTER_COLLECTION,
	XD_CTYPE_COUNT,
};

struct xd_ctype_info {
	const char *type_url;     /* type.googleapis.com/<message> */
	const char *message;      /* envoy.config.listener.v3.ListenerCollection */
	const char *snapshot_key; /* listener_collections */
	const char *noun;         /* listener collection */
	enum xd_rtype member;     /* the type of its entries */
};

const struct xd_ctype_info *xd_ctype_info(enum xd_ctype c);

/* Finds a collection type by its type URL. Returns 0 or -1. */
int xd_ctype_from_url(const char *url, size_t len, enum xd_ctype *out);

/*
 * The sections of a snapshot file, as pages that list them walk them:
 * the types (0 <= t < XD_RTYPE_COUNT), then the list collection types
 * (XD_RTYPE_COUNT + enum xd_ctype).
 */
#define XD_SECTION_COUNT (XD_RTYPE_COUNT + XD_CTYPE_COUNT)

struct xd_section_info {
	const char *key, *type_url, *message, *noun;
};

/* Section t < XD_SECTION_COUNT (checked). */
struct xd_section_info xd_section(int t);

#endif
