/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshots from etcd (`source: etcd`, xdsd.yaml(5)): the keys under
 * etcd.prefix mirror the snapshot directory, so several xdsd replicas
 * serve one store.
 *
 * At start it reads the prefix with one Range (etcdserverpb.KV/Range)
 * and asks the reloader for a reload, which loads what was read as it
 * would the directory's files (reload.h, xd_reloader_set_source). Then
 * it watches the prefix from the Range's revision + 1
 * (etcdserverpb.Watch/Watch); changes are applied to its copy of the
 * keys (kvmap.h) and, once none came for watch_delay, give one reload.
 * A broken value fails that reload like a broken file: the last good
 * snapshots keep being served.
 *
 * etcd unreachable at start: it logs why and tries again with backoff
 * (XD_ETCD_BACKOFF_MIN_MS doubling to XD_ETCD_BACKOFF_MAX_MS), the next
 * endpoint each time; nothing is served until the first good load.
 * Lost later: it keeps serving, reconnects the same way and resumes the
 * watch at the revision it had reached; when etcd has compacted that
 * revision away, it reads the whole prefix again.
 *
 * The calls run on the completion queue the xDS server's bridge owns
 * (transport/bridge.h): their completions reach the loop thread like
 * the server's own.
 *
 * Ownership: borrows the loop, queue, configuration and reloader (all
 * must outlive it); frees itself once stopped and its calls and timers
 * are over. Thread: loop thread only (checked).
 */
#ifndef XD_ETCD_ETCD_H
#define XD_ETCD_ETCD_H

#include <grpc/grpc.h>
#include <uv.h>

#include "config/config.h"
#include "reload/reload.h"

#define XD_ETCD_BACKOFF_MIN_MS 250
#define XD_ETCD_BACKOFF_MAX_MS 10000

/* The largest etcd response read: a Range of the whole prefix. */
#define XD_ETCD_MAX_RESPONSE (512u << 20)

struct xd_etcd;

/*
 * Starts reading the prefix (sets the reloader's source). Returns 0, or
 * -1 with the reason logged (TLS files that cannot be read).
 */
int xd_etcd_start(struct xd_etcd **out, uv_loop_t *loop,
		  grpc_completion_queue *cq, const struct xd_config *cfg,
		  struct xd_reloader *reloader);

/* Cancels its calls and timers; it frees itself once they are over. */
void xd_etcd_stop(struct xd_etcd *e);

#endif
