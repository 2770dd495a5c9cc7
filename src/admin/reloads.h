/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reload's record as JSON: what POST /reload answers and each entry
 * of /status.json's reload history, written by one function so that
 * xdsctl reads the same object from both.
 *
 *   {"ok": bool, "trigger": "SIGHUP", "finished": "<RFC 3339 UTC>",
 *    "etcd_revision": N (null unless the snapshots came from etcd),
 *    "seconds": 0.012, "snapshots": N, "files": N, "changed": N,
 *    "last_good": bool,   (refused, the last good state served instead)
 *    "rollout": null,     (not a dry run: with a staged rollout, what
 *                          became of its change: "staged" (with the
 *                          canaries), "promoted", "rolled_back" (failed
 *                          or aborted), "replaced" (by a later reload's);
 *                          null: served to every node as it came)
 *    "error_count": N, "errors": ["file:line:col: message", ...],
 *    "diff": {...}}
 *
 * "errors" holds the first XD_RELOAD_ERRORS_KEPT of "error_count".
 * "diff", in a reload that was not refused, is what it changed
 * (snapshot/diff.h): its counts, and the first XD_DIFF_SUMMARY_LISTED
 * resources by name and versions ("cut" when more changed); the same
 * object a dry run answers with (admin/preview.h), which lists up to
 * XD_DIFF_MAX_LISTED resources with the diff of each and adds whom each
 * change reaches:
 *
 *   {"changed": bool, "added": N, "removed": N, "changed_resources": N,
 *    "cut": bool, "connected_nodes": N, "rest_pollers": N (dry run),
 *    "warnings": ["snapshot 'edge' is removed: ...", ...],
 *      (a dry run also warns of a resource removed that connected
 *      nodes still ask for by name, and of a change that reaches every
 *      connected node)
 *    "snapshots": [{"key": "edge", "change": "added|removed|changed",
 *      "version_before": "...", "version_after": "...",
 *      "streams_moved": N (removed keys),
 *      "nodes": N, "rest_pollers": N, "node_ids": [...] (dry run;
 *      nodes count REST-JSON pollers seen lately, rest_pollers those),
 *      "types": [{"type": "clusters", "version_before": "...",
 *        "version_after": "...", "added": N, "removed": N, "changed": N,
 *        "resources": [{"name": "...", "change": "...",
 *          "version_before": "...", "version_after": "...",
 *          "diff": "@@ -1,3 +1,3 @@\n..." (dry run)}]}]}],
 *    "snapshots_not_shown": N}
 *
 * At most XD_RELOAD_JSON_KEYS snapshots are listed (a dry run:
 * XD_PREVIEW_JSON_KEYS), the rest counted in "snapshots_not_shown".
 *
 * Thread: loop thread (records belong to the reloader).
 */
#ifndef XD_ADMIN_RELOADS_H
#define XD_ADMIN_RELOADS_H

#include "reload/reload.h"
#include "util/jsonw.h"

#define XD_RELOAD_JSON_KEYS 50
#define XD_PREVIEW_JSON_KEYS 1000
/* node ids listed per snapshot in a dry run's answer */
#define XD_PREVIEW_NODE_IDS 100

/* Whom one key's change reaches: connected nodes (distinct ids), gRPC
 * streams' and fresh REST-JSON pollers' (rest/pollers.h). */
struct xd_reach_key {
	size_t nodes;
	size_t rest; /* of `nodes`, those polling by REST-JSON */
	char **ids; /* sorted; the first XD_PREVIEW_NODE_IDS */
	size_t nids;
	/* with a staged rollout: canaries connected to any replica that
	 * the key serves (rollout.h, xd_rollout_canaries_of) */
	size_t canaries;
};

/* A resource the dry run removes from a snapshot that stays, which
 * connected nodes of that snapshot still ask for by name: indexes into
 * the diff, and how many nodes. */
struct xd_reach_asked {
	size_t key, section, res;
	size_t nodes;
};

/* Whom a dry run's changes reach, aligned with its diff's keys. */
struct xd_reach {
	size_t connected; /* nodes connected now, by stream or poll */
	size_t rest_pollers; /* of them, those polling by REST-JSON */
	struct xd_reach_key *keys;
	struct xd_reach_asked *asked;
	size_t nasked;
	bool rollout; /* a staged rollout counts canaries (keys' canaries) */
};

void xd_reload_record_json(struct xd_jw *w, const struct xd_reload_record *rec);

/* The same with whom each change reaches (NULL: not said). */
void xd_reload_record_reach_json(struct xd_jw *w,
				 const struct xd_reload_record *rec,
				 const struct xd_reach *reach);

/* "error_count": n, "errors": [the first nkept]: as in a record, and
 * in /status.json's last_good. */
void xd_errors_json(struct xd_jw *w, size_t nerrors, char *const *errors,
		    size_t nkept);

#endif
