/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The schema module: loading xds-api.pb and the test descriptor set,
 * every lookup table (messages by name and type URL, fields by number
 * and both names, enums, oneofs, presence, packing, maps, well-known
 * types), suggestions, and refusing missing, corrupt and inconsistent
 * descriptor sets with a clear message.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "google/protobuf/descriptor.pb-c.h"
#include "util/common.h"
#include "schema/schema.h"
#include "util/text.h"
#include "xdtest.h"

static struct xd_schema *envoy, *test;
static char test_schema_path[4096];

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

static const struct xd_msgdesc *msg(const char *name)
{
	const struct xd_msgdesc *m = xd_schema_find_message(test, name);

	ck_assert_msg(m != NULL, "no %s", name);
	return m;
}

static const struct xd_fielddesc *field(const char *m, const char *name)
{
	const struct xd_fielddesc *f =
		xd_schema_field_by_name(msg(m), name, strlen(name));

	ck_assert_msg(f != NULL, "no %s.%s", m, name);
	return f;
}

/* The pinned API loads whole. How long it takes is a figure of
 * bench/transcode-bench ("schema load"), not a bound here. */
START_TEST(loads_envoy_schema)
{
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_schema *s;

	s = xd_schema_load(xdtest_env("XDSD_SCHEMA"), &d);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(xd_diag_total(&d), 0);
	ck_assert_uint_gt(xd_schema_message_count(s), 1000);
	ck_assert_uint_gt(xd_schema_enum_count(s), 100);
	xd_schema_free(s);
}
END_TEST

START_TEST(finds_messages)
{
	const struct xd_msgdesc *m;

	m = xd_schema_find_message(envoy, "envoy.config.cluster.v3.Cluster");
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(xd_schema_message_name(m),
			 "envoy.config.cluster.v3.Cluster");
	/* Nested types by their full names. */
	ck_assert_ptr_nonnull(xd_schema_find_message(
		envoy, "envoy.config.cluster.v3.Cluster.EdsClusterConfig"));
	ck_assert_ptr_null(xd_schema_find_message(envoy, "Cluster"));
	ck_assert_ptr_null(xd_schema_find_message(envoy, "envoy.config.cluster.v3"));
	ck_assert_ptr_null(xd_schema_find_message(envoy, ""));
	ck_assert_ptr_null(xd_schema_find_message(
		envoy, "envoy.config.cluster.v3.Cluster.Nope"));
}
END_TEST

START_TEST(finds_type_urls)
{
	const struct xd_msgdesc *m =
		xd_schema_find_message(envoy, "envoy.config.cluster.v3.Cluster");
	const char *urls[] = {
		"type.googleapis.com/envoy.config.cluster.v3.Cluster",
		"envoy.config.cluster.v3.Cluster",
		"example.com/a/b/envoy.config.cluster.v3.Cluster",
		"/envoy.config.cluster.v3.Cluster",
	};

	for (size_t i = 0; i < XD_ARRAY_LEN(urls); i++)
		ck_assert_ptr_eq(xd_schema_find_type_url(envoy, urls[i],
							 strlen(urls[i])),
				 m);
	ck_assert_ptr_null(xd_schema_find_type_url(envoy, "type.googleapis.com/",
						   20));
	ck_assert_ptr_null(xd_schema_find_type_url(envoy, "", 0));
	ck_assert_ptr_null(xd_schema_find_type_url(
		envoy, "type.googleapis.com/envoy.config.cluster.v3.Clusterx", 52));
	/* Only `len` bytes count. */
	ck_assert_ptr_eq(xd_schema_find_type_url(
				 envoy,
				 "type.googleapis.com/envoy.config.cluster.v3.ClusterLoadAssignment",
				 51),
			 m);
}
END_TEST

