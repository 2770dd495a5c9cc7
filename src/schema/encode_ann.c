/* A resource's annotations (transcode.h, struct xd_annotations): the
 * keys of its own mapping that start with "@", read and checked beside
 * the fields, with their errors among the fields' own (same path form,
 * same document order). The encoder leaves them out of the bytes. */
#include "schema/encode.h"

#include <stdio.h>
#include <string.h>

#include "schema/scalar.h"
#include "schema/transcode.h"
#include "util/text.h"
#include "util/xalloc.h"

#define ALLOW "@allow"
#define ANYONE "@anyone"
#define TTL "@ttl"
#define DPC "@dynamic_parameter_constraints"
#define NAME "@name"

bool xd_enc_is_annotation(const struct xd_dnode *key)
{
	return key->kind == XD_DN_SCALAR && key->len > 0 && key->u.str[0] == '@';
}

static bool is(const struct xd_dnode *n, const char *text)
{
	return n->len == strlen(text) && memcmp(n->u.str, text, n->len) == 0;
}

/* One item of "@allow": a glob, or the keyword "@anyone". */
static void allow_item(struct xd_encoder *e, const struct xd_dnode *n)
{
	char buf[160];

	if (!xd_doc_is_text(n)) {
		xd_enc_err(e, n, "expected an identity glob (a string), not %s",
			   xd_enc_show(n, buf, sizeof(buf)));
		return;
	}
	if (xd_enc_check_string(e, n) != 0)
		return;
	if (n->len == 0) {
		xd_enc_err(e, n, "an empty glob matches no identity");
		return;
	}
	if (n->len > XD_ALLOW_GLOB_MAX) {
		xd_enc_err(e, n, "a glob of %u bytes; the limit is %d", n->len,
			   XD_ALLOW_GLOB_MAX);
		return;
	}
	if (n->u.str[0] == '@') {
		/* "@" starts keywords, so that none is ever taken for an
		 * identity (a common name may be anything) */
		if (is(n, ANYONE))
			e->ann.allow_anyone = true;
		else
			xd_enc_err(e, n, "unknown keyword %s (the only one is '" ANYONE "')",
				   xd_enc_show(n, buf, sizeof(buf)));
		return;
	}
	e->allow = xd_grow(e->allow, &e->allow_cap, e->ann.nallow + 1,
			   sizeof(*e->allow));
	e->allow[e->ann.nallow++] = n->u.str;
}

static void read_allow(struct xd_encoder *e, const struct xd_dnode *v)
{
	char buf[160];

	e->ann.allow_set = true;
	if (v->kind != XD_DN_SEQ) {
		xd_enc_err(e, v, "expected a list of identity globs, not %s",
			   xd_enc_show(v, buf, sizeof(buf)));
		return;
	}
	if (v->len > XD_ALLOW_MAX) {
		xd_enc_err(e, v, "%u globs; the limit is %d", v->len,
			   XD_ALLOW_MAX);
		return;
	}
	for (uint32_t i = 0; i < v->len && !e->stopped; i++) {
		xd_enc_push_index(e, i);
		allow_item(e, &v->u.kids[i]);
		e->nsegs--;
	}
	e->ann.allow = e->allow;
}

/* "@ttl": a Duration string, as the snapshot's other durations are. */
static void read_ttl(struct xd_encoder *e, const struct xd_dnode *v)
{
	enum xd_num r = XD_NUM_SYNTAX;
	int64_t secs = 0;
	int32_t nanos = 0;
	char buf[160];

	if (xd_doc_is_text(v))
		r = xd_scalar_duration_parse(v->u.str, v->len, &secs, &nanos);
	if (r != XD_NUM_OK) {
		xd_enc_err(e, v, "expected a duration such as \"30s\", not %s",
			   xd_enc_show(v, buf, sizeof(buf)));
		return;
	}
	if (nanos % 1000000 != 0) {
		xd_enc_err(e, v, "a TTL is counted in whole milliseconds, not %s",
			   xd_enc_show(v, buf, sizeof(buf)));
		return;
	}
	if (secs < 0 || nanos < 0 ||
	    secs * 1000 + nanos / 1000000 < (int64_t)XD_TTL_MIN_MS ||
	    secs > (int64_t)(XD_TTL_MAX_MS / 1000) ||
	    secs * 1000 + nanos / 1000000 > (int64_t)XD_TTL_MAX_MS) {
		xd_enc_err(e, v, "a TTL of %s; it must be from 1s to 30 days (%us)",
			   xd_enc_show(v, buf, sizeof(buf)),
			   XD_TTL_MAX_MS / 1000);
		return;
	}
	e->ann.ttl_ms = (uint32_t)(secs * 1000 + nanos / 1000000);
}

