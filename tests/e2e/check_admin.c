/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admin endpoint (xdsd(8), ADMIN ENDPOINT) against the real daemon
 * with real xDS clients on loopback: one that ACKs everything, one that
 * NACKs endpoints. Each page is read the way its users read it: /metrics
 * by Prometheus's own parser, /clients and /config_dump as JSON by
 * jansson, the HTTP itself by raw sockets where the point is what a bad
 * request gets.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "http/client.h"
#include "util/clock.h"
#include "node.h"
#include "xdtest.h"

#define START_MS 20000
#define STOP_MS 5000
#define WAIT_MS 5000
#define EDS_URL XDT_EDS_URL
#define NACK_TEXT "endpoints rejected: \"port 1 is reserved\"\nsecond line"
/* With the cluster "svc": a secret no client may have (no "@allow"). */
#define TOKEN_SECRET \
	"secrets:\n" \
	"- name: token\n" \
	"  generic_secret: {secret: {inline_string: hunter2}}\n"

static struct xdt_daemon *start(const char *dir)
{
	char cfg[1024];

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* ---------------- xDS clients ---------------- */

/* A node asking for the endpoints of "svc": it ACKs them, or NACKs them
 * with NACK_TEXT. */
static void client_open(struct xdt_node *c, const char *target, const char *id,
			bool nack_endpoints)
{
	struct xdt_node_opts o = {
		.id = id,
		.endpoints = "svc",
		.nack_endpoints = nack_endpoints ? NACK_TEXT : NULL,
	};

	xdt_node_open(c, target, &o);
}

/* ---------------- helpers ---------------- */

static json_t *get_json(struct xdt_daemon *d, const char *path, int want);

static json_t *get_json(struct xdt_daemon *d, const char *path, int want)
{
	int status;
	char *type, *body = xdt_admin(d, "GET", path, NULL, &status, &type);
	json_error_t err;
	json_t *j;

	ck_assert_msg(status == want, "GET %s: %d, not %d: %s", path, status,
		      want, body);
	ck_assert_str_eq(type, "application/json");
	j = json_loads(body, 0, &err);
	ck_assert_msg(j != NULL, "GET %s: not JSON (%s): %s", path, err.text, body);
	free(body);
	free(type);
	return j;
}

/* Waits until xdsd has read the clients' last answers: `synced` streams
 * synced and `nacked` streams nacked. */
static void wait_states(struct xdt_daemon *d, int synced, int nacked)
{
	for (int i = 0;; i++) {
		json_t *s = get_json(d, "/clients?state=synced", 200);
		json_t *n = get_json(d, "/clients?state=nacked", 200);
		bool there = json_integer_value(json_object_get(s, "count")) == synced &&
			     json_integer_value(json_object_get(n, "count")) == nacked;

		json_decref(s);
		json_decref(n);
		if (there)
			return;
		ck_assert_msg(i < 200, "clients never got to %d synced, %d nacked",
			      synced, nacked);
		xdtest_sleep_ms(25);
	}
}

/* The stream of node `id` in a /clients document. */
static json_t *client_of(json_t *doc, const char *id)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(doc, "clients"), i, c) {
		json_t *node = json_object_get(c, "node");

		if (strcmp(json_string_value(json_object_get(node, "id")), id) == 0)
			return c;
	}
	ck_abort_msg("no client '%s' in /clients", id);
	return NULL;
}

/* The entry of `type` in a client's types. */
static json_t *type_of(json_t *client, const char *type)
{
	size_t i;
	json_t *t;

	json_array_foreach(json_object_get(client, "types"), i, t)
		if (strcmp(json_string_value(json_object_get(t, "type")), type) == 0)
			return t;
	ck_abort_msg("no type '%s' in the client", type);
	return NULL;
}

/* /metrics through Prometheus's parser: its samples, one a line. */
static char *parsed_metrics(struct xdt_daemon *d)
{
	int status;
	char *type, *body = xdt_admin(d, "GET", "/metrics", NULL, &status, &type);
	char *in = xdtest_write_file(xdtest_tmpdir(), "metrics.txt", body);
	char cmd[2048], *out = NULL;
	size_t len = 0, n;
	char chunk[4096];
	FILE *p, *o;
	int rc;

	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(type, "text/plain; version=0.0.4; charset=utf-8");
	snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/e2e/prom-parse.py' < '%s' 2>&1",
		 xdtest_env("PYTHON3"), xdtest_env("XDSD_SRCDIR"), in);
	p = popen(cmd, "r");
	ck_assert(p != NULL);
	o = open_memstream(&out, &len);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, o);
	fclose(o);
	rc = pclose(p);
	ck_assert_msg(rc == 0, "the Prometheus parser refused /metrics: %s", out);
	free(body);
	free(type);
	free(in);
	return out;
}

