/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The type table (xds/rtype.c): every row says all a type is, in a way
 * its readers can rely on, and `xdsd --print-types` prints it whole.
 * A type added with a row left half written fails here first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "transport/methods.h"
#include "xds/rtype.h"
#include "xdtest.h"

#define URL_PREFIX "type.googleapis.com/"

/* A gRPC path of package envoy.service.<area>.v3 whose method starts
 * with `verb`. */
static bool method_path(const char *path, const char *verb)
{
	const char *slash;

	if (path == NULL || strncmp(path, "/envoy.service.", 15) != 0 ||
	    strstr(path, ".v3.") == NULL)
		return false;
	slash = strrchr(path, '/');
	return slash != NULL && strncmp(slash + 1, verb, strlen(verb)) == 0;
}

START_TEST(every_row_is_whole)
{
	int kept = 0;

	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_rtype_info *i = xd_rtype_info((enum xd_rtype)t);
		enum xd_rtype back;

		ck_assert_msg(i->message != NULL && i->snapshot_key != NULL &&
				      i->service != NULL && i->noun != NULL &&
				      i->name_field != NULL,
			      "type %d: a name left out", t);
		ck_assert_msg(strncmp(i->type_url, URL_PREFIX, strlen(URL_PREFIX)) == 0 &&
				      strcmp(i->type_url + strlen(URL_PREFIX), i->message) == 0,
			      "%s: type URL '%s' for %s", i->service, i->type_url,
			      i->message);
		ck_assert_int_eq(xd_rtype_from_url(i->type_url, strlen(i->type_url), &back), 0);
		ck_assert_int_eq(back, t);
		ck_assert_msg(method_path(i->delta_path, "Delta"),
			      "%s: delta method '%s'", i->service, i->delta_path);
		ck_assert_msg(i->sotw_path == NULL || method_path(i->sotw_path, "Stream"),
			      "%s: SotW method '%s'", i->service, i->sotw_path);
		/* REST is SotW: no path without a SotW method */
		ck_assert_msg(i->rest_path == NULL || i->sotw_path != NULL,
			      "%s: a REST path and no SotW method", i->service);
		ck_assert_msg(!i->full_state || i->wildcard_ok,
			      "%s: sent whole but never by wildcard", i->service);
		if (i->role == XD_ROLE_WARMS) {
			/* it warms an earlier, kept type: the order sends it
			 * after the type it warms, and before the users */
			ck_assert_msg(i->warms < (enum xd_rtype)t &&
					      xd_rtype_info(i->warms)->role == XD_ROLE_KEPT,
				      "%s warms %d", i->service, (int)i->warms);
		}
		kept += i->role == XD_ROLE_KEPT;
		if (i->kept_in_delta) {
			/* kept for the users that follow it: one must */
			bool named = false;

			for (int u = t + 1; u < XD_RTYPE_COUNT; u++) {
				const struct xd_rtype_info *ui =
					xd_rtype_info((enum xd_rtype)u);

				for (size_t r = 0; r < ui->nrefs; r++)
					named |= ui->role == XD_ROLE_USER &&
						 ui->refs[r].to == (enum xd_rtype)t;
			}
			ck_assert_msg(named, "%s kept for no later user",
				      i->service);
		}
		for (size_t r = 0; r < i->nrefs; r++)
			ck_assert_msg(i->refs[r].to < XD_RTYPE_COUNT &&
					      i->refs[r].path != NULL,
				      "%s: reference rule %zu", i->service, r);
		if (i->by_glob) {
			/* found through globs only: xdstp names, given by
			 * "@name" (no name field to hold one), named by a
			 * reference rule of an earlier type, and never over
			 * SotW, which cannot say a member left */
			bool named = false;

			ck_assert_msg(xd_rtype_named_by_annotation((enum xd_rtype)t) &&
					      strcmp(i->name_field, XD_NAME_ANNOTATION) == 0,
				      "%s: by glob, named by '%s'", i->service,
				      i->name_field);
			ck_assert_msg(i->sotw_path == NULL && !i->wildcard_ok,
				      "%s: by glob, with SotW or a wildcard", i->service);
			for (int u = 0; u < t; u++) {
				const struct xd_rtype_info *ui =
					xd_rtype_info((enum xd_rtype)u);

				for (size_t r = 0; r < ui->nrefs; r++)
					named |= ui->refs[r].to == (enum xd_rtype)t;
			}
			ck_assert_msg(named, "%s: no earlier type names its globs",
				      i->service);
		}
	}
	/* the users of kept resources come after them, in push order */
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		for (int u = 0; u < t; u++)
			ck_assert_msg(!(xd_rtype_info((enum xd_rtype)u)->role == XD_ROLE_USER &&
					xd_rtype_info((enum xd_rtype)t)->role == XD_ROLE_KEPT),
				      "%s uses kept %s, which comes later",
				      xd_rtype_info((enum xd_rtype)u)->service,
				      xd_rtype_info((enum xd_rtype)t)->service);
	ck_assert_int_ge(kept, 1);
}
END_TEST

