/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Source addresses for the fleet's connections. One source address and
 * one server port give at most the ephemeral port range's connections
 * (about 28,000 on Linux); beyond that, the clients' sockets are bound
 * before they connect to loopback addresses 127.0.0.2, 127.0.0.3, ...
 * in turn (all of 127/8 is local), each with its own port range.
 *
 * gRPC core 1.51 has no channel argument for a client's local address,
 * but it runs a channel's socket mutator (GRPC_ARG_SOCKET_MUTATOR) on a
 * client socket before connect(); the mutator here binds it.
 *
 * Ownership: the set owns its mutators; the channels given its
 * arguments must be gone before source_set_free. Threads: built and
 * freed on the main thread; the mutators run on gRPC's threads and only
 * read.
 */
#ifndef BENCH_FLEET_SOURCE_H
#define BENCH_FLEET_SOURCE_H

#include <grpc/grpc.h>

struct source_set;

/* n addresses from 127.0.0.2 on (n <= 250); NULL for n == 0. */
struct source_set *source_set_new(int n);
/* The channel argument binding client idx's socket (idx mod n); *arg
 * is left alone when set is NULL, and 0 is returned. */
int source_set_arg(const struct source_set *set, int idx, grpc_arg *arg);
void source_set_free(struct source_set *set);

#endif
