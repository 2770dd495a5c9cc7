/* SPDX-License-Identifier: Apache-2.0 */
/* Messages, their fields, lists and maps, and the well-known types that
 * hold other values (Any, Struct, Value, ListValue, the wrappers): the
 * recursive half of the encoder, with its entry point. Values read from
 * one scalar are encode_scalar.c's, a resource's annotations
 * encode_ann.c's, the path and the errors encode_err.c's; none of them
 * calls back here. */
#include "schema/encode.h"

#include <stdlib.h>
#include <string.h>

#include "schema/scalar.h"
#include "wire/wire.h"
#include "util/buf.h"
#include "util/xalloc.h"

struct xd_enc_ent {
	const struct xd_fielddesc *f;
	const struct xd_dnode *key, *val;
};

struct xd_enc_key {
	const struct xd_dnode *key, *val;
	uint64_t num; /* integer and bool keys, for sorting */
};

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
	xd_buf_free(&e->ann);
	xd_buf_free(&e->scratch);
	memset(e, 0, sizeof(*e));
}

/* Whether null means a value here rather than "not set". */
static bool null_is_value(const struct xd_encoder *e,
			  const struct xd_fielddesc *f)
{
	return (f->type == XD_T_MESSAGE && f->msg->wkt == XD_WKT_VALUE) ||
	       (f->type == XD_T_ENUM && f->en == xd_schema_null_value(e->s));
}

/* Messages and the well-known types nest in each other. */
static void enc_submsg(struct xd_encoder *e, const struct xd_msgdesc *m,
		       const struct xd_dnode *n);

/* ---- fields ---- */

/* One value of field f (a singular field or an element of a repeated
 * one); `presence` writes it even when it holds the default. */
static void enc_single(struct xd_encoder *e, const struct xd_fielddesc *f,
		       const struct xd_dnode *n, bool presence)
{
	size_t mark;

	if (f->type != XD_T_MESSAGE) {
		xd_enc_scalar(e, f, n, presence);
		return;
	}
	xd_wire_tag(e->out, f->number, XD_WT_LEN);
	mark = xd_wire_open(e->out);
	/* A wrapper's limits are on the field that holds it. */
	e->wrapper = f->bound_kind != XD_BOUND_NONE ? f : NULL;
	enc_submsg(e, f->msg, n);
	e->wrapper = NULL;
	xd_wire_close(e->out, mark);
}

static void enc_repeated(struct xd_encoder *e, const struct xd_fielddesc *f,
			 const struct xd_dnode *n)
{
	size_t mark = 0;
	char buf[160];

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
		if (xd_doc_is_null(item) && !null_is_value(e, f))
			xd_enc_err(e, item, "null is not allowed in a list");
		else if (!(f->flags & XD_F_PACKED))
			enc_single(e, f, item, true);
		else
			xd_enc_packed(e, f, item);
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
static void enc_map(struct xd_encoder *e, const struct xd_fielddesc *f,
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
			if (xd_doc_is_null(k.val) && !null_is_value(e, vf)) {
				xd_enc_err(e, k.val,
					   "null is not allowed as a map value");
			} else {
				if (e->nkeys == e->keys_cap)
					e->keys = xd_grow(e->keys, &e->keys_cap,
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
				   xd_enc_first_on(e->keys[i - 1].key, where,
					    sizeof(where)));
			e->nsegs--;
			continue;
		}
		xd_wire_tag(e->out, f->number, XD_WT_LEN);
		mark = xd_wire_open(e->out);
		enc_single(e, kf, k.key, true);
		enc_single(e, vf, k.val, true);
		xd_wire_close(e->out, mark);
		e->nsegs--;
	}
	e->nkeys = base;
}

