/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for the protocol tests: the real xdsd over real gRPC on
 * loopback, driven by rule (docs/protocol.md) and by (method, type).
 *
 *   snapshots  pu_snap: resources by type, written as Envoy YAML into a
 *              directory the test owns; a reload is SIGHUP plus waiting
 *              for the daemon's "reloaded" log line.
 *   combos     pu_combo: one (method, type) place a rule applies; tests
 *              are written once and registered for every combo.
 *   clients    pu_client: one stream (SotW or delta, per-type or
 *              aggregated) that remembers the last version and nonce of
 *              each type, so ACKs and NACKs are one call.
 *   responses  pu_resp: a decoded response (SotW or delta), resources
 *              named and versioned, in one shape.
 *
 * proto_util.c holds types, combos and the runner; proto_env.c the
 * snapshots and the daemon; proto_client.c the clients.
 *
 * Every helper fails the running Check test (with the combo's label)
 * rather than returning errors. Test processes are short-lived forks:
 * strings the helpers return are malloc'd and may be leaked.
 *
 * Timing: what must come is waited for up to pu_wait_ms(); "nothing
 * comes" is asserted by waiting pu_quiet_ms() after pu_env_sync() (xdsd
 * has logged every request sent), so a slow daemon cannot make a late
 * response look like silence before the request even arrived. Both
 * scale by $PU_TIME_SCALE (set when xdsd runs under valgrind). Tests
 * mostly wait, so pu_run() runs them in parallel workers.
 *
 * Thread: the test's own; nothing here is shared between tests (each
 * runs in its own process with its own daemon).
 */
#ifndef XD_TESTS_PROTO_UTIL_H
#define XD_TESTS_PROTO_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "daemon.h"

/* ---------------- types and methods (rules T1, T2) ---------------- */

/*
 * The types by the names tests give them, in the order xdsd pushes them
 * on the aggregated methods (rule A2). What else a type is (its URL,
 * methods, snapshot section, whether it is sent whole) the helpers read
 * from xdsd's own table (`xdsd --print-types`), which must list exactly
 * these types in this order: a type xdsd adds is a type the tests are
 * told to know.
 */
enum pu_type {
	PU_SDS,
	PU_RTDS,
	PU_CDS,
	PU_EDS,
	PU_LEDS,
	PU_ECDS,
	PU_LDS,
	PU_RDS,
	PU_SRDS,
	PU_VHDS,
	PU_NTYPES,
};

#define PU_BIT(t) (1u << (t))
#define PU_ALL_TYPES ((1u << PU_NTYPES) - 1)

const char *pu_type_url(enum pu_type t);
const char *pu_type_label(enum pu_type t); /* "CDS" */
const char *pu_type_section(enum pu_type t); /* "clusters", in snapshots */
/* The type with this URL, or -1. */
int pu_type_of_url(const char *url);
/* A list collection's type URL (rule X3): not a pu_type, but served. */
bool pu_collection_url(const char *url);
/* LDS and CDS: SotW responses carry the full state (rule S8). */
bool pu_full_state(enum pu_type t);
/* The types whose dropped resources stay with a client that still
 * subscribes to them (ECDS, rule E2; rules D4, D7 stand aside). */
unsigned pu_kept_while_subscribed(void);
/* Every type but VHDS and LEDS has a SotW method (rule T2). */
bool pu_has_sotw(enum pu_type t);

/* The gRPC method for a mode; NULL for SotW VHDS (no such method). */
const char *pu_method(bool delta, bool ads, enum pu_type t);

/* One place a rule applies: a method, and the type tested on it. */
struct pu_combo {
	const char *label; /* "ADS CDS", "delta EDS", "delta ADS VHDS" */
	bool delta, ads;
	enum pu_type type;
};

/*
 * The combos of one protocol variant restricted to `types`: for each
 * type, its per-type method and the aggregated one. SotW skips the
 * types without a SotW method (VHDS, incremental only). Returns a
 * static array (count in *n).
 */
