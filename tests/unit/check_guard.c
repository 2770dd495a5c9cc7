/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the admin endpoint takes from a browser (admin/guard.c): the
 * names it answers to, other sites' pages, and POSTs a form could send.
 */
#include <string.h>

#include "admin/guard.h"
#include "xdtest.h"

static struct xd_config cfg;

static int guard(const char *method, const char *host, const char *origin,
		 const char *site, const char *type)
{
	struct xd_admin_request r = {
		.hostname = "xds-1.example.internal",
		.method = method,
		.host = host,
		.origin = origin,
		.fetch_site = site,
		.content_type = type,
	};
	char why[512];

	return xd_admin_guard(&cfg, &r, why, sizeof(why));
}

static void setup(void)
{
	static char *hosts[] = {"ops-admin.example.org"};

	memset(&cfg, 0, sizeof(cfg));
	cfg.admin_listen = "admin-vip.example.net:18080";
	cfg.admin_hosts = hosts;
	cfg.nadmin_hosts = 1;
}

START_TEST(names_it_answers_to)
{
	static const char *const own[] = {
		NULL, "127.0.0.1", "127.0.0.1:18080", "10.1.2.3:80", "[::1]",
		"[::1]:18080", "[fe80::1]:1", "localhost", "LOCALHOST:18080",
		"xds-1.example.internal", "xds-1:18080", "XDS-1",
		"admin-vip.example.net", "ops-admin.example.org:443",
	};
	static const char *const foreign[] = {
		"evil.example", "evil.example:18080", "xds-1.evil.example",
		"localhost.evil.example", "127.0.0.1.evil.example", "xds-2",
		"example.internal", "", ":18080", "[::1", "[::1]x", "a:b:c",
		"ops-admin.example.org.evil", "admin-vip",
	};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		ck_assert_msg(guard("GET", own[i], NULL, NULL, NULL) == 0,
			      "Host '%s' refused", own[i] ? own[i] : "(none)");
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		ck_assert_msg(guard("GET", foreign[i], NULL, NULL, NULL) == 403,
			      "Host '%s' taken", foreign[i]);
}
END_TEST

START_TEST(other_sites_refused)
{
	ck_assert_int_eq(guard("GET", "localhost", "http://localhost:18080", NULL, NULL), 0);
	ck_assert_int_eq(guard("GET", "localhost", "https://xds-1:8443", NULL, NULL), 0);
	ck_assert_int_eq(guard("GET", "localhost", "http://evil.example", NULL, NULL), 403);
	ck_assert_int_eq(guard("GET", "localhost", "null", NULL, NULL), 403);
	ck_assert_int_eq(guard("GET", "localhost", "evil", NULL, NULL), 403);
	ck_assert_int_eq(guard("GET", "localhost", NULL, "same-origin", NULL), 0);
	ck_assert_int_eq(guard("GET", "localhost", NULL, "none", NULL), 0);
	ck_assert_int_eq(guard("GET", "localhost", NULL, "cross-site", NULL), 403);
	ck_assert_int_eq(guard("GET", "localhost", NULL, "Same-Site", NULL), 403);
}
END_TEST

START_TEST(posts_a_form_cannot_send)
{
	ck_assert_int_eq(guard("POST", "localhost", NULL, NULL, "application/json"), 0);
	ck_assert_int_eq(guard("POST", "localhost", NULL, NULL,
			       "Application/JSON; charset=utf-8"), 0);
	ck_assert_int_eq(guard("POST", "localhost", NULL, NULL, NULL), 415);
	ck_assert_int_eq(guard("POST", "localhost", NULL, NULL, "text/plain"), 415);
	ck_assert_int_eq(guard("POST", "localhost", NULL, NULL,
			       "application/x-www-form-urlencoded"), 415);
	ck_assert_int_eq(guard("POST", "localhost", NULL, NULL, "multipart/form-data"), 415);
	ck_assert_int_eq(guard("POST", "localhost", NULL, NULL, "application/jsonp"), 415);
	/* a GET needs no content type */
	ck_assert_int_eq(guard("GET", "localhost", NULL, NULL, NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("guard");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, names_it_answers_to);
	tcase_add_test(tc, other_sites_refused);
	tcase_add_test(tc, posts_a_form_cannot_send);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
