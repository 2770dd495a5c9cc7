/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /status.json: the daemon at a glance, for xdsctl's `status` and
 * scripts. One object:
 *
 *   {"version": "0.4.0", "started": "<RFC 3339 UTC>",
 *    "uptime_seconds": 3600, "ready": true,
 *    "listen": "0.0.0.0:18000",           (xDS listener, as configured)
 *    "port": 18000,                        (the port bound)
 *    "tls": null, or {"mutual": true,      (the xDS listener's TLS)
 *       "certificate": {"file": "/etc/xdsd/tls/server.pem",
 *          "subject": "/CN=xds.example.org",
 *          "not_after": "<RFC 3339 UTC>",
 *          "expires_in_seconds": 2592000},  (negative once expired)
 *       "client_ca": { the same, for the client CA that expires first },
 *                                          (only with tls.client_ca)
 *       "handshake_failures": 3},
 *    "source": {"kind": "files",           (where snapshots come from)
 *       "dir": "/etc/xdsd/snapshots"},
 *       or {"kind": "etcd", "endpoints": ["10.0.0.1:2379", ...],
 *       "endpoint": "10.0.0.1:2379",       (in use, or tried next)
 *       "prefix": "/xdsd/snapshots/",
 *       "revision": 42,                    (of the keys held; 0: none)
 *       "healthy": true,                   (read and watching)
 *       "since": "<RFC 3339 UTC>",         (when healthy last changed)
 *       "reconnects": 0,                   (calls started again)
 *       "last_error": null, or "<why>" with "last_error_at": "<RFC 3339>"},
 *    "streams": 12,                        (open xDS streams)
 *    "nodes": 10,                          (distinct node ids among them)
 *    "clients": {"synced": 9, "pending": 2, "nacked": 1,
 *                                          (streams by their worst type,
 *                                           as /clients' "state")
 *       "oldest_pending_seconds": 12.5},   (the longest any response
 *                                           waits for its answer; 0: none)
 *    "snapshots": [ {"key": "default", "version": "<16 hex>",
 *       "since": "<RFC 3339 UTC>",
 *       "resources": {"clusters": 3, "endpoints": 3},  (non-zero only)
 *       "bytes": 1234} ],                  (encoded resources)
 *    "reloads": {"ok": 4, "failed": 1,     (start-up not counted)
 *       "history": [ <reload record, reloads.h>, ... ] },  (newest first)
 *    "rollout": <the staged rollout, rollout.h>,
 *    "last_good": null, or {               (with state_dir: the last
 *                                           good state, reload/laststate.h)
 *       "file": "/var/lib/xdsd/snapshots.state",
 *       "serving": true,                   (the snapshots were refused at
 *                                           start: the saved state is served)
 *       "saved_at": "<RFC 3339 UTC>",      (when the content on disk was
 *                                           saved; or null)
 *       "serving_since": "<RFC 3339 UTC>", (or null)
 *       "error_count": 1, "errors": ["..."],  (why they were refused)
 *       "saves_ok": 3, "saves_failed": 0,
 *       "saves_unchanged": 1,              (not rewritten: the same content)
 *       "last_save_error": null,           (or why the last failed save did)
 *       "last_save_error_at": null,        (or when, RFC 3339 UTC)
 *       "save_failing": false }}           (the newest save failed: the
 *                                           state on disk is older than
 *                                           what is served)
 *
 * The HTML page (status_page.h) shows the same figures, computed by the
 * same functions below.
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_STATUS_H
#define XD_ADMIN_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin/admin.h"
#include "snapshot/snapshot.h"
#include "util/buf.h"

struct xd_status_overview {
	int64_t started_ms, now_ms; /* Unix ms */
	size_t streams, nodes;
	size_t synced, pending, nacked; /* streams by state */
	uint64_t oldest_pending_ms; /* xdsd_oldest_unacked_seconds, in ms */
};

/* Walks every stream once to count them, in steps (pager.h), over the
 * streams open when it began: each step returns NULL until the last, which returns the
 * overview (valid until the free). `also` (NULL: none) sees each
 * stream counted, with its state (xd_clients_state) and the overview's
 * now_ms, in the same walk. */
struct xd_status_count;

typedef void (*xd_status_also_fn)(void *arg, const struct xd_client_view *c,
				  enum xd_sub_sync state, int64_t now_ms);

struct xd_status_count *xd_status_count_new(struct xd_sessions *sessions,
					    xd_status_also_fn also, void *arg);
const struct xd_status_overview *
xd_status_count_step(struct xd_status_count *k, uint64_t deadline_ns);
void xd_status_count_free(struct xd_status_count *k);

/* The bytes of a snapshot's resources as encoded for the wire (each
 * resource message once). */
size_t xd_status_snapshot_bytes(const struct xd_snapshot *s);

/*
 * Whether xdsd serves, and whether something needs an operator: the
 * verdict `xdsctl status` reads from /status.json (xdsctl(1): exit 0,
 * 1 or 4), from the same facts, for the replica's registration in the
 * fleet (rollout/fleet.h). Not serving: not `ready` (before the first
 * load, stopping). Degraded: the last good state is served (the
 * snapshots were refused at start), the last reload was refused, the
 * last good state cannot be saved, the last rollout failed, or the etcd
 * source is not watching. *why (static text) says the first reason,
 * NULL when serving and healthy.
 */
enum xd_replica_health xd_status_health(const struct xd_admin_deps *deps,
					bool ready, const char **why);

/* Writes the /status.json document (with a final newline) with the
 * streams as counted in `o`. */
void xd_status_render(struct xd_buf *out, const struct xd_admin_deps *deps,
		      bool ready, const struct xd_status_overview *o);

#endif
