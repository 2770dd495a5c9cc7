/* SPDX-License-Identifier: Apache-2.0 */
/* The transcoder's entry points (transcode.h): snapshot files and single
 * resources from libyaml's events, item by item, one tree at a time
 * (large files in pieces, through split.c); and resources from trees
 * others built: libyaml documents, jansson values, JSON snapshot files. */
#include "schema/transcode.h"

#include <stdio.h>
#include <string.h>

#include "schema/doc.h"
#include "schema/encode.h"
#include "schema/split.h"
#include "util/xalloc.h"


/* ---- YAML from events ---- */

/* libyaml reads a piece through this: its section key, then its text. */
struct piece_input {
	char prefix[256];
	size_t prefix_len, prefix_pos;
	const char *text;
	size_t len, pos;
};

struct yrun {
	const struct xd_schema *s;
	const char *file;
	struct xd_diag *diag;
	unsigned line0; /* added to libyaml's 0-based lines */
	const struct xd_split_piece *piece;
	struct piece_input in;
	yaml_parser_t parser;
	yaml_event_t ev;
	bool have_ev;
	struct xd_arena arena;
	struct xd_doc_builder b;
	struct xd_encoder enc;
	struct xd_buf out;
	int failed;
};

static int read_piece(void *data, unsigned char *buf, size_t size,
		      size_t *got)
{
	struct piece_input *in = data;
	size_t n = 0;

	if (in->prefix_pos < in->prefix_len) {
		n = in->prefix_len - in->prefix_pos;
		n = n < size ? n : size;
		memcpy(buf, in->prefix + in->prefix_pos, n);
		in->prefix_pos += n;
	} else if (in->pos < in->len) {
		n = in->len - in->pos;
		n = n < size ? n : size;
		memcpy(buf, in->text + in->pos, n);
		in->pos += n;
	}
	*got = n;
	return 1;
}

static void yrun_init(struct yrun *r, const struct xd_schema *s,
		      const char *file, const struct xd_split_piece *p,
		      struct xd_diag *diag)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->file = file;
	r->diag = diag;
	r->piece = p;
	r->line0 = p->first_line > 0 ? p->first_line - 1 : 0;
	yaml_parser_initialize(&r->parser);
	if (p->key != NULL && p->keylen + 2 <= sizeof(r->in.prefix)) {
		/* The section key goes on the line above the slice, so
		 * lines keep their numbers in the file. */
		memcpy(r->in.prefix, p->key, p->keylen);
		memcpy(r->in.prefix + p->keylen, ":\n", 2);
		r->in.prefix_len = p->keylen + 2;
		r->line0--;
		r->in.text = p->text;
		r->in.len = p->len;
		yaml_parser_set_input(&r->parser, read_piece, &r->in);
	} else {
		yaml_parser_set_input_string(&r->parser,
					     (const unsigned char *)p->text,
					     p->len);
	}
	xd_doc_builder_init(&r->b, &r->arena);
	r->b.line0 = r->line0;
	xd_encoder_init(&r->enc, s);
}

static void yrun_free(struct yrun *r)
{
	if (r->have_ev)
		yaml_event_delete(&r->ev);
	yaml_parser_delete(&r->parser);
	xd_doc_builder_free(&r->b);
	xd_encoder_free(&r->enc);
	xd_arena_free(&r->arena);
	xd_buf_free(&r->out);
}

/* libyaml gives reader errors (bad UTF-8, control characters) as a byte
 * offset in its input, which is the piece's prefix and then its text. */
static void offset_position(const struct yrun *r, size_t off, size_t *line,
			    size_t *col)
{
	const char *t = r->piece->text;
	size_t first = r->line0 + 1, last_nl = 0, nl = 0;

	if (r->in.prefix_len > 0) {
		if (off < r->in.prefix_len) {
			*line = first;
			*col = off + 1;
			return;
		}
		off -= r->in.prefix_len;
		first++;
	}
	if (off > r->piece->len)
		off = r->piece->len;
	for (size_t i = 0; i < off; i++)
		if (t[i] == '\n') {
			nl++;
			last_nl = i + 1;
		}
	*line = first + nl;
	*col = off - last_nl + 1;
}

