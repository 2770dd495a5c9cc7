/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The last good state (`state_dir:`), end to end: the real daemon,
 * real files and signals, a real gRPC client. Each accepted load is
 * saved, unless the state on disk holds it already; a start whose
 * snapshots are broken serves the saved state
 * (same versions), says so in the log, /metrics and /status.json, and
 * refuses the broken files until they are fixed. Without a state, or
 * with a damaged one, the start is refused as without state_dir.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "ctl.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
#define SAVED "saved the last good state to "
#define UNCHANGED "holds these snapshots already"
#define BROKEN "clusters:\n- {name: c, type: EDS}\n"
#define BROKEN_WHY "cluster 'c' refers to endpoints 'c', which is not in the snapshot"

static char *config(const char *dir, const char *state)
{
	char *cfg;

	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\n"
				 "snapshots: %s\nstate_dir: %s\n",
			   dir, state) > 0);
	return cfg;
}

static struct xdt_daemon *start(const char *dir, const char *state)
{
	char *cfg = config(dir, state);
	struct xdt_daemon *d = xdt_daemon_start(cfg, NULL, START_MS);

	free(cfg);
	return d;
}

static char *state_file(const char *state)
{
	char *p;

	ck_assert(asprintf(&p, "%s/snapshots.state", state) > 0);
	return p;
}

/* The default snapshot's version, and the time the state was saved,
 * as /status.json says them (malloc'd). */
static char *snapshot_version(const struct xdt_daemon *d)
{
	json_t *st = xdt_status_json(d), *snaps = json_object_get(st, "snapshots");
	char *v;

	ck_assert_int_eq(json_array_size(snaps), 1);
	v = strdup(xdt_json_str(json_array_get(snaps, 0), "version"));
	json_decref(st);
	return v;
}

static char *saved_at(const struct xdt_daemon *d)
{
	json_t *st = xdt_status_json(d);
	char *v = strdup(xdt_json_str(json_object_get(st, "last_good"), "saved_at"));

	json_decref(st);
	return v;
}

/* xdsd with this configuration exits 1 at start, its log saying each
 * of the needles, and nothing of a last good state served. */
static void refuses_to_start(const char *cfg, ...)
{
	va_list ap;
	char *log;

	va_start(ap, cfg);
	log = xdt_daemon_vrefused(cfg, ap);
	va_end(ap);
	ck_assert_ptr_null(strstr(log, "SERVING THE LAST GOOD STATE"));
	free(log);
}

/* Starts once on good files so that a state is saved; returns what
 * the client was served then: its version, and the snapshot's. */
static void save_a_state(const char *dir, const char *state, char **cds,
			 char **snap, char **at)
{
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	d = start(dir, state);
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "laststate-test", "x");
	ck_assert_int_eq(xdc_next_clusters(s, 5000, cds), 2);
	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	*snap = snapshot_version(d);
	*at = saved_at(d);
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_stop(d, STOP_MS);
}

/*
 * A broken file at start: the saved state is served, same versions,
 * and said loudly; later reloads refuse the file until it is fixed,
 * then the fixed files are served and saved and the alarm clears.
 */
