/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshots and SIGHUP, end to end: the real daemon, real files, real
 * signals, a real gRPC client watching what it is served, and which
 * node is served which snapshot file (node_key).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"

/* `extra`: one more configuration line ("" for none). */
static struct xdt_daemon *start_with(const char *dir, const char *extra)
{
	char cfg[512];

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n%s\n",
		 dir, extra);
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static struct xdt_daemon *start(const char *dir)
{
	return start_with(dir, "");
}

static struct xdc_stream *watch_cds(struct xdc_conn *c, const char *cluster)
{
	return xdc_watch_clusters(c, "reload-test", cluster);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* A reload that fails keeps the old snapshot, for old and new clients. */
START_TEST(failed_reload_keeps_serving)
{
	char *dir = xdtest_snapdir(), *v1 = NULL, *v2 = NULL;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s, *late;
	char *log;

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	d = start(dir);
	c = xdc_connect(d->target);
	s = watch_cds(c, "x");
	ck_assert_int_eq(xdc_next_clusters(s, 5000, &v1), 2);

	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n- {name: b, connect_timeout: never}\n"));
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "reload failed", 5000));
	log = xdt_daemon_log(d);
	ck_assert_ptr_nonnull(strstr(log, "default.yaml:2:30: clusters[0].connect_timeout: malformed duration 'never'"));
	ck_assert_ptr_nonnull(strstr(log, "still serving the previous snapshots"));
	free(log);
	/* nothing new for the client, and a new client gets the old one */
	ck_assert_int_eq(xdc_next_clusters(s, 300, NULL), -1);
	late = watch_cds(c, "y");
	ck_assert_int_eq(xdc_next_clusters(late, 5000, &v2), 2);
	ck_assert_str_eq(v1, v2);
	free(v2);

	/* fixed: both get the new snapshot */
	xdtest_write_clusters(dir, "default.yaml", "b", 3);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_int_eq(xdc_next_clusters(s, 5000, &v2), 3);
	ck_assert_str_ne(v1, v2);
	free(v2);
	ck_assert_int_eq(xdc_next_clusters(late, 5000, NULL), 3);

	xdc_stream_free(s);
	xdc_stream_free(late);
	xdc_conn_free(c);
	stop(d);
	free(v1);
	free(dir);
}
END_TEST

/* xdsd serving the snapshot directory `dir` must exit 1 at start-up,
 * without listening, its log saying each of the (NULL-terminated)
 * needles. */
static void refuses_to_start(const char *dir, ...)
{
	char cfg[512];
	va_list ap;

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	va_start(ap, dir);
	free(xdt_daemon_vrefused(cfg, ap));
	va_end(ap);
}

/* Without a good snapshot the daemon does not start. */
START_TEST(broken_snapshot_refuses_to_start)
{
	char *dir = xdtest_snapdir(), *none;

	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n- {name: c, type: EDS}\n"));
	refuses_to_start(dir,
			 "cluster 'c' refers to endpoints 'c', which is not in the snapshot",
			 "1 error in the snapshots", NULL);
	ck_assert(asprintf(&none, "%s/none", dir) > 0);
	refuses_to_start(none, "cannot read the snapshot directory", NULL);
	free(none);
	free(dir);
}
END_TEST

/*
 * SIGHUP and SIGUSR1 while the snapshots load at start-up (a large
 * snapshot takes a while) do not end the daemon: it starts, then
 * reloads, and the reload sees the files as they are by then.
 */
