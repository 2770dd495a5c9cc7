/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The protobuf wire reader and the one-pass length writer (src/wire/):
 * every wire type read with its value and its bytes, groups (a proto2
 * relic, met only as unknown fields) skipped whole however nested up to
 * the bound, and each malformed input refused rather than read past:
 * truncation, varints over ten bytes, field number 0, wire types 6 and
 * 7, a length beyond the input, an end tag without its start or
 * closing another group, nesting past the bound.
 */
#include <stdint.h>
#include <string.h>

#include "util/buf.h"
#include "wire/wire.h"
#include "xdtest.h"

/* The fields of `len` bytes at `in`: how many were read before the end
 * (return 0) or a refusal (return -1); the last one read in *last. */
static int read_all(const void *in, size_t len, int *count,
		    struct xd_wire_field *last)
{
	const uint8_t *p = in, *end = p + len;
	int rc;

	*count = 0;
	while ((rc = xd_wire_next(&p, end, last)) == 1)
		(*count)++;
	return rc;
}

#define READ(s, count, last) read_all((s), sizeof(s) - 1, (count), (last))

START_TEST(each_wire_type_read)
{
	struct xd_wire_field f;
	const uint8_t *p, *end;
	/* 1: varint 300; 2: fixed64 1; 3: bytes "hi"; 4: fixed32 0x01020304 */
	static const uint8_t in[] = {0x08, 0xac, 0x02,
				     0x11, 1, 0, 0, 0, 0, 0, 0, 0,
				     0x1a, 2, 'h', 'i',
				     0x25, 4, 3, 2, 1};

	p = in;
	end = in + sizeof(in);
	ck_assert_int_eq(xd_wire_next(&p, end, &f), 1);
	ck_assert_uint_eq(f.number, 1);
	ck_assert_uint_eq(f.wt, XD_WT_VARINT);
	ck_assert_uint_eq(f.v, 300);
	ck_assert_uint_eq(f.len, 2);
	ck_assert_int_eq(xd_wire_next(&p, end, &f), 1);
	ck_assert_uint_eq(f.wt, XD_WT_I64);
	ck_assert_uint_eq(f.v, 1);
	ck_assert_uint_eq(f.len, 8);
	ck_assert_int_eq(xd_wire_next(&p, end, &f), 1);
	ck_assert_uint_eq(f.wt, XD_WT_LEN);
	ck_assert_uint_eq(f.len, 2);
	ck_assert(memcmp(f.data, "hi", 2) == 0);
	ck_assert_int_eq(xd_wire_next(&p, end, &f), 1);
	ck_assert_uint_eq(f.number, 4);
	ck_assert_uint_eq(f.wt, XD_WT_I32);
	ck_assert_uint_eq(f.v, 0x01020304);
	ck_assert_int_eq(xd_wire_next(&p, end, &f), 0);
	ck_assert_ptr_eq(p, end);
}
END_TEST

START_TEST(varint_bounds)
{
	uint64_t v;
	const uint8_t *p;
	/* UINT64_MAX: nine bytes of 0xff and a tenth of 1 */
	static const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff,
				      0xff, 0xff, 0xff, 0xff, 0x01};
	static const uint8_t tenth_too_big[] = {0xff, 0xff, 0xff, 0xff, 0xff,
						0xff, 0xff, 0xff, 0xff, 0x02};
	static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80, 0x80, 0x00};
	static const uint8_t cut[] = {0x80, 0x80};

	p = max;
	ck_assert_int_eq(xd_wire_get_varint(&p, max + sizeof(max), &v), 0);
	ck_assert(v == UINT64_MAX);
	ck_assert_ptr_eq(p, max + sizeof(max));
	p = tenth_too_big;
	ck_assert_int_eq(xd_wire_get_varint(&p, p + sizeof(tenth_too_big), &v), -1);
	ck_assert_ptr_eq(p, tenth_too_big); /* not advanced */
	p = eleven;
	ck_assert_int_eq(xd_wire_get_varint(&p, p + sizeof(eleven), &v), -1);
	p = cut;
	ck_assert_int_eq(xd_wire_get_varint(&p, p + sizeof(cut), &v), -1);
}
END_TEST

