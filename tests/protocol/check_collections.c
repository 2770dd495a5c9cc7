/* SPDX-License-Identifier: Apache-2.0 */
/*
 * List collections (rule X3), against the real xdsd over gRPC: a
 * ListenerCollection written in a snapshot is served on the aggregated
 * methods, SotW and delta, under its xdstp name with its context
 * parameters; its locators lead to listeners the client can fetch; a
 * change of its entries is a change of the collection; it goes after
 * the types it refers to; and per-type methods do not serve it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

#define AUTHORITY "control.example"
#define LISTENER "envoy.config.listener.v3.Listener"
#define LC_URL "type.googleapis.com/envoy.config.listener.v3.ListenerCollection"
#define L(id) "xdstp://" AUTHORITY "/" LISTENER "/" id
#define LC(id) "xdstp://" AUTHORITY "/envoy.config.listener.v3.ListenerCollection/" id
#define WRAPPED "xds.config.supports-resource-in-sotw"
#define TTL "xds.config.supports-resource-ttl"

/* The aggregated methods: the only ones that serve collections. The
 * SotW client takes wrapped resources (rule L2): a collection message
 * has no name field, so only the Resource around it names it. */
static const struct pu_combo combos[] = {
	{"ADS ListenerCollection", false, true, PU_LDS},
	{"delta ADS ListenerCollection", true, true, PU_LDS},
};

/* ---------------- snapshots ---------------- */

/* An inline listener, as a collection entry. */
#define INLINE_ADMIN                                                       \
	"  - inline_entry:\n"                                              \
	"      name: admin\n"                                              \
	"      resource:\n"                                                \
	"        \"@type\": type.googleapis.com/" LISTENER "\n"           \
	"        name: " L("admin") "\n"                                   \
	"        address: {socket_address: {address: 127.0.0.1, port_value: 9901}}\n"

/* Writes `s` plus `extra` (snapshot sections in YAML) as the default
 * snapshot of `dir`, by rename so that a reload never reads half. */
static void write_default(const char *dir, const struct pu_snap *s,
			  const char *extra)
{
	char *yaml = pu_snap_yaml(s), *text, *tmp, *path;

	ck_assert(asprintf(&text, "%s%s", yaml, extra) > 0);
	free(xdtest_write_file(dir, ".default.yaml.tmp", text));
	ck_assert(asprintf(&tmp, "%s/.default.yaml.tmp", dir) > 0);
	ck_assert(asprintf(&path, "%s/default.yaml", dir) > 0);
	ck_assert(rename(tmp, path) == 0);
	free(tmp);
	free(path);
	free(text);
	free(yaml);
}

static struct pu_env *start(const struct pu_snap *s, const char *extra)
{
	char tmpl[300];

	snprintf(tmpl, sizeof(tmpl), "%s/snaps.XXXXXX", xdtest_tmpdir());
	ck_assert(mkdtemp(tmpl) != NULL);
	write_default(tmpl, s, extra);
	return pu_env_start_on(tmpl, 0);
}

static void set(struct pu_env *e, const struct pu_snap *s, const char *extra)
{
	write_default(e->dir, s, extra);
	pu_env_reload(e);
}

/* Listeners "edge/a" and "edge/b" (variant `v`, so that a new variant
 * changes them). */
static struct pu_snap *listeners(int v)
{
	struct pu_snap *s = pu_snap_new();

	pu_snap_put(s, PU_LDS, L("edge/a"), v, NULL);
	pu_snap_put(s, PU_LDS, L("edge/b"), v, NULL);
	return s;
}

/* ---------------- the client ---------------- */

/* A client of the listener collections: the names it asks for (SotW
 * repeats them all in each request), and the last response's version
 * and nonce. */
struct coll_client {
	struct pu_client *cl;
	bool delta;
	const char *names[4];
	size_t n;
	char *version, *nonce;
};

static void coll_open(struct coll_client *cc, struct pu_env *e,
		      const struct pu_combo *c, const char *features)
{
	memset(cc, 0, sizeof(*cc));
	cc->cl = pu_connect(e, c);
	cc->delta = c->delta;
	pu_client_node(cc->cl, "node-1", "test",
		       features != NULL ? features : c->delta ? NULL : WRAPPED);
}

/* Subscribes to more names: delta sends them, SotW the whole list with
 * the last version and nonce (an ACK of the last response, if any). */
static void coll_sub(struct coll_client *cc, const char *const *names,
		     size_t n)
{
	struct pu_req q = {.type = PU_LDS, .type_url = LC_URL};

	ck_assert(cc->n + n <= 4);
	memcpy(&cc->names[cc->n], names, n * sizeof(*names));
	cc->n += n;
	if (cc->delta) {
		q.names = names;
		q.nnames = n;
	} else {
		q.names = cc->names;
		q.nnames = cc->n;
		q.version = cc->version;
		q.nonce = cc->nonce;
	}
	pu_send(cc->cl, &q);
}

