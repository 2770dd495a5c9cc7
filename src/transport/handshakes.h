/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Failed TLS handshakes, each told with the peer it failed with and
 * why, and counted (/metrics: xdsd_tls_handshake_failures_total).
 *
 * gRPC core (1.51) does the handshake itself and tells the application
 * nothing about it: a failure shows only in gRPC's log, as OpenSSL's
 * reason without the peer ("Handshake failed with fatal error
 * SSL_ERROR_SSL: ... peer did not return a certificate"). What does name
 * the connection is gRPC's handshake tracer ("handshaker"), which xdsd
 * turns on when it serves TLS: a few lines per connection, one when a
 * handshake starts, with the manager of the handshake and the TCP
 * endpoint it runs on, one when it is over, with the manager and the
 * result. At the start, the endpoint's socket is asked for its peer
 * (gRPC's own grpc_endpoint_get_fd, looked up by its C++ name as
 * abseil.h does; then getpeername), and the peer is remembered under
 * the manager until the handshake is over. docs/grpc-core.md §7.1 lists
 * the messages; tests/e2e/check_tls.c fails if a gRPC release changes
 * them.
 *
 * Without the tracer or the function, failures are still counted and
 * logged, from gRPC's "Handshaking failed" line, as from an unknown
 * peer.
 *
 * Log lines are rate-limited (a port scan fails thousands at once): a
 * warning for a TLS error, info for a connection that closed before
 * the handshake was over (a TCP health check, say). The peers of at
 * most XD_HANDSHAKES_MAX handshakes under way are remembered; beyond
 * that, and for handshakes older than the limit given at start, the
 * peer is unknown.
 *
 * Thread: xd_handshakes_watch once at start, on the loop thread, after
 * grpc_init and before the server starts; xd_handshakes_on_log on
 * gRPC's threads (through grpc_log.h); xd_handshakes_failed anywhere.
 */
#ifndef XD_TRANSPORT_HANDSHAKES_H
#define XD_TRANSPORT_HANDSHAKES_H

#include <stdbool.h>
#include <stdint.h>

/* Handshakes under way whose peer is remembered. */
#define XD_HANDSHAKES_MAX 4096

/* Starts watching handshakes, which last at most `timeout_ms`
 * (handshake_timeout). Returns whether their peers can be named. */
bool xd_handshakes_watch(uint64_t timeout_ms);

/* What a gRPC log message was to this module. */
enum xd_handshake_line {
	XD_HANDSHAKE_OTHER,   /* not about handshakes */
	XD_HANDSHAKE_DEBUG,   /* handled; the message itself is debug */
	XD_HANDSHAKE_TRACE,   /* handled; a tracer line nobody asked for */
};

/* Looks at one message of gRPC's log. */
enum xd_handshake_line xd_handshakes_on_log(const char *message);

/* Handshakes that failed since start. */
unsigned long long xd_handshakes_failed(void);

#endif
