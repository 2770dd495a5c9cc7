/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The transcoder: YAML and JSON → protobuf bytes → JSON, on the test
 * messages of tests/schema/proto (every scalar, label, map key and
 * well-known type) and on Envoy resources. Expected bytes were checked
 * against python3-protobuf's deterministic serialization (the
 * differential test does that for the whole corpus); expected errors are
 * the exact messages an operator sees.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/pbjson.h"
#include "schema/schema.h"
#include "schema/transcode.h"
#include "snapshot/annotations.h"
#include "util/common.h"
#include "xdtest.h"

static struct xd_schema *envoy, *test;

/* ---- helpers ---- */

static char *diag_text(struct xd_diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	xd_diag_print(d, f);
	fclose(f);
	if (len > 0 && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	return buf;
}

static char *hex(const uint8_t *p, size_t len)
{
	char *s = malloc(2 * len + 1);

	for (size_t i = 0; i < len; i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	s[2 * len] = '\0';
	return s;
}

static const struct xd_schema *schema_of(const char *type)
{
	return strncmp(type, "xdtest.", 7) == 0 ||
			       strncmp(type, "google.", 7) == 0 ?
		       test :
		       envoy;
}

static const struct xd_msgdesc *type_of(const char *type)
{
	const struct xd_msgdesc *m =
		xd_schema_find_message(schema_of(type), type);

	ck_assert_msg(m != NULL, "no type %s", type);
	return m;
}

/*
 * Encodes YAML (events API) as `type`; returns the bytes as hex, or the
 * error messages (one a line) prefixed by "ERR ".
 */
static char *yaml_to(const char *type, const char *yaml, const char *path,
		     struct xd_buf *out)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_buf b = XD_BUF_INIT;
	char *r, *t;

	if (out == NULL)
		out = &b;
	if (xd_transcode_yaml_text(schema_of(type), type_of(type), "t.yaml",
				   yaml, strlen(yaml), path, out, &d) == 0) {
		ck_assert_uint_eq(xd_diag_total(&d), 0);
		r = hex(out->data, out->len);
	} else {
		t = diag_text(&d);
		if (asprintf(&r, "ERR %s", t) < 0)
			abort();
		free(t);
	}
	xd_diag_clear(&d);
	xd_buf_free(&b);
	return r;
}

static char *enc(const char *type, const char *yaml)
{
	return yaml_to(type, yaml, "", NULL);
}

/* The same through JSON text and jansson. */
static char *enc_json(const char *type, const char *text)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_buf b = XD_BUF_INIT;
	json_error_t jerr;
	json_t *j = json_loads(text, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
	char *r, *t;

	ck_assert_msg(j != NULL, "bad test JSON: %s", jerr.text);
	if (xd_transcode_json(schema_of(type), type_of(type), j, "t.json", "",
			      &b, &d) == 0) {
		r = hex(b.data, b.len);
	} else {
		t = diag_text(&d);
		if (asprintf(&r, "ERR %s", t) < 0)
			abort();
		free(t);
	}
	json_decref(j);
	xd_diag_clear(&d);
	xd_buf_free(&b);
	return r;
}

/* Bytes → JSON text (compact, keys in the printer's order). */
static char *to_json(const char *type, const uint8_t *p, size_t len,
		     unsigned flags)
{
	struct xd_diag d = XD_DIAG_INIT;
	json_t *j = xd_pbjson_print(schema_of(type), type_of(type), p, len,
				    flags, &d);
	char *r, *t;

	if (j == NULL) {
		t = diag_text(&d);
		if (asprintf(&r, "ERR %s", t) < 0)
			abort();
		free(t);
	} else {
		r = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY |
					  JSON_REAL_PRECISION(17));
		json_decref(j);
	}
	xd_diag_clear(&d);
	return r;
}

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

#define ASSERT_ENC(type, yaml, want)                  \
	do {                                          \
		char *got_ = enc(type, yaml);         \
		ck_assert_str_eq(got_, want);         \
		free(got_);                           \
	} while (0)

/* ---- encoding: every type, checked against python3-protobuf ---- */

struct enc_case {
	const char *type, *yaml, *hex;
};

static const struct enc_case enc_cases[] = {
	/* scalars at their edges, negative int32 as 10 bytes, zigzag */
	{"xdtest.Scalars",
	 "i32: -5\ni64: \"-9223372036854775808\"\nu32: 4294967295\n"
	 "u64: \"18446744073709551615\"\ns32: -3\ns64: -300\nf32: 7\n"
	 "f64: \"8\"\nsf32: -9\nsf64: -10\nfl: 0.1\ndb: -2.5e-3\nb: true\n"
	 "str: \"h\xc3\xa9llo\"\nby: \"AAEC/w==\"\ncolor: BLUE\naliased: A_UNO\n",
	 "08fbffffffffffffffff01108080808080808080800118ffffffff0f20ffffffff"
	 "ffffffffff01280530d7043d070000004108000000000000004df7ffffff51f6ff"
	 "ffffffffffff5dcdcccc3d617b14ae47e17a64bf6801720668c3a96c6c6f7a0400"
	 "0102ff800103880101"},
	/* proto3 defaults omitted, presence kept, -0.0 is not a default */
	{"xdtest.Scalars",
	 "i32: 0\nstr: \"\"\nb: false\nopt_i32: 0\nopt_str: \"\"\n"
	 "opt_color: COLOR_UNSPECIFIED\ndb: -0.0\n",
	 "6100000000000000809001009a0100a00100"},
	/* NaN, -Infinity, an open enum's unknown number, URL-safe base64
	 * without padding */
	{"xdtest.Scalars", "fl: NaN\ndb: -Infinity\ncolor: 7\nby: \"-_8\"\n",
	 "5d0000c07f61000000000000f0ff7a02fbff800107"},
	/* numbers as numbers, null as not set, an empty message is set */
	{"xdtest.Scalars",
	 "fl: Infinity\ni64: 123\nu64: 5\nnull_value: null\nmsg: {}\n",
	 "107b20055d0000807fb20100"},
	/* integral numbers in other forms */
	{"xdtest.Scalars", "i32: 1.0\nu32: 1e3\ni64: \"2E2\"\n",
	 "080110c80118e807"},
	/* YAML's own floats and booleans */
	{"xdtest.Scalars", "db: .inf\nfl: -.Inf\nb: True\n",
	 "5d000080ff61000000000000f07f6801"},
	/* packed, unpacked, repeated messages and Values */
	{"xdtest.Repeated",
	 "i32: [1, -1, 0, 300]\ni64: [\"5\", -7]\nu32: [0, 1]\ns64: [-1, 1]\n"
	 "f32: [1, 2]\ndb: [1.5, NaN]\nfl: [0.5]\nb: [true, false]\n"
	 "color: [RED, 2, 0]\nstr: [a, \"\", c]\nby: [\"\", \"AA==\"]\n"
	 "msg: [{name: x}, {}]\nunpacked: [1, 2, 3]\n"
	 "values: [null, 1, \"s\", true, {a: 1}, [1, 2]]\n",
	 "0a0e01ffffffffffffffffff0100ac02120b05f9ffffffffffffffff011a020001"
	 "220201022a0801000000020000003210000000000000f83f000000000000f87f3a"
	 "040000003f420201004a0301020052016152005201635a005a0100620"
	 "30a0178620068016802680372020800720911000000000000f03f72031a017372"
	 "0220017212" "2a100a0e0a0161120911000000000000f03f721832160a09110000"
	 "00000000f03f0a09110000000000000040"},
	/* empty lists write nothing */
	{"xdtest.Repeated", "i32: []\nmsg: []\nstr: []\n", ""},
	/* maps: entries sorted by key, key and value always written */
	{"xdtest.Maps",
	 "str_str: {b: \"2\", a: \"1\", \"\": empty}\n"
	 "i32_str: {\"10\": ten, \"-1\": minus, \"2\": two}\n"
	 "i64_i32: {\"-5\": 1, \"3\": 0}\nu32_bool: {\"7\": false, \"1\": true}\n"
	 "u64_db: {\"18446744073709551615\": 0.5}\n"
	 "s32_color: {\"-2\": RED, \"1\": BLUE}\n"
	 "bool_str: {\"true\": t, \"false\": f}\n"
	 "str_msg: {z: {}, y: {name: n}}\nf64_by: {\"9\": \"AQ==\"}\n"
	 "str_value: {n: null, b: false, l: [], s: {}}\n"
	 "sf32_str: {\"-1\": a, \"1\": b}\nstr_dur: {x: 1s, y: 0s}\n",
	 "0a090a001205656d7074790a060a01611201310a060a0162120132121208ffffff"
	 "ffffffffffff0112056d696e757312070802120374776f1207080a120374656e1a"
	 "0d08fbffffffffffffffff0110011a04080310002204080110012204080710002a"
	 "1408ffffffffffffffffff0111000000000000e03f3204080310013204080210033a"
	 "0508001201663a05080112017442080a017912030a016e42050a017a12004a0c09"
	 "090000000000000012010152070a01621202200052070a016c1202320052070a01"
	 "6e1202080052070a017312022a005a080dffffffff1201615a080d010000001201"
	 "6262070a01781202080162050a01791200"},
	/* oneof members are written even when default */
	{"xdtest.Oneofs", "a: \"\"\nx: false\n", "0a002800"},
	{"xdtest.Oneofs", "d: COLOR_UNSPECIFIED\nplain: p\n", "20003a0170"},
	{"xdtest.Oneofs", "c: {}\ny: yy\n", "1a0032027979"},
	/* null does not count as a member */
	{"xdtest.Oneofs", "a: x\nb: null\n", "0a0178"},
	/* every well-known type */
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/xdtest.Nested, name: n, child: {n: 3}}\n"
	 "dur: -1.5s\nts: \"1972-01-01T10:00:20.021Z\"\nbool_v: false\n"
	 "i32_v: -1\nu32_v: 5\ni64_v: \"-7\"\nu64_v: 9\nfl_v: 1.5\ndb_v: 0\n"
	 "str_v: \"\"\nby_v: AQID\nst: {a: 1, b: [true, null], c: {d: x}}\n"
	 "val: 3.25\nlist: [1, a, null]\nempty: {}\nmask: \"fooBar.baz,qux\"\n"
	 "durs: [1s, 0.000000001s, -0.5s, 315576000000s]\n",
	 "0a2c0a21747970652e676f6f676c65617069732e636f6d2f7864746573742e4e65"
	 "737465641207" "0a016e1a021003121608ffffffffffffffffff011080b6ca91feff"
	 "ffffff011a0a08b4e78b1e10c0de810a22002a0b08ffffffffffffffffff013202"
	 "08053a0b08f9ffffffffffffffff01420208094a050d0000c03f52005a0062050a"
	 "030102036a340a0e0a0161120911000000000000f03f0a0f0a0162120a32080a02"
	 "20010a0208000a110a0163120c2a0a0a080a016412031a01787209110000000000"
	 "000a407a140a0911000000000000f03f0a031a01610a0208008201008a01120a0b"
	 "666f6f5f6261722e62617a0a037175789201020801920102100192010b1080b6ca"
	 "91feffffffff019201070880bcaece9709"},
	/* well-known types inside Any: {"@type", "value"}; offsets */
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/google.protobuf.Duration, value: 3s}\n"
	 "ts: \"2024-02-29T23:59:59.999999999+01:30\"\n"
	 "val: {x: [1, {y: null}]}\n",
	 "0a320a2c747970652e676f6f676c65617069732e636f6d2f676f6f676c652e7072"
	 "6f746f6275662e4475726174696f6e120208031a0c08e78a84af0610ff93ebdc03"
	 "72232a210a1f0a0178121a32180a0911000000000000f03f0a0b2a090a070a0179"
	 "12020800"},
	/* Any in Any, a null Value field */
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/google.protobuf.Any, value: "
	 "{\"@type\": type.googleapis.com/google.protobuf.Struct, value: {k: v}}}\n"
	 "val: null\n",
	 "0a630a27747970652e676f6f676c65617069732e636f6d2f676f6f676c652e7072"
	 "6f746f6275662e416e7912380a2a747970652e676f6f676c65617069732e636f6d"
	 "2f676f6f676c652e70726f746f6275662e537472756374120a0a080a016b12031a"
	 "017672020800"},
	/* empty contents: Empty, {}, [], "" */
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/google.protobuf.Empty}\n"
	 "st: {}\nlist: []\nmask: \"\"\n",
	 "0a2b0a29747970652e676f6f676c65617069732e636f6d2f676f6f676c652e7072"
	 "6f746f6275662e456d7074796a007a008a0100"},
	/* an Any of a message with no fields set; the timestamp range */
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/xdtest.Nested}\n"
	 "ts: \"0001-01-01T00:00:00Z\"\n",
	 "0a230a21747970652e676f6f676c65617069732e636f6d2f7864746573742e4e65"
	 "737465641a0b088092b8c398feffffff01"},
	{"xdtest.Wkt", "any: {}\nts: \"9999-12-31T23:59:59.999999999Z\"\n",
	 "0a001a0d08ff82d1ffaf0710ff93ebdc03"},
	/* "@type" need not come first */
	{"xdtest.Wkt",
	 "any: {name: n, \"@type\": type.googleapis.com/xdtest.Nested}\n",
	 "0a280a21747970652e676f6f676c65617069732e636f6d2f7864746573742e4e65"
	 "737465641203" "0a016e"},
	/* snake_case, lowerCamelCase and json_name */
	{"xdtest.Names", "fooBar: a\nbarBazQux: 3\nrenamed: r\n", "0a016110031a0172"},
	{"xdtest.Names", "foo_bar: a\nbar_baz_qux: 3\ncustom: r\n",
	 "0a016110031a0172"},
	/* fields in number order whatever the key order */
	{"xdtest.Sparse", "high: h\nmid: 2\nlow: 1\n", "0801c0b8020282ea300168"},
	/* proto2: presence for every optional field, opt-in packing */
	{"xdtest.Legacy",
	 "a: 0\ns: \"\"\nc: C_ZERO\nr: [1, 2]\np: [1, 2]\nd: 7\n",
	 "080012001800200120022a0201023807"},
	/* a body of 128 bytes or more: a two-byte length */
	{"xdtest.Scalars",
	 "msg: {name: \"0123456789012345678901234567890123456789012345678901"
	 "2345678901234567890123456789012345678901234567890123456789012345678"
	 "90123456789\"}\n",
	 "b20185010a8201"
	 "30313233343536373839303132333435363738393031323334353637383930313233"
	 "34353637383930313233343536373839303132333435363738393031323334353637"
	 "38393031323334353637383930313233343536373839303132333435363738393031"
	 "32333435363738393031323334353637383930313233343536373839"},
	/* YAML anchors, aliases and merge keys */
	{"xdtest.Repeated",
	 "msg:\n- &base {name: a, n: 1}\n- *base\n- <<: *base\n  n: 2\n",
	 "62050a016110016205" "0a0161100162050a016110" "02"},
	/* an explicit !!str tag makes a string */
	{"xdtest.Scalars", "str: !!str 123\n", "7203313233"},
};

