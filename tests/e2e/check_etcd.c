/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshots from etcd (`source: etcd`), end to end: a real etcd started
 * on loopback in a temporary data directory on free ports, values put
 * with etcdctl, the real daemon, and a real gRPC client that must be
 * served what etcd now holds: at start, after a change, not after a
 * broken value (refused, named by its key), across an etcd that is not
 * there yet (the last good state served meanwhile, when one is saved)
 * or goes away and comes back, across a compaction past the
 * revision reached while away, and over mutual TLS with openssl-made
 * certificates; the source's revision and health as the admin endpoint
 * and xdsctl show them; xdsctl push; and two replicas on one prefix
 * serving the same bytes under the same versions.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "balancer.h"
#include "client.h"
#include "daemon.h"
#include "etcd.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
/* covers a reconnect after the longest backoff (XD_ETCD_BACKOFF_MAX_MS)
 * on a loaded machine */
#define SERVED_MS 30000
#define PREFIX "/xdsd/snapshots/"

/* Puts `count` STATIC clusters PREFIX-0.. as the snapshot `key`. */
static void put_clusters(const struct xdt_etcd *e, const char *key,
			 const char *prefix, int count)
{
	char text[4096], args[256];
	size_t len = (size_t)snprintf(text, sizeof(text), "clusters:\n");

	for (int i = 0; i < count; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"- {name: %s-%d, type: STATIC, connect_timeout: 1s}\n",
					prefix, i);
	snprintf(args, sizeof(args), "put %s%s.yaml", PREFIX, key);
	ck_assert_int_eq(xdt_etcdctl(e, args, text), 0);
}

/* The etcd revision the newest reload record says it loaded, and in
 * `names` what it names as changed ("+c-2 +c-3"; may be NULL). */
static long long key_revision(const struct xdt_etcd *e, const char *name);
static void wait_revision(const struct xdt_daemon *d, long long want);

/* Waits until the replica's registration under the prefix
 * (rollout/fleet.h) counts `streams` streams: the last it writes while
 * nothing changes. */
static void wait_registered(const struct xdt_etcd *e, int streams)
{
	char want[64];

	snprintf(want, sizeof(want), "\"streams\":%d,", streams);
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		char *cmd, buf[8192];
		size_t len = 0;
		FILE *p;

		ck_assert(asprintf(&cmd, "ETCDCTL_API=3 etcdctl --endpoints=%s get " PREFIX
				   ".xdsd/replicas/ --prefix --print-value-only 2>/dev/null",
				   e->endpoint) > 0);
		p = popen(cmd, "r");
		ck_assert(p != NULL);
		len = fread(buf, 1, sizeof(buf) - 1, p);
		pclose(p);
		free(cmd);
		buf[len] = '\0';
		if (strstr(buf, want) != NULL)
			return;
		XDT_REQUIRE(xdtest_now_ms() < end, "no registration with %s: %s", want, buf);
		xdtest_sleep_ms(100);
	}
}

static long long newest_reload_revision(const struct xdt_daemon *d, char *names,
					size_t size)
{
	json_t *j = xdt_status_json(d), *rec, *t, *r;
	long long rev;
	size_t i, k, used = 0;

	rec = json_array_get(json_object_get(json_object_get(j, "reloads"), "history"), 0);
	ck_assert_msg(json_is_integer(json_object_get(rec, "etcd_revision")),
		      "the newest reload record has no etcd revision");
	rev = json_integer_value(json_object_get(rec, "etcd_revision"));
	if (names != NULL) {
		names[0] = '\0';
		json_array_foreach(json_object_get(json_array_get(json_object_get(
			json_object_get(rec, "diff"), "snapshots"), 0), "types"), i, t)
			json_array_foreach(json_object_get(t, "resources"), k, r)
				used += (size_t)snprintf(names + used, size - used, "%s%c%s",
							 used ? " " : "",
							 strcmp(xdt_json_str(r, "change"), "added") == 0 ? '+' : '?',
							 xdt_json_str(r, "name"));
	}
	json_decref(j);
	return rev;
}

/* xdsd reading etcd at `endpoint`, with `more` configuration. */
static struct xdt_daemon *start_at(const char *endpoint, const char *more)
{
	char cfg[4096];

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsource: etcd\nwatch_delay: 100ms\n"
		 "etcd:\n  endpoints: ['%s']\n  dial_timeout: 1s\n%s",
		 endpoint, more != NULL ? more : "");
	return xdt_daemon_start(cfg, NULL, START_MS);
}

/* xdsd reading `e` (over TLS when it speaks it), with `extra`
 * configuration lines ("" for none). */
static struct xdt_daemon *start_with(const struct xdt_etcd *e, const char *extra)
{
	char more[3072], tls[1536] = "";

	if (e->tls)
		snprintf(tls, sizeof(tls),
			 "  tls:\n    ca: %s\n    cert: %s\n    key: %s\n",
			 xdtest_cert("ca.pem"), xdtest_cert("frontend.pem"),
			 xdtest_cert("frontend.key"));
	snprintf(more, sizeof(more), "%s%s", tls, extra);
	return start_at(e->endpoint, more);
}

static struct xdt_daemon *start(const struct xdt_etcd *e)
{
	return start_with(e, "");
}

/* A client of `d` (once it serves) subscribed to every cluster, once it
 * has been served `count` of them. */
static struct xdc_stream *client(const struct xdt_daemon *d,
				 struct xdc_conn **c, int count)
{
	struct xdc_stream *s;

	/* before the first load it would find no snapshot, and be refused */
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	*c = xdc_connect(d->target);
	s = xdc_watch_clusters(*c, "n", "any");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), count);
	return s;
}

/* Ends the client, the daemon (cleanly) and etcd. */
static void finish(struct xdc_stream *s, struct xdc_conn *c,
		   struct xdt_daemon *d, struct xdt_etcd *e)
{
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_stop(d, STOP_MS);
	xdt_etcd_free(e);
}

/* Runs xdsctl with `args` (shell words); its exit status, and its
 * stdout and stderr together in *out (malloc'd). */
static int xdsctl(const char *args, char **out)
{
	char path[300], *cmd;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/xdsctl.XXXXXX", xdtest_tmpdir());
	fd = mkstemp(path);
	ck_assert(fd >= 0);
	close(fd);
	ck_assert(asprintf(&cmd, "'%s' %s >'%s' 2>&1", xdtest_env("XDSCTL"),
			   args, path) > 0);
	rc = system(cmd);
	free(cmd);
	ck_assert(rc != -1 && WIFEXITED(rc));
	*out = xdtest_read_file(path, NULL);
	ck_assert(*out != NULL);
	unlink(path);
	return WEXITSTATUS(rc);
}

/* `xdsctl status` of `d`: its exit status, its output in *out. */
static int ctl_status(const struct xdt_daemon *d, char **out)
{
	char args[64];

	snprintf(args, sizeof(args), "--admin 127.0.0.1:%d status", d->admin_port);
	return xdsctl(args, out);
}

/* /status.json's "source" of `d`, once `member` is `want` (true,
 * false); the test fails if it is not within SERVED_MS. */
static json_t *source_when(const struct xdt_daemon *d, const char *member,
			   bool want)
{
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		json_t *j = xdt_status_json(d);
		json_t *src = json_incref(json_object_get(j, "source"));

		json_decref(j);
		ck_assert(json_is_object(src));
		if (json_is_boolean(json_object_get(src, member)) &&
		    json_is_true(json_object_get(src, member)) == want)
			return src;
		json_decref(src);
		XDT_REQUIRE(xdtest_now_ms() < end, "/status.json: source.%s never became %s",
			    member, want ? "true" : "false");
		xdtest_sleep_ms(100);
	}
}

/* The status page of `d` holds `needle`. */
static void page_has(const struct xdt_daemon *d, const char *needle)
{
	int status;
	char *page = xdt_admin(d, "GET", "/status", NULL, &status, NULL);

	ck_assert_int_eq(status, 200);
	ck_assert_msg(strstr(page, needle) != NULL, "no '%s' in the status page", needle);
	free(page);
}

