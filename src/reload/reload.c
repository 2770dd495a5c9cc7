/* SPDX-License-Identifier: Apache-2.0 */
#include "reload/reload.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "snapshot/loader.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/jsonw.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* Reload durations: 10 ms to 5 minutes. */
static const double duration_bounds[] = {
	0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
};

struct waiter {
	xd_reload_done_fn fn;
	void *arg;
	char *dir; /* a dry run's directory; NULL: the reloader's */
	struct waiter *next;
};

/* The states of the header's comment; moved only by move(). */
enum state {
	IDLE,     /* no reload running */
	LOADING,  /* one on the thread pool */
	DRAINING, /* stopped while loading: its result will be thrown away */
	STOPPED,  /* stopped, nothing running */
};

static const char *const state_names[] = {"idle", "loading", "draining",
					  "stopped"};

struct xd_reloader {
	uv_loop_t *loop;
	const struct xd_schema *schema;
	struct xd_cache *cache;
	const char *dir;
	struct xd_tls *tls; /* NULL: plaintext */
	enum state state;

	const char *trigger;     /* of the reload running */
	struct waiter *current;  /* answered when the running reload ends */
	struct waiter *next;     /* asked while it ran: the one after */
	const char *next_trigger;
	uv_work_t work;
	/* giving back the pages freed after a reload (malloc_trim), on the
	 * thread pool too */
	uv_work_t trim_work;
	bool trimming;
	/* Snapshots are in use: systemd has been told READY=1, so a reload
	 * is told as RELOADING=1 ... READY=1. Before (a source whose first
	 * load comes later), a reload that fails tells it nothing, and the
	 * first that succeeds tells it READY=1. */
	bool serving;
	/* Where the snapshot files come from (source.h): the directory
	 * (dir_source) unless set, and the last good state (with a state
	 * directory); the running load's source and take of it (on the
	 * loop thread as it starts), read on the thread pool: */
	struct xd_snapsource source;
	struct xd_source_dir *dir_source;
	struct xd_snapsource saved_source;
	struct xd_snapsource reading; /* a dry run of another directory: its own */
	void *taken;
	int read_rc;              /* the running load's read, for read_done */
	char read_error[XD_SOURCE_ERROR_MAX];
	int64_t source_good_ms;   /* a load of `source` last accepted */
	int64_t keys_revision; /* what the source said the take is at */
	int64_t keys_changed;  /* and the revision of its newest change */
	/* The running reload's, filled on the thread pool: */
	struct xd_snapshot **prev;
	size_t nprev;
	struct xd_load result;
	struct xd_tls_next *tls_next; /* the TLS files read: NULL if bad */
	struct xd_diag tls_diag;      /* why they are bad */
	struct xd_diff *diff;         /* of prev into the result */
	/* The files of the last load, parsed (snapshot/parsed.h): the
	 * running load's on the thread pool, the loop's when idle. */
	struct xd_parsed_cache *parsed;
	/* The running load is a dry run (of dry_dir, when not NULL),
	 * and the dry runs waiting, oldest first: */
	bool dry;
	char *dry_dir;
	struct waiter *dry_queue;
	size_t ndry;

	xd_reload_done_fn on_done;
	void *on_done_arg;
	const struct xd_reload_installer *install; /* NULL: xd_cache_replace */
	void *install_arg;

	/* The last good state (NULL: no state_dir), and, when a reload
	 * starts with nothing served, its load of that state in case the
	 * snapshots are refused (filled on the thread pool). */
	struct xd_laststate *last;
	struct {
		bool wanted;
		enum xd_laststate_found found;
		struct xd_load load;
		int64_t saved_at_ms;
		struct xd_diag why;
	} saved;

	struct xd_reload_record history[XD_RELOAD_HISTORY];
	size_t nhistory, newest; /* ring; newest is the last written */
	uint64_t seq; /* of the newest record */
	/* the record whose change the rollout under way holds (0: none) */
	uint64_t staged_seq;
	struct xd_reload_stats stats;
};

/* The one place the state changes: only the moves the header lists. */
static void move(struct xd_reloader *r, enum state to, const char *why)
{
	static const bool allowed[4][4] = {
		[IDLE] = {[LOADING] = true, [STOPPED] = true},
		[LOADING] = {[IDLE] = true, [DRAINING] = true},
		[DRAINING] = {[STOPPED] = true},
	};

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(allowed[r->state][to], "reloader of %s: %s -> %s (%s)",
		       r->dir, state_names[r->state], state_names[to], why);
	xd_debug("reloader: %s -> %s (%s)", state_names[r->state],
		 state_names[to], why);
	r->state = to;
}

struct xd_reloader *xd_reloader_new(uv_loop_t *loop,
				    const struct xd_schema *schema,
				    struct xd_cache *cache, const char *dir,
				    struct xd_tls *tls)
{
	struct xd_reloader *r = xd_calloc(1, sizeof(*r));

	XD_ASSERT_LOOP();
	r->loop = loop;
	r->schema = schema;
	r->cache = cache;
	r->dir = dir;
	r->tls = tls;
	r->state = IDLE;
	r->work.data = r;
	r->trim_work.data = r;
	r->parsed = xd_parsed_cache_new();
	r->dir_source = xd_source_dir_new(dir);
	r->source = xd_source_dir(r->dir_source);
	xd_histogram_init(&r->stats.duration, duration_bounds,
			  sizeof(duration_bounds) / sizeof(duration_bounds[0]));
	return r;
}

void xd_reloader_set_source(struct xd_reloader *r, struct xd_snapsource src)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(r->state == IDLE, "source of %s set while %s", r->dir,
		       state_names[r->state]);
	r->source = src;
}

