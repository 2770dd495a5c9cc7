/* SPDX-License-Identifier: Apache-2.0 */
/*
 * REST-JSON polling (docs/protocol.md, rule R1) against the real daemon
 * on loopback, asked with curl as an operator would, answers read by
 * jansson; and gRPC-less polling the way Envoy's REST subscriptions do
 * it, by tests/e2e/rest-client.py (urllib and json only); and the
 * record of pollers in /clients and `xdsctl clients`.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 20000
#define STOP_MS 5000

#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"
#define EDS_URL "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

/* Every type REST serves; clusters "a" and "b" at connect_timeout
 * `cds`s, endpoints of "a" on `port`. */
static void write_snapshot(const char *dir, int cds, int port)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "clusters:\n"
		 "- {name: a, type: EDS, connect_timeout: %ds, eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}}}\n"
		 "- {name: b, type: STATIC, connect_timeout: 1s}\n"
		 "endpoints:\n"
		 "- cluster_name: a\n"
		 "  endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}}]}]\n"
		 "listeners:\n"
		 "- name: l1\n"
		 "  address: {socket_address: {address: 0.0.0.0, port_value: 10000}}\n"
		 "  filter_chains:\n"
		 "  - filters:\n"
		 "    - name: envoy.filters.network.http_connection_manager\n"
		 "      typed_config:\n"
		 "        \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
		 "        stat_prefix: l1\n"
		 "        rds: {route_config_name: r1, config_source: {ads: {}, resource_api_version: V3}}\n"
		 "routes:\n"
		 "- name: r1\n"
		 "  \"@ttl\": 30s\n"
		 "  virtual_hosts: [{name: vh, domains: ['*'], routes: [{match: {prefix: /}, route: {cluster: a}}]}]\n"
		 "scoped_routes:\n"
		 "- {name: s1, route_configuration_name: r1, key: {fragments: [{string_key: x}]}}\n"
		 "secrets:\n"
		 "- {name: open, \"@allow\": [\"@anyone\"], generic_secret: {secret: {inline_string: hello}}}\n"
		 "- {name: closed, generic_secret: {secret: {inline_string: hunter2}}}\n"
		 "runtimes:\n"
		 "- {name: rt, layer: {key: value}}\n"
		 "extension_configs:\n"
		 "- {name: tag, typed_config: {\"@type\": type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation}}\n",
		 cds, port);
	xdtest_replace_file(dir, "default.yaml", text);
}

static struct xdt_daemon *start(const char *dir, const char *extra)
{
	char cfg[1024];
	struct xdt_daemon *d;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nrest_listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n%s",
		 dir, extra ? extra : "");
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert_msg(d->rest_port > 0, "no REST port in the log");
	return d;
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* ---------------- curl ---------------- */

/* A curl run in the background: its body and status land in files. */
struct curl {
	pid_t pid;
	char body[512], code[520];
};

static void curl_start(struct curl *c, const struct xdt_daemon *d,
		       const char *method, const char *path, const char *json)
{
	char url[256], *req;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", d->rest_port, path);
	snprintf(c->body, sizeof(c->body), "%s/curl.%d.%lld.body", xdtest_tmpdir(),
		 (int)getpid(), xdtest_now_ms());
	snprintf(c->code, sizeof(c->code), "%s.code", c->body);
	req = xdtest_write_file(xdtest_tmpdir(), "curl.req", json ? json : "");
	c->pid = fork();
	ck_assert(c->pid >= 0);
	if (c->pid == 0) {
		char data[600], out[600];

		snprintf(data, sizeof(data), "@%s", req);
		snprintf(out, sizeof(out), "%s", c->body);
		if (freopen(c->code, "w", stdout) == NULL)
			_exit(127);
		if (json != NULL)
			execlp("curl", "curl", "-s", "-m", "30", "-X", method,
			       "-H", "Content-Type: application/json",
			       "--data-binary", data, "-o", out, "-w",
			       "%{http_code}", url, (char *)NULL);
		else
			execlp("curl", "curl", "-s", "-m", "30", "-X", method,
			       "-o", out, "-w", "%{http_code}", url, (char *)NULL);
		_exit(127);
	}
	free(req);
}

/* Whether it is still running. */
static bool curl_running(struct curl *c)
{
	return waitpid(c->pid, NULL, WNOHANG) == 0;
}

