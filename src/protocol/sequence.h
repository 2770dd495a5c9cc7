/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The make-before-break sequencer (rule A2): which response a stream sends
 * next. A pure function of the stream's per-type state (xd_sub), its
 * target snapshot and the time; no I/O, no clock, no log. The session
 * (session.c) keeps the I/O: nonces, sending, logging, and the timer
 * that pumps it again when one of its waits may have ended.
 *
 * On the aggregated methods types go in the order of enum xd_rtype (SDS,
 * RTDS, CDS, EDS, ECDS, LDS, RDS, SRDS, VHDS), one at a time: a type
 * sends only when every earlier type is settled (nothing in flight,
 * nothing due), except a type that warms the one in flight (rtype.h's
 * roles): EDS also goes while CDS is in flight, as clients warm new
 * clusters until their endpoints come, and Envoy answers CDS only then.
 * The roles, not the types' names, say what follows:
 *
 *   - Before the first USER type (listeners), the resources of the
 *     WARMS type (endpoints) that those the client holds of the type it
 *     warms (clusters) refer to must be in its subscription (Envoy
 *     subscribes to them as soon as it has read the CDS response). The
 *     wait lasts XD_SEQ_WAIT_MS from when it starts, in case the
 *     subscription never comes (waits->eds).
 *   - Resources of KEPT types (clusters), and in delta of WARMS types
 *     (endpoints), that the target dropped stay in what the client is
 *     sent (the table is union(target, held)) until every USER type
 *     (listeners, routes, scoped routes, virtual hosts) is settled on
 *     the target and its subscription of the KEPT type covers those
 *     that the USER types it holds refer to; then a final response
 *     without them goes out. A client that names its clusters (gRPC)
 *     asks for a route's new cluster only once it has the route and
 *     goes on using the old one until the new one and its endpoints
 *     came: for it the dropped ones stay, from when it asked, until
 *     it holds (ACKed) the new ones its routes need at the target's
 *     version, and their endpoints, or XD_SEQ_WAIT_MS passed
 *     (waits->uptake). A wildcard subscription (Envoy's) does not
 *     wait for that.
 *   - In delta, resources of a `kept_in_delta` type (route
 *     configurations) that the target dropped stay so until the USER
 *     types after it (scoped routes, virtual hosts, which name them) are
 *     settled: a scope naming one the client was told is removed would
 *     route nothing. SotW never removes them.
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

/* How long the sequencer waits for the client (rule A2): listeners for
 * its subscription to its clusters' endpoints, dropped clusters for a
 * client that names its clusters to hold the new ones. */
#define XD_SEQ_WAIT_MS 2000

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
			    EDS subscription, until waits->eds.until */
};

/*
 * A wait, per stream, for something of the client's (rule A2): NONE
 * (nothing to wait for, or it came), RUNNING until `until`, OVERDUE
 * once `until` passed without it (the stream goes on, and does not wait
 * again until what it waited for ends the episode). The sequencer alone
 * moves it; the session keeps it and runs a timer while it is RUNNING.
 */
enum xd_seq_wait_state {
	XD_WAIT_NONE,
	XD_WAIT_RUNNING,
	XD_WAIT_OVERDUE,
};

struct xd_seq_wait {
	enum xd_seq_wait_state state;
	uint64_t until; /* RUNNING, OVERDUE: the deadline, loop ms */
};

/* A stream's waits. */
struct xd_seq_waits {
	/* listeners, for the client's subscription to the endpoints its
	 * clusters need */
	struct xd_seq_wait eds;
	/* the dropped clusters (and delta endpoints) of a client that
	 * names its clusters, for it to hold the new ones its routes
	 * need, and their endpoints: from when it asked for them */
	struct xd_seq_wait uptake;
};

/* What became of a wait in one step, so that the caller keeps its
 * timer in step and logs. */
enum xd_seq_waited {
	XD_WAITED_UNTOUCHED, /* not looked at */
	XD_WAITED_WAITING,   /* waiting until its deadline */
	XD_WAITED_OVER,      /* what it waited for came, or nothing to wait for */
	XD_WAITED_LATE,      /* the deadline passed without it: going on */
};

struct xd_seq_step {
	enum xd_seq_action action;
	enum xd_rtype type;      /* SEND, INFLIGHT */
	struct xd_table *table;  /* SEND: the effective table (owned) */
	struct xd_body *body;    /* SEND: the response minus nonce (owned) */
	enum xd_seq_waited eds;    /* of waits->eds */
	enum xd_seq_waited uptake; /* of waits->uptake */
};

/*
 * Decides what `subs` (indexed by type) do next towards `target` (not
 * NULL), at `now` (ms, monotonic). `*waits` are the stream's, read and
 * moved here. A type with nothing
 * to send is taken to hold its table already (as xd_sub_next does), so
 * `subs` may change even when nothing is sent. On XD_SEQ_SEND the caller
 * sends `body`, calls xd_sub_sent(&subs[type], table, nonce, now, and
 * the Unix time), then
 * xd_seq_step_clear.
 */
void xd_seq_next(struct xd_sub subs[XD_RTYPE_COUNT],
		 struct xd_snapshot *target, const struct xd_seq_mode *mode,
		 uint64_t now, struct xd_seq_waits *waits,
		 struct xd_seq_step *out);

/* Releases the step's table and body. */
void xd_seq_step_clear(struct xd_seq_step *st);

#endif
