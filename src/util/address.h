/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Listening and connecting addresses as xdsd's configuration writes them:
 * host:port, [v6]:port or unix:/path. One checker for the *_listen
 * directives and for xdsctl's --admin, so both refuse the same things
 * with the same words; one splitter and one resolver for everything
 * that binds or names a host:port (the HTTP listeners, the gRPC
 * server's bind diagnosis, the HTTP client's messages). And the other
 * way: a peer's socket address as the text log lines and limits name it.
 *
 * Thread: any; pure.
 */
#ifndef XD_UTIL_ADDRESS_H
#define XD_UTIL_ADDRESS_H

#include <stddef.h>

/* What is wrong with `s`, or NULL when nothing is. Port 0 is accepted
 * (a listener takes any free port); a client must refuse it itself. */
const char *xd_address_error(const char *s);

/* `s`, host:port or [v6]:port, split into its host (without brackets)
 * in `host` (room for `host_cap` bytes) and its port in `port` (room
 * for `port_cap`). Returns 0, or -1 with `why` saying what is wrong
 * with it, the value quoted: "'10.0.0.7': missing :port (form:
 * host:port)". A unix:/path address is refused the same way. */
int xd_address_split(const char *s, char *host, size_t host_cap, char *port,
		     size_t port_cap, char *why, size_t why_len);

struct addrinfo;

/* `s` (as xd_address_split takes it) resolved to the addresses a
 * stream socket may bind to, the first one best. Returns 0 with the
 * list in *out (freeaddrinfo() it), or -1 with `why` quoting what
 * failed: the address, or "cannot resolve 'host': <resolver's reason>".
 * Blocks while a host name is looked up. */
int xd_address_resolve(const char *s, struct addrinfo **out, char *why,
		       size_t why_len);

struct sockaddr;

/* `sa` as "10.0.0.7:40112" or "[::1]:5000" (an IPv4-mapped IPv6
 * address as IPv4) into `out` (room for `cap` bytes). Returns AF_INET
 * or AF_INET6, the form written; 0 for another family (`out` is then
 * ""). */
int xd_address_format(const struct sockaddr *sa, char *out, size_t cap);

#endif
