/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC's health service on the xDS listener, end to end: the real
 * daemon reading a real etcd (Debian's etcd-server), a gRPC health
 * client on gRPC's Python bindings (tests/e2e/health-client.py, the
 * messages of the staged health.proto), Debian's haproxy checking with
 * the README's tcp-check lines, and xdsctl status: NOT_SERVING and exit
 * status 4 before the first load, SERVING and 0 after it, still SERVING
 * and 1 while etcd is away, NOT_SERVING told to a Watch when xdsd
 * stops; names not served; the connection limits and TLS that hold for
 * every other call.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "balancer.h"
#include "ctl.h"
#include "daemon.h"
#include "etcd.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
/* covers a reconnect after the etcd source's longest backoff on a
 * loaded machine */
#define SERVED_MS 30000
#define PREFIX "/xdsd/snapshots/"
#define ADS "envoy.service.discovery.v3.AggregatedDiscoveryService"
#define CDS "envoy.service.cluster.v3.ClusterDiscoveryService"

/* ---------------- the health client ---------------- */

/* health-client.py TARGET check SERVICE `extra`: its JSON answer. */
static json_t *check_with(const char *target, const char *service,
			  const char *extra)
{
	char *cmd, *out;
	json_error_t err;
	json_t *j;
	int rc;

	ck_assert(asprintf(&cmd, "'%s' '%s/tests/e2e/health-client.py' '%s' check '%s' %s",
			   xdtest_env("PYTHON3"), xdtest_env("XDSD_SRCDIR"), target,
			   service, extra) > 0);
	out = xdtest_command_output(cmd, &rc);
	ck_assert_msg(rc == 0, "%s: exit status %d: %s", cmd, rc, out);
	j = json_loads(out, 0, &err);
	ck_assert_msg(j != NULL, "%s: not JSON (%s): %s", cmd, err.text, out);
	free(out);
	free(cmd);
	return j;
}

/* A Check of `service`: "SERVING", "NOT_SERVING", or the call's status
 * code when it failed ("NOT_FOUND"); in *details its message, when
 * asked (malloc'd). */
static char *check(const char *target, const char *service, char **details)
{
	json_t *j = check_with(target, service, "");
	const char *code = xdt_json_str(j, "code");
	json_t *st = json_object_get(j, "status");
	char *out = strdup(strcmp(code, "OK") == 0 && json_is_string(st) ?
				   json_string_value(st) : code);

	if (details != NULL)
		*details = strdup(xdt_json_str(j, "details"));
	json_decref(j);
	return out;
}

static void check_is(const char *target, const char *service, const char *want)
{
	char *got = check(target, service, NULL);

	ck_assert_msg(strcmp(got, want) == 0, "Check '%s': %s, not %s", service,
		      got, want);
	free(got);
}

/* A Watch on its own connection, its responses a line each in a file. */
struct watch {
	pid_t pid;
	int in; /* its stdin: closed, it cancels the call */
	char *out;
};

static struct watch *watch_start(const char *target, const char *service)
{
	struct watch *w = calloc(1, sizeof(*w));
	char script[512];
	int fds[2];

	ck_assert(w != NULL && pipe(fds) == 0);
	snprintf(script, sizeof(script), "%s/tests/e2e/health-client.py",
		 xdtest_env("XDSD_SRCDIR"));
	ck_assert(asprintf(&w->out, "%s/watch.%d.XXXXXX", xdtest_tmpdir(),
			   (int)getpid()) > 0);
	close(mkstemp(w->out));
	w->pid = fork();
	ck_assert(w->pid >= 0);
	if (w->pid == 0) {
		int fd = open(w->out, O_WRONLY | O_TRUNC);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fds[0], 0) < 0)
			_exit(126);
		close(fds[1]);
		execl(xdtest_env("PYTHON3"), xdtest_env("PYTHON3"), script, target,
		      "watch", service, "--deadline", "120", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	w->in = fds[1];
	return w;
}

