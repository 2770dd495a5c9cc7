/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/reloads.h"

#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "util/xalloc.h"
#include "util/text.h"

/* What is easy to miss: a key that goes (its nodes fall back to the
 * default snapshot), a resource that goes while nodes still ask for it
 * by name, a change that reaches every node. */
static void warnings(struct xd_jw *w, const struct xd_diff *d,
		     const struct xd_reach *reach)
{
	char msg[512];

	xd_jw_key(w, "warnings");
	xd_jw_arr(w);
	for (size_t i = 0; i < d->nkeys; i++) {
		const struct xd_diff_key *k = &d->keys[i];
		const struct xd_reach_key *rk = reach ? &reach->keys[i] : NULL;

		if (k->change == XD_DIFF_REMOVED &&
		    strcmp(k->key, XD_CACHE_DEFAULT_KEY) != 0) {
			if (rk != NULL && rk->rest > 0)
				snprintf(msg, sizeof(msg), "snapshot '%.200s' is removed: its %zu connected node%s (%zu stream%s, %zu REST-JSON poller%s) fall back to the default snapshot",
					 k->key, rk->nodes, xd_plural(rk->nodes),
					 k->streams, xd_plural(k->streams),
					 rk->rest, xd_plural(rk->rest));
			else if (rk != NULL)
				snprintf(msg, sizeof(msg), "snapshot '%.200s' is removed: its %zu connected node%s (%zu stream%s) fall back to the default snapshot",
					 k->key, rk->nodes, xd_plural(rk->nodes),
					 k->streams, xd_plural(k->streams));
			else
				snprintf(msg, sizeof(msg), "snapshot '%.200s' was removed: %zu stream%s moved to the default snapshot",
					 k->key, k->streams, xd_plural(k->streams));
			xd_jw_str(w, msg);
		}
		if (rk != NULL && reach->rollout && rk->canaries == 0 &&
		    k->change != XD_DIFF_REMOVED) {
			snprintf(msg, sizeof(msg), "no canary of snapshot '%.200s' is connected to any replica: a rollout of its change has nothing to prove it (require_canary: per_key waits for one)",
				 k->key);
			xd_jw_str(w, msg);
		}
		if (rk != NULL && reach->connected > 0 &&
		    rk->nodes == reach->connected) {
			snprintf(msg, sizeof(msg), "the change of snapshot '%.200s' reaches every connected node (%zu)",
				 k->key, reach->connected);
			xd_jw_str(w, msg);
		}
	}
	for (size_t i = 0; reach != NULL && i < reach->nasked; i++) {
		const struct xd_reach_asked *a = &reach->asked[i];
		const struct xd_diff_key *k = &d->keys[a->key];
		const struct xd_diff_section *s = &k->sections[a->section];

		snprintf(msg, sizeof(msg), "%s '%.200s' is removed from snapshot '%.200s', but %zu of its connected nodes still ask%s for it by name",
			 xd_section(s->section).noun, s->res[a->res].name, k->key,
			 a->nodes, a->nodes == 1 ? "s" : "");
		xd_jw_str(w, msg);
	}
	xd_jw_arr_end(w);
}

static void versions(struct xd_jw *w, const char *before, const char *after)
{
	xd_jw_key(w, "version_before");
	xd_jw_str(w, before);
	xd_jw_key(w, "version_after");
	xd_jw_str(w, after);
}

static void section_json(struct xd_jw *w, const struct xd_diff_section *s)
{
	xd_jw_obj(w);
	xd_jw_key(w, "type");
	xd_jw_str(w, xd_section(s->section).key);
	versions(w, s->before, s->after);
	xd_jw_key(w, "added");
	xd_jw_uint(w, s->added);
	xd_jw_key(w, "removed");
	xd_jw_uint(w, s->removed);
	xd_jw_key(w, "changed");
	xd_jw_uint(w, s->changed);
	if (s->nres > 0) {
		xd_jw_key(w, "resources");
		xd_jw_arr(w);
		for (size_t r = 0; r < s->nres; r++) {
			xd_jw_obj(w);
			xd_jw_key(w, "name");
			xd_jw_str(w, s->res[r].name);
			xd_jw_key(w, "change");
			xd_jw_str(w, xd_diff_change_name(s->res[r].change));
			versions(w, s->res[r].before, s->res[r].after);
			/* a reload's summary names them, without text */
			if (s->res[r].text != NULL) {
				xd_jw_key(w, "diff");
				xd_jw_str(w, s->res[r].text);
			}
			xd_jw_obj_end(w);
		}
		xd_jw_arr_end(w);
	}
	xd_jw_obj_end(w);
}

