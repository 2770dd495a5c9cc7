/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /config_dump?snapshot=KEY[&type=TYPE[&name=NAME]]: what a snapshot
 * serves, each resource as Envoy's proto3 JSON (the form Envoy's own
 * config dump shows), with versions and where it was defined:
 *
 *   {"snapshot": "default", "version": "...", "since": "...",
 *    "types": [ {"type": "clusters", "type_url": "...", "version": "...",
 *      "resources": [ {"name": "...", "version": "...",
 *        "file": "snapshots/default.yaml", "line": 12,
 *        "resource": {"@type": "...", ...} } ] } ] }
 *
 * Secrets are listed without their content (private keys stay in the
 * snapshot files). TYPE is a snapshot section (clusters, endpoints, ...,
 * listener_collections, cluster_collections); without it
 * every type is shown, empty ones left out. An xdstp NAME is found by
 * any spelling of it (rule X1). `snapshot` may be left out
 * when only one snapshot is served.
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_DUMP_H
#define XD_ADMIN_DUMP_H

#include "admin/admin.h"
#include "admin/pager.h"
#include "http/http.h"

/* Answers the exchange: 200 with the dump, written in slices by
 * `pager` (pager.h) from the snapshot served when it was asked for, or
 * 400/404 with a reason at once. */
void xd_dump_handle(struct xd_http_exchange *x, const struct xd_admin_deps *deps,
		    struct xd_pager *pager);

#endif