/* Waits for it; returns the body (malloc'd) and the HTTP status. */
static char *curl_finish(struct curl *c, int *status)
{
	int st;
	char *code, *body;

	ck_assert(waitpid(c->pid, &st, 0) == c->pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "curl failed (%d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	code = xdtest_read_file(c->code, NULL);
	ck_assert(code != NULL);
	*status = atoi(code);
	free(code);
	body = xdtest_read_file(c->body, NULL);
	unlink(c->body);
	unlink(c->code);
	return body != NULL ? body : strdup("");
}

static char *curl(const struct xdt_daemon *d, const char *method,
		  const char *path, const char *json, int *status)
{
	struct curl c;

	curl_start(&c, d, method, path, json);
	return curl_finish(&c, status);
}

/* POSTs and expects 200 with a JSON DiscoveryResponse. */
static json_t *discover(const struct xdt_daemon *d, const char *type,
			const char *json)
{
	char path[128], *body;
	int status;
	json_t *v;
	json_error_t err;

	snprintf(path, sizeof(path), "/v3/discovery:%s", type);
	body = curl(d, "POST", path, json, &status);
	ck_assert_msg(status == 200, "%s: %d %s", path, status, body);
	v = json_loads(body, 0, &err);
	ck_assert_msg(v != NULL, "%s: not JSON: %s", path, body);
	free(body);
	return v;
}

/* The resources' names (their "name", or "clusterName"), sorted by the
 * daemon, joined by spaces. */
static void names_of(json_t *resp, char *out, size_t cap)
{
	json_t *res = json_object_get(resp, "resources"), *r;
	size_t i;

	out[0] = '\0';
	json_array_foreach(res, i, r) {
		json_t *n = json_object_get(r, "name");

		if (n == NULL)
			n = json_object_get(r, "clusterName");
		ck_assert(json_is_string(n));
		snprintf(out + strlen(out), cap - strlen(out), "%s%s",
			 i > 0 ? " " : "", json_string_value(n));
	}
}

#define NODE "\"node\": {\"id\": \"n1\", \"cluster\": \"web\"}"

static void expect_names(const struct xdt_daemon *d, const char *type,
			 const char *json, const char *want)
{
	json_t *r = discover(d, type, json);
	char got[512];

	names_of(r, got, sizeof(got));
	ck_assert_msg(strcmp(got, want) == 0, "%s %s: got '%s', want '%s'",
		      type, json, got, want);
	ck_assert_int_eq(strlen(xdt_json_str(r, "versionInfo")), 16);
	ck_assert(strlen(xdt_json_str(r, "nonce")) > 0);
	json_decref(r);
}

/*
 * The refusal of a REST request from loopback as an operator reads it:
 * one warning naming the peer, the type, the node (`node`: as logged,
 * "node 'n1' cluster 'web'" or "no node read") and, in `why`, the
 * status, the reason /metrics counts it under and the message.
 */
static void expect_warning(const struct xdt_daemon *d, const char *node,
			   const char *why)
{
	char *log = xdt_daemon_log(d), *line, *save = NULL, want[1024];
	bool found = false;

	snprintf(want, sizeof(want), "%s): refused with %s", node, why);
	for (line = strtok_r(log, "\n", &save); line != NULL && !found;
	     line = strtok_r(NULL, "\n", &save))
		found = strstr(line, " warn: rest request ") != NULL &&
			strstr(line, " from 127.0.0.1:") != NULL &&
			strstr(line, want) != NULL;
	free(log);
	ck_assert_msg(found, "no warning '... from 127.0.0.1:... %s' in the log",
		      want);
}

/* ---------------- the tests ---------------- */

START_TEST(rest_every_type_by_curl)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	const struct {
		const char *path, *url, *names, *want;
	} cases[] = {
		{"listeners", "envoy.config.listener.v3.Listener", "", "l1"},
		{"routes", "envoy.config.route.v3.RouteConfiguration", "\"r1\"", "r1"},
		{"scoped-routes", "envoy.config.route.v3.ScopedRouteConfiguration", "", "s1"},
		{"clusters", "envoy.config.cluster.v3.Cluster", "", "a b"},
		{"endpoints", "envoy.config.endpoint.v3.ClusterLoadAssignment", "\"a\"", "a"},
		{"secrets", "envoy.extensions.transport_sockets.tls.v3.Secret", "\"open\"", "open"},
		{"runtime", "envoy.service.runtime.v3.Runtime", "\"rt\"", "rt"},
		{"extension_configs", "envoy.config.core.v3.TypedExtensionConfig", "\"tag\"", "tag"},
	};

	write_snapshot(dir, 5, 8080);
	d = start(dir, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[512], url[256], got[256];
		json_t *r, *res;

		snprintf(json, sizeof(json), "{" NODE ", \"resource_names\": [%s]}",
			 cases[i].names);
		r = discover(d, cases[i].path, json);
		snprintf(url, sizeof(url), "type.googleapis.com/%s", cases[i].url);
		ck_assert_str_eq(xdt_json_str(r, "typeUrl"), url);
		res = json_object_get(r, "resources");
		ck_assert_msg(json_array_size(res) > 0, "%s: no resources",
			      cases[i].path);
		ck_assert_str_eq(xdt_json_str(json_array_get(res, 0), "@type"), url);
		names_of(r, got, sizeof(got));
		ck_assert_msg(strcmp(got, cases[i].want) == 0, "%s: '%s'",
			      cases[i].path, got);
		json_decref(r);
	}
	stop(d);
	free(dir);
}
END_TEST

