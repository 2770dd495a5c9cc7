/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node that answers as its test says: one stream subscribed to every
 * cluster, SotW or delta, whose every response the test ACKs or NACKs
 * (with a message) itself, or leaves unanswered. For staged rollouts:
 * canaries that refuse a change, or never answer it.
 */
#ifndef XD_TESTS_PEER_H
#define XD_TESTS_PEER_H

#include <stdbool.h>
#include <stddef.h>

#include "client.h"

#define XDT_PEER_WAIT_MS 5000
/* how long "nothing comes" is watched for */
#define XDT_PEER_QUIET_MS 400
#define XDT_PEER_CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"

/* A stream subscribed to every cluster, SotW or delta, whose node is
 * `id` in cluster "edge" (served the default snapshot). */
struct xdt_peer {
	struct xdc_stream *s;
	bool delta;
	char *acked;   /* SotW: the version last ACKed ("" at first) */
	char *version; /* of the last response */
	char *nonce;   /* of the last response */
	size_t removed; /* delta: names the last response removed */
};

/* Opens the stream on `c` as node `id` of cluster "edge" (served the
 * default snapshot), SotW or `delta`, and asks for every cluster. */
void xdt_peer_open(struct xdt_peer *p, struct xdc_conn *c, bool delta,
		   const char *id);

/* The same as node `id` of `cluster`. */
void xdt_peer_open_in(struct xdt_peer *p, struct xdc_conn *c, bool delta,
		      const char *id, const char *cluster);

/* The next response, unanswered: its resource count (-1: none within
 * `timeout_ms`). Its version (SotW) and nonce are kept. */
int xdt_peer_next(struct xdt_peer *p, int timeout_ms);

/* Answers the last response: an ACK, or a NACK with `nack`. */
void xdt_peer_answer(struct xdt_peer *p, const char *nack);

/* The next response must come, hold `n` resources, and be ACKed. */
void xdt_peer_expect(struct xdt_peer *p, int n, const char *who);

/* Nothing may come for XDT_PEER_QUIET_MS. */
void xdt_peer_quiet(struct xdt_peer *p, const char *who);

void xdt_peer_close(struct xdt_peer *p);

#endif