START_TEST(sighup_during_startup_is_applied)
{
	enum { N = 20000 };
	char *dir = xdtest_snapdir(), cfg[512], *log;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	int n = 0;

	xdtest_write_clusters(dir, "default.yaml", "a", N);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_spawn(cfg, NULL);
	/* main() has begun once the configuration is logged; the load
	 * of 20,000 clusters follows */
	ck_assert(xdt_daemon_wait_log(d, "info: configuration ", START_MS));
	xdtest_write_clusters(dir, "default.yaml", "a", N + 1);
	xdt_daemon_signal(d, SIGHUP);
	xdt_daemon_signal(d, SIGUSR1);
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "listening on") == NULL,
		      "the start-up was over before the signals were sent; "
		      "the test needs a larger snapshot:\n%s", log);
	free(log);
	xdt_daemon_wait_ready(d, START_MS);
	ck_assert(xdt_daemon_wait_log(d, "SIGHUP during start-up: reloading", START_MS));
	ck_assert(xdt_daemon_wait_log(d, "info: stats: streams 0", START_MS));
	ck_assert(xdt_daemon_wait_log(d, "reloaded 1 snapshot", START_MS));
	c = xdc_connect(d->target);
	s = watch_cds(c, "x");
	n = xdc_next_clusters(s, 5000, NULL);
	ck_assert_int_eq(n, N + 1);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* Signals during a reload are coalesced into one more reload, which
 * sees the newest files. */
START_TEST(sighup_storm_ends_on_newest_files)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	int n = 0;

	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	d = start(dir);
	c = xdc_connect(d->target);
	s = watch_cds(c, "x");
	ck_assert_int_eq(xdc_next_clusters(s, 5000, NULL), 1);
	for (int i = 2; i <= 20; i++) {
		xdtest_write_clusters(dir, "default.yaml", "a", i);
		xdt_daemon_signal(d, SIGHUP);
	}
	/* the last response the client gets holds all 20 */
	for (int r; (r = xdc_next_clusters(s, 2000, NULL)) >= 0;)
		n = r;
	ck_assert_int_eq(n, 20);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

static void remove_file(const char *dir, const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert(remove(path) == 0);
}

/* A reload disturbs only the keys whose snapshot changed; a node whose
 * key has no snapshot gets the default one. */
START_TEST(reload_touches_only_changed_keys)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *a, *b, *other;

	xdtest_write_clusters(dir, "a.yaml", "a", 1);
	xdtest_write_clusters(dir, "b.yaml", "b", 2);
	xdtest_write_clusters(dir, "default.yaml", "d", 3);
	d = start(dir);
	c = xdc_connect(d->target);
	a = watch_cds(c, "a");
	b = watch_cds(c, "b");
	other = watch_cds(c, "elsewhere");
	ck_assert_int_eq(xdc_next_clusters(a, 5000, NULL), 1);
	ck_assert_int_eq(xdc_next_clusters(b, 5000, NULL), 2);
	ck_assert_int_eq(xdc_next_clusters(other, 5000, NULL), 3);

	xdtest_write_clusters(dir, "b.yaml", "b", 5);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "1 changed", 5000));
	ck_assert_int_eq(xdc_next_clusters(b, 5000, NULL), 5);
	ck_assert_int_eq(xdc_next_clusters(a, 300, NULL), -1);
	ck_assert_int_eq(xdc_next_clusters(other, 300, NULL), -1);

	/* b's own snapshot goes: b is served the default */
	remove_file(dir, "b.yaml");
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_int_eq(xdc_next_clusters(b, 5000, NULL), 3);
	ck_assert_int_eq(xdc_next_clusters(a, 300, NULL), -1);

	xdc_stream_free(a);
	xdc_stream_free(b);
	xdc_stream_free(other);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* SIGHUP, then the reload must fail with `reason` in the log. */
static void reload_refused(struct xdt_daemon *d, const char *reason, int nth)
{
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, "still serving the previous snapshots",
					    nth, 5000));
	ck_assert_msg(xdt_daemon_wait_log(d, reason, 100), "no '%s' in the log",
		      reason);
}

/*
 * Deleting the only snapshot and reloading once left new clients with
 * nothing at all. The reload is refused instead: every client, old and
 * new, keeps being served the previous snapshot.
 */
