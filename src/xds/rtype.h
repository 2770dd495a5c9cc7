/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The xDS resource types xdsd serves (rule T1), as one table: what a
 * type is named on the wire and in snapshots, which gRPC methods and
 * REST path serve it, how the loader names its resources and finds
 * their references, the part it plays in make-before-break (rule A2),
 * whether its contents are secret. Everything that differs by type
 * reads it here (methods.c, rest.c, the loader, the sequencer, the
 * admin pages, `xdsd --print-types`); adding a type is its enum value,
 * its row in rtype.c and the rules of its references.
 *
 * The enum order is the make-before-break push order (rule A2): secrets
 * and runtime first, then clusters, endpoints, locality endpoints (LEDS:
 * the endpoints an EDS locality takes as a glob collection), extension
 * configs (ECDS: the filter configs listeners take by name), listeners,
 * routes, scoped routes, virtual hosts. Code that walks every type in order gets the
 * right sequence for free.
 *
 * Static data; thread: any.
 */
#ifndef XD_XDS_RTYPE_H
#define XD_XDS_RTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum xd_rtype {
	XD_SECRET,
	XD_RUNTIME,
	XD_CLUSTER,
	XD_ENDPOINT,
	XD_LB_ENDPOINT,
	XD_EXTENSION_CONFIG,
	XD_LISTENER,
	XD_ROUTE,
	XD_SCOPED_ROUTE,
	XD_VIRTUAL_HOST,
	XD_RTYPE_COUNT,
};

/*
 * The part a type plays in make-before-break on the aggregated methods
 * (rule A2, protocol/sequence.h), besides going in enum order:
 *
 *   PLAIN  nothing more: it goes in its turn.
 *   KEPT   resources the client holds stay in what it is sent, after the
 *          target dropped them, until every USER type is settled on the
 *          target (clusters: listeners and routes still point at them).
 *   WARMS  it warms the KEPT type `warms` names: it goes while that
 *          type's response awaits its answer (a client warms new
 *          clusters until their endpoints come); in delta its dropped
 *          resources are kept as a KEPT type's are; and the first USER
 *          type waits for the client to subscribe to those of it that
 *          the kept resources name (endpoints).
 *   USER   its resources use KEPT ones: their removal waits until it
 *          is settled (listeners, routes, scoped routes, virtual hosts).
 */
enum xd_rtype_role {
	XD_ROLE_PLAIN,
	XD_ROLE_KEPT,
	XD_ROLE_WARMS,
	XD_ROLE_USER,
};

/* A reference rule: the string field at `path` (dotted, through
 * repeated fields and Anys, "field[cond]" for the elements that have
 * `cond`: schema/schema.h's walk) names a resource of type `to`. Rules
 * that a field path cannot say (an EDS cluster's endpoints, a virtual
 * host's route configuration) are resource.c's. */
struct xd_rtype_ref {
	enum xd_rtype to;
	const char *path;
};

struct xd_rtype_info {
	const char *type_url;      /* type.googleapis.com/<message> */
	const char *message;       /* full protobuf message name */
	const char *snapshot_key;  /* top-level key in snapshot files */
	const char *service;       /* LDS, RDS, ...: in logs and metrics */
	const char *noun;          /* for messages: "route configuration" */
	/* the field that names a resource; "@name" (XD_NAME_ANNOTATION)
	 * for a message without one (LEDS: LbEndpoint), named by the
	 * snapshot's "@name" beside its fields */
	const char *name_field;
	/* gRPC methods (rule T2): "/package.Service/Method"; no SotW
	 * method (NULL) for a type that exists in delta only (VHDS) */
	const char *sotw_path, *delta_path;
	const char *rest_path;     /* REST-JSON: /v3/discovery:<rest_path>
				      (rule R1); NULL: none */
	/* LDS, CDS, SRDS, VHDS (rules S2, D2): Envoy also subscribes to
	 * SRDS by wildcard in SotW, and opens VHDS with one (for its
	 * "base configuration": every virtual host not "@on_demand") */
	bool wildcard_ok;
	/* SotW responses carry every resource (rule S8): LDS, CDS, and SRDS,
	 * which Envoy takes whole (it removes the scopes a response leaves
	 * out) */
	bool full_state;
	/* Secrets: served without "@allow" only to clients with a verified
	 * certificate, and their contents never shown to operators (CSDS,
	 * /config_dump, the previews) */
	bool secret;
	/* Asked for by alias (VHDS, rule D10): named "<route
	 * configuration>/<name>", never by xdstp names, and without
	 * variants (rule P1), which aliases could not pick */
	bool aliased;
	/* Let go of by the client alone (ECDS, rule E2): in delta, what the
	 * snapshot dropped is not listed as removed to a client that still
	 * subscribes to it (rules D4 and D7 stand aside), as SotW never
	 * says it (rule S9). Envoy asks for a filter's config for as long
	 * as a listener runs that filter, draining listeners too, and a
	 * config removed under one would fail its requests. */
	bool kept_while_subscribed;
	/* Asked for only as glob collections (LEDS, rule G1): its
	 * resources are named by xdstp names, and a reference to the type
	 * (a locality's leds_collection_name) names a glob collection of
	 * them, which must have a member in the snapshot */
	bool by_glob;
	enum xd_rtype_role role;
	enum xd_rtype warms;       /* XD_ROLE_WARMS: the KEPT type it warms */
	/* In delta on the aggregated methods, resources the target dropped
	 * stay in what the client is sent until every USER type after it
	 * in push order is settled (route configurations, which scoped
	 * routes and virtual hosts name and follow: a scope naming one the
	 * client was told is removed routes nothing). Over SotW no response
	 * removes them (not full state). */
	bool kept_in_delta;
	const struct xd_rtype_ref *refs; /* its reference rules */
	size_t nrefs;
};

const struct xd_rtype_info *xd_rtype_info(enum xd_rtype t);

/* The name_field of a type whose message has no name (struct
 * xd_rtype_info): the snapshot's annotation names it. */
#define XD_NAME_ANNOTATION "@name"

static inline bool xd_rtype_named_by_annotation(enum xd_rtype t)
{
	const char *f = xd_rtype_info(t)->name_field;

	return f[0] == '@';
}

/* Finds a type by its type URL. Returns 0 or -1. */
int xd_rtype_from_url(const char *url, size_t len, enum xd_rtype *out);

/* Whether the type named `url` is a `secret` one (false for any URL
 * that names no type xdsd serves). */
bool xd_rtype_url_secret(const char *url, size_t len);

/* Whether type `t` has a SotW method (every type but VHDS and LEDS). */
static inline bool xd_rtype_has_sotw(enum xd_rtype t)
{
	return xd_rtype_info(t)->sotw_path != NULL;
}

/* The table as `xdsd --print-types` prints it: a line per type, in
 * push order (xdsd(8)). */
void xd_rtype_print(FILE *out);

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
	bool secret; /* a type's `secret`; false for collections */
};

/* Section t < XD_SECTION_COUNT (checked). */
struct xd_section_info xd_section(int t);

#endif
