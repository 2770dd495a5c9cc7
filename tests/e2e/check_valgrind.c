/* SPDX-License-Identifier: Apache-2.0 */
/*
 * No leaks and no memory errors over a daemon's whole life under
 * valgrind: start, streams on several connections, an unknown method, a
 * client half-close, a cancelled stream, client status (CSDS) calls
 * answered, refused and left open, gRPC health checks answered and
 * refused and a health watch told of the stop, the admin endpoint's
 * /status and /status.json, then SIGTERM with live streams; and REST-JSON polls
 * answered, refused, held until a reload, cut by their client and left
 * waiting at SIGTERM; admin pages cut by their client.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "http/client.h"
#include "xdtest.h"

/* A dump of this many clusters is written in many slices. */
#define PAGE_CLUSTERS 5000

/* The daemon under valgrind, reporting to vgpath. */
static struct xdt_daemon *start_under_valgrind(const char *config,
					       char *vgpath, size_t cap)
{
	const char *valgrind = xdtest_env("VALGRIND");
	char wrapper[1024];
	struct xdt_daemon *d;

	snprintf(vgpath, cap, "%s/valgrind.%d.%lld.log", xdtest_tmpdir(),
		 (int)getpid(), xdtest_now_ms());
	snprintf(wrapper, sizeof(wrapper),
		 "%s --quiet --leak-check=full --show-leak-kinds=definite,indirect "
		 "--errors-for-leak-kinds=definite,indirect --error-exitcode=99 "
		 "--log-file=%s",
		 valgrind, vgpath);
	setenv("XDSD_WRAPPER", wrapper, 1);
	d = xdt_daemon_start(config, NULL, 60000);
	unsetenv("XDSD_WRAPPER");
	return d;
}

/* After SIGTERM: a clean exit and nothing from valgrind. */
static void expect_clean_exit(struct xdt_daemon *d, const char *vgpath)
{
	char *vglog, *log;

	ck_assert_msg(xdt_daemon_wait(d, 60000), "xdsd did not exit");
	vglog = xdtest_read_file(vgpath, NULL);
	log = xdt_daemon_log(d);
	/* Check cannot carry long messages: the reports go to stderr,
	 * which `make check` keeps in the test's .log file. */
	if (d->exit_status != 0 || (vglog != NULL && vglog[0] != '\0'))
		fprintf(stderr, "valgrind:\n%s\nxdsd log tail:\n%s\n",
			vglog ? vglog : "(none)",
			log ? log + (strlen(log) > 4000 ? strlen(log) - 4000 : 0) : "");
	ck_assert_msg(d->exit_status == 0, "exit status %d (see the .log file)",
		      d->exit_status);
	/* --quiet: valgrind writes nothing unless it found something */
	ck_assert_msg(vglog == NULL || vglog[0] == '\0',
		      "valgrind reported errors (see the .log file)");
	free(vglog);
	free(log);
}

