/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Signals that arrive before the event loop watches them.
 *
 * SIGHUP's default action ends the process, and operators (logrotate,
 * a deploy script, systemctl reload racing a restart) send it whenever
 * they like. From the first line of main() until the loop's own signal
 * watchers are installed (after the snapshots are loaded, which takes
 * a while on a large fleet), and again from their removal at shutdown
 * to the exit, SIGHUP and SIGUSR1 are only recorded here; the daemon
 * acts on a recorded one once it is serving. SIGPIPE is ignored for
 * the whole run (a client that goes away mid-write must not kill the
 * daemon).
 *
 * Thread: install on the main thread (the handlers are the process's,
 * whichever thread a signal lands on); take on the loop thread.
 */
#ifndef XD_DAEMON_EARLY_SIGNALS_H
#define XD_DAEMON_EARLY_SIGNALS_H

#include <stdbool.h>

/* Installs the recording handlers (again after the loop's are gone). */
void xd_early_signals_install(void);

/* Whether `signum` (SIGHUP or SIGUSR1) arrived since the last take. */
bool xd_early_signal_take(int signum);

#endif
