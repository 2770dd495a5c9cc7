/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdstp:// names (rule X1) and glob collections (rule X2), against the
 * real xdsd over gRPC: any spelling of a name finds the resource, which
 * is served under the name's canonical form, and a delta subscription
 * to a glob collection yields its members as the snapshot changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

#define AUTHORITY "control.example"

/* "xdstp://control.example/<the type's message>/<id>[?<params>]" */
static const char *xname(enum pu_type t, const char *id, const char *params)
{
	const char *url = pu_type_url(t), *slash = strrchr(url, '/');
	char *n;

	PU_ASSERT(asprintf(&n, "xdstp://" AUTHORITY "/%s/%s%s%s", slash + 1, id,
			   params != NULL ? "?" : "",
			   params != NULL ? params : "") > 0,
		  "asprintf");
	return n; /* a short-lived test process: not freed */
}

static void expect_lists(const struct pu_resp *r, const char *names,
			 const char *missing, const char *removed)
{
	const char *want[3] = {names, missing, removed};
	char *got[3] = {pu_names(r), pu_missing(r), pu_removed(r)};
	static const char *const what[3] = {"resources", "missing", "removed"};

	for (int i = 0; i < 3; i++) {
		PU_ASSERT(strcmp(got[i], want[i]) == 0, "%s [%s], expected [%s]",
			  what[i], got[i], want[i]);
		free(got[i]);
	}
}

static void ack_free(struct pu_client *cl, struct pu_resp *r)
{
	pu_ack(cl, r);
	pu_resp_free(r);
}

static char *join2(const char *a, const char *b)
{
	char *s;

	ck_assert(asprintf(&s, "%s,%s", strcmp(a, b) < 0 ? a : b,
			   strcmp(a, b) < 0 ? b : a) > 0);
	return s;
}

/* ---------------- rule X1 ---------------- */

/* rule X1: a resource named by an xdstp name is found by any spelling of
 * it (parameters in another order, percent-encoding of another form,
 * the scheme in capitals) and served under its canonical form, once
 * even when the request names it twice (rule S11). */
