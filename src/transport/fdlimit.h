/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The open-files limit. Every client connection is a descriptor, so the
 * soft RLIMIT_NOFILE bounds the clients xdsd can hold: at 1024, the
 * usual soft limit of a shell, the 1,020th Envoy's connection fails in
 * accept(). The hard limit is what the administrator allows (systemd's
 * LimitNOFILE=, `ulimit -Hn`); xdsd raises its soft limit to it at
 * start. xdsd waits with epoll, never select(), so descriptors above
 * FD_SETSIZE are fine.
 *
 * Nearing the limit is dangerous in itself: gRPC 1.51 stops accepting
 * on a listener for good once accept() fails with EMFILE, so the
 * accepted connections are bounded well before it (transport/conns.h,
 * fd_reserve), with the count of open descriptors below.
 *
 * Thread: xd_fdlimit_raise once at start, before any connection;
 * xd_fdlimit_open_count any.
 */
#ifndef XD_TRANSPORT_FDLIMIT_H
#define XD_TRANSPORT_FDLIMIT_H

/* Raises the soft open-files limit to the hard one and logs the limit
 * (and where it came from) at info; returns the soft limit now in
 * force, or 0 if it cannot be read. */
unsigned long xd_fdlimit_raise(void);

/* The descriptors this process has open now (from /proc/self/fd,
 * whose own descriptor is not counted), or -1 when they cannot be
 * counted (no descriptor left to read them with, say). Costs a
 * directory read: about a millisecond per 10,000 descriptors. */
long xd_fdlimit_open_count(void);

#endif
