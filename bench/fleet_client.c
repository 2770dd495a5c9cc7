/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One client's ADS stream (fleet_client.h): its channel, its batches and
 * their completions, polled by the thread of its completion queue.
 */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_client.h"
#include "fleet_response.h"
#include "fleet_util.h"

static const char ADS_SOTW[] =
	"/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
static const char ADS_DELTA[] =
	"/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";

static struct fleet_counters *counters(const struct client *c)
{
	return c->conf->envoy.counters;
}

void client_init(struct client *c, int idx, const struct client_conf *conf,
		 grpc_completion_queue *cq)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	c->conf = conf;
	c->cq = cq;
	c->t_start = (struct tag){c, TAG_START};
	c->t_send = (struct tag){c, TAG_SEND};
	c->t_recv = (struct tag){c, TAG_RECV};
	c->t_status = (struct tag){c, TAG_STATUS};
	grpc_metadata_array_init(&c->imd);
	grpc_metadata_array_init(&c->tmd);
	c->details = grpc_empty_slice();
	envoy_init(&c->env, idx, &conf->envoy);
}

void client_destroy(struct client *c)
{
	if (c->call)
		grpc_call_unref(c->call);
	if (c->ch)
		grpc_channel_destroy(c->ch);
	grpc_metadata_array_destroy(&c->imd);
	grpc_metadata_array_destroy(&c->tmd);
	grpc_slice_unref(c->details);
	envoy_free(&c->env);
	pthread_mutex_destroy(&c->mu);
}

static grpc_channel *make_channel(const struct client_conf *conf, int idx,
				  const char *target)
{
	grpc_arg args[6];
	grpc_channel_args ca = {.num_args = 4, .args = args};

	memset(args, 0, sizeof(args));
	/* one connection per client, as every Envoy has */
	args[0].type = GRPC_ARG_INTEGER;
	args[0].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
	args[0].value.integer = 1;
	args[1].type = GRPC_ARG_INTEGER;
	args[1].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	args[1].value.integer = -1;
	/* no retry buffering, no channelz: less driver overhead */
	args[2].type = GRPC_ARG_INTEGER;
	args[2].key = (char *)GRPC_ARG_ENABLE_RETRIES;
	args[2].value.integer = 0;
	args[3].type = GRPC_ARG_INTEGER;
	args[3].key = (char *)GRPC_ARG_ENABLE_CHANNELZ;
	args[3].value.integer = 0;
	/* the target is an address; the certificate names the server */
	if (conf->tls_name != NULL) {
		args[4].type = GRPC_ARG_STRING;
		args[4].key = (char *)GRPC_SSL_TARGET_NAME_OVERRIDE_ARG;
		args[4].value.string = (char *)conf->tls_name;
		ca.num_args = 5;
	}
	/* past one address's ephemeral ports: bind to one of several */
	ca.num_args += (size_t)source_set_arg(conf->sources, idx,
					      &args[ca.num_args]);
	return grpc_channel_create(target, conf->creds, &ca);
}

static void start_batch(struct client *c, const grpc_op *ops, size_t n,
			struct tag *t)
{
	grpc_call_error err;

	atomic_fetch_add(&counters(c)->ops, 1);
	c->inflight++;
	err = grpc_call_start_batch(c->call, ops, n, t, NULL);
	if (err != GRPC_CALL_OK)
		die("client %d: start_batch failed (%d)", c->env.idx, (int)err);
}

/* Sends the Envoy's next request, if one is due and none is in flight. */
static void pump(struct client *c)
{
	struct pb_wr w = {0};
	grpc_slice s;
	grpc_op op;

	if (c->send_busy || c->dead)
		return;
	if (!envoy_next_request(&c->env, &w))
		return;
	s = w.len ? grpc_slice_new(w.buf, w.len, free) : grpc_empty_slice();
	if (!w.len)
		free(w.buf);
	c->sbb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_SEND_MESSAGE;
	op.data.send_message.send_message = c->sbb;
	c->send_busy = true;
	start_batch(c, &op, 1, &c->t_send);
}

static void start_recv(struct client *c)
{
	grpc_op op;

	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &c->rbb;
	start_batch(c, &op, 1, &c->t_recv);
}

/* A channel to `target` (NULL: the one c has) and a stream on it; c's
 * mutex held. */
static void open_stream(struct client *c, const char *target)
{
	grpc_op ops[2];
	grpc_slice method = grpc_slice_from_static_string(
		c->conf->envoy.mode == SOTW ? ADS_SOTW : ADS_DELTA);

	if (target != NULL)
		c->ch = make_channel(c->conf, c->env.idx, target);
	c->call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS,
					   c->cq, method, NULL,
					   gpr_inf_future(GPR_CLOCK_REALTIME),
					   NULL);
	if (c->call == NULL)
		die("client %d: cannot create a call", c->env.idx);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	/* queue until connected instead of failing fast during the storm */
	ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
	ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[1].data.recv_initial_metadata.recv_initial_metadata = &c->imd;
	start_batch(c, ops, 2, &c->t_start);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[0].data.recv_status_on_client.trailing_metadata = &c->tmd;
	ops[0].data.recv_status_on_client.status = &c->status;
	ops[0].data.recv_status_on_client.status_details = &c->details;
	start_batch(c, ops, 1, &c->t_status);
	start_recv(c);
	pump(c);
}

