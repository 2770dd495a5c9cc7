/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protocol tests of locality endpoints (LEDS), rules G1-G3, against the
 * real xdsd over gRPC: a locality's glob collection yields every
 * endpoint, one endpoint's change sends that endpoint alone, a removed
 * one is named in removed_resources, they go on an aggregated stream
 * while the clusters warm, and no SotW method serves them. The rules
 * every type follows in delta (rules D1-D11, A1, L1, X1 and X2) run for
 * LEDS in their own suites, as for any type; a locality that names a
 * collection with no member is refused at load
 * (tests/snapshot/bad/leds-collection-empty).
 */
#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

static const struct pu_combo *delta_all;
static size_t ndelta_all;
static const struct pu_combo *ads_delta;
/* the aggregated SotW method, asked for LEDS (no per-type SotW one) */
static const struct pu_combo ads_sotw = {"ADS LEDS", false, true, PU_LEDS};

/* The endpoint ids of these tests, under PU_LEDS_PREFIX. */
#define NEP 5

static void ack_free(struct pu_client *cl, struct pu_resp *r)
{
	pu_ack(cl, r);
	pu_resp_free(r);
}

/* A response of `t` carrying exactly `names` and removing `removed`
 * (sorted, comma-separated). */
static struct pu_resp *expect_exactly(struct pu_client *cl, enum pu_type t,
				      const char *names, const char *removed)
{
	struct pu_resp *r = pu_expect(cl, t);
	char *got = pu_names(r), *gone = pu_removed(r);

	PU_ASSERT(strcmp(got, names) == 0 && strcmp(gone, removed) == 0,
		  "%s [%s] removed [%s], expected [%s] removed [%s]",
		  pu_type_label(t), got, gone, names, removed);
	free(got);
	free(gone);
	return r;
}

static const char *ep(int i)
{
	char base[16];

	snprintf(base, sizeof(base), "e%d", i);
	return pu_name(PU_LEDS, base);
}

/* Every endpoint id, sorted and comma-separated, as pu_names() lists a
 * response (ids e0..e4 sort as their numbers). */
static char *all_endpoints(void)
{
	return pu_list(PU_LEDS, "e0", "e1", "e2", "e3", "e4", NULL);
}

/* Cluster "web" (EDS), its load assignment "web" with one locality that
 * takes its endpoints by LEDS, and NEP endpoints in that collection. */
static struct pu_snap *leds_snapshot(void)
{
	struct pu_snap *s = pu_snap_new();

	pu_snap_put(s, PU_CDS, "web", 1, "web");
	pu_snap_put(s, PU_EDS, "web", 1, PU_LEDS_GLOB);
	for (int i = 0; i < NEP; i++)
		pu_snap_put(s, PU_LEDS, ep(i), 1, NULL);
	return s;
}

/* On the combo's stream, subscribed to the glob collection, with every
 * endpoint received and ACKed. */
static struct pu_client *follow_glob(struct pu_env *e, const struct pu_combo *c)
{
	struct pu_client *cl = pu_connect(e, c);
	char *all = all_endpoints();

	pu_sub(cl, PU_LEDS, PU_LEDS_GLOB, NULL);
	ack_free(cl, expect_exactly(cl, PU_LEDS, all, ""));
	free(all);
	return cl;
}

/* ---------------- rule G1 ---------------- */

/*
 * rule G1: a locality names its endpoints' glob collection; a client
 * that follows the names (the cluster, its load assignment, the
 * collection) is sent every endpoint of it, each its own Resource with
 * its own name and a version of its own bytes.
 */
