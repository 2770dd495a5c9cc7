/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client status service's RPCs (CSDS, envoy.service.status.v3) on
 * the xDS listener: StreamClientStatus answers each request with one
 * response, in order; FetchClientStatus answers its one request. What
 * the answers hold is csds.h's business.
 *
 * CSDS shows every node's configuration. With client certificates
 * (tls.client_ca) it answers, as every xDS stream is admitted, by the
 * identity a certificate proves: only those matching one of
 * `csds_allow:` (xdsd.yaml(5)), wherever they connect from, loopback
 * and the unix socket included. Without them no identity can be
 * proven, and only peers on loopback or the unix socket may call.
 * Everyone else gets PERMISSION_DENIED, and the log says who was
 * refused.
 *
 * Requests are bounded like every other (max_request_size); at most
 * XD_CSDS_MAX_PENDING wait for their answer on one stream.
 *
 * An answer covers every stream: it is built in slices of at most
 * XD_CSDS_SLICE_NS a loop turn per call (csds.h, xd_csds_build), and
 * sent, one message, once whole. Answers cost memory in proportion to
 * the fleet, so the service bounds them all together, not only each:
 * at most `csds_max_answers` are being built or sent at once (from the
 * start of a build until gRPC has freed the message's bytes), and
 * together they hold at most `csds_max_memory` bytes (as does one
 * alone, and never more than XD_CSDS_RESPONSE_MAX). A call whose answer
 * would go past either ends RESOURCE_EXHAUSTED with a message saying
 * which (try again later, or ask for less), logged with the peer and
 * identity and counted by reason (xd_csds_service_stats).
 *
 * Ownership: the service borrows `cfg` and `sessions`, which must
 * outlive it (and the server using its handler). Thread: loop thread;
 * gRPC frees a sent answer on any thread, which is counted atomically.
 */
#ifndef XD_ADMIN_CSDS_SERVICE_H
#define XD_ADMIN_CSDS_SERVICE_H

#include <stdbool.h>
#include <uv.h>

#include "config/config.h"
#include "protocol/session.h"
#include "transport/stream.h"

/* Requests one stream may have waiting for their answers. */
#define XD_CSDS_MAX_PENDING 8

struct xd_csds_service;

/* What building one call's answer may take of a loop turn. */
#define XD_CSDS_SLICE_NS (2u * 1000 * 1000)

/* Why a call was refused (/metrics: xdsd_csds_refused_total{reason}). */
enum xd_csds_refusal {
	XD_CSDS_REFUSED_IDENTITY,  /* may not call (csds_allow) */
	XD_CSDS_REFUSED_ANSWERS,   /* csds_max_answers under way already */
	XD_CSDS_REFUSED_MEMORY,    /* with those under way, over
				    * csds_max_memory */
	XD_CSDS_REFUSED_TOO_LARGE, /* alone over csds_max_memory (or
				    * XD_CSDS_RESPONSE_MAX) */
	XD_CSDS_REFUSED_COUNT,
};

/* "identity", "answers", "memory", "too_large". */
const char *xd_csds_refusal_name(enum xd_csds_refusal r);

struct xd_csds_stats {
	size_t answers;    /* being built or sent now */
	size_t bytes;      /* what they hold: their encoded messages, and
			    * the copies a build holds until they are in
			    * its message */
	unsigned long long refused[XD_CSDS_REFUSED_COUNT];
};

struct xd_csds_service *xd_csds_service_new(uv_loop_t *loop,
					    const struct xd_config *cfg,
					    struct xd_sessions *sessions);
/* NULL: nothing. */
void xd_csds_service_free(struct xd_csds_service *svc);

/* The handler to give the server (server.h, csds_handler). */
const struct xd_stream_handler *
xd_csds_service_handler(struct xd_csds_service *svc);

/* The answers under way and the refusals so far. */
void xd_csds_service_stats(const struct xd_csds_service *svc,
			   struct xd_csds_stats *out);

/*
 * Whether a peer may call CSDS: `peer` as gRPC names it ("ipv4:...",
 * "ipv6:[...]:port", "unix:..."), `identity` its certificate's (NULL
 * for none). With tls.client_ca, an identity of csds_allow, whatever
 * the peer; without, a peer on loopback or the unix socket. Pure;
 * exported for tests.
 */
bool xd_csds_allowed(const struct xd_config *cfg, const char *peer,
		     const char *identity);

#endif
