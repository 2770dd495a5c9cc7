/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/rollout.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "util/clock.h"
#include "util/loop_thread.h"

static void nack_json(struct xd_jw *w, const struct xd_rollout_nack *n)
{
	xd_jw_obj(w);
	xd_jw_key(w, "node_id");
	xd_jw_str(w, n->node_id);
	xd_jw_key(w, "node_cluster");
	xd_jw_str(w, n->node_cluster);
	xd_jw_key(w, "type");
	xd_jw_str(w, n->type);
	xd_jw_key(w, "version");
	xd_jw_str(w, n->version);
	xd_jw_key(w, "message");
	xd_jw_str(w, n->message);
	xd_jw_key(w, "at");
	xd_jw_time_or_null(w, n->at_ms);
	xd_jw_obj_end(w);
}

static void names_json(struct xd_jw *w, const char *key, char *const *names,
		       size_t n)
{
	xd_jw_key(w, key);
	xd_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		xd_jw_str(w, names[i]);
	xd_jw_arr_end(w);
}

/* One replica's canaries on the rollout. */
static void replica_json(struct xd_jw *w, const char *name,
			 const struct xd_rollout_report *r, bool self)
{
	xd_jw_obj(w);
	xd_jw_key(w, "replica");
	xd_jw_str(w, name);
	xd_jw_key(w, "self");
	xd_jw_bool(w, self);
	xd_jw_key(w, "canaries");
	xd_jw_uint(w, r->canaries);
	xd_jw_key(w, "answered");
	xd_jw_uint(w, r->answered);
	xd_jw_key(w, "nacks");
	xd_jw_uint(w, r->nacks);
	names_json(w, "waiting", r->waiting, r->nwaiting);
	names_json(w, "stuck", r->stuck, r->nstuck);
	xd_jw_obj_end(w);
}

/* The record as the fleet holds it, or null. */
static void record_json(struct xd_jw *w, const struct xd_rollout_record *rec)
{
	if (rec == NULL) {
		xd_jw_null(w);
		return;
	}
	xd_jw_obj(w);
	xd_jw_key(w, "id");
	xd_jw_uint(w, rec->id);
	xd_jw_key(w, "state");
	xd_jw_str(w, xd_rollout_state_name(rec->state));
	xd_jw_key(w, "candidate");
	xd_jw_str(w, rec->candidate);
	xd_jw_key(w, "stable");
	xd_jw_str(w, rec->stable);
	xd_jw_key(w, "started");
	xd_jw_time_or_null(w, rec->started_ms);
	xd_jw_key(w, "baking_since");
	xd_jw_time_or_null(w, rec->baking_ms);
	xd_jw_key(w, "ended");
	xd_jw_time_or_null(w, rec->ended_ms);
	xd_jw_key(w, "now");
	xd_jw_bool(w, rec->now);
	xd_jw_key(w, "rollback");
	xd_jw_bool(w, rec->rollback);
	xd_jw_key(w, "trigger");
	xd_jw_str(w, rec->trigger);
	xd_jw_key(w, "by");
	xd_jw_str(w, rec->by);
	xd_jw_key(w, "reason");
	xd_jw_str(w, rec->reason);
	names_json(w, "keys", rec->keys, rec->nkeys);
	xd_jw_key(w, "keys_total");
	xd_jw_uint(w, rec->keys_total);
	names_json(w, "uncovered", rec->uncovered, rec->nuncovered);
	xd_jw_obj_end(w);
}

/* What is the fleet's: per key, the canaries, the replicas, the
 * record and where it is kept. */
