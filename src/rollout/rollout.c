/* SPDX-License-Identifier: Apache-2.0 */
#include "rollout/rollout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/client.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct xd_rollout {
	uv_loop_t *loop;
	const struct xd_config *cfg;
	struct xd_cache *cache;
	struct xd_sessions *sessions;
	uv_timer_t timer; /* ticks while a rollout is under way */
	uint64_t bake_until; /* loop ms the bake ends, while baking */
	bool waiting_logged; /* "bake over, waiting for canaries" said */
	/* Some connected canary has not answered since this loop ms
	 * (`waiting`): rollout.timeout bounds it. */
	bool waiting;
	uint64_t waiting_since;
	xd_rollout_rest_fn on_rest;
	void *on_rest_arg;
	struct xd_rollout_status st;
};

static const char *const state_names[XD_ROLLOUT_STATES] = {
	[XD_ROLLOUT_IDLE] = "idle",         [XD_ROLLOUT_CANARY] = "canary",
	[XD_ROLLOUT_BAKING] = "baking",     [XD_ROLLOUT_PROMOTED] = "promoted",
	[XD_ROLLOUT_FAILED] = "failed",     [XD_ROLLOUT_ABORTED] = "aborted",
};

const char *xd_rollout_state_name(enum xd_rollout_state s)
{
	XD_ASSERT((unsigned)s < XD_ROLLOUT_STATES);
	return state_names[s];
}

static bool active(enum xd_rollout_state s)
{
	return s == XD_ROLLOUT_CANARY || s == XD_ROLLOUT_BAKING;
}

bool xd_rollout_active(const struct xd_rollout *ro)
{
	XD_ASSERT_LOOP();
	return active(ro->st.state);
}

/* The one place the state changes: only the moves the header lists
 * (a new rollout starts from any state: start()). */
static void move(struct xd_rollout *ro, enum xd_rollout_state to,
		 const char *why)
{
	static const bool allowed[XD_ROLLOUT_STATES][XD_ROLLOUT_STATES] = {
		[XD_ROLLOUT_CANARY] = {[XD_ROLLOUT_BAKING] = true,
				       [XD_ROLLOUT_PROMOTED] = true,
				       [XD_ROLLOUT_FAILED] = true,
				       [XD_ROLLOUT_ABORTED] = true},
		[XD_ROLLOUT_BAKING] = {[XD_ROLLOUT_PROMOTED] = true,
				       [XD_ROLLOUT_FAILED] = true,
				       [XD_ROLLOUT_ABORTED] = true},
	};

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(allowed[ro->st.state][to], "rollout %llu: %s -> %s (%s)",
		       (unsigned long long)ro->st.id,
		       state_names[ro->st.state], state_names[to], why);
	ro->st.state = to;
	if (!active(to)) {
		ro->st.ended_ms = xd_wall_ms();
		snprintf(ro->st.reason, sizeof(ro->st.reason), "%s", why);
		uv_timer_stop(&ro->timer);
		if (ro->on_rest != NULL)
			ro->on_rest(ro->on_rest_arg, to == XD_ROLLOUT_PROMOTED);
	}
}

static void clear_nacks(struct xd_rollout_status *st)
{
	for (size_t i = 0; i < st->nkept; i++) {
		free(st->kept[i].node_id);
		free(st->kept[i].node_cluster);
		free(st->kept[i].type);
		free(st->kept[i].version);
		free(st->kept[i].message);
	}
	memset(st->kept, 0, sizeof(st->kept));
	st->nkept = 0;
	st->nacks = 0;
}

/* ---------------- ending ---------------- */

static void promote_now(struct xd_rollout *ro, const char *why)
{
	size_t changed = xd_cache_promote(ro->cache);

	move(ro, XD_ROLLOUT_PROMOTED, why);
	xd_log(ro->st.canaries == 0 ? XD_LOG_WARN : XD_LOG_INFO,
	       "rollout %llu promoted (%s): every node is served the change now (%zu snapshot key%s)%s",
	       (unsigned long long)ro->st.id, why, changed,
	       changed == 1 ? "" : "s",
	       ro->st.canaries == 0 ? "; no canary proved it" : "");
}

