/* SPDX-License-Identifier: Apache-2.0 */
/*
 * All resources of one type in one snapshot: an immutable, refcounted
 * table, built off the loop thread and shared by every stream.
 *
 * Each resource is stored as the bytes it occupies inside a response
 * (docs/design.md §4), encoded once at load:
 *   sotw     DiscoveryResponse.resources entry: field 2, Any{type_url, value}
 *   wrapped  the same entry for clients that announce
 *            xds.config.supports-resource-in-sotw: Any{Resource{...}}
 *   delta    DeltaDiscoveryResponse.resources entry: field 2,
 *            Resource{version, resource: Any, name, aliases}
 * so a response is a concatenation of these plus a small header and
 * per-stream nonce.
 *
 * Versions are content hashes (XXH3-64, 16 hex digits): a resource's is
 * the hash of its message bytes; the table's is the hash of its sorted
 * (name, version) pairs. Equal content gives equal versions across
 * restarts and replicas.
 *
 * Every table has an id unique for the life of the process: caches of
 * computed responses key on ids, never on addresses, so a freed table
 * can never be mistaken for a new one at the same address.
 *
 * Ownership: a table owns every byte it points to. xd_table_ref/unref
 * are atomic, so loader threads may take references to tables the loop
 * thread also holds. Everything else a finished table offers is read-only
 * and may be called from any thread; the lazily built response caches
 * (body.h) belong to the loop thread.
 */
#ifndef XD_SNAPSHOT_TABLE_H
#define XD_SNAPSHOT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/span.h"
#include "xds/rtype.h"

struct xd_dparam;

/* A reference from one resource to another, e.g. a listener's RDS route
 * configuration name, or a route's cluster. */
struct xd_ref {
	enum xd_rtype type;
	const char *name;
};


/*
 * A resource with a TTL (rule L1, "@ttl"): the forms sent to clients that
 * take TTLs, and the delta heartbeat that refreshes it without its body
 * (a SotW heartbeat carries the wrapped form: protocol/body.c).
 *   wrapped, delta  as the entry's own, with the ttl field
 *   beat_delta      Resource{version, name, ttl}, no resource
 */
struct xd_ttl_forms {
	uint32_t ms;
	struct xd_span wrapped, delta;
	struct xd_span beat_delta;
};

struct xd_entry {
	const char *name; /* NUL-terminated */
	uint32_t name_len;
	uint64_t hash;      /* the version: of `msg`, seeded by its TTL and
			       constraints when it has them */
	char version[17];   /* hash in hex */
	struct xd_span msg; /* the resource message */
	struct xd_span sotw, wrapped, delta;
	const struct xd_ref *refs;
	uint32_t nrefs;
	const char *const *aliases;
	uint32_t naliases;
	const char *file; /* where it was defined, for messages */
	uint32_t line;
	/* Who may be served it (xdsd-snapshot(5), "@allow"): everyone
	 * unless `restricted`; then the clients whose identity matches
	 * one of the globs (none: nobody). xd_entry_allows decides. */
	const char *const *allow;
	uint32_t nallow;
	bool restricted;
	const struct xd_ttl_forms *ttl; /* NULL: no TTL */
	/* A virtual host sent only when asked for ("@on_demand"): a
	 * wildcard does not reach it (rule D2); names and aliases do. */
	bool on_demand;
	/* A variant (rule P1): its encoded DynamicParameterConstraints,
	 * which its delta and wrapped forms carry in resource_name and which
	 * seed its version; data NULL for a plain resource. */
	struct xd_span constraints;
};

/*
 * Whether a client proving `identity` (NULL: none, as over plaintext or
 * TLS without a client certificate) may be served `e`: when `e` is not
 * restricted, or the identity matches one of its globs (util/text.h,
 * xd_text_glob). A client without an identity matches no glob.
 */
bool xd_entry_allows(const struct xd_entry *e, const char *identity);

/*
 * The order of a table's entries: by name; of one name, the plain
 * resource first, then its variants by their constraints' bytes (rule
 * P1: the order locators try them). <0, 0 or >0, as for qsort.
 */
int xd_entry_order(const struct xd_entry *a, const struct xd_entry *b);

struct xd_table;
struct xd_table_builder;

/* A builder for one type; used by one thread. */
struct xd_table_builder *xd_table_builder_new(enum xd_rtype type);

/*
 * A builder for a type beyond enum xd_rtype, named by its type URL
 * (static): a list collection's (rule X3). Its table's xd_table_type
 * is XD_RTYPE_COUNT, as an unknown type's.
 */
struct xd_table_builder *xd_table_builder_new_url(const char *type_url);

/*
 * Adds a resource; everything is copied. Returns 0, or -1 when the name
 * is already in the table (the caller reports the duplicate; the first
 * one's file and line are in *first).
 */