void client_start(struct client *c)
{
	pthread_mutex_lock(&c->mu);
	c->env.t_begin = now_ns();
	open_stream(c, c->conf->grpc_target);
	pthread_mutex_unlock(&c->mu);
}

/* The old call is over (no batch left): let it and its channel go, and
 * open a stream on the failover target; a retry there keeps the channel,
 * whose reconnection backoff then paces it. */
static void reopen(struct client *c)
{
	bool retry = c->env.stream_no > 0;

	c->reopen_due = false;
	grpc_call_unref(c->call);
	if (!retry)
		grpc_channel_destroy(c->ch);
	grpc_metadata_array_destroy(&c->imd);
	grpc_metadata_array_destroy(&c->tmd);
	grpc_metadata_array_init(&c->imd);
	grpc_metadata_array_init(&c->tmd);
	grpc_slice_unref(c->details);
	c->details = grpc_empty_slice();
	c->dead = false;
	c->send_busy = false;
	envoy_reopen(&c->env);
	open_stream(c, retry ? NULL : c->conf->failover_target);
}

void client_cancel(struct client *c)
{
	pthread_mutex_lock(&c->mu);
	if (c->call)
		grpc_call_cancel(c->call, NULL);
	pthread_mutex_unlock(&c->mu);
}

/* ---------------- completions ---------------- */

static void on_recv(struct client *c, bool ok)
{
	struct fleet_counters *cnt = counters(c);
	grpc_byte_buffer_reader rd;
	grpc_slice all;
	bool good;

	if (!ok || c->rbb == NULL) {
		c->dead = true;              /* the status follows */
		return;
	}
	if (!grpc_byte_buffer_reader_init(&rd, c->rbb))
		die("client %d: cannot read a message", c->env.idx);
	all = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	grpc_byte_buffer_destroy(c->rbb);
	c->rbb = NULL;
	start_recv(c);

	size_t n = GRPC_SLICE_LENGTH(all);

	c->env.rx_bytes += n;
	atomic_fetch_add(&cnt->rx_bytes, n);
	atomic_fetch_add(&cnt->rx_msgs, 1);
	atomic_store(&cnt->last_rx, now_ns());
	good = response_take(&c->env, GRPC_SLICE_START_PTR(all), n);
	grpc_slice_unref(all);
	if (!good && atomic_fetch_add(&cnt->bad, 1) < 5)
		fprintf(stderr, "fleet: client %d: malformed response (%zu bytes)\n",
			c->env.idx, n);
	pump(c);
}

/* A request went out on a reopened stream: the client's last sending
 * so far; once its first requests of every type are out, it is back. */
static void note_sent_on_reopened(struct client *c)
{
	c->env.t_last_tx = now_ns();
	for (int t = 0; t < NT; t++)
		if (c->env.t[t].resume)
			return;
	if (!c->resumed) {
		c->resumed = true;
		atomic_fetch_add(&counters(c)->resumed, 1);
	}
}

static void on_status(struct client *c)
{
	struct fleet_counters *cnt = counters(c);

	c->dead = true;
	if (atomic_load(&cnt->stopping))
		return;
	/* the server died: reopen on the other one; there, a stream that
	 * could not open (UNAVAILABLE) is opened again, as an Envoy does */
	if (c->conf->failover_target != NULL && c->env.t_full &&
	    (c->env.stream_no == 0 || c->status == GRPC_STATUS_UNAVAILABLE)) {
		c->reopen_due = true;
		atomic_fetch_add(c->env.stream_no == 0 ? &cnt->reconnects : &cnt->retries, 1);
		return;
	}
	atomic_fetch_add(&cnt->failed, 1);
	if (atomic_fetch_add(&cnt->fail_logged, 1) < 5) {
		char *d = grpc_slice_to_c_string(c->details);

		fprintf(stderr, "fleet: client %d: stream ended: status %d: %s\n",
			c->env.idx, (int)c->status, d);
		gpr_free(d);
	}
}

void *client_poll(void *cq)
{
	for (;;) {
		grpc_event ev = grpc_completion_queue_next(
			cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;

		struct tag *t = ev.tag;
		struct client *c = t->c;
		struct fleet_counters *cnt = counters(c);

		pthread_mutex_lock(&c->mu);
		switch (t->kind) {
		case TAG_START:
			break;
		case TAG_SEND:
			grpc_byte_buffer_destroy(c->sbb);
			c->sbb = NULL;
			c->send_busy = false;
			if (ev.success && c->env.stream_no > 0)
				note_sent_on_reopened(c);
			if (ev.success)
				pump(c);
			break;
		case TAG_RECV:
			on_recv(c, ev.success);
			break;
		case TAG_STATUS:
			on_status(c);
			break;
		}
		if (c->inflight <= 0)
			die("client %d: a completion with no batch in flight", c->env.idx);
		if (--c->inflight == 0 && c->reopen_due)
			reopen(c);
		pthread_mutex_unlock(&c->mu);
		/* after this, c may be freed (fleet_stop waits for 0) */
		atomic_fetch_sub(&cnt->ops, 1);
	}
	return NULL;
}
