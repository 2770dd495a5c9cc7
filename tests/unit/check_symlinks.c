/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symlinks on the way to a path (daemon/symlinks.c), on real links
 * in a temporary directory: a Kubernetes ConfigMap volume's two levels,
 * a release link, absolute and relative targets, `..` after a link, a
 * dangling link and a loop.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/symlinks.h"
#include "xdtest.h"

/* The links reported, "DIR|NAME" one a line, DIR relative to `root`. */
struct met {
	const char *root;
	char text[2048];
};

static void record(void *arg, const char *dir, const char *name)
{
	struct met *m = arg;
	size_t len = strlen(m->root), used = strlen(m->text);
	const char *rel = strncmp(dir, m->root, len) == 0 ? dir + len : dir;

	snprintf(m->text + used, sizeof(m->text) - used, "%s|%s\n",
		 *rel != '\0' ? rel : "/", name);
}

/* A fresh directory, its path free of symlinks (as the walk reports
 * them), malloc'd. */
static char *root(void)
{
	char *dir = xdtest_snapdir(), *real = realpath(dir, NULL);

	ck_assert(real != NULL);
	free(dir);
	return real;
}

static void mk(const char *root, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ck_assert_msg(mkdir(p, 0755) == 0, "mkdir %s", p);
}

static void ln(const char *root, const char *target, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ck_assert_msg(symlink(target, p) == 0, "symlink %s", p);
}

static int walk(struct met *m, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", m->root, rel);
	m->text[0] = '\0';
	return xd_symlinks_walk(p, record, m);
}

START_TEST(configmap_volume)
{
	char *r = root();
	struct met m = {.root = r};

	mk(r, "vol");
	mk(r, "vol/..2026_11_26_10_00_00.123");
	free(xdtest_write_file(r, "vol/..2026_11_26_10_00_00.123/default.yaml",
			       "{}\n"));
	ln(r, "..2026_11_26_10_00_00.123", "vol/..data");
	ln(r, "..data/default.yaml", "vol/default.yaml");
	ck_assert_int_eq(walk(&m, "vol/default.yaml"), 0);
	ck_assert_str_eq(m.text, "/vol|default.yaml\n/vol|..data\n");
	ck_assert_int_eq(walk(&m, "vol"), 0);
	ck_assert_str_eq(m.text, "");
	free(r);
}
END_TEST

START_TEST(release_link_and_links_above)
{
	char *r = root(), abs[PATH_MAX];
	struct met m = {.root = r};

	mk(r, "srv");
	mk(r, "srv/releases");
	mk(r, "srv/releases/v41");
	ln(r, "releases/v41", "srv/current");
	snprintf(abs, sizeof(abs), "%s/srv", r);
	ln(r, abs, "xds"); /* an absolute link above it */
	ck_assert_int_eq(walk(&m, "xds/current"), 0);
	ck_assert_str_eq(m.text, "/|xds\n/srv|current\n");
	/* `..` after a link is taken from where the link led */
	ln(r, "releases/v41/..", "srv/up");
	ck_assert_int_eq(walk(&m, "srv/up/v41"), 0);
	ck_assert_str_eq(m.text, "/srv|up\n");
	free(r);
}
END_TEST

START_TEST(dangling_and_loop)
{
	char *r = root();
	struct met m = {.root = r};

	mk(r, "d");
	ln(r, "..gone", "d/..data");
	ln(r, "..data/x.yaml", "d/x.yaml");
	/* the links up to the missing target are reported all the same */
	ck_assert_int_eq(walk(&m, "d/x.yaml"), -1);
	ck_assert_str_eq(m.text, "/d|x.yaml\n/d|..data\n");
	ln(r, "b", "d/a");
	ln(r, "a", "d/b");
	ck_assert_int_eq(walk(&m, "d/a"), -1);
	ck_assert_int_eq((int)(strlen(m.text) / strlen("/d|a\n")),
			 XD_SYMLINKS_MAX_HOPS + 1);
	ck_assert_int_eq(walk(&m, "d/nothing"), -1);
	ck_assert_str_eq(m.text, "");
	free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symlinks");
	TCase *tc = tcase_create("walk");

	tcase_add_test(tc, configmap_volume);
	tcase_add_test(tc, release_link_and_links_above);
	tcase_add_test(tc, dangling_and_loop);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
