/* SPDX-License-Identifier: Apache-2.0 */
#include "util/trim.h"

#include <malloc.h>
#include <stdlib.h>

#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* From the first stream of a burst ending to the trim: the rest of the
 * burst (a fleet disconnecting) ends meanwhile, and is given back with
 * it. A trim takes a few milliseconds for a heap of 100 MB. */
#define QUIET_MS 2000

struct xd_trim {
	uv_timer_t timer;
};

static unsigned long long trims;

static void on_timer(uv_timer_t *h)
{
	XD_ASSERT_LOOP();
	(void)h;
	malloc_trim(0);
	trims++;
	xd_debug("heap trimmed after streams ended");
}

struct xd_trim *xd_trim_new(uv_loop_t *loop)
{
	struct xd_trim *t = xd_calloc(1, sizeof(*t));

	XD_ASSERT_LOOP();
	uv_timer_init(loop, &t->timer);
	return t;
}

void xd_trim_soon(struct xd_trim *t)
{
	XD_ASSERT_LOOP();
	if (t == NULL || uv_is_active((uv_handle_t *)&t->timer))
		return;
	uv_timer_start(&t->timer, on_timer, QUIET_MS, 0);
}

static void closed(uv_handle_t *h)
{
	free(xd_container_of((uv_timer_t *)h, struct xd_trim, timer));
}

void xd_trim_free(struct xd_trim *t)
{
	XD_ASSERT_LOOP();
	if (t != NULL)
		uv_close((uv_handle_t *)&t->timer, closed);
}

unsigned long long xd_trims(void)
{
	return trims;
}