START_TEST(rest_wildcard_and_named)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	json_t *a, *b;

	write_snapshot(dir, 5, 8080);
	d = start(dir, NULL);
	/* rule S2: no names is everything for clusters, and "*" too */
	expect_names(d, "clusters", "{" NODE "}", "a b");
	expect_names(d, "clusters", "{" NODE ", \"resourceNames\": [\"*\"]}", "a b");
	/* named: what exists of the names (rules S9, S10) */
	expect_names(d, "clusters", "{" NODE ", \"resource_names\": [\"b\", \"zz\"]}", "b");
	expect_names(d, "endpoints", "{" NODE ", \"resource_names\": [\"a\", \"zz\"]}", "a");
	/* no names for endpoints is no subscription: only the version */
	expect_names(d, "endpoints", "{" NODE "}", "");
	/* a secret restricted to identified clients does not exist here */
	expect_names(d, "secrets", "{" NODE ", \"resource_names\": [\"open\", \"closed\"]}", "open");
	/* the version is the type's (rule S3): the same for any names, and
	 * the nonce differs with them */
	a = discover(d, "clusters", "{" NODE ", \"resource_names\": [\"a\"]}");
	b = discover(d, "clusters", "{" NODE "}");
	ck_assert_str_eq(xdt_json_str(a, "versionInfo"), xdt_json_str(b, "versionInfo"));
	ck_assert_str_ne(xdt_json_str(a, "nonce"), xdt_json_str(b, "nonce"));
	json_decref(a);
	json_decref(b);
	stop(d);
	free(dir);
}
END_TEST

/* Rules L1, L2: the client features, as over gRPC. */
START_TEST(rest_wrapped_with_ttl)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	json_t *r, *res;

	write_snapshot(dir, 5, 8080);
	d = start(dir, NULL);
	r = discover(d, "routes", "{" NODE ", \"resource_names\": [\"r1\"]}");
	res = json_array_get(json_object_get(r, "resources"), 0);
	ck_assert_str_eq(xdt_json_str(res, "@type"),
			 "type.googleapis.com/envoy.config.route.v3.RouteConfiguration");
	json_decref(r);
	r = discover(d, "routes",
		     "{\"node\": {\"id\": \"n1\", \"client_features\": "
		     "[\"xds.config.supports-resource-in-sotw\", \"xds.config.supports-resource-ttl\"]}, "
		     "\"resource_names\": [\"r1\"]}");
	res = json_array_get(json_object_get(r, "resources"), 0);
	ck_assert_str_eq(xdt_json_str(res, "@type"),
			 "type.googleapis.com/envoy.service.discovery.v3.Resource");
	ck_assert_str_eq(xdt_json_str(res, "name"), "r1");
	ck_assert_str_eq(xdt_json_str(res, "ttl"), "30s");
	ck_assert_str_eq(xdt_json_str(json_object_get(res, "resource"), "name"), "r1");
	json_decref(r);
	stop(d);
	free(dir);
}
END_TEST

