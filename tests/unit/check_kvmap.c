/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The etcd source's copy of the keys under its prefix (etcd/kvmap.c)
 * and how it becomes snapshot files (snapshot/files.c,
 * xd_snapkeys_from_texts): the names a directory would count, the same
 * refusals, errors named by the etcd key.
 */
#include <stdlib.h>
#include <string.h>

#include "etcd/kvmap.h"
#include "xdtest.h"

#define P "/xdsd/snapshots/"

static void put(struct xd_kvmap *m, const char *key, const char *value)
{
	xd_kvmap_put(m, key, strlen(key), value, strlen(value));
}

static char *diag_text(const struct xd_diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	xd_diag_print(d, f);
	fclose(f);
	return buf;
}

/* Sorted whatever the order of puts; a put replaces; a delete removes,
 * and deleting what is absent does nothing. */
START_TEST(sorted_put_replace_delete)
{
	struct xd_kvmap m = {0};

	put(&m, "b", "1");
	put(&m, "a", "2");
	put(&m, "c", "3");
	put(&m, "b", "four");
	ck_assert_uint_eq(m.n, 3);
	ck_assert_str_eq(m.v[0].key, "a");
	ck_assert_str_eq(m.v[1].key, "b");
	ck_assert_str_eq(m.v[1].value, "four");
	ck_assert_uint_eq(m.v[1].len, 4);
	ck_assert_str_eq(m.v[2].key, "c");
	/* a key given with its length, not NUL-terminated */
	xd_kvmap_delete(&m, "bx", 1);
	xd_kvmap_delete(&m, "zz", 2);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_str_eq(m.v[1].key, "c");
	xd_kvmap_clear(&m);
	ck_assert_uint_eq(m.n, 0);
}
END_TEST

/* Keys as files of a directory: <key>.yaml/.yml/.json and <key>/F.yaml
 * merged; other names, hidden ones, deeper ones and keys outside the
 * prefix are not snapshots. */
START_TEST(keys_as_files)
{
	struct xd_kvmap m = {0};
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_snapkey *keys;
	size_t n;

	put(&m, P "default.yaml", "clusters: []\n");
	put(&m, P "edge.json", "{}");
	put(&m, P "team/a.yaml", "{}");
	put(&m, P "team/b.yml", "{}");
	put(&m, P "team/deeper/c.yaml", "{}");
	put(&m, P "README", "not a snapshot");
	put(&m, P ".hidden.yaml", "{}");
	put(&m, "/other/x.yaml", "{}");
	xd_kvmap_snapshot_keys(&m, P, &keys, &n, &d);
	ck_assert_uint_eq(xd_diag_total(&d), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(keys[0].key, "default");
	ck_assert_str_eq(keys[0].files[0].path, P "default.yaml");
	ck_assert_str_eq(keys[0].files[0].text, "clusters: []\n");
	ck_assert_str_eq(keys[1].key, "edge");
	ck_assert(keys[1].files[0].json);
	ck_assert_str_eq(keys[2].key, "team");
	ck_assert_uint_eq(keys[2].nfiles, 2);
	ck_assert_str_eq(keys[2].files[1].path, P "team/b.yml");
	xd_snapdir_free(keys, n);
	xd_kvmap_clear(&m);
}
END_TEST

/* A key defined twice, a blank value, and no snapshot at all: errors
 * that name the etcd keys. */
START_TEST(refusals_name_the_key)
{
	struct xd_kvmap m = {0};
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_snapkey *keys;
	size_t n;
	char *text;

	put(&m, P "a.yaml", "{}");
	put(&m, P "a/x.yaml", "{}");
	put(&m, P "b.yaml", "  # nothing\n");
	xd_kvmap_snapshot_keys(&m, P, &keys, &n, &d);
	text = diag_text(&d);
	ck_assert_msg(strstr(text, "snapshot 'a' is also defined by " P "a/x.yaml") != NULL,
		      "%s", text);
	ck_assert_msg(strstr(text, P "b.yaml: the value is empty") != NULL, "%s",
		      text);
	free(text);
	xd_snapdir_free(keys, n);
	xd_diag_clear(&d);
	xd_kvmap_clear(&m);

	put(&m, P "notes.txt", "x");
	xd_kvmap_snapshot_keys(&m, P, &keys, &n, &d);
	ck_assert_uint_eq(n, 0);
	text = diag_text(&d);
	ck_assert_msg(strstr(text, "etcd prefix '" P "': no snapshots") != NULL,
		      "%s", text);
	free(text);
	xd_snapdir_free(keys, n);
	xd_diag_clear(&d);
	xd_kvmap_clear(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kvmap");
	TCase *tc = tcase_create("kvmap");

	tcase_add_test(tc, sorted_put_replace_delete);
	tcase_add_test(tc, keys_as_files);
	tcase_add_test(tc, refusals_name_the_key);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
