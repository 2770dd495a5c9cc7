/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client status service's RPCs (CSDS, envoy.service.status.v3) on
 * the xDS listener: StreamClientStatus answers each request with one
 * response, in order; FetchClientStatus answers its one request. What
 * the answers hold is csds.h's business.
 *
 * CSDS shows every node's configuration, so it answers only peers on
 * loopback or the unix socket, and clients whose certificate proves an
 * identity matching one of `csds_allow:` (xdsd.yaml(5)); everyone else
 * gets PERMISSION_DENIED, and the log says who was refused.
 *
 * Requests are bounded like every other (max_request_size); at most
 * XD_CSDS_MAX_PENDING wait for their answer on one stream.
 *
 * An answer covers every stream: it is built in slices of at most
 * XD_CSDS_SLICE_NS a loop turn per call (csds.h, xd_csds_build), and
 * sent, one message, once whole.
 *
 * Ownership: the service borrows `cfg` and `sessions`, which must
 * outlive it (and the server using its handler). Thread: loop thread.
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

struct xd_csds_service *xd_csds_service_new(uv_loop_t *loop,
					    const struct xd_config *cfg,
					    struct xd_sessions *sessions);
void xd_csds_service_free(struct xd_csds_service *svc);

/* The handler to give the server (server.h, csds_handler). */
const struct xd_stream_handler *
xd_csds_service_handler(struct xd_csds_service *svc);

/*
 * Whether a peer may call CSDS: `peer` as gRPC names it ("ipv4:...",
 * "ipv6:[...]:port", "unix:..."), `identity` its certificate's (NULL
 * for none). Pure; exported for tests.
 */
bool xd_csds_allowed(const struct xd_config *cfg, const char *peer,
		     const char *identity);

#endif
