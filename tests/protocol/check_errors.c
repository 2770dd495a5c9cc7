/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-resource errors (rules N1-N3), against the real xdsd over gRPC: a
 * name a client asks for that the snapshot lacks is said once, as a
 * ResourceError NOT_FOUND in resource_errors (SotW and delta), one its
 * identity may not be served as PERMISSION_DENIED; the response still
 * carries every other resource it owes, and never names in an error
 * what it carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

#define NOT_FOUND 5
#define PERMISSION_DENIED 7

/* The combos the rules are run for: every type and method, but virtual
 * hosts, which are asked for by alias and say a missing one their own
 * way (rule D10; n3_alias_says_it_its_own_way). */
static const struct pu_combo *sotw, *delta, *vhds;
static size_t nsotw, ndelta, nvhds;

/* `r` says `name` is `code` (its message naming it, quoted), and says
 * nothing else in resource_errors. */
static void expect_error(const struct pu_resp *r, const char *name, int code)
{
	const char *msg = NULL;
	int got = pu_error_of(r, name, &msg);
	char *all = pu_errors(r), *quoted;

	PU_ASSERT(strcmp(all, name) == 0, "resource_errors [%s], expected [%s]",
		  all, name);
	PU_ASSERT(got == code, "the error of '%s' has code %d, expected %d",
		  name, got, code);
	ck_assert(asprintf(&quoted, "'%s'", name) > 0);
	PU_ASSERT(strstr(msg, quoted) != NULL && strncmp(msg, "xdsd", 4) == 0,
		  "the error of '%s' says \"%s\"", name, msg);
	free(quoted);
	free(all);
}

static void expect_no_errors(const struct pu_resp *r)
{
	char *all = pu_errors(r);

	PU_ASSERT(r->nerrors == 0, "resource_errors [%s], expected none", all);
	free(all);
}

/* Delta keeps saying a missing name as rule D8 does, for the clients
 * that do not read resource_errors. */
static void expect_removed(const struct pu_resp *r, const char *name)
{
	char *got = pu_removed(r);

	PU_ASSERT(strcmp(got, name) == 0, "removed_resources [%s], expected [%s]",
		  got, name);
	free(got);
}

/* rule N1: a name that does not exist is a NOT_FOUND resource error,
 * beside the resources the response carries: in LDS and CDS every other
 * subscribed one (rule S8), in delta beside its removal (rule D8). */
START_TEST(n1_missing_is_not_found)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b"),
		   *z = pu_name(t, "z");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, b, NULL);
	r = pu_expect(cl, t);
	expect_no_errors(r);
	pu_ack(cl, r);
	pu_resp_free(r);
	/* delta: a and b subscribed again would be sent again (rule D5) */
	if (c->delta)
		pu_sub(cl, t, z, NULL);
	else
		pu_sub(cl, t, a, b, z, NULL);
	r = pu_expect(cl, t);
	expect_error(r, z, NOT_FOUND);
	if (pu_full_state(t) && !c->delta)
		PU_ASSERT_NAMES(r, t, "a", "b");
	else
		PU_ASSERT(r->nres == 0, "%zu resources, expected none", r->nres);
	if (c->delta)
		expect_removed(r, z);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule N1: said once: the client's answer, a later change of another
 * resource and a reload that changes nothing for it do not say it
 * again; once the name exists it is sent (rule S10), without an error. */
START_TEST(n1_said_once)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *z = pu_name(t, "z");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, z, NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	expect_error(r, z, NOT_FOUND);
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_env_sync(e);
	pu_expect_none(cl, 0);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	expect_no_errors(r);
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, t, z, 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	if (pu_full_state(t) && !c->delta)
		PU_ASSERT_NAMES(r, t, "a", "z");
	else
		PU_ASSERT_NAMES(r, t, "z");
	expect_no_errors(r);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule N1: a client that stops asking for the name and asks again is
 * told again (SotW: a list without it, then with it; delta:
 * unsubscribing and subscribing again, rule D5). */
START_TEST(n1_asked_again_told_again)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *z = pu_name(t, "z");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, z, NULL);
	r = pu_expect(cl, t);
	expect_error(r, z, NOT_FOUND);
	pu_ack(cl, r);
	pu_resp_free(r);
	if (c->delta)
		pu_unsub(cl, t, z, NULL);
	else
		pu_sub(cl, t, a, NULL);
	/* what it is served did not change (rule S13) */
	pu_env_sync(e);
	pu_expect_none(cl, 0);
	if (c->delta)
		pu_sub(cl, t, z, NULL);
	else
		pu_sub(cl, t, a, z, NULL);
	r = pu_expect(cl, t);
	expect_error(r, z, NOT_FOUND);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule N1: a response says at most 1000 names do not exist: a client
 * may ask for far more (max_names_per_stream), and a response that said
 * them all would be larger than clients take. */
