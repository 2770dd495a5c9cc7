/* SPDX-License-Identifier: Apache-2.0 */
/* YAML into document trees (doc.h): from libyaml's events, or from its
 * documents; anchors, aliases and merge keys. */
#include "schema/doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* ---- merge keys ---- */

/* Merging compares every merged key with every key present; a document
 * that would need more comparisons than this is refused. */
#define MAX_MERGE_WORK (4u << 20)

/* A plain "<<" key. */
static bool is_merge_key(const struct xd_dnode *k)
{
	return k->kind == XD_DN_SCALAR && k->style == XD_DS_PLAIN &&
	       k->len == 2 && k->u.str[0] == '<' && k->u.str[1] == '<';
}

static bool same_key(const struct xd_dnode *a, const struct xd_dnode *b)
{
	return a->kind == XD_DN_SCALAR && b->kind == XD_DN_SCALAR &&
	       a->len == b->len && memcmp(a->u.str, b->u.str, a->len) == 0;
}

static void set_err(struct xd_doc_error *err, const struct xd_dnode *at,
		    const char *msg)
{
	err->line = at->line;
	err->col = at->col;
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
}

/* Applies YAML merge keys ("<<: *base", "<<: [*a, *b]") to a mapping's
 * pairs: keys present win, then the sources in order. Returns 0 (map
 * updated) or -1 (err set). */
static int apply_merge_keys(struct xd_arena *arena, struct xd_dnode *map,
			    struct xd_doc_error *err)
{
	const struct xd_dnode *srcs[64];
	size_t nsrc = 0, total = 0, n = 0;
	uint64_t work = 0;
	struct xd_dnode *out;

	/* The sources, in order of precedence. */
	for (uint32_t i = 0; i < map->len; i++) {
		const struct xd_dnode *k = &map->u.kids[2 * i];
		const struct xd_dnode *v = &map->u.kids[2 * i + 1];

		if (!is_merge_key(k)) {
			total++;
			continue;
		}
		if (v->kind == XD_DN_MAP) {
			if (nsrc == 64)
				goto too_many;
			srcs[nsrc++] = v;
			total += v->len;
			continue;
		}
		if (v->kind != XD_DN_SEQ) {
			set_err(err, v, "a merge key (<<) needs a mapping or a list of mappings");
			return -1;
		}
		for (uint32_t j = 0; j < v->len; j++) {
			if (v->u.kids[j].kind != XD_DN_MAP) {
				set_err(err, &v->u.kids[j],
					"a merge key (<<) needs a mapping or a list of mappings");
				return -1;
			}
			if (nsrc == 64)
				goto too_many;
			srcs[nsrc++] = &v->u.kids[j];
			total += v->u.kids[j].len;
		}
	}
	out = xd_arena_alloc(arena, 2 * total * sizeof(*out) + 1);
	for (uint32_t i = 0; i < map->len; i++)
		if (!is_merge_key(&map->u.kids[2 * i])) {
			out[2 * n] = map->u.kids[2 * i];
			out[2 * n + 1] = map->u.kids[2 * i + 1];
			n++;
		}
	for (size_t s = 0; s < nsrc; s++) {
		for (uint32_t j = 0; j < srcs[s]->len; j++) {
			const struct xd_dnode *k = &srcs[s]->u.kids[2 * j];
			bool present = false;

			work += n;
			if (work > MAX_MERGE_WORK) {
				set_err(err, map, "merge keys (<<) too large to apply");
				return -1;
			}
			for (size_t m = 0; m < n && !present; m++)
				present = same_key(&out[2 * m], k);
			if (!present) {
				/* `out` holds every pair counted in `total` */
				XD_ASSERT_INFO(n < total, "merge at line %u",
					       map->line);
				out[2 * n] = *k;
				out[2 * n + 1] = srcs[s]->u.kids[2 * j + 1];
				n++;
			}
		}
	}
	map->u.kids = out;
	map->len = (uint32_t)n;
	return 0;
too_many:
	set_err(err, map, "more than 64 mappings merged into one");
	return -1;
}

/* ---- libyaml events ---- */

