/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/early_signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t seen_hup, seen_usr1;

static void record(int signum)
{
	if (signum == SIGHUP)
		seen_hup = 1;
	else
		seen_usr1 = 1;
}

void xd_early_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = record;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

bool xd_early_signal_take(int signum)
{
	volatile sig_atomic_t *flag = signum == SIGHUP ? &seen_hup : &seen_usr1;
	bool was = *flag != 0;

	*flag = 0;
	return was;
}