START_TEST(broken_start_serves_last_good)
{
	char *dir = xdtest_snapdir(), *state = xdtest_snapdir(),
	     *file = state_file(state), *cds1, *snap1, *at1, *v, *log,
	     needle[128], *before, *after;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	json_t *st, *lg;
	size_t nbefore, nafter;
	int status;

	save_a_state(dir, state, &cds1, &snap1, &at1);
	free(xdtest_write_file(dir, "default.yaml", BROKEN));

	d = start(dir, state);
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "laststate-test", "x");
	ck_assert_int_eq(xdc_next_clusters(s, 5000, &v), 2);
	ck_assert_str_eq(v, cds1); /* the very same version */
	free(v);
	v = snapshot_version(d);
	ck_assert_str_eq(v, snap1);
	free(v);

	log = xdt_daemon_log(d);
	snprintf(needle, sizeof(needle), "SERVING THE LAST GOOD STATE saved %s", at1);
	ck_assert_msg(strstr(log, needle) != NULL, "no '%s' in:\n%s", needle, log);
	ck_assert_ptr_nonnull(strstr(strstr(log, needle), BROKEN_WHY));
	ck_assert_ptr_null(strstr(log, "not starting"));
	free(log);
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 1);
	st = xdt_status_json(d);
	ck_assert(json_is_true(json_object_get(st, "ready")));
	lg = json_object_get(st, "last_good");
	ck_assert(json_is_true(json_object_get(lg, "serving")));
	ck_assert_str_eq(xdt_json_str(lg, "saved_at"), at1);
	ck_assert_int_eq(json_integer_value(json_object_get(lg, "error_count")), 1);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(
					     json_object_get(lg, "errors"), 0)),
				     BROKEN_WHY));
	ck_assert(json_is_true(json_object_get(
		json_array_get(json_object_get(json_object_get(st, "reloads"), "history"), 0),
		"last_good")));
	json_decref(st);
	/* nothing saved: the state on disk is what is served */
	ck_assert(xdt_daemon_metric(d, "xdsd_state_saves_total{result=\"ok\"}") == 0);
	log = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_ptr_nonnull(strstr(log, "<section id=last-good class=alert><strong>Serving the last good state</strong>"));
	free(log);

	/* still broken: refused again, the saved state stays */
	before = xdtest_read_file(file, &nbefore);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "reload failed", 5000));
	ck_assert_int_eq(xdc_next_clusters(s, 300, NULL), -1);
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 1);

	/* fixed: served, saved, and the alarm is over */
	xdtest_write_clusters(dir, "default.yaml", "b", 3);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_int_eq(xdc_next_clusters(s, 5000, &v), 3);
	ck_assert_str_ne(v, cds1);
	free(v);
	ck_assert(xdt_daemon_wait_log(d, "no longer serving the last good state", 5000));
	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 0);
	ck_assert(xdt_daemon_metric(d, "xdsd_state_saves_total{result=\"ok\"}") == 1);
	st = xdt_status_json(d);
	lg = json_object_get(st, "last_good");
	ck_assert(json_is_false(json_object_get(lg, "serving")));
	ck_assert(json_is_null(json_object_get(lg, "serving_since")));
	ck_assert_str_ne(xdt_json_str(lg, "saved_at"), at1);
	json_decref(st);
	after = xdtest_read_file(file, &nafter);
	ck_assert(nbefore != nafter || memcmp(before, after, nafter) != 0);
	ck_assert_ptr_nonnull(memmem(after, nafter, "b-2", 3));

	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_stop(d, STOP_MS);
	free(before);
	free(after);
	free(cds1);
	free(snap1);
	free(at1);
	free(file);
	free(state);
	free(dir);
}
END_TEST

/* The first load and each accepted reload are saved; a refused reload
 * is not. */
START_TEST(saved_after_each_accepted_reload)
{
	char *dir = xdtest_snapdir(), *state = xdtest_snapdir(),
	     *file = state_file(state), *a, *b;
	struct xdt_daemon *d;
	size_t na, nb;
	struct stat sb;

	xdtest_write_clusters(dir, "default.yaml", "first", 1);
	d = start(dir, state);
	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	a = xdtest_read_file(file, &na);
	ck_assert_ptr_nonnull(memmem(a, na, "first-0", 7));
	/* only the operator may read what it holds (secrets, say) */
	ck_assert_int_eq(stat(file, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 077, 0);

	free(xdtest_write_file(dir, "default.yaml", BROKEN));
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "reload failed", 5000));
	xdtest_write_clusters(dir, "default.yaml", "second", 1);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, SAVED, 2, 5000));
	/* two saves: the start's and the good reload's, none between */
	ck_assert(xdt_daemon_metric(d, "xdsd_state_saves_total{result=\"ok\"}") == 2);
	ck_assert(xdt_daemon_metric(d, "xdsd_state_saves_total{result=\"error\"}") == 0);
	b = xdtest_read_file(file, &nb);
	ck_assert_ptr_nonnull(memmem(b, nb, "second-0", 8));
	ck_assert_ptr_null(memmem(b, nb, "name: c", 7));
	xdt_daemon_stop(d, STOP_MS);
	free(a);
	free(b);
	free(file);
	free(state);
	free(dir);
}
END_TEST

