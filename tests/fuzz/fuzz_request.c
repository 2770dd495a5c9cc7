/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for everything a peer sends on a stream (make fuzz;
 * clang only). It does what protocol/session.c does with each message,
 * without gRPC, with the modules the session itself calls: the request
 * (xd_request_parse), the client (xd_client_admit for the node,
 * xd_client_form for every response, xd_client_key to find the snapshot
 * in a real cache), the typeset (xd_typeset_route for which type a
 * request is about, types xdsd does not serve and list collections,
 * xd_typeset_next and xd_typeset_heartbeat for what they send), the
 * type's subscription (xd_sub_sotw_request / xd_sub_delta_request),
 * then the sequencer (xd_seq_next) over fixed snapshots, each response
 * "sent" at once and recorded with xd_sub_sent, as the daemon's pump
 * does. Nothing the daemon decides is decided again here: the harness
 * only checks what those modules say.
 *
 * An input is one byte choosing the method, then operations to its end:
 *
 *   method   bit 0 delta, bit 1 aggregated, bits 2-4 the type a
 *            per-type method serves (enum xd_rtype)
 *   op       low two bits:
 *     0 REQUEST  a 2-byte little-endian length, then the message
 *                (cut short by the end of the input)
 *     1 RELOAD   a byte: snapshot byte % NSNAP becomes the cache's
 *     2 TICK     a byte: the clock advances byte * 100 ms (EDS wait)
 *     3 ANSWER   the client answers the response in flight of the first
 *                type that has one (served types, then unknown types,
 *                then list collections), as a client would (with its last
 *                subscription, the version and the nonce); bit 2 of
 *                the op makes it a NACK. The message is written here
 *                and read like any other.
 *            bit 3: REQUEST and ANSWER are the second stream's. Two
 *            streams of one method share the snapshots and the clock,
 *            and so what is memoized on the tables: a body or a union
 *            computed for one is served to the other, and must be
 *            right for it too.
 *
 * Nonces are numbered from 1 per stream as the daemon numbers them, so
 * streams captured from real clients (seeds-request/) replay as they
 * went. Beyond "no crash, no leak, no undefined behaviour" it checks:
 *   - every name a parsed request or node holds lies inside its message;
 *   - admission: a first node is admitted with its id, cluster and
 *     features; a later one is the same exactly when its id and cluster
 *     are (rule S1); every refusal says why; routing sends a request to
 *     its type's subscription and the target's table, a list
 *     collection's to the collection's, an unknown type's to an empty
 *     table of its URL, and refuses only what the method cannot serve;
 *   - a stale SotW request changes nothing; an answer makes what was
 *     sent held; no type sends twice without an answer; a per-type
 *     method sends only its type;
 *   - every response decodes (protobuf-c, and the wire reader for the
 *     exact bytes) with the table's version, its type URL and its nonce;
 *     names no resource twice, nor one both as a resource and as
 *     removed or missing; carries only subscribed resources, with the
 *     table's bytes; removes only what the table has no resource of;
 *     is empty only if it is a full-state SotW one; holds the counts
 *     its body declares; gives each resource its entry's version (the
 *     TTL and a variant's constraints seed it) and a ttl exactly in TTL
 *     forms (rule L1); names a variant by its ResourceName (rule P1);
 *     says in resource_errors only names asked for by name or locator
 *     that the table lacks, NOT_FOUND or PERMISSION_DENIED, each once,
 *     never one it carries, and over delta each also removed (rules
 *     N1-N3);
 *   - heartbeats, asked for whenever a stream is idle as session.c does:
 *     never before half the shortest TTL held since the TTLs were last
 *     refreshed; only resources held with a TTL, at the held version,
 *     without a body, and nothing else in that response;
 *   - the client's view: what each response told it (and what it said
 *     it holds when reconnecting), resource by resource and, for
 *     variants (rule P1), variant by variant, by the constraints of
 *     their ResourceName; a client that unsubscribes a name or locator
 *     keeps what another of its keys still picks. Whenever nothing is
 *     due and nothing in flight, every type holds the target's table,
 *     every subscribed resource is held at the target's version, what
 *     each locator picks is held as that variant at its version (a
 *     client of plain Anys, which cannot tell variants apart, holds one
 *     of those its keys pick under the name) and, in delta and
 *     full-state SotW, nothing subscribed is held that the target
 *     lacks, nor a variant no locator picks;
 *   - once the streams end, no name set is left alive.
 *
 * Unknown type URLs on ADS are served by the typeset as the session
 * serves them: an empty table of that URL, pumped first; list
 * collections (the snapshots have none: each is an empty table) once
 * the sequencer is idle. Neither has a client's view; their responses
 * are checked like any other.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cache/cache.h"
#include "config/config.h"
#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "protocol/body.h"
#include "protocol/client.h"
#include "protocol/derived.h"
#include "protocol/nameset.h"
#include "protocol/node.h"
#include "protocol/request.h"
#include "protocol/sequence.h"
#include "protocol/sub.h"
#include "protocol/typeset.h"
#include "wire/wire.h"
#include "snapshot/snapshot.h"
#include "util/buf.h"
#include "util/loop_thread.h"
#include "xds/dynparam.h"
#include "xds/xdstp.h"

/* When requests come (Unix ms), as the daemon passes it in: the engine
 * reads no clock. */
#define WALL_MS INT64_C(1700000000000)

#define RESOURCE_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"
/* FUZZ_REQUEST_TRACE=1: say what each input does (to read a seed). */
static bool trace;
#define TRACE(...)                                                         \
	do {                                                               \
		if (trace)                                                 \
			fprintf(stderr, __VA_ARGS__);                      \
	} while (0)

#define NEED(cond)                                                         \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",  \
				__FILE__, __LINE__, #cond);                \
			abort();                                           \
		}                                                          \
	} while (0)

/* ---------------- the snapshots ---------------- */

/*
 * Per type, "name=content" words; a cluster's "@name" is the endpoints
 * it refers to, a virtual host's "#alias" its aliases; "!ms" gives a
 * resource a TTL (rule L1); "%key:value" makes it a variant of its name
 * for the locators whose parameter `key` is `value` (rule P1). Endpoint
 * names "xdstp://a/<type>/g/..." make the glob collection
 * ".../g/<star>" (rule X2); ".../h/e3" lies outside it.
 *
 * The first holds what real clients ask for (the walkthrough's "demo"
 * everywhere), with TTLs on resources no seed says it holds; the second
 * changes every type, drops a cluster with its endpoints and an alias of
 * a virtual host that stays, gives "demo" endpoints a TTL and drops
 * "spare"'s (same bytes: only the TTL tells the versions apart), moves a
 * glob member out and another in; the third makes names of the first's
 * aliases, refers to endpoints that do not exist and changes the TTL of
 * "demo" endpoints alone; the last is empty.
 */
#define G "xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/"
static const char *const snapshot_specs[] = {
	("SDS s1=S1 s1=S1v%env:prod s1=S1w%env:dev s2=S2!2000;"
	 " RTDS rt=T1!1500; CDS demo=D1@demo c2=C2@c2 static=X1;"
	 " EDS demo=E1 c2=E2 spare=E3!3000 " G "g/e1=G1 " G "g/e2=G2!2000 "
	 G "h/e3=G3; LDS demo=L1 l2=L2; RDS demo=R1 r2=R2!2000;"
	 " SRDS sr=SR1; VHDS vh1=V1#demo/a vh2=V2#demo/b!2500"),
	("SDS s1=S1b s1=S1c%env:prod!3000; RTDS rt=T2;"
	 " CDS demo=D2@demo c3=C3@c3 static=X1!4000;"
	 " EDS demo=E1!3000 c3=E4!2000 spare=E3 " G "g/e1=G1b " G "g/e4=G4;"
	 " LDS demo=L1b l2=L2!2000; RDS demo=R1b;"
	 " SRDS sr=SR2; VHDS vh1=V1#demo/b vh3=V3#demo/c!1000"),
	("SDS s1=S1v%env:dev; CDS demo=D1@demo c2=C2@gone!1000;"
	 " EDS demo=E1!5000 " G "g/e2=G2!2000; LDS demo=L1; RDS demo=R1;"
	 " VHDS demo/a=V9 vh2=V2#demo/b#vh1"),
	"",
};
#undef G
#define NSNAP (sizeof(snapshot_specs) / sizeof(snapshot_specs[0]))

static enum xd_rtype type_named(const char *name)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (strcmp(name, xd_rtype_info((enum xd_rtype)t)->service) == 0)
			return (enum xd_rtype)t;
	NEED(!"a known type in a snapshot spec");
	return XD_SECRET;
}

/* One resource: its message is {1: name, 15: content}, so that a
 * response's resources can be told apart by name (field 1 is the name
 * of every resource type xdsd serves but ClusterLoadAssignment, whose
 * cluster_name it is). */
