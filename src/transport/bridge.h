/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bridge between gRPC's completion queue and the libuv loop.
 *
 * A dedicated thread blocks in grpc_completion_queue_next() and hands
 * each {tag, ok} to the loop thread through a locked vector and one
 * uv_async_send per empty-to-non-empty transition; the loop then calls
 * every tag's done(). Nothing polls: an idle daemon sleeps in epoll (the
 * loop) and in gRPC's poller (the cq thread). The vector is unbounded on
 * purpose: the cq thread is gRPC's only I/O poller and must never wait
 * on the loop.
 *
 * Ownership: the bridge owns the completion queue. Thread: every
 * function runs on the loop thread.
 */
#ifndef XD_TRANSPORT_BRIDGE_H
#define XD_TRANSPORT_BRIDGE_H

#include <grpc/grpc.h>
#include <uv.h>

struct xd_bridge;

/* Creates the completion queue and starts its thread. Returns 0 or -1. */
int xd_bridge_start(struct xd_bridge **out, uv_loop_t *loop);

grpc_completion_queue *xd_bridge_cq(struct xd_bridge *b);

/*
 * Shuts the queue down. Events already under way are still delivered;
 * once gRPC reports the queue empty and shut down, the thread is joined,
 * the queue destroyed, the bridge freed, and then `done(arg)` runs on the
 * loop thread. Call only when nothing will start new operations.
 */
void xd_bridge_stop(struct xd_bridge *b, void (*done)(void *arg), void *arg);

#endif
