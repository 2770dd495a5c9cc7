/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /status: the daemon at a glance, as an HTML page for people.
 * Rendered on the server from live state when asked; the page needs no
 * JavaScript and loads nothing else (inline CSS, inline SVG), so it
 * works offline, through an SSH tunnel, in a text browser.
 *
 *   header       version, uptime, xDS listener, readiness and beside
 *                it a badge per warning below, counts
 *   warnings     first in <main>, each a box of its own: the last good
 *                state served instead of refused snapshots, a failed
 *                staged rollout, saves of the last good state failing
 *   snapshots    key, version, since, resources per type, bytes
 *   reloads      the last XD_RELOAD_HISTORY: time, trigger, result
 *                (with a staged rollout, what became of the change:
 *                staged, rolled back), duration, errors
 *                (file:line:col: message)
 *   clients      NACKed streams first, then pending, then synced, with
 *                the identity a client certificate proves and each
 *                type's state; under a NACKing stream's row its NACK
 *                messages across the table, two lines each until opened
 *                (<details>: fifteen NACKing streams fit a 1400x1000
 *                window); at most XD_STATUS_PAGE_MAX_CLIENTS streams
 *                (the rest: /clients)
 *   convergence  the recent convergence samples (stats.h) as a chart
 *
 * Every string a client or a snapshot file chose is HTML-escaped
 * (util/html.h). The figures are those of /status.json (status.h).
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_STATUS_PAGE_H
#define XD_ADMIN_STATUS_PAGE_H

#include <stdbool.h>

#include "admin/admin.h"
#include "admin/pager.h"
#include "util/buf.h"

/* Rows of the clients table: the page stays a few hundred KiB with
 * 10,000 streams. */
#define XD_STATUS_PAGE_MAX_CLIENTS 500

/* The page, written in steps (pager.h): the streams open when it began
 * are counted and their rows written over the turns, the rest of the
 * page at the last step. `deps` must outlive it. */
struct xd_status_page;

struct xd_status_page *xd_status_page_new(const struct xd_admin_deps *deps,
					  bool ready);

/* The page for the pager (pager.h), whose state is an
 * xd_status_page: written once the streams are walked. */
extern const struct xd_pager_page xd_status_page_pager;

#endif
