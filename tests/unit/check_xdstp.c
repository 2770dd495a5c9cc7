/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdstp:// names (xds/xdstp.c): the canonical form that makes equal
 * names equal strings (rule X1), and glob collections (rule X2).
 */
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "xds/xdstp.h"
#include "xdtest.h"

static char *canon(const char *in, struct xd_xdstp_parts *parts)
{
	const char *why = NULL;
	size_t len = 0;
	char *out = xd_xdstp_canon(in, strlen(in), &len, parts, &why);

	if (out != NULL)
		ck_assert_uint_eq(len, strlen(out));
	return out;
}

static void same(const char *in, const char *want)
{
	char *got = canon(in, NULL);

	ck_assert_msg(got != NULL, "%s refused", in);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(canonical_form)
{
	struct xd_xdstp_parts pt;
	char *c;

	/* already canonical */
	same("xdstp://a.b/envoy.config.listener.v3.Listener/x/y?k=v",
	     "xdstp://a.b/envoy.config.listener.v3.Listener/x/y?k=v");
	/* parameters sorted, scheme lower-cased, no empty '?' */
	same("XDSTP://auth/T/id?z=1&b=2&a=3", "xdstp://auth/T/id?a=3&b=2&z=1");
	same("xdstp://auth/T/id?", "xdstp://auth/T/id");
	same("xdstp://auth/T/id?a&&b=", "xdstp://auth/T/id?a=&b=");
	/* escapes of bytes that may stand as themselves are decoded, others
	 * kept with upper-case digits, unsafe bytes escaped */
	same("xdstp://a%2Db/T/f%6F%6f%2fbar?k=%3d%26&q=a b",
	     "xdstp://a-b/T/foo/bar?k=%3D%26&q=a%20b");
	/* no authority */
	same("xdstp:///T/id", "xdstp:///T/id");
	/* the fragment is no part of the name */
	c = canon("xdstp://a/T/id?y=1#alt=xdstp://b/T/id", &pt);
	ck_assert_str_eq(c, "xdstp://a/T/id?y=1");
	ck_assert(pt.fragment);
	ck_assert(!pt.glob);
	ck_assert_uint_eq(pt.type_len, 1);
	ck_assert(strncmp(c + pt.type, "T", 1) == 0);
	ck_assert(strncmp(c + pt.id, "id", pt.id_len) == 0);
	ck_assert_uint_eq(c[pt.query], '?');
	free(c);
	c = canon("xdstp://a/T/p/q/*?x=1", &pt);
	ck_assert(pt.glob);
	free(c);
	c = canon("xdstp://a/T/p/q*", &pt);
	ck_assert(!pt.glob);
	free(c);
}
END_TEST

START_TEST(malformed_refused)
{
	static const char *const bad[] = {
		"xdstp:", "xdstp:/a/T/id", "xdstp://auth", "xdstp://auth/T",
		"xdstp://auth/T/", "xdstp://auth//id", "xdstp://a/T/id%4",
		"xdstp://a/T/id%zz", "xdstp://a/T%2FU/id", "http://a/T/id",
		"xdstp://a/T/id?k=%",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *why = NULL;
		size_t len;

		ck_assert_msg(xd_xdstp_canon(bad[i], strlen(bad[i]), &len, NULL,
					     &why) == NULL, "%s accepted", bad[i]);
		ck_assert_ptr_nonnull(why);
	}
	ck_assert(xd_xdstp_is("XdStP://x", 9));
	ck_assert(!xd_xdstp_is("xdst", 4));
	ck_assert(!xd_xdstp_is("listener-xdstp://", 17));
}
END_TEST

START_TEST(collections)
{
	char buf[128];
	const char *n = "xdstp://a/T/p/q/leaf?k=v";
	size_t len = xd_xdstp_collection(n, strlen(n), buf);

	ck_assert_str_eq(buf, "xdstp://a/T/p/q/*?k=v");
	ck_assert_uint_eq(len, strlen(buf));
	ck_assert(xd_xdstp_is_glob(buf, len));
	ck_assert(!xd_xdstp_is_glob(n, strlen(n)));
	/* a glob belongs to no collection; an id of one segment does */
	ck_assert_uint_eq(xd_xdstp_collection(buf, len, buf), 0);
	n = "xdstp://a/T/leaf";
	ck_assert_uint_gt(xd_xdstp_collection(n, strlen(n), buf), 0);
	ck_assert_str_eq(buf, "xdstp://a/T/*");
	/* a trailing '/' leaves an empty last segment */
	n = "xdstp://a/T/dir/";
	xd_xdstp_collection(n, strlen(n), buf);
	ck_assert_str_eq(buf, "xdstp://a/T/dir/*");
	/* not xdstp: nothing */
	ck_assert_uint_eq(xd_xdstp_collection("plain/name", 10, buf), 0);
	ck_assert(!xd_xdstp_is_glob("*", 1));
}
END_TEST

/* The ResourceLocator of a name (rule X3), written as protobuf's
 * deterministic serializer does, and the canonical name it stands for. */
START_TEST(locators)
{
	static const uint8_t want[] = {
		0x12, 5, 'x', '/', 'y', '?', 'z',      /* id, decoded */
		0x1a, 3, 'a', '/', 'b',                /* authority */
		0x22, 1, 'T',                          /* resource_type */
		0x2a, 20,                              /* exact_context */
		0x0a, 6, 0x0a, 1, 'b', 0x12, 1, '2',   /* sorted by key */
		0x0a, 10, 0x0a, 2, 'k', '&', 0x12, 4, 'v', '=', '1', ' ',
	};
	const char *url = "XDSTP://a%2fb/T/x/y%3Fz?k%26=v%3D1%20&b=2";
	struct xd_buf b = XD_BUF_INIT;
	struct xd_xdstp_parts pt;
	const char *why = NULL;
	size_t len;
	char *back, *c;

	ck_assert_int_eq(xd_xdstp_to_locator(url, strlen(url), &b, &why), 0);
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert(memcmp(b.data, want, sizeof(want)) == 0);
	back = xd_xdstp_from_locator(b.data, b.len, &len, &pt, &why);
	ck_assert_ptr_nonnull(back);
	c = canon(url, NULL);
	ck_assert_str_eq(back, c);
	ck_assert_str_eq(back, "xdstp://a%2Fb/T/x/y%3Fz?b=2&k%26=v%3D1%20");
	ck_assert(!pt.glob);
	free(back);
	free(c);

	/* no authority, no parameters: neither field is written */
	b.len = 0;
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp:///T/g/*", 14, &b, &why), 0);
	ck_assert_uint_eq(b.len, (2 + 3) + (2 + 1));
	back = xd_xdstp_from_locator(b.data, b.len, &len, &pt, &why);
	ck_assert_str_eq(back, "xdstp:///T/g/*");
	ck_assert(pt.glob);
	free(back);

	/* refused: directives, a key twice, what is no name */
	b.len = 0;
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp://a/T/i#entry=e", 21, &b, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "directives"));
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp://a/T/i?k=1&k=2", 21, &b, &why), -1);
	ck_assert_str_eq(why, "a context parameter given twice");
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp://a/T", 11, &b, &why), -1);
	ck_assert_uint_eq(b.len, 0);
	/* escapes that decode to what is not UTF-8: each part is a proto3
	 * string, and nothing is written */
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp://a/T/l%8F", 16, &b, &why), -1);
	ck_assert_str_eq(why, "its id is not UTF-8 once its %XX escapes are decoded");
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp://%C3/T/i", 15, &b, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "authority"));
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp://a/T/i?k=%C3%A9&v=%E9", 28, &b, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "context parameter"));
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(xd_xdstp_to_locator("xdstp://a/T/%C3%A9", 18, &b, &why), 0);
	ck_assert_uint_gt(b.len, 0);
	{
		static const uint8_t http[] = {0x08, 1, 0x12, 1, 'i', 0x22, 1, 'T'};
		static const uint8_t dir[] = {0x12, 1, 'i', 0x22, 1, 'T',
					      0x32, 3, 0x12, 1, 'e'};
		static const uint8_t slash[] = {0x12, 1, 'i', 0x22, 3, 'T', '/', 'U'};
		static const uint8_t notype[] = {0x12, 1, 'i'};
		static const uint8_t bad[] = {0x12, 9, 'i'};

		ck_assert_ptr_null(xd_xdstp_from_locator(http, sizeof(http), &len, NULL, &why));
		ck_assert_ptr_nonnull(strstr(why, "scheme"));
		ck_assert_ptr_null(xd_xdstp_from_locator(dir, sizeof(dir), &len, NULL, &why));
		ck_assert_ptr_nonnull(strstr(why, "directives"));
		ck_assert_ptr_null(xd_xdstp_from_locator(slash, sizeof(slash), &len, NULL, &why));
		ck_assert_ptr_null(xd_xdstp_from_locator(notype, sizeof(notype), &len, NULL, &why));
		ck_assert_ptr_null(xd_xdstp_from_locator(bad, sizeof(bad), &len, NULL, &why));
		ck_assert_str_eq(why, "a malformed ResourceLocator");
	}
	xd_buf_free(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xdstp");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, canonical_form);
	tcase_add_test(tc, malformed_refused);
	tcase_add_test(tc, collections);
	tcase_add_test(tc, locators);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
