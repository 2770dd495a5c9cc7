/* Messages, fields, scalars and maps; the well-known types are in
 * encode_wkt.c. */
#include "schema/encode.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/scalar.h"
#include "schema/wire.h"

struct xd_enc_ent {
	const struct xd_fielddesc *f;
	const struct xd_dnode *key, *val;
};

struct xd_enc_key {
	const struct xd_dnode *key, *val;
	uint64_t num; /* integer and bool keys, for sorting */
};

enum { SEG_FIELD, SEG_INDEX, SEG_KEY, SEG_NONE };

/* Values shown in messages are cut after this many bytes (type URLs
 * are long: keep them whole). */
#define XD_ENC_SHOW_MAX 120

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;

	while (n < need)
		n *= 2;
	p = realloc(p, n * size);
	if (p == NULL)
		abort();
	*cap = n;
	return p;
}

void xd_encoder_init(struct xd_encoder *e, const struct xd_schema *s)
{
	memset(e, 0, sizeof(*e));
	e->s = s;
}

void xd_encoder_free(struct xd_encoder *e)
{
	for (unsigned i = 0; i < e->nerr; i++)
		free(e->errs[i].msg);
	free(e->ents);
	free(e->keys);
	memset(e, 0, sizeof(*e));
}

/* ---- path and errors ---- */

void xd_enc_push_field(struct xd_encoder *e, const struct xd_dnode *key)
{
	/* A key that is a list or a mapping has no name to show. */
	if (e->nsegs < XD_ENC_MAX_SEGS)
		e->segs[e->nsegs] = key->kind == XD_DN_SCALAR ?
			(struct xd_enc_seg){SEG_FIELD, key->len, key->u.str, 0} :
			(struct xd_enc_seg){SEG_NONE, 0, NULL, 0};
	e->nsegs++;
}

void xd_enc_push_index(struct xd_encoder *e, uint64_t index)
{
	if (e->nsegs < XD_ENC_MAX_SEGS)
		e->segs[e->nsegs] = (struct xd_enc_seg){SEG_INDEX, 0, NULL,
							index};
	e->nsegs++;
}

void xd_enc_push_key(struct xd_encoder *e, const struct xd_dnode *key)
{
	if (e->nsegs < XD_ENC_MAX_SEGS)
		e->segs[e->nsegs] = key->kind == XD_DN_SCALAR ?
			(struct xd_enc_seg){SEG_KEY, key->len, key->u.str, 0} :
			(struct xd_enc_seg){SEG_NONE, 0, NULL, 0};
	e->nsegs++;
}

/* Appends text for a message: at most `max` bytes, control bytes as '?',
 * cut at a character boundary. */
static void put_text(struct xd_buf *b, const char *s, size_t len, size_t max)
{
	size_t n = len;

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		xd_buf_putc(b, c < 0x20 || c == 0x7f ? '?' : c);
	}
	if (n < len)
		xd_buf_append(b, "...", 3);
}

const char *xd_enc_show(const struct xd_dnode *n, char *buf, size_t size)
{
	struct xd_buf b = XD_BUF_INIT;

	if (n->kind != XD_DN_SCALAR || n->style == XD_DS_NULL)
		return xd_doc_kind_name(n);
	if (n->style == XD_DS_NUMBER || n->style == XD_DS_BOOL) {
		put_text(&b, n->u.str, n->len, XD_ENC_SHOW_MAX);
	} else {
		xd_buf_putc(&b, '\'');
		put_text(&b, n->u.str, n->len, XD_ENC_SHOW_MAX);
		xd_buf_putc(&b, '\'');
	}
	snprintf(buf, size, "%.*s", (int)b.len, (const char *)b.data);
	xd_buf_free(&b);
	return buf;
}

const char *xd_enc_raw(const struct xd_dnode *n, char *buf, size_t size)
{
	struct xd_buf b = XD_BUF_INIT;

	put_text(&b, n->u.str, n->len, XD_ENC_SHOW_MAX);
	snprintf(buf, size, "%.*s", (int)b.len, (const char *)b.data);
	xd_buf_free(&b);
	return buf;
}

