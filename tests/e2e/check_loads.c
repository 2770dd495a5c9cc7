/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The load reporting service on the xDS listener (docs/protocol.md,
 * rules M1, M2), end to end: the real daemon, a load reporting client
 * on gRPC's Python bindings (tests/e2e/lrs-client.py, the messages of
 * the build's xds-api.pb), /loads, /metrics, the status page and
 * xdsctl loads; nodes admitted as xDS streams' are (authorize: over
 * mTLS), bad requests refused, the store's bounds.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000

/* A report of cluster "web": `ok` and `err` requests in zone `zone`
 * (region "eu"), `now` in flight, over one second. */
static char *report(const char *zone, int ok, int err, int now)
{
	char *s;

	ck_assert(asprintf(&s,
			   "--report '{\"cluster_stats\": [{\"cluster_name\": \"web\", "
			   "\"cluster_service_name\": \"web-eds\", \"load_report_interval\": \"1s\", "
			   "\"upstream_locality_stats\": [{\"locality\": {\"region\": \"eu\", \"zone\": \"%s\"}, "
			   "\"total_successful_requests\": %d, \"total_error_requests\": %d, "
			   "\"total_requests_in_progress\": %d, \"total_issued_requests\": %d}]}]}'",
			   zone, ok, err, now, ok + err) > 0);
	return s;
}

/* lrs-client.py TARGET --node NODE `extra`: its JSON answer. */
static json_t *lrs(const char *target, const char *node, const char *extra)
{
	char *cmd, *out;
	json_error_t err;
	json_t *j;
	int rc;

	ck_assert(asprintf(&cmd, "'%s' '%s/tests/e2e/lrs-client.py' '%s' --schema '%s' --node '%s' %s",
			   xdtest_env("PYTHON3"), xdtest_env("XDSD_SRCDIR"), target,
			   xdtest_env("XDSD_SCHEMA"), node, extra) > 0);
	out = xdtest_command_output(cmd, &rc);
	ck_assert_msg(rc == 0, "%s: exit status %d: %s", cmd, rc, out);
	j = json_loads(out, 0, &err);
	ck_assert_msg(j != NULL, "%s: not JSON (%s): %s", cmd, err.text, out);
	free(out);
	free(cmd);
	return j;
}

static json_t *get_json(struct xdt_daemon *d, const char *path)
{
	int status;
	char *body = xdt_admin(d, "GET", path, NULL, &status, NULL);
	json_t *j;

	ck_assert_msg(status == 200, "GET %s: %d: %s", path, status, body);
	j = xdt_json_parse(body);
	free(body);
	return j;
}

/* The entry of node `node` in zone `zone` of /loads, or NULL. */
static json_t *entry(json_t *doc, const char *node, const char *zone)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(doc, "loads"), i, e) {
		json_t *loc = json_object_get(e, "locality");

		if (strcmp(xdt_json_str(e, "node"), node) == 0 &&
		    json_is_object(loc) && strcmp(xdt_json_str(loc, "zone"), zone) == 0)
			return e;
	}
	return NULL;
}

static long long num(json_t *o, const char *k1, const char *k2)
{
	json_t *v = json_object_get(o, k1);

	if (k2 != NULL)
		v = json_object_get(v, k2);
	ck_assert_msg(json_is_number(v), "no number %s.%s", k1, k2 ? k2 : "");
	return (long long)json_number_value(v);
}

/* rules M1, M2: a client's first request names its node and is answered
 * once, asking for every cluster every load_reports.interval; each
 * report is kept per cluster, locality and node, shown by /loads,
 * /metrics, the status page and xdsctl loads. */
