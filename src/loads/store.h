/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The load reports xdsd keeps (docs/protocol.md, rule M2): what each
 * node reports of each cluster and locality, over a window.
 *
 *   entries  one per (cluster, locality, node): the requests, errors,
 *            issued and dropped requests reported over the last
 *            `window_ms`, in slots of a twelfth of it, the requests in
 *            progress at its last report, and totals since it was
 *            first reported. A cluster's dropped requests belong to no
 *            locality: they are the entry of the empty locality. An
 *            entry no report has refreshed for a window goes; at most
 *            `max_entries` live, a report for a new one beyond them is
 *            counted (`refused`) and not kept.
 *   series   one per (cluster, locality), what /metrics shows: totals
 *            since start (counters that only grow) and the requests in
 *            progress over its live entries. At most `max_series`; the
 *            pairs past them are counted together in one series whose
 *            cluster and locality are XD_LOADS_OTHER, so the label
 *            values a scraper sees stay bounded whatever clients send.
 *            Series are never dropped (their counters would go back).
 *
 * Times are the caller's (monotonic ms for the window, Unix ms for
 * operators): the store reads no clock.
 *
 * Ownership: the store owns copies of every name. Thread: loop thread
 * only.
 */
#ifndef XD_LOADS_STORE_H
#define XD_LOADS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loads/report.h"
#include "util/span.h"

/* The cluster and locality of the series past max_series. */
#define XD_LOADS_OTHER "_other"

struct xd_loads;

struct xd_loads_opts {
	uint64_t window_ms; /* > 0 */
	size_t max_entries;
	size_t max_series;
};

struct xd_loads *xd_loads_new(const struct xd_loads_opts *o);
void xd_loads_free(struct xd_loads *l);

/*
 * What node `node` (copied) reports of cluster `c` in locality `loc`
 * (NULL: the cluster's dropped requests), at `now_ms` (monotonic),
 * which is `wall_ms` (Unix ms).
 */
void xd_loads_add(struct xd_loads *l, struct xd_name node,
		  const struct xd_load_cluster *c,
		  const struct xd_load_locality *loc, uint64_t now_ms,
		  int64_t wall_ms);

/* One entry as the pages show it: borrowed, valid during the visit. */
struct xd_load_view {
	const char *cluster, *service_name; /* service_name "" when none */
	const char *region, *zone, *sub_zone;
	const char *node;
	bool drops; /* the cluster's dropped requests, in no locality */
	/* over the window (or since the entry began, when later) */
	uint64_t span_ms;
	/* the intervals the window's reports say they cover (their
	 * load_report_interval): what its counts are per; 0 when they
	 * said none */
	uint64_t covered_ms;
	uint64_t requests; /* completed: succeeded and errors */
	uint64_t errors, issued, dropped;
	uint64_t in_progress; /* at the last report */
	uint64_t total_requests, total_errors, total_dropped;
	uint64_t reports;
	int64_t last_wall_ms;
	uint64_t age_ms; /* since the last report */
};

/* `n` of the entry `v` a second: over the intervals its reports said
 * they cover, or else over the time they came in (0 when neither). */
double xd_loads_rate(uint64_t n, const struct xd_load_view *v);

/* Calls fn for each live entry, oldest first (entries a window old go
 * before). */
void xd_loads_visit(struct xd_loads *l, uint64_t now_ms,
		    void (*fn)(void *arg, const struct xd_load_view *v),
		    void *arg);

/* The same from the first entry made after the one numbered `after` (0:
 * from the first), at most `max` of them; returns the number of the
 * last one visited (0: none, the walk is over). Entries come and go
 * between two calls: a walk visits each entry live at its call once. */
uint64_t xd_loads_visit_from(struct xd_loads *l, uint64_t now_ms,
			     uint64_t after, size_t max,
			     void (*fn)(void *arg, const struct xd_load_view *v),
			     void *arg);

/* One series as /metrics shows it. */
struct xd_load_series_view {
	const char *cluster;
	const char *locality; /* "region/zone/sub_zone"; "" for a cluster's
				 dropped requests, which have none */
	uint64_t requests, errors, dropped; /* since start */
	uint64_t in_progress;              /* over its live entries */
	/* over the window, its live entries together; the rates are the
	 * sums of theirs (xd_loads_rate) */
	uint64_t window_requests, window_errors;
	double requests_per_second, errors_per_second;
	size_t nodes;                      /* live entries */
};

/* Calls fn for each series, in the order they were made (the other
 * one last, once anything went to it). */
void xd_loads_visit_series(struct xd_loads *l, uint64_t now_ms,
			   void (*fn)(void *arg,
				      const struct xd_load_series_view *v),
			   void *arg);

struct xd_loads_stats {
	size_t entries, max_entries;
	size_t series, max_series;
	uint64_t window_ms;
	unsigned long long clusters;   /* ClusterStats taken */
	unsigned long long localities; /* UpstreamLocalityStats taken */
	unsigned long long refused;    /* not kept: max_entries were live */
	unsigned long long folded;     /* went to the other series */
};

void xd_loads_stats(const struct xd_loads *l, struct xd_loads_stats *out);

/* Counts one ClusterStats taken (its localities come through
 * xd_loads_add). */
void xd_loads_count_cluster(struct xd_loads *l);

#endif
