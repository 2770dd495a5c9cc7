/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The load reporting service (LRS,
 * envoy.service.load_stats.v3.LoadReportingService) on the xDS
 * listener (docs/protocol.md, rules M1, M2): Envoys and gRPC clients
 * whose clusters name xdsd as their LRS server (Envoy's
 * `cluster_manager.load_stats_config`, gRPC's `lrs_server: {self: {}}`)
 * open StreamLoadStats and report, each interval, the requests each of
 * their clusters sent to each locality.
 *
 *   StreamLoadStats  the client's first request names its node, which
 *                    is admitted as an xDS stream's is (protocol/
 *                    client.h: the node limits, `authorize:` on the
 *                    identity its certificate proves); xdsd answers
 *                    once, asking for every cluster
 *                    (send_all_clusters) every `load_reports.interval`;
 *                    each later request is a report, kept in the store
 *                    (loads/store.h) under the node's id.
 *
 * Streams are admitted as every other call (server.h: connections per
 * address, streams per connection), a request is bounded by
 * max_request_size, and a stream sends at most max_requests_per_second
 * (burst max_request_burst), as an xDS stream does: past it the stream
 * ends RESOURCE_EXHAUSTED.
 *
 * Ownership: the service owns its calls' state and borrows the
 * configuration and the store (both must outlive it); the server's
 * streams must all be gone (server stopped) before xd_lrs_service_free.
 * Thread: loop thread only.
 */
#ifndef XD_LOADS_SERVICE_H
#define XD_LOADS_SERVICE_H

#include <stddef.h>

#include "config/config.h"
#include "loads/store.h"
#include "transport/stream.h"

struct xd_lrs_service;

struct xd_lrs_service *xd_lrs_service_new(const struct xd_config *cfg,
					  struct xd_loads *store);
/* NULL: nothing. */
void xd_lrs_service_free(struct xd_lrs_service *svc);

/* The handler to give the server (server.h, lrs_handler). */
const struct xd_stream_handler *
xd_lrs_service_handler(struct xd_lrs_service *svc);

struct xd_lrs_stats {
	size_t reporters;           /* admitted streams open now */
	unsigned long long streams; /* admitted since start */
	unsigned long long reports; /* requests after the first */
	unsigned long long refused; /* streams ended by xdsd: a node not
				       admitted, a malformed request, the
				       request rate */
};

void xd_lrs_service_stats(const struct xd_lrs_service *svc,
			  struct xd_lrs_stats *out);

#endif