/* The inode and modification time of `path`, which must exist. */
static struct stat file_id(const char *path)
{
	struct stat sb;

	ck_assert_int_eq(stat(path, &sb), 0);
	return sb;
}

/* xdsd_state_saves_total of `result` (ok, error, unchanged). */
static double saves(const struct xdt_daemon *d, const char *result)
{
	char name[96];

	snprintf(name, sizeof(name), "xdsd_state_saves_total{result=\"%s\"}", result);
	return xdt_daemon_metric(d, name);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/*
 * A load whose files the saved state holds already does not rewrite
 * it (a reload that changes nothing, a restart on the same files):
 * same inode, same time, same saved_at, counted as unchanged. A change
 * is written, and so is a state removed behind xdsd's back.
 */
/* The status page's line on the saved state (#saved-state), with
 * `want` in it. */
static void status_page_says(const struct xdt_daemon *d, const char *want)
{
	int status;
	char *page = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	char *line, *end;

	ck_assert_int_eq(status, 200);
	line = strstr(page, "<p id=saved-state>");
	ck_assert_msg(line != NULL, "no saved state on the status page");
	end = strstr(line, "</p>");
	ck_assert(end != NULL);
	*end = '\0';
	ck_assert_msg(strstr(line, want) != NULL, "no '%s' in: %s", want, line);
	free(page);
}

START_TEST(unchanged_content_is_not_rewritten)
{
	char *dir = xdtest_snapdir(), *state = xdtest_snapdir(),
	     *file = state_file(state), *at1, *at;
	struct xdt_daemon *d;
	struct stat first, now;

	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	d = start(dir, state);
	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	first = file_id(file);
	at1 = saved_at(d);

	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, UNCHANGED, 5000));
	now = file_id(file);
	ck_assert_msg(same_file(&first, &now), "a reload that changes nothing rewrote %s", file);
	at = saved_at(d);
	ck_assert_str_eq(at, at1);
	free(at);
	ck_assert(saves(d, "ok") == 1 && saves(d, "unchanged") == 1);
	status_page_says(d, "saves: 1 written, 1 unchanged, 0 failed");
	status_page_says(d, "/snapshots.state</code>, saved ");
	xdt_daemon_stop(d, STOP_MS);

	/* a restart on the same files: the state on disk is probed */
	d = start(dir, state);
	ck_assert(xdt_daemon_wait_log(d, UNCHANGED, 5000));
	ck_assert_int_eq(xdt_daemon_log_count(d, SAVED), 0);
	now = file_id(file);
	ck_assert(same_file(&first, &now));
	at = saved_at(d);
	ck_assert_str_eq(at, at1);
	free(at);

	/* a change is written, with its own time */
	xdtest_write_clusters(dir, "default.yaml", "b", 1);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	now = file_id(file);
	ck_assert(!same_file(&first, &now));
	at = saved_at(d);
	ck_assert_str_ne(at, at1);
	free(at);

	/* gone behind xdsd's back: written again, though nothing changed */
	ck_assert_int_eq(unlink(file), 0);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, SAVED, 2, 5000));
	ck_assert_int_eq(access(file, R_OK), 0);
	ck_assert(saves(d, "ok") == 2 && saves(d, "unchanged") == 1);
	xdt_daemon_stop(d, STOP_MS);
	free(at1);
	free(file);
	free(state);
	free(dir);
}
END_TEST

