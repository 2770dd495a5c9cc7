/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pages written in slices between loop turns: the admin's pages that
 * grow with the fleet or the snapshot (/clients, /config_dump,
 * /status.json, /metrics) hold the loop for at most XD_PAGER_SLICE_NS
 * per turn, all pages together, so the streams, the other admin
 * requests and the xDS pushes go on while a page of 50,000 streams is
 * written (docs/engine.md, "Admin pages").
 *
 * A page is a `step` function with its own state: each call writes
 * more of the answer into the exchange's `out`, stopping at the
 * deadline it is given (checking the clock every few items), and says
 * whether it is done. Its state must stay right whatever happens
 * between two calls (streams closing: xd_sessions_cursor; a reload: a
 * reference on the snapshot being written). The answer is sent once
 * done, whole, with the same head and bytes as a page written at once;
 * the connection is suspended meanwhile (http.h: an answer given
 * later). A client that leaves ends its page at once.
 *
 * Pages take turns, oldest first, each at least one step a turn: a
 * page is never starved by a newer one.
 *
 * Ownership: the pager owns its pages' states (`done` frees them).
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_PAGER_H
#define XD_ADMIN_PAGER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "http/http.h"

/* What the pages may take of one loop turn, together. */
#define XD_PAGER_SLICE_NS (2u * 1000 * 1000)

struct xd_pager;

struct xd_pager_page {
	/* Writes more of the answer into x->out (status and type too);
	 * returns true once the answer is whole. Stops soon after
	 * `deadline_ns` (uv_hrtime's clock), having written something. */
	bool (*step)(void *st, struct xd_http_exchange *x, uint64_t deadline_ns);
	/* Frees the state: after the last step, or when the client went
	 * away or the endpoint stops. */
	void (*done)(void *st);
};

struct xd_pager *xd_pager_new(uv_loop_t *loop);

/* Writes the page for `x` over the next loop turns, then answers it.
 * `page` must outlive the pager (a static). */
void xd_pager_start(struct xd_pager *p, struct xd_http_exchange *x,
		    const struct xd_pager_page *page, void *st);

/* What the pager wrote, for /metrics. */
struct xd_pager_stats {
	unsigned long long pages;  /* answered */
	unsigned long long slices; /* steps, over every page */
};

const struct xd_pager_stats *xd_pager_stats(const struct xd_pager *p);

/* Frees the pager once every page is over (call after the HTTP server
 * stopped: its held answers have heard `gone`). */
void xd_pager_free(struct xd_pager *p);

#endif