START_TEST(reload_without_any_snapshot_is_refused)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *old, *late;

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	d = start(dir);
	c = xdc_connect(d->target);
	old = watch_cds(c, "x");
	ck_assert_int_eq(xdc_next_clusters(old, 5000, NULL), 2);
	remove_file(dir, "default.yaml");
	reload_refused(d, "no snapshot files", 1);
	ck_assert_int_eq(xdc_next_clusters(old, 300, NULL), -1);
	late = watch_cds(c, "x");
	ck_assert_int_eq(xdc_next_clusters(late, 5000, NULL), 2);
	xdc_stream_free(old);
	xdc_stream_free(late);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A FIFO, a directory or a device named as a snapshot file, at the top
 * of the directory or in a key's subdirectory: never opened (a FIFO
 * would hold the load until something wrote to it), and refused with
 * what it is, at start and on reload, where the previous snapshots
 * keep serving. Before, one at the top was passed over without a word
 * and its snapshot silently went missing.
 */
START_TEST(snapshot_file_not_a_regular_file_is_refused)
{
	static const struct {
		const char *name, *kind;
	} cases[] = {
		{"default.yaml", "a FIFO"},
		{"k/c.yaml", "a FIFO"},
		{"zero.yaml", "a character device"},
		{"k/dir.yaml", "a directory"},
	};
	char *dir = xdtest_snapdir(), path[600], sub[600], why[700];
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	snprintf(path, sizeof(path), "%s/default.yaml", dir);
	ck_assert(mkfifo(path, 0600) == 0);
	snprintf(why, sizeof(why), "%s: the snapshot file is a FIFO; it must be a regular file", path);
	refuses_to_start(dir, why, "not starting", NULL);
	ck_assert(unlink(path) == 0);

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	snprintf(sub, sizeof(sub), "%s/k", dir);
	ck_assert(mkdir(sub, 0755) == 0);
	xdtest_write_clusters(sub, "a.yaml", "k", 1);
	d = start(dir);
	c = xdc_connect(d->target);
	s = watch_cds(c, "x");
	ck_assert_int_eq(xdc_next_clusters(s, 5000, NULL), 2);
	for (size_t i = 1; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, cases[i].name);
		ck_assert(strcmp(cases[i].kind, "a FIFO") == 0 ? mkfifo(path, 0600) == 0 :
			  strcmp(cases[i].kind, "a directory") == 0 ? mkdir(path, 0755) == 0 :
								    symlink("/dev/zero", path) == 0);
		snprintf(why, sizeof(why), "%s: the snapshot file is %s; it must be a regular file",
			 path, cases[i].kind);
		reload_refused(d, why, (int)i);
		ck_assert(strcmp(cases[i].kind, "a directory") == 0 ? rmdir(path) == 0 :
								    unlink(path) == 0);
	}
	/* nothing changed, still served */
	ck_assert_int_eq(xdc_next_clusters(s, 300, NULL), -1);
	xdc_stream_free(s);
	s = watch_cds(c, "x");
	ck_assert_int_eq(xdc_next_clusters(s, 5000, NULL), 2);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/*
 * Without a default snapshot, a reload may not drop a key's snapshot
 * (its nodes would have none), nor drop the default one while other
 * keys stay; with a default, a key's snapshot may go (its nodes fall
 * back to the default one).
 */
START_TEST(reload_may_not_orphan_a_key)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *b;

	xdtest_write_clusters(dir, "a.yaml", "a", 1);
	xdtest_write_clusters(dir, "b.yaml", "b", 2);
	d = start(dir);
	c = xdc_connect(d->target);
	remove_file(dir, "b.yaml");
	reload_refused(d, "snapshot 'b' is gone and there is no default snapshot", 1);
	b = watch_cds(c, "b");
	ck_assert_int_eq(xdc_next_clusters(b, 5000, NULL), 2);

	xdtest_write_clusters(dir, "b.yaml", "b", 2);
	xdtest_write_clusters(dir, "default.yaml", "d", 3);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "reloaded 3 snapshots", 5000));
	remove_file(dir, "default.yaml");
	reload_refused(d, "the default snapshot is gone", 2);

	remove_file(dir, "b.yaml");
	xdtest_write_clusters(dir, "default.yaml", "d", 3);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "reloaded 2 snapshots", 5000));
	ck_assert_int_eq(xdc_next_clusters(b, 5000, NULL), 3);
	xdc_stream_free(b);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A node that no snapshot serves (no file for its key, no default) is
 * told so with NOT_FOUND and a message naming its key, and the log
 * says it too; nodes that have a snapshot are served as ever. A
 * directory without any snapshot does not start.
 */
