/*
 * Automatic reload (`watch: true`), end to end: the real daemon, real
 * files changed in place, by rename and in subdirectories, and a real
 * gRPC client that must be served what the files now say.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
#define SERVED_MS 10000
#define RELOADING "watch: reloading "

static struct xdt_daemon *start(const char *dir, const char *watch)
{
	char cfg[512];
	struct xdt_daemon *d;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\n%s\n", dir, watch);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	if (strstr(watch, "watch: true") != NULL)
		ck_assert(xdt_daemon_wait_log(d, "watching ", START_MS));
	return d;
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

static int count_of(const struct xdt_daemon *d, const char *needle)
{
	char *log = xdt_daemon_log(d);
	int n = 0;

	for (const char *p = log; (p = strstr(p, needle)) != NULL; p++)
		n++;
	free(log);
	return n;
}

/* `n` clusters, written in place (truncated and rewritten). */
static void write_in_place(const char *dir, const char *name,
			   const char *prefix, int n)
{
	char text[4096];
	size_t len = 0;

	len += (size_t)snprintf(text, sizeof(text), "clusters:\n");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"- {name: %s-%d, type: STATIC, connect_timeout: 1s}\n",
					prefix, i);
	free(xdtest_write_file(dir, name, text));
}

static char *subdir(const char *dir, const char *name)
{
	char *p;

	ck_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	ck_assert(mkdir(p, 0755) == 0);
	return p;
}

/* A file rewritten in place, then one replaced by rename: both served. */
START_TEST(changes_served)
{
	char *dir = xdtest_clusters_snapdir(2);
	struct xdt_daemon *d = start(dir, "watch: true\nwatch_delay: 100ms");
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_watch_clusters(c, "w", "any");

	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 2);
	write_in_place(dir, "default.yaml", "c", 3);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 3);
	ck_assert(xdt_daemon_wait_log(d, RELOADING, 1000));
	xdtest_write_clusters(dir, "default.yaml", "c", 5);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 5);
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded 1 snapshot", 2, 1000));
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* Files of a key's subdirectory, and of a subdirectory made after
 * start-up (watched from the reload that found it on). */
START_TEST(subdirectories_watched)
{
	char *dir = xdtest_clusters_snapdir(1), *team = subdir(dir, "team"),
	     *other;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *t, *o;

	xdtest_write_clusters(team, "a.yaml", "a", 1);
	d = start(dir, "watch: true\nwatch_delay: 100ms");
	ck_assert(xdt_daemon_wait_log(d, "and 1 subdirectory", 1000));
	c = xdc_connect(d->target);
	t = xdc_watch_clusters(c, "t", "team");
	ck_assert_int_eq(xdc_next_clusters(t, SERVED_MS, NULL), 1);
	xdtest_write_clusters(team, "b.yaml", "b", 2);
	ck_assert_int_eq(xdc_next_clusters(t, SERVED_MS, NULL), 3);

	other = subdir(dir, "other");
	xdtest_write_clusters(other, "x.yaml", "x", 1);
	ck_assert(xdt_daemon_wait_log(d, "snapshot 'other'", SERVED_MS));
	o = xdc_watch_clusters(c, "o", "other");
	ck_assert_int_eq(xdc_next_clusters(o, SERVED_MS, NULL), 1);
	/* only a watch on other/ can see this one */
	ck_assert(xdt_daemon_wait_log_count(d, RELOADING, 2, SERVED_MS));
	write_in_place(other, "x.yaml", "x", 4);
	ck_assert_int_eq(xdc_next_clusters(o, SERVED_MS, NULL), 4);
	xdc_stream_free(t);
	xdc_stream_free(o);
	xdc_conn_free(c);
	stop(d);
	free(other);
	free(team);
	free(dir);
}
END_TEST

/* Twenty files written within watch_delay: one reload. */
START_TEST(burst_gives_one_reload)
{
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = start(dir, "watch: true\nwatch_delay: 400ms");
	char name[32];

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "key-%d.yaml", i);
		xdtest_write_clusters(dir, name, "k", 1);
	}
	ck_assert(xdt_daemon_wait_log(d, "reloaded 21 snapshots", SERVED_MS));
	/* a second reload would come within watch_delay of the first */
	ck_assert(!xdt_daemon_wait_log_count(d, RELOADING, 2, 1500));
	ck_assert_int_eq(count_of(d, RELOADING), 1);
	stop(d);
	free(dir);
}
END_TEST

/* A bad file is refused as SIGHUP would refuse it: the old snapshot
 * stays served, and fixing the file is served in turn. */
START_TEST(bad_write_keeps_old)
{
	char *dir = xdtest_clusters_snapdir(2), *v1, *v2;
	struct xdt_daemon *d = start(dir, "watch: true\nwatch_delay: 100ms");
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_watch_clusters(c, "w", "any"), *late;

	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, &v1), 2);
	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n- {name: b, connect_timeout: never}\n"));
	ck_assert(xdt_daemon_wait_log(d, "reload failed", SERVED_MS));
	ck_assert(xdt_daemon_wait_log(d, "malformed duration 'never'", 1000));
	ck_assert_int_eq(xdc_next_clusters(s, 300, NULL), -1);
	late = xdc_watch_clusters(c, "late", "any");
	ck_assert_int_eq(xdc_next_clusters(late, SERVED_MS, &v2), 2);
	ck_assert_str_eq(v1, v2);
	xdtest_write_clusters(dir, "default.yaml", "c", 3);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 3);
	free(v1);
	free(v2);
	xdc_stream_free(s);
	xdc_stream_free(late);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* watch off (the default): changes wait for SIGHUP. */
START_TEST(off_by_default)
{
	char *dir = xdtest_clusters_snapdir(2);
	struct xdt_daemon *d = start(dir, "");
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_watch_clusters(c, "w", "any");

	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 2);
	xdtest_write_clusters(dir, "default.yaml", "c", 3);
	ck_assert_int_eq(xdc_next_clusters(s, 1500, NULL), -1);
	ck_assert_int_eq(count_of(d, "reloading"), 0);
	ck_assert_int_eq(count_of(d, "watching"), 0);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 3);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("watch");
	TCase *tc = tcase_create("watch");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, changes_served);
	tcase_add_test(tc, subdirectories_watched);
	tcase_add_test(tc, burst_gives_one_reload);
	tcase_add_test(tc, bad_write_keeps_old);
	tcase_add_test(tc, off_by_default);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
