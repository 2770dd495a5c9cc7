/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admin endpoint's overview pages (xdsd(8), ADMIN ENDPOINT): GET
 * /status.json read as JSON by jansson, GET /status read as text and,
 * in the "browser" case, rendered by a real headless Chromium (Debian's
 * chromium, which scripts/install-deps installs: the case fails without
 * it; $XDSD_CHROMIUM names another binary). The daemon is the real
 * binary with real xDS clients on loopback: nodes that ACK, one that
 * NACKs endpoints, one whose id is markup, and 501 that only watch (the
 * page's bound on rows); in the "browser" case over mTLS, with client
 * certificates from tests/lib/make-certs.sh, so that rows show their
 * identities. That case also measures the page's layout: sixteen
 * clients, each NACKing with a message as long as Envoy's, and fifteen
 * of them must fit a 1400x1000 window with their identities and
 * messages (browser_fits_a_nacking_fleet).
 *
 * With XDSD_STATUS_SCREENSHOT=FILE the browser case also leaves its
 * screenshot there: `make status-screenshot` regenerates docs/status.png
 * that way.
 */
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"
#include "daemon.h"
#include "node.h"
#include "util/xalloc.h"
#include "xdtest.h"

#define START_MS 20000
#define STOP_MS 5000
#define POLL_MS 10000
/* Chromium takes seconds to start on a small, busy machine. */
#define BROWSER_S 180
#define HOSTILE_ID "<script>alert(1)</script>"
#define HOSTILE_ID_TEXT "&lt;script&gt;alert(1)&lt;/script&gt;"
#define NACK_TEXT "endpoints rejected: <img src=x onerror=alert(2)>\nport 1 is reserved"
#define NACK_TEXT_HTML "endpoints rejected: &lt;img src=x onerror=alert(2)&gt;\nport 1 is reserved"
/* A snapshot with an unknown section on line 3, its name markup. */
#define BAD_SNAPSHOT                                                          \
	"clusters:\n"                                                         \
	"- {name: a, type: EDS, connect_timeout: 1s, eds_cluster_config: {eds_config: {ads: {}}}}\n" \
	"\"<b>bogus</b>\": []\n"

/* ---------------- the daemon and its files ---------------- */

static struct xdt_daemon *start(const char *dir)
{
	char cfg[1024];

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	return xdt_daemon_start(cfg, NULL, START_MS);
}

/* xdsd over TLS with client certificates required (make-certs.sh). */
static struct xdt_daemon *start_mtls(const char *dir)
{
	char cfg[4096];
	int n;

	n = snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\ntls:\n  cert: %s\n",
		     dir, xdtest_cert("server.pem"));
	n += snprintf(cfg + n, sizeof(cfg) - (size_t)n, "  key: %s\n  client_ca: %s\n",
		      xdtest_cert("server.key"), xdtest_cert("ca.pem"));
	ck_assert((size_t)n < sizeof(cfg));
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

static void open_node(struct xdt_node *n, const struct xdt_daemon *d,
		      const char *id, const char *nack)
{
	struct xdt_node_opts o = {.id = id, .endpoints = "svc", .nack_endpoints = nack};

	xdt_node_open(n, d->target, &o);
}

/* ---------------- reading the pages ---------------- */

static long long num(json_t *obj, const char *path)
{
	char key[64];
	const char *dot;

	/* "clients.nacked": one level of nesting is all the pages have */
	while ((dot = strchr(path, '.')) != NULL) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		obj = json_object_get(obj, key);
		path = dot + 1;
	}
	ck_assert_msg(json_is_integer(json_object_get(obj, path)), "no integer '%s'", path);
	return json_integer_value(json_object_get(obj, path));
}

/* Polls /status.json until `path` is `want` (xdsd reads the clients'
 * answers and finishes reloads on its own time); returns that document. */
static json_t *wait_status(struct xdt_daemon *d, const char *path, long long want)
{
	long long deadline = xdtest_now_ms() + POLL_MS;

	for (;;) {
		json_t *j = xdt_status_json(d);

		if (num(j, path) == want)
			return j;
		ck_assert_msg(xdtest_now_ms() < deadline, "/status.json: %s is %lld, never %lld",
			      path, num(j, path), want);
		json_decref(j);
		xdtest_sleep_ms(25);
	}
}

static char *status_html(struct xdt_daemon *d)
{
	int status;
	char *type, *body = xdt_admin(d, "GET", "/status", NULL, &status, &type);

	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(type, "text/html; charset=utf-8");
	free(type);
	return body;
}

/* The text from `from` up to the first `to` after it (malloc'd), or a
 * failed test. */
static char *between(const char *text, const char *from, const char *to)
{
	const char *a = strstr(text, from), *b;

	ck_assert_msg(a != NULL, "no '%s' in the page", from);
	b = strstr(a, to);
	ck_assert_msg(b != NULL, "no '%s' after '%s'", to, from);
	return strndup(a, (size_t)(b - a));
}