int xd_table_builder_add(struct xd_table_builder *b, const char *name,
			 const uint8_t *msg, size_t len,
			 const struct xd_ref *refs, size_t nrefs,
			 const char *const *aliases, size_t naliases,
			 const char *file, uint32_t line,
			 const struct xd_entry **first);

/*
 * Adds a variant of `name` (rule P1): a resource served to locators whose
 * dynamic parameters the checked `constraints` (xds/dynparam.h) accept.
 * Variants are not entries of the table (xd_table_at, xd_table_find,
 * wildcards never see them); xd_table_find_locator does. Returns -1 when
 * the name already has a variant with the same constraints (*first).
 * xd_table_builder_restrict and _ttl apply to it as to any resource.
 */
int xd_table_builder_add_variant(struct xd_table_builder *b, const char *name,
				 const uint8_t *msg, size_t len,
				 const struct xd_ref *refs, size_t nrefs,
				 struct xd_span constraints,
				 const char *file, uint32_t line,
				 const struct xd_entry **first);

/*
 * Restricts the resource added last to the clients whose identity
 * matches one of `globs` (copied; none: to nobody). The loader calls it
 * for "@allow" and for secrets without one (docs/engine.md, "Secrets
 * only to their owner").
 */
void xd_table_builder_restrict(struct xd_table_builder *b,
			       const char *const *globs, size_t n);

/*
 * Gives the resource added last a TTL of `ms` (> 0): its TTL forms, and
 * a version that depends on the TTL too, so that a reload that changes
 * or drops the TTL resends the resource (rule L1: that is how a client
 * learns of it).
 */
void xd_table_builder_ttl(struct xd_table_builder *b, uint32_t ms);

/*
 * Makes the resource added last one that a wildcard does not reach
 * ("@on_demand", virtual hosts only: the loader says): it is sent only
 * to clients that ask for it by name or alias. Not part of its version;
 * a reload that changes it alone is a change of the table all the same
 * (xd_table_same), as "@allow" is.
 */
void xd_table_builder_on_demand(struct xd_table_builder *b);

/* Sorts, encodes and indexes; frees the builder. */
struct xd_table *xd_table_builder_finish(struct xd_table_builder *b);

void xd_table_builder_free(struct xd_table_builder *b);

/* An empty table of a type (every snapshot has all eight). */
struct xd_table *xd_table_empty(enum xd_rtype type);

/*
 * An empty table of a type xdsd does not serve, named by its type URL
 * (copied): a subscription to an unknown type on the aggregated methods
 * is then served like any other, with nothing (docs/protocol.md §8.1).
 * Its xd_table_type is XD_RTYPE_COUNT.
 */
struct xd_table *xd_table_empty_unknown(const char *type_url, size_t len);

/*
 * A table holding every entry of `a`, plus those of `b` whose names are
 * not in `a`: the "make before break" view in which resources a client
 * still needs outlive their removal (sequencer). The entries are shared,
 * not copied; the result keeps `a` and `b` alive.
 */
struct xd_table *xd_table_union(struct xd_table *a, struct xd_table *b);

/*
 * A table holding every entry and variant of the `n` (> 1) `parts`,
 * finished tables of one type built by builders (neither unions, filters
 * nor merges): the table of a snapshot whose files were encoded one by
 * one (snapshot/parsed.h). Its entries, order, versions and indexes are
 * those of one builder given every entry; their bytes are shared, not
 * copied, and the result keeps the parts alive. *clash says whether two
 * parts define the same name (with the same constraints, for a
 * variant), which a builder would have refused: the table is then only
 * good for freeing (the loader reports the duplicates).
 */
struct xd_table *xd_table_merge(struct xd_table *const *parts, size_t n,
				bool *clash);

/* Whether `t` is what xd_table_merge made of these very parts, in this
 * order (for n == 1: the part itself), so a reload may keep it. */
bool xd_table_merged_from(const struct xd_table *t,
			  struct xd_table *const *parts, size_t n);

/* For a merge: how many parts it holds (0: not a merge), and each. */
size_t xd_table_merged_count(const struct xd_table *t);
struct xd_table *xd_table_merged_part(const struct xd_table *t, size_t i);

/* For a union: its `a` part; otherwise NULL. */
struct xd_table *xd_table_union_base(const struct xd_table *t);

/*
 * A table holding the entries of `t` that `keep` accepts: what one
 * client may see of it (protocol/derived.h, xd_derived_view). The
 * entries are shared, not copied; the result keeps `t` alive. Its
 * version is that of its own entries, so it differs from `t`'s when
 * anything was left out, and equal choices give equal versions.
 */
struct xd_table *xd_table_filter(struct xd_table *t,
				 bool (*keep)(const struct xd_entry *e,
					      void *arg),
				 void *arg);

