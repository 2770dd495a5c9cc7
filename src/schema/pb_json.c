/* Protobuf bytes → JSON: messages, fields, scalars and maps. The
 * well-known types are in pb_json_wkt.c. */
#include "schema/pbjson.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/pbjson_int.h"
#include "schema/scalar.h"

void xd_dec_fail(struct dec *d, const char *fmt, ...)
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
json_t *xd_dec_scalar(struct dec *d, const struct xd_fielddesc *f,
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
			xd_dec_fail(d, "%s: string is not valid UTF-8", f->name);
			json_decref(j);
			return NULL;
		}
		return j;
	case XD_T_BYTES:
		return bytes_json(p, len);
	default:
		xd_dec_fail(d, "%s: field type %s is not supported", f->name,
		     xd_schema_type_name(f->type));
		return NULL;
	}
}

/* One value of field f as it is on the wire (not packed). */
json_t *xd_dec_value(struct dec *d, const struct xd_fielddesc *f,
		     const struct xd_wire_field *w)
{
	if (f->type == XD_T_MESSAGE)
		return xd_dec_msg(d, f->msg, w->data, w->len);
	return xd_dec_scalar(d, f, w->v, w->data, w->len);
}

bool xd_dec_wire_ok(const struct xd_fielddesc *f,
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
		if (json_array_append_new(arr, xd_dec_scalar(d, f, v, NULL, 0)) != 0)
			return -1;
	}
	return 0;
bad:
	xd_dec_fail(d, "%s: malformed packed values", f->name);
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
			xd_dec_fail(d, "map key is not valid UTF-8");
			return -1;
		}
		xd_buf_append(out, w->data, w->len);
		return 0;
	}
	if (kf->type == XD_T_BOOL) {
		xd_buf_printf(out, "%s", w->v ? "true" : "false");
		return 0;
	}
	j = xd_dec_scalar(d, kf, w->v, NULL, 0);
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
		if (e.number == 1 && xd_dec_wire_ok(kf, &e)) {
			kw = e;
			have_k = true;
		} else if (e.number == 2 && xd_dec_wire_ok(vf, &e)) {
			vw = e;
			have_v = true;
		}
	}
	if (r < 0) {
		xd_dec_fail(d, "%s: malformed map entry", f->name);
		return -1;
	}
	if (map_key_text(d, kf, have_k ? &kw : NULL, &key) != 0)
		return -1;
	if (have_v)
		val = xd_dec_value(d, vf, &vw);
	else if (vf->type == XD_T_MESSAGE)
		val = xd_dec_msg(d, vf->msg, NULL, 0);
	else
		val = xd_dec_scalar(d, vf, 0, NULL, 0);
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
			else if (json_array_append_new(j, xd_dec_value(d, f, &w)) != 0)
				xd_dec_fail(d, "cannot build JSON");
			d->path.len = old;
		}
	} else if (f->type == XD_T_MESSAGE && n > 1) {
		/* Parsing the concatenation is protobuf's merge. */
		struct xd_buf all = XD_BUF_INIT;

		for (size_t i = 0; i < n; i++)
			xd_buf_append(&all, d->occs[at + i].w.data,
				      d->occs[at + i].w.len);
		j = xd_dec_msg(d, f->msg, all.data, all.len);
		xd_buf_free(&all);
	} else {
		struct xd_wire_field w = d->occs[at + n - 1].w;

		j = xd_dec_value(d, f, &w);
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
int xd_dec_fields(struct dec *d, const struct xd_msgdesc *m,
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
		if (f == NULL || !xd_dec_wire_ok(f, &w))
			continue;
		if (d->nocc == d->cap) {
			d->cap = d->cap ? 2 * d->cap : 64;
			d->occs = realloc(d->occs, d->cap * sizeof(*d->occs));
			if (d->occs == NULL)
				abort();
		}
		if (d->nocc > base && d->occs[d->nocc - 1].f->number > f->number)
			sorted = false;
		d->occs[d->nocc++] = (struct occ){f, w, seq++};
	}
	if (r < 0) {
		xd_dec_fail(d, "malformed protobuf data");
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
			xd_dec_fail(d, "cannot build JSON");
		i += n;
	}
out:
	d->nocc = base;
	return d->failed ? -1 : 0;
}

json_t *xd_dec_msg(struct dec *d, const struct xd_msgdesc *m,
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
	if (d->depth >= XD_DEC_MAX_DEPTH) {
		xd_dec_fail(d, "nesting deeper than %d levels", XD_DEC_MAX_DEPTH);
		return NULL;
	}
	d->depth++;
	if (m->wkt != XD_WKT_NONE && m->wkt != XD_WKT_EMPTY) {
		j = xd_dec_wkt(d, m, p, len);
	} else {
		j = json_object();
		if (xd_dec_fields(d, m, p, len, j) != 0) {
			json_decref(j);
			j = NULL;
		}
	}
	d->depth--;
	return j;
}

json_t *xd_pb_to_json(const struct xd_schema *s, const struct xd_msgdesc *m,
		      const uint8_t *data, size_t len, unsigned flags,
		      struct xd_diag *diag)
{
	struct dec d = {.s = s, .flags = flags, .diag = diag, .root = m};
	json_t *j;

	j = xd_dec_msg(&d, m, data, len);
	if (d.failed && j != NULL) {
		json_decref(j);
		j = NULL;
	}
	free(d.occs);
	xd_buf_free(&d.path);
	return j;
}