/* The version and nonce of a fresh answer. */
static void current(const struct xdt_daemon *d, const char *type,
		    const char *names, char *version, char *nonce)
{
	char json[512];
	json_t *r;

	snprintf(json, sizeof(json), "{" NODE ", \"resource_names\": [%s]}", names);
	r = discover(d, type, json);
	snprintf(version, 17, "%s", xdt_json_str(r, "versionInfo"));
	snprintf(nonce, 32, "%s", xdt_json_str(r, "nonce"));
	json_decref(r);
}

/* A poll for the version it holds is answered when its type changes:
 * with rest_poll_timeout at an hour, an answer within curl's 30 s can
 * only be the change's. */
START_TEST(rest_hold_until_reload)
{
	char *dir = xdtest_snapdir(), v[17], n[32], json[512], *body;
	struct xdt_daemon *d;
	struct curl c;
	int status;
	json_t *r;

	write_snapshot(dir, 5, 8080);
	d = start(dir, "rest_poll_timeout: 1h\n");
	current(d, "clusters", "", v, n);
	snprintf(json, sizeof(json),
		 "{" NODE ", \"version_info\": \"%s\", \"response_nonce\": \"%s\"}", v, n);
	curl_start(&c, d, "POST", "/v3/discovery:clusters", json);
	ck_assert(xdt_daemon_wait_log(d, "holds version", 5000));
	/* a reload that changes only endpoints is no news for clusters */
	write_snapshot(dir, 5, 9090);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "reload", 5000));
	xdtest_sleep_ms(500);
	ck_assert_msg(curl_running(&c), "answered although clusters did not change");
	/* one that changes clusters wakes it at once */
	write_snapshot(dir, 7, 9090);
	xdt_daemon_signal(d, SIGHUP);
	body = curl_finish(&c, &status);
	ck_assert_int_eq(status, 200);
	ck_assert(xdt_daemon_wait_log(d, "resources (changed after ", 5000));
	r = json_loads(body, 0, NULL);
	ck_assert(r != NULL);
	ck_assert_str_ne(xdt_json_str(r, "versionInfo"), v);
	ck_assert_msg(strstr(body, "\"connectTimeout\":\"7s\"") != NULL, "%s", body);
	json_decref(r);
	free(body);
	/* the endpoints poll, at the old version, is answered at once */
	snprintf(json, sizeof(json),
		 "{" NODE ", \"version_info\": \"%s\", \"resource_names\": [\"a\"]}", v);
	body = curl(d, "POST", "/v3/discovery:endpoints", json, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_msg(strstr(body, "9090") != NULL, "%s", body);
	free(body);
	stop(d);
	free(dir);
}
END_TEST

/*
 * What decides when a poll is answered, as the daemon says it (debug
 * log: "N resources (why)"): a poll for the version it holds is held,
 * and at rest_poll_timeout answered with the same answer; one whose
 * names changed is answered at once, never held; a NACK of the current
 * answer is held like the first. Said by what was held and why each was
 * answered, not by timing the answers.
 */
