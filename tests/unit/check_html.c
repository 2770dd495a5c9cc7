/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status page's escaping (util/html.c): markup characters become
 * entities, valid UTF-8 stays as it is, and bytes that are not UTF-8 or
 * are control characters become U+FFFD, so that nothing a client sends
 * can become markup or make the page invalid UTF-8.
 */
#include <string.h>

#include "util/html.h"
#include "xdtest.h"

#define FFFD "\xef\xbf\xbd"

/* The escaped form of `len` bytes of `in` (valid until the next call). */
static const char *esc(const char *in, size_t len)
{
	static struct xd_buf out = XD_BUF_INIT;

	out.len = 0;
	xd_html_escape(&out, in, len);
	xd_buf_putc(&out, '\0');
	return (const char *)out.data;
}

#define ESC(s) esc((s), sizeof(s) - 1)

START_TEST(markup_becomes_text)
{
	ck_assert_str_eq(ESC("<script>alert(1)</script>"),
			 "&lt;script&gt;alert(1)&lt;/script&gt;");
	ck_assert_str_eq(ESC("a & b \"q\" 'p'"), "a &amp; b &quot;q&quot; &#39;p&#39;");
	/* already-escaped text is escaped again: shown as it was sent */
	ck_assert_str_eq(ESC("&lt;"), "&amp;lt;");
	ck_assert_str_eq(ESC("node-1.eu_west:9000/x"), "node-1.eu_west:9000/x");
	ck_assert_str_eq(ESC(""), "");
}
END_TEST

START_TEST(utf8_kept_bad_bytes_replaced)
{
	/* é, €, an emoji */
	ck_assert_str_eq(ESC("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
			 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* a lone continuation byte, an overlong '<', a surrogate, a cut
	 * sequence at the end */
	ck_assert_str_eq(ESC("a\x80z"), "a" FFFD "z");
	ck_assert_str_eq(ESC("\xc0\xbcscript"), FFFD FFFD "script");
	ck_assert_str_eq(ESC("\xed\xa0\x80"), FFFD FFFD FFFD);
	ck_assert_str_eq(ESC("ok\xe2\x82"), "ok" FFFD FFFD);
}
END_TEST

START_TEST(controls_replaced_newlines_kept)
{
	ck_assert_str_eq(ESC("line 1\nline 2\tend"), "line 1\nline 2\tend");
	ck_assert_str_eq(ESC("\x1b[31mred\r"), FFFD "[31mred" FFFD);
	ck_assert_str_eq(esc("a\0b", 3), "a" FFFD "b");
	ck_assert_str_eq(ESC("\x7f"), FFFD);
}
END_TEST

START_TEST(null_string_writes_nothing)
{
	struct xd_buf out = XD_BUF_INIT;

	xd_html_str(&out, NULL);
	ck_assert_uint_eq(out.len, 0);
	xd_html_str(&out, "<b>");
	ck_assert_uint_eq(out.len, strlen("&lt;b&gt;"));
	ck_assert(memcmp(out.data, "&lt;b&gt;", out.len) == 0);
	xd_buf_free(&out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("html");
	TCase *tc = tcase_create("escape");

	tcase_add_test(tc, markup_becomes_text);
	tcase_add_test(tc, utf8_kept_bad_bytes_replaced);
	tcase_add_test(tc, controls_replaced_newlines_kept);
	tcase_add_test(tc, null_string_writes_nothing);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