static void add_resource(struct xd_table_builder *b, char *word, unsigned line)
{
	char *eq = strchr(word, '='), *content, *at, *alias, *ttl, *var;
	const char *aliases[4];
	struct xd_ref ref = {XD_ENDPOINT, NULL};
	struct xd_buf msg = XD_BUF_INIT, dpc = XD_BUF_INIT;
	size_t naliases = 0;

	NEED(eq != NULL);
	*eq = '\0';
	content = eq + 1;
	ttl = strchr(content, '!');
	var = strchr(content, '%');
	if (ttl != NULL)
		*ttl++ = '\0';
	if (var != NULL) {
		/* DynamicParameterConstraints {constraint 1: SingleConstraint
		 * {key 1, value 2}} */
		char *colon = strchr(++var, ':');
		size_t mark;

		NEED(colon != NULL);
		var[-1] = '\0';
		*colon = '\0';
		xd_wire_tag(&dpc, 1, XD_WT_LEN);
		mark = xd_wire_open(&dpc);
		xd_wire_bytes(&dpc, 1, var, strlen(var));
		xd_wire_bytes(&dpc, 2, colon + 1, strlen(colon + 1));
		xd_wire_close(&dpc, mark);
	}
	at = strchr(content, '@');
	alias = strchr(content, '#');
	if (at != NULL) {
		*at = '\0';
		ref.name = at + 1;
	}
	while (alias != NULL && naliases < 4) {
		*alias = '\0';
		aliases[naliases++] = alias + 1;
		alias = strchr(alias + 1, '#');
	}
	xd_wire_bytes(&msg, 1, word, strlen(word));
	xd_wire_bytes(&msg, 15, content, strlen(content));
	if (var != NULL)
		NEED(xd_table_builder_add_variant(
			     b, word, msg.data, msg.len, &ref,
			     ref.name != NULL ? 1 : 0,
			     (struct xd_span){dpc.data, (uint32_t)dpc.len},
			     "fuzz.yaml", line, NULL) == 0);
	else
		NEED(xd_table_builder_add(b, word, msg.data, msg.len, &ref,
					  ref.name != NULL ? 1 : 0, aliases,
					  naliases, "fuzz.yaml", line, NULL) == 0);
	if (ttl != NULL)
		xd_table_builder_ttl(b, (uint32_t)strtoul(ttl, NULL, 10));
	xd_buf_free(&msg);
	xd_buf_free(&dpc);
}

static struct xd_snapshot *snapshot_of(const char *spec)
{
	struct xd_table *tables[XD_RTYPE_COUNT] = {NULL};
	char *copy = strdup(spec), *part, *save;
	struct xd_snapshot *s;
	unsigned line = 1;

	NEED(copy != NULL);
	for (part = strtok_r(copy, ";", &save); part != NULL;
	     part = strtok_r(NULL, ";", &save)) {
		char *word, *save2;
		enum xd_rtype t = type_named(strtok_r(part, " ", &save2));
		struct xd_table_builder *b = xd_table_builder_new(t);

		NEED(b != NULL);
		while ((word = strtok_r(NULL, " ", &save2)) != NULL)
			add_resource(b, word, line++);
		tables[t] = xd_table_builder_finish(b);
		NEED(tables[t] != NULL);
	}
	free(copy);
	s = xd_snapshot_new("default", tables);
	NEED(s != NULL);
	return s;
}

/*
 * The snapshots are built once: building them for every input would
 * cost more than all the rest. What streams compute from a table is
 * memoized on it (derived.h); dropping that after each input makes
 * every input meet the tables as new, so that an input that fails
 * alone fails the same way.
 */
static struct xd_snapshot *snaps[NSNAP];

static void forget_derived(void)
{
	for (size_t i = 0; i < NSNAP; i++)
		for (int t = 0; t < XD_RTYPE_COUNT; t++) {
			struct xd_table_attachment *a = xd_table_attachment(
				xd_snapshot_table(snaps[i], (enum xd_rtype)t));

			if (a->p != NULL)
				a->free_fn(a->p);
			a->p = NULL;
			a->free_fn = NULL;
		}
}

/* ---------------- one stream ---------------- */

/* What the client holds of one type: what the responses it received
 * told it, resource by resource (name, and for a variant its
 * constraints, rule P1; XXH3 of the message). A client that takes plain
 * Anys in SotW cannot tell variants apart: it holds one resource of a
 * name, the last sent, in the plain slot. */
struct holding {
	char *name;
	size_t len;
	uint8_t *cons;  /* a variant's constraints; NULL: plain */
	size_t cons_len;
	uint64_t hash;
};

struct view {
	struct holding *v;
	size_t n, cap;
	bool locators; /* asked by locator key at some time */
	bool unsure; /* the client said contradictory things: not checked */
	/* the content of the last response taken in: which variant each
	 * of the client's locators picks there is what it knows it holds
	 * through it (a reference, or NULL) */
	struct xd_table *table;
};

struct peer {
	int id;                   /* 0 or 1, for the trace */
	bool delta, aggregated;
	enum xd_rtype type;       /* per-type method */

	/* the daemon's own: who the client is (admission, form, key) and
	 * every type it subscribes to (routing, unknown types, list
	 * collections), as a session embeds them */
	struct xd_client client;
	struct xd_typeset types;
	/* what serves it: the cache's snapshot for its key, as the
	 * session's refresh_snapshot follows it (NULL before its node) */
	struct xd_snapshot *snap;
	uint64_t next_nonce, now;
	struct xd_seq_waits waits;

	struct view views[XD_RTYPE_COUNT];
	/* each type's and collection's last request, for ANSWER to repeat
	 * its names */
	struct xd_buf last[XD_RTYPE_COUNT];
	struct xd_buf last_coll[XD_CTYPE_COUNT];
};

static struct xd_snapshot *target(const struct peer *p)
{
	return p->snap;
}

/* ---------------- the client's view ---------------- */

static bool holding_is(const struct holding *h, const char *name, size_t len,
		       struct xd_span cons)
{
	return h->len == len && memcmp(h->name, name, len) == 0 &&
	       (h->cons == NULL) == (cons.data == NULL) &&
	       (cons.data == NULL ||
		(h->cons_len == cons.len &&
		 (cons.len == 0 || memcmp(h->cons, cons.data, cons.len) == 0)));
}

static const struct xd_span PLAIN = {NULL, 0};

/* The resource `name` held as the variant `cons` (PLAIN: the plain
 * resource), or NULL. */
static struct holding *view_find_v(struct view *v, const char *name,
				   size_t len, struct xd_span cons)
{
	for (size_t i = 0; i < v->n; i++)
		if (holding_is(&v->v[i], name, len, cons))
			return &v->v[i];
	return NULL;
}

static struct holding *view_find(struct view *v, const char *name, size_t len)
{
	return view_find_v(v, name, len, PLAIN);
}

static void view_put_v(struct view *v, const char *name, size_t len,
		       struct xd_span cons, uint64_t hash)
{
	struct holding *h = view_find_v(v, name, len, cons);

	if (h == NULL) {
		v->v = xd_grow(v->v, &v->cap, v->n + 1, sizeof(*v->v));
		h = &v->v[v->n++];
		h->name = malloc(len + 1);
		NEED(h->name != NULL);
		memcpy(h->name, name, len);
		h->len = len;
		h->cons = NULL;
		h->cons_len = cons.len;
		if (cons.data != NULL) {
			h->cons = malloc(cons.len + 1);
			NEED(h->cons != NULL);
			memcpy(h->cons, cons.data, cons.len);
		}
	}
	h->hash = hash;
}

static void view_put(struct view *v, const char *name, size_t len,
		     uint64_t hash)
{
	view_put_v(v, name, len, PLAIN, hash);
}

static void view_drop_at(struct view *v, struct holding *h)
{
	free(h->name);
	free(h->cons);
	*h = v->v[--v->n];
}

static void view_drop_v(struct view *v, const char *name, size_t len,
			struct xd_span cons)
{
	struct holding *h = view_find_v(v, name, len, cons);

	if (h != NULL)
		view_drop_at(v, h);
}

static void view_drop(struct view *v, const char *name, size_t len)
{
	view_drop_v(v, name, len, PLAIN);
}

static void view_clear(struct view *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].cons);
	}
	v->n = 0;
}

static void view_free(struct view *v)
{
	view_clear(v);
	free(v->v);
	xd_table_unref(v->table);
	memset(v, 0, sizeof(*v));
}

/* Whether the entry `e` of `t` is what one of the locator keys of `set`
 * picks there (rule P1). */
static bool picked(const struct xd_nameset *set, struct xd_table *t,
		   const struct xd_entry *e)
{
	for (size_t i = 0; t != NULL && i < xd_nameset_count(set); i++) {
		struct xd_name k = xd_nameset_at(set, i);

		if (xd_locator_is(k.data, k.len) &&
		    xd_table_find_locator(t, k.data, k.len) == e)
			return true;
	}
	return false;
}

/* Whether the client still wants what it holds as `h`, judged against
 * `t`: a plain resource by a wildcard, its name or its glob collection
 * (rule X2), or as what a locator picks; a variant as what a locator
 * picks (rule P1). */
static bool still_wanted(const struct xd_sub *s, struct xd_table *t,
			 const struct holding *h, bool delta)
{
	const struct xd_entry *e;
	struct xd_span c = {h->cons, (uint32_t)h->cons_len};

	if (h->cons == NULL &&
	    (s->want.all || xd_nameset_has(s->want.set, h->name, h->len) ||
	     (delta && xd_derived_in_glob(s->want.set, h->name, h->len))))
		return true;
	if (t == NULL)
		return false;
	e = h->cons == NULL ? xd_table_find(t, h->name, h->len) : NULL;
	if (h->cons != NULL) {
		size_t n = 0;
		const struct xd_entry *v =
			xd_table_variants_of(t, h->name, h->len, &n);

		for (size_t i = 0; v != NULL && i < n; i++, v++)
			if (v->constraints.len == c.len &&
			    (c.len == 0 ||
			     memcmp(v->constraints.data, c.data, c.len) == 0))
				e = v;
	}
	return e != NULL && picked(s->want.set, t, e);
}

