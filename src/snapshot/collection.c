/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/collection.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/wire.h"
#include "snapshot/resource.h"
#include "util/buf.h"
#include "util/xalloc.h"
#include "xds/message.h"
#include "xds/xdstp.h"

/* A member's name, and the entry that holds it (for messages). */
struct member {
	char *name;
	size_t entry;
};

struct walk {
	const struct xd_schema *s;
	enum xd_ctype c;
	const struct xd_msgdesc *msg; /* the member type's */
	struct member *members;
	size_t nmembers, cap_members;
	struct member *labels; /* inline entries' own names */
	size_t nlabels, cap_labels;
	struct xd_ref *refs;
	size_t nrefs, cap_refs;
	/* per entry: its bytes when rewritten (an inline name made
	 * canonical), else NULL */
	struct xd_span *rewritten;
	size_t nentries, cap_entries;
	bool any_rewritten;
	char *why;
	size_t whylen;
};

static int fail(struct walk *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->why, w->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

static void add_ref(struct walk *w, enum xd_rtype type, const char *name)
{
	w->refs = xd_grow(w->refs, &w->cap_refs, w->nrefs + 1, sizeof(*w->refs));
	w->refs[w->nrefs].type = type;
	w->refs[w->nrefs++].name = xd_strdup(name);
}

static void add_member(struct member **v, size_t *n, size_t *cap,
		       const char *name, size_t len, size_t entry)
{
	*v = xd_grow(*v, cap, *n + 1, sizeof(**v));
	(*v)[*n].name = xd_strndup(name, len);
	(*v)[(*n)++].entry = entry;
}

/*
 * The collection's own name: an xdstp name of its type (that is what
 * a client asks for, with the type URL of the collection), canonical.
 */
static int own_name(const char *name, enum xd_ctype c, char **out,
		    char *why, size_t whylen)
{
	const char *message = xd_ctype_info(c)->message, *reason;
	struct xd_xdstp_parts pt;
	size_t len;
	char *canon;

	if (name == NULL || !xd_xdstp_is(name, strlen(name))) {
		snprintf(why, whylen,
			 "a %s is named by \"@name\": an xdstp name, xdstp://<authority>/%s/<id>%s%s%s",
			 xd_ctype_info(c)->noun, message,
			 name != NULL ? ", not '" : "", name != NULL ? name : "",
			 name != NULL ? "'" : "");
		return -1;
	}
	canon = xd_xdstp_canon(name, strlen(name), &len, &pt, &reason);
	if (canon == NULL) {
		snprintf(why, whylen, "'%s' is not a valid xdstp:// name: %s",
			 name, reason);
		return -1;
	}
	if (pt.type_len != strlen(message) ||
	    memcmp(canon + pt.type, message, pt.type_len) != 0)
		snprintf(why, whylen, "'%s' names the type %.*s, not %s", name,
			 (int)pt.type_len, canon + pt.type, message);
	else if (pt.glob)
		snprintf(why, whylen, "'%s' is a glob, not the name of a collection",
			 name);
	else if (pt.fragment)
		snprintf(why, whylen, "the name '%s' has a '#' fragment: directives belong in references, not in names",
			 name);
	else {
		*out = canon;
		return 0;
	}
	free(canon);
	return -1;
}

static int locator(struct walk *w, size_t i, const uint8_t *data, size_t len)
{
	const char *message = xd_rtype_info(xd_ctype_info(w->c)->member)->message;
	struct xd_xdstp_parts pt;
	const char *reason;
	size_t n;
	char *name = xd_xdstp_from_locator(data, len, &n, &pt, &reason);
	int rc = -1;

	if (name == NULL)
		return fail(w, "entries[%zu].locator: %s", i, reason);
	if (pt.type_len != strlen(message) ||
	    memcmp(name + pt.type, message, pt.type_len) != 0)
		fail(w, "entries[%zu].locator: '%s' names the type %.*s, but a %s holds %ss",
		     i, name, (int)pt.type_len, name + pt.type,
		     xd_ctype_info(w->c)->noun,
		     xd_rtype_info(xd_ctype_info(w->c)->member)->noun);
	else if (pt.glob)
		fail(w, "entries[%zu].locator: '%s' is a glob collection; a locator here names one resource",
		     i, name);
	else {
		add_member(&w->members, &w->nmembers, &w->cap_members, name, n, i);
		add_ref(w, xd_ctype_info(w->c)->member, name);
		rc = 0;
	}
	free(name);
	return rc;
}

/* protoc-gen-validate's pattern for an inline entry's name:
 * ^[0-9a-zA-Z_\-\.~:]+$ */
static bool label_ok(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		bool ok = (s[i] >= 'a' && s[i] <= 'z') ||
			  (s[i] >= 'A' && s[i] <= 'Z') ||
			  (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
			  s[i] == '-' || s[i] == '.' || s[i] == '~' || s[i] == ':';

		if (!ok)
			return false;
	}
	return len > 0;
}

/* An InlineEntry with `value` (of its Any) in place of the resource's. */
static struct xd_span rewrite_inline(const uint8_t *data, size_t len,
				     const char *type_url, const uint8_t *value,
				     size_t vlen)
{
	struct xd_buf b = XD_BUF_INIT;
	const uint8_t *p = data, *end = data + len;
	struct xd_wire_field f;
	size_t mark, n;
	struct xd_span out;

	/* InlineEntry's fields in number order: the resource is the last */
	for (const uint8_t *start = p; xd_wire_next(&p, end, &f) == 1;
	     start = p)
		if (f.number != XD_INLINE_RESOURCE)
			xd_buf_append(&b, start, (size_t)(p - start));
	xd_wire_tag(&b, XD_INLINE_RESOURCE, XD_WT_LEN);
	mark = xd_wire_open(&b);
	xd_wire_bytes(&b, XD_ANY_TYPE_URL, type_url, strlen(type_url));
	xd_wire_bytes(&b, XD_ANY_VALUE, value, vlen);
	xd_wire_close(&b, mark);
	out.data = xd_buf_steal(&b, &n);
	out.len = (uint32_t)n;
	return out;
}

static int inline_entry(struct walk *w, size_t i, const uint8_t *data,
			size_t len)
{
	enum xd_rtype member = xd_ctype_info(w->c)->member;
	const char *url = xd_rtype_info(member)->type_url;
	const uint8_t *p = data, *end = data + len, *q, *qend;
	struct xd_wire_field f, label = {0}, res = {0}, type = {0}, value = {0};
	struct xd_resinfo info;
	char inner[400];
	uint8_t *renamed;
	size_t rlen;

	while (xd_wire_next(&p, end, &f) == 1) {
		if (f.wt != XD_WT_LEN)
			continue;
		if (f.number == XD_INLINE_NAME)
			label = f;
		else if (f.number == XD_INLINE_RESOURCE)
			res = f;
	}
	if (label.len > 0) {
		if (!label_ok(label.data, label.len))
			return fail(w, "entries[%zu].inline_entry.name: '%.*s' is not a valid entry name (letters, digits and _-.~: only)",
				    i, (int)label.len, (const char *)label.data);
		add_member(&w->labels, &w->nlabels, &w->cap_labels,
			   (const char *)label.data, label.len, i);
	}
	if (res.data == NULL)
		return fail(w, "entries[%zu].inline_entry: no resource", i);
	q = res.data;
	qend = res.data + res.len;
	while (xd_wire_next(&q, qend, &f) == 1) {
		if (f.number == XD_ANY_TYPE_URL && f.wt == XD_WT_LEN)
			type = f;
		else if (f.number == XD_ANY_VALUE && f.wt == XD_WT_LEN)
			value = f;
	}
	if (value.data == NULL) /* an empty resource: no bytes */
		value.data = res.data;
	if (type.len != strlen(url) || memcmp(type.data, url, type.len) != 0)
		return fail(w, "entries[%zu].inline_entry.resource: a %s holds %ss (\"@type\": %s), not '%.*s'",
			    i, xd_ctype_info(w->c)->noun,
			    xd_rtype_info(member)->noun, url, (int)type.len,
			    type.data != NULL ? (const char *)type.data : "");
	if (xd_resource_analyze(w->s, w->msg, member, value.data, value.len,
				NULL, &info, inner, sizeof(inner)) != 0)
		return fail(w, "entries[%zu].inline_entry.resource: %s", i, inner);
	add_member(&w->members, &w->nmembers, &w->cap_members, info.name,
		   strlen(info.name), i);
	for (size_t k = 0; k < info.nrefs; k++)
		add_ref(w, info.refs[k].type, info.refs[k].name);
	if (info.renamed) {
		/* rule X1: the canonical name in the resource too */
		renamed = xd_resource_rename(value.data, value.len, info.name,
					     &rlen);
		if (renamed == NULL) {
			xd_resinfo_clear(&info);
			return fail(w, "entries[%zu].inline_entry.resource: malformed resource", i);
		}
		w->rewritten[i] = rewrite_inline(data, len, url, renamed, rlen);
		w->any_rewritten = true;
		free(renamed);
	}
	xd_resinfo_clear(&info);
	return 0;
}

static int entry(struct walk *w, size_t i, const uint8_t *data, size_t len)
{
	const uint8_t *p = data, *end = data + len;
	struct xd_wire_field f, which = {0};

	/* a oneof: the last member on the wire is the one */
	while (xd_wire_next(&p, end, &f) == 1)
		if ((f.number == XD_ENTRY_LOCATOR || f.number == XD_ENTRY_INLINE) &&
		    f.wt == XD_WT_LEN)
			which = f;
	if (which.number == XD_ENTRY_LOCATOR)
		return locator(w, i, which.data, which.len);
	if (which.number == XD_ENTRY_INLINE)
		return inline_entry(w, i, which.data, which.len);
	return fail(w, "entries[%zu]: neither a locator nor an inline_entry", i);
}

static int by_name(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c != 0 ? c : (a->entry > b->entry) - (a->entry < b->entry);
}

/* Two of `v` with one name: the first such pair, in entry order. */
static int twice(struct walk *w, struct member *v, size_t n, const char *what)
{
	const struct member *a = NULL, *b = NULL;

	if (n > 1)
		qsort(v, n, sizeof(*v), by_name);
	for (size_t i = 1; i < n; i++)
		if (strcmp(v[i - 1].name, v[i].name) == 0 &&
		    (b == NULL || v[i].entry < b->entry)) {
			a = &v[i - 1];
			b = &v[i];
		}
	if (b == NULL)
		return 0;
	return fail(w, "entries[%zu]: %s '%s' again (first in entries[%zu])",
		    b->entry, what, b->name, a->entry);
}

static int by_ref(const void *pa, const void *pb)
{
	const struct xd_ref *a = pa, *b = pb;

	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The collection's bytes with the rewritten entries in place. */
static uint8_t *rebuild(const struct walk *w, const uint8_t *data, size_t len,
			size_t *out_len)
{
	struct xd_buf b = XD_BUF_INIT;
	const uint8_t *p = data, *end = len > 0 ? data + len : data;
	struct xd_wire_field f;
	size_t i = 0, mark;

	for (const uint8_t *start = p; xd_wire_next(&p, end, &f) == 1;
	     start = p) {
		if (f.number != XD_COLLECTION_ENTRIES || f.wt != XD_WT_LEN ||
		    w->rewritten[i].data == NULL) {
			i += f.number == XD_COLLECTION_ENTRIES && f.wt == XD_WT_LEN;
			xd_buf_append(&b, start, (size_t)(p - start));
			continue;
		}
		xd_wire_tag(&b, XD_COLLECTION_ENTRIES, XD_WT_LEN);
		mark = xd_wire_open(&b);
		xd_wire_bytes(&b, XD_ENTRY_INLINE, w->rewritten[i].data,
			      w->rewritten[i].len);
		xd_wire_close(&b, mark);
		i++;
	}
	return xd_buf_steal(&b, out_len);
}

int xd_collection_analyze(const struct xd_schema *s, enum xd_ctype c,
			  const struct xd_msgdesc *member, const char *name,
			  const uint8_t *data, size_t len,
			  struct xd_collinfo *out, char *why, size_t whylen)
{
	struct walk w = {.s = s, .c = c, .msg = member, .why = why,
			 .whylen = whylen};
	/* an empty collection may come as no bytes at all */
	const uint8_t *p = data, *end = len > 0 ? data + len : data;
	struct xd_wire_field f;
	size_t u = 0;
	int rc = -1, wrc;

	memset(out, 0, sizeof(*out));
	if (own_name(name, c, &out->name, why, whylen) != 0)
		return -1;
	while ((wrc = xd_wire_next(&p, end, &f)) == 1)
		if (f.number == XD_COLLECTION_ENTRIES && f.wt == XD_WT_LEN)
			w.nentries++;
	w.rewritten = xd_calloc(w.nentries + 1, sizeof(*w.rewritten));
	p = data;
	for (size_t i = 0; wrc == 0 && xd_wire_next(&p, end, &f) == 1;) {
		if (f.number != XD_COLLECTION_ENTRIES || f.wt != XD_WT_LEN)
			continue;
		if (entry(&w, i++, f.data, f.len) != 0)
			goto out;
	}
	if (wrc != 0) {
		fail(&w, "malformed collection");
		goto out;
	}
	if (twice(&w, w.members, w.nmembers, "the member") != 0 ||
	    twice(&w, w.labels, w.nlabels, "the entry name") != 0)
		goto out;
	if (w.nrefs > 1)
		qsort(w.refs, w.nrefs, sizeof(*w.refs), by_ref);
	for (size_t i = 0; i < w.nrefs; i++) {
		if (u > 0 && by_ref(&w.refs[u - 1], &w.refs[i]) == 0)
			free((char *)w.refs[i].name);
		else
			w.refs[u++] = w.refs[i];
	}
	out->refs = w.refs;
	out->nrefs = u;
	w.refs = NULL;
	w.nrefs = 0;
	if (w.any_rewritten)
		out->data = rebuild(&w, data, len, &out->len);
	rc = 0;
out:
	for (size_t i = 0; i < w.nmembers; i++)
		free(w.members[i].name);
	for (size_t i = 0; i < w.nlabels; i++)
		free(w.labels[i].name);
	for (size_t i = 0; i < w.nrefs; i++)
		free((char *)w.refs[i].name);
	for (size_t i = 0; i < w.nentries; i++)
		free((void *)w.rewritten[i].data);
	free(w.members);
	free(w.labels);
	free(w.refs);
	free(w.rewritten);
	if (rc != 0)
		xd_collinfo_clear(out);
	return rc;
}

void xd_collinfo_clear(struct xd_collinfo *ci)
{
	free(ci->name);
	for (size_t i = 0; i < ci->nrefs; i++)
		free((char *)ci->refs[i].name);
	free(ci->refs);
	free(ci->data);
	memset(ci, 0, sizeof(*ci));
}
