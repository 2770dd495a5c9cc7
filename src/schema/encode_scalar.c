/* SPDX-License-Identifier: Apache-2.0 */
/* Values read from one scalar: numbers (within their validate.rules
 * limits), booleans, enums, strings, bytes, and the well-known types
 * written as one string (Duration, Timestamp, FieldMask). Nothing here
 * recurses: messages are encode.c's. */
#include "schema/encode.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "schema/scalar.h"
#include "wire/wire.h"
#include "xds/xdstp.h"

/* "(at most 65535)", "(from 1 to 100)", "(greater than 0)"... */
static void describe_bounds(const struct xd_fielddesc *b, char *buf,
			    size_t size)
{
	char lo[40], hi[40];
	unsigned fl = b->bound_flags;

	switch (b->bound_kind) {
	case XD_BOUND_INT:
		snprintf(lo, sizeof(lo), "%" PRId64, b->lo.i);
		snprintf(hi, sizeof(hi), "%" PRId64, b->hi.i);
		break;
	case XD_BOUND_UINT:
		snprintf(lo, sizeof(lo), "%" PRIu64, b->lo.u);
		snprintf(hi, sizeof(hi), "%" PRIu64, b->hi.u);
		break;
	default:
		snprintf(lo, sizeof(lo), "%.17g", b->lo.d);
		snprintf(hi, sizeof(hi), "%.17g", b->hi.d);
		break;
	}
	if ((fl & XD_BOUND_LO) && (fl & XD_BOUND_HI) && strcmp(lo, hi) == 0 &&
	    !(fl & (XD_BOUND_LO_OPEN | XD_BOUND_HI_OPEN)))
		snprintf(buf, size, " (must be %s)", lo);
	else if ((fl & XD_BOUND_LO) && (fl & XD_BOUND_HI) &&
		 !(fl & (XD_BOUND_LO_OPEN | XD_BOUND_HI_OPEN)))
		snprintf(buf, size, " (from %s to %s)", lo, hi);
	else if ((fl & XD_BOUND_LO) && (fl & XD_BOUND_HI))
		snprintf(buf, size, " (%s %s and %s %s)",
			 fl & XD_BOUND_LO_OPEN ? "greater than" : "at least", lo,
			 fl & XD_BOUND_HI_OPEN ? "less than" : "at most", hi);
	else if (fl & XD_BOUND_LO)
		snprintf(buf, size, " (%s %s)",
			 fl & XD_BOUND_LO_OPEN ? "greater than" : "at least", lo);
	else
		snprintf(buf, size, " (%s %s)",
			 fl & XD_BOUND_HI_OPEN ? "less than" : "at most", hi);
}

/* Whether a value is within the validate.rules limits of `b`. */
static bool within(const struct xd_fielddesc *b, int64_t i, uint64_t u,
		   double d)
{
	unsigned fl = b->bound_flags;

	switch (b->bound_kind) {
	case XD_BOUND_INT:
		return !((fl & XD_BOUND_LO) && i < b->lo.i) &&
		       !((fl & XD_BOUND_HI) && i > b->hi.i);
	case XD_BOUND_UINT:
		return !((fl & XD_BOUND_LO) && u < b->lo.u) &&
		       !((fl & XD_BOUND_HI) && u > b->hi.u);
	case XD_BOUND_DOUBLE:
		if (isnan(d))
			return !(fl & (XD_BOUND_LO | XD_BOUND_HI));
		if (fl & XD_BOUND_LO &&
		    (fl & XD_BOUND_LO_OPEN ? d <= b->lo.d : d < b->lo.d))
			return false;
		if (fl & XD_BOUND_HI &&
		    (fl & XD_BOUND_HI_OPEN ? d >= b->hi.d : d > b->hi.d))
			return false;
		return true;
	default:
		return true;
	}
}

/* The limits that apply to field f: its own, or those of the wrapper
 * field whose value f is. */