struct xd_doc_frame {
	uint8_t kind; /* XD_DN_MAP or XD_DN_SEQ */
	bool merge;   /* a "<<" key is among the pairs */
	uint32_t line, col;
	size_t base;        /* its first child in b->kids */
	const char *anchor; /* in the arena, or NULL */
	uint64_t weight;    /* nodes below, aliases expanded */
};

struct xd_doc_anchor {
	const char *name; /* NULL: free slot */
	struct xd_dnode node;
	uint64_t weight;
};

void xd_doc_builder_init(struct xd_doc_builder *b, struct xd_arena *arena)
{
	memset(b, 0, sizeof(*b));
	b->arena = arena;
}

void xd_doc_builder_free(struct xd_doc_builder *b)
{
	free(b->stack);
	free(b->kids);
	free(b->anchors);
	memset(b, 0, sizeof(*b));
}

bool xd_doc_builder_has_anchors(const struct xd_doc_builder *b)
{
	return b->nanchors > 0;
}

static int fail_at(struct xd_doc_builder *b, const yaml_mark_t *m,
		   const char *fmt, const char *arg)
{
	b->err.line = (uint32_t)m->line + 1 + b->line0;
	b->err.col = (uint32_t)m->column + 1;
	snprintf(b->err.msg, sizeof(b->err.msg), fmt, arg);
	return -1;
}

static struct xd_doc_anchor *anchor_slot(struct xd_doc_builder *b,
					 const char *name)
{
	size_t mask = b->anchors_cap - 1;

	/* at most half full, a power of two: the probe meets a free slot */
	XD_ASSERT_INFO(b->anchors_cap > 0 && 2 * b->nanchors <= b->anchors_cap &&
			       (b->anchors_cap & mask) == 0,
		       "%zu anchors in %zu slots", b->nanchors, b->anchors_cap);
	for (size_t h = xd_text_hash(name, strlen(name)) & mask;;
	     h = (h + 1) & mask) {
		struct xd_doc_anchor *a = &b->anchors[h];

		if (a->name == NULL || strcmp(a->name, name) == 0)
			return a;
	}
}

static void anchor_set(struct xd_doc_builder *b, const char *name,
		       const struct xd_dnode *n, uint64_t weight)
{
	struct xd_doc_anchor *a;

	/* Kept at most half full, so probing always ends. */
	if (2 * (b->nanchors + 1) > b->anchors_cap) {
		struct xd_doc_anchor *old = b->anchors;
		size_t oldcap = b->anchors_cap;

		b->anchors_cap = oldcap ? 2 * oldcap : 64;
		b->anchors = xd_calloc(b->anchors_cap, sizeof(*b->anchors));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].name != NULL)
				*anchor_slot(b, old[i].name) = old[i];
		free(old);
	}
	a = anchor_slot(b, name);
	if (a->name == NULL) {
		a->name = xd_text_copy(b->arena, name, strlen(name));
		b->nanchors++;
	}
	a->node = *n;
	a->weight = weight;
}

static void scalar_node(struct xd_doc_builder *b, const yaml_event_t *ev,
			struct xd_dnode *n)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;

	n->kind = XD_DN_SCALAR;
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    (tag != NULL && (strcmp(tag, "!") == 0 ||
			     strcmp(tag, YAML_STR_TAG) == 0)))
		n->style = XD_DS_STRING;
	else if (len == 0 || (len == 1 && v[0] == '~') ||
		 (len == 4 && (memcmp(v, "null", 4) == 0 ||
			       memcmp(v, "Null", 4) == 0 ||
			       memcmp(v, "NULL", 4) == 0)))
		n->style = XD_DS_NULL;
	else
		n->style = XD_DS_PLAIN;
	n->len = (uint32_t)len;
	n->u.str = xd_text_copy(b->arena, v, len);
}

int xd_doc_feed(struct xd_doc_builder *b, const yaml_event_t *ev,
		struct xd_dnode *out)
{
	struct xd_dnode n;
	struct xd_doc_frame *f;
	const char *anchor = NULL;
	uint64_t weight = 1;

