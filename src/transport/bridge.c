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
	pthread_t threads[XD_BRIDGE_MAX_THREADS];
	size_t nthreads; /* started; fixed while they run */

	pthread_mutex_t mu;
	struct vec pending; /* filled by the cq threads, under mu */
	/* threads that saw GRPC_QUEUE_SHUTDOWN, under mu: each pushes its
	 * last event before it asks again, so once all have seen it every
	 * event is in `pending` */
	size_t threads_shut;
	/* Parking (bridge.h), under mu: events pushed so far, threads
	 * waiting on `wake` for the next one, and whether the queue is
	 * being shut down (then nobody parks: every thread must see it). */
	pthread_cond_t wake;
	unsigned long long pushed;
	size_t parked;
	bool stopping;

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

/*
 * A thread past the first found the queue quiet for XD_BRIDGE_LINGER_MS:
 * it sleeps until an event is pushed (by any thread) or the queue's
 * shutdown begins. Sleeping here, it is none of gRPC's pollers, so an
 * idle connection's traffic (keepalive pings) wakes only the first.
 */
static void park(struct xd_bridge *b)
{
	unsigned long long seen;

	pthread_mutex_lock(&b->mu);
	seen = b->pushed;
	XD_ASSERT(b->parked + 1 < b->nthreads); /* the first never parks */
	b->parked++;
	while (b->pushed == seen && !b->stopping)
		pthread_cond_wait(&b->wake, &b->mu);
	b->parked--;
	pthread_mutex_unlock(&b->mu);
}

/* The first thread waits on the queue for good; the others for
 * XD_BRIDGE_LINGER_MS at a time, and park when it passes empty. */
static void run(struct xd_bridge *b, bool first)
{
	for (;;) {
		gpr_timespec until =
			first ? gpr_inf_future(GPR_CLOCK_MONOTONIC) :
				gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
					     gpr_time_from_millis(XD_BRIDGE_LINGER_MS,
								  GPR_TIMESPAN));
		grpc_event ev = grpc_completion_queue_next(b->cq, until, NULL);
		bool wake;

		if (ev.type == GRPC_QUEUE_TIMEOUT) {
			XD_ASSERT(!first);
			park(b);
			continue;
		}
		pthread_mutex_lock(&b->mu);
		if (ev.type == GRPC_QUEUE_SHUTDOWN) {
			XD_ASSERT(b->threads_shut < b->nthreads);
			/* the last one tells the loop it may join them all */
			wake = ++b->threads_shut == b->nthreads;
		} else {
			vec_push(&b->pending,
				 (struct event){ev.tag, ev.success != 0});
			wake = b->pending.len == 1;
			/* work is coming: every thread polls again */
			b->pushed++;
			if (b->parked > 0)
				pthread_cond_broadcast(&b->wake);
		}
		pthread_mutex_unlock(&b->mu);
		if (wake)
			uv_async_send(&b->async);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return;
	}
}

static void *first_thread(void *arg)
{
	run(arg, true);
	return NULL;
}

static void *other_thread(void *arg)
{
	run(arg, false);
	return NULL;
}

/* The queue's shutdown begins: parked threads wake, and none parks
 * again, so that every thread sees it. */
static void unpark_all(struct xd_bridge *b)
{
	pthread_mutex_lock(&b->mu);
	b->stopping = true;
	pthread_cond_broadcast(&b->wake);
	pthread_mutex_unlock(&b->mu);
}

static void on_closed(uv_handle_t *h)
{
	struct xd_bridge *b = (struct xd_bridge *)(void *)h;
	void (*done)(void *) = b->on_stopped;
	void *arg = b->stopped_arg;

	free(b->pending.items);
	free(b->work.items);
	pthread_cond_destroy(&b->wake);
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
	finished = b->threads_shut == b->nthreads;
	pthread_mutex_unlock(&b->mu);
	b->work = tmp;

	for (size_t i = 0; i < b->work.len; i++)
		b->work.items[i].tag->done(b->work.items[i].tag,
					   b->work.items[i].ok);
	b->work.len = 0;

	if (finished && !uv_is_closing((uv_handle_t *)&b->async)) {
		/* gRPC delivers every outstanding tag before reporting the
		 * shutdown, and a thread pushes nothing after it. */
		for (size_t i = 0; i < b->nthreads; i++)
			pthread_join(b->threads[i], NULL);
		grpc_completion_queue_destroy(b->cq);
		b->cq = NULL;
		xd_debug("completion queue drained and destroyed");
		uv_close((uv_handle_t *)&b->async, on_closed);
	}
}

/* After the queue's shutdown, with `n` threads started on it: waits
 * until they have all seen it, or drains it here when none runs. */
static void drain(struct xd_bridge *b, size_t n)
{
	unpark_all(b);
	grpc_completion_queue_shutdown(b->cq);
	for (size_t i = 0; i < n; i++)
		pthread_join(b->threads[i], NULL);
	while (n == 0 && grpc_completion_queue_next(
				 b->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
				 NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
}

int xd_bridge_start(struct xd_bridge **out, uv_loop_t *loop, size_t nthreads)
{
	struct xd_bridge *b;
	size_t started;
	int err = 0;

	XD_ASSERT_LOOP();
	XD_ASSERT(nthreads >= 1 && nthreads <= XD_BRIDGE_MAX_THREADS);
	b = xd_calloc(1, sizeof(*b));
	if (uv_async_init(loop, &b->async, on_async) != 0) {
		free(b);
		return -1;
	}
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->wake, NULL);
	b->cq = grpc_completion_queue_create_for_next(NULL);
	/* the count first: a thread compares threads_shut with it */
	b->nthreads = nthreads;
	for (started = 0; started < nthreads; started++) {
		err = pthread_create(&b->threads[started], NULL,
				     started == 0 ? first_thread : other_thread, b);
		if (err != 0)
			break;
		/* a name for top -H, perf and /proc/PID/task/ (15 characters
		 * at most), set before xdsd says it listens */
		pthread_setname_np(b->threads[started], "xdsd-io");
	}
	if (err != 0) {
		xd_error("cannot start completion queue thread %zu of %zu: %s",
			 started + 1, nthreads, strerror(err));
		/* Nothing was started on the queue: those running see its
		 * shutdown at once (none is the last: no wake-up). */
		pthread_mutex_lock(&b->mu);
		b->nthreads = started + 1;
		pthread_mutex_unlock(&b->mu);
		drain(b, started);
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
	unpark_all(b);
	grpc_completion_queue_shutdown(b->cq);
}
