/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The log's escaping (util/log.c): what clients send is written to the
 * log with control characters and invalid UTF-8 as \xNN, valid UTF-8
 * as it is, and never cut in the middle of a character or an escape.
 */
#include <jansson.h>
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
	/* C1 controls, well-formed UTF-8 a terminal may act on: U+009B
	 * is CSI; U+00A0 after them is text */
	ck_assert_str_eq(ESC("\xc2\x9b" "31m \xc2\x80 \xc2\xa0"),
			 "\\xc2\\x9b" "31m \\xc2\\x80 \xc2\xa0");
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

/* ---- whole lines (xd_log_format_line) ---- */

#define AT 1700000000123LL /* 2023-11-14T22:13:20.123Z */

static const struct xd_log_ctx stream7 = {
	7, "ADS", "ipv4:10.0.0.7:40112", "envoy-\n1", "web\"\xff", NULL};

/* A client with a certificate: its identity says who, beside its peer. */
static const struct xd_log_ctx stream8 = {
	8, "ADS", "ipv4:10.0.0.8:40113", "web-1", "prod",
	"spiffe://example.org/ns/prod/sa/\nfrontend"};

static const char *line(enum xd_log_format f, bool journal,
			enum xd_log_level level, const struct xd_log_ctx *ctx,
			const char *msg)
{
	static char out[XD_LOG_JSON_MAX];
	size_t n = xd_log_format_line(out, sizeof(out), f, journal, level, ctx,
				      AT, msg, strlen(msg));

	ck_assert_uint_lt(n, sizeof(out));
	out[n] = '\0';
	return out;
}

/* The text format as it has always been, byte for byte. */
START_TEST(text_lines_unchanged)
{
	ck_assert_str_eq(line(XD_LOG_TEXT, false, XD_LOG_INFO, NULL, "hello\tthere"),
			 "2023-11-14T22:13:20.123Z info: hello\\x09there\n");
	ck_assert_str_eq(line(XD_LOG_TEXT, true, XD_LOG_ERROR, NULL, "bad"),
			 "<3>bad\n");
	ck_assert_str_eq(line(XD_LOG_TEXT, false, XD_LOG_WARN, &stream7, "NACK of CDS version 3: no\nway"),
			 "2023-11-14T22:13:20.123Z warn: stream 7 (ADS from ipv4:10.0.0.7:40112) node 'envoy-\\x0a1': NACK of CDS version 3: no\\x0away\n");
}
END_TEST

/* A line about the stream of a client with an identity names it, in
 * text (escaped) and as a JSON field of its own. */
START_TEST(identity_in_stream_lines)
{
	const char *l;
	json_t *j;

	ck_assert_str_eq(line(XD_LOG_TEXT, false, XD_LOG_WARN, &stream8, "refused"),
			 "2023-11-14T22:13:20.123Z warn: stream 8 (ADS from ipv4:10.0.0.8:40113, "
			 "identity 'spiffe://example.org/ns/prod/sa/\\x0afrontend') node 'web-1': refused\n");
	l = line(XD_LOG_JSON, false, XD_LOG_WARN, &stream8, "refused");
	j = json_loads(l, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "identity")),
			 "spiffe://example.org/ns/prod/sa/\nfrontend");
	json_decref(j);
	/* none without one */
	l = line(XD_LOG_JSON, false, XD_LOG_WARN, &stream7, "x");
	ck_assert_ptr_null(strstr(l, "identity"));
}
END_TEST

START_TEST(json_line_fields)
{
	const char *l = line(XD_LOG_JSON, false, XD_LOG_WARN, &stream7,
			     "NACK of CDS: \"x\"\n}{");
	json_error_t err;
	json_t *j;

	ck_assert_ptr_eq(strchr(l, '\n'), l + strlen(l) - 1); /* one line */
	j = json_loads(l, 0, &err);
	ck_assert_msg(j != NULL, "%s: %s", err.text, l);
	ck_assert_str_eq(json_string_value(json_object_get(j, "time")),
			 "2023-11-14T22:13:20.123Z");
	ck_assert_str_eq(json_string_value(json_object_get(j, "level")), "warn");
	ck_assert_str_eq(json_string_value(json_object_get(j, "message")),
			 "NACK of CDS: \"x\"\n}{");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "stream")), 7);
	ck_assert_str_eq(json_string_value(json_object_get(j, "method")), "ADS");
	ck_assert_str_eq(json_string_value(json_object_get(j, "peer")),
			 "ipv4:10.0.0.7:40112");
	ck_assert_str_eq(json_string_value(json_object_get(j, "node")), "envoy-\n1");
	ck_assert_str_eq(json_string_value(json_object_get(j, "cluster")),
			 "web\"\xef\xbf\xbd");
	json_decref(j);
	/* a line about no stream has no stream fields; the journal's
	 * priority comes first */
	ck_assert_str_eq(line(XD_LOG_JSON, true, XD_LOG_INFO, NULL, "up"),
			 "<6>{\"time\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"message\":\"up\"}\n");
}
END_TEST

/* A message that escapes to more than a line may hold is shortened,
 * and the line stays one valid JSON object. */
START_TEST(json_line_capped)
{
	static char msg[4096];
	const char *l;
	json_t *j;

	memset(msg, '\x01', sizeof(msg) - 1); /* 6 bytes each, escaped */
	msg[0] = '\xe2';                       /* and a character cut */
	l = line(XD_LOG_JSON, false, XD_LOG_INFO, &stream7, msg);
	ck_assert_uint_le(strlen(l), XD_LOG_JSON_MAX);
	ck_assert_uint_gt(strlen(l), XD_LOG_JSON_MAX - 64);
	ck_assert(strcmp(l + strlen(l) - 2, "}\n") == 0);
	j = json_loads(l, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_uint_gt(strlen(json_string_value(json_object_get(j, "message"))), 2000);
	json_decref(j);
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
	tcase_add_test(tc, text_lines_unchanged);
	tcase_add_test(tc, identity_in_stream_lines);
	tcase_add_test(tc, json_line_fields);
	tcase_add_test(tc, json_line_capped);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