/* A save that cannot be written is logged and counted; the load it
 * followed is served all the same. */
START_TEST(failed_save_never_fails_a_load)
{
	char *dir = xdtest_clusters_snapdir(1), *cfg, *blocker, *state;
	struct xdt_daemon *d;
	json_t *st;

	/* a directory that cannot be made: under a regular file */
	blocker = xdtest_write_file(dir, "not-a-dir", "x");
	ck_assert(asprintf(&state, "%s/state", blocker) > 0);
	cfg = config(dir, state);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(xdt_daemon_wait_log(d, "cannot save the last good state: ", 5000));
	ck_assert(xdt_daemon_metric(d, "xdsd_state_saves_total{result=\"error\"}") == 1);
	xdtest_write_clusters(dir, "default.yaml", "b", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, "cannot save the last good state: ", 2, 5000));
	st = xdt_status_json(d);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(st, "reloads"), "ok")), 1);
	ck_assert_ptr_nonnull(strstr(xdt_json_str(json_object_get(st, "last_good"), "last_save_error"),
				     "cannot create the directory"));
	json_decref(st);
	ck_assert(xdt_daemon_metric(d, "xdsd_state_saves_total{result=\"error\"}") == 2);
	ck_assert(xdt_daemon_metric(d, "xdsd_last_reload_successful") == 1);
	status_page_says(d, "nothing saved yet; saves: 0 written, 0 unchanged, 2 failed");
	status_page_says(d, "/not-a-dir/state: cannot create the directory");
	xdt_daemon_stop(d, STOP_MS);
	free(cfg);
	free(state);
	free(blocker);
	free(dir);
}
END_TEST

/*
 * A FIFO, a directory or a device where the saved state is: it is
 * never opened, so nothing waits on it. With good snapshots xdsd
 * starts, with `rollout:` too (which reads the state at start), and
 * the first save replaces the FIFO, saying what was there; SIGTERM
 * stops it. With broken snapshots the start is refused, saying what
 * the state is.
 */
START_TEST(fifo_directory_or_device_as_the_saved_state)
{
	static const struct {
		const char *rollout, *what;
	} runs[] = {
		{"", "without rollout"},
		{"rollout:\n  percent: 50\n  bake: 1h\n", "with rollout"},
	};
	char *dir = xdtest_clusters_snapdir(1), *cfg, *file, *full;
	struct xdt_daemon *d;
	struct stat st;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char *state = xdtest_snapdir();

		file = state_file(state);
		ck_assert(mkfifo(file, 0600) == 0);
		cfg = config(dir, state);
		ck_assert(asprintf(&full, "%s%s", cfg, runs[i].rollout) > 0);
		d = xdt_daemon_start(full, NULL, START_MS);
		ck_assert_msg(xdt_daemon_wait_log(d, "the saved state is a FIFO; it must be a regular file", 5000),
			      "%s: the FIFO is not named", runs[i].what);
		if (runs[i].rollout[0] == '\0') {
			/* no rollout: the start is saved over the FIFO */
			ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
			ck_assert(xdt_daemon_wait_log(d, "the last good state on disk was unusable and is replaced: ", 5000));
			ck_assert(stat(file, &st) == 0 && S_ISREG(st.st_mode));
		}
		xdt_daemon_stop(d, STOP_MS);
		free(full);
		free(cfg);
		free(file);
		free(state);
	}

	/* broken snapshots: what the state is, and no start */
	free(xdtest_write_file(dir, "default.yaml", BROKEN));
	for (int kind = 0; kind < 3; kind++) {
		static const char *const why[] = {
			"the saved state is a FIFO; it must be a regular file",
			"the saved state is a directory; it must be a regular file",
			"the saved state is a character device; it must be a regular file",
		};
		char *state = xdtest_snapdir();

		file = state_file(state);
		ck_assert(kind == 0 ? mkfifo(file, 0600) == 0 :
			  kind == 1 ? mkdir(file, 0700) == 0 :
				      symlink("/dev/zero", file) == 0);
		cfg = config(dir, state);
		refuses_to_start(cfg, why[kind], "the last good state in",
				 "is unusable", "not starting", NULL);
		free(cfg);
		free(file);
		free(state);
	}
	free(dir);
}
END_TEST

