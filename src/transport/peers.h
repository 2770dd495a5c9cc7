/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Connections per client address, as their streams show them.
 *
 * gRPC core tells the application nothing about connections, only
 * about calls: each stream names its peer ("ipv4:10.0.0.7:40112"), so a
 * connection is counted while it holds at least one stream, under its
 * address (the peer without its port). A stream that would make its
 * address hold more connections than allowed is refused by the server
 * (max_connections_per_address). Connections that hold no stream are
 * bounded from their accept by the connection table (conns.h), which
 * hears from the server when a connection's first stream opens and its
 * last one ends.
 *
 * Unix-socket peers are not counted: they have no address to tell one
 * client from another. Nor limited are the addresses of trusted
 * proxies (trusted_proxies:): behind a TCP balancer every client comes
 * from the balancer's address, so it holds a fleet's connections.
 *
 * Ownership: the table owns copies of the peer strings. Thread: loop.
 */
#ifndef XD_TRANSPORT_PEERS_H
#define XD_TRANSPORT_PEERS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/address.h"

struct xd_peers;

/* `trusted` (`ntrusted` prefixes, NULL when none) must outlive the
 * table: its addresses are counted but never refused. */
struct xd_peers *xd_peers_new(const struct xd_cidr *trusted,
			      size_t ntrusted);
void xd_peers_free(struct xd_peers *p);

/*
 * A stream of `peer` opens. False, with nothing counted, when it comes
 * on a connection its address does not hold yet and the address holds
 * `max` connections already (`max` 0: no limit), unless the address is
 * a trusted proxy's.
 */
bool xd_peers_open(struct xd_peers *p, const char *peer, size_t max);

/* A stream that xd_peers_open counted has ended. */
void xd_peers_close(struct xd_peers *p, const char *peer);

/* Streams counted on `peer`'s connection now (0 for unix peers). */
size_t xd_peers_streams(const struct xd_peers *p, const char *peer);

/* Connections with streams that `peer`'s address holds now. */
size_t xd_peers_connections(const struct xd_peers *p, const char *peer);

#endif
