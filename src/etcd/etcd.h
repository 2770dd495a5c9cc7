/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshots from etcd (`source: etcd`, xdsd.yaml(5)): the keys under
 * etcd.prefix mirror the snapshot directory, so several xdsd replicas
 * serve one store.
 *
 * At start it reads the prefix with a Range (etcdserverpb.KV/Range), in
 * pages of XD_ETCD_PAGE_KEYS keys at most, all at the revision of the
 * first, and asks the reloader for a reload once it has every page,
 * which loads what was read as it would the directory's files: it is
 * one of the reloader's sources (reload/source.h, xd_etcd_source),
 * wired to it by its owner (daemon.c, xd_reloader_set_source). Then it watches the prefix from
 * that revision + 1 (etcdserverpb.Watch/Watch, a large revision in
 * fragments); changes are noted (kvmap.h) and, once none came for
 * watch_delay (watch_delay_max after the first at most, however often
 * they come), give one reload. Keys that a reload would not read (names
 * a snapshot directory would not count: a lock, a heartbeat, a README)
 * are neither kept nor a change. A broken value fails that reload like
 * a broken file: the last good snapshots keep being served. A value
 * over XD_SNAPSHOT_MAX_FILE fails every reload while it is there,
 * whether the Range or the watch brought it.
 *
 * What it read is applied and listed on the thread pool, by the load
 * (kvmap.h): the loop thread's part of a reload costs the changes since
 * the last, never the prefix's size.
 *
 * etcd unreachable at start: it logs why and tries again with backoff
 * (XD_ETCD_BACKOFF_MIN_MS doubling to XD_ETCD_BACKOFF_MAX_MS), the next
 * endpoint each time; nothing is served until the first good load,
 * unless a last good state is kept (state_dir, reload.h): then, once
 * etcd.dial_timeout has passed since the start without a Range read,
 * it asks for a reload that fails on that, and the reloader serves the
 * saved state instead until etcd's first good load replaces it.
 * Lost later: it keeps serving, reconnects the same way and resumes the
 * watch at the revision it had reached; when etcd has compacted that
 * revision away, it reads the whole prefix again.
 *
 * What it knows of itself (the revision read, whether the watch is
 * established, the last failure, how many times it started again) it
 * writes into a struct xd_etcd_health its owner hands it, for the
 * admin endpoint to show (/status.json, /status, /metrics).
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
#include "etcd/unary.h"
#include "reload/reload.h"

#define XD_ETCD_BACKOFF_MIN_MS 250
#define XD_ETCD_BACKOFF_MAX_MS 10000

/*
 * The largest etcd message read, a page of the prefix's Range or a watch
 * response alike (the channel's limit). A value is at most
 * XD_SNAPSHOT_MAX_FILE (snapshot/files.h) either way: one page of one
 * key always fits.
 */
#define XD_ETCD_MAX_RESPONSE (512u << 20)

/* A page of the Range: at most this many keys, fewer when the values
 * are large, so that one holds about XD_ETCD_PAGE_BYTES. */
#define XD_ETCD_PAGE_KEYS 1000u
#define XD_ETCD_PAGE_BYTES (4u << 20)

struct xd_etcd;

/*
 * xdsd's own keys under the prefix, "<prefix>.xdsd/<name>" (the
 * rollout across replicas keeps its record and each replica's report
 * there: rollout/fleet.h). A reload never reads them (a hidden name,
 * which a snapshot directory would skip too), and `xdsctl push` leaves
 * them alone.
 */
#define XD_ETCD_OWN_DIR ".xdsd/"

/* One of them, borrowed during the call. */
struct xd_etcd_own_kv {
	const char *name;     /* after "<prefix>.xdsd/" */
	const uint8_t *value; /* NULL when deleted */
	size_t len;
	int64_t mod_revision; /* of its put, or of its delete */
	int64_t lease;        /* the lease it is attached to, 0: none */
	bool deleted;
};