/*
 * A save cut short (xdsd killed between writing its temporary file and
 * renaming it) leaves that file, as large as the state: xdsd removes
 * such leftovers when it starts, and logs each. Only regular files
 * named as its own temporary files (".snapshots.state." and six
 * letters or digits) go; every other file, and anything that is not a
 * regular file, stays.
 */
START_TEST(leftover_temporary_files_removed_at_start)
{
	static const char *const leftovers[] = {".snapshots.state.a1B2c3",
						".snapshots.state.ZZ9900"};
	static const char *const others[] = {
		".snapshots.state.abc",     /* not six characters */
		".snapshots.state.ab-c12",  /* not what mkostemp makes */
		".snapshots.state.a1B2c3x", /* one more */
		".other.state.a1B2c3",      /* another file's */
		"snapshots.state.a1B2c3",   /* not hidden */
		"notes.txt",
	};
	char *dir = xdtest_clusters_snapdir(1), *state = xdtest_snapdir();
	char *cfg, path[600], line[700], *kept;
	struct xdt_daemon *d;
	struct stat st;

	for (size_t i = 0; i < 2; i++)
		free(xdtest_write_file(state, leftovers[i], "half a state"));
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		free(xdtest_write_file(state, others[i], "not xdsd's"));
	/* named as a leftover, but not a regular file */
	snprintf(path, sizeof(path), "%s/.snapshots.state.dir123", state);
	ck_assert(mkdir(path, 0700) == 0);
	kept = xdtest_write_file(dir, "target-of-link", "kept");
	snprintf(path, sizeof(path), "%s/.snapshots.state.lnk123", state);
	ck_assert(symlink(kept, path) == 0);

	cfg = config(dir, state);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", state, leftovers[i]);
		snprintf(line, sizeof(line), "info: removed %s (12 bytes), the temporary file of a save of the last good state that was cut short",
			 path);
		ck_assert_msg(xdt_daemon_wait_log(d, line, 5000), "no '%s'", line);
		ck_assert_msg(lstat(path, &st) != 0, "%s is still there", path);
	}
	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	ck_assert_int_eq(xdt_daemon_log_count(d, "info: removed "), 2);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", state, others[i]);
		ck_assert_msg(lstat(path, &st) == 0 && S_ISREG(st.st_mode),
			      "%s is gone", path);
	}
	snprintf(path, sizeof(path), "%s/.snapshots.state.dir123", state);
	ck_assert(lstat(path, &st) == 0 && S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/.snapshots.state.lnk123", state);
	ck_assert(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
	ck_assert(stat(kept, &st) == 0 && S_ISREG(st.st_mode));
	xdt_daemon_stop(d, STOP_MS);
	free(kept);
	free(cfg);
	free(state);
	free(dir);
}
END_TEST

/* The text between `from` and `to` in `text` (malloc'd), or NULL. */
static char *slice_of(const char *text, const char *from, const char *to)
{
	const char *a = strstr(text, from), *b = a != NULL ? strstr(a, to) : NULL;

	return b != NULL ? strndup(a, (size_t)(b - a)) : NULL;
}

/* A save that fails after one succeeded: the state on disk is older
 * than what is served. It is a warning everywhere an operator looks
 * (xdsctl status and its exit status, the top of the status page,
 * /status.json, a gauge) until a save succeeds again, not a line among
 * the counters under an old "saved" time. */
START_TEST(failing_save_warns_until_one_succeeds)
{
	char *dir = xdtest_clusters_snapdir(1), *state = xdtest_snapdir(),
	     *file = state_file(state), *admin, *page, *alert, want[512];
	struct xdt_daemon *d = start(dir, state);
	struct xdt_run r;
	json_t *st, *lg;
	int status;

	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	ck_assert(xdt_daemon_metric(d, "xdsd_state_save_failing") == 0);
	/* the file replaced by a directory with something in it: the next
	 * save cannot be renamed over it */
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(mkdir(file, 0700), 0);
	free(xdtest_write_file(file, "in-the-way", "x"));
	xdtest_write_clusters(dir, "default.yaml", "b", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "cannot save the last good state: ", 5000));

	st = xdt_status_json(d);
	lg = json_object_get(st, "last_good");
	ck_assert(json_is_true(json_object_get(lg, "save_failing")));
	ck_assert(strstr(xdt_json_str(lg, "last_save_error"), "snapshots.state") != NULL);
	ck_assert(strncmp(xdt_json_str(lg, "last_save_error_at"), "20", 2) == 0);
	json_decref(st);
	ck_assert(xdt_daemon_metric(d, "xdsd_state_save_failing") == 1);
	/* as a source (reload/source.h): down, since the failure */
	ck_assert(xdt_daemon_metric(d, "xdsd_source_up{source=\"last_good\"}") == 0);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_last_error_timestamp_seconds{source=\"last_good\"}") > 0);

	admin = xdt_ctl_admin(d);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 1);
	xdt_has(r.out, "\n           SAVE FAILING: the last save, at 20");
	xdt_has(r.out, "\n           last_good DOWN, last good 20");
	snprintf(want, sizeof(want),
		 "xdsctl: xdsd at %s cannot save its last good state: the state on disk is older than what it serves\n",
		 admin);
	ck_assert_str_eq(r.err, want);
	xdt_run_free(&r);

	/* the page: a warning before the snapshots, and beside "ready" */
	page = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	alert = slice_of(page, "<section id=save-failing class=alert>", "</section>");
	ck_assert_msg(alert != NULL, "no warning of the failing save: %s", page);
	ck_assert(strstr(page, "id=save-failing") < strstr(page, "<section id=snapshots>"));
	xdt_has(alert, "The last good state cannot be saved</strong>: the last save failed ");
	xdt_has(alert, "holds an older state, saved ");
	ck_assert(strstr(page, "id=warn-save>saves failing</a>") != NULL);
	free(alert);
	free(page);

	/* out of the way: the next save succeeds, and the warning goes */
	ck_assert(asprintf(&alert, "%s/in-the-way", file) > 0);
	ck_assert_int_eq(unlink(alert), 0);
	ck_assert_int_eq(rmdir(file), 0);
	free(alert);
	xdtest_write_clusters(dir, "default.yaml", "c", 3);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, SAVED, 2, 5000));
	ck_assert(xdt_daemon_metric(d, "xdsd_state_save_failing") == 0);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_up{source=\"last_good\"}") == 1);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 0);
	xdt_lacks(r.out, "SAVE FAILING");
	xdt_run_free(&r);
	page = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	ck_assert_ptr_null(strstr(page, "id=save-failing"));
	ck_assert_ptr_null(strstr(page, "id=warn-save"));
	free(page);
	xdt_daemon_stop(d, STOP_MS);
	free(admin);
	free(file);
	free(state);
	free(dir);
}
END_TEST

