/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/restext.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "schema/pbjson.h"
#include "util/diag.h"
#include "util/jsonw.h"
#include "util/xalloc.h"

/* Nesting the printer allows (pbjson.h), plus the annotations' own. */
#define DEPTH_MAX 80
/* Default values shown in one resource's text, at most (the rest are
 * left out, as the bytes leave them). */
#define MARKS_MAX 512

/* The values put in a text for a field left at its default (a wrapper
 * object each, known by its address): printed as the value and
 * " (default)". */
struct marks {
	json_t *v[MARKS_MAX];
	size_t n;
};

static bool marked(const struct marks *mk, const json_t *v)
{
	for (size_t i = 0; mk != NULL && i < mk->n; i++)
		if (mk->v[i] == v)
			return true;
	return false;
}

static void indent(struct xd_buf *out, int n)
{
	for (int i = 0; i < n; i++)
		xd_buf_putc(out, ' ');
}

/* A plain scalar YAML reads back as the same string: letters, digits
 * and a few marks, not starting with a mark, and not a word YAML gives
 * another meaning. Anything else is quoted, JSON-style (YAML reads
 * that too). */
static bool plain(const char *s, size_t len)
{
	static const char *const words[] = {"true", "false", "null", "yes",
					    "no", "on", "off", "~"};

	if (len == 0 || !isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && strchr("_-./", s[i]) == NULL)
			return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == len && strncasecmp(s, words[i], len) == 0)
			return false;
	return true;
}

static void scalar(struct xd_buf *out, json_t *v)
{
	char num[64];
	const char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		s = json_string_value(v);
		if (plain(s, json_string_length(v))) {
			xd_buf_append(out, s, json_string_length(v));
		} else {
			xd_buf_putc(out, '"');
			xd_json_escape(out, s, json_string_length(v));
			xd_buf_putc(out, '"');
		}
		return;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		break;
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		break;
	case JSON_TRUE:
		snprintf(num, sizeof(num), "true");
		break;
	case JSON_FALSE:
		snprintf(num, sizeof(num), "false");
		break;
	default:
		snprintf(num, sizeof(num), "null");
		break;
	}
	xd_buf_printf(out, "%s", num);
}

static bool container(const struct marks *mk, json_t *v)
{
	return !marked(mk, v) &&
	       ((json_is_object(v) && json_object_size(v) > 0) ||
		(json_is_array(v) && json_array_size(v) > 0));
}

static void value(struct xd_buf *out, const struct marks *mk, json_t *v,
		  int col, int depth);

/* The members of an object at column `col`; the first one's key is
 * already placed (after "- " in a list) when `first_placed`. */
static void members(struct xd_buf *out, const struct marks *mk, json_t *obj,
		    int col, bool first_placed, int depth)
{
	const char *k;
	json_t *v;
	bool first = true;

	json_object_foreach(obj, k, v) {
		if (!(first && first_placed))
			indent(out, col);
		first = false;
		if (plain(k, strlen(k))) {
			xd_buf_printf(out, "%s:", k);
		} else {
			xd_buf_putc(out, '"');
			xd_json_escape(out, k, strlen(k));
			xd_buf_printf(out, "\":");
		}
		if (container(mk, v)) {
			xd_buf_putc(out, '\n');
			value(out, mk, v, col + 2, depth + 1);
		} else {
			xd_buf_putc(out, ' ');
			value(out, mk, v, col, depth + 1);
		}
	}
}

/* `v` at column `col`: a container on lines of its own, a scalar (or
 * an empty container) on the current line. */
static void value(struct xd_buf *out, const struct marks *mk, json_t *v,
		  int col, int depth)
{
	size_t i;
	json_t *item;

	XD_ASSERT_INFO(depth < DEPTH_MAX, "resource text at depth %d", depth);
	if (marked(mk, v)) {
		scalar(out, json_object_get(v, "default"));
		xd_buf_printf(out, " (default)\n");
		return;
	}
	if (json_is_object(v) && json_object_size(v) > 0) {
		members(out, mk, v, col, false, depth);
		return;
	}
	if (json_is_array(v) && json_array_size(v) > 0) {
		json_array_foreach(v, i, item) {
			indent(out, col);
			xd_buf_printf(out, "- ");
			if (json_is_object(item) && json_object_size(item) > 0)
				members(out, mk, item, col + 2, true, depth + 1);
			else if (container(mk, item)) {
				xd_buf_putc(out, '\n');
				value(out, mk, item, col + 2, depth + 1);
			} else {
				value(out, mk, item, col + 2, depth + 1);
			}
		}
		return;
	}
	if (json_is_object(v))
		xd_buf_printf(out, "{}\n");
	else if (json_is_array(v))
		xd_buf_printf(out, "[]\n");
	else {
		scalar(out, v);
		xd_buf_putc(out, '\n');
	}
}

