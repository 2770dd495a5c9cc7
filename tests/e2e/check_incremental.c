/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reloads that parse only the files that changed (snapshot/parsed.h),
 * end to end: the real daemon reloads a snapshot directory after each
 * kind of change, and what it serves (every resource's version, file
 * and line, every table's version, the snapshot's: /config_dump) must
 * be what a fresh daemon started on the same directory serves, while
 * its log says how many files the reload read and parsed; a file stat
 * finds unchanged is not even opened (inotify tells).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define RELOAD_MS 10000
/* Longer than XD_SNAPSHOT_RACY_NS: a file changed that long before it
 * was read is taken unchanged by stat from then on. */
#define SETTLE_MS 2300
#define SAVED "saved the last good state to "

struct fixture {
	char *dir, *key_dir; /* the snapshot directory; its key "default" */
	char *state;         /* state_dir: NULL, none */
	struct xdt_daemon *d;
	int reloads;
};

/* Clusters `prefix`0 .. `prefix`<n-1>, EDS, with their endpoints at
 * `port`: one file of the key, written aside and renamed over (a new
 * inode), or else rewritten in place. */
static void put_part(struct fixture *f, const char *name, const char *prefix,
		     int n, int port, bool renamed)
{
	char text[4096];
	size_t len = 0;

	len += (size_t)snprintf(text + len, sizeof(text) - len, "clusters:\n");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
			"- name: %s%d\n  type: EDS\n  connect_timeout: 1s\n"
			"  eds_cluster_config: {eds_config: {ads: {}}}\n",
			prefix, i);
	len += (size_t)snprintf(text + len, sizeof(text) - len, "endpoints:\n");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
			"- cluster_name: %s%d\n  endpoints:\n  - lb_endpoints:\n"
			"    - endpoint: {address: {socket_address: {address: 10.0.0.%d, port_value: %d}}}\n",
			prefix, i, i + 1, port);
	ck_assert(len < sizeof(text));
	if (renamed)
		xdtest_replace_file(f->key_dir, name, text);
	else
		free(xdtest_write_file(f->key_dir, name, text));
}

static void write_part(struct fixture *f, const char *name,
		       const char *prefix, int n, int port)
{
	put_part(f, name, prefix, n, port, true);
}

/* A route configuration whose virtual hosts route to clusters of a.yaml
 * and b.yaml: references across the key's files. */
static const char routes_yaml[] =
	"routes:\n"
	"- name: main\n"
	"  virtual_hosts:\n"
	"  - name: one\n"
	"    domains: [one.example]\n"
	"    routes: [{match: {prefix: /}, route: {cluster: a0}}]\n"
	"  - name: two\n"
	"    domains: [two.example]\n"
	"    routes: [{match: {prefix: /}, route: {cluster: b1}}]\n";

/* A daemon on `dir`, keeping its last good state in `state` (NULL:
 * none). */
static struct xdt_daemon *start_with(const char *dir, const char *state)
{
	char cfg[1024];

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\n"
		 "snapshots: %s\nlog_level: info\nstate_dir: %s\n", dir,
		 state != NULL ? state : "off");
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static struct xdt_daemon *start(const char *dir)
{
	return start_with(dir, NULL);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_stop(d, 5000);
}

/* default/{a,b,c,routes}.yaml and edge.yaml, served, the last good
 * state kept in `state` (NULL: none). */
static void setup_with(struct fixture *f, const char *state)
{
	memset(f, 0, sizeof(*f));
	f->dir = xdtest_snapdir();
	ck_assert(asprintf(&f->key_dir, "%s/default", f->dir) > 0);
	ck_assert(mkdir(f->key_dir, 0755) == 0);
	write_part(f, "a.yaml", "a", 3, 8080);
	write_part(f, "b.yaml", "b", 3, 8080);
	write_part(f, "c.yaml", "c", 3, 8080);
	xdtest_replace_file(f->key_dir, "routes.yaml", routes_yaml);
	xdtest_write_clusters(f->dir, "edge.yaml", "e", 2);
	f->state = state != NULL ? strdup(state) : NULL;
	f->d = start_with(f->dir, f->state);
}

static void setup(struct fixture *f)
{
	setup_with(f, NULL);
}

static void teardown(struct fixture *f)
{
	stop(f->d);
	free(f->key_dir);
	free(f->dir);
	free(f->state);
}

