/*
 * One simulated Envoy: its ADS stream on its own channel, the requests it
 * sends (one in flight at a time, in Envoy's order: CDS, EDS, LDS, RDS;
 * every response ACKed), and the completions of its batches, polled by
 * the thread of its completion queue.
 *
 * A client's state changes only under its mutex: on its polling thread,
 * or in client_start on the main thread.
 */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

static const char ADS_SOTW[] =
	"/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
static const char ADS_DELTA[] =
	"/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";

void trace(const struct client *c, const char *fmt, ...)
{
	va_list ap;

	if (c->idx != opt.trace)
		return;
	fprintf(stderr, "%9.3f client %d: ", (double)(now_ns() - t_prog) / 1e9, c->idx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void start_batch(struct client *c, const grpc_op *ops, size_t n,
			struct tag *t)
{
	grpc_call_error err;

	atomic_fetch_add(&g_ops, 1);
	err = grpc_call_start_batch(c->call, ops, n, t, NULL);
	if (err != GRPC_CALL_OK)
		die("client %d: start_batch failed (%d)", c->idx, (int)err);
}

void encode_node(struct client *c)
{
	struct pb_wr w = {0};
	char id[256];

	snprintf(id, sizeof(id), "%s-%d", opt.node_prefix, c->idx);
	pbw_str(&w, 1, id);
	pbw_str(&w, 2, opt.cluster);
	pbw_str(&w, 6, "xdsd-fleet");
	c->node = w.buf;
	c->node_len = w.len;
}

/* ---------------- requests ---------------- */

static bool covered(const struct tstate *ts)
{
	SM_EACH(&ts->sub, e)
		if (!sm_find(&ts->held, e->key, e->klen))
			return false;
	return true;
}

static bool type_ready(const struct client *c, enum rt t)
{
	const struct tstate *ts = &c->t[t];

	if (t == EDS || t == RDS) {
		if (ts->sub.len == 0)
			return true;
		return ts->acks > 0 && !ts->unacked && covered(ts);
	}
	return ts->acks > 0 && !ts->unacked;
}

/* Envoy's start-up order: listeners once the clusters are warm. */
static void check_progress(struct client *c)
{
	if (c->t_full)
		return;
	if (!c->t[LDS].started && !c->t[LDS].want &&
	    type_ready(c, CDS) && type_ready(c, EDS))
		c->t[LDS].want = true;
	for (int t = 0; t < NT; t++)
		if (!type_ready(c, (enum rt)t))
			return;
	if (c->t[LDS].acks == 0)
		return;
	c->t_full = now_ns();
	atomic_fetch_add(&g_configured, 1);
}

static void note_ack(struct tstate *ts, uint64_t state)
{
	ts->unacked = false;
	ts->acks++;
	if (state != ts->ack_state) {
		ts->ack_state = state;
		ts->ack_at = now_ns();
	}
}

static void build_sotw(struct client *c, enum rt t, struct pb_wr *w)
{
	struct tstate *ts = &c->t[t];

	pbw_str(w, 1, ts->version);
	if (!c->node_sent) {
		pbw_bytes(w, 2, c->node, c->node_len);
		c->node_sent = true;
	}
	if (t == EDS || t == RDS)
		SM_EACH(&ts->sub, e)
			pbw_bytes(w, 3, e->key, e->klen);
	pbw_str(w, 4, type_url[t]);
	pbw_str(w, 5, ts->nonce);
	trace(c, "-> %s version %s nonce %s, %u names%s", type_name[t],
	      ts->version ? ts->version : "", ts->nonce ? ts->nonce : "",
	      ts->sub.len, ts->unacked ? " (ACK)" : "");
	ts->want = false;
	if (ts->unacked)
		note_ack(ts, hash_bytes(ts->version, strlen(ts->version)));
}

static void build_delta(struct client *c, enum rt t, struct pb_wr *w)
{
	struct tstate *ts = &c->t[t];
	bool created;

	if (!c->node_sent) {
		pbw_bytes(w, 1, c->node, c->node_len);
		c->node_sent = true;
	}
	pbw_str(w, 2, type_url[t]);
	if (t == EDS || t == RDS) {
		unsigned nsub = 0, nunsub = 0;

		SM_EACH(&ts->sub, e)
			if (!sm_find(&ts->sent, e->key, e->klen)) {
				pbw_bytes(w, 3, e->key, e->klen);
				nsub++;
			}
		SM_EACH(&ts->sent, e)
			if (!sm_find(&ts->sub, e->key, e->klen)) {
				pbw_bytes(w, 4, e->key, e->klen);
				nunsub++;
			}
		if (nsub || nunsub)
			trace(c, "-> %s subscribe %u, unsubscribe %u",
			      type_name[t], nsub, nunsub);
		sm_clear(&ts->sent);
		SM_EACH(&ts->sub, e)
			sm_put(&ts->sent, e->key, e->klen, &created);
	}
	/* one ACK per response, oldest first, as Envoy sends them */
	if (ts->nq_len) {
		trace(c, "-> %s ACK nonce %s", type_name[t], ts->nq[0]);
		pbw_str(w, 6, ts->nq[0]);
		free(ts->nq[0]);
		memmove(ts->nq, ts->nq + 1, --ts->nq_len * sizeof(*ts->nq));
	}
	ts->want = ts->nq_len > 0;
	if (ts->unacked && ts->nq_len == 0)
		note_ack(ts, ts->digest);
}

/* Starts the next request due, if none is in flight: CDS, EDS, LDS, RDS. */
static void pump(struct client *c)
{
	struct pb_wr w = {0};
	grpc_slice s;
	grpc_op op;
	int t;

	if (c->send_busy || c->dead)
		return;
	check_progress(c);
	for (t = 0; t < NT; t++)
		if (c->t[t].want)
			break;
	if (t == NT)
		return;
	if (opt.mode == SOTW)
		build_sotw(c, (enum rt)t, &w);
	else
		build_delta(c, (enum rt)t, &w);
	c->t[t].started = true;
	check_progress(c);
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

void client_start(struct client *c)
{
	grpc_op ops[2];
	grpc_slice method = grpc_slice_from_static_string(
		opt.mode == SOTW ? ADS_SOTW : ADS_DELTA);

	pthread_mutex_lock(&c->mu);
	c->t_begin = now_ns();
	c->call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS,
					   cqs[c->idx % opt.threads], method, NULL,
					   gpr_inf_future(GPR_CLOCK_REALTIME),
					   NULL);
	if (c->call == NULL)
		die("client %d: cannot create a call", c->idx);
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
	c->t[CDS].want = true;              /* wildcard */
	pump(c);
	pthread_mutex_unlock(&c->mu);
}

/* ---------------- completions ---------------- */

static void on_recv(struct client *c, bool ok)
{
	grpc_byte_buffer_reader rd;
	grpc_slice all;
	bool good;

	if (!ok || c->rbb == NULL) {
		c->dead = true;              /* the status follows */
		return;
	}
	if (!grpc_byte_buffer_reader_init(&rd, c->rbb))
		die("client %d: cannot read a message", c->idx);
	all = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	grpc_byte_buffer_destroy(c->rbb);
	c->rbb = NULL;
	start_recv(c);

	size_t n = GRPC_SLICE_LENGTH(all);

	c->rx_bytes += n;
	atomic_fetch_add(&g_rx_bytes, n);
	atomic_fetch_add(&g_rx_msgs, 1);
	atomic_store(&g_last_rx, now_ns());
	if (opt.mode == SOTW)
		good = on_sotw(c, GRPC_SLICE_START_PTR(all), n);
	else
		good = on_delta(c, GRPC_SLICE_START_PTR(all), n);
	grpc_slice_unref(all);
	if (!good && atomic_fetch_add(&g_bad, 1) < 5)
		fprintf(stderr, "fleet: client %d: malformed response (%zu bytes)\n",
			c->idx, n);
	pump(c);
}

static void on_status(struct client *c)
{
	c->dead = true;
	if (atomic_load(&g_stopping))
		return;
	atomic_fetch_add(&g_failed, 1);
	if (atomic_fetch_add(&g_fail_logged, 1) < 5) {
		char *d = grpc_slice_to_c_string(c->details);

		fprintf(stderr, "fleet: client %d: stream ended: status %d: %s\n",
			c->idx, (int)c->status, d);
		gpr_free(d);
	}
}

void *cq_thread(void *arg)
{
	grpc_completion_queue *cq = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(
			cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;

		struct tag *t = ev.tag;
		struct client *c = t->c;

		pthread_mutex_lock(&c->mu);
		switch (t->kind) {
		case TAG_START:
			break;
		case TAG_SEND:
			grpc_byte_buffer_destroy(c->sbb);
			c->sbb = NULL;
			c->send_busy = false;
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
		pthread_mutex_unlock(&c->mu);
		atomic_fetch_sub(&g_ops, 1);
	}
	return NULL;
}
