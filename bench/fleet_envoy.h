/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One simulated Envoy's xDS state, without the transport: what it
 * subscribes to, holds and has ACKed of each type, and the request it
 * sends next (one at a time, in Envoy's order: CDS, EDS, LEDS, LDS, RDS; every
 * response ACKed; LDS once the clusters are warm). fleet_response.c
 * takes responses into this state; fleet_client.c moves the bytes.
 *
 * Ownership: a struct envoy owns its maps, strings and encoded Node; its
 * conf (and the counters it points to) belong to the fleet and outlive
 * it. Threads: the caller guards an envoy (fleet_client.c: the client's
 * mutex); the counters are atomics.
 */
#ifndef BENCH_FLEET_ENVOY_H
#define BENCH_FLEET_ENVOY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet_counters.h"
#include "fleet_pb.h"
#include "fleet_resource.h"
#include "fleet_smap.h"

enum envoy_mode { SOTW, DELTA };

/* What every Envoy of one fleet shares; read-only once the first stream
 * opens, except the counters. */
struct envoy_conf {
	enum envoy_mode mode;
	const char *node_prefix;     /* node ids are <node_prefix>-<idx> */
	const char *cluster;         /* node.cluster */
	const char *features;        /* node.client_features, comma-separated */
	int trace;                   /* Envoy whose messages are logged; -1: none */
	uint64_t t_prog;             /* now_ns() at start, for trace lines */
	/* delta: keep each held resource's version string, to reconnect with
	 * initial_resource_versions (--failover); send them altered, as if
	 * the other server's versions differed (--failover-stale) */
	bool keep_versions, stale_versions;
	struct fleet_counters *counters;
};

/* Per resource type state of one Envoy's stream. */
struct tstate {
	bool started;     /* a request of this type was sent */
	bool want;        /* a request is due */
	bool sub_dirty;   /* subscription changed since the last response */
	bool unacked;     /* a response waits for its ACK */
	bool resume;      /* delta: the first request on a reopened stream is due:
			   * it carries initial_resource_versions of `held` */
	struct smap sub;  /* EDS/LEDS/RDS: names subscribed (LEDS: globs) */
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
	uint64_t base_state; /* ack_state when the trigger ran (fleet_measure.c) */
};

struct envoy {
	int idx;
	const struct envoy_conf *conf;
	uint8_t *node;               /* encoded Node, sent with the first request */
	size_t node_len;
	bool node_sent;
	struct tstate t[NT];
	uint64_t t_begin;            /* its stream opened */
	uint64_t t_full;             /* its full configuration ACKed; 0: not yet */
	uint64_t rx_bytes, rx_base;  /* received; at the start of the phase measured */
	int stream_no;               /* 0: the first stream; then one per reopening */
	uint64_t t_last_tx;          /* on a reopened stream: its last request sent */
	/* on a reopened stream: resources with a body received; and how many
	 * the server owes it (all it held when the versions are altered) */
	uint64_t resent, resent_due;
};

/* A new Envoy, its Node encoded and its wildcard CDS request due. */
void envoy_init(struct envoy *e, int idx, const struct envoy_conf *conf);
void envoy_free(struct envoy *e);

/*
 * For a stream reopened (delta, after the old one ended): every type
 * requested before is due again, first with initial_resource_versions
 * of what is held and the names subscribed (rule D7); the Node is sent
 * again; nonces and un-ACKed responses of the old stream are forgotten.
 */
void envoy_reopen(struct envoy *e);

/* True while e has a request due or a response un-ACKed. */
bool envoy_busy(const struct envoy *e);

/*
 * Writes the next request due into w (from {0}; w->buf is then the
 * caller's) and notes what it ACKs; false when none is due. When the
 * Envoy holds a full configuration for the first time, sets t_full and
 * counts it.
 */
bool envoy_next_request(struct envoy *e, struct pb_wr *w);

/* Logs a line on stderr when e is the --trace Envoy. */
void envoy_trace(const struct envoy *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
