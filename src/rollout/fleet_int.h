/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Between the fleet's shared part (fleet.c: the record and reports
 * known, proposals one at a time) and where it keeps them
 * (fleet_etcd.c, fleet_file.c). Thread: loop thread only.
 */
#ifndef XD_ROLLOUT_FLEET_INT_H
#define XD_ROLLOUT_FLEET_INT_H

#include "rollout/fleet.h"
#include "util/buf.h"

struct xd_fleet_backend {
	/* Writes `rec` if the record is still at `expect` (its mod as
	 * the backend gave it; 0: none); answers with
	 * xd_fleet__written, later, on the loop. */
	void (*write)(struct xd_fleet *f, const struct xd_rollout_record *rec,
		      int64_t expect);
	/* The report's JSON, when it changed (may be dropped). */
	void (*publish)(struct xd_fleet *f, const uint8_t *text, size_t len);
	bool (*reachable)(const struct xd_fleet *f);
	/* this replica's report id, or "" */
	const char *(*self_id)(const struct xd_fleet *f);
	void (*stop)(struct xd_fleet *f);
	void (*free)(struct xd_fleet *f);
};

struct report_entry {
	char *id; /* its key's name under replicas/ */
	struct xd_rollout_report r;
};

struct proposal {
	bool used;
	struct xd_rollout_record rec;
	xd_fleet_done_fn done;
	void *arg;
};

struct xd_fleet {
	uv_loop_t *loop;
	const struct xd_config *cfg;
	char *replica;
	char *where;
	bool shared;
	const struct xd_fleet_backend *be;
	void *be_state;
	bool stopped;

	bool has_record;
	struct xd_rollout_record record;
	int64_t mod; /* the backend's mark of it (etcd: mod revision) */
	/* the backend holds a record at `mod`, readable or not: a write
	 * expects that one (an unreadable record is overwritten, not
	 * taken for none, which a write expecting none would never
	 * replace) */
	bool present;

	struct report_entry *reports;
	size_t nreports;

	xd_fleet_record_fn on_record;
	void *on_record_arg;
	xd_fleet_fill_fn self_fn, report_fn;
	void *self_arg, *report_arg;
	int64_t started_ms;
	/* the registration looked at again (shared backends only) */
	uv_timer_t reg;
	/* told on the next turn of the loop, never from within a call */
	uv_timer_t tell;
	bool tell_pending;

	struct proposal flight, queued;
};

/* The shared part, for the backends. */
void xd_fleet__init(struct xd_fleet *f, uv_loop_t *loop,
		    const struct xd_config *cfg, const char *replica,
		    const struct xd_fleet_backend *be, const char *where,
		    bool shared);
/* The write of the proposal in flight is over: taken (`now` is it, at
 * `mod`), or not: `now` is the record that is (NULL: none, or one that
 * could not be read when `mod` is not 0; `why` when the write
 * failed). */
void xd_fleet__written(struct xd_fleet *f, bool taken,
		       const struct xd_rollout_record *now, int64_t mod,
		       const char *why);
/* The record as read or changed (NULL: none), at `mod`; older than the
 * one known is ignored. */
void xd_fleet__record(struct xd_fleet *f, const struct xd_rollout_record *rec,
		      int64_t mod);
/* A record the backend holds at `mod` that cannot be read (logged):
 * taken as none, and the next write replaces it. */
void xd_fleet__record_unreadable(struct xd_fleet *f, int64_t mod);
/* A replica's report under `id` (taken: emptied; NULL: gone). */
void xd_fleet__report(struct xd_fleet *f, const char *id,
		      struct xd_rollout_report *r);
void xd_fleet__reports_clear(struct xd_fleet *f);
/* on_record, with nothing changed but whether writes can be made. */
void xd_fleet__poke(struct xd_fleet *f);

#endif
