/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one U+FFFD rule (util/text.c, xd_text_utf8_put) that the JSON,
 * HTML and CSDS writers share: a well-formed UTF-8 sequence is copied
 * whole, and each byte that does not start one (a stray continuation
 * byte, an overlong form, a surrogate, a sequence cut short, a byte
 * UTF-8 never uses) becomes the replacement the caller gives, one
 * replacement per byte, so that what follows is read afresh.
 */
#include <string.h>

#include "util/buf.h"
#include "util/text.h"
#include "xdtest.h"

#define FFFD XD_TEXT_REPLACEMENT

/* `len` bytes of `in` written the way the writers do, with `repl` for
 * a bad byte (valid until the next call). */
static const char *put_all(const char *in, size_t len, const char *repl)
{
	static struct xd_buf out = XD_BUF_INIT;
	const uint8_t *s = (const uint8_t *)in;

	out.len = 0;
	for (size_t i = 0; i < len;) {
		size_t took = xd_text_utf8_put(&out, s + i, len - i, repl);

		ck_assert_uint_ge(took, 1);
		ck_assert_uint_le(took, len - i);
		i += took;
	}
	xd_buf_putc(&out, '\0');
	return (const char *)out.data;
}

#define PUT(s) put_all((s), sizeof(s) - 1, FFFD)

START_TEST(well_formed_copied_whole)
{
	struct xd_buf out = XD_BUF_INIT;

	/* ASCII, 2, 3 and 4-byte sequences, each taken in one call */
	ck_assert_uint_eq(xd_text_utf8_put(&out, (const uint8_t *)"a", 1, FFFD), 1);
	ck_assert_uint_eq(xd_text_utf8_put(&out, (const uint8_t *)"\xc3\xa9!", 3, FFFD), 2);
	ck_assert_uint_eq(xd_text_utf8_put(&out, (const uint8_t *)"\xe2\x82\xac", 3, FFFD), 3);
	ck_assert_uint_eq(xd_text_utf8_put(&out, (const uint8_t *)"\xf0\x9f\x98\x80", 4, FFFD), 4);
	ck_assert_uint_eq(out.len, 1 + 2 + 3 + 4);
	ck_assert(memcmp(out.data, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", out.len) == 0);
	xd_buf_free(&out);
	ck_assert_str_eq(PUT("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
	/* the highest code point there is */
	ck_assert_str_eq(PUT("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf");
}
END_TEST

START_TEST(each_bad_byte_replaced_once)
{
	struct xd_buf out = XD_BUF_INIT;

	/* a bad byte takes one byte of input, whatever follows it */
	ck_assert_uint_eq(xd_text_utf8_put(&out, (const uint8_t *)"\x80z", 2, FFFD), 1);
	ck_assert_uint_eq(out.len, 3);
	ck_assert(memcmp(out.data, FFFD, 3) == 0);
	xd_buf_free(&out);

	ck_assert_str_eq(PUT("a\x80z"), "a" FFFD "z");
	/* overlong '<' (two bytes, both bad), a surrogate, beyond U+10FFFF */
	ck_assert_str_eq(PUT("\xc0\xbc" "b"), FFFD FFFD "b");
	ck_assert_str_eq(PUT("\xed\xa0\x80"), FFFD FFFD FFFD);
	ck_assert_str_eq(PUT("\xf4\x90\x80\x80"), FFFD FFFD FFFD FFFD);
	/* cut short at the end, and by an ASCII byte: the ASCII byte kept */
	ck_assert_str_eq(PUT("ok\xe2\x82"), "ok" FFFD FFFD);
	ck_assert_str_eq(PUT("\xe2\x82z"), FFFD FFFD "z");
	/* bytes UTF-8 never uses */
	ck_assert_str_eq(PUT("\xff\xfe"), FFFD FFFD);
}
END_TEST

START_TEST(replacement_is_the_callers)
{
	/* JSON spells it as an escape; nothing else changes */
	ck_assert_str_eq(put_all("a\x80\xc3\xa9", 4, "\\ufffd"), "a\\ufffd\xc3\xa9");
	ck_assert_str_eq(put_all("\xc3", 1, "?"), "?");
}
END_TEST

/* "1 key", "0 keys", "2 keys". */
START_TEST(plural_only_for_one)
{
	ck_assert_str_eq(xd_plural(1), "");
	ck_assert_str_eq(xd_plural(0), "s");
	ck_assert_str_eq(xd_plural(2), "s");
	ck_assert_str_eq(xd_plural(-1), "s");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("utf8");

	tcase_add_test(tc, well_formed_copied_whole);
	tcase_add_test(tc, each_bad_byte_replaced_once);
	tcase_add_test(tc, replacement_is_the_callers);
	tcase_add_test(tc, plural_only_for_one);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