/* What the daemon serves of `key`, all but when it began serving it. */
static json_t *dump(const struct xdt_daemon *d, const char *key)
{
	char path[128];
	int status;
	json_t *doc;

	snprintf(path, sizeof(path), "/config_dump?snapshot=%s", key);
	doc = xdt_admin_json(d, "GET", path, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(json_object_del(doc, "since"), 0);
	return doc;
}

/* `doc` without where its resources were defined. */
static void drop_where(json_t *doc)
{
	size_t i, j;
	json_t *type, *res;

	json_array_foreach(json_object_get(doc, "types"), i, type)
		json_array_foreach(json_object_get(type, "resources"), j, res) {
			json_object_del(res, "file");
			json_object_del(res, "line");
		}
}

/*
 * Every key served by f->d is served alike by a daemon that loads the
 * directory afresh: versions, resources and, with `where`, their files
 * and lines. (A reload keeps a table equal in content to the one served,
 * and so the places its resources were first defined at: a file renamed
 * changes no version.)
 */
static void same_as_fresh(const struct fixture *f, bool where)
{
	static const char *const keys[] = {"default", "edge"};
	struct xdt_daemon *fresh = start(f->dir);

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *a = dump(f->d, keys[i]), *b = dump(fresh, keys[i]);

		if (!where) {
			drop_where(a);
			drop_where(b);
		}

		if (!json_equal(a, b)) {
			char *sa = json_dumps(a, JSON_SORT_KEYS);
			char *sb = json_dumps(b, JSON_SORT_KEYS);

			fprintf(stderr, "reloaded:\n%s\nloaded afresh:\n%s\n",
				sa, sb);
			ck_abort_msg("snapshot '%s' reloaded is not as loaded afresh",
				     keys[i]);
		}
		json_decref(a);
		json_decref(b);
	}
	stop(fresh);
}

/* The last line of the log holding `needle`, copied. */
static char *last_line(const struct xdt_daemon *d, const char *needle)
{
	char *log = xdt_daemon_log(d), *p = log, *hit = NULL, *line;

	while ((p = strstr(p, needle)) != NULL)
		hit = p++;
	ck_assert_msg(hit != NULL, "no '%s' in the log", needle);
	line = strndup(hit, strcspn(hit, "\n"));
	free(log);
	return line;
}

/* POST /reload: accepted and done. */
static void reload_done(struct fixture *f)
{
	char *body;
	int status;

	body = xdt_admin(f->d, "POST", "/reload", NULL, &status, NULL);
	ck_assert_msg(status == 200, "reload refused: %s", body);
	free(body);
	f->reloads++;
	ck_assert(xdt_daemon_wait_log_count(f->d, "reloaded ", f->reloads,
					    RELOAD_MS));
}

/* The last reload parsed `parsed` files and, unless `read` is -1, read
 * `read` of them from disk. */
static void reload_counted(const struct fixture *f, int parsed, int read)
{
	char want[96], *line = last_line(f->d, "reloaded ");
	int n = snprintf(want, sizeof(want), "(%d file%s parsed)", parsed,
			 parsed == 1 ? "" : "s");

	if (read >= 0)
		snprintf(want + n, sizeof(want) - (size_t)n, "; %d file%s read",
			 read, read == 1 ? "" : "s");
	ck_assert_msg(strstr(line, want) != NULL, "'%s' is not '... %s'",
		      line, want);
	free(line);
}

/* POST /reload: accepted, having parsed `parsed` files. */
static void reload_ok(struct fixture *f, int parsed)
{
	reload_done(f);
	reload_counted(f, parsed, -1);
}

/* POST /reload: accepted, having read `read` files and parsed `parsed`. */
static void reload_read(struct fixture *f, int parsed, int read)
{
	reload_done(f);
	reload_counted(f, parsed, read);
}

/* Every file of the fixture read by a reload after SETTLE_MS: stat is
 * trusted for each from now on, until it changes. */
static void settle(struct fixture *f)
{
	xdtest_sleep_ms(SETTLE_MS);
	reload_ok(f, 0);
}

/* A reload that parses `parsed` files and serves what a fresh daemon
 * does, files and lines included. */
static void reloaded_as_fresh(struct fixture *f, int parsed)
{
	reload_ok(f, parsed);
	same_as_fresh(f, true);
}

/* Whether what f->d serves of "default" is `doc` (`same`) or not. */
static void serves(const struct fixture *f, const json_t *doc, bool same)
{
	json_t *now = dump(f->d, "default");

	ck_assert_msg(json_equal(doc, now) == same, "served %s",
		      same ? "something else" : "the same");
	json_decref(now);
}