static const struct xd_fielddesc *bounds_of(const struct xd_encoder *e,
					    const struct xd_fielddesc *f)
{
	if (f->bound_kind != XD_BOUND_NONE)
		return f;
	if (e->wrapper != NULL && f->parent == e->wrapper->msg)
		return e->wrapper;
	return NULL;
}

static int int_value(struct xd_encoder *e, const struct xd_fielddesc *f,
		     const struct xd_dnode *n, uint64_t *out)
{
	enum xd_ftype t = f->type;
	const struct xd_fielddesc *b = bounds_of(e, f);
	char range[128];
	char buf[160];
	enum xd_num r = XD_NUM_SYNTAX;
	int64_t i = 0;
	uint64_t u = 0;
	bool is_signed = t == XD_T_INT32 || t == XD_T_SINT32 ||
			 t == XD_T_SFIXED32 || t == XD_T_INT64 ||
			 t == XD_T_SINT64 || t == XD_T_SFIXED64;
	bool is64 = t == XD_T_INT64 || t == XD_T_SINT64 ||
		    t == XD_T_SFIXED64 || t == XD_T_UINT64 ||
		    t == XD_T_FIXED64;

	if (n->kind == XD_DN_SCALAR && n->style != XD_DS_BOOL &&
	    n->style != XD_DS_NULL) {
		if (is_signed)
			r = xd_scalar_int(n->u.str, n->len,
					  is64 ? INT64_MIN : INT32_MIN,
					  is64 ? INT64_MAX : INT32_MAX, &i);
		else
			r = xd_scalar_uint(n->u.str, n->len,
					   is64 ? UINT64_MAX : UINT32_MAX, &u);
	}
	if (r == XD_NUM_OK && b != NULL && !within(b, i, u, 0)) {
		describe_bounds(b, range, sizeof(range));
		xd_enc_err(e, n, "%s is out of range for %s%s",
			   xd_enc_raw(n, buf, sizeof(buf)),
			   xd_schema_type_name(t), range);
		return -1;
	}
	switch (r) {
	case XD_NUM_OK:
		break;
	case XD_NUM_SYNTAX:
		xd_enc_err(e, n, "expected an integer (%s), not %s",
			   xd_schema_type_name(t), xd_enc_show(n, buf, sizeof(buf)));
		return -1;
	case XD_NUM_FRACTION:
		xd_enc_err(e, n, "%s is not an integer",
			   xd_enc_raw(n, buf, sizeof(buf)));
		return -1;
	case XD_NUM_RANGE:
		xd_enc_err(e, n, "%s is out of range for %s",
			   xd_enc_raw(n, buf, sizeof(buf)),
			   xd_schema_type_name(t));
		return -1;
	}
	switch (t) {
	case XD_T_SINT32:
	case XD_T_SINT64:
		*out = xd_wire_zigzag(i);
		if (t == XD_T_SINT32)
			*out = (uint32_t)*out;
		break;
	case XD_T_SFIXED32:
		*out = (uint32_t)(int32_t)i;
		break;
	default:
		/* int32 and int64 negatives are 10-byte varints. */
		*out = is_signed ? (uint64_t)i : u;
		break;
	}
	return 0;
}