/* 16 hex digits, as versions are written; false for anything else. */
static bool parse_version(struct xd_name s, uint64_t *out)
{
	uint64_t v = 0;

	if (s.len != 16)
		return false;
	for (size_t i = 0; i < 16; i++) {
		char c = s.data[i];
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

/* ---------------- requests and nodes ---------------- */

/* A span of `len` bytes at `data` lies inside [base, base + size). */
static bool inside(const void *data, size_t len, const uint8_t *base,
		   size_t size)
{
	const uint8_t *d = data;

	return len == 0 || (d >= base && d <= base + size &&
			    len <= (size_t)(base + size - d));
}

static bool names_inside(const struct xd_name *v, size_t n,
			 const uint8_t *base, size_t size)
{
	for (size_t i = 0; i < n; i++)
		if (!inside(v[i].data, v[i].len, base, size))
			return false;
	return true;
}

/* Names lie inside the message, but for locator keys (rule P1), which
 * the request owns, whole, in its keys. */
static bool names_or_keys(const struct xd_request *r, const struct xd_name *v,
			  size_t n, const uint8_t *base, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		bool key = false;

		for (size_t k = 0; !key && k < r->nkeys; k++)
			key = v[i].data == r->keys[k] &&
			      v[i].len == strlen(r->keys[k]);
		if (!key && !names_inside(&v[i], 1, base, size))
			return false;
	}
	return true;
}

static void check_request(const struct xd_request *r, const uint8_t *data,
			  size_t len)
{
	NEED(inside(r->type_url.data, r->type_url.len, data, len));
	NEED(inside(r->nonce.data, r->nonce.len, data, len));
	NEED(inside(r->version_info.data, r->version_info.len, data, len));
	NEED(inside(r->node.data, r->node.len, data, len));
	NEED(inside(r->error_message.data, r->error_message.len, data, len));
	NEED(names_or_keys(r, r->names, r->nnames, data, len));
	NEED(names_or_keys(r, r->unsubscribe, r->nunsubscribe, data, len));
	NEED(names_inside(r->initial_names, r->ninitial, data, len));
	NEED(names_inside(r->initial_versions, r->ninitial, data, len));
	NEED(r->delta || (r->nunsubscribe == 0 && r->ninitial == 0));
	NEED(!r->delta || r->version_info.len == 0);
}

static bool is_text(struct xd_name n, const char *s)
{
	return n.len == strlen(s) && memcmp(n.data, s, n.len) == 0;
}

static void check_node(const struct xd_node *n, struct xd_span span)
{
	const struct xd_name *all[] = {&n->id, &n->cluster, &n->region,
				       &n->zone, &n->sub_zone,
				       &n->user_agent_name,
				       &n->user_agent_version};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		NEED(inside(all[i]->data, all[i]->len, span.data, span.len));
	NEED(memchr(n->id.data, 0, n->id.len) == NULL);
	NEED(memchr(n->cluster.data, 0, n->cluster.len) == NULL);
}

/* The daemon's defaults: the node's limits, its key (node_key), no
 * `authorize:` rules. */
static struct xd_config fuzz_cfg;

/* The snapshots live in a real cache (cache.h), under the default key
 * as xdsd's snapshots without a key of their own: every client's key
 * (xd_client_key) finds the one RELOAD installed. */
static struct xd_cache *cache;

static void install(size_t i)
{
	struct xd_snapshot *one = xd_snapshot_ref(snaps[i]);

	xd_cache_replace(cache, &one, 1);
}

/* session.c refresh_snapshot: the snapshot serving the client's key
 * now, as its (absent) identity may see it; the typeset follows it. */
static void refresh(struct peer *p)
{
	struct xd_snapshot *now;

	if (p->client.state != XD_CLIENT_ADMITTED)
		return;
	now = xd_cache_get(cache, xd_client_key(&p->client));
	NEED(now != NULL); /* the default serves every key */
	if (now == (p->snap != NULL ? xd_snapshot_base(p->snap) : NULL))
		return;
	xd_snapshot_unref(p->snap);
	p->snap = xd_derived_snapshot_view(now, NULL);
	xd_typeset_follow(&p->types, p->snap, NULL);
}

/*
 * session.c accept_node: the node a request carries (none: an empty
 * span), through the client module's admission. False when the stream
 * ends. Whatever admission says, the node the parser reads must lie
 * inside its bytes, and a later node is the same one exactly when its
 * id and cluster are the first's (rule S1).
 */
static bool admit(struct peer *p, struct xd_span span)
{
	enum xd_client_state before = p->client.state;
	enum xd_client_verdict v;
	const char *parse_why = NULL;
	bool parsed, same = false;
	struct xd_node n;
	char why[512] = "";

	parsed = xd_node_parse(&n, span.data, span.len, &parse_why) == 0;
	NEED(parsed || parse_why != NULL);
	if (parsed) {
		check_node(&n, span);
		same = before == XD_CLIENT_ADMITTED &&
		       is_text(n.id, p->client.node_id) &&
		       is_text(n.cluster, p->client.node_cluster);
	}
	v = xd_client_admit(&p->client, span, why, sizeof(why));
	switch (v) {
	case XD_CLIENT_ADMIT:
		NEED(before == XD_CLIENT_NEW && parsed &&
		     p->client.state == XD_CLIENT_ADMITTED);
		NEED(is_text(n.id, p->client.node_id) &&
		     is_text(n.cluster, p->client.node_cluster));
		NEED(p->client.wrapped ==
		     ((n.features & XD_FEATURE_RESOURCE_IN_SOTW) != 0));
		NEED(p->client.ttl ==
		     ((n.features & XD_FEATURE_RESOURCE_TTL) != 0));
		refresh(p);
		return true;
	case XD_CLIENT_SAME:
		NEED(before == XD_CLIENT_ADMITTED &&
		     p->client.state == XD_CLIENT_ADMITTED);
		NEED(span.len == 0 || same);
		return true;
	case XD_CLIENT_CHANGED:
		NEED(before == XD_CLIENT_ADMITTED && parsed && !same);
		break;
	case XD_CLIENT_MALFORMED:
		NEED(!parsed);
		break;
	case XD_CLIENT_OVER_LIMIT:
	case XD_CLIENT_FORBIDDEN:
		break;
	}
	NEED(why[0] != '\0');
	NEED(before == XD_CLIENT_ADMITTED ||
	     p->client.state == XD_CLIENT_REFUSED);
	TRACE("%d: node refused: %s\n", p->id, why);
	return false;
}

/* ---------------- checking what is sent ---------------- */

static int cmp_name(const void *pa, const void *pb)
{
	const struct xd_name *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n > 0 ? memcmp(a->data, b->data, n) : 0;

	return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

/* No name twice in v (sorts v). */
static bool distinct(struct xd_name *v, size_t n)
{
	if (n < 2)
		return true;
	qsort(v, n, sizeof(*v), cmp_name);
	for (size_t i = 1; i < n; i++)
		if (cmp_name(&v[i - 1], &v[i]) == 0)
			return false;
	return true;
}

static bool sorted_has(const struct xd_name *v, size_t n, struct xd_name x)
{
	return n > 0 && bsearch(&x, v, n, sizeof(*v), cmp_name) != NULL;
}

static struct xd_name field_name(const struct xd_wire_field *f)
{
	return (struct xd_name){(const char *)f->data, f->len};
}

/* The first length-delimited field `number` of a message. */
static bool get_field(const void *msg, size_t len, uint32_t number,
		      struct xd_name *out)
{
	const uint8_t *p = msg, *end = p + len;
	struct xd_wire_field f;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1)
		if (f.number == number && f.wt == XD_WT_LEN) {
			*out = field_name(&f);
			return true;
		}
	NEED(rc == 0);
	return false;
}

/* Subscribed by its name, by one of its aliases (VHDS), or in delta
 * by the glob collection it belongs to (rule X2). */
static bool subscribed(const struct xd_sub *s, const struct xd_entry *e,
		       bool delta)
{
	bool yes = s->want.all || xd_nameset_has(s->want.set, e->name, e->name_len) ||
		   (delta && xd_derived_in_glob(s->want.set, e->name, e->name_len));

	for (uint32_t i = 0; !yes && i < e->naliases; i++)
		yes = xd_nameset_has(s->want.set, e->aliases[i],
				     strlen(e->aliases[i]));
	return yes;
}

/* True if the table has `name` as a name or an alias. */
static bool table_knows(struct xd_table *t, struct xd_name n)
{
	return xd_table_find(t, n.data, n.len) != NULL ||
	       xd_table_find_alias(t, n.data, n.len) != NULL;
}

/* The code of a ResourceError's Status (rules N1, N2), -1 when it has
 * none. */
static long error_code(struct xd_name err)
{
	struct xd_name st;
	const uint8_t *p, *end;
	struct xd_wire_field f;
	long code = -1;
	int rc;

	NEED(get_field(err.data, err.len, 2, &st));
	p = (const uint8_t *)st.data;
	end = p + st.len;
	while ((rc = xd_wire_next(&p, end, &f)) == 1)
		if (f.number == 1 && f.wt == XD_WT_VARINT)
			code = (long)f.v;
	NEED(rc == 0);
	return code;
}

/* One response to check, and what it does to the client's view. */
struct sending {
	const struct xd_sub *sub;
	struct xd_table *table;
	const struct xd_body *body;
	enum xd_form form;
	bool full_state;
	struct view *view; /* NULL for a type xdsd does not serve */
	const char *label; /* "CDS", for the trace */
	bool heartbeat;    /* rule L1: x->table is what the client holds */
};

/* Whether `set` holds a locator key of `name` (rule P1). */
static bool by_locator(const struct xd_nameset *set, struct xd_name name)
{
	for (size_t i = 0; i < xd_nameset_count(set); i++) {
		struct xd_name k = xd_nameset_at(set, i), n;

		if (xd_locator_is(k.data, k.len) &&
		    xd_locator_split(k.data, k.len, &n, NULL, NULL) == 0 &&
		    n.len == name.len && memcmp(n.data, name.data, n.len) == 0)
			return true;
	}
	return false;
}

/* A Resource (delta, or wrapped in SotW): version 1, resource 2, name 3
 * or, for a variant (rule P1), ResourceName 8 {name 1, constraints 2},
 * ttl 6. */
struct resource {
	struct xd_name version, name, any;
	struct xd_name alias;  /* the first of its aliases */
	size_t naliases;
	struct xd_name resource_name; /* a variant's whole ResourceName */
	struct xd_span constraints;
	bool has_version, has_body, variant, has_ttl;
};

static void resource_of(struct xd_name m, struct resource *r)
{
	const uint8_t *q = (const uint8_t *)m.data, *end = q + m.len;
	struct xd_wire_field f;
	int rc;

	memset(r, 0, sizeof(*r));
	while ((rc = xd_wire_next(&q, end, &f)) == 1) {
		NEED(f.wt == XD_WT_LEN);
		switch (f.number) {
		case 1:
			r->version = field_name(&f);
			r->has_version = true;
			break;
		case 2:
			r->any = field_name(&f);
			r->has_body = true;
			break;
		case 3:
			NEED(!r->variant);
			r->name = field_name(&f);
			break;
		case 4: /* aliases */
			if (r->naliases++ == 0)
				r->alias = field_name(&f);
			break;
		case 6:
			r->has_ttl = true;
			break;
		case 8: {
			struct xd_name c = {"", 0};

			NEED(r->name.len == 0);
			r->variant = true;
			r->resource_name = field_name(&f);
			NEED(get_field(f.data, f.len, 1, &r->name));
			NEED(get_field(f.data, f.len, 2, &c));
			r->constraints = (struct xd_span){
				(const uint8_t *)c.data, (uint32_t)c.len};
			break;
		}
		default:
			NEED(!"a field a Resource xdsd sends does not have");
		}
	}
	NEED(rc == 0);
}

/* The variant of `name` with these constraints, or NULL. */
static const struct xd_entry *variant_of(struct xd_table *t, struct xd_name name,
					 struct xd_span c)
{
	size_t n = 0;
	const struct xd_entry *e = xd_table_variants_of(t, name.data, name.len, &n);

	for (size_t i = 0; e != NULL && i < n; i++, e++)
		if (e->constraints.len == c.len &&
		    memcmp(e->constraints.data, c.data, c.len) == 0)
			return e;
	return NULL;
}

/* A plain SotW resource is known by its bytes: the entry of `name`, or
 * (asked for by locator) one of its variants, that has exactly them. */
static const struct xd_entry *entry_by_bytes(struct xd_table *t,
					     struct xd_name name,
					     struct xd_name value, bool variants)
{
	const struct xd_entry *e = xd_table_find(t, name.data, name.len);
	size_t n = 0;

	if (e != NULL && e->msg.len == value.len &&
	    memcmp(e->msg.data, value.data, value.len) == 0)
		return e;
	e = variants ? xd_table_variants_of(t, name.data, name.len, &n) : NULL;
	for (size_t i = 0; e != NULL && i < n; i++, e++)
		if (e->msg.len == value.len &&
		    memcmp(e->msg.data, value.data, value.len) == 0)
			return e;
	return NULL;
}

/* A variant a response carries or removes (rule P1). */
struct variant_change {
	struct xd_name name;
	struct xd_span cons;
	uint64_t hash;
};

static void add_change(struct variant_change **v, size_t *n, size_t *cap,
		       struct xd_name name, struct xd_span cons, uint64_t hash)
{
	*v = xd_grow(*v, cap, *n + 1, sizeof(**v));
	(*v)[(*n)++] = (struct variant_change){name, cons, hash};
}

/*
 * A response as the client receives it: `body` then the nonce, decoded
 * twice (protobuf-c for well-formedness, the wire reader for the exact
 * bytes of each name, NULs included); the client's view takes it in.
 */
static void check_response(struct peer *p, const struct sending *x,
			   uint64_t nonce)
{
	const struct xd_body *b = x->body;
	size_t blen = GRPC_SLICE_LENGTH(b->slice);
	const char *type_url = xd_table_type_url(x->table);
	struct xd_buf msg = XD_BUF_INIT;
	struct xd_name version = {"", 0}, url = {"", 0}, got_nonce = {"", 0};
	struct xd_name *names = NULL, *removed = NULL, *missing = NULL;
	struct xd_name *errors = NULL;
	size_t nerrors = 0, cap_errors = 0;
	uint64_t *hashes = NULL;
	size_t nnames = 0, nremoved = 0, ncarried = 0, nmissing = 0;
	size_t nremoved_variants = 0, nbeats = 0, nvnames = 0, cap_vnames = 0;
	struct xd_name *vnames = NULL;
	struct variant_change *vputs = NULL, *vdrops = NULL;
	size_t nvputs = 0, cap_vputs = 0, nvdrops = 0, cap_vdrops = 0;
	size_t cap_names = 0, cap_removed = 0, cap_hashes = 0, cap_missing = 0;
	const uint8_t *q, *end;
	struct xd_wire_field f;
	char digits[24];
	int rc;

	NEED(!b->empty && blen > 0);
	xd_buf_append(&msg, GRPC_SLICE_START_PTR(b->slice), blen);
	snprintf(digits, sizeof(digits), "%llu", (unsigned long long)nonce);
	xd_wire_bytes(&msg, 5, digits, strlen(digits));

	if (p->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r =
			envoy__service__discovery__v3__delta_discovery_response__unpack(
				NULL, msg.len, msg.data);

		NEED(r != NULL);
		envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	} else {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r =
			envoy__service__discovery__v3__discovery_response__unpack(
				NULL, msg.len, msg.data);

		NEED(r != NULL);
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	}

	q = msg.data;
	end = msg.data + msg.len;
	while ((rc = xd_wire_next(&q, end, &f)) == 1) {
		struct xd_name name, any, any_url, value, res;

		NEED(f.wt == XD_WT_LEN);
		switch (f.number) {
		case 1:
			version = field_name(&f);
			break;
		case 4:
			url = field_name(&f);
			break;
		case 5:
			got_nonce = field_name(&f);
			break;
		case 6: /* delta removed_resources */
			NEED(p->delta);
			removed = xd_grow(removed, &cap_removed, nremoved + 1,
					  sizeof(*removed));
			removed[nremoved++] = field_name(&f);
			break;
		case 7:   /* SotW resource_errors (rules N1-N3) */
		case 9: { /* delta resource_errors */
			struct xd_name rn, nm;
			long code = error_code(field_name(&f));

			NEED(p->delta == (f.number == 9));
			NEED(get_field(f.data, f.len, 1, &rn) &&
			     get_field(rn.data, rn.len, 1, &nm));
			NEED(code == 5 || code == 7);
			/* a name asked for by name or locator (a wildcard asks
			 * for none), that the table served lacks; virtual
			 * hosts say theirs by alias (rule D10) */
			NEED(!p->delta || xd_table_type(x->table) != XD_VIRTUAL_HOST);
			NEED(xd_nameset_has(x->sub->want.set, nm.data, nm.len) ||
			     by_locator(x->sub->want.set, nm));
			NEED(!table_knows(x->table, nm) ||
			     (x->view != NULL && x->view->locators));
			errors = xd_grow(errors, &cap_errors, nerrors + 1,
					 sizeof(*errors));
			errors[nerrors++] = nm;
			break;
		}
		case 8: { /* delta removed_resource_names: variants (rule P1) */
			struct xd_name c = {"", 0};

			NEED(p->delta && get_field(f.data, f.len, 1, &name));
			NEED(get_field(f.data, f.len, 2, &c));
			nremoved_variants++;
			add_change(&vdrops, &nvdrops, &cap_vdrops, name,
				   (struct xd_span){(const uint8_t *)c.data,
						    (uint32_t)c.len}, 0);
			break;
		}
		case 2: {
			struct resource r = {0};
			const struct xd_entry *e;
			bool locators = x->view != NULL && x->view->locators;

			if (p->delta) {
				resource_of(field_name(&f), &r);
			} else {
				any = field_name(&f);
				NEED(get_field(any.data, any.len, 1, &any_url));
				if (x->form != XD_FORM_SOTW) {
					NEED(is_text(any_url, RESOURCE_URL));
					NEED(get_field(any.data, any.len, 2, &res));
					resource_of(res, &r);
				} else {
					NEED(is_text(any_url, type_url));
					r.any = any;
					r.has_body = true;
				}
			}
			if (x->heartbeat) {
				/* rule L1: a resource the client holds, at the
				 * version it holds; in delta one with a TTL, without
				 * its body; in SotW with its body, and for the types
				 * sent whole every other resource held too */
				if (p->delta)
					NEED(!r.has_body && r.has_ttl && r.has_version);
				else
					NEED(r.has_body);
				e = r.variant ? variant_of(x->table, r.name, r.constraints) :
					xd_table_find(x->table, r.name.data, r.name.len);
				NEED(e != NULL);
				NEED(e->ttl != NULL || (!p->delta && x->full_state));
				NEED(r.has_ttl == (e->ttl != NULL));
				NEED(!r.has_version || is_text(r.version, e->version));
				if (x->view != NULL && !x->view->unsure) {
					const struct holding *h = view_find_v(
						x->view, r.name.data, r.name.len,
						r.variant ? r.constraints : PLAIN);

					NEED(h != NULL && h->hash == e->hash);
				}
				ncarried++;
				nbeats++;
				if (r.variant) {
					vnames = xd_grow(vnames, &cap_vnames, nvnames + 1,
							 sizeof(*vnames));
					vnames[nvnames++] = r.resource_name;
					break;
				}
				names = xd_grow(names, &cap_names, nnames + 1, sizeof(*names));
				hashes = xd_grow(hashes, &cap_hashes, nnames + 1,
						 sizeof(*hashes));
				hashes[nnames] = e->hash;
				names[nnames++] = r.name;
				break;
			}
			if (!r.has_body) {
				/* rule D8: a virtual host's alias that names
				 * nothing, with itself as its one alias (other
				 * names that do not exist are removed_resources,
				 * as Envoy reads them) */
				NEED(p->delta && !r.variant && !r.has_ttl);
				NEED(xd_table_type(x->table) == XD_VIRTUAL_HOST);
				NEED(r.naliases == 1 && r.alias.len == r.name.len &&
				     memcmp(r.alias.data, r.name.data, r.name.len) == 0);
				NEED(!table_knows(x->table, r.name) || locators);
				NEED(xd_nameset_has(x->sub->want.set, r.name.data,
						    r.name.len) ||
				     by_locator(x->sub->want.set, r.name));
				missing = xd_grow(missing, &cap_missing,
						  nmissing + 1, sizeof(*missing));
				missing[nmissing++] = r.name;
				break;
			}
			/* the resource itself: {1: name, 15: content} */
			NEED(get_field(r.any.data, r.any.len, 1, &any_url));
			NEED(is_text(any_url, type_url));
			NEED(get_field(r.any.data, r.any.len, 2, &value));
			if (x->form == XD_FORM_SOTW) {
				NEED(get_field(value.data, value.len, 1, &r.name));
				e = entry_by_bytes(x->table, r.name, value, locators);
			} else if (r.variant) {
				e = variant_of(x->table, r.name, r.constraints);
			} else {
				e = xd_table_find(x->table, r.name.data, r.name.len);
			}
			NEED(e != NULL);
			NEED(e->msg.len == value.len &&
			     memcmp(e->msg.data, value.data, value.len) == 0);
			/* its version is its entry's: the TTL and a variant's
			 * constraints seed it (rules L1, P1) */
			NEED(x->form == XD_FORM_SOTW || is_text(r.version, e->version));
			NEED(r.has_ttl == (xd_form_ttl(x->form) && e->ttl != NULL));
			NEED(subscribed(x->sub, e, p->delta) ||
			     picked(x->sub->want.set, x->table, e));
			ncarried++;
			/* variants of one name are told apart by their
			 * ResourceName: one per locator the client asked by */
			if (r.variant) {
				vnames = xd_grow(vnames, &cap_vnames, nvnames + 1,
						 sizeof(*vnames));
				vnames[nvnames++] = r.resource_name;
				add_change(&vputs, &nvputs, &cap_vputs, r.name,
					   r.constraints, e->hash);
				break;
			}
			names = xd_grow(names, &cap_names, nnames + 1, sizeof(*names));
			hashes = xd_grow(hashes, &cap_hashes, nnames + 1, sizeof(*hashes));
			hashes[nnames] = e->hash;
			names[nnames++] = r.name;
			break;
		}
		default:
			NEED(!"a field a response does not have");
		}
	}
	NEED(rc == 0);
	NEED(version.len == 16 &&
	     memcmp(version.data, xd_table_version(x->table), 16) == 0);
	NEED(is_text(url, type_url));
	NEED(is_text(got_nonce, digits));
	/* rule D8: names that do not exist come in removed_resources, a
	 * virtual host's alias as a Resource without a body */
	if (p->delta && xd_table_type(x->table) == XD_VIRTUAL_HOST)
		NEED(ncarried == b->nresources && nmissing == b->nmissing &&
		     nremoved + nremoved_variants == b->nremoved);
	else if (p->delta)
		NEED(ncarried == b->nresources && nmissing == 0 &&
		     nremoved + nremoved_variants == b->nremoved + b->nmissing);
	else /* SotW says them as errors only (rule N1) */
		NEED(ncarried == b->nresources && nmissing == 0 &&
		     nremoved + nremoved_variants == b->nremoved);
	/* a heartbeat carries only heartbeats (rule L1) */
	NEED(!x->heartbeat ||
	     (nbeats == ncarried && nmissing == 0 && nremoved == 0 &&
	      nremoved_variants == 0 && ncarried > 0 && nerrors == 0));
	/* rules N1, N3: each name said missing at most once as an error,
	 * never one the response carries; in delta also removed (rule
	 * D8), for the clients that read no errors */
	NEED(nerrors <= b->nmissing);
	for (size_t i = 0; i < nerrors; i++) {
		bool in_removed = false;

		for (size_t k = 0; k < nnames; k++)
			NEED(names[k].len != errors[i].len ||
			     memcmp(names[k].data, errors[i].data, errors[i].len) != 0);
		for (size_t k = 0; k < nvputs; k++)
			NEED(vputs[k].name.len != errors[i].len ||
			     memcmp(vputs[k].name.data, errors[i].data,
				    errors[i].len) != 0);
		for (size_t k = i + 1; k < nerrors; k++)
			NEED(errors[k].len != errors[i].len ||
			     memcmp(errors[k].data, errors[i].data, errors[i].len) != 0);
		for (size_t k = 0; k < nremoved; k++)
			in_removed |= removed[k].len == errors[i].len &&
				      memcmp(removed[k].data, errors[i].data,
					     errors[i].len) == 0;
		NEED(!p->delta || in_removed);
	}

	/* The client takes it in: a full-state response is all there is;
	 * delta adds, and drops what is missing or removed. */
	if (x->view != NULL && !x->heartbeat) {
		if (x->full_state && !p->delta)
			view_clear(x->view);
		for (size_t i = 0; i < nnames; i++)
			view_put(x->view, names[i].data, names[i].len, hashes[i]);
		for (size_t i = 0; i < nvputs; i++)
			view_put_v(x->view, vputs[i].name.data, vputs[i].name.len,
				   vputs[i].cons, vputs[i].hash);
		for (size_t i = 0; i < nmissing; i++)
			view_drop(x->view, missing[i].data, missing[i].len);
		for (size_t i = 0; i < nremoved; i++)
			view_drop(x->view, removed[i].data, removed[i].len);
		for (size_t i = 0; i < nvdrops; i++)
			view_drop_v(x->view, vdrops[i].name.data,
				    vdrops[i].name.len, vdrops[i].cons);
		if (x->view->table != x->table) {
			xd_table_unref(x->view->table);
			x->view->table = xd_table_ref(x->table);
		}
	}

	/* rule S11: no resource twice; Envoy refuses a name that is both
	 * in resources and removed_resources (rule D4). */
	NEED(distinct(names, nnames));
	NEED(distinct(vnames, nvnames));
	NEED(distinct(missing, nmissing));
	NEED(distinct(removed, nremoved));
	for (size_t i = 0; i < nremoved; i++) {
		NEED(!sorted_has(names, nnames, removed[i]));
		NEED(!sorted_has(missing, nmissing, removed[i]));
		/* removed: no resource of the table has the name (it may
		 * be another's alias); but a plain resource that no name or
		 * locator of the client picks any more (its locators pick
		 * variants now) is removed though it exists (rule P1) */
		NEED((x->view != NULL && x->view->locators) ||
		     xd_table_find(x->table, removed[i].data, removed[i].len) == NULL);
	}
	for (size_t i = 0; i < nmissing; i++)
		NEED(!sorted_has(names, nnames, missing[i]));
	/* Only a full-state SotW response may say "nothing" (rule S8), and
	 * the first answer to a delta wildcard (rule D2); another may say
	 * only that names do not exist (rule N1). */
	if (p->delta || !x->full_state)
		NEED(ncarried + nmissing + nremoved + nremoved_variants +
			     nerrors > 0 ||
		     (p->delta && x->sub->want.all && x->sub->ledger->table == NULL));
	free(names);
	free(vnames);
	free(vputs);
	free(vdrops);
	free(hashes);
	free(missing);
	free(errors);
	free(removed);
	xd_buf_free(&msg);
}

/* A client of plain Anys (SotW without rule L2) holds one resource of
 * a name: `h` has the version of one of the entries of that name its
 * keys pick in `t` (rule P1: which one depends on what each response
 * carried). */
static bool one_picked(const struct xd_sub *s, struct xd_table *t,
		       const struct holding *h, bool delta)
{
	const struct xd_entry *e = xd_table_find(t, h->name, h->len);
	size_t n = 0;

	if (e != NULL && e->hash == h->hash &&
	    (subscribed(s, e, delta) || picked(s->want.set, t, e)))
		return true;
	e = xd_table_variants_of(t, h->name, h->len, &n);
	for (size_t i = 0; e != NULL && i < n; i++, e++)
		if (e->hash == h->hash && picked(s->want.set, t, e))
			return true;
	return false;
}

/*
 * Nothing is due and nothing in flight: the client must hold what it
 * subscribes to, as the target has it. Every subscribed resource at the
 * target's version; in delta and full-state SotW, nothing subscribed
 * that the target lacks (other SotW types cannot say "removed").
 */
static void check_in_step(struct peer *p, enum xd_rtype t)
{
	struct xd_sub *s = &p->types.subs[t];
	struct xd_table *table = xd_snapshot_table(target(p), t);
	struct view *v = &p->views[t];
	/* what the client holds is the target's, but in a type it lets go
	 * of itself: there it keeps what the target dropped (rule E2) */
	bool exact = (p->delta && !xd_rtype_info(t)->kept_while_subscribed) ||
		     xd_rtype_info(t)->full_state;
	/* a client of plain Anys, which cannot tell variants apart */
	bool plain = xd_client_form(&p->client) == XD_FORM_SOTW;

	if (s->state == XD_SUB_IDLE)
		return;
	NEED(s->state == XD_SUB_HOLDING && xd_sub_held(s) == table);
	if (v->unsure)
		return;
	for (size_t i = 0; i < xd_table_count(table); i++) {
		const struct xd_entry *e = xd_table_at(table, i);
		const struct holding *h;

		if (!subscribed(s, e, p->delta))
			continue;
		h = view_find(v, e->name, e->name_len);
		if (h != NULL && h->hash != e->hash && plain &&
		    one_picked(s, table, h, p->delta))
			continue; /* a variant a locator picks, in its place */
		if (h == NULL || h->hash != e->hash) {
			fprintf(stderr, "%d: %s '%s' %s\n", p->id,
				xd_rtype_info(t)->service, e->name,
				h == NULL ? "not held" : "held at another version");
			NEED(!"every subscribed resource is held as the target has it");
		}
	}
	/* rule P1: what each locator picks, as that variant, at the
	 * target's version; a client of plain Anys holds one resource of
	 * a name, one of those its keys pick */
	for (size_t i = 0; i < xd_nameset_count(s->want.set); i++) {
		struct xd_name k = xd_nameset_at(s->want.set, i);
		const struct xd_entry *e;
		const struct holding *h;

		if (!xd_locator_is(k.data, k.len) ||
		    (e = xd_table_find_locator(table, k.data, k.len)) == NULL)
			continue;
		if (plain) {
			h = view_find(v, e->name, e->name_len);
			NEED(h != NULL && one_picked(s, table, h, p->delta));
			continue;
		}
		h = view_find_v(v, e->name, e->name_len, e->constraints);
		if (h == NULL || h->hash != e->hash) {
			fprintf(stderr, "%d: %s '%s' (%s) %s\n", p->id,
				xd_rtype_info(t)->service, e->name,
				e->constraints.data != NULL ? "a variant" : "plain",
				h == NULL ? "not held" : "held at another version");
			NEED(!"what each locator picks is held as the target has it");
		}
	}
	for (size_t i = 0; exact && i < v->n; i++) {
		struct xd_name n = {v->v[i].name, v->v[i].len};
		bool asked = s->want.all ||
			     xd_nameset_has(s->want.set, n.data, n.len) ||
			     (p->delta &&
			      xd_derived_in_glob(s->want.set, n.data, n.len));

		if (v->v[i].cons != NULL || plain) {
			/* a variant (or what a client of plain Anys holds
			 * of a name): still what a key picks (rule P1) */
			if (v->v[i].cons != NULL &&
			    !still_wanted(s, table, &v->v[i], p->delta)) {
				fprintf(stderr, "%d: %s '%.*s' variant held, picked by no locator\n",
					p->id, xd_rtype_info(t)->service,
					(int)n.len, n.data);
				NEED(!"no variant is held that no locator picks");
			}
			if (v->v[i].cons != NULL)
				continue;
		}
		if (asked && xd_table_find(table, n.data, n.len) == NULL) {
			fprintf(stderr, "%d: %s '%.*s' held, gone from the target\n",
				p->id, xd_rtype_info(t)->service, (int)n.len, n.data);
			NEED(!"nothing subscribed is held that the target lacks");
		}
	}
}

/* ---------------- the daemon's side ---------------- */

/* session.c send_due: numbers the response, checks it, records it. */
static void deliver(struct peer *p, struct xd_sub *s, struct sending *x)
{
	uint64_t nonce = ++p->next_nonce;

	NEED(s->state != XD_SUB_IN_FLIGHT);
	x->sub = s;
	check_response(p, x, nonce);
	TRACE("%d:   sent %s nonce %llu: %zu resources, %zu missing, %zu removed\n",
	      p->id, x->label, (unsigned long long)nonce,
	      x->body->nresources, x->body->nmissing, x->body->nremoved);
	xd_sub_sent(s, x->table, nonce, p->now, 0);
	/* session.c send_due: a body with every resource with a TTL that
	 * the client is to hold starts their TTLs again (rule L1) */
	if (x->body->refreshes_ttl)
		s->ttl_refreshed_ms = p->now;
	NEED(s->state == XD_SUB_IN_FLIGHT && s->nonce == nonce);
}

/* The collection `sub` is the subscription of, or -1 for another. */
static int coll_of(const struct peer *p, const struct xd_sub *sub)
{
	/* the slots exist once a collection was asked for */
	for (int c = 0; p->types.colls != NULL && c < XD_CTYPE_COUNT; c++)
		if (sub == &p->types.colls[c].sub)
			return c;
	return -1;
}

/* The served type `sub` is the subscription of, or XD_RTYPE_COUNT. */
static enum xd_rtype type_of(const struct peer *p, const struct xd_sub *sub)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (sub == &p->types.subs[t])
			return (enum xd_rtype)t;
	return XD_RTYPE_COUNT;
}