static long long num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	ck_assert_msg(json_is_integer(v), "'%s' is not an integer", key);
	return json_integer_value(v);
}

static int ready_status(const struct xdt_daemon *d)
{
	int status = 0;

	free(xdt_admin(d, "GET", "/ready", NULL, &status, NULL));
	return status;
}

/* Served from etcd at start; a change is followed; a broken value is
 * refused, named by its key and line, while the old content stays
 * served; fixing it is served in turn. */
START_TEST(served_followed_and_refused)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	char *log;

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	d = start(e);
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	ck_assert_int_eq(ready_status(d), 200);
	s = client(d, &c, 2);

	put_clusters(e, "default", "c", 3);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 3);

	ck_assert_int_eq(xdt_etcdctl(e, "put " PREFIX "default.yaml",
				 "clusters:\n- {name: x, type: STATIC, connect_timeout: soon}\n"),
			 0);
	ck_assert(xdt_daemon_wait_log(d, "reload failed", SERVED_MS));
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, PREFIX "default.yaml:2:") != NULL,
		      "the error names the key and line: %s", log);
	free(log);
	/* nothing new is sent: the three clusters stay */
	ck_assert_int_eq(xdc_next_clusters(s, 1000, NULL), -1);
	ck_assert_int_eq(ready_status(d), 200);

	put_clusters(e, "default", "c", 4);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 4);
	finish(s, c, d, e);
}
END_TEST

/* For a daemon not ready yet: a good snapshot put makes it ready and
 * served; then everything ends. */
static void put_then_ready(struct xdt_daemon *d, struct xdt_etcd *e)
{
	struct xdc_conn *c;
	struct xdc_stream *s;

	ck_assert_int_eq(ready_status(d), 503);
	put_clusters(e, "default", "c", 2);
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	ck_assert_int_eq(ready_status(d), 200);
	s = client(d, &c, 2);
	finish(s, c, d, e);
}

/* etcd not there at start: not ready, the reason logged, tried again
 * until it comes; then served. */
START_TEST(unreachable_at_start)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d = start(e);

	ck_assert(xdt_daemon_wait_log_count(d, "no snapshots yet, not ready, trying again", 2,
					    SERVED_MS));
	ck_assert(xdt_daemon_wait_log(d, e->endpoint, 1));
	ck_assert_int_eq(ready_status(d), 503);
	xdt_etcd_run(e);
	put_then_ready(d, e);
}
END_TEST

/* A broken value at start: nothing served and not ready, the key named;
 * the fix, when it comes through the watch, is served. */
START_TEST(broken_at_start)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;

	xdt_etcd_run(e);
	ck_assert_int_eq(xdt_etcdctl(e, "put " PREFIX "default.yaml", "clusters: {}\n"), 0);
	d = start(e);
	ck_assert(xdt_daemon_wait_log(d, "reload failed", SERVED_MS));
	ck_assert(xdt_daemon_wait_log(d, PREFIX "default.yaml:1:", 1));
	put_then_ready(d, e);
}
END_TEST

/* `d`, whose etcd holds two clusters and which keeps a state directory:
 * once it serves them, their version, returned once that state is saved
 * and `d` stopped. */
static char *served_saved_and_stopped(struct xdt_daemon *d)
{
	struct xdc_conn *c;
	struct xdc_stream *s;
	char *v;

	/* connected before the first load, a node has no snapshot yet */
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "n", "any");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, &v), 2);
	ck_assert(xdt_daemon_wait_log(d, "saved the last good state", SERVED_MS));
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_stop(d, STOP_MS);
	return v;
}

/* A broken value at start with a saved state (state_dir): the saved
 * state is served, same version, and the daemon ready; the fix, when
 * the watch brings it, is served and ends that. */
START_TEST(broken_at_start_serves_last_good)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	char *state = xdtest_snapdir(), extra[512], *v1, *v2, *log;

	snprintf(extra, sizeof(extra), "state_dir: %s\nadmin_listen: 127.0.0.1:0\n", state);
	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	v1 = served_saved_and_stopped(start_with(e, extra));

	ck_assert_int_eq(xdt_etcdctl(e, "put " PREFIX "default.yaml", "clusters: {}\n"), 0);
	d = start_with(e, extra);
	ck_assert(xdt_daemon_wait_log(d, "SERVING THE LAST GOOD STATE saved ", SERVED_MS));
	ck_assert(xdt_daemon_wait_log(d, PREFIX "default.yaml:1:", 1));
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(strstr(log, "SERVING THE LAST GOOD STATE"), PREFIX "default.yaml:1:") != NULL,
		      "the warning says why the snapshots are refused: %s", log);
	free(log);
	ck_assert_int_eq(ready_status(d), 200);
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 1);
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "n", "any");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, &v2), 2);
	ck_assert_str_eq(v1, v2);

	put_clusters(e, "default", "c", 3);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 3);
	ck_assert(xdt_daemon_wait_log(d, "no longer serving the last good state", SERVED_MS));
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 0);
	finish(s, c, d, e);
	free(v1);
	free(v2);
	free(state);
}
END_TEST

/* etcd unreachable at start with a state directory. Nothing saved yet:
 * as without one, not ready until etcd answers. A saved state: once
 * etcd.dial_timeout has passed, it is served (same version), loudly,
 * and the daemon ready, while the tries go on; etcd back with the same
 * content ends that without sending anything, and a change after it is
 * served. */
START_TEST(unreachable_at_start_serves_last_good)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	char *state = xdtest_snapdir(), extra[512], *v1, *v2, *log;
	json_t *st, *lg;

	snprintf(extra, sizeof(extra), "state_dir: %s\nadmin_listen: 127.0.0.1:0\n", state);
	d = start_with(e, extra);
	ck_assert(xdt_daemon_wait_log(d, "not read within etcd.dial_timeout and no last good state in ",
				      SERVED_MS));
	ck_assert(xdt_daemon_wait_log_count(d, "no snapshots yet, not ready, trying again", 2,
					    SERVED_MS));
	ck_assert_int_eq(ready_status(d), 503);
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 0);
	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	v1 = served_saved_and_stopped(d);

	xdt_etcd_kill(e); /* its data stays, for etcd_run below */
	d = start_with(e, extra);
	ck_assert(xdt_daemon_wait_log(d, "SERVING THE LAST GOOD STATE saved ", SERVED_MS));
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "not read within etcd.dial_timeout (1.0 s): serving the last good state in ") != NULL,
		      "why the saved state is served: %s", log);
	ck_assert_msg(strstr(strstr(log, "SERVING THE LAST GOOD STATE"),
			     "etcd prefix '" PREFIX "': not read yet") != NULL,
		      "the warning says etcd was not read: %s", log);
	free(log);
	ck_assert_int_eq(ready_status(d), 200);
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 1);
	st = xdt_status_json(d);
	lg = json_object_get(st, "last_good");
	ck_assert(json_is_true(json_object_get(lg, "serving")));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(
					     json_object_get(lg, "errors"), 0)),
				     "not read yet"));
	json_decref(st);
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "n", "any");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, &v2), 2);
	ck_assert_str_eq(v1, v2);
	/* still trying etcd, and saying what is served meanwhile */
	ck_assert(xdt_daemon_wait_log(d, "serving the last good state until then, trying again",
				      SERVED_MS));

	xdt_etcd_run(e);
	ck_assert(xdt_daemon_wait_log(d, "no longer serving the last good state", SERVED_MS));
	ck_assert(xdt_daemon_metric(d, "xdsd_serving_last_good") == 0);
	/* the same content from etcd: the same versions, nothing sent */
	ck_assert_int_eq(xdc_next_clusters(s, 1000, NULL), -1);
	put_clusters(e, "default", "c", 3);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 3);
	finish(s, c, d, e);
	free(v1);
	free(v2);
	free(state);
}
END_TEST

