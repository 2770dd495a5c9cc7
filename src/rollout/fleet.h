/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fleet of replicas as each one sees it: every replica's
 * registration (who it is, where it listens, what it serves, its
 * health and clients) and report of its canaries, and the record of
 * the fleet's rollout (which change, its state, its outcome), kept
 * where every replica sees them (record.h), so that `xdsctl fleet`
 * and the status page list every replica, and a rollout is decided
 * once for all replicas and outlives any of them.
 *
 *   source: etcd   each replica's registration and report is the key
 *                  <prefix>.xdsd/replicas/<lease id>, put under its
 *                  lease (etcd/lease.h), so that it goes with the
 *                  replica, killed or cut from etcd; the record is the
 *                  key <prefix>.xdsd/rollout. Both are read before the
 *                  snapshots at start and followed on the etcd source's
 *                  watch (etcd.h, struct xd_etcd_own). A proposal is one
 *                  Txn that puts the record only if it is still the one
 *                  this replica knows (a compare of its mod revision):
 *                  of two replicas that decide at once, one wins, and
 *                  the other is handed the record that won.
 *   source: files  one replica, no registration shared: the record is
 *                  STATE_DIR/rollout.state (written whole, atomically,
 *                  on the thread pool), read at start, so that a
 *                  restart remembers it; no state_dir (or no
 *                  `rollout:`): in memory only. A proposal always wins.
 *
 * Every replica has a fleet, with or without `rollout:`; the rollout
 * (rollout.h) uses its record and the others' reports.
 *
 * What this replica registers is asked of whoever knows it (its self
 * and report functions, xd_fleet_on_self, xd_fleet_on_report) each time
 * it is written: every XD_FLEET_REGISTER_MS, and at once when the
 * rollout asks (xd_fleet_publish); it is written only when it changed.
 *
 * Whatever changes the record (a proposal of this replica, a change
 * another made, the record read anew) is told through `on_record`, on
 * the loop thread, never from within xd_fleet_propose: the rollout
 * acts on the record alone, so that every replica acts on the same.
 *
 * Bounds: one proposal written at a time, one waiting (a newer one
 * replaces it, whose asker is told); the registration written at most
 * every XD_FLEET_PUBLISH_MS, the newest; XD_FLEET_REPLICAS_MAX other
 * replicas' reports kept; values of XD_ROLLOUT_VALUE_MAX at most.
 *
 * Ownership: borrows the loop and configuration; owns the record, the
 * reports and its backend; the daemon owns it, the rollout borrows it.
 * Thread: loop thread only (checked).
 */
#ifndef XD_ROLLOUT_FLEET_H
#define XD_ROLLOUT_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "config/config.h"
#include "etcd/etcd.h"
#include "rollout/record.h"

#define XD_FLEET_PUBLISH_MS 250
/* how often the registration is looked at again (written if changed) */
#define XD_FLEET_REGISTER_MS 1000
#define XD_FLEET_REPLICAS_MAX 256
#define XD_FLEET_RECORD_NAME "rollout"
#define XD_FLEET_REPORTS_DIR "replicas/"
#define XD_FLEET_STATE_FILE "rollout.state"

struct xd_fleet;

/* With `source: etcd`: `replica` names this one in the reports. The
 * follower to give the etcd source (xd_etcd_start) is written into
 * `own`; once the source is started, xd_fleet_attach_etcd. */
struct xd_fleet *xd_fleet_new_etcd(uv_loop_t *loop, const struct xd_config *cfg,
				   const char *replica, struct xd_etcd_own *own);
/* Writes go through `e` from now on; the lease is taken. */
void xd_fleet_attach_etcd(struct xd_fleet *f, struct xd_etcd *e);

/* With `source: files`: the record in `state_dir` (NULL: in memory),
 * read now (a record that cannot be read is logged and ignored). */
struct xd_fleet *xd_fleet_new_file(uv_loop_t *loop, const struct xd_config *cfg,
				   const char *state_dir, const char *replica);

