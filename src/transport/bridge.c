/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/bridge.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tag.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct event {
	struct xd_tag *tag;
	bool ok;
};

struct vec {
	struct event *items;
	size_t len, cap;
};

struct xd_bridge {
	uv_async_t async; /* first: the close callback frees through it */
	grpc_completion_queue *cq;
	pthread_t thread;

	pthread_mutex_t mu;
	struct vec pending;  /* filled by the cq thread, under mu */
	bool queue_shutdown; /* cq thread saw GRPC_QUEUE_SHUTDOWN, under mu */

	struct vec work; /* the loop's side of the swap */
	void (*on_stopped)(void *arg);
	void *stopped_arg;
};

static void vec_push(struct vec *v, struct event ev)
{
	/* Without memory a completion would be lost, and its call leaked
	 * forever: xd_grow aborts instead. */
	v->items = xd_grow(v->items, &v->cap, v->len + 1, sizeof(*v->items));
	v->items[v->len++] = ev;
}

static void *cq_thread(void *arg)
{
	struct xd_bridge *b = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(
			b->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
		bool wake;

		pthread_mutex_lock(&b->mu);
		if (ev.type == GRPC_QUEUE_SHUTDOWN) {
			b->queue_shutdown = true;
			wake = true;
		} else {
			vec_push(&b->pending,
				 (struct event){ev.tag, ev.success != 0});
			wake = b->pending.len == 1;
		}
		pthread_mutex_unlock(&b->mu);
		if (wake)
			uv_async_send(&b->async);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return NULL;
	}
}

static void on_closed(uv_handle_t *h)
{
	struct xd_bridge *b = (struct xd_bridge *)(void *)h;
	void (*done)(void *) = b->on_stopped;
	void *arg = b->stopped_arg;

	free(b->pending.items);
	free(b->work.items);
	pthread_mutex_destroy(&b->mu);
	free(b);
	if (done != NULL)
		done(arg);
}

static void on_async(uv_async_t *h)
{
	struct xd_bridge *b = (struct xd_bridge *)(void *)h;
	struct vec tmp;
	bool finished;

	/* every tag's done() runs here: the one door onto the loop */
	XD_ASSERT_LOOP();
	pthread_mutex_lock(&b->mu);
	tmp = b->pending;
	b->pending = b->work;
	b->pending.len = 0;
	finished = b->queue_shutdown;
	pthread_mutex_unlock(&b->mu);
	b->work = tmp;

	for (size_t i = 0; i < b->work.len; i++)
		b->work.items[i].tag->done(b->work.items[i].tag,
					   b->work.items[i].ok);
	b->work.len = 0;

	if (finished && !uv_is_closing((uv_handle_t *)&b->async)) {
		/* gRPC delivers every outstanding tag before reporting the
		 * shutdown, and the thread pushes nothing after it. */
		pthread_join(b->thread, NULL);
		grpc_completion_queue_destroy(b->cq);
		b->cq = NULL;
		xd_debug("completion queue drained and destroyed");
		uv_close((uv_handle_t *)&b->async, on_closed);
	}
}

int xd_bridge_start(struct xd_bridge **out, uv_loop_t *loop)
{
	struct xd_bridge *b;
	int err;

	XD_ASSERT_LOOP();
	b = xd_calloc(1, sizeof(*b));
	if (uv_async_init(loop, &b->async, on_async) != 0) {
		free(b);
		return -1;
	}
	pthread_mutex_init(&b->mu, NULL);
	b->cq = grpc_completion_queue_create_for_next(NULL);
	err = pthread_create(&b->thread, NULL, cq_thread, b);
	if (err != 0) {
		xd_error("cannot start the completion queue thread: %s",
			 strerror(err));
		grpc_completion_queue_shutdown(b->cq);
		/* Nothing was started on the queue; drain it right here. */
		while (grpc_completion_queue_next(b->cq,
						  gpr_inf_future(GPR_CLOCK_MONOTONIC),
						  NULL).type != GRPC_QUEUE_SHUTDOWN)
			;
		grpc_completion_queue_destroy(b->cq);
		b->cq = NULL;
		uv_close((uv_handle_t *)&b->async, on_closed);
		return -1;
	}
	*out = b;
	return 0;
}

grpc_completion_queue *xd_bridge_cq(struct xd_bridge *b)
{
	return b->cq;
}

void xd_bridge_stop(struct xd_bridge *b, void (*done)(void *arg), void *arg)
{
	XD_ASSERT_LOOP();
	/* once: a second shutdown of the queue is gRPC's undefined case */
	XD_ASSERT(b->cq != NULL && b->on_stopped == NULL);
	b->on_stopped = done;
	b->stopped_arg = arg;
	grpc_completion_queue_shutdown(b->cq);
}