START_TEST(encodes)
{
	const struct enc_case *c = &enc_cases[_i];
	char *got = enc(c->type, c->yaml);

	ck_assert_msg(strcmp(got, c->hex) == 0, "case %d (%s):\n got  %s\n want %s",
		      _i, c->yaml, got, c->hex);
	free(got);
}
END_TEST

/* ---- errors: every reason, with its exact message ---- */

struct err_case {
	const char *type, *yaml, *msg;
};

static const struct err_case err_cases[] = {
	{"xdtest.Scalars", "u32: 4294967296",
	 "t.yaml:1:6: p.u32: 4294967296 is out of range for uint32"},
	{"xdtest.Scalars", "i32: 1.5", "t.yaml:1:6: p.i32: 1.5 is not an integer"},
	{"xdtest.Scalars", "i32: abc",
	 "t.yaml:1:6: p.i32: expected an integer (int32), not 'abc'"},
	{"xdtest.Scalars", "i32: [1]",
	 "t.yaml:1:6: p.i32: expected an integer (int32), not a list"},
	{"xdtest.Scalars", "i64: 9223372036854775808",
	 "t.yaml:1:6: p.i64: 9223372036854775808 is out of range for int64"},
	{"xdtest.Scalars", "i64: \"-9223372036854775809\"",
	 "t.yaml:1:6: p.i64: -9223372036854775809 is out of range for int64"},
	{"xdtest.Scalars", "u64: -1", "t.yaml:1:6: p.u64: -1 is out of range for uint64"},
	{"xdtest.Scalars", "i32: 99999999999999999999999999999",
	 "t.yaml:1:6: p.i32: 99999999999999999999999999999 is out of range for int32"},
	{"xdtest.Scalars", "u64: 1e400",
	 "t.yaml:1:6: p.u64: 1e400 is out of range for uint64"},
	{"xdtest.Scalars", "i32: 1e-400", "t.yaml:1:6: p.i32: 1e-400 is not an integer"},
	{"xdtest.Scalars", "i32: 0x10",
	 "t.yaml:1:6: p.i32: expected an integer (int32), not '0x10'"},
	{"xdtest.Scalars", "fl: 1e39", "t.yaml:1:5: p.fl: 1e39 is out of range for float"},
	{"xdtest.Scalars", "db: 1e400", "t.yaml:1:5: p.db: 1e400 is out of range for double"},
	{"xdtest.Scalars", "db: x", "t.yaml:1:5: p.db: expected a number (double), not 'x'"},
	{"xdtest.Scalars", "db: nan", "t.yaml:1:5: p.db: expected a number (double), not 'nan'"},
	{"xdtest.Scalars", "b: yes", "t.yaml:1:4: p.b: expected true or false, not 'yes'"},
	{"xdtest.Scalars", "b: {}", "t.yaml:1:4: p.b: expected true or false, not a mapping"},
	{"xdtest.Scalars", "str: [a]", "t.yaml:1:6: p.str: expected a string, not a list"},
	{"xdtest.Scalars", "str: \"a\\0b\"", "t.yaml:1:6: p.str: string contains a NUL byte"},
	{"xdtest.Scalars", "by: \"a*b=\"", "t.yaml:1:5: p.by: malformed base64"},
	{"xdtest.Scalars", "by: \"abcde\"", "t.yaml:1:5: p.by: malformed base64"},
	{"xdtest.Scalars", "by: 5", "t.yaml:1:5: p.by: malformed base64"},
	{"xdtest.Scalars", "by: {}", "t.yaml:1:5: p.by: expected a base64 string, not a mapping"},
	{"xdtest.Scalars", "color: PURPLE",
	 "t.yaml:1:8: p.color: unknown value 'PURPLE' for enum xdtest.Color"},
	{"xdtest.Scalars", "color: BLU",
	 "t.yaml:1:8: p.color: unknown value 'BLU' for enum xdtest.Color (did you mean 'BLUE'?)"},
	{"xdtest.Scalars", "color: 4294967296",
	 "t.yaml:1:8: p.color: 4294967296 is out of range for enum xdtest.Color"},
	{"xdtest.Scalars", "color: [RED]",
	 "t.yaml:1:8: p.color: expected a value of enum xdtest.Color, not a list"},
	{"xdtest.Legacy", "c: 7", "t.yaml:1:4: p.c: 7 is not a value of enum xdtest.Closed"},
	{"xdtest.Scalars", "msg: 5",
	 "t.yaml:1:6: p.msg: expected a mapping for xdtest.Nested, not '5'"},
	{"xdtest.Scalars", "msg: {nmae: x}",
	 "t.yaml:1:7: p.msg.nmae: unknown field 'nmae' in xdtest.Nested (did you mean 'name'?)"},
	{"xdtest.Scalars", "nosuch: 1",
	 "t.yaml:1:1: p.nosuch: unknown field 'nosuch' in xdtest.Scalars"},
	{"xdtest.Scalars", "[a]: 1", "t.yaml:1:1: p: keys must be scalars, not a list"},
	{"xdtest.Scalars", "i32: 1\ni32: 2",
	 "t.yaml:2:1: p.i32: duplicate key 'i32' (first on line 1)"},
	{"xdtest.Names", "foo_bar: a\nfooBar: b",
	 "t.yaml:2:1: p.fooBar: 'fooBar' sets the same field as 'foo_bar' (first on line 1)"},
	{"xdtest.Oneofs", "a: x\nb: 2",
	 "t.yaml:2:1: p.b: 'b' and 'a' are both set, but only one member of oneof 'choice' may be"},
	{"xdtest.Repeated", "i32: 5", "t.yaml:1:6: p.i32: expected a list, not '5'"},
	{"xdtest.Repeated", "i32: [1, null]",
	 "t.yaml:1:10: p.i32[1]: null is not allowed in a list"},
	{"xdtest.Repeated", "msg: [{}, {n: x}]",
	 "t.yaml:1:15: p.msg[1].n: expected an integer (int32), not 'x'"},
	{"xdtest.Maps", "str_str: [a]", "t.yaml:1:10: p.str_str: expected a mapping, not a list"},
	{"xdtest.Maps", "i32_str: {x: a}",
	 "t.yaml:1:11: p.i32_str[\"x\"]: map key 'x': expected an integer (int32)"},
	{"xdtest.Maps", "i32_str: {\"1\": a, \"01\": b}",
	 "t.yaml:1:19: p.i32_str[\"01\"]: duplicate map key '01' (first on line 1)"},
	{"xdtest.Maps", "str_str: {a: 1, a: 2}",
	 "t.yaml:1:17: p.str_str[\"a\"]: duplicate map key 'a' (first on line 1)"},
	{"xdtest.Maps", "str_str: {a: null}",
	 "t.yaml:1:14: p.str_str[\"a\"]: null is not allowed as a map value"},
	{"xdtest.Maps", "u32_bool: {\"-1\": true}",
	 "t.yaml:1:12: p.u32_bool[\"-1\"]: map key -1 is out of range for uint32"},
	{"xdtest.Maps", "bool_str: {maybe: x}",
	 "t.yaml:1:12: p.bool_str[\"maybe\"]: map key 'maybe': expected true or false"},
	{"xdtest.Wkt", "dur: 5",
	 "t.yaml:1:6: p.dur: malformed duration '5' (expected seconds with an \"s\" suffix, e.g. \"1.5s\")"},
	{"xdtest.Wkt", "dur: 1.0000000001s",
	 "t.yaml:1:6: p.dur: malformed duration '1.0000000001s' (expected seconds with an \"s\" suffix, e.g. \"1.5s\")"},
	{"xdtest.Wkt", "dur: 1m",
	 "t.yaml:1:6: p.dur: malformed duration '1m' (expected seconds with an \"s\" suffix, e.g. \"1.5s\")"},
	{"xdtest.Wkt", "dur: 315576000001s",
	 "t.yaml:1:6: p.dur: duration '315576000001s' is out of range"},
	{"xdtest.Wkt", "ts: yesterday",
	 "t.yaml:1:5: p.ts: malformed timestamp 'yesterday' (expected RFC 3339, e.g. \"2024-01-02T03:04:05Z\")"},
	{"xdtest.Wkt", "ts: \"2023-02-29T00:00:00Z\"",
	 "t.yaml:1:5: p.ts: malformed timestamp '2023-02-29T00:00:00Z' (expected RFC 3339, e.g. \"2024-01-02T03:04:05Z\")"},
	{"xdtest.Wkt", "ts: \"0001-01-01T00:00:00+00:01\"",
	 "t.yaml:1:5: p.ts: timestamp '0001-01-01T00:00:00+00:01' is out of range"},
	{"xdtest.Wkt", "any: {name: x}",
	 "t.yaml:1:6: p.any: missing \"@type\" in google.protobuf.Any"},
	{"xdtest.Wkt", "any: {\"@type\": type.googleapis.com/no.Such}",
	 "t.yaml:1:16: p.any.@type: unknown \"@type\" 'type.googleapis.com/no.Such'"},
	{"xdtest.Wkt", "any: {\"@type\": type.googleapis.com/xdtest.Nested, nmae: x}",
	 "t.yaml:1:51: p.any.nmae: unknown field 'nmae' in xdtest.Nested (did you mean 'name'?)"},
	{"xdtest.Wkt", "any: {\"@type\": type.googleapis.com/google.protobuf.Duration}",
	 "t.yaml:1:6: p.any: missing \"value\" for google.protobuf.Duration in google.protobuf.Any"},
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/google.protobuf.Duration, value: 1s, extra: 1}",
	 "t.yaml:1:73: p.any.extra: unknown field 'extra' in an Any holding google.protobuf.Duration (only \"@type\" and \"value\")"},
	/* a NUL inside a type URL matches no type (regression: read past
	 * the end of a shorter name) */
	{"xdtest.Wkt", "any: {\"@type\": \"type.googleapis.com/xdtest.Nested\\0x\"}",
	 "t.yaml:1:16: p.any.@type: unknown \"@type\" 'type.googleapis.com/xdtest.Nested?x' (did you mean 'xdtest.Nested'?)"},
	{"xdtest.Wkt", "any: {\"@type\": [x]}",
	 "t.yaml:1:16: p.any.@type: expected a type URL string, not a list"},
	{"xdtest.Wkt", "any: [1]",
	 "t.yaml:1:6: p.any: expected a mapping with \"@type\" (google.protobuf.Any), not a list"},
	{"xdtest.Wkt", "mask: \"a_b\"", "t.yaml:1:7: p.mask: malformed FieldMask path 'a_b'"},
	{"xdtest.Wkt", "mask: [a]",
	 "t.yaml:1:7: p.mask: expected a FieldMask string such as \"a.b,cD\", not a list"},
	{"xdtest.Wkt", "list: {a: 1}",
	 "t.yaml:1:7: p.list: expected a list for google.protobuf.ListValue, not a mapping"},
	{"xdtest.Wkt", "st: [1]", "t.yaml:1:5: p.st: expected a mapping, not a list"},
	{"xdtest.Wkt", "st: {\"a\\0\": 1}", "t.yaml:1:6: p.st[\"a?\"]: string contains a NUL byte"},
	{"xdtest.Wkt", "bool_v: maybe", "t.yaml:1:9: p.bool_v: expected true or false, not 'maybe'"},
	{"xdtest.Wkt", "u32_v: -1", "t.yaml:1:8: p.u32_v: -1 is out of range for uint32"},
	{"xdtest.Wkt", "empty: {x: 1}",
	 "t.yaml:1:9: p.empty.x: unknown field 'x' in google.protobuf.Empty"},
	{"xdtest.Legacy", "g: {x: 1}", "t.yaml:1:4: p.g: field type group is not supported"},
	{"xdtest.Scalars", "[1, 2]", "t.yaml:1:1: p: expected a mapping for xdtest.Scalars, not a list"},
	{"xdtest.Scalars", "\"just a string\"",
	 "t.yaml:1:1: p: expected a mapping for xdtest.Scalars, not 'just a string'"},
	/* all of a resource's errors, in document order */
	{"xdtest.Scalars", "u32: -1\nstr: [x]\ni32: z\ncolor: NOPE",
	 "t.yaml:1:6: p.u32: -1 is out of range for uint32\n"
	 "t.yaml:2:6: p.str: expected a string, not a list\n"
	 "t.yaml:3:6: p.i32: expected an integer (int32), not 'z'\n"
	 "t.yaml:4:8: p.color: unknown value 'NOPE' for enum xdtest.Color"},
	/* YAML itself */
	{"xdtest.Scalars", "a: [1", "t.yaml:2:1: did not find expected ',' or ']' while parsing a flow sequence"},
	{"xdtest.Scalars", "a: *nope", "t.yaml:1:4: unknown alias '*nope'"},
	{"xdtest.Scalars", "i32: 1\n---\ni32: 2", "t.yaml:2:1: only one YAML document is allowed"},
	{"xdtest.Scalars", "", "t.yaml: empty document"},
	/* long values are cut in messages */
	{"xdtest.Scalars",
	 "i32: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	 "t.yaml:1:6: p.i32: expected an integer (int32), not "
	 "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"},
};

