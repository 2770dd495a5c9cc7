/* SPDX-License-Identifier: Apache-2.0 */
#include "etcd/unary.h"

#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/wire.h"
#include "transport/tag.h"
#include "util/common.h"
#include "util/list.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct unary {
	struct xd_tag tag;
	struct xd_list link;
	struct xd_etcd_calls *set;
	grpc_call *call;
	grpc_metadata_array head, trailing;
	grpc_status_code status;
	grpc_slice details;
	grpc_byte_buffer *recv;
	const ProtobufCMessageDescriptor *d;
	const char *method;
	xd_etcd_done_fn done; /* NULL once cancelled */
	void *arg;
	bool last; /* outlives xd_etcd_calls_cancel (XD_ETCD_CALL_LAST) */
};

struct xd_etcd_calls {
	grpc_completion_queue *cq;
	struct xd_list calls;
	size_t n;
	bool cancelled;
	void (*idle)(void *arg);
	void *idle_arg;
};

struct xd_etcd_calls *xd_etcd_calls_new(grpc_completion_queue *cq,
					void (*idle)(void *arg), void *arg)
{
	struct xd_etcd_calls *c = xd_calloc(1, sizeof(*c));

	c->cq = cq;
	c->idle = idle;
	c->idle_arg = arg;
	xd_list_init(&c->calls);
	return c;
}

static void unary_done(struct xd_tag *tag, bool ok)
{
	struct unary *u = xd_container_of(tag, struct unary, tag);
	struct xd_etcd_calls *c = u->set;
	ProtobufCMessage *resp = NULL;
	char why[512] = "";

	XD_ASSERT_LOOP();
	if (!ok)
		snprintf(why, sizeof(why), "%s: the call failed", u->method);
	else if (u->status != GRPC_STATUS_OK)
		xd_etcd_status_text(u->status, u->details, why, sizeof(why));
	else {
		resp = xd_etcd_unpack(u->d, u->recv);
		u->recv = NULL; /* consumed, parsed or not */
		if (resp == NULL)
			snprintf(why, sizeof(why),
				 "%s: an answer that does not parse", u->method);
	}
	if (u->done != NULL)
		u->done(u->arg, resp, resp != NULL ? NULL : why);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	grpc_byte_buffer_destroy(u->recv);
	grpc_slice_unref(u->details);
	grpc_metadata_array_destroy(&u->head);
	grpc_metadata_array_destroy(&u->trailing);
	grpc_call_unref(u->call);
	xd_list_remove(&u->link);
	free(u);
	c->n--;
	if (c->n == 0 && c->idle != NULL)
		c->idle(c->idle_arg);
}

int xd_etcd_calls_start(struct xd_etcd_calls *c, grpc_channel *ch,
			const char *method, const ProtobufCMessage *req,
			const ProtobufCMessageDescriptor *d, uint64_t timeout_ms,
			unsigned flags, xd_etcd_done_fn done, void *arg,
			char *why, size_t len)
{
	struct unary *u;
	grpc_op ops[6];
	grpc_call_error err;

	XD_ASSERT_LOOP();
	if (c->cancelled) {
		snprintf(why, len, "etcd: stopping");
		return -1;
	}
	if (c->n >= XD_ETCD_CALLS_MAX) {
		snprintf(why, len, "etcd: %d calls under way already",
			 XD_ETCD_CALLS_MAX);
		return -1;
	}
	u = xd_calloc(1, sizeof(*u));
	u->tag.done = unary_done;
	u->set = c;
	u->d = d;
	u->method = method;
	u->done = done;
	u->arg = arg;
	u->last = (flags & XD_ETCD_CALL_LAST) != 0;
	u->details = grpc_empty_slice();
	grpc_metadata_array_init(&u->head);
	grpc_metadata_array_init(&u->trailing);
	u->call = grpc_channel_create_call(
		ch, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq,
		grpc_slice_from_static_string(method), NULL,
		gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
			     gpr_time_from_millis((int64_t)timeout_ms,
						  GPR_TIMESPAN)),
		NULL);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = xd_etcd_pack(req);
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &u->head;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = &u->recv;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &u->trailing;
	ops[5].data.recv_status_on_client.status = &u->status;
	ops[5].data.recv_status_on_client.status_details = &u->details;
	err = grpc_call_start_batch(u->call, ops, 6, &u->tag, NULL);
	/* only misuse makes it refuse, and the tag would never come */
	XD_ASSERT_INFO(err == GRPC_CALL_OK, "etcd %s: batch error %d", method,
		       err);
	grpc_byte_buffer_destroy(ops[1].data.send_message.send_message);
	xd_list_push_back(&c->calls, &u->link);
	c->n++;
	return 0;
}

void xd_etcd_calls_forget(struct xd_etcd_calls *c, void *arg)
{
	struct xd_list *n;

	XD_ASSERT_LOOP();
	xd_list_for_each(n, &c->calls) {
		struct unary *u = xd_container_of(n, struct unary, link);

		if (u->arg == arg)
			u->done = NULL;
	}
}

void xd_etcd_calls_cancel(struct xd_etcd_calls *c)
{
	struct xd_list *n;

	XD_ASSERT_LOOP();
	c->cancelled = true;
	xd_list_for_each(n, &c->calls) {
		struct unary *u = xd_container_of(n, struct unary, link);

		if (u->last)
			continue; /* bounded by its deadline, and awaited */
		u->done = NULL;
		grpc_call_cancel(u->call, NULL);
	}
}

bool xd_etcd_calls_idle(const struct xd_etcd_calls *c)
{
	return c->n == 0;
}

void xd_etcd_calls_free(struct xd_etcd_calls *c)
{
	if (c == NULL)
		return;
	XD_ASSERT_INFO(c->n == 0, "etcd calls freed with %zu under way", c->n);
	free(c);
}
