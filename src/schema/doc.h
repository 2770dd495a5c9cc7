/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The document tree the transcoder reads: YAML and JSON alike become
 * scalars, mappings and lists with their positions, allocated in an
 * arena and freed all at once.
 *
 * One tree holds one resource (one item of a snapshot file's list), so
 * a 15 MB file never needs its whole tree in memory. YAML trees are
 * built straight from libyaml's events (cheaper than libyaml's own
 * document tree: no per-node tag copies or stack allocations), with
 * anchors, aliases and "<<" merge keys resolved; aliases share nodes, and
 * the expansion they cause is bounded.
 *
 * Part of the transcoder: only its files include this (doc.c and
 * doc_yaml.c build trees, the encoder and transcode.c read them).
 *
 * Ownership: nodes and strings belong to the arena given to the builder.
 * Thread: any, one builder per thread.
 */
#ifndef XD_SCHEMA_DOC_H
#define XD_SCHEMA_DOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "util/arena.h"

/* Containers nested deeper than this are refused while building; the
 * transcoder's own, lower bound applies to message nesting. */
#define XD_DOC_MAX_DEPTH 256
#define XD_DOC_STR_(x) #x
#define XD_DOC_STR(x) XD_DOC_STR_(x)
#define XD_DOC_MAX_DEPTH_TEXT XD_DOC_STR(XD_DOC_MAX_DEPTH) /* "256" */
/* Nodes that aliases may add, over a whole file (a "billion laughs"
 * document must fail, not expand). */
#define XD_DOC_MAX_ALIAS_NODES (4u << 20)

enum xd_dkind {
	XD_DN_SCALAR,
	XD_DN_MAP,
	XD_DN_SEQ,
};

/* How a scalar was written, which decides what it may mean. */
enum xd_dstyle {
	XD_DS_NULL,   /* YAML null/~/empty (plain), JSON null */
	XD_DS_PLAIN,  /* YAML plain scalar: typed by the schema */
	XD_DS_STRING, /* YAML quoted or block scalar, JSON string */
	XD_DS_NUMBER, /* JSON number (text as jansson holds it) */
	XD_DS_BOOL,   /* JSON true/false ("true"/"false") */
};

struct xd_dnode {
	uint8_t kind;  /* enum xd_dkind */
	uint8_t style; /* enum xd_dstyle, scalars only */
	uint16_t flags;
	uint32_t len; /* scalar bytes, map pairs or list items */
	/* 1-based. line 0: no position (JSON); col then counts nodes in
	 * document order, so errors can still be sorted. */
	uint32_t line, col;
	union {
		const char *str;        /* NUL-terminated; may hold NULs */
		struct xd_dnode *kids;  /* map: key, value, key, value... */
	} u;
};

/* Why a tree could not be built, and where. */
struct xd_doc_error {
	uint32_t line, col;
	char msg[160];
};

/* ---- YAML events ---- */

struct xd_doc_anchor;

struct xd_doc_builder {
	struct xd_arena *arena;
	struct xd_doc_frame *stack;
	size_t depth, stack_cap;
	struct xd_dnode *kids; /* children of the open containers */
	size_t nkids, kids_cap;
	struct xd_doc_anchor *anchors; /* open addressing */
	size_t nanchors, anchors_cap;
	uint64_t alias_nodes; /* nodes added by aliases so far */
	uint32_t line0;       /* added to every line (a piece of a file) */
	struct xd_doc_error err;
};

void xd_doc_builder_init(struct xd_doc_builder *b, struct xd_arena *arena);
void xd_doc_builder_free(struct xd_doc_builder *b);

/* True once an anchor was defined: the arena must then live until the
 * end of the document, since later aliases may point into it. */
bool xd_doc_builder_has_anchors(const struct xd_doc_builder *b);

/*
 * Feeds one event of a node (scalar, alias, sequence or mapping
 * start/end). Returns 1 when the node that the first event fed began is
 * complete (then *out is set and the builder is ready for the next
 * node), 0 when it needs more events, -1 on error (b->err says why; the
 * builder must then be freed).
 */
int xd_doc_feed(struct xd_doc_builder *b, const yaml_event_t *ev,
		struct xd_dnode *out);

/* ---- other sources ---- */

/*
 * Copies a node of a libyaml document (aliases resolved, merge keys
 * applied). Returns 0, or -1 with `err` set.
 */
int xd_doc_from_yaml_node(struct xd_arena *arena, yaml_document_t *doc,
			  yaml_node_t *node, struct xd_dnode *out,
			  struct xd_doc_error *err);

/* Copies a jansson value. Returns 0, or -1 with `err` set. */
int xd_doc_from_json(struct xd_arena *arena, json_t *v, struct xd_dnode *out,
		     struct xd_doc_error *err);

/* "a mapping", "a list", "a string", "null"... for messages. */
const char *xd_doc_kind_name(const struct xd_dnode *n);

/* ---- reading nodes ---- */

/* null: not set, except where the schema gives null a meaning. */
static inline bool xd_doc_is_null(const struct xd_dnode *n)
{
	return n->kind == XD_DN_SCALAR && n->style == XD_DS_NULL;
}

/* A scalar written as text (a YAML plain or quoted scalar, a JSON
 * string), as strings, bytes and the text forms need. */
static inline bool xd_doc_is_text(const struct xd_dnode *n)
{
	return n->kind == XD_DN_SCALAR &&
	       (n->style == XD_DS_PLAIN || n->style == XD_DS_STRING);
}

#endif
