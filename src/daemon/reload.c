#include "daemon/reload.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "snapshot/loader.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/xalloc.h"

/* Reload durations: 10 ms to 5 minutes. */
static const double duration_bounds[] = {
	0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
};

struct waiter {
	xd_reload_done_fn fn;
	void *arg;
	struct waiter *next;
};

struct xd_reloader {
	uv_loop_t *loop;
	const struct xd_schema *schema;
	struct xd_cache *cache;
	const char *dir;
	bool stopping;

	bool running;
	const char *trigger;     /* of the reload running */
	struct waiter *current;  /* answered when the running reload ends */
	struct waiter *next;     /* asked while it ran: the one after */
	const char *next_trigger;
	uv_work_t work;
	struct xd_snapshot **prev;
	size_t nprev;
	struct xd_load result;

	xd_reload_done_fn on_done;
	void *on_done_arg;

	struct xd_reload_record history[XD_RELOAD_HISTORY];
	size_t nhistory, newest; /* ring; newest is the last written */
	struct xd_reload_stats stats;
};

struct xd_reloader *xd_reloader_new(uv_loop_t *loop,
				    const struct xd_schema *schema,
				    struct xd_cache *cache, const char *dir)
{
	struct xd_reloader *r = xd_calloc(1, sizeof(*r));

	r->loop = loop;
	r->schema = schema;
	r->cache = cache;
	r->dir = dir;
	r->work.data = r;
	xd_histogram_init(&r->stats.duration, duration_bounds,
			  sizeof(duration_bounds) / sizeof(duration_bounds[0]));
	return r;
}

/* ---------------- history ---------------- */

static void record_clear(struct xd_reload_record *rec)
{
	for (size_t i = 0; i < rec->nkept; i++)
		free(rec->errors[i]);
	free(rec->errors);
	memset(rec, 0, sizeof(*rec));
}

/* A new record in the ring, filled from a load. */
static struct xd_reload_record *record(struct xd_reloader *r,
				       const char *trigger,
				       const struct xd_load *load,
				       size_t changed)
{
	struct xd_reload_record *rec;

	r->newest = r->nhistory == 0 ? 0 : (r->newest + 1) % XD_RELOAD_HISTORY;
	if (r->nhistory < XD_RELOAD_HISTORY)
		r->nhistory++;
	rec = &r->history[r->newest];
	record_clear(rec);
	rec->at_ms = xd_wall_ms();
	rec->trigger = trigger;
	rec->ok = load->rc == 0;
	rec->seconds = load->seconds;
	rec->snapshots = load->nsnaps;
	rec->files = load->files;
	rec->changed = changed;
	rec->nerrors = xd_diag_total(&load->diag);
	rec->nkept = load->diag.count < XD_RELOAD_ERRORS_KEPT ?
			     load->diag.count :
			     XD_RELOAD_ERRORS_KEPT;
	rec->errors = xd_calloc(rec->nkept + 1, sizeof(char *));
	for (size_t i = 0; i < rec->nkept; i++)
		rec->errors[i] = xd_strdup(load->diag.msgs[i]);
	return rec;
}

size_t xd_reload_history_count(const struct xd_reloader *r)
{
	return r->nhistory;
}

const struct xd_reload_record *xd_reload_history(const struct xd_reloader *r,
						 size_t i)
{
	XD_ASSERT(i < r->nhistory);
	return &r->history[(r->newest + XD_RELOAD_HISTORY - i) %
			   XD_RELOAD_HISTORY];
}

const struct xd_reload_stats *xd_reloader_stats(const struct xd_reloader *r)
{
	return &r->stats;
}

