/* SPDX-License-Identifier: Apache-2.0 */
#include "schema/schema_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/descriptor.pb-c.h"
#include "util/file.h"
#include "util/text.h"
#include "util/xalloc.h"

typedef Google__Protobuf__FileDescriptorSet FileSet;
typedef Google__Protobuf__FileDescriptorProto FileProto;
typedef Google__Protobuf__DescriptorProto MsgProto;
typedef Google__Protobuf__FieldDescriptorProto FieldProto;
typedef Google__Protobuf__EnumDescriptorProto EnumProto;

/* Nested message declarations deeper than this are refused: no real
 * schema comes close, and the walk over them recurses. */
#define MAX_NESTING 32
/* Field and value indexes are stored in 16 bits. */
#define MAX_MEMBERS 65000
#define MAX_FIELD_NUMBER 536870911

struct decl {
	const void *proto; /* MsgProto or EnumProto */
	const FileProto *file;
	char *full_name;
};

struct decls {
	struct decl *v;
	size_t n, cap;
};

struct loader {
	struct xd_schema *s;
	const char *name; /* the file, in messages */
	struct xd_diag *diag;
	int failed;
	struct decls msgs, enums;
};

static const char *const wkt_names[XD_WKT_COUNT] = {
	[XD_WKT_ANY] = "google.protobuf.Any",
	[XD_WKT_DURATION] = "google.protobuf.Duration",
	[XD_WKT_TIMESTAMP] = "google.protobuf.Timestamp",
	[XD_WKT_DOUBLE_VALUE] = "google.protobuf.DoubleValue",
	[XD_WKT_FLOAT_VALUE] = "google.protobuf.FloatValue",
	[XD_WKT_INT64_VALUE] = "google.protobuf.Int64Value",
	[XD_WKT_UINT64_VALUE] = "google.protobuf.UInt64Value",
	[XD_WKT_INT32_VALUE] = "google.protobuf.Int32Value",
	[XD_WKT_UINT32_VALUE] = "google.protobuf.UInt32Value",
	[XD_WKT_BOOL_VALUE] = "google.protobuf.BoolValue",
	[XD_WKT_STRING_VALUE] = "google.protobuf.StringValue",
	[XD_WKT_BYTES_VALUE] = "google.protobuf.BytesValue",
	[XD_WKT_STRUCT] = "google.protobuf.Struct",
	[XD_WKT_VALUE] = "google.protobuf.Value",
	[XD_WKT_LIST_VALUE] = "google.protobuf.ListValue",
	[XD_WKT_EMPTY] = "google.protobuf.Empty",
	[XD_WKT_FIELD_MASK] = "google.protobuf.FieldMask",
};

static void fail(struct loader *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct loader *l, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	l->failed = 1;
	va_start(ap, fmt);
	msg = xd_vasprintf(fmt, ap);
	va_end(ap);
	xd_diag_add(l->diag, "%s: %s", l->name, msg);
	free(msg);
}

static uint32_t table_size(size_t n)
{
	uint32_t size = 8;

	while (size < 2 * n)
		size *= 2;
	return size;
}

/* ---- pass 1: every message and enum declaration, by full name ---- */

static void decls_push(struct decls *d, const void *proto,
		       const FileProto *file, char *full_name)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 256;
		d->v = xd_reallocarray(d->v, d->cap, sizeof(*d->v));
	}
	d->v[d->n++] = (struct decl){proto, file, full_name};
}

static char *join_name(struct loader *l, const char *scope, const char *name)
{
	size_t ls = scope != NULL ? strlen(scope) : 0, ln = strlen(name);
	char *p = xd_arena_alloc(&l->s->arena, ls + ln + 2);

	if (ls > 0) {
		memcpy(p, scope, ls);
		p[ls++] = '.';
	}
	memcpy(p + ls, name, ln + 1);
	return p;
}

static void collect_msg(struct loader *l, const FileProto *f,
			const MsgProto *m, const char *scope, int depth)
{
	char *full;

	if (m->name == NULL || m->name[0] == '\0') {
		fail(l, "a message in %s has no name", f->name);
		return;
	}
	full = join_name(l, scope, m->name);
	if (depth > MAX_NESTING) {
		fail(l, "%s: message declarations nested deeper than %d levels",
		     full, MAX_NESTING);
		return;
	}
	decls_push(&l->msgs, m, f, full);
	for (size_t i = 0; i < m->n_enum_type; i++) {
		if (m->enum_type[i]->name == NULL) {
			fail(l, "an enum in %s has no name", full);
			continue;
		}
		decls_push(&l->enums, m->enum_type[i], f,
			   join_name(l, full, m->enum_type[i]->name));
	}
	for (size_t i = 0; i < m->n_nested_type; i++)
		collect_msg(l, f, m->nested_type[i], full, depth + 1);
}

