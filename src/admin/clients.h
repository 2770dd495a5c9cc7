/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /clients: every stream as JSON, for xdsctl and scripts.
 *
 *   {"clients": [ {
 *      "stream": 12, "method": "ADS", "mode": "sotw",
 *      "peer": "10.0.0.7:51234", "identity": "spiffe://..." | null,
 *      "connected_since": "2026-11-23T08:15:02.113Z",
 *      "node": {"id", "cluster", "locality": {"region", "zone",
 *               "sub_zone"}, "user_agent": {"name", "version"}},
 *      "snapshot": "default" | null, "snapshot_version": "..." | null,
 *      "canary": false,           (a staged rollout's canary)
 *      "state": "synced" | "pending" | "nacked"   (the worst of its types)
 *      "types": [ {"type": "clusters", "type_url": "...",
 *         "wildcard": true, "names": 0,
 *         "sent_version": "..." | null, "nonce": "3" | null,
 *         "acked_version": "..." | null, "current_version": "..." | null,
 *         "acks": 4, "nacks": 1,
 *         "last_nack": {"message": "...", "at": "..."} | null,
 *         "in_flight": false, "state": "nacked",
 *         "pending_since": 1795000000123 | null,  (Unix ms: the send of the
 *                                   response in flight, docs/engine.md)
 *         "pending_seconds": 12.5} ] } ],         (its age; 0 when none)
 *    "count": N, "streams": N_ALL,   (shown, and open in all)
 *    "rest_pollers": [ {"node": "n1", "key": "web", "peer": "...",
 *      "types": ["clusters"], "last_seen": "<RFC 3339 UTC>"} ]}
 *                 (REST-JSON pollers seen lately, rest/pollers.h)
 *
 * Filters: node=GLOB (fnmatch(3) on the node id), state=synced|pending|
 * nacked (the stream's state), pending=DURATION (streams with a type whose
 * response has waited at least that long for its answer; "0": any
 * response in flight). A filter that cannot be read is a 400. The node
 * filter takes REST-JSON pollers too; the others leave them out (they
 * have no sync state).
 *
 * Written in slices between loop turns (pager.h).
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_CLIENTS_H
#define XD_ADMIN_CLIENTS_H

#include "admin/admin.h"
#include "admin/pager.h"
#include "util/buf.h"

struct xd_clients_filter {
	const char *node_glob; /* NULL: every node */
	int state;             /* enum xd_sub_sync, or -1 for any */
	/* only streams with a type whose response has waited at least this
	 * long (ms) for its answer; -1: any stream */
	int64_t pending_ms;
};

/*
 * Reads the filters from a query string. Returns 0, or -1 with a
 * message in `why` (e.g. "state must be synced, pending or nacked").
 */
int xd_clients_filter_parse(struct xd_clients_filter *f, const char *query,
			    char *glob_buf, size_t glob_cap, char *why,
			    size_t why_len);

/* A stream's state: its worst type's (nacked, then pending, then
 * synced); pending too while it has no node or snapshot yet. */
enum xd_sub_sync xd_clients_state(const struct xd_client_view *c);

/* Whether a stream passes the filter; *state is xd_clients_state(c). */
bool xd_clients_match(const struct xd_clients_filter *f,
		      const struct xd_client_view *c, enum xd_sub_sync *state);

/* The type's name in the admin's documents: the snapshot section
 * ("clusters"), or the type URL of a type xdsd does not serve. */
const char *xd_clients_type_name(const struct xd_client_type *ct);

/* The longest node glob a filter takes. */
#define XD_CLIENTS_GLOB_MAX 1024

/*
 * The page, written in steps (pager.h): the streams open when it began
 * that are still open when it reaches them, oldest first. NULL when
 * the query's filters cannot be read, with why (a 400).
 */
struct xd_clients_page;

struct xd_clients_page *xd_clients_page_new(struct xd_sessions *sessions,
					    const struct xd_rest *rest,
					    const char *query, char *why,
					    size_t why_len);

/* The page for the pager (pager.h), whose state is an
 * xd_clients_page: written a slice of the streams at a time. */
extern const struct xd_pager_page xd_clients_pager;

#endif