/* Canaries are served the stable set again; the candidate is gone. */
static void roll_back(struct xd_rollout *ro, enum xd_rollout_state to,
		      const char *why)
{
	xd_cache_unstage(ro->cache);
	move(ro, to, why);
	if (to == XD_ROLLOUT_FAILED)
		xd_error("rollout %llu failed: %s; rolled back: canaries are served the previous snapshots again, and the change is not served until the next reload",
			 (unsigned long long)ro->st.id, why);
	else
		xd_warn("rollout %llu aborted (%s); rolled back: canaries are served the previous snapshots again",
			(unsigned long long)ro->st.id, why);
}

/* ---------------- the tick ---------------- */

/*
 * Some connected canary has not answered (`node`, the oldest): once
 * none has for rollout.timeout on end (since the rollout started, or
 * since they had all answered), the rollout fails, naming it. A canary
 * that never answers (stuck, or ignoring the change) would otherwise
 * hold the change back for ever without anyone hearing of it.
 */
static bool timed_out(struct xd_rollout *ro, const char *node)
{
	struct xd_rollout_status *st = &ro->st;
	uint64_t now = uv_now(ro->loop), limit = ro->cfg->rollout.timeout_ms;
	char why[512];

	if (!ro->waiting) {
		ro->waiting = true;
		ro->waiting_since = now;
	}
	if (limit == 0 || now - ro->waiting_since < limit)
		return false;
	snprintf(why, sizeof(why),
		 "canary node '%.*s' did not answer within the timeout of %llu ms (%zu of %zu connected canaries answered)",
		 XD_LOG_CLIP(strlen(node != NULL ? node : "?")),
		 node != NULL ? node : "?", (unsigned long long)limit,
		 st->answered, st->canaries);
	roll_back(ro, XD_ROLLOUT_FAILED, why);
	return true;
}

static void on_tick(uv_timer_t *h)
{
	struct xd_rollout *ro = h->data;
	struct xd_rollout_status *st = &ro->st;
	const char *waiting;
	char why[128];

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(active(st->state), "rollout %llu ticks while %s",
		       (unsigned long long)st->id, state_names[st->state]);
	waiting = xd_sessions_canaries(ro->sessions, &st->canaries,
				       &st->answered);
	if (st->answered < st->canaries) {
		if (timed_out(ro, waiting))
			return;
		if (st->state == XD_ROLLOUT_BAKING &&
		    uv_now(ro->loop) >= ro->bake_until && !ro->waiting_logged) {
			ro->waiting_logged = true;
			xd_info("rollout %llu: bake over; waiting for %zu of %zu canaries to answer",
				(unsigned long long)st->id,
				st->canaries - st->answered, st->canaries);
		}
		return;
	}
	ro->waiting = false;
	if (st->state == XD_ROLLOUT_CANARY) {
		ro->bake_until = uv_now(ro->loop) + ro->cfg->rollout.bake_ms;
		st->baking_ms = xd_wall_ms();
		move(ro, XD_ROLLOUT_BAKING, "every canary answered");
		if (st->canaries == 0)
			xd_warn("rollout %llu: NO CANARY IS CONNECTED: the change reaches every node unproven once the bake of %llu ms is over, unless a canary connects and answers first or an operator aborts it",
				(unsigned long long)st->id,
				(unsigned long long)ro->cfg->rollout.bake_ms);
		else
			xd_info("rollout %llu: all %zu connected canar%s answered (%llu NACK%s); baking %llu ms",
				(unsigned long long)st->id, st->canaries,
				st->canaries == 1 ? "y" : "ies",
				(unsigned long long)st->nacks,
				st->nacks == 1 ? "" : "s",
				(unsigned long long)ro->cfg->rollout.bake_ms);
	}
	if (uv_now(ro->loop) < ro->bake_until)
		return;
	snprintf(why, sizeof(why), "baked with %zu canar%s and %llu NACK%s",
		 st->canaries, st->canaries == 1 ? "y" : "ies",
		 (unsigned long long)st->nacks, st->nacks == 1 ? "" : "s");
	promote_now(ro, why);
}