START_TEST(lifecycle_leaks_nothing)
{
	struct xdt_daemon *d;
	struct xdc_conn *c[3];
	struct xdc_stream *s[6], *odd, *early, *csds[2], *health, *watch;
	grpc_status_code code;
	/* ClientStatusRequest{node_matchers: [{node_id: {exact: "abc"}}]} */
	static const uint8_t matcher[] = {0x0a, 0x07, 0x0a, 0x05, 0x0a,
					  0x03, 'a', 'b', 'c'};
	uint8_t *answer;
	size_t len;
	char vgpath[300];

	d = start_under_valgrind("listen: 127.0.0.1:0\nlog_level: debug\n",
				 vgpath, sizeof(vgpath));

	for (int i = 0; i < 3; i++)
		c[i] = xdc_connect(d->target);
	for (int i = 0; i < 6; i++) {
		Envoy__Service__Discovery__V3__DiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		s[i] = xdc_open(c[i % 3], XDC_ADS);
		req.type_url = "type.googleapis.com/envoy.config.listener.v3.Listener";
		ck_assert(xdc_send_sotw(s[i], &req, 20000));
	}
	odd = xdc_open(c[0], "/no.Such/Method");
	ck_assert(xdc_status(odd, &code, NULL, 20000));
	ck_assert_int_eq(code, GRPC_STATUS_UNIMPLEMENTED);
	xdc_stream_free(odd);
	early = xdc_open(c[1], XDC_ADS);
	ck_assert(xdc_close_send(early, 20000));
	ck_assert(xdc_drain_status(early, &code, NULL, 20000));
	ck_assert_int_eq(code, GRPC_STATUS_OK);
	xdc_stream_free(early);
	xdc_stream_free(s[5]); /* cancelled by the client */
	for (int i = 0; i < 2; i++) {
		csds[i] = xdc_open(c[2], "/envoy.service.status.v3.ClientStatusDiscoveryService/StreamClientStatus");
		ck_assert(xdc_send(csds[i], matcher, sizeof(matcher), 20000));
		ck_assert_int_eq(xdc_recv(csds[i], &answer, &len, 20000), 1);
		free(answer);
	}
	ck_assert(xdc_send(csds[1], "\xff\xff", 2, 20000)); /* garbage */
	ck_assert(xdc_drain_status(csds[1], &code, NULL, 20000));
	ck_assert_int_eq(code, GRPC_STATUS_INVALID_ARGUMENT);
	xdc_stream_free(csds[1]);
	/* gRPC health: answered, a name not served, garbage; a watch */
	static const struct {
		const char *req;
		size_t len;
		grpc_status_code code;
	} checks[] = {{"", 0, GRPC_STATUS_OK},
		      {"\x0a\x01x", 3, GRPC_STATUS_NOT_FOUND},
		      {"\xff\xff", 2, GRPC_STATUS_INVALID_ARGUMENT}};
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		health = xdc_open(c[1], "/grpc.health.v1.Health/Check");
		ck_assert(xdc_send(health, checks[i].req, checks[i].len, 20000));
		ck_assert(xdc_close_send(health, 20000));
		ck_assert(xdc_drain_status(health, &code, NULL, 20000));
		ck_assert_int_eq(code, checks[i].code);
		xdc_stream_free(health);
	}
	watch = xdc_open(c[1], "/grpc.health.v1.Health/Watch");
	ck_assert(xdc_send(watch, "", 0, 20000));
	ck_assert(xdc_close_send(watch, 20000));
	ck_assert_int_eq(xdc_recv(watch, &answer, &len, 20000), 1);
	ck_assert(len == 2 && memcmp(answer, "\x08\x01", 2) == 0); /* SERVING */
	free(answer);
	/* the admin endpoint's overview, rendered with streams open */
	for (int i = 0; i < 2; i++) {
		static const char *const pages[] = {"/status", "/status.json"};
		int status;

		free(xdt_admin(d, "GET", pages[i], NULL, &status, NULL));
		ck_assert_int_eq(status, 200);
	}
	/* the half-closed and the cancelled stream are released */
	ck_assert(xdt_daemon_wait_log_count(d, ": freed", 6, 20000));

	xdt_daemon_signal(d, SIGTERM);
	/* told NOT_SERVING, then ended with the others */
	ck_assert_int_eq(xdc_recv(watch, &answer, &len, 30000), 1);
	ck_assert(len == 2 && memcmp(answer, "\x08\x02", 2) == 0);
	free(answer);
	ck_assert(xdc_drain_status(watch, &code, NULL, 30000));
	ck_assert_int_eq(code, GRPC_STATUS_UNAVAILABLE);
	xdc_stream_free(watch);
	for (int i = 0; i < 5; i++) {
		ck_assert(xdc_drain_status(s[i], &code, NULL, 30000));
		ck_assert_int_eq(code, GRPC_STATUS_UNAVAILABLE);
		xdc_stream_free(s[i]);
	}
	/* the CSDS stream left open ends with the daemon too */
	ck_assert(xdc_drain_status(csds[0], &code, NULL, 30000));
	xdc_stream_free(csds[0]);
	for (int i = 0; i < 3; i++)
		xdc_conn_free(c[i]);
	expect_clean_exit(d, vgpath);
	xdt_daemon_free(d);
}
END_TEST

/* One REST-JSON request; returns the status, and the body in *body
 * (malloc'd) when `body` is not NULL. */
static int rest_post(const struct xdt_daemon *d, const char *type,
		     const char *json, char **body)
{
	char target[64], path[128], why[256];
	struct xd_http_request q = {.target = target, .method = "POST",
				    .path = path, .body = json,
				    .body_len = strlen(json), .timeout_ms = 60000};
	struct xd_http_response r;

	snprintf(target, sizeof(target), "127.0.0.1:%d", d->rest_port);
	snprintf(path, sizeof(path), "/v3/discovery:%s", type);
	ck_assert_msg(xd_http_fetch(&q, &r, why, sizeof(why)) == 0, "%s", why);
	free(r.content_type);
	if (body != NULL)
		*body = r.body;
	else
		free(r.body);
	return r.status;
}

