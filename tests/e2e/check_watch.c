/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Automatic reload (`watch: true`), end to end: the real daemon, real
 * files changed in place, by rename, in subdirectories and behind
 * symlinks swapped atomically (a release link, a Kubernetes ConfigMap
 * volume), and a real gRPC client that must be served what the files
 * now say.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
	ck_assert_int_eq(xdt_daemon_log_count(d, RELOADING), 1);
	stop(d);
	free(dir);
}
END_TEST

/* A file rewritten more often than watch_delay is still reloaded,
 * watch_delay_max after the first change at most, while the writes go
 * on (they stop once it came, or after 150). */
START_TEST(churn_reloads_within_watch_delay_max)
{
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d =
		start(dir, "watch: true\nwatch_delay: 2s\nwatch_delay_max: 3s");
	int writes = 0;

	while (xdt_daemon_log_count(d, RELOADING) < 1 && writes < 150) {
		write_in_place(dir, "edge.yaml", "e", 1 + writes % 3);
		writes++;
		xdtest_sleep_ms(100);
	}
	ck_assert_msg(xdt_daemon_log_count(d, RELOADING) >= 1,
		      "no reload during %d writes, each sooner than watch_delay after the last",
		      writes);
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


static int rm_entry(const char *path, const struct stat *st __attribute__((unused)),
		    int flag __attribute__((unused)), struct FTW *ftw __attribute__((unused)))
{
	return remove(path);
}

static void rm_rf(const char *path)
{
	ck_assert_msg(nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0,
		      "cannot remove %s", path);
}

/* Points the symlink DIR/LINK at `target` atomically, as `ln -sfn
 * TARGET LINK.tmp && mv -T LINK.tmp LINK` and Kubernetes do. */
static void repoint(const char *dir, const char *link, const char *tmp,
		    const char *target)
{
	char from[1024], to[1024];

	snprintf(from, sizeof(from), "%s/%s", dir, tmp);
	snprintf(to, sizeof(to), "%s/%s", dir, link);
	ck_assert_msg(symlink(target, from) == 0, "symlink %s", from);
	ck_assert_msg(rename(from, to) == 0, "rename %s", from);
}

static void link_at(const char *dir, const char *name, const char *target)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_msg(symlink(target, path) == 0, "symlink %s", path);
}

/* DIR/NAME, a new directory holding default.yaml with `n` clusters
 * named PREFIX-0.. (malloc'd path). */
static char *release(const char *dir, const char *name, const char *prefix,
		     int n)
{
	char *p = subdir(dir, name);

	write_in_place(p, "default.yaml", prefix, n);
	return p;
}

/*
 * `snapshots: BASE/current` with current -> releases/vN, re-pointed by
 * rename to each new release in turn; the first releases are kept (for
 * a roll-back), the later ones deleted right after the swap. Each swap
 * is served, with one reload each.
 */
START_TEST(release_link_swapped)
{
	char *base = xdtest_snapdir(), *rels, *cur, *v;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	char name[16], target[32];

	rels = subdir(base, "releases");
	free(release(rels, "v1", "r1", 1));
	link_at(base, "current", "releases/v1");
	ck_assert(asprintf(&cur, "%s/current", base) > 0);
	d = start(cur, "watch: true\nwatch_delay: 100ms");
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "w", "any");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 1);
	for (int i = 2; i <= 5; i++) {
		snprintf(name, sizeof(name), "v%d", i);
		snprintf(target, sizeof(target), "releases/v%d", i);
		v = release(rels, name, "r", i);
		free(v);
		repoint(base, "current", ".current.tmp", target);
		if (i >= 4) {
			char *old;

			ck_assert(asprintf(&old, "%s/v%d", rels, i - 1) > 0);
			rm_rf(old);
			free(old);
		}
		ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), i);
		ck_assert(xdt_daemon_wait_log_count(d, RELOADING, i - 1, 1000));
	}
	/* nothing more to reload: one reload per swap */
	ck_assert(!xdt_daemon_wait_log_count(d, RELOADING, 5, 1000));
	ck_assert_int_eq(xdt_daemon_log_count(d, RELOADING), 4);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(cur);
	free(rels);
	free(base);
}
END_TEST

/* A ConfigMap generation directory's name, as the kubelet makes them. */
static void generation(char *buf, size_t size, int i)
{
	snprintf(buf, size, "..2026_11_26_10_00_%02d.%09d", i, 123456789 + i);
}

/*
 * The layout of a Kubernetes ConfigMap volume mounted at `mount`:
 * ..data -> ..2026_.., a generation directory holding the files, and
 * each visible file a link through ..data. An update writes the next
 * generation (here slowly: longer than watch_delay), renames a new
 * ..data_tmp over ..data, adds the links of new files and deletes the
 * old generation, as the kubelet does. The volume holds the file
 * `first`, and from the third generation on `second` too: with `key2`
 * NULL both are parts of the default snapshot (the volume is DIR/default/),
 * else `second` is the snapshot of `key2` (the volume is DIR).
 */