/* "@dynamic_parameter_constraints": a message, encoded through the
 * schema once the annotations are read (xd_encoder_run), so that its
 * errors are those of any field. Here only its place is kept. */
static void read_dpc(struct xd_encoder *e, const struct xd_dnode *v)
{
	e->dpc_val = v;
}

/* "@name": a resource's name where its message has none (a list
 * collection's); what a good one is, the loader says. */
static void read_name(struct xd_encoder *e, const struct xd_dnode *v)
{
	char buf[160];

	if (!xd_doc_is_text(v)) {
		xd_enc_err(e, v, "expected a name (a string), not %s",
			   xd_enc_show(v, buf, sizeof(buf)));
		return;
	}
	if (xd_enc_check_string(e, v) != 0)
		return;
	if (v->len == 0) {
		xd_enc_err(e, v, "an empty name");
		return;
	}
	e->ann.name = v->u.str;
}

static const struct {
	const char *key;
	void (*read)(struct xd_encoder *e, const struct xd_dnode *v);
} known[] = {
	{ALLOW, read_allow},
	{TTL, read_ttl},
	{DPC, read_dpc},
	{NAME, read_name},
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

/* An unknown annotation: the known one it is closest to, if any is
 * close, else them all. */
static void unknown_key(struct xd_encoder *e, const struct xd_dnode *k)
{
	char buf[160], list[128] = "";
	size_t used = 0;

	for (size_t i = 0; i < NKNOWN; i++) {
		if (xd_text_distance(k->u.str, k->len, known[i].key,
				     strlen(known[i].key),
				     XD_TEXT_FOLD_CASE | XD_TEXT_SWAPS) <= 2) {
			xd_enc_err(e, k, "unknown annotation %s (did you mean '%s'?)",
				   xd_enc_show(k, buf, sizeof(buf)),
				   known[i].key);
			return;
		}
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s'%s'", i == 0 ? "" : ", ",
					 known[i].key);
	}
	xd_enc_err(e, k, "unknown annotation %s (known: %s)",
		   xd_enc_show(k, buf, sizeof(buf)), list);
}

void xd_enc_annotations(struct xd_encoder *e, const struct xd_dnode *root)
{
	const struct xd_dnode *seen[NKNOWN] = {0};
	char buf[160], where[48];

	memset(&e->ann, 0, sizeof(e->ann));
	e->dpc_key = e->dpc_val = NULL;
	if (root->kind != XD_DN_MAP)
		return; /* the encoder says what is wrong with it */
	for (uint32_t i = 0; i < root->len && !e->stopped; i++) {
		const struct xd_dnode *k = &root->u.kids[2 * i];
		size_t j = 0;

		if (!xd_enc_is_annotation(k))
			continue;
		xd_enc_push_field(e, k);
		while (j < NKNOWN && !is(k, known[j].key))
			j++;
		if (j == NKNOWN) {
			unknown_key(e, k);
		} else if (seen[j] != NULL) {
			xd_enc_err(e, k, "duplicate key %s%s",
				   xd_enc_show(k, buf, sizeof(buf)),
				   xd_enc_first_on(seen[j], where,
						   sizeof(where)));
		} else {
			seen[j] = k;
			if (known[j].read == read_dpc)
				e->dpc_key = k;
			known[j].read(e, &root->u.kids[2 * i + 1]);
		}
		e->nsegs--;
	}
}
