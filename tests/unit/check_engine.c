/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The protocol engine without sockets: interned name sets, tables and
 * their wire forms, and the per-type state (sub.c) fed request by
 * request, its response bodies decoded with protobuf-c. Rules cited as
 * in docs/protocol.md.
 */
#include <grpc/grpc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "protocol/body.h"
#include "protocol/derived.h"
#include "protocol/ledger.h"
#include "protocol/nameset.h"
#include "protocol/client.h"
#include "protocol/stats.h"
#include "protocol/sub.h"
#include "snapshot/table.h"
#include "xdtest.h"

/* When requests come (Unix ms), as the daemon passes it in: the engine
 * reads no clock. */
#define WALL_MS INT64_C(1700000000000)

typedef Envoy__Service__Discovery__V3__DiscoveryResponse SotwResp;
typedef Envoy__Service__Discovery__V3__DeltaDiscoveryResponse DeltaResp;

static struct xd_name N(const char *s)
{
	return (struct xd_name){s, strlen(s)};
}

/* A table of `type` from "name=content" pairs (content is the bytes). */
static struct xd_table *table_of(enum xd_rtype type, const char *const *kv,
				 size_t n)
{
	struct xd_table_builder *b = xd_table_builder_new(type);

	for (size_t i = 0; i < n; i++) {
		char name[64];
		const char *eq = strchr(kv[i], '=');

		snprintf(name, sizeof(name), "%.*s", (int)(eq - kv[i]), kv[i]);
		ck_assert_int_eq(xd_table_builder_add(b, name,
						      (const uint8_t *)eq + 1,
						      strlen(eq + 1), NULL, 0, NULL,
						      0, "t.yaml", (uint32_t)i + 1,
						      NULL),
				 0);
	}
	return xd_table_builder_finish(b);
}

#define TABLE(type, ...)                                                    \
	table_of(type, (const char *const[]){__VA_ARGS__},                 \
		 sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static SotwResp *sotw_of(struct xd_body *b)
{
	SotwResp *r = envoy__service__discovery__v3__discovery_response__unpack(
		NULL, GRPC_SLICE_LENGTH(b->slice), GRPC_SLICE_START_PTR(b->slice));

	ck_assert_ptr_nonnull(r);
	return r;
}

static DeltaResp *delta_of(struct xd_body *b)
{
	DeltaResp *r = envoy__service__discovery__v3__delta_discovery_response__unpack(
		NULL, GRPC_SLICE_LENGTH(b->slice), GRPC_SLICE_START_PTR(b->slice));

	ck_assert_ptr_nonnull(r);
	return r;
}

/* The resource names a SotW body carries, joined with ',' (values are
 * the test's content strings, so "name" is read off the content). */
static char *sotw_contents(struct xd_body *b)
{
	SotwResp *r = sotw_of(b);
	char *out = calloc(1, 1024);

	for (size_t i = 0; i < r->n_resources; i++) {
		strncat(out, i ? "," : "", 1023 - strlen(out));
		strncat(out, (const char *)r->resources[i]->value.data,
			r->resources[i]->value.len);
	}
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	return out;
}

/* A parsed request as request.c makes it; the names are the caller's
 * (never freed here: no xd_request_free). */
static struct xd_request sotw_req(const char *nonce, bool nack,
				  const struct xd_name *names, size_t n)
{
	struct xd_request r = {0};
	uint64_t h = n;

	r.nonce = N(nonce);
	r.has_error = nack;
	r.names = (struct xd_name *)names;
	r.nnames = n;
	for (size_t i = 0; i < n; i++)
		h = h * 1000003 + names[i].len * 31 + (unsigned char)names[i].data[0];
	r.names_hash = h;
	return r;
}

static void setup(void)
{
	grpc_init();
}

static void teardown(void)
{
	/* every set and ledger released: no leak of interned state */
	ck_assert_uint_eq(xd_ledger_live(), 0);
	ck_assert_uint_eq(xd_nameset_live(), 0);
	grpc_shutdown_blocking();
}

/* ---------------- name sets ---------------- */

START_TEST(nameset_interned)
{
	struct xd_name a[] = {N("b"), N("a"), N("b"), N("c")};
	struct xd_name b[] = {N("c"), N("a"), N("b")};
	struct xd_nameset *s1 = xd_nameset_intern(a, 4), *s2 = xd_nameset_intern(b, 3);
	struct xd_nameset *e1 = xd_nameset_empty(), *e2 = xd_nameset_intern(NULL, 0);

	ck_assert_ptr_eq(s1, s2); /* equal sets are one object */
	ck_assert_uint_eq(xd_nameset_count(s1), 3);
	ck_assert_str_eq(xd_nameset_at(s1, 0).data, "a");
	ck_assert_str_eq(xd_nameset_at(s1, 2).data, "c");
	ck_assert(xd_nameset_has(s1, "b", 1));
	ck_assert(!xd_nameset_has(s1, "d", 1));
	ck_assert_ptr_eq(e1, e2);
	ck_assert_uint_ne(xd_nameset_id(s1), xd_nameset_id(e1));
	xd_nameset_unref(s1);
	xd_nameset_unref(s2);
	xd_nameset_unref(e1);
	xd_nameset_unref(e2);
}
END_TEST

START_TEST(nameset_union_minus)
{
	struct xd_name a[] = {N("a"), N("b")}, b[] = {N("b"), N("c")};
	struct xd_name abc[] = {N("a"), N("b"), N("c")}, only_a[] = {N("a")};
	struct xd_nameset *sa = xd_nameset_intern(a, 2), *sb = xd_nameset_intern(b, 2);
	struct xd_nameset *u = xd_nameset_union(sa, sb), *m = xd_nameset_minus(sa, sb);
	struct xd_nameset *want_u = xd_nameset_intern(abc, 3);
	struct xd_nameset *want_m = xd_nameset_intern(only_a, 1);

	ck_assert_ptr_eq(u, want_u);
	ck_assert_ptr_eq(m, want_m);
	/* names differing only in length are different */
	struct xd_name x[] = {N("ab")}, y[] = {N("a"), N("b")};
	struct xd_nameset *sx = xd_nameset_intern(x, 1), *sy = xd_nameset_intern(y, 2);

	ck_assert_ptr_ne(sx, sy);
	xd_nameset_unref(sx);
	xd_nameset_unref(sy);
	xd_nameset_unref(sa);
	xd_nameset_unref(sb);
	xd_nameset_unref(u);
	xd_nameset_unref(m);
	xd_nameset_unref(want_u);
	xd_nameset_unref(want_m);
}
END_TEST

/* ---------------- tables ---------------- */

START_TEST(table_versions_are_content_hashes)
{
	struct xd_table *a = TABLE(XD_CLUSTER, "x=1", "y=2");
	struct xd_table *b = TABLE(XD_CLUSTER, "y=2", "x=1");
	struct xd_table *c = TABLE(XD_CLUSTER, "x=1", "y=3");

	/* order of definition does not matter; content does */
	ck_assert_str_eq(xd_table_version(a), xd_table_version(b));
	ck_assert_str_ne(xd_table_version(a), xd_table_version(c));
	ck_assert_str_eq(xd_table_find(a, "x", 1)->version,
			 xd_table_find(c, "x", 1)->version);
	ck_assert_str_ne(xd_table_find(a, "y", 1)->version,
			 xd_table_find(c, "y", 1)->version);
	ck_assert_uint_eq(strlen(xd_table_version(a)), 16);
	ck_assert_uint_ne(xd_table_id(a), xd_table_id(b));
	/* sorted by name */
	ck_assert_str_eq(xd_table_at(b, 0)->name, "x");
	xd_table_unref(a);
	xd_table_unref(b);
	xd_table_unref(c);
}
END_TEST

START_TEST(table_duplicates_refused)
{
	struct xd_table_builder *b = xd_table_builder_new(XD_LISTENER);
	const struct xd_entry *first;

	ck_assert_int_eq(xd_table_builder_add(b, "l", (const uint8_t *)"a", 1, NULL,
					      0, NULL, 0, "f.yaml", 3, NULL),
			 0);
	ck_assert_int_eq(xd_table_builder_add(b, "l", (const uint8_t *)"b", 1, NULL,
					      0, NULL, 0, "g.yaml", 9, &first),
			 -1);
	ck_assert_str_eq(first->file, "f.yaml");
	ck_assert_uint_eq(first->line, 3);
	xd_table_unref(xd_table_builder_finish(b));
}
END_TEST

/* The body of a "field 2, length-delimited" entry: after its tag and
 * length varint. */
static const uint8_t *entry_body(const struct xd_span *sp, size_t *len)
{
	const uint8_t *p = sp->data + 1;
	uint64_t n = 0;

	ck_assert_uint_eq(sp->data[0], 0x12);
	for (int shift = 0;; shift += 7) {
		n |= (uint64_t)(*p & 0x7f) << shift;
		if (*p++ < 0x80)
			break;
	}
	ck_assert_uint_eq(n, sp->len - (size_t)(p - sp->data));
	*len = n;
	return p;
}

/* The three wire forms decode as what they claim to be (docs/design.md §4). */
START_TEST(table_wire_forms)
{
	const char *aliases[] = {"rc/a.example", "rc/b.example"};
	struct xd_table_builder *b = xd_table_builder_new(XD_VIRTUAL_HOST);
	struct xd_table *t;
	const struct xd_entry *e;
	Google__Protobuf__Any *any;
	Envoy__Service__Discovery__V3__Resource *res;
	const uint8_t *body;
	size_t len;

	xd_table_builder_add(b, "rc/vh", (const uint8_t *)"MSG", 3, NULL, 0,
			     aliases, 2, "f", 1, NULL);
	t = xd_table_builder_finish(b);
	e = xd_table_find(t, "rc/vh", 5);
	ck_assert_ptr_eq(xd_table_find_alias(t, "rc/b.example", 12), e);
	ck_assert_ptr_null(xd_table_find_alias(t, "rc/c.example", 12));

	/* sotw: 0x12 len Any */
	body = entry_body(&e->sotw, &len);
	any = google__protobuf__any__unpack(NULL, len, body);
	ck_assert_ptr_nonnull(any);
	ck_assert_str_eq(any->type_url, "type.googleapis.com/envoy.config.route.v3.VirtualHost");
	ck_assert_uint_eq(any->value.len, 3);
	ck_assert_int_eq(memcmp(any->value.data, "MSG", 3), 0);
	google__protobuf__any__free_unpacked(any, NULL);

	/* delta: 0x12 len Resource{version, Any, name, aliases} */
	body = entry_body(&e->delta, &len);
	res = envoy__service__discovery__v3__resource__unpack(NULL, len, body);
	ck_assert_ptr_nonnull(res);
	ck_assert_str_eq(res->name, "rc/vh");
	ck_assert_str_eq(res->version, e->version);
	ck_assert_uint_eq(res->n_aliases, 2);
	ck_assert_str_eq(res->aliases[1], "rc/b.example");
	ck_assert_int_eq(memcmp(res->resource->value.data, "MSG", 3), 0);
	envoy__service__discovery__v3__resource__free_unpacked(res, NULL);

	/* wrapped (rule L2): Any{Resource} */
	body = entry_body(&e->wrapped, &len);
	any = google__protobuf__any__unpack(NULL, len, body);
	ck_assert_ptr_nonnull(any);
	ck_assert_str_eq(any->type_url, "type.googleapis.com/envoy.service.discovery.v3.Resource");
	res = envoy__service__discovery__v3__resource__unpack(NULL, any->value.len,
							      any->value.data);
	ck_assert_str_eq(res->name, "rc/vh");
	envoy__service__discovery__v3__resource__free_unpacked(res, NULL);
	google__protobuf__any__free_unpacked(any, NULL);
	xd_table_unref(t);
}
END_TEST

START_TEST(table_union_keeps_old_entries)
{
	struct xd_table *old = TABLE(XD_CLUSTER, "x=1", "gone=9");
	struct xd_table *new = TABLE(XD_CLUSTER, "x=2", "y=3");
	struct xd_table *u = xd_derived_union(new, old), *again;

	ck_assert_uint_eq(xd_table_count(u), 3);
	/* the newer table wins for names in both */
	ck_assert_int_eq(xd_table_find(u, "x", 1)->msg.data[0], '2');
	ck_assert_ptr_nonnull(xd_table_find(u, "gone", 4));
	/* the same transition gives the same union; a union of `new` is
	 * its own union */
	again = xd_derived_union(new, old);
	ck_assert_ptr_eq(again, u);
	xd_table_unref(again);
	again = xd_derived_union(new, u);
	ck_assert_ptr_eq(again, u);
	xd_table_unref(again);
	xd_table_unref(u);
	xd_table_unref(old);
	xd_table_unref(new);
}
END_TEST

/* ---------------- SotW ---------------- */

/* Sends what is due and answers it; returns the contents sent or NULL. */
static char *sotw_step(struct xd_sub *s, struct xd_table *t, bool full,
		       uint64_t *nonce)
{
	struct xd_body *b = xd_sub_next(s, t, XD_FORM_SOTW, full);
	char *c;

	if (b == NULL)
		return NULL;
	c = sotw_contents(b);
	xd_sub_sent(s, t, ++*nonce, 0, WALL_MS);
	xd_body_unref(b);
	return c;
}

/* rules S2, S8: wildcard CDS is full state; rule S6: nothing until a change. */
START_TEST(sotw_wildcard_full_state)
{
	struct xd_sub s;
	struct xd_table *t1 = TABLE(XD_CLUSTER, "a=A1", "b=B1");
	struct xd_table *t2 = TABLE(XD_CLUSTER, "a=A2", "b=B1");
	struct xd_table *t3 = TABLE(XD_CLUSTER, "a=A2");
	struct xd_request r = sotw_req("", false, NULL, 0);
	uint64_t nonce = 0;
	char *c, ack[8];

	xd_sub_init(&s, 0, "test");
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS), XD_SUB_REQUEST);
	ck_assert(s.want.all);
	c = sotw_step(&s, t1, true, &nonce);
	ck_assert_str_eq(c, "A1,B1");
	free(c);
	/* one response in flight at a time */
	ck_assert_ptr_null(xd_sub_next(&s, t2, XD_FORM_SOTW, true));
	snprintf(ack, sizeof(ack), "%llu", (unsigned long long)nonce);
	r = sotw_req(ack, false, NULL, 0);
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS), XD_SUB_ACK);
	ck_assert_ptr_null(sotw_step(&s, t1, true, &nonce)); /* rule S6 */
	c = sotw_step(&s, t2, true, &nonce);
	ck_assert_str_eq(c, "A2,B1"); /* rule S8: everything, not just a */
	free(c);
	snprintf(ack, sizeof(ack), "%llu", (unsigned long long)nonce);
	r = sotw_req(ack, false, NULL, 0);
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	c = sotw_step(&s, t3, true, &nonce);
	ck_assert_str_eq(c, "A2"); /* rule S8: b's absence deletes it */
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
	xd_table_unref(t3);
}
END_TEST

