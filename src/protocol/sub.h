/*
 * One resource type on one stream: what the client subscribes to, what
 * it holds, and the response it has not answered yet. Pure functions,
 * no I/O: the session feeds requests in, asks what to send, and reports
 * what it sent. The same state serves SotW and delta.
 *
 * The client "holds" the content of the last response it answered,
 * ACK or NACK alike: a NACKed version is never resent, the next change
 * is (rule S4). Until a response is answered no other response of the type
 * is sent, so each send carries the newest state, never a queue of
 * stale versions.
 *
 * Ownership: the state owns references to its tables and name sets;
 * xd_sub_clear releases them. Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_SUB_H
#define XD_PROTOCOL_SUB_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/body.h"
#include "protocol/nameset.h"
#include "snapshot/table.h"

struct xd_sub {
	bool active;          /* a request of this type was seen */
	bool legacy_wildcard; /* SotW wildcard by empty first request (rule S2) */
	struct xd_names want; /* the subscription */
	uint64_t names_hash;  /* SotW: hash of the last resource_names list */

	struct xd_table *held;      /* content the client holds, or NULL */
	struct xd_names held_names;

	bool inflight;             /* a response awaits ACK/NACK */
	uint64_t nonce;            /* the last nonce sent, 0 for none */
	struct xd_table *sent;     /* content of that response */
	struct xd_names sent_names;

	struct xd_nameset *force;   /* rule D5: send even if held */
	struct xd_nameset *removed; /* rule D7: held by the client, gone here */

	uint64_t acks, nacks;
};

/* A parsed request, as far as this type is concerned. */
struct xd_sub_req {
	struct xd_name nonce;    /* response_nonce (may be empty) */
	bool nack;               /* error_detail present */
	/* SotW */
	struct xd_name version_info; /* the version the client holds */
	const struct xd_name *names;
	size_t nnames;
	uint64_t names_hash;     /* of the raw list, to skip re-interning */
	/* delta */
	const struct xd_name *subscribe, *unsubscribe;
	size_t nsubscribe, nunsubscribe;
	const struct xd_name *initial_names, *initial_versions;
	size_t ninitial;
};

enum xd_sub_verdict {
	XD_SUB_STALE,   /* rule S5: ignored (SotW), or its ACK part ignored (delta) */
	XD_SUB_REQUEST, /* a request that answers nothing */
	XD_SUB_ACK,
	XD_SUB_NACK,
};

void xd_sub_init(struct xd_sub *s);
void xd_sub_clear(struct xd_sub *s);

/*
 * A SotW request. `wildcard_ok`: LDS, CDS, SRDS (rule S2). `full_state`
 * types (LDS, CDS) with a wildcard first request whose version_info is
 * `current`'s version are taken to hold `current` already (rule S12: a client
 * reconnecting to a restarted or other xdsd is not sent what it has).
 * Returns the verdict; on XD_SUB_STALE nothing changed.
 */
enum xd_sub_verdict xd_sub_sotw_request(struct xd_sub *s,
					const struct xd_sub_req *r,
					bool wildcard_ok, bool full_state,
					struct xd_table *current);

/*
 * A delta request. `current` is the type's table now (for
 * initial_resource_versions on the first request), or NULL. Subscription
 * changes always apply, even with a stale nonce (they are increments
 * the client will not repeat).
 */
enum xd_sub_verdict xd_sub_delta_request(struct xd_sub *s,
					 const struct xd_sub_req *r,
					 bool wildcard_ok,
					 struct xd_table *current);

/*
 * What to send now from `table`: a body (new reference) or NULL when
 * nothing is due or a response is in flight. When nothing differs, the
 * client is taken to hold `table` already (so types in sync are
 * "settled" for the sequencer).
 */
struct xd_body *xd_sub_next(struct xd_sub *s, struct xd_table *table,
			    enum xd_form form, bool full_state);

/* Records that the body from xd_sub_next(table) went out as `nonce`. */
void xd_sub_sent(struct xd_sub *s, struct xd_table *table, uint64_t nonce);

/* Parses a nonce this server issued ("123"); 0 if it is not one. */
uint64_t xd_sub_parse_nonce(struct xd_name n);

#endif
