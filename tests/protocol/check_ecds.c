/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protocol tests of extension configs (ECDS), rules E1 and E2: a
 * config goes before the listener whose filter runs it, a change of
 * the config alone sends no listener, and a config the snapshot dropped
 * stays with a client that still subscribes to it. The rules every type
 * follows (rules S1-S13, D1-D11, A1 and L1) run for ECDS in their own
 * suites, as for any type; a listener that names a config no snapshot
 * has is refused at load (tests/snapshot/bad/ecds-config-missing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

static const struct pu_combo *sotw_ads, *delta_all;
static size_t nsotw_ads, ndelta_all;
/* the aggregated combos: SotW and delta ADS */
static struct pu_combo ads[2];

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

/* A listener "L" whose HTTP filter takes config `config` by ECDS
 * (variant `v`: its port), and the config itself (variant `cv`). */
static void put_pair(struct pu_snap *s, const char *config, int v, int cv)
{
	char ref[64];

	snprintf(ref, sizeof(ref), "ecds:%s", config);
	pu_snap_put(s, PU_LDS, "L", v, ref);
	pu_snap_put(s, PU_ECDS, config, cv, NULL);
}

/* An Envoy-like client on the combo's aggregated method: listeners by
 * wildcard, then the config its listener names, each ACKed. */
static struct pu_client *follow(struct pu_env *e, const struct pu_combo *c,
				const char *config)
{
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, PU_LDS, NULL);
	ack_free(cl, expect_exactly(cl, PU_LDS, "L", ""));
	pu_sub(cl, PU_ECDS, config, NULL);
	ack_free(cl, expect_exactly(cl, PU_ECDS, config, ""));
	pu_expect_none(cl, 0);
	return cl;
}

/* ---------------- rule E1 ---------------- */

/*
 * rule E1: a reload that changes a config and the listener that runs it
 * sends the config first, and the listener only once the config is
 * answered (rule A2's order, extension configs before listeners).
 */
START_TEST(e1_config_before_its_listener)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	put_pair(s, "f", 1, 1);
	e = pu_env_start(s);
	cl = follow(e, c, "f");
	put_pair(s, "f", 2, 2);
	pu_env_set(e, s);
	r = expect_exactly(cl, PU_ECDS, "f", "");
	pu_expect_none(cl, 0); /* the listener waits for that answer */
	ack_free(cl, r);
	ack_free(cl, expect_exactly(cl, PU_LDS, "L", ""));
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule E1: a change of a config alone sends that config, and no listener
 * (the listener, unchanged, is not drained by its client).
 */
START_TEST(e1_config_alone_sends_no_listener)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;

	put_pair(s, "f", 1, 1);
	e = pu_env_start(s);
	cl = follow(e, c, "f");
	for (int v = 2; v <= 3; v++) {
		put_pair(s, "f", 1, v);
		pu_env_set(e, s);
		ack_free(cl, expect_exactly(cl, PU_ECDS, "f", ""));
		pu_expect_none(cl, 0);
	}
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule E2 ---------------- */

/*
 * rule E2: a config the snapshot drops is not said removed to a client
 * that still subscribes to it; when the client unsubscribes it is
 * forgotten (rule D6), and asked for again once it is back it comes
 * (rule D5). Other configs go on as usual.
 */
START_TEST(e2_dropped_config_stays_while_subscribed)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(PU_ECDS, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, PU_ECDS, "a", "b", NULL);
	ack_free(cl, expect_exactly(cl, PU_ECDS, "a,b", ""));
	pu_snap_del(s, PU_ECDS, "a");
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_snap_put(s, PU_ECDS, "b", 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_ECDS, "b", ""));
	pu_unsub(cl, PU_ECDS, "a", NULL);
	pu_snap_put(s, PU_ECDS, "a", 3, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_sub(cl, PU_ECDS, "a", NULL);
	ack_free(cl, expect_exactly(cl, PU_ECDS, "a", ""));
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule E2 on a new stream (rule D7's reconnecting client): what changed
 * is sent, what it holds at the current version is not, and a config
 * gone meanwhile is not said removed.
 */
START_TEST(e2_reconnect_keeps_dropped)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(PU_ECDS, "a", "b", "c", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	const char *names[] = {"a", "b", "c"};
	const char *versions[3];
	struct pu_req q = {.type = PU_ECDS, .names = names, .nnames = 3,
			   .init_names = names, .init_versions = versions,
			   .ninit = 3};
	struct pu_resp *held;

	pu_sub(cl, PU_ECDS, "a", "b", "c", NULL);
	held = expect_exactly(cl, PU_ECDS, "a,b,c", "");
	pu_ack(cl, held);
	pu_client_free(cl);
	for (int k = 0; k < 3; k++)
		versions[k] = pu_find(held, names[k])->version;
	pu_snap_put(s, PU_ECDS, "b", 2, NULL);
	pu_snap_del(s, PU_ECDS, "c");
	pu_env_set(e, s);

	cl = pu_connect(e, c);
	pu_send(cl, &q);
	ack_free(cl, expect_exactly(cl, PU_ECDS, "b", ""));
	pu_expect_none(cl, 0);
	pu_resp_free(held);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rules E1, E2 together, as Envoy meets them: listener "L" moves from
 * config "f1" to "f2", and "f1" goes from the snapshot. The listener goes
 * out; the client, whose old listener drains with "f1" still running,
 * subscribes to "f2" beside "f1" and is sent "f2"; nothing ever removes
 * "f1" while it is subscribed, and once unsubscribed it is forgotten.
 */
START_TEST(e2_listener_moves_to_another_config)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;

	put_pair(s, "f1", 1, 1);
	e = pu_env_start(s);
	cl = follow(e, c, "f1");
	pu_snap_del(s, PU_ECDS, "f1");
	put_pair(s, "f2", 2, 1);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_LDS, "L", ""));
	pu_expect_none(cl, 0);
	/* SotW lists both; delta adds f2 (subscribing f1 again would ask
	 * for it anew, rule D5) */
	if (c->delta)
		pu_sub(cl, PU_ECDS, "f2", NULL);
	else
		pu_sub(cl, PU_ECDS, "f1", "f2", NULL);
	ack_free(cl, expect_exactly(cl, PU_ECDS, "f2", ""));
	pu_expect_none(cl, 0);
	if (c->delta)
		pu_unsub(cl, PU_ECDS, "f1", NULL);
	else
		pu_sub(cl, PU_ECDS, "f2", NULL);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_ecds(Suite *s, bool subset)
{
	sotw_ads = pu_combos(false, PU_BIT(PU_ECDS), &nsotw_ads);
	delta_all = pu_combos(true, PU_BIT(PU_ECDS), &ndelta_all);
	ads[0] = *pu_pick(sotw_ads, nsotw_ads, "ADS ECDS");
	ads[1] = *pu_pick(delta_all, ndelta_all, "delta ADS ECDS");

	if (subset) {
		pu_add_tests(s, "E2", e2_listener_moves_to_another_config, &ads[1], 1);
		return;
	}
	pu_add_tests(s, "E1", e1_config_before_its_listener, ads, 2);
	pu_add_tests(s, "E1", e1_config_alone_sends_no_listener, ads, 2);
	pu_add_tests(s, "E2", e2_dropped_config_stays_while_subscribed, delta_all,
		     ndelta_all);
	pu_add_tests(s, "E2", e2_reconnect_keeps_dropped, delta_all, ndelta_all);
	pu_add_tests(s, "E2", e2_listener_moves_to_another_config, ads, 2);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("ecds");

	xdtest_tmpdir();
	pu_register_ecds(s, false);
	return pu_run(s);
}
#endif