/*
 * session.c pump_extra, through the typeset: types xdsd does not serve
 * (`unknown`) go first; list collections (rule X3) once the sequencer
 * has nothing to send. The client keeps no view of either: their
 * responses are checked as responses.
 */
static bool pump_extra(struct peer *p, bool unknown)
{
	struct sending x = {.form = xd_client_form(&p->client)};
	struct xd_sub *sub = NULL;
	struct xd_table *table = NULL;
	struct xd_body *b;

	b = xd_typeset_next(&p->types, unknown, x.form, p->delta, &sub, &table,
			    &x.label);
	if (b == NULL)
		return false;
	NEED(sub != NULL && table != NULL && x.label != NULL);
	if (unknown) {
		NEED(coll_of(p, sub) < 0 && type_of(p, sub) == XD_RTYPE_COUNT);
		NEED(strcmp(x.label, xd_table_type_url(table)) == 0);
		/* nothing of a type xdsd does not serve */
		NEED(xd_table_count(table) == 0);
	} else {
		int c = coll_of(p, sub);

		NEED(c >= 0 && table == p->types.colls[c].table);
		NEED(strcmp(xd_table_type_url(table),
			    xd_ctype_info((enum xd_ctype)c)->type_url) == 0);
	}
	NEED(p->aggregated);
	/* an unknown type is sent whole in SotW; a collection as routes */
	x.full_state = unknown && !p->delta;
	x.table = table;
	x.body = b;
	deliver(p, sub, &x);
	xd_body_unref(b);
	return true;
}