#define REVISION "xdsd_etcd_revision{prefix=\"" PREFIX "\"}"
#define UP "xdsd_etcd_up{prefix=\"" PREFIX "\"}"
#define RECONNECTS "xdsd_etcd_reconnects_total{prefix=\"" PREFIX "\"}"
/* the same health, as every source says it (reload/source.h) */
#define SOURCE_UP "xdsd_source_up{source=\"etcd\"}"

/* etcd lost later: still served, reconnected, the watch resumed at the
 * revision reached, so what changed meanwhile is served. Throughout,
 * /status.json, /metrics and `xdsctl status` say where the snapshots
 * come from, the revision held and whether etcd is watched. */
START_TEST(lost_and_resumed)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	json_t *src;
	char *out, want[256];
	long long rev, seen;

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	d = start(e);
	s = client(d, &c, 2);
	ck_assert(xdt_daemon_wait_log(d, "watching '" PREFIX "' from revision ", SERVED_MS));

	/* watching, at the revision of the one put, or of the replica's
	 * registration when it came after (its streams counted) */
	wait_registered(e, 1);
	seen = xdt_etcd_revision(e);
	wait_revision(d, seen);
	src = source_when(d, "healthy", true);
	ck_assert_str_eq(xdt_json_str(src, "kind"), "etcd");
	ck_assert_str_eq(xdt_json_str(src, "prefix"), PREFIX);
	ck_assert_str_eq(xdt_json_str(src, "endpoint"), e->endpoint);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(src, "endpoints"), 0)),
			 e->endpoint);
	ck_assert_int_eq(num(src, "revision"), seen);
	ck_assert_int_eq(num(src, "reconnects"), 0);
	ck_assert(json_is_null(json_object_get(src, "last_error")));
	ck_assert_int_eq(strlen(xdt_json_str(src, "since")), 24);
	json_decref(src);
	ck_assert(xdt_daemon_metric(d, REVISION) == seen);
	ck_assert(xdt_daemon_metric(d, UP) == 1);
	ck_assert(xdt_daemon_metric(d, SOURCE_UP) == 1);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_last_good_timestamp_seconds{source=\"etcd\"}") > 0);
	ck_assert(xdt_daemon_metric(d, RECONNECTS) == 0);
	snprintf(want, sizeof(want), "<span id=etcd-revision>%lld</span>, <span id=etcd-health>watching</span>",
		 seen);
	page_has(d, want);
	ck_assert_int_eq(ctl_status(d, &out), 0);
	snprintf(want, sizeof(want), "source:    etcd %s prefix " PREFIX ", revision %lld, watching since ",
		 e->endpoint, seen);
	ck_assert_msg(strstr(out, want) != NULL, "no '%s' in: %s", want, out);
	/* the reload history says which revision each load read */
	ck_assert_msg(strstr(out, ", etcd revision 2): ") != NULL, "xdsctl status: %s", out);
	free(out);
	ck_assert_int_eq(newest_reload_revision(d, NULL, 0), 2);
	page_has(d, " <span class=muted>etcd revision 2</span>");

	xdt_etcd_kill(e);
	ck_assert(xdt_daemon_wait_log(d, "still serving what was read before", SERVED_MS));
	ck_assert_int_eq(ready_status(d), 200);
	/* not watching: said everywhere, with why */
	src = source_when(d, "healthy", false);
	snprintf(want, sizeof(want), "%s: ", e->endpoint);
	ck_assert_msg(strstr(xdt_json_str(src, "last_error"), want) == xdt_json_str(src, "last_error"),
		      "last_error: %s", xdt_json_str(src, "last_error"));
	ck_assert_int_eq(strlen(xdt_json_str(src, "last_error_at")), 24);
	ck_assert_int_eq(num(src, "revision"), seen); /* what is still served */
	json_decref(src);
	ck_assert(xdt_daemon_metric(d, UP) == 0);
	ck_assert(xdt_daemon_metric(d, SOURCE_UP) == 0);
	ck_assert(xdt_daemon_metric(d, REVISION) == seen);
	snprintf(want, sizeof(want), "<span id=etcd-revision>%lld</span>, <span id=etcd-health>not watching</span>",
		 seen);
	page_has(d, want);
	ck_assert_int_eq(ctl_status(d, &out), 1);
	snprintf(want, sizeof(want), "revision %lld, NOT WATCHING since ", seen);
	ck_assert_msg(strstr(out, want) != NULL &&
			      strstr(out, "\nsources:   etcd DOWN, last good ") != NULL &&
			      strstr(out, "last error ") != NULL &&
			      strstr(out, "is not watching; it serves what it read last") != NULL,
		      "xdsctl status: %s", out);
	free(out);
	/* the tries again are counted */
	for (long long end = xdtest_now_ms() + SERVED_MS;
	     xdt_daemon_metric(d, RECONNECTS) < 1;) {
		XDT_REQUIRE(xdtest_now_ms() < end, "no reconnect counted");
		xdtest_sleep_ms(100);
	}

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 5);
	/* the revision of that change: the replica's own registration,
	 * written again under a new lease, may have come before it */
	rev = key_revision(e, "default.yaml");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 5);
	ck_assert(xdt_daemon_wait_log_count(d, "watching '" PREFIX "' from revision ", 2,
					    SERVED_MS));
	wait_revision(d, rev);
	src = source_when(d, "healthy", true);
	ck_assert_int_ge(num(src, "revision"), rev);
	ck_assert(num(src, "reconnects") >= 1);
	json_decref(src);
	/* the reload of that revision, and the clusters it added */
	ck_assert_int_ge(newest_reload_revision(d, want, sizeof(want)), rev);
	ck_assert_str_eq(want, "+c-2 +c-3 +c-4");
	ck_assert(xdt_daemon_metric(d, UP) == 1);
	ck_assert(xdt_daemon_metric(d, SOURCE_UP) == 1);
	ck_assert(xdt_daemon_metric(d, REVISION) >= rev);
	ck_assert_int_eq(ctl_status(d, &out), 0);
	ck_assert_msg(strstr(out, ", watching since ") != NULL, "xdsctl status: %s", out);
	free(out);
	finish(s, c, d, e);
}
END_TEST

/* Under `source: etcd`, `watch: true` still watches the xDS listener's
 * TLS files, as a reload reads them with etcd's snapshots: a renewed
 * certificate renamed into place goes into use. */
START_TEST(watch_follows_the_tls_files)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	char cfg[2048], *tdir, *text, line[600];

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	tdir = xdtest_snapdir();
	xdtest_install_server_cert(tdir, "server");
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsource: etcd\nwatch: true\nwatch_delay: 100ms\n"
		 "etcd:\n  endpoints: ['%s']\n  dial_timeout: 1s\n"
		 "tls:\n  cert: %s/server.pem\n  key: %s/server.key\n",
		 e->endpoint, tdir, tdir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	snprintf(line, sizeof(line), "watching %s/server.pem", tdir);
	ck_assert_msg(xdt_daemon_wait_log(d, line, SERVED_MS), "no '%s' in the log", line);

	xdtest_install_server_cert(tdir, "server2");
	ck_assert(xdt_daemon_wait_log(d, "info: TLS reloaded: certificate /CN=xdsd server two",
				      SERVED_MS));
	/* asked by the watch, not by the etcd source */
	ck_assert(xdt_daemon_wait_log(d, "watch: reloading etcd prefix", 1));
	xdt_daemon_stop(d, STOP_MS);
	ck_assert(asprintf(&text, "rm -rf '%s'", tdir) > 0);
	ck_assert(system(text) == 0);
	free(text);
	free(tdir);
	xdt_etcd_free(e);
}
END_TEST

/* The keys of the snapshots `d` serves, comma-separated, sorted. */
static char *served_keys(const struct xdt_daemon *d)
{
	json_t *j = xdt_status_json(d), *snap;
	char keys[512] = "";
	size_t i, n = 0;

	json_array_foreach(json_object_get(j, "snapshots"), i, snap)
		n += (size_t)snprintf(keys + n, sizeof(keys) - n, "%s%s",
				      i ? "," : "", xdt_json_str(snap, "key"));
	json_decref(j);
	return strdup(keys);
}