START_TEST(fields_by_number_and_names)
{
	const struct xd_msgdesc *m = msg("xdtest.Names");
	const struct xd_fielddesc *f;

	f = xd_schema_field_by_name(m, "foo_bar", 7);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_eq(xd_schema_field_by_name(m, "fooBar", 6), f);
	ck_assert_ptr_eq(xd_schema_field_by_number(m, 1), f);
	ck_assert_str_eq(f->json_name, "fooBar");
	ck_assert_uint_eq(f->number, 1);
	f = xd_schema_field_by_name(m, "renamed", 7);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->name, "custom");
	ck_assert_ptr_eq(xd_schema_field_by_name(m, "custom", 6), f);
	ck_assert_ptr_null(xd_schema_field_by_name(m, "foo", 3));
	ck_assert_ptr_null(xd_schema_field_by_name(m, "foo_barx", 7 + 1));
	ck_assert_ptr_null(xd_schema_field_by_number(m, 4));
	ck_assert_ptr_null(xd_schema_field_by_number(m, 0));
	/* Names are length-delimited, not NUL-terminated. */
	ck_assert_ptr_eq(xd_schema_field_by_name(m, "foo_bar and more", 7),
			 xd_schema_field_by_number(m, 1));
}
END_TEST

START_TEST(sparse_field_numbers)
{
	const struct xd_msgdesc *m = msg("xdtest.Sparse");

	ck_assert_str_eq(xd_schema_field_by_number(m, 1)->name, "low");
	ck_assert_str_eq(xd_schema_field_by_number(m, 5000)->name, "mid");
	ck_assert_str_eq(xd_schema_field_by_number(m, 100000)->name, "high");
	ck_assert_ptr_null(xd_schema_field_by_number(m, 2));
	ck_assert_ptr_null(xd_schema_field_by_number(m, 99999));
	ck_assert_ptr_null(xd_schema_field_by_number(m, 536870911));
	/* Fields are kept in number order. */
	ck_assert_uint_eq(m->fields[0].number, 1);
	ck_assert_uint_eq(m->fields[2].number, 100000);
}
END_TEST

START_TEST(presence_and_oneofs)
{
	const struct xd_msgdesc *o = msg("xdtest.Oneofs");

	ck_assert_int_eq(field("xdtest.Oneofs", "a")->oneof, 0);
	ck_assert_int_eq(field("xdtest.Oneofs", "d")->oneof, 0);
	ck_assert_int_eq(field("xdtest.Oneofs", "x")->oneof, 1);
	ck_assert_int_eq(field("xdtest.Oneofs", "plain")->oneof, -1);
	ck_assert_uint_eq(o->noneofs, 2);
	ck_assert_str_eq(o->oneofs[0], "choice");
	ck_assert_str_eq(o->oneofs[1], "other");
	ck_assert(field("xdtest.Oneofs", "a")->flags & XD_F_PRESENCE);
	ck_assert(!(field("xdtest.Oneofs", "plain")->flags & XD_F_PRESENCE));

	/* proto3 optional: presence, and its synthetic oneof is no oneof. */
	ck_assert(field("xdtest.Scalars", "opt_i32")->flags & XD_F_PRESENCE);
	ck_assert(field("xdtest.Scalars", "opt_i32")->flags & XD_F_OPTIONAL);
	ck_assert_int_eq(field("xdtest.Scalars", "opt_i32")->oneof, -1);
	ck_assert(!(field("xdtest.Scalars", "i32")->flags & XD_F_PRESENCE));
	ck_assert(field("xdtest.Scalars", "msg")->flags & XD_F_PRESENCE);
	/* proto2: every singular field has presence. */
	ck_assert(field("xdtest.Legacy", "a")->flags & XD_F_PRESENCE);
	ck_assert(field("xdtest.Legacy", "s")->flags & XD_F_PRESENCE);
	ck_assert(!msg("xdtest.Legacy")->proto3);
	ck_assert(msg("xdtest.Scalars")->proto3);
}
END_TEST

