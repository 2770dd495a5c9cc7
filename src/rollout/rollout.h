/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Staged rollout of reloads (`rollout:` in xdsd.yaml, xdsd.yaml(5)),
 * one rollout for the whole fleet of replicas.
 *
 * With it, the reloader hands every good set of snapshots here rather
 * than to the cache (xd_rollout_install). A set that changes something
 * is staged (cache.h: served to canary streams only, protocol/client.h
 * says who is one); every other node keeps the stable set, content and
 * versions as they were.
 *
 * The rollout is the fleet's, not this replica's: its record (which
 * change, its state, its outcome) and every replica's report of its
 * canaries are kept where every replica sees them (fleet.h: etcd with
 * `source: etcd`, state_dir with `source: files`), and this replica
 * only ever serves what the record says:
 *
 *   - a change (the set's fingerprint, record.h) the record does not
 *     know starts a rollout: this replica proposes a record for it
 *     (its id the etcd revision the change was read at; files: the
 *     next number), staged for its canaries meanwhile; of replicas
 *     that propose at once, one record wins and the others adopt it;
 *   - a change the record knows is served as it says: staged for the
 *     canaries while under way, to everyone once promoted, to nobody
 *     once failed or aborted (its revision is not served again until a
 *     newer change: after a restart too, the record being read first);
 *   - a change back to the set the record's promotion replaced is a
 *     rollback: promoted at once (so is one `xdsctl push --now` wrote
 *     a promoted record for).
 *
 * Every replica reports what its canaries did; each one that finds a
 * decision in the merged reports (decide.h: bake, promote, fail)
 * proposes it on the record, which takes it once, and every replica
 * acts when the record says so:
 *
 *   canary    waiting until every canary (of every replica) answered
 *             the change and it is proven (rollout.require_canary)
 *   baking    `bake` must pass with at most `max_nacks` NACKs from
 *             canaries and every canary answered; then promoted
 *   promoted  the candidate became the stable set: everyone has it
 *   failed    more than `max_nacks` NACKs, a canary past
 *             canary_timeout with on_canary_timeout: fail, or not
 *             proven within `timeout`: rolled back, canaries are served
 *             the stable set again; the change is not served until a
 *             newer one
 *   aborted   rolled back by an operator, or replaced by a reload that
 *             changes nothing
 *
 * idle (before any rollout), promoted, failed and aborted are at rest:
 * a change starts a rollout from any state, and one during a rollout
 * replaces it. A replica cut from the record (etcd lost) decides
 * nothing: it keeps its canaries on the change and everyone else on
 * the stable set until it hears the record again.
 *
 * Only canaries served the candidate of a key the rollout changes
 * count, per key (record.h, the report's keys): a canary whose
 * snapshot the change leaves alone proves nothing. A canary that has
 * not answered within canary_timeout is named (log, status, report)
 * and left out or fails the rollout (on_canary_timeout). Changed keys
 * no canary of any replica serves are named as the rollout starts.
 *
 * Whoever keeps the last good state hears when a rollout comes to rest
 * (xd_rollout_on_rest): only a promoted change is saved.
 *
 * Ownership: the rollout borrows the loop, configuration, cache and
 * sessions and fleet (all must outlive it), owns its timers and its
 * records. It alone moves its state and stages,
 * promotes or drops the cache's candidate set. Thread: loop thread
 * only (checked).
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
#include "reload/reload.h"
#include "rollout/fleet.h"
#include "rollout/record.h"

/* How often a rollout under way looks at what time decides: the bake
 * over, a canary past canary_timeout, the rollout past its timeout.
 * Its canaries' answers reach it as the engine's events as they come
 * (protocol/session.h, xd_sessions_on_event; kept in canaries.h), a
 * NACK decided at once: the tick never looks at the streams. */
#define XD_ROLLOUT_TICK_MS 1000
/* How often the nodes of each key are counted for the other replicas
 * (with `source: etcd`). */
#define XD_ROLLOUT_NODES_MS 2000

/* The rollout under way, or the last one: what operators see. */
struct xd_rollout_status {
	enum xd_rollout_state state;
	uint64_t id;          /* the record's; 0: none yet */
	char *trigger;        /* of the reload that started it here */
	int64_t started_ms;   /* Unix ms, the record's */
	int64_t baking_ms;    /* Unix ms baking began, 0: not yet */
	int64_t ended_ms;     /* Unix ms it came to rest, 0: under way */
	size_t keys;          /* snapshot keys it changes */
	/* every replica's canaries together, and this one's */
	size_t canaries, answered;
	uint64_t nacks;
	struct xd_rollout_report fleet, local;
	size_t replicas;      /* reporting on it, this one included */
	char candidate[XD_ROLLOUT_PRINT_LEN + 1];
	char stable[XD_ROLLOUT_PRINT_LEN + 1];
	bool now, rollback;   /* promoted without a bake, and why */
	bool held;            /* this change is refused: not staged */
	bool waiting_fleet;   /* its record not (yet) written: decides
			       * nothing */
	char reason[XD_ROLLOUT_TEXT_MAX + 256]; /* why it came to rest */
	char by[XD_ROLLOUT_TEXT_MAX];           /* who decided last */
	/* the configuration, for the status */
	uint64_t bake_ms, max_nacks, timeout_ms, canary_timeout_ms;
	int require_canary, on_canary_timeout;
};

struct xd_rollout;

/* `fleet` is borrowed: it must outlive the rollout. */
struct xd_rollout *xd_rollout_new(uv_loop_t *loop,
				  const struct xd_config *cfg,
				  struct xd_cache *cache,
				  struct xd_sessions *sessions,
				  struct xd_fleet *fleet);

/* The reloader's installer (reload.h, xd_reloader_set_install), its
 * argument the rollout. */
extern const struct xd_reload_installer xd_rollout_installer;

/*
 * An operator's promote or abort of the fleet's rollout under way,
 * whichever replica it is asked of: -1 with why not in `why` (none
 * under way), or 0, and `done(arg, ok, why)` once the record took it
 * (ok) or not. `who` names them in the log and the record.
 */
typedef void (*xd_rollout_done_fn)(void *arg, bool ok, const char *why);
int xd_rollout_promote(struct xd_rollout *ro, const char *who,
		       xd_rollout_done_fn done, void *arg, char *why,
		       size_t len);
int xd_rollout_abort(struct xd_rollout *ro, const char *who,
		     xd_rollout_done_fn done, void *arg, char *why, size_t len);

/* Called as a rollout comes to rest here: `promoted`, or failed or
 * aborted (a rollout replaced by a newer one does not come to rest). */
typedef void (*xd_rollout_rest_fn)(void *arg, bool promoted);

void xd_rollout_on_rest(struct xd_rollout *ro, xd_rollout_rest_fn fn,
			void *arg);

const struct xd_rollout_status *xd_rollout_status(const struct xd_rollout *ro);

/* The fleet it shares its rollout with. */
struct xd_fleet *xd_rollout_fleet(const struct xd_rollout *ro);

/* Whether a rollout is under way (canary or baking). */
bool xd_rollout_active(const struct xd_rollout *ro);

/* The canaries connected to any replica that snapshot key `key` serves
 * (its own nodes; for the default, those of node keys without a
 * snapshot of their own), this replica's counted now, the others' as
 * they last reported (a dry run's warning). */
size_t xd_rollout_canaries_of(struct xd_rollout *ro, const char *key);

/* Stops its timers (xdsd stopping); the rollout goes once the loop ran
 * its close: no free of its own. NULL: nothing. */
void xd_rollout_stop(struct xd_rollout *ro);

#endif