/*
 * The table a view was filtered from: for a filter (xd_table_filter)
 * the table it filters, for a union the same of its base (a view kept
 * beside what a client still holds, rule A2); NULL for any other. What
 * is in it and not in `t` is what a client of the view may not be
 * served (docs/protocol.md, rule N2).
 */
struct xd_table *xd_table_filter_source(const struct xd_table *t);

/* The shortest TTL of its entries, in ms; 0 when none has one. */
uint32_t xd_table_min_ttl(const struct xd_table *t);

/* How many of its entries are restricted (0: every client sees all). */
size_t xd_table_restricted(const struct xd_table *t);

/*
 * Same content and same restrictions: what lets a reload keep the
 * previous table. The version alone does not say it: an "@allow" that
 * changed leaves every resource's bytes as they were.
 */
bool xd_table_same(const struct xd_table *a, const struct xd_table *b);

/*
 * Same content, both made by a builder (neither unions, filters nor
 * merges), and every entry defined at the same file and line: one may
 * stand for the other anywhere, messages included (the loader keeps
 * one table where a reload made an equal one, snapshot/parsed.h).
 */
bool xd_table_interchangeable(const struct xd_table *a,
			      const struct xd_table *b);

struct xd_table *xd_table_ref(struct xd_table *t);
void xd_table_unref(struct xd_table *t);

enum xd_rtype xd_table_type(const struct xd_table *t);
/* The type URL of its resources. */
const char *xd_table_type_url(const struct xd_table *t);
uint64_t xd_table_id(const struct xd_table *t);
size_t xd_table_count(const struct xd_table *t);
/* The bytes of its entries' three wire forms (shared ones included, for
 * a union): what a response of every resource costs, thrice. */
size_t xd_table_wire_bytes(const struct xd_table *t);
const char *xd_table_version(const struct xd_table *t);
uint64_t xd_table_vhash(const struct xd_table *t);

/*
 * When the table was first served (monotonic ms, util/clock.h), 0 before:
 * the cache stamps the tables of each snapshot it installs, and a table
 * a reload kept keeps its first stamp. A union's is its base's: what a
 * client acknowledging it caught up with. For convergence times. Loop
 * thread only.
 */
void xd_table_publish(struct xd_table *t, uint64_t now_ms);
uint64_t xd_table_published(const struct xd_table *t);

/* Entries sorted by name; i < count. */
const struct xd_entry *xd_table_at(const struct xd_table *t, size_t i);

/* Looks a name up; NULL if absent. */
const struct xd_entry *xd_table_find(const struct xd_table *t,
				     const char *name, size_t len);

/*
 * Calls `visit` for each entry of `t` in the glob collection `glob`
 * (rule X2; canonical, xds/xdstp.h), in name order: those whose name is
 * the glob's with its last segment "*" one segment, and the same
 * parameters. A visit that returns false ends the walk. Returns how
 * many were visited.
 */
size_t xd_table_glob_members(const struct xd_table *t, const char *glob,
			     size_t len,
			     bool (*visit)(const struct xd_entry *e, void *arg),
			     void *arg);

/*
 * Looks a locator key up (xds/dynparam.h, rule P1): the first variant of
 * its name, in the order of their encoded constraints, whose constraints
 * accept its parameters; else the plain resource of that name, which
 * has no constraints and so accepts any; NULL if neither.
 */
const struct xd_entry *xd_table_find_locator(const struct xd_table *t,
					     const char *key, size_t len);

/* The same for a locator already split: `name` and its `n` parameters,
 * sorted by key. */
const struct xd_entry *xd_table_find_variant(const struct xd_table *t,
					     struct xd_name name,
					     const struct xd_dparam *params,
					     size_t n);

/* How many variants it holds (rule P1), and each, sorted as
 * xd_table_find_locator tries them (i < count). */
size_t xd_table_variant_count(const struct xd_table *t);
const struct xd_entry *xd_table_variant_at(const struct xd_table *t, size_t i);

/* The variants of `name`: the first, and their number in *n (0: none,
 * then NULL). */
const struct xd_entry *xd_table_variants_of(const struct xd_table *t,
					    const char *name, size_t len,
					    size_t *n);

/* Looks an alias up (VHDS, rule D10); NULL if no entry has it. */
const struct xd_entry *xd_table_find_alias(const struct xd_table *t,
					   const char *alias, size_t len);

/*
 * Tables alive in the process now (unions included), and in *bytes (if
 * not NULL) what they allocated: resources in their three wire forms,
 * entries, indexes. Any thread; for statistics and tests.
 */
size_t xd_table_live(size_t *bytes);

/*
 * One slot where the loop thread attaches what it computes from the table
 * (the response caches of protocol/body.c); `free_fn(p)` runs when the
 * table is freed. Loop thread only.
 */
struct xd_table_attachment {
	void *p;
	void (*free_fn)(void *p);
};
struct xd_table_attachment *xd_table_attachment(struct xd_table *t);

#endif