START_TEST(packing_and_maps)
{
	const struct xd_fielddesc *f;

	ck_assert(field("xdtest.Repeated", "i32")->flags & XD_F_PACKED);
	ck_assert(field("xdtest.Repeated", "db")->flags & XD_F_PACKED);
	ck_assert(field("xdtest.Repeated", "color")->flags & XD_F_PACKED);
	ck_assert(!(field("xdtest.Repeated", "unpacked")->flags & XD_F_PACKED));
	ck_assert(!(field("xdtest.Repeated", "str")->flags & XD_F_PACKED));
	ck_assert(!(field("xdtest.Repeated", "msg")->flags & XD_F_PACKED));
	ck_assert(field("xdtest.Repeated", "msg")->flags & XD_F_REPEATED);
	/* proto2 packs only on request. */
	ck_assert(field("xdtest.Legacy", "p")->flags & XD_F_PACKED);
	ck_assert(!(field("xdtest.Legacy", "r")->flags & XD_F_PACKED));

	f = field("xdtest.Maps", "i32_str");
	ck_assert(f->flags & XD_F_MAP);
	ck_assert(f->msg->map_entry);
	ck_assert_uint_eq(f->msg->fields[0].type, XD_T_INT32);
	ck_assert_uint_eq(f->msg->fields[1].type, XD_T_STRING);
	ck_assert(!(field("xdtest.Repeated", "msg")->flags & XD_F_MAP));
}
END_TEST

START_TEST(enums)
{
	const struct xd_enumdesc *c = xd_schema_find_enum(test, "xdtest.Color");
	const struct xd_enumdesc *a = xd_schema_find_enum(test, "xdtest.Aliased");
	const struct xd_enumdesc *cl = xd_schema_find_enum(test, "xdtest.Closed");

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_eq(field("xdtest.Scalars", "color")->en, c);
	ck_assert_int_eq(xd_schema_enum_by_name(c, "BLUE", 4)->number, 3);
	ck_assert_str_eq(xd_schema_enum_by_number(c, 2)->name, "GREEN");
	ck_assert_ptr_null(xd_schema_enum_by_name(c, "blue", 4));
	ck_assert_ptr_null(xd_schema_enum_by_number(c, 4));
	ck_assert_ptr_null(xd_schema_enum_by_number(c, -1));
	/* Aliases: both names read, the first declared is printed. */
	ck_assert_int_eq(xd_schema_enum_by_name(a, "A_UNO", 5)->number, 1);
	ck_assert_str_eq(xd_schema_enum_by_number(a, 1)->name, "A_ONE");
	ck_assert(!c->closed);
	ck_assert(cl->closed);
	ck_assert_str_eq(xd_schema_enum_by_number(cl, 5)->name, "C_FIVE");
}
END_TEST

START_TEST(well_known_types)
{
	static const struct {
		const char *name;
		enum xd_wkt wkt;
	} wkts[] = {
		{"google.protobuf.Any", XD_WKT_ANY},
		{"google.protobuf.Duration", XD_WKT_DURATION},
		{"google.protobuf.Timestamp", XD_WKT_TIMESTAMP},
		{"google.protobuf.DoubleValue", XD_WKT_DOUBLE_VALUE},
		{"google.protobuf.FloatValue", XD_WKT_FLOAT_VALUE},
		{"google.protobuf.Int64Value", XD_WKT_INT64_VALUE},
		{"google.protobuf.UInt64Value", XD_WKT_UINT64_VALUE},
		{"google.protobuf.Int32Value", XD_WKT_INT32_VALUE},
		{"google.protobuf.UInt32Value", XD_WKT_UINT32_VALUE},
		{"google.protobuf.BoolValue", XD_WKT_BOOL_VALUE},
		{"google.protobuf.StringValue", XD_WKT_STRING_VALUE},
		{"google.protobuf.BytesValue", XD_WKT_BYTES_VALUE},
		{"google.protobuf.Struct", XD_WKT_STRUCT},
		{"google.protobuf.Value", XD_WKT_VALUE},
		{"google.protobuf.ListValue", XD_WKT_LIST_VALUE},
		{"google.protobuf.Empty", XD_WKT_EMPTY},
		{"google.protobuf.FieldMask", XD_WKT_FIELD_MASK},
	};

	for (size_t i = 0; i < XD_ARRAY_LEN(wkts); i++) {
		const struct xd_msgdesc *m = msg(wkts[i].name);

		ck_assert_uint_eq(m->wkt, wkts[i].wkt);
		ck_assert_ptr_eq(xd_schema_wkt(test, wkts[i].wkt), m);
	}
	ck_assert_uint_eq(msg("xdtest.Nested")->wkt, XD_WKT_NONE);
	ck_assert_ptr_eq(xd_schema_null_value(test),
			 xd_schema_find_enum(test, "google.protobuf.NullValue"));
	/* The Envoy schema has no FieldMask. */
	ck_assert_ptr_null(xd_schema_wkt(envoy, XD_WKT_FIELD_MASK));
	ck_assert_ptr_nonnull(xd_schema_wkt(envoy, XD_WKT_ANY));
}
END_TEST

