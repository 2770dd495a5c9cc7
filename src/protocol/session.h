/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xDS sessions: the protocol side of every stream.
 *
 * A session is the stream: it reads its requests, has its client
 * (client.h: admission of the node, response form, snapshot key, the
 * operator's view) decide who it serves, keeps the types it asks for
 * (typeset.h: one xd_sub per type), watches the snapshot of its
 * client's key, and whenever its stream can send, sends the next
 * response that is due. It owns the pump, the EDS-wait and heartbeat
 * timers, and the limits on what one stream may make xdsd do; the
 * counters all streams add to are stats.h's. On the aggregated
 * methods it orders them make-before-break (rule A2), as the sequencer
 * (sequence.h) decides:
 *
 *   SDS, RTDS, CDS, EDS, ECDS, LDS, RDS, SRDS, VHDS, one at a time: a type
 *   sends only when every earlier type is settled (nothing in flight,
 *   nothing due). After clusters change, endpoints wait until the client
 *   subscribes to the endpoints its new clusters need (bounded wait).
 *   Clusters (and, in delta, endpoints) that the new snapshot dropped
 *   stay in what the client is sent until its listeners, routes, scoped
 *   routes and virtual hosts are settled on the new snapshot; then they
 *   go in a final response.
 *
 * Snapshot changes reach thousands of streams at once; sessions are
 * queued and pumped in batches across loop iterations, so requests keep
 * being served while a push fans out (docs/grpc-core.md §1).
 *
 * List collections (rule X3) are served on the aggregated methods
 * only, by name, from the snapshot's collection tables, once every type
 * above is settled.
 *
 * Unknown type URLs on the aggregated methods are answered without
 * ending the stream (which would disturb every other type): an empty
 * response of that type (SotW), or each subscribed name reported as not
 * existing (delta), plus a warning in the log. On a per-type method a
 * request for another type ends the stream with INVALID_ARGUMENT.
 *
 * Ownership: the manager owns its sessions, each created by its stream's
 * open and freed by its close; it borrows the cache and `cfg`.
 * Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_SESSION_H
#define XD_PROTOCOL_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cache/cache.h"
#include "protocol/client.h"
#include "protocol/stats.h"
#include "protocol/sub.h"
#include "config/config.h"
#include "transport/stream.h"

struct xd_sessions;

/* Sessions served from `cache`, by `cfg`'s node_key and authorize
 * rules (`cfg` must outlive them). */
struct xd_sessions *xd_sessions_new(uv_loop_t *loop, struct xd_cache *cache,
				    const struct xd_config *cfg);

/*
 * Frees the manager. Every session must be gone (the server shut down).
 * Closes its handles: run the loop once more afterwards.
 */
void xd_sessions_free(struct xd_sessions *m);

/* The handler to give the server: every stream becomes a session. */
const struct xd_stream_handler *xd_sessions_handler(struct xd_sessions *m);

/* The live counters (valid as long as the manager). */
const struct xd_sessions_stats *xd_sessions_stats(const struct xd_sessions *m);

/*
 * What happened to a canary stream (client.h), as it happens: the
 * engine's events, for the rollout (rollout/rollout.h), which keeps its
 * canaries' answers from them rather than looking at the streams.
 *
 *   ADMITTED  its node was admitted: a canary from now on
 *   SERVING   it is served another snapshot (a rollout's candidate, or
 *             the stable set again)
 *   SENT      a response of `type` went out (`version`, `nonce`): that
 *             type waits for its answer
 *   ACK       the client took `type`'s `version` (`nonce`)
 *   NACK      it refused it, with `message` (the client's, not
 *             terminated), after the NACK's log line
 *   GONE      the stream ended (a canary that goes away)
 */
enum xd_sessions_event_kind {
	XD_SESSIONS_ADMITTED,
	XD_SESSIONS_SERVING,
	XD_SESSIONS_SENT,
	XD_SESSIONS_ACK,
	XD_SESSIONS_NACK,
	XD_SESSIONS_GONE,
};

/* Borrowed, valid during the call only. */
struct xd_sessions_event {
	enum xd_sessions_event_kind kind;
	/* the stream after the event (its node, stream id, peer, the
	 * snapshot it is served and each type's state), ages as of now */
	const struct xd_client_view *view;
	const char *type;    /* SENT, ACK, NACK: "CDS", or the type URL */
	const char *version; /* SENT, ACK, NACK: of the response */
	uint64_t nonce;      /* SENT, ACK, NACK: its nonce */
	const char *message; /* NACK */
	size_t message_len;
};

typedef void (*xd_sessions_event_fn)(void *arg,
				     const struct xd_sessions_event *ev);

/* Who is a rollout's canary: `rule(arg, client)`, asked once per stream
 * as its node is admitted (client.h, `canary`); NULL (no rollout):
 * nobody. Set before the first stream. */
typedef bool (*xd_sessions_canary_fn)(void *arg, const struct xd_client *c);
void xd_sessions_set_canary_rule(struct xd_sessions *m,
				 xd_sessions_canary_fn rule, void *arg);

/* Delivers every canary stream's events to `fn` (NULL: none), on the
 * loop thread as each happens: the streams that are not canaries cost
 * nothing. `fn` must not end streams. */
void xd_sessions_on_event(struct xd_sessions *m, xd_sessions_event_fn fn,
			  void *arg);

/* Calls `fn` for every stream with an admitted node: its snapshot key,
 * node id and whether it is a canary. Cheaper than a visit (no view):
 * for counting the nodes of each key. */
void xd_sessions_each_node(struct xd_sessions *m,
			   void (*fn)(void *ctx, const char *key,
				      const char *node_id, bool canary),
			   void *ctx);

/* The distinct node ids among the streams with an admitted node (by
 * their 64-bit hashes, as /status.json counts them): one walk and a
 * sort, for the replica's registration (rollout/fleet.h). */
size_t xd_sessions_nodes(struct xd_sessions *m);

/* Calls `fn` for every stream, oldest first, with its client's view
 * (client.h). `fn` must not end streams. */
void xd_sessions_visit(struct xd_sessions *m,
		       void (*fn)(void *ctx, const struct xd_client_view *c),
		       void *ctx);

/*
 * The same walk in pieces, for pages written between loop turns (the
 * admin's, CSDS): it visits the streams open when it began, oldest
 * first, that are still open when it reaches them. A stream that closes
 * meanwhile is skipped (the manager moves every open cursor past it
 * before freeing it); a stream opened after the walk began is left out
 * (stream numbers only grow, in the order of the list). The views of
 * one call are aged from one clock reading (responses are sent between
 * calls, never during one).
 *
 * Ownership: the caller owns the cursor; it is linked into the manager
 * from open to close and must be closed before the manager is freed.
 */
struct xd_sessions_cursor {
	struct xd_sessions *m;
	struct xd_list link;  /* in the manager's open cursors */
	struct xd_list *next; /* the next stream, or the list's head: done */
	uint64_t last_id;     /* the newest stream when the walk began */
};

void xd_sessions_cursor_open(struct xd_sessions *m,
			     struct xd_sessions_cursor *c);

/* Visits up to `max` more streams. Returns true while some remain.
 * `fn` must not end streams. */
bool xd_sessions_cursor_visit(struct xd_sessions_cursor *c, size_t max,
			      void (*fn)(void *ctx,
					 const struct xd_client_view *v),
			      void *ctx);

/* Visits streams, a few at a time, until none remains (true) or the
 * monotonic clock of uv_hrtime passes `deadline_ns` (false). */
bool xd_sessions_cursor_walk(struct xd_sessions_cursor *c,
			     void (*fn)(void *ctx,
					const struct xd_client_view *v),
			     void *ctx, uint64_t deadline_ns);

/* Unlinks the cursor (harmless twice, or never opened after a zeroing). */
void xd_sessions_cursor_close(struct xd_sessions_cursor *c);

#endif
