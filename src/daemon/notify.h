/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Telling systemd how xdsd is doing (sd_notify(3)), beyond READY=1 and
 * STOPPING=1: a STATUS= line that `systemctl status` shows, kept
 * current, and the watchdog keepalive.
 *
 * STATUS= reads, for example,
 *   "serving 3 snapshots to 1,234 streams; last reload ok 12 s ago"
 *   "serving 3 snapshots to 1,234 streams; last reload FAILED 5 s ago: <error>"
 * ("...; reloading" while one runs), led by "SERVING THE LAST GOOD STATE
 * saved <time>: the snapshots are refused (N errors); " while the last
 * good state is served (reload/laststate.h), then, with `rollout:`,
 * by "rollout N canary: A of C canaries answered; " (or "baking", or
 * "with NO CANARY connected") while a staged rollout is under way and
 * "ROLLOUT N FAILED <age> ago, rolled back: <why>; " after one failed
 * (rollout/rollout.h), and is sent again every
 * XD_NOTIFY_STATUS_MS and whenever xd_notify_status is called (when
 * serving starts, after each reload).
 *
 * With the unit's WatchdogSec=, systemd passes WATCHDOG_USEC (and
 * WATCHDOG_PID); WATCHDOG=1 is then sent every half of that interval
 * from a timer of the loop. The keepalive comes from the loop thread on
 * purpose: a loop that is stuck (a callback that never returns, a
 * deadlock) sends none, and systemd kills and restarts the daemon.
 *
 * Until READY=1 is sent through here (the etcd source, whose first
 * snapshots come once etcd answers), each STATUS= also carries
 * EXTEND_TIMEOUT_USEC= of XD_NOTIFY_START_EXTEND_MS: systemd's start
 * timeout (TimeoutStartSec=) is pushed back for as long as the loop
 * turns and waits, and a start whose loop is stuck still times out.
 *
 * Without NOTIFY_SOCKET (not run by systemd) nothing is started.
 *
 * Ownership: borrows the loop, cache, sessions, reloader and rollout
 * (NULL: none), all of which must outlive it until xd_notify_stop's
 * timers have closed. Thread: loop.
 */
#ifndef XD_DAEMON_NOTIFY_H
#define XD_DAEMON_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cache/cache.h"
#include "reload/reload.h"
#include "rollout/rollout.h"
#include "protocol/session.h"

#define XD_NOTIFY_STATUS_MS 5000
/* Six status periods: a loaded machine's late timer is not a hang. */
#define XD_NOTIFY_START_EXTEND_MS (6 * XD_NOTIFY_STATUS_MS)

struct xd_notify;

/* NULL when NOTIFY_SOCKET is not set. */
struct xd_notify *xd_notify_start(uv_loop_t *loop,
				  const struct xd_cache *cache,
				  struct xd_sessions *sessions,
				  const struct xd_reloader *reloader,
				  const struct xd_rollout *rollout);

/* Sends STATUS= now, with `extra` ("READY=1", say; may be NULL) in the
 * same message; from an `extra` holding READY=1 on, the start timeout
 * is no longer extended. n may be NULL: nothing to tell. */
void xd_notify_status(struct xd_notify *n, const char *extra);

/* The watchdog interval in use, in ms (0: none). */
uint64_t xd_notify_watchdog_ms(const struct xd_notify *n);

/* Closes the timers; frees once they have closed. n may be NULL. */
void xd_notify_stop(struct xd_notify *n);

/*
 * The STATUS= text for these figures: `rec` is the newest reload record
 * (NULL: none), `now_ms` Unix ms. Exported for tests.
 */
void xd_notify_format(char *out, size_t len, size_t snapshots,
		      size_t streams, bool reloading,
		      const struct xd_reload_record *rec, int64_t now_ms);

#endif