static void has_line(const char *text, const char *line)
{
	char *want;

	ck_assert(asprintf(&want, "\n%s\n", line) > 0);
	ck_assert_msg(strstr(text, want) != NULL, "no line '%s' in /metrics (%zu bytes parsed)",
		      line, strlen(text));
	free(want);
}

/* A number from the parsed samples (the line starting with `prefix `). */
static double sample_value(const char *text, const char *series)
{
	char *want;
	const char *p;
	double v;

	ck_assert(asprintf(&want, "\n%s ", series) > 0);
	p = strstr(text, want);
	ck_assert_msg(p != NULL, "no sample %s", series);
	ck_assert(sscanf(p + strlen(want), "%lf", &v) == 1);
	free(want);
	return v;
}

/* ---------------- tests ---------------- */

START_TEST(health_and_ready)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	int status;
	char *body;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	d = start(dir);
	body = xdt_admin(d, "GET", "/healthz", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	free(body);
	body = xdt_admin(d, "GET", "/ready", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(body, "ready\n");
	free(body);
	stop(d);
	free(dir);
}
END_TEST

START_TEST(unknown_paths_and_methods)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	int status;
	char *body;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	d = start(dir);
	body = xdt_admin(d, "GET", "/nothing-here", NULL, &status, NULL);
	ck_assert_int_eq(status, 404);
	ck_assert_ptr_nonnull(strstr(body, "/metrics"));
	free(body);
	body = xdt_admin(d, "GET", "/reload", NULL, &status, NULL);
	ck_assert_int_eq(status, 405);
	free(body);
	body = xdt_admin(d, "DELETE", "/metrics", NULL, &status, NULL);
	ck_assert_int_eq(status, 405);
	free(body);
	/* HEAD: the headers of GET, no body */
	body = xdt_admin(d, "HEAD", "/healthz", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(body, "");
	free(body);
	stop(d);
	free(dir);
}
END_TEST

/* What a raw socket sent to the admin port gets back, up to close. */
static char *raw_exchange(int port, const char *data, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char *out = NULL, buf[4096];
	size_t olen = 0;
	ssize_t n;
	FILE *o;
	struct timeval tv = {.tv_sec = 5};

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ck_assert(send(fd, data, len, MSG_NOSIGNAL) == (ssize_t)len);
	o = open_memstream(&out, &olen);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		fwrite(buf, 1, (size_t)n, o);
	fclose(o);
	close(fd);
	return out;
}

/* "Expect: 100-continue" (curl sends it with bodies over 1 KiB): the
 * go-ahead comes before the body is sent, then the answer. */
START_TEST(expect_continue_answered)
{
	static const char head[] = "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
				   "Content-Type: application/json\r\n"
				   "expect: 100-Continue\r\nContent-Length: 2\r\n"
				   "Connection: close\r\n\r\n";
	char *dir = xdtest_snapdir();
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct timeval tv = {.tv_sec = 5};
	struct xdt_daemon *d;
	char buf[4096];
	ssize_t n;
	size_t got = 0;
	int fd;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	d = start(dir);
	sa.sin_port = htons((uint16_t)d->admin_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ck_assert(send(fd, head, strlen(head), MSG_NOSIGNAL) == (ssize_t)strlen(head));
	/* the body is not sent yet: only the go-ahead can come */
	while (got < 25 && (n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	ck_assert_msg(strcmp(buf, "HTTP/1.1 100 Continue\r\n\r\n") == 0,
		      "before the body: '%s'", buf);
	ck_assert(send(fd, "{}", 2, MSG_NOSIGNAL) == 2);
	got = 0;
	while ((n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "the answer: '%.300s'", buf);
	close(fd);
	stop(d);
	free(dir);
}
END_TEST

START_TEST(bad_requests)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	char *out, *big;
	int status;
	size_t n;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	d = start(dir);
	/* garbage: 400, then the connection closes */
	out = raw_exchange(d->admin_port, "\x16\x03\x01 hello\r\n\r\n", 12);
	ck_assert_msg(strncmp(out, "HTTP/1.1 400 ", 13) == 0, "garbage: '%.300s'", out);
	free(out);
	/* a head over 16 KiB: 431 */
	n = 20000;
	big = malloc(n + 64);
	strcpy(big, "GET /healthz HTTP/1.1\r\nX-Pad: ");
	memset(big + strlen(big), 'a', n);
	strcpy(big + 30 + n, "\r\n\r\n");
	out = raw_exchange(d->admin_port, big, strlen(big));
	ck_assert_msg(strncmp(out, "HTTP/1.1 431 ", 13) == 0, "big head: '%.300s'", out);
	free(out);
	free(big);
	/* a body over the bound: 413 */
	out = raw_exchange(d->admin_port,
			   "POST /reload HTTP/1.1\r\nContent-Length: 100000\r\n\r\n",
			   strlen("POST /reload HTTP/1.1\r\nContent-Length: 100000\r\n\r\n"));
	ck_assert_msg(strncmp(out, "HTTP/1.1 413 ", 13) == 0, "big body: '%.300s'", out);
	free(out);
	/* two requests on one connection (keep-alive, pipelined): two
	 * answers in order */
	out = raw_exchange(d->admin_port,
			   "GET /healthz HTTP/1.1\r\n\r\nGET /ready HTTP/1.1\r\nConnection: close\r\n\r\n",
			   strlen("GET /healthz HTTP/1.1\r\n\r\nGET /ready HTTP/1.1\r\nConnection: close\r\n\r\n"));
	ck_assert_msg(strstr(out, "\r\n\r\nok\n") != NULL && strstr(out, "\r\n\r\nready\n") != NULL &&
			      strstr(out, "ok\n") < strstr(out, "ready\n"),
		      "pipelined: '%.600s'", out);
	free(out);
	/* and the daemon is still fine */
	free(xdt_admin(d, "GET", "/healthz", NULL, &status, NULL));
	ck_assert_int_eq(status, 200);
	stop(d);
	free(dir);
}
END_TEST

START_TEST(clients_show_acks_and_nacks)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdt_node ok, bad;
	json_t *doc, *c, *t, *nack;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	d = start(dir);
	client_open(&ok, d->target, "ack-1", false);
	client_open(&bad, d->target, "nack-1", true);
	wait_states(d, 1, 1);

	doc = get_json(d, "/clients", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "count")), 2);
	c = client_of(doc, "ack-1");
	ck_assert_str_eq(xdt_json_str(c, "state"), "synced");
	ck_assert_str_eq(xdt_json_str(c, "method"), "ADS");
	ck_assert_str_eq(xdt_json_str(c, "mode"), "sotw");
	ck_assert_str_eq(xdt_json_str(c, "snapshot"), "default");
	ck_assert_ptr_nonnull(strstr(xdt_json_str(c, "peer"), "127.0.0.1:"));
	ck_assert_str_eq(xdt_json_str(json_object_get(c, "node"), "cluster"), "edge");
	ck_assert_str_eq(xdt_json_str(json_object_get(json_object_get(c, "node"), "locality"), "zone"),
			 "eu-west-1a");
	ck_assert_str_eq(xdt_json_str(json_object_get(json_object_get(c, "node"), "user_agent"), "version"),
			 "1.2.3");
	t = type_of(c, "clusters");
	ck_assert(json_is_true(json_object_get(t, "wildcard")));
	ck_assert_str_eq(xdt_json_str(t, "acked_version"), xdt_json_str(t, "current_version"));
	t = type_of(c, "endpoints");
	ck_assert_int_eq(json_integer_value(json_object_get(t, "names")), 1);
	ck_assert_str_eq(xdt_json_str(t, "state"), "synced");
	ck_assert(json_is_null(json_object_get(t, "last_nack")));

	c = client_of(doc, "nack-1");
	ck_assert_str_eq(xdt_json_str(c, "state"), "nacked");
	t = type_of(c, "endpoints");
	ck_assert_str_eq(xdt_json_str(t, "state"), "nacked");
	ck_assert_int_eq(json_integer_value(json_object_get(t, "nacks")), 1);
	ck_assert(json_is_null(json_object_get(t, "acked_version")));
	nack = json_object_get(t, "last_nack");
	ck_assert_str_eq(xdt_json_str(nack, "message"), NACK_TEXT);
	ck_assert_int_eq(strlen(xdt_json_str(nack, "at")), 24);
	ck_assert_str_eq(xdt_json_str(type_of(c, "clusters"), "state"), "synced");
	json_decref(doc);

	/* filters */
	doc = get_json(d, "/clients?state=nacked", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "count")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "streams")), 2);
	client_of(doc, "nack-1");
	json_decref(doc);
	doc = get_json(d, "/clients?node=ack-%2A", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "count")), 1);
	client_of(doc, "ack-1");
	json_decref(doc);
	{
		int status;
		char *body = xdt_admin(d, "GET", "/clients?state=sad", NULL,
				       &status, NULL);

		ck_assert_int_eq(status, 400);
		ck_assert_ptr_nonnull(strstr(body, "synced, pending or nacked"));
		free(body);
	}
	xdt_node_close(&ok);
	xdt_node_close(&bad);
	stop(d);
	free(dir);
}
END_TEST

