/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reload's record as JSON: what POST /reload answers and each entry
 * of /status.json's reload history, written by one function so that
 * xdsctl reads the same object from both.
 *
 *   {"ok": bool, "trigger": "SIGHUP", "finished": "<RFC 3339 UTC>",
 *    "seconds": 0.012, "snapshots": N, "files": N, "changed": N,
 *    "last_good": bool,   (refused, the last good state served instead)
 *    "error_count": N, "errors": ["file:line:col: message", ...]}
 *
 * "errors" holds the first XD_RELOAD_ERRORS_KEPT of "error_count".
 *
 * Thread: loop thread (records belong to the reloader).
 */
#ifndef XD_ADMIN_RELOADS_H
#define XD_ADMIN_RELOADS_H

#include "reload/reload.h"
#include "util/jsonw.h"

void xd_reload_record_json(struct xd_jw *w, const struct xd_reload_record *rec);

/* "error_count": n, "errors": [the first nkept]: as in a record, and
 * in /status.json's last_good. */
void xd_errors_json(struct xd_jw *w, size_t nerrors, char *const *errors,
		    size_t nkept);

#endif
