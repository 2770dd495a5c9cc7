/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/restext.h"
#include "util/buf.h"
#include "util/linediff.h"
#include "util/xalloc.h"

/* What the walk carries: the bounds, and the schema of a full diff. */
struct walk {
	const struct xd_schema *schema; /* NULL: the summary only */
	struct xd_diff *d;
	size_t caps, capk;
};

const char *xd_diff_change_name(enum xd_diff_change c)
{
	static const char *const names[] = {"added", "removed", "changed"};

	XD_ASSERT_INFO(c <= XD_DIFF_CHANGED, "diff change %d", (int)c);
	return names[c];
}

static void copy_version(char dst[17], const char *v)
{
	snprintf(dst, 17, "%s", v != NULL ? v : "");
}

/* Who may be served it and for how long, beside its bytes: a change of
 * either alone is a change (an "@allow" keeps the version). */
static bool same_entry(const struct xd_entry *a, const struct xd_entry *b)
{
	if (a->hash != b->hash || a->restricted != b->restricted ||
	    a->nallow != b->nallow)
		return false;
	for (uint32_t i = 0; i < a->nallow; i++)
		if (strcmp(a->allow[i], b->allow[i]) != 0)
			return false;
	return true;
}

/* The text of a listed resource: the unified diff of its two texts. */
static char *res_text(struct walk *w, int t, const struct xd_entry *a,
		      const struct xd_entry *b)
{
	struct xd_buf ta = XD_BUF_INIT, tb = XD_BUF_INIT, out = XD_BUF_INIT;
	size_t room = XD_DIFF_MAX_TEXT - w->d->text_bytes;
	size_t len;

	if (room > XD_DIFF_MAX_RESOURCE_TEXT)
		room = XD_DIFF_MAX_RESOURCE_TEXT;
	if (a != NULL && b != NULL)
		xd_restext_pair(&ta, &tb, w->schema, t, a, b);
	else if (a != NULL)
		xd_restext(&ta, w->schema, t, a);
	else if (b != NULL)
		xd_restext(&tb, w->schema, t, b);
	if (xd_linediff(&out, (const char *)ta.data, ta.len,
			(const char *)tb.data, tb.len, room))
		w->d->cut = true;
	xd_buf_free(&ta);
	xd_buf_free(&tb);
	xd_buf_putc(&out, '\0');
	w->d->text_bytes += out.len - 1;
	return (char *)xd_buf_steal(&out, &len);
}

static void note(struct walk *w, struct xd_diff_section *s, int t,
		 enum xd_diff_change c, const struct xd_entry *a,
		 const struct xd_entry *b)
{
	const struct xd_entry *e = a != NULL ? a : b;
	struct xd_diff_res *r;

	if (c == XD_DIFF_ADDED) {
		s->added++;
		w->d->added++;
	} else if (c == XD_DIFF_REMOVED) {
		s->removed++;
		w->d->removed++;
	} else {
		s->changed++;
		w->d->changed++;
	}
	if (w->d->listed >= (w->schema != NULL ? XD_DIFF_MAX_LISTED :
						 XD_DIFF_SUMMARY_LISTED)) {
		w->d->cut = true;
		return;
	}
	w->d->listed++;
	s->res = xd_grow(s->res, &w->caps, s->nres + 1, sizeof(*s->res));
	r = &s->res[s->nres++];
	memset(r, 0, sizeof(*r));
	r->change = c;
	r->name = xd_strndup(e->name, e->name_len);
	copy_version(r->before, a != NULL ? a->version : NULL);
	copy_version(r->after, b != NULL ? b->version : NULL);
	/* a summary names them; only a full diff renders them */
	r->text = w->schema != NULL ? res_text(w, t, a, b) : NULL;
}

