/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Time to live and heartbeats (rule L1 of docs/protocol.md), against the
 * real xdsd over gRPC on loopback: TTLs only to clients that announce
 * xds.config.supports-resource-ttl (in SotW also wrapped resources, rule
 * L2), heartbeats before they run out, and a TTL changed or dropped by a
 * reload resent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "xdtest.h"

#define WRAPPED "xds.config.supports-resource-in-sotw"
#define TTL "xds.config.supports-resource-ttl"
#define BOTH WRAPPED "," TTL

static const struct pu_combo *sotw_all, *delta_all, *sotw_some, *delta_some;
static size_t nsotw_all, ndelta_all, nsotw_some, ndelta_some;

/* What a client must announce to take TTLs on this combo's method. */
static const char *features(const struct pu_combo *c)
{
	return c->delta ? TTL : BOTH;
}

/* "a" with a TTL of `ms` and "b" without one. */
static struct pu_snap *snap_ab(enum pu_type t, unsigned ms)
{
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);

	pu_snap_ttl(s, t, pu_name(t, "a"), ms);
	return s;
}

static const struct pu_res *must_find(const struct pu_resp *r, const char *name)
{
	const struct pu_res *x = pu_find(r, name);

	PU_ASSERT(x != NULL, "'%s' not in the response (%s)", name, pu_names(r));
	return x;
}

/* rule L1: a TTL goes in the Resource of a client that takes TTLs, and
 * nowhere else: not to clients without the feature, nor in SotW to
 * clients that do not take wrapped resources. */
START_TEST(l1_ttl_only_for_the_feature)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = snap_ab(t, 2500);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *with = pu_connect(e, c), *without = pu_connect(e, c);
	struct pu_client *half = c->delta ? NULL : pu_connect(e, c);
	struct pu_resp *r;

	pu_client_node(with, "node-ttl", "test", features(c));
	pu_client_node(without, "node-plain", "test", c->delta ? NULL : WRAPPED);
	pu_sub(with, t, a, b, NULL);
	pu_sub(without, t, a, b, NULL);
	r = pu_expect(with, t);
	PU_ASSERT_NAMES(r, t, "a", "b");
	PU_ASSERT(must_find(r, a)->ttl_ms == 2500, "'%s' TTL %ld ms, expected 2500",
		  a, must_find(r, a)->ttl_ms);
	PU_ASSERT(must_find(r, a)->has_body, "'%s' sent without its body", a);
	PU_ASSERT(must_find(r, b)->ttl_ms == -1, "'%s' has a TTL it was not given", b);
	pu_resp_free(r);
	r = pu_expect(without, t);
	PU_ASSERT_NAMES(r, t, "a", "b");
	PU_ASSERT(must_find(r, a)->ttl_ms == -1,
		  "a TTL for a client that does not take TTLs");
	pu_resp_free(r);
	if (half != NULL) {
		/* TTLs without wrapped resources: SotW has no place for them */
		pu_client_node(half, "node-half", "test", TTL);
		pu_sub(half, t, a, b, NULL);
		r = pu_expect(half, t);
		PU_ASSERT(!must_find(r, a)->wrapped && must_find(r, a)->ttl_ms == -1,
			  "a TTL in SotW to a client that does not take wrapped resources");
		pu_resp_free(r);
		pu_client_free(half);
	}
	pu_client_free(with);
	pu_client_free(without);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* A heartbeat: the version the client holds, and only the resources with
 * a TTL, each with its version and TTL and no body. */
static void assert_heartbeat(const struct pu_resp *r, const struct pu_resp *first,
			     const char *a, unsigned ms)
{
	const struct pu_res *x, *was = must_find(first, a);

	PU_ASSERT(strcmp(r->version, first->version) == 0,
		  "heartbeat version '%s', the client holds '%s'", r->version,
		  first->version);
	PU_ASSERT(r->nres == 1, "heartbeat of %zu resources (%s), expected '%s' only",
		  r->nres, pu_names(r), a);
	PU_ASSERT(r->nremoved == 0, "a heartbeat removes %s", pu_removed(r));
	x = must_find(r, a);
	PU_ASSERT(!x->has_body, "a heartbeat carries the body of '%s'", a);
	PU_ASSERT(strcmp(x->version, was->version) == 0,
		  "heartbeat of '%s' at version '%s', it holds '%s'", a,
		  x->version, was->version);
	PU_ASSERT(x->ttl_ms == (long)ms, "heartbeat TTL %ld ms, expected %u",
		  x->ttl_ms, ms);
}

/* rule L1: a client holding a resource with a TTL is sent heartbeats,
 * one after another, for as long as nothing changes; a client that does
 * not take TTLs gets none. When each is due (half the TTL after the
 * last refresh, so before the TTL runs out) is the engine's arithmetic,
 * checked without a clock in tests/unit/check_engine.c
 * (heartbeat_bodies_shared); here the heartbeats are waited for, not
 * timed. */
