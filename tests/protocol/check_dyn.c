/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dynamic parameters (rule P1), against the real xdsd over gRPC: a
 * client subscribing with a ResourceLocator gets the variant of the name
 * whose constraints accept its parameters, named by resource_name with
 * those constraints; a plain name keeps getting the plain resource; a
 * variant that stops matching, or goes, is removed by
 * removed_resource_names (delta).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

#define PROD "{constraint: {key: env, value: prod}}"
#define DEV_NOT_CANARY \
	"{and_constraints: {constraints: [{constraint: {key: env, value: dev}}, " \
	"{not_constraints: {constraint: {key: canary, exists: {}}}}]}}"

/* A snapshot of "r" plain, and its "prod" and "dev" variants. */
static struct pu_snap *variants(enum pu_type t)
{
	struct pu_snap *s = pu_snap_new();

	pu_snap_put(s, t, "r", 1, NULL);
	pu_snap_variant(s, t, "r", "prod", 2, NULL, PROD);
	pu_snap_variant(s, t, "r", "dev", 3, NULL, DEV_NOT_CANARY);
	return s;
}

/* A stream of the combo whose SotW resources carry resource_name (they
 * are wrapped, rule L2); delta ones always do. */
static struct pu_client *client(struct pu_env *e, const struct pu_combo *c)
{
	struct pu_client *cl = pu_connect(e, c);

	pu_client_node(cl, "node-1", "test",
		       "xds.config.supports-resource-in-sotw");
	return cl;
}

/* Subscribes to one locator (SotW: as the whole list), acknowledging
 * the latest response `last` if any. */
static void sub_locator(struct pu_client *cl, const struct pu_combo *c,
			const struct pu_resp *last, const char *const *params,
			size_t nparams)
{
	struct pu_locator l = {"r", params, nparams};
	struct pu_req q = {.type = c->type, .locators = &l, .nlocators = 1};

	if (!c->delta && last != NULL) {
		q.nonce = last->nonce;
		q.version = last->version;
	}
	pu_send(cl, &q);
}

/* ACKs `r`: SotW repeats the locator, the whole subscription. */
static void ack(struct pu_client *cl, const struct pu_combo *c,
		const struct pu_resp *r, const char *const *params,
		size_t nparams)
{
	if (c->delta)
		pu_ack(cl, r);
	else
		sub_locator(cl, c, r, params, nparams);
}

static void expect_variants(struct pu_resp *r, const char *want,
			    const char *removed)
{
	char *got = pu_variants(r), *gone = pu_removed_variants(r);

	PU_ASSERT(strcmp(got, want) == 0, "resources [%s], expected [%s]", got,
		  want);
	PU_ASSERT(strcmp(gone, removed) == 0,
		  "removed_resource_names [%s], expected [%s]", gone, removed);
	free(got);
	free(gone);
}

/* rule P1: each locator gets the variant its parameters pick, under
 * resource_name with its constraints; parameters no variant accepts get
 * the plain resource, and so does a subscription by name. */