size_t xd_reloader_sources(const struct xd_reloader *r,
			   struct xd_source_health out[XD_RELOAD_SOURCES])
{
	size_t n = 0;

	XD_ASSERT_LOOP();
	r->source.ops->health(r->source.self, &out[n]);
	out[n].name = r->source.ops->name;
	out[n++].last_good_ms = r->source_good_ms;
	if (r->saved_source.ops != NULL) {
		r->saved_source.ops->health(r->saved_source.self, &out[n]);
		out[n++].name = r->saved_source.ops->name;
	}
	return n;
}

void xd_reloader_set_install(struct xd_reloader *r,
			     const struct xd_reload_installer *in, void *arg)
{
	XD_ASSERT_LOOP();
	r->install = in;
	r->install_arg = arg;
}

void xd_reloader_set_state_dir(struct xd_reloader *r, const char *dir)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(r->last == NULL && r->nhistory == 0,
		       "state directory of %s set twice or late", r->dir);
	r->last = xd_laststate_new(r->loop, dir);
	r->saved_source = xd_laststate_source(r->last);
}

const struct xd_laststate *xd_reloader_laststate(const struct xd_reloader *r)
{
	return r->last;
}

/* ---------------- history ---------------- */

static void record_clear(struct xd_reload_record *rec)
{
	for (size_t i = 0; i < rec->nkept; i++)
		free(rec->errors[i]);
	free(rec->errors);
	xd_diff_free(rec->diff);
	memset(rec, 0, sizeof(*rec));
}

/* Fills `rec` (cleared) with what `load` read, and `errors` (its own,
 * and the TLS files' before them, for a reload). */
static void record_fill(const struct xd_reloader *r,
			struct xd_reload_record *rec, const char *trigger,
			bool ok, const struct xd_load *load,
			const struct xd_diag *errors)
{
	rec->at_ms = xd_wall_ms();
	rec->trigger = trigger;
	rec->ok = ok;
	rec->seconds = load->seconds;
	rec->snapshots = load->nsnaps;
	rec->files = load->files;
	rec->nerrors = xd_diag_total(errors);
	rec->errors = xd_diag_copy_first(errors, XD_RELOAD_ERRORS_KEPT,
					 &rec->nkept);
	/* a record says failed exactly when it says why */
	XD_ASSERT_INFO(ok == (rec->nerrors == 0), "reload record of %s (%s)",
		       r->dir, trigger);
}

/* A new record in the ring (record_fill). */
static struct xd_reload_record *record(struct xd_reloader *r,
				       const char *trigger, bool ok,
				       const struct xd_load *load,
				       const struct xd_diag *errors)
{
	struct xd_reload_record *rec;

	r->newest = r->nhistory == 0 ? 0 : (r->newest + 1) % XD_RELOAD_HISTORY;
	if (r->nhistory < XD_RELOAD_HISTORY)
		r->nhistory++;
	rec = &r->history[r->newest];
	record_clear(rec);
	record_fill(r, rec, trigger, ok, load, errors);
	rec->seq = ++r->seq;
	return rec;
}

const char *xd_reload_rollout_name(enum xd_reload_rollout o)
{
	static const char *const names[] = {
		[XD_RELOAD_UNSTAGED] = NULL,
		[XD_RELOAD_STAGED] = "staged",
		[XD_RELOAD_PROMOTED] = "promoted",
		[XD_RELOAD_ROLLED_BACK] = "rolled_back",
		[XD_RELOAD_REPLACED] = "replaced",
	};

	XD_ASSERT_INFO((size_t)o < XD_ARRAY_LEN(names), "reload rollout %d",
		       (int)o);
	return names[o];
}

/* The record numbered `seq`, while the history holds it, or NULL. */
static struct xd_reload_record *record_by_seq(struct xd_reloader *r,
					      uint64_t seq)
{
	for (size_t i = 0; seq != 0 && i < r->nhistory; i++)
		if (r->history[i].seq == seq)
			return &r->history[i];
	return NULL;
}

/* `rec`'s change went to the canaries (put_in_use, staged): its
 * rollout replaces one under way, whose record says so. */
static void staged_by(struct xd_reloader *r, struct xd_reload_record *rec)
{
	struct xd_reload_record *before = record_by_seq(r, r->staged_seq);

	if (before != NULL)
		before->rollout = XD_RELOAD_REPLACED;
	rec->rollout = XD_RELOAD_STAGED;
	r->staged_seq = rec->seq;
}

size_t xd_reload_history_count(const struct xd_reloader *r)
{
	XD_ASSERT_LOOP();
	return r->nhistory;
}

const struct xd_reload_record *xd_reload_history(const struct xd_reloader *r,
						 size_t i)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(i < r->nhistory, "reload record %zu of %zu", i,
		       r->nhistory);
	return &r->history[(r->newest + XD_RELOAD_HISTORY - i) %
			   XD_RELOAD_HISTORY];
}

const struct xd_reload_stats *xd_reloader_stats(const struct xd_reloader *r)
{
	XD_ASSERT_LOOP();
	return &r->stats;
}

bool xd_reloader_busy(const struct xd_reloader *r)
{
	XD_ASSERT_LOOP();
	return r->state == LOADING || r->state == DRAINING;
}

/* ---------------- loading ---------------- */

static void log_errors(const struct xd_diag *d)
{
	for (size_t i = 0; i < d->count; i++)
		xd_error("%s", d->msgs[i]);
	if (d->dropped > 0)
		xd_error("(%zu more errors not shown)", d->dropped);
}