START_TEST(rest_poll_timeout_same_answer)
{
	char *dir = xdtest_snapdir(), v[17], n[32], json[512], *body;
	struct xdt_daemon *d;
	int status, held, fresh;
	json_t *r;

	write_snapshot(dir, 5, 8080);
	d = start(dir, "rest_poll_timeout: 700ms\n");
	current(d, "endpoints", "\"a\"", v, n);
	snprintf(json, sizeof(json),
		 "{" NODE ", \"versionInfo\": \"%s\", \"resourceNames\": [\"a\"]}", v);
	body = curl(d, "POST", "/v3/discovery:endpoints", json, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(xdt_daemon_log_count(d, "holds version"), 1);
	ck_assert(xdt_daemon_wait_log_count(d, "resources (rest_poll_timeout after ", 1, 5000));
	r = json_loads(body, 0, NULL);
	ck_assert_str_eq(xdt_json_str(r, "versionInfo"), v);
	ck_assert_str_eq(xdt_json_str(r, "nonce"), n);
	ck_assert_int_eq(json_array_size(json_object_get(r, "resources")), 1);
	json_decref(r);
	free(body);
	/* the names changed since that nonce: answered at once */
	snprintf(json, sizeof(json),
		 "{" NODE ", \"versionInfo\": \"%s\", \"response_nonce\": \"%s\", \"resourceNames\": [\"a\", \"b\"]}",
		 v, n);
	held = xdt_daemon_log_count(d, "holds version");
	fresh = xdt_daemon_log_count(d, "resources (new to the client)");
	free(curl(d, "POST", "/v3/discovery:endpoints", json, &status));
	ck_assert_int_eq(status, 200);
	ck_assert(xdt_daemon_wait_log_count(d, "resources (new to the client)",
					    fresh + 1, 5000));
	ck_assert_msg(xdt_daemon_log_count(d, "holds version") == held,
		      "a changed subscription was held");
	/* a NACK of the current answer is not answered by it again at
	 * once (rule S4): held, until the timeout */
	snprintf(json, sizeof(json),
		 "{" NODE ", \"response_nonce\": \"%s\", \"resourceNames\": [\"a\"], "
		 "\"error_detail\": {\"code\": 3, \"message\": \"port refused\"}}", n);
	free(curl(d, "POST", "/v3/discovery:endpoints", json, &status));
	ck_assert_int_eq(status, 200);
	ck_assert(xdt_daemon_wait_log(d, "NACK of nonce", 5000));
	ck_assert_msg(xdt_daemon_log_count(d, " (NACKed); waiting") == 1,
		      "the NACKed answer was resent at once");
	ck_assert(xdt_daemon_wait_log_count(d, "resources (rest_poll_timeout after ", 2, 5000));
	stop(d);
	free(dir);
}
END_TEST

/* Answers a bad request with `status` and a body holding `want`. */
static void expect_refused(const struct xdt_daemon *d, const char *method,
			   const char *path, const char *json, int want_status,
			   const char *want)
{
	int status;
	char *body = curl(d, method, path, json, &status);

	ck_assert_msg(status == want_status && strstr(body, want) != NULL,
		      "%s %s %s: %d %s (wanted %d '%s')", method, path,
		      json ? json : "", status, body, want_status, want);
	free(body);
}

START_TEST(rest_bad_requests)
{
	char *dir = xdtest_snapdir(), *big;
	struct xdt_daemon *d;
	const char *p = "/v3/discovery:clusters";

	write_snapshot(dir, 5, 8080);
	d = start(dir, "max_request_size: 2KiB\n");
	expect_refused(d, "POST", p, "{\"node\": ", 400, "request body:1:");
	expect_refused(d, "POST", p, "", 400, "request body:");
	expect_refused(d, "POST", p, "[]", 400, "expected a mapping");
	expect_refused(d, "POST", p, "{\"node\": {\"clustr\": \"web\"}}", 400,
		       "request body: node.clustr: unknown field 'clustr'");
	expect_refused(d, "POST", p, "{\"resource_names\": [\"a\", \"b\", 3]}", 400,
		       "resource_names[2]: expected a string");
	expect_refused(d, "POST", p, "{\"version_info\": \"a\", \"versionInfo\": \"a\"}", 400,
		       "request body");
	expect_refused(d, "POST", p, "{\"node\": {\"id\": \"x\"}, \"error_detail\": {\"code\": \"many\"}}",
		       400, "error_detail.code");
	expect_refused(d, "POST", p, "{\"type_url\": \"" EDS_URL "\"}", 400,
		       "type_url: '" EDS_URL "' is not the type of /v3/discovery:clusters");
	big = malloc(4096);
	memset(big, ' ', 4095);
	big[0] = '{';
	big[4094] = '}';
	big[4095] = '\0';
	expect_refused(d, "POST", p, big, 413, "too large");
	free(big);
	/* the right type URL, spelled out, is fine */
	expect_names(d, "clusters", "{\"type_url\": \"" CDS_URL "\"}", "a b");
	expect_refused(d, "GET", p, NULL, 405, "POST");
	expect_refused(d, "POST", "/v3/discovery:virtual-hosts", "{}", 404, "no such resource");
	expect_refused(d, "POST", "/v2/discovery:clusters", "{}", 404, "no such resource");
	expect_refused(d, "GET", "/", NULL, 404, "no such resource");
	/* still serving */
	expect_names(d, "clusters", "{}", "a b");
	/* counted: the 413 is refused before REST sees it */
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rest_refused_total"), 12);
	/* by reason: the 413 is the HTTP server's (too_large) */
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"invalid_argument\"}"), 8);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"method\"}"), 1);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"unknown_path\"}"), 3);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"too_large\"}"), 1);
	expect_warning(d, "(CDS, no node read",
		       "400 (invalid_argument): request body:1:");
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rest_requests_total{type=\"clusters\"}"), 10);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rest_responses_total{type=\"clusters\"}"), 2);
	stop(d);
	free(dir);
}
END_TEST