static void collect(struct loader *l, const FileSet *set)
{
	for (size_t i = 0; i < set->n_file; i++) {
		const FileProto *f = set->file[i];
		const char *pkg = f->package != NULL && f->package[0] != '\0' ?
					  f->package :
					  NULL;

		if (f->name == NULL) {
			fail(l, "file %zu of the set has no name", i);
			continue;
		}
		for (size_t j = 0; j < f->n_enum_type; j++) {
			if (f->enum_type[j]->name == NULL) {
				fail(l, "an enum in %s has no name", f->name);
				continue;
			}
			decls_push(&l->enums, f->enum_type[j], f,
				   join_name(l, pkg, f->enum_type[j]->name));
		}
		for (size_t j = 0; j < f->n_message_type; j++)
			collect_msg(l, f, f->message_type[j], pkg, 0);
	}
}

/* Open addressing by full name; slots hold index + 1. */
static uint32_t *build_name_table(struct loader *l, const struct decls *d,
				  const char *kind, uint32_t *mask)
{
	uint32_t size = table_size(d->n);
	uint32_t *slots = xd_arena_alloc(&l->s->arena, size * sizeof(*slots));

	memset(slots, 0, size * sizeof(*slots));
	*mask = size - 1;
	for (size_t i = 0; i < d->n; i++) {
		const char *name = d->v[i].full_name;
		size_t len = strlen(name);
		uint32_t h = xd_text_hash(name, len) & *mask;

		while (slots[h] != 0) {
			if (strcmp(d->v[slots[h] - 1].full_name, name) == 0) {
				fail(l, "%s %s is declared twice", kind, name);
				break;
			}
			h = (h + 1) & *mask;
		}
		if (slots[h] == 0)
			slots[h] = (uint32_t)i + 1;
	}
	return slots;
}

/* ---- pass 2: enums ---- */

static int cmp_by_number(const void *a, const void *b, void *values)
{
	const struct xd_enumval *v = values;
	uint16_t ia = *(const uint16_t *)a, ib = *(const uint16_t *)b;

	if (v[ia].number != v[ib].number)
		return v[ia].number < v[ib].number ? -1 : 1;
	return ia < ib ? -1 : ia > ib; /* first declared first */
}

static void build_enum(struct loader *l, struct xd_enumdesc *e,
		       const struct decl *d)
{
	const EnumProto *p = d->proto;
	struct xd_arena *a = &l->s->arena;
	struct xd_enumval *vals;
	uint16_t *slots, *order;
	uint32_t size, n = 0;

	e->full_name = d->full_name;
	e->closed = d->file->syntax == NULL ||
		    strcmp(d->file->syntax, "proto3") != 0;
	if (p->n_value == 0 || p->n_value > MAX_MEMBERS) {
		fail(l, "enum %s has %zu values", e->full_name, p->n_value);
		return;
	}
	vals = xd_arena_alloc(a, p->n_value * sizeof(*vals));
	size = table_size(p->n_value);
	slots = xd_arena_alloc(a, size * sizeof(*slots));
	memset(slots, 0, size * sizeof(*slots));
	for (size_t i = 0; i < p->n_value; i++) {
		const char *name = p->value[i]->name;
		size_t len;
		uint32_t h;

		if (name == NULL || !p->value[i]->has_number) {
			fail(l, "enum %s: value %zu has no name or number",
			     e->full_name, i);
			return;
		}
		len = strlen(name);
		vals[i].name = xd_text_copy(a, name, len);
		vals[i].name_len = (uint32_t)len;
		vals[i].number = p->value[i]->number;
		h = xd_text_hash(name, len) & (size - 1);
		while (slots[h] != 0) {
			if (strcmp(vals[slots[h] - 1].name, name) == 0) {
				fail(l, "enum %s: value %s is declared twice",
				     e->full_name, name);
				return;
			}
			h = (h + 1) & (size - 1);
		}
		slots[h] = (uint16_t)(i + 1);
	}
	/* By number, one entry per distinct number. */
	order = xd_arena_alloc(a, p->n_value * sizeof(*order));
	for (size_t i = 0; i < p->n_value; i++)
		order[i] = (uint16_t)i;
	qsort_r(order, p->n_value, sizeof(*order), cmp_by_number, vals);
	for (size_t i = 0; i < p->n_value; i++)
		if (n == 0 || vals[order[n - 1]].number != vals[order[i]].number)
			order[n++] = order[i];
	e->values = vals;
	e->nvalues = (uint32_t)p->n_value;
	e->name_slots = slots;
	e->name_mask = size - 1;
	e->by_number = order;
	e->nnumbers = n;
}