static void key_json(struct xd_jw *w, const struct xd_diff_key *k,
		     const struct xd_reach_key *rk, bool rollout)
{
	xd_jw_obj(w);
	xd_jw_key(w, "key");
	xd_jw_str(w, k->key);
	xd_jw_key(w, "change");
	xd_jw_str(w, xd_diff_change_name(k->change));
	versions(w, k->before, k->after);
	if (k->change == XD_DIFF_REMOVED) {
		xd_jw_key(w, "streams_moved");
		xd_jw_uint(w, k->streams);
	}
	if (rk != NULL) {
		xd_jw_key(w, "nodes");
		xd_jw_uint(w, rk->nodes);
		xd_jw_key(w, "rest_pollers");
		xd_jw_uint(w, rk->rest);
		xd_jw_key(w, "node_ids");
		xd_jw_arr(w);
		for (size_t i = 0; i < rk->nids; i++)
			xd_jw_str(w, rk->ids[i]);
		xd_jw_arr_end(w);
		if (rollout) {
			xd_jw_key(w, "canaries");
			xd_jw_uint(w, rk->canaries);
		}
	}
	xd_jw_key(w, "types");
	xd_jw_arr(w);
	for (size_t s = 0; s < k->nsections; s++)
		section_json(w, &k->sections[s]);
	xd_jw_arr_end(w);
	xd_jw_obj_end(w);
}

static void diff_json(struct xd_jw *w, const struct xd_diff *d,
		      const struct xd_reach *reach, bool dry)
{
	size_t shown = dry ? XD_PREVIEW_JSON_KEYS : XD_RELOAD_JSON_KEYS;

	if (shown > d->nkeys)
		shown = d->nkeys;
	xd_jw_obj(w);
	xd_jw_key(w, "changed");
	xd_jw_bool(w, d->nkeys > 0);
	xd_jw_key(w, "added");
	xd_jw_uint(w, d->added);
	xd_jw_key(w, "removed");
	xd_jw_uint(w, d->removed);
	xd_jw_key(w, "changed_resources");
	xd_jw_uint(w, d->changed);
	xd_jw_key(w, "cut");
	xd_jw_bool(w, d->cut);
	if (reach != NULL) {
		xd_jw_key(w, "connected_nodes");
		xd_jw_uint(w, reach->connected);
		xd_jw_key(w, "rest_pollers");
		xd_jw_uint(w, reach->rest_pollers);
	}
	warnings(w, d, reach);
	xd_jw_key(w, "snapshots");
	xd_jw_arr(w);
	for (size_t i = 0; i < shown; i++)
		key_json(w, &d->keys[i], reach ? &reach->keys[i] : NULL,
			 reach != NULL && reach->rollout);
	xd_jw_arr_end(w);
	xd_jw_key(w, "snapshots_not_shown");
	xd_jw_uint(w, d->nkeys - shown);
	xd_jw_obj_end(w);
}

void xd_reload_record_reach_json(struct xd_jw *w,
				 const struct xd_reload_record *rec,
				 const struct xd_reach *reach)
{
	char when[32];

	/* "errors" lists the first of "error_count" */
	XD_ASSERT_INFO(rec->nkept <= rec->nerrors, "reload by %s: %zu of %zu errors kept",
		       rec->trigger, rec->nkept, rec->nerrors);
	xd_jw_obj(w);
	xd_jw_key(w, "ok");
	xd_jw_bool(w, rec->ok);
	xd_jw_key(w, "trigger");
	xd_jw_str(w, rec->trigger);
	if (rec->dry_run) {
		xd_jw_key(w, "dry_run");
		xd_jw_bool(w, true);
	}
	xd_jw_key(w, "finished");
	xd_jw_time(when, rec->at_ms);
	xd_jw_str(w, when);
	/* the etcd revision it loaded; null for the directory */
	xd_jw_key(w, "etcd_revision");
	if (rec->revision > 0)
		xd_jw_int(w, rec->revision);
	else
		xd_jw_null(w);
	xd_jw_key(w, "seconds");
	xd_jw_num(w, rec->seconds);
	xd_jw_key(w, "snapshots");
	xd_jw_uint(w, rec->snapshots);
	xd_jw_key(w, "files");
	xd_jw_uint(w, rec->files);
	xd_jw_key(w, "changed");
	xd_jw_uint(w, rec->dry_run && rec->diff != NULL ? rec->diff->nkeys :
							  rec->changed);
	/* refused, and the last good state served instead */
	xd_jw_key(w, "last_good");
	xd_jw_bool(w, rec->last_good);
	if (!rec->dry_run) {
		const char *ro = xd_reload_rollout_name(rec->rollout);

		xd_jw_key(w, "rollout");
		if (ro != NULL)
			xd_jw_str(w, ro);
		else
			xd_jw_null(w);
	}
	xd_errors_json(w, rec->nerrors, rec->errors, rec->nkept);
	if (rec->diff != NULL) {
		xd_jw_key(w, "diff");
		diff_json(w, rec->diff, reach, rec->dry_run);
	}
	xd_jw_obj_end(w);
}

void xd_reload_record_json(struct xd_jw *w, const struct xd_reload_record *rec)
{
	xd_reload_record_reach_json(w, rec, NULL);
}

void xd_errors_json(struct xd_jw *w, size_t nerrors, char *const *errors,
		    size_t nkept)
{
	xd_jw_key(w, "error_count");
	xd_jw_uint(w, nerrors);
	xd_jw_key(w, "errors");
	xd_jw_arr(w);
	for (size_t i = 0; i < nkept; i++)
		xd_jw_str(w, errors[i]);
	xd_jw_arr_end(w);
}