START_TEST(suggestions)
{
	const struct xd_msgdesc *c =
		xd_schema_find_message(envoy, "envoy.config.cluster.v3.Cluster");
	const struct xd_enumdesc *lb =
		xd_schema_find_enum(envoy, "envoy.config.cluster.v3.Cluster.LbPolicy");

	ck_assert_str_eq(xd_schema_suggest_field(c, "lb_polcy", 8), "lb_policy");
	ck_assert_str_eq(xd_schema_suggest_field(c, "conect_timeout", 14),
			 "connect_timeout");
	ck_assert_str_eq(xd_schema_suggest_field(c, "lbPolcy", 7), "lbPolicy");
	ck_assert_ptr_null(xd_schema_suggest_field(c, "zzzzzzzz", 8));
	ck_assert_str_eq(xd_schema_suggest_enum(lb, "ROUND_ROBN", 10),
			 "ROUND_ROBIN");
	ck_assert_str_eq(xd_schema_suggest_enum(lb, "round_robin", 11),
			 "ROUND_ROBIN");
	ck_assert_ptr_null(xd_schema_suggest_enum(lb, "XYZ", 3));
	ck_assert_str_eq(xd_schema_type_name(XD_T_UINT32), "uint32");
	ck_assert_str_eq(xd_schema_type_name(XD_T_SFIXED64), "sfixed64");
}
END_TEST

/* The edit distance the schema shares with the configuration: the
 * schema's suggestions ignore case and count a swap as one edit, the
 * configuration's do neither. */
START_TEST(edit_distance)
{
	const unsigned schema = XD_TEXT_FOLD_CASE | XD_TEXT_SWAPS;
	char long_name[66];

	ck_assert_uint_eq(xd_text_distance("name", 4, "name", 4, 0), 0);
	ck_assert_uint_eq(xd_text_distance("nmae", 4, "name", 4, schema), 1);
	ck_assert_uint_eq(xd_text_distance("nmae", 4, "name", 4, 0), 2);
	ck_assert_uint_eq(xd_text_distance("LbPolicy", 8, "lbPolicy", 8,
					   schema), 0);
	ck_assert_uint_eq(xd_text_distance("LbPolicy", 8, "lbPolicy", 8, 0), 1);
	ck_assert_uint_eq(xd_text_distance("lisen", 5, "listen", 6, 0), 1);
	ck_assert_uint_eq(xd_text_distance("", 0, "abc", 3, schema), 3);
	/* Names longer than 64 bytes are never close. */
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	ck_assert_uint_eq(xd_text_distance(long_name, 64, long_name, 64, 0), 0);
	ck_assert_uint_eq(xd_text_distance(long_name, 65, long_name, 65, 0),
			  SIZE_MAX);
}
END_TEST

