/* SPDX-License-Identifier: Apache-2.0 */
/* A resource's annotations (transcode.h, struct xd_ann_hooks): the keys
 * of its own mapping that start with "@", each handed to the caller's
 * hook for it, with their errors among the fields' own (same path form,
 * same document order). The encoder leaves them out of the bytes; what
 * they mean is the caller's. */
#include "schema/encode.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "schema/scalar.h"
#include "schema/transcode.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The reader a hook is handed is the encoder itself. */
static struct xd_encoder *enc(struct xd_ann_reader *r)
{
	return (struct xd_encoder *)r;
}

bool xd_enc_is_annotation(const struct xd_dnode *key)
{
	return key->kind == XD_DN_SCALAR && key->len > 0 && key->u.str[0] == '@';
}

static bool is(const struct xd_dnode *n, const char *text)
{
	return n->len == strlen(text) && memcmp(n->u.str, text, n->len) == 0;
}

void xd_enc_set_hooks(struct xd_encoder *e, const struct xd_ann_hooks *hooks)
{
	if (hooks != NULL) {
		/* the bound that seen[] in xd_enc_annotations relies on, and
		 * keys that a mapping's "@" key can name, each once */
		XD_ASSERT(hooks->n <= XD_ANN_HOOKS_MAX);
		for (size_t i = 0; i < hooks->n; i++) {
			const char *key = hooks->hook[i].key;

			XD_ASSERT(hooks->hook[i].read != NULL);
			XD_ASSERT_INFO(key != NULL && key[0] == '@' && key[1] != '\0',
				       "annotation hook %zu has key '%s'", i,
				       key != NULL ? key : "(null)");
			for (size_t j = 0; j < i; j++)
				XD_ASSERT_INFO(strcmp(hooks->hook[j].key, key) != 0,
					       "annotation key '%s' has two hooks",
					       key);
		}
	}
	e->hooks = hooks;
}

/* An unknown annotation: the known one it is closest to, if any is
 * close, else them all. */
static void unknown_key(struct xd_encoder *e, const struct xd_dnode *k)
{
	const struct xd_ann_hooks *h = e->hooks;
	char buf[160], list[512] = "";
	size_t used = 0;

	for (size_t i = 0; i < h->n; i++) {
		const char *key = h->hook[i].key;

		if (xd_text_distance(k->u.str, k->len, key, strlen(key),
				     XD_TEXT_FOLD_CASE | XD_TEXT_SWAPS) <= 2) {
			xd_enc_err(e, k, "unknown annotation %s (did you mean '%s'?)",
				   xd_enc_show(k, buf, sizeof(buf)), key);
			return;
		}
		if (used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used,
						 "%s'%s'", i == 0 ? "" : ", ",
						 key);
	}
	xd_enc_err(e, k, "unknown annotation %s (known: %s)",
		   xd_enc_show(k, buf, sizeof(buf)), list);
}

static void read_one(struct xd_encoder *e, size_t j,
		     const struct xd_dnode *value)
{
	e->hooks->hook[j].read((struct xd_ann_reader *)e, value,
			       e->hooks->ctx);
}

void xd_enc_annotations(struct xd_encoder *e, const struct xd_dnode *root)
{
	const struct xd_ann_hooks *h = e->hooks;
	/* the key and value each hook was given, for duplicates and for
	 * the late hooks' second pass */
	const struct xd_dnode *seen[XD_ANN_HOOKS_MAX] = {0};
	const struct xd_dnode *val[XD_ANN_HOOKS_MAX] = {0};
	char buf[160], where[48];

	if (root->kind != XD_DN_MAP)
		return; /* the encoder says what is wrong with it */
	for (uint32_t i = 0; i < root->len && !e->stopped; i++) {
		const struct xd_dnode *k = &root->u.kids[2 * i];
		size_t j = 0;

		if (!xd_enc_is_annotation(k))
			continue;
		xd_enc_push_field(e, k);
		while (j < h->n && !is(k, h->hook[j].key))
			j++;
		if (j == h->n) {
			unknown_key(e, k);
		} else if (seen[j] != NULL) {
			xd_enc_err(e, k, "duplicate key %s%s",
				   xd_enc_show(k, buf, sizeof(buf)),
				   xd_enc_first_on(seen[j], where,
						   sizeof(where)));
		} else {
			seen[j] = k;
			val[j] = &root->u.kids[2 * i + 1];
			if (!h->hook[j].late)
				read_one(e, j, val[j]);
		}
		e->nsegs--;
	}
	for (size_t j = 0; j < h->n; j++) {
		if (!h->hook[j].late || seen[j] == NULL)
			continue;
		xd_enc_push_field(e, seen[j]);
		read_one(e, j, val[j]);
		e->nsegs--;
	}
}

/* ---- what hooks call ---- */

void xd_ann_error(struct xd_ann_reader *r, const struct xd_dnode *at,
		  const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xd_enc_err(enc(r), at, "%s", msg);
}

const char *xd_ann_show(const struct xd_dnode *n, char *buf, size_t size)
{
	return xd_enc_show(n, buf, size);
}

bool xd_ann_stopped(const struct xd_ann_reader *r)
{
	return ((const struct xd_encoder *)r)->stopped;
}

bool xd_ann_text(const struct xd_dnode *n, const char **text, size_t *len)
{
	if (!xd_doc_is_text(n))
		return false;
	*text = n->u.str;
	*len = n->len;
	return true;
}

int xd_ann_check_string(struct xd_ann_reader *r, const struct xd_dnode *n)
{
	return xd_enc_check_string(enc(r), n);
}

bool xd_ann_list(const struct xd_dnode *n, size_t *count)
{
	if (n->kind != XD_DN_SEQ)
		return false;
	*count = n->len;
	return true;
}

const struct xd_dnode *xd_ann_list_item(const struct xd_dnode *n, size_t i)
{
	XD_ASSERT(n->kind == XD_DN_SEQ && i < n->len);
	return &n->u.kids[i];
}

void xd_ann_push_index(struct xd_ann_reader *r, size_t i)
{
	xd_enc_push_index(enc(r), i);
}

void xd_ann_pop(struct xd_ann_reader *r)
{
	XD_ASSERT(enc(r)->nsegs > 0);
	enc(r)->nsegs--;
}

bool xd_ann_duration(const struct xd_dnode *n, int64_t *secs, int32_t *nanos)
{
	return xd_doc_is_text(n) &&
	       xd_scalar_duration_parse(n->u.str, n->len, secs, nanos) ==
		       XD_NUM_OK;
}

void xd_ann_write(struct xd_ann_reader *r, const void *data, size_t len)
{
	xd_buf_append(&enc(r)->ann, data, len);
}