static int float_value(struct xd_encoder *e, const struct xd_fielddesc *f,
		       const struct xd_dnode *n, uint64_t *out)
{
	enum xd_ftype t = f->type;
	const struct xd_fielddesc *b = bounds_of(e, f);
	char buf[160], range[128];
	enum xd_num r = XD_NUM_SYNTAX;
	double d = 0;

	if (n->kind == XD_DN_SCALAR && n->style != XD_DS_BOOL &&
	    n->style != XD_DS_NULL)
		r = xd_scalar_double(n->u.str, n->len, &d);
	/* Beyond FLT_MAX only by less than the rounding: still a float
	 * (printers write FLT_MAX as 3.4028235e+38). */
	if (r == XD_NUM_OK && t == XD_T_FLOAT && isfinite(d) &&
	    isinf((float)d))
		r = XD_NUM_RANGE;
	if (r == XD_NUM_RANGE) {
		xd_enc_err(e, n, "%s is out of range for %s",
			   xd_enc_raw(n, buf, sizeof(buf)),
			   xd_schema_type_name(t));
		return -1;
	}
	if (r != XD_NUM_OK) {
		xd_enc_err(e, n, "expected a number (%s), not %s",
			   xd_schema_type_name(t), xd_enc_show(n, buf, sizeof(buf)));
		return -1;
	}
	if (b != NULL && !within(b, 0, 0, d)) {
		describe_bounds(b, range, sizeof(range));
		xd_enc_err(e, n, "%s is out of range for %s%s",
			   xd_enc_raw(n, buf, sizeof(buf)),
			   xd_schema_type_name(t), range);
		return -1;
	}
	if (t == XD_T_FLOAT) {
		float fl = (float)d;
		uint32_t bits;

		memcpy(&bits, &fl, 4);
		*out = bits;
	} else {
		memcpy(out, &d, 8);
	}
	return 0;
}

