/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every xDS stream together has done, for /metrics and the status
 * page (admin/): streams per method, requests, responses and their
 * bytes, ACKs and NACKs per type, how long clients took to answer
 * responses and how many did not within `ack_timeout:`, names withheld
 * by "@allow", and how long changes took to reach
 * the clients that were connected when they were published
 * (convergence: a histogram per type and a ring of recent samples).
 *
 * Ownership: the sessions' manager (session.h) owns the one
 * xd_sessions_stats; others read it. Time comes from the caller.
 * Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_STATS_H
#define XD_PROTOCOL_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/sub.h"
#include "util/histogram.h"
#include "xds/rtype.h"

/* Counters of one resource type (the last slot: types xdsd does not
 * serve). */
struct xd_type_stats {
	unsigned long long responses, response_bytes, acks, nacks;
	/* responses not answered within `ack_timeout:` (each once) */
	unsigned long long ack_timeouts;
	/* names asked for that the stream's identity may not be served
	 * ("@allow"), each once per stream (withheld.h) */
	unsigned long long withheld;
	/* From a response being sent to its ACK or NACK (every answer). */
	struct xd_histogram ack_delay;
	/* From a change being served to a client's ACK of it, for clients
	 * connected before the change (so first syncs do not count). */
	struct xd_histogram convergence;
};

/* Recent convergence times, for a chart. */
#define XD_SESSIONS_RECENT 256
struct xd_convergence_sample {
	int64_t at_ms;  /* Unix ms of the ACK */
	float seconds;
	enum xd_rtype type;
};

struct xd_sessions_stats {
	size_t sessions;
	unsigned long long requests;
	unsigned long long responses, response_bytes, acks, nacks; /* all types */
	struct xd_type_stats types[XD_RTYPE_COUNT + 1];
	size_t *streams; /* per method, by index in xd_methods() */
	struct xd_convergence_sample recent[XD_SESSIONS_RECENT];
	size_t nrecent, recent_next; /* ring: oldest at recent_next once full */
};

/* Counters at zero, for streams of `nmethods` methods (xd_methods()). */
void xd_sessions_stats_init(struct xd_sessions_stats *st, size_t nmethods);
void xd_sessions_stats_free(struct xd_sessions_stats *st);

/* A response of `bytes` sent, of `type` (XD_RTYPE_COUNT: not a served
 * type). */
void xd_sessions_stats_sent(struct xd_sessions_stats *st, enum xd_rtype type,
			    size_t bytes);

/*
 * A client's ACK (or NACK) of what `sub` (of `type`) holds: its delay
 * since the response was sent (sub->sent_at_ms) is observed. An ACK of
 * content published (monotonic ms) after the stream opened at
 * `opened_mono_ms` is a convergence, observed once per table and
 * stream; `now_mono_ms` and `now_wall_ms` say when.
 */
void xd_sessions_stats_answered(struct xd_sessions_stats *st,
				enum xd_rtype type, struct xd_sub *sub,
				bool ack, uint64_t opened_mono_ms,
				uint64_t now_mono_ms, int64_t now_wall_ms);

/* A response of `type` went unanswered for `ack_timeout:`. */
void xd_sessions_stats_ack_timeout(struct xd_sessions_stats *st,
				   enum xd_rtype type);

/* A name of `type` was withheld from a stream by its "@allow". */
void xd_sessions_stats_withheld(struct xd_sessions_stats *st,
				enum xd_rtype type);

#endif