/* ---- pass 2: messages ---- */

/* protoc's json_name rule, for descriptor sets that lack it. */
static char *camel_name(struct xd_arena *a, const char *name)
{
	size_t len = strlen(name), j = 0;
	char *out = xd_arena_alloc(a, len + 1);
	int upper = 0;

	for (size_t i = 0; i < len; i++) {
		if (name[i] == '_') {
			upper = 1;
			continue;
		}
		out[j++] = upper && name[i] >= 'a' && name[i] <= 'z' ?
				   (char)(name[i] - 'a' + 'A') :
				   name[i];
		upper = 0;
	}
	out[j] = '\0';
	return out;
}

static int cmp_field(const void *a, const void *b)
{
	const struct xd_fielddesc *fa = a, *fb = b;

	return fa->number < fb->number ? -1 : fa->number > fb->number;
}

static void insert_field_name(struct loader *l, struct xd_msgdesc *m,
			      uint16_t *slots, const char *name, size_t len,
			      uint16_t index)
{
	uint32_t h = xd_text_hash(name, len) & m->name_mask;

	while (slots[h] != 0) {
		const struct xd_fielddesc *o = &m->fields[slots[h] - 1];

		if ((o->name_len == len && memcmp(o->name, name, len) == 0) ||
		    (o->json_len == len && memcmp(o->json_name, name, len) == 0)) {
			if (slots[h] - 1 != index)
				fail(l, "%s: two fields are named %s",
				     m->full_name, name);
			return;
		}
		h = (h + 1) & m->name_mask;
	}
	slots[h] = (uint16_t)(index + 1);
}

static int build_field(struct loader *l, struct xd_msgdesc *m,
		       const MsgProto *p, const FieldProto *fp,
		       struct xd_fielddesc *f)
{
	struct xd_arena *a = &l->s->arena;
	bool repeated;

	if (fp->name == NULL || !fp->has_number || !fp->has_type) {
		fail(l, "%s: a field lacks its name, number or type",
		     m->full_name);
		return -1;
	}
	if (fp->number < 1 || fp->number > MAX_FIELD_NUMBER ||
	    (int)fp->type < XD_T_DOUBLE || (int)fp->type > XD_T_SINT64 ||
	    fp->label < 1 || fp->label > 3) {
		fail(l, "%s.%s: bad number, type or label", m->full_name,
		     fp->name);
		return -1;
	}
	f->name = xd_text_copy(a, fp->name, strlen(fp->name));
	f->json_name = fp->json_name != NULL ?
			       xd_text_copy(a, fp->json_name,
					    strlen(fp->json_name)) :
			       camel_name(a, fp->name);
	if (strlen(f->name) > UINT16_MAX || strlen(f->json_name) > UINT16_MAX) {
		fail(l, "%s: a field name is too long", m->full_name);
		return -1;
	}
	f->name_len = (uint16_t)strlen(f->name);
	f->json_len = (uint16_t)strlen(f->json_name);
	f->number = (uint32_t)fp->number;
	f->type = (uint8_t)fp->type;
	f->parent = m;
	f->oneof = -1;
	repeated = fp->label == GOOGLE__PROTOBUF__FIELD_DESCRIPTOR_PROTO__LABEL__LABEL_REPEATED;
	if (repeated)
		f->flags |= XD_F_REPEATED;
	if (fp->has_proto3_optional && fp->proto3_optional) {
		f->flags |= XD_F_OPTIONAL;
	} else if (fp->has_oneof_index) {
		if (fp->oneof_index < 0 ||
		    (size_t)fp->oneof_index >= p->n_oneof_decl) {
			fail(l, "%s.%s: bad oneof index", m->full_name, f->name);
			return -1;
		}
		f->oneof = (int16_t)fp->oneof_index;
	}
	if (f->type == XD_T_MESSAGE || f->type == XD_T_GROUP ||
	    f->type == XD_T_ENUM) {
		const char *tn = fp->type_name;

		/* protoc writes resolved, fully qualified names (".pkg.T"). */
		if (tn == NULL || tn[0] != '.') {
			fail(l, "%s.%s: type name '%s' is not fully qualified",
			     m->full_name, f->name, tn ? tn : "");
			return -1;
		}
		if (f->type == XD_T_ENUM)
			f->en = xd_schema_enum_n(l->s, tn + 1, strlen(tn + 1));
		else
			f->msg = xd_schema_message_n(l->s, tn + 1, strlen(tn + 1));
		if (f->en == NULL && f->msg == NULL) {
			fail(l, "%s.%s: unknown type %s", m->full_name, f->name,
			     tn + 1);
			return -1;
		}
	}
	if (repeated && xd_schema_packable(f->type)) {
		const Google__Protobuf__FieldOptions *o = fp->options;

		if (m->proto3 ? !(o != NULL && o->has_packed && !o->packed) :
				(o != NULL && o->has_packed && o->packed))
			f->flags |= XD_F_PACKED;
	}
	xd_schema_rules(f, fp);
	if (!repeated && (!m->proto3 || f->oneof >= 0 ||
			  (f->flags & XD_F_OPTIONAL) ||
			  f->type == XD_T_MESSAGE || f->type == XD_T_GROUP))
		f->flags |= XD_F_PRESENCE;
	return 0;
}

