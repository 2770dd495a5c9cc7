/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who is a canary, and this replica's canary streams as the rollout
 * knows them.
 *
 * The rule (xd_canary_rule, the sessions' canary rule, session.h): a
 * node is a canary when a `rollout.canary` glob matches its id (a
 * "cluster:GLOB" one its cluster), or a stable hash of its id falls
 * within `rollout.percent` of 100 buckets. The hash is of the id alone,
 * so a node stays a canary (or not) across its streams, restarts of
 * xdsd and reloads, and about that share of every snapshot's nodes is
 * picked.
 *
 * The streams: kept from
 * the engine's events (protocol/session.h, xd_sessions_on_event), one
 * entry per canary stream, from its admission to its end, each with
 * what its last event said of it (the snapshot it is served, whether a
 * type waits for its answer or was refused, since when it waits). The
 * rollout counts its verdicts over these (rollout.c) and never looks at
 * the streams: a canary that goes away leaves with its GONE event.
 *
 * Ownership: the rollout owns it; each entry holds a reference to the
 * snapshot it says is served. Thread: loop thread only.
 */
#ifndef XD_ROLLOUT_CANARIES_H
#define XD_ROLLOUT_CANARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "protocol/client.h"
#include "protocol/session.h"
#include "snapshot/snapshot.h"

struct xd_canary {
	uint64_t stream_id;
	char *node_id, *key, *peer;
	struct xd_snapshot *serving; /* the cache's snapshot (a base), or
				      * NULL before one */
	size_t ntypes;               /* types it asked for */
	bool pending;                /* one waits for its answer */
	bool nacked;                 /* one was refused */
	bool waits;                  /* a response is in flight */
	uint64_t pending_since;      /* monotonic ms: the oldest one's
				      * send, when it waits */
};

struct xd_canaries {
	struct xd_canary *v; /* by stream id */
	size_t n, cap;
};

/* Whether `c`, being admitted, is a canary under `cfg` (a const struct
 * xd_config: the rollout's configuration). */
bool xd_canary_rule(void *cfg, const struct xd_client *c);

/* What `ev` says of its stream: added (ADMITTED), updated, or removed
 * (GONE). */
void xd_canaries_note(struct xd_canaries *c, const struct xd_sessions_event *ev);

/* Every entry gone (the rollout stopping). */
void xd_canaries_clear(struct xd_canaries *c);

/* How long `k` has waited for an answer as of `now_mono` (ms; 0: it
 * waits for none). */
uint64_t xd_canary_waited(const struct xd_canary *k, uint64_t now_mono);

#endif