static void fleet_json(struct xd_jw *w, const struct xd_rollout *ro)
{
	const struct xd_rollout_status *st = xd_rollout_status(ro);
	struct xd_fleet *f = xd_rollout_fleet(ro);
	const struct xd_config_rollout_names {
		const char *require, *on_timeout;
	} names = {
		st->require_canary == XD_REQUIRE_PER_KEY ? "per_key" :
		st->require_canary == XD_REQUIRE_ANY ? "any" : "none",
		st->on_canary_timeout == XD_CANARY_TIMEOUT_FAIL ? "fail" : "skip",
	};

	xd_jw_key(w, "canary_timeout_seconds");
	xd_jw_num(w, (double)st->canary_timeout_ms / 1000.0);
	xd_jw_key(w, "require_canary");
	xd_jw_str(w, names.require);
	xd_jw_key(w, "on_canary_timeout");
	xd_jw_str(w, names.on_timeout);
	xd_jw_key(w, "held");
	xd_jw_bool(w, st->held);
	xd_jw_key(w, "now");
	xd_jw_bool(w, st->now);
	xd_jw_key(w, "rollback");
	xd_jw_bool(w, st->rollback);
	xd_jw_key(w, "by");
	xd_jw_str(w, st->by);
	xd_jw_key(w, "candidate");
	xd_jw_str(w, st->candidate);
	xd_jw_key(w, "waiting_fleet");
	xd_jw_bool(w, st->waiting_fleet);
	xd_jw_key(w, "key_canaries");
	xd_jw_arr(w);
	for (size_t i = 0; i < st->fleet.nkeys; i++) {
		const struct xd_rollout_key_count *k = &st->fleet.keys[i];

		xd_jw_obj(w);
		xd_jw_key(w, "key");
		xd_jw_str(w, k->key);
		xd_jw_key(w, "canaries");
		xd_jw_uint(w, k->canaries);
		xd_jw_key(w, "acked");
		xd_jw_uint(w, k->acked);
		xd_jw_key(w, "proven");
		xd_jw_bool(w, k->proven);
		xd_jw_obj_end(w);
	}
	xd_jw_arr_end(w);
	names_json(w, "waiting", st->fleet.waiting, st->fleet.nwaiting);
	xd_jw_key(w, "waiting_total");
	xd_jw_uint(w, st->fleet.waiting_total);
	names_json(w, "stuck", st->fleet.stuck, st->fleet.nstuck);
	xd_jw_key(w, "stuck_total");
	xd_jw_uint(w, st->fleet.stuck_total);
	xd_jw_key(w, "replicas");
	xd_jw_arr(w);
	replica_json(w, xd_fleet_replica(f), &st->local, true);
	for (size_t i = 0; i < xd_fleet_nreports(f); i++) {
		const struct xd_rollout_report *r = xd_fleet_report(f, i);

		if (r->rollout == st->id && strcmp(r->candidate, st->candidate) == 0)
			replica_json(w, r->replica, r, false);
	}
	xd_jw_arr_end(w);
	xd_jw_key(w, "fleet");
	xd_jw_obj(w);
	xd_jw_key(w, "replica");
	xd_jw_str(w, xd_fleet_replica(f));
	xd_jw_key(w, "where");
	xd_jw_str(w, xd_fleet_where(f));
	xd_jw_key(w, "shared");
	xd_jw_bool(w, xd_fleet_shared(f));
	xd_jw_key(w, "reachable");
	xd_jw_bool(w, xd_fleet_reachable(f));
	xd_jw_key(w, "replicas_reporting");
	xd_jw_uint(w, xd_fleet_nreports(f) + 1);
	xd_jw_key(w, "record");
	record_json(w, xd_fleet_record(f));
	xd_jw_obj_end(w);
}

static void version_or_null(struct xd_jw *w, const struct xd_snapshot *s)
{
	if (s != NULL)
		xd_jw_str(w, xd_snapshot_version(s));
	else
		xd_jw_null(w);
}

/* The keys the staged set changes, by key: the candidate's version and
 * the stable one's (null where the key has none of its own). */