	memset(&n, 0, sizeof(n));
	n.line = (uint32_t)ev->start_mark.line + 1 + b->line0;
	n.col = (uint32_t)ev->start_mark.column + 1;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.length > UINT32_MAX)
			return fail_at(b, &ev->start_mark, "%s",
				       "scalar too long");
		scalar_node(b, ev, &n);
		anchor = (const char *)ev->data.scalar.anchor;
		break;
	case YAML_ALIAS_EVENT: {
		struct xd_doc_anchor *a = NULL;
		const char *name = (const char *)ev->data.alias.anchor;

		if (b->nanchors > 0)
			a = anchor_slot(b, name);
		if (a == NULL || a->name == NULL)
			return fail_at(b, &ev->start_mark,
				       "unknown alias '*%s'", name);
		b->alias_nodes += a->weight;
		if (b->alias_nodes > XD_DOC_MAX_ALIAS_NODES)
			return fail_at(b, &ev->start_mark, "%s",
				       "aliases expand to too many nodes");
		n = a->node;
		weight = a->weight;
		break;
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (b->depth == XD_DOC_MAX_DEPTH)
			return fail_at(b, &ev->start_mark,
				       "nesting deeper than %s levels",
				       XD_DOC_MAX_DEPTH_TEXT);
		if (b->depth == b->stack_cap)
			b->stack = xd_grow(b->stack, &b->stack_cap, b->depth + 1,
					sizeof(*b->stack));
		f = &b->stack[b->depth++];
		memset(f, 0, sizeof(*f));
		f->kind = ev->type == YAML_MAPPING_START_EVENT ? XD_DN_MAP :
								 XD_DN_SEQ;
		f->line = n.line;
		f->col = n.col;
		f->base = b->nkids;
		anchor = ev->type == YAML_MAPPING_START_EVENT ?
				 (const char *)ev->data.mapping_start.anchor :
				 (const char *)ev->data.sequence_start.anchor;
		if (anchor != NULL)
			f->anchor = xd_text_copy(b->arena, anchor,
						  strlen(anchor));
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: {
		size_t count;

		if (b->depth == 0)
			return fail_at(b, &ev->start_mark, "%s",
				       "unexpected end of a collection");
		f = &b->stack[--b->depth];
		/* the open containers' children stack up in b->kids; a
		 * mapping's come in pairs, a key and its value (libyaml gives
		 * a key without one an empty scalar) */
		XD_ASSERT_INFO(f->base <= b->nkids &&
				       (f->kind != XD_DN_MAP ||
					(b->nkids - f->base) % 2 == 0),
			       "collection at line %u: %zu children from %zu",
			       f->line, b->nkids, f->base);
		count = b->nkids - f->base;
		n.kind = f->kind;
		n.line = f->line;
		n.col = f->col;
		n.len = (uint32_t)(f->kind == XD_DN_MAP ? count / 2 : count);
		n.u.kids = xd_arena_alloc(b->arena,
					  (count + 1) * sizeof(*n.u.kids));
		if (count > 0)
			memcpy(n.u.kids, b->kids + f->base,
			       count * sizeof(*n.u.kids));
		b->nkids = f->base;
		if (f->merge && apply_merge_keys(b->arena, &n, &b->err) != 0)
			return -1;
		anchor = f->anchor;
		weight = f->weight + 1;
		break;
	}
	default:
		return fail_at(b, &ev->start_mark, "%s",
			       "unexpected YAML event");
	}
	if (anchor != NULL)
		anchor_set(b, anchor, &n, weight);
	if (b->depth == 0) {
		*out = n;
		return 1;
	}
	f = &b->stack[b->depth - 1];
	f->weight += weight;
	if (f->kind == XD_DN_MAP && (b->nkids - f->base) % 2 == 0 &&
	    is_merge_key(&n))
		f->merge = true;
	if (b->nkids == b->kids_cap)
		b->kids = xd_grow(b->kids, &b->kids_cap, b->nkids + 1,
			       sizeof(*b->kids));
	b->kids[b->nkids++] = n;
	return 0;
}