START_TEST(p1_locator_picks_variant)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = variants(c->type);
	struct pu_env *e = pu_env_start(s);
	static const char *const prod[] = {"env", "prod"};
	static const char *const dev[] = {"env", "dev", "zone", "a"};
	static const char *const canary[] = {"env", "dev", "canary", "1"};
	static const struct {
		const char *const *params;
		size_t n;
		const char *want;
	} cases[] = {
		{prod, 1, "r[env=prod]"},
		{dev, 2, "r[(env=dev&!canary?)]"},
		{canary, 2, "r"},
		{NULL, 0, "r"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pu_client *cl = client(e, c);
		struct pu_resp *r;

		sub_locator(cl, c, NULL, cases[i].params, cases[i].n);
		r = pu_expect(cl, c->type);
		expect_variants(r, cases[i].want, "");
		pu_resp_free(r);
		pu_client_free(cl);
	}
	{
		struct pu_client *cl = client(e, c);
		struct pu_resp *r;

		pu_sub(cl, c->type, "r", NULL);
		r = pu_expect(cl, c->type);
		expect_variants(r, "r", "");
		pu_resp_free(r);
		pu_client_free(cl);
	}
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rules P1 and X1: a locator naming an xdstp name finds its variants by
 * any spelling of the name (parameters in another order, the scheme in
 * capitals), and the variant comes under the canonical name. */
START_TEST(p1_locator_xdstp_any_spelling)
{
	const struct pu_combo *c = pu_combo(_i);
	const char *url = pu_type_url(c->type), *msg = strrchr(url, '/') + 1;
	char canon[256], spelled[256];
	struct pu_snap *s = pu_snap_new();
	static const char *const prod[] = {"env", "prod"};
	struct pu_locator l = {spelled, prod, 1};
	struct pu_req q = {.type = c->type, .locators = &l, .nlocators = 1};
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	char want[300];

	snprintf(canon, sizeof(canon), "xdstp://cp.example/%s/r?a=1&b=2", msg);
	snprintf(spelled, sizeof(spelled), "XDSTP://cp.example/%s/r?b=2&a=1", msg);
	pu_snap_put(s, c->type, canon, 1, NULL);
	pu_snap_variant(s, c->type, canon, "prod", 2, NULL, PROD);
	e = pu_env_start(s);
	cl = client(e, c);
	pu_send(cl, &q);
	r = pu_expect(cl, c->type);
	snprintf(want, sizeof(want), "%s[env=prod]", canon);
	expect_variants(r, want, "");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule P1: the variant a client holds changes its constraints so that
 * another picks its parameters: the client gets the new one and, in
 * delta, the old one in removed_resource_names; a change of the
 * variant's content alone is sent as a change. */
START_TEST(p1_variant_change_resent)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = variants(c->type);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = client(e, c);
	static const char *const prod[] = {"env", "prod"};
	struct pu_resp *r;

	sub_locator(cl, c, NULL, prod, 1);
	r = pu_expect(cl, c->type);
	expect_variants(r, "r[env=prod]", "");
	ack(cl, c, r, prod, 1);
	pu_resp_free(r);
	/* its content changes */
	pu_snap_put(s, c->type, "r#prod", 4, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, c->type);
	expect_variants(r, "r[env=prod]", "");
	ack(cl, c, r, prod, 1);
	pu_resp_free(r);
	/* its constraints change: the "dev" variant now takes prod too */
	pu_snap_del(s, c->type, "r#dev");
	pu_snap_variant(s, c->type, "r", "dev", 3, NULL,
			"{or_constraints: {constraints: [{constraint: {key: env, value: dev}}, " PROD "]}}");
	pu_snap_variant(s, c->type, "r", "prod", 4, NULL,
			"{constraint: {key: env, value: production}}");
	pu_env_set(e, s);
	r = pu_expect(cl, c->type);
	expect_variants(r, "r[(env=dev|env=prod)]",
			c->delta ? "r[env=prod]" : "");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule P1: a variant that goes, with no other resource of the name to
 * take its place, is removed by removed_resource_names; a locator that
 * picks nothing from the start is reported under its name (rule D8). */
START_TEST(p1_variant_gone_removed)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	static const char *const prod[] = {"env", "prod"};
	static const char *const dev[] = {"env", "dev"};
	struct pu_resp *r;
	char *missing;

	pu_snap_variant(s, c->type, "r", "prod", 2, NULL, PROD);
	e = pu_env_start(s);
	cl = client(e, c);
	sub_locator(cl, c, NULL, dev, 1);
	r = pu_expect(cl, c->type);
	missing = pu_removed(r); /* rule D8: in removed_resources */
	PU_ASSERT(strcmp(missing, "r") == 0, "said missing [%s]", missing);
	free(missing);
	pu_ack(cl, r);
	pu_resp_free(r);
	sub_locator(cl, c, NULL, prod, 1);
	r = pu_expect(cl, c->type);
	expect_variants(r, "r[env=prod]", "");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_del(s, c->type, "r#prod");
	pu_snap_put(s, c->type, "other", 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, c->type);
	expect_variants(r, "", "r[env=prod]");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule P1: locators are bounded and checked as names are: a parameter
 * with a control character ends the stream with INVALID_ARGUMENT. */
START_TEST(p1_bad_locator_refused)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = variants(c->type);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = client(e, c);
	static const char *const bad[] = {"env", "pr\x1fod"};

	sub_locator(cl, c, NULL, bad, 1);
	pu_expect_status(cl, 3, "control character");
	pu_client_free(cl);
	/* a plain name holding the byte that separates a locator's parts
	 * would be taken for a locator: refused too */
	cl = client(e, c);
	pu_sub(cl, c->type, "r\x1f" "env\x1f" "prod", NULL);
	pu_expect_status(cl, 3, "0x1f");
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_dyn(Suite *s, bool subset)
{
	static const struct pu_combo *sotw, *delta;
	static size_t nsotw, ndelta;
	unsigned types = PU_BIT(PU_CDS) | PU_BIT(PU_RDS);

	sotw = pu_combos(false, types, &nsotw);
	delta = pu_combos(true, types, &ndelta);
	if (subset) {
		pu_add_tests(s, "P1", p1_variant_change_resent,
			     pu_pick(delta, ndelta, "delta ADS CDS"), 1);
		return;
	}
	pu_add_tests(s, "P1", p1_locator_picks_variant, sotw, nsotw);
	pu_add_tests(s, "P1", p1_locator_picks_variant, delta, ndelta);
	pu_add_tests(s, "P1", p1_variant_change_resent, sotw, nsotw);
	pu_add_tests(s, "P1", p1_variant_change_resent, delta, ndelta);
	pu_add_tests(s, "P1", p1_variant_gone_removed, delta, ndelta);
	pu_add_tests(s, "P1", p1_locator_xdstp_any_spelling, sotw, nsotw);
	pu_add_tests(s, "P1", p1_locator_xdstp_any_spelling, delta, ndelta);
	pu_add_tests(s, "P1", p1_bad_locator_refused, sotw, nsotw);
	pu_add_tests(s, "P1", p1_bad_locator_refused, delta, ndelta);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("dyn");

	xdtest_tmpdir();
	pu_register_dyn(s, false);
	return pu_run(s);
}
#endif