static void put_path(struct xd_encoder *e, struct xd_buf *b)
{
	unsigned n = e->nsegs < XD_ENC_MAX_SEGS ? e->nsegs : XD_ENC_MAX_SEGS;

	if (e->prefix != NULL)
		xd_buf_append(b, e->prefix, strlen(e->prefix));
	for (unsigned i = 0; i < n; i++) {
		const struct xd_enc_seg *s = &e->segs[i];

		switch (s->kind) {
		case SEG_FIELD:
			if (b->len > 0)
				xd_buf_putc(b, '.');
			put_text(b, s->name, s->len, 80);
			break;
		case SEG_INDEX:
			xd_buf_printf(b, "[%llu]", (unsigned long long)s->index);
			break;
		case SEG_NONE:
			break;
		default:
			xd_buf_append(b, "[\"", 2);
			put_text(b, s->name, s->len, 80);
			xd_buf_append(b, "\"]", 2);
			break;
		}
	}
}

void xd_enc_err(struct xd_encoder *e, const struct xd_dnode *at,
		const char *fmt, ...)
{
	struct xd_buf b = XD_BUF_INIT;
	struct xd_enc_err *r;
	va_list ap;
	char *msg;

	if (e->nerr == XD_ENC_MAX_ERRORS) {
		e->stopped = true;
		return;
	}
	put_path(e, &b);
	if (b.len > 0)
		xd_buf_append(&b, ": ", 2);
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg != NULL)
		xd_buf_append(&b, msg, strlen(msg));
	free(msg);
	xd_buf_putc(&b, '\0');
	r = &e->errs[e->nerr];
	r->line = at->line;
	r->col = at->col;
	r->seq = e->nerr;
	r->msg = (char *)xd_buf_steal(&b, NULL);
	e->nerr++;
}

/* "(first on line 3)", for duplicates; JSON has no lines. */
static const char *first_on(const struct xd_dnode *n, char *buf, size_t size)
{
	if (n->line == 0)
		return "";
	snprintf(buf, size, " (first on line %u)", n->line);
	return buf;
}

/* ---- scalars ---- */

static bool is_null(const struct xd_dnode *n)
{
	return n->kind == XD_DN_SCALAR && n->style == XD_DS_NULL;
}

/* Whether null means a value here rather than "not set". */
bool xd_enc_null_is_value(const struct xd_encoder *e,
			  const struct xd_fielddesc *f)
{
	return (f->type == XD_T_MESSAGE && f->msg->wkt == XD_WKT_VALUE) ||
	       (f->type == XD_T_ENUM && f->en == e->s->null_value);
}

