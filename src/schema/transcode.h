/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML and JSON documents → protobuf wire bytes, driven only by the
 * schema (proto3 JSON mapping: snake_case or lowerCamelCase names, enums
 * by name or number, 64-bit integers as numbers or strings, bytes as
 * base64, the well-known types in their JSON forms, Any by "@type").
 *
 * Output is deterministic: fields in field-number order, map entries by
 * key, proto3 defaults without presence omitted (fields with presence --
 * oneof members, proto3 `optional`, messages -- are written even when
 * default), i.e. the bytes protobuf's SerializeToString(deterministic)
 * gives. Equal documents give equal bytes whatever their key order.
 *
 * "null" means "not set", except for google.protobuf.Value (NullValue).
 *
 * Errors go to `diag` as "file:line:column: path: reason" (JSON has no
 * per-value positions: "file: path: reason"), every error of a resource
 * up to XD_ENC_MAX_ERRORS, and every resource of a file up to the diag
 * list's own bound.
 *
 * Thread: any. The schema is shared read-only; everything else belongs
 * to the call.
 */
#ifndef XD_SCHEMA_TRANSCODE_H
#define XD_SCHEMA_TRANSCODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "schema/schema.h"
#include "util/buf.h"
#include "util/diag.h"

/* ---- a whole snapshot file ---- */

/* One top-level key of a snapshot file and the type of its list items. */
struct xd_section {
	const char *key; /* "clusters" */
	const struct xd_msgdesc *type;
	/* The key of an item's own mapping that names it ("name"): with
	 * it, an item with errors is handed over too, flagged `broken`
	 * (struct xd_item), so that the caller knows what is missing and
	 * why; NULL: such items are only reported. */
	const char *name_key;
};

/*
 * Annotations: keys of a resource's own mapping that start with "@",
 * which no protobuf field name can (docs/design.md §9), where a
 * snapshot file says more of a resource than its fields. The transcoder
 * knows none of them: the caller hands it one hook per key it takes
 * (snapshot/annotations.h has the snapshot's), each of which reads its
 * key's value, reports what is wrong with it among the fields' own
 * errors (same path form, same document order) and writes what it read
 * into the item's annotation bytes, in a form only the caller reads.
 * Bytes, because the pieces of a large file are transcoded on other
 * threads and handed over later (split.c keeps them). A key no hook
 * takes is an error ("unknown annotation", with the nearest known key),
 * and so is a key given twice; the value's bytes stay out of the
 * resource's.
 *
 * Hooks run on the thread that transcodes (any), one resource at a time
 * per encoder; `ctx` is shared by every thread and must be read-only.
 */
struct xd_dnode;      /* a value of the document being read */
struct xd_ann_reader; /* the transcoder, within one resource's keys */

struct xd_ann_hook {
	const char *key; /* "@ttl": '@' and at least one more byte */
	void (*read)(struct xd_ann_reader *r, const struct xd_dnode *value,
		     void *ctx);
	/* read after every other key of the mapping: a value encoded
	 * through the schema, whose errors may fill the resource's */
	bool late;
};

/* At most this many hooks, keys distinct (checked, XD_ASSERT). */
#define XD_ANN_HOOKS_MAX 16

struct xd_ann_hooks {
	const struct xd_ann_hook *hook;
	size_t n;
	void *ctx;
};

/* ---- for hooks: the value, errors, and the item's bytes ---- */

/* Records an error at `at`, prefixed with the path of the key being
 * read (and of what xd_ann_push_index added). */