/*
 * session.c pump_heartbeats, once nothing else is due, through the
 * typeset: the first type (or list collection) due for a heartbeat
 * (rule L1) sends it. None may be due before half the shortest TTL the
 * client holds passed since its TTLs were last all refreshed, and a
 * client that takes no TTLs is sent none.
 */
static bool pump_heartbeat(struct peer *p)
{
	uint64_t refreshed[XD_RTYPE_COUNT + XD_CTYPE_COUNT], next = 0;
	struct xd_sub *s = NULL;
	struct sending x = {.form = xd_client_form(&p->client),
			    .heartbeat = true};
	struct xd_body *b;
	enum xd_rtype t;
	int c;

	for (int i = 0; i < XD_RTYPE_COUNT; i++)
		refreshed[i] = p->types.subs[i].ttl_refreshed_ms;
	for (int i = 0; i < XD_CTYPE_COUNT; i++)
		refreshed[XD_RTYPE_COUNT + i] =
			p->types.colls != NULL ?
				p->types.colls[i].sub.ttl_refreshed_ms : 0;
	b = xd_typeset_heartbeat(&p->types, x.form, p->now, &s, &x.label,
				 &next);
	if (b == NULL) {
		NEED(next == 0 || next > p->now);
		return false;
	}
	t = type_of(p, s);
	c = coll_of(p, s);
	NEED(t != XD_RTYPE_COUNT || c >= 0);
	NEED(p->client.ttl && xd_form_ttl(x.form) &&
	     s->state == XD_SUB_HOLDING);
	NEED(p->now >= refreshed[t != XD_RTYPE_COUNT ? (int)t :
						      XD_RTYPE_COUNT + c] +
			       xd_table_min_ttl(xd_sub_held(s)) / 2);
	x.table = xd_sub_held(s);
	x.body = b;
	x.view = t != XD_RTYPE_COUNT ? &p->views[t] : NULL;
	TRACE("%d:   heartbeat of %s\n", p->id, x.label);
	deliver(p, s, &x);
	xd_body_unref(b);
	return true;
}

