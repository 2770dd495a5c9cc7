/* SPDX-License-Identifier: Apache-2.0 */
#include "util/histogram.h"

#include "util/xalloc.h"

const double xd_histogram_push_bounds[] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
};
const size_t xd_histogram_push_nbounds =
	sizeof(xd_histogram_push_bounds) / sizeof(xd_histogram_push_bounds[0]);

void xd_histogram_init(struct xd_histogram *h, const double *bounds,
		       size_t nbounds)
{
	XD_ASSERT(nbounds <= XD_HISTOGRAM_MAX_BOUNDS);
	*h = (struct xd_histogram){.bounds = bounds, .nbounds = nbounds};
}

void xd_histogram_observe(struct xd_histogram *h, double seconds)
{
	for (size_t i = 0; i < h->nbounds; i++) {
		if (seconds <= h->bounds[i]) {
			h->at_most[i]++;
			break;
		}
	}
	h->count++;
	h->sum += seconds;
}

uint64_t xd_histogram_cumulative(const struct xd_histogram *h, size_t i)
{
	uint64_t n = 0;

	XD_ASSERT(i < h->nbounds);

	for (size_t j = 0; j <= i && j < h->nbounds; j++)
		n += h->at_most[j];
	return n;
}
