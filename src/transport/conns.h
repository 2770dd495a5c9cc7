/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client connections from the moment they are accepted.
 *
 * gRPC core (1.51) tells the application about calls, never about
 * connections, so a connection that opens no stream would hold a
 * descriptor and memory unseen until max_connection_idle (5 minutes by
 * default): 20,000 of them from one address take every descriptor, and
 * once accept() fails with EMFILE gRPC 1.51 stops accepting on that
 * listener for good. The one hook that sees every accepted socket is a
 * socket mutator (GRPC_ARG_SOCKET_MUTATOR): gRPC calls it on its own
 * I/O thread for each listening socket before it binds and for each
 * accepted socket right after accept(), before it reads from it. This
 * module is that mutator, and it keeps a table of the accepted TCP
 * connections (descriptor, socket inode, peer address and port):
 *
 *  - idle connections (without a stream: not opened one yet, or all of
 *    theirs ended) are bounded per client address
 *    (max_idle_connections_per_address; trusted_proxies exempt) and in
 *    all (max_idle_connections); a connection over either is refused,
 *    and an address over its limit has its new connections dropped by
 *    the kernel (a socket filter on the listeners) until it holds
 *    fewer, so that a storm from it costs xdsd nothing;
 *  - a connection that opens no stream within first_stream_timeout is
 *    closed;
 *  - while fewer than fd_reserve descriptors are left under the
 *    open-files limit, every new connection is refused, so that the
 *    admin endpoint, etcd and gRPC's own accept() keep descriptors.
 *
 * A refused or timed-out connection is shut down (shutdown(2), with a
 * reset): gRPC then reads the end and closes the descriptor itself.
 * The mutator never closes a descriptor gRPC owns, and it always tells
 * gRPC to go on: in gRPC 1.51 a mutator that fails an accepted socket
 * leaks it and stops the listener (docs/grpc-core.md §8). When the
 * descriptors run out all the same (a flood refused faster than gRPC
 * closes them), the mutator gives back one of a few spare descriptors
 * it holds and takes the waiting connections off the listener itself,
 * closing each, so that gRPC's next accept() never fails.
 *
 * Streams tell the table when a connection has its first stream and
 * when its last one ended (the peer string "ipv4:10.0.0.7:40112" names
 * the socket's address and port); a sweep on the loop thread, while any
 * connection is idle, finds the idle ones that closed (their descriptor
 * closed, or now another socket) and the ones past their deadline.
 * Refusals are counted by reason and logged, a few lines a second, with
 * the peer.
 *
 * Unix-socket peers are not tracked (every one has the same address).
 *
 * Threads: the mutator runs on gRPC's threads; everything else on the
 * loop thread. The table is behind one mutex; counters are atomic.
 * Ownership: gRPC takes references to the mutator with the channel
 * argument; the last reference, the server's or gRPC's, frees it.
 */
#ifndef XD_TRANSPORT_CONNS_H
#define XD_TRANSPORT_CONNS_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "util/address.h"
#include "util/trim.h"

struct xd_conns;

struct xd_conns_limits {
	size_t max_idle;             /* in all; 0: no limit */
	size_t max_idle_per_address; /* 0: no limit */
	uint64_t first_stream_ms;    /* 0: no deadline */
	unsigned long fd_limit;      /* the open-files limit; 0: unknown */
	size_t fd_reserve;
	const struct xd_cidr *trusted; /* outlives the table; may be NULL */
	size_t ntrusted;
	/* told when connections went (the sweep found them closed, or
	 * refused some): their memory is gRPC's to give back. Outlives
	 * the sweep (xd_conns_close); may be NULL. */
	struct xd_trim *trim;
};

/* Why a connection was refused at accept (/metrics:
 * xdsd_connections_refused_total{reason}). */
enum xd_conn_refusal {
	XD_CONN_REFUSED_PER_ADDRESS, /* max_idle_connections_per_address */
	XD_CONN_REFUSED_IDLE,        /* max_idle_connections */
	XD_CONN_REFUSED_DESCRIPTORS, /* within fd_reserve of the limit */
	XD_CONN_REFUSED_COUNT,
};

/* Loop thread. */
struct xd_conns *xd_conns_new(uv_loop_t *loop,
			      const struct xd_conns_limits *limits);

/* The channel argument that installs the mutator (its key and value
 * are the table's; gRPC copies what it keeps). */
grpc_arg xd_conns_channel_arg(struct xd_conns *c);

/* Whether gRPC showed the mutator a listening socket: false after
 * binding means this gRPC does not call it, and nothing is bounded. */
bool xd_conns_seen_listener(const struct xd_conns *c);

/* The connection of `peer` ("ipv4:10.0.0.7:40112") opened its first
 * stream / ended its last one. Loop thread. */
void xd_conns_streams_began(struct xd_conns *c, const char *peer);
void xd_conns_streams_ended(struct xd_conns *c, const char *peer);

/* Stops the sweep and drops the server's reference; connections are
 * no longer judged. Loop thread, once. */
void xd_conns_close(struct xd_conns *c);

/* Counts since start, and now (any thread). */
unsigned long long xd_conns_refused(enum xd_conn_refusal r);
const char *xd_conn_refusal_name(enum xd_conn_refusal r);
unsigned long long xd_conns_timed_out(void); /* first_stream_timeout */
unsigned long long xd_conns_accepted(void);
size_t xd_conns_open(void); /* tracked TCP connections open now */
size_t xd_conns_idle(void); /* of which without a stream */
size_t xd_conns_blocked(void); /* addresses whose SYNs are dropped */

#endif