static int next_event(struct yrun *r)
{
	if (r->have_ev)
		yaml_event_delete(&r->ev);
	r->have_ev = false;
	if (!yaml_parser_parse(&r->parser, &r->ev)) {
		const yaml_mark_t *m = r->parser.problem != NULL ?
					       &r->parser.problem_mark :
					       &r->parser.mark;
		size_t line = m->line + 1 + r->line0, col = m->column + 1;

		if (r->parser.error == YAML_READER_ERROR)
			offset_position(r, r->parser.problem_offset, &line,
					&col);
		xd_diag_add(r->diag, "%s:%zu:%zu: %s%s%s", r->file, line, col,
			    r->parser.problem ? r->parser.problem :
						"YAML syntax error",
			    r->parser.context ? " " : "",
			    r->parser.context ? r->parser.context : "");
		r->failed = 1;
		return -1;
	}
	r->have_ev = true;
	return 0;
}

/* The node that starts at the current event, complete. */
static int build_node(struct yrun *r, struct xd_dnode *n)
{
	for (;;) {
		int rc = xd_doc_feed(&r->b, &r->ev, n);

		if (rc == 1)
			break;
		if (rc < 0) {
			xd_diag_add(r->diag, "%s:%u:%u: %s", r->file,
				    r->b.err.line, r->b.err.col,
				    r->b.err.msg);
			r->failed = 1;
			return -1;
		}
		if (next_event(r) != 0)
			return -1;
	}
	return 0;
}

static void drop_tree(struct yrun *r)
{
	/* between nodes: no open container points into the arena */
	XD_ASSERT_INFO(r->b.depth == 0 && r->b.nkids == 0, "%s: depth %zu",
		       r->file, r->b.depth);
	/* Anchors may be named by later items: their nodes must stay. */
	if (!xd_doc_builder_has_anchors(&r->b))
		xd_arena_reset(&r->arena);
}

static const char *show_key(const struct xd_dnode *k, char *buf, size_t size)
{
	if (k->kind != XD_DN_SCALAR)
		return xd_doc_kind_name(k);
	snprintf(buf, size, "'%.*s'", k->len > 60 ? 60 : (int)k->len, k->u.str);
	return buf;
}

struct file_ctx {
	const struct xd_section *sections;
	size_t nsections;
	xd_item_fn fn;
	void *arg;
	int stopped;
};

/* The section named key (`len` bytes), or NULL. */
static const struct xd_section *section_n(const struct xd_section *sections,
					  size_t nsections, const char *key,
					  size_t len)
{
	for (size_t i = 0; i < nsections; i++)
		if (strlen(sections[i].key) == len &&
		    memcmp(sections[i].key, key, len) == 0)
			return &sections[i];
	return NULL;
}

static const struct xd_section *find_section(const struct file_ctx *c,
					     const struct xd_dnode *k)
{
	return section_n(c->sections, c->nsections, k->u.str,
				    k->len);
}

/* "where: unknown key 'x' (expected one of: clusters, ...)" */
static void unknown_section(struct xd_diag *diag, const char *where,
			    const char *key, size_t len,
			    const struct xd_section *sections,
			    size_t nsections)
{
	struct xd_buf names = XD_BUF_INIT;

	for (size_t i = 0; i < nsections; i++)
		xd_buf_printf(&names, "%s%s", i ? ", " : "", sections[i].key);
	xd_buf_putc(&names, '\0');
	xd_diag_add(diag, "%s: unknown key '%.*s' (expected one of: %s)", where,
		    len > 60 ? 60 : (int)len, key, (char *)names.data);
	xd_buf_free(&names);
}

/*
 * An item that had `nerrors` errors, handed over as broken when its
 * section asks for that (a name_key), with its name when its mapping
 * (`n`, NULL: none was built) holds that key as text. Returns what
 * `fn` did.
 */
static int hand_broken(xd_item_fn fn, void *arg, const struct xd_section *sec,
		       size_t index, const struct xd_dnode *n, const char *path,
		       size_t nerrors)
{
	struct xd_item it = {.section = sec, .index = index, .path = path,
			     .broken = true, .nerrors = nerrors};
	size_t klen = sec->name_key != NULL ? strlen(sec->name_key) : 0;
	char *name = NULL;
	int rc;

	if (fn == NULL || sec->name_key == NULL)
		return 0;
	if (n != NULL) {
		it.line = n->line;
		it.column = n->col;
	}
	for (uint32_t i = 0; n != NULL && n->kind == XD_DN_MAP && i < n->len; i++) {
		const struct xd_dnode *k = &n->u.kids[2 * i], *v = k + 1;

		if (k->kind == XD_DN_SCALAR && k->len == klen &&
		    memcmp(k->u.str, sec->name_key, klen) == 0 && xd_doc_is_text(v) &&
		    memchr(v->u.str, '\0', v->len) == NULL) {
			name = xd_strndup(v->u.str, v->len);
			break;
		}
	}
	it.name = name;
	rc = fn(&it, arg);
	free(name);
	return rc;
}