/* The section's changes, walking both tables in their order (by name). */
static void section(struct walk *w, struct xd_diff_key *k, int t,
		    const struct xd_table *ta, const struct xd_table *tb)
{
	size_t i = 0, j = 0, na = ta ? xd_table_count(ta) : 0,
	       nb = tb ? xd_table_count(tb) : 0;
	struct xd_diff_section *s;

	if (ta != NULL && tb != NULL && xd_table_same(ta, tb))
		return;
	if (na == 0 && nb == 0 && (ta == NULL || tb == NULL))
		return; /* a key that came or went with nothing of this type */
	k->sections = xd_reallocarray(k->sections, k->nsections + 1,
				      sizeof(*k->sections));
	s = &k->sections[k->nsections++];
	memset(s, 0, sizeof(*s));
	s->section = t;
	copy_version(s->before, ta ? xd_table_version(ta) : NULL);
	copy_version(s->after, tb ? xd_table_version(tb) : NULL);
	w->caps = 0;
	while (i < na || j < nb) {
		const struct xd_entry *a = i < na ? xd_table_at(ta, i) : NULL,
				      *b = j < nb ? xd_table_at(tb, j) : NULL;
		int order = a == NULL ? 1 : b == NULL ? -1 : xd_entry_order(a, b);

		if (order < 0) {
			note(w, s, t, XD_DIFF_REMOVED, a, NULL);
			i++;
		} else if (order > 0) {
			note(w, s, t, XD_DIFF_ADDED, NULL, b);
			j++;
		} else {
			if (!same_entry(a, b))
				note(w, s, t, XD_DIFF_CHANGED, a, b);
			i++;
			j++;
		}
	}
}

static void key(struct walk *w, const struct xd_snapshot *a,
		const struct xd_snapshot *b)
{
	struct xd_diff *d = w->d;
	struct xd_diff_key *k;

	if (a != NULL && b != NULL && xd_snapshot_same(a, b))
		return;
	d->keys = xd_grow(d->keys, &w->capk, d->nkeys + 1, sizeof(*d->keys));
	k = &d->keys[d->nkeys++];
	memset(k, 0, sizeof(*k));
	k->key = xd_strdup(xd_snapshot_key(a != NULL ? a : b));
	k->change = a == NULL ? XD_DIFF_ADDED :
		    b == NULL ? XD_DIFF_REMOVED :
				XD_DIFF_CHANGED;
	copy_version(k->before, a ? xd_snapshot_version(a) : NULL);
	copy_version(k->after, b ? xd_snapshot_version(b) : NULL);
	for (int t = 0; t < XD_SECTION_COUNT; t++)
		section(w, k, t, a ? xd_snapshot_section(a, t) : NULL,
			b ? xd_snapshot_section(b, t) : NULL);
}

struct xd_diff *xd_diff_new(struct xd_snapshot *const *before, size_t nbefore,
			    struct xd_snapshot *const *after, size_t nafter,
			    const struct xd_schema *schema)
{
	struct walk w = {.schema = schema, .d = xd_calloc(1, sizeof(struct xd_diff))};
	size_t i = 0, j = 0;

	while (i < nbefore || j < nafter) {
		int order = i == nbefore ? 1 :
			    j == nafter ?
				    -1 :
				    strcmp(xd_snapshot_key(before[i]),
					   xd_snapshot_key(after[j]));

		/* both sorted, one snapshot a key: a merge walk */
		XD_ASSERT_INFO(i + 1 >= nbefore ||
				       strcmp(xd_snapshot_key(before[i]),
					      xd_snapshot_key(before[i + 1])) < 0,
			       "snapshots before, at '%s'", xd_snapshot_key(before[i]));
		XD_ASSERT_INFO(j + 1 >= nafter ||
				       strcmp(xd_snapshot_key(after[j]),
					      xd_snapshot_key(after[j + 1])) < 0,
			       "snapshots after, at '%s'", xd_snapshot_key(after[j]));
		if (order < 0)
			key(&w, before[i++], NULL);
		else if (order > 0)
			key(&w, NULL, after[j++]);
		else
			key(&w, before[i++], after[j++]);
	}
	return w.d;
}

const struct xd_diff_key *xd_diff_find(const struct xd_diff *d, const char *k)
{
	for (size_t i = 0; i < d->nkeys; i++)
		if (strcmp(d->keys[i].key, k) == 0)
			return &d->keys[i];
	return NULL;
}

void xd_diff_free(struct xd_diff *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->nkeys; i++) {
		struct xd_diff_key *k = &d->keys[i];

		for (size_t s = 0; s < k->nsections; s++) {
			for (size_t r = 0; r < k->sections[s].nres; r++) {
				free(k->sections[s].res[r].name);
				free(k->sections[s].res[r].text);
			}
			free(k->sections[s].res);
		}
		free(k->sections);
		free(k->key);
	}
	free(d->keys);
	free(d);
}