static void build_msg(struct loader *l, struct xd_msgdesc *m,
		      const struct decl *d)
{
	const MsgProto *p = d->proto;
	struct xd_arena *a = &l->s->arena;
	struct xd_fielddesc *fields;
	const char **oneofs;
	uint16_t *slots, *dense;
	uint32_t maxnum = 0;

	m->full_name = d->full_name;
	m->proto3 = d->file->syntax != NULL &&
		    strcmp(d->file->syntax, "proto3") == 0;
	m->map_entry = p->options != NULL && p->options->has_map_entry &&
		       p->options->map_entry;
	if (p->n_field > MAX_MEMBERS || p->n_oneof_decl > MAX_MEMBERS) {
		fail(l, "%s has too many fields", m->full_name);
		return;
	}
	oneofs = xd_arena_alloc(a, (p->n_oneof_decl + 1) * sizeof(*oneofs));
	for (size_t i = 0; i < p->n_oneof_decl; i++)
		oneofs[i] = p->oneof_decl[i]->name != NULL ?
				    xd_text_copy(a, p->oneof_decl[i]->name,
						 strlen(p->oneof_decl[i]->name)) :
				    "";
	m->oneofs = oneofs;
	m->noneofs = (uint32_t)p->n_oneof_decl;

	fields = xd_arena_alloc(a, (p->n_field + 1) * sizeof(*fields));
	memset(fields, 0, (p->n_field + 1) * sizeof(*fields));
	for (size_t i = 0; i < p->n_field; i++)
		if (build_field(l, m, p, p->field[i], &fields[i]) != 0)
			return;
	qsort(fields, p->n_field, sizeof(*fields), cmp_field);
	for (size_t i = 1; i < p->n_field; i++)
		if (fields[i].number == fields[i - 1].number) {
			fail(l, "%s: fields %s and %s share number %u",
			     m->full_name, fields[i - 1].name, fields[i].name,
			     fields[i].number);
			return;
		}
	m->fields = fields;
	m->nfields = (uint32_t)p->n_field;

	/* Both names of each field in one table (they often coincide). */
	m->name_mask = table_size(2 * p->n_field) - 1;
	slots = xd_arena_alloc(a, (m->name_mask + 1) * sizeof(*slots));
	memset(slots, 0, (m->name_mask + 1) * sizeof(*slots));
	for (uint16_t i = 0; i < m->nfields; i++) {
		insert_field_name(l, m, slots, fields[i].name,
				  fields[i].name_len, i);
		if (strcmp(fields[i].json_name, fields[i].name) != 0)
			insert_field_name(l, m, slots, fields[i].json_name,
					  fields[i].json_len, i);
	}
	m->name_slots = slots;

	/* A direct table when numbers are dense (nearly always); else the
	 * lookup bisects the sorted fields. */
	if (m->nfields > 0)
		maxnum = fields[m->nfields - 1].number;
	if (m->nfields > 0 && maxnum < 4 * m->nfields + 32) {
		dense = xd_arena_alloc(a, (maxnum + 1) * sizeof(*dense));
		memset(dense, 0, (maxnum + 1) * sizeof(*dense));
		for (uint16_t i = 0; i < m->nfields; i++)
			dense[fields[i].number] = (uint16_t)(i + 1);
		m->by_number = dense;
		m->ndense = maxnum + 1;
	}
}

