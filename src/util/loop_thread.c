/* SPDX-License-Identifier: Apache-2.0 */
#include "util/loop_thread.h"

#include <pthread.h>
#include <stdatomic.h>

__thread bool xd_on_loop_thread;

/* Set once, by the first claimant; the flag above then spares the
 * loop thread every later compare. */
static atomic_flag claimed = ATOMIC_FLAG_INIT;

bool xd_loop_thread_claim(void)
{
	if (xd_on_loop_thread)
		return true;
	if (atomic_flag_test_and_set(&claimed))
		return false;
	xd_on_loop_thread = true;
	return true;
}