/* A text scalar (not a container, JSON number or boolean). */
static bool is_text(const struct xd_dnode *n)
{
	return n->kind == XD_DN_SCALAR &&
	       (n->style == XD_DS_PLAIN || n->style == XD_DS_STRING);
}

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

	if (!is_text(n)) {
		xd_enc_err(e, n, "expected a string, not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return -1;
	}
	if (memchr(n->u.str, '\0', n->len) != NULL) {
		xd_enc_err(e, n, "string contains a NUL byte");
		return -1;
	}
	if (!xd_utf8_valid(n->u.str, n->len)) {
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

	if (is_null(n) && en == e->s->null_value) {
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
static int number_value(struct xd_encoder *e, const struct xd_fielddesc *f,
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

static enum xd_wiretype wiretype_of(enum xd_ftype t)
{
	switch (t) {
	case XD_T_FIXED32:
	case XD_T_SFIXED32:
	case XD_T_FLOAT:
		return XD_WT_I32;
	case XD_T_FIXED64:
	case XD_T_SFIXED64:
	case XD_T_DOUBLE:
		return XD_WT_I64;
	case XD_T_STRING:
	case XD_T_BYTES:
	case XD_T_MESSAGE:
		return XD_WT_LEN;
	default:
		return XD_WT_VARINT;
	}
}

/* ---- fields ---- */

void xd_enc_submsg(struct xd_encoder *e, const struct xd_msgdesc *m,
		   const struct xd_dnode *n)
{
	if (e->depth >= XD_ENC_MAX_DEPTH) {
		xd_enc_err(e, n, "nesting deeper than %d levels",
			   XD_ENC_MAX_DEPTH);
		return;
	}
	e->depth++;
	if (m->wkt != XD_WKT_NONE && m->wkt != XD_WKT_EMPTY) {
		xd_enc_wkt(e, m, n);
	} else if (n->kind != XD_DN_MAP) {
		char buf[160];

		xd_enc_err(e, n, "expected a mapping for %s, not %s",
			   m->full_name, xd_enc_show(n, buf, sizeof(buf)));
	} else {
		xd_enc_fields(e, m, n, false);
	}
	e->depth--;
}

/* One value of field f (a singular field or an element of a repeated
 * one); `presence` writes it even when it holds the default. */
void xd_enc_single(struct xd_encoder *e, const struct xd_fielddesc *f,
		   const struct xd_dnode *n, bool presence)
{
	struct xd_buf *out = e->out;
	size_t start = out->len, mark;
	uint64_t v;

	switch (f->type) {
	case XD_T_MESSAGE:
		xd_wire_tag(out, f->number, XD_WT_LEN);
		mark = xd_wire_open(out);
		/* A wrapper's limits are on the field that holds it. */
		e->wrapper = f->bound_kind != XD_BOUND_NONE ? f : NULL;
		xd_enc_submsg(e, f->msg, n);
		e->wrapper = NULL;
		xd_wire_close(out, mark);
		return;
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

		if (!is_text(n)) {
			xd_enc_err(e, n, "expected a base64 string, not %s",
				   xd_enc_show(n, buf, sizeof(buf)));
			return;
		}
		xd_wire_tag(out, f->number, XD_WT_LEN);
		mark = xd_wire_open(out);
		if (xd_base64_decode(n->u.str, n->len, out) != 0) {
			xd_enc_err(e, n, "malformed base64");
			out->len = start;
			return;
		}
		if (xd_wire_close(out, mark) == 0 && !presence)
			out->len = start;
		return;
	}
	default:
		if (number_value(e, f, n, &v) != 0)
			return;
		if (v == 0 && !presence)
			return;
		xd_wire_tag(out, f->number, wiretype_of(f->type));
		put_number(out, f->type, v);
		return;
	}
}

static void enc_repeated(struct xd_encoder *e, const struct xd_fielddesc *f,
			 const struct xd_dnode *n)
{
	size_t mark = 0;
	char buf[160];
	uint64_t v;

	if (n->kind != XD_DN_SEQ) {
		xd_enc_err(e, n, "expected a list, not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return;
	}
	if (n->len == 0)
		return;
	if (f->flags & XD_F_PACKED) {
		xd_wire_tag(e->out, f->number, XD_WT_LEN);
		mark = xd_wire_open(e->out);
	}
	for (uint32_t i = 0; i < n->len && !e->stopped; i++) {
		const struct xd_dnode *item = &n->u.kids[i];

		xd_enc_push_index(e, i);
		if (is_null(item) && !xd_enc_null_is_value(e, f))
			xd_enc_err(e, item, "null is not allowed in a list");
		else if (!(f->flags & XD_F_PACKED))
			xd_enc_single(e, f, item, true);
		else if (number_value(e, f, item, &v) == 0)
			put_number(e->out, f->type, v);
		e->nsegs--;
	}
	if (f->flags & XD_F_PACKED)
		xd_wire_close(e->out, mark);
}

/* Parses a map key for sorting; 0 or -1 (reported). */
static int map_key(struct xd_encoder *e, const struct xd_fielddesc *kf,
		   struct xd_enc_key *k)
{
	const struct xd_dnode *n = k->key;
	char buf[160];
	enum xd_num r;
	bool b;
	int64_t i;

	switch (kf->type) {
	case XD_T_STRING:
		return xd_enc_check_string(e, n);
	case XD_T_BOOL:
		if (xd_scalar_bool(n->u.str, n->len, &b) != 0) {
			xd_enc_err(e, n, "map key %s: expected true or false",
				   xd_enc_show(n, buf, sizeof(buf)));
			return -1;
		}
		k->num = b;
		return 0;
	case XD_T_UINT32:
	case XD_T_FIXED32:
	case XD_T_UINT64:
	case XD_T_FIXED64:
		r = xd_scalar_uint(n->u.str, n->len,
				   kf->type == XD_T_UINT32 ||
						   kf->type == XD_T_FIXED32 ?
					   UINT32_MAX :
					   UINT64_MAX,
				   &k->num);
		break;
	default: {
		bool is64 = kf->type == XD_T_INT64 || kf->type == XD_T_SINT64 ||
			    kf->type == XD_T_SFIXED64;

		r = xd_scalar_int(n->u.str, n->len, is64 ? INT64_MIN : INT32_MIN,
				  is64 ? INT64_MAX : INT32_MAX, &i);
		/* Offset so that unsigned order is numeric order. */
		k->num = (uint64_t)i ^ (1ull << 63);
		break;
	}
	}
	if (r == XD_NUM_OK)
		return 0;
	if (r == XD_NUM_RANGE)
		xd_enc_err(e, n, "map key %s is out of range for %s",
			   xd_enc_raw(n, buf, sizeof(buf)),
			   xd_schema_type_name(kf->type));
	else
		xd_enc_err(e, n, "map key %s: expected an integer (%s)",
			   xd_enc_show(n, buf, sizeof(buf)),
			   xd_schema_type_name(kf->type));
	return -1;
}

/* Document order of two nodes. */
static int pos_cmp(const struct xd_dnode *a, const struct xd_dnode *b)
{
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->col < b->col ? -1 : a->col > b->col;
}

static int cmp_str_key(const void *a, const void *b)
{
	const struct xd_dnode *ka = ((const struct xd_enc_key *)a)->key;
	const struct xd_dnode *kb = ((const struct xd_enc_key *)b)->key;
	size_t n = ka->len < kb->len ? ka->len : kb->len;
	int c = memcmp(ka->u.str, kb->u.str, n);

	if (c != 0)
		return c;
	if (ka->len != kb->len)
		return ka->len < kb->len ? -1 : 1;
	/* Equal keys: document order, so the second is the duplicate. */
	return pos_cmp(ka, kb);
}

static int cmp_num_key(const void *a, const void *b)
{
	const struct xd_enc_key *ka = a, *kb = b;

	if (ka->num != kb->num)
		return ka->num < kb->num ? -1 : 1;
	return pos_cmp(ka->key, kb->key);
}

static bool same_key(const struct xd_enc_key *a, const struct xd_enc_key *b,
		     bool by_text)
{
	if (!by_text)
		return a->num == b->num;
	return a->key->len == b->key->len &&
	       memcmp(a->key->u.str, b->key->u.str, a->key->len) == 0;
}

/* map<k, v>: entries sorted by key, as deterministic serialization does;
 * each entry writes both key and value. */
void xd_enc_map(struct xd_encoder *e, const struct xd_fielddesc *f,
		const struct xd_dnode *n)
{
	const struct xd_fielddesc *kf = &f->msg->fields[0];
	const struct xd_fielddesc *vf = &f->msg->fields[1];
	bool by_text = kf->type == XD_T_STRING;
	size_t base = e->nkeys, end;
	char buf[160], where[48];

	if (n->kind != XD_DN_MAP) {
		xd_enc_err(e, n, "expected a mapping, not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return;
	}
	for (uint32_t i = 0; i < n->len && !e->stopped; i++) {
		struct xd_enc_key k = {&n->u.kids[2 * i], &n->u.kids[2 * i + 1], 0};

		xd_enc_push_key(e, k.key);
		if (k.key->kind != XD_DN_SCALAR) {
			xd_enc_err(e, k.key, "keys must be scalars, not %s",
				   xd_doc_kind_name(k.key));
		} else if (map_key(e, kf, &k) == 0) {
			if (is_null(k.val) && !xd_enc_null_is_value(e, vf)) {
				xd_enc_err(e, k.val,
					   "null is not allowed as a map value");
			} else {
				if (e->nkeys == e->keys_cap)
					e->keys = grow(e->keys, &e->keys_cap,
						       e->nkeys + 1,
						       sizeof(*e->keys));
				e->keys[e->nkeys++] = k;
			}
		}
		e->nsegs--;
	}
	end = e->nkeys;
	if (end > base)
		qsort(e->keys + base, end - base, sizeof(*e->keys),
		      by_text ? cmp_str_key : cmp_num_key);
	for (size_t i = base; i < end && !e->stopped; i++) {
		struct xd_enc_key k = e->keys[i];
		size_t mark;

		xd_enc_push_key(e, k.key);
		if (i > base && same_key(&e->keys[i - 1], &k, by_text)) {
			xd_enc_err(e, k.key, "duplicate map key %s%s",
				   xd_enc_show(k.key, buf, sizeof(buf)),
				   first_on(e->keys[i - 1].key, where,
					    sizeof(where)));
			e->nsegs--;
			continue;
		}
		xd_wire_tag(e->out, f->number, XD_WT_LEN);
		mark = xd_wire_open(e->out);
		xd_enc_single(e, kf, k.key, true);
		xd_enc_single(e, vf, k.val, true);
		xd_wire_close(e->out, mark);
		e->nsegs--;
	}
	e->nkeys = base;
}

static void enc_field(struct xd_encoder *e, const struct xd_fielddesc *f,
		      const struct xd_dnode *n)
{
	if (is_null(n) && !xd_enc_null_is_value(e, f))
		return; /* null: not set */
	if (f->flags & XD_F_MAP)
		xd_enc_map(e, f, n);
	else if (f->flags & XD_F_REPEATED)
		enc_repeated(e, f, n);
	else
		xd_enc_single(e, f, n, (f->flags & XD_F_PRESENCE) != 0);
}

/* Resolves one key of a message mapping; NULL when it is not a field to
 * write (unknown, duplicate, oneof conflict: reported). */
static const struct xd_fielddesc *resolve_key(struct xd_encoder *e,
					      const struct xd_msgdesc *m,
					      size_t base,
					      const struct xd_dnode *k,
					      const struct xd_dnode *v)
{
	const struct xd_fielddesc *f;
	const char *hint;
	char buf[160], other[160], where[48];

	if (k->kind != XD_DN_SCALAR) {
		xd_enc_err(e, k, "keys must be scalars, not %s",
			   xd_doc_kind_name(k));
		return NULL;
	}
	f = xd_schema_field_by_name(m, k->u.str, k->len);
	if (f == NULL) {
		hint = xd_schema_suggest_field(m, k->u.str, k->len);
		xd_enc_err(e, k, "unknown field %s in %s%s%s%s",
			   xd_enc_show(k, buf, sizeof(buf)), m->full_name,
			   hint ? " (did you mean '" : "", hint ? hint : "",
			   hint ? "'?)" : "");
		return NULL;
	}
	for (size_t j = base; j < e->nents; j++) {
		const struct xd_enc_ent *o = &e->ents[j];

		if (o->f == f) {
			if (o->key->len == k->len &&
			    memcmp(o->key->u.str, k->u.str, k->len) == 0)
				xd_enc_err(e, k, "duplicate key %s%s",
					   xd_enc_show(k, buf, sizeof(buf)),
					   first_on(o->key, where,
						    sizeof(where)));
			else
				xd_enc_err(e, k, "%s sets the same field as %s%s",
					   xd_enc_show(k, buf, sizeof(buf)),
					   xd_enc_show(o->key, other,
						       sizeof(other)),
					   first_on(o->key, where,
						    sizeof(where)));
			return NULL;
		}
		if (f->oneof >= 0 && o->f->oneof == f->oneof && !is_null(v) &&
		    !is_null(o->val)) {
			xd_enc_err(e, k, "%s and %s are both set, but only one member of oneof '%s' may be",
				   xd_enc_show(k, buf, sizeof(buf)),
				   xd_enc_show(o->key, other, sizeof(other)),
				   m->oneofs[f->oneof]);
			return NULL;
		}
	}
	return f;
}

void xd_enc_fields(struct xd_encoder *e, const struct xd_msgdesc *m,
		   const struct xd_dnode *map, bool skip_type)
{
	size_t base = e->nents, end;

	for (uint32_t i = 0; i < map->len && !e->stopped; i++) {
		const struct xd_dnode *k = &map->u.kids[2 * i];
		const struct xd_dnode *v = &map->u.kids[2 * i + 1];
		const struct xd_fielddesc *f;

		if (skip_type && k->kind == XD_DN_SCALAR && k->len == 5 &&
		    memcmp(k->u.str, "@type", 5) == 0)
			continue;
		xd_enc_push_field(e, k);
		f = resolve_key(e, m, base, k, v);
		e->nsegs--;
		if (f == NULL)
			continue;
		if (e->nents == e->ents_cap)
			e->ents = grow(e->ents, &e->ents_cap, e->nents + 1,
				       sizeof(*e->ents));
		e->ents[e->nents++] = (struct xd_enc_ent){f, k, v};
	}
	end = e->nents;
	/* Insertion sort: a handful of fields, each at most once. */
	for (size_t i = base + 1; i < end; i++) {
		struct xd_enc_ent x = e->ents[i];
		size_t j = i;

		for (; j > base && e->ents[j - 1].f->number > x.f->number; j--)
			e->ents[j] = e->ents[j - 1];
		e->ents[j] = x;
	}
	for (size_t i = base; i < end && !e->stopped; i++) {
		struct xd_enc_ent x = e->ents[i];

		xd_enc_push_field(e, x.key);
		enc_field(e, x.f, x.val);
		e->nsegs--;
	}
	e->nents = base;
}

/* ---- entry ---- */

static int cmp_err(const void *a, const void *b)
{
	const struct xd_enc_err *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int xd_encoder_run(struct xd_encoder *e, const struct xd_msgdesc *m,
		   const struct xd_dnode *root, const char *file,
		   const char *path, struct xd_buf *out, struct xd_diag *diag)
{
	size_t start = out->len;

	e->out = out;
	e->file = file;
	e->prefix = path;
	e->depth = 0;
	e->wrapper = NULL;
	e->nents = e->nkeys = 0;
	e->nsegs = 0;
	e->nerr = 0;
	e->stopped = false;
	xd_enc_submsg(e, m, root);
	if (e->nerr == 0)
		return 0;
	/* Fields are visited in number order; report in document order. */
	qsort(e->errs, e->nerr, sizeof(e->errs[0]), cmp_err);
	for (unsigned i = 0; i < e->nerr; i++) {
		const struct xd_enc_err *r = &e->errs[i];

		if (r->line > 0)
			xd_diag_add(diag, "%s:%u:%u: %s", file, r->line, r->col,
				    r->msg);
		else
			xd_diag_add(diag, "%s: %s", file, r->msg);
		free(r->msg);
	}
	if (e->stopped) {
		if (root->line > 0)
			xd_diag_add(diag, "%s:%u:%u: %s%sstopped after %d errors in this resource",
				    file, root->line, root->col,
				    path ? path : "", path && *path ? ": " : "",
				    XD_ENC_MAX_ERRORS);
		else
			xd_diag_add(diag, "%s: %s%sstopped after %d errors in this resource",
				    file, path ? path : "",
				    path && *path ? ": " : "", XD_ENC_MAX_ERRORS);
	}
	e->nerr = 0;
	out->len = start;
	return -1;
}