static int occurrences(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* ---------------- /status.json ---------------- */

START_TEST(status_json_overview)
{
	char *dir = xdtest_snapdir(), *body;
	struct xdt_daemon *d;
	struct xdt_node ok, twin, bad;
	json_t *j, *snap, *res, *hist, *rec, *answer;
	json_error_t err;
	int status;
	long long started;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	started = xdtest_now_ms();
	d = start(dir);
	open_node(&ok, d, "ack-1", NULL);
	open_node(&twin, d, "ack-1", NULL); /* a second stream of one node */
	open_node(&bad, d, "nack-1", NACK_TEXT);
	j = wait_status(d, "clients.nacked", 1);
	json_decref(j);
	j = wait_status(d, "clients.synced", 2);

	ck_assert_str_eq(xdt_json_str(j, "version"), PACKAGE_VERSION);
	ck_assert(json_is_true(json_object_get(j, "ready")));
	ck_assert_str_eq(xdt_json_str(j, "listen"), "127.0.0.1:0");
	ck_assert_int_eq(num(j, "port"), d->port); /* the port taken */
	ck_assert_int_eq(strlen(xdt_json_str(j, "started")), 24); /* ms, UTC: ...Z */
	ck_assert(xdt_json_str(j, "started")[23] == 'Z');
	/* up since it was started here, however long that took */
	ck_assert(num(j, "uptime_seconds") >= 0 &&
		  num(j, "uptime_seconds") <= (xdtest_now_ms() - started) / 1000 + 1);
	ck_assert_int_eq(num(j, "streams"), 3);
	ck_assert_int_eq(num(j, "nodes"), 2);
	ck_assert_int_eq(num(j, "clients.pending"), 0);
	/* where the snapshots come from: the directory (etcd's in check_etcd) */
	ck_assert_str_eq(xdt_json_str(json_object_get(j, "source"), "kind"), "files");
	ck_assert_str_eq(xdt_json_str(json_object_get(j, "source"), "dir"), dir);

	ck_assert_int_eq(json_array_size(json_object_get(j, "snapshots")), 1);
	snap = json_array_get(json_object_get(j, "snapshots"), 0);
	ck_assert_str_eq(xdt_json_str(snap, "key"), "default");
	ck_assert_int_eq(strlen(xdt_json_str(snap, "version")), 16);
	ck_assert_int_eq(strlen(xdt_json_str(snap, "since")), 24);
	res = json_object_get(snap, "resources");
	ck_assert_int_eq(json_object_size(res), 2); /* only the non-empty types */
	ck_assert_int_eq(num(res, "clusters"), 1);
	ck_assert_int_eq(num(res, "endpoints"), 1);
	ck_assert_msg(num(snap, "bytes") > 20 && num(snap, "bytes") < 200, "bytes %lld", num(snap, "bytes"));
	{
		/* the version every client is served */
		int st;
		char *c = xdt_admin(d, "GET", "/clients?node=ack-1", NULL, &st, NULL);
		char want[64];

		snprintf(want, sizeof(want), "\"snapshot_version\":\"%s\"", xdt_json_str(snap, "version"));
		ck_assert_msg(strstr(c, want) != NULL, "%s not in %s", want, c);
		free(c);
	}

	ck_assert_int_eq(num(j, "reloads.ok"), 0);
	ck_assert_int_eq(num(j, "reloads.failed"), 0);
	hist = json_object_get(json_object_get(j, "reloads"), "history");
	ck_assert_int_eq(json_array_size(hist), 1);
	rec = json_array_get(hist, 0);
	ck_assert_str_eq(xdt_json_str(rec, "trigger"), "start-up");
	ck_assert(json_is_true(json_object_get(rec, "ok")));
	ck_assert_int_eq(num(rec, "changed"), 1);
	json_decref(j);

	/* a bad snapshot on SIGHUP: refused, in the history with its
	 * file:line:column, the last good snapshot still served */
	xdtest_replace_file(dir, "default.yaml", BAD_SNAPSHOT);
	xdt_daemon_signal(d, SIGHUP);
	j = wait_status(d, "reloads.failed", 1);
	ck_assert_int_eq(num(j, "reloads.ok"), 0);
	hist = json_object_get(json_object_get(j, "reloads"), "history");
	ck_assert_int_eq(json_array_size(hist), 2);
	rec = json_array_get(hist, 0);
	ck_assert(json_is_false(json_object_get(rec, "ok")));
	ck_assert_str_eq(xdt_json_str(rec, "trigger"), "SIGHUP");
	ck_assert_int_eq(num(rec, "error_count"), 1);
	ck_assert_int_eq(json_array_size(json_object_get(rec, "errors")), 1);
	body = (char *)json_string_value(json_array_get(json_object_get(rec, "errors"), 0));
	ck_assert_msg(strstr(body, "/default.yaml:3:1: unknown key '<b>bogus</b>'") != NULL,
		      "error: %s", body);
	ck_assert_str_eq(xdt_json_str(json_array_get(hist, 1), "trigger"), "start-up");
	snap = json_array_get(json_object_get(j, "snapshots"), 0);
	ck_assert_int_eq(num(json_object_get(snap, "resources"), "endpoints"), 1);
	json_decref(j);

	/* POST /reload answers with the very object the history keeps */
	body = xdt_admin(d, "POST", "/reload", NULL, &status, NULL);
	ck_assert_int_eq(status, 422);
	answer = json_loads(body, 0, &err);
	ck_assert_ptr_nonnull(answer);
	free(body);
	j = wait_status(d, "reloads.failed", 2);
	rec = json_array_get(json_object_get(json_object_get(j, "reloads"), "history"), 0);
	ck_assert_str_eq(xdt_json_str(rec, "trigger"), "admin");
	ck_assert_msg(json_equal(answer, rec), "POST /reload and the history differ");
	json_decref(answer);
	json_decref(j);

	/* streams gone: nothing left to count */
	xdt_node_close(&ok);
	xdt_node_close(&twin);
	xdt_node_close(&bad);
	j = wait_status(d, "streams", 0);
	ck_assert_int_eq(num(j, "nodes"), 0);
	ck_assert_int_eq(num(j, "clients.synced") + num(j, "clients.nacked"), 0);
	json_decref(j);
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- the reload history ---------------- */

/* The resources the newest reload record names, as "~a -b +c", type by
 * type (malloc'd). */
static char *named_changes(json_t *rec)
{
	json_t *k = json_array_get(json_object_get(json_object_get(rec, "diff"), "snapshots"), 0);
	char *out = xd_strdup(""), *more;
	size_t i, j;
	json_t *t, *r;

	json_array_foreach(json_object_get(k, "types"), i, t) {
		json_array_foreach(json_object_get(t, "resources"), j, r) {
			const char *c = xdt_json_str(r, "change");

			/* a reload's record names them, without their text */
			ck_assert_ptr_null(json_object_get(r, "diff"));
			ck_assert_int_eq(strlen(xdt_json_str(r, "version_before")) +
						 strlen(xdt_json_str(r, "version_after")),
					 strcmp(c, "changed") == 0 ? 32 : 16);
			more = xd_asprintf("%s%s%c%s", out, *out ? " " : "",
					   strcmp(c, "added") == 0 ? '+' :
					   strcmp(c, "removed") == 0 ? '-' : '~',
					   xdt_json_str(r, "name"));
			free(out);
			out = more;
		}
	}
	return out;
}

/*
 * The history names what each reload changed: the resources by name,
 * in /status.json, on the status page and in `xdsctl status`, the first
 * twenty of a reload's (all counted, the rest said as a number); and,
 * the snapshots being the directory's, no etcd revision (check_etcd has
 * an etcd source's).
 */
START_TEST(reload_history_names_the_changes)
{
	char *dir = xdtest_snapdir(), *page, *admin, *names;
	struct xdt_daemon *d;
	struct xdt_run r;
	json_t *j, *rec;

	xdtest_replace_file(dir, "default.yaml",
			    "clusters:\n"
			    "- {name: a, type: STATIC, connect_timeout: 1s}\n"
			    "- {name: b, type: STATIC, connect_timeout: 1s}\n");
	d = start(dir);
	admin = xdt_ctl_admin(d);
	xdtest_replace_file(dir, "default.yaml",
			    "clusters:\n"
			    "- {name: a, type: STATIC, connect_timeout: 2s}\n"
			    "- {name: c, type: STATIC, connect_timeout: 1s}\n");
	xdt_daemon_signal(d, SIGHUP);
	j = wait_status(d, "reloads.ok", 1);
	rec = json_array_get(json_object_get(json_object_get(j, "reloads"), "history"), 0);
	ck_assert(json_is_null(json_object_get(rec, "etcd_revision")));
	names = named_changes(rec);
	ck_assert_str_eq(names, "~a -b +c");
	free(names);
	ck_assert(json_is_false(json_object_get(json_object_get(rec, "diff"), "cut")));
	json_decref(j);
	page = status_html(d);
	ck_assert_msg(strstr(page, "<li>default clusters: <code>~a</code>, <code>-b</code>, <code>+c</code></li>") != NULL,
		      "the changes are not on the page");
	ck_assert_ptr_null(strstr(page, "etcd revision"));
	free(page);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "\nlast reload:\n  reload ok (SIGHUP, 20");
	xdt_has(r.out, "  snapshot 'default' changed: 1 resource added, 1 removed, 1 changed\n"
		       "      clusters: ~a, -b, +c\n");
	xdt_lacks(r.out, "etcd revision");
	xdt_run_free(&r);

	/* 32 changes: 20 named, every one counted */
	xdtest_write_clusters(dir, "default.yaml", "n", 30);
	xdt_daemon_signal(d, SIGHUP);
	j = wait_status(d, "reloads.ok", 2);
	rec = json_array_get(json_object_get(json_object_get(j, "reloads"), "history"), 0);
	names = named_changes(rec);
	ck_assert_int_eq(json_array_size(json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(json_object_get(rec, "diff"), "snapshots"), 0), "types"), 0),
		"resources")), 20);
	ck_assert_msg(strncmp(names, "-a -c +n-0 ", 11) == 0, "%s", names);
	free(names);
	ck_assert(json_is_true(json_object_get(json_object_get(rec, "diff"), "cut")));
	ck_assert_int_eq(num(json_object_get(rec, "diff"), "added") +
				 num(json_object_get(rec, "diff"), "removed"),
			 32);
	json_decref(j);
	page = status_html(d);
	ck_assert_ptr_nonnull(strstr(page, "and 12 more changed, not named"));
	free(page);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "  snapshot 'default' changed: 30 resources added, 2 removed, 0 changed\n"
		       "      clusters: -a, -c, +n-0, ");
	xdt_has(r.out, "  (12 more resources changed, not named)\n");
	xdt_run_free(&r);
	free(admin);
	stop(d);
	free(dir);
}
END_TEST

