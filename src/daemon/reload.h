/*
 * Reloading the snapshot directory, whoever asks: SIGHUP, the admin
 * endpoint's POST /reload, the directory watch.
 *
 * A reload loads the directory on libuv's thread pool, checks that no
 * node served now would be left without a snapshot, and installs the
 * result in the cache, or keeps serving the previous snapshots and logs
 * every error. Requests that arrive while a reload runs are served by
 * one more reload after it (the files may have changed after it read
 * them): each requester's callback runs once the reload that began
 * after its request is over, with that reload's record.
 *
 * The last XD_RELOAD_HISTORY records are kept for operators, newest
 * first, with the first XD_RELOAD_ERRORS_KEPT errors of each.
 *
 * Ownership: the reloader borrows the loop, schema, cache and directory
 * name (all must outlive it); records are its own and valid until the
 * next reload finishes. Thread: loop thread only.
 */
#ifndef XD_DAEMON_RELOAD_H
#define XD_DAEMON_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cache/cache.h"
#include "schema/schema.h"
#include "util/histogram.h"

#define XD_RELOAD_HISTORY 20
#define XD_RELOAD_ERRORS_KEPT 20

struct xd_reload_record {
	int64_t at_ms;       /* when it finished, Unix ms */
	const char *trigger; /* "start-up", "SIGHUP", "admin", "watch" */
	bool ok;
	double seconds;      /* loading (0 when it did not run) */
	size_t snapshots, files, changed;
	size_t nerrors;      /* all of them */
	char **errors;       /* the first ones: "file:line:col: message" */
	size_t nkept;
};

struct xd_reload_stats {
	unsigned long long ok, failed; /* start-up not counted */
	struct xd_histogram duration;  /* seconds, reloads that ran */
};

struct xd_reloader;

typedef void (*xd_reload_done_fn)(void *arg,
				  const struct xd_reload_record *rec);

struct xd_reloader *xd_reloader_new(uv_loop_t *loop,
				    const struct xd_schema *schema,
				    struct xd_cache *cache, const char *dir);

/*
 * The first load, on the calling thread: 0 when the snapshots are
 * installed, or -1 with every error logged (nothing is then served).
 */
int xd_reloader_load_first(struct xd_reloader *r);

/*
 * Asks for a reload; `done(arg, rec)` (may be NULL) runs when it is
 * over. `trigger` (static) names the asker in the log and the history.
 */
void xd_reload_request(struct xd_reloader *r, const char *trigger,
		       xd_reload_done_fn done, void *arg);

/* Called after every reload with its record (e.g. to tell systemd). */
void xd_reloader_on_done(struct xd_reloader *r, xd_reload_done_fn fn,
			 void *arg);

bool xd_reloader_busy(const struct xd_reloader *r);

/* The records kept: i = 0 is the newest, i < xd_reload_history_count. */
size_t xd_reload_history_count(const struct xd_reloader *r);
const struct xd_reload_record *xd_reload_history(const struct xd_reloader *r,
						 size_t i);

const struct xd_reload_stats *xd_reloader_stats(const struct xd_reloader *r);

/*
 * Shutting down: a reload still running is thrown away when it ends,
 * and every waiting requester is answered now with a failed record
 * ("shutting down").
 */
void xd_reloader_stop(struct xd_reloader *r);

/* Once the loop has run dry (no reload can still be running). */
void xd_reloader_free(struct xd_reloader *r);

#endif
