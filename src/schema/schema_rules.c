/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protoc-gen-validate limits on numbers: the descriptor set carries
 * (validate.rules) as an extension of FieldOptions, and the numeric ones
 * (lt, lte, gt, gte, const) are kept on the field for the transcoder to
 * check. Other rules are left to Envoy.
 */
#include "schema/schema_int.h"

#include <string.h>

#include "google/protobuf/descriptor.pb-c.h"
#include "wire/wire.h"

typedef Google__Protobuf__FieldDescriptorProto FieldProto;

/* The FieldRules member for a type: float = 1, double = 2, int32 = 3,
 * ... sfixed64 = 12 (validate.proto). */
static int rules_number(enum xd_ftype t)
{
	static const int8_t n[] = {
		[XD_T_FLOAT] = 1,    [XD_T_DOUBLE] = 2,   [XD_T_INT32] = 3,
		[XD_T_INT64] = 4,    [XD_T_UINT32] = 5,   [XD_T_UINT64] = 6,
		[XD_T_SINT32] = 7,   [XD_T_SINT64] = 8,   [XD_T_FIXED32] = 9,
		[XD_T_FIXED64] = 10, [XD_T_SFIXED32] = 11, [XD_T_SFIXED64] = 12,
	};

	return (unsigned)t < sizeof(n) ? n[t] : 0;
}

/* The scalar a wrapper holds, whose rules a wrapper field carries. */
static enum xd_ftype wrapped_type(const char *type_name)
{
	static const struct {
		const char *name;
		enum xd_ftype t;
	} w[] = {
		{".google.protobuf.DoubleValue", XD_T_DOUBLE},
		{".google.protobuf.FloatValue", XD_T_FLOAT},
		{".google.protobuf.Int64Value", XD_T_INT64},
		{".google.protobuf.UInt64Value", XD_T_UINT64},
		{".google.protobuf.Int32Value", XD_T_INT32},
		{".google.protobuf.UInt32Value", XD_T_UINT32},
	};

	for (size_t i = 0; type_name != NULL && i < sizeof(w) / sizeof(w[0]); i++)
		if (strcmp(type_name, w[i].name) == 0)
			return w[i].t;
	return 0;
}

/* One rule value as a bound of kind `kind`. */
static union xd_bound rule_value(enum xd_ftype t, const struct xd_wire_field *w)
{
	union xd_bound b;
	float f;

	switch (t) {
	case XD_T_SINT32:
	case XD_T_SINT64:
		b.i = xd_wire_unzigzag(w->v);
		break;
	case XD_T_SFIXED32:
		b.i = (int32_t)(uint32_t)w->v;
		break;
	case XD_T_INT32:
		b.i = (int32_t)w->v;
		break;
	case XD_T_FLOAT: {
		uint32_t bits = (uint32_t)w->v;

		memcpy(&f, &bits, 4);
		b.d = f;
		break;
	}
	case XD_T_DOUBLE:
		memcpy(&b.d, &w->v, 8);
		break;
	default: /* int64, sfixed64 as int64; unsigned as they are */
		b.u = w->v;
		break;
	}
	return b;
}

static void set_bounds(struct xd_fielddesc *f, enum xd_ftype t,
		       const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	struct xd_wire_field w;
	int kind = t == XD_T_FLOAT || t == XD_T_DOUBLE ? XD_BOUND_DOUBLE :
		   t == XD_T_UINT32 || t == XD_T_UINT64 || t == XD_T_FIXED32 ||
				   t == XD_T_FIXED64 ?
							 XD_BOUND_UINT :
							 XD_BOUND_INT;
	union xd_bound lo = {0}, hi = {0};
	unsigned flags = 0;

	while (xd_wire_next(&p, end, &w) == 1) {
		union xd_bound v;

		if (w.number < 1 || w.number > 5 || w.wt == XD_WT_LEN)
			continue;
		v = rule_value(t, &w);
		switch (w.number) {
		case 1: /* const */
			lo = hi = v;
			flags = XD_BOUND_LO | XD_BOUND_HI;
			break;
		case 2: /* lt */
			if (kind == XD_BOUND_DOUBLE)
				flags |= XD_BOUND_HI_OPEN;
			else if (kind == XD_BOUND_INT ? v.i == INT64_MIN : v.u == 0)
				return; /* nothing fits: leave it to Envoy */
			else if (kind == XD_BOUND_INT)
				v.i--;
			else
				v.u--;
			hi = v;
			flags |= XD_BOUND_HI;
			break;
		case 3: /* lte */
			hi = v;
			flags = (flags & ~XD_BOUND_HI_OPEN) | XD_BOUND_HI;
			break;
		case 4: /* gt */
			if (kind == XD_BOUND_DOUBLE)
				flags |= XD_BOUND_LO_OPEN;
			else if (kind == XD_BOUND_INT ? v.i == INT64_MAX :
							v.u == UINT64_MAX)
				return;
			else if (kind == XD_BOUND_INT)
				v.i++;
			else
				v.u++;
			lo = v;
			flags |= XD_BOUND_LO;
			break;
		case 5: /* gte */
			lo = v;
			flags = (flags & ~XD_BOUND_LO_OPEN) | XD_BOUND_LO;
			break;
		}
	}
	/* lt below gt means "outside the range" in protoc-gen-validate;
	 * such rules are left to Envoy. */
	if ((flags & XD_BOUND_LO) && (flags & XD_BOUND_HI) &&
	    (kind == XD_BOUND_INT ? lo.i > hi.i :
	     kind == XD_BOUND_UINT ? lo.u > hi.u :
				     lo.d > hi.d))
		return;
	if (flags == 0)
		return;
	f->bound_kind = (uint8_t)kind;
	f->bound_flags = (uint8_t)flags;
	f->lo = lo;
	f->hi = hi;
}

/* (validate.rules) is extension 1071 of FieldOptions, which protobuf-c
 * keeps among the unknown fields. */
void xd_schema_rules(struct xd_fielddesc *f, const FieldProto *fp)
{
	const ProtobufCMessage *o = (const ProtobufCMessage *)fp->options;
	enum xd_ftype t = f->type == XD_T_MESSAGE ? wrapped_type(fp->type_name) :
						    (enum xd_ftype)f->type;
	int want = t ? rules_number(t) : 0;

	if (o == NULL || want == 0)
		return;
	for (unsigned i = 0; i < o->n_unknown_fields; i++) {
		const ProtobufCMessageUnknownField *u = &o->unknown_fields[i];
		const uint8_t *p = u->data, *end = u->data + u->len;
		struct xd_wire_field w;
		uint64_t n;

		/* protobuf-c keeps the length prefix in the data. */
		if (u->tag != 1071 ||
		    u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED ||
		    xd_wire_get_varint(&p, end, &n) != 0 ||
		    n != (uint64_t)(end - p))
			continue;
		while (xd_wire_next(&p, end, &w) == 1)
			if ((int)w.number == want && w.wt == XD_WT_LEN)
				set_bounds(f, t, w.data, w.len);
	}
}