/* The source of /status.json's "sources" named `name`: its entry
 * (borrowed from `j`), or a failed test. */
static json_t *source_named(json_t *j, const char *name)
{
	json_t *arr = json_object_get(j, "sources"), *src;
	size_t i;

	ck_assert_msg(json_is_array(arr), "no sources in /status.json");
	json_array_foreach(arr, i, src)
		if (strcmp(json_string_value(json_object_get(src, "name")), name) == 0)
			return src;
	ck_abort_msg("no source '%s' in /status.json", name);
	return NULL;
}

/*
 * Each source a reload reads says its health alike in /status.json,
 * /metrics and `xdsctl status`: the directory is down while a reload
 * cannot read it (no snapshot file left), not while a file it read
 * is refused (the load's fault, not the source's), and says when a
 * load of it was last accepted; with state_dir, the last good state
 * is a source too.
 */
START_TEST(source_health_everywhere)
{
	char *dir = xdtest_snapdir(), *state = xdtest_snapdir(), *admin, cfg[1024],
	     path[1024];
	struct xdt_daemon *d;
	struct xdt_run r;
	json_t *j, *src;

	xdtest_replace_file(dir, "default.yaml",
			    "clusters:\n- {name: a, type: STATIC, connect_timeout: 1s}\n");
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\nstate_dir: %s\n",
		 dir, state);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	admin = xdt_ctl_admin(d);
	j = xdt_status_json(d);
	src = source_named(j, "files");
	ck_assert(json_is_true(json_object_get(src, "up")));
	ck_assert_int_eq(strlen(xdt_json_str(src, "last_good")), 24);
	ck_assert(json_is_null(json_object_get(src, "last_error")));
	ck_assert(json_is_true(json_object_get(source_named(j, "last_good"), "up")));
	json_decref(j);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_up{source=\"files\"}") == 1);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_up{source=\"last_good\"}") == 1);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_last_good_timestamp_seconds{source=\"files\"}") > 0);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_last_error_timestamp_seconds{source=\"files\"}") == 0);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "\nsources:   files up, last good 20");
	xdt_has(r.out, "\n           last_good up, last good 20");
	xdt_run_free(&r);

	/* a file refused: the load's fault; the directory was read */
	xdtest_replace_file(dir, "default.yaml", BAD_SNAPSHOT);
	xdt_daemon_signal(d, SIGHUP);
	j = wait_status(d, "reloads.failed", 1);
	ck_assert(json_is_true(json_object_get(source_named(j, "files"), "up")));
	json_decref(j);

	/* nothing left to read: the source is down, and says why */
	snprintf(path, sizeof(path), "%s/default.yaml", dir);
	ck_assert_int_eq(unlink(path), 0);
	xdt_daemon_signal(d, SIGHUP);
	j = wait_status(d, "reloads.failed", 2);
	src = source_named(j, "files");
	ck_assert(json_is_false(json_object_get(src, "up")));
	ck_assert_msg(strstr(xdt_json_str(src, "last_error"), "no snapshot files") != NULL,
		      "last_error: %s", xdt_json_str(src, "last_error"));
	ck_assert_int_eq(strlen(xdt_json_str(src, "last_error_at")), 24);
	ck_assert_int_eq(strlen(xdt_json_str(src, "since")), 24);
	json_decref(j);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_up{source=\"files\"}") == 0);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_last_error_timestamp_seconds{source=\"files\"}") > 0);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_has(r.out, "\nsources:   files DOWN, last good 20");
	xdt_has(r.out, ": no snapshot files");
	xdt_run_free(&r);

	/* readable again: up */
	xdtest_replace_file(dir, "default.yaml",
			    "clusters:\n- {name: b, type: STATIC, connect_timeout: 1s}\n");
	xdt_daemon_signal(d, SIGHUP);
	j = wait_status(d, "reloads.ok", 1);
	ck_assert(json_is_true(json_object_get(source_named(j, "files"), "up")));
	json_decref(j);
	ck_assert(xdt_daemon_metric(d, "xdsd_source_up{source=\"files\"}") == 1);
	free(admin);
	stop(d);
	free(dir);
	free(state);
}
END_TEST

