/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /loads: the load reports xdsd keeps (loads/store.h), as JSON for
 * scripts and `xdsctl loads`: each (cluster, locality, node) reported
 * within the window, with its requests, errors, issued and dropped
 * requests over the window and their rates, the requests in flight at
 * its last report and its totals. `?cluster=GLOB` keeps the clusters
 * whose name matches the fnmatch(3) pattern. Written a slice at a time
 * (pager.h): the entries grow with the fleet.
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_LOADS_H
#define XD_ADMIN_LOADS_H

#include <stddef.h>

#include "admin/pager.h"
#include "config/config.h"
#include "loads/service.h"
#include "loads/store.h"

struct xd_loads_page;

/* The page for `query`; NULL with the reason in `why` for a bad one. */
struct xd_loads_page *xd_loads_page_new(struct xd_loads *store,
					const struct xd_lrs_service *lrs,
					const struct xd_config *cfg,
					const char *query, char *why,
					size_t why_len);

extern const struct xd_pager_page xd_loads_pager;

#endif