static void coll_sub1(struct coll_client *cc, const char *name)
{
	coll_sub(cc, &name, 1);
}

static void coll_ack(struct coll_client *cc, const struct pu_resp *r)
{
	struct pu_req q = {.type = PU_LDS, .type_url = LC_URL, .nonce = r->nonce};

	if (!r->delta) {
		q.names = cc->names;
		q.nnames = cc->n;
		q.version = r->version;
	}
	pu_send(cc->cl, &q);
}

/* The next response, which must be of the listener collections. */
static struct pu_resp *expect_coll(struct coll_client *cc)
{
	struct pu_resp *r = pu_recv(cc->cl, pu_wait_ms());

	PU_ASSERT(r != NULL, "no response of %s", LC_URL);
	PU_ASSERT(strcmp(r->type_url, LC_URL) == 0, "a response of %s, not %s",
		  r->type_url, LC_URL);
	free(cc->version);
	free(cc->nonce);
	cc->version = strdup(r->version);
	cc->nonce = strdup(r->nonce);
	return r;
}

static void coll_close(struct coll_client *cc)
{
	pu_client_free(cc->cl);
	free(cc->version);
	free(cc->nonce);
}

/* ---------------- reading a collection ---------------- */

static void add_str(const uint8_t *v, size_t n, void *arg)
{
	char *s = strndup((const char *)v, n);

	pu_strs_add(arg, s);
	free(s);
}

/* Sorted, comma-separated: the strings at a field path of `x`'s body. */
static char *strings_at(const struct pu_res *x, const int *path, size_t depth)
{
	struct pu_strs v = {0};
	char *out;

	pu_pb_walk(x->body, x->len, path, depth, add_str, &v);
	out = pu_strs_join(&v);
	pu_strs_clear(&v);
	return out;
}

/* The locators of a collection (entries.locator), as "authority type
 * id" triples of their fields, and its inline resources' names. */
static char *locator_ids(const struct pu_res *x)
{
	static const int path[] = {1, 1, 2}; /* entries.locator.id */

	return strings_at(x, path, 3);
}

static char *inline_names(const struct pu_res *x)
{
	/* entries.inline_entry.resource (Any).value .name */
	static const int path[] = {1, 2, 3, 2, 1};

	return strings_at(x, path, 5);
}

static void expect_str(const char *what, char *got, const char *want)
{
	PU_ASSERT(strcmp(got, want) == 0, "%s [%s], expected [%s]", what, got,
		  want);
	free(got);
}

static const struct pu_res *only(const struct pu_resp *r, const char *name)
{
	const struct pu_res *x = pu_find(r, name);

	PU_ASSERT(x != NULL && x->has_body, "'%s' not in the response (%s)",
		  name, pu_names(r));
	return x;
}

/* ---------------- rule X3 ---------------- */

#define EDGE_COLLECTION                                   \
	"listener_collections:\n"                         \
	"- \"@name\": " LC("edge?region=eu&tier=1") "\n"  \
	"  entries:\n"                                    \
	"  - locator: " L("edge/a") "\n"                  \
	"  - locator: \"" L("edge/b") "\"\n"              \
	INLINE_ADMIN

/*
 * rule X3: a list collection is served under its canonical name, asked
 * for by any spelling of it; it carries its locators as
 * ResourceLocators and its inline resources whole; and each locator
 * names a listener the client then gets by that name.
 */
START_TEST(x3_collection_served_by_name)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = listeners(1);
	struct pu_env *e = start(s, EDGE_COLLECTION);
	const char *name = LC("edge?region=eu&tier=1");
	const char *l_names[2];
	struct coll_client cc;
	const struct pu_res *x;
	struct pu_resp *r;
	static const int auth[] = {1, 1, 3}, type[] = {1, 1, 4};

	coll_open(&cc, e, c, NULL);
	coll_sub1(&cc, "XDSTP://" AUTHORITY
		  "/envoy.config.listener.v3.ListenerCollection/edge?tier=%31&region=eu");
	r = expect_coll(&cc);
	PU_ASSERT(r->nres == 1, "%zu resources, expected 1", r->nres);
	x = only(r, name);
	PU_ASSERT(strcmp(x->url, LC_URL) == 0, "the Any holds %s", x->url);
	PU_ASSERT(pu_is_hex16(x->version), "version '%s'", x->version);
	expect_str("locator ids", locator_ids(x), "edge/a,edge/b");
	expect_str("locator authorities", strings_at(x, auth, 3), AUTHORITY);
	expect_str("locator types", strings_at(x, type, 3), LISTENER);
	expect_str("inline listeners", inline_names(x), L("admin"));
	coll_ack(&cc, r);
	pu_resp_free(r);

	/* the locators lead to listeners, on the same stream */
	l_names[0] = L("edge/a");
	l_names[1] = L("edge/b");
	pu_subv(cc.cl, PU_LDS, l_names, 2);
	r = pu_expect(cc.cl, PU_LDS);
	expect_str("listeners", pu_names(r), L("edge/a") "," L("edge/b"));
	pu_resp_free(r);
	coll_close(&cc);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule X3: a plain SotW client (no wrapped resources) gets the
 * collection as a bare Any of its type, which has no name to show.
 */
