/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reload put off while changes keep coming (the snapshot directory's
 * watch, the etcd source): it fires `delay_ms` after the last change,
 * but never later than `max_ms` after the first change it has not fired
 * for yet, so that changes that never stop (a file rewritten every
 * 200 ms, a key put as often) delay a reload by max_ms at most, never
 * for ever.
 *
 * Ownership: embedded in its owner, whose timer it is: close it with
 * xd_debounce_close and free the owner only in the close callback,
 * whose handle's data is the owner's `data`. Thread: the loop thread.
 */
#ifndef XD_UTIL_DEBOUNCE_H
#define XD_UTIL_DEBOUNCE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct xd_debounce;

typedef void (*xd_debounce_fn)(struct xd_debounce *d);

struct xd_debounce {
	uv_timer_t timer;
	uint64_t delay_ms, max_ms;
	uint64_t first_ms; /* loop time of the first change waiting */
	bool waiting;      /* a change has come since the last firing */
	xd_debounce_fn fn;
	void *data;        /* the owner's */
};

/* max_ms below delay_ms is taken as delay_ms. */
void xd_debounce_init(struct xd_debounce *d, uv_loop_t *loop,
		      uint64_t delay_ms, uint64_t max_ms, xd_debounce_fn fn,
		      void *data);

/* A change: fn runs delay_ms from now, or max_ms after the first
 * change waiting, whichever is sooner. */
void xd_debounce_change(struct xd_debounce *d);

void xd_debounce_close(struct xd_debounce *d, uv_close_cb cb);

#endif
