/* Messages, their fields, repeated fields and maps, and the entry point.
 * Scalars are in encode_scalar.c, well-known types in encode_wkt.c, the
 * path and errors in encode_err.c. */
#include "schema/encode.h"

#include <stdlib.h>
#include <string.h>

#include "schema/scalar.h"
#include "schema/wire.h"
#include "util/buf.h"

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
	memset(e, 0, sizeof(*e));
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
		if (xd_doc_is_null(item) && !xd_enc_null_is_value(e, f))
			xd_enc_err(e, item, "null is not allowed in a list");
		else if (!(f->flags & XD_F_PACKED))
			xd_enc_single(e, f, item, true);
		else if (xd_enc_number(e, f, item, &v) == 0)
			xd_enc_put_number(e->out, f->type, v);
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
			if (xd_doc_is_null(k.val) && !xd_enc_null_is_value(e, vf)) {
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
	if (xd_doc_is_null(n) && !xd_enc_null_is_value(e, f))
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

		xd_enc_push_field(e, x.key);
		enc_field(e, x.f, x.val);
		e->nsegs--;
	}
	e->nents = base;
}

/* ---- entry ---- */

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
	xd_enc_report(e, root, file, path, diag);
	out->len = start;
	return -1;
}
