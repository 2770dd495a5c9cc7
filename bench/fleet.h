/*
 * bench/fleet's private header: the types and the state its files share,
 * and the few functions each file offers the others; the utilities at
 * the bottom each have their own header. fleet.c says what the program
 * does and measures.
 *
 *   fleet.c           options, start-up, the summary line, shutdown
 *   fleet_util.c      dying on errors, allocation, clocks
 *   fleet_pb.c        protobuf wire: writing requests (reading is xdsd's
 *                     src/schema/wire.h, through pb_sub/pb_next)
 *   fleet_smap.c      a string-keyed hash map and a set of hashes
 *   fleet_resource.c  the fields of a resource subscriptions depend on
 *   fleet_response.c  responses: what a client holds and subscribes to
 *   fleet_client.c    one stream per client: requests, completions,
 *                     the polling threads
 *   fleet_proc.c      the server process (/proc), the machine, this one
 *   fleet_measure.c   time to a full configuration, convergence after
 *                     each trigger
 *
 * Ownership: each struct client owns its call, channel, buffers and
 * maps; `clients` and the completion queues belong to fleet.c.
 * Threads: a client's state is touched only under its mutex, by the
 * thread polling its completion queue or by the main thread measuring;
 * the g_* counters are atomics updated by every thread.
 */
#ifndef BENCH_FLEET_H
#define BENCH_FLEET_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fleet_pb.h"
#include "fleet_proc.h"
#include "fleet_resource.h"
#include "fleet_smap.h"
#include "fleet_util.h"

#define MAX_TRIGGERS 8
#define MAX_THREADS 16

/* ------------------------------------------------------------------ */
/* Options and global state (fleet.c)                                  */

enum mode { SOTW, DELTA };

struct options {
	const char *target;
	char *grpc_target;
	int clients;
	enum mode mode;
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

/*
 * One completion queue per polling thread; client i uses queue i mod
 * threads. Debian builds gRPC without NDEBUG, and then every completion
 * searches its queue's list of outstanding operations linearly
 * (cq_check_tag): with 10,000 streams on one queue that search was 13%
 * of the simulator's CPU time. Splitting the streams over the threads'
 * queues divides it, and keeps each client on one thread.
 */
extern grpc_completion_queue *cqs[MAX_THREADS];

/* counters shared by every thread */
extern _Atomic uint64_t g_last_rx;      /* now_ns() of the last message */
extern _Atomic uint64_t g_rx_msgs, g_rx_bytes;
extern _Atomic uint64_t g_resp[NT];
extern _Atomic uint64_t g_dups[NT];     /* unchanged resends nobody asked for */
extern _Atomic uint64_t g_unsub;        /* resources never subscribed to */
extern _Atomic uint64_t g_unknown;      /* responses of a type never asked for */
extern _Atomic uint64_t g_bad;          /* malformed responses */
extern _Atomic uint64_t g_twice;        /* responses naming a resource twice */
extern _Atomic uint64_t g_configured;   /* clients holding a full config */
extern _Atomic uint64_t g_failed;       /* streams that ended */
extern _Atomic int64_t g_ops;           /* batches in flight */
extern _Atomic int g_fail_logged;
extern _Atomic bool g_stopping;       /* calls cancelled on purpose */

/* Appends " key=value" to the summary line. */
void kv(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ */
/* Clients                                                             */

struct client;

enum tag_kind { TAG_START, TAG_SEND, TAG_RECV, TAG_STATUS };

struct tag {
	struct client *c;
	enum tag_kind kind;
};

/* Per resource type state of one client's stream. */
struct tstate {
	bool started;     /* a request of this type was sent */
	bool want;        /* a request is due */
	bool sub_dirty;   /* subscription changed since the last response */
	bool unacked;     /* a response waits for its ACK */
	struct smap sub;  /* EDS/RDS: names subscribed */
	struct smap sent; /* delta: names the server was told about */
	struct smap held; /* resources held (delta: ver = version hash) */
	uint64_t digest;  /* delta: xor over held of mix(name, version) */
	char *version;    /* SotW: version_info of the latest response */
	char *nonce;      /* SotW: nonce of the latest response */
	char **nq;        /* delta: nonces to ACK, oldest first */
	uint32_t nq_len, nq_cap;
	uint32_t acks;
	uint64_t ack_state;  /* state at the last ACK (SotW: hash of version) */
	uint64_t ack_at;     /* when an ACK last changed ack_state */
	uint64_t base_state; /* ack_state when the trigger ran */
};

struct client {
	pthread_mutex_t mu;
	int idx;
	grpc_channel *ch;
	grpc_call *call;
	struct tag t_start, t_send, t_recv, t_status;
	grpc_byte_buffer *rbb, *sbb;
	grpc_metadata_array imd, tmd;
	grpc_status_code status;
	grpc_slice details;
	bool send_busy, dead, node_sent;
	uint8_t *node;
	size_t node_len;
	struct tstate t[NT];
	uint64_t t_begin, t_full;
	uint64_t rx_bytes, rx_base;
};

extern struct client *clients;  /* opt.clients of them */
extern uint64_t t_prog;         /* program start, for --trace */

/* fleet_response.c: takes one response into c's state; false when
 * malformed. Called with c->mu held. */
bool on_sotw(struct client *c, const uint8_t *d, size_t n);
bool on_delta(struct client *c, const uint8_t *d, size_t n);

/* fleet_client.c */
/* Logs a line on stderr when c is the --trace client. */
void trace(const struct client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Encodes c's Node, sent with its first request. */
void encode_node(struct client *c);
/* Opens c's stream (c->ch set) and sends its first request. */
void client_start(struct client *c);
/* The polling thread of one completion queue (arg). */
void *cq_thread(void *arg);

/* fleet_measure.c: on the main thread; each appends to the summary. */
bool wait_configured(uint64_t t0);
void print_initial(uint64_t t0);
bool run_trigger(int k);

#endif