START_TEST(rest_off_by_default)
{
	char *dir = xdtest_snapdir(), *cdir = xdtest_snapdir(), cfg[512], *log;
	char *out = NULL, *err = NULL;
	char *conf = xdtest_write_file(cdir, "xdsd.yaml", "listen: 127.0.0.1:0\n");
	struct xdt_daemon *d;
	const char *args[] = {"--check", "-c", conf, "--schema",
			      xdtest_env("XDSD_SCHEMA"), "--snapshots", dir, NULL};

	write_snapshot(dir, 5, 8080);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert_int_eq(d->rest_port, 0);
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "REST-JSON") == NULL, "%s", log);
	free(log);
	stop(d);
	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 0);
	ck_assert_msg(strstr(out, "rest_listen: 'off'") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "rest_poll_timeout: 30s") != NULL, "%s", out);
	free(out);
	free(err);
	free(conf);
	free(cdir);
	free(dir);
}
END_TEST

/* Held polls end with their client, and with the daemon: with
 * rest_poll_timeout at an hour, a daemon that waited for its polls
 * would not stop at all. */
START_TEST(rest_held_polls_end)
{
	char *dir = xdtest_snapdir(), v[17], n[32], json[512];
	struct xdt_daemon *d;
	struct curl c;
	int st;

	write_snapshot(dir, 5, 8080);
	d = start(dir, "rest_poll_timeout: 1h\n");
	current(d, "clusters", "", v, n);
	snprintf(json, sizeof(json), "{" NODE ", \"version_info\": \"%s\"}", v);
	curl_start(&c, d, "POST", "/v3/discovery:clusters", json);
	ck_assert(xdt_daemon_wait_log(d, "(1 waiting)", 5000));
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rest_polls_waiting"), 1);
	kill(c.pid, SIGKILL);
	ck_assert(waitpid(c.pid, &st, 0) == c.pid);
	ck_assert(xdt_daemon_wait_log(d, "closed while held", 5000));
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rest_polls_waiting"), 0);
	unlink(c.body);
	unlink(c.code);
	curl_start(&c, d, "POST", "/v3/discovery:clusters", json);
	ck_assert(xdt_daemon_wait_log_count(d, "(1 waiting)", 2, 5000));
	xdt_daemon_signal(d, SIGTERM);
	ck_assert_msg(xdt_daemon_wait(d, STOP_MS), "stopping waited for the poll");
	ck_assert_int_eq(d->exit_status, 0);
	/* curl sees the connection close without an answer */
	ck_assert(waitpid(c.pid, &st, 0) == c.pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	unlink(c.body);
	unlink(c.code);
	xdt_daemon_free(d);
	free(dir);
}
END_TEST

/* Rule P1: resource locators pick a variant, as on gRPC. */
START_TEST(rest_dynamic_parameters)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	json_t *r;

	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n"
			       "- {name: svc, connect_timeout: 1s}\n"
			       "- name: svc\n"
			       "  \"@dynamic_parameter_constraints\": {constraint: {key: env, value: canary}}\n"
			       "  connect_timeout: 5s\n"));
	d = start(dir, NULL);
	r = discover(d, "clusters",
		     "{\"resource_locators\": [{\"name\": \"svc\", \"dynamic_parameters\": {\"env\": \"canary\"}}]}");
	ck_assert_str_eq(xdt_json_str(json_array_get(json_object_get(r, "resources"), 0),
			     "connectTimeout"), "5s");
	json_decref(r);
	r = discover(d, "clusters", "{\"resource_names\": [\"svc\"]}");
	ck_assert_str_eq(xdt_json_str(json_array_get(json_object_get(r, "resources"), 0),
			     "connectTimeout"), "1s");
	json_decref(r);
	stop(d);
	free(dir);
}
END_TEST