/* session.c pump, with every send completing at once (the daemon pumps
 * again when it does): everything due goes out. Nothing is, before the
 * client's node is admitted. */
static void pump(struct peer *p)
{
	struct xd_seq_mode mode;
	bool sent[XD_RTYPE_COUNT] = {false};

	refresh(p);
	if (p->client.state != XD_CLIENT_ADMITTED)
		return;
	NEED(p->snap != NULL);
	mode.aggregated = p->aggregated;
	mode.delta = p->delta;
	mode.type = p->type;
	for (int round = 0;; round++) {
		struct xd_seq_step st;
		struct sending x;

		/* each type once, each unknown and each collection once, a
		 * heartbeat of each type and collection: then all wait for
		 * an answer */
		NEED(round <= 2 * (XD_RTYPE_COUNT + XD_CTYPE_COUNT) +
				      XD_TYPESET_MAX_UNKNOWN);
		if (pump_extra(p, true))
			continue;
		mode.form = xd_client_form(&p->client);
		xd_seq_next(p->types.subs, target(p), &mode, p->now,
			    &p->waits, &st);
		NEED(st.action == XD_SEQ_SEND ||
		     (st.body == NULL && st.table == NULL));
		if (st.action == XD_SEQ_WAIT_EDS) {
			NEED(p->aggregated &&
			     p->waits.eds.state == XD_WAIT_RUNNING &&
			     p->waits.eds.until > p->now);
			TRACE("%d:   listeners wait for endpoints until %llu\n",
			      p->id, (unsigned long long)p->waits.eds.until);
		}
		if (st.action == XD_SEQ_IDLE) {
			for (int t = 0; t < XD_RTYPE_COUNT; t++)
				if (p->aggregated || t == (int)p->type)
					check_in_step(p, (enum xd_rtype)t);
			if (pump_extra(p, false) || pump_heartbeat(p))
				continue;
		}
		if (st.action != XD_SEQ_SEND)
			return;
		NEED(p->aggregated || st.type == p->type);
		NEED(!sent[st.type]);
		NEED(xd_table_type(st.table) == st.type);
		sent[st.type] = true;
		x = (struct sending){
			.table = st.table,
			.body = st.body,
			.form = mode.form,
			.full_state = xd_rtype_info(st.type)->full_state && !p->delta,
			.view = &p->views[st.type],
			.label = xd_rtype_info(st.type)->service,
		};
		deliver(p, &p->types.subs[st.type], &x);
		xd_seq_step_clear(&st);
	}
}

