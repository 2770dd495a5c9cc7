/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One xDS client as xdsd knows it, however it reaches xdsd: a gRPC
 * stream (session.h) or a REST-JSON poll (rest.h). Everything that
 * follows from who the client is lives here, decided once from the node
 * of its first request, so that no transport derives it again:
 *
 *   admission     the node's size limits (max_node_size,
 *                 max_node_id_size), that it is a well-formed Node, that
 *                 later requests name the same node (rule S1), and the
 *                 `authorize:` rules on the identity its certificate
 *                 proves (authorize.h)
 *   capabilities  what the node announces it takes: TTLs (rule L1),
 *                 wrapped SotW resources (rule L2); with the method's
 *                 delta or SotW, the form of every response (xd_form)
 *   snapshot key  which snapshot serves it (node_key: its id or its
 *                 cluster; the default snapshot for an empty one)
 *   canary        whether a staged rollout (`rollout:`) serves it a
 *                 change before the other nodes: the rollout's rule
 *                 says (rollout/canaries.h), asked by the transport
 *                 as the node is admitted (session.h)
 *   view          what operators see of it (the status page, /clients,
 *                 CSDS, /metrics, the rollout preview): node, locality,
 *                 user agent, identity, address, and the per-type state
 *                 its transport adds, read from the client's ledgers
 *                 (sub.h): the one way operators see a client
 *
 * States: NEW, then ADMITTED or REFUSED, each once. A refused client's
 * transport ends it (status or HTTP error) with the message admission
 * wrote; nothing more is asked of it.
 *
 * Ownership: the transport embeds a struct xd_client and owns it
 * (xd_client_init .. xd_client_clear); the client owns copies of its
 * peer, identity and node strings, and borrows `cfg` (which must outlive
 * it). Others read its fields, never write them. Thread: loop thread
 * only.
 */
#ifndef XD_PROTOCOL_CLIENT_H
#define XD_PROTOCOL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "protocol/body.h"
#include "protocol/node.h"
#include "protocol/sub.h"
#include "util/span.h"
#include "xds/rtype.h"

struct xd_method;
struct xd_snapshot;

/* Distinct unknown type URLs one aggregated stream may ask for. */
#define XD_CLIENT_MAX_UNKNOWN 4

enum xd_client_state {
	XD_CLIENT_NEW,      /* no request read yet */
	XD_CLIENT_ADMITTED, /* its node is known and allowed */
	XD_CLIENT_REFUSED,  /* its transport ends it */
};

/* What admission says of one request's node. */
enum xd_client_verdict {
	XD_CLIENT_ADMIT,      /* the first node: admitted now */
	XD_CLIENT_SAME,       /* a later request: the same node, or none */
	XD_CLIENT_OVER_LIMIT, /* max_node_size or max_node_id_size */
	XD_CLIENT_MALFORMED,  /* not a Node, or a NUL in its id or cluster */
	XD_CLIENT_CHANGED,    /* another node than the first (rule S1) */
	XD_CLIENT_FORBIDDEN,  /* no `authorize:` rule lets it speak for it */
};

struct xd_client {
	const struct xd_config *cfg;
	enum xd_client_state state;
	bool delta;       /* a delta method: delta responses */
	char *peer;       /* "ipv4:10.0.0.7:51234" */
	char *identity;   /* from the client certificate, or NULL */
	int64_t since_ms; /* Unix ms it arrived */
	/* From its node (NULL until one is read; kept when the node is
	 * refused by `authorize:`, so the refusal's log line names it). */
	char *node_id, *node_cluster;
	/* for operators only, never acted on: bounded, NUL-free copies;
	 * ua_version is user_agent_version, or else the user agent's
	 * BuildVersion (ua_build) as "major.minor.patch" */
	char *region, *zone, *sub_zone, *ua_name, *ua_version;
	bool has_ua_build;
	struct xd_semver ua_build;
	bool wrapped; /* SotW resources wrapped in Resource (rule L2) */
	bool ttl;     /* it takes TTLs (rule L1) */
	bool canary;  /* a rollout's canary (set by the transport as it
		       * admits the node, by the rollout's rule) */
};

/* A client of `cfg`'s limits and rules, arrived at Unix ms `since_ms`
 * from `peer` (copied), proving `identity` (copied; NULL: none), on a
 * delta method or not. */
void xd_client_init(struct xd_client *c, const struct xd_config *cfg,
		    bool delta, const char *peer, const char *identity,
		    int64_t since_ms);

void xd_client_clear(struct xd_client *c);

/*
 * Admission of one request's node (its encoded bytes; an empty span is
 * a request without a node, which on a first request admits the empty
 * node, served the default snapshot). Anything but ADMIT and SAME
 * refuses the client, with the reason for the client and the log in
 * `why` (`why_len` bytes).
 */
enum xd_client_verdict xd_client_admit(struct xd_client *c,
				       struct xd_span node, char *why,
				       size_t why_len);

/* The form of every response to an admitted client. */
enum xd_form xd_client_form(const struct xd_client *c);

/* The key of the snapshot that serves an admitted client (the cache's
 * default key for an empty id or cluster). */
const char *xd_client_key(const struct xd_client *c);