/* rule S9: EDS carries only subscribed resources that changed; rule S7:
 * new names are sent even if unchanged; rule S10: missing names are sent
 * on arrival. */
START_TEST(sotw_explicit_changes_only)
{
	struct xd_sub s;
	struct xd_table *t1 = TABLE(XD_ENDPOINT, "a=A1", "b=B1", "c=C1");
	struct xd_table *t2 = TABLE(XD_ENDPOINT, "a=A2", "b=B1", "c=C2", "d=D1");
	struct xd_name ab[] = {N("a"), N("b")}, abd[] = {N("a"), N("b"), N("d")};
	struct xd_name b_only[] = {N("b")};
	uint64_t nonce = 0;
	char *c, ack[8];
	struct xd_request r = sotw_req("", false, ab, 2);

	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	c = sotw_step(&s, t1, false, &nonce);
	ck_assert_str_eq(c, "A1,B1");
	free(c);
	snprintf(ack, sizeof(ack), "%llu", (unsigned long long)nonce);
	r = sotw_req(ack, false, abd, 3); /* ACK and subscribe d (absent) */
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS), XD_SUB_ACK);
	ck_assert_ptr_null(sotw_step(&s, t1, false, &nonce)); /* d: nothing yet */
	c = sotw_step(&s, t2, false, &nonce);
	ck_assert_str_eq(c, "A2,D1"); /* c changed but is not subscribed */
	free(c);
	snprintf(ack, sizeof(ack), "%llu", (unsigned long long)nonce);
	r = sotw_req(ack, false, b_only, 1); /* unsubscribe a and d */
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	ck_assert_ptr_null(sotw_step(&s, t2, false, &nonce));
	r = sotw_req(ack, false, ab, 2); /* a again: rule S7 sends it */
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS), XD_SUB_REQUEST);
	c = sotw_step(&s, t2, false, &nonce);
	ck_assert_str_eq(c, "A2");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

/* rule S4: a NACKed version is not resent, the next change is. Rule S5:
 * stale nonces are ignored. Rule S13: an empty list means no interest. */
START_TEST(sotw_nack_and_stale)
{
	struct xd_sub s;
	struct xd_table *t1 = TABLE(XD_ROUTE, "r=R1"), *t2 = TABLE(XD_ROUTE, "r=R2");
	struct xd_name r_only[] = {N("r")};
	uint64_t nonce = 0;
	char *c, n1[8];
	struct xd_request r = sotw_req("", false, r_only, 1);

	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	c = sotw_step(&s, t1, false, &nonce);
	free(c);
	snprintf(n1, sizeof(n1), "%llu", (unsigned long long)nonce);
	r = sotw_req("999", false, r_only, 1);
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS), XD_SUB_STALE);
	ck_assert_int_eq(s.state, XD_SUB_IN_FLIGHT);
	r = sotw_req(n1, true, r_only, 1);
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS), XD_SUB_NACK);
	ck_assert_uint_eq(s.nacks, 1);
	ck_assert_ptr_null(sotw_step(&s, t1, false, &nonce)); /* not resent */
	c = sotw_step(&s, t2, false, &nonce);
	ck_assert_str_eq(c, "R2");
	free(c);
	/* a request before the client saw the newest response is stale */
	r = sotw_req(n1, false, r_only, 1);
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS), XD_SUB_STALE);
	snprintf(n1, sizeof(n1), "%llu", (unsigned long long)nonce);
	r = sotw_req(n1, false, NULL, 0);
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS), XD_SUB_ACK);
	ck_assert_uint_eq(xd_nameset_count(s.want.set), 0); /* rule S13 */
	ck_assert(!s.want.all);
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

/* rule S12: a wildcard client presenting the current version on a new stream
 * is not sent it again; an older version, or explicit names, are. */
START_TEST(sotw_resume_on_reconnect)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A");
	struct xd_name cur = N(xd_table_version(t)), a[] = {N("a")};
	struct xd_sub s;
	struct xd_request r = sotw_req("", false, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	r.version_info = cur;
	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, true, true, t, WALL_MS);
	ck_assert_ptr_null(sotw_step(&s, t, true, &nonce));
	xd_sub_clear(&s);

	r.version_info = N("0123456789abcdef");
	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, true, true, t, WALL_MS);
	c = sotw_step(&s, t, true, &nonce);
	ck_assert_str_eq(c, "A");
	free(c);
	xd_sub_clear(&s);

	/* explicit names may be new to the client: sent (rule S12's caveat) */
	r = sotw_req("", false, a, 1);
	r.version_info = cur;
	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, true, true, t, WALL_MS);
	c = sotw_step(&s, t, true, &nonce);
	ck_assert_str_eq(c, "A");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* rule S2: the legacy wildcard (empty first request) stays for the stream;
 * "*" is a wildcard that a later request can drop. */
START_TEST(sotw_wildcard_forms)
{
	struct xd_sub s;
	struct xd_name x[] = {N("x")}, star[] = {N("*"), N("x")};
	struct xd_request r = sotw_req("", false, NULL, 0);

	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	r = sotw_req("", false, x, 1);
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	ck_assert(s.want.all);
	xd_sub_clear(&s);

	xd_sub_init(&s, 0, "test");
	r = sotw_req("", false, star, 2);
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	ck_assert(s.want.all);
	ck_assert(xd_nameset_has(s.want.set, "x", 1));
	r = sotw_req("", false, x, 1);
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	ck_assert(!s.want.all);
	xd_sub_clear(&s);

	/* on EDS "*" is just a name */
	xd_sub_init(&s, 0, "test");
	r = sotw_req("", false, star, 2);
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	ck_assert(!s.want.all);
	ck_assert(xd_nameset_has(s.want.set, "*", 1));
	xd_sub_clear(&s);
}
END_TEST