/*
 * Who follows the own keys (all on the loop thread):
 *
 *   read     every own key as etcd holds them at `revision`: at start
 *            before the snapshots are read, and again with each read of
 *            the whole prefix (after a compaction cut the watch off);
 *   changed  one changed, from the watch, in revision order; never one
 *            older than the last read;
 *   anchor   once, after the first read: the revision the snapshots are
 *            read at first (0: the newest). The watch goes on from
 *            there, so every change since comes as a change. If etcd
 *            has compacted that revision away, the newest is read and
 *            the error says so.
 */
struct xd_etcd_own {
	void (*read)(void *arg, const struct xd_etcd_own_kv *kvs, size_t n,
		     int64_t revision);
	void (*changed)(void *arg, const struct xd_etcd_own_kv *kv);
	int64_t (*anchor)(void *arg);
	void *arg;
};

/*
 * The source's health. Owned by whoever starts the source (it must
 * outlive it: the admin endpoint reads it until it stops); written by
 * the source only, read and written on the loop thread.
 */
struct xd_etcd_health {
	int64_t revision;     /* of the keys held: the last Range's or
			       * change's; 0 before the first Range. The
			       * source's own: its watch resumes after it */
	bool healthy;         /* read, and the watch established since
			       * the last failure */
	int64_t since_ms;     /* when `healthy` last changed, Unix ms */
	size_t endpoint;      /* index in cfg->etcd.endpoints of the one
			       * in use or tried next */
	uint64_t reconnects;  /* calls started again after a failure */
	char last_error[512]; /* the last failure ("" none yet) */
	int64_t last_error_ms; /* when, Unix ms */
};

/*
 * Starts reading the prefix; `health`
 * (borrowed) is kept up to date from then on; `own` (copied; NULL:
 * none) follows xdsd's own keys, read first. Returns 0, or -1 with the
 * reason logged (TLS files that cannot be read).
 */
int xd_etcd_start(struct xd_etcd **out, uv_loop_t *loop,
		  grpc_completion_queue *cq, const struct xd_config *cfg,
		  struct xd_reloader *reloader, struct xd_etcd_health *health,
		  const struct xd_etcd_own *own);

/*
 * A one-message call (unary.h: a Txn, a Range, a lease's grant or
 * keep-alive) on the source's channel to the endpoint in use, bounded
 * by etcd.dial_timeout plus XD_ETCD_CALL_MS. 0, or -1 with why (too
 * many under way, stopping). No `done` runs once the source is stopped.
 */
#define XD_ETCD_CALL_MS 5000
int xd_etcd_call(struct xd_etcd *e, const char *method,
		 const ProtobufCMessage *req,
		 const ProtobufCMessageDescriptor *d, xd_etcd_done_fn done,
		 void *arg, char *why, size_t len);

/*
 * A last call, made as xdsd stops (a lease's revoke, lease.h), before
 * xd_etcd_stop: that does not cancel it, and the source is freed only
 * once it is over, answered or past XD_ETCD_LAST_CALL_MS, so that an
 * etcd out of reach delays the stop by that at most; `done` runs then,
 * even after xd_etcd_stop. 0, or -1 with why (the source stopped).
 */
#define XD_ETCD_LAST_CALL_MS 1000
int xd_etcd_call_last(struct xd_etcd *e, const char *method,
		      const ProtobufCMessage *req,
		      const ProtobufCMessageDescriptor *d, xd_etcd_done_fn done,
		      void *arg, char *why, size_t len);

/* The calls made for `arg` run no `done`: whoever asked is going.
 * Those who call xd_etcd_call stop before the source does. */
void xd_etcd_forget(struct xd_etcd *e, void *arg);

/* The source a reload reads (reload/source.h): hand it to the reloader
 * (xd_reloader_set_source) before its first reload. Its health is
 * `health`'s. */
struct xd_snapsource xd_etcd_source(struct xd_etcd *e);

/* Cancels its calls (but the last ones) and timers; it frees itself
 * once they are over. */
void xd_etcd_stop(struct xd_etcd *e);

#endif
