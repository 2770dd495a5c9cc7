/* SPDX-License-Identifier: Apache-2.0 */
#include "reload/stages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/common.h"
#include "util/jsonw.h"
#include "util/log.h"
#include "util/loop_thread.h"

void xd_stage_log_errors(const struct xd_diag *d)
{
	for (size_t i = 0; i < d->count; i++)
		xd_error("%s", d->msgs[i]);
	if (d->dropped > 0)
		xd_error("(%zu more errors not shown)", d->dropped);
}

void xd_stage_log_snapshots(struct xd_snapshot *const *snaps, size_t n)
{
	char desc[256];

	for (size_t i = 0; i < n; i++) {
		xd_snapshot_describe(snaps[i], desc, sizeof(desc));
		xd_info("snapshot '%s': %s", xd_snapshot_key(snaps[i]), desc);
	}
}

/* ---------------- source and load ---------------- */

/*
 * On the thread pool: each snapshot of `load` the same as the one
 * served (`prev`) is that one, the new copy dropped here. Installing
 * it would keep the one served anyway; dropping the copies here, not
 * on the loop, keeps the loop's part of a reload to what changed.
 */
static void keep_served(struct xd_snapshot *const *prev, size_t nprev,
			struct xd_load *load)
{
	for (size_t i = 0; i < load->nsnaps; i++) {
		struct xd_snapshot *old = xd_load_find(
			prev, nprev, xd_snapshot_key(load->snaps[i]));

		if (old != NULL && old != load->snaps[i] &&
		    xd_snapshot_same(old, load->snaps[i])) {
			xd_snapshot_unref(load->snaps[i]);
			load->snaps[i] = xd_snapshot_ref(old);
		}
	}
}

void xd_stage_load(const struct xd_stages *s, struct xd_change *c,
		   const struct xd_snapsource *src, void *taken,
		   struct xd_parsed_cache *parsed,
		   struct xd_snapshot *const *prev, size_t nprev)
{
	struct xd_load *out = &c->load;
	struct xd_snapkey *keys = NULL;
	struct xd_diag why = XD_DIAG_INIT;
	struct timespec t0, t1;
	int64_t at_ms;
	size_t nkeys = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	c->read_rc = src->ops->read(src->self, taken, parsed, &keys, &nkeys,
				    &at_ms, &why);
	snprintf(c->read_error, sizeof(c->read_error), "%s",
		 why.count > 0 ? why.msgs[0] : "");
	xd_load_keys_cached(s->schema, keys, nkeys, &why, prev, nprev, parsed,
			    out);
	xd_diag_clear(&why);
	/* the read is part of the load's time, as it always was */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (out->rc == 0)
		keep_served(prev, nprev, out);
}

/* ---------------- verdict ---------------- */

static bool has_key(struct xd_snapshot *const *snaps, size_t n,
		    const char *key)
{
	return xd_load_find(snaps, n, key) != NULL;
}

/*
 * A reload may not leave any node without a snapshot: every node served
 * before must still find its key's snapshot or the default one. Without
 * a default snapshot in the new set, that means every key served before
 * (the default one included) must still be there. Adds an error per key
 * that would be lost; the reload then fails as a whole.
 */
static void check_nodes_keep_a_snapshot(const struct xd_cache *cache,
					const char *dir, struct xd_load *load)
{
	struct xd_snapshot **old;
	size_t nold;

	if (load->rc != 0 ||
	    has_key(load->snaps, load->nsnaps, XD_CACHE_DEFAULT_KEY))
		return;
	old = xd_cache_owned(cache, &nold); /* a rollout's candidates too */
	for (size_t i = 0; i < nold; i++) {
		const char *key = xd_snapshot_key(old[i]);

		if (has_key(load->snaps, load->nsnaps, key))
			continue;
		if (strcmp(key, XD_CACHE_DEFAULT_KEY) == 0)
			xd_diag_add(&load->diag, "%s: the default snapshot is gone and nodes without a snapshot of their own would be left with none",
				    dir);
		else
			xd_diag_add(&load->diag, "%s: snapshot '%s' is gone and there is no default snapshot: its nodes would be left with none",
				    dir, key);
	}
	for (size_t i = 0; i < nold; i++)
		xd_snapshot_unref(old[i]);
	free(old);
	if (xd_diag_total(&load->diag) != 0)
		load->rc = -1; /* xd_load_free releases what it loaded */
}

bool xd_stage_verdict(const struct xd_stages *s, const char *dir,
		      struct xd_load *load)
{
	check_nodes_keep_a_snapshot(s->cache, dir, load);
	return load->rc == 0;
}

/* ---------------- load: the last good state ---------------- */

void xd_stage_load_saved(const struct xd_stages *s, struct xd_change *c)
{
	const struct xd_snapsource *src = &s->saved_source;
	struct xd_load *out = &c->saved.load;
	struct xd_diag none = XD_DIAG_INIT;
	struct xd_snapkey *keys = NULL;
	size_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	/* no take: it is read whole (laststate.h) */
	rc = src->ops->read(src->self, NULL, NULL, &keys, &n,
			    &c->saved.saved_at_ms, &c->saved.why);
	if (rc != 0) {
		xd_snapdir_free(keys, n);
		c->saved.found = rc > 0 ? XD_LASTSTATE_NONE : XD_LASTSTATE_BAD;
		return;
	}
	/* loaded as the files it holds, with nothing to reuse */
	xd_load_keys(s->schema, keys, n, &none, NULL, 0, out);
	if (out->rc == 0) {
		c->saved.found = XD_LASTSTATE_LOADED;
		return;
	}
	/* saved by an xdsd whose checks were looser (an older schema) */
	xd_diag_add(&c->saved.why, "%s: what it holds no longer loads (%zu error%s):",
		    xd_laststate_info(s->last)->path, xd_diag_total(&out->diag),
		    xd_diag_total(&out->diag) == 1 ? "" : "s");
	xd_diag_append(&c->saved.why, &out->diag);
	xd_load_free(out);
	c->saved.found = XD_LASTSTATE_BAD;
}