START_TEST(node_without_snapshot_gets_a_status)
{
	char *dir = xdtest_snapdir(), *details = NULL;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *lost, *a;
	grpc_status_code code;

	xdtest_write_clusters(dir, "a.yaml", "a", 1);
	d = start(dir);
	c = xdc_connect(d->target);
	lost = xdc_watch_clusters(c, "lost-node", "nowhere");
	ck_assert(xdc_drain_status(lost, &code, &details, 5000));
	ck_assert_int_eq(code, GRPC_STATUS_NOT_FOUND);
	ck_assert_msg(strstr(details, "no snapshot serves node cluster 'nowhere'") != NULL,
		      "status message '%s'", details);
	ck_assert(xdt_daemon_wait_log(d, "node 'lost-node': no snapshot serves node cluster 'nowhere'", 5000));
	a = watch_cds(c, "a");
	ck_assert_int_eq(xdc_next_clusters(a, 5000, NULL), 1);
	free(details);
	xdc_stream_free(lost);
	xdc_stream_free(a);
	xdc_conn_free(c);
	stop(d);

	remove_file(dir, "a.yaml");
	refuses_to_start(dir, "no snapshot files", NULL);
	free(dir);
}
END_TEST

/* The files of the node_key tests, told apart by their cluster counts:
 * alpha.yaml 1, beta.yaml 2, default.yaml 3. */
static void write_key_files(const char *dir)
{
	xdtest_write_clusters(dir, "alpha.yaml", "alpha", 1);
	xdtest_write_clusters(dir, "beta.yaml", "beta", 2);
	xdtest_write_clusters(dir, "default.yaml", "d", 3);
}

/*
 * node_key names the node field whose snapshot file a client is served:
 * its cluster (the default) or its id. A key without a file of its own,
 * or an empty one, is served default.yaml.
 */
START_TEST(node_key_selects_snapshot)
{
	static const char *const configs[] = {
		"node_key: id", "node_key: cluster", "" /* the default */,
	};
	static const struct {
		int config;   /* index in configs */
		const char *id, *cluster;
		int clusters; /* which file the node must be served */
	} cases[] = {
		{0, "alpha", "beta", 1},
		{0, "nobody", "beta", 3},
		{0, "", "alpha", 3},
		{1, "alpha", "beta", 2},
		{1, "beta", "nobody", 3},
		{1, "beta", "", 3},
		{2, "alpha", "beta", 2},
		{2, "beta", "nobody", 3},
	};
	char *dir = xdtest_snapdir();

	write_key_files(dir);
	for (int k = 0; k < 3; k++) {
		struct xdt_daemon *d = start_with(dir, configs[k]);
		struct xdc_conn *c = xdc_connect(d->target);

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct xdc_stream *s;
			int got;

			if (cases[i].config != k)
				continue;
			s = xdc_watch_clusters(c, cases[i].id, cases[i].cluster);
			got = xdc_next_clusters(s, 5000, NULL);
			ck_assert_msg(got == cases[i].clusters,
				      "'%s' node id '%s' cluster '%s': served %d clusters, expected %d",
				      configs[k], cases[i].id, cases[i].cluster,
				      got, cases[i].clusters);
			xdc_stream_free(s);
		}
		xdc_conn_free(c);
		stop(d);
	}
	free(dir);
}
END_TEST

/* With node_key: id, a node follows the changes of its id's file, and
 * not those of its cluster's: node alpha is in cluster beta, node beta
 * in cluster alpha. */