START_TEST(reports_errors)
{
	const struct err_case *c = &err_cases[_i];
	char *want, *got = yaml_to(c->type, c->yaml, "p", NULL);

	if (asprintf(&want, "ERR %s", c->msg) < 0)
		abort();
	ck_assert_msg(strcmp(got, want) == 0, "case %d (%s):\n got  %s\n want %s",
		      _i, c->yaml, got, want);
	free(want);
	free(got);
}
END_TEST

START_TEST(envoy_error_example)
{
	/* The example of the error format, on a real Cluster. */
	char *got = yaml_to(
		"envoy.config.cluster.v3.Cluster",
		"name: c\n"
		"load_assignment:\n"
		"  cluster_name: c\n"
		"  endpoints:\n"
		"  - lb_endpoints:\n"
		"    - endpoint: {address: {socket_address: {address: a, port_value: 1}}}\n"
		"    - endpoint:\n"
		"        address:\n"
		"          socket_address:\n"
		"            address: b\n"
		"            port_value: 70000\n"
		"lb_polcy: ROUND_ROBN\n",
		"clusters[2]", NULL);

	/* port_value is a uint32 limited by its validate rule. */
	ck_assert_str_eq(got,
		"ERR t.yaml:11:25: clusters[2].load_assignment.endpoints[0].lb_endpoints[1].endpoint.address.socket_address.port_value: 70000 is out of range for uint32 (at most 65535)\n"
		"t.yaml:12:1: clusters[2].lb_polcy: unknown field 'lb_polcy' in envoy.config.cluster.v3.Cluster (did you mean 'lb_policy'?)");
	free(got);
	/* limits on a double and on a wrapper's value */
	got = yaml_to("envoy.config.cluster.v3.Cluster",
		      "common_lb_config: {healthy_panic_threshold: {value: 150}}\n"
		      "outlier_detection: {max_ejection_percent: 101, consecutive_5xx: 0}\n"
		      "per_connection_buffer_limit_bytes: 0\n",
		      "c", NULL);
	ck_assert_str_eq(got,
		"ERR t.yaml:1:53: c.common_lb_config.healthy_panic_threshold.value: 150 is out of range for double (from 0 to 100)\n"
		"t.yaml:2:43: c.outlier_detection.max_ejection_percent: 101 is out of range for uint32 (at most 100)");
	free(got);
	got = yaml_to("envoy.config.cluster.v3.Cluster", "lb_policy: ROUND_ROBN\n",
		      "clusters[0]", NULL);
	ck_assert_str_eq(got, "ERR t.yaml:1:12: clusters[0].lb_policy: unknown value 'ROUND_ROBN' for enum envoy.config.cluster.v3.Cluster.LbPolicy (did you mean 'ROUND_ROBIN'?)");
	free(got);
}
END_TEST