/* No state saved, or no state_dir: a broken start is refused as ever. */
START_TEST(nothing_saved_refuses_to_start)
{
	char *dir = xdtest_snapdir(), *state = xdtest_snapdir(), *cfg;

	free(xdtest_write_file(dir, "default.yaml", BROKEN));
	cfg = config(dir, state);
	refuses_to_start(cfg, BROKEN_WHY, "no last good state saved in",
			 "1 error in the snapshots", "not starting", NULL);
	free(cfg);
	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nsnapshots: %s\n", dir) > 0);
	refuses_to_start(cfg, BROKEN_WHY, "not starting", NULL);
	free(cfg);
	free(state);
	free(dir);
}
END_TEST

/* Overwrites `len` bytes of `path` at `off` (negative: from the end),
 * or cuts it to `off` bytes when `text` is NULL. */
static void damage(const char *path, long off, const char *text, size_t len)
{
	FILE *f;
	struct stat sb;

	ck_assert_int_eq(stat(path, &sb), 0);
	if (off < 0)
		off += sb.st_size;
	if (text == NULL) {
		ck_assert_int_eq(truncate(path, off), 0);
		return;
	}
	f = fopen(path, "r+");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* A damaged saved state is not served: the start is refused, saying
 * what is wrong with it. */
START_TEST(damaged_state_is_refused)
{
	static const struct {
		long off;
		const char *text;
		const char *why;
	} cases[] = {
		{-20, "X", "checksum mismatch: the file is corrupt"},
		{-10, NULL, "truncated or extended"},
		{0, "garbage!", "not a saved state of xdsd"},
		{8, "\x09", "format 9, this xdsd reads format 1"},
	};
	char *dir = xdtest_snapdir(), *state = xdtest_snapdir(),
	     *file = state_file(state), *cfg = config(dir, state), *cds, *snap,
	     *at, *good;
	size_t ngood;

	save_a_state(dir, state, &cds, &snap, &at);
	good = xdtest_read_file(file, &ngood);
	free(xdtest_write_file(dir, "default.yaml", BROKEN));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fopen(file, "w");

		ck_assert_uint_eq(fwrite(good, 1, ngood, f), ngood);
		ck_assert_int_eq(fclose(f), 0);
		damage(file, cases[i].off, cases[i].text,
		       cases[i].text != NULL ? strlen(cases[i].text) : 0);
		refuses_to_start(cfg, BROKEN_WHY, cases[i].why,
				 "the last good state in", "is unusable",
				 "not starting", NULL);
	}
	free(good);
	free(cds);
	free(snap);
	free(at);
	free(cfg);
	free(file);
	free(state);
	free(dir);
}
END_TEST

