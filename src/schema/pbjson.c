/* SPDX-License-Identifier: Apache-2.0 */
/* Protobuf bytes → JSON (pbjson.h): messages, fields, scalars, maps and
 * the well-known types, which nest inside each other (an Any holds
 * messages, a message holds Anys) and so recurse through one another. */
#include "schema/pbjson.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/scalar.h"
#include "wire/wire.h"
#include "util/buf.h"
#include "util/xalloc.h"

/* Messages nested deeper than this are refused. */
#define MAX_DEPTH 64

/* One field as found on the wire, kept until its message is complete:
 * fields are printed in number order, repeated ones together. */
struct occ {
	const struct xd_fielddesc *f;
	struct xd_wire_field w;
	uint32_t seq;
};

struct dec {
	const struct xd_schema *s;
	unsigned flags;
	struct xd_diag *diag;
	const struct xd_msgdesc *root;
	unsigned depth;
	struct occ *occs; /* fields of the open messages */
	size_t nocc, cap;
	struct xd_buf path; /* "a.b[2]" for messages */
	int failed;
};

static json_t *dec_msg(struct dec *d, const struct xd_msgdesc *m,
		       const uint8_t *p, size_t len);

/* Reports the first error (later ones follow from it). */
static void dec_fail(struct dec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void dec_fail(struct dec *d, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (d->failed)
		return; /* the first error explains the rest */
	d->failed = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xd_diag_add(d->diag, "%s%s%.*s: %s", d->root->full_name,
		    d->path.len ? " at " : "", (int)d->path.len,
		    d->path.len ? (const char *)d->path.data : "", msg);
}

static size_t path_push(struct dec *d, const struct xd_fielddesc *f,
			long index)
{
	size_t old = d->path.len;

	if (f != NULL)
		xd_buf_printf(&d->path, "%s%s", old ? "." : "", f->name);
	if (index >= 0)
		xd_buf_printf(&d->path, "[%ld]", index);
	return old;
}

static json_t *int_string(int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return json_string(buf);
}

static json_t *uint_string(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

static json_t *double_json(double v)
{
	if (isnan(v))
		return json_string("NaN");
	if (isinf(v))
		return json_string(v > 0 ? "Infinity" : "-Infinity");
	return json_real(v);
}

static json_t *bytes_json(const uint8_t *p, size_t len)
{
	struct xd_buf b = XD_BUF_INIT;
	json_t *j;

	xd_scalar_base64_encode(p, len, &b);
	j = json_stringn(b.len ? (const char *)b.data : "", b.len);
	xd_buf_free(&b);
	return j;
}

/* A scalar's JSON from its wire value (v) or bytes (p, len). */
static json_t *scalar_json(struct dec *d, const struct xd_fielddesc *f,
			   uint64_t v, const uint8_t *p, size_t len)
{
	const struct xd_enumval *ev;
	json_t *j;
	float fl;
	double db;

	switch (f->type) {
	case XD_T_INT32:
	case XD_T_SFIXED32:
		return json_integer((int32_t)(uint32_t)v);
	case XD_T_SINT32:
		return json_integer((int32_t)xd_wire_unzigzag((uint32_t)v));
	case XD_T_UINT32:
	case XD_T_FIXED32:
		return json_integer((uint32_t)v);
	case XD_T_INT64:
	case XD_T_SFIXED64:
		return int_string((int64_t)v);
	case XD_T_SINT64:
		return int_string(xd_wire_unzigzag(v));
	case XD_T_UINT64:
	case XD_T_FIXED64:
		return uint_string(v);
	case XD_T_BOOL:
		return json_boolean(v != 0);
	case XD_T_FLOAT: {
		uint32_t bits = (uint32_t)v;

		memcpy(&fl, &bits, 4);
		return isfinite(fl) ? json_real(xd_scalar_float_shortest(fl)) :
				      double_json(fl);
	}
	case XD_T_DOUBLE:
		memcpy(&db, &v, 8);
		return double_json(db);
	case XD_T_ENUM:
		if (f->en == xd_schema_null_value(d->s))
			return json_null();
		ev = xd_schema_enum_by_number(f->en, (int32_t)v);
		return ev ? json_string(ev->name) : json_integer((int32_t)v);
	case XD_T_STRING:
		j = json_stringn_nocheck((const char *)(p ? p : (const uint8_t *)""),
					 len);
		if (!xd_scalar_utf8_valid((const char *)p, len)) {
			dec_fail(d, "%s: string is not valid UTF-8", f->name);
			json_decref(j);
			return NULL;
		}
		return j;
	case XD_T_BYTES:
		return bytes_json(p, len);
	default:
		dec_fail(d, "%s: field type %s is not supported", f->name,
			 xd_schema_type_name(f->type));
		return NULL;
	}
}

/* One value of field f as it is on the wire (not packed). */
static json_t *field_value(struct dec *d, const struct xd_fielddesc *f,
			   const struct xd_wire_field *w)
{
	if (f->type == XD_T_MESSAGE)
		return dec_msg(d, f->msg, w->data, w->len);
	return scalar_json(d, f, w->v, w->data, w->len);
}

/* Whether the wire type fits the field (packed runs included). */
static bool wire_ok(const struct xd_fielddesc *f,
		    const struct xd_wire_field *w)
{
	return w->wt == xd_schema_wiretype(f->type) ||
	       (w->wt == XD_WT_LEN && (f->flags & XD_F_REPEATED) &&
		xd_schema_packable(f->type));
}

/* Elements of a packed run, appended to `arr`. */
static int packed_json(struct dec *d, const struct xd_fielddesc *f,
		       const struct xd_wire_field *w, json_t *arr)
{
	const uint8_t *p = w->data, *end = w->data + w->len;
	uint8_t wt = xd_schema_wiretype(f->type);

	while (p < end) {
		uint64_t v = 0;

		if (wt == XD_WT_VARINT) {
			if (xd_wire_get_varint(&p, end, &v) != 0)
				goto bad;
		} else {
			size_t n = wt == XD_WT_I64 ? 8 : 4;

			if ((size_t)(end - p) < n)
				goto bad;
			for (size_t i = 0; i < n; i++)
				v |= (uint64_t)p[i] << (8 * i);
			p += n;
		}
		if (json_array_append_new(arr, scalar_json(d, f, v, NULL, 0)) != 0)
			return -1;
	}
	return 0;
bad:
	dec_fail(d, "%s: malformed packed values", f->name);
	return -1;
}

/* The map key as a JSON object key. */
static int map_key_text(struct dec *d, const struct xd_fielddesc *kf,
			const struct xd_wire_field *w, struct xd_buf *out)
{
	json_t *j;

	out->len = 0;
	if (w == NULL) { /* absent: the default */
		if (kf->type == XD_T_BOOL)
			xd_buf_append(out, "false", 5);
		else if (kf->type != XD_T_STRING)
			xd_buf_putc(out, '0');
		return 0;
	}
	if (kf->type == XD_T_STRING) {
		if (!xd_scalar_utf8_valid((const char *)w->data, w->len)) {
			dec_fail(d, "map key is not valid UTF-8");
			return -1;
		}
		xd_buf_append(out, w->data, w->len);
		return 0;
	}
	if (kf->type == XD_T_BOOL) {
		xd_buf_printf(out, "%s", w->v ? "true" : "false");
		return 0;
	}
	j = scalar_json(d, kf, w->v, NULL, 0);
	if (json_is_integer(j))
		xd_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
	else if (json_is_string(j))
		xd_buf_printf(out, "%s", json_string_value(j));
	json_decref(j);
	return 0;
}

/* One map entry into `obj`. */
static int map_entry(struct dec *d, const struct xd_fielddesc *f,
		     const struct xd_wire_field *w, json_t *obj)
{
	const struct xd_fielddesc *kf = &f->msg->fields[0];
	const struct xd_fielddesc *vf = &f->msg->fields[1];
	struct xd_wire_field e, kw = {0}, vw = {0};
	const uint8_t *p = w->data, *end = w->data + w->len;
	bool have_k = false, have_v = false;
	struct xd_buf key = XD_BUF_INIT;
	json_t *val;
	int r;

	while ((r = xd_wire_next(&p, end, &e)) == 1) {
		if (e.number == 1 && wire_ok(kf, &e)) {
			kw = e;
			have_k = true;
		} else if (e.number == 2 && wire_ok(vf, &e)) {
			vw = e;
			have_v = true;
		}
	}
	if (r < 0) {
		dec_fail(d, "%s: malformed map entry", f->name);
		return -1;
	}
	if (map_key_text(d, kf, have_k ? &kw : NULL, &key) != 0)
		return -1;
	if (have_v)
		val = field_value(d, vf, &vw);
	else if (vf->type == XD_T_MESSAGE)
		val = dec_msg(d, vf->msg, NULL, 0);
	else
		val = scalar_json(d, vf, 0, NULL, 0);
	xd_buf_putc(&key, '\0');
	r = val != NULL ? json_object_setn_new_nocheck(obj, (const char *)key.data,
						       key.len - 1, val) :
			  -1;
	xd_buf_free(&key);
	return r;
}

static bool is_default(const struct xd_wire_field *w)
{
	return w->wt == XD_WT_LEN ? w->len == 0 : w->v == 0;
}

static int cmp_occ(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;

	if (x->f->number != y->f->number)
		return x->f->number < y->f->number ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The JSON of the `n` occurrences of one field at d->occs[at] (all of a
 * repeated field, the last of a scalar, all merged for a message).
 * Indexes, not pointers: nested messages may move d->occs. */
static json_t *field_json(struct dec *d, size_t at, size_t n)
{
	const struct xd_fielddesc *f = d->occs[at].f;
	json_t *j;

	if (f->flags & XD_F_MAP) {
		j = json_object();
		for (size_t i = 0; i < n && !d->failed; i++) {
			struct xd_wire_field w = d->occs[at + i].w;

			if (map_entry(d, f, &w, j) != 0)
				break;
		}
	} else if (f->flags & XD_F_REPEATED) {
		j = json_array();
		for (size_t i = 0; i < n && !d->failed; i++) {
			struct xd_wire_field w = d->occs[at + i].w;
			size_t old = path_push(d, NULL, (long)json_array_size(j));

			if (w.wt == XD_WT_LEN && xd_schema_packable(f->type))
				packed_json(d, f, &w, j);
			else if (json_array_append_new(j, field_value(d, f, &w)) != 0)
				dec_fail(d, "cannot build JSON");
			d->path.len = old;
		}
	} else if (f->type == XD_T_MESSAGE && n > 1) {
		/* Parsing the concatenation is protobuf's merge. */
		struct xd_buf all = XD_BUF_INIT;

		for (size_t i = 0; i < n; i++)
			xd_buf_append(&all, d->occs[at + i].w.data,
				      d->occs[at + i].w.len);
		j = dec_msg(d, f->msg, all.data, all.len);
		xd_buf_free(&all);
	} else {
		struct xd_wire_field w = d->occs[at + n - 1].w;

		j = field_value(d, f, &w);
	}
	if (d->failed) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Whether occurrence k is the last of its oneof's members. */
static bool last_of_oneof(const struct dec *d, size_t base, size_t end,
			  size_t k)
{
	const struct occ *o = &d->occs[k];

	for (size_t i = base; i < end; i++) {
		const struct occ *x = &d->occs[i];

		if (x->f != o->f && x->f->oneof == o->f->oneof &&
		    x->f->parent == o->f->parent && x->seq > o->seq)
			return false;
	}
	return true;
}

/* The fields of message m into obj. */
static int dec_fields(struct dec *d, const struct xd_msgdesc *m,
		      const uint8_t *p, size_t len, json_t *obj)
{
	static const uint8_t none[1];
	const uint8_t *end = (p = p ? p : none) + len;
	size_t base = d->nocc, end_occ;
	struct xd_wire_field w;
	bool sorted = true;
	uint32_t seq = 0;
	int r;

	while ((r = xd_wire_next(&p, end, &w)) == 1) {
		const struct xd_fielddesc *f = xd_schema_field_by_number(m, w.number);

		/* Unknown fields are skipped; so is a known number with
		 * another wire type, which protobuf's parsers also keep as
		 * an unknown field. */
		if (f == NULL || !wire_ok(f, &w))
			continue;
		if (d->nocc == d->cap) {
			d->cap = d->cap ? 2 * d->cap : 64;
			d->occs = xd_reallocarray(d->occs, d->cap, sizeof(*d->occs));
		}
		if (d->nocc > base && d->occs[d->nocc - 1].f->number > f->number)
			sorted = false;
		d->occs[d->nocc++] = (struct occ){f, w, seq++};
	}
	if (r < 0) {
		dec_fail(d, "malformed protobuf data");
		goto out;
	}
	end_occ = d->nocc;
	/* The transcoder writes fields in order; others may not. */
	if (!sorted)
		qsort(d->occs + base, end_occ - base, sizeof(*d->occs), cmp_occ);
	for (size_t i = base; i < end_occ && !d->failed;) {
		const struct xd_fielddesc *f = d->occs[i].f;
		size_t n = 1, old;
		json_t *j;

		while (i + n < end_occ && d->occs[i + n].f == f)
			n++;
		/* Of the members of a oneof, the last on the wire wins. */
		if (f->oneof >= 0 && !last_of_oneof(d, base, end_occ, i + n - 1)) {
			i += n;
			continue;
		}
		if (!(f->flags & (XD_F_REPEATED | XD_F_PRESENCE)) &&
		    is_default(&d->occs[i + n - 1].w)) {
			i += n;
			continue;
		}
		old = path_push(d, f, -1);
		j = field_json(d, i, n);
		/* nested messages pushed their fields after end_occ and took
		 * them back: i..end_occ still index this message's */
		XD_ASSERT_INFO(d->nocc == end_occ, "%s field %u", m->full_name,
			       f->number);
		d->path.len = old;
		/* An empty packed run is on the wire but holds nothing: no
		 * field, as for any empty list. */
		if (j != NULL && (f->flags & XD_F_REPEATED) &&
		    (json_is_array(j) ? json_array_size(j) :
					json_object_size(j)) == 0) {
			json_decref(j);
			i += n;
			continue;
		}
		if (j != NULL &&
		    json_object_set_new_nocheck(obj,
						d->flags & XD_PBJSON_CAMEL ?
							f->json_name :
							f->name,
						j) != 0)
			dec_fail(d, "cannot build JSON");
		i += n;
	}
out:
	d->nocc = base;
	return d->failed ? -1 : 0;
}

/* ---- the well-known types ---- */

/* The last value of field `number` (a scalar or a string). */
static bool last_field(const uint8_t *p, size_t len, uint32_t number,
		       uint8_t wt, struct xd_wire_field *out, int *bad)
{
	const uint8_t *end = p + len;
	struct xd_wire_field w;
	bool found = false;
	int r;

	while ((r = xd_wire_next(&p, end, &w)) == 1)
		if (w.number == number && w.wt == wt) {
			*out = w;
			found = true;
		}
	if (r < 0)
		*bad = 1;
	return found;
}

/* {"@type": url, fields...}, or {"@type": url, "value": json} when the
 * packed type is itself well-known. */
static json_t *dec_any(struct dec *d, const uint8_t *p, size_t len)
{
	struct xd_wire_field url = {0}, val = {0};
	const struct xd_msgdesc *t;
	int bad = 0;
	json_t *obj, *v;

	last_field(p, len, 1, XD_WT_LEN, &url, &bad);
	last_field(p, len, 2, XD_WT_LEN, &val, &bad);
	if (bad) {
		dec_fail(d, "malformed google.protobuf.Any");
		return NULL;
	}
	obj = json_object();
	if (url.len == 0 && val.len == 0)
		return obj;
	t = xd_schema_find_type_url(d->s, (const char *)url.data, url.len);
	if (t == NULL) {
		dec_fail(d, "google.protobuf.Any of unknown type '%.*s'",
			 (int)(url.len > 200 ? 200 : url.len), (const char *)url.data);
		json_decref(obj);
		return NULL;
	}
	json_object_set_new(obj, "@type",
			    json_stringn((const char *)url.data, url.len));
	if (t->wkt == XD_WKT_NONE || t->wkt == XD_WKT_EMPTY) {
		if (d->depth >= MAX_DEPTH) {
			dec_fail(d, "nesting deeper than %d levels", MAX_DEPTH);
		} else {
			d->depth++;
			dec_fields(d, t, val.data, val.len, obj);
			d->depth--;
		}
	} else {
		v = dec_msg(d, t, val.data, val.len);
		if (v != NULL)
			json_object_set_new(obj, "value", v);
	}
	if (d->failed) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* google.protobuf.Value as the plain JSON value it holds. */
static json_t *dec_value(struct dec *d, const uint8_t *p, size_t len)
{
	const struct xd_msgdesc *vm = xd_schema_wkt(d->s, XD_WKT_VALUE);
	const uint8_t *end = p + len;
	struct xd_wire_field w, kind = {0};
	const struct xd_fielddesc *f, *kf = NULL;
	double v;
	int r;

	/* A oneof: the last member on the wire wins. */
	while ((r = xd_wire_next(&p, end, &w)) == 1) {
		f = xd_schema_field_by_number(vm, w.number);
		if (f != NULL && wire_ok(f, &w)) {
			kind = w;
			kf = f;
		}
	}
	if (r < 0) {
		dec_fail(d, "malformed google.protobuf.Value");
		return NULL;
	}
	if (kf == NULL) {
		dec_fail(d, "google.protobuf.Value with no value set");
		return NULL;
	}
	switch (kf->number) {
	case 1:
		return json_null();
	case 2:
		memcpy(&v, &kind.v, 8);
		if (!isfinite(v)) {
			dec_fail(d, "google.protobuf.Value holds %s, which JSON cannot carry",
				 isnan(v) ? "NaN" : "an infinity");
			return NULL;
		}
		/* Whole numbers print as integers; -0 stays a real. */
		if (v == floor(v) && fabs(v) < 9007199254740992.0 &&
		    !(v == 0 && signbit(v)))
			return json_integer((json_int_t)v);
		return json_real(v);
	default:
		return field_value(d, kf, &kind);
	}
}

static json_t *dec_secs_nanos(struct dec *d, const struct xd_msgdesc *m,
			      const uint8_t *p, size_t len)
{
	struct xd_wire_field s = {0}, n = {0};
	char buf[64];
	int bad = 0, r;

	last_field(p, len, 1, XD_WT_VARINT, &s, &bad);
	last_field(p, len, 2, XD_WT_VARINT, &n, &bad);
	if (bad) {
		dec_fail(d, "malformed %s", m->full_name);
		return NULL;
	}
	if (m->wkt == XD_WKT_DURATION)
		r = xd_scalar_duration_format((int64_t)s.v, (int32_t)n.v, buf);
	else
		r = xd_scalar_timestamp_format((int64_t)s.v, (int32_t)n.v, buf);
	if (r != 0) {
		dec_fail(d, "%s out of range (seconds %" PRId64 ", nanos %d)",
			 m->full_name, (int64_t)s.v, (int32_t)n.v);
		return NULL;
	}
	return json_string(buf);
}

static json_t *dec_field_mask(struct dec *d, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	struct xd_buf out = XD_BUF_INIT;
	struct xd_wire_field w;
	bool first = true;
	json_t *j;
	int r;

	while ((r = xd_wire_next(&p, end, &w)) == 1) {
		if (w.number != 1 || w.wt != XD_WT_LEN)
			continue;
		if (!first)
			xd_buf_putc(&out, ',');
		first = false;
		if (xd_scalar_fieldmask_format((const char *)w.data, w.len,
					       &out) != 0 ||
		    !xd_scalar_utf8_valid((const char *)w.data, w.len)) {
			dec_fail(d, "FieldMask path '%.*s' has no JSON form",
				 (int)(w.len > 100 ? 100 : w.len), (const char *)w.data);
			xd_buf_free(&out);
			return NULL;
		}
	}
	if (r < 0) {
		dec_fail(d, "malformed google.protobuf.FieldMask");
		xd_buf_free(&out);
		return NULL;
	}
	j = json_stringn(out.len ? (const char *)out.data : "", out.len);
	xd_buf_free(&out);
	return j;
}

/* A well-known type's JSON form. */
static json_t *dec_wkt(struct dec *d, const struct xd_msgdesc *m,
		       const uint8_t *p, size_t len)
{
	struct xd_wire_field w = {0};
	const struct xd_fielddesc *f;
	json_t *j;
	int bad = 0;

	switch (m->wkt) {
	case XD_WKT_ANY:
		return dec_any(d, p, len);
	case XD_WKT_DURATION:
	case XD_WKT_TIMESTAMP:
		return dec_secs_nanos(d, m, p, len);
	case XD_WKT_VALUE:
		return dec_value(d, p, len);
	case XD_WKT_FIELD_MASK:
		return dec_field_mask(d, p, len);
	case XD_WKT_STRUCT:
	case XD_WKT_LIST_VALUE:
		/* An object or array of field 1's entries or values. */
		j = json_object();
		if (dec_fields(d, m, p, len, j) != 0) {
			json_decref(j);
			return NULL;
		}
		{
			json_t *inner = json_object_get(j, m->fields[0].name);

			if (inner == NULL)
				inner = m->wkt == XD_WKT_STRUCT ? json_object() :
								  json_array();
			else
				json_incref(inner);
			json_decref(j);
			return inner;
		}
	default:
		/* Wrappers: the bare value of field 1, default when absent. */
		f = &m->fields[0];
		if (!last_field(p, len, 1, xd_schema_wiretype(f->type), &w, &bad)) {
			w.data = NULL;
			w.len = 0;
			w.v = 0;
		}
		if (bad) {
			dec_fail(d, "malformed %s", m->full_name);
			return NULL;
		}
		return scalar_json(d, f, w.v, w.data, w.len);
	}
}

/* A message's JSON (depth-checked); p may be NULL when len is 0. */
static json_t *dec_msg(struct dec *d, const struct xd_msgdesc *m,
		       const uint8_t *p, size_t len)
{
	static const uint8_t none[1];
	json_t *j;

	/* Absent values (an empty Any, a map entry without a value) come
	 * as NULL; no arithmetic on NULL below. */
	if (p == NULL)
		p = none;
	if (d->failed)
		return NULL;
	if (d->depth >= MAX_DEPTH) {
		dec_fail(d, "nesting deeper than %d levels", MAX_DEPTH);
		return NULL;
	}
	d->depth++;
	if (m->wkt != XD_WKT_NONE && m->wkt != XD_WKT_EMPTY) {
		j = dec_wkt(d, m, p, len);
	} else {
		j = json_object();
		if (dec_fields(d, m, p, len, j) != 0) {
			json_decref(j);
			j = NULL;
		}
	}
	d->depth--;
	return j;
}

json_t *xd_pbjson_print(const struct xd_schema *s, const struct xd_msgdesc *m,
			const uint8_t *data, size_t len, unsigned flags,
			struct xd_diag *diag)
{
	struct dec d = {.s = s, .flags = flags, .diag = diag, .root = m};
	json_t *j;

	j = dec_msg(&d, m, data, len);
	XD_ASSERT_INFO(d.depth == 0 && d.nocc == 0 && d.path.len == 0, "%s",
		       m->full_name);
	if (d.failed && j != NULL) {
		json_decref(j);
		j = NULL;
	}
	free(d.occs);
	xd_buf_free(&d.path);
	return j;
}
