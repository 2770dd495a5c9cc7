/* SPDX-License-Identifier: Apache-2.0 */
#include "rollout/rollout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/client.h"
#include "rollout/canaries.h"
#include "rollout/decide.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* Between tries to write a record when etcd refused or failed. */
#define RETRY_MS 1000

struct xd_rollout {
	uv_loop_t *loop;
	const struct xd_config *cfg;
	struct xd_cache *cache;
	struct xd_sessions *sessions;
	struct xd_fleet *fleet;
	uv_timer_t timer;       /* ticks while a rollout is under way */
	uv_timer_t nodes_timer; /* counts nodes, for the others (etcd) */
	int open_handles;
	/* the candidate's newest change (etcd revision; files: 0) and the
	 * stable set's */
	int64_t revision, stable_revision;
	/* the keys the candidate changes (sorted, as the cache's sets) */
	char **changed;
	size_t nchanged;
	/* a record for this candidate asked for, and a decision: not
	 * asked again while under way; after a failure, not before
	 * retry_at (loop ms) */
	bool proposing, deciding;
	uint64_t retry_at;
	bool waiting_logged, cut_logged;
	/* canaries said to be past canary_timeout, once each */
	char **said_stuck;
	size_t nsaid_stuck;
	/* this replica's canary streams, from the engine's events */
	struct xd_canaries canaries;
	/* connected nodes of each node key, counted now and then */
	struct xd_rollout_report nodes;
	xd_rollout_rest_fn on_rest;
	void *on_rest_arg;
	struct xd_rollout_status st;
};

static bool active(enum xd_rollout_state s)
{
	return xd_rollout_state_active(s);
}

bool xd_rollout_active(const struct xd_rollout *ro)
{
	XD_ASSERT_LOOP();
	return active(ro->st.state);
}

static void names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * The one place the state changes. A rollout starts, or is adopted
 * from the record, from any state (start(), adopt()); under way, it
 * goes canary -> baking, and to rest. The store of the last good state
 * hears of a rollout under way here that comes to rest (`tell`), not
 * of one adopted at rest, whose reload says what became of it.
 */
static void move_to(struct xd_rollout *ro, enum xd_rollout_state to,
		    const char *why, bool tell)
{
	enum xd_rollout_state from = ro->st.state;
	bool ok = to == XD_ROLLOUT_CANARY || !active(from) ||
		  (to == XD_ROLLOUT_BAKING ? from == XD_ROLLOUT_CANARY :
					     to != XD_ROLLOUT_IDLE);

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(ok, "rollout %llu: %s -> %s (%s)",
		       (unsigned long long)ro->st.id, xd_rollout_state_name(from),
		       xd_rollout_state_name(to), why);
	xd_debug("rollout %llu: %s -> %s (%s)", (unsigned long long)ro->st.id,
		 xd_rollout_state_name(from), xd_rollout_state_name(to), why);
	ro->st.state = to;
	if (!active(to)) {
		ro->st.ended_ms = xd_wall_ms();
		snprintf(ro->st.reason, sizeof(ro->st.reason), "%s", why);
		uv_timer_stop(&ro->timer);
	}
	if (tell && active(from) && !active(to) && ro->on_rest != NULL)
		ro->on_rest(ro->on_rest_arg, to == XD_ROLLOUT_PROMOTED);
}

static void move(struct xd_rollout *ro, enum xd_rollout_state to,
		 const char *why)
{
	move_to(ro, to, why, true);
}

/* ---------------- what the candidate changes ---------------- */

/* The keys whose candidate differs from their stable snapshot. */
static void find_changed(struct xd_rollout *ro)
{
	size_t nc, ns, i = 0, j = 0;
	struct xd_snapshot **cand = xd_cache_candidates(ro->cache, &nc);
	struct xd_snapshot **stable = xd_cache_snapshots(ro->cache, &ns);

	names_free(ro->changed, ro->nchanged);
	ro->changed = NULL;
	ro->nchanged = 0;
	while (i < nc || j < ns) {
		int cmp = i == nc ? 1 :
			  j == ns ? -1 :
				    strcmp(xd_snapshot_key(cand[i]),
					   xd_snapshot_key(stable[j]));
		struct xd_snapshot *c = cmp <= 0 ? cand[i++] : NULL;
		struct xd_snapshot *s = cmp >= 0 ? stable[j++] : NULL;

		if (c == s)
			continue;
		ro->changed = xd_reallocarray(ro->changed, ro->nchanged + 1,
					      sizeof(*ro->changed));
		ro->changed[ro->nchanged++] =
			xd_strdup(xd_snapshot_key(c != NULL ? c : s));
	}
	xd_rollout_fingerprint(cand, nc, ro->st.candidate);
	xd_rollout_fingerprint(stable, ns, ro->st.stable);
	for (i = 0; i < nc; i++)
		xd_snapshot_unref(cand[i]);
	for (j = 0; j < ns; j++)
		xd_snapshot_unref(stable[j]);
	free(cand);
	free(stable);
}

/* The changed key the nodes of node key `key` prove, or NULL: their
 * snapshot is the same in both sets. Their own key when either set has
 * a snapshot of that key, else the default. */
static const char *attributed(const struct xd_rollout *ro, const char *key)
{
	struct xd_snapshot *c = xd_cache_get_for(ro->cache, key, true);
	struct xd_snapshot *s = xd_cache_get_for(ro->cache, key, false);
	const char *k;

	if (c == s)
		return NULL;
	k = (c != NULL && strcmp(xd_snapshot_key(c), key) == 0) ||
			    (s != NULL && strcmp(xd_snapshot_key(s), key) == 0) ?
		    key :
		    XD_CACHE_DEFAULT_KEY;
	for (size_t i = 0; i < ro->nchanged; i++)
		if (strcmp(ro->changed[i], k) == 0)
			return ro->changed[i];
	return NULL;
}