/* Under systemd's StateDirectory= (passed as $STATE_DIRECTORY) the
 * state is kept there without a state_dir; `state_dir: off` keeps none. */
START_TEST(systemd_state_directory_is_the_default)
{
	char *dir = xdtest_clusters_snapdir(1), *state = xdtest_snapdir(),
	     *file = state_file(state), env[512], *cfg;
	const char *envv[] = {env, NULL};
	struct xdt_daemon *d;
	json_t *st;

	snprintf(env, sizeof(env), "STATE_DIRECTORY=%s", state);
	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\n"
				 "snapshots: %s\n", dir) > 0);
	d = xdt_daemon_spawn_env(cfg, NULL, envv);
	xdt_daemon_wait_ready(d, START_MS);
	ck_assert(xdt_daemon_wait_log(d, SAVED, 5000));
	ck_assert_int_eq(access(file, R_OK), 0);
	xdt_daemon_stop(d, STOP_MS);
	ck_assert_int_eq(unlink(file), 0);
	free(cfg);

	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\n"
				 "snapshots: %s\nstate_dir: off\n", dir) > 0);
	d = xdt_daemon_spawn_env(cfg, NULL, envv);
	xdt_daemon_wait_ready(d, START_MS);
	st = xdt_status_json(d);
	ck_assert(json_is_null(json_object_get(st, "last_good")));
	json_decref(st);
	ck_assert(xdt_daemon_metric(d, "xdsd_state_saves_total{result=\"ok\"}") == 0);
	xdt_daemon_stop(d, STOP_MS);
	ck_assert_int_ne(access(file, F_OK), 0);
	free(cfg);
	free(file);
	free(state);
	free(dir);
}
END_TEST

