/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A token bucket: at most `rate` events a second on average, and
 * `burst` at once. Pure: the caller gives the time (ms, monotonic).
 *
 * Thread: any, one owner at a time.
 */
#ifndef XD_UTIL_BUCKET_H
#define XD_UTIL_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct xd_bucket {
	double tokens;
	uint64_t at_ms; /* when `tokens` was last brought up to date */
};

/* Full: `burst` events may come at once from `now_ms`. */
void xd_bucket_init(struct xd_bucket *b, uint64_t burst, uint64_t now_ms);

/* Whether one more event fits at `now_ms` (it is then counted). */
bool xd_bucket_take(struct xd_bucket *b, uint64_t rate, uint64_t burst,
		    uint64_t now_ms);

#endif
