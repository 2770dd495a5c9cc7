/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC's own log (gpr_log), routed into xdsd's.
 *
 * gRPC reports what happens to connections only in its log, at its own
 * INFO and DEBUG levels, which xdsd otherwise shows only at debug. Two
 * of those messages are a client's connection being dropped, which an
 * operator must see: the keepalive watchdog closing a connection whose
 * peer stopped answering pings, and a connection closed for not
 * completing its HTTP/2 handshake within handshake_timeout. They are
 * logged as warnings naming the peer address, rate-limited (a port scan
 * or a network partition drops thousands at once). Failed TLS
 * handshakes are handshakes.h's to tell, with their peer. gRPC's other
 * errors (reset connections) are single clients' problems and are
 * warnings; the rest of its chatter stays at debug.
 *
 * The messages are recognized by their text in gRPC 1.51 (Debian 12);
 * tests/e2e/check_lifecycle.c fails if a gRPC update changes them.
 *
 * Thread: install once at start; the routing runs on gRPC's threads.
 */
#ifndef XD_TRANSPORT_GRPC_LOG_H
#define XD_TRANSPORT_GRPC_LOG_H

/* Routes gRPC's log through util/log.h. */
void xd_grpc_log_route(void);

#endif
