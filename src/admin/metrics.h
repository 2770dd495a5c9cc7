/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /metrics: Prometheus text exposition format 0.0.4.
 *
 *   xdsd_build_info{version}                      1
 *   xdsd_streams{method,mode}                     gauge, every method
 *   xdsd_requests_total                           counter
 *   xdsd_responses_total{type}                    counter
 *   xdsd_response_bytes_total{type}               counter
 *   xdsd_acks_total{type}, xdsd_nacks_total{type} counters
 *   xdsd_subscriptions{type,state}                gauge: (stream, type)
 *                                                 pairs synced, pending
 *                                                 or nacked now
 *   xdsd_convergence_seconds{type}                histogram
 *   xdsd_rest_requests_total{type},               counters, with REST-JSON
 *   xdsd_rest_responses_total{type},              on (rest.h); no virtual
 *   xdsd_rest_refused_total                       hosts
 *   xdsd_rest_polls_waiting                       gauge
 *   xdsd_rest_answers_printed_total               counter: answers printed
 *                                                 as JSON (the rest shared)
 *   xdsd_http_connections{endpoint}               gauge: admin, rest
 *   xdsd_http_requests_total{endpoint}            counter
 *   xdsd_http_refused_total{endpoint,reason}      counter: connections,
 *                                                 per_address,
 *                                                 header_timeout, rate,
 *                                                 too_large, foreign_site
 *   xdsd_admin_pages_total                        counter: admin pages
 *                                                 written in slices
 *                                                 between loop turns
 *                                                 (pager.h), answered
 *   xdsd_admin_page_slices_total                  counter: their slices
 *   xdsd_streams_refused_total{reason}            counter: permission_denied,
 *                                                 unauthenticated, limits,
 *                                                 invalid_argument,
 *                                                 no_snapshot, unimplemented
 *                                                 (refusals.h)
 *   xdsd_tls_handshake_failures_total             counter, with tls
 *   xdsd_tls_certificate_expiry_timestamp_seconds{role,file}
 *                                                 gauge, with tls: role
 *                                                 server, and client_ca (the
 *                                                 CA that expires first)
 *   xdsd_reloads_total{result}                    counter: ok, error
 *   xdsd_reload_duration_seconds                  histogram
 *   xdsd_last_reload_successful                   gauge 0/1
 *   xdsd_last_reload_timestamp_seconds            gauge
 *   xdsd_etcd_revision{prefix}                    gauge, with source: etcd:
 *                                                 the revision of the keys
 *                                                 held
 *   xdsd_etcd_up{prefix}                          gauge 0/1: read and watched
 *   xdsd_etcd_reconnects_total{prefix}            counter: reads or watches
 *                                                 started again after a
 *                                                 failure
 *   xdsd_snapshot_resources{snapshot,type}        gauge
 *   xdsd_snapshot_info{snapshot,version}          1
 *   xdsd_snapshot_since_timestamp_seconds{snapshot} gauge
 *   process_* (resident and virtual memory, CPU, open and max fds,
 *   start time)
 *
 * `type` is the snapshot section name (clusters, endpoints, ...), and
 * "other" for types xdsd does not serve; `method` is ADS or the
 * per-type service (CDS, ...), `mode` sotw or delta.
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_METRICS_H
#define XD_ADMIN_METRICS_H

#include "admin/admin.h"
#include "admin/pager.h"
#include "http/http.h"
#include "util/buf.h"

#define XD_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* What the admin endpoint itself served and refused. */
struct xd_admin_http {
	const struct xd_http_stats *http;
	const unsigned long long *foreign; /* refused by its guard (guard.h) */
	const struct xd_pager_stats *pager; /* its pages written in slices */
	/* dry runs refused for the directory they name (preview.h) */
	const unsigned long long *dry_run_dir;
};

/*
 * The scrape, written in steps (pager.h): the per-stream gauges
 * (xdsd_subscriptions, xdsd_oldest_unacked_seconds) are counted over
 * the streams open when it began, a slice a turn; every other figure
 * is read at the last step. `deps` must outlive the page; `admin` is
 * copied (its pointers must outlive it).
 */
struct xd_metrics_page;

struct xd_metrics_page *xd_metrics_page_new(const struct xd_admin_deps *deps,
					    const struct xd_admin_http *admin);

/* The page for the pager (pager.h), whose state is an
 * xd_metrics_page: written once the streams are counted. */
extern const struct xd_pager_page xd_metrics_pager;

#endif