/* What a SotW request must not change when it is stale (rule S5). */
static bool same_state(const struct xd_sub *s, const struct xd_sub *before)
{
	return s->state == before->state &&
	       s->legacy_wildcard == before->legacy_wildcard &&
	       s->nonce == before->nonce &&
	       s->want.all == before->want.all &&
	       s->want.set == before->want.set &&
	       s->ledger == before->ledger && s->sent == before->sent &&
	       s->names_hash == before->names_hash;
}

/*
 * A delta client that unsubscribes from a glob collection (rule X2)
 * forgets its members that it holds through it alone, as it forgets a
 * name it unsubscribes from.
 */
static void forget_glob(struct view *v, const struct xd_sub *s, struct xd_name g)
{
	char *buf;

	if (!xd_xdstp_is_glob(g.data, g.len))
		return;
	for (size_t i = v->n; i-- > 0;) {
		const struct holding *h = &v->v[i];
		size_t n;

		buf = malloc(h->len + 2);
		NEED(buf != NULL);
		n = xd_xdstp_collection(h->name, h->len, buf);
		if (n == g.len && memcmp(buf, g.data, n) == 0 &&
		    !xd_nameset_has(s->want.set, h->name, h->len) &&
		    !xd_derived_in_glob(s->want.set, h->name, h->len))
			view_drop(v, h->name, h->len);
		free(buf);
	}
}

/*
 * What the request does to the client's own view: in delta it forgets
 * what it unsubscribes from (unless it stays a wildcard client), and on
 * its first request of a type says what it holds (rule D7); in SotW a
 * wildcard client may say it holds the current full state (rule S12).
 *
 * A delta client that leaves the wildcard (rule D2) forgets what it held
 * only through it, as it forgets a name it unsubscribes from: it is no
 * longer interested in them (Envoy's delta subscription state drops the
 * resources that came from the wildcard when it unsubscribes "*"), so
 * the server is not to tell it of them any more, removals included, and
 * subscribing "*" again is answered with every resource (rule D5).
 */
static void client_side(struct peer *p, enum xd_rtype t,
			const struct xd_request *r, bool first,
			struct xd_table *held_before, bool was_all)
{
	struct view *v = &p->views[t];
	struct xd_sub *s = &p->types.subs[t];

	if (p->delta) {
		if (!s->want.all)
			for (size_t i = 0; i < r->nunsubscribe; i++) {
				struct xd_name u = r->unsubscribe[i];

				/* a resource stays while another name or
				 * locator of the client picks it (rule P1):
				 * a locator's variant, or the plain one */
				xd_locator_split(u.data, u.len, &u, NULL, NULL);
				for (size_t k = v->n; k-- > 0;)
					if (v->v[k].len == u.len &&
					    memcmp(v->v[k].name, u.data, u.len) == 0 &&
					    !still_wanted(s, v->table, &v->v[k], true))
						view_drop_at(v, &v->v[k]);
				forget_glob(v, s, r->unsubscribe[i]);
			}
		for (size_t i = v->n; was_all && !s->want.all && i-- > 0;) {
			if (!still_wanted(s, v->table, &v->v[i], true))
				view_drop_at(v, &v->v[i]);
		}
		if (!first || r->ninitial == 0)
			return;
		for (size_t i = 0; i < r->ninitial; i++) {
			struct xd_name n = r->initial_names[i];
			uint64_t h = 0;

			/* one name said twice: which does the client hold? */
			for (size_t k = 0; k < i; k++)
				if (cmp_name(&r->initial_names[k], &n) == 0)
					v->unsure = true;
			/* a version that is not one: no resource has it */
			if (!parse_version(r->initial_versions[i], &h))
				h = ~XXH3_64bits(n.data, n.len);
			view_put(v, n.data, n.len, h);
		}
		/* rule D7: nothing carries over from the old stream but what
		 * the client subscribes to again; it drops the rest */
		for (size_t i = v->n; !s->want.all && i-- > 0;) {
			if (!still_wanted(s, v->table, &v->v[i], true))
				view_drop_at(v, &v->v[i]);
		}
		return;
	}
	if (first && held_before == NULL && xd_sub_held(s) != NULL &&
	    s->state != XD_SUB_IN_FLIGHT) {
		/* resumed: every resource of the table it said it holds */
		view_clear(v);
		xd_table_unref(v->table);
		v->table = xd_table_ref(xd_sub_held(s));
		for (size_t i = 0; i < xd_table_count(xd_sub_held(s)); i++) {
			const struct xd_entry *e = xd_table_at(xd_sub_held(s), i);

			view_put(v, e->name, e->name_len, e->hash);
		}
	}
}

/* The trace of a request's names of one kind ("name", "unsubscribed"). */
static void trace_names(const struct peer *p, const char *kind,
			const struct xd_name *v, size_t n)
{
	for (size_t i = 0; trace && i < n; i++) {
		TRACE("%d:   %s '", p->id, kind);
		for (size_t k = 0; k < v[i].len; k++) {
			unsigned char ch = (unsigned char)v[i].data[k];

			TRACE(ch >= 0x20 && ch < 0x7f ? "%c" : "\\x%02x", ch);
		}
		TRACE("'\n");
	}
}