int xd_enc_check_string(struct xd_encoder *e, const struct xd_dnode *n)
{
	char buf[160];

	if (!xd_doc_is_text(n)) {
		xd_enc_err(e, n, "expected a string, not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return -1;
	}
	if (memchr(n->u.str, '\0', n->len) != NULL) {
		xd_enc_err(e, n, "string contains a NUL byte");
		return -1;
	}
	if (!xd_scalar_utf8_valid(n->u.str, n->len)) {
		xd_enc_err(e, n, "string is not valid UTF-8");
		return -1;
	}
	return 0;
}

static int enum_value(struct xd_encoder *e, const struct xd_enumdesc *en,
		      const struct xd_dnode *n, uint64_t *out)
{
	const struct xd_enumval *v;
	const char *hint;
	char buf[160];
	int64_t i;

	if (xd_doc_is_null(n) && en == xd_schema_null_value(e->s)) {
		*out = 0;
		return 0;
	}
	if (n->kind != XD_DN_SCALAR || n->style == XD_DS_BOOL ||
	    n->style == XD_DS_NULL) {
		xd_enc_err(e, n, "expected a value of enum %s, not %s",
			   en->full_name, xd_enc_show(n, buf, sizeof(buf)));
		return -1;
	}
	v = xd_schema_enum_by_name(en, n->u.str, n->len);
	if (v != NULL) {
		*out = (uint64_t)(int64_t)v->number;
		return 0;
	}
	/* By number; open (proto3) enums keep numbers they do not name. */
	switch (xd_scalar_int(n->u.str, n->len, INT32_MIN, INT32_MAX, &i)) {
	case XD_NUM_OK:
		if (en->closed && xd_schema_enum_by_number(en, (int32_t)i) == NULL) {
			xd_enc_err(e, n, "%s is not a value of enum %s",
				   xd_enc_raw(n, buf, sizeof(buf)), en->full_name);
			return -1;
		}
		*out = (uint64_t)i;
		return 0;
	case XD_NUM_RANGE:
		xd_enc_err(e, n, "%s is out of range for enum %s",
			   xd_enc_raw(n, buf, sizeof(buf)), en->full_name);
		return -1;
	default:
		break;
	}
	hint = xd_schema_suggest_enum(en, n->u.str, n->len);
	xd_enc_err(e, n, "unknown value %s for enum %s%s%s%s",
		   xd_enc_show(n, buf, sizeof(buf)), en->full_name,
		   hint ? " (did you mean '" : "", hint ? hint : "",
		   hint ? "'?)" : "");
	return -1;
}

/*
 * The wire value of a numeric, bool or enum scalar: the varint value, or
 * the bits of a fixed-width one. Returns 0 or -1 (reported).
 */
static int number(struct xd_encoder *e, const struct xd_fielddesc *f,
		  const struct xd_dnode *n, uint64_t *out)
{
	char buf[160];
	bool b;

	switch (f->type) {
	case XD_T_BOOL:
		if (n->kind == XD_DN_SCALAR && n->style != XD_DS_NULL &&
		    n->style != XD_DS_NUMBER &&
		    xd_scalar_bool(n->u.str, n->len, &b) == 0) {
			*out = b;
			return 0;
		}
		xd_enc_err(e, n, "expected true or false, not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return -1;
	case XD_T_ENUM:
		return enum_value(e, f->en, n, out);
	case XD_T_FLOAT:
	case XD_T_DOUBLE:
		return float_value(e, f, n, out);
	default:
		return int_value(e, f, n, out);
	}
}

/* Such a value without its tag (packed runs too). */
static void put_number(struct xd_buf *b, enum xd_ftype t, uint64_t v)
{
	switch (t) {
	case XD_T_FIXED32:
	case XD_T_SFIXED32:
	case XD_T_FLOAT:
		xd_wire_fixed32(b, (uint32_t)v);
		break;
	case XD_T_FIXED64:
	case XD_T_SFIXED64:
	case XD_T_DOUBLE:
		xd_wire_fixed64(b, v);
		break;
	default:
		xd_wire_varint(b, v);
		break;
	}
}

/* One element of a packed run: the bare value, no tag. */
void xd_enc_packed(struct xd_encoder *e, const struct xd_fielddesc *f,
		   const struct xd_dnode *n)
{
	uint64_t v;

	if (number(e, f, n, &v) == 0)
		put_number(e->out, f->type, v);
}

/* A field's value from one scalar (not a message: encode.c writes
 * those), tag included; `presence` writes it even when it holds the
 * default. */
void xd_enc_scalar(struct xd_encoder *e, const struct xd_fielddesc *f,
		   const struct xd_dnode *n, bool presence)
{
	struct xd_buf *out = e->out;
	size_t start = out->len, mark;
	uint64_t v;

	switch (f->type) {
	case XD_T_GROUP:
		xd_enc_err(e, n, "field type group is not supported");
		return;
	case XD_T_STRING:
		if (xd_enc_check_string(e, n) != 0 || (n->len == 0 && !presence))
			return;
		xd_wire_bytes(out, f->number, n->u.str, n->len);
		return;
	case XD_T_BYTES: {
		char buf[160];

		if (!xd_doc_is_text(n)) {
			xd_enc_err(e, n, "expected a base64 string, not %s",
				   xd_enc_show(n, buf, sizeof(buf)));
			return;
		}
		xd_wire_tag(out, f->number, XD_WT_LEN);
		mark = xd_wire_open(out);
		if (xd_scalar_base64_decode(n->u.str, n->len, out) != 0) {
			xd_enc_err(e, n, "malformed base64");
			out->len = start;
			return;
		}
		if (xd_wire_close(out, mark) == 0 && !presence)
			out->len = start;
		return;
	}
	default:
		if (number(e, f, n, &v) != 0)
			return;
		if (v == 0 && !presence)
			return;
		xd_wire_tag(out, f->number, xd_schema_wiretype(f->type));
		put_number(out, f->type, v);
		return;
	}
}

/* ---- well-known types written as one string ---- */

static void put_secs_nanos(struct xd_buf *out, int64_t secs, int32_t nanos)
{
	if (secs != 0) {
		xd_wire_tag(out, 1, XD_WT_VARINT);
		xd_wire_varint(out, (uint64_t)secs);
	}
	if (nanos != 0) {
		xd_wire_tag(out, 2, XD_WT_VARINT);
		xd_wire_varint(out, (uint64_t)(int64_t)nanos);
	}
}

static void enc_duration(struct xd_encoder *e, const struct xd_dnode *n)
{
	enum xd_num r = XD_NUM_SYNTAX;
	int64_t secs;
	int32_t nanos;
	char buf[160];

	if (xd_doc_is_text(n))
		r = xd_scalar_duration_parse(n->u.str, n->len, &secs, &nanos);
	if (r == XD_NUM_RANGE)
		xd_enc_err(e, n, "duration %s is out of range",
			   xd_enc_show(n, buf, sizeof(buf)));
	else if (r != XD_NUM_OK)
		xd_enc_err(e, n, "malformed duration %s (expected seconds with an \"s\" suffix, e.g. \"1.5s\")",
			   xd_enc_show(n, buf, sizeof(buf)));
	else
		put_secs_nanos(e->out, secs, nanos);
}

static void enc_timestamp(struct xd_encoder *e, const struct xd_dnode *n)
{
	enum xd_num r = XD_NUM_SYNTAX;
	int64_t secs;
	int32_t nanos;
	char buf[160];

	if (xd_doc_is_text(n))
		r = xd_scalar_timestamp_parse(n->u.str, n->len, &secs, &nanos);
	if (r == XD_NUM_RANGE)
		xd_enc_err(e, n, "timestamp %s is out of range",
			   xd_enc_show(n, buf, sizeof(buf)));
	else if (r != XD_NUM_OK)
		xd_enc_err(e, n, "malformed timestamp %s (expected RFC 3339, e.g. \"2024-01-02T03:04:05Z\")",
			   xd_enc_show(n, buf, sizeof(buf)));
	else
		put_secs_nanos(e->out, secs, nanos);
}

/* "a.fooBar,b": paths between commas, empty ones skipped. */
static void enc_field_mask(struct xd_encoder *e, const struct xd_dnode *n)
{
	struct xd_buf *out = e->out;
	const char *s = n->u.str;
	char buf[160];

	if (!xd_doc_is_text(n)) {
		xd_enc_err(e, n, "expected a FieldMask string such as \"a.b,cD\", not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return;
	}
	for (size_t i = 0; i <= n->len;) {
		const char *comma = memchr(s + i, ',', n->len - i);
		size_t end = comma ? (size_t)(comma - s) : n->len;

		if (end > i) {
			size_t mark;

			xd_wire_tag(out, 1, XD_WT_LEN);
			mark = xd_wire_open(out);
			if (xd_scalar_fieldmask_parse(s + i, end - i, out) != 0 ||
			    !xd_scalar_utf8_valid(s + i, end - i)) {
				struct xd_dnode part = *n;

				part.u.str = s + i;
				part.len = (uint32_t)(end - i);
				xd_enc_err(e, n, "malformed FieldMask path %s",
					   xd_enc_show(&part, buf, sizeof(buf)));
				return;
			}
			xd_wire_close(out, mark);
		}
		i = end + 1;
	}
}

/* The well-known types written as one string: Duration, Timestamp,
 * FieldMask. */
bool xd_enc_locator(struct xd_encoder *e, const struct xd_msgdesc *m,
		    const struct xd_dnode *n)
{
	char buf[160];
	const char *why;

	if (!xd_doc_is_text(n) ||
	    strcmp(m->full_name, "xds.core.v3.ResourceLocator") != 0)
		return false;
	if (xd_enc_check_string(e, n) != 0)
		return true;
	if (xd_xdstp_to_locator(n->u.str, n->len, e->out, &why) != 0)
		xd_enc_err(e, n, "%s is not an xdstp:// locator: %s",
			   xd_enc_show(n, buf, sizeof(buf)), why);
	return true;
}

void xd_enc_text_wkt(struct xd_encoder *e, const struct xd_msgdesc *m,
		     const struct xd_dnode *n)
{
	switch (m->wkt) {
	case XD_WKT_DURATION:
		enc_duration(e, n);
		break;
	case XD_WKT_TIMESTAMP:
		enc_timestamp(e, n);
		break;
	default:
		enc_field_mask(e, n);
		break;
	}
}
