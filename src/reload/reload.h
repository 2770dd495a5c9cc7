/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one reloader: whoever asks (SIGHUP, the admin endpoint's POST
 * /reload, the directory watch, the etcd source), it sequences and
 * coalesces the requests, one load at a time, and runs each through
 * the stages of a change (stages.h: source, load, verdict, placement,
 * persist), which know nothing of who asked. A reload reads the
 * snapshots' source (source.h: the directory, or etcd) and, when the
 * xDS listener speaks TLS, its certificate, key and client CA files
 * again (transport/tls.h).
 *
 * A reload loads the directory and reads the TLS files on libuv's thread
 * pool (where it also trades the copies of unchanged snapshots for the
 * ones served, and later gives freed memory back with malloc_trim, so
 * that its part on the loop thread costs what changed), checks that no
 * node served now would be left without a snapshot, and puts the new snapshots and certificates in use together,
 * or neither: a reload is one unit, so a failed one changes nothing
 * (docs/design.md §3), whichever of its files are at fault, and its
 * record, its log line and its counters say failed. Requests that arrive
 * while a reload runs are served by one more reload after it (the files
 * may have changed after it read them): each requester's callback runs
 * once the reload that began after its request is over, with that
 * reload's record.
 *
 * A dry run (xd_reload_dry_run) is a reload that stops before putting
 * anything in use: it loads and checks the same way, on the same queue
 * (one load at a time), and answers with what the reload would do (its
 * errors, or the diff of what it would change, snapshot/diff.h); it
 * changes nothing, is not counted, kept in the history nor told to
 * systemd. At most XD_RELOAD_DRY_QUEUE dry runs wait; more are refused.
 *
 * A reload that removes a snapshot key while there is a default snapshot
 * moves that key's streams to the default: it says how many in the log,
 * and its record's diff says it too.
 *
 * The last XD_RELOAD_HISTORY records are kept for operators, newest
 * first, with the first XD_RELOAD_ERRORS_KEPT errors of each (those of
 * the TLS files first).
 *
 * With a state directory (xd_reloader_set_state_dir), each accepted
 * load is saved as the last good state (laststate.h), and when nothing
 * is served yet (the first load at start, or an etcd source's first)
 * and the snapshots are refused, the saved state is served instead
 * (its record says last_good); later reloads go on refusing the broken
 * snapshots until they are fixed. With a staged rollout as well, what
 * is saved is what was promoted (xd_reloader_rollout_over), and good
 * first snapshots that differ from the saved state are staged: every
 * node is served the saved state, the canaries the snapshots.
 *
 * systemd hears RELOADING=1 and READY=1 around each reload once
 * snapshots are in use; before that (a source whose first load comes
 * after start, the etcd source), only the first good load's READY=1.
 *
 * States: idle -> loading -> idle; stop() moves idle to stopped, and a
 * reload still loading to draining, whose result is thrown away when it
 * ends (-> stopped).
 *
 * A load parses only the files whose bytes changed since the last load
 * (a reload, or a dry run of what a reload reads): the reloader keeps
 * that load's files parsed (snapshot/parsed.h), whatever its outcome.
 * They are the running load's from start() until its end on the loop
 * (one load at a time, on the thread pool), the loop's otherwise (the
 * first load, xd_reloader_free); their tables are shared read-only with
 * the snapshots served.
 *
 * Ownership: the reloader borrows the loop, schema, cache, TLS state and
 * directory name (all must outlive it); records are its own and valid
 * until the next reload finishes. Thread: loop thread only (checked).
 */
#ifndef XD_RELOAD_RELOAD_H
#define XD_RELOAD_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cache/cache.h"
#include "reload/laststate.h"
#include "reload/source.h"
#include "schema/schema.h"
#include "snapshot/diff.h"
#include "snapshot/files.h"
#include "transport/tls.h"
#include "util/histogram.h"

#define XD_RELOAD_HISTORY 20
#define XD_RELOAD_ERRORS_KEPT 20
#define XD_RELOAD_DRY_QUEUE 8

/* With a staged rollout (rollout/rollout.h), what became of a good
 * reload's change. */
enum xd_reload_rollout {
	XD_RELOAD_UNSTAGED,    /* no rollout held it: served as it came */
	XD_RELOAD_STAGED,      /* with the canaries: its rollout is under way */
	XD_RELOAD_PROMOTED,    /* its rollout promoted it to every node */
	XD_RELOAD_ROLLED_BACK, /* its rollout failed or was aborted: the
				* change is not served */
	XD_RELOAD_REPLACED,    /* a later reload's rollout took its place */
};

/* "staged", "promoted", "rolled_back", "replaced"; NULL for UNSTAGED. */
const char *xd_reload_rollout_name(enum xd_reload_rollout o);

struct xd_reload_record {
	uint64_t seq;        /* 1, 2, ... for the reloader's records */
	int64_t at_ms;       /* when it finished, Unix ms */
	const char *trigger; /* "start-up", "SIGHUP", "admin", "watch" */
	bool ok;             /* snapshots and certificates in use */
	double seconds;      /* loading (0 when it did not run) */
	size_t snapshots, files, changed;
	size_t nerrors;      /* all of them */
	char **errors;       /* the first ones: "file:line:col: message",
			      * "file: why" for a TLS file */
	size_t nkept;
	bool last_good;      /* refused, and the last good state is
			      * served instead (nothing was served) */
	bool dry_run;
	/* The etcd revision of the keys it loaded (a source's, below);
	 * 0 for the directory, or when no load ran. */
	int64_t revision;
	enum xd_reload_rollout rollout; /* updated as its rollout ends */
	/* What it changed (a dry run: would change), when ok: the summary
	 * for a reload (the counts, and the first XD_DIFF_SUMMARY_LISTED
	 * resources by name), the full diff for a dry run; a removed key's
	 * `streams` are those moved to the default snapshot. */
	struct xd_diff *diff;
};

