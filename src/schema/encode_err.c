/* SPDX-License-Identifier: Apache-2.0 */
/* The path to the value being encoded, and the errors of a resource:
 * collected, sorted into document order, then added to the diag list. */
#include "schema/encode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

enum { SEG_FIELD, SEG_INDEX, SEG_KEY, SEG_NONE };

/* Values shown in messages are cut after this many bytes (type URLs
 * are long: keep them whole). */
#define XD_ENC_SHOW_MAX 120

void xd_enc_push_field(struct xd_encoder *e, const struct xd_dnode *key)
{
	/* A key that is a list or a mapping has no name to show. */
	if (e->nsegs < XD_ENC_MAX_SEGS)
		e->segs[e->nsegs] = key->kind == XD_DN_SCALAR ?
			(struct xd_enc_seg){SEG_FIELD, key->len, key->u.str, 0} :
			(struct xd_enc_seg){SEG_NONE, 0, NULL, 0};
	e->nsegs++;
}

void xd_enc_push_index(struct xd_encoder *e, uint64_t index)
{
	if (e->nsegs < XD_ENC_MAX_SEGS)
		e->segs[e->nsegs] = (struct xd_enc_seg){SEG_INDEX, 0, NULL,
							index};
	e->nsegs++;
}

void xd_enc_push_key(struct xd_encoder *e, const struct xd_dnode *key)
{
	if (e->nsegs < XD_ENC_MAX_SEGS)
		e->segs[e->nsegs] = key->kind == XD_DN_SCALAR ?
			(struct xd_enc_seg){SEG_KEY, key->len, key->u.str, 0} :
			(struct xd_enc_seg){SEG_NONE, 0, NULL, 0};
	e->nsegs++;
}

/* Appends text for a message: at most `max` bytes, control bytes as '?',
 * cut at a character boundary. */
static void put_text(struct xd_buf *b, const char *s, size_t len, size_t max)
{
	size_t n = len;

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		xd_buf_putc(b, c < 0x20 || c == 0x7f ? '?' : c);
	}
	if (n < len)
		xd_buf_append(b, "...", 3);
}

const char *xd_enc_show(const struct xd_dnode *n, char *buf, size_t size)
{
	struct xd_buf b = XD_BUF_INIT;

	if (n->kind != XD_DN_SCALAR || n->style == XD_DS_NULL)
		return xd_doc_kind_name(n);
	if (n->style == XD_DS_NUMBER || n->style == XD_DS_BOOL) {
		put_text(&b, n->u.str, n->len, XD_ENC_SHOW_MAX);
	} else {
		xd_buf_putc(&b, '\'');
		put_text(&b, n->u.str, n->len, XD_ENC_SHOW_MAX);
		xd_buf_putc(&b, '\'');
	}
	snprintf(buf, size, "%.*s", (int)b.len, (const char *)b.data);
	xd_buf_free(&b);
	return buf;
}

const char *xd_enc_raw(const struct xd_dnode *n, char *buf, size_t size)
{
	struct xd_buf b = XD_BUF_INIT;

	put_text(&b, n->u.str, n->len, XD_ENC_SHOW_MAX);
	snprintf(buf, size, "%.*s", (int)b.len, (const char *)b.data);
	xd_buf_free(&b);
	return buf;
}

static void put_path(struct xd_encoder *e, struct xd_buf *b)
{
	unsigned n = e->nsegs < XD_ENC_MAX_SEGS ? e->nsegs : XD_ENC_MAX_SEGS;

	if (e->prefix != NULL)
		xd_buf_append(b, e->prefix, strlen(e->prefix));
	for (unsigned i = 0; i < n; i++) {
		const struct xd_enc_seg *s = &e->segs[i];

		switch (s->kind) {
		case SEG_FIELD:
			if (b->len > 0)
				xd_buf_putc(b, '.');
			put_text(b, s->name, s->len, 80);
			break;
		case SEG_INDEX:
			xd_buf_printf(b, "[%llu]", (unsigned long long)s->index);
			break;
		case SEG_NONE:
			break;
		default:
			xd_buf_append(b, "[\"", 2);
			put_text(b, s->name, s->len, 80);
			xd_buf_append(b, "\"]", 2);
			break;
		}
	}
}

void xd_enc_err(struct xd_encoder *e, const struct xd_dnode *at,
		const char *fmt, ...)
{
	struct xd_buf b = XD_BUF_INIT;
	struct xd_enc_err *r;
	va_list ap;
	char *msg;

	if (e->nerr == XD_ENC_MAX_ERRORS) {
		e->stopped = true;
		return;
	}
	put_path(e, &b);
	if (b.len > 0)
		xd_buf_append(&b, ": ", 2);
	va_start(ap, fmt);
	msg = xd_vasprintf(fmt, ap);
	va_end(ap);
	xd_buf_append(&b, msg, strlen(msg));
	free(msg);
	xd_buf_putc(&b, '\0');
	r = &e->errs[e->nerr];
	r->line = at->line;
	r->col = at->col;
	r->seq = e->nerr;
	r->msg = (char *)xd_buf_steal(&b, NULL);
	e->nerr++;
}

/* "(first on line 3)", for duplicates; JSON has no lines. */
const char *xd_enc_first_on(const struct xd_dnode *n, char *buf, size_t size)
{
	if (n->line == 0)
		return "";
	snprintf(buf, size, " (first on line %u)", n->line);
	return buf;
}

static int cmp_err(const void *a, const void *b)
{
	const struct xd_enc_err *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void xd_enc_report(struct xd_encoder *e, const struct xd_dnode *root,
		   const char *file, const char *path, struct xd_diag *diag)
{
	/* Fields are visited in number order; report in document order. */
	qsort(e->errs, e->nerr, sizeof(e->errs[0]), cmp_err);
	for (unsigned i = 0; i < e->nerr; i++) {
		const struct xd_enc_err *r = &e->errs[i];

		if (r->line > 0)
			xd_diag_add(diag, "%s:%u:%u: %s", file, r->line, r->col,
				    r->msg);
		else
			xd_diag_add(diag, "%s: %s", file, r->msg);
		free(r->msg);
	}
	if (e->stopped) {
		if (root->line > 0)
			xd_diag_add(diag, "%s:%u:%u: %s%sstopped after %d errors in this resource",
				    file, root->line, root->col,
				    path ? path : "", path && *path ? ": " : "",
				    XD_ENC_MAX_ERRORS);
		else
			xd_diag_add(diag, "%s: %s%sstopped after %d errors in this resource",
				    file, path ? path : "",
				    path && *path ? ": " : "", XD_ENC_MAX_ERRORS);
	}
	e->nerr = 0;
}