/* ---------------- this replica's canaries ---------------- */

static bool said_stuck(struct xd_rollout *ro, const char *node)
{
	for (size_t i = 0; i < ro->nsaid_stuck; i++)
		if (strcmp(ro->said_stuck[i], node) == 0)
			return true;
	if (ro->nsaid_stuck < XD_ROLLOUT_NAMES_MAX * 10) {
		ro->said_stuck = xd_reallocarray(ro->said_stuck, ro->nsaid_stuck + 1,
						 sizeof(*ro->said_stuck));
		ro->said_stuck[ro->nsaid_stuck++] = xd_strdup(node);
	}
	return false;
}

/* One canary stream, as its last event left it, counted into
 * st.local. */
static void count_canary(struct xd_rollout *ro, const struct xd_canary *v,
			 uint64_t now_mono)
{
	struct xd_rollout_report *r = &ro->st.local;
	struct xd_snapshot *cand = xd_cache_get_for(ro->cache, v->key, true);
	const char *key = attributed(ro, v->key);
	bool answered, acked;
	uint64_t oldest = xd_canary_waited(v, now_mono);

	r->canaries++;
	answered = v->serving != NULL && v->serving == cand && !v->pending;
	acked = answered && v->ntypes > 0 && !v->nacked;
	if (key != NULL) {
		struct xd_rollout_key_count *k = xd_rollout_report_key(r, key);

		if (k != NULL && answered) {
			k->canaries++;
			if (acked) {
				k->acked++;
				k->proven = true;
			}
		} else if (k != NULL) {
			k->canaries++;
		}
	}
	if (answered) {
		r->answered++;
		return;
	}
	if (ro->cfg->rollout.canary_timeout_ms > 0 &&
	    oldest >= ro->cfg->rollout.canary_timeout_ms) {
		xd_rollout_list_add(&r->stuck, &r->nstuck, XD_ROLLOUT_NAMES_MAX,
				    &r->stuck_total, v->node_id);
		if (!said_stuck(ro, v->node_id))
			xd_warn("rollout %llu: canary node '%.*s' (stream %llu, %s) has not answered the change within canary_timeout of %llu ms: %s",
				(unsigned long long)ro->st.id,
				XD_LOG_CLIP(strlen(v->node_id)), v->node_id,
				(unsigned long long)v->stream_id, v->peer,
				(unsigned long long)ro->cfg->rollout.canary_timeout_ms,
				ro->cfg->rollout.on_canary_timeout == XD_CANARY_TIMEOUT_FAIL ?
					"the rollout fails (on_canary_timeout: fail)" :
					"left out, the rollout goes on with the others (on_canary_timeout: skip)");
		return;
	}
	xd_rollout_list_add(&r->waiting, &r->nwaiting, XD_ROLLOUT_NAMES_MAX,
			    &r->waiting_total, v->node_id);
}

/* st.local anew from the canaries as their events left them (its keys'
 * `proven` kept): the rollout's own table, never the streams. */
static void count_local(struct xd_rollout *ro)
{
	struct xd_rollout_report *r = &ro->st.local;
	uint64_t now_mono = xd_mono_ms();

	r->canaries = r->answered = 0;
	for (size_t i = 0; i < r->nkeys; i++)
		r->keys[i].canaries = r->keys[i].acked = 0;
	names_free(r->waiting, r->nwaiting);
	names_free(r->stuck, r->nstuck);
	r->waiting = r->stuck = NULL;
	r->nwaiting = r->waiting_total = r->nstuck = r->stuck_total = 0;
	for (size_t i = 0; i < ro->canaries.n; i++)
		count_canary(ro, &ro->canaries.v[i], now_mono);
}

/* A new rollout's local report: every changed key, nothing counted. */
static void local_reset(struct xd_rollout *ro)
{
	struct xd_rollout_report *r = &ro->st.local;

	xd_rollout_report_clear(r);
	names_free(ro->said_stuck, ro->nsaid_stuck);
	ro->said_stuck = NULL;
	ro->nsaid_stuck = 0;
	for (size_t i = 0; i < ro->nchanged; i++)
		xd_rollout_report_key(r, ro->changed[i]);
}

/* ---------------- nodes of each key ---------------- */

struct node_seen {
	const char *key, *id;
	bool canary;
};

struct node_walk {
	struct node_seen *v;
	size_t n, cap;
};

static void note_node(void *ctx, const char *key, const char *id, bool canary)
{
	struct node_walk *w = ctx;

	w->v = xd_grow(w->v, &w->cap, w->n + 1, sizeof(*w->v));
	w->v[w->n++] = (struct node_seen){key, id, canary};
}

static int by_key_id(const void *a, const void *b)
{
	const struct node_seen *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c != 0 ? c : strcmp(x->id, y->id);
}

/* ro->nodes anew: the distinct nodes of each node key, and of them
 * the canaries. */