START_TEST(missing_file)
{
	struct xd_diag d = XD_DIAG_INIT;
	char *text, fifo[512];

	ck_assert_ptr_null(xd_schema_load("/nonexistent/xds-api.pb", &d));
	text = diag_text(&d);
	ck_assert_str_eq(text, "/nonexistent/xds-api.pb: cannot read the schema: No such file or directory");
	free(text);
	xd_diag_clear(&d);
	ck_assert_ptr_null(xd_schema_load(xdtest_tmpdir(), &d));
	ck_assert_uint_eq(xd_diag_total(&d), 1);
	ck_assert_ptr_nonnull(strstr(d.msgs[0], ": the schema is a directory; it must be a regular file"));
	xd_diag_clear(&d);
	/* never opened: a FIFO would wait for a writer */
	snprintf(fifo, sizeof(fifo), "%s/schema.fifo", xdtest_tmpdir());
	unlink(fifo);
	ck_assert(mkfifo(fifo, 0600) == 0);
	ck_assert_ptr_null(xd_schema_load(fifo, &d));
	ck_assert_uint_eq(xd_diag_total(&d), 1);
	ck_assert_ptr_nonnull(strstr(d.msgs[0], "schema.fifo: the schema is a FIFO; it must be a regular file"));
	xd_diag_clear(&d);
	ck_assert_ptr_null(xd_schema_load("/dev/zero", &d));
	ck_assert_str_eq(d.msgs[0], "/dev/zero: the schema is a character device; it must be a regular file");
	xd_diag_clear(&d);
}
END_TEST

START_TEST(corrupt_files)
{
	struct xd_diag d = XD_DIAG_INIT;
	char *path, *text, *real;
	size_t len;
	FILE *f;

	path = xdtest_write_file(xdtest_tmpdir(), "empty.pb", "");
	ck_assert_ptr_null(xd_schema_load(path, &d));
	text = diag_text(&d);
	ck_assert_ptr_nonnull(strstr(text, "empty.pb: 0 bytes: not a descriptor set"));
	free(text);
	free(path);
	xd_diag_clear(&d);

	path = xdtest_write_file(xdtest_tmpdir(), "garbage.pb",
				 "this is not protobuf \xff\xff\xff\xff");
	ck_assert_ptr_null(xd_schema_load(path, &d));
	text = diag_text(&d);
	ck_assert_ptr_nonnull(strstr(text, "garbage.pb: not a protobuf descriptor set (build it with protoc --descriptor_set_out)"));
	free(text);
	free(path);
	xd_diag_clear(&d);

	/* The real file cut short. */
	real = xdtest_read_file(xdtest_env("XDSD_SCHEMA"), &len);
	ck_assert_ptr_nonnull(real);
	path = xdtest_write_file(xdtest_tmpdir(), "short.pb", "");
	f = fopen(path, "wb");
	fwrite(real, 1, len / 2, f);
	fclose(f);
	ck_assert_ptr_null(xd_schema_load(path, &d));
	ck_assert_uint_ge(xd_diag_total(&d), 1);
	free(path);
	free(real);
	xd_diag_clear(&d);
}
END_TEST

/* ---- inconsistent descriptor sets, built with protobuf-c ---- */

typedef Google__Protobuf__FieldDescriptorProto FieldProto;

static FieldProto make_field(const char *name, int number, int type,
			     const char *type_name)
{
	FieldProto f = GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__INIT;

	f.name = (char *)name;
	f.has_number = 1;
	f.number = number;
	f.has_label = 1;
	f.label = GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_OPTIONAL;
	f.has_type = 1;
	f.type = (Google__Protobuf__FieldDescriptorProto__Type)type;
	f.type_name = (char *)type_name;
	return f;
}

/* A set of one file "t.proto" (package xt) with the given messages;
 * returns what loading it says ("" when it loads). */
static char *load_set(Google__Protobuf__DescriptorProto **msgs, size_t n)
{
	Google__Protobuf__FileDescriptorProto file =
		GOOGLE__PROTOBUF__FILE_DESCRIPTOR_PROTO__INIT;
	Google__Protobuf__FileDescriptorProto *files[1] = {&file};
	Google__Protobuf__FileDescriptorSet set =
		GOOGLE__PROTOBUF__FILE_DESCRIPTOR_SET__INIT;
	struct xd_diag d = XD_DIAG_INIT;
	struct xd_schema *s;
	uint8_t *buf;
	size_t len;
	char *text;

	file.name = "t.proto";
	file.package = "xt";
	file.syntax = "proto3";
	file.n_message_type = n;
	file.message_type = msgs;
	set.n_file = 1;
	set.file = files;
	len = google__protobuf__file_descriptor_set__get_packed_size(&set);
	buf = malloc(len);
	google__protobuf__file_descriptor_set__pack(&set, buf);
	s = xd_schema_load_mem(buf, len, "mem", &d);
	free(buf);
	text = diag_text(&d);
	xd_diag_clear(&d);
	ck_assert((s == NULL) == (text[0] != '\0'));
	xd_schema_free(s);
	return text;
}

