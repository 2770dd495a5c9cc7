/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running daemon: the libuv loop, the gRPC server, signals and
 * systemd notification.
 *
 * SIGTERM and SIGINT shut down in order (every call cancelled, server
 * and completion queue destroyed, every handle closed) and the run
 * returns 0. SIGHUP asks for a reload.
 *
 * Thread: the calling thread becomes the loop thread.
 */
#ifndef XD_DAEMON_DAEMON_H
#define XD_DAEMON_DAEMON_H

#include "config/config.h"

/* Runs until shut down; returns the process exit status. */
int xd_daemon_run(const struct xd_config *cfg);

#endif