/* Its lines so far. */
static int watch_lines(const struct watch *w, char **text)
{
	char *t = xdtest_read_file(w->out, NULL);
	int n = 0;

	ck_assert(t != NULL);
	for (const char *p = t; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	*text = t;
	return n;
}

/* Waits until it has printed `n` lines, the last holding `want`. */
static void watch_until(const struct watch *w, int n, const char *want)
{
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		char *text, *last;
		int got = watch_lines(w, &text);

		if (got >= n) {
			last = text;
			for (int i = 1; i < n; i++)
				last = strchr(last, '\n') + 1;
			ck_assert_msg(strncmp(last, want, strlen(want)) == 0,
				      "watch line %d is not %s: %s", n, want, text);
			free(text);
			return;
		}
		ck_assert_msg(xdtest_now_ms() < end, "the watch printed %d lines, not %d: %s",
			      got, n, text);
		free(text);
		xdtest_sleep_ms(50);
	}
}

/* Ends it (if it is not over) and frees it. */
static void watch_end(struct watch *w)
{
	int status;

	close(w->in);
	for (long long end = xdtest_now_ms() + STOP_MS;
	     waitpid(w->pid, &status, WNOHANG) == 0;) {
		if (xdtest_now_ms() > end) {
			kill(w->pid, SIGKILL);
			waitpid(w->pid, &status, 0);
			break;
		}
		xdtest_sleep_ms(20);
	}
	unlink(w->out);
	free(w->out);
	free(w);
}

#define SERVING_LINE "{\"status\": \"SERVING\"}"
#define NOT_SERVING_LINE "{\"status\": \"NOT_SERVING\"}"

/* ---------------- the daemon and etcd ---------------- */

static struct xdt_daemon *start_on(const struct xdt_etcd *e, const char *more)
{
	char cfg[4096];

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsource: etcd\nwatch_delay: 100ms\n"
		 "etcd:\n  endpoints: ['%s']\n  dial_timeout: 1s\n%s",
		 e->endpoint, more != NULL ? more : "");
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void put_snapshot(const struct xdt_etcd *e)
{
	ck_assert_int_eq(xdt_etcdctl(e, "put " PREFIX "default.yaml",
				     "clusters:\n- {name: c-0, type: STATIC, connect_timeout: 1s}\n"),
			 0);
}

/* `xdsctl status` of `d`, which must exit `want`; its stderr must say
 * `says` (NULL: anything). */
static void ctl_status_is(const struct xdt_daemon *d, int want, const char *says)
{
	char *admin = xdt_ctl_admin(d);
	struct xdt_run r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});

	xdt_want(&r, want);
	if (says != NULL)
		xdt_has(r.err, says);
	xdt_run_free(&r);
	free(admin);
}

/* /status.json's source.healthy, once it is `want`. */
static void source_healthy(const struct xdt_daemon *d, bool want)
{
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		json_t *j = xdt_status_json(d);
		json_t *h = json_object_get(json_object_get(j, "source"), "healthy");
		bool done = json_is_boolean(h) && json_is_true(h) == want;

		json_decref(j);
		if (done)
			return;
		ck_assert_msg(xdtest_now_ms() < end, "source.healthy never became %d", want);
		xdtest_sleep_ms(100);
	}
}

/*
 * The status follows what is served: NOT_SERVING before the first load
 * (etcd not there, nothing saved), SERVING once it is, and still while
 * etcd is away (the replica serves what it read); a Watch is told each
 * change as it comes and NOT_SERVING when xdsd stops; xdsctl status
 * exits 4, 0, 1 along the way.
 */
START_TEST(status_follows_what_is_served)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *d = start_on(e, NULL);
	struct watch *w, *unknown;
	char *details, *got, *text;

	ck_assert(xdt_daemon_wait_log(d, "no snapshots yet, not ready, trying again",
				      SERVED_MS));
	check_is(d->target, "", "NOT_SERVING");
	check_is(d->target, ADS, "NOT_SERVING");
	got = check(d->target, "no.such.Service", &details);
	ck_assert_str_eq(got, "NOT_FOUND");
	ck_assert_str_eq(details, "xdsd serves no such service");
	free(got);
	free(details);
	ctl_status_is(d, 4, "is not serving");
	w = watch_start(d->target, "");
	watch_until(w, 1, NOT_SERVING_LINE);
	unknown = watch_start(d->target, "no.such.Service");
	watch_until(unknown, 1, "{\"status\": \"SERVICE_UNKNOWN\"}");

	xdt_etcd_run(e);
	put_snapshot(e);
	watch_until(w, 2, SERVING_LINE);
	check_is(d->target, "", "SERVING");
	check_is(d->target, CDS, "SERVING");
	ctl_status_is(d, 0, NULL);
	ck_assert(xdt_daemon_wait_log(d, "gRPC health: NOT_SERVING -> SERVING (2 watchers told)", 1));

	/* etcd away: still serving, degraded */
	xdt_etcd_kill(e);
	source_healthy(d, false);
	check_is(d->target, "", "SERVING");
	ctl_status_is(d, 1, "is not watching; it serves what it read last");
	ck_assert_int_eq(watch_lines(w, &text), 2);
	free(text);
	/* the unknown name's watch goes on, told nothing more */
	ck_assert_int_eq(watch_lines(unknown, &text), 1);
	free(text);

	/* stopping: the watch is told before its call is cancelled */
	xdt_daemon_signal(d, SIGTERM);
	watch_until(w, 3, NOT_SERVING_LINE);
	watch_until(w, 4, "{\"code\": \"UNAVAILABLE\"");
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	ck_assert(xdt_daemon_wait_log(d, "gRPC health: SERVING -> NOT_SERVING (stopping; 2 watchers told)", 1));
	watch_end(w);
	watch_end(unknown);
	xdt_daemon_free(d);
	xdt_etcd_free(e);
}
END_TEST