bool xd_reloader_busy(const struct xd_reloader *r)
{
	return r->running;
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

static bool has_key(struct xd_snapshot *const *snaps, size_t n,
		    const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(xd_snapshot_key(snaps[i]), key) == 0)
			return true;
	return false;
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
	old = xd_cache_snapshots(cache, &nold);
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

int xd_reloader_load_first(struct xd_reloader *r)
{
	struct xd_load load;
	struct xd_snapshot **snaps;
	size_t n;

	xd_load_dir(r->schema, r->dir, NULL, 0, &load);
	record(r, "start-up", &load, 0);
	if (load.rc != 0) {
		log_errors(&load.diag);
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
	r->history[r->newest].changed =
		xd_cache_replace(r->cache, snaps, n);
	free(snaps);
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
		free(w);
		w = next;
	}
}

static void work(uv_work_t *w)
{
	struct xd_reloader *r = w->data;

	xd_load_dir(r->schema, r->dir, r->prev, r->nprev, &r->result);
}

/* Installs a good load, or logs why it was refused. Returns the record. */
static const struct xd_reload_record *finish(struct xd_reloader *r)
{
	struct xd_load *load = &r->result;
	struct xd_reload_record *rec;
	struct xd_snapshot **snaps;
	size_t n, changed = 0;

	check_nodes_keep_a_snapshot(r->cache, r->dir, load);
	if (load->rc != 0) {
		log_errors(&load->diag);
		xd_error("reload failed: %zu error%s in %s; still serving the previous snapshots",
			 xd_diag_total(&load->diag),
			 xd_diag_total(&load->diag) == 1 ? "" : "s", r->dir);
		r->stats.failed++;
		return record(r, r->trigger, load, 0);
	}
	rec = record(r, r->trigger, load, 0);
	snaps = xd_load_take(load, &n);
	log_snapshots(snaps, n);
	changed = xd_cache_replace(r->cache, snaps, n);
	free(snaps);
	rec->changed = changed;
	xd_info("reloaded %zu snapshot%s from %zu file%s in %.3f s: %zu changed",
		n, n == 1 ? "" : "s", load->files, load->files == 1 ? "" : "s",
		load->seconds, changed);
	r->stats.ok++;
	return rec;
}

static void work_done(uv_work_t *w, int status XD_UNUSED)
{
	struct xd_reloader *r = w->data;
	const struct xd_reload_record *rec;
	struct waiter *waiters = r->current;

	for (size_t i = 0; i < r->nprev; i++)
		xd_snapshot_unref(r->prev[i]);
	free(r->prev);
	r->prev = NULL;
	r->running = false;
	r->current = NULL;
	if (r->stopping) {
		xd_load_free(&r->result);
		return;
	}
	xd_histogram_observe(&r->stats.duration, r->result.seconds);
	rec = finish(r);
	xd_load_free(&r->result);
	/* What the load parsed, and the snapshots it superseded, were
	 * freed in the heaps of the threads that made them: give back
	 * the pages that are now free, rather than keep them until
	 * those threads happen to allocate again. */
	malloc_trim(0);
	sd_notify(0, "READY=1");
	/* The queued reload starts before anyone hears of this one: a
	 * waiter's callback may ask for another reload, which must then
	 * find one running and queue behind it, never start a second. */
	if (r->next != NULL || r->next_trigger != NULL) {
		r->current = r->next;
		r->trigger = r->next_trigger;
		r->next = NULL;
		r->next_trigger = NULL;
		start(r);
	}
	if (r->on_done != NULL)
		r->on_done(r->on_done_arg, rec);
	answer(waiters, rec);
}

static void start(struct xd_reloader *r)
{
	struct xd_load failed = {.rc = -1};

	/* one load at a time: the work request and `result` are single */
	XD_ASSERT(!r->running);
	r->running = true;
	sd_notify(0, "RELOADING=1");
	xd_info("%s: reloading %s", r->trigger, r->dir);
	r->prev = xd_cache_snapshots(r->cache, &r->nprev);
	if (uv_queue_work(r->loop, &r->work, work, work_done) == 0)
		return;
	/* libuv refuses only when misused; say so rather than hang */
	for (size_t i = 0; i < r->nprev; i++)
		xd_snapshot_unref(r->prev[i]);
	free(r->prev);
	r->prev = NULL;
	r->running = false;
	xd_diag_add(&failed.diag, "cannot start a reload");
	xd_error("cannot start a reload");
	answer(r->current, record(r, r->trigger, &failed, 0));
	r->current = NULL;
	xd_diag_clear(&failed.diag);
	sd_notify(0, "READY=1");
}

void xd_reload_request(struct xd_reloader *r, const char *trigger,
		       xd_reload_done_fn done, void *arg)
{
	struct waiter *w = xd_calloc(1, sizeof(*w));
	struct xd_load stopping = {.rc = -1};

	w->fn = done;
	w->arg = arg;
	if (r->stopping) {
		xd_diag_add(&stopping.diag, "xdsd is shutting down");
		answer(w, record(r, trigger, &stopping, 0));
		xd_diag_clear(&stopping.diag);
		return;
	}
	if (r->running) {
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
	r->on_done = fn;
	r->on_done_arg = arg;
}

void xd_reloader_stop(struct xd_reloader *r)
{
	struct xd_load stopping = {.rc = -1};
	struct waiter *w = r->current, *next = r->next;

	if (r->stopping)
		return;
	r->stopping = true;
	r->current = NULL;
	r->next = NULL;
	r->next_trigger = NULL;
	if (w == NULL && next == NULL)
		return;
	xd_diag_add(&stopping.diag, "xdsd is shutting down");
	answer(w, record(r, r->trigger, &stopping, 0));
	answer(next, &r->history[r->newest]);
	xd_diag_clear(&stopping.diag);
}

void xd_reloader_free(struct xd_reloader *r)
{
	if (r == NULL)
		return;
	XD_ASSERT(!r->running);
	for (size_t i = 0; i < XD_RELOAD_HISTORY; i++)
		record_clear(&r->history[i]);
	free(r);
}
