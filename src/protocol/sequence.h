/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The make-before-break sequencer (rule A2): which response a stream sends
 * next. A pure function of the stream's per-type state (xd_sub), its
 * target snapshot and the time; no I/O, no clock, no log. The session
 * (session.c) keeps the I/O: nonces, sending, logging, and the timer
 * that pumps it again when an endpoint wait may have ended.
 *
 * On the aggregated methods types go in the order of enum xd_rtype (SDS,
 * RTDS, CDS, EDS, LDS, RDS, SRDS, VHDS), one at a time: a type sends only
 * when every earlier type is settled (nothing in flight, nothing due),
 * except a type that warms the one in flight (rtype.h's roles): EDS also
 * goes while CDS is in flight, as clients warm new clusters until their
 * endpoints come, and Envoy answers CDS only then. The roles, not the
 * types' names, say what follows:
 *
 *   - Before the first USER type (listeners), the resources of the
 *     WARMS type (endpoints) that those the client holds of the type it
 *     warms (clusters) refer to must be in its subscription (Envoy
 *     subscribes to them as soon as it has read the CDS response). The
 *     wait lasts XD_SEQ_EDS_WAIT_MS from when it starts, in case the
 *     subscription never comes.
 *   - Resources of KEPT types (clusters), and in delta of WARMS types
 *     (endpoints), that the target dropped stay in what the client is
 *     sent (the table is union(target, held)) until every USER type
 *     (listeners, routes, scoped routes, virtual hosts) is settled on
 *     the target and its subscription of the KEPT type covers those
 *     that the USER types it holds refer to; then a final response
 *     without them goes out (with a client that names its clusters,
 *     the answer to the request that adds the new ones).
 *
 * A per-type method sends its one type whenever it is due: no order, no
 * union, no wait.
 *
 * Thread: loop thread only (bodies and derived values are memoized on
 * tables by the loop thread).
 */
#ifndef XD_PROTOCOL_SEQUENCE_H
#define XD_PROTOCOL_SEQUENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/body.h"
#include "protocol/sub.h"
#include "snapshot/snapshot.h"

/* How long listeners wait for the client to subscribe to its clusters'
 * endpoints before going on anyway (rule A2). */
#define XD_SEQ_EDS_WAIT_MS 2000

/* The stream's method, as far as sequencing is concerned. */
struct xd_seq_mode {
	bool aggregated;    /* ADS: every type, in order */
	bool delta;
	enum xd_rtype type; /* per-type methods: the one type served */
	enum xd_form form;
};

enum xd_seq_action {
	XD_SEQ_IDLE,     /* nothing is due */
	XD_SEQ_SEND,     /* send `body` of `type` (from `table`) */
	XD_SEQ_INFLIGHT, /* `type` awaits its ACK/NACK; later types wait */
	XD_SEQ_WAIT_EDS, /* listeners and later types wait for the client's
			    EDS subscription, until *eds_wait_until */
};

/*
 * The wait, per stream, for the client's EDS subscription before its
 * listeners (rule A2): NONE (nothing to wait for, or covered), RUNNING
 * until `until`, OVERDUE once `until` passed uncovered (the stream goes
 * on, and does not wait again until coverage ends the episode). The
 * sequencer alone moves it; the session keeps it and runs a timer while
 * it is RUNNING.
 */
enum xd_eds_wait_state {
	XD_EDS_WAIT_NONE,
	XD_EDS_WAIT_RUNNING,
	XD_EDS_WAIT_OVERDUE,
};

struct xd_eds_wait {
	enum xd_eds_wait_state state;
	uint64_t until; /* RUNNING, OVERDUE: the deadline, loop ms */
};

/* What became of the wait in one step, so that the caller keeps its
 * timer in step and logs. */
enum xd_seq_eds {
	XD_SEQ_EDS_UNTOUCHED, /* not looked at (an earlier type was due) */
	XD_SEQ_EDS_WAITING,   /* waiting until *eds_wait_until */
	XD_SEQ_EDS_OVER,      /* covered, or nothing to wait for */
	XD_SEQ_EDS_LATE,      /* the deadline passed uncovered: going on */
};

struct xd_seq_step {
	enum xd_seq_action action;
	enum xd_rtype type;      /* SEND, INFLIGHT */
	struct xd_table *table;  /* SEND: the effective table (owned) */
	struct xd_body *body;    /* SEND: the response minus nonce (owned) */
	enum xd_seq_eds eds;
};

/*
 * Decides what `subs` (indexed by type) do next towards `target` (not
 * NULL), at `now` (ms, monotonic). `*wait` is the stream's EDS wait,
 * read and moved here. A type with nothing
 * to send is taken to hold its table already (as xd_sub_next does), so
 * `subs` may change even when nothing is sent. On XD_SEQ_SEND the caller
 * sends `body`, calls xd_sub_sent(&subs[type], table, nonce, now, and
 * the Unix time), then
 * xd_seq_step_clear.
 */
void xd_seq_next(struct xd_sub subs[XD_RTYPE_COUNT],
		 struct xd_snapshot *target, const struct xd_seq_mode *mode,
		 uint64_t now, struct xd_eds_wait *wait,
		 struct xd_seq_step *out);

/* Releases the step's table and body. */
void xd_seq_step_clear(struct xd_seq_step *st);

#endif
