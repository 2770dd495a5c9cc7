/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Staged rollout of reloads (`rollout:` in xdsd.yaml, xdsd.yaml(5)).
 *
 * With it, the reloader hands every good set of snapshots here rather
 * than to the cache (xd_rollout_install). A set that changes something
 * is staged (cache.h: served to canary streams only, protocol/client.h
 * says who is one); every other node keeps the stable set, content and
 * versions as they were. Then:
 *
 *   canary    waiting until every connected canary has answered what
 *             it is now served (protocol/session.h,
 *             xd_sessions_canaries; looked at every XD_ROLLOUT_TICK_MS)
 *   baking    every canary answered: `bake` must pass with at most
 *             `max_nacks` NACKs from canaries; then, once every canary
 *             connected then has answered too, promoted
 *   promoted  the candidate became the stable set: everyone has it
 *   failed    more than `max_nacks` NACKs, or a connected canary
 *             that has not answered for `timeout` (since the rollout
 *             started, or since every canary had answered): rolled
 *             back, canaries are served the stable set again; the
 *             change is not served until the next reload
 *   aborted   rolled back by an operator, or replaced by a reload that
 *             changes nothing
 *
 * idle (before any rollout), promoted, failed and aborted are at rest:
 * a reload that changes something starts a rollout from any state, and
 * one during a rollout replaces it (its canaries get the newest set; a
 * reload that changes nothing it staged lets it go on). An operator
 * may promote or abort a rollout under way (admin: POST
 * /rollout/promote, /rollout/abort).
 *
 * Only NACKs from canaries served the candidate of a key the rollout
 * changes count: a canary whose snapshot it leaves alone proves nothing.
 * A NACKed type counts as answered, so that NACKs within max_nacks do
 * not hold the rollout up. With no canary connected, nothing holds it
 * either: it bakes and is promoted, unproven (and the log warns of it,
 * as the bake starts and at the promotion): a canary that connects
 * while it bakes is waited for, an operator may abort it.
 *
 * Whoever keeps the last good state hears when a rollout comes to rest
 * (xd_rollout_on_rest): only a promoted change is saved.
 *
 * Ownership: the rollout borrows the loop, configuration, cache and
 * sessions (all must outlive it) and owns its timer and its records.
 * It alone moves its state and stages, promotes or drops the cache's
 * candidate set. Thread: loop thread only (checked).
 */
#ifndef XD_ROLLOUT_ROLLOUT_H
#define XD_ROLLOUT_ROLLOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cache/cache.h"
#include "config/config.h"
#include "protocol/session.h"

/* How often a rollout under way looks at its canaries. */
#define XD_ROLLOUT_TICK_MS 100
/* NACKs of one rollout kept for operators (all are counted). */
#define XD_ROLLOUT_NACKS_KEPT 10
/* Bytes of a NACK's message kept. */
#define XD_ROLLOUT_MESSAGE_MAX 1024

enum xd_rollout_state {
	XD_ROLLOUT_IDLE,
	XD_ROLLOUT_CANARY,
	XD_ROLLOUT_BAKING,
	XD_ROLLOUT_PROMOTED,
	XD_ROLLOUT_FAILED,
	XD_ROLLOUT_ABORTED,
};
#define XD_ROLLOUT_STATES 6

struct xd_rollout_nack {
	char *node_id, *node_cluster;
	char *type, *version;
	char *message; /* clipped to XD_ROLLOUT_MESSAGE_MAX */
	int64_t at_ms; /* Unix ms */
};

/* The rollout under way, or the last one: what operators see. */
struct xd_rollout_status {
	enum xd_rollout_state state;
	uint64_t id;          /* 1, 2, ... since start; 0: none yet */
	const char *trigger;  /* of the reload that started it */
	int64_t started_ms;   /* Unix ms */
	int64_t baking_ms;    /* Unix ms baking began, 0: not yet */
	int64_t ended_ms;     /* Unix ms it came to rest, 0: under way */
	size_t keys;          /* snapshot keys it changes */
	size_t canaries;      /* connected canaries, last looked at */
	size_t answered;      /* of them, answered what they are served */
	uint64_t nacks;       /* NACKs from its canaries */
	struct xd_rollout_nack kept[XD_ROLLOUT_NACKS_KEPT];
	size_t nkept;
	char reason[256];     /* why it came to rest ("" under way) */
	/* the configuration, for the status */
	uint64_t bake_ms, max_nacks, timeout_ms;
};

struct xd_rollout;

struct xd_rollout *xd_rollout_new(uv_loop_t *loop,
				  const struct xd_config *cfg,
				  struct xd_cache *cache,
				  struct xd_sessions *sessions);

/*
 * The reloader's installer (reload.h, xd_reloader_set_install): stages
 * `snaps` (taken over) as described above. Returns the number of keys
 * the set changes from the stable one.
 */
size_t xd_rollout_install(void *rollout, struct xd_snapshot **snaps,
			  size_t n, const char *trigger);

/* An operator's promote or abort, `who` naming them in the log: 0, or
 * -1 with why not in `why` (no rollout under way). */
int xd_rollout_promote(struct xd_rollout *ro, const char *who, char *why,
		       size_t len);
int xd_rollout_abort(struct xd_rollout *ro, const char *who, char *why,
		     size_t len);

/* Called as a rollout comes to rest: `promoted`, or failed or aborted
 * (a rollout replaced by a newer one does not come to rest). */
typedef void (*xd_rollout_rest_fn)(void *arg, bool promoted);

void xd_rollout_on_rest(struct xd_rollout *ro, xd_rollout_rest_fn fn,
			void *arg);

const struct xd_rollout_status *xd_rollout_status(const struct xd_rollout *ro);

/* "idle", "canary", "baking", "promoted", "failed", "aborted". */
const char *xd_rollout_state_name(enum xd_rollout_state s);

/* Whether a rollout is under way (canary or baking). */
bool xd_rollout_active(const struct xd_rollout *ro);

/* Stops its timer (xdsd stopping); the rollout goes once the loop ran
 * its close: no free of its own. NULL: nothing. */
void xd_rollout_stop(struct xd_rollout *ro);

#endif