/* docs/design.md §4: clients in the same state share one body. */
START_TEST(bodies_shared_between_clients)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A", "b=B");
	struct xd_sub s[100];
	struct xd_request r = sotw_req("", false, NULL, 0);
	unsigned long long before;
	struct xd_body *first = NULL;

	for (int i = 0; i < 100; i++) {
		xd_sub_init(&s[i], 0, "test");
		xd_sub_sotw_request(&s[i], &r, true, true, NULL, WALL_MS);
	}
	before = xd_body_computed();
	for (int i = 0; i < 100; i++) {
		struct xd_body *b = xd_sub_next(&s[i], t, XD_FORM_SOTW, true);

		ck_assert_ptr_nonnull(b);
		if (first == NULL)
			first = xd_body_ref(b);
		ck_assert_ptr_eq(b, first);
		xd_sub_sent(&s[i], t, 1, 0, WALL_MS);
		xd_body_unref(b);
	}
	ck_assert_uint_eq(xd_body_computed() - before, 1);
	xd_body_unref(first);
	for (int i = 0; i < 100; i++)
		xd_sub_clear(&s[i]);
	xd_table_unref(t);
}
END_TEST

/* rule L2: wrapped resources for clients that ask for them. */
START_TEST(sotw_wrapped_form)
{
	struct xd_table *t = TABLE(XD_LISTENER, "l=L");
	struct xd_sub s;
	struct xd_request r = sotw_req("", false, NULL, 0);
	struct xd_body *b;
	SotwResp *resp;

	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	b = xd_sub_next(&s, t, XD_FORM_SOTW_WRAPPED, true);
	resp = sotw_of(b);
	ck_assert_uint_eq(resp->n_resources, 1);
	ck_assert_str_eq(resp->resources[0]->type_url,
			 "type.googleapis.com/envoy.service.discovery.v3.Resource");
	ck_assert_str_eq(resp->type_url, "type.googleapis.com/envoy.config.listener.v3.Listener");
	ck_assert_str_eq(resp->version_info, xd_table_version(t));
	envoy__service__discovery__v3__discovery_response__free_unpacked(resp, NULL);
	xd_body_unref(b);
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* ---------------- delta ---------------- */

static struct xd_request delta_req(const char *nonce, const struct xd_name *sub,
				   size_t nsub, const struct xd_name *unsub,
				   size_t nunsub)
{
	struct xd_request r = {0};

	r.delta = true;
	r.nonce = N(nonce);
	r.names = (struct xd_name *)sub;
	r.nnames = nsub;
	r.unsubscribe = (struct xd_name *)unsub;
	r.nunsubscribe = nunsub;
	return r;
}

/* rule L1: a heartbeat carries only the held resources with a TTL, each
 * without its body; a fleet in the same state shares one; it is due half
 * the shortest TTL after the last refresh. */
START_TEST(heartbeat_bodies_shared)
{
	struct xd_table_builder *tb = xd_table_builder_new(XD_CLUSTER);
	struct xd_table *t;
	struct xd_sub s[100], lone;
	const struct xd_name ab[] = {N("a"), N("b")}, only_b[] = {N("b")};
	struct xd_body *first = NULL, *b;
	unsigned long long before;
	uint64_t due;
	DeltaResp *r;

	ck_assert_int_eq(xd_table_builder_add(tb, "a", (const uint8_t *)"A", 1,
					      NULL, 0, NULL, 0, "t.yaml", 1, NULL), 0);
	xd_table_builder_ttl(tb, 2000);
	ck_assert_int_eq(xd_table_builder_add(tb, "b", (const uint8_t *)"B", 1,
					      NULL, 0, NULL, 0, "t.yaml", 2, NULL), 0);
	t = xd_table_builder_finish(tb);
	ck_assert_uint_eq(xd_table_min_ttl(t), 2000);
	/* the TTL is in the version: "a" is not the plain hash of its bytes */
	ck_assert_uint_ne(xd_table_find(t, "a", 1)->hash, XXH3_64bits("A", 1));
	ck_assert_uint_eq(xd_table_find(t, "b", 1)->hash, XXH3_64bits("B", 1));

	for (int i = 0; i < 100; i++) {
		struct xd_request q = delta_req("", ab, 2, NULL, 0), ack;

		xd_sub_init(&s[i], 0, "test");
		xd_sub_delta_request(&s[i], &q, false, NULL, WALL_MS);
		b = xd_sub_next(&s[i], t, XD_FORM_DELTA_TTL, false);
		ck_assert_ptr_nonnull(b);
		ck_assert(b->refreshes_ttl);
		xd_sub_sent(&s[i], t, 1, 0, WALL_MS);
		xd_body_unref(b);
		ack = delta_req("1", NULL, 0, NULL, 0);
		ck_assert_int_eq(xd_sub_delta_request(&s[i], &ack, false, NULL, WALL_MS),
				 XD_SUB_ACK);
	}
	/* not before half the TTL; never for a form without TTLs */
	ck_assert_ptr_null(xd_sub_heartbeat(&s[0], XD_FORM_DELTA_TTL, 999, &due));
	ck_assert_uint_eq(due, 1000);
	ck_assert_ptr_null(xd_sub_heartbeat(&s[0], XD_FORM_DELTA, 5000, &due));
	ck_assert_uint_eq(due, 0);
	before = xd_body_computed();
	for (int i = 0; i < 100; i++) {
		b = xd_sub_heartbeat(&s[i], XD_FORM_DELTA_TTL, 1000, &due);
		ck_assert_ptr_nonnull(b);
		if (first == NULL)
			first = xd_body_ref(b);
		ck_assert_ptr_eq(b, first);
		xd_body_unref(b);
	}
	ck_assert_uint_eq(xd_body_computed() - before, 1);
	r = delta_of(first);
	ck_assert_uint_eq(r->n_resources, 1);
	ck_assert_str_eq(r->resources[0]->name, "a");
	ck_assert_str_eq(r->resources[0]->version, xd_table_find(t, "a", 1)->version);
	ck_assert_ptr_null(r->resources[0]->resource);
	ck_assert_ptr_nonnull(r->resources[0]->ttl);
	ck_assert_int_eq(r->resources[0]->ttl->seconds, 2);
	ck_assert_str_eq(r->system_version_info, xd_table_version(t));
	ck_assert_uint_eq(r->n_removed_resources, 0);
	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	xd_body_unref(first);

	/* holding nothing with a TTL: no heartbeat, and the next look is a
	 * period later rather than at once */
	{
		struct xd_request q = delta_req("", only_b, 1, NULL, 0), ack;

		xd_sub_init(&lone, 0, "test");
		xd_sub_delta_request(&lone, &q, false, NULL, WALL_MS);
		b = xd_sub_next(&lone, t, XD_FORM_DELTA_TTL, false);
		xd_sub_sent(&lone, t, 1, 0, WALL_MS);
		xd_body_unref(b);
		ack = delta_req("1", NULL, 0, NULL, 0);
		xd_sub_delta_request(&lone, &ack, false, NULL, WALL_MS);
		ck_assert_ptr_null(xd_sub_heartbeat(&lone, XD_FORM_DELTA_TTL, 1500, &due));
		ck_assert_uint_eq(due, 2500);
		xd_sub_clear(&lone);
	}
	for (int i = 0; i < 100; i++)
		xd_sub_clear(&s[i]);
	xd_table_unref(t);
}
END_TEST

/* "name:body" for resources, "name:-" for a Resource without a body (a
 * virtual host's alias that names nothing, rule D10), "-name" removed
 * (deleted, rule D4, or never there, rule D8). */
static char *delta_step(struct xd_sub *s, struct xd_table *t, uint64_t *nonce)
{
	struct xd_body *b = xd_sub_next(s, t, XD_FORM_DELTA, false);
	DeltaResp *r;
	char *out;

	if (b == NULL)
		return NULL;
	r = delta_of(b);
	out = calloc(1, 2048);
	for (size_t i = 0; i < r->n_resources; i++) {
		char one[128];

		snprintf(one, sizeof(one), "%s%s:%s", i ? "," : "",
			 r->resources[i]->name,
			 r->resources[i]->resource ? "body" : "-");
		strcat(out, one);
	}
	for (size_t i = 0; i < r->n_removed_resources; i++) {
		strcat(out, *out ? ",-" : "-");
		strcat(out, r->removed_resources[i]);
	}
	ck_assert_str_eq(r->system_version_info, xd_table_version(t));
	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	xd_sub_sent(s, t, ++*nonce, 0, WALL_MS);
	xd_body_unref(b);
	return out;
}

static void delta_ack(struct xd_sub *s, uint64_t nonce)
{
	char n[16];
	struct xd_request r;

	snprintf(n, sizeof(n), "%llu", (unsigned long long)nonce);
	r = delta_req(n, NULL, 0, NULL, 0);
	ck_assert_int_eq(xd_sub_delta_request(s, &r, true, NULL, WALL_MS), XD_SUB_ACK);
}

/* rules D2, D3, D4: wildcard delta sends changes and removals only. */
START_TEST(delta_wildcard_changes_and_removals)
{
	struct xd_table *t1 = TABLE(XD_CLUSTER, "a=A1", "b=B1", "c=C1");
	struct xd_table *t2 = TABLE(XD_CLUSTER, "a=A1", "b=B2", "d=D1");
	struct xd_sub s;
	struct xd_request r = delta_req("", NULL, 0, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, true, t1, WALL_MS);
	ck_assert(s.want.all);
	c = delta_step(&s, t1, &nonce);
	ck_assert_str_eq(c, "a:body,b:body,c:body");
	free(c);
	delta_ack(&s, nonce);
	c = delta_step(&s, t2, &nonce);
	ck_assert_str_eq(c, "b:body,d:body,-c");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t2, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

/*
 * Rule D2: leaving the wildcard leaves what was held only through it, as
 * unsubscribing a name does (Envoy drops those resources then). A
 * removal of one of them is not said, and subscribing "*" again sends
 * every resource, the one still subscribed by name included (rule D5).
 */
START_TEST(delta_wildcard_left_forgets_its_resources)
{
	struct xd_table *t1 = TABLE(XD_CLUSTER, "a=A1", "b=B1", "c=C1");
	struct xd_table *t2 = TABLE(XD_CLUSTER, "a=A1", "b=B1");
	struct xd_name star_a[] = {N("*"), N("a")}, star[] = {N("*")};
	struct xd_request r = delta_req("", star_a, 2, NULL, 0);
	struct xd_sub s;
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, true, t1, WALL_MS);
	c = delta_step(&s, t1, &nonce);
	ck_assert_str_eq(c, "a:body,b:body,c:body");
	free(c);
	delta_ack(&s, nonce);
	r = delta_req("", NULL, 0, star, 1);
	xd_sub_delta_request(&s, &r, true, NULL, WALL_MS);
	ck_assert(!s.want.all);
	ck_assert_ptr_null(delta_step(&s, t2, &nonce));
	r = delta_req("", star_a, 2, NULL, 0);
	xd_sub_delta_request(&s, &r, true, NULL, WALL_MS);
	c = delta_step(&s, t2, &nonce);
	ck_assert_str_eq(c, "a:body,b:body");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t2, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

/* rule D5: subscribed names are sent even if held; rule D6: phantom
 * unsubscribes are harmless; rule D8: missing names are reported once, by
 * name. */
START_TEST(delta_explicit_rules)
{
	struct xd_table *t = TABLE(XD_ENDPOINT, "a=A", "b=B");
	struct xd_sub s;
	struct xd_name ax[] = {N("a"), N("x")}, a[] = {N("a")}, ghost[] = {N("ghost")};
	struct xd_request r = delta_req("", ax, 2, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, false, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "a:body,-x");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t, &nonce)); /* x reported once */
	r = delta_req("", a, 1, ghost, 1); /* a again; ghost never was */
	ck_assert_int_eq(xd_sub_delta_request(&s, &r, false, t, WALL_MS), XD_SUB_REQUEST);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "a:body");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* rule D4 vs rule D8: a held resource that is deleted while still subscribed is
 * removed, not also reported missing (Envoy refuses a name in both). */
