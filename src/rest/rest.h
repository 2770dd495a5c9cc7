/* SPDX-License-Identifier: Apache-2.0 */
/*
 * REST-JSON xDS (docs/protocol.md, rule R1; xdsd.yaml(5), rest_listen):
 * HTTP on `rest_listen`, off by default.
 *
 *   POST /v3/discovery:listeners      (and routes, scoped-routes,
 *        clusters, endpoints, secrets, runtime)
 *
 * The body is a DiscoveryRequest in the proto3 JSON mapping, read by
 * the snapshot transcoder against the schema, so that an unknown field
 * or a value of the wrong type is refused with 400 and its path
 * ("node.clustr: unknown field ..."); the answer is a DiscoveryResponse
 * in the same mapping (lowerCamelCase names, resources as Any with
 * "@type"), computed by answer.h from the node's snapshot.
 *
 * A request for the version the client already holds is held until
 * what it asks for changes (the cache's watch, not a timer) or
 * `rest_poll_timeout` passes; then it is answered, by the current
 * content either way. Held requests are bounded by the connections
 * (REST_MAX_CONNECTIONS, one request each at a time), and are answered
 * or dropped when their client goes away or the daemon stops.
 *
 * REST clients present no certificate: they are served what clients
 * without an identity may see (no restricted resource, no secret
 * without "@anyone"), and refused (403) when `authorize:` rules demand
 * an identity for every node.
 *
 * Ownership: borrows its deps (they must outlive it). Thread: loop only.
 */
#ifndef XD_REST_REST_H
#define XD_REST_REST_H

#include <uv.h>

#include "cache/cache.h"
#include "http/http.h"
#include "config/config.h"
#include "rest/pollers.h"
#include "schema/schema.h"
#include "xds/rtype.h"

struct xd_rest_deps {
	const struct xd_config *cfg;
	struct xd_cache *cache;
	const struct xd_schema *schema;
};

struct xd_rest;

/*
 * Why a request was refused: each refusal is a warning naming the peer,
 * the node when it was read, the reason and the message the client got,
 * and is counted in /metrics as
 * xdsd_http_refused_total{endpoint="rest",reason} (the reasons of a
 * gRPC stream's refusals, transport/refusals.h, where they mean the
 * same).
 */
enum xd_rest_refusal {
	XD_REST_UNAUTHENTICATED,  /* 403: authorize: rules; REST has no identity */
	XD_REST_LIMITS,           /* max_node_size, max_node_id_size,
				   * max_names_per_stream */
	XD_REST_INVALID_ARGUMENT, /* no DiscoveryRequest of the path's type,
				   * a malformed node */
	XD_REST_NO_SNAPSHOT,      /* 404: no snapshot serves the node */
	XD_REST_UNKNOWN_PATH,     /* 404: not a path of a type */
	XD_REST_METHOD,           /* 405: not a POST */
	XD_REST_REFUSAL_COUNT,
};

/* The reason's label in /metrics ("no_snapshot"). */
const char *xd_rest_refusal_name(enum xd_rest_refusal why);

/* Counters for /metrics (admin/metrics.h). */
struct xd_rest_stats {
	unsigned long long requests[XD_RTYPE_COUNT]; /* POSTed to a type */
	unsigned long long answers[XD_RTYPE_COUNT];  /* answered with 200 */
	unsigned long long refused; /* answered otherwise, any path */
	/* the refusals among them, by reason */
	unsigned long long refusals[XD_REST_REFUSAL_COUNT];
	size_t waiting;             /* held now */
};

/* Listens on cfg->rest_listen. Returns 0, or -1 with the reason logged
 * (nothing is then left open). */
int xd_rest_start(struct xd_rest **out, uv_loop_t *loop,
		  const struct xd_rest_deps *deps);

/* The bound TCP port (the real one for port 0), or 0 for a unix socket. */
int xd_rest_port(const struct xd_rest *r);

/* The live counters (valid as long as the endpoint). */
const struct xd_rest_stats *xd_rest_stats(const struct xd_rest *r);

/* Answers printed as JSON since start; the others shared one
 * (printed.h). */
unsigned long long xd_rest_printed_total(const struct xd_rest *r);

/* Calls fn for each REST-JSON poller fresh now (pollers.h: seen within
 * rest_poll_timeout + 30 s, every held one among them); read-only, loop
 * thread. */
void xd_rest_visit_pollers(const struct xd_rest *r,
			   void (*fn)(void *ctx, const struct xd_rest_poller *p),
			   void *ctx);

/* Pollers dropped from the full record since start (pollers.h). */
unsigned long long xd_rest_pollers_dropped_total(const struct xd_rest *r);

/* The HTTP server's counters (http.h). */
const struct xd_http_stats *xd_rest_http_stats(const struct xd_rest *r);

/* Closes the listener, every connection and every held request;
 * `done(arg)` runs once every handle is closed. */
void xd_rest_stop(struct xd_rest *r, void (*done)(void *arg), void *arg);

#endif
