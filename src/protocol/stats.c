/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/stats.h"

#include <stdlib.h>

#include "util/loop_thread.h"
#include "util/xalloc.h"

void xd_sessions_stats_init(struct xd_sessions_stats *st, size_t nmethods)
{
	st->streams = xd_calloc(nmethods, sizeof(size_t));
	for (int t = 0; t <= XD_RTYPE_COUNT; t++) {
		xd_histogram_init(&st->types[t].convergence,
				  xd_histogram_push_bounds,
				  xd_histogram_push_nbounds);
		xd_histogram_init(&st->types[t].ack_delay,
				  xd_histogram_push_bounds,
				  xd_histogram_push_nbounds);
	}
}

void xd_sessions_stats_free(struct xd_sessions_stats *st)
{
	free(st->streams);
	st->streams = NULL;
}

void xd_sessions_stats_sent(struct xd_sessions_stats *st, enum xd_rtype type,
			    size_t bytes)
{
	st->responses++;
	st->response_bytes += bytes;
	st->types[type].responses++;
	st->types[type].response_bytes += bytes;
}

/*
 * An ACK of content that began to be served while the client was
 * connected: how long the change took to reach it (each table once per
 * stream; the first sync of a new client is not a convergence).
 */
static void observe_convergence(struct xd_sessions_stats *st,
				enum xd_rtype type, struct xd_sub *sub,
				uint64_t opened_mono_ms, uint64_t now,
				int64_t now_wall_ms)
{
	uint64_t published;
	struct xd_convergence_sample *sample;
	double seconds;

	if (type == XD_RTYPE_COUNT || xd_sub_held(sub) == NULL ||
	    xd_table_id(xd_sub_held(sub)) == sub->converged_id)
		return;
	sub->converged_id = xd_table_id(xd_sub_held(sub));
	published = xd_table_published(xd_sub_held(sub));
	if (published == 0 || published < opened_mono_ms || now < published)
		return;
	seconds = (double)(now - published) / 1000.0;
	xd_histogram_observe(&st->types[type].convergence, seconds);
	sample = &st->recent[st->recent_next];
	sample->at_ms = now_wall_ms;
	sample->seconds = (float)seconds;
	sample->type = type;
	st->recent_next = (st->recent_next + 1) % XD_SESSIONS_RECENT;
	if (st->nrecent < XD_SESSIONS_RECENT)
		st->nrecent++;
}

void xd_sessions_stats_answered(struct xd_sessions_stats *st,
				enum xd_rtype type, struct xd_sub *sub,
				bool ack, uint64_t opened_mono_ms,
				uint64_t now_mono_ms, int64_t now_wall_ms)
{
	XD_ASSERT_LOOP();
	/* an answer comes after its send on the one monotonic clock */
	XD_ASSERT_INFO(now_mono_ms >= sub->sent_at_ms,
		       "stream %llu: %s answered at %llu, sent at %llu",
		       (unsigned long long)sub->stream_id, sub->label,
		       (unsigned long long)now_mono_ms,
		       (unsigned long long)sub->sent_at_ms);
	xd_histogram_observe(&st->types[type].ack_delay,
			     (double)(now_mono_ms - sub->sent_at_ms) / 1000.0);
	if (!ack) {
		st->nacks++;
		st->types[type].nacks++;
		return;
	}
	st->acks++;
	st->types[type].acks++;
	observe_convergence(st, type, sub, opened_mono_ms, now_mono_ms,
			    now_wall_ms);
}

void xd_sessions_stats_ack_timeout(struct xd_sessions_stats *st,
				   enum xd_rtype type)
{
	XD_ASSERT_LOOP();
	XD_ASSERT(type <= XD_RTYPE_COUNT);
	st->types[type].ack_timeouts++;
}

void xd_sessions_stats_withheld(struct xd_sessions_stats *st,
				enum xd_rtype type)
{
	XD_ASSERT_LOOP();
	XD_ASSERT(type < XD_RTYPE_COUNT);
	st->types[type].withheld++;
}
