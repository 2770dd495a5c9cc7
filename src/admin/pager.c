/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/pager.h"

#include <stdlib.h>

#include "util/common.h"
#include "util/list.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/*
 * One uv_idle handle drives every page: while any can step the loop
 * polls without waiting, so a page goes on at every turn, after the
 * turn's I/O. A turn's slice is shared: each page steps (oldest first)
 * until the turn's deadline; each page that stepped goes to the back,
 * so the next turn starts with the others.
 *
 * A page whose answer holds XD_PAGER_HIGH unsent bytes waits: it takes
 * no slice until its client has taken enough (the server's `room`);
 * with every page waiting the idle handle stops, and the loop sleeps
 * until a client reads.
 */

struct job {
	struct xd_pager *p;
	struct xd_http_exchange *x;
	const struct xd_pager_page *page;
	void *st;
	bool streaming; /* its head is sent, its bytes as they come */
	bool waiting;   /* for its client to take what it wrote */
	size_t held;    /* its buffer's size, as last counted in stats */
	struct xd_list link; /* in the pager's jobs */
};

struct xd_pager {
	uv_idle_t idle;
	struct xd_list jobs; /* oldest first */
	size_t njobs;
	size_t nready; /* of them not waiting: the idle handle runs for them */
	struct xd_pager_stats stats;
};

static void on_idle(uv_idle_t *h);

static void ready(struct job *j)
{
	if (j->p->nready++ == 0)
		uv_idle_start(&j->p->idle, on_idle);
}

static void unready(struct job *j)
{
	(void)XD_UNREF(j->p->nready);
	if (j->p->nready == 0)
		uv_idle_stop(&j->p->idle);
}

/* What the page's buffer takes now, in the stats. */
static void count_held(struct job *j, size_t now)
{
	struct xd_pager_stats *s = &j->p->stats;

	s->held = s->held - j->held + now;
	j->held = now;
	if (now > s->held_max)
		s->held_max = now;
}

static void job_end(struct job *j)
{
	xd_list_remove(&j->link);
	(void)XD_UNREF(j->p->njobs);
	if (!j->waiting)
		unready(j);
	count_held(j, 0);
	j->page->done(j->st);
	free(j);
}

/* The answer of `x` is over (or its client gone): sends it, or frees
 * it. */
static void answer(struct xd_http_exchange *x, bool streaming)
{
	if (streaming)
		xd_http_stream_end(x);
	else
		xd_http_reply(x);
}

/* The client went away (or the endpoint stops): the page ends now. */
static void on_gone(struct xd_http_exchange *x)
{
	struct job *j = x->data;
	bool streaming = j->streaming;

	XD_ASSERT(j->x == x);
	job_end(j);
	answer(x, streaming); /* goes nowhere: frees the exchange */
}

/* The client took enough of what a waiting page wrote: it goes on. */
static void on_room(struct xd_http_exchange *x)
{
	struct job *j = x->data;

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(j->x == x && j->streaming, "admin page for %s", x->peer);
	if (!j->waiting)
		return;
	j->waiting = false;
	ready(j);
}

/* One step of `j`'s page. */
static void step(struct job *j, uint64_t deadline)
{
	struct xd_pager *p = j->p;
	struct xd_http_exchange *x = j->x;
	bool streaming = j->streaming;

	/* what its client took so far leaves the buffer */
	if (streaming)
		(void)xd_http_stream_held(x);
	p->stats.slices++;
	if (j->page->step(j->st, x, deadline)) {
		count_held(j, x->out.cap);
		p->stats.pages++;
		job_end(j);
		answer(x, streaming);
		return;
	}
	count_held(j, x->out.cap);
	if (x->out.len == 0)
		return; /* nothing to send yet (a page counting streams) */
	if (!streaming) {
		/* the head goes with the first bytes: the status and type
		 * are the first step's */
		j->streaming = true;
		xd_http_stream_start(x, XD_PAGER_LOW, on_room);
	} else {
		xd_http_stream_push(x);
	}
	if (x->out.len >= XD_PAGER_HIGH) {
		j->waiting = true;
		unready(j);
	}
}

static void on_idle(uv_idle_t *h)
{
	struct xd_pager *p = h->data;
	uint64_t deadline = uv_hrtime() + XD_PAGER_SLICE_NS;
	/* each page present at the start of the turn steps once at least,
	 * unless it waits for its client */
	size_t n = p->njobs;

	XD_ASSERT_LOOP();
	while (n-- > 0 && p->nready > 0) {
		struct job *j = xd_container_of(p->jobs.next, struct job, link);

		/* to the back: the others go first next time */
		xd_list_remove(&j->link);
		xd_list_push_back(&p->jobs, &j->link);
		if (j->waiting)
			continue;
		step(j, deadline);
		if (uv_hrtime() >= deadline)
			break;
	}
}

bool xd_pager_enough(const struct xd_http_exchange *x, uint64_t deadline_ns)
{
	return x->out.len >= XD_PAGER_HIGH || uv_hrtime() >= deadline_ns;
}

struct xd_pager *xd_pager_new(uv_loop_t *loop)
{
	struct xd_pager *p = xd_calloc(1, sizeof(*p));

	XD_ASSERT_LOOP();
	uv_idle_init(loop, &p->idle);
	p->idle.data = p;
	xd_list_init(&p->jobs);
	return p;
}

void xd_pager_start(struct xd_pager *p, struct xd_http_exchange *x,
		    const struct xd_pager_page *page, void *st)
{
	struct job *j = xd_calloc(1, sizeof(*j));

	XD_ASSERT_LOOP();
	j->p = p;
	j->x = x;
	j->page = page;
	j->st = st;
	x->gone = on_gone;
	x->data = j;
	xd_list_init(&j->link);
	xd_list_push_back(&p->jobs, &j->link);
	p->njobs++;
	ready(j);
}

const struct xd_pager_stats *xd_pager_stats(const struct xd_pager *p)
{
	return &p->stats;
}

static void closed(uv_handle_t *h)
{
	free(h->data);
}

void xd_pager_free(struct xd_pager *p)
{
	XD_ASSERT_LOOP();
	/* every held answer heard `gone` when the server stopped */
	XD_ASSERT_INFO(p->njobs == 0, "%zu admin pages still pending", p->njobs);
	uv_close((uv_handle_t *)&p->idle, closed);
}
