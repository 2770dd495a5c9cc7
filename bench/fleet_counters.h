/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The counters of one fleet run: every client adds to them from its
 * polling thread, the measurements read them from the main thread. They
 * live in struct fleet (fleet.h); each client reaches them through its
 * envoy_conf. Atomics, so no lock guards them.
 */
#ifndef BENCH_FLEET_COUNTERS_H
#define BENCH_FLEET_COUNTERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fleet_resource.h"

struct fleet_counters {
	_Atomic uint64_t last_rx;      /* now_ns() of the last message */
	_Atomic uint64_t rx_msgs, rx_bytes;
	_Atomic uint64_t resp[NT];
	_Atomic uint64_t dups[NT];     /* unchanged resends nobody asked for */
	_Atomic uint64_t unsub;        /* resources never subscribed to */
	_Atomic uint64_t unknown;      /* responses of a type never asked for */
	_Atomic uint64_t bad;          /* malformed responses */
	_Atomic uint64_t twice;        /* responses naming a resource twice */
	_Atomic uint64_t heartbeats;   /* TTL refreshes: a version, no body */
	_Atomic uint64_t configured;   /* clients holding a full config */
	_Atomic uint64_t failed;       /* streams that ended, not reopened */
	/* --failover: streams reopened on the other server; clients that sent
	 * it every first request (initial_resource_versions); resources with
	 * a body received on reopened streams; reopened streams that
	 * failed (UNAVAILABLE: e.g. a handshake past the server's
	 * handshake_timeout) and were opened again */
	_Atomic uint64_t reconnects, resumed, resent, retries;
	_Atomic int64_t ops;           /* batches in flight */
	_Atomic int fail_logged;       /* ended streams logged so far (5 at most) */
	_Atomic bool stopping;         /* calls cancelled on purpose */
};

#endif