static void count_nodes(struct xd_rollout *ro)
{
	struct node_walk w = {0};
	struct xd_rollout_report *r = &ro->nodes;

	for (size_t i = 0; i < r->nnodes; i++)
		free(r->nodes[i].key);
	free(r->nodes);
	r->nodes = NULL;
	r->nnodes = r->nodes_total = 0;
	xd_sessions_each_node(ro->sessions, note_node, &w);
	if (w.n > 0) /* else w.v is NULL, which qsort must not get */
		qsort(w.v, w.n, sizeof(*w.v), by_key_id);
	for (size_t i = 0; i < w.n; i++) {
		bool first = i == 0 || strcmp(w.v[i].key, w.v[i - 1].key) != 0;

		if (!first && strcmp(w.v[i].id, w.v[i - 1].id) == 0)
			continue; /* another stream of the same node */
		if (first) {
			r->nodes_total++;
			if (r->nnodes == XD_ROLLOUT_NODES_MAX)
				continue;
			r->nodes = xd_reallocarray(r->nodes, r->nnodes + 1,
						   sizeof(*r->nodes));
			r->nodes[r->nnodes].key = xd_strdup(w.v[i].key);
			r->nodes[r->nnodes].nodes = 0;
			r->nodes[r->nnodes].canaries = 0;
			r->nnodes++;
		} else if (r->nnodes == 0 ||
			   strcmp(r->nodes[r->nnodes - 1].key, w.v[i].key) != 0) {
			continue; /* a key past the bound */
		}
		r->nodes[r->nnodes - 1].nodes++;
		r->nodes[r->nnodes - 1].canaries += w.v[i].canary;
	}
	free(w.v);
}

/* This replica's report for the others (fleet.h, its report function):
 * its canaries on the rollout under way (none at rest) and its nodes,
 * borrowed from the rollout's own. */
static void fill_report(void *arg, struct xd_rollout_report *r)
{
	struct xd_rollout *ro = arg;
	const struct xd_rollout_report *l = &ro->st.local;

	if (active(ro->st.state) && !ro->st.waiting_fleet) {
		r->rollout = ro->st.id;
		memcpy(r->candidate, ro->st.candidate, sizeof(r->candidate));
		r->canaries = l->canaries;
		r->answered = l->answered;
		r->nacks = l->nacks;
		r->keys = l->keys;
		r->nkeys = l->nkeys;
		r->waiting = l->waiting;
		r->nwaiting = l->nwaiting;
		r->waiting_total = l->waiting_total;
		r->stuck = l->stuck;
		r->nstuck = l->nstuck;
		r->stuck_total = l->stuck_total;
		r->nack_list = l->nack_list;
		r->nnack_list = l->nnack_list;
	}
	r->nodes = ro->nodes.nodes;
	r->nnodes = ro->nodes.nnodes;
	r->nodes_total = ro->nodes.nodes_total;
}

static void publish(struct xd_rollout *ro)
{
	xd_fleet_publish(ro->fleet);
}

static void on_nodes(uv_timer_t *t)
{
	struct xd_rollout *ro = t->data;

	count_nodes(ro);
	publish(ro);
}

/* The canaries of `nodes` (a report's) that count for `key`: those of
 * node keys attributed to it now (staged), or, `served`, those `key`
 * serves (a key's own, or the default for node keys without one). */
static size_t canaries_in(const struct xd_rollout *ro,
			  const struct xd_rollout_report *r, const char *key,
			  bool staged)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nnodes; i++) {
		const char *k = r->nodes[i].key;
		bool counts;

		if (staged) {
			const char *to = attributed(ro, k);

			counts = to != NULL && strcmp(to, key) == 0;
		} else if (strcmp(key, XD_CACHE_DEFAULT_KEY) == 0) {
			struct xd_snapshot *s = xd_cache_get(ro->cache, k);

			counts = s == NULL || strcmp(xd_snapshot_key(s), k) != 0;
		} else {
			counts = strcmp(k, key) == 0;
		}
		if (counts)
			n += r->nodes[i].canaries;
	}
	return n;
}

/* The canaries connected to any replica, as their nodes were last
 * counted, that count for `key` (canaries_in). */
static size_t canaries_for(const struct xd_rollout *ro, const char *key,
			   bool staged)
{
	size_t n = canaries_in(ro, &ro->nodes, key, staged);

	for (size_t r = 0; r < xd_fleet_nreports(ro->fleet); r++)
		n += canaries_in(ro, xd_fleet_report(ro->fleet, r), key, staged);
	return n;
}

size_t xd_rollout_canaries_of(struct xd_rollout *ro, const char *key)
{
	XD_ASSERT_LOOP();
	count_nodes(ro);
	return canaries_for(ro, key, false);
}

/* The fleet's canaries: this replica's and those of every replica
 * reporting on the same rollout, into st.fleet. */
static void merge_fleet(struct xd_rollout *ro)
{
	struct xd_rollout_status *st = &ro->st;

	xd_rollout_report_clear(&st->fleet);
	for (size_t i = 0; i < ro->nchanged; i++)
		xd_rollout_report_key(&st->fleet, ro->changed[i]);
	xd_rollout_report_merge(&st->fleet, &st->local);
	st->replicas = 1;
	for (size_t i = 0; i < xd_fleet_nreports(ro->fleet); i++) {
		const struct xd_rollout_report *o = xd_fleet_report(ro->fleet, i);

		if (o->rollout != st->id || strcmp(o->candidate, st->candidate) != 0)
			continue;
		xd_rollout_report_merge(&st->fleet, o);
		st->replicas++;
	}
	st->canaries = st->fleet.canaries;
	st->answered = st->fleet.answered;
	st->nacks = st->fleet.nacks;
}

/* ---------------- ending ---------------- */

static void promote_now(struct xd_rollout *ro, const char *why)
{
	size_t changed = xd_cache_promote(ro->cache);
	bool unproven = true;

	for (size_t i = 0; i < ro->st.fleet.nkeys; i++)
		unproven &= !ro->st.fleet.keys[i].proven;

	ro->stable_revision = ro->revision;
	move(ro, XD_ROLLOUT_PROMOTED, why);
	xd_log(unproven ? XD_LOG_WARN : XD_LOG_INFO,
	       "rollout %llu promoted (%s): every node is served the change now (%zu snapshot key%s)%s",
	       (unsigned long long)ro->st.id, why, changed,
	       changed == 1 ? "" : "s", unproven ? "; no canary proved it" : "");
}

