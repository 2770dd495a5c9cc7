/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client status service (CSDS, envoy.service.status.v3): what it
 * reads from a ClientStatusRequest and what it answers, encoded from the
 * streams' live state (xd_sessions_visit) the way /clients renders it
 * as JSON. The RPCs themselves are in csds_service.h.
 *
 * A request is read with the bounded wire reader, three levels deep
 * (request, NodeMatcher, StringMatcher) and never further: a node's
 * metadata or a matcher's regex is skipped unread, so no nesting can
 * make the reader recurse.
 *
 * The answer has one ClientConfig per node (id and cluster) among the
 * streams whose node matches, with the node xdsd keeps (id, cluster,
 * locality, user agent) and one GenericXdsConfig per resource each
 * stream of it subscribes to (xdsd(8), "CLIENT STATUS SERVICE"); the
 * deprecated per-type form (ClientConfig.xds_config, PerXdsConfig) is
 * never used:
 *
 *   config_status  SYNCED, ERROR (a NACK concerns it), STALE (a
 *                  response awaits its answer), NOT_SENT (the current
 *                  version is not sent yet)
 *   client_status  ACKED, NACKED, REQUESTED (the client was never seen
 *                  to ACK it) or DOES_NOT_EXIST (a name the snapshot
 *                  lacks)
 *   version_info   the version of the type the client last ACKed
 *   xds_config     the resource as xdsd serves the node now; for a
 *                  NACKED one, as the client last ACKed it (what it
 *                  still runs), if it ever did. Never for secrets,
 *                  whose contents never leave xdsd here
 *   error_state    for NACKED resources: the resource as refused
 *                  (failed_configuration, with xds_config's rules), the
 *                  NACK's message, time, and the version it rejected
 *
 * The sync state is kept per stream and type (sub.h, xd_sub_sync); per
 * resource (xd_client_type_resources), what the client runs is the content it
 * last ACKed (its running ledger) and what it refused is the content
 * it answered last with a NACK (the ledger of what it holds). A
 * resource asked for by a locator (rule P1) is listed under its name,
 * with the variant the client holds. A SotW NACK refuses
 * its whole response: every resource in it is NACKED. A delta NACK concerns the resources that
 * differ from what the client runs (those the refused responses
 * changed); the rest stay ACKED.
 *
 * A glob collection a delta stream subscribes to (rule X2) is listed as
 * its members, under their own names; an empty one as the glob, which
 * does not exist.
 *
 * When several streams of one node carry the same type, the newest
 * stream's state is reported.
 *
 * Ownership: a query owns its matchers. Thread: loop thread (render);
 * parsing is pure.
 */
#ifndef XD_ADMIN_CSDS_H
#define XD_ADMIN_CSDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/session.h"
#include "util/buf.h"

/* Node matchers one request may carry. */
#define XD_CSDS_MAX_MATCHERS 64

/* The largest answer: past it the call ends RESOURCE_EXHAUSTED (narrow
 * the matchers, or set exclude_resource_contents). All the answers
 * being built or sent at once hold no more (csds_service.h). */
#define XD_CSDS_RESPONSE_MAX (256u << 20)

enum xd_csds_match {
	XD_CSDS_ANY, /* a NodeMatcher without node_id */
	XD_CSDS_EXACT,
	XD_CSDS_PREFIX,
	XD_CSDS_SUFFIX,
	XD_CSDS_CONTAINS,
};

struct xd_csds_matcher {
	enum xd_csds_match kind;
	bool ignore_case; /* ASCII letters only, as Envoy does */
	char *text;       /* owned; may hold any bytes */
	size_t len;
};

struct xd_csds_query {
	struct xd_csds_matcher *matchers; /* none: every node */
	size_t nmatchers;
	bool exclude_contents; /* exclude_resource_contents */
};

/*
 * Reads a ClientStatusRequest. Returns 0, or -1 with the reason in `why`
 * for what is not protobuf, or asks for what xdsd does not do
 * (node_metadatas, safe_regex and custom matchers). `q` is written only
 * on success.
 */
int xd_csds_query_parse(struct xd_csds_query *q, const uint8_t *data,
			size_t len, char *why, size_t why_len);

void xd_csds_query_free(struct xd_csds_query *q);

/* Whether a node id passes the query's matchers (any of them). */
bool xd_csds_query_matches(const struct xd_csds_query *q, const char *node_id,
			   size_t len);

/*
 * The ClientStatusResponse for `q`, built in steps between loop turns
 * (the admin's pages do the same, pager.h): each step walks the streams
 * open when the build began until `deadline_ns` (uv_hrtime), copying
 * what each matching node contributes, then appends the answer to `out`
 * (the same buffer at every step, sized once for the whole answer),
 * node after node, freeing each node's copies as it goes. A step
 * returns 0 to go on, 1 once the answer is whole, or -1 when what the
 * build holds (xd_csds_build_bytes, plus out->len) would exceed `max`
 * bytes, which may differ at each step (`out` then holds nothing
 * usable). `q` must outlive the build.
 */
struct xd_csds_build;

struct xd_csds_build *xd_csds_build_new(struct xd_sessions *sessions,
					const struct xd_csds_query *q);
int xd_csds_build_step(struct xd_csds_build *b, struct xd_buf *out,
		       uint64_t deadline_ns, size_t max);
/* The bytes of the nodes' copies the build holds, not yet in `out`. */
size_t xd_csds_build_bytes(const struct xd_csds_build *b);
void xd_csds_build_free(struct xd_csds_build *b);

#endif