static void link_types(struct loader *l)
{
	struct xd_schema *s = l->s;

	for (uint32_t i = 0; i < s->nmsgs; i++) {
		struct xd_msgdesc *m = &s->msgs[i];

		for (uint32_t j = 0; j < m->nfields; j++) {
			struct xd_fielddesc *f =
				(struct xd_fielddesc *)&m->fields[j];

			if (f->msg != NULL && f->msg->map_entry &&
			    (f->flags & XD_F_REPEATED))
				f->flags |= XD_F_MAP;
		}
		if (m->map_entry) {
			const struct xd_fielddesc *k, *v;

			k = xd_schema_field_by_number(m, 1);
			v = xd_schema_field_by_number(m, 2);
			if (m->nfields != 2 || k == NULL || v == NULL ||
			    (k->flags & XD_F_REPEATED) ||
			    (v->flags & XD_F_REPEATED) ||
			    k->type == XD_T_FLOAT || k->type == XD_T_DOUBLE ||
			    k->type == XD_T_BYTES || k->type == XD_T_MESSAGE ||
			    k->type == XD_T_GROUP || k->type == XD_T_ENUM)
				fail(l, "%s: malformed map entry", m->full_name);
		}
	}
	for (int w = XD_WKT_ANY; w < XD_WKT_COUNT; w++) {
		struct xd_msgdesc *m = (struct xd_msgdesc *)xd_schema_message_n(
			s, wkt_names[w], strlen(wkt_names[w]));

		if (m != NULL) {
			m->wkt = (uint8_t)w;
			s->wkt[w] = m;
		}
	}
}

/* The well-known types' field layouts are fixed by the JSON mapping the
 * transcoder implements; a schema that changed them would be encoded
 * wrongly, so it is refused. */
static void check_wkts(struct loader *l)
{
	static const struct {
		enum xd_wkt wkt;
		uint32_t number;
		enum xd_ftype type;
		bool repeated;
	} shape[] = {
		{XD_WKT_ANY, 1, XD_T_STRING, false},
		{XD_WKT_ANY, 2, XD_T_BYTES, false},
		{XD_WKT_DURATION, 1, XD_T_INT64, false},
		{XD_WKT_DURATION, 2, XD_T_INT32, false},
		{XD_WKT_TIMESTAMP, 1, XD_T_INT64, false},
		{XD_WKT_TIMESTAMP, 2, XD_T_INT32, false},
		{XD_WKT_DOUBLE_VALUE, 1, XD_T_DOUBLE, false},
		{XD_WKT_FLOAT_VALUE, 1, XD_T_FLOAT, false},
		{XD_WKT_INT64_VALUE, 1, XD_T_INT64, false},
		{XD_WKT_UINT64_VALUE, 1, XD_T_UINT64, false},
		{XD_WKT_INT32_VALUE, 1, XD_T_INT32, false},
		{XD_WKT_UINT32_VALUE, 1, XD_T_UINT32, false},
		{XD_WKT_BOOL_VALUE, 1, XD_T_BOOL, false},
		{XD_WKT_STRING_VALUE, 1, XD_T_STRING, false},
		{XD_WKT_BYTES_VALUE, 1, XD_T_BYTES, false},
		{XD_WKT_STRUCT, 1, XD_T_MESSAGE, true},
		{XD_WKT_VALUE, 1, XD_T_ENUM, false},
		{XD_WKT_VALUE, 2, XD_T_DOUBLE, false},
		{XD_WKT_VALUE, 3, XD_T_STRING, false},
		{XD_WKT_VALUE, 4, XD_T_BOOL, false},
		{XD_WKT_VALUE, 5, XD_T_MESSAGE, false},
		{XD_WKT_VALUE, 6, XD_T_MESSAGE, false},
		{XD_WKT_LIST_VALUE, 1, XD_T_MESSAGE, true},
		{XD_WKT_FIELD_MASK, 1, XD_T_STRING, true},
	};

	for (size_t i = 0; i < sizeof(shape) / sizeof(shape[0]); i++) {
		const struct xd_msgdesc *m = l->s->wkt[shape[i].wkt];
		const struct xd_fielddesc *f;

		if (m == NULL)
			continue;
		f = xd_schema_field_by_number(m, shape[i].number);
		if (f == NULL || f->type != shape[i].type ||
		    !(f->flags & XD_F_REPEATED) != !shape[i].repeated) {
			fail(l, "%s does not have the standard layout",
			     m->full_name);
			return;
		}
	}
	l->s->null_value = xd_schema_enum_n(l->s, "google.protobuf.NullValue",
				       strlen("google.protobuf.NullValue"));
	/* Struct/Value/ListValue refer to each other. */
	if (l->s->wkt[XD_WKT_VALUE] != NULL &&
	    (l->s->wkt[XD_WKT_STRUCT] == NULL ||
	     l->s->wkt[XD_WKT_LIST_VALUE] == NULL))
		fail(l, "google.protobuf.Value without Struct and ListValue");
}