START_TEST(loads_reported_and_shown)
{
	char *dir = xdtest_clusters_snapdir(1), *r1 = report("a", 10, 2, 3),
	     *r2 = report("a", 5, 1, 4), *r3 = report("b", 7, 0, 1), *extra,
	     *admin, *body;
	struct xdt_daemon *d = xdt_ctl_start(dir, "load_reports:\n  interval: 2s\n");
	json_t *j, *doc, *e, *resp;
	struct xdt_run run;
	int status;

	ck_assert(asprintf(&extra, "%s %s", r1, r2) > 0);
	j = lrs(d->target, "{\"id\": \"edge-1\", \"cluster\": \"edge\"}", extra);
	ck_assert_str_eq(xdt_json_str(j, "code"), "OK");
	ck_assert_int_eq(json_array_size(json_object_get(j, "responses")), 1);
	resp = json_array_get(json_object_get(j, "responses"), 0);
	ck_assert(json_is_true(json_object_get(resp, "send_all_clusters")));
	ck_assert_str_eq(xdt_json_str(resp, "load_reporting_interval"), "2s");
	json_decref(j);
	j = lrs(d->target, "{\"id\": \"edge-2\", \"cluster\": \"edge\"}", r3);
	ck_assert_str_eq(xdt_json_str(j, "code"), "OK");
	json_decref(j);

	doc = get_json(d, "/loads");
	ck_assert_int_eq(num(doc, "count", NULL), 2);
	ck_assert_int_eq(num(doc, "interval_seconds", NULL), 2);
	e = entry(doc, "edge-1", "a");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(xdt_json_str(e, "cluster"), "web");
	ck_assert_str_eq(xdt_json_str(e, "service_name"), "web-eds");
	ck_assert_int_eq(num(e, "window", "requests"), 18);
	ck_assert_int_eq(num(e, "window", "errors"), 3);
	ck_assert_int_eq(num(e, "window", "seconds"), 2); /* two 1 s reports */
	ck_assert_int_eq(num(e, "window", "requests_per_second"), 9);
	ck_assert_int_eq(num(e, "in_flight", NULL), 4); /* the last report's */
	ck_assert_int_eq(num(e, "reports", NULL), 2);
	ck_assert_int_eq(num(entry(doc, "edge-2", "b"), "total", "requests"), 7);
	json_decref(doc);
	/* one cluster's */
	doc = get_json(d, "/loads?cluster=w%2A");
	ck_assert_int_eq(num(doc, "count", NULL), 2);
	json_decref(doc);
	doc = get_json(d, "/loads?cluster=api");
	ck_assert_int_eq(num(doc, "count", NULL), 0);
	json_decref(doc);

	body = xdt_admin(d, "GET", "/metrics", NULL, &status, NULL);
	xdt_has(body, "\nxdsd_load_requests_total{cluster=\"web\",locality=\"eu/a/\"} 18\n");
	xdt_has(body, "\nxdsd_load_errors_total{cluster=\"web\",locality=\"eu/a/\"} 3\n");
	xdt_has(body, "\nxdsd_load_in_flight{cluster=\"web\",locality=\"eu/a/\"} 4\n");
	xdt_has(body, "\nxdsd_load_requests_total{cluster=\"web\",locality=\"eu/b/\"} 7\n");
	xdt_has(body, "\nxdsd_load_reports_total 3\n");
	free(body);

	body = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	xdt_has(body, "<section id=loads>");
	xdt_has(body, "<tr class=load><td>web</td><td>eu/a/</td><td class=num>1</td><td class=num>9.0</td>");
	free(body);

	admin = xdt_ctl_admin(d);
	run = xdt_ctl(true, admin, (const char *const[]){"loads", NULL});
	xdt_want(&run, 0);
	xdt_has(run.out, "CLUSTER");
	xdt_has(run.out, "eu/a/");
	xdt_has(run.out, "edge-1");
	xdt_has(run.out, "2 load reports within the last");
	xdt_run_free(&run);
	run = xdt_ctl(false, admin, (const char *const[]){"loads", "api*", NULL});
	xdt_want(&run, 0);
	xdt_has(run.out, "no load reports match");
	xdt_run_free(&run);
	free(admin);
	xdt_ctl_stop(d);
	free(r1);
	free(r2);
	free(r3);
	free(extra);
	free(dir);
}
END_TEST

/* rule M1: what is not a LoadStatsRequest, and a first request without
 * a node, end the stream with INVALID_ARGUMENT; xdsd goes on. */
START_TEST(loads_bad_requests_refused)
{
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = xdt_ctl_start(dir, NULL);
	json_t *j;

	j = lrs(d->target, "{}", "--raw 12020801");
	ck_assert_str_eq(xdt_json_str(j, "code"), "INVALID_ARGUMENT");
	ck_assert_ptr_nonnull(strstr(xdt_json_str(j, "details"), "LoadStatsRequest"));
	json_decref(j);
	j = lrs(d->target, "{}", "--raw ''");
	ck_assert_str_eq(xdt_json_str(j, "code"), "INVALID_ARGUMENT");
	ck_assert_ptr_nonnull(strstr(xdt_json_str(j, "details"), "names no node"));
	json_decref(j);
	j = lrs(d->target, "{\"id\": \"still-1\"}", "");
	ck_assert_str_eq(xdt_json_str(j, "code"), "OK");
	json_decref(j);
	ck_assert(xdt_daemon_wait_log(d, "load reports refused: the first LoadStatsRequest names no node", 5000));
	xdt_ctl_stop(d);
	free(dir);
}
END_TEST

