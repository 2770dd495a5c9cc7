/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One client: a simulated Envoy (fleet_envoy.h) and its ADS stream on
 * its own channel, as every Envoy has its own connection. This layer
 * only moves bytes: it sends the request the Envoy has due (one in
 * flight at a time), hands each response to fleet_response.c, and counts
 * what it received and the streams that ended. client_poll is the body
 * of a thread polling one completion queue for its clients' batches.
 * With a failover target, a configured client whose stream ends opens
 * one stream more, on a channel to that target, once every batch of the
 * old call has completed (envoy_reopen says what it sends first).
 *
 * Ownership: a client owns its channel, call, buffers and Envoy; its
 * conf and queue belong to the fleet and outlive it. A client does not
 * move once initialized (its batches' tags point into it).
 *
 * Threads: a client's state (its Envoy included) changes only under its
 * mutex: on its queue's polling thread, in client_start and
 * client_cancel on the main thread; the main thread takes the mutex to
 * measure.
 */
#ifndef BENCH_FLEET_CLIENT_H
#define BENCH_FLEET_CLIENT_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdbool.h>

#include "fleet_envoy.h"
#include "fleet_source.h"

/* What every client of one fleet shares, read-only once started. */
struct client_conf {
	struct envoy_conf envoy;
	const char *grpc_target;     /* e.g. "ipv4:127.0.0.1:18000" */
	const char *failover_target; /* where a stream that ends is reopened; NULL: nowhere */
	/* every channel's credentials, owned by the fleet: insecure, or TLS
	 * (with a client certificate for mutual TLS) */
	grpc_channel_credentials *creds;
	const char *tls_name;        /* TLS: the server name to check; else NULL */
	/* the clients' source addresses, owned by the fleet; NULL: the
	 * kernel's choice */
	const struct source_set *sources;
};

struct client;

enum tag_kind { TAG_START, TAG_SEND, TAG_RECV, TAG_STATUS };

struct tag {
	struct client *c;
	enum tag_kind kind;
};

struct client {
	pthread_mutex_t mu;
	struct envoy env;
	const struct client_conf *conf;
	grpc_completion_queue *cq;
	grpc_channel *ch;
	grpc_call *call;
	struct tag t_start, t_send, t_recv, t_status;
	grpc_byte_buffer *rbb, *sbb;
	grpc_metadata_array imd, tmd;
	grpc_status_code status;
	grpc_slice details;
	bool send_busy;
	bool dead;                   /* the stream ended, or is ending */
	int inflight;                /* batches of the current call not completed */
	bool reopen_due;             /* reopen on failover_target once inflight is 0 */
	bool resumed;                /* counted in counters->resumed */
};

/* A client with no channel yet; its batches will complete on cq. */
void client_init(struct client *c, int idx, const struct client_conf *conf,
		 grpc_completion_queue *cq);
/* Opens c's channel and stream and sends its first request. */
void client_start(struct client *c);
/* Cancels c's stream, if it has one; its batches complete as failed. */
void client_cancel(struct client *c);
/* Frees what c owns; only once none of its batches is in flight. */
void client_destroy(struct client *c);

/* The polling thread of one completion queue (arg), until it shuts down. */
void *client_poll(void *cq);

#endif
