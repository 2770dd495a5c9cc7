/* The well-known types in their JSON forms: Any with "@type", Duration,
 * Timestamp, the wrappers, Struct/Value/ListValue and FieldMask. */
#include "schema/encode.h"

#include <string.h>

#include "schema/scalar.h"
#include "schema/wire.h"

static bool key_is(const struct xd_dnode *k, const char *name)
{
	size_t len = strlen(name);

	return k->kind == XD_DN_SCALAR && k->len == len &&
	       memcmp(k->u.str, name, len) == 0;
}

static const struct xd_dnode *find_key(const struct xd_dnode *map,
				       const char *name, size_t *at)
{
	for (uint32_t i = 0; i < map->len; i++)
		if (key_is(&map->u.kids[2 * i], name)) {
			if (at != NULL)
				*at = i;
			return &map->u.kids[2 * i + 1];
		}
	return NULL;
}

/* {"@type": url, fields...}, or {"@type": url, "value": json} when the
 * packed type is itself well-known (protobuf's JSON mapping). */
static void enc_any(struct xd_encoder *e, const struct xd_dnode *n)
{
	const struct xd_msgdesc *target;
	const struct xd_dnode *t, *v;
	struct xd_buf *out = e->out;
	size_t mark, tat = 0, vat = 0;
	char buf[160];

	if (n->kind != XD_DN_MAP) {
		xd_enc_err(e, n, "expected a mapping with \"@type\" (google.protobuf.Any), not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return;
	}
	t = find_key(n, "@type", &tat);
	if (t == NULL) {
		if (n->len > 0)
			xd_enc_err(e, n, "missing \"@type\" in google.protobuf.Any");
		return; /* {}: an empty Any */
	}
	xd_enc_push_field(e, &n->u.kids[2 * tat]);
	if (!xd_doc_is_text(t)) {
		xd_enc_err(e, t, "expected a type URL string, not %s",
			   xd_enc_show(t, buf, sizeof(buf)));
		e->nsegs--;
		return;
	}
	target = xd_schema_find_type_url(e->s, t->u.str, t->len);
	if (target == NULL) {
		const char *slash = memrchr(t->u.str, '/', t->len);
		const char *name = slash ? slash + 1 : t->u.str;
		const char *hint = xd_schema_suggest_message(
			e->s, name, t->len - (size_t)(name - t->u.str));

		xd_enc_err(e, t, "unknown \"@type\" %s%s%s%s",
			   xd_enc_show(t, buf, sizeof(buf)),
			   hint ? " (did you mean '" : "", hint ? hint : "",
			   hint ? "'?)" : "");
		e->nsegs--;
		return;
	}
	e->nsegs--;
	xd_wire_bytes(out, 1, t->u.str, t->len);
	xd_wire_tag(out, 2, XD_WT_LEN);
	mark = xd_wire_open(out);
	if (target->wkt == XD_WKT_NONE || target->wkt == XD_WKT_EMPTY) {
		if (e->depth >= XD_ENC_MAX_DEPTH)
			xd_enc_err(e, n, "nesting deeper than %d levels",
				   XD_ENC_MAX_DEPTH);
		else {
			e->depth++;
			xd_enc_fields(e, target, n, true);
			e->depth--;
		}
	} else {
		v = find_key(n, "value", &vat);
		for (uint32_t i = 0; i < n->len; i++) {
			const struct xd_dnode *k = &n->u.kids[2 * i];

			if (!key_is(k, "@type") && !key_is(k, "value")) {
				xd_enc_push_field(e, k);
				xd_enc_err(e, k, "unknown field %s in an Any holding %s (only \"@type\" and \"value\")",
					   xd_enc_show(k, buf, sizeof(buf)),
					   target->full_name);
				e->nsegs--;
			}
		}
		if (v == NULL) {
			xd_enc_err(e, n, "missing \"value\" for %s in google.protobuf.Any",
				   target->full_name);
		} else {
			xd_enc_push_field(e, &n->u.kids[2 * vat]);
			xd_enc_submsg(e, target, v);
			e->nsegs--;
		}
	}
	/* Any.value is a proto3 bytes field: empty is not written. */
	if (xd_wire_close(out, mark) == 0)
		out->len = mark - 2;
}

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

static void enc_list_value(struct xd_encoder *e, const struct xd_msgdesc *m,
			   const struct xd_dnode *n)
{
	const struct xd_msgdesc *vm = xd_schema_wkt(e->s, XD_WKT_VALUE);
	char buf[160];

	if (n->kind != XD_DN_SEQ) {
		xd_enc_err(e, n, "expected a list for %s, not %s", m->full_name,
			   xd_enc_show(n, buf, sizeof(buf)));
		return;
	}
	for (uint32_t i = 0; i < n->len && !e->stopped; i++) {
		size_t mark;

		xd_enc_push_index(e, i);
		xd_wire_tag(e->out, 1, XD_WT_LEN);
		mark = xd_wire_open(e->out);
		xd_enc_submsg(e, vm, &n->u.kids[i]);
		xd_wire_close(e->out, mark);
		e->nsegs--;
	}
}

/* google.protobuf.Value: any JSON value. YAML plain scalars take the
 * type YAML gives them (null, boolean, number, else string). */
static void enc_value(struct xd_encoder *e, const struct xd_dnode *n)
{
	struct xd_buf *out = e->out;
	size_t mark;
	double d = 0;
	bool b = false;
	uint64_t bits;

	if (n->kind != XD_DN_SCALAR) {
		bool is_map = n->kind == XD_DN_MAP;

		xd_wire_tag(out, is_map ? 5 : 6, XD_WT_LEN);
		mark = xd_wire_open(out);
		xd_enc_submsg(e,
			      xd_schema_wkt(e->s, is_map ? XD_WKT_STRUCT :
							   XD_WKT_LIST_VALUE),
			      n);
		xd_wire_close(out, mark);
		return;
	}
	switch (n->style) {
	case XD_DS_NULL:
		xd_wire_tag(out, 1, XD_WT_VARINT);
		xd_buf_putc(out, 0);
		return;
	case XD_DS_BOOL:
		xd_scalar_bool(n->u.str, n->len, &b);
		break;
	case XD_DS_NUMBER:
		if (xd_scalar_double(n->u.str, n->len, &d) != XD_NUM_OK) {
			char buf[160];

			xd_enc_err(e, n, "%s is out of range for double",
				   xd_enc_raw(n, buf, sizeof(buf)));
			return;
		}
		goto number;
	case XD_DS_PLAIN:
		switch (xd_scalar_plain(n->u.str, n->len, &b, &d)) {
		case XD_PLAIN_BOOL:
			break;
		case XD_PLAIN_NUMBER:
			goto number;
		default:
			goto string;
		}
		break;
	default:
		goto string;
	}
	xd_wire_tag(out, 4, XD_WT_VARINT);
	xd_buf_putc(out, b);
	return;
number:
	memcpy(&bits, &d, 8);
	xd_wire_tag(out, 2, XD_WT_I64);
	xd_wire_fixed64(out, bits);
	return;
string:
	if (xd_enc_check_string(e, n) == 0)
		xd_wire_bytes(out, 3, n->u.str, n->len);
}

void xd_enc_wkt(struct xd_encoder *e, const struct xd_msgdesc *m,
		const struct xd_dnode *n)
{
	switch (m->wkt) {
	case XD_WKT_ANY:
		enc_any(e, n);
		break;
	case XD_WKT_DURATION:
		enc_duration(e, n);
		break;
	case XD_WKT_TIMESTAMP:
		enc_timestamp(e, n);
		break;
	case XD_WKT_STRUCT:
		xd_enc_map(e, &m->fields[0], n);
		break;
	case XD_WKT_VALUE:
		enc_value(e, n);
		break;
	case XD_WKT_LIST_VALUE:
		enc_list_value(e, m, n);
		break;
	case XD_WKT_FIELD_MASK:
		enc_field_mask(e, n);
		break;
	default:
		/* The wrappers: the bare value of field 1, which (proto3,
		 * no presence) is omitted when it is the default. */
		xd_enc_single(e, &m->fields[0], n, false);
		break;
	}
}