START_TEST(metrics_parse_and_count)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdt_node ok, bad;
	char *m, *v1;
	int status;
	double before;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	d = start(dir);
	client_open(&ok, d->target, "ack-1", false);
	client_open(&bad, d->target, "nack-1", true);
	wait_states(d, 1, 1);

	m = parsed_metrics(d);
	has_line(m, "xdsd_streams{method=\"ADS\",mode=\"sotw\"} 2");
	has_line(m, "xdsd_streams{method=\"CDS\",mode=\"delta\"} 0");
	has_line(m, "xdsd_nacks_total{type=\"endpoints\"} 1");
	has_line(m, "xdsd_acks_total{type=\"endpoints\"} 1");
	has_line(m, "xdsd_acks_total{type=\"clusters\"} 2");
	has_line(m, "xdsd_responses_total{type=\"endpoints\"} 2");
	has_line(m, "xdsd_subscriptions{state=\"nacked\",type=\"endpoints\"} 1");
	has_line(m, "xdsd_subscriptions{state=\"synced\",type=\"endpoints\"} 1");
	has_line(m, "xdsd_snapshot_resources{snapshot=\"default\",type=\"clusters\"} 1");
	has_line(m, "xdsd_snapshot_resources{snapshot=\"default\",type=\"secrets\"} 1");
	has_line(m, "xdsd_reloads_total{result=\"ok\"} 0");
	has_line(m, "xdsd_last_reload_successful 1");
	ck_assert(sample_value(m, "process_resident_memory_bytes") > 1e6);
	ck_assert(sample_value(m, "process_open_fds") >= 3);
	ck_assert(sample_value(m, "process_start_time_seconds") > 1.7e9);
	ck_assert(strstr(m, "\nxdsd_snapshot_info{snapshot=\"default\",version=\"") != NULL);
	before = sample_value(m, "xdsd_convergence_seconds_count{type=\"endpoints\"}");
	ck_assert(before == 0); /* first syncs do not count */
	free(m);

	/* a change: the ACKing client's ACK of it is a convergence time */
	xdtest_write_svc_snapshot(dir, 9090, TOKEN_SECRET);
	free(xdt_admin(d, "POST", "/reload", NULL, &status, NULL));
	ck_assert_int_eq(status, 200);
	xdt_node_answer(&ok, EDS_URL, &v1);
	xdt_node_answer(&bad, EDS_URL, NULL);
	/* the ACK and the NACK are read by xdsd after we sent them, in
	 * either order: look until both are */
	for (int i = 0; i < 100; i++) {
		m = parsed_metrics(d);
		if (sample_value(m, "xdsd_acks_total{type=\"endpoints\"}") == 2 &&
		    sample_value(m, "xdsd_nacks_total{type=\"endpoints\"}") == 2)
			break;
		free(m);
		m = NULL;
		xdtest_sleep_ms(50);
	}
	ck_assert_ptr_nonnull(m);
	has_line(m, "xdsd_convergence_seconds_count{type=\"endpoints\"} 1");
	has_line(m, "xdsd_convergence_seconds_bucket{le=\"+Inf\",type=\"endpoints\"} 1");
	has_line(m, "xdsd_nacks_total{type=\"endpoints\"} 2");
	has_line(m, "xdsd_reloads_total{result=\"ok\"} 1");
	has_line(m, "xdsd_reload_duration_seconds_count 1");
	ck_assert(sample_value(m, "xdsd_convergence_seconds_sum{type=\"endpoints\"}") < 10);
	free(m);
	free(v1);
	xdt_node_close(&ok);
	xdt_node_close(&bad);
	stop(d);
	free(dir);
}
END_TEST

