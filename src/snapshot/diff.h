/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What replacing one set of snapshots with another changes: per
 * snapshot key, per section (type or collection type), the resources
 * added, removed and changed, with their versions before and after,
 * and for a full diff, each changed resource's text (snapshot/
 * restext.h) as `diff -u` shows it (util/linediff.h). A reload's
 * preview (POST /reload?dry_run=1, xdsctl diff) shows the full diff;
 * a reload's record keeps the summary: the counts, and the first
 * resources by name, without their text.
 *
 * A key is added, removed or changed; keys whose snapshot stays the
 * same (snapshot.h, xd_snapshot_same) are left out. A section is
 * listed when its table changed (table.h, xd_table_same), even when no
 * resource did (an "@allow" or a variant), so that "nothing changes"
 * means exactly that.
 *
 * Bounds: a full diff lists at most XD_DIFF_MAX_LISTED resources and
 * holds at most XD_DIFF_MAX_TEXT bytes of text (each resource's at most
 * XD_DIFF_MAX_RESOURCE_TEXT); a summary lists at most
 * XD_DIFF_SUMMARY_LISTED (a reload's record: twenty of them are kept);
 * the counts are always whole, and `cut` says when anything was left
 * out.
 *
 * Ownership: a diff owns everything in it; it refers to no snapshot.
 * Thread: any (snapshots are immutable; the schema is read-only); one
 * owner at a time.
 */
#ifndef XD_SNAPSHOT_DIFF_H
#define XD_SNAPSHOT_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "schema/schema.h"
#include "snapshot/snapshot.h"

#define XD_DIFF_MAX_LISTED 2000
#define XD_DIFF_MAX_TEXT (1024 * 1024)
#define XD_DIFF_MAX_RESOURCE_TEXT (64 * 1024)
#define XD_DIFF_SUMMARY_LISTED 20

enum xd_diff_change {
	XD_DIFF_ADDED,
	XD_DIFF_REMOVED,
	XD_DIFF_CHANGED,
};

struct xd_diff_res {
	enum xd_diff_change change;
	char *name;
	char before[17], after[17]; /* versions; "" where absent */
	char *text; /* the unified diff (whole text for added/removed), or
		       NULL when not kept */
};

struct xd_diff_section {
	int section; /* xds/rtype.h, xd_section */
	char before[17], after[17]; /* the table versions */
	size_t added, removed, changed;
	struct xd_diff_res *res; /* the first ones */
	size_t nres;
};

struct xd_diff_key {
	char *key;
	enum xd_diff_change change;
	char before[17], after[17]; /* snapshot versions; "" where absent */
	struct xd_diff_section *sections;
	size_t nsections;
	/* for the caller (the diff leaves it 0): streams the change moves,
	 * e.g. to the default snapshot when the key goes */
	size_t streams;
};

struct xd_diff {
	struct xd_diff_key *keys; /* sorted by key */
	size_t nkeys;
	size_t added, removed, changed; /* resources, over every key */
	size_t listed, text_bytes;
	bool cut; /* resources or text left out by the bounds */
};

/*
 * The diff of `before` into `after` (each sorted by key, as the cache
 * and the loader give them). `schema` NULL: the summary (counts and
 * versions, the first resources listed by name and versions, without
 * text); else the full diff.
 */
struct xd_diff *xd_diff_new(struct xd_snapshot *const *before, size_t nbefore,
			    struct xd_snapshot *const *after, size_t nafter,
			    const struct xd_schema *schema);

/* The key's entry, or NULL when it does not change. */
const struct xd_diff_key *xd_diff_find(const struct xd_diff *d,
				       const char *key);

/* "added", "removed", "changed" */
const char *xd_diff_change_name(enum xd_diff_change c);

void xd_diff_free(struct xd_diff *d);

#endif
