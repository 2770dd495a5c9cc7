/*
 * Values derived from a table and memoized on it: response bodies
 * (body.c), and what the ADS sequencer asks again and again (the endpoint
 * names a client's clusters need, whether a subscription covers them);
 * and the make-before-break unions of two tables.
 *
 * Keys are made of process-unique ids of tables and name sets, never
 * addresses, so a freed object can never be mistaken for a new one. A
 * table keeps a bounded number of values (most of a fleet is in the same
 * state); when full, the oldest makes room: a recomputation, never a
 * wrong answer. Everything is freed with the table.
 *
 * Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_DERIVED_H
#define XD_PROTOCOL_DERIVED_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/nameset.h"
#include "snapshot/table.h"

struct xd_body;

enum xd_derived_kind {
	XD_DERIVED_BODY,
	XD_DERIVED_EDS_REFS,
	XD_DERIVED_COVERED,
};

#define XD_DERIVED_KEY_WORDS 7

union xd_derived_value {
	struct xd_body *body;
	struct xd_nameset *set;
	bool flag;
};

/* Looks a value up on `t`; true (and *out) when present. */
bool xd_derived_find(struct xd_table *t, enum xd_derived_kind kind,
		     const uint64_t key[XD_DERIVED_KEY_WORDS],
		     union xd_derived_value *out);

/* Stores a value on `t`, which takes over the reference it holds. */
void xd_derived_store(struct xd_table *t, enum xd_derived_kind kind,
		      const uint64_t key[XD_DERIVED_KEY_WORDS],
		      union xd_derived_value value);

/*
 * `t` plus the entries of `old` whose names `t` lacks: what a client
 * keeps while the listeners and routes that used them are being replaced
 * (A2). `old` itself when it already is a union on `t`. Every client in
 * the same transition gets the same union (a registry of weak entries:
 * a union leaves it when freed). Returns a new reference.
 */
struct xd_table *xd_derived_union(struct xd_table *t, struct xd_table *old);

/*
 * The endpoint names (in `eds`) that the clusters a client holds refer
 * to: `cds` restricted to `held` (all of it when `all`). Borrowed.
 */
struct xd_nameset *xd_derived_eds_refs(struct xd_table *eds,
				       struct xd_table *cds, bool all,
				       struct xd_nameset *held);

/* Every name of `need` is in the subscription (`all`, or `set`). */
bool xd_derived_covered(struct xd_table *eds, struct xd_nameset *need,
			bool all, struct xd_nameset *set);

#endif
