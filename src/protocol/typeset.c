/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/typeset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/derived.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

static const char *tname(enum xd_rtype t)
{
	return xd_rtype_info(t)->service;
}

const char *xd_typeset_cname(int c)
{
	return xd_ctype_info((enum xd_ctype)c)->snapshot_key;
}

/* The slots in use: none until the first request of their kind. */
static int ncolls(const struct xd_typeset *ts)
{
	return ts->colls != NULL ? XD_CTYPE_COUNT : 0;
}

static int nunknown(const struct xd_typeset *ts)
{
	return ts->unknown != NULL ? XD_TYPESET_MAX_UNKNOWN : 0;
}

static void need_colls(struct xd_typeset *ts)
{
	if (ts->colls != NULL)
		return;
	ts->colls = xd_calloc(XD_CTYPE_COUNT, sizeof(*ts->colls));
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		xd_sub_init(&ts->colls[c].sub, ts->stream_id,
			    xd_typeset_cname(c));
}

void xd_typeset_init(struct xd_typeset *ts, uint64_t stream_id)
{
	XD_ASSERT_LOOP();
	memset(ts, 0, sizeof(*ts));
	ts->stream_id = stream_id;
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_sub_init(&ts->subs[t], stream_id, tname((enum xd_rtype)t));
}

void xd_typeset_clear(struct xd_typeset *ts)
{
	XD_ASSERT_LOOP();
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_sub_clear(&ts->subs[t]);
	for (int i = 0; i < nunknown(ts); i++) {
		if (ts->unknown[i].table != NULL)
			xd_sub_clear(&ts->unknown[i].sub);
		xd_table_unref(ts->unknown[i].table);
	}
	for (int c = 0; c < ncolls(ts); c++) {
		xd_sub_clear(&ts->colls[c].sub);
		xd_table_unref(ts->colls[c].table);
	}
	free(ts->unknown);
	free(ts->colls);
	ts->unknown = NULL;
	ts->colls = NULL;
}

/* (a view is shared, and stays the same table while the snapshot
 * does) */
void xd_typeset_follow(struct xd_typeset *ts, const struct xd_snapshot *snap,
		       const char *identity)
{
	for (int c = 0; c < ncolls(ts); c++) {
		struct xd_extra_type *ct = &ts->colls[c];

		if (!xd_sub_active(&ct->sub))
			continue;
		xd_table_unref(ct->table);
		ct->table = snap == NULL ? NULL :
			xd_derived_view(xd_snapshot_collection(snap,
							       (enum xd_ctype)c),
					identity);
	}
}

/* The slot of an unknown type URL, taken on first use; NULL when the
 * stream already has all it may have. */
static struct xd_extra_type *unknown_slot(struct xd_typeset *ts,
					    struct xd_name url, bool *taken)
{
	struct xd_extra_type *free_slot = NULL;

	if (ts->unknown == NULL)
		ts->unknown = xd_calloc(XD_TYPESET_MAX_UNKNOWN,
					sizeof(*ts->unknown));
	for (int i = 0; i < XD_TYPESET_MAX_UNKNOWN; i++) {
		struct xd_extra_type *u = &ts->unknown[i];
		const char *have;

		if (u->table == NULL) {
			if (free_slot == NULL)
				free_slot = u;
			continue;
		}
		have = xd_table_type_url(u->table);
		if (strlen(have) == url.len && memcmp(have, url.data, url.len) == 0)
			return u;
	}
	if (free_slot == NULL)
		return NULL;
	free_slot->table = xd_table_empty_unknown(url.data, url.len);
	xd_sub_init(&free_slot->sub, ts->stream_id,
		    xd_table_type_url(free_slot->table));
	*taken = true;
	return free_slot;
}

/* A list collection type (rule X3): served from the snapshot's
 * collections, by name only (no wildcard), in SotW as routes are (not
 * full state: a client names the collections it wants). */
static void route_collection(struct xd_typeset *ts, enum xd_ctype c,
			     const struct xd_snapshot *snap,
			     const char *identity, struct xd_route *out)
{
	struct xd_extra_type *ct;

	need_colls(ts);
	ct = &ts->colls[c];
	if (ct->table == NULL && snap != NULL)
		ct->table = xd_derived_view(xd_snapshot_collection(snap, c),
					    identity);
	out->sub = &ct->sub;
	out->current = ct->table;
	out->wildcard_ok = false;
	out->full_state = false;
	out->label = xd_typeset_cname(c);
	out->type = XD_RTYPE_COUNT;
}