/*
 * The watch lost while etcd compacts past the revision xdsd reached:
 * xdsd cannot resume there, reads the whole prefix again and serves
 * what is current, a key deleted meanwhile included. xdsd reaches etcd
 * through a TCP proxy (haproxy) that goes away and comes back, while
 * the changes and the compaction go to etcd directly.
 */
START_TEST(compacted_while_away)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_balancer *b;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	json_t *src;
	char *keys, want[256];
	long long rev;

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);     /* revision 2 */
	put_clusters(e, "extra", "x", 1);       /* 3 */
	b = xdt_balancer_start(e->endpoint, NULL);
	d = start_at(b->target, NULL);
	s = client(d, &c, 2);
	/* from the revision after the Range's (4, or later when the
	 * replica's registration came first) */
	ck_assert(xdt_daemon_wait_log(d, "watching '" PREFIX "' from revision ", SERVED_MS));
	keys = served_keys(d);
	ck_assert_str_eq(keys, "default,extra");
	free(keys);

	xdt_balancer_kill(b);
	ck_assert(xdt_daemon_wait_log(d, "still serving what was read before", SERVED_MS));
	ck_assert_int_eq(xdt_etcdctl(e, "del " PREFIX "extra.yaml", NULL), 0);
	put_clusters(e, "default", "c", 6);
	rev = xdt_etcd_revision(e);
	snprintf(want, sizeof(want), "compact %lld", rev);
	ck_assert_int_eq(xdt_etcdctl(e, want, NULL), 0);
	xdt_balancer_run(b);

	snprintf(want, sizeof(want), " was compacted away (oldest kept: %lld); reading the prefix again",
		 rev);
	ck_assert(xdt_daemon_wait_log(d, want, SERVED_MS));
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 6);
	/* the prefix read again (its keys, and the replica's registration
	 * when it was written before) */
	ck_assert(xdt_daemon_wait_log_count(d, " under '" PREFIX "' at revision ", 2, SERVED_MS));
	keys = served_keys(d);
	ck_assert_str_eq(keys, "default");
	free(keys);
	src = source_when(d, "healthy", true);
	ck_assert_int_ge(num(src, "revision"), rev);
	ck_assert_msg(strstr(xdt_json_str(src, "last_error"), "compacted away") != NULL,
		      "last_error: %s", xdt_json_str(src, "last_error"));
	json_decref(src);

	/* and watched from there */
	put_clusters(e, "default", "c", 7);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 7);
	ck_assert(xdt_daemon_wait_log_count(d, "watching '" PREFIX "' from revision ", 2, 1));
	xdt_balancer_stop(b);
	finish(s, c, d, e);
}
END_TEST

/* Puts `text` at PREFIX `name`. */
static void put_text(const struct xdt_etcd *e, const char *name, const char *text)
{
	char args[256];

	snprintf(args, sizeof(args), "put %s%s", PREFIX, name);
	ck_assert_int_eq(xdt_etcdctl(e, args, text), 0);
}

/* The value at PREFIX `name` (malloc'd), or NULL when etcd has none. */
static char *etcd_get(const struct xdt_etcd *e, const char *key)
{
	return xdt_etcd_get(e, key);
}

/* The mod revision of PREFIX `name`: the revision of the change that
 * put it, which names a rollout of it. */
static long long key_revision(const struct xdt_etcd *e, const char *name)
{
	char key[512];

	snprintf(key, sizeof(key), PREFIX "%s", name);
	return xdt_etcd_mod_revision(e, key);
}

/* `xdsctl push` of `dir` with `opts`; its exit status, its output in
 * *out. */
static int push(const char *opts, const char *dir, char **out)
{
	char *args;
	int rc;

	ck_assert(asprintf(&args, "push %s '%s'", opts, dir) > 0);
	rc = xdsctl(args, out);
	free(args);
	return rc;
}

/* Waits until the snapshots `d` serves are `keys` (served_keys). */
static void wait_keys(const struct xdt_daemon *d, const char *keys)
{
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		char *now = served_keys(d);
		bool same = strcmp(now, keys) == 0;

		XDT_REQUIRE(same || xdtest_now_ms() < end, "serving '%s', not '%s'", now, keys);
		free(now);
		if (same)
			return;
		xdtest_sleep_ms(100);
	}
}

/* The daemon's source revision, once it is `want` or later. */
static void wait_revision(const struct xdt_daemon *d, long long want)
{
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		json_t *j = xdt_status_json(d);
		long long rev = num(json_object_get(j, "source"), "revision");

		json_decref(j);
		/* or later: the replicas' registrations move it too */
		if (rev >= want)
			return;
		XDT_REQUIRE(xdtest_now_ms() < end, "revision %lld, not %lld", rev, want);
		xdtest_sleep_ms(100);
	}
}

/*
 * A FIFO or a device in place of a file xdsctl push or the etcd client
 * reads: never opened (a FIFO would hold them until something wrote to
 * it), refused saying what the path is. Nothing here reaches etcd: the
 * files are read first.
 */
START_TEST(files_that_are_not_regular_refused_by_push_and_etcd_client)
{
	char *dir = xdtest_clusters_snapdir(1), *bad = xdtest_snapdir();
	char fifo[600], opts[1400], want[700], cfg[1400], *out, *log;
	struct xdt_daemon *d;
	static const struct {
		const char *opt, *what;
		int status; /* a schema push cannot load: 1, as ever */
	} push_opts[] = {
		{"-c", "configuration", 2},
		{"--schema", "schema", 1},
		{"--cacert", "etcd CA file", 2},
	};

	snprintf(fifo, sizeof(fifo), "%s/fifo", bad);
	ck_assert(mkfifo(fifo, 0600) == 0);
	for (size_t i = 0; i < sizeof(push_opts) / sizeof(push_opts[0]); i++) {
		snprintf(opts, sizeof(opts), "--etcd 127.0.0.1:1 %s '%s'", push_opts[i].opt, fifo);
		ck_assert_int_eq(push(opts, dir, &out), push_opts[i].status);
		snprintf(want, sizeof(want), "%s: the %s is a FIFO; it must be a regular file",
			 fifo, push_opts[i].what);
		ck_assert_msg(strstr(out, want) != NULL, "push %s: no '%s' in: %s", opts, want, out);
		free(out);
	}
	ck_assert_int_eq(push("--etcd 127.0.0.1:1 --key /dev/zero --cert /dev/zero", dir, &out), 2);
	ck_assert_msg(strstr(out, "/dev/zero: the etcd client key is a character device; it must be a regular file") != NULL,
		      "%s", out);
	free(out);
	/* a snapshot file: checked as xdsd --check does */
	snprintf(want, sizeof(want), "%s/default.yaml", bad);
	ck_assert(rename(fifo, want) == 0);
	ck_assert_int_eq(push("--etcd 127.0.0.1:1", bad, &out), 2);
	snprintf(opts, sizeof(opts), "%s: the snapshot file is a FIFO; it must be a regular file", want);
	ck_assert_msg(strstr(out, opts) != NULL, "no '%s' in: %s", opts, out);
	free(out);

	/* the daemon's etcd client, at start */
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsource: etcd\n"
		 "etcd:\n  endpoints: ['127.0.0.1:1']\n  tls:\n    ca: %s\n", want);
	snprintf(opts, sizeof(opts), "%s: the etcd CA file is a FIFO; it must be a regular file", want);
	d = xdt_daemon_spawn(cfg, NULL);
	ck_assert(xdt_daemon_wait(d, START_MS));
	ck_assert_int_eq(d->exit_status, 1);
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, opts) != NULL &&
			      strstr(log, "cannot use the etcd.tls files; not starting") != NULL,
		      "%s", log);
	free(log);
	xdt_daemon_free(d);
	free(bad);
	free(dir);
}
END_TEST

/*
 * xdsctl push: a directory checked as --check checks it and written in
 * one transaction (one revision), served by the daemon; a key whose
 * file is gone deleted (and one that no file ever gave); a broken
 * directory writes nothing, with --check's messages and exit status 2;
 * an etcd that cannot be reached is exit status 3. The settings come
 * from the command line or from xdsd.yaml (-c).
 */
