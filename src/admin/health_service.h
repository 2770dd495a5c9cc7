/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC's standard health service (grpc.health.v1.Health) on the xDS
 * listener, for balancers, orchestrators and `grpc_health_probe`:
 *
 *   Check  one request, one answer: the status of the service named
 *          (HealthCheckRequest.service), or NOT_FOUND for a name xdsd
 *          does not serve;
 *   Watch  one request; the status at once, then again whenever it
 *          changes (SERVICE_UNKNOWN for a name xdsd does not serve,
 *          the call kept open as the protocol asks).
 *
 * The names known are "" (the server as a whole) and those of the xDS
 * services (transport/methods.h: envoy.service.discovery.v3.
 * AggregatedDiscoveryService, envoy.service.cluster.v3.
 * ClusterDiscoveryService, ...). All share one status: SERVING while
 * xdsd serves snapshots (from the files, etcd or the last good state:
 * what /ready says), NOT_SERVING before the first load and from the
 * moment it starts to stop.
 *
 * No node and no identity is asked for beyond what the listener's TLS
 * requires of every connection; the calls are admitted as every other
 * (server.h: connections per address, streams per connection) and a
 * request is bounded by max_request_size.
 *
 * Stopping (xd_health_service_stop) tells every Watch NOT_SERVING
 * before the server cancels the calls, so that a watcher learns it
 * from the status rather than from a broken stream; a watcher that
 * does not take it within XD_HEALTH_STOP_MS does not hold the stop up.
 *
 * Ownership: the service owns its calls' state; the server's streams
 * must all be gone (server stopped) before xd_health_service_free.
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_HEALTH_SERVICE_H
#define XD_ADMIN_HEALTH_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "transport/stream.h"

/* How long a stop waits for every watcher to be sent NOT_SERVING. */
#define XD_HEALTH_STOP_MS 1000

struct xd_health_service;

/* NOT_SERVING until xd_health_service_set_serving(true). */
struct xd_health_service *xd_health_service_new(uv_loop_t *loop);
/* NULL: nothing. */
void xd_health_service_free(struct xd_health_service *svc);

/* The handler to give the server (server.h, health_handler). */
const struct xd_stream_handler *
xd_health_service_handler(struct xd_health_service *svc);

/* Whether xdsd serves snapshots; every Watch is told of a change.
 * Ignored once stopping. */
void xd_health_service_set_serving(struct xd_health_service *svc,
				   bool serving);

/* The status every known name has now. */
bool xd_health_service_serving(const struct xd_health_service *svc);

/* Watch calls open now. */
size_t xd_health_service_watchers(const struct xd_health_service *svc);

/*
 * NOT_SERVING for good, told to every Watch; `done(arg)` runs on the
 * loop once each has been sent it (or has ended), or after
 * XD_HEALTH_STOP_MS, possibly before this returns. Once only.
 */
void xd_health_service_stop(struct xd_health_service *svc,
			    void (*done)(void *arg), void *arg);

#endif