struct xd_reload_stats {
	unsigned long long ok, failed; /* start-up not counted */
	/* dry runs: answered with a diff, refused (the files), or turned
	 * away (too many waiting, or stopping) */
	unsigned long long dry_ok, dry_refused, dry_busy;
	struct xd_histogram duration;  /* seconds, reloads that ran */
};

struct xd_reloader;

typedef void (*xd_reload_done_fn)(void *arg,
				  const struct xd_reload_record *rec);

/* `tls` NULL: the listener is plaintext, there are no TLS files. */
struct xd_reloader *xd_reloader_new(uv_loop_t *loop,
				    const struct xd_schema *schema,
				    struct xd_cache *cache, const char *dir,
				    struct xd_tls *tls);

/*
 * Where a reload reads the snapshot files (source.h): the directory
 * `dir` until this is called, the etcd source with `source: etcd`,
 * whose owner wires it here (daemon.c). `dir` then only names the
 * source in messages. Before the first load; `src.self` must outlive
 * the reloader's last load.
 */
void xd_reloader_set_source(struct xd_reloader *r, struct xd_snapsource src);

/*
 * The health of the sources a reload reads (source.h), on the loop
 * thread: the snapshots' source first, then the last good state with
 * a state directory; each with when a load of what it read was last
 * accepted. Returns how many were filled (at most XD_RELOAD_SOURCES).
 */
#define XD_RELOAD_SOURCES 2
size_t xd_reloader_sources(const struct xd_reloader *r,
			   struct xd_source_health out[XD_RELOAD_SOURCES]);

/*
 * Who puts a good reload's snapshots in use (NULL: the cache, with
 * xd_cache_replace; a staged rollout, rollout/rollout.h, gives its
 * own):
 *
 *   install   takes over `snaps` (the load whose newest change is etcd
 *             revision `revision`, the source's `changed`; 0 for the
 *             directory) and returns the number of keys changed,
 *             and in `*outcome` what became of the change: UNSTAGED
 *             (it changed nothing), STAGED (with the canaries),
 *             PROMOTED (served to every node at once), ROLLED_BACK
 *             (refused: a rollout of the very same change failed);
 *   replaced  the set every node is served was put in the cache whole
 *             (the first snapshots served, or the last good state),
 *             its newest change etcd `revision` (0: not from etcd, or
 *             not known).
 *
 * The first snapshots served (the first load, or a source's first good
 * reload) go to the cache, but for what differs from a saved last good
 * state (above). Set before the first load.
 */
struct xd_reload_installer {
	size_t (*install)(void *arg, struct xd_snapshot **snaps, size_t n,
			  const char *trigger, int64_t revision,
			  enum xd_reload_rollout *outcome);
	void (*replaced)(void *arg, int64_t revision);
};

/* `in` (borrowed, usually static) and `arg` outlive the reloader. */
void xd_reloader_set_install(struct xd_reloader *r,
			     const struct xd_reload_installer *in, void *arg);

/*
 * The staged rollout came to rest (rollout.h, xd_rollout_on_rest),
 * which the record of the reload it held says (its `rollout`):
 * `promoted`, what it staged is saved as the last good state; failed
 * or aborted, it is not. `reloader` is the xd_reloader.
 */
void xd_reloader_rollout_over(void *reloader, bool promoted);

/*
 * Keeps the last good state in `dir` (laststate.h), which must outlive
 * the reloader. Before the first load.
 */
void xd_reloader_set_state_dir(struct xd_reloader *r, const char *dir);

/* The last good state kept, or NULL without a state directory. */
const struct xd_laststate *xd_reloader_laststate(const struct xd_reloader *r);

/*
 * The first load of the snapshots, on the calling thread (the TLS files
 * were read by xd_tls_new): 0 when they are installed (or, refused, the
 * last good state is), or -1 with every error logged (nothing is then
 * served).
 */
int xd_reloader_load_first(struct xd_reloader *r);

/*
 * Asks for a reload; `done(arg, rec)` (may be NULL) runs when it is
 * over. `trigger` (static) names the asker in the log and the history.
 */
void xd_reload_request(struct xd_reloader *r, const char *trigger,
		       xd_reload_done_fn done, void *arg);

/*
 * Asks for a dry run of a reload of `dir` (copied; NULL: what a reload
 * reads, the directory or the source); `done(arg, rec)` runs when it is
 * over with a record that lives only during the call (rec->dry_run).
 */
void xd_reload_dry_run(struct xd_reloader *r, const char *dir,
		       xd_reload_done_fn done, void *arg);

/* Called after every reload with its record (e.g. to tell systemd). */
void xd_reloader_on_done(struct xd_reloader *r, xd_reload_done_fn fn,
			 void *arg);

/* Whether a reload is running (loading, or draining after a stop). */
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
