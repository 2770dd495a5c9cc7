/* SPDX-License-Identifier: Apache-2.0 */
#include "reload/reload.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "reload/stages.h"
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
	/* what the stages of a change work with (stages.h): the schema,
	 * cache, directory name, installer and last good state */
	struct xd_stages stages;
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
	int64_t source_good_ms;   /* a load of `source` last accepted */
	/* The running reload's change (stages.h), filled on the thread
	 * pool: */
	struct xd_change change;
	struct xd_snapshot **prev;
	size_t nprev;
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
		       r->stages.dir, state_names[r->state], state_names[to], why);
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
	r->stages.schema = schema;
	r->stages.cache = cache;
	r->stages.dir = dir;
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
	XD_ASSERT_INFO(r->state == IDLE, "source of %s set while %s", r->stages.dir,
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
	if (r->stages.saved_source.ops != NULL) {
		r->stages.saved_source.ops->health(r->stages.saved_source.self, &out[n]);
		out[n++].name = r->stages.saved_source.ops->name;
	}
	return n;
}

void xd_reloader_set_install(struct xd_reloader *r,
			     const struct xd_reload_installer *in, void *arg)
{
	XD_ASSERT_LOOP();
	r->stages.install = in;
	r->stages.install_arg = arg;
}

void xd_reloader_set_state_dir(struct xd_reloader *r, const char *dir)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(r->stages.last == NULL && r->nhistory == 0,
		       "state directory of %s set twice or late", r->stages.dir);
	r->stages.last = xd_laststate_new(r->loop, dir);
	r->stages.saved_source = xd_laststate_source(r->stages.last);
}

const struct xd_laststate *xd_reloader_laststate(const struct xd_reloader *r)
{
	return r->stages.last;
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
		       r->stages.dir, trigger);
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

/* `rec`'s change went to the canaries (xd_stage_place, staged): its
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
	if (r->stages.last != NULL)
		xd_laststate_proven(r->stages.last, promoted);
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
		       "first load of %s, in state %s", r->stages.dir,
		       state_names[r->state]);
	XD_ASSERT_INFO(r->source.ops->take == NULL,
		       "first load of %s from a source with takes", r->stages.dir);
	xd_stage_load(&r->stages, &r->change, &r->source, NULL, r->parsed,
		      NULL, 0);
	load = r->change.load; /* this function's from here */
	memset(&r->change.load, 0, sizeof(r->change.load));
	xd_stage_source_over(&r->change, &r->source);
	rec = record(r, "start-up", load.rc == 0, &load, &load.diag);
	if (load.rc == 0)
		r->source_good_ms = rec->at_ms;
	if (load.rc != 0) {
		xd_stage_log_errors(&load.diag);
		if (r->stages.last != NULL) {
			xd_stage_load_saved(&r->stages, &r->change);
			rec->last_good =
				xd_stage_place_saved(&r->stages, &r->change, &load.diag, &rec->changed);
			xd_stage_saved_done(&r->change);
		}
		if (rec->last_good) {
			r->serving = true;
			xd_load_free(&load);
			return 0;
		}
		xd_error("%zu error%s in the snapshots in %s; not starting",
			 xd_diag_total(&load.diag),
			 xd_diag_total(&load.diag) == 1 ? "" : "s", r->stages.dir);
		xd_load_free(&load);
		return -1;
	}
	snaps = xd_load_take(&load, &n);
	xd_stage_log_snapshots(snaps, n);
	xd_info("loaded %zu snapshot%s from %zu file%s (%zu bytes) in %.3f s",
		n, n == 1 ? "" : "s", load.files, load.files == 1 ? "" : "s",
		load.bytes, load.seconds);
	/* with a rollout, the saved state decides who is served them */
	r->change.saved.wanted = r->stages.install != NULL && r->stages.last != NULL;
	if (r->change.saved.wanted)
		xd_stage_load_saved(&r->stages, &r->change);
	rec->changed = xd_stage_place(&r->stages, &r->change, snaps, n, "start-up",
				     r->serving, &outcome);
	mark_outcome(r, rec, outcome);
	xd_stage_saved_done(&r->change);
	r->serving = true;
	free(snaps);
	xd_stage_persist(&r->stages, &load, outcome);
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