START_TEST(groups_skipped_whole)
{
	struct xd_wire_field f;
	int n;
	/* 5: group { 1: varint 7; 6: group { 2: fixed32; 3: bytes "x";
	 * 4: fixed64 } } then 9: varint 1 */
	static const char in[] =
		"\x2b" "\x08\x07"
		"\x33" "\x15\x01\x02\x03\x04" "\x1a\x01x"
		"\x21\x01\x02\x03\x04\x05\x06\x07\x08" "\x34"
		"\x2c"
		"\x48\x01";

	ck_assert_int_eq(READ(in, &n, &f), 0);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(f.number, 9);
	ck_assert_uint_eq(f.v, 1);
	ck_assert_int_eq(read_all(in, 1 + 2 + 1 + 5 + 3 + 9 + 1 + 1, &n, &f), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(f.number, 5);
	ck_assert_uint_eq(f.wt, XD_WT_SGROUP);
	/* the group's bytes, its end tag included */
	ck_assert_uint_eq(f.len, 2 + 1 + 5 + 3 + 9 + 1 + 1);
	ck_assert_ptr_eq(f.data, (const uint8_t *)in + 1);
}
END_TEST

START_TEST(groups_refused_when_unbalanced_or_deep)
{
	struct xd_wire_field f;
	uint8_t deep[2 * 70];
	int n;

	/* an end tag alone; one that closes another group; no end at all */
	ck_assert_int_eq(READ("\x2c", &n, &f), -1);
	ck_assert_int_eq(READ("\x2b\x34", &n, &f), -1);
	ck_assert_int_eq(READ("\x2b\x08\x01", &n, &f), -1);
	/* inside a group: a truncated varint, fixed value and length */
	ck_assert_int_eq(READ("\x2b\x08", &n, &f), -1);
	ck_assert_int_eq(READ("\x2b\x15\x01", &n, &f), -1);
	ck_assert_int_eq(READ("\x2b\x1a\x05xy", &n, &f), -1);
	ck_assert_int_eq(READ("\x2b\x00", &n, &f), -1);
	/* 64 nested groups are read; 65 are refused */
	for (int i = 0; i < 64; i++) {
		deep[i] = 0x2b;
		deep[64 + i] = 0x2c;
	}
	ck_assert_int_eq(read_all(deep, 128, &n, &f), 0);
	ck_assert_int_eq(n, 1);
	for (int i = 0; i < 65; i++) {
		deep[i] = 0x2b;
		deep[65 + i] = 0x2c;
	}
	ck_assert_int_eq(read_all(deep, 130, &n, &f), -1);
	ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(malformed_fields_refused)
{
	struct xd_wire_field f;
	int n;

	ck_assert_int_eq(READ("\x00\x01", &n, &f), -1);   /* field 0 */
	ck_assert_int_eq(READ("\x0e", &n, &f), -1);       /* wire type 6 */
	ck_assert_int_eq(READ("\x0f", &n, &f), -1);       /* wire type 7 */
	ck_assert_int_eq(READ("\x08", &n, &f), -1);       /* no value */
	ck_assert_int_eq(READ("\x0d\x01\x02", &n, &f), -1); /* fixed32 cut */
	ck_assert_int_eq(READ("\x09\x01", &n, &f), -1);   /* fixed64 cut */
	ck_assert_int_eq(READ("\x0a\x03" "ab", &n, &f), -1); /* length past the end */
	/* a field read before the refusal is counted, and kept */
	ck_assert_int_eq(READ("\x08\x01\x0e", &n, &f), -1);
	ck_assert_int_eq(n, 1);
	/* the highest field number is read; one more is not */
	ck_assert_int_eq(READ("\xf8\xff\xff\xff\x0f\x01", &n, &f), 0);
	ck_assert_uint_eq(f.number, XD_WIRE_MAX_FIELD);
	ck_assert_int_eq(READ("\x80\x80\x80\x80\x10\x01", &n, &f), -1);
}
END_TEST

START_TEST(close_writes_the_minimal_length)
{
	struct xd_buf b = XD_BUF_INIT;
	char body[300];
	size_t mark;

	/* 127 bytes fit the reserved byte; 128 and 300 move the body up */
	for (size_t len = 127; len <= 300; len += len == 127 ? 1 : 172) {
		const uint8_t *p;
		uint64_t v;

		memset(body, 'a' + (int)(len % 26), sizeof(body));
		b.len = 0;
		xd_wire_tag(&b, 3, XD_WT_LEN);
		mark = xd_wire_open(&b);
		xd_buf_append(&b, body, len);
		ck_assert_uint_eq(xd_wire_close(&b, mark), len);
		ck_assert_uint_eq(b.len, 1 + xd_wire_varint_size(len) + len);
		p = b.data + 1;
		ck_assert_int_eq(xd_wire_get_varint(&p, b.data + b.len, &v), 0);
		ck_assert_uint_eq(v, len);
		ck_assert(memcmp(p, body, len) == 0);
	}
	xd_buf_free(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, each_wire_type_read);
	tcase_add_test(tc, varint_bounds);
	tcase_add_test(tc, groups_skipped_whole);
	tcase_add_test(tc, groups_refused_when_unbalanced_or_deep);
	tcase_add_test(tc, malformed_fields_refused);
	tcase_add_test(tc, close_writes_the_minimal_length);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