START_TEST(n1_errors_bounded)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	static char buf[1500][16];
	const char *names[1500];
	struct pu_resp *r;

	for (int i = 0; i < 1500; i++) {
		snprintf(buf[i], sizeof(buf[i]), "z-%04d", i);
		names[i] = pu_name(t, buf[i]);
	}
	pu_subv(cl, t, names, 1500);
	r = pu_expect(cl, t);
	PU_ASSERT(r->nerrors == 1000, "%zu resource errors, expected 1000",
		  r->nerrors);
	/* the first in name order */
	PU_ASSERT(pu_error_of(r, pu_name(t, "z-0000"), NULL) == NOT_FOUND &&
			  pu_error_of(r, pu_name(t, "z-0999"), NULL) == NOT_FOUND &&
			  pu_error_of(r, pu_name(t, "z-1000"), NULL) == -1,
		  "not the first 1000 names");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule N2: a name whose resource its "@allow" keeps from the client's
 * identity (the tests' clients prove none) is PERMISSION_DENIED, with a
 * message that says why; the client is served what it may have. */
START_TEST(n2_withheld_is_permission_denied)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *w = pu_name(t, "w");
	struct pu_snap *s = pu_snap_of(t, "a", "w", NULL);
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	const char *msg = NULL;

	pu_snap_allow(s, t, w, "spiffe://example.org/ns/prod/*");
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, t, a, w, NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	expect_error(r, w, PERMISSION_DENIED);
	(void)pu_error_of(r, w, &msg);
	PU_ASSERT(strstr(msg, "@allow") != NULL, "the error of '%s' says \"%s\"",
		  w, msg);
	if (c->delta)
		expect_removed(r, w);
	pu_ack(cl, r);
	pu_resp_free(r);
	/* a reload that lifts the restriction serves it */
	pu_snap_allow(s, t, w, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	if (pu_full_state(t) && !c->delta)
		PU_ASSERT_NAMES(r, t, "a", "w");
	else
		PU_ASSERT_NAMES(r, t, "w");
	expect_no_errors(r);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule N3: an error never names what the response carries: of two
 * locators of one name, one picking a variant and one picking nothing,
 * the variant goes and no error (rule P1 says the other missing under
 * that very name). */
START_TEST(n3_never_beside_its_resource)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	static const char *const prod[] = {"env", "prod"};
	static const char *const dev[] = {"env", "dev"};
	const struct pu_locator locs[] = {{"r", prod, 1}, {"r", dev, 1}};
	struct pu_req q = {.type = t, .locators = locs, .nlocators = 2};
	char *got;

	pu_snap_variant(s, t, "r", "prod", 1, NULL,
			"{constraint: {key: env, value: prod}}");
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	/* SotW: only a client of wrapped resources tells variants apart */
	pu_client_node(cl, "node-1", "test", "xds.config.supports-resource-in-sotw");
	pu_send(cl, &q);
	r = pu_expect(cl, t);
	got = pu_variants(r);
	PU_ASSERT(strcmp(got, "r[env=prod]") == 0, "resources [%s], expected [r[env=prod]]",
		  got);
	free(got);
	expect_no_errors(r);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule N3: a virtual host asked for by an alias that resolves to nothing
 * is a Resource of that name without a body (rule D10): no error beside
 * it would name it again. */
START_TEST(n3_alias_says_it_its_own_way)
{
	const struct pu_combo *c = pu_combo(_i);
	const char *a = pu_name(PU_VHDS, "a"), *z = pu_name(PU_VHDS, "z");
	struct pu_snap *s = pu_snap_of(PU_VHDS, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;
	char *missing;

	pu_sub(cl, PU_VHDS, a, z, NULL);
	r = pu_expect(cl, PU_VHDS);
	missing = pu_missing(r);
	PU_ASSERT(strcmp(missing, z) == 0, "without a body [%s], expected [%s]",
		  missing, z);
	free(missing);
	expect_no_errors(r);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_errors(Suite *s, bool subset)
{
	static const struct pu_combo *sotw_dyn, *delta_dyn;
	static size_t nsotw_dyn, ndelta_dyn;
	unsigned types = PU_ALL_TYPES & ~PU_BIT(PU_VHDS);
	unsigned dyn = PU_BIT(PU_CDS) | PU_BIT(PU_RDS);

	sotw = pu_combos(false, types, &nsotw);
	delta = pu_combos(true, types, &ndelta);
	vhds = pu_combos(true, PU_BIT(PU_VHDS), &nvhds);
	sotw_dyn = pu_combos(false, dyn, &nsotw_dyn);
	delta_dyn = pu_combos(true, dyn, &ndelta_dyn);
	if (subset) {
		pu_add_tests(s, "N1", n1_said_once,
			     pu_pick(sotw, nsotw, "ADS EDS"), 1);
		pu_add_tests(s, "N2", n2_withheld_is_permission_denied,
			     pu_pick(delta, ndelta, "delta ADS SDS"), 1);
		return;
	}
	pu_add_tests(s, "N1", n1_missing_is_not_found, sotw, nsotw);
	pu_add_tests(s, "N1", n1_missing_is_not_found, delta, ndelta);
	pu_add_tests(s, "N1", n1_said_once, sotw, nsotw);
	pu_add_tests(s, "N1", n1_said_once, delta, ndelta);
	pu_add_tests(s, "N1", n1_asked_again_told_again, sotw, nsotw);
	pu_add_tests(s, "N1", n1_asked_again_told_again, delta, ndelta);
	pu_add_tests(s, "N1", n1_errors_bounded,
		     pu_pick(sotw, nsotw, "ADS CDS"), 1);
	pu_add_tests(s, "N1", n1_errors_bounded,
		     pu_pick(delta, ndelta, "delta EDS"), 1);
	pu_add_tests(s, "N2", n2_withheld_is_permission_denied, sotw, nsotw);
	pu_add_tests(s, "N2", n2_withheld_is_permission_denied, delta, ndelta);
	pu_add_tests(s, "N3", n3_never_beside_its_resource, sotw_dyn, nsotw_dyn);
	pu_add_tests(s, "N3", n3_never_beside_its_resource, delta_dyn, ndelta_dyn);
	pu_add_tests(s, "N3", n3_alias_says_it_its_own_way, vhds, nvhds);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("errors");

	xdtest_tmpdir();
	pu_register_errors(s, false);
	return pu_run(s);
}
#endif
