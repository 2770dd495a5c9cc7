/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `log_format: json`, end to end: the real daemon, a real client whose
 * node id, cluster and NACK message hold what would break a log line
 * (newlines, quotes, braces, control characters, invalid UTF-8). Every
 * line must parse as one JSON object (jansson), and the NACK must be
 * exactly one line, its stream's node, cluster and peer as fields.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "node.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000

#define EVIL_ID "node\n{\"level\":\"error\"}\x01\xff"
#define EVIL_CLUSTER "edge\"},\r\x1b[31m"
#define EVIL_NACK "rejected: \"port 1\"\n{\"time\":\"forged\"} \\ \x7f\xc3("

START_TEST(nack_is_one_json_line)
{
	char *dir = xdtest_snapdir(), cfg[512], *log, *save = NULL;
	struct xdt_node_opts o = {.id = EVIL_ID, .cluster = EVIL_CLUSTER,
				  .endpoints = "svc",
				  .nack_endpoints = EVIL_NACK};
	struct xdt_daemon *d;
	struct xdt_node n;
	json_t *nack = NULL;
	int lines = 0, nacks = 0;

	xdtest_write_svc_snapshot(dir, 1, NULL);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_format: json\nlog_level: debug\n",
		 dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	xdt_node_open(&n, d->target, &o);
	ck_assert(xdt_daemon_wait_log(d, "NACK of", 5000));
	xdt_node_close(&n);
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);

	log = xdt_daemon_log(d);
	for (char *line = strtok_r(log, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		json_error_t err;
		json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &err);

		ck_assert_msg(json_is_object(j), "not a JSON object (%s): %s",
			      err.text, line);
		ck_assert_int_eq(strlen(xdt_json_str(j, "time")), 24); /* ...T..:..:..SSS.Z */
		ck_assert_msg(xdt_json_str(j, "time")[10] == 'T' &&
				      xdt_json_str(j, "time")[19] == '.' &&
				      xdt_json_str(j, "time")[23] == 'Z',
			      "time '%s'", xdt_json_str(j, "time"));
		xdt_json_str(j, "level");
		lines++;
		if (strstr(xdt_json_str(j, "message"), "NACK of") != NULL) {
			nacks++;
			nack = json_incref(j);
		}
		json_decref(j);
	}
	ck_assert_int_gt(lines, 5);
	ck_assert_int_eq(nacks, 1);
	ck_assert_str_eq(xdt_json_str(nack, "level"), "warn");
	/* the client's strings whole, invalid UTF-8 as U+FFFD */
	ck_assert_str_eq(xdt_json_str(nack, "node"),
			 "node\n{\"level\":\"error\"}\x01\xef\xbf\xbd");
	ck_assert_str_eq(xdt_json_str(nack, "cluster"), EVIL_CLUSTER);
	ck_assert_msg(strncmp(xdt_json_str(nack, "peer"), "ipv4:127.0.0.1:", 15) == 0,
		      "peer '%s'", xdt_json_str(nack, "peer"));
	ck_assert_str_eq(xdt_json_str(nack, "method"), "ADS");
	ck_assert(json_is_integer(json_object_get(nack, "stream")));
	ck_assert_msg(strstr(xdt_json_str(nack, "message"),
			     ": rejected: \"port 1\"\n{\"time\":\"forged\"} \\ \x7f\xef\xbf\xbd(") != NULL,
		      "message '%s'", xdt_json_str(nack, "message"));
	/* the stream's fields are not repeated in the message */
	ck_assert_ptr_null(strstr(xdt_json_str(nack, "message"), "node"));
	json_decref(nack);
	free(log);
	xdt_daemon_free(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log_json");
	TCase *tc = tcase_create("json");

	tcase_add_test(tc, nack_is_one_json_line);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
