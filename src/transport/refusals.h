/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streams xdsd refused, by reason (/metrics:
 * xdsd_streams_refused_total{reason}). A refusal is a stream or call
 * that xdsd ended with an error status because of what its client is,
 * sent or holds; the reason follows from the status, so that every
 * refusal is counted wherever it is decided:
 *
 *   permission_denied  PERMISSION_DENIED to a client with an identity:
 *                      authorize: rules, csds_allow
 *   unauthenticated    PERMISSION_DENIED to a client without one (a
 *                      plaintext peer where an identity is required)
 *   limits             RESOURCE_EXHAUSTED: the max_* and csds_max_* directives
 *                      (connections per address, names, requests a
 *                      second, node size...), CSDS answer size
 *   invalid_argument   INVALID_ARGUMENT: a request or node that cannot
 *                      be parsed, a wrong type URL, a node changed on
 *                      its stream
 *   no_snapshot        NOT_FOUND: no snapshot serves the node
 *   unimplemented      UNIMPLEMENTED: a method xdsd does not serve (an
 *                      xDS v2 client, say)
 *
 * Streams that end otherwise (OK, cancelled, the daemon stopping,
 * INTERNAL) are not refusals. The set and the names are stable: new
 * refusals map to one of them.
 *
 * Thread: loop thread only.
 */
#ifndef XD_TRANSPORT_REFUSALS_H
#define XD_TRANSPORT_REFUSALS_H

#include <grpc/status.h>
#include <stdbool.h>

enum xd_refusal {
	XD_REFUSED_PERMISSION_DENIED,
	XD_REFUSED_UNAUTHENTICATED,
	XD_REFUSED_LIMITS,
	XD_REFUSED_INVALID_ARGUMENT,
	XD_REFUSED_NO_SNAPSHOT,
	XD_REFUSED_UNIMPLEMENTED,
	XD_REFUSED_COUNT,
};

/* The reason a stream ended with `code` was refused for, its client
 * with an identity or not; false when that is no refusal. */
bool xd_refusal_of(grpc_status_code code, bool has_identity,
		   enum xd_refusal *out);

/* Counts a stream ended with `code`, if that is a refusal; returns its
 * reason's name ("limits"), or NULL. */
const char *xd_refusals_count(grpc_status_code code, bool has_identity);

/* The label /metrics uses. */
const char *xd_refusal_name(enum xd_refusal r);

/* Streams refused for `r` since start. */
unsigned long long xd_refusals(enum xd_refusal r);

#endif
