/* SPDX-License-Identifier: Apache-2.0 */
/* The walker (schema.h): values at a dotted field path in encoded
 * bytes, found with the public lookups. */
#include "schema/schema.h"

#include <string.h>

#include "wire/wire.h"
#include "util/xalloc.h"

struct comp {
	const char *name;
	size_t len;
	const char *cond; /* "name[cond]": only elements that have `cond` */
	size_t cond_len;
};

struct walk {
	const struct xd_schema *s;
	struct comp comps[XD_SCHEMA_WALK_MAX_COMPONENTS];
	size_t ncomps;
	xd_schema_walk_fn visit;
	void *arg;
};

/* Elements of a packed run, one visit each. */
static int visit_packed(struct walk *w, const struct xd_fielddesc *f,
			const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	int n = 0;

	while (p < end) {
		const uint8_t *start = p;
		uint64_t v;

		if (f->type == XD_T_FIXED32 || f->type == XD_T_SFIXED32 ||
		    f->type == XD_T_FLOAT || f->type == XD_T_FIXED64 ||
		    f->type == XD_T_SFIXED64 || f->type == XD_T_DOUBLE) {
			size_t k = f->type == XD_T_FIXED32 ||
						   f->type == XD_T_SFIXED32 ||
						   f->type == XD_T_FLOAT ?
					   4 :
					   8;

			if ((size_t)(end - p) < k)
				return -1;
			p += k;
		} else if (xd_wire_get_varint(&p, end, &v) != 0) {
			return -1;
		}
		w->visit(start, (size_t)(p - start), w->arg);
		n++;
	}
	return n;
}

static int walk(struct walk *w, const struct xd_msgdesc *m, const uint8_t *p,
		size_t len, size_t i, bool after_any);

/* Enters an Any through its type URL; 0 when its type is unknown. */
static int walk_any(struct walk *w, const uint8_t *p, size_t len, size_t i)
{
	const uint8_t *end = p + len;
	struct xd_wire_field f, url = {0}, val = {0};
	const struct xd_msgdesc *t;
	int r;

	while ((r = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == 1 && f.wt == XD_WT_LEN)
			url = f;
		else if (f.number == 2 && f.wt == XD_WT_LEN)
			val = f;
	}
	if (r < 0)
		return -1;
	t = xd_schema_find_type_url(w->s, (const char *)url.data, url.len);
	if (t == NULL)
		return 0;
	return walk(w, t, val.data, val.len, i, true);
}

/* Whether the encoded message `p` has field `f` at least once. */
static bool has_field(const struct xd_fielddesc *f, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	struct xd_wire_field fw;

	while (xd_wire_next(&p, end, &fw) == 1)
		if (fw.number == f->number)
			return true;
	return false;
}

static int walk(struct walk *w, const struct xd_msgdesc *m, const uint8_t *p,
		size_t len, size_t i, bool after_any)
{
	static const uint8_t none[1];
	const struct xd_fielddesc *f, *cond = NULL;
	const uint8_t *end;

	if (p == NULL) /* an Any without a value */
		p = none;
	end = p + len;
	struct xd_wire_field fw;
	bool last;
	int total = 0, r;

	/* one level per component: however the bytes nest, the recursion
	 * ends with the path */
	XD_ASSERT_INFO(i < w->ncomps, "%s: component %zu of %zu",
		       m->full_name, i, w->ncomps);
	last = i + 1 == w->ncomps;

	f = xd_schema_field_by_name(m, w->comps[i].name, w->comps[i].len);
	if (f == NULL)
		return after_any ? 0 : -1; /* another type in the Any */
	if (!last && f->type != XD_T_MESSAGE)
		return -1;
	/* message fields are linked to their type at load */
	XD_ASSERT_INFO(last || f->msg != NULL, "%s.%s", m->full_name, f->name);
	if (w->comps[i].cond != NULL) {
		/* a field of the element's own type, never through an Any */
		if (f->type != XD_T_MESSAGE || f->msg->wkt == XD_WKT_ANY)
			return -1;
		cond = xd_schema_field_by_name(f->msg, w->comps[i].cond,
					       w->comps[i].cond_len);
		if (cond == NULL)
			return -1;
	}
	while ((r = xd_wire_next(&p, end, &fw)) == 1) {
		int n;

		if (fw.number != f->number)
			continue;
		if (cond != NULL &&
		    (fw.wt != XD_WT_LEN || !has_field(cond, fw.data, fw.len)))
			continue;
		if (last && fw.wt == XD_WT_LEN && xd_schema_packable(f->type))
			n = visit_packed(w, f, fw.data, fw.len);
		else if (last) {
			w->visit(fw.data, fw.len, w->arg);
			n = 1;
		} else if (fw.wt != XD_WT_LEN) {
			n = -1;
		} else if (f->msg->wkt == XD_WKT_ANY) {
			n = walk_any(w, fw.data, fw.len, i + 1);
		} else {
			n = walk(w, f->msg, fw.data, fw.len, i + 1, after_any);
		}
		if (n < 0)
			return -1;
		total += n;
	}
	return r < 0 ? -1 : total;
}

int xd_schema_walk(const struct xd_schema *s, const struct xd_msgdesc *m,
		   const uint8_t *data, size_t len, const char *path,
		   xd_schema_walk_fn visit, void *arg)
{
	struct walk w = {.s = s, .visit = visit, .arg = arg};
	const char *p = path;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		const char *open = memchr(p, '[', n);
		struct comp c = {p, n, NULL, 0};

		if (open != NULL) {
			/* "name[cond]", the condition not empty */
			if (p[n - 1] != ']' || open + 2 >= p + n)
				return -1;
			c.len = (size_t)(open - p);
			c.cond = open + 1;
			c.cond_len = n - c.len - 2;
		}
		if (c.len == 0 || w.ncomps == XD_SCHEMA_WALK_MAX_COMPONENTS)
			return -1;
		w.comps[w.ncomps++] = c;
		if (dot == NULL)
			break;
		p = dot + 1;
	}
	return walk(&w, m, data, len, 0, false);
}