START_TEST(delta_deleted_is_removed_only)
{
	struct xd_table *t1 = TABLE(XD_ENDPOINT, "a=A", "b=B");
	struct xd_table *t2 = TABLE(XD_ENDPOINT, "a=A");
	struct xd_sub s;
	struct xd_name ab[] = {N("a"), N("b")};
	struct xd_request r = delta_req("", ab, 2, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, false, t1, WALL_MS);
	free(delta_step(&s, t1, &nonce));
	delta_ack(&s, nonce);
	c = delta_step(&s, t2, &nonce);
	ck_assert_str_eq(c, "-b");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t2, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

/* rule D8 with a wildcard: a name subscribed beside "*" that does not exist
 * is reported once, not in every response. */
START_TEST(delta_wildcard_plus_missing_name)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A");
	struct xd_sub s;
	struct xd_name star_x[] = {N("*"), N("x")};
	struct xd_request r = delta_req("", star_x, 2, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, true, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "a:body,-x");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* rules P1, S11: locators that pick nothing are reported missing under
 * their name, and so once, beside the plain name too. */
START_TEST(delta_locators_missing_once)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A");
	struct xd_sub s;
	struct xd_name names[] = {N("x\x1f" "env\x1d" "prod"),
				  N("x\x1f" "env\x1d" "dev"), N("x"),
				  N("y\x1f")};
	struct xd_request r = delta_req("", names, 4, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, true, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "-x,-y");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* rule P1: a locator is a locator, whatever its parameters hold: one
 * whose value ends in "/" and "*" is no glob collection (rule X2) of the xdstp
 * name it makes, and picks the resource as any locator does. */
START_TEST(delta_locator_value_is_no_glob)
{
#define X "xdstp://a/envoy.config.cluster.v3.Cluster/x"
	struct xd_table *t = TABLE(XD_CLUSTER, X "=X");
	struct xd_sub s;
	struct xd_name names[] = {N(X "\x1f" "env\x1d" "a/*")};
	struct xd_request r = delta_req("", names, 1, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, true, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, X ":body");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t);
#undef X
}
END_TEST

/* DynamicParameterConstraints {constraint {key "env", value "dev"}} and
 * {... "prod"}: what variants in these tests are for (rule P1). */
static const uint8_t env_dev[] = {0x0a, 0x0a, 0x0a, 0x03, 'e', 'n', 'v',
				  0x12, 0x03, 'd', 'e', 'v'};
static const uint8_t env_prod[] = {0x0a, 0x0b, 0x0a, 0x03, 'e', 'n', 'v',
				   0x12, 0x04, 'p', 'r', 'o', 'd'};

static void add_entry(struct xd_table_builder *b, const char *name,
		      const char *content)
{
	ck_assert_int_eq(xd_table_builder_add(b, name, (const uint8_t *)content,
					      strlen(content), NULL, 0, NULL, 0,
					      "s.yaml", 1, NULL),
			 0);
}

/* Adds to `b` a variant of `name` for the constraints `cons` (rule P1). */
static void add_variant(struct xd_table_builder *b, const char *name,
			const char *content, const uint8_t *cons,
			size_t cons_len)
{
	ck_assert_int_eq(xd_table_builder_add_variant(
				 b, name, (const uint8_t *)content, strlen(content),
				 NULL, 0, (struct xd_span){cons, (uint32_t)cons_len},
				 "s.yaml", 1, NULL),
			 0);
}

/* rule P1: a plain resource that one locator stops picking (a variant
 * matches it now) stays with the client while another locator still
 * picks it: it is not removed. */
START_TEST(delta_locator_moves_to_variant_plain_stays)
{
	struct xd_table *t1 = TABLE(XD_CLUSTER, "x=X1");
	struct xd_table_builder *b = xd_table_builder_new(XD_CLUSTER);
	struct xd_table *t2;
	struct xd_sub s;
	struct xd_name names[] = {N("x\x1f" "env\x1d" "dev"), N("x\x1f")};
	struct xd_request r = delta_req("", names, 2, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	add_entry(b, "x", "X1");
	add_variant(b, "x", "XD", env_dev, sizeof(env_dev));
	t2 = xd_table_builder_finish(b);
	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, true, t1, WALL_MS);
	c = delta_step(&s, t1, &nonce);
	ck_assert_str_eq(c, "x:body");
	free(c);
	delta_ack(&s, nonce);
	/* the variant goes out under its ResourceName (no plain name), and
	 * the plain "x" the other locator picks is not removed */
	c = delta_step(&s, t2, &nonce);
	ck_assert_str_eq(c, ":body");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

/* rules P1 and S11: two locators of one name picking two variants: a
 * SotW client that takes plain Anys gets the name once (the variant
 * locators try first); one that takes wrapped resources gets both, told
 * apart by resource_name. */
START_TEST(sotw_two_variants_one_name)
{
	struct xd_table_builder *b = xd_table_builder_new(XD_CLUSTER);
	struct xd_table *t;
	struct xd_name names[] = {N("x\x1f" "env\x1d" "dev"),
				  N("x\x1f" "env\x1d" "prod")};
	struct xd_request r = sotw_req("", false, names, 2);
	static const enum xd_form forms[] = {XD_FORM_SOTW, XD_FORM_SOTW_WRAPPED};

	add_entry(b, "x", "X");
	add_variant(b, "x", "XD", env_dev, sizeof(env_dev));
	add_variant(b, "x", "XP", env_prod, sizeof(env_prod));
	t = xd_table_builder_finish(b);
	for (size_t f = 0; f < 2; f++) {
		struct xd_sub s;
		struct xd_body *body;
		SotwResp *resp;

		xd_sub_init(&s, 0, "test");
		xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
		body = xd_sub_next(&s, t, forms[f], true);
		ck_assert_ptr_nonnull(body);
		resp = sotw_of(body);
		ck_assert_uint_eq(resp->n_resources, f == 0 ? 1 : 2);
		envoy__service__discovery__v3__discovery_response__free_unpacked(resp, NULL);
		xd_body_unref(body);
		xd_sub_clear(&s);
	}
	xd_table_unref(t);
}
END_TEST

/* rule D7: initial_resource_versions: matching versions are not resent,
 * changed ones are, vanished ones are removed. */
START_TEST(delta_initial_versions)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A", "b=B");
	struct xd_sub s;
	struct xd_name names[] = {N("a"), N("b"), N("gone")};
	struct xd_name vers[] = {N(xd_table_find(t, "a", 1)->version),
				 N("0000000000000000"), N("1111111111111111")};
	struct xd_request r = delta_req("", NULL, 0, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	r.initial_names = names;
	r.initial_versions = vers;
	r.ninitial = 3;
	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, true, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "b:body,-gone");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* rule D9: subscription changes apply even with a stale nonce. */
START_TEST(delta_stale_nonce_still_subscribes)
{
	struct xd_table *t = TABLE(XD_ROUTE, "r=R", "q=Q");
	struct xd_sub s;
	struct xd_name r1[] = {N("r")}, q1[] = {N("q")};
	struct xd_request r = delta_req("", r1, 1, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, false, t, WALL_MS);
	free(delta_step(&s, t, &nonce));
	r = delta_req("12345", q1, 1, NULL, 0);
	ck_assert_int_eq(xd_sub_delta_request(&s, &r, false, t, WALL_MS), XD_SUB_STALE);
	ck_assert(xd_nameset_has(s.want.set, "q", 1));
	delta_ack(&s, nonce);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "q:body");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* rule D10: VHDS subscribes by alias; the resource carries its name. */
START_TEST(delta_alias_subscription)
{
	const char *al[] = {"rc/www.example"};
	struct xd_table_builder *b = xd_table_builder_new(XD_VIRTUAL_HOST);
	struct xd_table *t;
	struct xd_sub s;
	struct xd_name alias[] = {N("rc/www.example")};
	struct xd_request r = delta_req("", alias, 1, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_table_builder_add(b, "rc/web", (const uint8_t *)"V", 1, NULL, 0, al, 1,
			     "f", 1, NULL);
	t = xd_table_builder_finish(b);
	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, false, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "rc/web:body");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(t);
}
END_TEST

/* rule S11 with rule D10: a virtual host subscribed by its name and two aliases
 * is carried once and, when it goes, removed once under its name. */
START_TEST(delta_alias_and_name_removed_once)
{
	const char *al[] = {"rc/www.example", "rc/web.example"};
	struct xd_table_builder *b = xd_table_builder_new(XD_VIRTUAL_HOST);
	struct xd_table *t, *empty = xd_table_empty(XD_VIRTUAL_HOST);
	struct xd_sub s;
	struct xd_name names[] = {N("rc/www.example"), N("rc/web"),
				  N("rc/web.example")};
	struct xd_request r = delta_req("", names, 3, NULL, 0);
	uint64_t nonce = 0;
	char *c;

	xd_table_builder_add(b, "rc/web", (const uint8_t *)"V", 1, NULL, 0, al, 2,
			     "f", 1, NULL);
	t = xd_table_builder_finish(b);
	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, false, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "rc/web:body");
	free(c);
	delta_ack(&s, nonce);
	c = delta_step(&s, empty, &nonce);
	ck_assert_str_eq(c, "-rc/web");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, empty, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t);
	xd_table_unref(empty);
}
END_TEST