/* With the cluster "svc": the endpoints of "hidden", served to no
 * client of these tests ("@allow" names an identity none proves). */
#define HIDDEN_ENDPOINTS \
	"- cluster_name: hidden\n" \
	"  \"@allow\": [\"spiffe://example.org/ns/prod/*\"]\n"

/* The missing names /clients shows of node `id`'s endpoints, as
 * "name:ERROR,..." (its "missing" count first). */
static char *missing_of(struct xdt_daemon *d, const char *id)
{
	json_t *doc = get_json(d, "/clients", 200);
	json_t *t = type_of(client_of(doc, id), "endpoints");
	json_t *names = json_object_get(t, "missing_names"), *m;
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);

	fprintf(f, "%lld", (long long)json_integer_value(json_object_get(t, "missing")));
	json_array_foreach(names, i, m)
		fprintf(f, "%s%s:%s", i == 0 ? " " : ",", xdt_json_str(m, "name"),
			xdt_json_str(m, "error"));
	fclose(f);
	json_decref(doc);
	return out;
}

/* rules N1, N2: the names a client asks for and is told it cannot have
 * are in /clients, each with the error it was told, and counted in
 * xdsd_requested_missing by type and reason, until a reload gives
 * them. */
START_TEST(clients_and_metrics_show_missing)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdt_node lost, denied;
	struct xdt_node_opts lo = {.id = "lost-1", .endpoints = "nope"};
	struct xdt_node_opts dn = {.id = "denied-1", .endpoints = "hidden"};
	char *m, *got;
	int status;

	xdtest_write_svc_snapshot(dir, 8080, HIDDEN_ENDPOINTS);
	d = start(dir);
	/* each is answered (with its error) and answers: open returns */
	xdt_node_open(&lost, d->target, &lo);
	xdt_node_open(&denied, d->target, &dn);
	wait_states(d, 2, 0);
	got = missing_of(d, "lost-1");
	ck_assert_str_eq(got, "1 nope:NOT_FOUND");
	free(got);
	got = missing_of(d, "denied-1");
	ck_assert_str_eq(got, "1 hidden:PERMISSION_DENIED");
	free(got);
	m = parsed_metrics(d);
	has_line(m, "xdsd_requested_missing{reason=\"not_found\",type=\"endpoints\"} 1");
	has_line(m, "xdsd_requested_missing{reason=\"permission_denied\",type=\"endpoints\"} 1");
	has_line(m, "xdsd_requested_missing{reason=\"not_found\",type=\"clusters\"} 0");
	free(m);

	/* a reload that adds "nope" sends it: nothing is missing for lost-1 */
	xdtest_write_svc_snapshot(dir, 8080,
				  HIDDEN_ENDPOINTS "- cluster_name: nope\n");
	free(xdt_admin(d, "POST", "/reload", NULL, &status, NULL));
	ck_assert_int_eq(status, 200);
	xdt_node_answer(&lost, EDS_URL, NULL);
	got = missing_of(d, "lost-1");
	ck_assert_str_eq(got, "0");
	free(got);
	m = parsed_metrics(d);
	has_line(m, "xdsd_requested_missing{reason=\"not_found\",type=\"endpoints\"} 0");
	has_line(m, "xdsd_requested_missing{reason=\"permission_denied\",type=\"endpoints\"} 1");
	free(m);
	xdt_node_close(&lost);
	xdt_node_close(&denied);
	stop(d);
	free(dir);
}
END_TEST