/* On the thread pool: the snapshots, then the TLS files, each read
 * whole and checked, nothing put in use. */
static void work(uv_work_t *w)
{
	struct xd_reloader *r = w->data;

	if (r->dry_dir != NULL)
		/* another directory: nothing of the last load's to reuse */
		xd_stage_load(&r->stages, &r->change, &r->reading, NULL, NULL,
			      r->prev, r->nprev);
	else
		xd_stage_load(&r->stages, &r->change, &r->source, r->taken,
			      r->parsed, r->prev, r->nprev);
	r->taken = NULL; /* freed by read */
	/* the files are kept for the last good state alone: freed here
	 * otherwise, not on the loop, where that costs every key */
	if (r->stages.last == NULL || r->dry) {
		xd_snapdir_free(r->change.load.keys, r->change.load.nkeys);
		r->change.load.keys = NULL;
		r->change.load.nkeys = 0;
	}
	/* refused: served instead; with a rollout: placed beside it */
	if (r->change.saved.wanted && (r->change.load.rc != 0 || r->stages.install != NULL))
		xd_stage_load_saved(&r->stages, &r->change);
	if (r->tls != NULL)
		r->tls_next = xd_tls_read(r->tls, &r->tls_diag);
	/* here, off the loop: a full diff renders every changed resource */
	if (r->change.load.rc == 0) {
		r->diff = xd_diff_new(r->prev, r->nprev, r->change.load.snaps,
				      r->change.load.nsnaps, r->dry ? r->stages.schema : NULL);
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
			 nsnap == 1 ? "" : "s", r->stages.dir);
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
		k->streams = xd_cache_watchers(r->stages.cache, k->key);
		if (say)
			xd_warn("reload removes snapshot '%s': %zu stream%s of its nodes move to the default snapshot",
				k->key, k->streams, k->streams == 1 ? "" : "s");
	}
}

/*
 * The stages after the load, on the loop (stages.h): the verdict; an
 * accepted change placed and persisted, its certificates put in use
 * with its snapshots; a refused one logged, changing nothing (but the
 * last good state placed when nothing was served). Returns the record.
 */
