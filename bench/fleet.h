/*
 * bench/fleet's private header: the types and the state its files share,
 * and the few functions each file offers the others. fleet.c says what
 * the program does and measures.
 *
 *   fleet.c           options, start-up, the summary line, shutdown
 *   fleet_util.c      dying on errors, allocation, clocks
 *   fleet_pb.c        protobuf wire: writing requests (reading is xdsd's
 *                     src/schema/wire.h, through pb_sub/pb_next below)
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

#include "schema/wire.h"

#define MAX_TRIGGERS 8
#define MAX_THREADS 16

/* ------------------------------------------------------------------ */
/* Resource types (fleet_resource.c)                                   */

enum rt { CDS, EDS, LDS, RDS, NT };

extern const char *const type_url[NT];
extern const char *const type_name[NT];

/* ------------------------------------------------------------------ */
/* Small helpers (fleet_util.c)                                        */

uint64_t now_ns(void);
void sleep_ms(int ms);
/* Prints "fleet: ..." on stderr and exits 1. */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* Allocation that dies when out of memory. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrndup(const void *s, size_t n);

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return mix64(h ^ n);
}

static inline bool span_eq(const uint8_t *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

/* ------------------------------------------------------------------ */
/* Protobuf wire format (fleet_pb.c)                                   */

/* Reading: the fields of one message, with xdsd's own reader. Groups
 * are skipped as unknown fields; anything malformed ends with -1. */
struct pb_rd {
	const uint8_t *p, *end;
};

static inline struct pb_rd pb_sub(const uint8_t *data, size_t len)
{
	struct pb_rd r = {data, data + len};

	return r;
}

/* 1: a field; 0: end of message; -1: malformed. */
static inline int pb_next(struct pb_rd *r, struct xd_wire_field *f)
{
	return xd_wire_next(&r->p, r->end, f);
}

/* Writing: a request. `buf` is malloc'ed and owned by the writer's
 * user, who frees it or hands it to gRPC. */
struct pb_wr {
	uint8_t *buf;
	size_t len, cap;
};

void pbw_bytes(struct pb_wr *w, uint32_t num, const void *p, size_t n);
/* Writes nothing for a NULL or empty string, as protobuf omits them. */
void pbw_str(struct pb_wr *w, uint32_t num, const char *s);

/* ------------------------------------------------------------------ */
/* A string-keyed hash map (fleet_smap.c)                              */

struct sm_ent {
	char *key;         /* owned; NULL: empty slot */
	uint32_t klen;
	uint64_t h;
	uint64_t ver;      /* resource version hash (delta) */
	char *aux;         /* owned: a cluster's EDS name, a listener's RDS names ('\n'-joined) */
};

struct smap {
	struct sm_ent *e;
	uint32_t cap, len;
};

struct sm_ent *sm_find(const struct smap *m, const char *k, size_t n);
/* The entry for k, inserted (ver 0, aux NULL) if absent. */
struct sm_ent *sm_put(struct smap *m, const char *k, size_t n, bool *created);
/* Frees e's key and aux; a later entry may move into e's slot. */
void sm_del_ent(struct smap *m, struct sm_ent *e);
void sm_clear(struct smap *m);

#define SM_EACH(m, ent) \
	for (struct sm_ent *ent = (m)->e; ent < (m)->e + (m)->cap; ent++) \
		if (ent->key != NULL)

/*
 * A set of name hashes, to find a name given twice in one response
 * (rule S11; Envoy NACKs a delta response naming a resource twice, even once
 * in resources and once in removed_resources).
 */
struct hset {
	uint64_t *v;      /* 0: empty slot */
	uint32_t cap, len;
};

/* False if h was already there. */
bool hset_add(struct hset *s, uint64_t h);

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

/* fleet_resource.c: a resource's name and the names it makes a client
 * subscribe to; *eds and *rds are malloc'ed (NULL: none), `name` points
 * into d. False when malformed. */
bool parse_cluster(const uint8_t *d, size_t n, struct xd_wire_field *name,
		   char **eds);
bool parse_listener(const uint8_t *d, size_t n, struct xd_wire_field *name,
		    char **rds);
bool parse_name1(const uint8_t *d, size_t n, struct xd_wire_field *name);
/* The type of a type URL; NT when it is none of the four. */
enum rt type_of(const uint8_t *p, size_t n);

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

/* fleet_proc.c: the server's figures (--server-pid), the machine's busy
 * CPU time and this process's; -1 when unknown. */
long proc_status_kb(const char *key);
double proc_cpu_s(void);
long proc_switches(void);
double system_busy_s(void);
double self_cpu_s(void);

/* fleet_measure.c: on the main thread; each appends to the summary. */
bool wait_configured(uint64_t t0);
void print_initial(uint64_t t0);
bool run_trigger(int k);

#endif