START_TEST(stops_after_many_errors)
{
	struct xd_buf doc = XD_BUF_INIT;
	char *got, *line;
	int n = 0;

	for (int i = 0; i < 30; i++)
		xd_buf_printf(&doc, "- {n: x%d}\n", i);
	xd_buf_putc(&doc, '\0');
	got = enc("xdtest.Repeated", "msg: []");
	free(got);
	{
		char *yaml;

		if (asprintf(&yaml, "msg:\n%s", (char *)doc.data) < 0)
			abort();
		got = yaml_to("xdtest.Repeated", yaml, "r", NULL);
		free(yaml);
	}
	for (line = got; (line = strchr(line, '\n')) != NULL; line++)
		n++;
	ck_assert_int_eq(n, 20); /* 20 errors and the closing line */
	ck_assert_ptr_nonnull(strstr(got, "t.yaml:21:7: r.msg[19].n: expected an integer (int32), not 'x19'\n"));
	ck_assert_ptr_nonnull(strstr(got, "\nt.yaml:1:1: r: stopped after 20 errors in this resource"));
	ck_assert_ptr_null(strstr(got, "x20"));
	free(got);
	xd_buf_free(&doc);
}
END_TEST

/* ---- bounds ---- */

static char *deep(const char *open, const char *close, int n,
		  const char *inner)
{
	struct xd_buf b = XD_BUF_INIT;

	for (int i = 0; i < n; i++)
		xd_buf_printf(&b, "%s", open);
	xd_buf_printf(&b, "%s", inner);
	for (int i = 0; i < n; i++)
		xd_buf_printf(&b, "%s", close);
	xd_buf_putc(&b, '\0');
	return (char *)xd_buf_steal(&b, NULL);
}

START_TEST(depth_bound)
{
	char *doc, *got;

	/* 64 messages deep is fine: the root and 63 `next`s. */
	doc = deep("{next: ", "}", 63, "{v: 1}");
	got = enc("xdtest.Deep", doc);
	ck_assert(strncmp(got, "ERR", 3) != 0);
	free(got);
	free(doc);
	doc = deep("{next: ", "}", 64, "{v: 1}");
	got = enc("xdtest.Deep", doc);
	ck_assert_str_eq(got, "ERR t.yaml:1:449: next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next: nesting deeper than 64 levels");
	free(got);
	free(doc);
	/* Struct values count too. */
	doc = deep("[", "]", 40, "1");
	{
		char *yaml;

		if (asprintf(&yaml, "list: %s", doc) < 0)
			abort();
		got = enc("xdtest.Wkt", yaml);
		free(yaml);
	}
	ck_assert_ptr_nonnull(strstr(got, "nesting deeper than 64 levels"));
	free(got);
	free(doc);
	/* Any contents count. */
	doc = deep("{\"@type\": type.googleapis.com/xdtest.Deep, any: ", "}", 70, "{}");
	{
		char *yaml;

		if (asprintf(&yaml, "any: %s", doc) < 0)
			abort();
		got = enc("xdtest.Deep", yaml);
		free(yaml);
	}
	ck_assert_ptr_nonnull(strstr(got, ": nesting deeper than 64 levels"));
	free(got);
	free(doc);
	/* The YAML itself: refused before any recursion. */
	doc = deep("[", "]", 100000, "1");
	{
		char *yaml;

		if (asprintf(&yaml, "list: %s", doc) < 0)
			abort();
		got = enc("xdtest.Wkt", yaml);
		free(yaml);
	}
	ck_assert_str_eq(got, "ERR t.yaml:1:262: nesting deeper than 256 levels");
	free(got);
	free(doc);
}
END_TEST

START_TEST(alias_bomb)
{
	const char *yaml =
		"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		"f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
		"h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
	char *got = enc("google.protobuf.Struct", yaml);

	ck_assert_ptr_nonnull(strstr(got, "aliases expand to too many nodes"));
	free(got);
}
END_TEST

START_TEST(huge_numbers)
{
	struct xd_buf b = XD_BUF_INIT;
	char *got;

	xd_buf_printf(&b, "i64: ");
	for (int i = 0; i < 5000; i++)
		xd_buf_putc(&b, '9');
	xd_buf_printf(&b, "\nu32: 1e999999999999\ndb: 1e-999999\nfl: 1e-50\n");
	xd_buf_putc(&b, '\0');
	got = yaml_to("xdtest.Scalars", (char *)b.data, "", NULL);
	ck_assert_ptr_nonnull(strstr(got, "is out of range for int64"));
	ck_assert_ptr_nonnull(strstr(got, "t.yaml:2:6: u32: 1e999999999999 is out of range for uint32"));
	/* Underflow is zero, as protobuf's parsers have it. */
	ck_assert_ptr_null(strstr(got, "db:"));
	ck_assert_ptr_null(strstr(got, "fl:"));
	free(got);
	xd_buf_free(&b);
}
END_TEST

/* ---- determinism ---- */

START_TEST(key_order_does_not_matter)
{
	static const char *const docs[][2] = {
		{"name: c\ntype: EDS\nconnect_timeout: 1s\n"
		 "eds_cluster_config: {service_name: s, eds_config: {ads: {}}}\n"
		 "metadata: {filter_metadata: {b: {y: 1, x: 2}, a: {k: v}}}\n",
		 "metadata: {filter_metadata: {a: {k: v}, b: {x: 2, y: 1}}}\n"
		 "eds_cluster_config: {eds_config: {ads: {}}, service_name: s}\n"
		 "connectTimeout: 1s\ntype: EDS\nname: c\n"},
		{"transport_socket:\n  name: tls\n  typed_config:\n"
		 "    \"@type\": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\n"
		 "    sni: x\n    common_tls_context: {alpn_protocols: [h2]}\nname: t\n",
		 "name: t\ntransport_socket:\n  typed_config:\n"
		 "    commonTlsContext: {alpnProtocols: [h2]}\n    sni: x\n"
		 "    \"@type\": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\n"
		 "  name: tls\n"},
	};

	for (size_t i = 0; i < XD_ARRAY_LEN(docs); i++) {
		char *a = enc("envoy.config.cluster.v3.Cluster", docs[i][0]);
		char *b = enc("envoy.config.cluster.v3.Cluster", docs[i][1]);

		ck_assert(strncmp(a, "ERR", 3) != 0);
		ck_assert_str_eq(a, b);
		free(a);
		free(b);
	}
}
END_TEST

/* ---- JSON input ---- */

START_TEST(json_input)
{
	char *got;

	got = enc_json("xdtest.Scalars",
		       "{\"i32\": -5, \"i64\": \"-9223372036854775808\", \"u32\": 4294967295,"
		       " \"fl\": 0.1, \"db\": -0.0025, \"b\": true, \"str\": \"h\\u00e9llo\","
		       " \"by\": \"AAEC/w==\", \"color\": \"BLUE\"}");
	ck_assert_str_eq(got, "08fbffffffffffffffff0110808080808080808080011"
			      "8ffffffff0f5dcdcccc3d617b14ae47e17a64bf680172"
			      "0668c3a96c6c6f7a040001" "02ff800103");
	free(got);
	/* JSON has no positions: file and path. */
	got = enc_json("xdtest.Scalars", "{\"u32\": 4294967296, \"str\": 5, \"b\": \"x\"}");
	ck_assert_str_eq(got, "ERR t.json: u32: 4294967296 is out of range for uint32\n"
			      "t.json: str: expected a string, not 5\n"
			      "t.json: b: expected true or false, not 'x'");
	free(got);
	got = enc_json("xdtest.Scalars", "{\"str\": \"a\\u0000b\", \"msg\": {\"name\": true}}");
	ck_assert_str_eq(got, "ERR t.json: str: string contains a NUL byte\n"
			      "t.json: msg.name: expected a string, not true");
	free(got);
	got = enc_json("xdtest.Names", "{\"fooBar\": \"a\", \"foo_bar\": \"b\"}");
	ck_assert_str_eq(got, "ERR t.json: foo_bar: 'foo_bar' sets the same field as 'fooBar'");
	free(got);
	/* null: not set; except for Value */
	got = enc_json("xdtest.Wkt", "{\"dur\": null, \"val\": null, \"st\": {\"a\": null}}");
	ck_assert_str_eq(got, "6a090a070a0161120208007202" "0800");
	free(got);
	/* numbers for a string field and booleans for numbers are refused */
	got = enc_json("xdtest.Scalars", "{\"i32\": true}");
	ck_assert_str_eq(got, "ERR t.json: i32: expected an integer (int32), not true");
	free(got);
}
END_TEST

START_TEST(invalid_utf8)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_buf b = XD_BUF_INIT;
	json_t *j = json_object();
	char *text;

	/* jansson checks UTF-8 itself; a caller's json_t may not be. */
	json_object_set_new(j, "str", json_stringn_nocheck("a\xff\xfe", 3));
	ck_assert_int_eq(xd_transcode_json(test, type_of("xdtest.Scalars"), j,
					   "t.json", "r", &b, &d),
			 -1);
	text = diag_text(&d);
	ck_assert_str_eq(text, "t.json: r.str: string is not valid UTF-8");
	free(text);
	json_decref(j);
	xd_diag_clear(&d);
	/* libyaml refuses invalid UTF-8 input outright. */
	text = enc("xdtest.Scalars", "str: \"a\xff\"\n");
	ck_assert_str_eq(text, "ERR t.yaml:1:8: invalid leading UTF-8 octet");
	free(text);
	xd_buf_free(&b);
}
END_TEST

/* ---- bytes → JSON ---- */

struct json_case {
	const char *type, *yaml, *json, *camel;
};