START_TEST(x3_sotw_unwrapped)
{
	const struct pu_combo *c = &combos[0];
	struct pu_snap *s = listeners(1);
	struct pu_env *e = start(s, EDGE_COLLECTION);
	struct coll_client cc;
	struct pu_resp *r;

	coll_open(&cc, e, c, "");
	coll_sub1(&cc, LC("edge?region=eu&tier=1"));
	r = expect_coll(&cc);
	PU_ASSERT(r->nres == 1 && !r->res[0].wrapped && r->res[0].has_body,
		  "expected one unwrapped collection");
	PU_ASSERT(strcmp(r->res[0].url, LC_URL) == 0, "the Any holds %s",
		  r->res[0].url);
	expect_str("locator ids", locator_ids(&r->res[0]), "edge/a,edge/b");
	pu_resp_free(r);
	coll_close(&cc);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule X3: the context parameters of a request are part of the name:
 * each variant of a collection is a resource of its own, and a name
 * with other parameters, or none, names nothing (delta: said not to
 * exist, rule D8; SotW: nothing sent, rule S10).
 */
START_TEST(x3_context_parameters_name_it)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = listeners(1);
	struct pu_env *e = start(s,
		"listener_collections:\n"
		"- \"@name\": " LC("edge?env=prod") "\n"
		"  entries: [{locator: " L("edge/a") "}]\n"
		"- \"@name\": " LC("edge?env=dev") "\n"
		"  entries: [{locator: " L("edge/b") "}]\n");
	struct coll_client cc;
	struct pu_resp *r;
	const char *names[] = {LC("edge"), LC("edge?env=test"), LC("edge?env=dev")};

	coll_open(&cc, e, c, NULL);
	coll_sub(&cc, names, 3);
	r = expect_coll(&cc);
	expect_str("collections", pu_names(r), LC("edge?env=dev"));
	expect_str("its locators", locator_ids(only(r, LC("edge?env=dev"))),
		   "edge/b");
	if (c->delta)
		expect_str("said not to exist (rule D8)", pu_removed(r),
			   LC("edge") "," LC("edge?env=test"));
	coll_ack(&cc, r);
	pu_resp_free(r);
	pu_expect_none(cc.cl, 0);
	coll_close(&cc);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule X3: a collection whose entries change is a changed resource and
 * is sent again; a change of a member it only names is not a change of
 * the collection; a collection a reload drops is removed (delta).
 */
START_TEST(x3_entries_changed_resent)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = listeners(1);
	struct pu_env *e = start(s, EDGE_COLLECTION);
	const char *name = LC("edge?region=eu&tier=1");
	struct coll_client cc;
	struct pu_resp *r;
	char *v1;

	coll_open(&cc, e, c, NULL);
	coll_sub1(&cc, name);
	r = expect_coll(&cc);
	v1 = strdup(only(r, name)->version);
	coll_ack(&cc, r);
	pu_resp_free(r);

	/* one more locator */
	pu_snap_put(s, PU_LDS, L("edge/c"), 1, NULL);
	set(e, s, EDGE_COLLECTION "  - locator: " L("edge/c") "\n");
	r = expect_coll(&cc);
	expect_str("locator ids", locator_ids(only(r, name)),
		   "edge/a,edge/b,edge/c");
	PU_ASSERT(strcmp(only(r, name)->version, v1) != 0,
		  "a changed collection kept its version %s", v1);
	coll_ack(&cc, r);
	pu_resp_free(r);

	/* a member changes, the collection does not */
	pu_snap_put(s, PU_LDS, L("edge/a"), 2, NULL);
	set(e, s, EDGE_COLLECTION "  - locator: " L("edge/c") "\n");
	pu_expect_none(cc.cl, 0);

	if (c->delta) {
		set(e, s, "");
		r = expect_coll(&cc);
		expect_str("removed", pu_removed(r), name);
		pu_resp_free(r);
	}
	free(v1);
	coll_close(&cc);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule X3: on an aggregated stream a collection goes once the types it
 * refers to are settled (make before break, rule A2): after a change of
 * clusters and of the collection, the clusters come first, and the
 * collection only once they are acknowledged.
 */
START_TEST(x3_after_other_types)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = listeners(1);
	const char *name = LC("edge?region=eu&tier=1");
	struct pu_env *e;
	struct coll_client cc;
	struct pu_resp *r, *cds;

	pu_snap_put(s, PU_CDS, "c1", 1, NULL);
	e = start(s, EDGE_COLLECTION);
	coll_open(&cc, e, c, NULL);
	pu_sub(cc.cl, PU_CDS, "c1", NULL);
	r = pu_expect(cc.cl, PU_CDS);
	pu_ack(cc.cl, r);
	pu_resp_free(r);
	coll_sub1(&cc, name);
	r = expect_coll(&cc);
	coll_ack(&cc, r);
	pu_resp_free(r);

	pu_snap_put(s, PU_CDS, "c1", 2, NULL);
	pu_snap_put(s, PU_LDS, L("edge/c"), 1, NULL);
	set(e, s, EDGE_COLLECTION "  - locator: " L("edge/c") "\n");
	cds = pu_expect(cc.cl, PU_CDS);
	pu_expect_none(cc.cl, 0);
	pu_ack(cc.cl, cds);
	pu_resp_free(cds);
	r = expect_coll(&cc);
	expect_str("locator ids", locator_ids(only(r, name)),
		   "edge/a,edge/b,edge/c");
	pu_resp_free(r);
	coll_close(&cc);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule X3: no per-type method serves a collection type: a request for
 * one on the LDS methods ends the stream (rule T3); on the aggregated
 * methods it is a type xdsd serves, not an unknown one.
 */
START_TEST(x3_aggregated_only)
{
	struct pu_snap *s = listeners(1);
	struct pu_env *e = start(s, EDGE_COLLECTION);
	const char *names[] = {LC("edge?region=eu&tier=1")};
	struct pu_req q = {.type = PU_LDS, .type_url = LC_URL, .names = names,
			   .nnames = 1};

	for (int delta = 0; delta < 2; delta++) {
		struct pu_client *cl = pu_open(e, delta, false, PU_LDS);

		pu_send(cl, &q);
		pu_expect_status(cl, 3, "does not belong to");
		pu_client_free(cl);
	}
	pu_env_sync(e);
	PU_ASSERT(!pu_env_log_has(e, "is not served"),
		  "a collection type taken for an unknown one");
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule X3 with rule L1: a collection with "@ttl" carries its TTL to
 * clients that take TTLs, and heartbeats keep it alive.
 */
START_TEST(x3_ttl_heartbeats)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = listeners(1);
	const char *name = LC("edge?region=eu&tier=1");
	struct pu_env *e = start(s,
		"listener_collections:\n"
		"- \"@name\": " LC("edge?region=eu&tier=1") "\n"
		"  \"@ttl\": 2s\n"
		"  entries: [{locator: " L("edge/a") "}]\n");
	struct coll_client cc;
	struct pu_resp *r;

	coll_open(&cc, e, c, c->delta ? TTL : WRAPPED "," TTL);
	coll_sub1(&cc, name);
	r = expect_coll(&cc);
	PU_ASSERT(only(r, name)->ttl_ms == 2000, "TTL %ld ms, expected 2000",
		  only(r, name)->ttl_ms);
	coll_ack(&cc, r);
	pu_resp_free(r);
	/* a heartbeat at half the TTL: the name and TTL, no body */
	r = pu_recv(cc.cl, 1000 + pu_wait_ms());
	PU_ASSERT(r != NULL, "no heartbeat");
	PU_ASSERT(r->nres == 1 && !r->res[0].has_body &&
			  strcmp(r->res[0].name, name) == 0 &&
			  r->res[0].ttl_ms == 2000,
		  "not a heartbeat of the collection");
	pu_resp_free(r);
	coll_close(&cc);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_collections(Suite *s, bool subset)
{
	if (subset) {
		pu_add_tests(s, "X3", x3_entries_changed_resent, &combos[1], 1);
		return;
	}
	pu_add_tests(s, "X3", x3_collection_served_by_name, combos, 2);
	pu_add_test(s, "X3", x3_sotw_unwrapped);
	pu_add_tests(s, "X3", x3_context_parameters_name_it, combos, 2);
	pu_add_tests(s, "X3", x3_entries_changed_resent, combos, 2);
	pu_add_tests(s, "X3", x3_after_other_types, combos, 2);
	pu_add_test(s, "X3", x3_aggregated_only);
	pu_add_tests(s, "X3", x3_ttl_heartbeats, combos, 2);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("collections");

	xdtest_tmpdir();
	pu_register_collections(s, false);
	return pu_run(s);
}
#endif
