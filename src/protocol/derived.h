/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Values derived from a table and memoized on it: response bodies
 * (body.c), and what the ADS sequencer asks again and again (the endpoint
 * names a client's clusters need, whether a subscription covers them);
 * the make-before-break unions of two tables; and the views of a table
 * or snapshot that one identity may see.
 *
 * A key is a few numbers (flags, process-unique ids of other tables,
 * never addresses) and the name sets the value depends on. The memo
 * holds a reference to each of those sets: an entry never outlives what
 * its key names, and clients that subscribe to the same names later (the
 * sets are interned) find it, instead of a new entry piling up beside
 * one nobody can reach (bench/churn).
 *
 * A table keeps a bounded number of values, and a bounded number of
 * bytes of them (bodies and name sets): at most XD_DERIVED_SLOTS, and
 * at most twice the table's wire bytes or XD_DERIVED_MIN_BYTES,
 * whichever is larger. Most of a fleet is in the same state, so few are
 * needed at a time; when full, the oldest makes room: a recomputation,
 * never a wrong answer. Everything is freed with the table.
 *
 * Where a value is memoized matters for memory over time: one that
 * depends on a superseded table (a body for clients that hold it) is
 * best kept on that table, so that it goes when the last client moves
 * on and the table is freed (body.c does so).
 *
 * Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_DERIVED_H
#define XD_PROTOCOL_DERIVED_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/nameset.h"
#include "snapshot/snapshot.h"
#include "snapshot/table.h"

struct xd_body;
struct xd_ledger;

enum xd_derived_kind {
	XD_DERIVED_BODY,
	XD_DERIVED_REFS,
	XD_DERIVED_COVERED,
	XD_DERIVED_SHOWN, /* the restricted names an identity may see */
	XD_DERIVED_GLOB,  /* the members of a glob collection (rule X2) */
	XD_DERIVED_MISSING, /* the names of a set a table lacks (client.c) */
	XD_DERIVED_HELD,  /* whether a client holds names as a table has them */
};

#define XD_DERIVED_SLOTS 64
#define XD_DERIVED_MIN_BYTES (1024 * 1024)

/* What a value depends on beside the table it is memoized on. Unused
 * words are 0, unused sets NULL. The caller holds the sets; the memo
 * takes its own references when it stores. */
struct xd_derived_key {
	uint64_t words[3];
	struct xd_nameset *sets[4];
};

union xd_derived_value {
	struct xd_body *body;
	struct xd_nameset *set;
	bool flag;
};

/*
 * What storing a value hands over: the reference it holds, which
 * `release` (NULL: nothing to release) gives back when the memo lets
 * it go, and the bytes it keeps alive (for the memo's byte bound). So
 * the memo knows no value's type, and modules that memoize here (body.c)
 * are not known to it.
 */
struct xd_derived_owned {
	union xd_derived_value value;
	size_t bytes;
	void (*release)(union xd_derived_value value);
};

/* Looks a value up on `t`; true (and *out) when present. */
bool xd_derived_find(struct xd_table *t, enum xd_derived_kind kind,
		     const struct xd_derived_key *key,
		     union xd_derived_value *out);

/* Stores a value on `t`, which takes over the reference it holds. */
void xd_derived_store(struct xd_table *t, enum xd_derived_kind kind,
		      const struct xd_derived_key *key,
		      struct xd_derived_owned owned);

/*
 * `t` plus the entries of `old` whose names `t` lacks: what a client
 * keeps while the listeners and routes that used them are being replaced
 * (rule A2). `old` itself when it already is a union on `t`. Every client in
 * the same transition gets the same union (a registry of weak entries:
 * a union leaves it when freed). Returns a new reference.
 */
struct xd_table *xd_derived_union(struct xd_table *t, struct xd_table *old);

/*
 * `t` as a client proving `identity` (NULL: none) may see it: without
 * the entries it may not be served (table.h, xd_entry_allows), which
 * then do not exist for it. `t` itself when it hides nothing from that
 * client (always when nothing in `t` is restricted: the common case
 * costs one test). Every client shown the same entries of `t` gets the
 * same view, whatever its identity, so bodies stay computed once per
 * state: the globs are matched once per (table, identity) (memoized on
 * `t`), and views are shared by (table, names shown) through a registry
 * of weak entries, as unions are. A view keeps `t` alive and goes with
 * its last client. Returns a new reference.
 */
struct xd_table *xd_derived_view(struct xd_table *t, const char *identity);

/*
 * The snapshot `s` as `identity` may see it: each table's view; `s`
 * itself when no view hides anything. Otherwise a snapshot of its own
 * (xd_snapshot_view_new, whose base is `s`), made per call. Returns a
 * new reference.
 */
struct xd_snapshot *xd_derived_snapshot_view(struct xd_snapshot *s,
					     const char *identity);

/*
 * The names in `to` that the resources a client holds refer to: the
 * references of `from`'s entries restricted to `held` (all of them when
 * `all`) to resources of `to`'s type (the endpoints of clusters, the
 * clusters of route configurations). Borrowed (valid until the next
 * call). Memoized on `from`: endpoint-only reloads, the common kind,
 * replace `to` but leave the names the same.
 */
struct xd_nameset *xd_derived_refs(struct xd_table *to, struct xd_table *from,
				   bool all, struct xd_nameset *held);

/* Every name of `need` is in the subscription (`all`, or `set`). */
bool xd_derived_covered(struct xd_table *eds, struct xd_nameset *need,
			bool all, struct xd_nameset *set);

/*
 * Whether the client whose state is `held` (ledger.h) holds every name
 * of `need` as `t` has it: the same resource at the same version (a
 * client that names its clusters took up the new ones, rule A2). A name
 * `t` lacks is not needed. Memoized on `t` by the ledger's id: every
 * client in the same state asks it of the same target.
 */
bool xd_derived_held(struct xd_table *t, struct xd_nameset *need,
		     const struct xd_ledger *held);

/*
 * The names of the entries of `t` in the glob collection `glob` (rule
 * X2; canonical, xds/xdstp.h): those whose name is the glob's with its
 * "*" replaced by one path segment, with the same context parameters.
 * Memoized on `t` by the glob, so that every client subscribing to it
 * shares the work. Returns a new reference.
 */
struct xd_nameset *xd_derived_glob(struct xd_table *t, struct xd_name glob);

/* Whether `set` holds the glob collection that the canonical xdstp
 * name `name` belongs to (false at once when it holds no glob). */
bool xd_derived_in_glob(const struct xd_nameset *set, const char *name,
			size_t len);

#endif