/*
 * haproxy with the README's check: a replica that answers NOT_SERVING
 * is down (though its port accepts connections, which a TCP check would
 * take for up), up once it serves; clients are let through to it then;
 * its checks cost xdsd no warning.
 */
START_TEST(haproxy_marks_the_replica_down_then_up)
{
	struct xdt_etcd *e = xdt_etcd_new();
	/* debug: each answer is a line */
	struct xdt_daemon *d = start_on(e, "log_level: debug\n");
	struct xdt_balancer *b = xdt_balancer_start_health(d->target, 200, NULL, NULL);
	char *log;

	ck_assert_msg(xdt_balancer_wait_log(b, "Server xdsd/xdsd-1 is DOWN", 1, SERVED_MS),
		      "haproxy did not mark it down");
	log = xdt_balancer_log(b);
	xdt_has(log, "TCPCHK did not match content (binary) at step 6 comment: not SERVING");
	free(log);

	xdt_etcd_run(e);
	put_snapshot(e);
	ck_assert_msg(xdt_balancer_wait_log(b, "Server xdsd/xdsd-1 is UP", 1, SERVED_MS),
		      "haproxy did not mark it up");
	check_is(b->target, "", "SERVING");
	/* a few more checks pass, each without a trace above debug */
	ck_assert(xdt_daemon_wait_log_count(d, "health check: SERVING", 5, SERVED_MS));
	log = xdt_balancer_log(b);
	ck_assert_msg(strstr(strstr(log, "is UP"), "is DOWN") == NULL,
		      "down again: %s", log);
	free(log);
	/* from the moment it serves (etcd's absence and emptiness before
	 * are warned of, as they should be) */
	log = xdt_daemon_log(d);
	ck_assert(strstr(log, "gRPC health: NOT_SERVING -> SERVING") != NULL);
	for (const char *p = strstr(log, "gRPC health: NOT_SERVING -> SERVING"), *nl;
	     *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p) - 1;
		ck_assert_msg(memmem(p, (size_t)(nl - p), " warn: ", 7) == NULL &&
				      memmem(p, (size_t)(nl - p), " error: ", 8) == NULL,
			      "the checks cost a warning: %.*s", (int)(nl - p), p);
	}
	free(log);
	xdt_balancer_stop(b);
	xdt_daemon_stop(d, STOP_MS);
	xdt_etcd_free(e);
}
END_TEST

/* The request is read as protobuf reads it: unknown fields skipped, the
 * last of a repeated field counting; bytes that are no
 * HealthCheckRequest (the name as a varint, a truncated field) end the
 * call INVALID_ARGUMENT. */
START_TEST(requests_read_as_protobuf_reads_them)
{
	char *dir = xdtest_clusters_snapdir(1), cfg[1024];
	static const struct {
		const char *hex, *code, *status;
	} cases[] = {
		{"", "OK", "SERVING"},
		{"1005" "0a00", "OK", "SERVING"},      /* field 2 unknown */
		{"0a0178" "0a00", "OK", "SERVING"},    /* "x", then "": the last */
		{"0a00" "0a0178", "NOT_FOUND", NULL},  /* "", then "x" */
		{"0801", "INVALID_ARGUMENT", NULL},    /* the name as a varint */
		{"0a05616263", "INVALID_ARGUMENT", NULL}, /* 5 bytes said, 3 sent */
	};
	struct xdt_daemon *d;

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char raw[64];
		json_t *j;

		snprintf(raw, sizeof(raw), "--raw '%s'", cases[i].hex);
		j = check_with(d->target, "", raw);
		ck_assert_msg(strcmp(xdt_json_str(j, "code"), cases[i].code) == 0,
			      "request %s: %s, not %s", cases[i].hex,
			      xdt_json_str(j, "code"), cases[i].code);
		if (cases[i].status != NULL)
			ck_assert_str_eq(xdt_json_str(j, "status"), cases[i].status);
		json_decref(j);
	}
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