/*
 * Nothing is served and the snapshots were refused (`refused`): serves
 * the last good state c->saved found instead, or says why it cannot.
 * Returns whether it serves it; `*changed` counts the snapshots put in.
 */
bool xd_stage_place_saved(const struct xd_stages *s, struct xd_change *c,
			  const struct xd_diag *refused, size_t *changed)
{
	const struct xd_laststate_info *info = xd_laststate_info(s->last);
	struct xd_snapshot **snaps;
	size_t n;

	if (c->saved.found == XD_LASTSTATE_NONE) {
		xd_error("no last good state saved in %s to serve instead",
			 info->dir);
		return false;
	}
	if (c->saved.found == XD_LASTSTATE_BAD) {
		xd_stage_log_errors(&c->saved.why);
		xd_error("the last good state in %s is unusable: not serving it",
			 info->dir);
		return false;
	}
	snaps = xd_load_take(&c->saved.load, &n);
	xd_stage_log_snapshots(snaps, n);
	*changed = xd_cache_replace(s->cache, snaps, n);
	free(snaps);
	xd_laststate_serving(s->last, s->dir, c->saved.saved_at_ms, refused);
	return true;
}

void xd_stage_saved_done(struct xd_change *c)
{
	xd_load_free(&c->saved.load);
	xd_diag_clear(&c->saved.why);
	c->saved.wanted = false;
}

/* ---------------- placement ---------------- */

/*
 * Puts a good load's snapshots (`snaps`, taken) in use and returns the
 * keys changed; `*outcome`: what became of the change (a rollout may
 * hold it for its canaries, or refuse it: then it is not yet, or not
 * at all, the last good state, xd_laststate_held).
 *
 * Without a rollout, everyone is served them. With one, a reload's
 * change goes to the canaries first. The first snapshots served go to
 * everyone too, unless a last good state was saved (c->saved, loaded
 * for this): then every node is served that state, the last one every
 * node had, and what the snapshots change from it goes to the canaries
 * first, as a reload's change would. A restart after a rollout that
 * failed thus does not hand the files it rejected to the whole fleet.
 */
size_t xd_stage_place(const struct xd_stages *s, struct xd_change *c,
		      struct xd_snapshot **snaps, size_t n,
		      const char *trigger, bool serving,
		      enum xd_reload_rollout *outcome)
{
	struct xd_snapshot **saved;
	size_t nsaved, keys;
	char when[32];

	*outcome = XD_RELOAD_UNSTAGED;
	if (s->install != NULL && serving)
		return s->install->install(s->install_arg, snaps, n, trigger,
					   c->changed, outcome);
	if (s->install == NULL || !c->saved.wanted ||
	    c->saved.found != XD_LASTSTATE_LOADED) {
		if (s->install != NULL && c->saved.wanted &&
		    c->saved.found == XD_LASTSTATE_BAD) {
			xd_stage_log_errors(&c->saved.why);
			xd_warn("the last good state in %s is unusable: the snapshots of %s go to every node at once",
				xd_laststate_info(s->last)->dir, s->dir);
		}
		keys = xd_cache_replace(s->cache, snaps, n);
		if (s->install != NULL)
			s->install->replaced(s->install_arg, c->changed);
		return keys;
	}
	XD_ASSERT_INFO(s->last != NULL,
		       "saved state of %s loaded without a state directory",
		       s->dir);
	saved = xd_load_take(&c->saved.load, &nsaved);
	xd_cache_replace(s->cache, saved, nsaved);
	free(saved);
	s->install->replaced(s->install_arg, 0);
	keys = s->install->install(s->install_arg, snaps, n, trigger,
				   c->changed, outcome);
	xd_jw_time(when, c->saved.saved_at_ms);
	if (*outcome == XD_RELOAD_ROLLED_BACK)
		return nsaved; /* refused: the saved state is all that is served */
	if (keys == 0) {
		xd_info("%s: the snapshots of %s are the last good state saved %s: every node is served them",
			trigger, s->dir, when);
		/* the saved state is what the source holds: its revision */
		s->install->replaced(s->install_arg, c->changed);
		return nsaved;
	}
	if (*outcome == XD_RELOAD_STAGED)
		xd_warn("%s: the snapshots of %s differ from the last good state saved %s in %zu snapshot key%s: every node is served the saved state, and the change goes to the canaries first",
			trigger, s->dir, when, keys, keys == 1 ? "" : "s");
	return keys;
}

/* ---------------- persist ---------------- */

/* A good load is in use: it is the last good state; or, staged, it is
 * held until its rollout is promoted; or, refused by its rollout, it is
 * not (and what was held for a rollout it replaces is dropped). */
void xd_stage_persist(const struct xd_stages *s, struct xd_load *load,
		      enum xd_reload_rollout outcome)
{
	if (s->last == NULL)
		return;
	if (outcome == XD_RELOAD_STAGED)
		xd_laststate_held(s->last, s->dir, load);
	else if (outcome == XD_RELOAD_ROLLED_BACK)
		xd_laststate_proven(s->last, false);
	else
		xd_laststate_accepted(s->last, s->dir, load);
}

void xd_stage_source_over(const struct xd_change *c,
			  const struct xd_snapsource *src)
{
	if (src->ops->read_done != NULL)
		src->ops->read_done(src->self, c->read_rc, c->read_error);
}

