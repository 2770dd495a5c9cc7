/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/dump.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "schema/pbjson.h"
#include "util/jsonw.h"
#include "util/xalloc.h"
#include "xds/xdstp.h"

#define ARG_MAX 1024

/* The resource as JSON with its "@type" first, as Envoy shows an Any. */
static void resource_json(struct xd_jw *w, const struct xd_schema *schema,
			  const struct xd_msgdesc *m, const char *type_url,
			  const struct xd_entry *e)
{
	struct xd_diag diag = XD_DIAG_INIT;
	json_t *body = xd_pbjson_print(schema, m, e->msg.data, e->msg.len, 0,
				       &diag);
	json_t *any = json_object();
	char *text;

	json_object_set_new(any, "@type", json_string(type_url));
	if (body != NULL) {
		json_object_update(any, body);
		json_decref(body);
	} else {
		/* it was checked at load: a failure here is a bug, shown
		 * rather than hidden */
		json_object_set_new(any, "error",
				    json_string(diag.count ? diag.msgs[0] : "cannot print"));
	}
	text = json_dumps(any, JSON_COMPACT | JSON_ENSURE_ASCII);
	xd_jw_raw(w, text, strlen(text));
	free(text);
	json_decref(any);
	xd_diag_clear(&diag);
}

static void entry_json(struct xd_jw *w, const struct xd_schema *schema,
		       const struct xd_msgdesc *m, const char *type_url,
		       const struct xd_entry *e)
{
	xd_jw_obj(w);
	xd_jw_key(w, "name");
	xd_jw_strn(w, e->name, e->name_len);
	xd_jw_key(w, "version");
	xd_jw_str(w, e->version);
	xd_jw_key(w, "file");
	xd_jw_str(w, e->file);
	xd_jw_key(w, "line");
	xd_jw_uint(w, e->line);
	xd_jw_key(w, "resource");
	if (xd_rtype_url_secret(type_url, strlen(type_url)))
		/* private keys do not leave through a debugging page */
		xd_jw_str(w, "(secret: not shown)");
	else
		resource_json(w, schema, m, type_url, e);
	xd_jw_obj_end(w);
}

/* A type's object up to its resources' array, opened. */
static void type_open(struct xd_jw *w, int t, const struct xd_table *table)
{
	struct xd_section_info sec = xd_section(t);

	xd_jw_obj(w);
	xd_jw_key(w, "type");
	xd_jw_str(w, sec.key);
	xd_jw_key(w, "type_url");
	xd_jw_str(w, sec.type_url);
	xd_jw_key(w, "version");
	xd_jw_str(w, xd_table_version(table));
	xd_jw_key(w, "resources");
	xd_jw_arr(w);
}

/* 400 or 404 with a reason. */
static void refuse(struct xd_http_exchange *x, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void refuse(struct xd_http_exchange *x, int status, const char *fmt, ...)
{
	char msg[ARG_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xd_http_text(x, status, msg);
}

/* "default, edge" */
static void list_keys(struct xd_snapshot **snaps, size_t n, char *out,
		      size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "",
					xd_snapshot_key(snaps[i]));
}

static struct xd_snapshot *pick(struct xd_http_exchange *x,
				struct xd_snapshot **snaps, size_t n)
{
	char key[ARG_MAX], keys[512];
	int rc = xd_http_query_get(x->query, "snapshot", key, sizeof(key));

	list_keys(snaps, n, keys, sizeof(keys));
	if (rc < 0) {
		refuse(x, 400, "snapshot: a key of at most %d bytes, percent-encoded",
		       ARG_MAX - 1);
		return NULL;
	}
	if (rc == 0) {
		if (n == 1)
			return snaps[0];
		refuse(x, 400, "which snapshot? ?snapshot=KEY, one of: %s", keys);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(xd_snapshot_key(snaps[i]), key) == 0)
			return snaps[i];
	refuse(x, 404, "no snapshot '%s'; served: %s", key, keys);
	return NULL;
}

/* The type asked for: 0 and *all, 0 and *type (a section), or -1
 * (answered). */
static int pick_type(struct xd_http_exchange *x, int *type, bool *all)
{
	char name[64], list[256];
	int rc = xd_http_query_get(x->query, "type", name, sizeof(name));
	size_t n = 0;

	*all = rc == 0;
	if (rc == 0)
		return 0;
	for (int t = 0; rc > 0 && t < XD_SECTION_COUNT; t++) {
		if (strcmp(xd_section(t).key, name) == 0) {
			*type = t;
			return 0;
		}
	}
	for (int t = 0; t < XD_SECTION_COUNT; t++) {
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
				      t ? ", " : "", xd_section(t).key);
		/* every section's key fits: `list + n` stays inside */
		XD_ASSERT_INFO(n < sizeof(list), "type list at '%s'",
			       xd_section(t).key);
	}
	refuse(x, 400, "type must be one of: %s", list);
	return -1;
}

/* A resource by its name as an operator writes it: an xdstp name by any
 * spelling of it, as clients subscribe (rule X1), since tables hold the
 * canonical form; one that is not well formed names nothing. */