/* The line of `text` that starts with `prefix` (malloc'd), or NULL. */
static char *line_starting(const char *text, const char *prefix)
{
	for (const char *p = text; p != NULL && *p != '\0';
	     p = strchr(p, '\n') != NULL ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return strndup(p, strcspn(p, "\n"));
	return NULL;
}

/* `xdsd --check` with `cfg_text`: its output (malloc'd); it must pass. */
static char *check_output(const char *cfg_text)
{
	char *dir = xdtest_snapdir(), *path = xdtest_write_file(dir, "xdsd.yaml", cfg_text);
	const char *args[] = {"--check", "-c", path, NULL};
	char *out, *err;

	ck_assert_msg(xdt_run_xdsd(args, &out, &err) == 0, "%s", err);
	free(err);
	free(path);
	free(dir);
	return out;
}

/*
 * state_dir's default comes from systemd ($STATE_DIRECTORY, which the
 * unit's StateDirectory= sets), so `xdsd --check` run by hand has none:
 * it says so and names what the service is given, rather than "off",
 * which the service is not (nor is a printout read back). With the
 * variable, it says the value came from it; set in the file, as
 * written.
 */
START_TEST(check_says_where_state_dir_comes_from)
{
	char *dir = xdtest_clusters_snapdir(1), *state = xdtest_snapdir(), cfg[1024];
	char *out, *line, *unit, want[1200];

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	unsetenv("STATE_DIRECTORY");
	out = check_output(cfg);
	line = line_starting(out, "state_dir:");
	ck_assert_msg(line == NULL, "printed as set: %s", line);
	line = line_starting(out, "#state_dir:    # ");
	ck_assert_msg(line != NULL, "%s", out);
	ck_assert_msg(strstr(line, "(unset: no $STATE_DIRECTORY here; under the shipped xdsd.service "
				   "systemd sets it to /var/lib/xdsd, StateDirectory=xdsd, and the service saves there)") != NULL,
		      "%s", line);
	free(line);
	free(out);
	/* what it names is what the unit says */
	ck_assert(asprintf(&line, "%s/systemd/xdsd.service.in", xdtest_env("XDSD_SRCDIR")) > 0);
	unit = xdtest_read_file(line, NULL);
	ck_assert_msg(unit != NULL && strstr(unit, "\nStateDirectory=xdsd\n") != NULL,
		      "%s: no StateDirectory=xdsd", line);
	free(unit);
	free(line);

	setenv("STATE_DIRECTORY", state, 1);
	out = check_output(cfg);
	snprintf(want, sizeof(want), "state_dir: '%s'    # ", state);
	line = line_starting(out, want);
	ck_assert_msg(line != NULL, "%s", out);
	ck_assert_msg(strstr(line, "(from $STATE_DIRECTORY, which systemd sets for the unit's StateDirectory=)") != NULL,
		      "%s", line);
	free(line);
	free(out);

	/* the file's word wins over the variable, and is shown as given */
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\nstate_dir: off\n", dir);
	out = check_output(cfg);
	line = line_starting(out, "state_dir: off    # ");
	ck_assert_msg(line != NULL && strstr(line, "$STATE_DIRECTORY") == NULL, "%s", out);
	free(line);
	free(out);
	unsetenv("STATE_DIRECTORY");
	free(state);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("laststate");
	TCase *tc = tcase_create("laststate");

	xdtest_tmpdir();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, broken_start_serves_last_good);
	tcase_add_test(tc, saved_after_each_accepted_reload);
	tcase_add_test(tc, unchanged_content_is_not_rewritten);
	tcase_add_test(tc, failed_save_never_fails_a_load);
	tcase_add_test(tc, failing_save_warns_until_one_succeeds);
	tcase_add_test(tc, nothing_saved_refuses_to_start);
	tcase_add_test(tc, fifo_directory_or_device_as_the_saved_state);
	tcase_add_test(tc, leftover_temporary_files_removed_at_start);
	tcase_add_test(tc, damaged_state_is_refused);
	tcase_add_test(tc, systemd_state_directory_is_the_default);
	tcase_add_test(tc, check_says_where_state_dir_comes_from);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