/* ---------------- views: what one identity may see ---------------- */

#define FRONTEND "spiffe://example.org/ns/prod/sa/frontend"
#define BACKEND "spiffe://example.org/ns/prod/sa/backend"

/*
 * Secrets as the loader makes them: "pub" for everyone ("@anyone"), "fe"
 * for frontends (a glob), "be" for the backend and one DNS name, "tls"
 * for any client with a certificate (a secret without "@allow"), "off"
 * for nobody ("@allow": []). `be` is be's content.
 */
static struct xd_table *secrets_table(const char *be)
{
	static const char *const fe_globs[] = {"spiffe://example.org/ns/*/sa/front*"};
	static const char *const be_globs[] = {BACKEND, "envoy-?.example.org"};
	static const char *const anyone_verified[] = {"*"};
	struct xd_table_builder *b = xd_table_builder_new(XD_SECRET);

	add_entry(b, "be", be);
	xd_table_builder_restrict(b, be_globs, 2);
	add_entry(b, "fe", "FE");
	xd_table_builder_restrict(b, fe_globs, 1);
	add_entry(b, "off", "OFF");
	xd_table_builder_restrict(b, NULL, 0);
	add_entry(b, "pub", "PUB");
	add_entry(b, "tls", "TLS");
	xd_table_builder_restrict(b, anyone_verified, 1);
	return xd_table_builder_finish(b);
}

/* The names of a table, joined with ','. */
static char *names_of(const struct xd_table *t)
{
	char *out = calloc(1, 1024);

	for (size_t i = 0; i < xd_table_count(t); i++) {
		strcat(out, i ? "," : "");
		strcat(out, xd_table_at(t, i)->name);
	}
	return out;
}

static void assert_view(struct xd_table *t, const char *identity,
			const char *want)
{
	struct xd_table *v = xd_derived_view(t, identity);
	char *got = names_of(v);

	ck_assert_msg(strcmp(got, want) == 0, "%s sees %s, not %s",
		      identity ? identity : "(none)", got, want);
	free(got);
	xd_table_unref(v);
}

/* Each identity sees the public entries and those its globs allow; a
 * client without an identity matches no glob, not even "*". */
START_TEST(view_shows_what_an_identity_may_see)
{
	struct xd_table *t = secrets_table("BE");

	ck_assert_uint_eq(xd_table_restricted(t), 4);
	assert_view(t, NULL, "pub");
	assert_view(t, FRONTEND, "fe,pub,tls");
	assert_view(t, "spiffe://example.org/ns/dev/sa/frontend-2", "fe,pub,tls");
	assert_view(t, BACKEND, "be,pub,tls");
	assert_view(t, "envoy-1.example.org", "be,pub,tls");
	assert_view(t, "envoy-12.example.org", "pub,tls");
	assert_view(t, "spiffe://example.org/ns/prod/sa/backend/x", "pub,tls");
	ck_assert(!xd_entry_allows(xd_table_find(t, "tls", 3), NULL));
	ck_assert(xd_entry_allows(xd_table_find(t, "pub", 3), NULL));
	ck_assert(!xd_entry_allows(xd_table_find(t, "off", 3), FRONTEND));
	xd_table_unref(t);
}
END_TEST

/* A view is the table itself when it hides nothing; otherwise one
 * shared by every client shown the same entries, whatever its identity,
 * with a version of its own: equal for equal views, never the full
 * table's. */
START_TEST(view_shared_and_versioned)
{
	static const char *const fe_globs[] = {FRONTEND};
	struct xd_table *t = secrets_table("BE");
	struct xd_table *plain = TABLE(XD_CLUSTER, "a=A", "b=B");
	struct xd_table_builder *b = xd_table_builder_new(XD_SECRET);
	struct xd_table *fe_only, *v1, *v2, *v3;

	/* nothing restricted: the table, for anyone */
	v1 = xd_derived_view(plain, NULL);
	ck_assert_ptr_eq(v1, plain);
	xd_table_unref(v1);
	/* everything restricted is allowed: the table */
	add_entry(b, "fe", "FE");
	xd_table_builder_restrict(b, fe_globs, 1);
	add_entry(b, "pub", "PUB");
	fe_only = xd_table_builder_finish(b);
	v1 = xd_derived_view(fe_only, FRONTEND);
	ck_assert_ptr_eq(v1, fe_only);
	xd_table_unref(v1);
	v1 = xd_derived_view(fe_only, BACKEND);
	ck_assert_ptr_ne(v1, fe_only);
	ck_assert_str_ne(xd_table_version(v1), xd_table_version(fe_only));
	xd_table_unref(v1);

	/* two identities shown the same names share one view */
	v1 = xd_derived_view(t, BACKEND);
	v2 = xd_derived_view(t, "envoy-7.example.org");
	v3 = xd_derived_view(t, BACKEND);
	ck_assert_ptr_eq(v1, v2);
	ck_assert_ptr_eq(v1, v3);
	ck_assert_str_ne(xd_table_version(v1), xd_table_version(t));
	xd_table_unref(v2);
	xd_table_unref(v3);
	v2 = xd_derived_view(t, FRONTEND);
	ck_assert_ptr_ne(v1, v2);
	ck_assert_str_ne(xd_table_version(v1), xd_table_version(v2));
	/* a view is not a union: the sequencer must not take it for one */
	ck_assert_ptr_null(xd_table_union_base(v1));
	xd_table_unref(v2);
	xd_table_unref(v1);

	/* the same content in another table gives the same versions */
	{
		struct xd_table *again = secrets_table("BE");

		v1 = xd_derived_view(t, NULL);
		v2 = xd_derived_view(again, NULL);
		ck_assert_ptr_ne(v1, v2);
		ck_assert_str_eq(xd_table_version(v1), xd_table_version(v2));
		xd_table_unref(v1);
		xd_table_unref(v2);
		xd_table_unref(again);
	}
	xd_table_unref(fe_only);
	xd_table_unref(plain);
	xd_table_unref(t);
}
END_TEST

/* Who may see what is part of a table's sameness, not of its version:
 * a reload that changed only an "@allow" must not keep the old table,
 * and the clients who may see the same see no change. */
START_TEST(table_same_includes_restrictions)
{
	static const char *const g1[] = {FRONTEND}, *const g2[] = {BACKEND};
	struct xd_table *t[4];

	for (int i = 0; i < 4; i++) {
		struct xd_table_builder *b = xd_table_builder_new(XD_SECRET);

		add_entry(b, "k", "KEY");
		if (i < 3)
			xd_table_builder_restrict(b, i == 1 ? g2 : g1, 1);
		t[i] = xd_table_builder_finish(b);
	}
	ck_assert(xd_table_same(t[0], t[2]));
	ck_assert(!xd_table_same(t[0], t[1]));
	ck_assert(!xd_table_same(t[0], t[3]));
	for (int i = 1; i < 4; i++)
		ck_assert_str_eq(xd_table_version(t[0]), xd_table_version(t[i]));
	for (int i = 0; i < 4; i++)
		xd_table_unref(t[i]);
}
END_TEST

/* A name the client may not see does not exist for it: SotW leaves it
 * out (rule S10), delta reports it missing (rule D8), and a wildcard
 * never names it. */
START_TEST(view_restricted_is_missing)
{
	struct xd_table *t = secrets_table("BE");
	struct xd_table *fe = xd_derived_view(t, FRONTEND);
	struct xd_table *anon = xd_derived_view(t, NULL);
	struct xd_name both[] = {N("be"), N("fe")};
	struct xd_request r = sotw_req("", false, both, 2);
	struct xd_sub s;
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	c = sotw_step(&s, fe, false, &nonce);
	ck_assert_str_eq(c, "FE");
	free(c);
	xd_sub_clear(&s);

	xd_sub_init(&s, 0, "test");
	r = delta_req("", both, 2, NULL, 0);
	xd_sub_delta_request(&s, &r, false, fe, WALL_MS);
	c = delta_step(&s, fe, &nonce);
	ck_assert_str_eq(c, "fe:body,-be");
	free(c);
	xd_sub_clear(&s);

	xd_sub_init(&s, 0, "test");
	r = delta_req("", NULL, 0, NULL, 0);
	xd_sub_delta_request(&s, &r, true, anon, WALL_MS);
	c = delta_step(&s, anon, &nonce);
	ck_assert_str_eq(c, "pub:body");
	free(c);
	xd_sub_clear(&s);
	xd_table_unref(anon);
	xd_table_unref(fe);
	xd_table_unref(t);
}
END_TEST

/* Clients of different identities shown the same entries share bodies:
 * one computed for all of them. */
START_TEST(view_bodies_shared_across_identities)
{
	static const char *const ids[] = {BACKEND, "envoy-1.example.org",
					  "envoy-2.example.org", BACKEND};
	struct xd_table *t = secrets_table("BE");
	struct xd_name names[] = {N("be"), N("fe"), N("pub")};
	struct xd_table *v[4];
	struct xd_body *first = NULL;
	unsigned long long before = xd_body_computed();

	/* each client holds its view, as its session does */
	for (size_t i = 0; i < 4; i++) {
		struct xd_request r = sotw_req("", false, names, 3);
		struct xd_sub s;
		struct xd_body *b;

		xd_sub_init(&s, 0, "test");
		v[i] = xd_derived_view(t, ids[i]);
		xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
		b = xd_sub_next(&s, v[i], XD_FORM_SOTW, false);
		ck_assert_ptr_nonnull(b);
		if (first == NULL) {
			char *c = sotw_contents(b);

			ck_assert_str_eq(c, "BE,PUB");
			free(c);
			first = xd_body_ref(b);
		}
		ck_assert_ptr_eq(b, first);
		xd_body_unref(b);
		xd_sub_clear(&s);
	}
	ck_assert_uint_eq(xd_body_computed() - before, 1);
	xd_body_unref(first);
	for (size_t i = 0; i < 4; i++)
		xd_table_unref(v[i]);
	xd_table_unref(t);
}
END_TEST