/* Canaries are served the stable set again; the candidate is gone. */
static void roll_back(struct xd_rollout *ro, enum xd_rollout_state to,
		      const char *why)
{
	xd_cache_unstage(ro->cache);
	move(ro, to, why);
	if (to == XD_ROLLOUT_FAILED)
		xd_error("rollout %llu failed: %s; rolled back: canaries are served the previous snapshots again, and the change is not served until a newer one",
			 (unsigned long long)ro->st.id, why);
	else
		xd_warn("rollout %llu aborted (%s); rolled back: canaries are served the previous snapshots again",
			(unsigned long long)ro->st.id, why);
}

/* ---------------- the record ---------------- */

/* A record of the rollout under way here, as this replica knows it. */
static void record_of(const struct xd_rollout *ro, struct xd_rollout_record *rec)
{
	const struct xd_rollout_status *st = &ro->st;

	memset(rec, 0, sizeof(*rec));
	rec->id = st->id;
	rec->state = st->state;
	memcpy(rec->candidate, st->candidate, sizeof(rec->candidate));
	memcpy(rec->stable, st->stable, sizeof(rec->stable));
	rec->stable_revision = ro->stable_revision;
	rec->started_ms = st->started_ms;
	rec->baking_ms = st->baking_ms;
	xd_rollout_text_set(&rec->trigger, st->trigger);
	xd_rollout_text_set(&rec->by, xd_fleet_replica(ro->fleet));
	xd_rollout_text_set(&rec->reason, "");
	for (size_t i = 0; i < ro->nchanged; i++)
		xd_rollout_list_add(&rec->keys, &rec->nkeys, XD_ROLLOUT_KEYS_MAX,
				    &rec->keys_total, ro->changed[i]);
}

static void proposed(void *arg, bool taken, const char *why)
{
	struct xd_rollout *ro = arg;

	ro->proposing = false;
	if (!taken) {
		xd_info("rollout %llu: its record was not written: %s",
			(unsigned long long)ro->st.id, why);
		ro->retry_at = uv_now(ro->loop) + RETRY_MS;
	}
}

/* Asks the fleet to take this replica's new rollout as its record. */
static void propose_start(struct xd_rollout *ro)
{
	struct xd_rollout_record rec;

	record_of(ro, &rec);
	for (size_t i = 0; i < ro->nchanged; i++) {
		if (canaries_for(ro, ro->changed[i], true) == 0)
			xd_rollout_list_add(&rec.uncovered, &rec.nuncovered,
					    XD_ROLLOUT_KEYS_MAX, NULL,
					    ro->changed[i]);
	}
	ro->proposing = true;
	xd_fleet_propose(ro->fleet, &rec, proposed, ro);
	xd_rollout_record_clear(&rec);
}

static void decided(void *arg, bool taken, const char *why)
{
	struct xd_rollout *ro = arg;

	ro->deciding = false;
	if (!taken)
		xd_info("rollout %llu: the decision was not written: %s",
			(unsigned long long)ro->st.id, why);
}

/* The record known, moved to `to` for `why` by `by` (NULL: this
 * replica), proposed; `done` hears of it (NULL: decided()). */
static void propose_move(struct xd_rollout *ro,
			 const struct xd_rollout_record *known,
			 enum xd_rollout_state to, const char *why,
			 const char *by, xd_fleet_done_fn done, void *arg)
{
	struct xd_rollout_record rec = {0};

	xd_rollout_record_copy(&rec, known);
	rec.state = to;
	if (to == XD_ROLLOUT_BAKING)
		rec.baking_ms = xd_wall_ms();
	if (!active(to))
		rec.ended_ms = xd_wall_ms();
	xd_rollout_text_set(&rec.reason, active(to) ? "" : why);
	xd_rollout_text_set(&rec.by, by != NULL ? by : xd_fleet_replica(ro->fleet));
	if (done == NULL) {
		ro->deciding = true;
		done = decided;
		arg = ro;
	}
	xd_fleet_propose(ro->fleet, &rec, done, arg);
	xd_rollout_record_clear(&rec);
}

static bool ours(const struct xd_rollout *ro, const struct xd_rollout_record *rec)
{
	return rec != NULL && strcmp(rec->candidate, ro->st.candidate) == 0;
}

/* The bake starts here as the record says. */
static void baking(struct xd_rollout *ro, const struct xd_rollout_record *rec)
{
	struct xd_rollout_status *st = &ro->st;

	st->baking_ms = rec->baking_ms;
	move(ro, XD_ROLLOUT_BAKING, "every canary answered");
	if (st->fleet.canaries == 0)
		xd_warn("rollout %llu: NO CANARY IS CONNECTED to any replica: the change reaches every node unproven once the bake of %llu ms is over, unless a canary connects and answers first or an operator aborts it",
			(unsigned long long)st->id,
			(unsigned long long)ro->cfg->rollout.bake_ms);
	else
		xd_info("rollout %llu: all %zu connected canar%s answered (%llu NACK%s); baking %llu ms",
			(unsigned long long)st->id, st->fleet.canaries,
			st->fleet.canaries == 1 ? "y" : "ies",
			(unsigned long long)st->fleet.nacks,
			st->fleet.nacks == 1 ? "" : "s",
			(unsigned long long)ro->cfg->rollout.bake_ms);
}