static const struct json_case json_cases[] = {
	{"xdtest.Scalars",
	 "i32: -5\ni64: -9\nu32: 7\nu64: 18446744073709551615\ns32: -3\n"
	 "s64: -300\nf32: 7\nf64: 8\nsf32: -9\nsf64: -10\nfl: 0.1\ndb: -2.5e-3\n"
	 "b: true\nstr: x\nby: \"-_8=\"\ncolor: BLUE\naliased: A_UNO\nopt_i32: 0\n",
	 "{\"i32\":-5,\"i64\":\"-9\",\"u32\":7,\"u64\":\"18446744073709551615\","
	 "\"s32\":-3,\"s64\":\"-300\",\"f32\":7,\"f64\":\"8\",\"sf32\":-9,"
	 "\"sf64\":\"-10\",\"fl\":0.10000000000000001,\"db\":-0.0025000000000000001,"
	 "\"b\":true,\"str\":\"x\",\"by\":\"+/8=\",\"color\":\"BLUE\","
	 "\"aliased\":\"A_ONE\",\"opt_i32\":0}",
	 "{\"i32\":-5,\"i64\":\"-9\",\"u32\":7,\"u64\":\"18446744073709551615\","
	 "\"s32\":-3,\"s64\":\"-300\",\"f32\":7,\"f64\":\"8\",\"sf32\":-9,"
	 "\"sf64\":\"-10\",\"fl\":0.10000000000000001,\"db\":-0.0025000000000000001,"
	 "\"b\":true,\"str\":\"x\",\"by\":\"+/8=\",\"color\":\"BLUE\","
	 "\"aliased\":\"A_ONE\",\"optI32\":0}"},
	{"xdtest.Scalars", "fl: NaN\ndb: -Infinity\ncolor: 7\n",
	 "{\"fl\":\"NaN\",\"db\":\"-Infinity\",\"color\":7}", NULL},
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/xdtest.Nested, name: n}\n"
	 "dur: -0.5s\nts: \"1972-01-01T10:00:20.021+01:00\"\nbool_v: false\n"
	 "i64_v: 5\nst: {b: [true, null, 1.5, -0.0], a: {}}\nval: x\nlist: [1]\n"
	 "empty: {}\nmask: \"fooBar.baz,q\"\ndurs: [1s, 0.000001s, 0.000000001s]\n",
	 "{\"any\":{\"@type\":\"type.googleapis.com/xdtest.Nested\",\"name\":\"n\"},"
	 "\"dur\":\"-0.500s\",\"ts\":\"1972-01-01T09:00:20.021Z\",\"bool_v\":false,"
	 "\"i64_v\":\"5\",\"st\":{\"a\":{},\"b\":[true,null,1.5,-0.0]},\"val\":\"x\","
	 "\"list\":[1],\"empty\":{},\"mask\":\"fooBar.baz,q\","
	 "\"durs\":[\"1s\",\"0.000001s\",\"0.000000001s\"]}",
	 NULL},
	{"xdtest.Wkt",
	 "any: {\"@type\": type.googleapis.com/google.protobuf.Duration, value: 1.5s}\n",
	 "{\"any\":{\"@type\":\"type.googleapis.com/google.protobuf.Duration\",\"value\":\"1.500s\"}}",
	 NULL},
	{"xdtest.Maps",
	 "i32_str: {\"-1\": a}\nbool_str: {\"true\": t}\nstr_msg: {k: {}}\n"
	 "u64_db: {\"18446744073709551615\": 1}\n",
	 "{\"i32_str\":{\"-1\":\"a\"},\"u64_db\":{\"18446744073709551615\":1.0},"
	 "\"bool_str\":{\"true\":\"t\"},\"str_msg\":{\"k\":{}}}",
	 "{\"i32Str\":{\"-1\":\"a\"},\"u64Db\":{\"18446744073709551615\":1.0},"
	 "\"boolStr\":{\"true\":\"t\"},\"strMsg\":{\"k\":{}}}"},
	{"xdtest.Oneofs", "a: \"\"\n", "{\"a\":\"\"}", NULL},
	{"xdtest.Names", "custom: r\n", "{\"custom\":\"r\"}", "{\"renamed\":\"r\"}"},
	{"xdtest.Legacy", "a: 0\np: [1, 2]\n", "{\"a\":0,\"p\":[1,2]}", NULL},
};

START_TEST(prints_json)
{
	const struct json_case *c = &json_cases[_i];
	struct xd_buf b = XD_BUF_INIT;
	char *got, *back;

	got = yaml_to(c->type, c->yaml, "", &b);
	ck_assert(strncmp(got, "ERR", 3) != 0);
	free(got);
	for (int camel = 0; camel < 2; camel++) {
		const char *want = camel && c->camel ? c->camel : c->json;

		got = to_json(c->type, b.data, b.len, camel ? XD_PBJSON_CAMEL : 0);
		if (!camel || c->camel)
			ck_assert_msg(strcmp(got, want) == 0, "case %d:\n got  %s\n want %s",
				      _i, got, want);
		/* and back to the same bytes */
		back = enc_json(c->type, got);
		{
			char *orig = hex(b.data, b.len);

			ck_assert_str_eq(back, orig);
			free(orig);
		}
		free(back);
		free(got);
	}
	xd_buf_free(&b);
}
END_TEST

START_TEST(decodes_other_encoders)
{
	uint8_t buf[256];
	size_t n;
	char *got;

	/* out of order, a default on the wire, an unknown field */
	n = unhex("1002" "0a0161" "1000" "f8ff0301", buf);
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "{\"name\":\"a\"}");
	free(got);
	n = unhex("0a0161" "1002" "f8ff0301", buf);
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "{\"name\":\"a\",\"n\":2}");
	free(got);
	/* packed and unpacked mixed */
	n = unhex("0a0201020803" "0a0104", buf);
	got = to_json("xdtest.Repeated", buf, n, 0);
	ck_assert_str_eq(got, "{\"i32\":[1,2,3,4]}");
	free(got);
	/* regressions found by fuzzing: an empty packed run prints as no
	 * field; of a oneof's members on the wire, the last wins */
	n = unhex("1a00" "0a0105", buf);
	got = to_json("xdtest.Repeated", buf, n, 0);
	ck_assert_str_eq(got, "{\"i32\":[5]}");
	free(got);
	n = unhex("0a0161" "1002" "2801", buf);
	got = to_json("xdtest.Oneofs", buf, n, 0);
	ck_assert_str_eq(got, "{\"b\":2,\"x\":true}");
	free(got);
	/* a message in parts is merged */
	n = unhex("1a030a0161" "1a021005" "1a00", buf);
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "{\"child\":{\"name\":\"a\",\"n\":5}}");
	free(got);
	/* a known number with another wire type is an unknown field, as
	 * protobuf's parsers have it */
	n = unhex("0801" "120178" "1802", buf);
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "{}");
	free(got);
}
END_TEST