START_TEST(g1_collection_yields_every_endpoint)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = leds_snapshot();
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;
	char *all = all_endpoints();

	pu_sub(cl, PU_CDS, NULL);
	ack_free(cl, expect_exactly(cl, PU_CDS, "web", ""));
	pu_sub(cl, PU_EDS, "web", NULL);
	r = expect_exactly(cl, PU_EDS, "web", "");
	PU_ASSERT(memmem(pu_find(r, "web")->body, pu_find(r, "web")->len,
			 PU_LEDS_GLOB, strlen(PU_LEDS_GLOB)) != NULL,
		  "the load assignment does not name the collection");
	ack_free(cl, r);
	pu_sub(cl, PU_LEDS, PU_LEDS_GLOB, NULL);
	r = expect_exactly(cl, PU_LEDS, all, "");
	for (size_t i = 0; i < r->nres; i++) {
		char v[17];

		pu_hash_hex(r->res[i].body, r->res[i].len, v);
		PU_ASSERT(strcmp(r->res[i].version, v) == 0,
			  "%s: version %s, not the hash of its bytes %s",
			  r->res[i].name, r->res[i].version, v);
		PU_ASSERT(strcmp(r->res[i].url, pu_type_url(PU_LEDS)) == 0,
			  "%s in an Any of %s", r->res[i].name, r->res[i].url);
	}
	ack_free(cl, r);
	pu_expect_none(cl, 0);
	free(all);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule G2 ---------------- */

/*
 * rule G2: one endpoint's change sends that endpoint alone, with a new
 * version, and neither the load assignment nor the other endpoints;
 * an endpoint that joins is sent alone too.
 */
START_TEST(g2_one_change_one_resource)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = leds_snapshot();
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = follow_glob(e, c);
	struct pu_resp *r;
	char *before;

	/* what the client holds of e2, to see its version move */
	pu_sub(cl, PU_LEDS, ep(2), NULL);
	r = expect_exactly(cl, PU_LEDS, ep(2), "");
	before = strdup(r->res[0].version);
	ack_free(cl, r);

	pu_snap_put(s, PU_LEDS, ep(2), 2, NULL);
	pu_env_set(e, s);
	r = expect_exactly(cl, PU_LEDS, ep(2), "");
	PU_ASSERT(r->nres == 1 && strcmp(r->res[0].version, before) != 0,
		  "the changed endpoint kept its version %s", before);
	ack_free(cl, r);
	pu_expect_none(cl, 0);

	pu_snap_put(s, PU_LEDS, pu_name(PU_LEDS, "e9"), 1, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_LEDS, pu_name(PU_LEDS, "e9"), ""));
	pu_expect_none(cl, 0);
	free(before);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule G2: an endpoint the snapshot drops is named in removed_resources,
 * alone; the others are not sent again.
 */
START_TEST(g2_removed_is_named)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = leds_snapshot();
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = follow_glob(e, c);

	pu_snap_del(s, PU_LEDS, ep(3));
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_LEDS, "", ep(3)));
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule G2 on an aggregated stream that holds the cluster and its load
 * assignment too: an endpoint's change sends one LbEndpoint and nothing
 * of CDS or EDS, whose resources did not change.
 */
START_TEST(g2_nothing_else_sent)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = leds_snapshot();
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	char *all = all_endpoints();

	pu_sub(cl, PU_CDS, NULL);
	ack_free(cl, expect_exactly(cl, PU_CDS, "web", ""));
	pu_sub(cl, PU_EDS, "web", NULL);
	ack_free(cl, expect_exactly(cl, PU_EDS, "web", ""));
	pu_sub(cl, PU_LEDS, PU_LEDS_GLOB, NULL);
	ack_free(cl, expect_exactly(cl, PU_LEDS, all, ""));
	pu_expect_none(cl, 0);

	pu_snap_put(s, PU_LEDS, ep(0), 3, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_LEDS, ep(0), ""));
	pu_expect_none(cl, 0);
	free(all);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule G3 ---------------- */

/*
 * rule G3: on an aggregated stream the endpoints of a new cluster go
 * while its CDS response awaits an answer (Envoy warms the cluster
 * until they come and holds its CDS ACK meanwhile): the load
 * assignment, then its locality's endpoints, before any ACK of CDS.
 */
START_TEST(g3_sent_while_clusters_warm)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = leds_snapshot();
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *cds, *r;
	char *all = all_endpoints();

	pu_sub(cl, PU_CDS, NULL);
	cds = expect_exactly(cl, PU_CDS, "web", ""); /* not answered yet */
	pu_sub(cl, PU_EDS, "web", NULL);
	r = expect_exactly(cl, PU_EDS, "web", "");
	ack_free(cl, r);
	pu_sub(cl, PU_LEDS, PU_LEDS_GLOB, NULL);
	ack_free(cl, expect_exactly(cl, PU_LEDS, all, ""));
	ack_free(cl, cds);
	pu_expect_none(cl, 0);
	free(all);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule G3: on an aggregated stream a reload that adds a cluster and a
 * listener sends the locality endpoints before the listener (rule A2:
 * endpoints before listeners).
 */
