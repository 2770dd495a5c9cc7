/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loop thread's contract, checked. Most of xdsd's state is owned by
 * the one thread that runs the libuv loop (docs/engine.md): headers say
 * "loop thread only", and XD_ASSERT_LOOP() at such an entry point makes
 * that a checked contract rather than a comment. It is always compiled
 * in: a thread-local flag read and a compare.
 *
 * The loop thread is whichever thread calls xd_loop_thread_claim() first
 * (the daemon does it before it starts its loop; a test's main thread
 * claims it on its first call into the engine). A later call from
 * another thread is a programmer's error and aborts, naming the
 * function.
 *
 * Thread: any (that is the point).
 */
#ifndef XD_UTIL_LOOP_THREAD_H
#define XD_UTIL_LOOP_THREAD_H

#include <stdbool.h>

#include "util/xalloc.h"

extern __thread bool xd_on_loop_thread;

/* Makes the calling thread the loop thread, if none is yet; returns
 * whether the calling thread is it. */
bool xd_loop_thread_claim(void);

#define XD_ASSERT_LOOP()                                            \
	do {                                                        \
		if (__builtin_expect(!xd_on_loop_thread, 0) &&      \
		    !xd_loop_thread_claim())                        \
			xd_panicf(__FILE__, __LINE__,               \
				  "called off the loop thread", "%s", \
				  __func__);                        \
	} while (0)

#endif