START_TEST(decode_errors)
{
	uint8_t buf[256];
	size_t n;
	char *got;

	n = unhex("0a05616263", buf);
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Nested: malformed protobuf data");
	free(got);
	n = unhex("08ffffffffffffffffffff01", buf);
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Nested: malformed protobuf data");
	free(got);
	n = unhex("1a0312016108", buf); /* child then a truncated varint */
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Nested: malformed protobuf data");
	free(got);
	n = unhex("1a040a02ff61", buf);
	got = to_json("xdtest.Nested", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Nested at child.name: name: string is not valid UTF-8");
	free(got);
	n = unhex("0a100a0e747970652e782f4e6f2e53756368", buf);
	got = to_json("xdtest.Wkt", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Wkt at any: google.protobuf.Any of unknown type 'type.x/No.Such'");
	free(got);
	(void)n;
	n = unhex("720911000000000000f87f", buf);
	got = to_json("xdtest.Wkt", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Wkt at val: google.protobuf.Value holds NaN, which JSON cannot carry");
	free(got);
	n = unhex("1207088092b8c398fe", buf);
	got = to_json("xdtest.Wkt", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Wkt at dur: malformed google.protobuf.Duration");
	free(got);
	n = unhex("120d08ffffffffffffffffff011001", buf);
	got = to_json("xdtest.Wkt", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Wkt at dur: google.protobuf.Duration out of range (seconds -1, nanos 1)");
	free(got);
	/* FieldMask paths without a JSON form (empty, with a comma) */
	n = unhex("8a0102" "0a00", buf);
	got = to_json("xdtest.Wkt", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Wkt at mask: FieldMask path '' has no JSON form");
	free(got);
	n = unhex("8a01050a03612c62", buf);
	got = to_json("xdtest.Wkt", buf, n, 0);
	ck_assert_str_eq(got, "ERR xdtest.Wkt at mask: FieldMask path 'a,b' has no JSON form");
	free(got);
	/* 70 nested messages */
	{
		struct xd_buf b = XD_BUF_INIT;
		char *doc = deep("{next: ", "}", 69, "{v: 1}");
		char *r = yaml_to("xdtest.Deep", doc + 7, "", &b);

		ck_assert(strncmp(r, "ERR", 3) == 0); /* the encoder refuses */
		free(r);
		free(doc);
		xd_buf_free(&b);
		/* hand-made: 64 levels of `next` under the root */
		{
			struct xd_buf in = XD_BUF_INIT, outer = XD_BUF_INIT;

			for (int i = 0; i < 64; i++) {
				outer.len = 0;
				xd_buf_putc(&outer, 0x0a);
				{
					uint8_t v[10];
					size_t k = 0, len = in.len;

					do {
						v[k++] = (uint8_t)((len & 0x7f) |
								   (len >= 0x80 ? 0x80 : 0));
						len >>= 7;
					} while (len > 0);
					xd_buf_append(&outer, v, k);
				}
				xd_buf_append(&outer, in.data, in.len);
				in.len = 0;
				xd_buf_append(&in, outer.data, outer.len);
			}
			got = to_json("xdtest.Deep", in.data, in.len, 0);
			ck_assert_ptr_nonnull(strstr(got, "nesting deeper than 64 levels"));
			free(got);
			/* one level less is fine */
			got = to_json("xdtest.Deep", in.data + 2, in.len - 2, 0);
			ck_assert(strncmp(got, "ERR", 3) != 0);
			free(got);
			xd_buf_free(&in);
			xd_buf_free(&outer);
		}
	}
}
END_TEST

/* ---- snapshot files ---- */

struct seen {
	struct xd_buf log;
	int stop_after;
	int count;
};

/* The annotation hooks file_run hands the transcoder: the snapshot's,
 * unless a test sets others (or none). */
static const struct xd_ann_hooks *file_hooks;
static bool file_hooks_set;

static int on_item(const struct xd_item *it, void *arg)
{
	struct seen *s = arg;
	char *h = hex(it->data, it->len > 8 ? 8 : it->len);
	struct xd_annotations ann;

	xd_buf_printf(&s->log, "%s %s %zu %u:%u %zu %s", it->path,
		      it->section->key, it->index, it->line, it->column, it->len, h);
	if (file_hooks_set) {
		/* other hooks: what they wrote, as text */
		if (it->ann_len > 0)
			xd_buf_printf(&s->log, " ann [%.*s]", (int)it->ann_len,
				      (const char *)it->ann);
		xd_buf_putc(&s->log, '\n');
		free(h);
		return ++s->count == s->stop_after;
	}
	xd_annotations_read(it->ann, it->ann_len, &ann);
	/* annotations, when the item has any */
	if (ann.allow_set) {
		xd_buf_printf(&s->log, " @allow%s", ann.allow_anyone ?
							   " anyone" : "");
		for (size_t i = 0; i < ann.nallow; i++)
			xd_buf_printf(&s->log, " [%s]", ann.allow[i]);
	}
	if (ann.ttl_ms > 0)
		xd_buf_printf(&s->log, " @ttl %ums", (unsigned)ann.ttl_ms);
	if (ann.name != NULL)
		xd_buf_printf(&s->log, " @name [%s]", ann.name);
	if (ann.on_demand)
		xd_buf_printf(&s->log, " @on_demand");
	xd_buf_putc(&s->log, '\n');
	free(h);
	return ++s->count == s->stop_after;
}

static struct xd_section sections[3];

static char *file_run(const char *text, unsigned threads, int json,
		      int stop_after)
{
	struct seen s = {XD_BUF_INIT, stop_after, 0};
	struct xd_diag d = XD_DIAG_INIT;
	const struct xd_ann_hooks *hooks =
		file_hooks_set ? file_hooks : xd_annotations_hooks();
	char *errs, *r;
	int rc;

	if (json)
		rc = xd_transcode_json_file(test, "s.json", text, strlen(text),
					    sections, 3, hooks, on_item, &s, &d);
	else
		rc = xd_transcode_yaml_file(test, "s.yaml", text, strlen(text),
					    threads, sections, 3, hooks, on_item,
					    &s, &d);
	errs = diag_text(&d);
	xd_buf_putc(&s.log, '\0');
	if (asprintf(&r, "rc=%d\n%s%s", rc, (char *)s.log.data, errs) < 0)
		abort();
	free(errs);
	xd_buf_free(&s.log);
	xd_diag_clear(&d);
	return r;
}

START_TEST(snapshot_files)
{
	char *got;

	got = file_run("nested:\n- name: a\n- {name: b, n: 2}\n"
		       "scalars: [{i32: 1}]\n"
		       "empty:\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=0\n"
			      "nested[0] nested 0 2:3 3 0a0161\n"
			      "nested[1] nested 1 3:3 5 0a01621002\n"
			      "scalars[0] scalars 0 4:11 2 0801\n");
	free(got);
	/* errors: every item is still checked, every error reported */
	got = file_run("nested:\n- name: a\n- {name: 5, nn: 2}\n- name: c\n"
		       "nestd: []\nscalars: {}\nnested: []\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "nested[0] nested 0 2:3 3 0a0161\n"
			      "nested[2] nested 2 4:3 3 0a0163\n"
			      "s.yaml:3:13: nested[1].nn: unknown field 'nn' in xdtest.Nested (did you mean 'n'?)\n"
			      "s.yaml:5:1: unknown key 'nestd' (expected one of: nested, scalars, empty)\n"
			      "s.yaml:6:10: scalars: expected a list of xdtest.Scalars, not a mapping\n"
			      "s.yaml:7:1: duplicate key 'nested' (first on line 1)");
	free(got);
	/* the root */
	got = file_run("- a\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\ns.yaml:1:1: a snapshot file must be a mapping of lists (clusters:, listeners:, ...), not a list");
	free(got);
	got = file_run("", 1, 0, 0);
	ck_assert_str_eq(got, "rc=0\n");
	free(got);
	got = file_run("# nothing\n---\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=0\n");
	free(got);
	got = file_run("nested: []\n---\nnested: []\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\ns.yaml:2:1: only one YAML document is allowed");
	free(got);
	got = file_run("nested:\n- name: a\n  n: [\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\ns.yaml:4:1: did not find expected node content while parsing a flow node");
	free(got);
	/* anchors from one item used by another; a list through an alias */
	got = file_run("nested:\n- &x {name: a}\n- *x\n- <<: *x\n  n: 1\n"
		       "scalars: &l [{i32: 1}]\nempty: *l\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "nested[0] nested 0 2:3 3 0a0161\n"
			      "nested[1] nested 1 2:3 3 0a0161\n"
			      "nested[2] nested 2 4:3 5 0a01611001\n"
			      "scalars[0] scalars 0 6:14 2 0801\n"
			      "s.yaml:6:15: empty[0].i32: unknown field 'i32' in google.protobuf.Empty");
	free(got);
	/* the callback stops the file */
	got = file_run("nested:\n- name: a\n- name: b\n", 1, 0, 1);
	ck_assert_str_eq(got, "rc=-1\nnested[0] nested 0 2:3 3 0a0161\n");
	free(got);
}
END_TEST

/* A file large enough to be cut: the same result with 1 and 4 threads. */
START_TEST(snapshot_in_pieces)
{
	struct xd_buf b = XD_BUF_INIT;
	char *one, *four;

	xd_buf_printf(&b, "# generated\nnested:\n");
	for (int i = 0; i < 40000; i++)
		xd_buf_printf(&b, "- name: item-%05d\n  n: %d\n  child: {name: c}\n",
			      i, i);
	xd_buf_printf(&b, "scalars:\n");
	for (int i = 0; i < 20000; i++)
		xd_buf_printf(&b, "  - {i32: %d, str: s}\n", i);
	xd_buf_putc(&b, '\0');
	ck_assert_uint_gt(b.len, 2u << 20);
	one = file_run((char *)b.data, 1, 0, 0);
	four = file_run((char *)b.data, 4, 0, 0);
	ck_assert(strncmp(one, "rc=0\n", 5) == 0);
	ck_assert(strcmp(one, four) == 0);
	free(four);
	free(one);
	/* an error in a later piece: the messages of a one-piece run */
	{
		char *p = strstr((char *)b.data, "n: 30000\n");

		ck_assert_ptr_nonnull(p);
		memcpy(p, "x: 30000\n", 9);
	}
	one = file_run((char *)b.data, 1, 0, 0);
	four = file_run((char *)b.data, 4, 0, 0);
	ck_assert(strncmp(one, "rc=-1\n", 6) == 0);
	ck_assert_ptr_nonnull(strstr(one, "s.yaml:90004:3: nested[30000].x: unknown field 'x' in xdtest.Nested"));
	ck_assert(strcmp(one, four) == 0);
	free(four);
	free(one);
	xd_buf_free(&b);
}
END_TEST

/* A resource's annotations ("@allow", "@ttl", ...) are read beside its fields
 * and left out of its bytes: "a" encodes as if they were not there. */
START_TEST(snapshot_annotations)
{
	char *got;

	got = file_run("nested:\n"
		       "- name: a\n"
		       "  \"@allow\": [\"spiffe://example.org/ns/*/sa/web\", envoy-?]\n"
		       "- {\"@allow\": [\"@anyone\", x], name: a}\n"
		       "- {name: a, \"@allow\": []}\n"
		       "- name: a\n"
		       "- {name: a, \"@ttl\": 1.5s, \"@allow\": [\"@anyone\"]}\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=0\n"
			      "nested[0] nested 0 2:3 3 0a0161 @allow [spiffe://example.org/ns/*/sa/web] [envoy-?]\n"
			      "nested[1] nested 1 4:3 3 0a0161 @allow anyone [x]\n"
			      "nested[2] nested 2 5:3 3 0a0161 @allow\n"
			      "nested[3] nested 3 6:3 3 0a0161\n"
			      "nested[4] nested 4 7:3 3 0a0161 @allow anyone @ttl 1500ms\n");
	free(got);
	/* every malformed "@allow", in document order among the fields'
	 * own errors */
	got = file_run("nested:\n"
		       "- {name: a, \"@allow\": frontend}\n"
		       "- {name: a, \"@allow\": {a: b}}\n"
		       "- {name: a, \"@allow\": ~}\n"
		       "- \"@allow\": [~, \"\", \"@any\", [x], {y: z}, \"\\0\", ok]\n"
		       "  nn: 1\n"
		       "- {\"@colour\": 5s, \"@alow\": [], name: a}\n"
		       "- {\"@allow\": [a], name: b, \"@allow\": [b]}\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "s.yaml:2:23: nested[0].@allow: expected a list of identity globs, not 'frontend'\n"
			      "s.yaml:3:23: nested[1].@allow: expected a list of identity globs, not a mapping\n"
			      "s.yaml:4:23: nested[2].@allow: expected a list of identity globs, not null\n"
			      "s.yaml:5:14: nested[3].@allow[0]: expected an identity glob (a string), not null\n"
			      "s.yaml:5:17: nested[3].@allow[1]: an empty glob matches no identity\n"
			      "s.yaml:5:21: nested[3].@allow[2]: unknown keyword '@any' (the only one is '@anyone')\n"
			      "s.yaml:5:29: nested[3].@allow[3]: expected an identity glob (a string), not a list\n"
			      "s.yaml:5:34: nested[3].@allow[4]: expected an identity glob (a string), not a mapping\n"
			      "s.yaml:5:42: nested[3].@allow[5]: string contains a NUL byte\n"
			      "s.yaml:6:3: nested[3].nn: unknown field 'nn' in xdtest.Nested (did you mean 'n'?)\n"
			      "s.yaml:7:4: nested[4].@colour: unknown annotation '@colour' (known: '@allow', '@ttl', '@dynamic_parameter_constraints', '@name', '@on_demand')\n"
			      "s.yaml:7:19: nested[4].@alow: unknown annotation '@alow' (did you mean '@allow'?)\n"
			      "s.yaml:8:28: nested[5].@allow: duplicate key '@allow' (first on line 8)");
	free(got);
	/* "@ttl": a duration of whole milliseconds, 1s to 30 days */
	got = file_run("nested:\n"
		       "- {\"@ttl\": 30, \"@tll\": 1s, name: c}\n"
		       "- {\"@ttl\": 0.5s, name: d}\n"
		       "- {\"@ttl\": 1.0005s, name: e}\n"
		       "- {\"@ttl\": 2592001s, name: f}\n"
		       "- {\"@ttl\": 2.5s, name: g, \"@ttl\": 3s}\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "s.yaml:2:12: nested[0].@ttl: expected a duration such as \"30s\", not '30'\n"
			      "s.yaml:2:16: nested[0].@tll: unknown annotation '@tll' (did you mean '@ttl'?)\n"
			      "s.yaml:3:12: nested[1].@ttl: a TTL of '0.5s'; it must be from 1s to 30 days (2592000s)\n"
			      "s.yaml:4:12: nested[2].@ttl: a TTL is counted in whole milliseconds, not '1.0005s'\n"
			      "s.yaml:5:12: nested[3].@ttl: a TTL of '2592001s'; it must be from 1s to 30 days (2592000s)\n"
			      "s.yaml:6:27: nested[4].@ttl: duplicate key '@ttl' (first on line 6)");
	free(got);
	/* "@name": a non-empty string (where it may stand is the loader's) */
	got = file_run("nested:\n"
		       "- {\"@name\": \"xdstp://a/T/x?k=v\", name: c}\n"
		       "- {\"@name\": [a], \"@nmae\": x}\n"
		       "- {\"@name\": \"\", \"@name\": y}\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "nested[0] nested 0 2:3 3 0a0163 @name [xdstp://a/T/x?k=v]\n"
			      "s.yaml:3:13: nested[1].@name: expected a name (a string), not a list\n"
			      "s.yaml:3:18: nested[1].@nmae: unknown annotation '@nmae' (did you mean '@name'?)\n"
			      "s.yaml:4:13: nested[2].@name: an empty name\n"
			      "s.yaml:4:17: nested[2].@name: duplicate key '@name' (first on line 4)");
	free(got);
	/* "@on_demand": true or false (where it may stand is the loader's) */
	got = file_run("nested:\n"
		       "- {\"@on_demand\": true, name: c}\n"
		       "- {\"@on_demand\": false, name: d}\n"
		       "- {\"@on_demand\": \"true\", name: e}\n"
		       "- {\"@on_demand\": 1, name: f}\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "nested[0] nested 0 2:3 3 0a0163 @on_demand\n"
			      "nested[1] nested 1 3:3 3 0a0164\n"
			      "s.yaml:4:18: nested[2].@on_demand: expected true or false, not 'true'\n"
			      "s.yaml:5:18: nested[3].@on_demand: expected true or false, not '1'");
	free(got);
	/* JSON: the same, without positions */
	got = file_run("{\"nested\": [{\"name\": \"a\", \"@allow\": [\"g*\", \"@anyone\"]},"
		       " {\"@allow\": [\"g\", 5, true]}]}", 1, 1, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "nested[0] nested 0 0:0 3 0a0161 @allow anyone [g*]\n"
			      "s.json: nested[1].@allow[1]: expected an identity glob (a string), not 5\n"
			      "s.json: nested[1].@allow[2]: expected an identity glob (a string), not true");
	free(got);
}
END_TEST

/* The bounds: globs per resource and bytes per glob. */
START_TEST(snapshot_annotation_bounds)
{
	struct xd_buf b = XD_BUF_INIT;
	char *got;

	xd_buf_printf(&b, "nested:\n- name: a\n  \"@allow\":\n");
	for (int i = 0; i < XD_ALLOW_MAX; i++)
		xd_buf_printf(&b, "  - g%d\n", i);
	xd_buf_putc(&b, '\0');
	got = file_run((char *)b.data, 1, 0, 0);
	ck_assert(strncmp(got, "rc=0\nnested[0] nested 0 2:3 3 0a0161 @allow [g0] [g1]", 52) == 0);
	free(got);
	b.len--;
	xd_buf_printf(&b, "  - one-too-many\n");
	xd_buf_putc(&b, '\0');
	got = file_run((char *)b.data, 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\ns.yaml:4:3: nested[0].@allow: 257 globs; the limit is 256");
	free(got);
	b.len = 0;
	xd_buf_printf(&b, "nested:\n- {name: a, \"@allow\": [");
	for (int i = 0; i < XD_ALLOW_GLOB_MAX + 1; i++)
		xd_buf_putc(&b, 'x');
	xd_buf_printf(&b, "]}\n");
	xd_buf_putc(&b, '\0');
	got = file_run((char *)b.data, 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\ns.yaml:2:24: nested[0].@allow[0]: a glob of 1025 bytes; the limit is 1024");
	free(got);
	xd_buf_free(&b);
}
END_TEST

/* Annotations outlive the pieces of a file cut for threads ("@name"
 * beside "@allow" too): the same items with 1 and 4 threads. */
START_TEST(snapshot_annotations_in_pieces)
{
	struct xd_buf b = XD_BUF_INIT;
	char *one, *four;

	xd_buf_printf(&b, "nested:\n");
	for (int i = 0; i < 40000; i++) {
		xd_buf_printf(&b, "- name: item-%05d\n  child: {name: c}\n", i);
		if (i % 3 == 0)
			xd_buf_printf(&b, "  \"@allow\": [\"spiffe://example.org/sa/%d\"%s]\n",
				      i, i % 2 ? ", \"@anyone\", x" : "");
		if (i % 5 == 0)
			xd_buf_printf(&b, "  \"@name\": named-%d\n", i);
	}
	xd_buf_putc(&b, '\0');
	ck_assert_uint_gt(b.len, 1u << 20);
	one = file_run((char *)b.data, 1, 0, 0);
	four = file_run((char *)b.data, 4, 0, 0);
	ck_assert(strncmp(one, "rc=0\n", 5) == 0);
	ck_assert_ptr_nonnull(strstr(one, "@allow anyone [spiffe://example.org/sa/39999] [x]\n"));
	ck_assert_ptr_nonnull(strstr(one, "@allow anyone [spiffe://example.org/sa/39915] [x] @name [named-39915]\n"));
	ck_assert_ptr_nonnull(strstr(one, "@name [named-39995]\n"));
	ck_assert(strcmp(one, four) == 0);
	free(four);
	free(one);
	xd_buf_free(&b);
}
END_TEST

/* The transcoder knows no annotation of its own: a caller's hooks
 * read the keys it names (a late one after the others), what they write
 * reaches the item, and any other "@" key is unknown, with the caller's
 * keys as the known ones. Without hooks, an "@" key is an unknown field,
 * as in a single resource. */
static void hook_colour(struct xd_ann_reader *r, const struct xd_dnode *v,
			void *ctx)
{
	const char *text;
	size_t len;
	char buf[160];

	ck_assert_str_eq(ctx, "ctx");
	if (!xd_ann_text(v, &text, &len)) {
		xd_ann_error(r, v, "not a colour: %s",
			     xd_ann_show(v, buf, sizeof(buf)));
		return;
	}
	xd_ann_write(r, "colour=", 7);
	xd_ann_write(r, text, len);
	xd_ann_write(r, ";", 1);
}

static void hook_late(struct xd_ann_reader *r, const struct xd_dnode *v,
		      void *ctx)
{
	const uint8_t *data;
	size_t len;
	char *h;

	(void)ctx;
	if (xd_ann_encode(r, "xdtest.Nested", v, &data, &len) != 0)
		return;
	h = hex(data, len);
	xd_ann_write(r, "late=", 5);
	xd_ann_write(r, h, strlen(h));
	xd_ann_write(r, ";", 1);
	free(h);
}

static const struct xd_ann_hook test_hook[] = {
	{"@late", hook_late, true},
	{"@colour", hook_colour, false},
};
static const struct xd_ann_hooks test_hooks = {test_hook, 2, (void *)"ctx"};

START_TEST(annotation_hooks)
{
	char *got;

	file_hooks = &test_hooks;
	file_hooks_set = true;
	got = file_run("nested:\n"
		       "- {\"@late\": {name: b}, name: a, \"@colour\": red}\n"
		       "- {\"@colour\": [x], \"@late\": {n: x}, \"@allow\": [a], \"@color\": 1}\n"
		       "- {\"@colour\": red, \"@colour\": blue}\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "nested[0] nested 0 2:3 3 0a0161 ann [colour=red;late=0a0162;]\n"
			      "s.yaml:3:15: nested[1].@colour: not a colour: a list\n"
			      "s.yaml:3:33: nested[1].@late.n: expected an integer (int32), not 'x'\n"
			      "s.yaml:3:37: nested[1].@allow: unknown annotation '@allow' (known: '@late', '@colour')\n"
			      "s.yaml:3:52: nested[1].@color: unknown annotation '@color' (did you mean '@colour'?)\n"
			      "s.yaml:4:20: nested[2].@colour: duplicate key '@colour' (first on line 4)");
	free(got);
	/* without hooks, an "@" key is an unknown field */
	file_hooks = NULL;
	got = file_run("nested:\n- {name: a, \"@colour\": red}\n", 1, 0, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "s.yaml:2:13: nested[0].@colour: unknown field '@colour' in xdtest.Nested");
	free(got);
	got = file_run("{\"nested\": [{\"name\": \"a\", \"@allow\": [\"g\"]}]}", 1, 1, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "s.json: nested[0].@allow: unknown field '@allow' in xdtest.Nested");
	free(got);
	file_hooks_set = false;
}
END_TEST

/* Two hooks for one key are a programmer's error, caught at once. */
START_TEST(annotation_hooks_distinct)
{
	static const struct xd_ann_hook twice[] = {
		{"@colour", hook_colour, false},
		{"@colour", hook_colour, false},
	};
	static const struct xd_ann_hooks h = {twice, 2, (void *)"ctx"};
	struct xd_diag d = XD_DIAG_INIT;

	xd_transcode_yaml_file(test, "s.yaml", "nested: []\n", 11, 1,
			       sections, 3, &h, NULL, NULL, &d);
}
END_TEST

/* A single resource has no annotations: "@allow" is no field. */
START_TEST(annotations_only_in_snapshot_files)
{
	char *got = enc("xdtest.Nested", "name: a\n\"@allow\": [x]\n");

	ck_assert_str_eq(got, "ERR t.yaml:2:1: @allow: unknown field '@allow' in xdtest.Nested");
	free(got);
}
END_TEST

START_TEST(json_snapshot_files)
{
	char *got;

	got = file_run("{\"nested\": [{\"name\": \"a\"}, {\"n\": \"x\"}], \"scalars\": null,"
		       " \"bad\": []}", 1, 1, 0);
	ck_assert_str_eq(got, "rc=-1\n"
			      "nested[0] nested 0 0:0 3 0a0161\n"
			      "s.json: nested[1].n: expected an integer (int32), not 'x'\n"
			      "s.json: unknown key 'bad' (expected one of: nested, scalars, empty)");
	free(got);
	got = file_run("{\"nested\": [}", 1, 1, 0);
	ck_assert_str_eq(got, "rc=-1\ns.json:1:13: unexpected token near '}'");
	free(got);
	got = file_run("{\"nested\": [], \"nested\": []}", 1, 1, 0);
	ck_assert_str_eq(got, "rc=-1\ns.json:1:23: duplicate object key near '\"nested\"'");
	free(got);
	got = file_run("[]", 1, 1, 0);
	ck_assert_str_eq(got, "rc=-1\ns.json: a snapshot file must be an object of arrays (\"clusters\", \"listeners\", ...)");
	free(got);
}
END_TEST

START_TEST(libyaml_documents)
{
	/* xd_transcode_yaml on libyaml's own tree gives the same bytes. */
	static const char *const docs[] = {
		"name: x\nchild: {n: 5, child: {name: y}}\n",
		"name: &a n\nchild: {name: *a}\n",
		"child: &c {n: 1}\nname: z\n",
	};

	for (size_t i = 0; i < XD_ARRAY_LEN(docs); i++) {
		struct xd_diag d = XD_DIAG_INIT;
		struct xd_buf b = XD_BUF_INIT;
		yaml_parser_t p;
		yaml_document_t doc;
		char *want = enc("xdtest.Nested", docs[i]), *got;

		yaml_parser_initialize(&p);
		yaml_parser_set_input_string(&p, (const unsigned char *)docs[i],
					     strlen(docs[i]));
		ck_assert(yaml_parser_load(&p, &doc));
		ck_assert_int_eq(xd_transcode_yaml(test, type_of("xdtest.Nested"), &doc,
						   yaml_document_get_root_node(&doc),
						   "t.yaml", "", &b, &d),
				 0);
		got = hex(b.data, b.len);
		ck_assert_str_eq(got, want);
		free(got);
		free(want);
		yaml_document_delete(&doc);
		yaml_parser_delete(&p);
		xd_buf_free(&b);
	}
}
END_TEST

/* ---- the field walker ---- */

static void collect(const uint8_t *v, size_t len, void *arg)
{
	xd_buf_printf(arg, "[%.*s]", (int)len, (const char *)v);
}

static char *walk(const char *type, const char *yaml, const char *path)
{
	struct xd_buf bytes = XD_BUF_INIT, out = XD_BUF_INIT;
	char *r = yaml_to(type, yaml, "", &bytes);
	int n;

	ck_assert_msg(strncmp(r, "ERR", 3) != 0, "%s", r);
	free(r);
	n = xd_schema_walk(schema_of(type), type_of(type), bytes.data,
			   bytes.len, path, collect, &out);
	xd_buf_printf(&out, " %d", n);
	xd_buf_putc(&out, '\0');
	xd_buf_free(&bytes);
	return (char *)xd_buf_steal(&out, NULL);
}

START_TEST(walks_fields)
{
	static const char listener[] =
		"name: l\n"
		"filter_chains:\n"
		"- filters:\n"
		"  - name: hcm\n"
		"    typed_config:\n"
		"      \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
		"      rds: {route_config_name: r1}\n"
		"  - name: tcp\n"
		"    typed_config:\n"
		"      \"@type\": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy\n"
		"      cluster: c\n"
		"- filters:\n"
		"  - name: hcm2\n"
		"    typed_config:\n"
		"      \"@type\": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n"
		"      rds: {route_config_name: r2}\n"
		"      http_filters:\n"
		"      - name: tag\n"
		"        config_discovery: {config_source: {ads: {}}, type_urls: [x]}\n"
		"      - name: envoy.filters.http.router\n"
		"        typed_config: {\"@type\": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}\n"
		"  - name: echo\n"
		"    config_discovery: {config_source: {ads: {}}, type_urls: [y]}\n";
	static const char routes[] =
		"name: rc\n"
		"virtual_hosts:\n"
		"- name: v\n"
		"  domains: [a, b]\n"
		"  routes:\n"
		"  - match: {prefix: /}\n"
		"    route:\n"
		"      weighted_clusters:\n"
		"        clusters: [{name: w1, weight: 1}, {name: w2, weight: 2}]\n"
		"  - match: {prefix: /x}\n"
		"    route: {cluster: plain}\n";
	char *got;

	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters.typed_config.rds.route_config_name");
	ck_assert_str_eq(got, "[r1][r2] 2");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters.typed_config.cluster");
	ck_assert_str_eq(got, "[c] 1");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener, "filter_chains.filters.name");
	ck_assert_str_eq(got, "[hcm][tcp][hcm2][echo] 4");
	free(got);
	/* "field[cond]": the elements that have `cond` (the filters whose
	 * configs come by ECDS), inside an Any and out */
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters.typed_config.http_filters[config_discovery].name");
	ck_assert_str_eq(got, "[tag] 1");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters[config_discovery].name");
	ck_assert_str_eq(got, "[echo] 1");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters[typed_config].typed_config.http_filters.name");
	ck_assert_str_eq(got, "[tag][envoy.filters.http.router] 2");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains[filters].filters[config_discovery].config_discovery.type_urls");
	ck_assert_str_eq(got, "[y] 1");
	free(got);
	/* a condition that is no field of the element, on a scalar, or
	 * written amiss */
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters[nope].name");
	ck_assert_str_eq(got, " -1");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters.name[x]");
	ck_assert_str_eq(got, " -1");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters[].name");
	ck_assert_str_eq(got, " -1");
	free(got);
	got = walk("envoy.config.listener.v3.Listener", listener,
		   "filter_chains.filters[name.name");
	ck_assert_str_eq(got, " -1");
	free(got);
	got = walk("envoy.config.route.v3.RouteConfiguration", routes,
		   "virtual_hosts.routes.route.weighted_clusters.clusters.name");
	ck_assert_str_eq(got, "[w1][w2] 2");
	free(got);
	got = walk("envoy.config.route.v3.RouteConfiguration", routes,
		   "virtual_hosts.routes.route.cluster");
	ck_assert_str_eq(got, "[plain] 1");
	free(got);
	got = walk("envoy.config.route.v3.RouteConfiguration", routes,
		   "virtual_hosts.domains");
	ck_assert_str_eq(got, "[a][b] 2");
	free(got);
	/* camelCase names work too */
	got = walk("envoy.config.route.v3.RouteConfiguration", routes,
		   "virtualHosts.name");
	ck_assert_str_eq(got, "[v] 1");
	free(got);
	/* paths that do not fit the schema */
	got = walk("envoy.config.route.v3.RouteConfiguration", routes, "virtual_hosts.nope");
	ck_assert_str_eq(got, " -1");
	free(got);
	got = walk("envoy.config.route.v3.RouteConfiguration", routes, "name.x");
	ck_assert_str_eq(got, " -1");
	free(got);
	got = walk("envoy.config.route.v3.RouteConfiguration", routes, "virtual_hosts..name");
	ck_assert_str_eq(got, " -1");
	free(got);
	/* nothing there */
	got = walk("envoy.config.route.v3.RouteConfiguration", "name: x\n", "virtual_hosts.name");
	ck_assert_str_eq(got, " 0");
	free(got);
	/* packed values one by one, maps by key and value */
	got = walk("xdtest.Repeated", "i32: [1, 2, 3]\n", "i32");
	ck_assert_str_eq(got, "[\x01][\x02][\x03] 3");
	free(got);
	got = walk("xdtest.Maps", "str_str: {b: y, a: x}\n", "str_str.value");
	ck_assert_str_eq(got, "[x][y] 2");
	free(got);
	/* malformed bytes */
	{
		struct xd_buf out = XD_BUF_INIT;
		const uint8_t bad[] = {0x0a, 0x05, 'a'};

		ck_assert_int_eq(xd_schema_walk(test, type_of("xdtest.Nested"),
						bad, 3, "name", collect, &out),
				 -1);
		xd_buf_free(&out);
	}
}
END_TEST

int main(void)
{
	struct xd_diag d = XD_DIAG_INIT;
	char path[4096];
	Suite *s = suite_create("transcode");
	TCase *tc;

	envoy = xd_schema_load(xdtest_env("XDSD_SCHEMA"), &d);
	snprintf(path, sizeof(path), "%s/tests/schema/xdtest.pb",
		 xdtest_env("XDSD_BUILDDIR"));
	test = xd_schema_load(path, &d);
	XDT_REQUIRE(envoy != NULL && test != NULL, "cannot load the schemas: %s",
		    d.count ? d.msgs[0] : "?");
	sections[0] = (struct xd_section){
		.key = "nested", .type = xd_schema_find_message(test, "xdtest.Nested")};
	sections[1] = (struct xd_section){
		.key = "scalars", .type = xd_schema_find_message(test, "xdtest.Scalars")};
	sections[2] = (struct xd_section){
		.key = "empty", .type = xd_schema_find_message(test, "google.protobuf.Empty")};
	XDT_REQUIRE(sections[0].type && sections[1].type && sections[2].type,
		    "test messages missing from %s", path);

	tc = tcase_create("encode");
	tcase_add_loop_test(tc, encodes, 0, (int)XD_ARRAY_LEN(enc_cases));
	tcase_add_test(tc, key_order_does_not_matter);
	tcase_add_test(tc, json_input);
	tcase_add_test(tc, libyaml_documents);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, reports_errors, 0, (int)XD_ARRAY_LEN(err_cases));
	tcase_add_test(tc, envoy_error_example);
	tcase_add_test(tc, stops_after_many_errors);
	tcase_add_test(tc, invalid_utf8);
	tcase_add_test(tc, depth_bound);
	tcase_add_test(tc, alias_bomb);
	tcase_add_test(tc, huge_numbers);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_loop_test(tc, prints_json, 0, (int)XD_ARRAY_LEN(json_cases));
	tcase_add_test(tc, decodes_other_encoders);
	tcase_add_test(tc, decode_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, snapshot_files);
	tcase_add_test(tc, snapshot_in_pieces);
	tcase_add_test(tc, json_snapshot_files);
	tcase_add_test(tc, snapshot_annotations);
	tcase_add_test(tc, snapshot_annotation_bounds);
	tcase_add_test(tc, snapshot_annotations_in_pieces);
	tcase_add_test(tc, annotations_only_in_snapshot_files);
	tcase_add_test(tc, annotation_hooks);
	tcase_add_test_raise_signal(tc, annotation_hooks_distinct, SIGABRT);
	tcase_add_test(tc, walks_fields);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
