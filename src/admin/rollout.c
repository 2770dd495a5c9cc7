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
	for (size_t i = 0; i < st->nkept; i++)
		nack_json(w, &st->kept[i]);
	xd_jw_arr_end(w);
	xd_jw_obj_end(w);
}
