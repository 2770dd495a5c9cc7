/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Response bodies: what one response of one type carries, computed from
 * the client's subscription and what it already holds, and shared.
 *
 * A body is the whole encoded response except the per-stream nonce,
 * which the sender appends (protobuf accepts fields in any order):
 *   SotW   DiscoveryResponse {version_info, resources..., type_url}
 *   delta  DeltaDiscoveryResponse {system_version_info, resources...,
 *          type_url, removed_resources...}
 *
 * A body is ONE difference between what the client holds (its ledger,
 * ledger.h) and what it should hold (its subscription served from the
 * effective table), computed by one function per form (body.c:
 * diff_sotw, diff_delta, diff_heartbeat) that a reader can check
 * against docs/protocol.md's rules, which they cite.
 *
 * Bodies are memoized on a table, keyed by the ledger's state (its
 * table, wildcard and interned name sets) and the target's, so every
 * client in the same state shares one computed body: the bytes encoded
 * per push do not grow with the number of clients (docs/design.md §4).
 * A body is one contiguous refcounted grpc_slice; each send only adds
 * a reference and a nonce.
 *
 * What goes in (rules S7-S10, D3-D8, D10, X2, P1):
 *   SotW, full state (LDS, CDS): every subscribed resource, whenever the
 *     client holds nothing yet, its subscription grew, or the content
 *     differs from what it holds.
 *   SotW, other types: only subscribed resources that are new to the
 *     client or changed.
 *   delta: subscribed resources new to the client or changed (or, for a
 *     locator, another variant); held resources that no longer exist in
 *     removed_resources (a variant in removed_resource_names);
 *     explicitly subscribed names that do not exist and the client has
 *     not been told of, in removed_resources too (a virtual host's
 *     alias: a Resource with that alias and no body; rule D8). Names
 *     are looked up by alias too (VHDS).
 *   What the ledger owes once: names subscribed again are sent even if
 *     held (rule D5); names a reconnecting client held that are gone are
 *     listed as removed (rule D7).
 *   TTL forms carry each resource's TTL, and heartbeats carry only the
 *     TTLs (rule L1).
 *
 * Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_BODY_H
#define XD_PROTOCOL_BODY_H

#include <grpc/slice.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/ledger.h"
#include "protocol/nameset.h"
#include "snapshot/table.h"

/* How resources go to a client: what its method is and what its node
 * announced (rules L1, L2). */
enum xd_form {
	XD_FORM_SOTW,
	XD_FORM_SOTW_WRAPPED, /* resources wrapped in Resource (rule L2) */
	XD_FORM_DELTA,
	XD_FORM_SOTW_TTL,     /* wrapped, with TTLs (rule L1) */
	XD_FORM_DELTA_TTL,    /* delta, with TTLs */
};

static inline bool xd_form_delta(enum xd_form f)
{
	return f == XD_FORM_DELTA || f == XD_FORM_DELTA_TTL;
}

static inline bool xd_form_ttl(enum xd_form f)
{
	return f == XD_FORM_SOTW_TTL || f == XD_FORM_DELTA_TTL;
}

struct xd_want {
	struct xd_table *table;      /* the effective table to serve */
	struct xd_names sub;         /* what the client subscribes to */
	struct xd_ledger *ledger;    /* what it holds (never NULL) */
	enum xd_form form;
	bool full_state;             /* SotW LDS and CDS (rule S8) */
	/* A heartbeat (rule L1): the resources with a TTL that the client
	 * holds (the ledger), each a Resource with version, name and TTL
	 * and no body. Only the ledger and the form count. */
	bool heartbeat;
};

struct xd_body {
	unsigned refs;
	bool empty;          /* nothing to send */
	grpc_slice slice;    /* the response without its nonce */
	size_t nresources;   /* resources carried (with body) */
	size_t nmissing;     /* delta: names said not to exist (rule D8) */
	size_t nremoved;     /* delta: removed_resources */
	/* Every subscribed resource with a TTL is in it (in a TTL form), so
	 * the client's TTLs of this type start again: the next heartbeat is
	 * due a period after it (rule L1). */
	bool refreshes_ttl;
};

/* The body for `w` (a new reference). */
struct xd_body *xd_body_get(const struct xd_want *w);

struct xd_body *xd_body_ref(struct xd_body *b);
void xd_body_unref(struct xd_body *b);

/* Bodies computed rather than found in a cache, since start (tests and
 * benchmarks use it to show bodies are shared). */
unsigned long long xd_body_computed(void);

/* Bodies alive now (memoized on tables, or in a send), and in *bytes
 * (if not NULL) their size. */
size_t xd_body_live(size_t *bytes);

#endif