START_TEST(push_checked_in_one_transaction)
{
	struct xdt_etcd *e = xdt_etcd_new();
	char *dir = xdtest_snapdir(), *out, opts[128], want[256];
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	long long rev;

	xdt_etcd_run(e);
	put_clusters(e, "stray", "s", 1);
	/* xdsd's own keys: the replicas write them, push leaves them be */
	put_text(e, ".xdsd/rollout", "{\"id\": 1}");
	put_text(e, ".xdsd/replicas/r1", "{}");
	d = start(e);
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	xdtest_write_clusters(dir, "default.yaml", "c", 2);
	xdtest_write_clusters(dir, "extra.yaml", "x", 1);

	/* from the command line: one revision, the stray key gone (the
	 * replica's own registration may move etcd's revision besides: the
	 * push is known by the revision of the keys it wrote) */
	snprintf(opts, sizeof(opts), "--etcd 127.0.0.1:1,%s --prefix " PREFIX, e->endpoint);
	ck_assert_int_eq(push(opts, dir, &out), 0);
	snprintf(want, sizeof(want), "pushed 2 files to %s under '" PREFIX "', 1 key deleted: revision ",
		 e->endpoint);
	ck_assert_msg(strstr(out, want) != NULL, "no '%s' in: %s", want, out);
	rev = strtoll(strstr(out, want) + strlen(want), NULL, 10);
	free(out);
	ck_assert_int_eq(key_revision(e, "default.yaml"), rev);
	ck_assert_int_eq(key_revision(e, "extra.yaml"), rev);
	wait_revision(d, rev);
	wait_keys(d, "default,extra");
	out = etcd_get(e, PREFIX ".xdsd/rollout");
	ck_assert_msg(out != NULL && strcmp(out, "{\"id\": 1}") == 0,
		      "push changed xdsd's own key: %s", out ? out : "(gone)");
	free(out);
	out = etcd_get(e, PREFIX ".xdsd/replicas/r1");
	ck_assert_msg(out != NULL, "push deleted xdsd's own key");
	free(out);
	s = client(d, &c, 2);

	/* a file removed: its key deleted, with -c's settings */
	snprintf(want, sizeof(want), "%s/extra.yaml", dir);
	ck_assert(unlink(want) == 0);
	xdtest_write_clusters(dir, "default.yaml", "c", 4);
	snprintf(opts, sizeof(opts), "-c '%s'", d->config);
	ck_assert_int_eq(push(opts, dir, &out), 0);
	ck_assert_msg(strstr(out, "pushed 1 file to ") != NULL &&
			      strstr(out, "1 key deleted") != NULL, "%s", out);
	free(out);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 4);
	rev = key_revision(e, "default.yaml");
	ck_assert_ptr_null(etcd_get(e, PREFIX "extra.yaml"));
	wait_revision(d, rev);
	wait_keys(d, "default");

	/* a broken file: --check's messages, nothing written */
	free(xdtest_write_file(dir, "broken.yaml", "clusters: {}\n"));
	xdtest_write_clusters(dir, "default.yaml", "c", 5);
	ck_assert_int_eq(push(opts, dir, &out), 2);
	snprintf(want, sizeof(want), "%s/broken.yaml:1:11: clusters: expected a list", dir);
	ck_assert_msg(strstr(out, want) != NULL &&
			      strstr(out, "1 error in the snapshots; nothing written to etcd") != NULL,
		      "%s", out);
	free(out);
	ck_assert_int_eq(key_revision(e, "default.yaml"), rev);
	ck_assert_ptr_null(etcd_get(e, PREFIX "broken.yaml"));
	ck_assert_int_eq(xdc_next_clusters(s, 1000, NULL), -1);

	/* etcd not there: exit status 3, said why */
	snprintf(want, sizeof(want), "%s/broken.yaml", dir);
	ck_assert(unlink(want) == 0);
	ck_assert_int_eq(push("--etcd 127.0.0.1:1", dir, &out), 3);
	ck_assert_msg(strstr(out, "xdsctl: etcd 127.0.0.1:1: UNAVAILABLE") != NULL, "%s", out);
	free(out);
	ck_assert_int_eq(key_revision(e, "default.yaml"), rev);

	/* a secret without "@allow": --check's warning, under -c's TLS
	 * settings (none here), or without them as the daemon's may be */
	free(xdtest_write_file(dir, "secret.yaml",
			       "secrets:\n- name: sec\n"
			       "  generic_secret: {secret: {inline_string: s}}\n"));
	ck_assert_int_eq(push(opts, dir, &out), 0);
	ck_assert_msg(strstr(out, "secrets[0] 'sec': no \"@allow\": no client may fetch it") != NULL,
		      "%s", out);
	free(out);
	snprintf(opts, sizeof(opts), "--etcd %s --prefix " PREFIX, e->endpoint);
	ck_assert_int_eq(push(opts, dir, &out), 0);
	ck_assert_msg(strstr(out, "secrets[0] 'sec': no \"@allow\": every client of snapshot 'secret' with a certificate that the daemon's tls.client_ca verifies") != NULL,
		      "%s", out);
	free(out);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 5);
	ck_assert(asprintf(&out, "rm -rf '%s'", dir) > 0);
	ck_assert(system(out) == 0);
	free(out);
	free(dir);
	finish(s, c, d, e);
}
END_TEST

/* ---------------- replicas ---------------- */

/* A snapshot with every type of resource, each referring to the next as
 * a real one does. */
static const char every_type[] =
	"listeners:\n"
	"- name: lis\n"
	"  address: {socket_address: {address: 0.0.0.0, port_value: 10000}}\n"
	"  filter_chains:\n"
	"  - filters:\n"
	"    - name: envoy.filters.network.http_connection_manager\n"
	"      typed_config:\n"
	"        \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
	"        stat_prefix: lis\n"
	"        rds: {route_config_name: rc, config_source: {ads: {}, resource_api_version: V3}}\n"
	"        http_filters:\n"
	"        - name: envoy.filters.http.router\n"
	"          typed_config: {\"@type\": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}\n"
	"routes:\n"
	"- name: rc\n"
	"  virtual_hosts: [{name: vh, domains: [\"*\"], routes: [{match: {prefix: \"/\"}, route: {cluster: web}}]}]\n"
	"- name: rc-vhds\n"
	"  vhds: {config_source: {ads: {}, resource_api_version: V3}}\n"
	"scoped_routes:\n"
	"- name: sr\n"
	"  route_configuration_name: rc\n"
	"  key: {fragments: [{string_key: tenant-a}]}\n"
	"virtual_hosts:\n"
	"- name: rc-vhds/api\n"
	"  domains: [api.example]\n"
	"  routes: [{match: {prefix: \"/\"}, route: {cluster: web}}]\n"
	"clusters:\n"
	"- name: web\n"
	"  connect_timeout: 1s\n"
	"  type: EDS\n"
	"  eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}, service_name: web}\n"
	"- {name: static, type: STATIC, connect_timeout: 2s}\n"
	"endpoints:\n"
	"- cluster_name: web\n"
	"  endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 8080}}}}]}]\n"
	"secrets:\n"
	"- name: token\n"
	"  \"@allow\": [\"@anyone\"]\n"
	"  generic_secret: {secret: {inline_string: s3cret}}\n"
	"runtimes:\n"
	"- name: rt\n"
	"  layer: {feature: {enabled: true}, ratio: 0.25}\n";

#define NTYPES 8
#define TYPE_PREFIX "type.googleapis.com/"

/* Each type, and what a client asks of it: NULL a wildcard, else
 * names (a wildcard exists for listeners, clusters and scoped routes,
 * docs/protocol.md rules S2 and D2); virtual hosts have no SotW form. */