/* The record of this replica's candidate: served as it says. */
static void follow(struct xd_rollout *ro, const struct xd_rollout_record *rec)
{
	struct xd_rollout_status *st = &ro->st;

	st->waiting_fleet = false;
	st->id = rec->id;
	st->started_ms = rec->started_ms;
	st->now = rec->now;
	st->rollback = rec->rollback;
	snprintf(st->by, sizeof(st->by), "%s", rec->by);
	switch (rec->state) {
	case XD_ROLLOUT_BAKING:
		if (st->state == XD_ROLLOUT_CANARY)
			baking(ro, rec);
		break;
	case XD_ROLLOUT_PROMOTED:
		promote_now(ro, rec->reason);
		break;
	case XD_ROLLOUT_FAILED:
	case XD_ROLLOUT_ABORTED:
		roll_back(ro, rec->state, rec->reason);
		break;
	default:
		break;
	}
}

/* Whether this replica is behind the record: its change is another,
 * newer one (this replica's reload will bring it). */
static bool behind(const struct xd_rollout *ro, const struct xd_rollout_record *rec)
{
	return rec != NULL && !ours(ro, rec) && xd_fleet_shared(ro->fleet) &&
	       rec->id > (uint64_t)ro->revision;
}

static void on_record(void *arg)
{
	struct xd_rollout *ro = arg;
	const struct xd_rollout_record *rec = xd_fleet_record(ro->fleet);

	XD_ASSERT_LOOP();
	if (!active(ro->st.state))
		return;
	if (ours(ro, rec)) {
		follow(ro, rec);
		return;
	}
	ro->st.waiting_fleet = behind(ro, rec);
}

/* ---------------- the tick ---------------- */

static void on_tick(uv_timer_t *h)
{
	struct xd_rollout *ro = h->data;
	struct xd_rollout_status *st = &ro->st;
	const struct xd_rollout_record *rec = xd_fleet_record(ro->fleet);
	enum xd_rollout_decision d;
	char why[XD_ROLLOUT_TEXT_MAX + 256];

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(active(st->state), "rollout %llu ticks while %s",
		       (unsigned long long)st->id,
		       xd_rollout_state_name(st->state));
	count_local(ro);
	merge_fleet(ro);
	publish(ro);
	if (!ours(ro, rec)) {
		st->waiting_fleet = behind(ro, rec);
		if (!st->waiting_fleet && !ro->proposing &&
		    uv_now(ro->loop) >= ro->retry_at)
			propose_start(ro);
		return;
	}
	if (!xd_fleet_reachable(ro->fleet)) {
		if (!ro->cut_logged)
			xd_warn("rollout %llu: %s cannot be written now: this replica decides nothing, its canaries keep the change and every other node the previous snapshots until it can",
				(unsigned long long)st->id, xd_fleet_where(ro->fleet));
		ro->cut_logged = true;
		return;
	}
	ro->cut_logged = false;
	if (ro->deciding)
		return;
	d = xd_rollout_decide(ro->cfg, rec, &st->fleet, xd_wall_ms(), why,
			      sizeof(why));
	switch (d) {
	case XD_DECIDE_BAKE:
		propose_move(ro, rec, XD_ROLLOUT_BAKING, why, NULL, NULL, NULL);
		break;
	case XD_DECIDE_PROMOTE:
		propose_move(ro, rec, XD_ROLLOUT_PROMOTED, why, NULL, NULL, NULL);
		break;
	case XD_DECIDE_FAIL:
		propose_move(ro, rec, XD_ROLLOUT_FAILED, why, NULL, NULL, NULL);
		break;
	case XD_DECIDE_WAIT:
		if (st->state == XD_ROLLOUT_BAKING && !ro->waiting_logged &&
		    xd_wall_ms() >= rec->baking_ms + (int64_t)ro->cfg->rollout.bake_ms &&
		    st->fleet.waiting_total > 0) {
			ro->waiting_logged = true;
			xd_info("rollout %llu: bake over; waiting for %zu of %zu canaries to answer",
				(unsigned long long)st->id, st->fleet.waiting_total,
				st->fleet.canaries);
		}
		break;
	}
}

/* ---------------- NACKs ---------------- */

static void keep_nack(struct xd_rollout_report *r,
		      const struct xd_sessions_event *n)
{
	struct xd_rollout_nack *k;
	size_t len = n->message_len < XD_ROLLOUT_TEXT_MAX ? n->message_len :
							      XD_ROLLOUT_TEXT_MAX;

	if (r->nnack_list == XD_ROLLOUT_NACKS_REPORTED)
		return;
	r->nack_list = xd_reallocarray(r->nack_list, r->nnack_list + 1,
				       sizeof(*r->nack_list));
	k = &r->nack_list[r->nnack_list++];
	k->node_id = xd_strdup(n->view->node_id);
	k->node_cluster = xd_strdup(n->view->node_cluster);
	k->type = xd_strdup(n->type);
	k->version = xd_strdup(n->version);
	k->message = xd_strndup(len > 0 ? n->message : "", len);
	k->at_ms = xd_wall_ms();
}

static void on_nack(struct xd_rollout *ro, const struct xd_sessions_event *n)
{
	struct xd_rollout_status *st = &ro->st;
	const char *key = n->view->key;
	struct xd_snapshot *cand = xd_cache_get_for(ro->cache, key, true);
	const struct xd_snapshot *serving =
		n->view->snapshot != NULL ?
			xd_snapshot_base((struct xd_snapshot *)n->view->snapshot) :
			NULL;

	XD_ASSERT_LOOP();
	/* only a NACK of the change counts: of a canary served the
	 * candidate of a key the rollout changes */
	if (!active(st->state) || serving == NULL || serving != cand ||
	    cand == xd_cache_get_for(ro->cache, key, false))
		return;
	st->local.nacks++;
	keep_nack(&st->local, n);
	xd_warn("rollout %llu: NACK %llu here (max_nacks %llu across the fleet) from canary node '%.*s' of %s version %s: %.*s",
		(unsigned long long)st->id, (unsigned long long)st->local.nacks,
		(unsigned long long)ro->cfg->rollout.max_nacks,
		XD_LOG_CLIP(strlen(n->view->node_id)), n->view->node_id,
		n->type, n->version, XD_LOG_CLIP(n->message_len), n->message);
	/* decided now, not at the next tick */
	on_tick(&ro->timer);
}

