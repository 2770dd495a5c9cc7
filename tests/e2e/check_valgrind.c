/*
 * No leaks and no memory errors over a daemon's whole life under
 * valgrind: start, streams on several connections, an unknown method, a
 * client half-close, a cancelled stream, client status (CSDS) calls
 * answered, refused and left open, the admin endpoint's /status and
 * /status.json, then SIGTERM with live streams.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

START_TEST(lifecycle_leaks_nothing)
{
	const char *valgrind = xdtest_env("VALGRIND");
	char wrapper[1024], *vglog, *log;
	struct xdt_daemon *d;
	struct xdc_conn *c[3];
	struct xdc_stream *s[6], *odd, *early, *csds[2];
	grpc_status_code code;
	/* ClientStatusRequest{node_matchers: [{node_id: {exact: "abc"}}]} */
	static const uint8_t matcher[] = {0x0a, 0x07, 0x0a, 0x05, 0x0a,
					  0x03, 'a', 'b', 'c'};
	uint8_t *answer;
	size_t len;
	char vgpath[300];

	snprintf(vgpath, sizeof(vgpath), "%s/valgrind.%d.log", xdtest_tmpdir(),
		 (int)getpid());
	snprintf(wrapper, sizeof(wrapper),
		 "%s --quiet --leak-check=full --show-leak-kinds=definite,indirect "
		 "--errors-for-leak-kinds=definite,indirect --error-exitcode=99 "
		 "--log-file=%s",
		 valgrind, vgpath);
	setenv("XDSD_WRAPPER", wrapper, 1);
	d = xdt_daemon_start("listen: 127.0.0.1:0\nlog_level: debug\n", NULL,
			     60000);
	unsetenv("XDSD_WRAPPER");

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
	/* the admin endpoint's overview, rendered with streams open */
	for (int i = 0; i < 2; i++) {
		static const char *const pages[] = {"/status", "/status.json"};
		int status;

		free(xdt_admin(d, "GET", pages[i], NULL, &status, NULL));
		ck_assert_int_eq(status, 200);
	}
	/* the half-closed and the cancelled stream are released */
	ck_assert(xdt_daemon_wait_log_count(d, ": freed", 3, 20000));

	xdt_daemon_signal(d, SIGTERM);
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
	xdt_daemon_free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("valgrind");
	TCase *tc = tcase_create("daemon");

	xdtest_tmpdir();
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, lifecycle_leaks_nothing);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