int xd_typeset_route(struct xd_typeset *ts, const struct xd_typeset_method *m,
		     const struct xd_request *r, const struct xd_snapshot *snap,
		     const char *identity, struct xd_route *out, char *why,
		     size_t why_len)
{
	enum xd_rtype t = m->type;

	XD_ASSERT_LOOP();
	memset(out, 0, sizeof(*out));
	if (!m->aggregated) {
		if (r->type_url.len > 0 &&
		    (xd_rtype_from_url(r->type_url.data, r->type_url.len, &t) != 0 ||
		     t != m->type)) {
			snprintf(why, why_len,
				 "type_url '%.*s' does not belong to %s (expected %s)",
				 (int)(r->type_url.len > 200 ? 200 : r->type_url.len),
				 r->type_url.data, m->name,
				 xd_rtype_info(m->type)->type_url);
			return -1;
		}
	} else if (r->type_url.len == 0) {
		snprintf(why, why_len, "%s",
			 "type_url is required on the aggregated service");
		return -1;
	} else if (xd_rtype_from_url(r->type_url.data, r->type_url.len, &t) != 0 ||
		   (!m->delta && xd_rtype_info(t)->by_glob)) {
		/* A type found by glob collections only (LEDS) is not served
		 * over SotW (rule G3): its message has no name field, so an
		 * unwrapped response could not say which endpoint is which,
		 * and nothing in SotW says a member left. Answered as a type
		 * xdsd does not serve (section 8.1). */
		struct xd_extra_type *u;
		enum xd_ctype c;

		out->delta_only = m->delta == false &&
				  xd_rtype_from_url(r->type_url.data,
						    r->type_url.len, &t) == 0;
		if (xd_ctype_from_url(r->type_url.data, r->type_url.len, &c) == 0) {
			route_collection(ts, c, snap, identity, out);
			return 0;
		}
		u = unknown_slot(ts, r->type_url, &out->new_unknown);
		if (u == NULL) {
			snprintf(why, why_len, "%s",
				 "too many unknown type URLs on one stream");
			return -1;
		}
		out->sub = &u->sub;
		out->current = u->table;
		out->wildcard_ok = false;
		out->full_state = true; /* SotW: one empty response */
		out->label = xd_table_type_url(u->table);
		out->type = XD_RTYPE_COUNT;
		return 0;
	}
	out->sub = &ts->subs[t];
	out->current = snap ? xd_snapshot_table(snap, t) : NULL;
	out->wildcard_ok = xd_rtype_info(t)->wildcard_ok;
	out->full_state = xd_rtype_info(t)->full_state;
	out->label = tname(t);
	out->type = t;
	return 0;
}

size_t xd_typeset_names(const struct xd_typeset *ts)
{
	size_t n = 0;

	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		n += xd_nameset_count(ts->subs[t].want.set);
	for (int i = 0; i < nunknown(ts); i++)
		if (ts->unknown[i].table != NULL)
			n += xd_nameset_count(ts->unknown[i].sub.want.set);
	for (int c = 0; c < ncolls(ts); c++)
		n += xd_nameset_count(ts->colls[c].sub.want.set);
	return n;
}

struct xd_body *xd_typeset_next(struct xd_typeset *ts, bool unknown,
				enum xd_form form, bool delta,
				struct xd_sub **sub, struct xd_table **table,
				const char **label)
{
	struct xd_extra_type *set = unknown ? ts->unknown : ts->colls;
	int n = unknown ? nunknown(ts) : ncolls(ts);

	for (int i = 0; i < n; i++) {
		struct xd_extra_type *e = &set[i];
		struct xd_body *b;

		if (e->table == NULL)
			continue;
		/* SotW: an unknown type once, as a type sent whole; a
		 * collection what changed, as for routes (rule S9) */
		b = xd_sub_next(&e->sub, e->table, form, unknown && !delta);
		if (b == NULL)
			continue;
		*sub = &e->sub;
		*table = e->table;
		*label = unknown ? xd_table_type_url(e->table) :
				   xd_typeset_cname(i);
		return b;
	}
	return NULL;
}

struct xd_body *xd_typeset_heartbeat(struct xd_typeset *ts, enum xd_form form,
				     uint64_t now, struct xd_sub **sub,
				     const char **label, uint64_t *next)
{
	uint64_t due;

	*next = 0;
	for (int t = 0; t < XD_RTYPE_COUNT + ncolls(ts); t++) {
		struct xd_sub *s = t < XD_RTYPE_COUNT ?
					   &ts->subs[t] :
					   &ts->colls[t - XD_RTYPE_COUNT].sub;
		/* SotW collections go as routes do, not whole */
		bool whole = t < XD_RTYPE_COUNT && !xd_form_delta(form) &&
			     xd_rtype_info((enum xd_rtype)t)->full_state;
		struct xd_body *b = xd_sub_heartbeat(s, form, whole, now, &due);

		if (b != NULL) {
			*sub = s;
			*label = t < XD_RTYPE_COUNT ?
					 tname((enum xd_rtype)t) :
					 xd_typeset_cname(t - XD_RTYPE_COUNT);
			return b;
		}
		if (due != 0 && (*next == 0 || due < *next))
			*next = due;
	}
	return NULL;
}

size_t xd_typeset_active(struct xd_typeset *ts,
			 struct xd_sub *out[XD_TYPESET_MAX_SUBS])
{
	size_t n = 0;

	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (xd_sub_active(&ts->subs[t]))
			out[n++] = &ts->subs[t];
	for (int k = 0; k < ncolls(ts); k++)
		if (xd_sub_active(&ts->colls[k].sub))
			out[n++] = &ts->colls[k].sub;
	for (int i = 0; i < nunknown(ts); i++)
		if (ts->unknown[i].table != NULL &&
		    xd_sub_active(&ts->unknown[i].sub))
			out[n++] = &ts->unknown[i].sub;
	return n;
}

void xd_typeset_view(const struct xd_typeset *ts,
		     const struct xd_snapshot *snap, struct xd_client_view *v)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_sub *sub = &ts->subs[t];

		if (!xd_sub_active(sub))
			continue;
		xd_client_view_type(v, sub,
				    snap ? xd_snapshot_table(snap, (enum xd_rtype)t) :
					   NULL,
				    tname((enum xd_rtype)t),
				    xd_rtype_info((enum xd_rtype)t)->type_url);
	}
	for (int k = 0; k < ncolls(ts); k++) {
		const struct xd_extra_type *ct = &ts->colls[k];

		if (!xd_sub_active(&ct->sub))
			continue;
		xd_client_view_type(v, &ct->sub, ct->table, xd_typeset_cname(k),
				    xd_ctype_info((enum xd_ctype)k)->type_url);
	}
	for (int i = 0; i < nunknown(ts); i++)
		if (ts->unknown[i].table != NULL)
			xd_client_view_type(v, &ts->unknown[i].sub,
					    ts->unknown[i].table,
					    xd_table_type_url(ts->unknown[i].table),
					    NULL);
}
