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
	struct xd_kvchanges c = {0};

	xd_kvchanges_put(&c, key, strlen(key), value, strlen(value));
	xd_kvmap_apply(m, &c);
}

static void del(struct xd_kvmap *m, const char *key, size_t klen)
{
	struct xd_kvchanges c = {0};

	xd_kvchanges_delete(&c, key, klen);
	xd_kvmap_apply(m, &c);
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
	ck_assert_str_eq(xd_snapbytes_text(m.v[1].value), "four");
	ck_assert_uint_eq(m.v[1].len, 4);
	ck_assert_str_eq(m.v[2].key, "c");
	/* a key given with its length, not NUL-terminated */
	del(&m, "bx", 1);
	del(&m, "zz", 2);
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

/* The changes of one list, in any key order, applied in one merge: the
 * last change of a key wins, a delete of a key put earlier in the same
 * list removes it, and a reset (a Range) empties the map first. */
START_TEST(changes_merged_in_order)
{
	struct xd_kvmap m = {0};
	struct xd_kvchanges c = {0}, more = {0};

	put(&m, "b", "old");
	put(&m, "d", "kept");
	xd_kvchanges_put(&c, "c", 1, "1", 1);
	xd_kvchanges_put(&c, "a", 1, "2", 1);
	xd_kvchanges_put(&c, "b", 1, "first", 5);
	xd_kvchanges_put(&c, "b", 1, "second", 6);
	xd_kvchanges_put(&c, "e", 1, "gone", 4);
	xd_kvchanges_delete(&c, "e", 1);
	xd_kvchanges_delete(&c, "zz", 2);
	xd_kvchanges_put(&more, "f", 1, "3", 1);
	xd_kvchanges_append(&c, &more);
	ck_assert_uint_eq(more.n, 0);
	xd_kvmap_apply(&m, &c);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_uint_eq(m.n, 5);
	ck_assert_str_eq(m.v[0].key, "a");
	ck_assert_str_eq(m.v[1].key, "b");
	ck_assert_str_eq(xd_snapbytes_text(m.v[1].value), "second");
	ck_assert_str_eq(m.v[2].key, "c");
	ck_assert_str_eq(m.v[3].key, "d");
	ck_assert_str_eq(xd_snapbytes_text(m.v[3].value), "kept");
	ck_assert_str_eq(m.v[4].key, "f");

	/* nothing appended (a watch event of xdsd's own keys only): the
	 * changes stay as they were */
	xd_kvchanges_put(&c, "g", 1, "5", 1);
	xd_kvchanges_append(&c, &more);
	ck_assert_uint_eq(c.n, 1);
	ck_assert(!c.reset);
	xd_kvmap_apply(&m, &c);
	ck_assert_uint_eq(m.n, 6);

	/* a reset appended supersedes the changes before it */
	xd_kvchanges_put(&c, "x", 1, "lost", 4);
	more.reset = true;
	xd_kvchanges_put(&more, "y", 1, "4", 1);
	xd_kvchanges_append(&c, &more);
	ck_assert(c.reset);
	ck_assert_uint_eq(c.n, 1);
	xd_kvmap_apply(&m, &c);
	ck_assert_uint_eq(m.n, 1);
	ck_assert_str_eq(m.v[0].key, "y");
	xd_kvmap_clear(&m);
}
END_TEST

/* A value over the limit of a snapshot file is held by its size alone
 * and fails the load that reads it, naming the key, as a file that
 * large fails a load of the directory; the values read are shared with
 * the files, not copied. */
START_TEST(too_large_and_shared)
{
	struct xd_kvmap m = {0};
	struct xd_kvchanges c = {0};
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_snapkey *keys;
	size_t n;
	char *text;

	put(&m, P "default.yaml", "{}");
	/* the size is all a too large value is noted by: no bytes read */
	xd_kvchanges_put(&c, P "big.yaml", strlen(P "big.yaml"), NULL,
			 (size_t)XD_SNAPSHOT_MAX_FILE + 1);
	ck_assert_ptr_null(c.v[0].kv.value);
	xd_kvmap_apply(&m, &c);
	xd_kvmap_snapshot_keys(&m, P, &keys, &n, &d);
	text = diag_text(&d);
	ck_assert_msg(strstr(text, P "big.yaml: 268435457 bytes: larger than the limit of 256 MiB") != NULL,
		      "%s", text);
	free(text);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(keys[1].key, "default");
	ck_assert_ptr_eq(keys[1].files[0].text, xd_snapbytes_text(m.v[1].value));
	xd_snapdir_free(keys, n);
	xd_diag_clear(&d);
	xd_kvmap_clear(&m);
}
END_TEST

/* Which names count is the directory's rule, in one place. */
START_TEST(names_that_count)
{
	ck_assert(xd_snapshot_name_counts("default.yaml"));
	ck_assert(xd_snapshot_name_counts("edge.json"));
	ck_assert(xd_snapshot_name_counts("team/a.yml"));
	ck_assert(!xd_snapshot_name_counts("lock"));
	ck_assert(!xd_snapshot_name_counts("heartbeat"));
	ck_assert(!xd_snapshot_name_counts(".hidden.yaml"));
	ck_assert(!xd_snapshot_name_counts("team/.x.yaml"));
	ck_assert(!xd_snapshot_name_counts("team/deeper/c.yaml"));
	ck_assert(!xd_snapshot_name_counts("/a.yaml"));
	ck_assert(!xd_snapshot_name_counts("README"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kvmap");
	TCase *tc = tcase_create("kvmap");

	tcase_add_test(tc, sorted_put_replace_delete);
	tcase_add_test(tc, keys_as_files);
	tcase_add_test(tc, refusals_name_the_key);
	tcase_add_test(tc, changes_merged_in_order);
	tcase_add_test(tc, too_large_and_shared);
	tcase_add_test(tc, names_that_count);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