/* Encodes one item and hands it over. */
static void emit(struct yrun *r, struct file_ctx *c,
		 const struct xd_section *sec, size_t index,
		 const struct xd_dnode *n)
{
	size_t errors = xd_diag_total(r->diag);
	char path[160];
	struct xd_item it;

	snprintf(path, sizeof(path), "%s[%zu]", sec->key, index);
	r->out.len = 0;
	if (xd_encoder_run(&r->enc, sec->type, n, r->file, path, &r->out,
			   r->diag) != 0) {
		r->failed = 1;
		if (hand_broken(c->fn, c->arg, sec, index, n, path,
				xd_diag_total(r->diag) - errors) != 0)
			c->stopped = 1;
		return;
	}
	it = (struct xd_item){.section = sec, .index = index, .line = n->line,
			      .column = n->col, .path = path,
			      .data = r->out.data, .len = r->out.len,
			      .ann = r->enc.ann.data, .ann_len = r->enc.ann.len};
	if (c->fn != NULL && c->fn(&it, c->arg) != 0)
		c->stopped = 1;
}

/* The value of one section: a list, given inline (streamed item by item)
 * or through an alias, or null. */
static int yaml_section(struct yrun *r, struct file_ctx *c,
			const struct xd_section *sec, size_t index0)
{
	struct xd_dnode n;
	char where[64], buf[96];

	if (next_event(r) != 0)
		return -1;
	if (sec != NULL && r->ev.type == YAML_SEQUENCE_START_EVENT &&
	    r->ev.data.sequence_start.anchor == NULL) {
		for (size_t i = 0; !c->stopped; i++) {
			if (next_event(r) != 0)
				return -1;
			if (r->ev.type == YAML_SEQUENCE_END_EVENT)
				return 0;
			if (build_node(r, &n) != 0)
				return -1;
			emit(r, c, sec, index0 + i, &n);
			drop_tree(r);
		}
		return 0;
	}
	if (build_node(r, &n) != 0)
		return -1;
	if (sec == NULL || xd_doc_is_null(&n)) {
		/* skipped, or an empty section */
	} else if (n.kind == XD_DN_SEQ) {
		for (uint32_t i = 0; i < n.len && !c->stopped; i++)
			emit(r, c, sec, index0 + i, &n.u.kids[i]);
	} else {
		snprintf(where, sizeof(where), "%u:%u", n.line, n.col);
		xd_diag_add(r->diag, "%s:%s: %s: expected a list of %s, not %s",
			    r->file, where, sec->key, sec->type->full_name,
			    show_key(&n, buf, sizeof(buf)));
		r->failed = 1;
	}
	drop_tree(r);
	return 0;
}

