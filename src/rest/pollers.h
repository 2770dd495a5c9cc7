/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The record of REST-JSON pollers: a REST client holds no stream, so
 * without it /clients and a dry run's reach would see gRPC clients only.
 * One entry per (node id, snapshot key), filled once a request is
 * admitted (rest.c, serve()), with when it was last seen, from which
 * peer, the types it asked for and whether the default snapshot served
 * it.
 *
 * Fresh: seen within rest_poll_timeout + XD_REST_POLLERS_GRACE_MS. A
 * held request was seen when it came and is answered by
 * rest_poll_timeout at the latest, so every poller held now is fresh;
 * the grace covers the client's turn between an answer and its next
 * request. Only fresh pollers are visited.
 *
 * Bound: XD_REST_POLLERS_MAX entries of at most XD_REST_POLLERS_ID_MAX
 * bytes of node id (the key is the configuration's, the peer an
 * address). When full, the least recently
 * seen entry is dropped and counted (xd_rest_pollers_dropped,
 * xdsd_rest_pollers_dropped_total in /metrics). Lookups scan the
 * entries: a few microseconds at the bound, against a request's JSON
 * parsing and printing.
 *
 * Ownership: the record owns copies of its strings. Thread: loop only.
 */
#ifndef XD_REST_POLLERS_H
#define XD_REST_POLLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xds/rtype.h"

#define XD_REST_POLLERS_MAX 4096
/* Bytes of a node id an entry keeps: node ids longer than this are
 * known by their first XD_REST_POLLERS_ID_MAX bytes (a request may be
 * max_request_size long; 4096 such ids must not be kept whole). */
#define XD_REST_POLLERS_ID_MAX 512
#define XD_REST_POLLERS_GRACE_MS 30000

/* One poller as visited: borrowed, valid during the visit only. */
struct xd_rest_poller {
	const char *node_id, *key, *peer;
	unsigned types;          /* bit (1u << enum xd_rtype) per type asked */
	bool served_default;     /* the default snapshot served it */
	int64_t last_seen_wall_ms;
	uint64_t last_seen_mono_ms;
};

struct xd_rest_pollers;

/* `fresh_ms`: rest_poll_timeout; the grace is added to it. */
struct xd_rest_pollers *xd_rest_pollers_new(uint64_t fresh_ms);
void xd_rest_pollers_free(struct xd_rest_pollers *ps);

/* A request of `node_id` served by `key` asking for `type` was admitted
 * from `peer` at `now_mono_ms` / `now_wall_ms`. */
void xd_rest_pollers_seen(struct xd_rest_pollers *ps, const char *node_id,
			  const char *key, const char *peer,
			  enum xd_rtype type, bool served_default,
			  uint64_t now_mono_ms, int64_t now_wall_ms);

/* Calls fn for each poller fresh at `now_mono_ms`, in no stated order. */
void xd_rest_pollers_visit(const struct xd_rest_pollers *ps,
			   uint64_t now_mono_ms,
			   void (*fn)(void *ctx, const struct xd_rest_poller *p),
			   void *ctx);

/* Entries dropped since start because the record was full. */
unsigned long long xd_rest_pollers_dropped(const struct xd_rest_pollers *ps);

#endif