START_TEST(g3_before_listeners)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	char *all = all_endpoints();

	pu_snap_put(s, PU_LDS, "L", 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, PU_CDS, NULL);
	ack_free(cl, expect_exactly(cl, PU_CDS, "", ""));
	pu_sub(cl, PU_LDS, NULL);
	ack_free(cl, expect_exactly(cl, PU_LDS, "L", ""));
	pu_sub(cl, PU_EDS, "web", NULL);
	pu_sub(cl, PU_LEDS, PU_LEDS_GLOB, NULL);
	/* neither exists yet: said so once each (rule D8, X2) */
	for (int i = 0; i < 2; i++)
		ack_free(cl, pu_recv(cl, pu_wait_ms()));
	pu_expect_none(cl, 0);

	pu_snap_free(s);
	s = leds_snapshot();
	pu_snap_put(s, PU_LDS, "L", 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_CDS, "web", ""));
	ack_free(cl, expect_exactly(cl, PU_EDS, "web", ""));
	r = expect_exactly(cl, PU_LEDS, all, "");
	ack_free(cl, r);
	ack_free(cl, expect_exactly(cl, PU_LDS, "L", ""));
	pu_expect_none(cl, 0);
	free(all);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule G3: LEDS is incremental only: leds.proto has no SotW method, and
 * xdsd serves none. */
START_TEST(g3_no_sotw_method)
{
	pu_combo(_i); /* the label of failures */
	struct pu_snap *s = leds_snapshot();
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_open_method(
		e, "/envoy.service.endpoint.v3.LocalityEndpointDiscoveryService/StreamLocalityEndpoints",
		false);

	pu_sub(cl, PU_LEDS, PU_LEDS_GLOB, NULL);
	pu_expect_status(cl, GRPC_STATUS_UNIMPLEMENTED, NULL);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule G3: an aggregated SotW stream that asks for locality endpoints
 * (no client does: Envoy takes LEDS by delta only) is answered as for a
 * type xdsd does not serve (section 8.1): one response without
 * resources, nothing after it, and the other types of the stream
 * served as ever.
 */
START_TEST(g3_sotw_ads_not_served)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = leds_snapshot();
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, PU_LEDS, PU_LEDS_GLOB, NULL);
	r = pu_expect(cl, PU_LEDS);
	PU_ASSERT(r->nres == 0, "%zu resources over SotW", r->nres);
	ack_free(cl, r);
	pu_env_expect_log(e, "is served by incremental xDS only");
	pu_snap_put(s, PU_LEDS, ep(1), 2, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_sub(cl, PU_CDS, NULL);
	ack_free(cl, expect_exactly(cl, PU_CDS, "web", ""));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_leds(Suite *s, bool subset)
{
	delta_all = pu_combos(true, PU_BIT(PU_LEDS), &ndelta_all);
	ads_delta = pu_pick(delta_all, ndelta_all, "delta ADS LEDS");

	if (subset) {
		pu_add_tests(s, "G2", g2_one_change_one_resource, ads_delta, 1);
		return;
	}
	pu_add_tests(s, "G1", g1_collection_yields_every_endpoint, ads_delta, 1);
	pu_add_tests(s, "G2", g2_one_change_one_resource, delta_all, ndelta_all);
	pu_add_tests(s, "G2", g2_removed_is_named, delta_all, ndelta_all);
	pu_add_tests(s, "G2", g2_nothing_else_sent, ads_delta, 1);
	pu_add_tests(s, "G3", g3_sent_while_clusters_warm, ads_delta, 1);
	pu_add_tests(s, "G3", g3_before_listeners, ads_delta, 1);
	pu_add_test(s, "G3", g3_no_sotw_method);
	pu_add_tests(s, "G3", g3_sotw_ads_not_served, &ads_sotw, 1);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("leds");

	xdtest_tmpdir();
	pu_register_leds(s, false);
	return pu_run(s);
}
#endif
