/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Clocks in milliseconds. Monotonic time measures durations (it is what
 * libuv's uv_now counts, so the two compare); wall-clock time is what
 * operators read (status pages, "connected since").
 *
 * Thread: any.
 */
#ifndef XD_UTIL_CLOCK_H
#define XD_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t xd_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Milliseconds since the Unix epoch. */
static inline int64_t xd_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
