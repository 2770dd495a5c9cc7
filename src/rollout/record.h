/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the rollout keeps outside one replica (rollout/fleet.h), as
 * values and their JSON: the record of the fleet's rollout, and one
 * replica's report of its canaries and nodes.
 *
 * The record (one per fleet: the etcd key <prefix>.xdsd/rollout, or
 * STATE_DIR/rollout.state with `source: files`):
 *
 *   {"format": 1, "id": 41,              the change: the etcd revision
 *                                         it starts from (files: 1, 2...)
 *    "state": "canary",                   canary, baking, promoted,
 *                                         failed, aborted
 *    "candidate": "<16 hex>",             the set rolled out and the one
 *    "stable": "<16 hex>",                every other node is served
 *                                         (xd_rollout_fingerprint)
 *    "stable_revision": 37,               etcd revision of the stable
 *                                         set (0: not known)
 *    "started": <Unix ms>, "baking_since": <Unix ms, 0>,
 *    "ended": <Unix ms, 0>,
 *    "now": false,                        pushed with --now: no bake
 *    "rollback": false,                   a return to the set before
 *                                         the last promotion: no bake
 *    "trigger": "etcd", "by": "<who>",    what started it; who decided
 *                                         last (a replica, an operator)
 *    "reason": "...",                     why it came to rest
 *    "keys": ["default"], "keys_total": 1,  snapshot keys it changes
 *    "uncovered": ["edge"]}               of those, with no canary
 *                                         connected as it started
 *
 * A report (per replica: <prefix>.xdsd/replicas/<lease id>, under the
 * replica's lease, etcd/lease.h): the replica's registration in the
 * fleet (`xdsctl fleet`) and what it says of the rollout:
 *
 *   {"format": 1, "replica": "<name>", "pid": 4242,
 *    "started": <Unix ms>,                the replica's start
 *    "xds": "10.0.0.5:18000",             its xDS listener, as bound
 *    "admin": "10.0.0.5:9901",            its admin endpoint as others
 *                                         reach it ("": off)
 *    "version": "0.4.0",                  xdsd's
 *    "revision": 42,                      etcd revision of the snapshots
 *                                         it loaded last (0: none, files)
 *    "serving": "<16 hex>",               the set every node that is no
 *                                         canary is served
 *                                         (xd_rollout_fingerprint)
 *    "health": "serving",                 serving, degraded, not_serving
 *                                         (as `xdsctl status` judges)
 *    "health_why": "...",                 degraded or not: the first reason
 *    "streams": 12, "clients": 10,        open xDS streams, distinct nodes
 *    "rollout": 41, "candidate": "<16 hex>",   what it reports on (0, "":
 *                                         no rollout staged here)
 *    "canaries": 2, "answered": 1, "nacks": 0,
 *    "keys": [{"key": "default", "canaries": 1, "acked": 1,
 *              "proven": true}],          per changed key: canaries
 *                                         served its candidate, of
 *                                         them ACKed it now, and one
 *                                         ever did during the rollout
 *    "waiting": ["node"], "waiting_total": 1,
 *    "stuck": ["node"], "stuck_total": 1,  past canary_timeout
 *    "nack_list": [{"node_id", "node_cluster", "type", "version",
 *                   "message", "at"}],
 *    "nodes": [{"key": "edge", "nodes": 3, "canaries": 1}],
 *    "nodes_total": 1}                    connected nodes per node key
 *
 * Every list is bounded (XD_ROLLOUT_KEYS_MAX keys, XD_ROLLOUT_NAMES_MAX
 * names, XD_ROLLOUT_NACKS_REPORTED NACKs, XD_ROLLOUT_NODES_MAX node
 * keys; the totals count them all), and so is a value read
 * (XD_ROLLOUT_VALUE_MAX): what another replica wrote, or a hand,
 * is input, refused with why when it does not parse.
 *
 * Ownership: each struct owns its strings; *_clear frees them. Thread:
 * any (pure).
 */
#ifndef XD_ROLLOUT_RECORD_H
#define XD_ROLLOUT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snapshot.h"
#include "util/buf.h"

#define XD_ROLLOUT_PRINT_LEN 16
#define XD_ROLLOUT_KEYS_MAX 1000
#define XD_ROLLOUT_NAMES_MAX 10
#define XD_ROLLOUT_NACKS_REPORTED 3
#define XD_ROLLOUT_NODES_MAX 1000
#define XD_ROLLOUT_VALUE_MAX (1u << 20)
/* the text of a reason, a "by", a trigger, a NACK's message */
#define XD_ROLLOUT_TEXT_MAX 1024

/* The states of a rollout (rollout.h says what each means). */
enum xd_rollout_state {
	XD_ROLLOUT_IDLE,
	XD_ROLLOUT_CANARY,
	XD_ROLLOUT_BAKING,
	XD_ROLLOUT_PROMOTED,
	XD_ROLLOUT_FAILED,
	XD_ROLLOUT_ABORTED,
};
#define XD_ROLLOUT_STATES 6

/* "idle", "canary", "baking", "promoted", "failed", "aborted". */
const char *xd_rollout_state_name(enum xd_rollout_state s);

/* Whether `s` is under way (canary or baking). */
bool xd_rollout_state_active(enum xd_rollout_state s);

/* A set of snapshots (`snaps`, sorted by key) as one value: XXH3-64 of
 * every key and version, 16 hex digits and a NUL in `out`. Equal
 * content gives equal prints on every replica (versions are content). */
void xd_rollout_fingerprint(struct xd_snapshot *const *snaps, size_t n,
			    char out[XD_ROLLOUT_PRINT_LEN + 1]);

struct xd_rollout_record {
	uint64_t id;
	enum xd_rollout_state state; /* never idle */
	char candidate[XD_ROLLOUT_PRINT_LEN + 1];
	char stable[XD_ROLLOUT_PRINT_LEN + 1]; /* "": not known (--now) */
	int64_t stable_revision;
	int64_t started_ms, baking_ms, ended_ms;
	bool now, rollback;
	char *trigger, *by, *reason; /* never NULL once filled */
	char **keys;
	size_t nkeys, keys_total;
	char **uncovered;
	size_t nuncovered;
};

struct xd_rollout_key_count {
	char *key;
	size_t canaries, acked;
	bool proven;
};

struct xd_rollout_nack {
	char *node_id, *node_cluster;
	char *type, *version;
	char *message; /* clipped to XD_ROLLOUT_TEXT_MAX */
	int64_t at_ms; /* Unix ms */
};

struct xd_rollout_node_count {
	char *key;
	size_t nodes, canaries;
};

/* What a replica says of its own health: what `xdsctl status`'s exit
 * status says (xdsctl(1)); unknown when a report does not say. */
enum xd_replica_health {
	XD_REPLICA_UNKNOWN,
	XD_REPLICA_SERVING,
	XD_REPLICA_DEGRADED,
	XD_REPLICA_NOT_SERVING,
};

/* "unknown", "serving", "degraded", "not_serving". */
const char *xd_replica_health_name(enum xd_replica_health h);

struct xd_rollout_report {
	char *replica;
	int64_t pid, started_ms;
	/* the replica itself (its registration) */
	char *xds, *admin, *version;
	int64_t revision;
	char serving[XD_ROLLOUT_PRINT_LEN + 1];
	enum xd_replica_health health;
	char *health_why;
	size_t streams, clients;
	/* the rollout it reports on */
	uint64_t rollout;
	char candidate[XD_ROLLOUT_PRINT_LEN + 1];
	size_t canaries, answered;
	uint64_t nacks;
	struct xd_rollout_key_count *keys;
	size_t nkeys;
	char **waiting, **stuck;
	size_t nwaiting, waiting_total, nstuck, stuck_total;
	struct xd_rollout_nack *nack_list;
	size_t nnack_list;
	struct xd_rollout_node_count *nodes;
	size_t nnodes, nodes_total;
};

void xd_rollout_record_clear(struct xd_rollout_record *r);
/* `to` (cleared first) becomes a copy of `from`. */
void xd_rollout_record_copy(struct xd_rollout_record *to,
			    const struct xd_rollout_record *from);
/* Sets a text field (*field, freed first) to `text`, clipped. */
void xd_rollout_text_set(char **field, const char *text);
/* Adds a key to a list (keys or uncovered) under its bound; counted in
 * *total when not NULL. */
void xd_rollout_list_add(char ***list, size_t *n, size_t max, size_t *total,
			 const char *text);

/* The record as JSON into `out` (appended). */
void xd_rollout_record_write(const struct xd_rollout_record *r,
			     struct xd_buf *out);
/* `r` (cleared) from `len` bytes of JSON: 0, or -1 with why in `why`
 * (r left cleared). */
int xd_rollout_record_read(struct xd_rollout_record *r, const void *text,
			   size_t len, char *why, size_t wlen);

void xd_rollout_report_clear(struct xd_rollout_report *r);
void xd_rollout_report_write(const struct xd_rollout_report *r,
			     struct xd_buf *out);
int xd_rollout_report_read(struct xd_rollout_report *r, const void *text,
			   size_t len, char *why, size_t wlen);

/* The count of `key` in `r`, added (zero) when it has none and there
 * is room; NULL when the list is full. */
struct xd_rollout_key_count *xd_rollout_report_key(struct xd_rollout_report *r,
						   const char *key);

/*
 * Adds `from`'s canaries to `to` (the fleet's, from each replica's;
 * not the replica's own fields):
 * counts summed, keys merged by name (proven if proven anywhere), the
 * names kept up to their bound, the NACKs the earliest up to theirs
 * (in time order, the newest making room), totals summed.
 */
void xd_rollout_report_merge(struct xd_rollout_report *to,
			     const struct xd_rollout_report *from);

#endif