/* Every type's message, and every list collection's, is in the API
 * xdsd is built with (proto/api-set), and each reference rule's first
 * field is one of its type's. */
START_TEST(every_type_is_in_the_api)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_schema *s = xd_schema_load(xdtest_env("XDSD_SCHEMA"), &d);

	ck_assert_ptr_nonnull(s);
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_rtype_info *i = xd_rtype_info((enum xd_rtype)t);
		const struct xd_msgdesc *m = xd_schema_find_message(s, i->message);

		ck_assert_msg(m != NULL, "%s: %s is not in the schema", i->service,
			      i->message);
		ck_assert_msg(xd_rtype_named_by_annotation((enum xd_rtype)t) ||
				      xd_schema_walk(s, m, NULL, 0, i->name_field, NULL, NULL) == 0,
			      "%s: no field '%s'", i->service, i->name_field);
		for (size_t r = 0; r < i->nrefs; r++)
			ck_assert_msg(xd_schema_walk(s, m, NULL, 0, i->refs[r].path,
						     NULL, NULL) == 0,
				      "%s: reference rule '%s'", i->service,
				      i->refs[r].path);
	}
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		ck_assert_ptr_nonnull(xd_schema_find_message(
			s, xd_ctype_info((enum xd_ctype)c)->message));
	xd_schema_free(s);
}
END_TEST

/* The per-type methods are the table's: two for each type, one for a
 * type without SotW, after the two aggregated ones. */
START_TEST(methods_follow_the_table)
{
	size_t n, k = 2, want = 2;
	const struct xd_method *m = xd_methods(&n);

	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		want += xd_rtype_has_sotw((enum xd_rtype)t) ? 2 : 1;
	ck_assert_uint_eq(n, want);
	ck_assert(m[0].aggregated && !m[0].delta && m[1].aggregated && m[1].delta);
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_rtype_info *i = xd_rtype_info((enum xd_rtype)t);
		char name[32];

		if (i->sotw_path != NULL) {
			ck_assert_str_eq(m[k].path, i->sotw_path);
			ck_assert_str_eq(m[k].name, i->service);
			ck_assert(!m[k].delta && m[k].type == (enum xd_rtype)t);
			k++;
		}
		snprintf(name, sizeof(name), "delta %s", i->service);
		ck_assert_str_eq(m[k].path, i->delta_path);
		ck_assert_str_eq(m[k].name, name);
		ck_assert(m[k].delta && m[k].type == (enum xd_rtype)t);
		k++;
	}
	ck_assert_ptr_eq(xd_methods(&n), m); /* one array: indexes are stable */
}
END_TEST

/* What `xdsd --print-types` prints: a line per type, in push order. */
START_TEST(printed_in_push_order)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int t = 0;

	xd_rtype_print(f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "\nEDS type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment endpoints cluster_name "));
	ck_assert_ptr_nonnull(strstr(text, " warms:CDS "));
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		const struct xd_rtype_info *i;
		char want[1024];

		if (line[0] == '#')
			continue;
		ck_assert_int_lt(t, XD_RTYPE_COUNT);
		i = xd_rtype_info((enum xd_rtype)t++);
		snprintf(want, sizeof(want), "%s %s %s %s %s %s %s ", i->service,
			 i->type_url, i->snapshot_key, i->name_field,
			 i->sotw_path ? i->sotw_path : "-", i->delta_path,
			 i->rest_path ? i->rest_path : "-");
		ck_assert_msg(strncmp(line, want, strlen(want)) == 0,
			      "'%s' is not '%s...'", line, want);
	}
	ck_assert_int_eq(t, XD_RTYPE_COUNT);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rtype");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, every_row_is_whole);
	tcase_add_test(tc, every_type_is_in_the_api);
	tcase_add_test(tc, methods_follow_the_table);
	tcase_add_test(tc, printed_in_push_order);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