/* POST /reload: refused with the error `want` among its errors, and
 * `served` still served. */
static void reload_refused(struct fixture *f, const json_t *served,
			   const char *want)
{
	int status;
	char *body = xdt_admin(f->d, "POST", "/reload", NULL, &status, NULL);

	ck_assert_msg(status == 422, "reload not refused (%d): %s", status,
		      body);
	ck_assert_msg(strstr(body, want) != NULL, "no '%s' in %s", want, body);
	free(body);
	serves(f, served, true);
}

START_TEST(one_file_changed)
{
	struct fixture f;

	setup(&f);
	write_part(&f, "b.yaml", "b", 3, 9090);
	reloaded_as_fresh(&f, 1);
	/* the route configuration refers to b1 still */
	write_part(&f, "b.yaml", "b", 2, 9090);
	reloaded_as_fresh(&f, 1);
	teardown(&f);
}
END_TEST

/* A file added is the one parsed; a file deleted leaves none to parse. */
START_TEST(file_added_then_deleted)
{
	struct fixture f;
	char *path;

	setup(&f);
	write_part(&f, "d.yaml", "d", 4, 8080);
	reloaded_as_fresh(&f, 1);
	ck_assert(asprintf(&path, "%s/c.yaml", f.key_dir) > 0);
	ck_assert(unlink(path) == 0);
	free(path);
	reloaded_as_fresh(&f, 0);
	teardown(&f);
}
END_TEST

START_TEST(file_renamed)
{
	struct fixture f;
	char *from, *to;

	setup(&f);
	ck_assert(asprintf(&from, "%s/c.yaml", f.key_dir) > 0);
	ck_assert(asprintf(&to, "%s/0-first.yaml", f.key_dir) > 0);
	ck_assert(rename(from, to) == 0);
	/* errors would name its new path: parsed again */
	reload_ok(&f, 1);
	same_as_fresh(&f, false);
	free(from);
	free(to);
	teardown(&f);
}
END_TEST

/* A broken file among good ones is refused with its file and line, the
 * last good snapshot stays, and once fixed the reload matches a full
 * load. */
START_TEST(broken_file_among_good)
{
	struct fixture f;
	json_t *before;
	char *want;

	setup(&f);
	before = dump(f.d, "default");
	xdtest_replace_file(f.key_dir, "b.yaml",
			    "clusters:\n- name: b0\n  connect_timeout: never\n");
	ck_assert(asprintf(&want, "%s/b.yaml:3:20: clusters[0].connect_timeout: malformed duration 'never'",
			   f.key_dir) > 0);
	reload_refused(&f, before, want);
	free(want);

	/* a name defined in two files: the second one's file and line, and
	 * the first's, as a full load says */
	write_part(&f, "b.yaml", "a", 1, 8080);
	ck_assert(asprintf(&want, "%s/b.yaml:2:3: clusters[0]: duplicate cluster 'a0' (first at %s/a.yaml:2)",
			   f.key_dir, f.key_dir) > 0);
	reload_refused(&f, before, want);
	free(want);

	/* fixed: only it parsed, and served as a fresh daemon would */
	write_part(&f, "b.yaml", "b", 3, 9090);
	reloaded_as_fresh(&f, 1);
	json_decref(before);
	teardown(&f);
}
END_TEST

/* A file changed, then changed back: the versions first served. */
START_TEST(changed_back)
{
	struct fixture f;
	json_t *first;

	setup(&f);
	first = dump(f.d, "default");
	write_part(&f, "a.yaml", "a", 3, 9090);
	reload_ok(&f, 1);
	serves(&f, first, false);
	write_part(&f, "a.yaml", "a", 3, 8080);
	reload_ok(&f, 1);
	serves(&f, first, true);
	json_decref(first);
	same_as_fresh(&f, true);
	teardown(&f);
}
END_TEST

/* b.yaml rewritten in place with its endpoints at `port` (a port of as
 * many digits: the same length), its mtime put back to what `was` says
 * (a coarse clock's, `touch -d`'s, `cp -p`'s). */