static const struct {
	const char *url;
	const char *names[3];
	bool sotw;
} types[NTYPES] = {
	{TYPE_PREFIX "envoy.config.listener.v3.Listener", {NULL}, true},
	{TYPE_PREFIX "envoy.config.route.v3.RouteConfiguration", {"rc", "rc-vhds", NULL}, true},
	{TYPE_PREFIX "envoy.config.route.v3.ScopedRouteConfiguration", {NULL}, true},
	{TYPE_PREFIX "envoy.config.route.v3.VirtualHost", {"rc-vhds/api", NULL}, false},
	{TYPE_PREFIX "envoy.config.cluster.v3.Cluster", {NULL}, true},
	{TYPE_PREFIX "envoy.config.endpoint.v3.ClusterLoadAssignment", {"web", NULL}, true},
	{TYPE_PREFIX "envoy.extensions.transport_sockets.tls.v3.Secret", {"token", NULL}, true},
	{TYPE_PREFIX "envoy.service.runtime.v3.Runtime", {"rt", NULL}, true},
};

/* Resources of each type as a client received them: per type, the
 * entries "version \0 name \0 Any.type_url \0 Any.value" (name empty in
 * SotW, whose version is the response's) sorted bytewise, so that two
 * clients compare byte for byte whatever the order of the resources. */
struct entry {
	char *data;
	size_t len;
};

struct served {
	struct entry *e[NTYPES];
	size_t n[NTYPES];
	bool got[NTYPES];
};

static int type_index(const char *url)
{
	for (int i = 0; i < NTYPES; i++)
		if (strcmp(types[i].url, url) == 0)
			return i;
	ck_abort_msg("a response of type %s, which was not asked for", url);
	return -1;
}

/* The index of the type of a response, the first of that type. */
static int first_of_type(struct served *sv, const char *url, const char *form)
{
	int t = type_index(url);

	ck_assert_msg(!sv->got[t], "%s: %s served twice", form, url);
	sv->got[t] = true;
	return t;
}

static void add_entry(struct served *sv, int t, const char *version,
		      const char *name, const Google__Protobuf__Any *any)
{
	size_t vl = strlen(version), nl = strlen(name), ul, len;
	struct entry *e;

	ck_assert_msg(any != NULL, "%s '%s' without its resource", types[t].url, name);
	ul = strlen(any->type_url);
	len = vl + nl + ul + 3 + any->value.len;
	sv->e[t] = realloc(sv->e[t], (sv->n[t] + 1) * sizeof(*sv->e[t]));
	ck_assert(sv->e[t] != NULL);
	e = &sv->e[t][sv->n[t]++];
	e->data = malloc(len);
	e->len = len;
	ck_assert(e->data != NULL);
	memcpy(e->data, version, vl + 1);
	memcpy(e->data + vl + 1, name, nl + 1);
	memcpy(e->data + vl + nl + 2, any->type_url, ul + 1);
	if (any->value.len > 0)
		memcpy(e->data + vl + nl + ul + 3, any->value.data, any->value.len);
}

static int by_bytes(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = memcmp(x->data, y->data, x->len < y->len ? x->len : y->len);

	return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

static void served_sort(struct served *sv)
{
	for (int t = 0; t < NTYPES; t++)
		if (sv->n[t] > 1)
			qsort(sv->e[t], sv->n[t], sizeof(*sv->e[t]), by_bytes);
}

static void served_free(struct served *sv)
{
	for (int t = 0; t < NTYPES; t++) {
		for (size_t i = 0; i < sv->n[t]; i++)
			free(sv->e[t][i].data);
		free(sv->e[t]);
	}
}

/* Every type was served to both, with the same entries, byte for byte. */
static void same_bytes(const struct served *a, const struct served *b,
		       const char *what, bool sotw)
{
	for (int t = 0; t < NTYPES; t++) {
		if (sotw && !types[t].sotw)
			continue;
		ck_assert_msg(a->got[t] && b->got[t] && a->n[t] > 0,
			      "%s: %s not served", what, types[t].url);
		ck_assert_msg(a->n[t] == b->n[t], "%s: %s: %zu resources, and %zu", what,
			      types[t].url, a->n[t], b->n[t]);
		for (size_t i = 0; i < a->n[t]; i++)
			ck_assert_msg(a->e[t][i].len == b->e[t][i].len &&
					      memcmp(a->e[t][i].data, b->e[t][i].data,
						     a->e[t][i].len) == 0,
				      "%s: %s: resource %zu differs (version %s, and %s)",
				      what, types[t].url, i, a->e[t][i].data,
				      b->e[t][i].data);
	}
}

static Envoy__Config__Core__V3__Node replica_node = ENVOY__CONFIG__CORE__V3__NODE__INIT;

/* What a SotW client of `d` on ADS is served of every type it can ask
 * for (each response ACKed). */
static void sotw_fetch(const struct xdt_daemon *d, struct served *sv)
{
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_open(c, XDC_ADS);
	int want = 0;

	memset(sv, 0, sizeof(*sv));
	replica_node.id = (char *)"replica-client";
	replica_node.cluster = (char *)"any";
	for (int t = 0; t < NTYPES; t++) {
		Envoy__Service__Discovery__V3__DiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		if (!types[t].sotw)
			continue;
		req.node = &replica_node;
		req.type_url = (char *)types[t].url;
		while (types[t].names[req.n_resource_names] != NULL)
			req.n_resource_names++;
		req.resource_names = (char **)types[t].names;
		ck_assert(xdc_send_sotw(s, &req, SERVED_MS));
		want++;
	}
	for (int got = 0; got < want; got++) {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r =
			xdc_recv_sotw(s, SERVED_MS);
		Envoy__Service__Discovery__V3__DiscoveryRequest ack =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
		int t;

		ck_assert_msg(r != NULL, "SotW: %d of %d types served", got, want);
		t = first_of_type(sv, r->type_url, "SotW");
		for (size_t i = 0; i < r->n_resources; i++)
			add_entry(sv, t, r->version_info, "", r->resources[i]);
		ack.type_url = r->type_url;
		ack.version_info = r->version_info;
		ack.response_nonce = r->nonce;
		ack.n_resource_names = 0;
		while (types[t].names[ack.n_resource_names] != NULL)
			ack.n_resource_names++;
		ack.resource_names = (char **)types[t].names;
		ck_assert(xdc_send_sotw(s, &ack, SERVED_MS));
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	}
	served_sort(sv);
	xdc_stream_free(s);
	xdc_conn_free(c);
}

/* What a delta client of `d` on ADS is served of every type; with
 * `held` (the entries another replica served, or NULL) presented as
 * its initial_resource_versions, as a client failing over does. */
static struct xdc_stream *delta_open(struct xdc_conn *c, const struct served *held)
{
	struct xdc_stream *s = xdc_open(c, XDC_DELTA_ADS);

	replica_node.id = (char *)"replica-client";
	replica_node.cluster = (char *)"any";
	for (int t = 0; t < NTYPES; t++) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest__InitialResourceVersionsEntry
			ent[4], *entp[4];
		const char *star[] = {"*", NULL};
		const char *const *names = types[t].names[0] != NULL ? types[t].names : star;

		req.node = &replica_node;
		req.type_url = (char *)types[t].url;
		while (names[req.n_resource_names_subscribe] != NULL)
			req.n_resource_names_subscribe++;
		req.resource_names_subscribe = (char **)names;
		for (size_t i = 0; held != NULL && i < held->n[t]; i++) {
			ck_assert(i < 4);
			envoy__service__discovery__v3__delta_discovery_request__initial_resource_versions_entry__init(&ent[i]);
			/* an entry: version \0 name \0 ... */
			ent[i].value = held->e[t][i].data;
			ent[i].key = held->e[t][i].data + strlen(held->e[t][i].data) + 1;
			entp[i] = &ent[i];
			req.n_initial_resource_versions++;
		}
		req.initial_resource_versions = entp;
		ck_assert(xdc_send_delta(s, &req, SERVED_MS));
	}
	return s;
}