static const struct xd_reload_record *finish(struct xd_reloader *r)
{
	struct xd_load *load = &r->change.load;
	struct xd_reload_record *rec;
	struct xd_snapshot **snaps;
	struct xd_diag errors = XD_DIAG_INIT;
	enum xd_reload_rollout outcome;
	size_t n;

	XD_ASSERT_INFO(r->tls != NULL || r->tls_next == NULL,
		       "TLS files read for the plaintext listener (%s)", r->stages.dir);
	/* the verdict: the snapshots' (stages.h), and the TLS files' */
	if (!xd_stage_verdict(&r->stages, r->stages.dir, load) ||
	    (r->tls != NULL && r->tls_next == NULL)) {
		xd_stage_log_errors(&r->tls_diag);
		if (xd_diag_total(&r->tls_diag) > 0)
			xd_error("TLS reload failed: still using the previous certificate (%s)",
				 xd_tls_describe(r->tls));
		xd_stage_log_errors(&load->diag);
		log_failure(r, load);
		r->stats.failed++;
		/* the TLS files' errors first: a handful, never crowded out
		 * of the record by a snapshot's hundreds */
		xd_diag_append(&errors, &r->tls_diag);
		xd_diag_append(&errors, &load->diag);
		rec = record(r, r->trigger, false, load, &errors);
		rec->revision = r->change.revision;
		tls_done(r);
		/* placement of the refused with nothing served; why, from
		 * `errors`: load->diag's were moved there */
		if (r->change.saved.wanted && load->rc != 0)
			rec->last_good = xd_stage_place_saved(&r->stages, &r->change, &errors, &rec->changed);
		xd_diag_clear(&errors);
		return rec;
	}
	rec = record(r, r->trigger, true, load, &errors);
	rec->revision = r->change.revision;
	r->source_good_ms = rec->at_ms;
	rec->diff = r->diff;
	r->diff = NULL;
	count_moves(r, rec->diff, true);
	snaps = xd_load_take(load, &n);
	if (r->serving)
		log_changed(snaps, n, rec->diff);
	else
		xd_stage_log_snapshots(snaps, n); /* the first served, as at start-up */
	/* placement, then persist; an etcd source's first load comes here
	 * too */
	rec->changed = xd_stage_place(&r->stages, &r->change, snaps, n, r->trigger,
				     r->serving, &outcome);
	mark_outcome(r, rec, outcome);
	free(snaps);
	xd_stage_persist(&r->stages, load, outcome);
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
	struct xd_load *load = &r->change.load;
	const char *dir = r->dry_dir != NULL ? r->dry_dir : r->stages.dir;
	struct xd_diag errors = XD_DIAG_INIT;
	char checked[160];
	bool ok;

	xd_stage_verdict(&r->stages, dir, load);
	ok = load->rc == 0 && (r->tls == NULL || r->tls_next != NULL);
	xd_diag_append(&errors, &r->tls_diag);
	xd_diag_append(&errors, &load->diag);
	record_fill(r, rec, r->trigger, ok, load, &errors);
	rec->dry_run = true;
	rec->revision = r->dry_dir == NULL ? r->change.revision : 0;
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
	xd_load_free(&r->change.load);
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
		xd_load_free(&r->change.load);
		tls_done(r);
		xd_stage_saved_done(&r->change);
		XD_ASSERT(waiters == NULL); /* answered at the stop */
		dry_over(r);
		return;
	}
	if (r->dry_dir == NULL)
		xd_stage_source_over(&r->change, &r->source);
	if (r->dry) {
		dry_done(r, waiters);
		return;
	}
	move(r, IDLE, "reload over");
	xd_histogram_observe(&r->stats.duration, r->change.load.seconds);
	rec = finish(r);
	xd_load_free(&r->change.load);
	xd_stage_saved_done(&r->change);
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
		       "reload of %s (%s) over the last one's leftovers", r->stages.dir,
		       r->trigger);
	if (r->serving && !r->dry)
		sd_notify(0, "RELOADING=1");
	xd_info("%s: %s %s%s", r->trigger,
		r->dry ? "loading, nothing to be changed," : "reloading",
		r->dry_dir != NULL ? r->dry_dir : r->stages.dir,
		r->tls != NULL ? " and the TLS files" : "");
	r->prev = xd_cache_snapshots(r->stages.cache, &r->nprev);
	/* refused with nothing served: the last good state instead (a dry
	 * run serves nothing) */
	r->change.saved.wanted = r->stages.last != NULL && !r->serving && !r->dry;
	r->change.saved.found = XD_LASTSTATE_NONE; /* until work() looks */
	r->change.revision = 0;
	r->change.changed = 0;
	if (r->dry_dir == NULL && r->source.ops->take != NULL)
		r->taken = r->source.ops->take(r->source.self,
					       &r->change.revision,
					       &r->change.changed);
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
	r->change.saved.wanted = false;
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
		       "reloader of %s freed while %s%s", r->stages.dir,
		       state_names[r->state], r->trimming ? ", trimming" : "");
	for (size_t i = 0; i < XD_RELOAD_HISTORY; i++)
		record_clear(&r->history[i]);
	xd_laststate_free(r->stages.last);
	xd_parsed_cache_free(r->parsed);
	xd_source_dir_free(r->dir_source);
	free(r);
}