/* Health calls are admitted like every call: one connection per address
 * holds a Watch, and a Check on a second is refused for it. */
START_TEST(limits_hold_for_health_calls)
{
	char *dir = xdtest_clusters_snapdir(1), cfg[1024], *got, *details;
	struct xdt_daemon *d;
	struct watch *w;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nmax_connections_per_address: 1\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	w = watch_start(d->target, "");
	watch_until(w, 1, SERVING_LINE);
	got = check(d->target, "", &details);
	ck_assert_str_eq(got, "RESOURCE_EXHAUSTED");
	xdt_has(details, "max_connections_per_address");
	free(got);
	free(details);
	ck_assert(xdt_daemon_metric(d, "xdsd_streams_refused_total{reason=\"limits\"}") == 1);
	watch_end(w);
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

/*
 * With mutual TLS the listener's TLS is all a health client needs: any
 * certificate the CA signed, whatever `authorize:` lets it claim (here
 * nothing); without one the handshake fails as for every client. And
 * haproxy's check over TLS, as the README gives it, keeps the replica.
 */
START_TEST(tls_is_all_a_health_client_needs)
{
	char *dir = xdtest_clusters_snapdir(1), cfg[4096], tls[1024], *got, *pem, *cmd;
	struct xdt_daemon *d;
	struct xdt_balancer *b;
	json_t *j;
	int rc;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n"
		 "tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n"
		 "authorize:\n  - identity: 'spiffe://example.org/nobody'\n    node_id: 'none'\n",
		 dir, xdtest_cert("server.pem"), xdtest_cert("server.key"),
		 xdtest_cert("ca.pem"));
	d = xdt_daemon_start(cfg, NULL, START_MS);
	snprintf(tls, sizeof(tls), "--tls '%s' '%s' '%s'", xdtest_cert("ca.pem"),
		 xdtest_cert("frontend.pem"), xdtest_cert("frontend.key"));
	j = check_with(d->target, "", tls);
	ck_assert_str_eq(xdt_json_str(j, "code"), "OK");
	ck_assert_str_eq(xdt_json_str(j, "status"), "SERVING");
	json_decref(j);
	snprintf(tls, sizeof(tls), "--tls '%s' - -", xdtest_cert("ca.pem"));
	j = check_with(d->target, "", tls);
	ck_assert_str_eq(xdt_json_str(j, "code"), "UNAVAILABLE");
	json_decref(j);

	/* haproxy wants the certificate and its key in one file */
	ck_assert(asprintf(&pem, "%s/frontend-both.pem", xdtest_tmpdir()) > 0);
	ck_assert(asprintf(&cmd, "cat '%s' '%s' > '%s'", xdtest_cert("frontend.pem"),
			   xdtest_cert("frontend.key"), pem) > 0);
	rc = system(cmd);
	ck_assert_int_eq(rc, 0);
	b = xdt_balancer_start_health(d->target, 200, xdtest_cert("ca.pem"), pem);
	ck_assert(xdt_daemon_wait_log_count(d, "health check: SERVING", 4, SERVED_MS));
	got = xdt_balancer_log(b);
	ck_assert_msg(strstr(got, "is DOWN") == NULL, "haproxy: %s", got);
	free(got);
	xdt_balancer_stop(b);
	xdt_daemon_stop(d, STOP_MS);
	free(cmd);
	free(pem);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("health");
	TCase *tc = tcase_create("health");

	xdtest_make_certs();
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, status_follows_what_is_served);
	tcase_add_test(tc, haproxy_marks_the_replica_down_then_up);
	tcase_add_test(tc, requests_read_as_protobuf_reads_them);
	tcase_add_test(tc, limits_hold_for_health_calls);
	tcase_add_test(tc, tls_is_all_a_health_client_needs);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
