/* SPDX-License-Identifier: Apache-2.0 */
#include "loads/report.h"

#include <stdbool.h>
#include <stdio.h>

#include "wire/wire.h"
#include "xds/message.h"

/* A Duration in milliseconds (nanoseconds rounded down); -1 when it is
 * malformed or negative. */
static int64_t duration_ms(const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	struct xd_wire_field f;
	uint64_t seconds = 0, nanos = 0;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.wt != XD_WT_VARINT)
			continue;
		if (f.number == XD_DURATION_SECONDS)
			seconds = f.v;
		else if (f.number == XD_DURATION_NANOS)
			nanos = f.v;
	}
	/* int64 seconds and int32 nanos: a negative one is a huge varint */
	if (rc < 0 || seconds > INT64_MAX / 1000 || nanos >= 1000000000u)
		return -1;
	return (int64_t)(seconds * 1000 + nanos / 1000000);
}

static int locality_name(const uint8_t *p, size_t len,
			 struct xd_load_locality *l)
{
	const uint8_t *end = p + len;
	struct xd_wire_field f;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		struct xd_name *to = f.number == XD_LOCALITY_REGION ? &l->region :
				     f.number == XD_LOCALITY_ZONE ? &l->zone :
				     f.number == XD_LOCALITY_SUB_ZONE ? &l->sub_zone :
									  NULL;

		if (to == NULL)
			continue;
		if (f.wt != XD_WT_LEN)
			return -1;
		*to = (struct xd_name){(const char *)f.data, f.len};
	}
	return rc;
}

/* An UpstreamLocalityStats into *l; -1 when malformed. */
static int locality(const uint8_t *p, size_t len, struct xd_load_locality *l)
{
	const uint8_t *end = p + len;
	struct xd_wire_field f;
	int rc;

	*l = (struct xd_load_locality){0};
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		uint64_t *to = NULL;

		switch (f.number) {
		case XD_LOCALITY_STATS_LOCALITY:
			if (f.wt != XD_WT_LEN || locality_name(f.data, f.len, l) != 0)
				return -1;
			continue;
		case XD_LOCALITY_STATS_SUCCEEDED:
			to = &l->succeeded;
			break;
		case XD_LOCALITY_STATS_IN_PROGRESS:
			to = &l->in_progress;
			break;
		case XD_LOCALITY_STATS_ERRORS:
			to = &l->errors;
			break;
		case XD_LOCALITY_STATS_ISSUED:
			to = &l->issued;
			break;
		case XD_LOCALITY_STATS_PRIORITY:
			if (f.wt != XD_WT_VARINT)
				return -1;
			l->priority = (uint32_t)f.v;
			continue;
		default:
			continue;
		}
		if (f.wt != XD_WT_VARINT)
			return -1;
		*to = f.v;
	}
	return rc;
}

/* A ClusterStats: the cluster into *c, each locality to `sink` (when
 * not NULL); how many in *nloc. -1 when malformed. */
static int cluster(const uint8_t *p, size_t len,
		   const struct xd_load_report_sink *sink, size_t *nloc)
{
	const uint8_t *start = p, *end = p + len;
	struct xd_load_cluster c = {0};
	struct xd_load_locality l;
	struct xd_wire_field f;
	int64_t ms;
	int rc;

	/* the cluster's own fields first: they may follow its localities */
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		switch (f.number) {
		case XD_CLUSTER_STATS_NAME:
		case XD_CLUSTER_STATS_SERVICE_NAME:
			if (f.wt != XD_WT_LEN)
				return -1;
			*(f.number == XD_CLUSTER_STATS_NAME ? &c.name : &c.service_name) =
				(struct xd_name){(const char *)f.data, f.len};
			break;
		case XD_CLUSTER_STATS_DROPPED:
			if (f.wt != XD_WT_VARINT)
				return -1;
			c.dropped = f.v;
			break;
		case XD_CLUSTER_STATS_INTERVAL:
			if (f.wt != XD_WT_LEN || (ms = duration_ms(f.data, f.len)) < 0)
				return -1;
			c.interval_ms = (uint64_t)ms;
			break;
		case XD_CLUSTER_STATS_LOCALITIES:
			if (f.wt != XD_WT_LEN || locality(f.data, f.len, &l) != 0)
				return -1;
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		return -1;
	if (sink != NULL && sink->cluster != NULL)
		sink->cluster(sink->arg, &c);
	for (p = start; xd_wire_next(&p, end, &f) == 1;) {
		if (f.number != XD_CLUSTER_STATS_LOCALITIES)
			continue;
		(*nloc)++;
		if (sink != NULL && sink->locality != NULL &&
		    locality(f.data, f.len, &l) == 0)
			sink->locality(sink->arg, &c, &l);
	}
	return 0;
}

/* One pass: checks everything, hands on to `sink` when not NULL. */
static int pass(const uint8_t *p, size_t len, struct xd_span *node,
		const struct xd_load_report_sink *sink, size_t *nclusters,
		size_t *nlocalities)
{
	const uint8_t *end = p + len;
	struct xd_wire_field f;
	int rc;

	*node = (struct xd_span){NULL, 0};
	*nclusters = *nlocalities = 0;
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == XD_LRS_REQUEST_NODE) {
			if (f.wt != XD_WT_LEN)
				return -1;
			*node = (struct xd_span){f.data, (uint32_t)f.len};
		} else if (f.number == XD_LRS_REQUEST_CLUSTER_STATS) {
			if (f.wt != XD_WT_LEN ||
			    cluster(f.data, f.len, sink, nlocalities) != 0)
				return -1;
			(*nclusters)++;
		}
	}
	return rc;
}

int xd_load_report_read(const uint8_t *p, size_t len, struct xd_span *node,
			const struct xd_load_report_sink *sink,
			size_t *nclusters, size_t *nlocalities, char *why,
			size_t why_len)
{
	if (pass(p, len, node, NULL, nclusters, nlocalities) != 0) {
		snprintf(why, why_len, "not an envoy.service.load_stats.v3.LoadStatsRequest");
		return -1;
	}
	if (sink != NULL)
		(void)pass(p, len, node, sink, nclusters, nlocalities);
	return 0;
}
