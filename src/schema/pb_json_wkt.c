/* The well-known types in their JSON forms: Any with "@type", Value,
 * Struct, ListValue, Duration, Timestamp, FieldMask and the wrappers. */
#include "schema/pbjson_int.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "schema/scalar.h"

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

static json_t *dec_any(struct dec *d, const uint8_t *p, size_t len)
{
	struct xd_wire_field url = {0}, val = {0};
	const struct xd_msgdesc *t;
	int bad = 0;
	json_t *obj, *v;

	last_field(p, len, 1, XD_WT_LEN, &url, &bad);
	last_field(p, len, 2, XD_WT_LEN, &val, &bad);
	if (bad) {
		xd_dec_fail(d, "malformed google.protobuf.Any");
		return NULL;
	}
	obj = json_object();
	if (url.len == 0 && val.len == 0)
		return obj;
	t = xd_schema_find_type_url(d->s, (const char *)url.data, url.len);
	if (t == NULL) {
		xd_dec_fail(d, "google.protobuf.Any of unknown type '%.*s'",
		     (int)(url.len > 200 ? 200 : url.len), (const char *)url.data);
		json_decref(obj);
		return NULL;
	}
	json_object_set_new(obj, "@type",
			    json_stringn((const char *)url.data, url.len));
	if (t->wkt == XD_WKT_NONE || t->wkt == XD_WKT_EMPTY) {
		if (d->depth >= XD_DEC_MAX_DEPTH) {
			xd_dec_fail(d, "nesting deeper than %d levels", XD_DEC_MAX_DEPTH);
		} else {
			d->depth++;
			xd_dec_fields(d, t, val.data, val.len, obj);
			d->depth--;
		}
	} else {
		v = xd_dec_msg(d, t, val.data, val.len);
		if (v != NULL)
			json_object_set_new(obj, "value", v);
	}
	if (d->failed) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

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
		if (f != NULL && xd_dec_wire_ok(f, &w)) {
			kind = w;
			kf = f;
		}
	}
	if (r < 0) {
		xd_dec_fail(d, "malformed google.protobuf.Value");
		return NULL;
	}
	if (kf == NULL) {
		xd_dec_fail(d, "google.protobuf.Value with no value set");
		return NULL;
	}
	switch (kf->number) {
	case 1:
		return json_null();
	case 2:
		memcpy(&v, &kind.v, 8);
		if (!isfinite(v)) {
			xd_dec_fail(d, "google.protobuf.Value holds %s, which JSON cannot carry",
			     isnan(v) ? "NaN" : "an infinity");
			return NULL;
		}
		/* Whole numbers print as integers; -0 stays a real. */
		if (v == floor(v) && fabs(v) < 9007199254740992.0 &&
		    !(v == 0 && signbit(v)))
			return json_integer((json_int_t)v);
		return json_real(v);
	default:
		return xd_dec_value(d, kf, &kind);
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
		xd_dec_fail(d, "malformed %s", m->full_name);
		return NULL;
	}
	if (m->wkt == XD_WKT_DURATION)
		r = xd_scalar_duration_format((int64_t)s.v, (int32_t)n.v, buf);
	else
		r = xd_scalar_timestamp_format((int64_t)s.v, (int32_t)n.v, buf);
	if (r != 0) {
		xd_dec_fail(d, "%s out of range (seconds %" PRId64 ", nanos %d)",
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
			xd_dec_fail(d, "FieldMask path '%.*s' has no JSON form",
			     (int)(w.len > 100 ? 100 : w.len), (const char *)w.data);
			xd_buf_free(&out);
			return NULL;
		}
	}
	if (r < 0) {
		xd_dec_fail(d, "malformed google.protobuf.FieldMask");
		xd_buf_free(&out);
		return NULL;
	}
	j = json_stringn(out.len ? (const char *)out.data : "", out.len);
	xd_buf_free(&out);
	return j;
}

json_t *xd_dec_wkt(struct dec *d, const struct xd_msgdesc *m,
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
		if (xd_dec_fields(d, m, p, len, j) != 0) {
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
			xd_dec_fail(d, "malformed %s", m->full_name);
			return NULL;
		}
		return xd_dec_scalar(d, f, w.v, w.data, w.len);
	}
}