/* No certificate, no identity: with authorize: rules, nothing. */
START_TEST(rest_no_identity_refused)
{
	char *dir = xdtest_snapdir(), cfg[2048];
	struct xdt_daemon *d;

	write_snapshot(dir, 5, 8080);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nrest_listen: 127.0.0.1:0\nsnapshots: %s\n"
		 "tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n"
		 "authorize:\n  - identity: '*'\n    node_cluster: web\n",
		 dir, xdtest_cert("server.pem"), xdtest_cert("server.key"),
		 xdtest_cert("ca.pem"));
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(d->rest_port > 0);
	expect_refused(d, "POST", "/v3/discovery:clusters", "{" NODE "}", 403,
		       "no identity");
	/* admitted as a gRPC stream's first request is (protocol/client.h):
	 * the node is read before the rules, and the refusal names it */
	expect_refused(d, "POST", "/v3/discovery:clusters", "{" NODE "}", 403,
		       "may not speak for node id 'n1' cluster 'web'");
	expect_refused(d, "POST", "/v3/discovery:clusters",
		       "{\"node\": {\"clustr\": \"web\"}}", 400,
		       "node.clustr: unknown field");
	/* refused as a gRPC stream is: a warning with who and why, and
	 * counted */
	expect_warning(d, "(CDS, node 'n1' cluster 'web'",
		       "403 (unauthenticated): a client with no identity may not speak for node id 'n1' cluster 'web'");
	expect_warning(d, "(CDS, no node read",
		       "400 (invalid_argument): request body: node.clustr: unknown field");
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"unauthenticated\"}"), 2);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"invalid_argument\"}"), 1);
	stop(d);
	free(dir);
}
END_TEST

/* As on gRPC (docs/protocol.md §8.4): a node no snapshot serves. */
START_TEST(rest_node_without_snapshot)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;

	free(xdtest_write_file(dir, "prod.yaml",
			       "clusters:\n- {name: p, type: STATIC, connect_timeout: 1s}\n"));
	d = start(dir, NULL);
	expect_refused(d, "POST", "/v3/discovery:clusters", "{" NODE "}", 404,
		       "no snapshot serves node cluster 'web'");
	/* in gRPC's words (protocol/client.h) */
	expect_refused(d, "POST", "/v3/discovery:clusters", "{" NODE "}", 404,
		       "xdsd has no snapshot 'web' and no default snapshot");
	expect_names(d, "clusters", "{\"node\": {\"cluster\": \"prod\"}}", "p");
	expect_warning(d, "(CDS, node 'n1' cluster 'web'",
		       "404 (no_snapshot): no snapshot serves node cluster 'web'");
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"no_snapshot\"}"), 2);
	stop(d);
	free(dir);
}
END_TEST

/* The node's limits, refused in the words a gRPC stream is refused with
 * (check_limits.c), as a 400. */
START_TEST(rest_node_limits_as_grpc)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;

	write_snapshot(dir, 5, 8080);
	d = start(dir, "max_node_id_size: 16\n");
	expect_refused(d, "POST", "/v3/discovery:clusters",
		       "{\"node\": {\"id\": \"a-node-id-of-26-characters\", \"cluster\": \"web\"}}",
		       400, "the node id is 26 bytes; the limit is 16 (max_node_id_size)");
	expect_names(d, "clusters",
		     "{\"node\": {\"id\": \"sixteen-bytes-id\", \"cluster\": \"web\"}}",
		     "a b");
	/* the node is not taken, so not named: its size is the news */
	expect_warning(d, "(CDS, no node read",
		       "400 (limits): request body: node: the node id is 26 bytes; the limit is 16 (max_node_id_size)");
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"limits\"}"), 1);
	stop(d);
	free(dir);
}
END_TEST

/* A REST subscription as Envoy runs one, in Python with urllib; why
 * the daemon answered each poll when it did is in its log: the second
 * poll woken by the reload, the third and the NACK held until
 * rest_poll_timeout. */