/* A poll left to curl in the background, cut after `seconds`. */
static void rest_poll_background(const struct xdt_daemon *d, const char *json,
				 int seconds)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "timeout %d curl -s -o /dev/null -d '%s' http://127.0.0.1:%d/v3/discovery:clusters &",
		 seconds, json, d->rest_port);
	ck_assert(system(cmd) == 0);
}

START_TEST(rest_leaks_nothing)
{
	char *dir = xdtest_snapdir(), cfg[512], vgpath[300], json[256], *body;
	const char *v;
	struct xdt_daemon *d;

	xdtest_write_clusters(dir, "default.yaml", "c", 3);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nrest_listen: 127.0.0.1:0\n"
		 "rest_poll_timeout: 1s\nsnapshots: %s\nlog_level: debug\n", dir);
	d = start_under_valgrind(cfg, vgpath, sizeof(vgpath));
	ck_assert(d->rest_port > 0);
	ck_assert_int_eq(rest_post(d, "clusters", "{\"node\": {\"id\": \"n\"}}", &body), 200);
	v = strstr(body, "\"versionInfo\":\"");
	ck_assert(v != NULL);
	snprintf(json, sizeof(json), "{\"versionInfo\": \"%.16s\"}", v + 15);
	free(body);
	ck_assert_int_eq(rest_post(d, "clusters", "{\"node\": ", NULL), 400);
	ck_assert_int_eq(rest_post(d, "clusters", "{\"nodes\": {}}", NULL), 400);
	ck_assert_int_eq(rest_post(d, "virtual-hosts", "{}", NULL), 404);
	/* held to the timeout */
	ck_assert_int_eq(rest_post(d, "clusters", json, NULL), 200);
	/* held, then its client goes */
	rest_poll_background(d, json, 1);
	ck_assert(xdt_daemon_wait_log(d, "closed while held", 30000));
	/* held, then woken by a reload */
	rest_poll_background(d, json, 30);
	ck_assert(xdt_daemon_wait_log_count(d, "waiting)", 3, 30000));
	xdtest_write_clusters(dir, "default.yaml", "c", 4);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "changed after", 30000));
	/* held at SIGTERM, at the new version */
	ck_assert_int_eq(rest_post(d, "clusters", "{}", &body), 200);
	v = strstr(body, "\"versionInfo\":\"");
	ck_assert(v != NULL);
	snprintf(json, sizeof(json), "{\"versionInfo\": \"%.16s\"}", v + 15);
	free(body);
	rest_poll_background(d, json, 30);
	ck_assert(xdt_daemon_wait_log_count(d, "waiting)", 4, 30000));
	xdt_daemon_signal(d, SIGTERM);
	expect_clean_exit(d, vgpath);
	xdt_daemon_free(d);
	free(dir);
}
END_TEST

/* Reads `n` bytes of the answer on `fd`, or fails. */
static void read_part(int fd, size_t n)
{
	char buf[4096];

	while (n > 0) {
		ssize_t got = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));

		ck_assert_msg(got > 0, "the answer ended early");
		n -= (size_t)got;
	}
}

/*
 * Admin pages sent as they are written (docs/engine.md, "Admin pages")
 * cut short: a client that reads the start of a big dump and leaves,
 * one that leaves while the page waits for it, and one still reading at
 * SIGTERM. Every page's state and buffer is freed.
 */
START_TEST(pages_cut_leak_nothing)
{
	char *dir = xdtest_clusters_snapdir(PAGE_CLUSTERS), cfg[512], vgpath[300];
	struct xdt_daemon *d;
	int fd[3];

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = start_under_valgrind(cfg, vgpath, sizeof(vgpath));
	for (int i = 0; i < 3; i++) {
		fd[i] = xdt_admin_ask(d, "/config_dump", 16 * 1024);
		read_part(fd[i], 16 * 1024);
	}
	close(fd[0]);
	/* the others' pages wait for them, their buffers full */
	for (int i = 0; xdt_daemon_metric(d, "xdsd_admin_page_buffer_bytes") == 0;
	     i++) {
		ck_assert_msg(i < 600, "no page waits for its client");
		xdtest_sleep_ms(100);
	}
	close(fd[1]);
	xdtest_sleep_ms(500);
	xdt_daemon_signal(d, SIGTERM);
	expect_clean_exit(d, vgpath);
	close(fd[2]);
	xdt_daemon_free(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("valgrind");
	TCase *tc = tcase_create("daemon");

	xdtest_tmpdir();
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, lifecycle_leaks_nothing);
	tcase_add_test(tc, rest_leaks_nothing);
	tcase_add_test(tc, pages_cut_leak_nothing);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