static struct xd_schema *build(struct loader *l, const FileSet *set)
{
	struct xd_schema *s = l->s;

	collect(l, set);
	if (l->failed)
		return NULL;
	if (l->msgs.n > UINT32_MAX / 4 || l->enums.n > UINT32_MAX / 4) {
		fail(l, "too many types");
		return NULL;
	}
	s->nmsgs = (uint32_t)l->msgs.n;
	s->nenums = (uint32_t)l->enums.n;
	s->msgs = xd_arena_alloc(&s->arena, (s->nmsgs + 1) * sizeof(*s->msgs));
	memset(s->msgs, 0, (s->nmsgs + 1) * sizeof(*s->msgs));
	s->enums = xd_arena_alloc(&s->arena,
				  (s->nenums + 1) * sizeof(*s->enums));
	memset(s->enums, 0, (s->nenums + 1) * sizeof(*s->enums));
	/* The tables name the descs through their index, so full names
	 * are copied first. */
	for (uint32_t i = 0; i < s->nmsgs; i++)
		s->msgs[i].full_name = l->msgs.v[i].full_name;
	for (uint32_t i = 0; i < s->nenums; i++)
		s->enums[i].full_name = l->enums.v[i].full_name;
	s->msg_slots = build_name_table(l, &l->msgs, "message", &s->msg_mask);
	s->enum_slots = build_name_table(l, &l->enums, "enum", &s->enum_mask);
	if (l->failed)
		return NULL;
	for (uint32_t i = 0; i < s->nenums && !l->failed; i++)
		build_enum(l, &s->enums[i], &l->enums.v[i]);
	for (uint32_t i = 0; i < s->nmsgs && !l->failed; i++)
		build_msg(l, &s->msgs[i], &l->msgs.v[i]);
	if (l->failed)
		return NULL;
	link_types(l);
	if (!l->failed)
		check_wkts(l);
	return l->failed ? NULL : s;
}

/* protobuf-c unpacks the set into tens of thousands of small objects;
 * from an arena, they cost a pointer bump each and go in one free. */
static void *unpack_alloc(void *data, size_t size)
{
	return xd_arena_alloc(data, size);
}

static void unpack_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

struct xd_schema *xd_schema_load_mem(const uint8_t *data, size_t len,
				     const char *name, struct xd_diag *diag)
{
	struct loader l = {.name = name, .diag = diag};
	struct xd_arena unpacked = XD_ARENA_INIT;
	ProtobufCAllocator alloc = {unpack_alloc, unpack_free, &unpacked};
	FileSet *set;
	struct xd_schema *s;

	set = google__protobuf__file_descriptor_set__unpack(&alloc, len, data);
	if (set == NULL || set->n_file == 0) {
		xd_diag_add(diag, "%s: not a protobuf descriptor set (build it with protoc --descriptor_set_out)",
			    name);
		xd_arena_free(&unpacked);
		return NULL;
	}
	s = xd_calloc(1, sizeof(*s));
	l.s = s;
	if (build(&l, set) == NULL) {
		xd_schema_free(s);
		s = NULL;
	}
	free(l.msgs.v);
	free(l.enums.v);
	xd_arena_free(&unpacked);
	return s;
}

struct xd_schema *xd_schema_load(const char *path, struct xd_diag *diag)
{
	struct xd_schema *s;
	struct xd_file file;

	if (xd_file_read(path, "schema", XD_SCHEMA_MAX_BYTES, &file, NULL,
			 diag) != 0)
		return NULL;
	if (file.len == 0) {
		xd_diag_add(diag, "%s: 0 bytes: not a descriptor set", path);
		xd_file_free(&file, false);
		return NULL;
	}
	s = xd_schema_load_mem((const uint8_t *)file.text, file.len, path, diag);
	xd_file_free(&file, false);
	return s;
}

void xd_schema_free(struct xd_schema *s)
{
	if (s == NULL)
		return;
	xd_arena_free(&s->arena);
	free(s);
}