void xd_ann_error(struct xd_ann_reader *r, const struct xd_dnode *at,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The value for messages: 'text', a number, or "a mapping". */
const char *xd_ann_show(const struct xd_dnode *n, char *buf, size_t size);
/* True when too many errors were recorded: read no further. */
bool xd_ann_stopped(const struct xd_ann_reader *r);
/* A scalar written as text (a string, or a plain scalar but null,
 * booleans and numbers): its bytes, NUL-terminated, in *text. */
bool xd_ann_text(const struct xd_dnode *n, const char **text, size_t *len);
/* 0 when a text value is a string protobuf accepts (no NUL, valid
 * UTF-8); else -1, reported. */
int xd_ann_check_string(struct xd_ann_reader *r, const struct xd_dnode *n);
/* A list: true, with its length in *count. */
bool xd_ann_list(const struct xd_dnode *n, size_t *count);
const struct xd_dnode *xd_ann_list_item(const struct xd_dnode *n, size_t i);
/* The path to item i of the value, for its errors; popped with
 * xd_ann_pop. */
void xd_ann_push_index(struct xd_ann_reader *r, size_t i);
void xd_ann_pop(struct xd_ann_reader *r);
/* A Duration in its text form ("1.5s"): true, with its parts. */
bool xd_ann_duration(const struct xd_dnode *n, int64_t *secs, int32_t *nanos);
/* Encodes `value` as the message `full_name` of the schema, its errors
 * reported as any field's. Returns 0 with the bytes in *data and *len
 * (valid until the next call, or the next resource), -1 when it had
 * errors or the schema has no such message (reported). */
int xd_ann_encode(struct xd_ann_reader *r, const char *full_name,
		  const struct xd_dnode *value, const uint8_t **data,
		  size_t *len);
/* Appends to the item's annotation bytes (struct xd_item's ann). */
void xd_ann_write(struct xd_ann_reader *r, const void *data, size_t len);

/* One encoded resource, as handed to the caller. */
struct xd_item {
	const struct xd_section *section;
	size_t index;          /* position in the section's list */
	unsigned line, column; /* where it starts (0 for JSON) */
	const char *path;      /* "clusters[2]" */
	const uint8_t *data;   /* valid during the callback only */
	size_t len;
	/* what the hooks wrote (struct xd_ann_hooks), valid as `data` */
	const uint8_t *ann;
	size_t ann_len;
	/* An item with errors, of a section with a name_key: reported
	 * (`nerrors` of the diag's messages are its own) and not encoded,
	 * `data` NULL and `len` 0; `name` is the text of its name key when
	 * it has one as a plain text value (NUL-terminated, valid during
	 * the callback), else NULL. */
	bool broken;
	const char *name;
	size_t nerrors;
};

/* Returns 0 to go on, anything else to stop the file there. */
typedef int (*xd_item_fn)(const struct xd_item *item, void *arg);

/*
 * Parses a snapshot file: a mapping of section keys to lists of
 * resources (docs/design.md §3). Each item is encoded as its section's type
 * (its annotations read by `hooks` and left out; with `hooks` NULL, an
 * "@" key is an unknown field, as in a single resource) and handed
 * to `fn` in file order, on the calling thread; items with
 * errors are reported and skipped (handed to `fn` as `broken` when
 * their section has a name_key), the rest still checked. Unknown or
 * repeated section keys, non-list values, YAML syntax errors and more
 * than one document are errors too. Returns 0 when the whole file is
 * good, -1 otherwise (then the caller discards what `fn` received).
 *
 * Works from libyaml's events and builds one resource's tree at a time,
 * so memory follows the largest resource, not the file. `text` need not
 * be NUL-terminated.
 *
 * With `threads` > 1, a large file (1 MB and more) is cut between the
 * items of its lists into that many pieces, parsed at once on as many
 * threads (libyaml is most of the cost, and it is single-threaded per
 * parser). Items are kept until every piece has succeeded and then
 * handed to `fn` in file order as above, so the result is the same as
 * with one thread; a file that cannot be cut safely (anchors, several
 * documents...) or that has errors is transcoded in one piece.
 */
int xd_transcode_yaml_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len, unsigned threads,
			   const struct xd_section *sections, size_t nsections,
			   const struct xd_ann_hooks *hooks, xd_item_fn fn,
			   void *arg, struct xd_diag *diag);

/* The same for a JSON snapshot file (an object of arrays). */
int xd_transcode_json_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len,
			   const struct xd_section *sections, size_t nsections,
			   const struct xd_ann_hooks *hooks, xd_item_fn fn,
			   void *arg, struct xd_diag *diag);

/* ---- one resource ---- */

/*
 * Encodes the single YAML document in `text` as a message of type `m`,
 * appending to `out`. `path` (may be "") prefixes field paths in errors.
 * Returns 0, or -1 with the errors in `diag` and `out` unchanged.
 */
int xd_transcode_yaml_text(const struct xd_schema *s,
			   const struct xd_msgdesc *m, const char *file,
			   const char *text, size_t len, const char *path,
			   struct xd_buf *out, struct xd_diag *diag);

/* A node of a document loaded with libyaml's yaml_parser_load. Tags
 * are lost there (libyaml gives every scalar !!str), so "!!str null"
 * is null here but the string "null" from xd_transcode_yaml_text. */
int xd_transcode_yaml(const struct xd_schema *s, const struct xd_msgdesc *m,
		      yaml_document_t *doc, yaml_node_t *node,
		      const char *file, const char *path, struct xd_buf *out,
		      struct xd_diag *diag);

/* A jansson value (load with JSON_ALLOW_NUL to get NUL bytes reported
 * with their path, and JSON_REJECT_DUPLICATES for duplicate keys). */
int xd_transcode_json(const struct xd_schema *s, const struct xd_msgdesc *m,
		      json_t *v, const char *file, const char *path,
		      struct xd_buf *out, struct xd_diag *diag);

#endif