/* A client that does not ACK (docs/engine.md, "Staleness"): /clients
 * dates its response and ages it, /metrics has the oldest such age, the
 * ack_timeout warning names it once, and its ACK at last is timed. */
START_TEST(unanswered_responses_age_and_time_out)
{
	char *dir = xdtest_snapdir(), cfg[1024], *m, *log, *page;
	struct xdt_node ok, slow;
	struct xdt_node_opts so = {.id = "slow-1", .endpoints = "svc",
				   .hold_endpoints = true};
	struct xdt_daemon *d;
	json_t *doc, *t;
	long long sent_after, since;
	double age1, age2;
	int status;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nack_timeout: 1s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	client_open(&ok, d->target, "ack-1", false);
	sent_after = xd_wall_ms();
	xdt_node_open(&slow, d->target, &so);
	wait_states(d, 1, 0);

	doc = get_json(d, "/clients", 200);
	t = type_of(client_of(doc, "slow-1"), "endpoints");
	ck_assert_str_eq(xdt_json_str(t, "state"), "pending");
	ck_assert(json_is_true(json_object_get(t, "in_flight")));
	ck_assert(json_is_integer(json_object_get(t, "pending_since")));
	since = json_integer_value(json_object_get(t, "pending_since"));
	ck_assert_msg(since >= sent_after - 5 && since <= xd_wall_ms() + 5,
		      "pending_since %lld, sent after %lld", since, sent_after);
	age1 = json_number_value(json_object_get(t, "pending_seconds"));
	ck_assert(age1 >= 0 && age1 < 5);
	/* answered types wait for nothing */
	t = type_of(client_of(doc, "slow-1"), "clusters");
	ck_assert(json_is_null(json_object_get(t, "pending_since")));
	ck_assert(json_number_value(json_object_get(t, "pending_seconds")) == 0);
	t = type_of(client_of(doc, "ack-1"), "endpoints");
	ck_assert(json_is_null(json_object_get(t, "pending_since")));
	json_decref(doc);

	/* the timeout: one warning naming the node, type and version */
	ck_assert(xdt_daemon_wait_log(d, "(ack_timeout)", WAIT_MS));
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "node 'slow-1': EDS version ") != NULL, "%s", log);
	ck_assert_ptr_null(strstr(log, "node 'ack-1': EDS version "));
	free(log);

	/* the age grows; the filter finds it, and not the synced client */
	doc = get_json(d, "/clients?pending=1s", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "count")), 1);
	t = type_of(client_of(doc, "slow-1"), "endpoints");
	age2 = json_number_value(json_object_get(t, "pending_seconds"));
	ck_assert_msg(age2 >= 1 && age2 > age1, "ages %g then %g", age1, age2);
	ck_assert_int_eq(json_integer_value(json_object_get(t, "pending_since")), since);
	json_decref(doc);
	doc = get_json(d, "/clients?pending=1h", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "count")), 0);
	json_decref(doc);
	free(xdt_admin(d, "GET", "/clients?pending=soon", NULL, &status, NULL));
	ck_assert_int_eq(status, 400);

	m = parsed_metrics(d);
	ck_assert(sample_value(m, "xdsd_oldest_unacked_seconds") >= 1);
	has_line(m, "xdsd_ack_timeouts_total{type=\"endpoints\"} 1");
	has_line(m, "xdsd_ack_timeouts_total{type=\"clusters\"} 0");
	/* ack-1 answered clusters and endpoints, slow-1 clusters only */
	has_line(m, "xdsd_ack_delay_seconds_count{type=\"endpoints\"} 1");
	has_line(m, "xdsd_ack_delay_seconds_count{type=\"clusters\"} 2");
	free(m);

	doc = get_json(d, "/status.json", 200);
	ck_assert(json_number_value(json_object_get(json_object_get(doc, "clients"),
						    "oldest_pending_seconds")) >= 1);
	json_decref(doc);
	/* the status page shows its age next to pending */
	page = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_msg(strstr(page, "EDS <small class=age title=\"waiting for its ACK\">") != NULL,
		      "%s", page);
	free(page);

	/* it answers at last: nothing waits, its delay is counted */
	xdt_node_release(&slow);
	wait_states(d, 2, 0);
	m = parsed_metrics(d);
	has_line(m, "xdsd_oldest_unacked_seconds 0");
	has_line(m, "xdsd_ack_delay_seconds_count{type=\"endpoints\"} 2");
	ck_assert(sample_value(m, "xdsd_ack_delay_seconds_sum{type=\"endpoints\"}") >= 1);
	has_line(m, "xdsd_ack_timeouts_total{type=\"endpoints\"} 1");
	free(m);
	doc = get_json(d, "/status.json", 200);
	ck_assert(json_number_value(json_object_get(json_object_get(doc, "clients"),
						    "oldest_pending_seconds")) == 0);
	json_decref(doc);
	doc = get_json(d, "/clients?pending=0", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "count")), 0);
	json_decref(doc);
	/* once per response: no second warning */
	log = xdt_daemon_log(d);
	ck_assert_ptr_eq(strstr(strstr(log, "(ack_timeout)") + 1, "(ack_timeout)"), NULL);
	free(log);

	xdt_node_close(&ok);
	xdt_node_close(&slow);
	stop(d);
	free(dir);
}
END_TEST