START_TEST(x1_any_spelling_finds_it)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	/* as the snapshot writes it, and as xdsd serves it */
	const char *written = xname(t, "res/a", "z=1&b=%41");
	const char *canon = xname(t, "res/a", "b=A&z=1");
	const char *other = xname(t, "res/%61", "z=%31&b=A");
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	char *upper = strdup(other);

	memcpy(upper, "XDSTP", 5);
	pu_snap_put(s, t, written, 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, other, upper, NULL);
	r = pu_expect(cl, t);
	expect_lists(r, canon, "", "");
	ack_free(cl, r);
	/* a change reaches the client under the same name */
	pu_snap_put(s, t, written, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	expect_lists(r, canon, "", "");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule X1: a delta client unsubscribes by another spelling of the name
 * it subscribed with; a name of another type, or not well-formed, is
 * a name that does not exist (rule D8), under the name as sent when it
 * has no canonical form. */
START_TEST(x1_delta_names_compare_canonical)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	enum pu_type other_type = t == PU_CDS ? PU_LDS : PU_CDS;
	const char *a = xname(t, "a", "p=1&q=2");
	const char *wrong = xname(other_type, "a", "q=2&p=1");
	const char *wrong_canon = xname(other_type, "a", "p=1&q=2");
	const char *bad = "xdstp://" AUTHORITY "/no-id";
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	char *missing = join2(bad, wrong_canon);

	pu_snap_put(s, t, a, 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, xname(t, "a", "q=2&p=1"), wrong, bad, NULL);
	r = pu_expect(cl, t);
	/* the names that resolve to nothing: said not to exist (rule D8) */
	expect_lists(r, a, "", missing);
	ack_free(cl, r);
	pu_unsub(cl, t, xname(t, "%61", "q=2&p=%31"), NULL);
	/* unsubscribed: its deletion is not said */
	pu_snap_del(s, t, a);
	pu_snap_put(s, t, xname(t, "b", NULL), 1, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule X1: references between resources compare canonical names: a
 * listener names its route configuration with the parameters in
 * another order, the snapshot loads, and the client that asks for the
 * route configuration by the listener's spelling gets it. */
START_TEST(x1_reference_resolves)
{
	const struct pu_combo *c = pu_combo(_i);
	const char *l = xname(PU_LDS, "ingress/l1", NULL);
	const char *rc = xname(PU_RDS, "r1", "shard=2&region=eu");
	const char *rc_canon = xname(PU_RDS, "r1", "region=eu&shard=2");
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	pu_snap_put(s, PU_LDS, l, 1, rc);
	pu_snap_put(s, PU_RDS, rc_canon, 1, NULL);
	e = pu_env_start(s);
	cl = pu_open(e, c->delta, true, PU_LDS);
	pu_sub(cl, PU_LDS, l, NULL);
	r = pu_expect(cl, PU_LDS);
	expect_lists(r, l, "", "");
	ack_free(cl, r);
	pu_sub(cl, PU_RDS, rc, NULL);
	r = pu_expect(cl, PU_RDS);
	expect_lists(r, rc_canon, "", "");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule X2 ---------------- */

/* rule X2: a glob collection yields every resource directly under its
 * path whose context parameters are the glob's: not those deeper, nor
 * with other parameters or none, nor under another path. */
START_TEST(x2_glob_yields_members)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_new();
	const char *a = xname(t, "coll/a", "k=v"), *b = xname(t, "coll/b", "k=v");
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	pu_snap_put(s, t, a, 1, NULL);
	pu_snap_put(s, t, b, 1, NULL);
	pu_snap_put(s, t, xname(t, "coll/c", NULL), 1, NULL);
	pu_snap_put(s, t, xname(t, "coll/d", "k=v&x=y"), 1, NULL);
	pu_snap_put(s, t, xname(t, "coll/deep/e", "k=v"), 1, NULL);
	pu_snap_put(s, t, xname(t, "other/f", "k=v"), 1, NULL);
	pu_snap_put(s, t, xname(t, "collx", "k=v"), 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, xname(t, "coll/*", "k=v"), NULL);
	r = pu_expect(cl, t);
	expect_lists(r, join2(a, b), "", "");
	ack_free(cl, r);
	/* a change outside the collection sends nothing */
	pu_snap_put(s, t, xname(t, "coll/c", NULL), 2, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule X2 over SotW, as Envoy subscribes to a glob collection there too
 * (lds_resources_locator with a SotW ADS stream): the members, and the
 * members as they come and go; for listeners and clusters each response
 * holds every member (rule S8), for the other types what changed (rule
 * S9: SotW cannot say a member went).
 */
START_TEST(x2_sotw_glob_members)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	bool whole = pu_full_state(t);
	struct pu_snap *s = pu_snap_new();
	const char *a = xname(t, "coll/a", NULL), *b = xname(t, "coll/b", NULL);
	const char *n = xname(t, "coll/new", NULL), *other = xname(t, "other/c", NULL);
	char *ab = join2(a, b), *bn = join2(b, n), *abn;
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	ck_assert(asprintf(&abn, "%s,%s", ab, n) > 0);
	pu_snap_put(s, t, a, 1, NULL);
	pu_snap_put(s, t, b, 1, NULL);
	pu_snap_put(s, t, other, 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, xname(t, "coll/*", NULL), NULL);
	r = pu_expect(cl, t);
	expect_lists(r, ab, "", "");
	ack_free(cl, r);
	pu_snap_put(s, t, n, 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	expect_lists(r, whole ? abn : n, "", "");
	ack_free(cl, r);
	pu_snap_put(s, t, other, 2, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_snap_del(s, t, a);
	pu_env_set(e, s);
	if (whole) {
		r = pu_expect(cl, t);
		expect_lists(r, bn, "", "");
		ack_free(cl, r);
	} else {
		pu_expect_none(cl, 0);
	}
	free(ab);
	free(bn);
	free(abn);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule X2: the collection stays live: a new member is sent, a changed
 * one is sent alone, a deleted one is in removed_resources. */
START_TEST(x2_glob_stays_live)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_new();
	const char *a = xname(t, "coll/a", NULL), *b = xname(t, "coll/b", NULL);
	const char *n = xname(t, "coll/new", NULL);
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	pu_snap_put(s, t, a, 1, NULL);
	pu_snap_put(s, t, b, 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, xname(t, "coll/*", NULL), NULL);
	r = pu_expect(cl, t);
	expect_lists(r, join2(a, b), "", "");
	ack_free(cl, r);
	pu_snap_put(s, t, n, 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	expect_lists(r, n, "", "");
	ack_free(cl, r);
	pu_snap_put(s, t, b, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	expect_lists(r, b, "", "");
	ack_free(cl, r);
	pu_snap_del(s, t, a);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	expect_lists(r, "", "", a);
	ack_free(cl, r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule X2: an empty collection is answered with the glob's name
 * (canonical) in removed_resources, once; it is said again when the
 * collection becomes empty again. */
START_TEST(x2_empty_glob_removed)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_new();
	const char *glob = xname(t, "empty/*", "b=2&a=1");
	const char *glob_canon = xname(t, "empty/*", "a=1&b=2");
	const char *m = xname(t, "empty/m", "a=1&b=2");
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	pu_snap_put(s, t, xname(t, "elsewhere", NULL), 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, glob, NULL);
	r = pu_expect(cl, t);
	expect_lists(r, "", "", glob_canon);
	ack_free(cl, r);
	/* not said again while it stays empty */
	pu_snap_put(s, t, xname(t, "elsewhere", NULL), 2, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_snap_put(s, t, m, 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	expect_lists(r, m, "", "");
	ack_free(cl, r);
	pu_snap_del(s, t, m);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	expect_lists(r, "", "", join2(m, glob_canon));
	ack_free(cl, r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule X2 with rule D7: a client reconnecting with the versions of the
 * members it holds gets only what changed, and the deleted member in
 * removed_resources. */
START_TEST(x2_glob_reconnect_initial_versions)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_new();
	const char *a = xname(t, "g/a", NULL), *b = xname(t, "g/b", NULL);
	const char *gone = xname(t, "g/gone", NULL);
	const char *glob = xname(t, "g/*", NULL);
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	char va[17], vb[17];

	pu_snap_put(s, t, a, 1, NULL);
	pu_snap_put(s, t, b, 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, glob, NULL);
	r = pu_expect(cl, t);
	expect_lists(r, join2(a, b), "", "");
	snprintf(va, sizeof(va), "%s", pu_find(r, a)->version);
	snprintf(vb, sizeof(vb), "%s", pu_find(r, b)->version);
	pu_resp_free(r);
	pu_client_free(cl);

	pu_snap_put(s, t, b, 2, NULL);
	pu_env_set(e, s);
	cl = pu_connect(e, c);
	{
		const char *names[] = {glob};
		const char *init[] = {a, b, gone};
		const char *vers[] = {va, vb, "0123456789abcdef"};
		struct pu_req q = {.type = t, .names = names, .nnames = 1,
				   .init_names = init, .init_versions = vers,
				   .ninit = 3};

		pu_send(cl, &q);
	}
	r = pu_expect(cl, t);
	expect_lists(r, b, "", gone);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_xdstp(Suite *s, bool subset)
{
	static const struct pu_combo *sotw, *delta, *coll, *sotw_coll, *ads;
	static size_t nsotw, ndelta, ncoll, nsotw_coll, nads;
	/* virtual hosts keep their "<route configuration>/<name>" names */
	unsigned named = PU_ALL_TYPES & ~PU_BIT(PU_VHDS);
	unsigned collections = PU_BIT(PU_LDS) | PU_BIT(PU_CDS) | PU_BIT(PU_EDS) |
			       PU_BIT(PU_LEDS);

	sotw = pu_combos(false, named, &nsotw);
	delta = pu_combos(true, named, &ndelta);
	coll = pu_combos(true, collections, &ncoll);
	sotw_coll = pu_combos(false, collections, &nsotw_coll);
	ads = pu_combos(true, PU_BIT(PU_LDS), &nads);
	if (subset) {
		pu_add_tests(s, "X2", x2_glob_stays_live,
			     pu_pick(coll, ncoll, "delta ADS EDS"), 1);
		return;
	}
	pu_add_tests(s, "X1", x1_any_spelling_finds_it, sotw, nsotw);
	pu_add_tests(s, "X1", x1_any_spelling_finds_it, delta, ndelta);
	pu_add_tests(s, "X1", x1_delta_names_compare_canonical, delta, ndelta);
	pu_add_tests(s, "X1", x1_reference_resolves, ads, nads);
	pu_add_tests(s, "X2", x2_glob_yields_members, coll, ncoll);
	pu_add_tests(s, "X2", x2_glob_stays_live, coll, ncoll);
	pu_add_tests(s, "X2", x2_empty_glob_removed, coll, ncoll);
	pu_add_tests(s, "X2", x2_glob_reconnect_initial_versions, coll, ncoll);
	pu_add_tests(s, "X2", x2_sotw_glob_members, sotw_coll, nsotw_coll);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("xdstp");

	xdtest_tmpdir();
	pu_register_xdstp(s, false);
	return pu_run(s);
}
#endif