static void rewrite_keeping_mtime(struct fixture *f, int port,
				  const struct stat *was)
{
	struct timespec times[2] = {was->st_atim, was->st_mtim};
	struct stat now;
	char *path;

	ck_assert(asprintf(&path, "%s/b.yaml", f->key_dir) > 0);
	put_part(f, "b.yaml", "b", 3, port, false);
	ck_assert(utimensat(AT_FDCWD, path, times, 0) == 0);
	ck_assert(stat(path, &now) == 0);
	ck_assert(now.st_ino == was->st_ino);
	ck_assert_int_eq(now.st_size, was->st_size);
	ck_assert(now.st_mtim.tv_sec == was->st_mtim.tv_sec &&
		  now.st_mtim.tv_nsec == was->st_mtim.tv_nsec);
	free(path);
}

/* New bytes of the same size under the same mtime, in place (an edit
 * that puts the time back, `cp -p`), in a file stat was trusted for:
 * only its ctime moved, and it is read again and told by its bytes. */
START_TEST(same_size_and_mtime)
{
	struct fixture f;
	struct stat before;
	char *path;
	json_t *first;

	setup(&f);
	settle(&f);
	first = dump(f.d, "default");
	ck_assert(asprintf(&path, "%s/b.yaml", f.key_dir) > 0);
	ck_assert(stat(path, &before) == 0);
	rewrite_keeping_mtime(&f, 8081, &before);
	reload_read(&f, 1, 1);
	serves(&f, first, false);
	json_decref(first);
	same_as_fresh(&f, true);
	free(path);
	teardown(&f);
}
END_TEST

/* An inotify instance told of every open and read of `n` files. */
static int watch_reads(const char *const *paths, size_t n)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	ck_assert_msg(fd >= 0, "inotify: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(inotify_add_watch(fd, paths[i],
						IN_OPEN | IN_ACCESS) >= 0,
			      "inotify: %s: %s", paths[i], strerror(errno));
	return fd;
}

/* The opens and reads told so far, by the name of the first. */
static int reads_told(int fd, const char *const *paths, const char **first)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(fd, buf, sizeof(buf));
	int count = 0;

	if (n < 0) {
		ck_assert_msg(errno == EAGAIN, "inotify: %s", strerror(errno));
		return 0;
	}
	for (char *p = buf; p < buf + n;) {
		const struct inotify_event *ev = (const struct inotify_event *)p;

		if (count++ == 0)
			*first = paths[ev->wd - 1]; /* watches count from 1 */
		p += sizeof(*ev) + ev->len;
	}
	return count;
}

/* A reload after one file changed reads that file alone: the others,
 * found unchanged by stat, are not even opened. */
START_TEST(unchanged_files_not_read)
{
	struct fixture f;
	char *paths[4];
	const char *first = NULL;
	int fd, told;

	setup(&f);
	settle(&f);
	ck_assert(asprintf(&paths[0], "%s/a.yaml", f.key_dir) > 0);
	ck_assert(asprintf(&paths[1], "%s/c.yaml", f.key_dir) > 0);
	ck_assert(asprintf(&paths[2], "%s/routes.yaml", f.key_dir) > 0);
	ck_assert(asprintf(&paths[3], "%s/edge.yaml", f.dir) > 0);
	fd = watch_reads((const char *const *)paths, 4);
	write_part(&f, "b.yaml", "b", 3, 9090);
	reload_done(&f);
	told = reads_told(fd, (const char *const *)paths, &first);
	ck_assert_msg(told == 0, "%d opens and reads of unchanged files, the first of %s",
		      told, first);
	reload_counted(&f, 1, 1);
	close(fd);
	for (int i = 0; i < 4; i++)
		free(paths[i]);
	same_as_fresh(&f, true);
	teardown(&f);
}
END_TEST

/*
 * A file rewritten in place within the same second with the same size
 * and mtime (what a filesystem counting seconds, or a write in the same
 * clock tick, leaves) is seen; and stat is not trusted for a file read
 * within XD_SNAPSHOT_RACY_NS of its change: it is read again (and
 * hashed) on each reload until a read finds it settled.
 */
START_TEST(racy_rewrite)
{
	struct fixture f;
	struct stat v1;
	json_t *first;
	char *path;

	setup(&f);
	settle(&f);
	ck_assert(asprintf(&path, "%s/b.yaml", f.key_dir) > 0);
	put_part(&f, "b.yaml", "b", 3, 9090, false);
	reload_read(&f, 1, 1);
	first = dump(f.d, "default");
	ck_assert(stat(path, &v1) == 0);
	rewrite_keeping_mtime(&f, 9091, &v1);
	reload_read(&f, 1, 1);
	serves(&f, first, false);
	json_decref(first);
	same_as_fresh(&f, true);
	/* unchanged, but read just after its change: read again */
	reload_read(&f, 0, 1);
	xdtest_sleep_ms(SETTLE_MS);
	reload_read(&f, 0, 1); /* the last read was still too close */
	reload_read(&f, 0, 0);
	free(path);
	teardown(&f);
}
END_TEST

