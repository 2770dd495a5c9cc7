/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A real TCP balancer in front of a test's xdsd: Debian's haproxy in
 * TCP mode, on 127.0.0.1, with its own configuration in a temporary
 * directory, in the foreground (-db) as the test's child. Every
 * connection xdsd sees through it comes from haproxy's address.
 */
#ifndef XD_TESTS_BALANCER_H
#define XD_TESTS_BALANCER_H

#include <stdbool.h>
#include <sys/types.h>

struct xdt_balancer {
	pid_t pid;
	int port;
	char target[64]; /* "127.0.0.1:<port>": dial this */
	char *dir;
};

/* Starts haproxy forwarding to `backend` ("127.0.0.1:<port>"), its
 * connections to it from `source` (an address of lo such as
 * "127.0.0.2", so that xdsd tells them from direct clients; NULL: the
 * kernel's choice) and waits until it accepts connections. Fails the test when haproxy is missing
 * (scripts/install-deps installs it) or does not start. */
struct xdt_balancer *xdt_balancer_start(const char *backend,
					 const char *source);

/*
 * The same, haproxy checking xdsd with the gRPC health check of
 * README.md ("Running several replicas": the `option tcp-check` and
 * `tcp-check` lines of the block after "<!-- haproxy-health -->"),
 * every `inter_ms`, down after one failed check and up after one
 * passed. Over TLS when `ca` is given: the README's `tcp-check connect
 * ssl alpn h2`, the server checked against `ca`, with the client
 * certificate `crt` (a PEM of certificate and key; NULL: none).
 */
struct xdt_balancer *xdt_balancer_start_health(const char *backend,
						int inter_ms, const char *ca,
						const char *crt);

/* haproxy's output so far (its server state changes: "Server
 * xdsd/xdsd-1 is DOWN, reason: ..."), malloc'd. */
char *xdt_balancer_log(const struct xdt_balancer *b);

/* Waits until haproxy's output says `needle` `count` times; true if it
 * did within `timeout_ms`. */
bool xdt_balancer_wait_log(const struct xdt_balancer *b, const char *needle,
			   int count, int timeout_ms);

/* Kills haproxy (every connection through it ends, and new ones are
 * refused) and waits for it; `b` stays, for xdt_balancer_run. */
void xdt_balancer_kill(struct xdt_balancer *b);

/* Runs haproxy again, as it was, on the same port. */
void xdt_balancer_run(struct xdt_balancer *b);

/* Kills haproxy if it runs, waits for it and frees `b`. */
void xdt_balancer_stop(struct xdt_balancer *b);

#endif