/* ---- libyaml documents ---- */

struct yconv {
	struct xd_arena *arena;
	yaml_document_t *doc;
	struct xd_doc_error *err;
	uint64_t budget; /* nodes left: shared nodes are copied each time */
};

static int yfail(struct yconv *c, const yaml_node_t *node, const char *msg)
{
	c->err->line = (uint32_t)node->start_mark.line + 1;
	c->err->col = (uint32_t)node->start_mark.column + 1;
	snprintf(c->err->msg, sizeof(c->err->msg), "%s", msg);
	return -1;
}

static int from_ynode(struct yconv *c, yaml_node_t *node, struct xd_dnode *out,
		      unsigned depth)
{
	memset(out, 0, sizeof(*out));
	out->line = (uint32_t)node->start_mark.line + 1;
	out->col = (uint32_t)node->start_mark.column + 1;
	if (depth > XD_DOC_MAX_DEPTH)
		return yfail(c, node, "nesting deeper than "
				      XD_DOC_MAX_DEPTH_TEXT " levels");
	if (c->budget == 0)
		return yfail(c, node, "aliases expand to too many nodes");
	c->budget--;
	switch (node->type) {
	case YAML_SCALAR_NODE: {
		yaml_event_t ev;

		if (node->data.scalar.length > UINT32_MAX)
			return yfail(c, node, "scalar too long");
		/* Classified as the event builder does. */
		memset(&ev, 0, sizeof(ev));
		ev.data.scalar.value = node->data.scalar.value;
		ev.data.scalar.length = node->data.scalar.length;
		ev.data.scalar.style = node->data.scalar.style;
		/* libyaml's loader gives every untagged scalar node the
		 * !!str tag, and "!" too: explicit tags cannot be told
		 * apart here (the event reader sees them). */
		ev.data.scalar.tag = NULL;
		{
			struct xd_doc_builder b = {.arena = c->arena};

			scalar_node(&b, &ev, out);
		}
		return 0;
	}
	case YAML_SEQUENCE_NODE: {
		yaml_node_item_t *it = node->data.sequence.items.start;
		size_t n = (size_t)(node->data.sequence.items.top - it);

		out->kind = XD_DN_SEQ;
		out->len = (uint32_t)n;
		out->u.kids = xd_arena_alloc(c->arena,
					     (n + 1) * sizeof(*out->u.kids));
		for (size_t i = 0; i < n; i++)
			if (from_ynode(c, yaml_document_get_node(c->doc, it[i]),
				       &out->u.kids[i], depth + 1) != 0)
				return -1;
		return 0;
	}
	case YAML_MAPPING_NODE: {
		yaml_node_pair_t *p = node->data.mapping.pairs.start;
		size_t n = (size_t)(node->data.mapping.pairs.top - p);
		bool merge = false;

		out->kind = XD_DN_MAP;
		out->len = (uint32_t)n;
		out->u.kids = xd_arena_alloc(c->arena,
					     (2 * n + 1) * sizeof(*out->u.kids));
		for (size_t i = 0; i < n; i++) {
			if (from_ynode(c, yaml_document_get_node(c->doc, p[i].key),
				       &out->u.kids[2 * i], depth + 1) != 0 ||
			    from_ynode(c,
				       yaml_document_get_node(c->doc, p[i].value),
				       &out->u.kids[2 * i + 1], depth + 1) != 0)
				return -1;
			merge |= is_merge_key(&out->u.kids[2 * i]);
		}
		if (merge)
			return apply_merge_keys(c->arena, out, c->err);
		return 0;
	}
	default:
		return yfail(c, node, "empty YAML node");
	}
}

int xd_doc_from_yaml_node(struct xd_arena *arena, yaml_document_t *doc,
			  yaml_node_t *node, struct xd_dnode *out,
			  struct xd_doc_error *err)
{
	struct yconv c = {.arena = arena, .doc = doc, .err = err};

	c.budget = (uint64_t)(doc->nodes.top - doc->nodes.start) +
		   XD_DOC_MAX_ALIAS_NODES;
	return from_ynode(&c, node, out, 0);
}