static void configmap_swaps(const char *snapdir, const char *mount,
			    const char *first, const char *second,
			    const char *key2)
{
	char gen[64], old[64], path[1024], target[64];
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s, *s2 = NULL;
	char *g;

	generation(gen, sizeof(gen), 1);
	g = subdir(mount, gen);
	write_in_place(g, first, "g1-a", 1);
	free(g);
	link_at(mount, "..data", gen);
	snprintf(target, sizeof(target), "..data/%s", first);
	link_at(mount, first, target);
	d = start(snapdir, "watch: true\nwatch_delay: 100ms");
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "w", "any");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 1);
	for (int i = 2; i <= 5; i++) {
		char prefix[16];

		snprintf(old, sizeof(old), "%s", gen);
		generation(gen, sizeof(gen), i);
		g = subdir(mount, gen);
		snprintf(prefix, sizeof(prefix), "g%d-a", i);
		write_in_place(g, first, prefix, i);
		/* half written for longer than watch_delay: not reloaded */
		xdtest_sleep_ms(400);
		if (i >= 3) {
			snprintf(prefix, sizeof(prefix), "g%d-b", i);
			write_in_place(g, second, prefix, 10 + i);
		}
		free(g);
		ck_assert_int_eq(xdt_daemon_log_count(d, RELOADING), i - 2);
		repoint(mount, "..data", "..data_tmp", gen);
		if (i == 3) {
			snprintf(target, sizeof(target), "..data/%s", second);
			link_at(mount, second, target);
		}
		snprintf(path, sizeof(path), "%s/%s", mount, old);
		rm_rf(path);
		if (key2 == NULL) {
			ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL),
					 i >= 3 ? i + 10 + i : i);
		} else {
			ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), i);
			if (i == 3)
				s2 = xdc_watch_clusters(c, "w2", key2);
			if (s2 != NULL)
				ck_assert_int_eq(xdc_next_clusters(s2, SERVED_MS, NULL),
						 10 + i);
		}
		ck_assert(xdt_daemon_wait_log_count(d, RELOADING, i - 1, 1000));
	}
	/* nothing more to reload: one reload per swap */
	ck_assert(!xdt_daemon_wait_log_count(d, RELOADING, 5, 1000));
	ck_assert_int_eq(xdt_daemon_log_count(d, RELOADING), 4);
	if (s2 != NULL)
		xdc_stream_free(s2);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
}

/* The snapshot directory is the volume: each file a snapshot. */
START_TEST(configmap_volume_swapped)
{
	char *dir = xdtest_snapdir();

	configmap_swaps(dir, dir, "default.yaml", "team.yaml", "team");
	free(dir);
}
END_TEST

/* The volume is a key's directory (DIR/default/): its files merged. */
START_TEST(configmap_key_dir_swapped)
{
	char *dir = xdtest_snapdir(), *mount = subdir(dir, "default");

	configmap_swaps(dir, mount, "a.yaml", "b.yaml", NULL);
	free(mount);
	free(dir);
}
END_TEST

/* DIR/NAME/default/{a,b}.yaml, `n` clusters each after `pad` bytes of
 * comment (files that take a while to read). */
static void padded_release(const char *dir, const char *name, int n,
			   size_t pad)
{
	char *r = subdir(dir, name), *k = subdir(r, "default");
	const char *files[] = {"a.yaml", "b.yaml"};

	for (int f = 0; f < 2; f++) {
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		ck_assert(m != NULL);
		for (size_t i = 0; i < pad / 64; i++)
			fprintf(m, "# %061zu\n", i);
		fputs("clusters:\n", m);
		for (int i = 0; i < n; i++)
			fprintf(m, "- {name: %s-%c-%d, type: STATIC, connect_timeout: 1s}\n",
				name, 'a' + f, i);
		ck_assert(fclose(m) == 0);
		free(xdtest_write_file(k, files[f], text));
		free(text);
	}
	free(k);
	free(r);
}

/*
 * Swaps in a row, some during reloads: each release's two files make
 * one snapshot (1 + 1 clusters, or 3 + 3), and a client must never be
 * served one file of each (4 clusters). A child process swaps `current`
 * between the two releases at uneven intervals while the client reads.
 */
START_TEST(swaps_never_mixed)
{
	char *base = xdtest_snapdir(), *rels = subdir(base, "releases"), *cur;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	int n, served[8] = {0}, status, last = 2;
	pid_t pid;

	padded_release(rels, "one", 1, 4u << 20);
	padded_release(rels, "three", 3, 4u << 20);
	link_at(base, "current", "releases/one");
	ck_assert(asprintf(&cur, "%s/current", base) > 0);
	d = start(cur, "watch: true\nwatch_delay: 10ms");
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "w", "any");
	ck_assert_int_eq(xdc_next_clusters(s, SERVED_MS, NULL), 2);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		unsigned seed = 7;

		for (int i = 1; i <= 120; i++) {
			repoint(base, "current", ".current.tmp",
				i % 2 ? "releases/three" : "releases/one");
			xdtest_sleep_ms(5 + (int)(rand_r(&seed) % 40));
		}
		_exit(0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0)
		if ((n = xdc_next_clusters(s, 100, NULL)) >= 0 && n < 8)
			served[last = n]++;
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	while ((n = xdc_next_clusters(s, 3000, NULL)) >= 0 && n < 8)
		served[last = n]++;
	ck_assert_msg(served[4] == 0, "served a mix of two releases %d times (%d of one, %d of the other)",
		      served[4], served[2], served[6]);
	ck_assert(served[2] > 0 && served[6] > 0);
	/* the last swap (the 120th) points at "one" */
	ck_assert_int_eq(last, 2);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(cur);
	free(rels);
	free(base);
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
	ck_assert_int_eq(xdt_daemon_log_count(d, "reloading"), 0);
	ck_assert_int_eq(xdt_daemon_log_count(d, "watching"), 0);
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
	tcase_add_test(tc, release_link_swapped);
	tcase_add_test(tc, configmap_volume_swapped);
	tcase_add_test(tc, configmap_key_dir_swapped);
	tcase_add_test(tc, swaps_never_mixed);
	tcase_add_test(tc, churn_reloads_within_watch_delay_max);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
