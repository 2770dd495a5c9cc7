/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Responses into one simulated Envoy's state (fleet_envoy.h): what it
 * holds of each type, what it subscribes to as a result (EDS for its
 * clusters, RDS for its listeners, as Envoy does), the ACK now due, and
 * the counters of responses that changed nothing, named a resource
 * twice, or carried what was never asked for.
 *
 * Threads: the caller guards e (fleet_client.c: the client's mutex).
 */
#ifndef BENCH_FLEET_RESPONSE_H
#define BENCH_FLEET_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet_envoy.h"

/* Takes one DiscoveryResponse (SotW) or DeltaDiscoveryResponse (delta,
 * by e's mode) into e; false when malformed. d is the caller's. */
bool response_take(struct envoy *e, const uint8_t *d, size_t n);

#endif
