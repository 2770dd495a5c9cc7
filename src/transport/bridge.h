/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bridge between gRPC's completion queue and the libuv loop.
 *
 * A few dedicated threads (io_threads, xdsd.yaml(5)) block in
 * grpc_completion_queue_next() on the one queue and hand each {tag, ok}
 * to the loop thread through a locked vector and one uv_async_send per
 * empty-to-non-empty transition; the loop then calls every tag's done().
 * Nothing polls: an idle daemon sleeps in epoll (the loop) and in gRPC's
 * poller (the queue's threads). The vector is unbounded on purpose: the
 * queue's threads are gRPC's only I/O pollers and must never wait on
 * the loop.
 *
 * Why several threads: gRPC core's Linux poller runs only inside
 * grpc_completion_queue_next, and it does all of gRPC's I/O work there,
 * TLS handshakes (the crypto) and socket reads and writes included. One
 * of the threads in `next` polls at a time; when it finds work it hands
 * the polling to another before running that work, so with N threads
 * the work of N connections can run on N cores at once. They run only
 * gRPC's code (and the log and certificate callbacks, which lock):
 * every tag still completes on the loop thread, which alone owns xdsd's
 * state (docs/engine.md).
 *
 * Why the threads past the first park: an idle connection still has
 * traffic that produces no completion (the keepalive ping's answer),
 * and with several threads in `next` each such read wakes two of them,
 * the poller and the one it hands the polling to: with 10,000 idle
 * streams, 413 wake-ups a second and 0.53% of a core on two threads
 * against 169 and 0.35% on one (bench/README.md, "Where the idle CPU
 * goes"). So the first
 * thread waits on the queue for good, and each other one, once the
 * queue gave it nothing for XD_BRIDGE_LINGER_MS, sleeps outside gRPC
 * until any thread gets an event: a burst of work (a crowd of clients
 * connecting, a change pushed to every stream) makes completions, and
 * every thread polls again within one of them.
 *
 * Ownership: the bridge owns the completion queue and its threads.
 * Thread: every function runs on the loop thread.
 */
#ifndef XD_TRANSPORT_BRIDGE_H
#define XD_TRANSPORT_BRIDGE_H

#include <grpc/grpc.h>
#include <stddef.h>
#include <uv.h>

struct xd_bridge;

/* Most threads a bridge runs (io_threads' upper bound). */
#define XD_BRIDGE_MAX_THREADS 64

/* How long a thread past the first waits on a quiet queue before it
 * parks. */
#define XD_BRIDGE_LINGER_MS 1000

/* Creates the completion queue and starts `nthreads` threads on it (1
 * to XD_BRIDGE_MAX_THREADS). Returns 0, or -1 with nothing left
 * running. */
int xd_bridge_start(struct xd_bridge **out, uv_loop_t *loop, size_t nthreads);

grpc_completion_queue *xd_bridge_cq(struct xd_bridge *b);

/*
 * Shuts the queue down. Events already under way are still delivered;
 * once every thread has seen gRPC report the queue empty and shut down,
 * the threads are joined, the queue destroyed, the bridge freed, and
 * then `done(arg)` runs on the loop thread. Call only when nothing will
 * start new operations.
 */
void xd_bridge_stop(struct xd_bridge *b, void (*done)(void *arg), void *arg);

#endif