START_TEST(config_dump)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	json_t *doc, *types, *res;
	int status;
	char *body;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	xdtest_write_clusters(dir, "other.yaml", "o", 2);
	d = start(dir);
	/* two snapshots: which one must be said */
	body = xdt_admin(d, "GET", "/config_dump", NULL, &status, NULL);
	ck_assert_int_eq(status, 400);
	ck_assert_ptr_nonnull(strstr(body, "default, other"));
	free(body);
	body = xdt_admin(d, "GET", "/config_dump?snapshot=nope", NULL, &status, NULL);
	ck_assert_int_eq(status, 404);
	free(body);

	doc = get_json(d, "/config_dump?snapshot=default", 200);
	ck_assert_str_eq(xdt_json_str(doc, "snapshot"), "default");
	ck_assert_int_eq(strlen(xdt_json_str(doc, "version")), 16);
	types = json_object_get(doc, "types");
	ck_assert_int_eq(json_array_size(types), 3); /* secrets, clusters, endpoints */
	json_decref(doc);

	doc = get_json(d, "/config_dump?snapshot=default&type=endpoints&name=svc", 200);
	types = json_object_get(doc, "types");
	ck_assert_int_eq(json_array_size(types), 1);
	res = json_array_get(json_object_get(json_array_get(types, 0), "resources"), 0);
	ck_assert_str_eq(xdt_json_str(res, "name"), "svc");
	ck_assert_int_eq(strlen(xdt_json_str(res, "version")), 16);
	ck_assert_ptr_nonnull(strstr(xdt_json_str(res, "file"), "default.yaml"));
	ck_assert_int_eq(json_integer_value(json_object_get(res, "line")), 7);
	res = json_object_get(res, "resource");
	ck_assert_str_eq(xdt_json_str(res, "@type"), EDS_URL);
	ck_assert_str_eq(xdt_json_str(res, "cluster_name"), "svc");
	body = json_dumps(res, 0);
	ck_assert_ptr_nonnull(strstr(body, "\"port_value\": 8080"));
	free(body);
	json_decref(doc);

	/* a secret's content does not leave */
	body = xdt_admin(d, "GET", "/config_dump?snapshot=default&type=secrets", NULL,
			 &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_ptr_nonnull(strstr(body, "\"token\""));
	ck_assert_ptr_null(strstr(body, "hunter2"));
	free(body);

	body = xdt_admin(d, "GET", "/config_dump?snapshot=default&type=endpoints&name=nope",
			 NULL, &status, NULL);
	ck_assert_int_eq(status, 404);
	free(body);
	body = xdt_admin(d, "GET", "/config_dump?snapshot=default&type=bogus", NULL,
			 &status, NULL);
	ck_assert_int_eq(status, 400);
	free(body);
	stop(d);
	free(dir);
}
END_TEST