/* A snapshot as one identity sees it: the snapshot itself when nothing
 * is hidden; else a view whose base is the snapshot, sharing every table
 * that hides nothing. */
START_TEST(snapshot_view)
{
	struct xd_table *tables[XD_RTYPE_COUNT] = {0};
	struct xd_snapshot *s, *v, *w;

	tables[XD_CLUSTER] = TABLE(XD_CLUSTER, "a=A");
	tables[XD_SECRET] = secrets_table("BE");
	s = xd_snapshot_new("default", tables);
	v = xd_derived_snapshot_view(s, FRONTEND);
	ck_assert_ptr_ne(v, s);
	ck_assert_ptr_eq(xd_snapshot_base(v), s);
	ck_assert_ptr_eq(xd_snapshot_base(s), s);
	ck_assert_str_eq(xd_snapshot_key(v), "default");
	ck_assert_ptr_eq(xd_snapshot_table(v, XD_CLUSTER),
			 xd_snapshot_table(s, XD_CLUSTER));
	ck_assert_uint_eq(xd_table_count(xd_snapshot_table(v, XD_SECRET)), 3);
	/* another client of the same names: the same tables */
	w = xd_derived_snapshot_view(s, "spiffe://example.org/ns/dev/sa/frontend");
	ck_assert_ptr_eq(xd_snapshot_table(w, XD_SECRET),
			 xd_snapshot_table(v, XD_SECRET));
	xd_snapshot_unref(w);
	xd_snapshot_unref(v);
	xd_snapshot_unref(s);

	memset(tables, 0, sizeof(tables));
	tables[XD_CLUSTER] = TABLE(XD_CLUSTER, "a=A");
	s = xd_snapshot_new("default", tables);
	v = xd_derived_snapshot_view(s, NULL);
	ck_assert_ptr_eq(v, s);
	xd_snapshot_unref(v);
	xd_snapshot_unref(s);
}
END_TEST

/* Views go with their last client and their table (bench/README.md,
 * "Memory over time"): nothing of a superseded table stays behind, and
 * a view made again after its predecessor went is a fresh one. */
START_TEST(views_go_with_their_clients)
{
	size_t before = xd_table_live(NULL);
	struct xd_table *t1 = secrets_table("BE-1"), *t2, *v1, *v2;

	v1 = xd_derived_view(t1, BACKEND);
	ck_assert_uint_eq(xd_table_live(NULL), before + 2);
	/* a reload: the client moves to the new table's view */
	t2 = secrets_table("BE-2");
	xd_table_unref(t1); /* the cache let go of it */
	v2 = xd_derived_view(t2, BACKEND);
	ck_assert_str_ne(xd_table_version(v1), xd_table_version(v2));
	xd_table_unref(v1); /* the client let go: t1 and its view go */
	ck_assert_uint_eq(xd_table_live(NULL), before + 2);
	xd_table_unref(v2);
	ck_assert_uint_eq(xd_table_live(NULL), before + 1);
	v2 = xd_derived_view(t2, BACKEND);
	ck_assert_uint_eq(xd_table_count(v2), 3);
	xd_table_unref(v2);
	xd_table_unref(t2);
	ck_assert_uint_eq(xd_table_live(NULL), before);
}
END_TEST

/* ---------------- memory over time (issue 10) ---------------- */

/* One client's life: subscribes (wildcard, or to `names`), is sent the
 * table, ACKs, finds nothing more due, and goes. */
static void client_life(struct xd_table *t, const struct xd_name *names,
			size_t n)
{
	struct xd_sub s;
	struct xd_request r = sotw_req("", false, names, n);
	struct xd_body *b;

	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, true, n == 0, NULL, WALL_MS);
	b = xd_sub_next(&s, t, XD_FORM_SOTW, n == 0);
	ck_assert_ptr_nonnull(b);
	xd_sub_sent(&s, t, 1, 0, WALL_MS);
	xd_body_unref(b);
	r = sotw_req("1", false, names, n);
	ck_assert_int_eq(xd_sub_sotw_request(&s, &r, true, n == 0, NULL, WALL_MS),
			 XD_SUB_ACK);
	ck_assert_ptr_null(xd_sub_next(&s, t, XD_FORM_SOTW, n == 0));
	xd_sub_clear(&s);
}

/*
 * Streams come and go (bench/churn): each round's clients subscribe to
 * the same names as the last round's, whose name sets died with them.
 * The bodies memoized for them must serve the next round, not pile up
 * keyed on name sets that no longer exist.
 */
START_TEST(memo_survives_churn)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A", "b=B", "c=C");
	struct xd_name ab[] = {N("a"), N("b")};
	unsigned long long computed = 0;
	size_t live = 0;

	for (int round = 0; round < 100; round++) {
		client_life(t, NULL, 0);
		client_life(t, ab, 2);
		if (round == 0) {
			computed = xd_body_computed();
			live = xd_body_live(NULL);
			continue;
		}
		ck_assert_msg(xd_body_live(NULL) == live,
			      "round %d: %zu bodies alive, %zu after the first",
			      round, xd_body_live(NULL), live);
		ck_assert_uint_eq(xd_body_computed(), computed);
	}
	xd_table_unref(t);
	ck_assert_uint_eq(xd_body_live(NULL), 0);
}
END_TEST

/*
 * Bodies memoized on a table are bounded in bytes too, not only in
 * number: a few hundred clients with different subscriptions to large
 * resources must not keep a body each.
 */
START_TEST(memo_bounded_in_bytes)
{
	enum { RESOURCES = 40, SIZE = 20000, CLIENTS = 300 };
	struct xd_table_builder *b = xd_table_builder_new(XD_ENDPOINT);
	char *content = malloc(SIZE), name[16];
	struct xd_name names[RESOURCES];
	struct xd_table *t;
	size_t bytes, wire = 0;

	memset(content, 'x', SIZE);
	for (int i = 0; i < RESOURCES; i++) {
		snprintf(name, sizeof(name), "r%02d", i);
		ck_assert_int_eq(xd_table_builder_add(b, name, (const uint8_t *)content,
						      SIZE, NULL, 0, NULL, 0,
						      "t.yaml", 1, NULL), 0);
	}
	t = xd_table_builder_finish(b);
	for (size_t i = 0; i < xd_table_count(t); i++) {
		const struct xd_entry *e = xd_table_at(t, i);

		names[i] = (struct xd_name){e->name, e->name_len};
		wire += e->sotw.len + e->wrapped.len + e->delta.len;
	}
	/* client k subscribes to half the names, starting at k */
	for (int k = 0; k < CLIENTS; k++) {
		struct xd_name sub[RESOURCES / 2];

		for (int i = 0; i < RESOURCES / 2; i++)
			sub[i] = names[(k + i) % RESOURCES];
		client_life(t, sub, RESOURCES / 2);
	}
	xd_body_live(&bytes);
	ck_assert_msg(bytes <= 2 * wire + SIZE * RESOURCES,
		      "%zu bytes of bodies kept for a table of %zu wire bytes",
		      bytes, wire);
	xd_table_unref(t);
	free(content);
}
END_TEST

/*
 * After a reload, clients holding the superseded table are sent the
 * difference. Once none holds it and it is freed, what was computed for
 * that transition goes with it; the current table keeps only what its
 * own clients can still be sent.
 */
START_TEST(memo_transition_goes_with_old_table)
{
	struct xd_table *t0 = TABLE(XD_ENDPOINT, "a=A0", "b=B");
	struct xd_table *t1 = TABLE(XD_ENDPOINT, "a=A1", "b=B");
	struct xd_name ab[] = {N("a"), N("b")};
	struct xd_request r = sotw_req("", false, ab, 2);
	uint64_t nonce = 0;
	struct xd_sub s;
	char *c, ack[8];
	size_t live;

	xd_sub_init(&s, 0, "test");
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	c = sotw_step(&s, t0, false, &nonce);
	ck_assert_str_eq(c, "A0,B");
	free(c);
	snprintf(ack, sizeof(ack), "%llu", (unsigned long long)nonce);
	r = sotw_req(ack, false, ab, 2);
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	/* the reload: only `a` changed */
	c = sotw_step(&s, t1, false, &nonce);
	ck_assert_str_eq(c, "A1");
	free(c);
	snprintf(ack, sizeof(ack), "%llu", (unsigned long long)nonce);
	r = sotw_req(ack, false, ab, 2);
	xd_sub_sotw_request(&s, &r, false, false, NULL, WALL_MS);
	ck_assert_ptr_null(sotw_step(&s, t1, false, &nonce));
	ck_assert_ptr_eq(xd_sub_held(&s), t1);
	/* nobody holds t0 any more: what it alone needed goes with it */
	live = xd_body_live(NULL);
	xd_table_unref(t0);
	ck_assert_uint_eq(xd_table_live(NULL), 1);
	ck_assert_msg(xd_body_live(NULL) <= 1,
		      "%zu bodies alive after the old table went (%zu before)",
		      xd_body_live(NULL), live);
	xd_sub_clear(&s);
	xd_table_unref(t1);
}
END_TEST

/* A table of one virtual host `name` holding `body`, with `alias` (or
 * none). */
static struct xd_table *one_vhost(const char *name, const char *body,
				  const char *alias)
{
	struct xd_table_builder *b = xd_table_builder_new(XD_VIRTUAL_HOST);

	ck_assert_int_eq(xd_table_builder_add(b, name, (const uint8_t *)body,
					      strlen(body), NULL, 0, &alias,
					      alias != NULL ? 1 : 0, "f", 1, NULL),
			 0);
	return xd_table_builder_finish(b);
}

/*
 * A delta client subscribes to `names` and is served `t1`, then `t2`,
 * ACKing each response: the first must be `first`, the second `second`
 * (as delta_step prints them), and nothing more follows. Takes over the
 * tables.
 */
