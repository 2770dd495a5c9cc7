/* SPDX-License-Identifier: Apache-2.0 */
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
 * Every state of the client is a ledger (ledger.h): what it holds, what
 * it will hold once it answers the response in flight, and what it runs
 * (the last it ACKed); nothing else records what a client has. What
 * operators are shown of it (CSDS, /clients, the rollout preview,
 * /metrics) is read from those ledgers through the client's view
 * (client.h).
 *
 * Ownership: the state owns references to its ledgers and name sets;
 * xd_sub_clear releases them. Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_SUB_H
#define XD_PROTOCOL_SUB_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/body.h"
#include "protocol/ledger.h"
#include "protocol/nameset.h"
#include "protocol/request.h"
#include "snapshot/table.h"

/*
 * Where a type stands on its stream. One function moves between states
 * (sub.c: set_state), checks that the move is legal and logs it at
 * debug level as "stream N: CDS wanting -> in flight (nonce 3)":
 *
 *   IDLE      no request of this type yet
 *             -> WANTING  on the first request
 *             -> HOLDING  on a first request that shows the client has
 *                         the current content already (rules S12, D7)
 *   WANTING   subscribed; the client holds nothing from this stream
 *             -> IN_FLIGHT  a response is sent
 *             -> HOLDING    there was nothing to send
 *   IN_FLIGHT a response awaits its ACK or NACK; nothing else of this
 *             type is sent meanwhile
 *             -> HOLDING    the client answered (ACK or NACK alike)
 *   HOLDING   the client holds what its ledger says
 *             -> IN_FLIGHT  a response is sent
 *
 * The ledger holds a table exactly in HOLDING and, for the content
 * answered last, in IN_FLIGHT (it may hold none there, after WANTING).
 */
enum xd_sub_state {
	XD_SUB_IDLE,
	XD_SUB_WANTING,
	XD_SUB_IN_FLIGHT,
	XD_SUB_HOLDING,
};

struct xd_sub {
	enum xd_sub_state state;
	bool legacy_wildcard; /* SotW wildcard by empty first request (rule
				 S2): stays a wildcard whatever comes */
	struct xd_names want; /* the subscription */
	uint64_t names_hash;  /* SotW: hash of the last resource_names list */

	/* What the client holds, key by key, and what is owed it once
	 * (ledger.h); never NULL. The only record of the client's state
	 * the bodies are computed from. */
	struct xd_ledger *ledger;

	uint64_t nonce;            /* the last nonce sent, 0 for none */
	/* IN_FLIGHT: what the client holds once it answers that response
	 * (its table, the names it was sent for), owing nothing; else
	 * NULL */
	struct xd_ledger *sent;

	uint64_t acks, nacks;

	/* The client runs what it held when it last ACKed (or showed it
	 * held, rules S12, D7, or was taken to hold with nothing to send);
	 * never NULL. The ledger itself until a NACK; after one, the older
	 * ledger it keeps alive (one per type and stream) says, resource
	 * by resource, what the client kept and what it refused. */
	struct xd_ledger *running;

	/* what operators see (admin endpoint, CSDS) */
	char sent_version[17];  /* of the last response sent; "" for none */
	char acked_version[17]; /* of the last response ACKed; "" for none */
	int64_t acked_at_ms;    /* when (Unix ms) that ACK came; 0 for none */
	bool nacked;            /* the last response answered was NACKed */
	char *nack_message;     /* the last NACK's error message (clipped to
				   XD_SUB_NACK_MESSAGE_MAX), or NULL */
	int64_t nack_at_ms;     /* when (Unix ms) */
	uint64_t sent_at_ms;    /* when the last response went out (monotonic) */
	int64_t sent_wall_ms;   /* the same in Unix ms, for operators */
	/* the response in flight outlived `ack_timeout:` and was warned of
	 * (set by the session; cleared by the next send): once per response */
	bool ack_overdue;
	/* when the last response that carried every resource with a TTL
	 * the client holds went out, a heartbeat or not (rule L1) */
	uint64_t ttl_refreshed_ms;
	uint64_t converged_id;  /* the table whose convergence was counted */
	/* names asked for that the stream's identity may not be served,
	 * the operator told of them once (withheld.h); NULL: none */
	struct xd_nameset *withheld;

	/* for log lines: the stream, and the type's name (static, or owned
	 * by the caller for as long as the state lives) */
	uint64_t stream_id;
	const char *label;
};

/* Room kept for a NACK's error message. */
#define XD_SUB_NACK_MESSAGE_MAX 1024