/* ---------------- /status as text ---------------- */

START_TEST(status_page_escapes_and_orders)
{
	char *dir = xdtest_snapdir(), *page, *row;
	struct xdt_daemon *d;
	struct xdt_node ok, evil, bad;
	struct xdt_node_opts o = {.id = "quoted", .cluster = "\"q\" & 'a'",
				  .agent = "<i>agent</i>", .endpoints = "svc"};
	int status;
	char *type;
	json_t *j;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = start(dir);
	/* a connected client is listed after... */
	xdt_node_open(&ok, d->target, &o);
	open_node(&evil, d, HOSTILE_ID, NULL);
	/* ...a NACKing client that connected later */
	open_node(&bad, d, "nack-1", NACK_TEXT);
	j = wait_status(d, "clients.nacked", 1);
	json_decref(j);
	j = wait_status(d, "clients.synced", 2);
	json_decref(j);
	xdtest_replace_file(dir, "default.yaml", BAD_SNAPSHOT);
	xdt_daemon_signal(d, SIGHUP);
	json_decref(wait_status(d, "reloads.failed", 1));

	page = status_html(d);
	ck_assert_msg(strncmp(page, "<!DOCTYPE html>\n", 16) == 0, "%.100s", page);
	{
		/* listen: 127.0.0.1:0, and the port it took */
		char want[64];

		snprintf(want, sizeof(want), "<code>127.0.0.1:0 (port %d)</code>", d->port);
		ck_assert_msg(strstr(page, want) != NULL, "no '%s'", want);
	}
	/* what clients and files chose is text, never markup */
	ck_assert_ptr_null(strstr(page, "<script"));
	ck_assert_ptr_null(strstr(page, "<img"));
	ck_assert_ptr_null(strstr(page, "<b>bogus"));
	ck_assert_ptr_null(strstr(page, "<i>agent"));
	ck_assert_ptr_nonnull(strstr(page, HOSTILE_ID_TEXT));
	ck_assert_ptr_nonnull(strstr(page, NACK_TEXT_HTML));
	ck_assert_ptr_nonnull(strstr(page, "&lt;b&gt;bogus&lt;/b&gt;"));
	ck_assert_ptr_nonnull(strstr(page, "&quot;q&quot; &amp; &#39;a&#39;"));
	ck_assert_ptr_nonnull(strstr(page, "&lt;i&gt;agent&lt;/i&gt;"));

	/* the NACKed stream leads the clients table, with its message */
	row = between(page, "<tbody class=\"client ", "</tbody>");
	ck_assert_msg(strncmp(row, "<tbody class=\"client nacked\">", 29) == 0, "%s", row);
	ck_assert_ptr_nonnull(strstr(row, "nack-1"));
	ck_assert_ptr_nonnull(strstr(row, NACK_TEXT_HTML));
	free(row);
	ck_assert_int_eq(occurrences(page, "<tbody class=\"client "), 3);
	ck_assert_int_eq(occurrences(page, "<tbody class=\"client synced\">"), 2);
	/* over plaintext no client proves an identity: "-" */
	ck_assert_ptr_nonnull(strstr(page, "<th>identity</th>"));
	ck_assert_int_eq(occurrences(page, "<div class=ident><span class=muted>-</span></div>"), 3);
	/* the failed reload, with file:line:column */
	row = between(page, "<tr class=\"reload failed\">", "</tr>");
	ck_assert_ptr_nonnull(strstr(row, "/default.yaml:3:1: unknown key"));
	ck_assert_ptr_nonnull(strstr(row, "SIGHUP"));
	free(row);
	/* no change reached a connected client yet: no samples */
	ck_assert_ptr_nonnull(strstr(page, "id=chart-empty"));
	ck_assert_ptr_null(strstr(page, "<circle class=sample"));
	ck_assert_ptr_nonnull(strstr(page, "<dd id=streams>3</dd>"));
	free(page);

	/* HEAD: the headers only; "/" leads here */
	page = xdt_admin(d, "HEAD", "/status", NULL, &status, &type);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(type, "text/html; charset=utf-8");
	ck_assert_str_eq(page, "");
	free(page);
	free(type);
	free(xdt_admin(d, "GET", "/", NULL, &status, NULL));
	ck_assert_int_eq(status, 302);

	xdt_node_close(&ok);
	xdt_node_close(&evil);
	xdt_node_close(&bad);
	stop(d);
	free(dir);
}
END_TEST

/* More streams than the page lists: the first 500 rows, NACKed first,
 * then a pointer to /clients for the rest. */
#define WATCHERS 501