/* Why no snapshot serves an admitted client, for it and the log. */
void xd_client_unserved(const struct xd_client *c, char *msg, size_t len);

/* ---------------- the operator's view ---------------- */

/* One type of a client as an operator sees it: borrowed, valid during
 * the visit only. */
struct xd_client_type {
	const char *type_url;
	const char *label;              /* "CDS", or the type URL */
	const struct xd_sub *sub;       /* subscription and answers: sub.h */
	const struct xd_table *current; /* the type's table now, or NULL */
	enum xd_sub_sync sync;
	/* A response waits for its answer (sub.h: xd_sub_pending_since):
	 * since when (Unix ms) and for how long (ms); both 0 when none does.
	 * Set by xd_client_view_ages. */
	int64_t pending_since_ms;
	uint64_t pending_ms;
};

/* One client (a stream) as an operator sees it (status page, /clients,
 * CSDS, /metrics): borrowed, valid during the visit only. */
struct xd_client_view {
	uint64_t stream_id;
	const struct xd_method *method;
	const char *peer;
	const char *identity; /* from the client certificate, or NULL */
	int64_t since_ms;     /* Unix ms */
	bool has_node;        /* false until the first request */
	const char *node_id, *node_cluster; /* "" before the node */
	const char *key; /* its snapshot key (xd_client_key); "" before */
	const char *region, *zone, *sub_zone;
	const char *user_agent_name, *user_agent_version;
	/* the BuildVersion the version was read from (Envoy's), or NULL */
	const struct xd_semver *user_agent_build;
	const struct xd_snapshot *snapshot; /* serving it, or NULL */
	bool canary; /* served a rollout's change first (set by its transport) */
	struct xd_client_type types[XD_RTYPE_COUNT + XD_CTYPE_COUNT +
				    XD_CLIENT_MAX_UNKNOWN];
	size_t ntypes; /* the types the client asked for, in push order */
};

/* `v` as the client sees itself: every field but the transport's own
 * (stream_id, method, snapshot), with no types yet. */
void xd_client_view(const struct xd_client *c, struct xd_client_view *v);

/* Adds one type the client asked for to `v`: its subscription, and the
 * table it is served from now (NULL before a snapshot; `type_url` names
 * it then). At most the array's bound, which counts every type a client
 * may have. */
void xd_client_view_type(struct xd_client_view *v, const struct xd_sub *sub,
			 const struct xd_table *current, const char *label,
			 const char *type_url);

/* Fills every type's pending_since_ms and pending_ms in `v`, ages as
 * of `now_mono_ms` (the monotonic clock sends are recorded on). */
void xd_client_view_ages(struct xd_client_view *v, uint64_t now_mono_ms);

/* The longest any type of `v` has waited for an answer (ms; 0: none). */
uint64_t xd_client_view_oldest(const struct xd_client_view *v);

/*
 * One resource of a type a client asks for, as operators are shown it
 * (CSDS): read from the subscription and the client's ledgers (sub.h),
 * valid during the call that hands it out.
 */
struct xd_client_resource {
	struct xd_name name;            /* the resource's name (a locator's,
					   without its parameters) */
	const struct xd_key *key;       /* the key it is asked for by; NULL
					   when by a wildcard, or as the
					   member of a glob collection */
	const struct xd_entry *current; /* what the type's table has under
					   it now: the resource, or the
					   variant a locator picks (rule P1);
					   NULL for none */
	const struct xd_entry *running; /* what the client runs under it
					   (its `running` ledger), or NULL */
	const struct xd_entry *held;    /* what it holds under it (the
					   content it answered last, a NACKed
					   one too), or NULL */
};

/*
 * Every resource the client asks for of type `ct`, each once: with a
 * wildcard, every resource of the table now but those on demand (rule
 * D2); then each key but "*", a glob collection (rule X2) as its members
 * (those not also asked for by name), or as its own name when it has
 * none.
 */
void xd_client_type_resources(const struct xd_client_type *ct,
			      void (*fn)(void *arg,
					 const struct xd_client_resource *r),
			      void *arg);

/*
 * The names the client asks for of type `ct` that the table it is
 * served from has nothing under now (docs/protocol.md, rules N1, N2):
 * each key by name or locator (a locator's under its name), not a
 * wildcard nor, on a `delta` stream, a glob collection (rule X2); with
 * whether the table is an identity's view of one that has it ("@allow":
 * `denied`). Calls fn (may be NULL) for each; returns how many, and in
 * *ndenied (may be NULL) how many of them are denied. For a
 * subscription of many names (a fleet's endpoints) the keys a table
 * lacks are found once per (table, subscription), memoized on the
 * table, so that /metrics over a fleet costs a lookup per stream; a
 * few names are looked up at each call.
 */
size_t xd_client_type_missing(const struct xd_client_type *ct, bool delta,
			      void (*fn)(void *arg, struct xd_name name,
					 bool denied),
			      void *arg, size_t *ndenied);

/* Whether the client asks for the resource `name` of type `ct` by name:
 * a key that is the name, or a locator of it (rule P1); a wildcard is
 * not asking by name. */
bool xd_client_type_asks_for(const struct xd_client_type *ct, const char *name,
			     size_t len);

#endif
