/*
 * bench/fleet's private header: the options and what fleet.c shares with
 * fleet_measure.c. fleet.c says what the program does and measures.
 *
 *   fleet.c           options, start-up, the summary line, shutdown
 *   fleet_measure.c   time to a full configuration, convergence after
 *                     each trigger
 *   fleet_client.c    one client's ADS stream over gRPC; polling threads
 *   fleet_response.c  a response into an Envoy's state
 *   fleet_envoy.c     an Envoy's xDS state and the request it sends next
 *   fleet_resource.c  resource types, and the fields subscriptions need
 *   fleet_counters.h  the atomic counters every client adds to
 *   fleet_pb.c fleet_smap.c fleet_proc.c fleet_util.c
 *                     protobuf wire, maps, /proc figures, helpers
 *
 * Each file below fleet.c has its own header and calls only the ones
 * below it; the clients reach the counters and options they need through
 * their client_conf, not through globals.
 *
 * Ownership: the clients, the completion queues, the counters and the
 * clients' conf belong to fleet.c. Threads: a client's state is touched
 * only under its mutex, by the thread polling its completion queue or by
 * the main thread measuring; the counters are atomics.
 */
#ifndef BENCH_FLEET_H
#define BENCH_FLEET_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

#include "fleet_client.h"
#include "fleet_counters.h"
#include "fleet_envoy.h"
#include "fleet_proc.h"
#include "fleet_util.h"

#define MAX_TRIGGERS 8
#define MAX_THREADS 16

struct options {
	const char *target;
	char *grpc_target;
	int clients;
	enum envoy_mode mode;
	const char *node_prefix;
	const char *cluster;
	int threads;
	const char *trigger[MAX_TRIGGERS];
	int ntriggers;
	double timeout, settle, hold, rate;
	long server_pid;
	bool verbose;
	const char *label;
	int trace;         /* client whose messages are logged; -1: none */
};

extern struct options opt;
extern struct fleet_counters counters;
extern struct client *clients;  /* opt.clients of them */

/* Appends " key=value" to the summary line. */
void kv(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* fleet_measure.c: on the main thread; each appends to the summary. */
bool wait_configured(uint64_t t0);
void print_initial(uint64_t t0);
bool run_trigger(int k);

#endif
