/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One run of a real Envoy, the operator's (`--envoy PATH`): its verdict
 * on a bootstrap, `envoy --mode validate -c FILE`, which builds every
 * listener, cluster, route and secret the file holds as Envoy would
 * serve them, and exits 0 or 1, without serving: it binds no port and
 * connects nowhere.
 *
 * Each run gets a directory of its own (mkdtemp under $TMPDIR, else
 * /tmp, mode 0700) holding the bootstrap (mode 0600: a snapshot's
 * secrets may hold private keys), removed when the run is over. Envoy
 * is started with --disable-hot-restart (no shared memory, so any
 * number of runs side by side), one worker and its log at error level,
 * stdin from /dev/null; what it writes is read through a pipe, at most
 * XD_ENVOY_OUTPUT_MAX bytes kept (the last ones: its verdict comes
 * last). A run that takes longer than XD_ENVOY_RUN_SECONDS is killed
 * (SIGKILL to its pid) and counted as one that could not be made.
 *
 * PATH is run as given; a name without a slash is looked up in $PATH.
 *
 * Thread: any; blocking (it waits for the process). Nothing is kept
 * between calls.
 */
#ifndef XD_ENVOY_RUN_H
#define XD_ENVOY_RUN_H

#include <stddef.h>

/* One run's bound: validate mode on a snapshot of tens of thousands of
 * resources takes seconds; minutes is an Envoy that hangs. */
#define XD_ENVOY_RUN_SECONDS 120
/* Envoy's output kept from one run. */
#define XD_ENVOY_OUTPUT_MAX (64 * 1024)

enum xd_envoy_verdict {
	XD_ENVOY_ACCEPTED, /* exit status 0 */
	XD_ENVOY_REFUSED,  /* it said what it refuses (or died of a signal
			      on the bootstrap) */
	XD_ENVOY_FAILED,   /* no verdict: it could not be started, timed
			      out, or exited without saying why */
};

/*
 * Envoy's verdict on the bootstrap `text` (`len` bytes of JSON). With
 * XD_ENVOY_REFUSED, `msg` holds Envoy's message (what follows "error
 * initializing configuration 'FILE': ", on one line); with
 * XD_ENVOY_FAILED, why there is no verdict.
 */
enum xd_envoy_verdict xd_envoy_validate(const char *envoy, const char *text,
					size_t len, char *msg, size_t msglen);

/*
 * `envoy --version`: its release ("1.40.0") in `ver`; 0, or -1 with why
 * in `ver` (it cannot be run, or it is no Envoy).
 */
int xd_envoy_version(const char *envoy, char *ver, size_t len);

#endif
