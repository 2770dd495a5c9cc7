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
 * more of the answer into the exchange's `out`, stopping when
 * xd_pager_enough says so (its deadline, or as much written as a page
 * may hold unsent; checked every few items), and says whether it is
 * done. Its state must stay right whatever happens between two calls
 * (streams closing: xd_sessions_cursor; a reload: a reference on the
 * snapshot being written).
 *
 * An answer written in one step goes whole, with its length. One that
 * takes more is sent as it is written (http.h, xd_http_stream_start):
 * the head with its first bytes, chunked, then each step's bytes; the
 * status and type are set before the first step (the handler's) and
 * never changed by a step, and the bytes are those of a page written at
 * once. So a request holds at most XD_PAGER_BUFFER of its answer: once
 * XD_PAGER_HIGH is written and not yet taken by the client, the page
 * takes no slice until the client has read it down to XD_PAGER_LOW; a
 * client that reads nothing is closed by the endpoint's idle timeout.
 * A client that leaves ends its page at once.
 *
 * Pages take turns, oldest first, each at least one step a turn unless
 * it waits for its client: a page is never starved by a newer one.
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

/*
 * What one page's answer holds at most, written and not yet sent: its
 * buffer's size. A step stops once XD_PAGER_HIGH is unsent, having
 * written one item more at most (a resource's JSON, a few streams'),
 * which fits in the other half unless that item alone is larger (the
 * buffer then grows to hold it). The HTTP library adds its connection
 * memory (32 KiB), the kernel its socket buffer.
 */
#define XD_PAGER_BUFFER (256u * 1024)
#define XD_PAGER_HIGH (XD_PAGER_BUFFER / 2)
/* A waiting page goes on once its client has read down to this. */
#define XD_PAGER_LOW (XD_PAGER_BUFFER / 4)

struct xd_pager;

struct xd_pager_page {
	/* Writes more of the answer into x->out; returns true once the
	 * answer is whole. Stops soon after xd_pager_enough(x,
	 * `deadline_ns`) holds, having made progress. Leaves the status
	 * and type as the handler set them: the head may be sent already. */
	bool (*step)(void *st, struct xd_http_exchange *x, uint64_t deadline_ns);
	/* Frees the state: after the last step, or when the client went
	 * away or the endpoint stops. */
	void (*done)(void *st);
};

/* Whether a step stops here: past `deadline_ns` (uv_hrtime's clock),
 * or with XD_PAGER_HIGH of its answer unsent. */
bool xd_pager_enough(const struct xd_http_exchange *x, uint64_t deadline_ns);

struct xd_pager *xd_pager_new(uv_loop_t *loop);

/* Writes the page for `x` over the next loop turns, then answers it.
 * `page` must outlive the pager (a static). */
void xd_pager_start(struct xd_pager *p, struct xd_http_exchange *x,
		    const struct xd_pager_page *page, void *st);

/* What the pager wrote, for /metrics. */
struct xd_pager_stats {
	unsigned long long pages;  /* answered */
	unsigned long long slices; /* steps, over every page */
	size_t held;     /* bytes: the buffers of the pages being written */
	size_t held_max; /* bytes: the largest one page's buffer has been */
};

const struct xd_pager_stats *xd_pager_stats(const struct xd_pager *p);

/* Frees the pager once every page is over (call after the HTTP server
 * stopped: its held answers have heard `gone`). */
void xd_pager_free(struct xd_pager *p);

#endif