START_TEST(inconsistent_sets)
{
	Google__Protobuf__DescriptorProto m = GOOGLE__PROTOBUF__DESCRIPTOR_PROTO__INIT;
	Google__Protobuf__DescriptorProto *msgs[2] = {&m, &m};
	FieldProto f[2];
	FieldProto *fp[2] = {&f[0], &f[1]};
	char *text;

	m.name = "M";
	m.n_field = 1;
	m.field = fp;

	f[0] = make_field("a", 1, 9, NULL);
	text = load_set(msgs, 1);
	ck_assert_str_eq(text, "");
	free(text);

	f[0] = make_field("a", 1, 11, ".xt.Missing");
	text = load_set(msgs, 1);
	ck_assert_str_eq(text, "mem: xt.M.a: unknown type xt.Missing");
	free(text);

	f[0] = make_field("a", 1, 11, "Missing");
	text = load_set(msgs, 1);
	ck_assert_str_eq(text, "mem: xt.M.a: type name 'Missing' is not fully qualified");
	free(text);

	f[0] = make_field("a", 1, 9, NULL);
	f[1] = make_field("b", 1, 9, NULL);
	m.n_field = 2;
	text = load_set(msgs, 1);
	ck_assert_str_eq(text, "mem: xt.M: fields a and b share number 1");
	free(text);

	f[1] = make_field("a", 2, 9, NULL);
	text = load_set(msgs, 1);
	ck_assert_str_eq(text, "mem: xt.M: two fields are named a");
	free(text);

	f[1] = make_field("b", 0, 9, NULL);
	text = load_set(msgs, 1);
	ck_assert_str_eq(text, "mem: xt.M.b: bad number, type or label");
	free(text);

	m.n_field = 1;
	text = load_set(msgs, 2);
	ck_assert_str_eq(text, "mem: message xt.M is declared twice");
	free(text);
}
END_TEST

static void *lookups(void *arg)
{
	static const char url[] =
		"type.googleapis.com/envoy.config.listener.v3.Listener";

	(void)arg;
	for (int i = 0; i < 20000; i++) {
		const struct xd_msgdesc *m =
			xd_schema_find_type_url(envoy, url, strlen(url));

		if (m == NULL || xd_schema_field_by_name(m, "filter_chains", 13) == NULL)
			return (void *)1;
	}
	return NULL;
}

START_TEST(shared_between_threads)
{
	pthread_t th[4];
	void *r;

	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, lookups, NULL);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], &r);
		ck_assert_ptr_null(r);
	}
}
END_TEST

int main(void)
{
	struct xd_diag d = XD_DIAG_INIT;
	Suite *s = suite_create("schema");
	TCase *tc = tcase_create("schema");

	envoy = xd_schema_load(xdtest_env("XDSD_SCHEMA"), &d);
	snprintf(test_schema_path, sizeof(test_schema_path),
		 "%s/tests/schema/xdtest.pb", xdtest_env("XDSD_BUILDDIR"));
	test = xd_schema_load(test_schema_path, &d);
	XDT_REQUIRE(envoy != NULL && test != NULL, "cannot load the schemas: %s",
		    d.count ? d.msgs[0] : "?");

	tcase_add_test(tc, loads_envoy_schema);
	tcase_add_test(tc, finds_messages);
	tcase_add_test(tc, finds_type_urls);
	tcase_add_test(tc, fields_by_number_and_names);
	tcase_add_test(tc, sparse_field_numbers);
	tcase_add_test(tc, presence_and_oneofs);
	tcase_add_test(tc, packing_and_maps);
	tcase_add_test(tc, enums);
	tcase_add_test(tc, well_known_types);
	tcase_add_test(tc, suggestions);
	tcase_add_test(tc, edit_distance);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, corrupt_files);
	tcase_add_test(tc, inconsistent_sets);
	tcase_add_test(tc, shared_between_threads);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
