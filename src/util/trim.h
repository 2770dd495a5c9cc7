/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Giving freed heap memory back to the system once streams have gone.
 *
 * glibc keeps the pages of freed blocks in the heap of the thread that
 * allocated them, and returns them only when the top of a heap is free
 * (or at malloc_trim). gRPC allocates a connection's buffers on its own
 * I/O threads, so after a flood of clients that came and went the
 * pages stayed: 3,000 clients configured and gone left xdsd at 111 MB
 * instead of 18 (bench/README.md, "Memory after a connection flood").
 * A trim a little after streams end (at most one per QUIET period, so
 * a churn of clients costs one trim a period, not one per stream) gives
 * them back.
 *
 * Ownership: the caller owns the trimmer; xd_trim_free closes its timer
 * and frees it once the loop has closed it.
 * Thread: loop thread only.
 */
#ifndef XD_UTIL_TRIM_H
#define XD_UTIL_TRIM_H

#include <uv.h>

struct xd_trim;

struct xd_trim *xd_trim_new(uv_loop_t *loop);

/* Something sizeable was freed (a stream ended): trim soon. NULL (a
 * server stopping): nothing. */
void xd_trim_soon(struct xd_trim *t);

/* A trim still due is dropped. NULL is fine. */
void xd_trim_free(struct xd_trim *t);

/* Trims done since start (for tests and the status page). */
unsigned long long xd_trims(void);

#endif
