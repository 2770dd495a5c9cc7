/* SPDX-License-Identifier: Apache-2.0 */
#include "snapshot/snapshot.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/loop_thread.h"
#include "util/xalloc.h"

struct xd_snapshot {
	atomic_uint refs;
	char *key;
	struct xd_table *tables[XD_RTYPE_COUNT];
	/* list collections (rule X3); a view has none of its own */
	struct xd_table *colls[XD_CTYPE_COUNT];
	struct xd_snapshot *base; /* for a view: what it shows part of */
	char version[17];
	int64_t since_ms; /* loop thread: xd_snapshot_set_since */
};

static atomic_size_t live;

/* `colls` NULL: a view's, whose collections are its base's. */
static struct xd_snapshot *make(const char *key,
				struct xd_table *tables[XD_RTYPE_COUNT],
				struct xd_table *colls[XD_CTYPE_COUNT])
{
	struct xd_snapshot *s = xd_calloc(1, sizeof(*s));
	uint64_t vhashes[XD_RTYPE_COUNT + XD_CTYPE_COUNT];
	size_t n = XD_RTYPE_COUNT;

	atomic_init(&s->refs, 1);
	atomic_fetch_add_explicit(&live, 1, memory_order_relaxed);
	s->key = xd_strdup(key);
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		s->tables[t] = tables[t] != NULL ? tables[t] :
						   xd_table_empty((enum xd_rtype)t);
		tables[t] = NULL;
		vhashes[t] = xd_table_vhash(s->tables[t]);
	}
	for (int c = 0; colls != NULL && c < XD_CTYPE_COUNT; c++) {
		s->colls[c] = colls[c] != NULL ?
				      colls[c] :
				      xd_table_builder_finish(xd_table_builder_new_url(
					      xd_ctype_info((enum xd_ctype)c)->type_url));
		colls[c] = NULL;
		/* only when there are some: a snapshot without collections
		 * keeps the version it had before they existed */
		if (xd_table_count(s->colls[c]) > 0)
			n = XD_RTYPE_COUNT + XD_CTYPE_COUNT;
	}
	for (int c = 0; n > XD_RTYPE_COUNT && c < XD_CTYPE_COUNT; c++)
		vhashes[XD_RTYPE_COUNT + c] = xd_table_vhash(s->colls[c]);
	snprintf(s->version, sizeof(s->version), "%016llx",
		 (unsigned long long)XXH3_64bits(vhashes, n * sizeof(vhashes[0])));
	return s;
}

struct xd_snapshot *xd_snapshot_new(const char *key,
				    struct xd_table *tables[XD_RTYPE_COUNT])
{
	struct xd_table *colls[XD_CTYPE_COUNT] = {NULL};

	return make(key, tables, colls);
}

struct xd_snapshot *xd_snapshot_with_collections(
	const char *key, struct xd_table *tables[XD_RTYPE_COUNT],
	struct xd_table *colls[XD_CTYPE_COUNT])
{
	return make(key, tables, colls);
}

struct xd_snapshot *xd_snapshot_view_new(struct xd_snapshot *base,
					 struct xd_table *tables[XD_RTYPE_COUNT])
{
	struct xd_snapshot *s = make(base->key, tables, NULL);

	s->base = xd_snapshot_ref(xd_snapshot_base(base));
	return s;
}

struct xd_snapshot *xd_snapshot_base(struct xd_snapshot *s)
{
	return s->base != NULL ? s->base : s;
}

struct xd_snapshot *xd_snapshot_ref(struct xd_snapshot *s)
{
	unsigned old = atomic_fetch_add_explicit(&s->refs, 1,
						 memory_order_relaxed);

	/* one at 0 is being freed: no reference can be taken */
	XD_ASSERT_INFO(old > 0, "snapshot '%s'", s->key);
	return s;
}

void xd_snapshot_unref(struct xd_snapshot *s)
{
	unsigned old;

	if (s == NULL)
		return;
	old = atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel);
	/* XD_UNREF's check, atomically: loader threads drop references */
	XD_ASSERT_INFO(old > 0, "reference dropped below zero: snapshot '%s'%s",
		       s->key, s->base != NULL ? " (a view)" : "");
	if (old != 1)
		return;
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_table_unref(s->tables[t]);
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		xd_table_unref(s->colls[c]);
	xd_snapshot_unref(s->base);
	free(s->key);
	free(s);
	atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
}

const char *xd_snapshot_key(const struct xd_snapshot *s)
{
	return s->key;
}

struct xd_table *xd_snapshot_table(const struct xd_snapshot *s,
				   enum xd_rtype type)
{
	XD_ASSERT_INFO(type < XD_RTYPE_COUNT, "snapshot '%s', type %d", s->key,
		       (int)type);
	return s->tables[type];
}

struct xd_table *xd_snapshot_collection(const struct xd_snapshot *s,
					enum xd_ctype c)
{
	XD_ASSERT_INFO(c < XD_CTYPE_COUNT, "snapshot '%s', collection type %d",
		       s->key, (int)c);
	return s->base != NULL ? s->base->colls[c] : s->colls[c];
}

struct xd_table *xd_snapshot_section(const struct xd_snapshot *s, int t)
{
	XD_ASSERT_INFO(t >= 0 && t < XD_SECTION_COUNT, "snapshot '%s', section %d",
		       s->key, t);
	return t < XD_RTYPE_COUNT ?
		       xd_snapshot_table(s, (enum xd_rtype)t) :
		       xd_snapshot_collection(s, (enum xd_ctype)(t - XD_RTYPE_COUNT));
}

const char *xd_snapshot_version(const struct xd_snapshot *s)
{
	return s->version;
}

void xd_snapshot_set_since(struct xd_snapshot *s, int64_t wall_ms)
{
	XD_ASSERT_LOOP();
	s->since_ms = wall_ms;
}

int64_t xd_snapshot_since(const struct xd_snapshot *s)
{
	return s->since_ms;
}

bool xd_snapshot_same(const struct xd_snapshot *a, const struct xd_snapshot *b)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (!xd_table_same(a->tables[t], b->tables[t]))
			return false;
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		if (!xd_table_same(xd_snapshot_collection(a, (enum xd_ctype)c),
				   xd_snapshot_collection(b, (enum xd_ctype)c)))
			return false;
	return true;
}

void xd_snapshot_describe(const struct xd_snapshot *s, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int t = XD_CLUSTER; n < len; t = (t + 1) % XD_RTYPE_COUNT) {
		/* in the order operators read them: clusters first */
		size_t count = xd_table_count(s->tables[t]);

		if (count > 0)
			n += (size_t)snprintf(buf + n, len - n, "%s%s %zu",
					      n ? ", " : "",
					      xd_rtype_info((enum xd_rtype)t)->snapshot_key,
					      count);
		if ((t + 1) % XD_RTYPE_COUNT == XD_CLUSTER)
			break;
	}
	for (int c = 0; c < XD_CTYPE_COUNT && n < len; c++) {
		size_t count = xd_table_count(xd_snapshot_collection(s, (enum xd_ctype)c));

		if (count > 0)
			n += (size_t)snprintf(buf + n, len - n, "%s%s %zu",
					      n ? ", " : "",
					      xd_ctype_info((enum xd_ctype)c)->snapshot_key,
					      count);
	}
	if (n == 0)
		snprintf(buf, len, "empty");
}

size_t xd_snapshot_live(void)
{
	return atomic_load_explicit(&live, memory_order_relaxed);
}