START_TEST(l1_heartbeats_before_expiry)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = snap_ab(t, 1000);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c), *plain = pu_connect(e, c);
	struct pu_resp *first, *r;

	pu_client_node(cl, "node-ttl", "test", features(c));
	pu_sub(cl, t, a, b, NULL);
	pu_sub(plain, t, a, b, NULL);
	first = pu_expect(cl, t);
	pu_ack(cl, first);
	r = pu_expect(plain, t);
	pu_ack(plain, r);
	pu_resp_free(r);
	for (int beat = 0; beat < 2; beat++) {
		r = pu_recv(cl, 1000 + pu_wait_ms());
		PU_ASSERT(r != NULL, "no heartbeat %d of a 1 s TTL within %d ms",
			  beat + 1, 1000 + pu_wait_ms());
		assert_heartbeat(r, first, a, 1000);
		pu_ack(cl, r);
		pu_resp_free(r);
	}
	pu_expect_none(plain, 1200);
	pu_resp_free(first);
	pu_client_free(cl);
	pu_client_free(plain);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule L1: a reload that changes a resource's TTL resends it with the new
 * one, and one that drops the TTL resends it without (that is how the
 * client learns of it); the body stayed the same both times. */
START_TEST(l1_ttl_changed_or_dropped_is_resent)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = snap_ab(t, 30000);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r, *r2;

	pu_client_node(cl, "node-ttl", "test", features(c));
	pu_sub(cl, t, a, b, NULL);
	r = pu_expect(cl, t);
	pu_ack(cl, r);
	pu_snap_ttl(s, t, a, 60000);
	pu_env_set(e, s);
	r2 = pu_expect(cl, t);
	PU_ASSERT(must_find(r2, a)->ttl_ms == 60000, "TTL %ld ms after the reload, expected 60000",
		  must_find(r2, a)->ttl_ms);
	PU_ASSERT(strcmp(must_find(r2, a)->version, must_find(r, a)->version) != 0,
		  "a new TTL under the same resource version");
	PU_ASSERT(must_find(r2, a)->len == must_find(r, a)->len &&
			  memcmp(must_find(r2, a)->body, must_find(r, a)->body,
				 must_find(r, a)->len) == 0,
		  "the body changed with the TTL");
	pu_ack(cl, r2);
	pu_resp_free(r);
	pu_snap_ttl(s, t, a, 0);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT(must_find(r, a)->ttl_ms == -1, "TTL %ld ms after it was dropped",
		  must_find(r, a)->ttl_ms);
	PU_ASSERT(must_find(r, a)->has_body, "'%s' resent without its body", a);
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_resp_free(r2);
	pu_env_sync(e);
	pu_expect_none(cl, 800);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rules L1 and X2: the members of a glob collection a client holds get
 * their heartbeats as names subscribed one by one do. */
START_TEST(l1_heartbeats_for_glob_members)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *url = pu_type_url(t), *msg = strrchr(url, '/') + 1;
	char a[256], b[256], glob[256];
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *first, *r;

	snprintf(a, sizeof(a), "xdstp://ttl.example/%s/fleet/a", msg);
	snprintf(b, sizeof(b), "xdstp://ttl.example/%s/fleet/b", msg);
	snprintf(glob, sizeof(glob), "xdstp://ttl.example/%s/fleet/*", msg);
	pu_snap_put(s, t, a, 1, NULL);
	pu_snap_put(s, t, b, 1, NULL);
	pu_snap_ttl(s, t, a, 1000);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_client_node(cl, "node-ttl", "test", TTL);
	pu_sub(cl, t, glob, NULL);
	first = pu_expect(cl, t);
	PU_ASSERT(first->nres == 2, "the collection sent %zu members (%s)",
		  first->nres, pu_names(first));
	pu_ack(cl, first);
	r = pu_recv(cl, 1000 + pu_wait_ms());
	PU_ASSERT(r != NULL, "no heartbeat for a member of a glob of a 1 s TTL within %d ms",
		  1000 + pu_wait_ms());
	assert_heartbeat(r, first, a, 1000);
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_resp_free(first);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ttl");
	unsigned some = PU_BIT(PU_CDS) | PU_BIT(PU_EDS) | PU_BIT(PU_RDS);

	xdtest_tmpdir();
	sotw_all = pu_combos(false, PU_ALL_TYPES, &nsotw_all);
	delta_all = pu_combos(true, PU_ALL_TYPES, &ndelta_all);
	sotw_some = pu_combos(false, some, &nsotw_some);
	delta_some = pu_combos(true, some, &ndelta_some);
	pu_add_tests(s, "L1", l1_ttl_only_for_the_feature, sotw_all, nsotw_all);
	pu_add_tests(s, "L1", l1_ttl_only_for_the_feature, delta_all, ndelta_all);
	pu_add_tests(s, "L1", l1_heartbeats_before_expiry, sotw_some, nsotw_some);
	pu_add_tests(s, "L1", l1_heartbeats_before_expiry, delta_some, ndelta_some);
	pu_add_tests(s, "L1", l1_ttl_changed_or_dropped_is_resent, sotw_some, nsotw_some);
	pu_add_tests(s, "L1", l1_ttl_changed_or_dropped_is_resent, delta_some, ndelta_some);
	pu_add_tests(s, "L1", l1_heartbeats_for_glob_members, delta_some, ndelta_some);
	return pu_run(s);
}