static void enc_field(struct xd_encoder *e, const struct xd_fielddesc *f,
		      const struct xd_dnode *n)
{
	if (xd_doc_is_null(n) && !null_is_value(e, f))
		return; /* null: not set */
	if (f->flags & XD_F_MAP)
		enc_map(e, f, n);
	else if (f->flags & XD_F_REPEATED)
		enc_repeated(e, f, n);
	else
		enc_single(e, f, n, (f->flags & XD_F_PRESENCE) != 0);
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
					   xd_enc_first_on(o->key, where,
						    sizeof(where)));
			else
				xd_enc_err(e, k, "%s sets the same field as %s%s",
					   xd_enc_show(k, buf, sizeof(buf)),
					   xd_enc_show(o->key, other,
						       sizeof(other)),
					   xd_enc_first_on(o->key, where,
						    sizeof(where)));
			return NULL;
		}
		if (f->oneof >= 0 && o->f->oneof == f->oneof &&
		    !xd_doc_is_null(v) && !xd_doc_is_null(o->val)) {
			xd_enc_err(e, k, "%s and %s are both set, but only one member of oneof '%s' may be",
				   xd_enc_show(k, buf, sizeof(buf)),
				   xd_enc_show(o->key, other, sizeof(other)),
				   m->oneofs[f->oneof]);
			return NULL;
		}
	}
	return f;
}

/* Keys of a mapping that are not fields, for enc_fields. */
enum skip {
	SKIP_NONE,
	SKIP_TYPE,        /* "@type": an Any's */
	SKIP_ANNOTATIONS, /* "@...": a resource's, read by encode_ann.c */
};

