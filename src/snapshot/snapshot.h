/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A snapshot: everything one group of nodes receives, one table per
 * resource type (docs/design.md §3). Built off the loop thread, then immutable
 * and shared; refcounted (atomically, as loader threads and the loop
 * both hold snapshots).
 */
#ifndef XD_SNAPSHOT_SNAPSHOT_H
#define XD_SNAPSHOT_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/table.h"

struct xd_snapshot;

/*
 * A snapshot of `key` from one table per type (NULL: an empty table).
 * Takes over the references in `tables`.
 */
struct xd_snapshot *xd_snapshot_new(const char *key,
				    struct xd_table *tables[XD_RTYPE_COUNT]);

/*
 * The same with list collections (rule X3): `colls` (NULL: an empty
 * table; references taken over) beside the tables.
 */
struct xd_snapshot *xd_snapshot_with_collections(
	const char *key, struct xd_table *tables[XD_RTYPE_COUNT],
	struct xd_table *colls[XD_CTYPE_COUNT]);

/*
 * A view: `base` as one client may see it (protocol/derived.h,
 * xd_derived_snapshot_view), with `tables` (references taken over) in
 * place of its own. It keeps `base` alive, so that a session can tell
 * whether the cache still serves what it shows by comparing bases.
 */
struct xd_snapshot *xd_snapshot_view_new(struct xd_snapshot *base,
					 struct xd_table *tables[XD_RTYPE_COUNT]);

/* The snapshot a view shows part of; `s` itself for any other. */
struct xd_snapshot *xd_snapshot_base(struct xd_snapshot *s);

struct xd_snapshot *xd_snapshot_ref(struct xd_snapshot *s);
void xd_snapshot_unref(struct xd_snapshot *s);

const char *xd_snapshot_key(const struct xd_snapshot *s);
struct xd_table *xd_snapshot_table(const struct xd_snapshot *s,
				   enum xd_rtype type);

/*
 * The list collections of one type (rule X3), always a table (maybe
 * empty). A view shows its base's, whole: who may see which collection
 * is the session's to decide (protocol/derived.h, xd_derived_view).
 */
struct xd_table *xd_snapshot_collection(const struct xd_snapshot *s,
					enum xd_ctype c);

/* The table of section t (xds/rtype.h, xd_section): a type's or a
 * collection type's. */
struct xd_table *xd_snapshot_section(const struct xd_snapshot *s, int t);

/* Its content's version: a hash of every type's version (16 hex
 * digits), equal for equal content as the types' are; the collections'
 * count when there are some. */
const char *xd_snapshot_version(const struct xd_snapshot *s);

/* Since when its content has been served (Unix ms), set by the cache
 * when it installs the snapshot. Loop thread only. */
void xd_snapshot_set_since(struct xd_snapshot *s, int64_t wall_ms);
int64_t xd_snapshot_since(const struct xd_snapshot *s);

/* "clusters 3, endpoints 3, listeners 1, routes 1": the non-empty
 * sections and their sizes, collections last ("empty" when none). */
void xd_snapshot_describe(const struct xd_snapshot *s, char *buf, size_t len);

/* Same content: every type's version is equal, and so is who may see
 * what (table.h, xd_table_same). */
bool xd_snapshot_same(const struct xd_snapshot *a, const struct xd_snapshot *b);

/* Snapshots alive in the process now: the ones served, plus the ones a
 * reload superseded that sessions still hold (statistics, tests). */
size_t xd_snapshot_live(void);

#endif