static void delta_moves(const struct xd_name *names, size_t n,
			struct xd_table *t1, struct xd_table *t2,
			const char *first, const char *second)
{
	struct xd_request r = delta_req("", names, n, NULL, 0);
	struct xd_sub s;
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, false, t1, WALL_MS);
	c = delta_step(&s, t1, &nonce);
	ck_assert_str_eq(c, first);
	free(c);
	delta_ack(&s, nonce);
	c = delta_step(&s, t2, &nonce);
	ck_assert_str_eq(c, second);
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, t2, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t1);
	xd_table_unref(t2);
}

/*
 * Rules D4, D8 and D10: a virtual host keeps its name but loses the alias
 * the client also asked for it by. The alias "does not exist" now; the
 * resource is not removed (it even changed, and is carried: a name in
 * both resources and removed_resources is refused). _i: 0 asked by name
 * and alias, the resource changes; 1 by the alias only, unchanged.
 */
START_TEST(delta_alias_gone_resource_stays)
{
	struct xd_name names[] = {N("rc/www.example"), N("rc/web")};

	delta_moves(names, _i == 0 ? 2 : 1,
		    one_vhost("rc/web", "V1", "rc/www.example"),
		    one_vhost("rc/web", _i == 0 ? "V2" : "V1", NULL),
		    "rc/web:body",
		    _i == 0 ? "rc/web:body,rc/www.example:-" : "rc/www.example:-");
}
END_TEST

/* Rule D10: the alias moves to another virtual host and the one it
 * named goes: that one is removed, the new one carried. */
START_TEST(delta_alias_moves_resource_goes)
{
	struct xd_name alias[] = {N("rc/www.example")};

	delta_moves(alias, 1, one_vhost("rc/old", "V1", "rc/www.example"),
		    one_vhost("rc/new", "V2", "rc/www.example"), "rc/old:body",
		    "rc/new:body,-rc/old");
}
END_TEST

/* Rule D10: a virtual host's name becomes another's alias. The one it
 * named is gone: removed, and the other carried for the name. */
START_TEST(delta_name_becomes_alias)
{
	struct xd_name name[] = {N("rc/web")};

	delta_moves(name, 1, one_vhost("rc/web", "V1", NULL),
		    one_vhost("rc/www", "V2", "rc/web"), "rc/web:body",
		    "rc/www:body,-rc/web");
}
END_TEST

/*
 * Rules D4, D8 and D10: a client holding a virtual host under its alias
 * subscribes to it by its name as well, just as it goes. The resource is
 * removed under its name, and that name is not also said not to exist:
 * Envoy refuses a name both in resources and in removed_resources.
 */
START_TEST(delta_held_by_alias_asked_by_name_as_it_goes)
{
	struct xd_table *t = one_vhost("rc/web", "V", "rc/www.example");
	struct xd_table *empty = xd_table_empty(XD_VIRTUAL_HOST);
	struct xd_name alias[] = {N("rc/www.example")}, name[] = {N("rc/web")};
	struct xd_request r = delta_req("", alias, 1, NULL, 0);
	struct xd_sub s;
	uint64_t nonce = 0;
	char *c;

	xd_sub_init(&s, 0, "test");
	xd_sub_delta_request(&s, &r, false, t, WALL_MS);
	c = delta_step(&s, t, &nonce);
	ck_assert_str_eq(c, "rc/web:body");
	free(c);
	delta_ack(&s, nonce);
	r = delta_req("", name, 1, NULL, 0);
	ck_assert_int_eq(xd_sub_delta_request(&s, &r, false, NULL, WALL_MS),
			 XD_SUB_REQUEST);
	c = delta_step(&s, empty, &nonce);
	ck_assert_str_eq(c, "-rc/web");
	free(c);
	delta_ack(&s, nonce);
	ck_assert_ptr_null(delta_step(&s, empty, &nonce));
	xd_sub_clear(&s);
	xd_table_unref(t);
	xd_table_unref(empty);
}
END_TEST

/* ---------------- the ledger ---------------- */

/* Equal states are one ledger: looked up once, compared by pointer;
 * anything owed once makes another state. */
START_TEST(ledger_interned)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A", "b=B");
	struct xd_name a = N("a");
	struct xd_nameset *set = xd_nameset_intern(&a, 1);
	size_t live = xd_ledger_live();
	struct xd_ledger *l1 = xd_ledger_make(t, false, set, NULL, NULL);
	struct xd_ledger *l2 = xd_ledger_make(t, false, set, NULL, NULL);
	struct xd_ledger *l3 = xd_ledger_make(t, false, set, set, NULL);
	struct xd_ledger *l4 = xd_ledger_make(t, true, set, NULL, NULL);
	struct xd_key ka = xd_key_of_name("a", 1), kb = xd_key_of_name("b", 1);

	ck_assert_ptr_eq(l1, l2);
	ck_assert_ptr_ne(l1, l3);
	ck_assert_ptr_ne(l1, l4);
	ck_assert_uint_ne(l1->id, l3->id);
	ck_assert_uint_eq(xd_ledger_live(), live + 3);
	ck_assert_uint_eq(l1->nheld, 1);
	ck_assert_ptr_eq(l1->held[0].entry, xd_table_find(t, "a", 1));
	ck_assert_ptr_eq(xd_ledger_entry(l1, &ka, false), l1->held[0].entry);
	ck_assert_ptr_null(xd_ledger_entry(l1, &kb, false));
	ck_assert_ptr_nonnull(xd_ledger_entry(l4, &kb, false));
	xd_ledger_unref(l1);
	xd_ledger_unref(l2);
	xd_ledger_unref(l3);
	xd_ledger_unref(l4);
	ck_assert_uint_eq(xd_ledger_live(), live);
	xd_nameset_unref(set);
	xd_table_unref(t);
}
END_TEST

/* Each key held is recorded with its kind, read once from the key and
 * the table, and the entry it stands for: which resource, which
 * variant (rule P1), or none (told it does not exist, rule D8). */
START_TEST(ledger_kinds)
{
#define C "xdstp://a/envoy.config.cluster.v3.Cluster/"
	static const char *const alias[] = {"other"};
	struct xd_table_builder *b = xd_table_builder_new(XD_CLUSTER);
	struct xd_name keys[] = {N("x"), N("other"), N("x\x1f" "env\x1d" "dev"),
				 N("x\x1f" "env\x1d" "qa"), N("gone"),
				 N(C "g/*"), N(C "g/m")};
	const struct xd_entry *variant;
	struct xd_nameset *set;
	struct xd_table *t;
	struct xd_ledger *l;
	const struct xd_held *h;

	ck_assert_int_eq(xd_table_builder_add(b, "x", (const uint8_t *)"X", 1,
					      NULL, 0, alias, 1, "s.yaml", 1,
					      NULL), 0);
	add_variant(b, "x", "XD", env_dev, sizeof(env_dev));
	add_entry(b, C "g/m", "M");
	t = xd_table_builder_finish(b);
	set = xd_nameset_intern(keys, sizeof(keys) / sizeof(keys[0]));
	l = xd_ledger_make(t, false, set, NULL, NULL);
	ck_assert_uint_eq(l->nheld, 7);

	h = xd_ledger_find(l, "x", 1);
	ck_assert_int_eq(h->kind, XD_NAME_PLAIN);
	ck_assert_ptr_eq(h->entry, xd_table_find(t, "x", 1));
	h = xd_ledger_find(l, "other", 5);
	ck_assert_int_eq(h->kind, XD_NAME_ALIAS);
	ck_assert_ptr_eq(h->entry, xd_table_find(t, "x", 1));
	h = xd_ledger_find(l, keys[2].data, keys[2].len);
	ck_assert_int_eq(h->kind, XD_NAME_LOCATOR);
	variant = h->entry;
	ck_assert_ptr_nonnull(variant);
	ck_assert_ptr_nonnull(variant->constraints.data);
	ck_assert_int_eq(memcmp(variant->msg.data, "XD", 2), 0);
	/* no variant accepts "qa": the plain resource (rule P1) */
	h = xd_ledger_find(l, keys[3].data, keys[3].len);
	ck_assert_int_eq(h->kind, XD_NAME_LOCATOR);
	ck_assert_ptr_eq(h->entry, xd_table_find(t, "x", 1));
	h = xd_ledger_find(l, "gone", 4);
	ck_assert_int_eq(h->kind, XD_NAME_PLAIN);
	ck_assert_ptr_null(h->entry);
	h = xd_ledger_find(l, keys[5].data, keys[5].len);
	ck_assert_int_eq(h->kind, XD_NAME_GLOB);
	ck_assert_ptr_null(h->entry);
	h = xd_ledger_find(l, keys[6].data, keys[6].len);
	ck_assert_int_eq(h->kind, XD_NAME_MEMBER);
	ck_assert_ptr_eq(h->entry, xd_table_find(t, keys[6].data, keys[6].len));
	/* held through its glob only, a member is covered in delta */
	ck_assert(xd_ledger_covers(l, C "g/n", strlen(C "g/n"), true));
	ck_assert(!xd_ledger_covers(l, C "g/n", strlen(C "g/n"), false));
	ck_assert_ptr_null(xd_ledger_find(l, "y", 1));

	xd_ledger_unref(l);
	xd_nameset_unref(set);
	xd_table_unref(t);
#undef C
}
END_TEST

/* Clients in the same state share one ledger, whatever path led there,
 * and so one body; an ACK is timed by the caller (the engine reads no
 * clock). */