/* Snapshot keys are what a file or an etcd key is named: control
 * characters, C1 controls and bytes that are not UTF-8 in them (and in
 * the key asked for) reach the text answers escaped, as in the log. */
START_TEST(config_dump_escapes_keys)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	int status;
	char *body;

	xdtest_write_clusters(dir, "ev\x1b]0;pwned\x07il.yaml", "e", 1);
	xdtest_write_clusters(dir, "caf\xff\xc2\x9b.yaml", "c", 1);
	d = start(dir);
	body = xdt_admin(d, "GET", "/config_dump", NULL, &status, NULL);
	ck_assert_int_eq(status, 400);
	ck_assert_msg(strstr(body, "one of: caf\\xff\\xc2\\x9b, ev\\x1b]0;pwned\\x07il\n") != NULL,
		      "%s", body);
	ck_assert_ptr_null(strpbrk(body, "\x1b\x07\xff\xc2"));
	free(body);
	body = xdt_admin(d, "GET", "/config_dump?snapshot=%1b%5b2J%ff", NULL, &status, NULL);
	ck_assert_int_eq(status, 404);
	ck_assert_msg(strstr(body, "no snapshot '\\x1b[2J\\xff'; served: caf\\xff\\xc2\\x9b, ev\\x1b]0;pwned\\x07il\n") != NULL,
		      "%s", body);
	ck_assert_ptr_null(strpbrk(body, "\x1b\x07\xff\xc2"));
	free(body);
	body = xdt_admin(d, "GET", "/config_dump?snapshot=caf%ff%c2%9b&type=clusters&name=%07",
			 NULL, &status, NULL);
	ck_assert_int_eq(status, 404);
	ck_assert_msg(strstr(body, "has no cluster named '\\x07'") != NULL, "%s", body);
	ck_assert_ptr_null(strpbrk(body, "\x1b\x07\xff\xc2"));
	free(body);
	stop(d);
	free(dir);
}
END_TEST

/* An xdstp name is found by any spelling of it, as clients subscribe
 * (rule X1): the query's parameters in another order, the scheme in
 * capitals, a character percent-encoded. */
START_TEST(config_dump_xdstp_any_spelling)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	json_t *doc, *res;
	int status;
	char *body;

	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n"
			       "- name: xdstp://cp.example/envoy.config.cluster.v3.Cluster/c1?a=1&b=2\n"
			       "  connect_timeout: 1s\n"
			       "cluster_collections:\n"
			       "- \"@name\": xdstp://cp.example/envoy.config.cluster.v3.ClusterCollection/all?z=1\n"
			       "  entries: {locator: 'xdstp://cp.example/envoy.config.cluster.v3.Cluster/c1?b=2&a=1'}\n"));
	d = start(dir);
	/* XDSTP://cp.example/envoy.config.cluster.v3.Cluster/%631?b=2&a=1 */
	doc = get_json(d, "/config_dump?type=clusters&name="
			  "XDSTP://cp.example/envoy.config.cluster.v3.Cluster/%25631%3Fb%3D2%26a%3D1",
		       200);
	res = json_array_get(json_object_get(json_array_get(json_object_get(doc, "types"), 0),
					     "resources"), 0);
	ck_assert_str_eq(xdt_json_str(res, "name"),
			 "xdstp://cp.example/envoy.config.cluster.v3.Cluster/c1?a=1&b=2");
	json_decref(doc);
	/* other parameters name another resource; a malformed name none */
	body = xdt_admin(d, "GET", "/config_dump?type=clusters&name="
			 "xdstp://cp.example/envoy.config.cluster.v3.Cluster/c1%3Fa%3D1",
			 NULL, &status, NULL);
	ck_assert_int_eq(status, 404);
	free(body);
	body = xdt_admin(d, "GET", "/config_dump?type=clusters&name=xdstp://cp.example",
			 NULL, &status, NULL);
	ck_assert_int_eq(status, 404);
	free(body);
	/* a list collection (rule X3), its locator shown as the message */
	doc = get_json(d, "/config_dump?type=cluster_collections&name="
			  "xdstp://cp.example/envoy.config.cluster.v3.ClusterCollection/all%3Fz%3D%31",
		       200);
	res = json_array_get(json_object_get(json_array_get(json_object_get(doc, "types"), 0),
					     "resources"), 0);
	ck_assert_str_eq(xdt_json_str(res, "name"),
			 "xdstp://cp.example/envoy.config.cluster.v3.ClusterCollection/all?z=1");
	body = json_dumps(json_object_get(res, "resource"), JSON_COMPACT);
	ck_assert_msg(strstr(body, "\"resource_type\":\"envoy.config.cluster.v3.Cluster\"") != NULL &&
			      strstr(body, "\"params\":{\"a\":\"1\",\"b\":\"2\"}") != NULL,
		      "%s", body);
	free(body);
	json_decref(doc);
	body = xdt_admin(d, "GET", "/config_dump?type=nope", NULL, &status, NULL);
	ck_assert_int_eq(status, 400);
	ck_assert_ptr_nonnull(strstr(body, "listener_collections, cluster_collections"));
	free(body);
	stop(d);
	free(dir);
}
END_TEST