/* ---------------- defaults beside what the other side sets ---------------- */

/* A field proto3 leaves out of the bytes when it holds its default: a
 * singular scalar of a proto3 message, in no oneof, without
 * `optional`. */
static bool implicit_default(const struct xd_msgdesc *m,
			     const struct xd_fielddesc *f)
{
	return m->proto3 && f != NULL &&
	       !(f->flags & (XD_F_REPEATED | XD_F_PRESENCE | XD_F_OPTIONAL |
			     XD_F_MAP)) &&
	       f->oneof < 0 && f->type != XD_T_MESSAGE && f->type != XD_T_GROUP;
}

/* The default of such a field as the printer writes its values. */
static json_t *default_of(const struct xd_fielddesc *f)
{
	const struct xd_enumval *ev;

	switch (f->type) {
	case XD_T_ENUM:
		ev = f->en != NULL ? xd_schema_enum_by_number(f->en, 0) : NULL;
		return ev != NULL ? json_string(ev->name) : json_integer(0);
	case XD_T_BOOL:
		return json_false();
	case XD_T_STRING:
	case XD_T_BYTES:
		return json_string("");
	default:
		return json_integer(0);
	}
}

static uint32_t number_of(const struct xd_msgdesc *m, const char *key)
{
	const struct xd_fielddesc *f = xd_schema_field_by_name(m, key, strlen(key));

	return f != NULL ? f->number : 0; /* "@type" and the like first */
}

/* Puts `v` (taken) under f's name in `obj`, among its keys in field
 * number order, as the printer wrote them. */
static void put_in_order(const struct xd_msgdesc *m, json_t *obj,
			 const struct xd_fielddesc *f, json_t *v)
{
	json_t *after = json_object();
	const char *k;
	void *tmp;
	json_t *x;

	/* the keys after its place go out, and back in after it */
	json_object_foreach_safe(obj, tmp, k, x) {
		if (number_of(m, k) > f->number) {
			json_object_set(after, k, x);
			json_object_del(obj, k);
		}
	}
	json_object_set_new(obj, f->name, v);
	json_object_update(obj, after);
	json_decref(after);
}

static void fill_defaults(const struct xd_schema *s, const struct xd_msgdesc *m,
			  json_t *x, json_t *y, struct marks *mk, int depth);

/* Values of message type `m` on both sides: into them, when they are
 * messages the printer wrote as objects of their fields (an Any of the
 * same type on both sides included). */
static void descend(const struct xd_schema *s, const struct xd_msgdesc *m,
		    json_t *x, json_t *y, struct marks *mk, int depth)
{
	if (m == NULL || !json_is_object(x) || !json_is_object(y))
		return;
	if (m->wkt == XD_WKT_ANY) {
		const char *tx = json_string_value(json_object_get(x, "@type"));
		const char *ty = json_string_value(json_object_get(y, "@type"));

		if (tx == NULL || ty == NULL || strcmp(tx, ty) != 0)
			return;
		m = xd_schema_find_type_url(s, tx, strlen(tx));
		if (m == NULL)
			return;
	}
	if (m->wkt == XD_WKT_NONE)
		fill_defaults(s, m, x, y, mk, depth + 1);
}

/* Where one side of a message sets a field that the other leaves at its
 * default, the other shows the default, marked; fields both set are
 * compared inside (messages, and the items of lists of them, item by
 * item). Maps are left as they are. */
