/* SPDX-License-Identifier: Apache-2.0 */
/*
 * POST /reload?dry_run=1[&snapshots=DIR]: what reloading now would
 * change, without changing anything (xdsctl diff). The reloader loads
 * and checks the snapshots as a reload does (reload/reload.h,
 * xd_reload_dry_run), the directory it serves or DIR (an absolute path,
 * read by xdsd), and the answer is the record of that dry run with the
 * full diff (admin/reloads.h) and whom each change reaches: the nodes
 * connected now (distinct node ids) whose snapshot it changes:
 *
 *   - a key that changes, comes or goes: the nodes of that key (for a
 *     key that comes, those served the default snapshot until now; for
 *     one that goes, those that fall back to it);
 *   - the default snapshot: the nodes it serves before and after, whose
 *     key has no snapshot of its own either way.
 *
 * Its warnings add, beside a reload's, the resources removed from a key
 * that stays while connected nodes of that key still ask for them by
 * name (their subscriptions), and a change that reaches every
 * connected node.
 *
 * DIR must be the snapshot directory or at or below one of
 * `dry_run_dirs:` (xdsd.yaml(5)), symlinks and ".." resolved first: a
 * dry run quotes what it reads in its errors, so an arbitrary directory
 * would let whoever reaches the admin endpoint read, through xdsd,
 * files only xdsd may read. The resolved directory is what is read.
 *
 * 200 with the answer; 422 when the reload would be refused (its
 * errors); 400 for a malformed query; 403 for a directory a dry run may
 * not read (logged, and counted in *forbidden); 503 when xdsd is
 * stopping or too many dry runs wait.
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_PREVIEW_H
#define XD_ADMIN_PREVIEW_H

#include "admin/admin.h"
#include "http/http.h"

/* Whether the query asks for a dry run ("dry_run=1" or "dry_run=true"):
 * 1 yes, 0 no, -1 malformed (answered with 400). */
int xd_preview_asked(struct xd_http_exchange *x);

/* Starts the dry run; the exchange is answered when it is over. A
 * directory refused is counted in *forbidden. */
void xd_preview_start(struct xd_http_exchange *x,
		      const struct xd_admin_deps *deps,
		      unsigned long long *forbidden);

#endif
