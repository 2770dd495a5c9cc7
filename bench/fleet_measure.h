/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The figures of each phase of a run (fleet_main.c defines
 * "converged"), appended to the fleet's summary line: the time until
 * every client holds a full configuration; for each trigger, which types
 * changed, what the fleet converged on and how long each client took;
 * the server's cost while the streams are idle.
 *
 * Threads: the main thread; it reads the clients' state under their
 * mutexes, polling, and the counters atomically.
 */
#ifndef BENCH_FLEET_MEASURE_H
#define BENCH_FLEET_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "fleet.h"

/* Waits until every client holds a full configuration, or every stream
 * that is left does and the rest failed (then false), or --timeout
 * (false). t0: when the first stream opened. */
bool measure_wait_configured(struct fleet *f, uint64_t t0);
/* configured=, full_*=, init_rx_*=, init_responses=. */
void measure_initial(struct fleet *f, uint64_t t0);
/* Runs trigger k and measures the convergence that follows: uN_*=;
 * false when the trigger failed or the fleet did not converge. */
bool measure_trigger(struct fleet *f, int k);
/* With --failover: runs trigger k, which ends the streams (it kills the
 * server), and measures the storm of reopened streams on the failover
 * server (--server-pid is that one): storm_*=; false when the trigger
 * failed or not every client was back, and quiet, within --timeout. */
bool measure_failover(struct fleet *f, int k);
/* Keeps the streams idle for --hold seconds: hold_*=. */
void measure_hold(struct fleet *f);

#endif
