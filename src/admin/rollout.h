/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The staged rollout (rollout/rollout.h) as operators see it: the
 * object POST /rollout/promote and /rollout/abort answer and
 * /status.json's "rollout" holds, written by one function so that
 * xdsctl reads the same object from all three.
 *
 *   {"configured": true,                  (false, and nothing else,
 *                                          without `rollout:`)
 *    "state": "canary",                    (idle, canary, baking,
 *                                          promoted, failed, aborted)
 *    "id": 3,                              (0: none since start)
 *    "trigger": "SIGHUP", "keys": 2,       (its reload; keys changed)
 *    "started": "<RFC 3339 UTC>", "baking_since": null, "ended": null,
 *    "bake_seconds": 60, "bake_left_seconds": 12.5 (while baking),
 *    "timeout_seconds": 600,               (a canary silent that long
 *                                          fails it; 0: never)
 *    "canaries": 4, "answered": 3,         (connected; answered)
 *    "nacks": 1, "max_nacks": 0,
 *    "reason": "",                         (why it came to rest)
 *    "changes": [ {"key": "default", "version": "<16 hex>",
 *       "previous_version": "<16 hex>"} ], (while under way: each key
 *                                          it changes; null where a
 *                                          key is added or removed)
 *    "nack_list": [ {"node_id": "...", "node_cluster": "...",
 *       "type": "CDS", "version": "<16 hex>", "message": "...",
 *       "at": "<RFC 3339 UTC>"} ]}         (the first XD_ROLLOUT_NACKS_KEPT)
 *
 * Thread: loop thread (the rollout's status is its own).
 */
#ifndef XD_ADMIN_ROLLOUT_H
#define XD_ADMIN_ROLLOUT_H

#include "rollout/rollout.h"
#include "util/jsonw.h"

/* `ro` NULL: not configured. `cache` holds the staged set. */
void xd_rollout_json(struct xd_jw *w, const struct xd_rollout *ro,
		     const struct xd_cache *cache);

#endif
