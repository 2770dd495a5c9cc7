/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who may speak for which nodes (protocol/authorize.c): rules are globs
 * on the identity, node id and node cluster; the first rule that
 * matches all three allows; no rules allow everyone authenticated.
 */
#include "protocol/authorize.h"
#include "xdtest.h"

static const struct xd_authz_rule rules[] = {
	{(char *)"spiffe://example.org/ns/prod/sa/*", (char *)"*",
	 (char *)"prod-*"},
	{(char *)"envoy-?.example.org", (char *)"edge-*", (char *)"*"},
};

static bool allows(const char *identity, const char *id, const char *cluster,
		   size_t *rule)
{
	return xd_authorize(rules, 2, identity, id, cluster, rule);
}

START_TEST(rules_match_all_three_fields)
{
	size_t rule = 99;

	ck_assert(allows("spiffe://example.org/ns/prod/sa/frontend", "web-1",
			 "prod-web", &rule));
	ck_assert_uint_eq(rule, 0);
	ck_assert(allows("envoy-1.example.org", "edge-3", "anything", &rule));
	ck_assert_uint_eq(rule, 1);
	/* the identity matches, the cluster does not */
	ck_assert(!allows("spiffe://example.org/ns/prod/sa/frontend", "web-1",
			  "dev-web", NULL));
	/* the cluster matches, the identity belongs to another namespace */
	ck_assert(!allows("spiffe://example.org/ns/dev/sa/frontend", "web-1",
			  "prod-web", NULL));
	ck_assert(!allows("envoy-12.example.org", "edge-3", "x", NULL));
	ck_assert(!allows("envoy-1.example.org", "web-1", "x", NULL));
}
END_TEST

/* A star covers slashes: one glob for every service account below. */
START_TEST(star_spans_path_segments)
{
	const struct xd_authz_rule any = {(char *)"spiffe://example.org/*",
					  (char *)"*", (char *)"*"};

	ck_assert(xd_authorize(&any, 1, "spiffe://example.org/ns/a/sa/b", "n",
			       "c", NULL));
	ck_assert(!xd_authorize(&any, 1, "spiffe://example.com/ns/a", "n", "c",
				NULL));
}
END_TEST

START_TEST(no_rules_allow_everyone)
{
	size_t rule = 99;

	ck_assert(xd_authorize(NULL, 0, "anyone", "any", "thing", &rule));
	ck_assert_uint_eq(rule, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("authorize");
	TCase *tc = tcase_create("authorize");

	tcase_add_test(tc, rules_match_all_three_fields);
	tcase_add_test(tc, star_spans_path_segments);
	tcase_add_test(tc, no_rules_allow_everyone);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