static void log_snapshots(struct xd_snapshot *const *snaps, size_t n)
{
	char desc[256];

	for (size_t i = 0; i < n; i++) {
		xd_snapshot_describe(snaps[i], desc, sizeof(desc));
		xd_info("snapshot '%s': %s", xd_snapshot_key(snaps[i]), desc);
	}
}

/* The snapshots a reload added or changed, as its diff says: those a
 * reload logs, so that its log lines follow the change, not the number
 * of keys (the first load logs every one). */
static void log_changed(struct xd_snapshot *const *snaps, size_t n,
			const struct xd_diff *d)
{
	char desc[256];

	for (size_t i = 0; i < d->nkeys; i++) {
		const struct xd_snapshot *s;

		if (d->keys[i].change == XD_DIFF_REMOVED)
			continue;
		s = xd_load_find(snaps, n, d->keys[i].key);
		XD_ASSERT_INFO(s != NULL, "snapshot '%s' in the diff, not loaded",
			       d->keys[i].key);
		xd_snapshot_describe(s, desc, sizeof(desc));
		xd_info("snapshot '%s': %s", xd_snapshot_key(s), desc);
	}
}

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

/* Loads the last good state into r->saved: on the loop for the first
 * load, on the thread pool for a reload's. */
static void load_saved(struct xd_reloader *r)
{
	const struct xd_snapsource *src = &r->saved_source;
	struct xd_load *out = &r->saved.load;
	struct xd_diag none = XD_DIAG_INIT;
	struct xd_snapkey *keys = NULL;
	size_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	/* no take: it is read whole (laststate.h) */
	rc = src->ops->read(src->self, NULL, NULL, &keys, &n,
			    &r->saved.saved_at_ms, &r->saved.why);
	if (rc != 0) {
		xd_snapdir_free(keys, n);
		r->saved.found = rc > 0 ? XD_LASTSTATE_NONE : XD_LASTSTATE_BAD;
		return;
	}
	/* loaded as the files it holds, with nothing to reuse */
	xd_load_keys(r->schema, keys, n, &none, NULL, 0, out);
	if (out->rc == 0) {
		r->saved.found = XD_LASTSTATE_LOADED;
		return;
	}
	/* saved by an xdsd whose checks were looser (an older schema) */
	xd_diag_add(&r->saved.why, "%s: what it holds no longer loads (%zu error%s):",
		    xd_laststate_info(r->last)->path, xd_diag_total(&out->diag),
		    xd_diag_total(&out->diag) == 1 ? "" : "s");
	xd_diag_append(&r->saved.why, &out->diag);
	xd_load_free(out);
	r->saved.found = XD_LASTSTATE_BAD;
}

/*
 * Nothing is served and the snapshots were refused (`refused`): serves
 * the last good state r->saved found instead, or says why it cannot.
 * Returns whether it serves it; `*changed` counts the snapshots put in.
 */
static bool serve_saved(struct xd_reloader *r, const struct xd_diag *refused,
			size_t *changed)
{
	const struct xd_laststate_info *info = xd_laststate_info(r->last);
	struct xd_snapshot **snaps;
	size_t n;

	if (r->saved.found == XD_LASTSTATE_NONE) {
		xd_error("no last good state saved in %s to serve instead",
			 info->dir);
		return false;
	}
	if (r->saved.found == XD_LASTSTATE_BAD) {
		log_errors(&r->saved.why);
		xd_error("the last good state in %s is unusable: not serving it",
			 info->dir);
		return false;
	}
	snaps = xd_load_take(&r->saved.load, &n);
	log_snapshots(snaps, n);
	*changed = xd_cache_replace(r->cache, snaps, n);
	free(snaps);
	xd_laststate_serving(r->last, r->dir, r->saved.saved_at_ms, refused);
	return true;
}

/* Whatever the running reload loaded of the last good state, freed. */
static void saved_done(struct xd_reloader *r)
{
	xd_load_free(&r->saved.load);
	xd_diag_clear(&r->saved.why);
	r->saved.wanted = false;
}

/* ---------------- with a staged rollout ---------------- */

/*
 * Puts a good load's snapshots (`snaps`, taken) in use and returns the
 * keys changed; `*outcome`: what became of the change (a rollout may
 * hold it for its canaries, or refuse it: then it is not yet, or not
 * at all, the last good state, xd_laststate_held).
 *
 * Without a rollout, everyone is served them. With one, a reload's
 * change goes to the canaries first. The first snapshots served go to
 * everyone too, unless a last good state was saved (r->saved, loaded
 * for this): then every node is served that state, the last one every
 * node had, and what the snapshots change from it goes to the canaries
 * first, as a reload's change would. A restart after a rollout that
 * failed thus does not hand the files it rejected to the whole fleet.
 */
static size_t put_in_use(struct xd_reloader *r, struct xd_snapshot **snaps,
			 size_t n, const char *trigger,
			 enum xd_reload_rollout *outcome)
{
	struct xd_snapshot **saved;
	size_t nsaved, keys;
	char when[32];