/* The tables alive in f->d, from its statistics line (SIGUSR1). */
static long tables_alive(struct fixture *f, int nth)
{
	char *line, *p;
	long n;

	xdt_daemon_signal(f->d, SIGUSR1);
	ck_assert(xdt_daemon_wait_log_count(f->d, "info: stats: ", nth, 5000));
	line = last_line(f->d, "info: stats: ");
	p = strstr(line, "tables alive ");
	ck_assert_msg(p != NULL, "%s", line);
	n = strtol(p + strlen("tables alive "), NULL, 10);
	free(line);
	return n;
}

/* A reload that changes one file's endpoints keeps one copy of that
 * file's clusters: the one served, not a second parsed from the same
 * bytes. */
START_TEST(one_copy_of_what_did_not_change)
{
	struct fixture f;
	long before;

	setup(&f);
	before = tables_alive(&f, 1);
	write_part(&f, "b.yaml", "b", 3, 9090); /* the lines stay */
	reloaded_as_fresh(&f, 1);
	ck_assert_int_eq(tables_alive(&f, 2), before);
	teardown(&f);
}
END_TEST

/* Every byte of the file at `path` is in the `n` bytes of `state`. */
static void holds_file(const char *state, size_t n, const char *path)
{
	size_t len;
	char *text = xdtest_read_file(path, &len);

	ck_assert_msg(text != NULL && len > 0, "cannot read %s", path);
	ck_assert_msg(memmem(state, n, text, len) != NULL,
		      "the last good state lacks %s as it is", path);
	free(text);
}

/* The last good state saved after a reload that read one file holds
 * every file's bytes, those it took unchanged from the load before. */
START_TEST(last_good_state_has_every_file)
{
	static const char *const names[] = {"a.yaml", "b.yaml", "c.yaml",
					    "routes.yaml"};
	struct fixture f;
	char *state = xdtest_snapdir(), *file, *path, *saved;
	size_t n;

	setup_with(&f, state);
	ck_assert(xdt_daemon_wait_log_count(f.d, SAVED, 1, RELOAD_MS));
	settle(&f);
	/* Nothing changed: the state on disk is kept as it is. */
	ck_assert(xdt_daemon_wait_log(f.d, "holds these snapshots already",
				      RELOAD_MS));
	write_part(&f, "b.yaml", "b", 3, 9090);
	reload_read(&f, 1, 1);
	ck_assert(xdt_daemon_wait_log_count(f.d, SAVED, 2, RELOAD_MS));
	ck_assert(asprintf(&file, "%s/snapshots.state", state) > 0);
	saved = xdtest_read_file(file, &n);
	ck_assert_msg(saved != NULL, "no state in %s", file);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ck_assert(asprintf(&path, "%s/%s", f.key_dir, names[i]) > 0);
		holds_file(saved, n, path);
		free(path);
	}
	ck_assert(asprintf(&path, "%s/edge.yaml", f.dir) > 0);
	holds_file(saved, n, path);
	free(path);
	free(saved);
	free(file);
	free(state);
	teardown(&f);
}
END_TEST

/* Nothing changed: nothing parsed, nothing new served. */
START_TEST(nothing_changed)
{
	struct fixture f;
	json_t *first;

	setup(&f);
	first = dump(f.d, "default");
	reload_ok(&f, 0);
	serves(&f, first, true);
	json_decref(first);
	teardown(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("incremental");
	TCase *tc = tcase_create("incremental");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_file_changed);
	tcase_add_test(tc, file_added_then_deleted);
	tcase_add_test(tc, file_renamed);
	tcase_add_test(tc, broken_file_among_good);
	tcase_add_test(tc, changed_back);
	tcase_add_test(tc, same_size_and_mtime);
	tcase_add_test(tc, unchanged_files_not_read);
	tcase_add_test(tc, racy_rewrite);
	tcase_add_test(tc, last_good_state_has_every_file);
	tcase_add_test(tc, nothing_changed);
	tcase_add_test(tc, one_copy_of_what_did_not_change);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return xdtest_run(suite());
}