START_TEST(reload_reports_errors)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	json_t *doc;
	json_error_t err;
	int status;
	char *body;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	d = start(dir);
	body = xdt_admin(d, "POST", "/reload", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	doc = json_loads(body, 0, &err);
	ck_assert_ptr_nonnull(doc);
	ck_assert(json_is_true(json_object_get(doc, "ok")));
	ck_assert_str_eq(xdt_json_str(doc, "trigger"), "admin");
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "changed")), 0);
	json_decref(doc);
	free(body);

	/* a dangling reference on line 2: refused with file:line, the old
	 * snapshot still served */
	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n- {name: a, type: EDS, connect_timeout: 1s, eds_cluster_config: {eds_config: {ads: {}}}}\n"
			       "bogus_section: []\n"));
	body = xdt_admin(d, "POST", "/reload", NULL, &status, NULL);
	ck_assert_int_eq(status, 422);
	doc = json_loads(body, 0, &err);
	ck_assert_ptr_nonnull(doc);
	ck_assert(json_is_false(json_object_get(doc, "ok")));
	ck_assert(json_integer_value(json_object_get(doc, "error_count")) >= 1);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(json_object_get(doc, "errors"), 0)),
				     "default.yaml:"));
	json_decref(doc);
	free(body);
	body = xdt_admin(d, "GET", "/config_dump?snapshot=default&type=endpoints&name=svc",
			 NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	free(body);
	ck_assert(xdt_daemon_wait_log(d, "admin: reload asked by 127.0.0.1:", WAIT_MS));
	stop(d);
	free(dir);
}
END_TEST

START_TEST(admin_off_and_unix_socket)
{
	char *dir = xdtest_snapdir(), cfg[1024], *sock, *body;
	struct xdt_daemon *d;
	struct xd_http_response r;
	char why[256], target[1200];
	struct xd_http_request q = {.target = target, .method = "GET",
				    .path = "/ready", .timeout_ms = 5000};

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\nadmin_listen: off\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert_int_eq(d->admin_port, 0);
	body = xdt_daemon_log(d);
	ck_assert_ptr_null(strstr(body, "admin endpoint"));
	free(body);
	stop(d);

	ck_assert(asprintf(&sock, "%s/admin.sock", dir) > 0);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\nadmin_listen: unix:%s\n",
		 dir, sock);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	snprintf(target, sizeof(target), "unix:%s", sock);
	ck_assert_msg(xd_http_fetch(&q, &r, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(r.status, 200);
	xd_http_response_free(&r);
	stop(d);
	ck_assert(access(sock, F_OK) != 0); /* removed on exit */
	free(sock);
	free(dir);
}
END_TEST

START_TEST(admin_port_in_use_is_an_error)
{
	char *dir = xdtest_snapdir(), cfg[1024], *log;
	struct xdt_daemon *a, *b;

	xdtest_write_svc_snapshot(dir, 8080, TOKEN_SECRET);
	a = start(dir);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\nadmin_listen: 127.0.0.1:%d\n",
		 dir, a->admin_port);
	b = xdt_daemon_spawn(cfg, NULL);
	ck_assert(xdt_daemon_wait(b, START_MS));
	ck_assert_int_eq(b->exit_status, 1);
	log = xdt_daemon_log(b);
	ck_assert_msg(strstr(log, "admin endpoint: cannot listen on 127.0.0.1:") != NULL &&
			      strstr(log, "address already in use") != NULL,
		      "%s", log);
	free(log);
	xdt_daemon_free(b);
	stop(a);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("admin");
	TCase *tc = tcase_create("admin");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, health_and_ready);
	tcase_add_test(tc, unknown_paths_and_methods);
	tcase_add_test(tc, bad_requests);
	tcase_add_test(tc, expect_continue_answered);
	tcase_add_test(tc, clients_show_acks_and_nacks);
	tcase_add_test(tc, metrics_parse_and_count);
	tcase_add_test(tc, clients_and_metrics_show_missing);
	tcase_add_test(tc, unanswered_responses_age_and_time_out);
	tcase_add_test(tc, config_dump);
	tcase_add_test(tc, config_dump_escapes_keys);
	tcase_add_test(tc, config_dump_xdstp_any_spelling);
	tcase_add_test(tc, reload_reports_errors);
	tcase_add_test(tc, admin_off_and_unix_socket);
	tcase_add_test(tc, admin_port_in_use_is_an_error);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