/* ---------------- starting ---------------- */

/*
 * An event of a canary stream (protocol/session.h): its entry updated;
 * a NACK of the change decided at once; a canary that came, went or
 * answered counted again on the next turn of the loop (once for many),
 * not at the next tick. A send only makes it wait: the tick sees that.
 */
static void on_event(void *arg, const struct xd_sessions_event *ev)
{
	struct xd_rollout *ro = arg;

	XD_ASSERT_LOOP();
	xd_canaries_note(&ro->canaries, ev);
	if (ev->kind == XD_SESSIONS_NACK)
		on_nack(ro, ev);
	else if (ev->kind != XD_SESSIONS_SENT && active(ro->st.state))
		uv_timer_start(&ro->timer, on_tick, 0, XD_ROLLOUT_TICK_MS);
}

struct xd_rollout *xd_rollout_new(uv_loop_t *loop,
				  const struct xd_config *cfg,
				  struct xd_cache *cache,
				  struct xd_sessions *sessions,
				  struct xd_fleet *fleet)
{
	struct xd_rollout *ro = xd_calloc(1, sizeof(*ro));
	const struct xd_rollout_record *rec = xd_fleet_record(fleet);

	XD_ASSERT_LOOP();
	XD_ASSERT(cfg->rollout.on);
	ro->loop = loop;
	ro->cfg = cfg;
	ro->cache = cache;
	ro->sessions = sessions;
	ro->fleet = fleet;
	ro->st.bake_ms = cfg->rollout.bake_ms;
	ro->st.max_nacks = cfg->rollout.max_nacks;
	ro->st.timeout_ms = cfg->rollout.timeout_ms;
	ro->st.canary_timeout_ms = cfg->rollout.canary_timeout_ms;
	ro->st.require_canary = cfg->rollout.require_canary;
	ro->st.on_canary_timeout = cfg->rollout.on_canary_timeout;
	/* the last rollout, as the record remembers it */
	if (rec != NULL)
		ro->st.id = rec->id;
	uv_timer_init(loop, &ro->timer);
	ro->timer.data = ro;
	uv_timer_init(loop, &ro->nodes_timer);
	ro->nodes_timer.data = ro;
	ro->open_handles = 2;
	if (xd_fleet_shared(fleet))
		uv_timer_start(&ro->nodes_timer, on_nodes, XD_ROLLOUT_NODES_MS,
			       XD_ROLLOUT_NODES_MS);
	/* the rollout says who is a canary, and hears what each does */
	xd_sessions_set_canary_rule(sessions, xd_canary_rule, (void *)cfg);
	xd_sessions_on_event(sessions, on_event, ro);
	xd_fleet_on_record(fleet, on_record, ro);
	xd_fleet_on_report(fleet, fill_report, ro);
	return ro;
}

/* Starts a rollout of the candidate staged, `id`. */
static void start(struct xd_rollout *ro, uint64_t id, const char *trigger,
		  size_t keys)
{
	struct xd_rollout_status *st = &ro->st;
	const struct xd_rollout_record *rec = xd_fleet_record(ro->fleet);

	st->id = id;
	move(ro, XD_ROLLOUT_CANARY, "a new change");
	xd_rollout_text_set(&st->trigger, trigger);
	st->started_ms = xd_wall_ms();
	st->baking_ms = 0;
	st->ended_ms = 0;
	st->keys = keys;
	st->reason[0] = st->by[0] = '\0';
	st->now = st->rollback = st->held = false;
	ro->waiting_logged = ro->cut_logged = false;
	ro->proposing = ro->deciding = false;
	ro->retry_at = 0;
	count_nodes(ro);
	count_local(ro);
	merge_fleet(ro);
	xd_info("rollout %llu (%s): %zu snapshot key%s changed; served to the canaries first (%zu connected), everyone else keeps the previous snapshots (bake %llu ms, max_nacks %llu, require_canary %s)",
		(unsigned long long)id, trigger, keys, keys == 1 ? "" : "s",
		st->local.canaries, (unsigned long long)ro->cfg->rollout.bake_ms,
		(unsigned long long)ro->cfg->rollout.max_nacks,
		ro->cfg->rollout.require_canary == XD_REQUIRE_PER_KEY ? "per_key" :
		ro->cfg->rollout.require_canary == XD_REQUIRE_ANY ? "any" : "none");
	for (size_t i = 0; i < ro->nchanged; i++)
		if (canaries_for(ro, ro->changed[i], true) == 0)
			xd_warn("rollout %llu: snapshot '%.*s' changes and no canary of it is connected%s: %s",
				(unsigned long long)id,
				XD_LOG_CLIP(strlen(ro->changed[i])), ro->changed[i],
				xd_fleet_shared(ro->fleet) ? " to any replica" : "",
				ro->cfg->rollout.require_canary == XD_REQUIRE_PER_KEY ?
					"it is not promoted until one ACKs it (require_canary: per_key), or the rollout fails after its timeout" :
					"no canary proves it");
	uv_timer_start(&ro->timer, on_tick, XD_ROLLOUT_TICK_MS,
		       XD_ROLLOUT_TICK_MS);
	st->waiting_fleet = behind(ro, rec);
	if (st->waiting_fleet)
		xd_info("rollout %llu: %s is of a newer change (%llu); this replica waits for it",
			(unsigned long long)id, xd_fleet_where(ro->fleet),
			(unsigned long long)rec->id);
	else
		propose_start(ro);
}