/* ---------------- NACKs ---------------- */

static void keep_nack(struct xd_rollout_status *st,
		      const struct xd_sessions_nack *n)
{
	struct xd_rollout_nack *k;
	size_t len = n->message_len < XD_ROLLOUT_MESSAGE_MAX ?
			     n->message_len :
			     XD_ROLLOUT_MESSAGE_MAX;

	if (st->nkept == XD_ROLLOUT_NACKS_KEPT)
		return;
	k = &st->kept[st->nkept++];
	k->node_id = xd_strdup(n->client->node_id ? n->client->node_id : "");
	k->node_cluster = xd_strdup(n->client->node_cluster ?
					    n->client->node_cluster : "");
	k->type = xd_strdup(n->type);
	k->version = xd_strdup(n->version);
	k->message = xd_strndup(len > 0 ? n->message : "", len);
	k->at_ms = xd_wall_ms();
}

static void on_nack(void *arg, const struct xd_sessions_nack *n)
{
	struct xd_rollout *ro = arg;
	struct xd_rollout_status *st = &ro->st;
	const char *key = xd_client_key(n->client);
	struct xd_snapshot *cand = xd_cache_get_for(ro->cache, key, true);
	char why[XD_ROLLOUT_MESSAGE_MAX + 512];

	XD_ASSERT_LOOP();
	/* only a NACK of the change counts: of a canary served the
	 * candidate of a key the rollout changes */
	if (!active(st->state) || n->serving == NULL || n->serving != cand ||
	    cand == xd_cache_get_for(ro->cache, key, false))
		return;
	st->nacks++;
	keep_nack(st, n);
	xd_warn("rollout %llu: NACK %llu (max_nacks %llu) from canary node '%.*s' of %s version %s: %.*s",
		(unsigned long long)st->id, (unsigned long long)st->nacks,
		(unsigned long long)ro->cfg->rollout.max_nacks,
		XD_LOG_CLIP(strlen(n->client->node_id)), n->client->node_id,
		n->type, n->version, XD_LOG_CLIP(n->message_len), n->message);
	if (st->nacks <= ro->cfg->rollout.max_nacks)
		return;
	snprintf(why, sizeof(why),
		 "%llu NACK%s from canaries, more than max_nacks %llu; the last from node '%.*s' of %s version %s: %.*s",
		 (unsigned long long)st->nacks, st->nacks == 1 ? "" : "s",
		 (unsigned long long)ro->cfg->rollout.max_nacks,
		 XD_LOG_CLIP(strlen(n->client->node_id)), n->client->node_id,
		 n->type, n->version,
		 (int)(n->message_len < XD_ROLLOUT_MESSAGE_MAX ?
			       n->message_len :
			       XD_ROLLOUT_MESSAGE_MAX),
		 n->message);
	roll_back(ro, XD_ROLLOUT_FAILED, why);
}

/* ---------------- starting ---------------- */

struct xd_rollout *xd_rollout_new(uv_loop_t *loop,
				  const struct xd_config *cfg,
				  struct xd_cache *cache,
				  struct xd_sessions *sessions)
{
	struct xd_rollout *ro = xd_calloc(1, sizeof(*ro));

	XD_ASSERT_LOOP();
	XD_ASSERT(cfg->rollout.on);
	ro->loop = loop;
	ro->cfg = cfg;
	ro->cache = cache;
	ro->sessions = sessions;
	ro->st.bake_ms = cfg->rollout.bake_ms;
	ro->st.max_nacks = cfg->rollout.max_nacks;
	ro->st.timeout_ms = cfg->rollout.timeout_ms;
	uv_timer_init(loop, &ro->timer);
	ro->timer.data = ro;
	xd_sessions_on_canary_nack(sessions, on_nack, ro);
	return ro;
}