START_TEST(rest_python_client)
{
	char *dir = xdtest_snapdir(), cmd[2048], file[1024];
	struct xdt_daemon *d;
	int rc;

	write_snapshot(dir, 5, 8080);
	d = start(dir, "rest_poll_timeout: 1s\n");
	snprintf(file, sizeof(file), "%s/default.yaml", dir);
	snprintf(cmd, sizeof(cmd), "%s %s/tests/e2e/rest-client.py %d %s %d %s",
		 xdtest_env("PYTHON3"), xdtest_env("XDSD_SRCDIR"), d->rest_port,
		 file, (int)d->pid, d->log_path);
	rc = system(cmd);
	ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
		      "rest-client.py failed (%d)", rc);
	ck_assert_int_eq(xdt_daemon_log_count(d, "holds version"), 3);
	ck_assert_int_eq(xdt_daemon_log_count(d, " (NACKed); waiting"), 1);
	ck_assert_int_eq(xdt_daemon_log_count(d, "resources (changed after "), 1);
	ck_assert_int_eq(xdt_daemon_log_count(d, "resources (rest_poll_timeout after "), 2);
	stop(d);
	free(dir);
}
END_TEST

/* Pollers are remembered after their answer: /clients lists each
 * (node, key) once with the types it asked for, under the node filter
 * only, and `xdsctl clients` shows them marked REST. */
START_TEST(rest_pollers_in_clients)
{
	char *dir = xdtest_snapdir(), *admin, *body;
	struct xdt_daemon *d;
	struct xdt_run r;
	json_t *doc, *list, *p, *types;
	int status;

	write_snapshot(dir, 5, 8080);
	d = start(dir, NULL);
	admin = xdt_ctl_admin(d);
	doc = xdt_admin_json(d, "GET", "/clients", &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "rest_pollers")), 0);
	json_decref(doc);

	json_decref(discover(d, "clusters", "{" NODE "}"));
	json_decref(discover(d, "listeners", "{" NODE "}"));
	json_decref(discover(d, "clusters", "{" NODE "}"));
	json_decref(discover(d, "clusters", "{\"node\": {\"id\": \"n2\", \"cluster\": \"api\"}}"));

	doc = xdt_admin_json(d, "GET", "/clients?node=n1", &status);
	ck_assert_int_eq(status, 200);
	list = json_object_get(doc, "rest_pollers");
	ck_assert_int_eq(json_array_size(list), 1);
	p = json_array_get(list, 0);
	ck_assert_str_eq(xdt_json_str(p, "node"), "n1");
	ck_assert_str_eq(xdt_json_str(p, "key"), "web");
	ck_assert(strstr(xdt_json_str(p, "peer"), "127.0.0.1") != NULL);
	types = json_object_get(p, "types");
	ck_assert_int_eq(json_array_size(types), 2);
	ck_assert_str_eq(json_string_value(json_array_get(types, 0)), "clusters");
	ck_assert_str_eq(json_string_value(json_array_get(types, 1)), "listeners");
	ck_assert(strlen(xdt_json_str(p, "last_seen")) > 10);
	json_decref(doc);

	doc = xdt_admin_json(d, "GET", "/clients", &status);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "rest_pollers")), 2);
	json_decref(doc);
	/* no sync state: a state filter leaves them out */
	doc = xdt_admin_json(d, "GET", "/clients?state=synced", &status);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "rest_pollers")), 0);
	json_decref(doc);

	r = xdt_ctl(false, admin, (const char *const[]){"clients", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "no streams (of 0)\n");
	xdt_has(r.out, "REST");
	xdt_has(r.out, "clusters,listeners");
	xdt_has(r.out, "2 REST-JSON pollers seen lately\n");
	xdt_run_free(&r);
	body = xdt_admin(d, "GET", "/metrics", NULL, &status, NULL);
	ck_assert_double_eq(xdt_metrics_sample(body, "xdsd_rest_pollers_dropped_total"), 0);
	free(body);

	free(admin);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rest");
	TCase *tc = tcase_create("R1");

	xdtest_make_certs();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, rest_every_type_by_curl);
	tcase_add_test(tc, rest_wildcard_and_named);
	tcase_add_test(tc, rest_wrapped_with_ttl);
	tcase_add_test(tc, rest_hold_until_reload);
	tcase_add_test(tc, rest_poll_timeout_same_answer);
	tcase_add_test(tc, rest_bad_requests);
	tcase_add_test(tc, rest_off_by_default);
	tcase_add_test(tc, rest_held_polls_end);
	tcase_add_test(tc, rest_dynamic_parameters);
	tcase_add_test(tc, rest_no_identity_refused);
	tcase_add_test(tc, rest_node_without_snapshot);
	tcase_add_test(tc, rest_node_limits_as_grpc);
	tcase_add_test(tc, rest_python_client);
	tcase_add_test(tc, rest_pollers_in_clients);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