	*outcome = XD_RELOAD_UNSTAGED;
	if (r->install != NULL && r->serving)
		return r->install->install(r->install_arg, snaps, n, trigger,
					   r->keys_changed, outcome);
	if (r->install == NULL || !r->saved.wanted ||
	    r->saved.found != XD_LASTSTATE_LOADED) {
		if (r->install != NULL && r->saved.wanted &&
		    r->saved.found == XD_LASTSTATE_BAD) {
			log_errors(&r->saved.why);
			xd_warn("the last good state in %s is unusable: the snapshots of %s go to every node at once",
				xd_laststate_info(r->last)->dir, r->dir);
		}
		keys = xd_cache_replace(r->cache, snaps, n);
		if (r->install != NULL)
			r->install->replaced(r->install_arg, r->keys_changed);
		return keys;
	}
	XD_ASSERT_INFO(r->last != NULL,
		       "saved state of %s loaded without a state directory",
		       r->dir);
	saved = xd_load_take(&r->saved.load, &nsaved);
	xd_cache_replace(r->cache, saved, nsaved);
	free(saved);
	r->install->replaced(r->install_arg, 0);
	keys = r->install->install(r->install_arg, snaps, n, trigger,
				   r->keys_changed, outcome);
	xd_jw_time(when, r->saved.saved_at_ms);
	if (*outcome == XD_RELOAD_ROLLED_BACK)
		return nsaved; /* refused: the saved state is all that is served */
	if (keys == 0) {
		xd_info("%s: the snapshots of %s are the last good state saved %s: every node is served them",
			trigger, r->dir, when);
		/* the saved state is what the source holds: its revision */
		r->install->replaced(r->install_arg, r->keys_changed);
		return nsaved;
	}
	if (*outcome == XD_RELOAD_STAGED)
		xd_warn("%s: the snapshots of %s differ from the last good state saved %s in %zu snapshot key%s: every node is served the saved state, and the change goes to the canaries first",
			trigger, r->dir, when, keys, keys == 1 ? "" : "s");
	return keys;
}

/* A good load is in use: it is the last good state; or, staged, it is
 * held until its rollout is promoted; or, refused by its rollout, it is
 * not (and what was held for a rollout it replaces is dropped). */
static void keep_last_good(struct xd_reloader *r, struct xd_load *load,
			   enum xd_reload_rollout outcome)
{
	if (r->last == NULL)
		return;
	if (outcome == XD_RELOAD_STAGED)
		xd_laststate_held(r->last, r->dir, load);
	else if (outcome == XD_RELOAD_ROLLED_BACK)
		xd_laststate_proven(r->last, false);
	else
		xd_laststate_accepted(r->last, r->dir, load);
}

/* What the record of a reload says of its change, `outcome`. */
static void mark_outcome(struct xd_reloader *r, struct xd_reload_record *rec,
			 enum xd_reload_rollout outcome)
{
	struct xd_reload_record *before;

	if (outcome == XD_RELOAD_STAGED) {
		staged_by(r, rec);
		return;
	}
	if (outcome == XD_RELOAD_UNSTAGED)
		return;
	/* promoted at once, or refused: a rollout it replaces is over */
	before = record_by_seq(r, r->staged_seq);
	if (before != NULL)
		before->rollout = XD_RELOAD_REPLACED;
	r->staged_seq = 0;
	rec->rollout = outcome;
}

void xd_reloader_rollout_over(void *reloader, bool promoted)
{
	struct xd_reloader *r = reloader;

	struct xd_reload_record *rec;

	XD_ASSERT_LOOP();
	rec = record_by_seq(r, r->staged_seq);
	if (rec != NULL)
		rec->rollout = promoted ? XD_RELOAD_PROMOTED : XD_RELOAD_ROLLED_BACK;
	r->staged_seq = 0;
	if (r->last != NULL)
		xd_laststate_proven(r->last, promoted);
}

/*
 * The source and load stages of one load (docs/design.md, "The
 * engine's stages"), on the thread pool (on the loop for the first
 * load): what `src` holds now, read through its ops (source.h, its
 * take `taken`), then loaded into `out` reusing `prev` and `parsed`
 * (may be NULL) as the load before left them. How the read went is
 * kept for the source's health (read_done, on the loop once over).
 */