static int yaml_root_map(struct yrun *r, struct file_ctx *c)
{
	const struct xd_section *seen[64];
	uint32_t seen_line[64];
	size_t nseen = 0;

	for (;;) {
		const struct xd_section *sec = NULL;
		struct xd_dnode k;
		char where[64], buf[96];

		if (next_event(r) != 0)
			return -1;
		if (r->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		if (build_node(r, &k) != 0)
			return -1;
		snprintf(where, sizeof(where), "%s:%u:%u", r->file, k.line,
			 k.col);
		if (k.kind != XD_DN_SCALAR) {
			xd_diag_add(r->diag, "%s: keys must be section names, not %s",
				    where, xd_doc_kind_name(&k));
			r->failed = 1;
		} else if ((sec = find_section(c, &k)) == NULL) {
			unknown_section(r->diag, where, k.u.str,
						     k.len, c->sections,
						     c->nsections);
			r->failed = 1;
		} else {
			for (size_t i = 0; i < nseen; i++)
				if (seen[i] == sec) {
					xd_diag_add(r->diag, "%s: duplicate key %s (first on line %u)",
						    where,
						    show_key(&k, buf, sizeof(buf)),
						    seen_line[i]);
					r->failed = 1;
					sec = NULL;
					break;
				}
			if (sec != NULL && nseen < 64) {
				seen[nseen] = sec;
				seen_line[nseen++] = k.line;
			}
		}
		drop_tree(r);
		/* A piece continues its first section's list. */
		if (yaml_section(r, c, sec,
				 nseen == 1 && r->piece->key != NULL ?
					 r->piece->first_index :
					 0) != 0 ||
		    c->stopped)
			return -1;
	}
}

/* Events up to the root node of the only document; 1 when there is no
 * document at all. */
static int yaml_start(struct yrun *r)
{
	if (next_event(r) != 0) /* STREAM-START */
		return -1;
	if (next_event(r) != 0)
		return -1;
	if (r->ev.type == YAML_STREAM_END_EVENT)
		return 1;
	return next_event(r); /* past DOCUMENT-START */
}

static int yaml_finish(struct yrun *r)
{
	if (next_event(r) != 0) /* DOCUMENT-END */
		return -1;
	if (next_event(r) != 0)
		return -1;
	if (r->ev.type == YAML_DOCUMENT_START_EVENT) {
		xd_diag_add(r->diag, "%s:%zu:%zu: only one YAML document is allowed",
			    r->file, r->ev.start_mark.line + 1 + r->line0,
			    r->ev.start_mark.column + 1);
		r->failed = 1;
		return -1;
	}
	return 0;
}

/* One piece of a snapshot file (the whole file, or a piece split.c cut),
 * as xd_transcode_yaml_file says. */
static int yaml_piece(const struct xd_schema *s, const char *file,
		      const struct xd_split_piece *p,
		      const struct xd_section *sections, size_t nsections,
		      const struct xd_ann_hooks *hooks, xd_item_fn fn,
		      void *arg, struct xd_diag *diag)
{
	struct file_ctx c = {sections, nsections, fn, arg, 0};
	struct yrun r;
	int rc;

	yrun_init(&r, s, file, p, diag);
	xd_enc_set_hooks(&r.enc, hooks); /* resources of a snapshot file */
	rc = yaml_start(&r);
	if (rc != 0)
		goto out;
	if (r.ev.type == YAML_MAPPING_START_EVENT) {
		rc = yaml_root_map(&r, &c);
	} else {
		struct xd_dnode n;

		rc = build_node(&r, &n);
		if (rc == 0 && !xd_doc_is_null(&n)) {
			xd_diag_add(diag, "%s:%u:%u: a snapshot file must be a mapping of lists (clusters:, listeners:, ...), not %s",
				    file, n.line, n.col, xd_doc_kind_name(&n));
			r.failed = 1;
		}
	}
	if (rc == 0)
		rc = yaml_finish(&r);
out:
	rc = rc < 0 || r.failed || c.stopped ? -1 : 0;
	yrun_free(&r);
	return rc;
}

/* What every piece of one file shares, for split.c. */
struct file_args {
	const struct xd_schema *s;
	const char *file;
	const struct xd_section *sections;
	size_t nsections;
	const struct xd_ann_hooks *hooks;
};

static int piece_job(void *ctx, const struct xd_split_piece *p,
		     xd_item_fn fn, void *arg, struct xd_diag *diag)
{
	const struct file_args *a = ctx;

	return yaml_piece(a->s, a->file, p, a->sections, a->nsections,
			  a->hooks, fn, arg, diag);
}

int xd_transcode_yaml_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len, unsigned threads,
			   const struct xd_section *sections, size_t nsections,
			   const struct xd_ann_hooks *hooks, xd_item_fn fn,
			   void *arg, struct xd_diag *diag)
{
	struct xd_split_piece whole = {text, len, 1, NULL, 0, 0};
	struct file_args a = {s, file, sections, nsections, hooks};
	int rc;

	if (threads > 1 && xd_split_run(text, len, threads, sections,
					piece_job, &a, fn, arg, &rc))
		return rc;
	return yaml_piece(s, file, &whole, sections, nsections, hooks, fn, arg,
			  diag);
}

int xd_transcode_yaml_text(const struct xd_schema *s,
			   const struct xd_msgdesc *m, const char *file,
			   const char *text, size_t len, const char *path,
			   struct xd_buf *out, struct xd_diag *diag)
{
	struct xd_split_piece whole = {text, len, 1, NULL, 0, 0};
	struct yrun r;
	struct xd_dnode n;
	int rc;

	yrun_init(&r, s, file, &whole, diag);
	rc = yaml_start(&r);
	if (rc == 1) {
		xd_diag_add(diag, "%s: empty document", file);
		rc = -1;
	}
	if (rc == 0)
		rc = build_node(&r, &n);
	if (rc == 0 && yaml_finish(&r) == 0 &&
	    xd_encoder_run(&r.enc, m, &n, file, path, out, diag) == 0)
		rc = 0;
	else
		rc = -1;
	yrun_free(&r);
	return rc;
}

/* ---- trees others built ---- */

