/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Document tree → protobuf wire bytes, driven by the schema. Part of the
 * transcoder: transcode.c runs the encoder, encode.c, encode_scalar.c
 * and encode_err.c are it; nothing else includes this.
 *
 * Fields are written in field-number order whatever the key order, map
 * entries sorted by key, proto3 defaults without presence omitted: equal
 * documents give equal bytes, the same bytes protobuf's deterministic
 * serializer writes. Errors are collected per resource (at most
 * XD_ENC_MAX_ERRORS), sorted into document order and added to the diag
 * list as "file:line:column: path: reason".
 *
 * Ownership: the encoder owns its scratch space, reused from one
 * resource to the next. Thread: one encoder per thread; the schema is
 * shared.
 */
#ifndef XD_SCHEMA_ENCODE_H
#define XD_SCHEMA_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "schema/doc.h"
#include "schema/schema.h"
#include "schema/transcode.h"
#include "util/buf.h"
#include "util/diag.h"

/* Messages (and Struct values) nested deeper than this are refused. */
#define XD_ENC_MAX_DEPTH 64
/* Errors reported per resource before the rest of it is skipped. */
#define XD_ENC_MAX_ERRORS 20
/* Path segments kept for messages (deeper ones are not shown). */
#define XD_ENC_MAX_SEGS (4 * XD_ENC_MAX_DEPTH + 16)

struct xd_enc_ent;
struct xd_enc_key;
struct xd_enc_err {
	uint32_t line, col, seq;
	char *msg;
};
struct xd_enc_seg {
	uint8_t kind; /* field, index or key */
	uint32_t len;
	const char *name;
	uint64_t index;
};

struct xd_encoder {
	const struct xd_schema *s;
	struct xd_buf *out;
	const char *file, *prefix;
	unsigned depth;
	/* The field of the wrapper being written, for its limits. */
	const struct xd_fielddesc *wrapper;
	/* Fields of the open messages, sorted per message. */
	struct xd_enc_ent *ents;
	size_t nents, ents_cap;
	/* Keys of the open maps, sorted per map. */
	struct xd_enc_key *keys;
	size_t nkeys, keys_cap;
	/* The path to the current value. */
	struct xd_enc_seg segs[XD_ENC_MAX_SEGS];
	unsigned nsegs;
	struct xd_enc_err errs[XD_ENC_MAX_ERRORS];
	unsigned nerr;
	bool stopped;
	/* With `hooks` (snapshot files), the root mapping's keys starting
	 * with "@" are read by them (encode_ann.c) into `ann`, until the
	 * next run, instead of being unknown fields; `scratch` holds what
	 * xd_ann_encode encoded for a hook. */
	const struct xd_ann_hooks *hooks;
	struct xd_buf ann;
	struct xd_buf scratch;
};

void xd_encoder_init(struct xd_encoder *e, const struct xd_schema *s);
void xd_encoder_free(struct xd_encoder *e);

/*
 * Appends the encoding of `root` as a message of type `m` to `out`.
 * `file` and `path` (may be "") prefix error messages. Returns 0, or -1
 * with the errors in `diag` and `out` as it was. With e->hooks, e->ann
 * holds what they wrote of the root's annotations after a run that
 * returned 0.
 */
int xd_encoder_run(struct xd_encoder *e, const struct xd_msgdesc *m,
		   const struct xd_dnode *root, const char *file,
		   const char *path, struct xd_buf *out, struct xd_diag *diag);

/* ---- the steps encode.c, encode_scalar.c, encode_ann.c and
 * encode_err.c share ----
 *
 * encode.c (messages, lists, maps, the well-known types that hold other
 * values) calls encode_scalar.c (values read from one scalar) and
 * encode_ann.c (a resource's annotations), and all three call
 * encode_err.c (the path and the errors); nothing calls upwards. A
 * hook that wants an annotation's value encoded as a message calls
 * xd_ann_encode (transcode.h), which encode.c defines for that
 * reason. */

/* encode_scalar.c: a field's value from one scalar (any type but
 * message), tag included; `presence` writes it even when it holds the
 * default. */
void xd_enc_scalar(struct xd_encoder *e, const struct xd_fielddesc *f,
		   const struct xd_dnode *n, bool presence);
/* One element of a packed run of f: the bare value. */
void xd_enc_packed(struct xd_encoder *e, const struct xd_fielddesc *f,
		   const struct xd_dnode *n);
/* Duration, Timestamp and FieldMask, each written as one string. */
void xd_enc_text_wkt(struct xd_encoder *e, const struct xd_msgdesc *m,
		     const struct xd_dnode *n);
/* An xds.core.v3.ResourceLocator written as its xdstp:// URL (a list
 * collection's member, docs/protocol.md rule X3): the one message whose
 * text form the snapshot adds to the JSON mapping; its mapping form
 * stays good. True when `m` is that message and `n` text (then the body
 * is written, or the error reported). */
bool xd_enc_locator(struct xd_encoder *e, const struct xd_msgdesc *m,
		    const struct xd_dnode *n);
/* 0 when n is a string protobuf accepts (text, no NUL, valid UTF-8);
 * else -1, reported. */
int xd_enc_check_string(struct xd_encoder *e, const struct xd_dnode *n);

/* encode_ann.c: a key that names an annotation ("@..."), and the
 * annotations of a resource's mapping, each handed to its hook (errors
 * recorded with the fields'), what they write in e->ann. */
bool xd_enc_is_annotation(const struct xd_dnode *key);
/* Sets the hooks (NULL: none), checking their bounds and keys. */
void xd_enc_set_hooks(struct xd_encoder *e, const struct xd_ann_hooks *hooks);
void xd_enc_annotations(struct xd_encoder *e, const struct xd_dnode *root);

/* encode_err.c: the path to the value being encoded. Each push is undone
 * with e->nsegs-- once the value is done. */
void xd_enc_push_field(struct xd_encoder *e, const struct xd_dnode *key);
void xd_enc_push_index(struct xd_encoder *e, uint64_t index);
void xd_enc_push_key(struct xd_encoder *e, const struct xd_dnode *key);
/* Records an error at `at`, prefixed with the path (at most
 * XD_ENC_MAX_ERRORS per resource; then e->stopped). */
void xd_enc_err(struct xd_encoder *e, const struct xd_dnode *at,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A value for messages: 'text', a number, or "a mapping". */
const char *xd_enc_show(const struct xd_dnode *n, char *buf, size_t size);
/* A scalar's text, unquoted. */
const char *xd_enc_raw(const struct xd_dnode *n, char *buf, size_t size);
/* "(first on line 3)" when n has a position, else "". */
const char *xd_enc_first_on(const struct xd_dnode *n, char *buf, size_t size);
/* Adds the collected errors to `diag`, in document order. */
void xd_enc_report(struct xd_encoder *e, const struct xd_dnode *root,
		   const char *file, const char *path, struct xd_diag *diag);

#endif
