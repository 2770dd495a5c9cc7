/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every type one stream subscribes to, and which of them a request is
 * about (rule T3):
 *
 *   served types     one xd_sub per type xdsd serves (rtype.h)
 *   list collections (rule X3) on the aggregated methods only, by name,
 *                    from the snapshot's collection tables as the
 *                    stream's identity may see them (derived.h)
 *   unknown types    type URLs xdsd does not serve, asked for on an
 *                    aggregated stream: an empty table of that URL,
 *                    answered like any other type
 *                    (docs/protocol.md §8.1) rather than ending the
 *                    stream, which would disturb every other type; at most
 *                    XD_TYPESET_MAX_UNKNOWN of them
 *
 * On a per-type method a request for another type is refused.
 *
 * Ownership: the session embeds a struct xd_typeset and owns it
 * (xd_typeset_init .. xd_typeset_clear), with its slots of unknown
 * types and collections; it holds a reference to each collection and
 * unknown table in it. Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_TYPESET_H
#define XD_PROTOCOL_TYPESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/body.h"
#include "protocol/client.h"
#include "protocol/request.h"
#include "protocol/sub.h"
#include "snapshot/snapshot.h"

#define XD_TYPESET_MAX_UNKNOWN XD_CLIENT_MAX_UNKNOWN

/* A type beside those xdsd serves: its subscription and the table it
 * is answered from. For a type xdsd does not serve, an empty table of
 * its URL (NULL: a free slot); for a list collection, the snapshot's
 * (NULL until it is asked for and a snapshot exists). */
struct xd_extra_type {
	struct xd_table *table;
	struct xd_sub sub;
};

struct xd_typeset {
	uint64_t stream_id; /* whose (sub.h's logs) */
	struct xd_sub subs[XD_RTYPE_COUNT];
	/* Few streams ask for unknown types or collections: their slots
	 * (XD_TYPESET_MAX_UNKNOWN, XD_CTYPE_COUNT) are allocated on the
	 * first such request, 1.5 KB less on every other stream. */
	struct xd_extra_type *unknown; /* NULL: none asked for yet */
	struct xd_extra_type *colls;   /* NULL: none asked for yet */
};

/* Where a request goes: one type's subscription, the table it is
 * answered from, and how that type behaves. */
struct xd_route {
	struct xd_sub *sub;
	struct xd_table *current; /* may be NULL before a snapshot */
	bool wildcard_ok, full_state;
	const char *label;        /* "CDS", or an unknown type's URL */
	enum xd_rtype type;       /* XD_RTYPE_COUNT: not a served type */
	bool new_unknown;         /* an unknown type URL, asked first now */
	bool delta_only;          /* ... of a type served by delta only
				     (LEDS over SotW, rule G3) */
};

/* A collection type in logs and for operators: its snapshot section. */
const char *xd_typeset_cname(int c);

void xd_typeset_init(struct xd_typeset *ts, uint64_t stream_id);
void xd_typeset_clear(struct xd_typeset *ts);

/* The collection tables of the types asked for, from `snap` (a view,
 * or NULL) as `identity` may see them. */
void xd_typeset_follow(struct xd_typeset *ts, const struct xd_snapshot *snap,
		       const char *identity);

/* The stream's method, as routing needs it (transport/methods.h). */
struct xd_typeset_method {
	const char *name; /* named in refusals */
	bool aggregated;
	enum xd_rtype type; /* a per-type method's */
	bool delta;
};

/*
 * Finds the type a request on method `m` is about, with `snap` the
 * stream's snapshot now (a view, or NULL). Returns 0, or -1 with why
 * the stream must end (INVALID_ARGUMENT) in `why`.
 */
int xd_typeset_route(struct xd_typeset *ts, const struct xd_typeset_method *m,
		     const struct xd_request *r, const struct xd_snapshot *snap,
		     const char *identity, struct xd_route *out, char *why,
		     size_t why_len);

/* Every name the stream subscribes to, all types together. */
size_t xd_typeset_names(const struct xd_typeset *ts);

/* The next body a type xdsd does not serve (`unknown`), or else a list
 * collection, has due in `form` on a delta stream or not (new
 * reference), with the subscription, table and label it is of; NULL
 * when none has. */
struct xd_body *xd_typeset_next(struct xd_typeset *ts, bool unknown,
				enum xd_form form, bool delta,
				struct xd_sub **sub, struct xd_table **table,
				const char **label);

/*
 * A heartbeat (rule L1) due now (monotonic ms) in `form` from the first
 * of the types, then the list collections, that has one (new
 * reference), with its subscription and label; else NULL and the
 * earliest time one falls due in *next (0: none).
 */
struct xd_body *xd_typeset_heartbeat(struct xd_typeset *ts, enum xd_form form,
				     uint64_t now, struct xd_sub **sub,
				     const char **label, uint64_t *next);

/* Every subscription of a stream: served types, list collections and
 * unknown types. */
#define XD_TYPESET_MAX_SUBS \
	(XD_RTYPE_COUNT + XD_CTYPE_COUNT + XD_TYPESET_MAX_UNKNOWN)

/* The types asked for (not IDLE), at most XD_TYPESET_MAX_SUBS, into
 * `out`; returns how many. */
size_t xd_typeset_active(struct xd_typeset *ts,
			 struct xd_sub *out[XD_TYPESET_MAX_SUBS]);

/* Adds every type asked for to the operator's view, in push order. */
void xd_typeset_view(const struct xd_typeset *ts,
		     const struct xd_snapshot *snap, struct xd_client_view *v);

#endif