static void delta_fetch(const struct xdt_daemon *d, struct served *sv)
{
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = delta_open(c, NULL);

	memset(sv, 0, sizeof(*sv));
	for (int got = 0; got < NTYPES; got++) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r =
			xdc_recv_delta(s, SERVED_MS);
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest ack =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
		int t;

		ck_assert_msg(r != NULL, "delta: %d of %d types served", got, NTYPES);
		t = first_of_type(sv, r->type_url, "delta");
		for (size_t i = 0; i < r->n_resources; i++)
			add_entry(sv, t, r->resources[i]->version, r->resources[i]->name,
				  r->resources[i]->resource);
		ack.type_url = r->type_url;
		ack.response_nonce = r->nonce;
		ck_assert(xdc_send_delta(s, &ack, SERVED_MS));
		envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	}
	served_sort(sv);
	xdc_stream_free(s);
	xdc_conn_free(c);
}

/* The Any bytes a SotW and a delta client of one replica got are the
 * same too (the resource encoded once, whatever the form). */
static void same_resources(const struct served *sotw, const struct served *delta)
{
	for (int t = 0; t < NTYPES; t++) {
		if (!types[t].sotw)
			continue;
		ck_assert_int_eq(sotw->n[t], delta->n[t]);
		for (size_t i = 0; i < sotw->n[t]; i++) {
			const struct entry *a = &sotw->e[t][i];
			bool found = false;
			/* SotW: version \0 \0 url \0 value; delta: version \0
			 * name \0 url \0 value: compare from the url on */
			size_t askip = strlen(a->data) + 2;

			for (size_t j = 0; j < delta->n[t] && !found; j++) {
				const struct entry *b = &delta->e[t][j];
				size_t bskip = strlen(b->data) + 1;

				bskip += strlen(b->data + bskip) + 1;
				found = a->len - askip == b->len - bskip &&
					memcmp(a->data + askip, b->data + bskip,
					       a->len - askip) == 0;
			}
			ck_assert_msg(found, "%s: a SotW resource no delta one matches",
				      types[t].url);
		}
	}
}

/*
 * Two replicas on one etcd prefix serve byte-identical resources under
 * identical versions: a SotW and a delta client of each, every type
 * (listeners, routes, scoped routes, virtual hosts, clusters,
 * endpoints, secrets, runtimes), compared by their Any bytes and
 * version strings. So a delta client failing over from one to the
 * other with what it holds is sent nothing again.
 */
START_TEST(replicas_serve_identical_bytes)
{
	struct xdt_etcd *e = xdt_etcd_new();
	char *dir = xdtest_snapdir(), *out, opts[128];
	struct xdt_daemon *d[2];
	struct served sotw[2], delta[2];
	struct xdc_conn *c;
	struct xdc_stream *s;
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r;

	xdt_etcd_run(e);
	free(xdtest_write_file(dir, "default.yaml", every_type));
	snprintf(opts, sizeof(opts), "--etcd %s", e->endpoint);
	ck_assert_int_eq(push(opts, dir, &out), 0);
	free(out);
	for (int i = 0; i < 2; i++) {
		d[i] = start(e);
		ck_assert(xdt_daemon_wait_log(d[i], "serving the snapshots of etcd prefix",
					      SERVED_MS));
		sotw_fetch(d[i], &sotw[i]);
		delta_fetch(d[i], &delta[i]);
		same_resources(&sotw[i], &delta[i]);
	}
	same_bytes(&sotw[0], &sotw[1], "SotW, replica 1 and 2", true);
	same_bytes(&delta[0], &delta[1], "delta, replica 1 and 2", false);

	/* failing over with what replica 1 served: nothing sent again */
	c = xdc_connect(d[1]->target);
	s = delta_open(c, &delta[0]);
	r = xdc_recv_delta(s, 1000);
	ck_assert_msg(r == NULL, "replica 2 sent %s again (%zu resources)",
		      r != NULL ? r->type_url : "", r != NULL ? r->n_resources : 0);
	xdc_stream_free(s);
	xdc_conn_free(c);

	for (int i = 0; i < 2; i++) {
		served_free(&sotw[i]);
		served_free(&delta[i]);
		xdt_daemon_stop(d[i], STOP_MS);
	}
	ck_assert(asprintf(&out, "rm -rf '%s'", dir) > 0);
	ck_assert(system(out) == 0);
	free(out);
	free(dir);
	xdt_etcd_free(e);
}
END_TEST

/* The version of each snapshot `d` serves, "key=version ..." (malloc'd). */
static char *versions(const struct xdt_daemon *d)
{
	json_t *st = xdt_status_json(d), *snap;
	char *out = strdup("");
	size_t i;

	json_array_foreach(json_object_get(st, "snapshots"), i, snap) {
		char *more;

		ck_assert(asprintf(&more, "%s%s=%s ", out,
				   xdt_json_str(snap, "key"),
				   xdt_json_str(snap, "version")) > 0);
		free(out);
		out = more;
	}
	json_decref(st);
	return out;
}

/* One key changed: the reload parses that value only, and serves the
 * versions a daemon loading the prefix afresh serves. */
START_TEST(one_key_changed_parses_one)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d, *fresh;
	char *log, *line, *v, *w;

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	put_clusters(e, "edge", "e", 2);
	d = start_with(e, "admin_listen: 127.0.0.1:0\n");
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	/* the first load was a reload too, of every value */
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded ", 1, SERVED_MS));
	put_clusters(e, "edge", "e", 3);
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded ", 2, SERVED_MS));
	log = xdt_daemon_log(d);
	line = strstr(strstr(log, "reloaded ") + 1, "reloaded ");
	line[strcspn(line, "\n")] = '\0';
	ck_assert_msg(strstr(line, "(1 file parsed)") != NULL, "%s", line);
	free(log);
	fresh = start_with(e, "admin_listen: 127.0.0.1:0\n");
	ck_assert(xdt_daemon_wait_log(fresh, "serving the snapshots of etcd prefix", SERVED_MS));
	v = versions(d);
	w = versions(fresh);
	ck_assert_str_eq(v, w);
	free(v);
	free(w);
	xdt_daemon_stop(fresh, STOP_MS);
	xdt_daemon_stop(d, STOP_MS);
	xdt_etcd_free(e);
}
END_TEST

/* etcd over TLS that requires a client certificate: served with
 * etcd.tls, and the changes followed; xdsctl push over it too. */
START_TEST(mutual_tls)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	char opts[1024], *dir, *out;

	e->tls = true;
	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	d = start(e);
	s = client(d, &c, 2);
	put_clusters(e, "default", "c", 3);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 3);

	/* xdsctl push over the same TLS: the files from the command line,
	 * then from xdsd.yaml's etcd.tls (-c) */
	dir = xdtest_clusters_snapdir(4);
	snprintf(opts, sizeof(opts), "--etcd %s --cacert %s --cert %s --key %s",
		 e->endpoint, xdtest_cert("ca.pem"), xdtest_cert("frontend.pem"),
		 xdtest_cert("frontend.key"));
	ck_assert_int_eq(push(opts, dir, &out), 0);
	free(out);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 4);
	xdtest_write_clusters(dir, "default.yaml", "c", 5);
	snprintf(opts, sizeof(opts), "-c %s", d->config);
	ck_assert_int_eq(push(opts, dir, &out), 0);
	free(out);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 5);
	/* without the client certificate etcd refuses it */
	snprintf(opts, sizeof(opts), "--etcd %s --cacert %s", e->endpoint,
		 xdtest_cert("ca.pem"));
	ck_assert_int_ne(push(opts, dir, &out), 0);
	ck_assert_msg(strstr(out, "xdsctl: etcd ") != NULL, "%s", out);
	free(out);
	free(dir);
	finish(s, c, d, e);
}
END_TEST

/* With a staged rollout, the first snapshots read from etcd reach every
 * node at once (there is nothing to roll out from); a change after
 * them goes to the canaries first. */