/* The change staged is one the record knows (`rec`): served as it
 * says. Returns what became of it. */
static enum xd_reload_rollout adopt(struct xd_rollout *ro,
				    const struct xd_rollout_record *rec,
				    const char *trigger, size_t keys)
{
	struct xd_rollout_status *st = &ro->st;

	st->id = rec->id;
	xd_rollout_text_set(&st->trigger, trigger);
	st->keys = keys;
	st->started_ms = rec->started_ms;
	st->baking_ms = rec->baking_ms;
	st->ended_ms = 0;
	st->now = rec->now;
	st->rollback = rec->rollback;
	st->held = false;
	snprintf(st->by, sizeof(st->by), "%s", rec->by);
	ro->proposing = ro->deciding = false;
	ro->waiting_logged = ro->cut_logged = false;
	switch (rec->state) {
	case XD_ROLLOUT_PROMOTED:
		/* promoted at once: the store saves it as it comes */
		xd_cache_promote(ro->cache);
		ro->stable_revision = ro->revision;
		move_to(ro, XD_ROLLOUT_PROMOTED, rec->reason, false);
		st->ended_ms = rec->ended_ms;
		xd_log(rec->now || rec->rollback ? XD_LOG_WARN : XD_LOG_INFO,
		       "rollout %llu (%s): the change is promoted already (%s): every node is served it now%s",
		       (unsigned long long)rec->id, trigger, rec->reason,
		       rec->now || rec->rollback ? ", without a bake" : "");
		return XD_RELOAD_PROMOTED;
	case XD_ROLLOUT_FAILED:
	case XD_ROLLOUT_ABORTED:
		xd_cache_unstage(ro->cache);
		move_to(ro, rec->state, rec->reason, false);
		st->held = true;
		st->ended_ms = rec->ended_ms;
		xd_error("rollout %llu (%s): the change was %s (%s): it is served to no node until a newer change",
			 (unsigned long long)rec->id, trigger,
			 xd_rollout_state_name(rec->state), rec->reason);
		return XD_RELOAD_ROLLED_BACK;
	default:
		move(ro, XD_ROLLOUT_CANARY, "the fleet's rollout under way");
		st->reason[0] = '\0';
		xd_info("rollout %llu (%s): %zu snapshot key%s changed; the rollout under way (%s, by %s): served to the canaries first",
			(unsigned long long)rec->id, trigger, keys,
			keys == 1 ? "" : "s", xd_rollout_state_name(rec->state),
			rec->by);
		count_nodes(ro);
		count_local(ro);
		merge_fleet(ro);
		if (rec->state == XD_ROLLOUT_BAKING)
			baking(ro, rec);
		uv_timer_start(&ro->timer, on_tick, XD_ROLLOUT_TICK_MS,
			       XD_ROLLOUT_TICK_MS);
		return XD_RELOAD_STAGED;
	}
}

/* A change back to what the record's promotion replaced: promoted at
 * once, as a rollback, and recorded so. */
static enum xd_reload_rollout roll_back_to(struct xd_rollout *ro,
					   const struct xd_rollout_record *rec,
					   uint64_t id, const char *trigger,
					   size_t keys)
{
	struct xd_rollout_status *st = &ro->st;
	struct xd_rollout_record now;
	char why[256];

	snprintf(why, sizeof(why),
		 "a return to the snapshots rollout %llu replaced: a rollback, promoted without a bake",
		 (unsigned long long)rec->id);
	st->id = id;
	xd_rollout_text_set(&st->trigger, trigger);
	st->keys = keys;
	st->started_ms = xd_wall_ms();
	st->baking_ms = 0;
	st->rollback = true;
	st->now = st->held = false;
	xd_cache_promote(ro->cache);
	record_of(ro, &now);
	ro->stable_revision = ro->revision;
	move_to(ro, XD_ROLLOUT_PROMOTED, why, false);
	now.state = XD_ROLLOUT_PROMOTED;
	now.rollback = true;
	now.ended_ms = st->ended_ms;
	xd_rollout_text_set(&now.reason, why);
	xd_fleet_propose(ro->fleet, &now, NULL, NULL);
	xd_rollout_record_clear(&now);
	xd_warn("rollout %llu (%s): %s: every node is served it now",
		(unsigned long long)id, trigger, why);
	return XD_RELOAD_PROMOTED;
}

/* A reload that an operator asked for retries a change that failed
 * (files: the same change; etcd knows a newer one by its revision). */
static bool retried(const struct xd_rollout *ro, const char *trigger)
{
	return !xd_fleet_shared(ro->fleet) && strcmp(trigger, "start-up") != 0;
}

static size_t install(void *rollout, struct xd_snapshot **snaps, size_t n,
		      const char *trigger, int64_t revision,
		      enum xd_reload_rollout *outcome)
{
	struct xd_rollout *ro = rollout;
	struct xd_rollout_status *st = &ro->st;
	const struct xd_rollout_record *rec = xd_fleet_record(ro->fleet);
	bool was = active(st->state), same;
	size_t keys;
	uint64_t id;

