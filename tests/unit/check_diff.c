/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The preview of a reload without a daemon: the line diff of two texts
 * (util/linediff.h) hunk by hunk and within its bound, and the diff of
 * two snapshot sets loaded from real files (snapshot/diff.h): keys and
 * resources added, removed and changed, versions, the resource text,
 * the summary that lists nothing, and the bound on what is listed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "snapshot/diff.h"
#include "snapshot/loader.h"
#include "util/buf.h"
#include "util/linediff.h"
#include "xdtest.h"

static struct xd_schema *schema;

/* The diff of a and b as a string (malloc'd); *cut set. */
static char *ldiff(const char *a, const char *b, size_t max, bool *cut)
{
	struct xd_buf out = XD_BUF_INIT;
	size_t len;

	*cut = xd_linediff(&out, a, strlen(a), b, strlen(b), max);
	xd_buf_putc(&out, '\0');
	return (char *)xd_buf_steal(&out, &len);
}

START_TEST(linediff_hunks)
{
	bool cut;
	char *d;

	d = ldiff("a\nb\nc\n", "a\nb\nc\n", 4096, &cut);
	ck_assert_str_eq(d, "");
	ck_assert(!cut);
	free(d);

	/* one line changed among eight: three lines of context around */
	d = ldiff("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n", 4096,
		  &cut);
	ck_assert_str_eq(d, "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
	free(d);

	/* changes far apart: two hunks */
	d = ldiff("a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n",
		  4096, &cut);
	ck_assert_str_eq(d, "@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n"
			    "@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-b\n+B\n");
	free(d);

	/* from nothing, and to nothing; a last line without its newline */
	d = ldiff("", "x\ny", 4096, &cut);
	ck_assert_str_eq(d, "@@ -0,0 +1,2 @@\n+x\n+y\n");
	free(d);
	d = ldiff("x\n", "", 4096, &cut);
	ck_assert_str_eq(d, "@@ -1,1 +0,0 @@\n-x\n");
	free(d);

	/* an insertion keeps what follows as context */
	d = ldiff("a\nb\n", "a\nnew\nb\n", 4096, &cut);
	ck_assert_str_eq(d, "@@ -1,2 +1,3 @@\n a\n+new\n b\n");
	free(d);
}
END_TEST

START_TEST(linediff_bounded)
{
	struct xd_buf a = XD_BUF_INIT, b = XD_BUF_INIT;
	bool cut;
	char *d;

	for (int i = 0; i < 2000; i++) {
		xd_buf_printf(&a, "line %d\n", i);
		xd_buf_printf(&b, "line %d changed\n", i);
	}
	xd_buf_putc(&a, '\0');
	xd_buf_putc(&b, '\0');
	d = ldiff((char *)a.data, (char *)b.data, 1000, &cut);
	ck_assert(cut);
	ck_assert_uint_le(strlen(d), 1000);
	ck_assert_msg(strstr(d, "@@ (diff cut short) @@\n") != NULL, "%s", d);
	ck_assert(strncmp(d, "@@ -1,2000 +1,2000 @@\n-line 0\n", 30) == 0);
	free(d);
	/* past the cell bound: every line out, every line in, uncut */
	d = ldiff((char *)a.data, (char *)b.data, 1 << 20, &cut);
	ck_assert(!cut);
	ck_assert_msg(strstr(d, "-line 1999\n+line 0 changed\n") != NULL, "coarse diff");
	free(d);
	xd_buf_free(&a);
	xd_buf_free(&b);
}
END_TEST

/* The snapshots of `files` (name, text, ..., NULL) in a new directory. */
static struct xd_snapshot **load(const char *const *files, size_t *n)
{
	char *dir = xdtest_snapdir();
	struct xd_load l;
	struct xd_snapshot **s;

	for (; files[0] != NULL; files += 2)
		free(xdtest_write_file(dir, files[0], files[1]));
	xd_load_dir(schema, dir, NULL, 0, &l);
	ck_assert_msg(l.rc == 0, "%s", l.diag.count ? l.diag.msgs[0] : "?");
	s = xd_load_take(&l, n);
	xd_load_free(&l);
	free(dir);
	return s;
}

static void unload(struct xd_snapshot **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xd_snapshot_unref(s[i]);
	free(s);
}

static const char *cluster(const char *name, const char *timeout)
{
	static char buf[8][256];
	static int k;

	k = (k + 1) % 8; /* room for every call of one test */
	snprintf(buf[k], sizeof(buf[k]),
		 "clusters:\n- name: %s\n  connect_timeout: %s\n  type: STATIC\n",
		 name, timeout);
	return buf[k];
}

START_TEST(snapshot_sets)
{
	const char *const before[] = {
		"default.yaml", cluster("a", "1s"),
		"edge.yaml", cluster("e", "1s"),
		"gone.yaml", cluster("g", "1s"),
		NULL,
	};
	const char *const after[] = {
		"default.yaml", "clusters:\n- name: a\n  connect_timeout: 2s\n  type: STATIC\n"
				"- name: b\n  connect_timeout: 1s\n  type: STATIC\n",
		"edge.yaml", cluster("e", "1s"),
		"new.yaml", cluster("n", "1s"),
		NULL,
	};
	size_t nb, na;
	struct xd_snapshot **b = load(before, &nb), **a = load(after, &na);
	struct xd_diff *d = xd_diff_new(b, nb, a, na, schema);
	const struct xd_diff_key *k;
	const struct xd_diff_section *s;

	/* edge is the same: left out */
	ck_assert_uint_eq(d->nkeys, 3);
	ck_assert(xd_diff_find(d, "edge") == NULL);
	ck_assert_uint_eq(d->added, 2);   /* b, n */
	ck_assert_uint_eq(d->removed, 1); /* g */
	ck_assert_uint_eq(d->changed, 1); /* a */
	ck_assert(!d->cut);

	k = xd_diff_find(d, "default");
	ck_assert(k != NULL && k->change == XD_DIFF_CHANGED);
	ck_assert_str_eq(k->before, xd_snapshot_version(b[0]));
	ck_assert_str_eq(k->after, xd_snapshot_version(a[0]));
	ck_assert_uint_eq(k->nsections, 1);
	s = &k->sections[0];
	ck_assert_int_eq(s->section, XD_CLUSTER);
	ck_assert_uint_eq(s->nres, 2);
	ck_assert_str_eq(s->res[0].name, "a");
	ck_assert_int_eq(s->res[0].change, XD_DIFF_CHANGED);
	ck_assert_str_eq(s->res[0].before,
			 xd_table_at(xd_snapshot_table(b[0], XD_CLUSTER), 0)->version);
	ck_assert_str_ne(s->res[0].before, s->res[0].after);
	ck_assert_msg(strstr(s->res[0].text, "-connect_timeout: \"1s\"\n"
					     "+connect_timeout: \"2s\"\n") != NULL,
		      "%s", s->res[0].text);
	ck_assert_msg(strncmp(s->res[0].text, "@@ -", 4) == 0, "%s", s->res[0].text);
	ck_assert_str_eq(s->res[1].name, "b");
	ck_assert_int_eq(s->res[1].change, XD_DIFF_ADDED);
	ck_assert_str_eq(s->res[1].before, "");
	ck_assert_msg(strstr(s->res[1].text, "+name: b\n") != NULL, "%s", s->res[1].text);

	k = xd_diff_find(d, "gone");
	ck_assert(k != NULL && k->change == XD_DIFF_REMOVED);
	ck_assert_str_eq(k->after, "");
	ck_assert_uint_eq(k->sections[0].removed, 1);
	ck_assert_msg(strstr(k->sections[0].res[0].text, "-name: g\n") != NULL, "removed text");
	k = xd_diff_find(d, "new");
	ck_assert(k != NULL && k->change == XD_DIFF_ADDED);
	ck_assert_str_eq(k->before, "");
	xd_diff_free(d);

	/* the summary: the same counts, the resources named, no text */
	d = xd_diff_new(b, nb, a, na, NULL);
	ck_assert_uint_eq(d->nkeys, 3);
	ck_assert_uint_eq(d->added + d->removed + d->changed, 4);
	k = xd_diff_find(d, "default");
	ck_assert_uint_eq(k->sections[0].changed, 1);
	ck_assert_uint_eq(k->sections[0].nres, 2);
	ck_assert_str_eq(k->sections[0].res[0].name, "a");
	ck_assert_int_eq(k->sections[0].res[0].change, XD_DIFF_CHANGED);
	ck_assert_str_ne(k->sections[0].res[0].before, k->sections[0].res[0].after);
	ck_assert_ptr_null(k->sections[0].res[0].text);
	ck_assert_uint_eq(d->listed, 4);
	ck_assert_uint_eq(d->text_bytes, 0);
	ck_assert(!d->cut);
	xd_diff_free(d);

	/* the same set: nothing */
	d = xd_diff_new(b, nb, b, nb, schema);
	ck_assert_uint_eq(d->nkeys, 0);
	xd_diff_free(d);
	unload(b, nb);
	unload(a, na);
}
END_TEST

/* More changed resources than a diff lists: counted whole, cut. */
START_TEST(snapshot_listing_bounded)
{
	struct xd_buf t1 = XD_BUF_INIT, t2 = XD_BUF_INIT;
	size_t n1, n2, listed = 0;
	struct xd_snapshot **b, **a;
	struct xd_diff *d;

	xd_buf_printf(&t1, "clusters:\n");
	xd_buf_printf(&t2, "clusters:\n");
	for (int i = 0; i < XD_DIFF_MAX_LISTED + 10; i++) {
		xd_buf_printf(&t1, "- {name: c%d, connect_timeout: 1s, type: STATIC}\n", i);
		xd_buf_printf(&t2, "- {name: c%d, connect_timeout: 2s, type: STATIC}\n", i);
	}
	xd_buf_putc(&t1, '\0');
	xd_buf_putc(&t2, '\0');
	b = load((const char *const[]){"default.yaml", (char *)t1.data, NULL}, &n1);
	a = load((const char *const[]){"default.yaml", (char *)t2.data, NULL}, &n2);
	d = xd_diff_new(b, n1, a, n2, schema);
	ck_assert_uint_eq(d->changed, XD_DIFF_MAX_LISTED + 10);
	ck_assert(d->cut);
	for (size_t s = 0; s < d->keys[0].nsections; s++)
		listed += d->keys[0].sections[s].nres;
	ck_assert_uint_eq(listed, XD_DIFF_MAX_LISTED);
	ck_assert_uint_le(d->text_bytes, XD_DIFF_MAX_TEXT);
	xd_diff_free(d);
	/* a summary (a reload's record) names a few, counts them all */
	d = xd_diff_new(b, n1, a, n2, NULL);
	ck_assert_uint_eq(d->changed, XD_DIFF_MAX_LISTED + 10);
	ck_assert(d->cut);
	ck_assert_uint_eq(d->listed, XD_DIFF_SUMMARY_LISTED);
	ck_assert_uint_eq(d->keys[0].sections[0].nres, XD_DIFF_SUMMARY_LISTED);
	ck_assert_str_eq(d->keys[0].sections[0].res[0].name, "c0");
	xd_diff_free(d);
	unload(b, n1);
	unload(a, n2);
	xd_buf_free(&t1);
	xd_buf_free(&t2);
}
END_TEST

/* The text of the one resource changed from `before` to `after` (the
 * files of the default snapshot), malloc'd. */
static char *changed_text(const char *before, const char *after)
{
	size_t nb, na;
	struct xd_snapshot **b = load((const char *const[]){"default.yaml", before, NULL}, &nb);
	struct xd_snapshot **a = load((const char *const[]){"default.yaml", after, NULL}, &na);
	struct xd_diff *d = xd_diff_new(b, nb, a, na, schema);
	char *text;

	ck_assert_uint_eq(d->changed, 1);
	ck_assert_uint_eq(d->keys[0].sections[0].nres, 1);
	text = strdup(d->keys[0].sections[0].res[0].text);
	xd_diff_free(d);
	unload(b, nb);
	unload(a, na);
	return text;
}

/* A field proto3 leaves out at its default, set on one side only: the
 * other side shows it at the default, marked, so that the diff shows
 * the change from it (and, the setting removed, back to it); inside an
 * Any of one type on both sides too, and in list items. Fields with
 * presence (a message) and fields in a oneof are not filled in. */
START_TEST(snapshot_defaults_shown)
{
	static const char base[] =
		"clusters:\n- name: web\n  type: STATIC\n  connect_timeout: 1s\n";
	static const char maglev[] =
		"clusters:\n- name: web\n  type: STATIC\n  connect_timeout: 1s\n"
		"  lb_policy: MAGLEV\n";
	static const char hcm[] =
		"listeners:\n- name: l\n"
		"  address: {socket_address: {address: 0.0.0.0, port_value: 80}}\n"
		"  filter_chains:\n  - filters:\n"
		"    - name: hcm\n      typed_config:\n"
		"        \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
		"        stat_prefix: x\n%s"
		"        route_config: {name: r}\n";
	char before[2048], after[2048];
	char *t;

	t = changed_text(base, maglev);
	ck_assert_msg(strstr(t, " connect_timeout: \"1s\"\n"
				"-lb_policy: ROUND_ROBIN (default)\n"
				"+lb_policy: MAGLEV\n") != NULL, "%s", t);
	free(t);
	t = changed_text(maglev, base);
	ck_assert_msg(strstr(t, "-lb_policy: MAGLEV\n"
				"+lb_policy: ROUND_ROBIN (default)\n") != NULL, "%s", t);
	free(t);
	/* a number, a bool, inside an Any inside list items */
	snprintf(before, sizeof(before), hcm, "");
	snprintf(after, sizeof(after), hcm,
		 "        codec_type: HTTP2\n        use_remote_address: true\n"
		 "        xff_num_trusted_hops: 2\n");
	t = changed_text(before, after);
	ck_assert_msg(strstr(t, "-          codec_type: AUTO (default)\n"
				"+          codec_type: HTTP2\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "-          use_remote_address: false (default)\n") == NULL &&
		      strstr(t, "+          use_remote_address: true\n") != NULL,
		      "use_remote_address is a BoolValue (a message): it has no default to show: %s", t);
	ck_assert_msg(strstr(t, "-          xff_num_trusted_hops: 0 (default)\n") != NULL &&
		      strstr(t, "+          xff_num_trusted_hops: 2\n") != NULL, "%s", t);
	free(t);
}
END_TEST

/*
 * A load's snapshots are sorted by key, though the files come in the
 * order of their names ("a-b.yaml" before "a.yaml"): a reload finds each
 * key's previous snapshot by binary search and reuses its tables, and
 * the same files again change nothing.
 */
START_TEST(keys_sorted_and_found_again)
{
	static const char *const files[] = {
		"a-b.yaml", "clusters: [{name: x, type: STATIC, connect_timeout: 1s}]\n",
		"a.yaml", "clusters: [{name: y, type: STATIC, connect_timeout: 2s}]\n",
		"a.b.yaml", "clusters: [{name: z, type: STATIC, connect_timeout: 3s}]\n",
		"b.yaml", "{}\n",
		NULL,
	};
	char *dir = xdtest_snapdir();
	struct xd_snapshot **first;
	struct xd_load l;
	struct xd_diff *d;
	size_t n;

	for (const char *const *f = files; f[0] != NULL; f += 2)
		free(xdtest_write_file(dir, f[0], f[1]));
	xd_load_dir(schema, dir, NULL, 0, &l);
	ck_assert_int_eq(l.rc, 0);
	first = xd_load_take(&l, &n);
	xd_load_free(&l);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(xd_snapshot_key(first[0]), "a");
	ck_assert_str_eq(xd_snapshot_key(first[1]), "a-b");
	ck_assert_str_eq(xd_snapshot_key(first[2]), "a.b");
	ck_assert_str_eq(xd_snapshot_key(first[3]), "b");
	ck_assert_ptr_eq(xd_load_find(first, n, "a.b"), first[2]);
	ck_assert_ptr_null(xd_load_find(first, n, "a.c"));

	xd_load_dir(schema, dir, first, n, &l);
	ck_assert_int_eq(l.rc, 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_ptr_eq(xd_snapshot_table(l.snaps[i], XD_CLUSTER),
				 xd_snapshot_table(first[i], XD_CLUSTER));
	d = xd_diff_new(first, n, l.snaps, l.nsnaps, NULL);
	ck_assert_uint_eq(d->nkeys, 0);
	xd_diff_free(d);
	xd_load_free(&l);
	unload(first, n);
	free(dir);
}
END_TEST

int main(void)
{
	struct xd_diag d = XD_DIAG_INIT;
	Suite *s = suite_create("diff");
	TCase *tc;
	int rc;

	schema = xd_schema_load(xdtest_env("XDSD_SCHEMA"), &d);
	XDT_REQUIRE(schema != NULL, "cannot load the schema: %s",
		    d.count ? d.msgs[0] : "?");
	tc = tcase_create("linediff");
	tcase_add_test(tc, linediff_hunks);
	tcase_add_test(tc, linediff_bounded);
	suite_add_tcase(s, tc);
	tc = tcase_create("snapshots");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, snapshot_sets);
	tcase_add_test(tc, snapshot_listing_bounded);
	tcase_add_test(tc, snapshot_defaults_shown);
	tcase_add_test(tc, keys_sorted_and_found_again);
	suite_add_tcase(s, tc);
	rc = xdtest_run(s);
	xd_schema_free(schema);
	return rc;
}