static void read_and_load(struct xd_reloader *r, const struct xd_snapsource *src,
			  void *taken, struct xd_parsed_cache *parsed,
			  struct xd_snapshot *const *prev, size_t nprev,
			  struct xd_load *out)
{
	struct xd_snapkey *keys = NULL;
	struct xd_diag why = XD_DIAG_INIT;
	struct timespec t0, t1;
	int64_t at_ms;
	size_t nkeys = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r->read_rc = src->ops->read(src->self, taken, parsed, &keys, &nkeys,
				    &at_ms, &why);
	snprintf(r->read_error, sizeof(r->read_error), "%s",
		 why.count > 0 ? why.msgs[0] : "");
	xd_load_keys_cached(r->schema, keys, nkeys, &why, prev, nprev, parsed,
			    out);
	xd_diag_clear(&why);
	/* the read is part of the load's time, as it always was */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* On the loop: the source hears how its read went (source.h). */
static void read_over(struct xd_reloader *r, const struct xd_snapsource *src)
{
	if (src->ops->read_done != NULL)
		src->ops->read_done(src->self, r->read_rc, r->read_error);
}

int xd_reloader_load_first(struct xd_reloader *r)
{
	struct xd_load load;
	struct xd_snapshot **snaps;
	struct xd_reload_record *rec;
	enum xd_reload_rollout outcome;
	size_t n;

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(r->state == IDLE && r->nhistory == 0,
		       "first load of %s, in state %s", r->dir,
		       state_names[r->state]);
	XD_ASSERT_INFO(r->source.ops->take == NULL,
		       "first load of %s from a source with takes", r->dir);
	read_and_load(r, &r->source, NULL, r->parsed, NULL, 0, &load);
	read_over(r, &r->source);
	rec = record(r, "start-up", load.rc == 0, &load, &load.diag);
	if (load.rc == 0)
		r->source_good_ms = rec->at_ms;
	if (load.rc != 0) {
		log_errors(&load.diag);
		if (r->last != NULL) {
			load_saved(r);
			rec->last_good =
				serve_saved(r, &load.diag, &rec->changed);
			saved_done(r);
		}
		if (rec->last_good) {
			r->serving = true;
			xd_load_free(&load);
			return 0;
		}
		xd_error("%zu error%s in the snapshots in %s; not starting",
			 xd_diag_total(&load.diag),
			 xd_diag_total(&load.diag) == 1 ? "" : "s", r->dir);
		xd_load_free(&load);
		return -1;
	}
	snaps = xd_load_take(&load, &n);
	log_snapshots(snaps, n);
	xd_info("loaded %zu snapshot%s from %zu file%s (%zu bytes) in %.3f s",
		n, n == 1 ? "" : "s", load.files, load.files == 1 ? "" : "s",
		load.bytes, load.seconds);
	/* with a rollout, the saved state decides who is served them */
	r->saved.wanted = r->install != NULL && r->last != NULL;
	if (r->saved.wanted)
		load_saved(r);
	rec->changed = put_in_use(r, snaps, n, "start-up", &outcome);
	mark_outcome(r, rec, outcome);
	saved_done(r);
	r->serving = true;
	free(snaps);
	keep_last_good(r, &load, outcome);
	xd_load_free(&load);
	return 0;
}

/* ---------------- reloads ---------------- */

static void start(struct xd_reloader *r);

static void answer(struct waiter *w, const struct xd_reload_record *rec)
{
	while (w != NULL) {
		struct waiter *next = w->next;

		if (w->fn != NULL)
			w->fn(w->arg, rec);
		free(w->dir);
		free(w);
		w = next;
	}
}

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

/* On the thread pool: the snapshots, then the TLS files, each read
 * whole and checked, nothing put in use. */
static void work(uv_work_t *w)
{
	struct xd_reloader *r = w->data;

	if (r->dry_dir != NULL)
		/* another directory: nothing of the last load's to reuse */
		read_and_load(r, &r->reading, NULL, NULL, r->prev, r->nprev,
			      &r->result);
	else
		read_and_load(r, &r->source, r->taken, r->parsed, r->prev,
			      r->nprev, &r->result);
	r->taken = NULL; /* freed by read */
	/* the files are kept for the last good state alone: freed here
	 * otherwise, not on the loop, where that costs every key */
	if (r->last == NULL || r->dry) {
		xd_snapdir_free(r->result.keys, r->result.nkeys);
		r->result.keys = NULL;
		r->result.nkeys = 0;
	}
	/* refused: served instead; with a rollout: put_in_use() */
	if (r->saved.wanted && (r->result.rc != 0 || r->install != NULL))
		load_saved(r);
	if (r->tls != NULL)
		r->tls_next = xd_tls_read(r->tls, &r->tls_diag);
	/* here, off the loop: a full diff renders every changed resource */
	if (r->result.rc == 0) {
		keep_served(r->prev, r->nprev, &r->result);
		r->diff = xd_diff_new(r->prev, r->nprev, r->result.snaps,
				      r->result.nsnaps, r->dry ? r->schema : NULL);
	}
}

/* What went wrong, on one line: the first TLS error (its file and why),
 * the number of snapshot errors, and that nothing changed. */
static void log_failure(const struct xd_reloader *r, const struct xd_load *load)
{
	size_t nsnap = xd_diag_total(&load->diag),
	       ntls = xd_diag_total(&r->tls_diag);
	char tls[1024] = "", more[64] = "", snap[512] = "";

	if (ntls > 1)
		snprintf(more, sizeof(more), " (and %zu more)", ntls - 1);
	if (ntls > 0)
		snprintf(tls, sizeof(tls), "TLS: %s%s%s",
			 r->tls_diag.count > 0 ? r->tls_diag.msgs[0] : "?", more,
			 nsnap > 0 ? "; " : "");
	if (nsnap > 0)
		snprintf(snap, sizeof(snap), "%zu error%s in %s", nsnap,
			 nsnap == 1 ? "" : "s", r->dir);
	xd_error("reload failed: %s%s; still serving the previous snapshots%s",
		 tls, snap, r->tls != NULL ? " and certificate" : "");
}

/* Gives the running reload's TLS files back (put in use or thrown
 * away), and its diff unless a record took it. */
static void tls_done(struct xd_reloader *r)
{
	xd_tls_next_free(r->tls_next);
	r->tls_next = NULL;
	xd_diag_clear(&r->tls_diag);
	xd_diff_free(r->diff);
	r->diff = NULL;
}

/*
 * The streams of each key the diff removes: those the default snapshot
 * serves from now on (a reload without one that removes a key was
 * refused). Said in the log as a warning when `say`.
 */
static void count_moves(struct xd_reloader *r, struct xd_diff *d, bool say)
{
	for (size_t i = 0; i < d->nkeys; i++) {
		struct xd_diff_key *k = &d->keys[i];

		if (k->change != XD_DIFF_REMOVED ||
		    strcmp(k->key, XD_CACHE_DEFAULT_KEY) == 0)
			continue;
		k->streams = xd_cache_watchers(r->cache, k->key);
		if (say)
			xd_warn("reload removes snapshot '%s': %zu stream%s of its nodes move to the default snapshot",
				k->key, k->streams, k->streams == 1 ? "" : "s");
	}
}

/*
 * Puts a good reload in use, snapshots and certificates together, or
 * logs why it was refused and changes nothing. Returns the record.
 */
static const struct xd_reload_record *finish(struct xd_reloader *r)
{
	struct xd_load *load = &r->result;
	struct xd_reload_record *rec;
	struct xd_snapshot **snaps;
	struct xd_diag errors = XD_DIAG_INIT;
	enum xd_reload_rollout outcome;
	size_t n;

	XD_ASSERT_INFO(r->tls != NULL || r->tls_next == NULL,
		       "TLS files read for the plaintext listener (%s)", r->dir);
	check_nodes_keep_a_snapshot(r->cache, r->dir, load);
	if (load->rc != 0 || (r->tls != NULL && r->tls_next == NULL)) {
		log_errors(&r->tls_diag);
		if (xd_diag_total(&r->tls_diag) > 0)
			xd_error("TLS reload failed: still using the previous certificate (%s)",
				 xd_tls_describe(r->tls));
		log_errors(&load->diag);
		log_failure(r, load);
		r->stats.failed++;
		/* the TLS files' errors first: a handful, never crowded out
		 * of the record by a snapshot's hundreds */
		xd_diag_append(&errors, &r->tls_diag);
		xd_diag_append(&errors, &load->diag);
		rec = record(r, r->trigger, false, load, &errors);
		rec->revision = r->keys_revision;
		tls_done(r);
		/* why, from `errors`: load->diag's were moved there */
		if (r->saved.wanted && load->rc != 0)
			rec->last_good = serve_saved(r, &errors, &rec->changed);
		xd_diag_clear(&errors);
		return rec;
	}
	rec = record(r, r->trigger, true, load, &errors);
	rec->revision = r->keys_revision;
	r->source_good_ms = rec->at_ms;
	rec->diff = r->diff;
	r->diff = NULL;
	count_moves(r, rec->diff, true);
	snaps = xd_load_take(load, &n);
	if (r->serving)
		log_changed(snaps, n, rec->diff);
	else
		log_snapshots(snaps, n); /* the first served, as at start-up */
	/* an etcd source's first load comes here too */
	rec->changed = put_in_use(r, snaps, n, r->trigger, &outcome);
	mark_outcome(r, rec, outcome);
	free(snaps);
	keep_last_good(r, load, outcome);
	if (r->tls != NULL) {
		xd_tls_use(r->tls, r->tls_next);
		r->tls_next = NULL; /* taken */
		xd_info("TLS reloaded: %s", xd_tls_describe(r->tls));
	}
	xd_info("reloaded %zu snapshot%s from %zu file%s in %.3f s: %zu changed (%zu file%s parsed); %zu file%s read",
		n, n == 1 ? "" : "s", load->files, load->files == 1 ? "" : "s",
		load->seconds, rec->changed, load->parsed,
		load->parsed == 1 ? "" : "s", load->read,
		load->read == 1 ? "" : "s");
	r->stats.ok++;
	tls_done(r);
	return rec;
}

/* A dry run's answer in `rec`: what finish() would have done, without
 * doing it. */
static void finish_dry(struct xd_reloader *r, struct xd_reload_record *rec)
{
	struct xd_load *load = &r->result;
	const char *dir = r->dry_dir != NULL ? r->dry_dir : r->dir;
	struct xd_diag errors = XD_DIAG_INIT;
	char checked[160];
	bool ok;

	check_nodes_keep_a_snapshot(r->cache, dir, load);
	ok = load->rc == 0 && (r->tls == NULL || r->tls_next != NULL);
	xd_diag_append(&errors, &r->tls_diag);
	xd_diag_append(&errors, &load->diag);
	record_fill(r, rec, r->trigger, ok, load, &errors);
	rec->dry_run = true;
	rec->revision = r->dry_dir == NULL ? r->keys_revision : 0;
	/* what it checked: every file, some of them as the last load (or
	 * dry run) parsed them, since their bytes are the same */
	snprintf(checked, sizeof(checked),
		 "checked %zu file%s (%zu parsed, %zu unchanged since last parsed)",
		 load->files, load->files == 1 ? "" : "s", load->parsed,
		 load->files - load->parsed);
	if (ok) {
		r->stats.dry_ok++;
		rec->diff = r->diff;
		r->diff = NULL;
		count_moves(r, rec->diff, false);
		xd_info("dry run of %s: %s, %zu snapshot%s: %zu would change; nothing was changed",
			dir, checked, load->nsnaps, load->nsnaps == 1 ? "" : "s",
			rec->diff->nkeys);
	} else {
		r->stats.dry_refused++;
		xd_info("dry run of %s: %s: a reload would be refused (%zu error%s); nothing was changed",
			dir, checked, rec->nerrors, rec->nerrors == 1 ? "" : "s");
	}
	xd_diag_clear(&errors);
	tls_done(r);
}

static void start_dry(struct xd_reloader *r);

/* The running load was a dry run (or none): no longer, and its
 * directory, the load's until it ended, freed. */
static void dry_over(struct xd_reloader *r)
{
	r->dry = false;
	free(r->dry_dir);
	r->dry_dir = NULL;
	if (r->reading.ops != NULL)
		xd_source_dir_free(r->reading.self);
	r->reading = (struct xd_snapsource){0};
}

/* What waits after a load: the reload asked meanwhile first (the files
 * may have changed after that load read them), else the oldest dry
 * run. */
static void start_next(struct xd_reloader *r)
{
	if (r->next != NULL || r->next_trigger != NULL) {
		r->current = r->next;
		r->trigger = r->next_trigger;
		r->next = NULL;
		r->next_trigger = NULL;
		start(r);
	} else if (r->dry_queue != NULL) {
		start_dry(r);
	}
}

/* The end of a dry run, on the loop thread: answered, then the next
 * load (a reload asked meanwhile goes first). */
static void dry_done(struct xd_reloader *r, struct waiter *waiters)
{
	struct xd_reload_record rec = {0};

	move(r, IDLE, "dry run over");
	finish_dry(r, &rec);
	xd_load_free(&r->result);
	dry_over(r);
	start_next(r);
	answer(waiters, &rec);
	record_clear(&rec);
}

/* On the thread pool: malloc_trim walks every heap, a cost that grows
 * with what xdsd holds; never on the loop. */
static void trim_work(uv_work_t *w XD_UNUSED)
{
	malloc_trim(0);
}

static void trim_done(uv_work_t *w, int status XD_UNUSED)
{
	struct xd_reloader *r = w->data;

	r->trimming = false;
}

/* Gives back the free pages of every heap, once at a time. */
static void trim(struct xd_reloader *r)
{
	if (r->trimming)
		return;
	if (uv_queue_work(r->loop, &r->trim_work, trim_work, trim_done) == 0)
		r->trimming = true;
}

static void work_done(uv_work_t *w, int status XD_UNUSED)
{
	struct xd_reloader *r = w->data;
	const struct xd_reload_record *rec;
	struct waiter *waiters = r->current;

	XD_ASSERT_LOOP();
	for (size_t i = 0; i < r->nprev; i++)
		xd_snapshot_unref(r->prev[i]);
	free(r->prev);
	r->prev = NULL;
	r->current = NULL;
	/* the files the load let go, here: their tables may carry what
	 * the loop attached when it served them (parsed.h) */
	xd_parsed_cache_release(r->parsed);
	if (r->state == DRAINING) {
		move(r, STOPPED, "the reload running at the stop is over");
		xd_load_free(&r->result);
		tls_done(r);
		saved_done(r);
		XD_ASSERT(waiters == NULL); /* answered at the stop */
		dry_over(r);
		return;
	}
	if (r->dry_dir == NULL)
		read_over(r, &r->source);
	if (r->dry) {
		dry_done(r, waiters);
		return;
	}
	move(r, IDLE, "reload over");
	xd_histogram_observe(&r->stats.duration, r->result.seconds);
	rec = finish(r);
	xd_load_free(&r->result);
	saved_done(r);
	/* of what is in use now, new or kept */
	if (r->tls != NULL)
		xd_tls_warn_expiry(r->tls, xd_wall_ms() / 1000);
	/* What the load parsed, and the snapshots it superseded, were
	 * freed in the heaps of the threads that made them: give back
	 * the pages that are now free, rather than keep them until
	 * those threads happen to allocate again. */
	trim(r);
	if (rec->ok || rec->last_good)
		r->serving = true;
	if (r->serving)
		sd_notify(0, "READY=1");
	/* The queued reload starts before anyone hears of this one: a
	 * waiter's callback may ask for another reload, which must then
	 * find one running and queue behind it, never start a second. */
	start_next(r);
	if (r->on_done != NULL)
		r->on_done(r->on_done_arg, rec);
	answer(waiters, rec);
}

static void refuse_dry(struct xd_reloader *r, struct waiter *w,
		       const char *why);

static void start(struct xd_reloader *r)
{
	struct xd_load failed = {.rc = -1};

	/* one load at a time: the work request and `result` are single */
	move(r, LOADING, r->trigger);
	XD_ASSERT_INFO(r->prev == NULL && r->tls_next == NULL &&
			       xd_diag_total(&r->tls_diag) == 0,
		       "reload of %s (%s) over the last one's leftovers", r->dir,
		       r->trigger);
	if (r->serving && !r->dry)
		sd_notify(0, "RELOADING=1");
	xd_info("%s: %s %s%s", r->trigger,
		r->dry ? "loading, nothing to be changed," : "reloading",
		r->dry_dir != NULL ? r->dry_dir : r->dir,
		r->tls != NULL ? " and the TLS files" : "");
	r->prev = xd_cache_snapshots(r->cache, &r->nprev);
	/* refused with nothing served: the last good state instead (a dry
	 * run serves nothing) */
	r->saved.wanted = r->last != NULL && !r->serving && !r->dry;
	r->saved.found = XD_LASTSTATE_NONE; /* until work() looks */
	r->keys_revision = 0;
	r->keys_changed = 0;
	if (r->dry_dir == NULL && r->source.ops->take != NULL)
		r->taken = r->source.ops->take(r->source.self,
					       &r->keys_revision,
					       &r->keys_changed);
	if (uv_queue_work(r->loop, &r->work, work, work_done) == 0)
		return;
	if (r->taken != NULL) {
		/* read even so: the next take follows this one's changes */
		struct xd_snapkey *keys = NULL;
		struct xd_diag why = XD_DIAG_INIT;
		int64_t at_ms;
		size_t nkeys = 0;

		r->source.ops->read(r->source.self, r->taken, NULL, &keys,
				    &nkeys, &at_ms, &why);
		r->taken = NULL;
		xd_snapdir_free(keys, nkeys);
		xd_diag_clear(&why);
	}
	/* libuv refuses only when misused; say so rather than hang */
	for (size_t i = 0; i < r->nprev; i++)
		xd_snapshot_unref(r->prev[i]);
	free(r->prev);
	r->prev = NULL;
	r->saved.wanted = false;
	move(r, IDLE, "the reload could not start");
	xd_error("cannot start a reload");
	if (r->dry) {
		refuse_dry(r, r->current, "cannot start a reload");
		dry_over(r);
	} else {
		xd_diag_add(&failed.diag, "cannot start a reload");
		answer(r->current, record(r, r->trigger, false, &failed, &failed.diag));
		xd_diag_clear(&failed.diag);
	}
	r->current = NULL;
	if (r->serving)
		sd_notify(0, "READY=1");
}

/* Starts the oldest dry run waiting. */
static void start_dry(struct xd_reloader *r)
{
	struct waiter *w = r->dry_queue;

	r->dry_queue = w->next;
	r->ndry--;
	w->next = NULL;
	r->current = w;
	r->dry = true;
	r->dry_dir = w->dir; /* the load's until it ends */
	if (r->dry_dir != NULL)
		r->reading = xd_source_dir(xd_source_dir_new(r->dry_dir));
	w->dir = NULL;
	r->trigger = "dry run";
	start(r);
}

/* Answers `w` (a list of dry runs' waiters) with a failed record
 * saying `why`, kept nowhere. */
static void refuse_dry(struct xd_reloader *r, struct waiter *w,
		       const char *why)
{
	struct xd_load failed = {.rc = -1};
	struct xd_reload_record rec = {0};

	if (w == NULL)
		return;
	for (struct waiter *n = w; n != NULL; n = n->next)
		r->stats.dry_busy++;
	xd_diag_add(&failed.diag, "%s", why);
	record_fill(r, &rec, "dry run", false, &failed, &failed.diag);
	rec.dry_run = true;
	answer(w, &rec);
	record_clear(&rec);
	xd_diag_clear(&failed.diag);
}

void xd_reload_dry_run(struct xd_reloader *r, const char *dir,
		       xd_reload_done_fn done, void *arg)
{
	struct waiter *w = xd_calloc(1, sizeof(*w)), **tail;

	XD_ASSERT_LOOP();
	w->fn = done;
	w->arg = arg;
	w->dir = dir != NULL ? xd_strdup(dir) : NULL;
	if (r->state == DRAINING || r->state == STOPPED) {
		refuse_dry(r, w, "xdsd is shutting down");
		return;
	}
	if (r->ndry >= XD_RELOAD_DRY_QUEUE) {
		xd_warn("dry run refused: %d are waiting already",
			XD_RELOAD_DRY_QUEUE);
		refuse_dry(r, w, "too many dry runs waiting; try again");
		return;
	}
	for (tail = &r->dry_queue; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = w;
	r->ndry++;
	if (r->state == IDLE)
		start_dry(r);
}

/* A failed record for those who asked as xdsd stops. */
static const struct xd_reload_record *stopping_record(struct xd_reloader *r,
						      const char *trigger)
{
	struct xd_load stopping = {.rc = -1};
	const struct xd_reload_record *rec;

	xd_diag_add(&stopping.diag, "xdsd is shutting down");
	rec = record(r, trigger, false, &stopping, &stopping.diag);
	xd_diag_clear(&stopping.diag);
	return rec;
}

void xd_reload_request(struct xd_reloader *r, const char *trigger,
		       xd_reload_done_fn done, void *arg)
{
	struct waiter *w = xd_calloc(1, sizeof(*w));

	XD_ASSERT_LOOP();
	XD_ASSERT(trigger != NULL);
	w->fn = done;
	w->arg = arg;
	if (r->state == DRAINING || r->state == STOPPED) {
		answer(w, stopping_record(r, trigger));
		return;
	}
	if (r->state == LOADING) {
		/* the files may have changed after that load read them */
		xd_info("%s: a reload is running; reloading again after it",
			trigger);
		w->next = r->next;
		r->next = w;
		if (r->next_trigger == NULL)
			r->next_trigger = trigger;
		return;
	}
	w->next = r->current;
	r->current = w;
	r->trigger = trigger;
	start(r);
}

void xd_reloader_on_done(struct xd_reloader *r, xd_reload_done_fn fn,
			 void *arg)
{
	XD_ASSERT_LOOP();
	r->on_done = fn;
	r->on_done_arg = arg;
}

void xd_reloader_stop(struct xd_reloader *r)
{
	struct waiter *w = r->current, *next = r->next;
	const char *trigger = r->dry ? r->next_trigger : r->trigger;
	const struct xd_reload_record *rec;

	XD_ASSERT_LOOP();
	if (r->state == DRAINING || r->state == STOPPED)
		return;
	move(r, r->state == LOADING ? DRAINING : STOPPED, "xdsd is stopping");
	if (r->source.ops->stop != NULL) /* no take follows */
		r->source.ops->stop(r->source.self);
	r->current = NULL;
	r->next = NULL;
	r->next_trigger = NULL;
	refuse_dry(r, r->dry_queue, "xdsd is shutting down");
	r->dry_queue = NULL;
	r->ndry = 0;
	if (r->dry) {
		/* its directory stays with the load until that ends */
		refuse_dry(r, w, "xdsd is shutting down");
		w = NULL;
	}
	if (w == NULL && next == NULL)
		return;
	/* the reload's own trigger, not a dry run's */
	rec = stopping_record(r, trigger);
	answer(w, rec);
	answer(next, rec);
}

void xd_reloader_free(struct xd_reloader *r)
{
	if (r == NULL)
		return;
	XD_ASSERT_INFO(!xd_reloader_busy(r) && !r->trimming,
		       "reloader of %s freed while %s%s", r->dir,
		       state_names[r->state], r->trimming ? ", trimming" : "");
	for (size_t i = 0; i < XD_RELOAD_HISTORY; i++)
		record_clear(&r->history[i]);
	xd_laststate_free(r->last);
	xd_parsed_cache_free(r->parsed);
	xd_source_dir_free(r->dir_source);
	free(r);
}