START_TEST(ledger_shared_and_timed_by_caller)
{
	struct xd_table *t1 = TABLE(XD_ENDPOINT, "a=A", "b=B");
	struct xd_table *t2 = TABLE(XD_ENDPOINT, "a=A2", "b=B");
	struct xd_name ab[] = {N("a"), N("b")};
	struct xd_sub s[2];
	struct xd_body *b[2];
	struct xd_request r;
	unsigned long long before;

	for (int i = 0; i < 2; i++) {
		xd_sub_init(&s[i], (uint64_t)i, "EDS");
		r = sotw_req("", false, ab, 2);
		xd_sub_sotw_request(&s[i], &r, false, false, NULL, WALL_MS);
		b[i] = xd_sub_next(&s[i], t1, XD_FORM_SOTW, false);
		ck_assert_ptr_nonnull(b[i]);
		xd_sub_sent(&s[i], t1, 1, 0, WALL_MS);
		xd_body_unref(b[i]);
	}
	r = sotw_req("1", false, ab, 2);
	xd_sub_sotw_request(&s[0], &r, false, false, NULL, WALL_MS + 7);
	r = sotw_req("1", true, ab, 2);
	r.error_message = N("refused");
	xd_sub_sotw_request(&s[1], &r, false, false, NULL, WALL_MS + 9);
	/* ACK and NACK alike: both hold t1 (rule S4), one ledger */
	ck_assert_ptr_eq(s[0].ledger, s[1].ledger);
	ck_assert_ptr_eq(xd_sub_held(&s[0]), t1);
	ck_assert_int_eq(s[0].acked_at_ms, WALL_MS + 7);
	ck_assert_int_eq(s[1].nack_at_ms, WALL_MS + 9);
	ck_assert_int_eq(s[1].acked_at_ms, 0);

	before = xd_body_computed();
	b[0] = xd_sub_next(&s[0], t2, XD_FORM_SOTW, false);
	b[1] = xd_sub_next(&s[1], t2, XD_FORM_SOTW, false);
	ck_assert_ptr_nonnull(b[0]);
	ck_assert_ptr_eq(b[0], b[1]);
	ck_assert_uint_eq(xd_body_computed() - before, 1);
	ck_assert_uint_eq(b[0]->nresources, 1); /* "a" changed, "b" did not */
	for (int i = 0; i < 2; i++) {
		xd_body_unref(b[i]);
		xd_sub_clear(&s[i]);
	}
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

/* A response recorded as sent without a nonce is a bug of the caller:
 * the engine stops, naming the stream and the type. */
START_TEST(sub_sent_without_nonce_stops)
{
	struct xd_table *t = TABLE(XD_CLUSTER, "a=A");
	struct xd_request r = sotw_req("", false, NULL, 0);
	struct xd_sub s;

	xd_sub_init(&s, 42, "CDS");
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	xd_sub_sent(&s, t, 0, 0, WALL_MS);
}
END_TEST

/* The client answers a CDS response (`nonce`) at `now` (monotonic):
 * nothing waits after it, and the answers timed are `count` in all,
 * `sum` seconds together. */
static void answer_timed(struct xd_sub *s, struct xd_sessions_stats *st,
			 const char *nonce, bool nack, uint64_t now,
			 uint64_t count, double sum)
{
	struct xd_request r = sotw_req(nonce, nack, NULL, 0);
	uint64_t since;

	ck_assert_int_eq(xd_sub_sotw_request(s, &r, true, true, NULL, WALL_MS),
			 nack ? XD_SUB_NACK : XD_SUB_ACK);
	ck_assert(!xd_sub_pending_since(s, &since));
	xd_sessions_stats_answered(st, XD_CLUSTER, s, !nack, 0, now, WALL_MS);
	ck_assert_uint_eq(st->types[XD_CLUSTER].ack_delay.count, count);
	ck_assert_double_eq_tol(st->types[XD_CLUSTER].ack_delay.sum, sum, 1e-9);
}

/* Staleness (docs/engine.md): a type is pending since the send of the
 * response in flight, and only while it is; the caller's clocks date it
 * for operators, and stats time every answer and count timeouts. */
START_TEST(sub_pending_since_and_ack_delay)
{
	struct xd_table *t1 = TABLE(XD_CLUSTER, "a=A");
	struct xd_table *t2 = TABLE(XD_CLUSTER, "a=A2");
	struct xd_request r = sotw_req("", false, NULL, 0);
	struct xd_sessions_stats st;
	struct xd_client_view v = {.peer = "ipv4:10.0.0.7:1"};
	struct xd_body *b;
	struct xd_sub s;
	uint64_t since = 7;

	xd_sessions_stats_init(&st, 1);
	xd_sub_init(&s, 3, "CDS");
	ck_assert(!xd_sub_pending_since(&s, &since));
	xd_sub_sotw_request(&s, &r, true, true, NULL, WALL_MS);
	/* subscribed, nothing sent: pending on xdsd, not on the client */
	ck_assert(!xd_sub_pending_since(&s, &since));
	ck_assert_uint_eq(since, 7);
	b = xd_sub_next(&s, t1, XD_FORM_SOTW, true);
	ck_assert_ptr_nonnull(b);
	xd_body_unref(b);
	xd_sub_sent(&s, t1, 1, 5000, WALL_MS - 7000);
	ck_assert(xd_sub_pending_since(&s, &since));
	ck_assert_uint_eq(since, 5000);

	/* the view: its age at mono 12500 is 7.5 s; its Unix time is the
	 * one the send was given, whatever the wall clock does since */
	xd_client_view_type(&v, &s, t1, "CDS", NULL);
	ck_assert_int_eq(v.types[0].pending_since_ms, 0);
	xd_client_view_ages(&v, 12500);
	ck_assert_uint_eq(v.types[0].pending_ms, 7500);
	ck_assert_int_eq(v.types[0].pending_since_ms, WALL_MS - 7000);
	ck_assert_uint_eq(xd_client_view_oldest(&v), 7500);

	/* a timeout is marked once per response; the next send clears it */
	s.ack_overdue = true;
	xd_sessions_stats_ack_timeout(&st, XD_CLUSTER);
	ck_assert_uint_eq(st.types[XD_CLUSTER].ack_timeouts, 1);

	/* the ACK: no longer pending; its delay observed */
	answer_timed(&s, &st, "1", false, 5250, 1, 0.25);
	v.ntypes = 0;
	xd_client_view_type(&v, &s, t1, "CDS", NULL);
	xd_client_view_ages(&v, 12500);
	ck_assert_uint_eq(v.types[0].pending_ms, 0);
	ck_assert_int_eq(v.types[0].pending_since_ms, 0);
	ck_assert_uint_eq(xd_client_view_oldest(&v), 0);

	/* a NACK answers too: timed alike, and not pending after it */
	b = xd_sub_next(&s, t2, XD_FORM_SOTW, true);
	ck_assert_ptr_nonnull(b);
	xd_body_unref(b);
	xd_sub_sent(&s, t2, 2, 6000, WALL_MS);
	ck_assert(!s.ack_overdue);
	ck_assert(xd_sub_pending_since(&s, &since));
	ck_assert_uint_eq(since, 6000);
	answer_timed(&s, &st, "2", true, 8000, 2, 2.25);
	ck_assert_uint_eq(st.types[XD_CLUSTER].nacks, 1);

	xd_sub_clear(&s);
	xd_sessions_stats_free(&st);
	xd_table_unref(t1);
	xd_table_unref(t2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("engine");
	TCase *names = tcase_create("nameset"), *tables = tcase_create("table");
	TCase *sotw = tcase_create("sotw"), *delta = tcase_create("delta");
	TCase *memory = tcase_create("memory"), *views = tcase_create("view");
	TCase *ledger = tcase_create("ledger");

	tcase_add_checked_fixture(names, setup, teardown);
	tcase_add_test(names, nameset_interned);
	tcase_add_test(names, nameset_union_minus);
	suite_add_tcase(s, names);

	tcase_add_checked_fixture(tables, setup, teardown);
	tcase_add_test(tables, table_versions_are_content_hashes);
	tcase_add_test(tables, table_duplicates_refused);
	tcase_add_test(tables, table_wire_forms);
	tcase_add_test(tables, table_union_keeps_old_entries);
	suite_add_tcase(s, tables);

	tcase_add_checked_fixture(sotw, setup, teardown);
	tcase_add_test(sotw, sotw_wildcard_full_state);
	tcase_add_test(sotw, sotw_explicit_changes_only);
	tcase_add_test(sotw, sotw_nack_and_stale);
	tcase_add_test(sotw, sotw_wildcard_forms);
	tcase_add_test(sotw, sotw_resume_on_reconnect);
	tcase_add_test(sotw, bodies_shared_between_clients);
	tcase_add_test(sotw, sotw_wrapped_form);
	tcase_add_test(sotw, heartbeat_bodies_shared);
	tcase_add_test(sotw, sotw_two_variants_one_name);
	suite_add_tcase(s, sotw);

	tcase_add_checked_fixture(delta, setup, teardown);
	tcase_add_test(delta, delta_wildcard_changes_and_removals);
	tcase_add_test(delta, delta_wildcard_left_forgets_its_resources);
	tcase_add_test(delta, delta_explicit_rules);
	tcase_add_test(delta, delta_wildcard_plus_missing_name);
	tcase_add_test(delta, delta_locators_missing_once);
	tcase_add_test(delta, delta_locator_moves_to_variant_plain_stays);
	tcase_add_test(delta, delta_locator_value_is_no_glob);
	tcase_add_test(delta, delta_deleted_is_removed_only);
	tcase_add_test(delta, delta_initial_versions);
	tcase_add_test(delta, delta_stale_nonce_still_subscribes);
	tcase_add_test(delta, delta_alias_subscription);
	tcase_add_test(delta, delta_alias_and_name_removed_once);
	tcase_add_loop_test(delta, delta_alias_gone_resource_stays, 0, 2);
	tcase_add_test(delta, delta_alias_moves_resource_goes);
	tcase_add_test(delta, delta_name_becomes_alias);
	tcase_add_test(delta, delta_held_by_alias_asked_by_name_as_it_goes);
	suite_add_tcase(s, delta);

	tcase_add_checked_fixture(memory, setup, teardown);
	tcase_add_test(memory, memo_survives_churn);
	tcase_add_test(memory, memo_bounded_in_bytes);
	tcase_add_test(memory, memo_transition_goes_with_old_table);
	suite_add_tcase(s, memory);

	tcase_add_checked_fixture(views, setup, teardown);
	tcase_add_test(views, view_shows_what_an_identity_may_see);
	tcase_add_test(views, view_shared_and_versioned);
	tcase_add_test(views, table_same_includes_restrictions);
	tcase_add_test(views, view_restricted_is_missing);
	tcase_add_test(views, view_bodies_shared_across_identities);
	tcase_add_test(views, snapshot_view);
	tcase_add_test(views, views_go_with_their_clients);
	suite_add_tcase(s, views);

	tcase_add_checked_fixture(ledger, setup, teardown);
	tcase_add_test(ledger, ledger_interned);
	tcase_add_test(ledger, ledger_kinds);
	tcase_add_test(ledger, ledger_shared_and_timed_by_caller);
	tcase_add_test(ledger, sub_pending_since_and_ack_delay);
	tcase_add_test_raise_signal(ledger, sub_sent_without_nonce_stops, SIGABRT);
	suite_add_tcase(s, ledger);
	return xdtest_run(s);
}
