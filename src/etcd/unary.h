/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One-message calls to etcd on the daemon's completion queue: a Txn, a
 * Range of a few keys, a LeaseGrant, one LeaseKeepAlive (a request and
 * its answer on the stream, then the stream closed), each a request
 * sent whole and one answer read. The etcd source (etcd.h) owns the
 * set and the channel its calls go on; whoever writes to etcd
 * (rollout/fleet_etcd.c, etcd/lease.c) asks the source
 * (xd_etcd_call), which hands the call here.
 *
 * Each call ends with its `done` on the loop thread, once: the answer
 * (borrowed for the call; NULL when it failed) or why it failed. After
 * xd_etcd_calls_cancel no `done` runs at all, what asked may be gone,
 * but for a last call (XD_ETCD_CALL_LAST: a lease's revoke as xdsd
 * stops), which goes on to its answer or its deadline and then runs its
 * `done`: what it tells etcd must reach it even though everything else
 * is stopping.
 *
 * Bounds: at most XD_ETCD_CALLS_MAX calls at once (more are refused
 * with why), each bounded by its deadline.
 *
 * Ownership: the set owns its calls; the requests are packed at the
 * start and not kept. Thread: loop thread only (checked).
 */
#ifndef XD_ETCD_UNARY_H
#define XD_ETCD_UNARY_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

#define XD_ETCD_CALLS_MAX 16

#define XD_ETCD_LEASE_GRANT_METHOD "/etcdserverpb.Lease/LeaseGrant"
#define XD_ETCD_LEASE_KEEPALIVE_METHOD "/etcdserverpb.Lease/LeaseKeepAlive"
#define XD_ETCD_LEASE_REVOKE_METHOD "/etcdserverpb.Lease/LeaseRevoke"

/* xd_etcd_calls_start's flags: not cancelled with the others. */
#define XD_ETCD_CALL_LAST 1u

/* `resp` (NULL: failed, `why` says why) is borrowed during the call. */
typedef void (*xd_etcd_done_fn)(void *arg, const ProtobufCMessage *resp,
				const char *why);

struct xd_etcd_calls;

/* `idle(arg)` runs each time the last call under way is over. */
struct xd_etcd_calls *xd_etcd_calls_new(grpc_completion_queue *cq,
					void (*idle)(void *arg), void *arg);

/*
 * Calls `method` on `ch` with `req`; the answer is a message of `d`.
 * `flags`: 0 or XD_ETCD_CALL_LAST. 0, or -1 with why in `why` (too
 * many calls under way; cancelled).
 */
int xd_etcd_calls_start(struct xd_etcd_calls *c, grpc_channel *ch,
			const char *method, const ProtobufCMessage *req,
			const ProtobufCMessageDescriptor *d, uint64_t timeout_ms,
			unsigned flags, xd_etcd_done_fn done, void *arg,
			char *why, size_t len);

/* The calls under way for `arg` run no `done` (they go on to their
 * end): whoever asked is going. */
void xd_etcd_calls_forget(struct xd_etcd_calls *c, void *arg);

/* Cancels every call under way but the last ones; no `done` runs
 * afterwards but theirs, nor any new call starts. */
void xd_etcd_calls_cancel(struct xd_etcd_calls *c);

/* Whether no call is under way. */
bool xd_etcd_calls_idle(const struct xd_etcd_calls *c);

/* Once idle. */
void xd_etcd_calls_free(struct xd_etcd_calls *c);

#endif