/* The fields of `map` as message m, but the keys `skip` names. */
static void enc_fields(struct xd_encoder *e, const struct xd_msgdesc *m,
		       const struct xd_dnode *map, enum skip skip)
{
	size_t base = e->nents, end;

	for (uint32_t i = 0; i < map->len && !e->stopped; i++) {
		const struct xd_dnode *k = &map->u.kids[2 * i];
		const struct xd_dnode *v = &map->u.kids[2 * i + 1];
		const struct xd_fielddesc *f;

		if (skip == SKIP_TYPE && k->kind == XD_DN_SCALAR &&
		    k->len == 5 && memcmp(k->u.str, "@type", 5) == 0)
			continue;
		if (skip == SKIP_ANNOTATIONS && xd_enc_is_annotation(k))
			continue;
		xd_enc_push_field(e, k);
		f = resolve_key(e, m, base, k, v);
		e->nsegs--;
		if (f == NULL)
			continue;
		if (e->nents == e->ents_cap)
			e->ents = xd_grow(e->ents, &e->ents_cap, e->nents + 1,
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

		/* number order, each field once (resolve_key): the bytes of
		 * protobuf's deterministic serializer */
		XD_ASSERT_INFO(i == base || e->ents[i - 1].f->number < x.f->number,
			       "%s field %u", m->full_name, x.f->number);
		xd_enc_push_field(e, x.key);
		enc_field(e, x.f, x.val);
		e->nsegs--;
	}
	e->nents = base;
}

/* ---- well-known types holding other values ---- */

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
			enc_fields(e, target, n, SKIP_TYPE);
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
			enc_submsg(e, target, v);
			e->nsegs--;
		}
	}
	/* Any.value is a proto3 bytes field: empty is not written. */
	if (xd_wire_close(out, mark) == 0)
		out->len = mark - 2;
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
		enc_submsg(e, vm, &n->u.kids[i]);
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
		enc_submsg(e,
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

/* The body of a well-known type in its JSON form. */
static void enc_wkt(struct xd_encoder *e, const struct xd_msgdesc *m,
		    const struct xd_dnode *n)
{
	switch (m->wkt) {
	case XD_WKT_ANY:
		enc_any(e, n);
		break;
	case XD_WKT_DURATION:
	case XD_WKT_TIMESTAMP:
	case XD_WKT_FIELD_MASK:
		xd_enc_text_wkt(e, m, n);
		break;
	case XD_WKT_STRUCT:
		enc_map(e, &m->fields[0], n);
		break;
	case XD_WKT_VALUE:
		enc_value(e, n);
		break;
	case XD_WKT_LIST_VALUE:
		enc_list_value(e, m, n);
		break;
	default:
		/* The wrappers: the bare value of field 1, which (proto3,
		 * no presence) is omitted when it is the default. */
		enc_single(e, &m->fields[0], n, false);
		break;
	}
}

/* The body of a message of type m (depth-checked). */
static void enc_submsg(struct xd_encoder *e, const struct xd_msgdesc *m,
		       const struct xd_dnode *n)
{
	if (e->depth >= XD_ENC_MAX_DEPTH) {
		xd_enc_err(e, n, "nesting deeper than %d levels",
			   XD_ENC_MAX_DEPTH);
		return;
	}
	e->depth++;
	if (m->wkt != XD_WKT_NONE && m->wkt != XD_WKT_EMPTY) {
		enc_wkt(e, m, n);
	} else if (n->kind != XD_DN_MAP && xd_enc_locator(e, m, n)) {
		/* its URL form */
	} else if (n->kind != XD_DN_MAP) {
		char buf[160];

		xd_enc_err(e, n, "expected a mapping for %s, not %s",
			   m->full_name, xd_enc_show(n, buf, sizeof(buf)));
	} else {
		/* depth 1: the resource itself, whose mapping may hold
		 * annotations (xd_encoder_run read them) */
		enc_fields(e, m, n,
			   e->hooks != NULL && e->depth == 1 ?
				   SKIP_ANNOTATIONS : SKIP_NONE);
	}
	e->depth--;
}

/* ---- entry ---- */

/* What a hook calls to have an annotation's value encoded as a
 * message (transcode.h): into e->scratch, at depth 1 so that its own
 * mapping is no resource's and has no annotations. Here rather than
 * with the other hook calls (encode_ann.c) because it is the encoder's
 * recursion: encode_ann.c then calls nothing of this file. */
int xd_ann_encode(struct xd_ann_reader *r, const char *full_name,
		  const struct xd_dnode *value, const uint8_t **data,
		  size_t *len)
{
	/* the reader a hook is handed is the encoder itself */
	struct xd_encoder *e = (struct xd_encoder *)r;
	const struct xd_msgdesc *m = xd_schema_find_message(e->s, full_name);
	struct xd_buf *saved = e->out;
	unsigned nerr = e->nerr, depth = e->depth;

	if (m == NULL) {
		xd_enc_err(e, value, "the schema has no %s", full_name);
		return -1;
	}
	/* one value at a time: a hook inside a hook would overwrite the
	 * scratch its caller is reading */
	XD_ASSERT_INFO(e->out != &e->scratch, "%s: %s", e->file, m->full_name);
	e->scratch.len = 0;
	e->out = &e->scratch;
	e->depth = 1;
	enc_submsg(e, m, value);
	e->depth = depth;
	e->out = saved;
	if (e->nerr > nerr)
		return -1;
	*data = e->scratch.data;
	*len = e->scratch.len;
	return 0;
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
	e->ann.len = 0;
	if (e->hooks != NULL)
		xd_enc_annotations(e, root);
	enc_submsg(e, m, root);
	/* every message, path segment, field and map key pushed for the
	 * resource was popped, whatever its errors */
	XD_ASSERT_INFO(e->depth == 0 && e->nsegs == 0 && e->nents == 0 &&
			       e->nkeys == 0,
		       "%s%s%s: depth %u, %u path segments, %zu fields, %zu keys",
		       file, path != NULL && *path ? ": " : "",
		       path != NULL ? path : "", e->depth, e->nsegs, e->nents,
		       e->nkeys);
	if (e->nerr == 0)
		return 0;
	xd_enc_report(e, root, file, path, diag);
	out->len = start;
	return -1;
}