	XD_ASSERT_LOOP();
	keys = xd_cache_stage(ro->cache, snaps, n, &same);
	*outcome = keys > 0 ? XD_RELOAD_STAGED : XD_RELOAD_UNSTAGED;
	if (was && keys > 0 && same) {
		xd_info("rollout %llu goes on: the reload (%s) changes nothing it staged",
			(unsigned long long)st->id, trigger);
		return keys;
	}
	if (keys == 0) {
		if (was) {
			/* xd_cache_stage dropped the candidate: canaries are back */
			if (ours(ro, rec) && active(rec->state))
				propose_move(ro, rec, XD_ROLLOUT_ABORTED,
					     "replaced by a reload that changes nothing",
					     NULL, NULL, NULL);
			move(ro, XD_ROLLOUT_ABORTED,
			     "replaced by a reload that changes nothing");
			xd_warn("rollout %llu replaced by a reload (%s) that changes nothing: canaries are served the stable snapshots again",
				(unsigned long long)st->id, trigger);
		}
		return 0;
	}
	if (was)
		xd_info("rollout %llu replaced by a new reload (%s)",
			(unsigned long long)st->id, trigger);
	ro->revision = revision;
	find_changed(ro);
	local_reset(ro);
	id = xd_fleet_shared(ro->fleet) ? (uint64_t)revision :
	     rec != NULL && rec->id >= st->id ? rec->id + 1 : st->id + 1;
	if (ours(ro, rec) && (uint64_t)revision <= rec->id &&
	    !(rec->state >= XD_ROLLOUT_FAILED && retried(ro, trigger))) {
		*outcome = adopt(ro, rec, trigger, keys);
		return *outcome == XD_RELOAD_ROLLED_BACK ? 0 : keys;
	}
	if (ours(ro, rec) && active(rec->state)) {
		/* the same change written again: its rollout goes on */
		*outcome = adopt(ro, rec, trigger, keys);
		return keys;
	}
	if (rec != NULL && rec->state == XD_ROLLOUT_PROMOTED &&
	    strcmp(rec->stable, st->candidate) == 0 && !behind(ro, rec)) {
		*outcome = roll_back_to(ro, rec, id, trigger, keys);
		return keys;
	}
	start(ro, id, trigger, keys);
	return keys;
}

static void replaced(void *rollout, int64_t revision)
{
	struct xd_rollout *ro = rollout;

	XD_ASSERT_LOOP();
	ro->stable_revision = revision;
}

const struct xd_reload_installer xd_rollout_installer = {install, replaced};

/* ---------------- operators ---------------- */

/* Why an operator's promote or abort finds nothing to act on. */
static int not_active(const struct xd_rollout *ro,
		      const struct xd_rollout_record *rec, char *why, size_t len)
{
	if (rec == NULL && ro->st.id == 0)
		snprintf(why, len, "no rollout is under way: no reload has changed anything since xdsd started");
	else
		snprintf(why, len, "no rollout is under way: rollout %llu is %s",
			 (unsigned long long)(rec != NULL ? rec->id : ro->st.id),
			 xd_rollout_state_name(rec != NULL ? rec->state : ro->st.state));
	return -1;
}

/* An operator's promote (`promote`) or abort of the fleet's rollout. */
static int operator_ends(struct xd_rollout *ro, bool promote, const char *who,
			 xd_rollout_done_fn done, void *arg, char *why,
			 size_t len)
{
	const struct xd_rollout_record *rec = xd_fleet_record(ro->fleet);
	char reason[XD_ROLLOUT_TEXT_MAX];

	XD_ASSERT_LOOP();
	if (rec == NULL || !active(rec->state))
		return not_active(ro, rec, why, len);
	if (!xd_fleet_reachable(ro->fleet)) {
		snprintf(why, len, "%s cannot be written now: the rollout is left as it is",
			 xd_fleet_where(ro->fleet));
		return -1;
	}
	snprintf(reason, sizeof(reason), "%s by %s",
		 promote ? "promoted" : "aborted", who);
	propose_move(ro, rec, promote ? XD_ROLLOUT_PROMOTED : XD_ROLLOUT_ABORTED,
		     reason, who, done, arg);
	return 0;
}

int xd_rollout_promote(struct xd_rollout *ro, const char *who,
		       xd_rollout_done_fn done, void *arg, char *why,
		       size_t len)
{
	return operator_ends(ro, true, who, done, arg, why, len);
}

int xd_rollout_abort(struct xd_rollout *ro, const char *who,
		     xd_rollout_done_fn done, void *arg, char *why, size_t len)
{
	return operator_ends(ro, false, who, done, arg, why, len);
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

struct xd_fleet *xd_rollout_fleet(const struct xd_rollout *ro)
{
	return ro->fleet;
}

static void closed(uv_handle_t *h)
{
	struct xd_rollout *ro = h->data;

	if (--ro->open_handles > 0)
		return;
	xd_rollout_report_clear(&ro->st.local);
	xd_rollout_report_clear(&ro->st.fleet);
	xd_rollout_report_clear(&ro->nodes);
	free(ro->st.trigger);
	names_free(ro->changed, ro->nchanged);
	names_free(ro->said_stuck, ro->nsaid_stuck);
	free(ro);
}

void xd_rollout_stop(struct xd_rollout *ro)
{
	if (ro == NULL)
		return;
	XD_ASSERT_LOOP();
	xd_sessions_on_event(ro->sessions, NULL, NULL);
	xd_sessions_set_canary_rule(ro->sessions, NULL, NULL);
	xd_canaries_clear(&ro->canaries); /* no event comes any more */
	xd_fleet_on_record(ro->fleet, NULL, NULL);
	xd_fleet_on_report(ro->fleet, NULL, NULL);
	uv_close((uv_handle_t *)&ro->timer, closed);
	uv_close((uv_handle_t *)&ro->nodes_timer, closed);
}
