/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the fleet's rollout should do next, from its record and every
 * replica's report of its canaries merged (record.h): a pure function,
 * so that every replica decides alike and the rules are tested without
 * a daemon. Whoever finds a decision proposes it on the record
 * (rollout/fleet.h), which takes it once.
 *
 *   fail     more than max_nacks NACKs from canaries (naming the one
 *            past max_nacks, when it is kept); a canary past
 *            canary_timeout with on_canary_timeout: fail; or not proven
 *            `timeout` after the rollout started (the keys no canary
 *            ACKed, the canaries that have not answered)
 *   bake     (canary) every canary answered (those past canary_timeout
 *            left out, with on_canary_timeout: skip) and the change is
 *            proven as require_canary asks:
 *              per_key  every changed key has had a canary served its
 *                       candidate that ACKed it
 *              any      some changed key has
 *              none     no canary is needed
 *   promote  (baking) `bake` has passed since baking began, every
 *            canary answered, and it is proven
 *   wait     otherwise
 *
 * Thread: any (pure).
 */
#ifndef XD_ROLLOUT_DECIDE_H
#define XD_ROLLOUT_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "rollout/record.h"

enum xd_rollout_decision {
	XD_DECIDE_WAIT,
	XD_DECIDE_BAKE,
	XD_DECIDE_PROMOTE,
	XD_DECIDE_FAIL,
};

/* The decision for `rec` (under way) as of Unix ms `now_ms`, with
 * `fleet` the canaries of every replica on it; why in `why` (a
 * sentence for the log and the record's reason). */
enum xd_rollout_decision xd_rollout_decide(const struct xd_config *cfg,
					   const struct xd_rollout_record *rec,
					   const struct xd_rollout_report *fleet,
					   int64_t now_ms, char *why, size_t len);

/* The changed keys of `fleet` not proven as `require` asks, as
 * "'a', 'b'" in `out` (empty: none); their number. */
size_t xd_rollout_unproven(enum xd_require_canary require,
			   const struct xd_rollout_report *fleet, char *out,
			   size_t len);

#endif