/* session.c on_request. False when the stream ends. */
static bool on_request(struct peer *p, const uint8_t *data, size_t len)
{
	const struct xd_typeset_method m = {"fuzz", p->aggregated, p->type,
					    p->delta};
	struct xd_request r;
	struct xd_route rt;
	struct xd_sub *s;
	struct xd_table *sent, *held_before;
	enum xd_sub_verdict v;
	enum xd_rtype t;
	int coll;
	const char *why = NULL;
	char msg[512] = "";
	bool ok = false, was_inflight, first, was_all;

	if (xd_request_parse(&r, data, len, p->delta, &why) != 0) {
		NEED(why != NULL);
		TRACE("%d: request refused: %s\n", p->id, why);
		return false;
	}
	check_request(&r, data, len);
	if (!admit(p, r.node))
		goto out;
	refresh(p);
	if (xd_typeset_route(&p->types, &m, &r, target(p), NULL, &rt, msg,
			     sizeof(msg)) != 0) {
		/* refused only for what the method does not serve, a
		 * missing type URL on ADS, or an unknown type too many */
		NEED(msg[0] != '\0');
		if (p->aggregated)
			NEED(r.type_url.len == 0 ||
			     xd_rtype_from_url(r.type_url.data, r.type_url.len,
					       &t) != 0);
		else
			NEED(r.type_url.len > 0 &&
			     (xd_rtype_from_url(r.type_url.data, r.type_url.len,
						&t) != 0 ||
			      t != p->type));
		TRACE("%d: request refused: %s\n", p->id, msg);
		goto out;
	}
	s = rt.sub;
	t = rt.type;
	coll = coll_of(p, s);
	NEED(s != NULL && rt.label != NULL);
	if (!p->aggregated)
		NEED(t == p->type);
	if (t != XD_RTYPE_COUNT) {
		/* a served type: its own subscription and the target's table */
		NEED(s == &p->types.subs[t] &&
		     rt.current == xd_snapshot_table(target(p), t));
		NEED(rt.wildcard_ok == xd_rtype_info(t)->wildcard_ok &&
		     rt.full_state == xd_rtype_info(t)->full_state);
		p->last[t].len = 0;
		xd_buf_append(&p->last[t], data, len);
	} else if (coll >= 0) {
		/* a list collection: by name, in SotW as routes (rule X3) */
		NEED(!rt.wildcard_ok && !rt.full_state && !rt.new_unknown);
		NEED(rt.current == p->types.colls[coll].table &&
		     rt.current != NULL);
		p->last_coll[coll].len = 0;
		xd_buf_append(&p->last_coll[coll], data, len);
	} else {
		/* a type xdsd does not serve: an empty table of its URL */
		NEED(p->aggregated && !rt.wildcard_ok && rt.full_state);
		NEED(rt.current != NULL && xd_table_count(rt.current) == 0 &&
		     is_text(r.type_url, xd_table_type_url(rt.current)));
	}

	was_inflight = s->state == XD_SUB_IN_FLIGHT;
	first = s->state == XD_SUB_IDLE;
	held_before = xd_sub_held(s);
	was_all = s->want.all;
	sent = s->sent != NULL ? xd_table_ref(s->sent->table) : NULL;
	if (p->delta) {
		v = xd_sub_delta_request(s, &r, rt.wildcard_ok, rt.current,
					 WALL_MS);
	} else {
		/* a shallow copy: the pointers are only compared */
		struct xd_sub before = *s;

		v = xd_sub_sotw_request(s, &r, rt.wildcard_ok, rt.full_state,
					rt.current, WALL_MS);
		if (v == XD_SUB_STALE)
			NEED(same_state(s, &before));
	}
	NEED(s->state != XD_SUB_IDLE || v == XD_SUB_STALE);
	TRACE("%d: %s request, nonce '%.*s', %zu names: %s\n", p->id,
	      rt.label,
	      (int)r.nonce.len, r.nonce.data, r.nnames,
	      v == XD_SUB_STALE ? "stale" : v == XD_SUB_REQUEST ? "request" :
	      v == XD_SUB_ACK ? "ACK" : "NACK");
	trace_names(p, "name", r.names, r.nnames);
	trace_names(p, "unsubscribed", r.unsubscribe, r.nunsubscribe);
	trace_names(p, "held", r.initial_names, r.ninitial);
	if (v == XD_SUB_ACK || v == XD_SUB_NACK) {
		/* what was in flight is held now */
		NEED(was_inflight && s->state == XD_SUB_HOLDING && xd_sub_held(s) == sent);
	} else {
		NEED((s->state == XD_SUB_IN_FLIGHT) == was_inflight);
	}
	xd_table_unref(sent);
	if (t != XD_RTYPE_COUNT && r.nkeys > 0)
		p->views[t].locators = true; /* asked by locator (rule P1) */
	if (t != XD_RTYPE_COUNT)
		client_side(p, t, &r, first, held_before, was_all);
	/* session.c: a stream over max_names_per_stream ends */
	if (xd_typeset_names(&p->types) > fuzz_cfg.max_names_per_stream)
		goto out;
	pump(p);
	ok = true;
out:
	xd_request_free(&r);
	return ok;
}

/* ---------------- the client's side ---------------- */

/*
 * ANSWER: the client answers the first type in flight (unknown types
 * after the others), repeating its last subscription (SotW), with the
 * version and nonce it received; a NACK carries an error_detail. The
 * daemon reads it like any request.
 */
static bool answer(struct peer *p, bool nack)
{
	struct xd_buf m = XD_BUF_INIT;
	const struct xd_sub *s = NULL;
	const struct xd_buf *last = NULL;
	const char *url = NULL;
	const uint8_t *q, *end;
	struct xd_wire_field f;
	char digits[24];
	size_t mark;
	bool ok;

	for (int t = 0; s == NULL && t < XD_RTYPE_COUNT; t++)
		if (p->types.subs[t].state == XD_SUB_IN_FLIGHT) {
			s = &p->types.subs[t];
			last = &p->last[t];
			url = xd_rtype_info((enum xd_rtype)t)->type_url;
		}
	for (int i = 0; s == NULL && p->types.unknown != NULL &&
			i < XD_TYPESET_MAX_UNKNOWN; i++)
		if (p->types.unknown[i].table != NULL &&
		    p->types.unknown[i].sub.state == XD_SUB_IN_FLIGHT) {
			s = &p->types.unknown[i].sub;
			url = xd_table_type_url(p->types.unknown[i].table);
		}
	for (int c = 0; s == NULL && p->types.colls != NULL &&
			c < XD_CTYPE_COUNT; c++)
		if (p->types.colls[c].sub.state == XD_SUB_IN_FLIGHT) {
			s = &p->types.colls[c].sub;
			last = &p->last_coll[c];
			url = xd_ctype_info((enum xd_ctype)c)->type_url;
		}
	if (s == NULL)
		return true;
	snprintf(digits, sizeof(digits), "%llu", (unsigned long long)s->nonce);
	if (!p->delta)
		xd_wire_bytes(&m, 1, xd_table_version(s->sent->table), 16);
	if (!p->delta && last != NULL && last->len > 0) {
		q = last->data;
		end = q + last->len;
		while (xd_wire_next(&q, end, &f) == 1)
			if (f.number == 3 && f.wt == XD_WT_LEN)
				xd_wire_bytes(&m, 3, f.data, f.len);
	}
	xd_wire_bytes(&m, p->delta ? 2 : 4, url, strlen(url));
	xd_wire_bytes(&m, p->delta ? 6 : 5, digits, strlen(digits));
	if (nack) {
		/* google.rpc.Status {code 1, message 2} */
		xd_wire_tag(&m, p->delta ? 7 : 6, XD_WT_LEN);
		mark = xd_wire_open(&m);
		xd_wire_tag(&m, 1, XD_WT_VARINT);
		xd_wire_varint(&m, 3);
		xd_wire_bytes(&m, 2, "refused", 7);
		xd_wire_close(&m, mark);
	}
	ok = on_request(p, m.data, m.len);
	xd_buf_free(&m);
	return ok;
}

/* ---------------- the input ---------------- */

static void peer_init(struct peer *p, int id, uint8_t method)
{
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->delta = method & 1;
	p->aggregated = (method & 2) != 0;
	p->type = (enum xd_rtype)((method >> 2) & 7);
	p->now = 1000;
	xd_client_init(&p->client, &fuzz_cfg, p->delta,
		       id == 0 ? "ipv4:10.0.0.7:51234" : "ipv4:10.0.0.8:51234",
		       NULL, WALL_MS);
	xd_typeset_init(&p->types, (uint64_t)id);
}

static void peer_clear(struct peer *p)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		xd_buf_free(&p->last[t]);
		view_free(&p->views[t]);
	}
	for (int c = 0; c < XD_CTYPE_COUNT; c++)
		xd_buf_free(&p->last_coll[c]);
	xd_typeset_clear(&p->types);
	xd_client_clear(&p->client);
	xd_snapshot_unref(p->snap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	trace = getenv("FUZZ_REQUEST_TRACE") != NULL;
	NEED(xd_loop_thread_claim());
	xd_config_init(&fuzz_cfg, "", "");
	for (size_t i = 0; i < NSNAP; i++)
		snaps[i] = snapshot_of(snapshot_specs[i]);
	cache = xd_cache_new();
	NEED(cache != NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *q = data + 1, *end = data + size;
	struct peer peers[2], *p;
	bool ended[2] = {false, false};

	if (size < 1)
		return 0;
	install(0);
	peer_init(&peers[0], 0, data[0]);
	peer_init(&peers[1], 1, data[0]);
	while (q < end) {
		uint8_t op = *q++;
		bool ok = true;

		p = &peers[(op >> 3) & 1];

		switch (op & 3) {
		case 0: {
			size_t len = 0;

			if (end - q >= 2)
				len = (size_t)q[0] | (size_t)q[1] << 8;
			q += end - q >= 2 ? 2 : end - q;
			if (len > (size_t)(end - q))
				len = (size_t)(end - q);
			/* a copy of its own, so that reading past it is
			 * caught; an empty one as (NULL, 0) */
			uint8_t *m = len > 0 ? malloc(len) : NULL;

			NEED(m != NULL || len == 0);
			if (len > 0)
				memcpy(m, q, len);
			q += len;
			if (!ended[p - peers])
				ok = on_request(p, m, len);
			free(m);
			break;
		}
		case 1:
		case 2: {
			/* the snapshot and the clock are every stream's */
			uint64_t now = peers[0].now;

			if (q < end && (op & 3) == 1) {
				size_t target = *q++ % NSNAP;

				TRACE("snapshot %zu\n", target);
				install(target);
			} else if (q < end) {
				now += (uint64_t)*q++ * 100;
			}
			TRACE("time %llu\n", (unsigned long long)now);
			for (int i = 0; i < 2; i++) {
				peers[i].now = now;
				if (!ended[i])
					pump(&peers[i]);
			}
			break;
		}
		case 3:
			if (!ended[p - peers])
				ok = answer(p, (op & 4) != 0);
			break;
		}
		if (!ok) {
			/* the daemon ends the stream */
			TRACE("%d: the stream ends\n", p->id);
			ended[p - peers] = true;
		}
	}
	peer_clear(&peers[0]);
	peer_clear(&peers[1]);
	forget_derived();
	/* Every name set goes with the last reference to it. */
	NEED(xd_nameset_live() == 0);
	return 0;
}
