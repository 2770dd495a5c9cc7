/* SPDX-License-Identifier: Apache-2.0 */
/*
 * REST-JSON answers (docs/protocol.md, rule R1): what a DiscoveryRequest
 * posted over HTTP gets, as a pure function of the node's snapshot and
 * the request. The HTTP side (rest.h) does the JSON and the waiting.
 *
 * A REST client has no stream, so nothing is remembered between its
 * requests: each is answered as the first request of a SotW stream is
 * (rules S2, S8-S10), by the same subscription and body code (sub.h,
 * body.h). Listeners, clusters and scoped routes asked for with no
 * names are a wildcard; other requests get what exists of their names;
 * version_info is the type's version (rule S3, docs/protocol.md §8.3);
 * resources are wrapped, with their TTLs, for clients that announce
 * the features (rules L1, L2). Bodies are shared with gRPC clients in
 * the same state.
 *
 * The nonce is a hash of the version and of the request's list of
 * names: a client that sends back the nonce with its version_info shows
 * that it holds exactly the answer it would get now, even when its
 * names changed since (then the nonces differ and it is answered at
 * once). A client that sends no nonce is taken at its version.
 *
 * Thread: loop thread only (bodies are memoized on tables).
 */
#ifndef XD_REST_ANSWER_H
#define XD_REST_ANSWER_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/body.h"
#include "protocol/request.h"
#include "snapshot/snapshot.h"
#include "util/buf.h"
#include "xds/rtype.h"

/* Where a request stands against the snapshot serving it now. */
struct xd_rest_state {
	char version[17];  /* the type's version now */
	uint64_t nonce;    /* of the answer it would get now */
	/* It holds that answer already: its version_info is the version
	 * and its nonce, if any, is this one; or it NACKs this very
	 * answer (rule S4: rejected content is not sent again as new). */
	bool current;
};

/* `r` (a SotW DiscoveryRequest of `type`) against `snap`, a view for
 * the client (derived.h). */
void xd_rest_state(struct xd_snapshot *snap, enum xd_rtype type,
		   const struct xd_request *r, struct xd_rest_state *out);

/*
 * The body of the DiscoveryResponse that answers `r` from `snap` in
 * `form` (XD_FORM_SOTW, _WRAPPED or _TTL): a new reference, shared with
 * every client in the same state; or NULL when nothing it asks for
 * exists, and the answer is xd_rest_encode_bare's. Neither carries the
 * nonce, which is the answer's own (struct xd_rest_state).
 */
struct xd_body *xd_rest_body(struct xd_snapshot *snap, enum xd_rtype type,
			     const struct xd_request *r, enum xd_form form);

/* Appends to `out` a DiscoveryResponse with the type's version and type
 * URL only, no resources and no nonce. */
void xd_rest_encode_bare(struct xd_snapshot *snap, enum xd_rtype type,
			 struct xd_buf *out);

#endif