/* rule M1: behind the same authorization as xDS: over mTLS an identity
 * may report only for the nodes `authorize:` lets it speak for. */
START_TEST(loads_behind_authorize)
{
	char *dir = xdtest_clusters_snapdir(1), cfg[4096], tls[1024], *r = report("a", 1, 0, 0),
	     *extra;
	struct xdt_daemon *d;
	json_t *j, *doc;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nadmin_listen: 127.0.0.1:0\n"
		 "tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n"
		 "authorize:\n  - identity: 'spiffe://example.org/ns/prod/sa/frontend'\n"
		 "    node_id: 'edge-*'\n",
		 dir, xdtest_cert("server.pem"), xdtest_cert("server.key"),
		 xdtest_cert("ca.pem"));
	d = xdt_daemon_start(cfg, NULL, START_MS);
	snprintf(tls, sizeof(tls), "--tls '%s' '%s' '%s'", xdtest_cert("ca.pem"),
		 xdtest_cert("frontend.pem"), xdtest_cert("frontend.key"));
	ck_assert(asprintf(&extra, "%s %s", tls, r) > 0);
	j = lrs(d->target, "{\"id\": \"edge-1\"}", extra);
	ck_assert_str_eq(xdt_json_str(j, "code"), "OK");
	json_decref(j);
	j = lrs(d->target, "{\"id\": \"core-1\"}", extra);
	ck_assert_str_eq(xdt_json_str(j, "code"), "PERMISSION_DENIED");
	ck_assert_ptr_nonnull(strstr(xdt_json_str(j, "details"), "may not speak for node id 'core-1'"));
	json_decref(j);
	doc = get_json(d, "/loads");
	ck_assert_int_eq(num(doc, "count", NULL), 1);
	ck_assert_ptr_nonnull(entry(doc, "edge-1", "a"));
	json_decref(doc);
	xdt_ctl_stop(d);
	free(r);
	free(extra);
	free(dir);
}
END_TEST

/* rule M2: the store's bounds: past max_entries a report is counted and
 * not kept; past max_series /metrics shows the rest as one series. */
START_TEST(loads_bounded)
{
	char *dir = xdtest_clusters_snapdir(1), *ra = report("a", 1, 0, 0),
	     *rb = report("b", 2, 0, 0), *rc = report("c", 4, 0, 0), *extra, *body;
	struct xdt_daemon *d = xdt_ctl_start(dir, "load_reports:\n  max_entries: 2\n  max_series: 1\n");
	json_t *j, *doc;
	int status;

	ck_assert(asprintf(&extra, "%s %s %s", ra, rb, rc) > 0);
	j = lrs(d->target, "{\"id\": \"edge-1\"}", extra);
	ck_assert_str_eq(xdt_json_str(j, "code"), "OK");
	json_decref(j);
	doc = get_json(d, "/loads");
	ck_assert_int_eq(num(doc, "count", NULL), 2);
	ck_assert_int_eq(num(doc, "refused", NULL), 1);
	json_decref(doc);
	body = xdt_admin(d, "GET", "/metrics", NULL, &status, NULL);
	xdt_has(body, "\nxdsd_load_requests_total{cluster=\"web\",locality=\"eu/a/\"} 1\n");
	xdt_has(body, "\nxdsd_load_requests_total{cluster=\"_other\",locality=\"_other\"} 2\n");
	xdt_has(body, "\nxdsd_load_refused_total 1\n");
	xdt_lacks(body, "locality=\"eu/c/\"");
	free(body);
	xdt_ctl_stop(d);
	free(ra);
	free(rb);
	free(rc);
	free(extra);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loads");
	TCase *tc = tcase_create("loads");

	xdtest_make_certs();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, loads_reported_and_shown);
	tcase_add_test(tc, loads_bad_requests_refused);
	tcase_add_test(tc, loads_behind_authorize);
	tcase_add_test(tc, loads_bounded);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