static void fill_defaults(const struct xd_schema *s, const struct xd_msgdesc *m,
			  json_t *x, json_t *y, struct marks *mk, int depth)
{
	json_t *sides[2] = {x, y};
	const char *k;
	json_t *v;

	if (depth >= DEPTH_MAX / 2)
		return;
	for (int side = 0; side < 2; side++) {
		json_t *has = sides[side], *lacks = sides[1 - side];

		json_object_foreach(has, k, v) {
			const struct xd_fielddesc *f =
				xd_schema_field_by_name(m, k, strlen(k));
			json_t *w;

			if (!implicit_default(m, f) || marked(mk, v) ||
			    json_object_get(lacks, k) != NULL || mk->n == MARKS_MAX)
				continue;
			w = json_pack("{s:o}", "default", default_of(f));
			mk->v[mk->n++] = w;
			put_in_order(m, lacks, f, w);
		}
	}
	json_object_foreach(x, k, v) {
		const struct xd_fielddesc *f = xd_schema_field_by_name(m, k, strlen(k));
		json_t *w = json_object_get(y, k);

		if (f == NULL || w == NULL || f->type != XD_T_MESSAGE ||
		    (f->flags & XD_F_MAP))
			continue;
		if (!(f->flags & XD_F_REPEATED))
			descend(s, f->msg, v, w, mk, depth);
		else if (json_is_array(v) && json_is_array(w))
			for (size_t i = 0; i < json_array_size(v) && i < json_array_size(w); i++)
				descend(s, f->msg, json_array_get(v, i),
					json_array_get(w, i), mk, depth);
	}
}

/* ---------------- the text ---------------- */

/* The resource's fields as JSON, or NULL with why in `diag`. */
static json_t *body_of(const struct xd_schema *s, int t, const struct xd_entry *e,
		       struct xd_diag *diag)
{
	const struct xd_msgdesc *m =
		xd_schema_find_message(s, xd_section(t).message);

	if (m == NULL) {
		xd_diag_add(diag, "no such message");
		return NULL;
	}
	return xd_pbjson_print(s, m, e->msg.data, e->msg.len, 0, diag);
}

/* The text of `e` with `body` (its fields, NULL: not printable, why in
 * `diag`; defaults marked in `mk`). */
static void render(struct xd_buf *out, int t, const struct xd_entry *e,
		   json_t *body, const struct marks *mk,
		   const struct xd_diag *diag)
{
	if (e->restricted) {
		xd_buf_printf(out, "\"@allow\":%s\n", e->nallow ? "" : " []");
		for (uint32_t i = 0; i < e->nallow; i++) {
			xd_buf_printf(out, "- \"");
			xd_json_escape(out, e->allow[i], strlen(e->allow[i]));
			xd_buf_printf(out, "\"\n");
		}
	}
	if (e->ttl != NULL)
		xd_buf_printf(out, "\"@ttl\": %" PRIu32 "ms\n", e->ttl->ms);
	if (xd_section(t).secret) {
		/* its version still says whether it changed */
		xd_buf_printf(out, "# secret: content not shown (version %s)\n",
			      e->version);
		return;
	}
	if (body == NULL)
		/* checked at load: shown rather than hidden if it happens */
		xd_buf_printf(out, "# cannot print: %s\n",
			      diag->count > 0 ? diag->msgs[0] : "no such message");
	else
		value(out, mk, body, 0, 0);
}

void xd_restext(struct xd_buf *out, const struct xd_schema *s, int t,
		const struct xd_entry *e)
{
	struct xd_diag diag = XD_DIAG_INIT;
	json_t *body = xd_section(t).secret ? NULL : body_of(s, t, e, &diag);

	render(out, t, e, body, NULL, &diag);
	json_decref(body);
	xd_diag_clear(&diag);
}

void xd_restext_pair(struct xd_buf *out_a, struct xd_buf *out_b,
		     const struct xd_schema *s, int t, const struct xd_entry *a,
		     const struct xd_entry *b)
{
	struct xd_diag da = XD_DIAG_INIT, db = XD_DIAG_INIT;
	json_t *ja = xd_section(t).secret ? NULL : body_of(s, t, a, &da);
	json_t *jb = xd_section(t).secret ? NULL : body_of(s, t, b, &db);
	struct marks *mk = xd_calloc(1, sizeof(*mk));

	if (ja != NULL && jb != NULL)
		fill_defaults(s, xd_schema_find_message(s, xd_section(t).message),
			      ja, jb, mk, 0);
	render(out_a, t, a, ja, mk, &da);
	render(out_b, t, b, jb, mk, &db);
	json_decref(ja);
	json_decref(jb);
	free(mk);
	xd_diag_clear(&da);
	xd_diag_clear(&db);
}