START_TEST(status_page_is_bounded)
{
	char *dir = xdtest_snapdir(), *page, *row, cfg[1024];
	struct xdt_daemon *d;
	struct xdc_conn *conn;
	struct xdc_stream *s[WATCHERS];
	struct xdt_node bad;
	json_t *j;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nmax_streams_per_connection: 1000\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	conn = xdc_connect(d->target);
	for (int i = 0; i < WATCHERS; i++) {
		char id[32];

		snprintf(id, sizeof(id), "watcher-%d", i);
		s[i] = xdc_watch_clusters(conn, id, "edge");
	}
	open_node(&bad, d, "nack-1", NACK_TEXT);
	json_decref(wait_status(d, "clients.nacked", 1));
	j = wait_status(d, "nodes", WATCHERS + 1);
	ck_assert_int_eq(num(j, "streams"), WATCHERS + 1);
	json_decref(j);

	page = status_html(d);
	ck_assert_int_eq(occurrences(page, "<tbody class=\"client "), 500);
	row = between(page, "<tbody class=\"client ", "</tbody>");
	ck_assert_msg(strncmp(row, "<tbody class=\"client nacked\">", 29) == 0, "%s", row);
	free(row);
	ck_assert_ptr_nonnull(strstr(page, "<p class=more id=clients-more>2 more: use "
					   "<a href=\"/clients\">/clients</a></p>"));
	free(page);

	xdt_node_close(&bad);
	for (int i = 0; i < WATCHERS; i++)
		xdc_stream_free(s[i]);
	xdc_conn_free(conn);
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- a real browser ---------------- */

/* Runs chromium headless on `url` with `args` ("--dump-dom"); its
 * stdout (malloc'd). Fails the test when it is missing or fails. */
static char *chromium(const char *args, const char *url)
{
	const char *bin = getenv("XDSD_CHROMIUM") ? getenv("XDSD_CHROMIUM") : "chromium";
	char cmd[4096], *out;
	int rc;

	/* a profile of its own, removed with the test's directory */
	snprintf(cmd, sizeof(cmd),
		 "command -v '%s' >/dev/null || { echo 'no %s in PATH: scripts/install-deps installs Debian'\"'\"'s chromium'; exit 127; }; "
		 "timeout %d '%s' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
		 "--user-data-dir='%s/chromium' %s '%s' 2>'%s/chromium.log'",
		 bin, bin, BROWSER_S, bin, xdtest_tmpdir(), args, url, xdtest_tmpdir());
	out = xdtest_command_output(cmd, &rc);
	ck_assert_msg(rc == 0, "chromium %s failed (exit status %d): %s (log: %s/chromium.log)",
		      args, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out, xdtest_tmpdir());
	return out;
}

/* The width and height of a PNG file, from its IHDR chunk. */
static void png_size(const char *path, unsigned *w, unsigned *h)
{
	size_t len;
	unsigned char *b = (unsigned char *)xdtest_read_file(path, &len);

	ck_assert_msg(b != NULL, "no screenshot at %s", path);
	ck_assert(len > 24 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0 &&
		  memcmp(b + 12, "IHDR", 4) == 0);
	*w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
	*h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
	free(b);
}

/* Client certificates (make-certs.sh) and the identities they prove. */
static const char *const fleet_certs[] = {"frontend", "backend", "dnsonly", "cnonly"};
static const char *const fleet_identities[] = {
	"spiffe://example.org/ns/prod/sa/frontend",
	"spiffe://example.org/ns/prod/sa/backend",
	"envoy-1.example.org",
	"envoy-cn",
};

/* An ACKing node of a fleet, with its own look, over mTLS with the
 * i-th certificate. */
static void fleet_node(struct xdt_node *n, const struct xdt_daemon *d, int i,
		       const char *id, const char *cluster, const char *zone,
		       const char *agent, const char *version, const char *nack)
{
	struct xdt_node_opts o = {.id = id, .cluster = cluster, .zone = zone,
				  .agent = agent, .agent_version = version,
				  .endpoints = "svc", .nack_endpoints = nack,
				  .cert = fleet_certs[i % 4]};

	xdt_node_open(n, d->target, &o);
}

#define FLEET 5
#define ACKING 4 /* the last one NACKs */
#define CHANGES 3

START_TEST(browser_renders_status)
{
	char *dir = xdtest_snapdir(), *dom, *row, *chart, *png, url[128], args[1200];
	const char *shot = getenv("XDSD_STATUS_SCREENSHOT");
	struct xdt_daemon *d;
	struct xdt_node n[FLEET];
	unsigned w, h;
	json_t *j;
	char version[17], want[64];

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	xdtest_write_clusters(dir, "canary.yaml", "canary", 3);
	d = start_mtls(dir);
	fleet_node(&n[0], d, 0, "edge-eu-west-1a-7f9c4", "edge", "eu-west-1a", "envoy", "1.28.0", NULL);
	fleet_node(&n[1], d, 1, "edge-eu-west-1b-2d41e", "edge", "eu-west-1b", "envoy", "1.28.0", NULL);
	fleet_node(&n[2], d, 2, "payments-6c8d9-x2kq", "payments", "eu-west-1a", "grpc-go", "1.62.1", NULL);
	fleet_node(&n[3], d, 3, HOSTILE_ID, "edge", "eu-west-1c", "envoy", "1.27.3", NULL);
	fleet_node(&n[4], d, 4, "checkout-5b7f4-qq8r", "checkout", "eu-west-1b", "envoy", "1.26.4",
		   "Proto constraint validation failed (ClusterLoadAssignmentValidationError.Endpoints[0]: "
		   "port_value 1: port 1 is reserved by policy)");

	/* changes the fleet follows: each ACK is a convergence sample */
	for (int c = 1; c <= CHANGES; c++) {
		xdtest_write_svc_snapshot(dir, 8080 + c, NULL);
		xdt_daemon_signal(d, SIGHUP);
		json_decref(wait_status(d, "reloads.ok", c));
		for (int i = 0; i < FLEET; i++) {
			/* some nodes are slower than others */
			xdtest_sleep_ms(i * 15);
			xdt_node_answer(&n[i], XDT_EDS_URL, NULL);
		}
	}
	xdtest_replace_file(dir, "default.yaml", BAD_SNAPSHOT);
	xdt_daemon_signal(d, SIGHUP);
	json_decref(wait_status(d, "reloads.failed", 1));
	json_decref(wait_status(d, "clients.synced", ACKING));
	j = wait_status(d, "clients.nacked", FLEET - ACKING);
	snprintf(version, sizeof(version), "%s",
		 xdt_json_str(json_array_get(json_object_get(j, "snapshots"), 1), "version"));
	ck_assert_str_eq(xdt_json_str(json_array_get(json_object_get(j, "snapshots"), 1), "key"), "default");
	json_decref(j);
	/* until the last ACK is read, the chart may lack its sample */
	for (long long deadline = xdtest_now_ms() + POLL_MS;;) {
		char *page = status_html(d);
		bool all = strstr(page, "<p id=chart-summary>12 samples:") != NULL;

		free(page);
		if (all)
			break;
		ck_assert_msg(xdtest_now_ms() < deadline, "never 12 convergence samples");
		xdtest_sleep_ms(25);
	}

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/status", d->admin_port);
	dom = chromium("--dump-dom", url);
	/* the page runs no script; the hostile id is a text node */
	ck_assert_ptr_null(strstr(dom, "<script"));
	ck_assert_ptr_nonnull(strstr(dom, HOSTILE_ID_TEXT));
	/* the NACKed client first, its message shown */
	row = between(dom, "<tbody class=\"client ", "</tbody>");
	ck_assert_msg(strncmp(row, "<tbody class=\"client nacked\">", 29) == 0, "%s", row);
	ck_assert_ptr_nonnull(strstr(row, "checkout-5b7f4-qq8r"));
	ck_assert_ptr_nonnull(strstr(row, "port 1 is reserved by policy"));
	/* the fifth client, with the first's certificate */
	ck_assert_ptr_nonnull(strstr(row, fleet_identities[0]));
	free(row);
	ck_assert_int_eq(occurrences(dom, "<tbody class=\"client synced\">"), ACKING);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(strstr(dom, fleet_identities[i]) != NULL, "no %s", fleet_identities[i]);
	/* the chart: an SVG element with one point per sample */
	chart = between(dom, "<svg id=\"chart\"", "</svg>");
	ck_assert_int_eq(occurrences(chart, "<circle class=\"sample\""), ACKING * CHANGES);
	free(chart);
	/* the snapshot served, with its version; the failed reload */
	snprintf(want, sizeof(want), "<code>%s</code>", version);
	row = between(dom, "<tr class=\"snapshot\"><td>default</td>", "</tr>");
	ck_assert_msg(strstr(row, want) != NULL, "%s not in %s", want, row);
	ck_assert_ptr_nonnull(strstr(row, "clusters 1, endpoints 1"));
	free(row);
	row = between(dom, "<tr class=\"reload failed\">", "</tr>");
	ck_assert_ptr_nonnull(strstr(row, "/default.yaml:3:1: unknown key"));
	free(row);
	free(dom);

	/* and it paints: a PNG of the window's size */
	if (shot != NULL)
		png = strdup(shot);
	else
		ck_assert(asprintf(&png, "%s/status.png", xdtest_tmpdir()) > 0);
	unlink(png);
	snprintf(args, sizeof(args), "--hide-scrollbars --window-size=1280,1000 --screenshot='%s'", png);
	free(chromium(args, url));
	png_size(png, &w, &h);
	ck_assert_int_eq(w, 1280);
	ck_assert_int_eq(h, 1000);
	free(png);

	for (int i = 0; i < FLEET; i++)
		xdt_node_close(&n[i]);
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- a NACKing fleet in a browser ---------------- */

/*
 * An operator watches a fleet that rejects a change: every proxy NACKs
 * with a message as long as Envoy's (its validation error, then the
 * resource it refused), each over mTLS with an identity. At a 1400x1000
 * window the clients table must show 15 of them at once, column heads
 * and NACK messages included, without scrolling sideways.
 */
#define NACKING 16
#define VIEW_W 1400
#define VIEW_H 1000
#define FIT_ROWS 15
/* A message box at least this wide: a line holds a good part of one. */
#define MSG_MIN_W 600

/* Envoy's words when it refuses a ClusterLoadAssignment: the validation
 * chain, then the resource printed as text (some 700 bytes). */
static char *envoy_nack(int i)
{
	char *m;

	ck_assert(asprintf(&m,
			   "Proto constraint validation failed (ClusterLoadAssignmentValidationError.Endpoints[0]: "
			   "embedded message failed validation | caused by LocalityLbEndpointsValidationError."
			   "LbEndpoints[%d]: embedded message failed validation | caused by LbEndpointValidationError."
			   "Endpoint: embedded message failed validation | caused by EndpointValidationError.Address: "
			   "embedded message failed validation | caused by AddressValidationError.SocketAddress: "
			   "embedded message failed validation | caused by SocketAddressValidationError.PortValue: "
			   "value must be less than or equal to 65535): cluster_name: \"svc\"\n"
			   "endpoints {\n  locality {\n    region: \"eu-west\"\n    zone: \"eu-west-1a\"\n  }\n"
			   "  lb_endpoints {\n    endpoint {\n      address {\n        socket_address {\n"
			   "          address: \"10.0.%d.7\"\n          port_value: %d\n        }\n      }\n"
			   "    }\n  }\n}\n",
			   i, i, 70000 + i) > 0);
	return m;
}

/*
 * The page as xdsd serves it, with a script after it that writes where
 * the browser laid out the clients table into the DOM as JSON (the page
 * itself runs no script): the window, the page's width, the table's
 * head and, for each client, its box and its NACK message's box.
 */
static const char measure_script[] =
	"<script>\n"
	"(function () {\n"
	"  function box(e) {\n"
	"    if (!e) return null;\n"
	"    var r = e.getBoundingClientRect();\n"
	"    return {top: r.top, bottom: r.bottom, left: r.left, width: r.width, height: r.height};\n"
	"  }\n"
	"  var out = {vw: window.innerWidth,\n"
	"             page_width: document.documentElement.scrollWidth,\n"
	"             head: box(document.querySelector('#clients thead')), clients: []};\n"
	"  document.querySelectorAll('#clients .client').forEach(function (c) {\n"
	"    out.clients.push({row: box(c), msg: box(c.querySelector('.nack pre, .nack .msg'))});\n"
	"  });\n"
	"  var p = document.createElement('pre');\n"
	"  p.id = 'layout';\n"
	"  p.textContent = JSON.stringify(out);\n"
	"  document.body.appendChild(p);\n"
	"})();\n"
	"</script>\n";

static double field(json_t *box, const char *key)
{
	ck_assert_msg(json_is_number(json_object_get(box, key)), "no number '%s'", key);
	return json_number_value(json_object_get(box, key));
}

START_TEST(browser_fits_a_nacking_fleet)
{
	char *dir = xdtest_snapdir(), *page, *dom, *html, *layout, *nacks[NACKING];
	char ids[NACKING][48], args[256], url[1200];
	struct xdt_daemon *d;
	struct xdt_node n[NACKING];
	json_t *j, *clients;
	json_error_t err;
	size_t len;
	double top, bottom;
	FILE *f;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = start_mtls(dir);
	for (int i = 0; i < NACKING; i++) {
		struct xdt_node_opts o = {.id = ids[i], .cluster = "checkout",
					  .zone = "eu-west-1b", .agent = "envoy",
					  .agent_version = "1.28.0", .endpoints = "svc",
					  .cert = fleet_certs[i % 4]};

		snprintf(ids[i], sizeof(ids[i]), "checkout-5b7f4-%02d.eu-west-1b", i);
		nacks[i] = envoy_nack(i);
		o.nack_endpoints = nacks[i];
		xdt_node_open(&n[i], d->target, &o);
	}
	json_decref(wait_status(d, "clients.nacked", NACKING));

	/* the page, measured by the browser */
	page = status_html(d);
	ck_assert(asprintf(&html, "%s/fleet.html", xdtest_tmpdir()) > 0);
	f = fopen(html, "w");
	ck_assert(f != NULL);
	fputs(page, f);
	fputs(measure_script, f);
	ck_assert(fclose(f) == 0);
	free(page);
	snprintf(args, sizeof(args), "--window-size=%d,%d --dump-dom", VIEW_W, VIEW_H);
	snprintf(url, sizeof(url), "file://%s", html);
	dom = chromium(args, url);
	layout = between(dom, "<pre id=\"layout\">", "</pre>");
	len = strlen("<pre id=\"layout\">");
	j = json_loads(layout + len, 0, &err);
	ck_assert_msg(j != NULL, "layout is not JSON (%s): %s", err.text, layout + len);
	free(layout);

	/* the layout depends on the width (the page has no vh units); the
	 * height is a budget, checked below: new headless Chromium counts
	 * the window's frame into --window-size's height */
	ck_assert_int_eq((int)field(j, "vw"), VIEW_W);
	/* nothing scrolls sideways: the fit is not bought with width */
	ck_assert_msg(field(j, "page_width") <= VIEW_W, "the page is %.0f px wide",
		      field(j, "page_width"));
	clients = json_object_get(j, "clients");
	ck_assert_int_eq(json_array_size(clients), NACKING);
	/* the column heads and 15 clients within one window's height */
	top = field(json_object_get(j, "head"), "top");
	bottom = field(json_object_get(json_array_get(clients, FIT_ROWS - 1), "row"), "bottom");
	ck_assert_msg(bottom - top <= VIEW_H,
		      "the table's head and %d NACKing clients take %.0f px, more than %d "
		      "(the first client is %.0f px high)",
		      FIT_ROWS, bottom - top, VIEW_H,
		      field(json_object_get(json_array_get(clients, 0), "row"), "height"));
	for (int i = 0; i < NACKING; i++) {
		json_t *c = json_array_get(clients, i);
		json_t *row = json_object_get(c, "row"), *msg = json_object_get(c, "msg");

		ck_assert_msg(json_is_object(msg), "client %d: no NACK message shown", i);
		/* the message is shown in the row, wide, a line or more */
		ck_assert_msg(field(msg, "width") >= MSG_MIN_W,
			      "client %d: the NACK message is %.0f px wide", i, field(msg, "width"));
		ck_assert_msg(field(msg, "height") >= 12, "client %d: the NACK message is %.0f px high",
			      i, field(msg, "height"));
		ck_assert_msg(field(msg, "top") >= field(row, "top") &&
				      field(msg, "top") + field(msg, "height") <= field(row, "bottom") + 0.5,
			      "client %d: the NACK message leaves its row", i);
	}
	json_decref(j);
	free(html);
	/* the identities are in the rendered page too */
	for (int i = 0; i < 4; i++)
		ck_assert_msg(strstr(dom, fleet_identities[i]) != NULL, "no %s", fleet_identities[i]);
	free(dom);

	/* each row names the identity its client proved */
	page = status_html(d);
	for (int i = 0; i < NACKING; i++) {
		char *row = between(page, ids[i], "</tbody>");

		ck_assert_msg(strstr(row, fleet_identities[i % 4]) != NULL,
			      "%s: no identity %s in %s", ids[i], fleet_identities[i % 4], row);
		free(row);
	}
	free(page);

	for (int i = 0; i < NACKING; i++) {
		xdt_node_close(&n[i]);
		free(nacks[i]);
	}
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- a failed rollout ---------------- */

/* Where the browser laid out the warnings and what they sit above. */
static const char warning_script[] =
	"<script>\n"
	"(function () {\n"
	"  function box(q) {\n"
	"    var e = document.querySelector(q);\n"
	"    if (!e) return null;\n"
	"    var r = e.getBoundingClientRect();\n"
	"    return {top: r.top, bottom: r.bottom, height: r.height};\n"
	"  }\n"
	"  var out = {alert: box('#rollout-failed'), badge: box('#warn-rollout'),\n"
	"             ready: box('#ready'), snapshots: box('#snapshots'),\n"
	"             rollout: box('#rollout')};\n"
	"  var p = document.createElement('pre');\n"
	"  p.id = 'layout';\n"
	"  p.textContent = JSON.stringify(out);\n"
	"  document.body.appendChild(p);\n"
	"})();\n"
	"</script>\n";

/*
 * A staged rollout that a canary's NACK fails: an operator opening the
 * page sees it first, in the window without scrolling, above the
 * snapshots and beside the "ready" badge, not under the fold below a
 * green "ready"; and the reload whose change it rolled back is marked
 * "rolled back", not "ok" (in /status.json too).
 */
START_TEST(browser_shows_a_failed_rollout_first)
{
	char *dir = xdtest_snapdir(), cfg[1024], *page, *row, *html, *dom, *layout;
	char args[256], url[1200];
	struct xdt_daemon *d;
	struct xdt_node canary, other;
	struct xdt_node_opts co = {.id = "canary-1", .endpoints = "svc",
				   .nack_endpoints = "endpoints rejected: port 8081 is refused"};
	struct xdt_node_opts oo = {.id = "other-1", .endpoints = "svc"};
	json_t *st, *rec, *j;
	json_error_t err;
	FILE *f;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\n"
		 "rollout:\n  canary: ['canary-*']\n  bake: 1h\n  max_nacks: 0\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	xdt_node_open(&canary, d->target, &co);
	xdt_node_open(&other, d->target, &oo);
	xdtest_write_svc_snapshot(dir, 8081, NULL);
	xdt_daemon_signal(d, SIGHUP);
	/* the canary is served the change and refuses it */
	xdt_node_answer(&canary, XDT_EDS_URL, NULL);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 failed", POLL_MS));

	st = xdt_status_json(d);
	rec = json_array_get(json_object_get(json_object_get(st, "reloads"), "history"), 0);
	ck_assert_str_eq(xdt_json_str(rec, "trigger"), "SIGHUP");
	ck_assert(json_is_true(json_object_get(rec, "ok")));
	ck_assert_str_eq(xdt_json_str(rec, "rollout"), "rolled_back");
	ck_assert_str_eq(xdt_json_str(json_object_get(st, "rollout"), "state"), "failed");
	json_decref(st);

	page = status_html(d);
	/* the warning comes before everything in <main>, the badge beside
	 * "ready" in the header */
	ck_assert_msg(strstr(page, "<section id=rollout-failed class=alert>") != NULL &&
			      strstr(page, "id=rollout-failed") < strstr(page, "<section id=snapshots>"),
		      "%s", page);
	row = between(page, "<section id=rollout-failed", "</section>");
	ck_assert_msg(strstr(row, "Staged rollout 1 failed</strong>") != NULL, "%s", row);
	/* the NACK that failed it, and any that came before the record
	 * said so */
	ck_assert_msg(strstr(row, " from canaries, more than max_nacks 0; the NACK past it from node &#39;canary-1&#39;") != NULL,
		      "%s", row);
	free(row);
	ck_assert(strstr(page, "id=warn-rollout>rollout failed</a>") != NULL);
	ck_assert(strstr(page, "id=warn-rollout") < strstr(page, "</header>"));
	/* the SIGHUP reload: rolled back, the start-up one ok */
	row = between(page, "<tr class=\"reload rolled-back\">", "</tr>");
	ck_assert_msg(strstr(row, "SIGHUP") != NULL && strstr(row, ">rolled back</span>") != NULL,
		      "%s", row);
	ck_assert_ptr_null(strstr(row, ">ok</span>"));
	free(row);

	/* laid out by a browser in an operator's window */
	ck_assert(asprintf(&html, "%s/rollout.html", xdtest_tmpdir()) > 0);
	f = fopen(html, "w");
	ck_assert(f != NULL);
	fputs(page, f);
	fputs(warning_script, f);
	ck_assert(fclose(f) == 0);
	free(page);
	snprintf(args, sizeof(args), "--window-size=%d,%d --dump-dom", VIEW_W, VIEW_H);
	snprintf(url, sizeof(url), "file://%s", html);
	dom = chromium(args, url);
	layout = between(dom, "<pre id=\"layout\">", "</pre>");
	j = json_loads(layout + strlen("<pre id=\"layout\">"), 0, &err);
	ck_assert_msg(j != NULL, "layout is not JSON (%s): %s", err.text, layout);
	/* whole within the first screen, above the snapshots, and the
	 * rollout's own section (with its NACKs) further down */
	ck_assert_msg(field(json_object_get(j, "alert"), "height") > 0 &&
			      field(json_object_get(j, "alert"), "bottom") <= VIEW_H / 2,
		      "the warning is laid out at %s", layout);
	ck_assert(field(json_object_get(j, "alert"), "bottom") <=
		  field(json_object_get(j, "snapshots"), "top"));
	ck_assert(field(json_object_get(j, "alert"), "bottom") <=
		  field(json_object_get(j, "rollout"), "top"));
	/* the badge on the line of "ready" */
	ck_assert_msg(field(json_object_get(j, "badge"), "height") > 0 &&
			      field(json_object_get(j, "badge"), "top") <
				      field(json_object_get(j, "ready"), "bottom") &&
			      field(json_object_get(j, "badge"), "bottom") >
				      field(json_object_get(j, "ready"), "top"),
		      "the badge is laid out at %s", layout);
	json_decref(j);
	free(layout);
	free(dom);
	free(html);

	xdt_node_close(&canary);
	xdt_node_close(&other);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("status");
	TCase *tc = tcase_create("status"), *browser = tcase_create("browser");

	xdtest_make_certs();

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, status_json_overview);
	tcase_add_test(tc, status_page_escapes_and_orders);
	tcase_add_test(tc, status_page_is_bounded);
	tcase_add_test(tc, reload_history_names_the_changes);
	tcase_add_test(tc, source_health_everywhere);
	suite_add_tcase(s, tc);
	/* two Chromium starts at most */
	tcase_set_timeout(browser, 2 * BROWSER_S + 60);
	tcase_add_test(browser, browser_renders_status);
	tcase_add_test(browser, browser_fits_a_nacking_fleet);
	tcase_add_test(browser, browser_shows_a_failed_rollout_first);
	suite_add_tcase(s, browser);
	return xdtest_run(s);
}