size_t xd_rollout_install(void *rollout, struct xd_snapshot **snaps,
			  size_t n, const char *trigger)
{
	struct xd_rollout *ro = rollout;
	struct xd_rollout_status *st = &ro->st;
	size_t keys;
	bool was = active(st->state), same;

	XD_ASSERT_LOOP();
	keys = xd_cache_stage(ro->cache, snaps, n, &same);
	if (was && keys > 0 && same) {
		xd_info("rollout %llu goes on: the reload (%s) changes nothing it staged",
			(unsigned long long)st->id, trigger);
		return keys;
	}
	if (was && keys == 0) {
		/* xd_cache_stage dropped the candidate: canaries are back */
		move(ro, XD_ROLLOUT_ABORTED, "replaced by a reload that changes nothing");
		xd_warn("rollout %llu replaced by a reload (%s) that changes nothing: canaries are served the stable snapshots again",
			(unsigned long long)st->id, trigger);
		return 0;
	}
	if (keys == 0)
		return 0;
	if (was)
		xd_info("rollout %llu replaced by a new reload (%s)",
			(unsigned long long)st->id, trigger);
	clear_nacks(st);
	st->id++;
	st->state = XD_ROLLOUT_CANARY; /* from any state: a new rollout */
	st->trigger = trigger;
	st->started_ms = xd_wall_ms();
	st->baking_ms = 0;
	st->ended_ms = 0;
	st->keys = keys;
	st->reason[0] = '\0';
	ro->waiting_logged = false;
	ro->waiting = false;
	xd_sessions_canaries(ro->sessions, &st->canaries, &st->answered);
	xd_info("rollout %llu (%s): %zu snapshot key%s changed; served to the canaries first (%zu connected), everyone else keeps the previous snapshots (bake %llu ms, max_nacks %llu)",
		(unsigned long long)st->id, trigger, keys, keys == 1 ? "" : "s",
		st->canaries, (unsigned long long)ro->cfg->rollout.bake_ms,
		(unsigned long long)ro->cfg->rollout.max_nacks);
	uv_timer_start(&ro->timer, on_tick, XD_ROLLOUT_TICK_MS,
		       XD_ROLLOUT_TICK_MS);
	return keys;
}

/* ---------------- operators ---------------- */

static int not_active(const struct xd_rollout *ro, char *why, size_t len)
{
	if (ro->st.id == 0)
		snprintf(why, len, "no rollout is under way: no reload has changed anything since xdsd started");
	else
		snprintf(why, len, "no rollout is under way: rollout %llu is %s",
			 (unsigned long long)ro->st.id,
			 state_names[ro->st.state]);
	return -1;
}

/* An operator's promote (`promote`) or abort of the rollout under way. */
static int operator_ends(struct xd_rollout *ro, bool promote, const char *who,
			 char *why, size_t len)
{
	char reason[256];

	XD_ASSERT_LOOP();
	if (!active(ro->st.state))
		return not_active(ro, why, len);
	snprintf(reason, sizeof(reason), "%s by %s",
		 promote ? "promoted" : "aborted", who);
	if (promote)
		promote_now(ro, reason);
	else
		roll_back(ro, XD_ROLLOUT_ABORTED, reason);
	return 0;
}

int xd_rollout_promote(struct xd_rollout *ro, const char *who, char *why,
		       size_t len)
{
	return operator_ends(ro, true, who, why, len);
}

int xd_rollout_abort(struct xd_rollout *ro, const char *who, char *why,
		     size_t len)
{
	return operator_ends(ro, false, who, why, len);
}

void xd_rollout_on_rest(struct xd_rollout *ro, xd_rollout_rest_fn fn,
			void *arg)
{
	XD_ASSERT_LOOP();
	ro->on_rest = fn;
	ro->on_rest_arg = arg;
}

const struct xd_rollout_status *xd_rollout_status(const struct xd_rollout *ro)
{
	XD_ASSERT_LOOP();
	return &ro->st;
}

static void closed(uv_handle_t *h)
{
	struct xd_rollout *ro = h->data;

	clear_nacks(&ro->st);
	free(ro);
}

void xd_rollout_stop(struct xd_rollout *ro)
{
	if (ro == NULL)
		return;
	XD_ASSERT_LOOP();
	xd_sessions_on_canary_nack(ro->sessions, NULL, NULL);
	uv_close((uv_handle_t *)&ro->timer, closed);
}
