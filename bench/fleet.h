/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/fleet: a fleet of simulated Envoys against an xDS server
 * (bench/README.md; fleet_main.c says what it measures). This header is
 * struct fleet, the one object a run works on, passed explicitly.
 *
 * Layers, from the top; each file calls only the layers below it:
 *
 *   fleet_main.c       main: options, the phases in order, exit status
 *   fleet_measure.c    each phase's figures: full configuration,
 *                      convergence after each trigger, the idle hold
 *   fleet.c            struct fleet: its clients, completion queues and
 *                      polling threads, start and stop, the summary line
 *   fleet_client.c     one client's ADS stream over gRPC, and the polling
 *                      threads: moves bytes, no xDS logic
 *   fleet_response.c   a response into an Envoy's state: held resources,
 *                      the subscriptions they imply, the ACK due
 *   fleet_envoy.c      an Envoy's xDS state and the request it sends next
 *   fleet_resource.c   resource types, and the fields subscriptions need
 *   fleet_counters.h   the atomic counters every client adds to
 *   fleet_pb.c fleet_smap.c fleet_proc.c fleet_util.c fleet_source.c
 *                      protobuf wire, maps, /proc figures, helpers,
 *                      the clients' source addresses
 *
 * No file keeps mutable state of its own: everything a run changes is in
 * struct fleet or in what it owns. Lower layers get only what they need
 * (a client its client_conf, an Envoy its envoy_conf and the counters).
 *
 * Ownership: struct fleet owns its clients and queues; the clients point
 * at f->conf, which points at f->counters, so f must not move once
 * fleet_start ran. Threads: the main thread runs everything here; the
 * polling threads touch clients only under their mutexes, and the
 * counters only atomically.
 */
#ifndef BENCH_FLEET_H
#define BENCH_FLEET_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fleet_client.h"
#include "fleet_counters.h"
#include "fleet_envoy.h"

#define MAX_TRIGGERS 8
#define MAX_THREADS 16

/* The command line; read-only once parsed. */
struct fleet_options {
	const char *target;
	char *grpc_target;           /* malloc'ed: target, IPv4 literals as "ipv4:" */
	int clients;
	enum envoy_mode mode;
	const char *node_prefix;
	const char *cluster;
	int threads;
	const char *trigger[MAX_TRIGGERS];
	int ntriggers;
	double timeout, settle, hold, rate;
	long server_pid;             /* 0: none */
	bool verbose;
	const char *label;
	int trace;                   /* client whose messages are logged; -1: none */
	/* TLS: PEM files; ca NULL: plaintext; cert and key: mutual TLS */
	const char *tls_ca, *tls_cert, *tls_key;
	const char *features;        /* client features, comma-separated, or NULL */
	const char *tls_name;        /* the name the server's certificate must hold */
	/* delta: reopen a stream that ends on this server (--failover),
	 * with the versions held altered (--failover-stale) */
	const char *failover;
	char *grpc_failover;         /* malloc'ed, as grpc_target */
	bool failover_stale;
	int sources;                 /* --sources: bind to 127.0.0.2.. (0: don't) */
};

struct fleet {
	struct fleet_options opt;
	uint64_t t_prog;                      /* now_ns() at start */
	struct fleet_counters counters;
	struct client_conf conf;              /* every client's, from opt */
	struct client *clients;               /* opt.clients of them */
	struct source_set *sources;           /* --sources; NULL: none */
	/*
	 * One completion queue per polling thread; client i uses queue i mod
	 * threads. Debian builds gRPC without NDEBUG, and then every
	 * completion searches its queue's list of outstanding operations
	 * linearly (cq_check_tag): with 10,000 streams on one queue that
	 * search was 13% of the simulator's CPU time. Splitting the streams
	 * over the threads' queues divides it, and keeps each client on one
	 * thread.
	 */
	grpc_completion_queue *cqs[MAX_THREADS];
	pthread_t threads[MAX_THREADS];
	FILE *out;                            /* the summary line, built as we go */
	char *out_buf;
	size_t out_len;
};

/*
 * With f->opt and f->t_prog set: opens the summary line ("fleet"),
 * starts gRPC, the queues and their polling threads, the channel
 * credentials (reading the TLS files), and every client's state; no
 * stream is open yet.
 */
void fleet_start(struct fleet *f);
/* Opens every client's stream, opt.rate per second (0: all at once). */
void fleet_connect(struct fleet *f);
/* Appends " key=value" to the summary line. */
void fleet_kv(struct fleet *f, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prints the summary line on stdout; no fleet_kv after it. */
void fleet_print(struct fleet *f);
/* Every client's mutex, in order, to read the fleet at one instant. */
void fleet_lock_all(struct fleet *f);
void fleet_unlock_all(struct fleet *f);
/*
 * Cancels every stream, waits (30 s at most) for their batches, then
 * frees the clients and queues and shuts gRPC down; if batches are still
 * pending, leaves everything as it is for the exit to reclaim.
 */
void fleet_stop(struct fleet *f);

#endif
