/* SPDX-License-Identifier: Apache-2.0 */
#include "util/debounce.h"

#include "util/common.h"
#include "util/loop_thread.h"

static void on_timer(uv_timer_t *t)
{
	struct xd_debounce *d = xd_container_of(t, struct xd_debounce, timer);

	d->waiting = false;
	d->fn(d);
}

void xd_debounce_init(struct xd_debounce *d, uv_loop_t *loop,
		      uint64_t delay_ms, uint64_t max_ms, xd_debounce_fn fn,
		      void *data)
{
	uv_timer_init(loop, &d->timer);
	d->timer.data = data;
	d->delay_ms = delay_ms;
	d->max_ms = max_ms < delay_ms ? delay_ms : max_ms;
	d->waiting = false;
	d->first_ms = 0;
	d->fn = fn;
	d->data = data;
}

void xd_debounce_change(struct xd_debounce *d)
{
	uint64_t now = uv_now(d->timer.loop), due;

	XD_ASSERT_LOOP();
	if (!d->waiting) {
		d->waiting = true;
		d->first_ms = now;
	}
	due = now + d->delay_ms;
	if (due > d->first_ms + d->max_ms)
		due = d->first_ms + d->max_ms;
	uv_timer_start(&d->timer, on_timer, due > now ? due - now : 0, 0);
}

void xd_debounce_close(struct xd_debounce *d, uv_close_cb cb)
{
	uv_close((uv_handle_t *)&d->timer, cb);
}