int xd_transcode_yaml(const struct xd_schema *s, const struct xd_msgdesc *m,
		      yaml_document_t *doc, yaml_node_t *node,
		      const char *file, const char *path, struct xd_buf *out,
		      struct xd_diag *diag)
{
	struct xd_arena arena = XD_ARENA_INIT;
	struct xd_encoder enc;
	struct xd_doc_error err;
	struct xd_dnode n;
	int rc;

	if (xd_doc_from_yaml_node(&arena, doc, node, &n, &err) != 0) {
		xd_diag_add(diag, "%s:%u:%u: %s", file, err.line, err.col,
			    err.msg);
		xd_arena_free(&arena);
		return -1;
	}
	xd_encoder_init(&enc, s);
	rc = xd_encoder_run(&enc, m, &n, file, path, out, diag);
	xd_encoder_free(&enc);
	xd_arena_free(&arena);
	return rc;
}

static int json_doc(struct xd_arena *arena, json_t *v, const char *file,
		    const char *path, struct xd_dnode *n, struct xd_diag *diag)
{
	struct xd_doc_error err;

	if (xd_doc_from_json(arena, v, n, &err) == 0)
		return 0;
	xd_diag_add(diag, "%s: %s%s%s", file, path ? path : "",
		    path && *path ? ": " : "", err.msg);
	return -1;
}

int xd_transcode_json(const struct xd_schema *s, const struct xd_msgdesc *m,
		      json_t *v, const char *file, const char *path,
		      struct xd_buf *out, struct xd_diag *diag)
{
	struct xd_arena arena = XD_ARENA_INIT;
	struct xd_encoder enc;
	struct xd_dnode n;
	int rc = -1;

	if (json_doc(&arena, v, file, path, &n, diag) == 0) {
		xd_encoder_init(&enc, s);
		rc = xd_encoder_run(&enc, m, &n, file, path, out, diag);
		xd_encoder_free(&enc);
	}
	xd_arena_free(&arena);
	return rc;
}

int xd_transcode_json_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len,
			   const struct xd_section *sections, size_t nsections,
			   const struct xd_ann_hooks *hooks, xd_item_fn fn,
			   void *arg, struct xd_diag *diag)
{
	struct xd_arena arena = XD_ARENA_INIT;
	struct xd_encoder enc;
	struct xd_buf out = XD_BUF_INIT;
	json_error_t jerr;
	const char *key;
	json_t *root, *list;
	int failed = 0, stopped = 0;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			  &jerr);
	if (root == NULL) {
		xd_diag_add(diag, "%s:%d:%d: %s", file, jerr.line, jerr.column,
			    jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		xd_diag_add(diag, "%s: a snapshot file must be an object of arrays (\"clusters\", \"listeners\", ...)",
			    file);
		json_decref(root);
		return -1;
	}
	xd_encoder_init(&enc, s);
	xd_enc_set_hooks(&enc, hooks); /* resources of a snapshot file */
	json_object_foreach(root, key, list) {
		const struct xd_section *sec;

		sec = section_n(sections, nsections, key, strlen(key));
		if (sec == NULL) {
			unknown_section(diag, file, key, strlen(key),
					sections, nsections);
			failed = 1;
			continue;
		}
		if (json_is_null(list))
			continue;
		if (!json_is_array(list)) {
			xd_diag_add(diag, "%s: %s: expected a list of %s",
				    file, sec->key, sec->type->full_name);
			failed = 1;
			continue;
		}
		for (size_t i = 0; i < json_array_size(list) && !stopped; i++) {
			size_t errors = xd_diag_total(diag);
			char path[160];
			struct xd_dnode n;
			struct xd_item it;
			bool built;

			snprintf(path, sizeof(path), "%s[%zu]", sec->key, i);
			out.len = 0;
			built = json_doc(&arena, json_array_get(list, i), file,
					 path, &n, diag) == 0;
			if (!built ||
			    xd_encoder_run(&enc, sec->type, &n, file, path, &out,
					   diag) != 0) {
				failed = 1;
				if (hand_broken(fn, arg, sec, i, built ? &n : NULL,
						path,
						xd_diag_total(diag) - errors) != 0)
					stopped = 1;
			} else {
				it = (struct xd_item){.section = sec, .index = i,
						      .path = path,
						      .data = out.data,
						      .len = out.len,
						      .ann = enc.ann.data,
						      .ann_len = enc.ann.len};
				if (fn != NULL && fn(&it, arg) != 0)
					stopped = 1;
			}
			xd_arena_reset(&arena);
		}
		if (stopped)
			break;
	}
	xd_encoder_free(&enc);
	xd_arena_free(&arena);
	xd_buf_free(&out);
	json_decref(root);
	return failed || stopped ? -1 : 0;
}