typedef void (*xd_fleet_record_fn)(void *arg);
void xd_fleet_on_record(struct xd_fleet *f, xd_fleet_record_fn fn, void *arg);

/* The record known now, or NULL (none yet). Valid until the loop
 * turns. */
const struct xd_rollout_record *xd_fleet_record(const struct xd_fleet *f);

/*
 * Asks that `rec` (copied) become the record, in place of the one known
 * now. `done(arg, taken, why)` (may be NULL) runs once it is settled:
 * taken, it is the record (on_record told first); not, another replica
 * wrote one first (on_record told it) or the write failed (`why`).
 */
typedef void (*xd_fleet_done_fn)(void *arg, bool taken, const char *why);
void xd_fleet_propose(struct xd_fleet *f, const struct xd_rollout_record *rec,
		      xd_fleet_done_fn done, void *arg);

/*
 * Who fills this replica's registration and report (`r`, zeroed; its
 * replica, pid and start are the fleet's): `self` the replica's own
 * fields (record.h: xds, admin, version, revision, health, streams,
 * clients), `report` the rollout's. Either may be NULL. What they put
 * in `r` is theirs (borrowed: valid during the call, not freed by the
 * fleet), as it is written out at once.
 */
typedef void (*xd_fleet_fill_fn)(void *arg, struct xd_rollout_report *r);
void xd_fleet_on_self(struct xd_fleet *f, xd_fleet_fill_fn fn, void *arg);
void xd_fleet_on_report(struct xd_fleet *f, xd_fleet_fill_fn fn, void *arg);

/* This replica's registration, written for the others now (when it
 * differs from the last written; within XD_FLEET_PUBLISH_MS). */
void xd_fleet_publish(struct xd_fleet *f);

/* This replica's registration as the others read it: its JSON
 * (record.h) appended to `out`. */
void xd_fleet_self_json(struct xd_fleet *f, struct xd_buf *out);

/* This replica's start (Unix ms), as its registration says it. */
int64_t xd_fleet_started(const struct xd_fleet *f);

/* The other replicas' registrations and reports, in no order. */
size_t xd_fleet_nreports(const struct xd_fleet *f);
const struct xd_rollout_report *xd_fleet_report(const struct xd_fleet *f,
						size_t i);
/* Whether report `i` is the replica's newest: no registration of the
 * same name (this replica's own, or another started later) supersedes
 * it. A replica's name is its host and xDS address, which one process
 * holds at a time: an older registration of that name is of a process
 * gone (restarted), whose lease has not expired yet. */
bool xd_fleet_report_current(const struct xd_fleet *f, size_t i);
/* Its key's name under replicas/ (etcd: the replica's lease, in hex). */
const char *xd_fleet_report_id(const struct xd_fleet *f, size_t i);
/* This replica's, "" while it holds no lease (or not shared). */
const char *xd_fleet_self_id(const struct xd_fleet *f);

/* Names this replica anew (its port known once it listens). */
void xd_fleet_set_replica(struct xd_fleet *f, const char *replica);

/* This replica's name; where the record is kept ("etcd key '...'",
 * a path, "memory"); whether it is shared with other replicas (etcd). */
const char *xd_fleet_replica(const struct xd_fleet *f);
const char *xd_fleet_where(const struct xd_fleet *f);
bool xd_fleet_shared(const struct xd_fleet *f);

/* Whether its writes can be made now (etcd: a lease is held). */
bool xd_fleet_reachable(const struct xd_fleet *f);

/* The etcd revision its snapshots are read at first (etcd.h, anchor):
 * that of the set every node is served while the record's rollout is
 * under way, failed or aborted; 0 otherwise. */
int64_t xd_fleet_anchor(const struct xd_fleet *f);

/* No writes and no callbacks from now on (before the etcd source
 * stops); then, once the loop has run, xd_fleet_free. NULL: nothing. */
void xd_fleet_stop(struct xd_fleet *f);
void xd_fleet_free(struct xd_fleet *f);

#endif