static const struct xd_entry *find(const struct xd_table *t, const char *name)
{
	const struct xd_entry *e;
	const char *why;
	size_t len;
	char *canon;

	if (!xd_xdstp_is(name, strlen(name)))
		return xd_table_find(t, name, strlen(name));
	canon = xd_xdstp_canon(name, strlen(name), &len, NULL, &why);
	if (canon == NULL)
		return NULL;
	e = xd_table_find(t, canon, len);
	free(canon);
	return e;
}

/*
 * The page's place between two steps (pager.h). It holds a reference
 * on the snapshot: a reload meanwhile installs another one, and the
 * page goes on writing the snapshot it began with, whole and
 * consistent (its tables never change).
 */
struct page {
	struct xd_snapshot *snap;
	const struct xd_schema *schema;
	const struct xd_entry *only; /* ?name=: that resource only */
	int type;                    /* ?type=, or -1: every non-empty one */
	int t;                       /* the section being written */
	size_t i;                    /* its next entry */
	bool begun, in_type;
	struct xd_jw w;
};

/* Whether section `t` is in the page. */
static bool shown(const struct page *pg, int t)
{
	return pg->type < 0 ? xd_table_count(xd_snapshot_section(pg->snap, t)) > 0 :
			      t == pg->type;
}

static bool step(void *st, struct xd_http_exchange *x, uint64_t deadline_ns)
{
	struct page *pg = st;
	struct xd_jw *w = &pg->w;
	char since[32];

	if (!pg->begun) {
		pg->begun = true;
		xd_jw_init(w, &x->out);
		xd_jw_obj(w);
		xd_jw_key(w, "snapshot");
		xd_jw_str(w, xd_snapshot_key(pg->snap));
		xd_jw_key(w, "version");
		xd_jw_str(w, xd_snapshot_version(pg->snap));
		xd_jw_key(w, "since");
		xd_jw_time(since, xd_snapshot_since(pg->snap));
		xd_jw_str(w, since);
		xd_jw_key(w, "types");
		xd_jw_arr(w);
	}
	XD_ASSERT(w->out == &x->out);
	for (; pg->t < XD_SECTION_COUNT; pg->t++) {
		const struct xd_table *table = xd_snapshot_section(pg->snap, pg->t);
		struct xd_section_info sec = xd_section(pg->t);
		const struct xd_msgdesc *m =
			xd_schema_find_message(pg->schema, sec.message);

		if (!pg->in_type) {
			if (!shown(pg, pg->t))
				continue;
			type_open(w, pg->t, table);
			pg->in_type = true;
			pg->i = 0;
			if (pg->only != NULL)
				entry_json(w, pg->schema, m, sec.type_url, pg->only);
		}
		/* a resource's JSON costs microseconds: the clock (and what
		 * the page holds unsent) is read after each */
		while (pg->only == NULL && pg->i < xd_table_count(table)) {
			entry_json(w, pg->schema, m, sec.type_url,
				   xd_table_at(table, pg->i++));
			if (xd_pager_enough(x, deadline_ns))
				return false;
		}
		xd_jw_arr_end(w);
		xd_jw_obj_end(w);
		pg->in_type = false;
	}
	xd_jw_arr_end(w);
	xd_jw_obj_end(w);
	XD_ASSERT(w->depth == 0 && !w->after_key);
	xd_buf_putc(&x->out, '\n');
	return true;
}

static void page_free(void *st)
{
	struct page *pg = st;

	xd_snapshot_unref(pg->snap);
	free(pg);
}

static const struct xd_pager_page dump_page = {step, page_free};

static void dump(struct xd_http_exchange *x, const struct xd_admin_deps *deps,
		 struct xd_pager *pager, struct xd_snapshot *snap)
{
	char name[ARG_MAX];
	const struct xd_entry *only = NULL;
	int type = XD_CLUSTER;
	bool all;
	int rc;
	struct page *pg;

	if (pick_type(x, &type, &all) != 0)
		return;
	rc = xd_http_query_get(x->query, "name", name, sizeof(name));
	if (rc != 0 && all) {
		refuse(x, 400, "name needs a type: ?type=clusters&name=...");
		return;
	}
	if (rc < 0) {
		refuse(x, 400, "name: at most %d bytes, percent-encoded", ARG_MAX - 1);
		return;
	}
	if (rc > 0) {
		only = find(xd_snapshot_section(snap, type), name);
		if (only == NULL) {
			refuse(x, 404, "snapshot '%s' has no %s named '%s'",
			       xd_snapshot_key(snap), xd_section(type).noun, name);
			return;
		}
	}
	pg = xd_calloc(1, sizeof(*pg));
	pg->snap = xd_snapshot_ref(snap);
	pg->schema = deps->schema;
	pg->only = only;
	pg->type = all ? -1 : type;
	x->content_type = "application/json";
	xd_pager_start(pager, x, &dump_page, pg);
}

void xd_dump_handle(struct xd_http_exchange *x, const struct xd_admin_deps *deps,
		    struct xd_pager *pager)
{
	size_t n;
	struct xd_snapshot **snaps = xd_cache_snapshots(deps->cache, &n);
	struct xd_snapshot *snap = pick(x, snaps, n);

	if (snap != NULL)
		dump(x, deps, pager, snap);
	for (size_t i = 0; i < n; i++)
		xd_snapshot_unref(snaps[i]);
	free(snaps);
}
