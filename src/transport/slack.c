/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/slack.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "util/log.h"
#include "util/loop_thread.h"

void xd_slack_for_grpc_begin(uint64_t slack_ms)
{
	XD_ASSERT_LOOP();
	if (slack_ms == 0)
		return;
	/* Only costs wake-ups if refused: said, and nothing else changes. */
	if (prctl(PR_SET_TIMERSLACK, (unsigned long)(slack_ms * 1000 * 1000),
		  0, 0, 0) != 0)
		xd_info("gRPC's threads keep the default timer slack: %s",
			strerror(errno));
}

void xd_slack_for_grpc_end(void)
{
	XD_ASSERT_LOOP();
	/* 0: the value this thread started with */
	(void)prctl(PR_SET_TIMERSLACK, 0, 0, 0, 0);
}