START_TEST(rollout_after_the_first_load)
{
	struct xdt_etcd *e = xdt_etcd_new();
	char want[128];
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	d = start_with(e, "rollout:\n  canary: ['canary-*']\n  bake: 1h\n");
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	s = client(d, &c, 2); /* node "n": no canary */
	put_clusters(e, "default", "c", 3);
	/* the rollout is known by the revision of its change */
	snprintf(want, sizeof(want), "rollout %lld (etcd): 1 snapshot key changed",
		 key_revision(e, "default.yaml"));
	ck_assert(xdt_daemon_wait_log(d, want, SERVED_MS));
	ck_assert_int_eq(xdc_next_clusters(s, 1000, NULL), -1);
	finish(s, c, d, e);
}
END_TEST

/* With rollout: and a saved state, what etcd holds at start that
 * differs from that state goes to the canaries first: the other nodes
 * are served the saved state. */
START_TEST(restart_stages_what_differs_from_the_last_good_state)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s, *canary;
	char *state = xdtest_snapdir(), extra[512], want[128];

	snprintf(extra, sizeof(extra),
		 "state_dir: %s\nrollout:\n  canary: ['canary-*']\n  bake: 1h\n",
		 state);
	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 2);
	d = start_with(e, extra);
	s = client(d, &c, 2);
	ck_assert(xdt_daemon_wait_log(d, "saved the last good state", SERVED_MS));
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_stop(d, STOP_MS);

	put_clusters(e, "default", "c", 3);
	d = start_with(e, extra);
	s = client(d, &c, 2); /* node "n": the saved state */
	canary = xdc_watch_clusters(c, "canary-1", "any");
	ck_assert_int_eq(xdc_next_clusters(canary, SERVED_MS, NULL), 3);
	ck_assert_int_eq(xdc_next_clusters(s, 500, NULL), -1);
	ck_assert(xdt_daemon_wait_log(d, "differ from the last good state saved ", SERVED_MS));
	snprintf(want, sizeof(want), "rollout %lld (etcd): 1 snapshot key changed",
		 key_revision(e, "default.yaml"));
	ck_assert(xdt_daemon_wait_log(d, want, SERVED_MS));
	ck_assert_int_eq(xdt_daemon_log_count(d, "saved the last good state"), 0);
	xdc_stream_free(canary);
	finish(s, c, d, e);
	free(state);
}
END_TEST


/* Keys a reload never reads (a lock, a leader election, a hidden file)
 * are no change: put again and again, they are not noted, give no
 * reload and put off none; a real change then gives one reload. */
START_TEST(ignored_keys_are_no_change)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 1);
	d = start(e);
	s = client(d, &c, 1);
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded ", 1, SERVED_MS));
	for (int i = 0; i < 5; i++) {
		char beat[32];

		snprintf(beat, sizeof(beat), "%d", i);
		put_text(e, "lock", beat);
		put_text(e, "election/leader", beat);
		put_text(e, ".heartbeat.yaml", beat);
		put_text(e, "team/deeper/x.yaml", beat);
	}
	put_clusters(e, "default", "c", 2);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 2);
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded ", 2, SERVED_MS));
	/* the one change, noted once; the 20 puts before it, never */
	ck_assert_int_eq(xdt_daemon_log_count(d, " up to revision "), 1);
	ck_assert_int_eq(xdt_daemon_log_count(d, "reloaded "), 2);
	finish(s, c, d, e);
}
END_TEST

/* A key rewritten more often than watch_delay still gives a reload,
 * watch_delay_max after the first change at most, while the writes go
 * on (they stop once it came, or after MAX_WRITES). */
#define MAX_WRITES 150
START_TEST(churn_puts_a_reload_off_watch_delay_max_at_most)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d;
	char cfg[1024];
	int writes = 0;

	xdt_etcd_run(e);
	put_clusters(e, "default", "c", 1);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsource: etcd\nwatch_delay: 2s\nwatch_delay_max: 3s\n"
		 "etcd:\n  endpoints: ['%s']\n  dial_timeout: 1s\n",
		 e->endpoint);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded ", 1, SERVED_MS));
	while (xdt_daemon_log_count(d, "reloaded ") < 2 && writes < MAX_WRITES) {
		put_clusters(e, "edge", "e", 1 + writes % 3);
		writes++;
		xdtest_sleep_ms(100);
	}
	ck_assert_msg(xdt_daemon_log_count(d, "reloaded ") >= 2,
		      "no reload during %d writes, each sooner than watch_delay after the last",
		      writes);
	xdt_daemon_stop(d, STOP_MS);
	xdt_etcd_free(e);
}
END_TEST

/* A prefix of more keys than a page is read in pages at one revision,
 * and every key is served; then one key changed hands the reload that
 * one change, not the prefix. */
#define MANY_KEYS 2500
START_TEST(prefix_read_in_pages_one_change_handed_over)
{
	struct xdt_etcd *e = xdt_etcd_new();
	char *dir = xdtest_snapdir(), *out, opts[128], name[64], want[128];
	struct xdt_daemon *d;
	json_t *st;

	xdt_etcd_run(e);
	xdtest_write_clusters(dir, "default.yaml", "c", 1);
	for (int i = 1; i < MANY_KEYS; i++) {
		char prefix[32];

		snprintf(name, sizeof(name), "k%05d.yaml", i);
		snprintf(prefix, sizeof(prefix), "k%05d", i);
		xdtest_write_clusters(dir, name, prefix, 1);
	}
	snprintf(opts, sizeof(opts), "--etcd %s --prefix " PREFIX, e->endpoint);
	ck_assert_int_eq(push(opts, dir, &out), 0);
	free(out);
	d = start_with(e, "admin_listen: 127.0.0.1:0\n");
	snprintf(want, sizeof(want), "read %d keys under '" PREFIX "' at revision ",
		 MANY_KEYS);
	ck_assert(xdt_daemon_wait_log(d, want, SERVED_MS));
	/* 1000 keys a page (XD_ETCD_PAGE_KEYS) */
	ck_assert_msg(xdt_daemon_log_count(d, "(3 pages)") == 1, "not read in 3 pages");
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	st = xdt_status_json(d);
	ck_assert_int_eq(json_array_size(json_object_get(st, "snapshots")), MANY_KEYS);
	json_decref(st);
	ck_assert_int_eq(xdt_daemon_log_count(d, "changes since the last load handed to the reload (the prefix read whole)"), 1);

	put_clusters(e, "k01234", "k01234", 2);
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded ", 2, SERVED_MS));
	ck_assert_int_eq(xdt_daemon_log_count(d, ": 1 change since the last load handed to the reload"), 1);
	xdt_daemon_stop(d, STOP_MS);
	xdt_etcd_free(e);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("etcd");
	TCase *tc = tcase_create("etcd");
	TCase *changes = tcase_create("changes");

	xdtest_make_certs();
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, served_followed_and_refused);
	tcase_add_test(tc, unreachable_at_start);
	tcase_add_test(tc, broken_at_start);
	tcase_add_test(tc, broken_at_start_serves_last_good);
	tcase_add_test(tc, unreachable_at_start_serves_last_good);
	tcase_add_test(tc, lost_and_resumed);
	tcase_add_test(tc, watch_follows_the_tls_files);
	tcase_add_test(tc, compacted_while_away);
	tcase_add_test(tc, push_checked_in_one_transaction);
	tcase_add_test(tc, files_that_are_not_regular_refused_by_push_and_etcd_client);
	tcase_add_test(tc, replicas_serve_identical_bytes);
	tcase_add_test(tc, mutual_tls);
	tcase_add_test(tc, rollout_after_the_first_load);
	tcase_add_test(tc, restart_stages_what_differs_from_the_last_good_state);
	tcase_add_test(tc, one_key_changed_parses_one);
	suite_add_tcase(s, tc);
	/* what a reload costs and when it comes */
	tcase_set_timeout(changes, 240);
	tcase_add_test(changes, ignored_keys_are_no_change);
	tcase_add_test(changes, churn_puts_a_reload_off_watch_delay_max_at_most);
	tcase_add_test(changes, prefix_read_in_pages_one_change_handed_over);
	suite_add_tcase(s, changes);
	return xdtest_run(s);
}
