/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How long xdsd's loop works between two waits for events: an
 * LD_PRELOAD library for bench/admin-cost. It notes the epoll
 * descriptor libuv's first loop waits on (uv_loop_init, then
 * uv_backend_fd), and on that loop's thread times each stretch from one
 * return of epoll_wait (or epoll_pwait) on it to the next call: one turn
 * of the loop, every callback of the turn included, during which nothing
 * else is read, written or answered. Each stretch of at least
 * $XDSD_LOOP_STALL_MIN_US (1000 when unset) is appended to
 * $XDSD_LOOP_STALL_LOG as a line
 *
 *   <CLOCK_REALTIME ns at its end> <wall ns> <thread CPU ns>
 *
 * The CPU time is the loop thread's own: other processes on a busy
 * machine lengthen the wall time, never it. Other epoll descriptors
 * (libmicrohttpd's, gRPC's) are passed through untouched.
 *
 *   LD_PRELOAD=build/bench/loop-stall.so XDSD_LOOP_STALL_LOG=stalls xdsd ...
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <uv.h>

static int loop_fd = -1;
static FILE *out;
static uint64_t min_ns = 1000000;
static uint64_t last_wall, last_cpu; /* at the last return; 0: none */

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The real function behind `name`. */
static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (f == NULL) {
		fprintf(stderr, "loop-stall: no %s\n", name);
		abort();
	}
	return f;
}

int uv_loop_init(uv_loop_t *loop)
{
	int (*real)(uv_loop_t *) = (int (*)(uv_loop_t *))next("uv_loop_init");
	int rc = real(loop);
	const char *path = getenv("XDSD_LOOP_STALL_LOG");
	const char *min = getenv("XDSD_LOOP_STALL_MIN_US");

	if (rc != 0 || loop_fd >= 0 || path == NULL)
		return rc;
	out = fopen(path, "a");
	if (out == NULL) {
		perror(path);
		return rc;
	}
	setvbuf(out, NULL, _IOLBF, 0);
	if (min != NULL)
		min_ns = strtoull(min, NULL, 10) * 1000;
	loop_fd = uv_backend_fd(loop);
	return rc;
}

/* Before a wait on the loop's descriptor: the stretch since the last. */
static void before(int epfd)
{
	uint64_t wall, cpu;

	if (epfd != loop_fd || last_wall == 0)
		return;
	wall = now_ns(CLOCK_MONOTONIC);
	cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (wall - last_wall >= min_ns)
		fprintf(out, "%llu %llu %llu\n",
			(unsigned long long)now_ns(CLOCK_REALTIME),
			(unsigned long long)(wall - last_wall),
			(unsigned long long)(cpu - last_cpu));
}

static void after(int epfd)
{
	if (epfd != loop_fd)
		return;
	last_wall = now_ns(CLOCK_MONOTONIC);
	last_cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
}

int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);
	int rc;

	if (real == NULL)
		real = (int (*)(int, struct epoll_event *, int, int))next("epoll_wait");
	before(epfd);
	rc = real(epfd, ev, max, timeout);
	after(epfd);
	return rc;
}

int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
		const sigset_t *mask)
{
	static int (*real)(int, struct epoll_event *, int, int, const sigset_t *);
	int rc;

	if (real == NULL)
		real = (int (*)(int, struct epoll_event *, int, int,
				const sigset_t *))next("epoll_pwait");
	before(epfd);
	rc = real(epfd, ev, max, timeout, mask);
	after(epfd);
	return rc;
}