const struct pu_combo *pu_combos(bool delta, unsigned types, size_t *n);

/*
 * Registers `test` once per combo, under `rule` (the TCase name, e.g.
 * "S4"), as a test named "<name> [<label>]" whose loop index is the
 * combo's, so each combo gets its own TAP line. `combos` must stay
 * valid (static). Each combo gets its own TCase, so that pu_run can
 * spread them over parallel workers.
 */
void pu_add_tests(Suite *s, const char *rule, const TTest *test,
		  const struct pu_combo *combos, size_t n);
/* The combo labelled `label` in `v` (for subsets); bails out if none. */
const struct pu_combo *pu_pick(const struct pu_combo *v, size_t n,
			       const char *label);

/* A test that is not per combo; pu_combo(_i) in it gives a combo
 * labelled with the test's name. */
void pu_add_test(Suite *s, const char *rule, const TTest *test);

/* In a registered test: its combo (from the loop index `_i`), which
 * also becomes the label of every failure message. */
const struct pu_combo *pu_combo(int i);
const char *pu_label(void);

/* ck_assert_msg with the running combo's label in front. */
#define PU_ASSERT(cond, fmt, ...) \
	ck_assert_msg((cond), "[%s] " fmt, pu_label(), ##__VA_ARGS__)

/* ---------------- timing ---------------- */

/* $PU_VALGRIND: xdsd runs under valgrind (check_valgrind_proto). */
bool pu_under_valgrind(void);

int pu_wait_ms(void);  /* for what must come (default 5000) */
int pu_quiet_ms(void); /* for "nothing comes" (default 250) */

/* ---------------- snapshots ---------------- */

/*
 * A snapshot: resources by (type, name). `variant` changes content
 * (a port, a timeout, a domain...) so that a different variant is a new
 * version. `ref` links resources the way Envoy's do:
 *   CDS   an EDS cluster whose endpoints are `ref` (NULL: STATIC)
 *   EDS   with `ref`, one locality that takes its endpoints by LEDS, as
 *         the glob collection `ref` (NULL: one endpoint inline)
 *   LEDS  an LbEndpoint, named by "@name" (no reference)
 *   LDS   a listener whose HttpConnectionManager takes route `ref` by RDS;
 *         with `ref` "ecds:<name>", one whose HTTP filter <name> takes
 *         its config by ECDS (its routes inline)
 *   ECDS  a header_mutation filter config (no reference)
 *   RDS   a route configuration routing "/" to cluster `ref`
 *   VHDS  a virtual host routing "/" to cluster `ref`
 *   SRDS  a scoped route using route configuration `ref` (NULL:
 *         "srds_rc", added when absent)
 * VHDS names are "<route configuration>/<name>", with the domain
 * "<name>.example" (alias "<route configuration>/<name>.example"); the
 * route configuration is added (with vhds) when absent.
 */
struct pu_snap;

struct pu_snap *pu_snap_new(void);
struct pu_snap *pu_snap_copy(const struct pu_snap *s);
void pu_snap_free(struct pu_snap *s);
void pu_snap_put(struct pu_snap *s, enum pu_type t, const char *name,
		 int variant, const char *ref);
/* Gives a resource put before a TTL ("@ttl", rule L1); 0 takes it away. */
void pu_snap_ttl(struct pu_snap *s, enum pu_type t, const char *name,
		 unsigned ms);
/*
 * A variant of `name` (rule P1): a resource named `name` with
 * "@dynamic_parameter_constraints": `constraints` (flow YAML), kept in
 * the snapshot under "<name>#<tag>" (for pu_snap_del and pu_snap_put's
 * `variant`).
 */
void pu_snap_variant(struct pu_snap *s, enum pu_type t, const char *name,
		     const char *tag, int variant, const char *ref,
		     const char *constraints);
/* Puts a virtual host put before on demand ("@on_demand"), or not. */
void pu_snap_on_demand(struct pu_snap *s, const char *name, bool on);
/* Restricts a resource put before to the identities `glob` matches
 * ("@allow", xdsd-snapshot(5)); NULL lifts it. The tests' clients prove
 * none (plaintext), so a restricted resource is withheld from them
 * (rule N2). */
void pu_snap_allow(struct pu_snap *s, enum pu_type t, const char *name,
		   const char *glob);
void pu_snap_del(struct pu_snap *s, enum pu_type t, const char *name);
bool pu_snap_has(const struct pu_snap *s, enum pu_type t, const char *name);
char *pu_snap_yaml(const struct pu_snap *s);

/* The generic name of resource `base` of a type: "vhds_rc/<base>" for
 * VHDS, PU_LEDS_PREFIX "<base>" for LEDS (xdstp names only), `base`
 * otherwise. Static storage, never freed. */
#define PU_LEDS_PREFIX "xdstp://leds.test/envoy.config.endpoint.v3.LbEndpoint/c/"
/* The glob collection of those LEDS names (rule G1). */
#define PU_LEDS_GLOB PU_LEDS_PREFIX "*"
const char *pu_name(enum pu_type t, const char *base);

/* A snapshot holding pu_name(t, base) for each base (variant 1). */
struct pu_snap *pu_snap_of(enum pu_type t, ...) __attribute__((sentinel));

/* pu_name(t, base) of each base, sorted and comma-separated, as
 * pu_names() prints a response. */
char *pu_list(enum pu_type t, ...) __attribute__((sentinel));

/* `got` (a malloc'd list such as pu_names(r)) must equal the names of
 * the bases given (at least one). */
#define PU_ASSERT_LIST(what, got, t, ...)                                  \
	do {                                                               \
		char *got_ = (got), *want_ = pu_list((t), __VA_ARGS__, NULL); \
		PU_ASSERT(strcmp(got_, want_) == 0, "%s [%s], expected [%s]", \
			  (what), got_, want_);                            \
		free(got_);                                                \
		free(want_);                                               \
	} while (0)
#define PU_ASSERT_NAMES(r, t, ...) \
	PU_ASSERT_LIST("resources", pu_names(r), (t), __VA_ARGS__)

/* A daemon serving a snapshot directory this test owns. */
struct pu_env {
	struct xdt_daemon *d;
	char *dir;   /* snapshot directory */
	int reloads; /* "reloaded" lines seen */
	int port;    /* to restart on the same port */
	char *vglog; /* valgrind's log when under valgrind */
	int sent;    /* requests sent by pu_send that xdsd will log */
};

/*
 * Writes `def` as the default snapshot (plus nothing else) and starts
 * xdsd at debug level on a free port (`port` 0) or on `port`. Under
 * $PU_VALGRIND, xdsd runs in valgrind and pu_env_stop checks its log.
 */
struct pu_env *pu_env_start(const struct pu_snap *def);
struct pu_env *pu_env_start_on(const char *dir, int port);

/* Writes snapshot `key` (NULL: removes its file); no reload. */
void pu_env_write(struct pu_env *e, const char *key, const struct pu_snap *s);
/*
 * Waits until xdsd has handled every request sent through pu_send (it
 * logs one line for each: an ACK, a NACK, a stale nonce, a request, or
 * the status that ended its stream), so that what follows (a reload, a
 * wait for silence) cannot overtake a request still on its way.
 */
void pu_env_sync(struct pu_env *e);
/* pu_env_sync, SIGHUP, then waits for the next "reloaded" line (fails
 * on "reload failed"). */
void pu_env_reload(struct pu_env *e);
/* Writes the default snapshot and reloads. */
void pu_env_set(struct pu_env *e, const struct pu_snap *def);

/* SIGTERM; asserts a clean exit (and a clean valgrind log). */
void pu_env_stop(struct pu_env *e);
/* Stops if running, frees. */
void pu_env_free(struct pu_env *e);

/* The daemon log so far; whether it contains `needle`. */
char *pu_env_log(struct pu_env *e);
bool pu_env_log_has(struct pu_env *e, const char *needle);
/* Asserts that the daemon logs a line containing the formatted text
 * within pu_wait_ms(). */
void pu_env_expect_log(struct pu_env *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---------------- clients ---------------- */

struct pu_client;

/* A new connection and one stream on the combo's method. */
struct pu_client *pu_connect(struct pu_env *e, const struct pu_combo *c);
/* Same, explicit. */
struct pu_client *pu_open(struct pu_env *e, bool delta, bool ads,
			  enum pu_type t);
/* A stream on `method` (any path), with the mode for decoding. */
struct pu_client *pu_open_method(struct pu_env *e, const char *method,
				 bool delta);
void pu_client_free(struct pu_client *c);

/* The node sent on the first request (default id "node-1", cluster
 * "test"); `feature` (may be NULL) is announced as client features
 * (several separated by commas). */
void pu_client_node(struct pu_client *c, const char *id, const char *cluster,
		    const char *feature);

struct xdc_stream *pu_stream(struct pu_client *c);

/* A ResourceLocator (rule P1): a name and `nparams` key, value pairs. */
struct pu_locator {
	const char *name;
	const char *const *params; /* k1, v1, k2, v2... */
	size_t nparams;
};

/* One request. Unset fields are not sent. */
struct pu_req {
	enum pu_type type;
	const char *type_url;          /* overrides the type's URL */
	bool no_type_url;              /* send none */
	const char *const *names;      /* SotW resource_names; delta subscribe */
	size_t nnames;
	const char *const *unsub;      /* delta */
	size_t nunsub;
	const char *version;           /* SotW version_info */
	const char *nonce;             /* response_nonce */
	const char *error;             /* error_detail.message: a NACK */
	const char *const *init_names; /* delta initial_resource_versions */
	const char *const *init_versions;
	size_t ninit;
	enum { PU_NODE_AUTO, PU_NODE_NEVER, PU_NODE_ALWAYS } node;
	const char *node_id;           /* another node id (rule S1) */
	/* SotW resource_locators; delta resource_locators_subscribe */
	const struct pu_locator *locators;
	size_t nlocators;
	const struct pu_locator *unsub_locators; /* delta */
	size_t nunsub_locators;
};

/* Sends `r`; the node goes on the stream's first request (AUTO). */
void pu_send(struct pu_client *c, const struct pu_req *r);

/*
 * SotW: requests exactly the NULL-terminated names (none: the empty
 * list), with the last version and nonce received for the type, i.e. an
 * ACK of the latest response plus the new list.
 * Delta: subscribes the names, without a nonce.
 */
void pu_sub(struct pu_client *c, enum pu_type t, ...)
	__attribute__((sentinel));
void pu_subv(struct pu_client *c, enum pu_type t, const char *const *names,
	     size_t n);
/* Delta: unsubscribes the names, without a nonce. */
void pu_unsub(struct pu_client *c, enum pu_type t, ...)
	__attribute__((sentinel));

/* ---------------- responses ---------------- */

struct pu_res {
	char *name;
	char *version;    /* delta, or wrapped SotW: Resource.version */
	bool has_body;    /* delta: false for "does not exist" (rule D8) */
	uint8_t *body;    /* the resource message */
	size_t len;
	char *url;        /* the type URL of the Any holding the body */
	bool wrapped;     /* SotW: in a Resource (rule L2) */
	long ttl_ms;      /* Resource.ttl, -1 for none (rule L1) */
	char **aliases;
	size_t naliases;
	/* Resource.resource_name's constraints (rule P1), as "k=v", "k?"
	 * (exists), "!x", "(a&b)", "(a|b)"; NULL when named by name */
	char *constraints;
};

struct pu_resp {
	bool delta;
	int type;         /* enum pu_type, or -1 for a type xdsd does not serve */
	char *type_url;
	char *version;    /* version_info / system_version_info */
	char *nonce;
	struct pu_res *res;
	size_t nres;
	char **removed;
	size_t nremoved;
	/* removed_resource_names, as "name[constraints]" (rule P1) */
	char **removed_names;
	size_t nremoved_names;
	/* resource_errors (rules N1-N3): each one's name, code
	 * (google.rpc.Code: 5 NOT_FOUND, 7 PERMISSION_DENIED) and message */
	char **errors;
	int *error_codes;
	char **error_messages;
	size_t nerrors;
	size_t raw_len;   /* bytes on the wire */
};

/* The next response, or NULL after `timeout_ms`. Fails the test if the
 * stream ended or the message does not decode. */
struct pu_resp *pu_recv(struct pu_client *c, int timeout_ms);
/* The next response, which must come within PU_WAIT_MS and be of `t`. */
struct pu_resp *pu_expect(struct pu_client *c, enum pu_type t);
/* After pu_env_sync, nothing may arrive within PU_QUIET_MS (or `ms`
 * when > 0). */
void pu_expect_none(struct pu_client *c, int ms);
/* The stream must end with `code` within PU_WAIT_MS, its message
 * containing `needle` (may be NULL). */
void pu_expect_status(struct pu_client *c, int code, const char *needle);

/* ACK: SotW repeats the type's last names with the response's version
 * and nonce; delta sends the nonce. */
void pu_ack(struct pu_client *c, const struct pu_resp *r);
/* NACK with `msg`: SotW keeps the last ACKed version. */
void pu_nack(struct pu_client *c, const struct pu_resp *r, const char *msg);

void pu_resp_free(struct pu_resp *r);

/* Sorted, comma-separated names: resources with a body; delta names
 * reported as missing (no body); removed_resources. "" when none. */
char *pu_names(const struct pu_resp *r);
char *pu_missing(const struct pu_resp *r);
char *pu_removed(const struct pu_resp *r);
/* The names of resource_errors, sorted and comma-separated (rule N1);
 * "" when none. */
char *pu_errors(const struct pu_resp *r);
/* The code of the resource error of `name`, -1 when there is none; its
 * message in *message (may be NULL; borrowed). */
int pu_error_of(const struct pu_resp *r, const char *name,
		const char **message);
/* Resources with a body as "name[constraints]" (or "name"), and
 * removed_resource_names, sorted and comma-separated (rule P1). */
char *pu_variants(const struct pu_resp *r);
char *pu_removed_variants(const struct pu_resp *r);
const struct pu_res *pu_find(const struct pu_resp *r, const char *name);

/* The version of a resource's bytes: 16 hex digits of XXH3-64. */
void pu_hash_hex(const void *data, size_t len, char out[17]);
/* The table version of resources (name, bytes) as xdsd computes it. */
void pu_table_version(const char *const *names, const char *const *versions,
		      size_t n, char out[17]);
bool pu_is_hex16(const char *s);

/* ---------------- protobuf ---------------- */

/*
 * Calls `fn` for every string/bytes value at the field path `path`
 * (field numbers, descending through length-delimited fields).
 */
void pu_pb_walk(const uint8_t *data, size_t len, const int *path,
		size_t depth, void (*fn)(const uint8_t *v, size_t n, void *arg),
		void *arg);
/* The first string at `path`, malloc'd, or NULL. */
char *pu_pb_string(const uint8_t *data, size_t len, const int *path,
		   size_t depth);

/* A list of strings, for models and subscriptions. */
struct pu_strs {
	char **v;
	size_t n;
};
void pu_strs_add(struct pu_strs *s, const char *x);
bool pu_strs_has(const struct pu_strs *s, const char *x);
void pu_strs_del(struct pu_strs *s, const char *x);
void pu_strs_clear(struct pu_strs *s);
/* Sorted, comma-separated. */
char *pu_strs_join(const struct pu_strs *s);
char *pu_join(char *const *v, size_t n);

/* ---------------- running ---------------- */

/*
 * Runs the suite with TAP output on stdout, its TCases spread over
 * $PU_JOBS parallel workers (default 4: the tests mostly wait), each a
 * Check runner of its own whose TAP is merged and renumbered. Kills any
 * daemon a dead test left behind. Returns the exit status.
 */
int pu_run(Suite *s);

#endif
