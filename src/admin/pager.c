/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/pager.h"

#include <stdlib.h>

#include "util/common.h"
#include "util/list.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/*
 * One uv_idle handle drives every page: while any is pending the loop
 * polls without waiting, so a page goes on at every turn, after the
 * turn's I/O. A turn's slice is shared: each page steps (oldest first)
 * until the turn's deadline; one that reaches it goes to the back, so
 * the next turn starts with the others.
 */

struct job {
	struct xd_pager *p;
	struct xd_http_exchange *x;
	const struct xd_pager_page *page;
	void *st;
	struct xd_list link; /* in the pager's jobs */
};

struct xd_pager {
	uv_idle_t idle;
	struct xd_list jobs; /* oldest first */
	size_t njobs;
	struct xd_pager_stats stats;
};

static void job_end(struct job *j)
{
	xd_list_remove(&j->link);
	(void)XD_UNREF(j->p->njobs);
	if (j->p->njobs == 0)
		uv_idle_stop(&j->p->idle);
	j->page->done(j->st);
	free(j);
}

/* The client went away (or the endpoint stops): the page ends now. */
static void on_gone(struct xd_http_exchange *x)
{
	struct job *j = x->data;

	XD_ASSERT(j->x == x);
	job_end(j);
	xd_http_reply(x); /* goes nowhere: frees the exchange */
}

static void on_idle(uv_idle_t *h)
{
	struct xd_pager *p = h->data;
	uint64_t deadline = uv_hrtime() + XD_PAGER_SLICE_NS;
	/* each page present at the start of the turn steps once at least */
	size_t n = p->njobs;

	XD_ASSERT_LOOP();
	while (n-- > 0 && !xd_list_empty(&p->jobs)) {
		struct job *j = xd_container_of(p->jobs.next, struct job, link);
		struct xd_http_exchange *x = j->x;

		p->stats.slices++;
		if (j->page->step(j->st, x, deadline)) {
			p->stats.pages++;
			job_end(j);
			xd_http_reply(x);
			continue;
		}
		/* to the back: the others go first next time */
		xd_list_remove(&j->link);
		xd_list_push_back(&p->jobs, &j->link);
		if (uv_hrtime() >= deadline)
			break;
	}
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
	if (p->njobs++ == 0)
		uv_idle_start(&p->idle, on_idle);
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
