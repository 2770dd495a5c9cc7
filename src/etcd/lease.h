/* SPDX-License-Identifier: Apache-2.0 */
/*
 * This replica's lease in etcd (etcdserverpb.Lease): granted once etcd
 * answers, for its TTL (etcd.lease_ttl, whole seconds, rounded up),
 * kept alive every third of that, and granted anew when etcd says it
 * expired or it could not be kept alive for its whole TTL (etcd lost
 * meanwhile). Keys put with it go when the replica goes: at once when
 * it stops cleanly, as the lease is revoked then (a last call,
 * etcd.h: bounded by XD_ETCD_LAST_CALL_MS, so that an etcd out of
 * reach does not hold the stop up), and a TTL later when it is killed
 * or cut from etcd: the reports each replica keeps under the prefix
 * (rollout/fleet.h).
 *
 * Whoever started it hears of each new lease, and of its loss (id 0),
 * through `changed`, and puts its keys again under the new one.
 *
 * The calls are the etcd source's (etcd.h, xd_etcd_call), one at a
 * time; the lease stops before the source does.
 *
 * Ownership: borrows the loop and the source; frees itself once
 * stopped and its timer closed. Thread: loop thread only (checked).
 */
#ifndef XD_ETCD_LEASE_H
#define XD_ETCD_LEASE_H

#include <stdint.h>
#include <uv.h>

#include "etcd/etcd.h"

/* between tries when etcd does not answer a grant or keep-alive */
#define XD_ETCD_LEASE_RETRY_MS 1000

struct xd_etcd_lease;

struct xd_etcd_lease *xd_etcd_lease_start(uv_loop_t *loop, struct xd_etcd *e,
					  uint64_t ttl_ms,
					  void (*changed)(void *arg,
							  int64_t id),
					  void *arg);

/* The lease held now, 0: none. */
int64_t xd_etcd_lease_id(const struct xd_etcd_lease *l);

/* No `changed` runs afterwards; the lease held is revoked, before the
 * source stops (xd_etcd_stop). NULL: nothing. */
void xd_etcd_lease_stop(struct xd_etcd_lease *l);

#endif
