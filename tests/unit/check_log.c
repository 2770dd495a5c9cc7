/*
 * The log's escaping (util/log.c): what clients send is written to the
 * log with control characters and invalid UTF-8 as \xNN, valid UTF-8
 * as it is, and never cut in the middle of a character or an escape.
 */
#include <string.h>

#include "util/log.h"
#include "xdtest.h"

static const char *esc(const char *in, size_t len, size_t cap)
{
	static char out[256];

	ck_assert_uint_le(cap, sizeof(out));
	ck_assert_uint_eq(xd_log_escape(out, cap, in, len), strlen(out));
	return out;
}

#define ESC(s) esc((s), sizeof(s) - 1, 256)

START_TEST(plain_text_unchanged)
{
	ck_assert_str_eq(ESC("node-1 'quoted' \\path"), "node-1 'quoted' \\path");
	ck_assert_str_eq(ESC(""), "");
}
END_TEST

START_TEST(control_characters_escaped)
{
	ck_assert_str_eq(ESC("a\nb"), "a\\x0ab");
	ck_assert_str_eq(ESC("\r\t\x1b[31m\x7f"), "\\x0d\\x09\\x1b[31m\\x7f");
	ck_assert_str_eq(esc("a\0b", 3, 256), "a\\x00b");
}
END_TEST

START_TEST(valid_utf8_kept)
{
	/* é (2 bytes), € (3), U+10FFFF and an emoji (4) */
	ck_assert_str_eq(ESC("caf\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9f\x98\x80"),
			 "caf\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9f\x98\x80");
}
END_TEST

START_TEST(invalid_utf8_escaped)
{
	ck_assert_str_eq(ESC("\x80"), "\\x80");          /* lone continuation */
	ck_assert_str_eq(ESC("\xc0\xaf"), "\\xc0\\xaf"); /* overlong '/' */
	ck_assert_str_eq(ESC("\xe0\x80\x80"), "\\xe0\\x80\\x80");
	ck_assert_str_eq(ESC("\xed\xa0\x80"), "\\xed\\xa0\\x80"); /* surrogate */
	ck_assert_str_eq(ESC("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
	ck_assert_str_eq(ESC("\xff\xfe"), "\\xff\\xfe");
	/* a character cut short by the end of the input */
	ck_assert_str_eq(ESC("ok\xe2\x82"), "ok\\xe2\\x82");
	/* an invalid byte does not swallow the valid text after it */
	ck_assert_str_eq(ESC("\xc3(x"), "\\xc3(x");
}
END_TEST

START_TEST(capped_without_cutting)
{
	/* room for 5 bytes + NUL: the escape (4) does not fit after "abc" */
	ck_assert_str_eq(esc("abc\ndef", 7, 6), "abc");
	/* nor does a 3-byte character after "abcd" */
	ck_assert_str_eq(esc("abcd\xe2\x82\xac", 7, 6), "abcd");
	ck_assert_str_eq(esc("abcdefgh", 8, 6), "abcde");
	ck_assert_uint_eq(xd_log_escape(NULL, 0, "abc", 3), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("escape");

	tcase_add_test(tc, plain_text_unchanged);
	tcase_add_test(tc, control_characters_escaped);
	tcase_add_test(tc, valid_utf8_kept);
	tcase_add_test(tc, invalid_utf8_escaped);
	tcase_add_test(tc, capped_without_cutting);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
