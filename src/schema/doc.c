/* SPDX-License-Identifier: Apache-2.0 */
/* The document tree (doc.h): names of nodes, and trees from jansson
 * values. */
#include "schema/doc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/text.h"

const char *xd_doc_kind_name(const struct xd_dnode *n)
{
	switch (n->kind) {
	case XD_DN_MAP:
		return "a mapping";
	case XD_DN_SEQ:
		return "a list";
	default:
		break;
	}
	switch (n->style) {
	case XD_DS_NULL:
		return "null";
	case XD_DS_NUMBER:
		return "a number";
	case XD_DS_BOOL:
		return "a boolean";
	default:
		return "a string";
	}
}

/* ---- jansson ---- */

struct jconv {
	struct xd_arena *arena;
	struct xd_doc_error *err;
	uint32_t order; /* document order, in place of positions */
};

static int from_json(struct jconv *c, json_t *v, struct xd_dnode *out,
		     unsigned depth)
{
	char num[40];
	size_t i, n;

	memset(out, 0, sizeof(*out));
	out->col = ++c->order;
	if (depth > XD_DOC_MAX_DEPTH) {
		c->err->line = 0;
		c->err->col = out->col;
		snprintf(c->err->msg, sizeof(c->err->msg),
			 "nesting deeper than %d levels", XD_DOC_MAX_DEPTH);
		return -1;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *val;
		void *it;

		n = json_object_size(v);
		out->kind = XD_DN_MAP;
		out->len = (uint32_t)n;
		out->u.kids = xd_arena_alloc(c->arena,
					     (2 * n + 1) * sizeof(*out->u.kids));
		i = 0;
		for (it = json_object_iter(v); it != NULL && i < n;
		     it = json_object_iter_next(v, it), i++) {
			struct xd_dnode *k = &out->u.kids[2 * i];

			key = json_object_iter_key(it);
			val = json_object_iter_value(it);
			memset(k, 0, sizeof(*k));
			k->kind = XD_DN_SCALAR;
			k->style = XD_DS_STRING;
			k->col = ++c->order;
			k->len = (uint32_t)json_object_iter_key_len(it);
			k->u.str = xd_text_copy(c->arena, key, k->len);
			if (from_json(c, val, &out->u.kids[2 * i + 1],
				      depth + 1) != 0)
				return -1;
		}
		out->len = (uint32_t)i;
		return 0;
	}
	case JSON_ARRAY:
		n = json_array_size(v);
		out->kind = XD_DN_SEQ;
		out->len = (uint32_t)n;
		out->u.kids = xd_arena_alloc(c->arena,
					     (n + 1) * sizeof(*out->u.kids));
		for (i = 0; i < n; i++)
			if (from_json(c, json_array_get(v, i), &out->u.kids[i],
				      depth + 1) != 0)
				return -1;
		return 0;
	case JSON_STRING:
		out->style = XD_DS_STRING;
		out->len = (uint32_t)json_string_length(v);
		out->u.str = xd_text_copy(c->arena, json_string_value(v),
					   out->len);
		return 0;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		out->style = XD_DS_NUMBER;
		break;
	case JSON_REAL:
		/* 17 digits give back the same double. */
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		out->style = XD_DS_NUMBER;
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		snprintf(num, sizeof(num), "%s",
			 json_is_true(v) ? "true" : "false");
		out->style = XD_DS_BOOL;
		break;
	default:
		out->style = XD_DS_NULL;
		num[0] = '\0';
		break;
	}
	out->len = (uint32_t)strlen(num);
	out->u.str = xd_text_copy(c->arena, num, out->len);
	return 0;
}

int xd_doc_from_json(struct xd_arena *arena, json_t *v, struct xd_dnode *out,
		     struct xd_doc_error *err)
{
	struct jconv c = {.arena = arena, .err = err};

	return from_json(&c, v, out, 0);
}