static void changes_json(struct xd_jw *w, const struct xd_cache *cache)
{
	size_t nc, ns, i = 0, j = 0;
	struct xd_snapshot **cand, **stable;

	xd_jw_arr(w);
	if (!xd_cache_staged(cache)) { /* at rest: nothing differs */
		xd_jw_arr_end(w);
		return;
	}
	cand = xd_cache_candidates(cache, &nc);
	stable = xd_cache_snapshots(cache, &ns);
	while (i < nc || j < ns) {
		int cmp = i == nc ? 1 :
			  j == ns ? -1 :
				    strcmp(xd_snapshot_key(cand[i]),
					   xd_snapshot_key(stable[j]));
		struct xd_snapshot *c = cmp <= 0 ? cand[i++] : NULL;
		struct xd_snapshot *s = cmp >= 0 ? stable[j++] : NULL;

		if (c == s) /* the same snapshot: not changed */
			continue;
		xd_jw_obj(w);
		xd_jw_key(w, "key");
		xd_jw_str(w, xd_snapshot_key(c != NULL ? c : s));
		xd_jw_key(w, "version");
		version_or_null(w, c);
		xd_jw_key(w, "previous_version");
		version_or_null(w, s);
		xd_jw_obj_end(w);
	}
	xd_jw_arr_end(w);
	for (i = 0; i < nc; i++)
		xd_snapshot_unref(cand[i]);
	for (j = 0; j < ns; j++)
		xd_snapshot_unref(stable[j]);
	free(cand);
	free(stable);
}

void xd_rollout_json(struct xd_jw *w, const struct xd_rollout *ro,
		     const struct xd_cache *cache)
{
	const struct xd_rollout_status *st;

	XD_ASSERT_LOOP();
	xd_jw_obj(w);
	xd_jw_key(w, "configured");
	xd_jw_bool(w, ro != NULL);
	if (ro == NULL) {
		xd_jw_obj_end(w);
		return;
	}
	st = xd_rollout_status(ro);
	xd_jw_key(w, "state");
	xd_jw_str(w, xd_rollout_state_name(st->state));
	xd_jw_key(w, "id");
	xd_jw_uint(w, st->id);
	xd_jw_key(w, "trigger");
	if (st->trigger != NULL)
		xd_jw_str(w, st->trigger);
	else
		xd_jw_null(w);
	xd_jw_key(w, "keys");
	xd_jw_uint(w, st->keys);
	xd_jw_key(w, "started");
	xd_jw_time_or_null(w, st->started_ms);
	xd_jw_key(w, "baking_since");
	xd_jw_time_or_null(w, st->baking_ms);
	xd_jw_key(w, "ended");
	xd_jw_time_or_null(w, st->ended_ms);
	xd_jw_key(w, "bake_seconds");
	xd_jw_num(w, (double)st->bake_ms / 1000.0);
	if (st->state == XD_ROLLOUT_BAKING) {
		int64_t left = st->baking_ms + (int64_t)st->bake_ms - xd_wall_ms();

		xd_jw_key(w, "bake_left_seconds");
		xd_jw_num(w, left > 0 ? (double)left / 1000.0 : 0.0);
	}
	xd_jw_key(w, "timeout_seconds");
	xd_jw_num(w, (double)st->timeout_ms / 1000.0);
	xd_jw_key(w, "canaries");
	xd_jw_uint(w, st->canaries);
	xd_jw_key(w, "answered");
	xd_jw_uint(w, st->answered);
	xd_jw_key(w, "nacks");
	xd_jw_uint(w, st->nacks);
	xd_jw_key(w, "max_nacks");
	xd_jw_uint(w, st->max_nacks);
	xd_jw_key(w, "reason");
	xd_jw_str(w, st->reason);
	xd_jw_key(w, "changes");
	changes_json(w, cache);
	xd_jw_key(w, "nack_list");
	xd_jw_arr(w);
	for (size_t i = 0; i < st->fleet.nnack_list; i++)
		nack_json(w, &st->fleet.nack_list[i]);
	xd_jw_arr_end(w);
	fleet_json(w, ro);
	xd_jw_obj_end(w);
}
