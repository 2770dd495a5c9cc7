/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Listening and connecting addresses as xdsd's configuration writes them:
 * host:port, [v6]:port or unix:/path. One checker for the *_listen
 * directives and for xdsctl's --admin, so both refuse the same things
 * with the same words; one splitter and one resolver for everything
 * that binds or names a host:port (the HTTP listeners, the gRPC
 * server's bind diagnosis, the HTTP client's messages). And the other
 * way: a peer's socket address as the text log lines and limits name it,
 * and the prefixes (trusted_proxies:) that exempt some peers from the
 * per-address limits.
 *
 * Thread: any; pure.
 */
#ifndef XD_UTIL_ADDRESS_H
#define XD_UTIL_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

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

/* An IPv4 or IPv6 prefix: `bits` leading bits of `addr` (network
 * order; the first 4 bytes for AF_INET). */
struct xd_cidr {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned bits;
};

/*
 * `s`, an address ("10.0.0.7", "fd00::1", a prefix of all its bits) or
 * a prefix ("10.0.0.0/8", "fd00::/8"), into *out. An IPv4-mapped IPv6
 * prefix (::ffff:10.0.0.0/104) is stored as the IPv4 one. Returns 0, or
 * -1 with `why` quoting the value and saying what is wrong with it:
 * "'10.0.0.1/8': bits set after the /8 prefix (10.0.0.0/8?)". Host
 * names are refused: a proxy is named by its address.
 */
int xd_address_cidr_parse(const char *s, struct xd_cidr *out, char *why,
			  size_t why_len);

/* Whether `sa` (an IPv4-mapped IPv6 address as IPv4) is in one of the
 * `n` prefixes of `list`. False for other families (unix). */
bool xd_address_in(const struct xd_cidr *list, size_t n,
		   const struct sockaddr *sa);

/*
 * A gRPC peer name ("ipv4:10.0.0.7:40112", "ipv6:[::1]:5000", or with
 * the brackets percent-encoded as newer gRPC releases write them) as a
 * socket address in *out. Returns false for other peers (unix) and
 * for names it cannot read.
 */
bool xd_address_from_peer(const char *peer, struct sockaddr_storage *out);

/* Whether `sa` is a loopback address (127.0.0.0/8, ::1; IPv4-mapped
 * ones too). */
bool xd_address_is_loopback(const struct sockaddr *sa);

/* Whether `sa` is a loopback, private (RFC 1918, fc00::/7), shared
 * (100.64.0.0/10) or link-local address: where a proxy or balancer in
 * front of xdsd would connect from. */
bool xd_address_is_private(const struct sockaddr *sa);

#endif
