/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Timer slack for gRPC's threads.
 *
 * With every connection pinged every keepalive_time, gRPC's timer
 * thread has a ping due every few milliseconds (333 a second with
 * 10,000 streams at 30 s) and wakes for nearly each: 140 wake-ups a
 * second, and the pings' answers then arrive one by one, each waking
 * the I/O thread. A thread's timer slack (prctl PR_SET_TIMERSLACK, 50 us
 * by default) is how late the kernel may end its timed sleeps so as to
 * serve several with one wake-up: with grpc_timer_slack (50 ms) the timer
 * thread wakes about 60 times a second and sends the pings due by then
 * together, and their answers come back together; 25% less idle CPU
 * (bench/README.md, "Where the idle CPU goes"). gRPC's timers are
 * keepalive pings, their timeouts, handshake_timeout and connection
 * ages, none of which a few tens of milliseconds late changes.
 *
 * Threads inherit their creator's slack, and gRPC starts its threads
 * from the caller of grpc_init (its timer threads) or from its own; the
 * bridge's threads come from the loop thread. So the loop thread takes
 * the slack before grpc_init and gives it up once the server runs: its
 * own timers keep the default.
 *
 * Thread: the loop thread, at start.
 */
#ifndef XD_TRANSPORT_SLACK_H
#define XD_TRANSPORT_SLACK_H

#include <stdint.h>

/*
 * Before grpc_init: threads started from here on get a slack of
 * `slack_ms` (grpc_timer_slack; 50 ms by default, 0: the kernel's
 * default, as before xdsd set one).
 */
void xd_slack_for_grpc_begin(uint64_t slack_ms);

/* Once the server and its threads run: the loop thread's own slack is
 * the default again. */
void xd_slack_for_grpc_end(void);

#endif