enum xd_sub_verdict {
	XD_SUB_STALE,   /* rule S5: ignored (SotW), or its ACK part ignored (delta) */
	XD_SUB_REQUEST, /* a request that answers nothing */
	XD_SUB_ACK,
	XD_SUB_NACK,
};

/* A fresh state, IDLE. `stream_id` and `label` ("CDS") name it in logs. */
void xd_sub_init(struct xd_sub *s, uint64_t stream_id, const char *label);
void xd_sub_clear(struct xd_sub *s);

/*
 * A SotW request (read in place; nothing of it is kept), come at
 * `wall_ms` (Unix ms: an ACK or NACK is shown to operators with it; the
 * engine reads no clock). `wildcard_ok`: LDS, CDS, SRDS (rule S2). `full_state`
 * types (LDS, CDS) with a wildcard first request whose version_info is
 * `current`'s version are taken to hold `current` already (rule S12: a client
 * reconnecting to a restarted or other xdsd is not sent what it has).
 * Returns the verdict; on XD_SUB_STALE nothing changed.
 */
enum xd_sub_verdict xd_sub_sotw_request(struct xd_sub *s,
					const struct xd_request *r,
					bool wildcard_ok, bool full_state,
					struct xd_table *current, int64_t wall_ms);

/*
 * A delta request, come at `wall_ms` (Unix ms). `current` is the type's table now (for
 * initial_resource_versions on the first request), or NULL. Subscription
 * changes always apply, even with a stale nonce (they are increments
 * the client will not repeat).
 */
enum xd_sub_verdict xd_sub_delta_request(struct xd_sub *s,
					 const struct xd_request *r,
					 bool wildcard_ok,
					 struct xd_table *current,
					 int64_t wall_ms);

/* The content the client holds (its ledger's table), or NULL. */
static inline struct xd_table *xd_sub_held(const struct xd_sub *s)
{
	return s->ledger->table;
}

/* Whether the type has been asked for on this stream (not IDLE). */
static inline bool xd_sub_active(const struct xd_sub *s)
{
	return s->state != XD_SUB_IDLE;
}

/*
 * What to send now from `table`: a body (new reference) or NULL when
 * nothing is due or a response is in flight. When nothing differs, the
 * client is taken to hold `table` already (so types in sync are
 * "settled" for the sequencer).
 */
struct xd_body *xd_sub_next(struct xd_sub *s, struct xd_table *table,
			    enum xd_form form, bool full_state);

/*
 * A heartbeat (rule L1), if one is due at `now_ms` (monotonic): `form`
 * carries TTLs, the client holds resources of this type with one, the
 * type is settled (HOLDING, not NACKed: a client that refused the
 * content holds no version to refresh), and half the shortest TTL of the
 * held table passed since they were last all refreshed. Otherwise NULL,
 * and *due_ms says when one may be (0: not as things stand). Send it
 * as any body (xd_sub_sent with xd_sub_held).
 */
struct xd_body *xd_sub_heartbeat(struct xd_sub *s, enum xd_form form,
				 uint64_t now_ms, uint64_t *due_ms);

/* Records that the body from xd_sub_next(table) went out as `nonce` at
 * `now_ms` (monotonic), which is `wall_ms` (Unix ms). */
void xd_sub_sent(struct xd_sub *s, struct xd_table *table, uint64_t nonce,
		 uint64_t now_ms, int64_t wall_ms);

/*
 * Where the type stands for an operator, against `current` (the type's
 * table now, or NULL): NACKED while the last answer was a NACK and
 * nothing newer is in flight; SYNCED when the client holds the current
 * version; PENDING otherwise (a response in flight or not yet sent).
 */
enum xd_sub_sync {
	XD_SUB_SYNCED,
	XD_SUB_PENDING,
	XD_SUB_NACKED,
};
enum xd_sub_sync xd_sub_sync(const struct xd_sub *s,
			     const struct xd_table *current);
const char *xd_sub_sync_name(enum xd_sub_sync sync);

/*
 * Whether a response waits for its answer (IN_FLIGHT), and since when
 * (*since_ms, monotonic: the send, as xd_sub_sent was told; its Unix
 * time is sent_wall_ms). This is
 * "pending since" (docs/engine.md, "Staleness"): a type that is pending
 * with nothing in flight (nothing sent yet, or the sequencer holding it
 * back) waits on xdsd, not on the client, and has no such time.
 */
bool xd_sub_pending_since(const struct xd_sub *s, uint64_t *since_ms);

/* Parses a nonce this server issued ("123"); 0 if it is not one. */
uint64_t xd_sub_parse_nonce(struct xd_name n);

#endif