START_TEST(node_key_id_follows_the_id_file)
{
	static const char *const ids[] = {"alpha", "beta"};
	char *dir = xdtest_snapdir(), file[32];
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s[2];

	write_key_files(dir);
	d = start_with(dir, "node_key: id");
	c = xdc_connect(d->target);
	for (int i = 0; i < 2; i++) {
		s[i] = xdc_watch_clusters(c, ids[i], ids[1 - i]);
		ck_assert_int_eq(xdc_next_clusters(s[i], 5000, NULL), i + 1);
	}
	for (int i = 0; i < 2; i++) {
		snprintf(file, sizeof(file), "%s.yaml", ids[i]);
		xdtest_write_clusters(dir, file, ids[i], 4 + i);
		xdt_daemon_signal(d, SIGHUP);
		ck_assert_int_eq(xdc_next_clusters(s[i], 5000, NULL), 4 + i);
		ck_assert_int_eq(xdc_next_clusters(s[1 - i], 300, NULL), -1);
	}
	for (int i = 0; i < 2; i++)
		xdc_stream_free(s[i]);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- memory over time ---------------- */

/* The value after `tag` in the newest statistics line (SIGUSR1). */
static long stat_value(struct xdt_daemon *d, const char *tag, int nth)
{
	char *log, *p, *last = NULL;
	long v;

	xdt_daemon_signal(d, SIGUSR1);
	ck_assert(xdt_daemon_wait_log_count(d, "info: stats: ", nth, 5000));
	log = xdt_daemon_log(d);
	for (p = log; (p = strstr(p, tag)) != NULL; p++)
		last = p;
	ck_assert_msg(last != NULL, "no '%s' in the statistics", tag);
	v = strtol(last + strlen(tag), NULL, 10);
	free(log);
	return v;
}

/*
 * A snapshot superseded by a reload is freed once no session holds it,
 * even while a stream's send is stuck behind a client that does not
 * read: the session follows the cache whether or not it can send.
 */
START_TEST(superseded_snapshot_freed_while_a_client_does_not_read)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_mute *m;

	/* a CDS response of about 300 KB: more than the mute window */
	xdtest_write_clusters(dir, "default.yaml", "a-long-name-for-a-cluster", 5000);
	d = start(dir);
	m = xdc_mute_open(d->target, "mute");
	ck_assert(xdt_daemon_wait_log(d, "node 'mute': sending CDS version", 5000));
	for (int i = 1; i <= 3; i++) {
		char prefix[16];

		snprintf(prefix, sizeof(prefix), "reload-%d", i);
		xdtest_write_clusters(dir, "default.yaml", prefix, 10);
		xdt_daemon_signal(d, SIGHUP);
		ck_assert(xdt_daemon_wait_log_count(d, "reloaded 1 snapshot", i, 10000));
		ck_assert_int_eq(stat_value(d, "streams ", i), 1);
		ck_assert_msg(stat_value(d, "snapshots alive ", i) == 1,
			      "reload %d: %ld snapshots alive with one served", i,
			      stat_value(d, "snapshots alive ", i));
	}
	xdc_mute_close(m);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reload");
	TCase *tc = tcase_create("reload");

	xdtest_tmpdir();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, failed_reload_keeps_serving);
	tcase_add_test(tc, broken_snapshot_refuses_to_start);
	tcase_add_test(tc, sighup_storm_ends_on_newest_files);
	tcase_add_test(tc, sighup_during_startup_is_applied);
	tcase_add_test(tc, reload_touches_only_changed_keys);
	tcase_add_test(tc, reload_without_any_snapshot_is_refused);
	tcase_add_test(tc, reload_may_not_orphan_a_key);
	tcase_add_test(tc, snapshot_file_not_a_regular_file_is_refused);
	tcase_add_test(tc, node_without_snapshot_gets_a_status);
	tcase_add_test(tc, node_key_selects_snapshot);
	tcase_add_test(tc, node_key_id_follows_the_id_file);
	tcase_add_test(tc, superseded_snapshot_freed_while_a_client_does_not_read);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
