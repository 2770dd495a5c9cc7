/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A histogram of durations with fixed bucket bounds, as Prometheus
 * histograms are exposed: a count per bound of the observations at or
 * under it (cumulative when read), their count and their sum.
 *
 * Thread: one owner at a time.
 */
#ifndef XD_UTIL_HISTOGRAM_H
#define XD_UTIL_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define XD_HISTOGRAM_MAX_BOUNDS 16

struct xd_histogram {
	const double *bounds; /* ascending, in seconds; static */
	size_t nbounds;
	uint64_t at_most[XD_HISTOGRAM_MAX_BOUNDS]; /* per bound, not cumulative */
	uint64_t count;
	double sum;
};

/* Bounds for a push reaching clients: 5 ms to 60 s. */
extern const double xd_histogram_push_bounds[];
extern const size_t xd_histogram_push_nbounds;

void xd_histogram_init(struct xd_histogram *h, const double *bounds,
		       size_t nbounds);
void xd_histogram_observe(struct xd_histogram *h, double seconds);

/* Observations at or under bound i, those under earlier bounds included. */
uint64_t xd_histogram_cumulative(const struct xd_histogram *h, size_t i);

#endif
