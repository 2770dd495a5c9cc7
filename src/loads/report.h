/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A load report as the load reporting service reads it: one
 * LoadStatsRequest (envoy.service.load_stats.v3, lrs.proto), its node
 * (the first request's) and its ClusterStats, each with the counts of
 * its localities (UpstreamLocalityStats) over the interval it covers
 * (docs/protocol.md, rule M2).
 *
 * Read in place with the wire reader, as every request on the listener
 * is: nothing of a peer's input is copied or allocated here, names point
 * into the request's bytes, unknown fields are skipped as protobuf skips
 * them, and of a scalar field repeated the last counts. A request is
 * read whole before anything of it is handed on, so a malformed one
 * hands on nothing.
 *
 * Thread: any; pure.
 */
#ifndef XD_LOADS_REPORT_H
#define XD_LOADS_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "util/span.h"

/* One locality's counts in one report (UpstreamLocalityStats). */
struct xd_load_locality {
	struct xd_name region, zone, sub_zone;
	uint32_t priority;
	uint64_t succeeded;   /* requests that completed successfully */
	uint64_t errors;      /* requests that completed with an error */
	uint64_t in_progress; /* requests under way when it was written */
	uint64_t issued;      /* requests issued over the interval */
};

/* One cluster of one report (ClusterStats), without its localities. */
struct xd_load_cluster {
	struct xd_name name;
	struct xd_name service_name; /* cluster_service_name (EDS's) */
	uint64_t dropped;            /* total_dropped_requests */
	uint64_t interval_ms;        /* load_report_interval; 0: not said */
};

/* What a report is handed on to: each cluster, then each of its
 * localities (`c` is the cluster's, valid during the call only). */
struct xd_load_report_sink {
	void (*cluster)(void *arg, const struct xd_load_cluster *c);
	void (*locality)(void *arg, const struct xd_load_cluster *c,
			 const struct xd_load_locality *l);
	void *arg;
};

/*
 * Reads the LoadStatsRequest in `p` (`len` bytes): its encoded Node in
 * *node (empty when it has none), its clusters and localities to
 * `sink` (NULL: only checked) and their counts in *nclusters and
 * *nlocalities. Returns 0, or -1 for bytes that are no such message,
 * with nothing handed on and the reason in `why` (`why_len` bytes).
 */
int xd_load_report_read(const uint8_t *p, size_t len, struct xd_span *node,
			const struct xd_load_report_sink *sink,
			size_t *nclusters, size_t *nlocalities, char *why,
			size_t why_len);

#endif
