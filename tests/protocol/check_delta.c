/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Incremental xDS (rules D1-D11 of docs/protocol.md), against the
 * real xdsd over gRPC on loopback.
 *
 * Each test is written once and registered for every (method, type)
 * where its rule applies: the per-type incremental method of all eight
 * types, and the incremental aggregated method for the same type.
 * Also here: a restart of xdsd under a connected client (rule D7 across
 * restarts, issue #5 item 4).
 */
#include <grpc/status.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

static const struct pu_combo *all, *wild, *vhds;
static size_t nall, nwild, nvhds;

/* rule D3: every resource carries its name and its version, the hash of its
 * bytes, inside an Any of the type. */
static void assert_resources(const struct pu_resp *r, enum pu_type t)
{
	PU_ASSERT(strcmp(r->type_url, pu_type_url(t)) == 0, "type_url '%s'",
		  r->type_url);
	for (size_t i = 0; i < r->nres; i++) {
		const struct pu_res *x = &r->res[i];
		char want[17];

		PU_ASSERT(x->name[0] != '\0', "a resource without a name");
		if (!x->has_body)
			continue;
		PU_ASSERT(strcmp(x->url, pu_type_url(t)) == 0,
			  "resource '%s' in an Any of '%s'", x->name, x->url);
		pu_hash_hex(x->body, x->len, want);
		PU_ASSERT(strcmp(x->version, want) == 0,
			  "resource '%s' version '%s', its bytes hash to '%s'",
			  x->name, x->version, want);
	}
}

static bool is_nonce(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return false;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* A response of `t` whose resources and removals are exactly as given
 * ("" for none): comma-separated generic bases. */
static struct pu_resp *expect_exactly(struct pu_client *cl, enum pu_type t,
				      const char *names, const char *removed)
{
	struct pu_resp *r = pu_expect(cl, t);
	char *got, buf[256], *want;
	struct pu_strs v = {0};

	assert_resources(r, t);
	for (int pass = 0; pass < 2; pass++) {
		const char *spec = pass == 0 ? names : removed;

		snprintf(buf, sizeof(buf), "%s", spec);
		for (char *save = NULL, *b = strtok_r(buf, ",", &save); b != NULL;
		     b = strtok_r(NULL, ",", &save))
			pu_strs_add(&v, pu_name(t, b));
		want = pu_strs_join(&v);
		pu_strs_clear(&v);
		got = pass == 0 ? pu_names(r) : pu_removed(r);
		PU_ASSERT(strcmp(got, want) == 0, "%s [%s], expected [%s]",
			  pass == 0 ? "resources" : "removed", got, want);
		free(got);
		free(want);
	}
	return r;
}

static void ack_free(struct pu_client *cl, struct pu_resp *r)
{
	pu_ack(cl, r);
	pu_resp_free(r);
}

/* ---------------- rule D1 ---------------- */

/* rule D1: the server tracks what the client subscribed to and which version
 * of each resource it holds: a change sends exactly the changed
 * subscribed resources. */
START_TEST(d1_tracks_names_and_versions)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", "c", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, t, pu_name(t, "a"), pu_name(t, "b"), NULL);
	ack_free(cl, expect_exactly(cl, t, "a,b", ""));
	pu_snap_put(s, t, pu_name(t, "a"), 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_snap_put(s, t, pu_name(t, "b"), 2, NULL);
	pu_snap_put(s, t, pu_name(t, "c"), 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "b", ""));
	pu_snap_put(s, t, pu_name(t, "c"), 3, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0); /* c is not subscribed */
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D2 ---------------- */

/* rule D2: a first request of LDS/CDS/SRDS with no names is a wildcard. */
START_TEST(d2_wildcard_by_empty_first_request)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, t, NULL);
	ack_free(cl, expect_exactly(cl, t, "a,b", ""));
	pu_snap_put(s, t, "c", 1, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "c", ""));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D2: subscribing "*" is a wildcard, and "*" can be unsubscribed. */
START_TEST(d2_wildcard_by_star_and_back)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, "*", NULL);
	ack_free(cl, expect_exactly(cl, t, "a,b", ""));
	pu_snap_put(s, t, "c", 1, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "c", ""));
	pu_unsub(cl, t, "*", NULL);
	/* the server owes nothing here; if it says anything, no resources */
	r = pu_recv(cl, pu_quiet_ms());
	if (r != NULL) {
		PU_ASSERT(r->nres == 0, "resources [%s] after unsubscribing '*'",
			  pu_names(r));
		ack_free(cl, r);
	}
	pu_snap_put(s, t, "a", 2, NULL);
	pu_snap_put(s, t, "d", 1, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D2: unsubscribing "*" keeps the names subscribed beside it. */
START_TEST(d2_star_beside_names)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, "*", "a", NULL);
	r = expect_exactly(cl, t, "a,b", "");
	PU_ASSERT(r->nres == 2, "%zu resources", r->nres);
	ack_free(cl, r);
	pu_unsub(cl, t, "*", NULL);
	r = pu_recv(cl, pu_quiet_ms()); /* optional: never resources */
	if (r != NULL) {
		PU_ASSERT(r->nres == 0, "resources [%s] after unsubscribing '*'",
			  pu_names(r));
		ack_free(cl, r);
	}
	pu_snap_put(s, t, "a", 2, NULL);
	pu_snap_put(s, t, "b", 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D2: a first request naming resources is not a wildcard. */
START_TEST(d2_names_first_is_not_wildcard)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, t, "a", NULL);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_snap_put(s, t, "c", 1, NULL);
	pu_snap_put(s, t, "b", 2, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D3 ---------------- */

/* rule D3: responses carry only changed resources, each with name and
 * version; a nonce unique on the stream; system_version_info (for
 * debugging only: just a 16-digit version that follows the content). */
START_TEST(d3_only_changed_with_versions)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r1, *r2;

	pu_sub(cl, t, a, b, NULL);
	r1 = expect_exactly(cl, t, "a,b", "");
	PU_ASSERT(is_nonce(r1->nonce), "nonce '%s'", r1->nonce);
	PU_ASSERT(pu_is_hex16(r1->version), "system_version_info '%s'", r1->version);
	pu_ack(cl, r1);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r2 = expect_exactly(cl, t, "a", "");
	PU_ASSERT(is_nonce(r2->nonce) && strcmp(r2->nonce, r1->nonce) != 0,
		  "nonce '%s' after '%s'", r2->nonce, r1->nonce);
	PU_ASSERT(strcmp(r2->res[0].version, pu_find(r1, a)->version) != 0,
		  "a changed, its version did not");
	PU_ASSERT(pu_is_hex16(r2->version) && strcmp(r2->version, r1->version) != 0,
		  "system_version_info '%s' after '%s'", r2->version, r1->version);
	pu_resp_free(r1);
	pu_resp_free(r2);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D4 ---------------- */

/* rule D4: deleted resources the client holds are listed in removed_resources
 * (not those it never had); one that comes back is sent again. */
START_TEST(d4_removed_resources)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", "c", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, t, a, b, NULL);
	ack_free(cl, expect_exactly(cl, t, "a,b", ""));
	pu_snap_del(s, t, a);
	pu_snap_del(s, t, pu_name(t, "c")); /* never subscribed */
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "", "a"));
	pu_snap_put(s, t, a, 3, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D4 with a wildcard subscription (LDS, CDS, SRDS). */
START_TEST(d4_removed_resources_wildcard)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", "c", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, t, NULL);
	ack_free(cl, expect_exactly(cl, t, "a,b,c", ""));
	pu_snap_del(s, t, "b");
	pu_snap_del(s, t, "c");
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "", "b,c"));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D5 ---------------- */

/* rule D5: a name subscribed again is sent again, though unchanged and held. */
START_TEST(d5_resubscribe_resends)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r1, *r2;

	pu_sub(cl, t, a, NULL);
	r1 = expect_exactly(cl, t, "a", "");
	pu_ack(cl, r1);
	pu_sub(cl, t, a, NULL);
	r2 = expect_exactly(cl, t, "a", "");
	PU_ASSERT(strcmp(r1->res[0].version, r2->res[0].version) == 0,
		  "the unchanged a came with another version");
	pu_resp_free(r1);
	pu_resp_free(r2);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D6 ---------------- */

/* rule D6: unsubscribing names never subscribed (existing or not) is
 * harmless: no error, no response, the subscription goes on. */
START_TEST(d6_phantom_unsubscribe)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, t, a, NULL);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_unsub(cl, t, pu_name(t, "ghost"), pu_name(t, "b"), pu_name(t, "ghost"),
		 NULL);
	pu_expect_none(cl, 0);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D7 ---------------- */

/* Versions the client holds, learned on a first stream. */
static struct pu_resp *learn(struct pu_env *e, const struct pu_combo *c,
			     bool wildcard)
{
	enum pu_type t = c->type;
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	if (wildcard)
		pu_sub(cl, t, NULL);
	else
		pu_sub(cl, t, pu_name(t, "a"), pu_name(t, "b"), pu_name(t, "c"), NULL);
	r = expect_exactly(cl, t, "a,b,c", "");
	pu_ack(cl, r);
	pu_client_free(cl);
	return r;
}

/*
 * rule D7: a new stream presenting initial_resource_versions gets neither
 * resources whose version matches, but those that changed, and vanished
 * ones as removed. Named (wildcard: false) or wildcard.
 */
static void initial_versions(int i, bool wildcard)
{
	const struct pu_combo *c = pu_combo(i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b"), *cc = pu_name(t, "c");
	struct pu_snap *s = pu_snap_of(t, "a", "b", "c", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_resp *held = learn(e, c, wildcard), *r;
	const char *names[] = {a, b, cc};
	const char *versions[3];
	struct pu_req q = {.type = t, .init_names = names,
			   .init_versions = versions, .ninit = 3};
	struct pu_client *cl;

	for (int k = 0; k < 3; k++)
		versions[k] = pu_find(held, names[k])->version;
	pu_snap_put(s, t, b, 2, NULL);
	pu_snap_del(s, t, cc);
	if (wildcard)
		pu_snap_put(s, t, "d", 1, NULL);
	pu_env_set(e, s);

	cl = pu_connect(e, c);
	if (!wildcard) {
		q.names = names;
		q.nnames = 3;
	}
	pu_send(cl, &q);
	r = expect_exactly(cl, t, wildcard ? "b,d" : "b", "c");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_expect_none(cl, 0); /* a is never sent */
	pu_resp_free(held);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}

START_TEST(d7_initial_resource_versions)
{
	initial_versions(_i, false);
}
END_TEST

START_TEST(d7_initial_resource_versions_wildcard)
{
	initial_versions(_i, true);
}
END_TEST

/* ---------------- rule D7: restart (issue #5 item 4) ---------------- */

/* What an Envoy holds on a delta ADS stream: name -> version per type. */
struct held {
	struct pu_strs names[PU_NTYPES];
	char versions[PU_NTYPES][16][17];
};

static void held_apply(struct held *h, const struct pu_resp *r)
{
	for (size_t i = 0; i < r->nres; i++) {
		struct pu_strs *n = &h->names[r->type];
		size_t k;

		if (!r->res[i].has_body)
			continue;
		pu_strs_add(n, r->res[i].name);
		for (k = 0; strcmp(n->v[k], r->res[i].name) != 0; k++)
			;
		ck_assert(k < 16);
		snprintf(h->versions[r->type][k], 17, "%s", r->res[i].version);
	}
	for (size_t i = 0; i < r->nremoved; i++) {
		struct pu_strs *n = &h->names[r->type];

		for (size_t k = 0; k < n->n; k++) {
			if (strcmp(n->v[k], r->removed[i]) == 0) {
				/* keep versions aligned with names */
				memcpy(h->versions[r->type][k],
				       h->versions[r->type][n->n - 1], 17);
				break;
			}
		}
		pu_strs_del(n, r->removed[i]);
	}
}

static const enum pu_type envoy_types[] = {PU_SDS, PU_RTDS, PU_CDS, PU_EDS,
					   PU_LDS, PU_RDS};

/* The first requests of an Envoy-like client: wildcard CDS and LDS,
 * the rest by name, presenting what it holds (after a restart). */
static void envoy_subscribe(struct pu_client *cl, const struct held *h)
{
	for (size_t i = 0; i < sizeof(envoy_types) / sizeof(envoy_types[0]); i++) {
		enum pu_type t = envoy_types[i];
		const char *versions[16];
		const char *one[] = {t == PU_EDS ? "X" : t == PU_RDS ? "R" : "sec"};
		struct pu_req q = {.type = t};

		if (t != PU_CDS && t != PU_LDS) {
			q.names = one;
			q.nnames = 1;
		}
		if (h != NULL) {
			for (size_t k = 0; k < h->names[t].n; k++)
				versions[k] = h->versions[t][k];
			q.init_names = (const char *const *)h->names[t].v;
			q.init_versions = versions;
			q.ninit = h->names[t].n;
		}
		pu_send(cl, &q);
	}
}

static struct pu_snap *envoy_snapshot(void)
{
	struct pu_snap *s = pu_snap_new();

	pu_snap_put(s, PU_SDS, "sec", 1, NULL);
	pu_snap_put(s, PU_RTDS, "sec", 1, NULL);
	pu_snap_put(s, PU_CDS, "X", 1, "X");
	pu_snap_put(s, PU_CDS, "S", 1, NULL);
	pu_snap_put(s, PU_EDS, "X", 1, NULL);
	pu_snap_put(s, PU_LDS, "L", 1, "R");
	pu_snap_put(s, PU_RDS, "R", 1, "X");
	return s;
}

/*
 * rule D7 across a restart: a delta ADS client holding everything, xdsd
 * restarted on the same port with the same snapshots, the client back
 * with initial_resource_versions = what it holds: it is sent nothing,
 * or (when something changed while xdsd was down) only that.
 */
static void restart(bool change)
{
	struct pu_snap *s = envoy_snapshot();
	struct pu_env *e = pu_env_start(s), *e2;
	struct pu_client *cl = pu_open(e, true, true, PU_CDS);
	struct held h = {0};
	char *dir = strdup(e->dir);
	int port = e->port;

	envoy_subscribe(cl, NULL);
	for (size_t i = 0; i < sizeof(envoy_types) / sizeof(envoy_types[0]); i++) {
		struct pu_resp *r = pu_expect(cl, envoy_types[i]);

		held_apply(&h, r);
		ack_free(cl, r);
	}
	pu_expect_none(cl, 0);

	pu_env_stop(e);
	pu_expect_status(cl, GRPC_STATUS_UNAVAILABLE, NULL);
	pu_client_free(cl);
	if (change) {
		pu_snap_put(s, PU_EDS, "X", 2, NULL);
		pu_snap_del(s, PU_CDS, "S");
		pu_env_write(e, "default", s);
	}
	e2 = pu_env_start_on(dir, port);
	ck_assert_int_eq(e2->port, port);
	cl = pu_open(e2, true, true, PU_CDS);
	envoy_subscribe(cl, &h);
	if (change) {
		struct pu_resp *r = pu_expect(cl, PU_CDS);

		PU_ASSERT(r->nres == 0, "CDS resent [%s]", pu_names(r));
		PU_ASSERT(strcmp(pu_removed(r), "S") == 0, "CDS removed [%s]",
			  pu_removed(r));
		ack_free(cl, r);
		r = pu_expect(cl, PU_EDS);
		PU_ASSERT(strcmp(pu_names(r), "X") == 0 && r->nremoved == 0,
			  "EDS [%s] removed [%s]", pu_names(r), pu_removed(r));
		ack_free(cl, r);
	}
	pu_expect_none(cl, 2 * pu_quiet_ms());
	pu_client_free(cl);
	pu_env_free(e2);
	pu_env_free(e);
	free(dir);
	pu_snap_free(s);
}

START_TEST(d7_restart_without_resend)
{
	pu_combo(_i); /* the label of failures */
	restart(false);
}
END_TEST

START_TEST(d7_restart_sends_only_changes)
{
	pu_combo(_i); /* the label of failures */
	restart(true);
}
END_TEST

/* ---------------- rule D8 ---------------- */

/* rule D8: a subscribed name that does not exist is said at once, as Envoy
 * reads it: in removed_resources; a virtual host (asked for by alias,
 * rule D10) as a Resource without a body whose alias is the name. No
 * other Resource comes without a body: Envoy NACKs one that is neither a
 * heartbeat nor an alias that resolves to nothing ("type URL  embedded
 * in an individual Any does not match the message-wide type URL"). When
 * the name appears it is sent. */
START_TEST(d8_missing_reported)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *z = pu_name(t, "z");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;
	const struct pu_res *x;

	pu_sub(cl, t, a, z, NULL);
	if (t == PU_VHDS) {
		r = expect_exactly(cl, t, "a", "");
		x = pu_find(r, z);
		PU_ASSERT(strcmp(pu_missing(r), z) == 0 && x != NULL &&
				  x->naliases == 1 && strcmp(x->aliases[0], z) == 0,
			  "without a body [%s], expected [%s] with itself as its alias",
			  pu_missing(r), z);
	} else {
		r = expect_exactly(cl, t, "a", "z");
		PU_ASSERT(strcmp(pu_missing(r), "") == 0,
			  "without a body [%s], expected none", pu_missing(r));
	}
	ack_free(cl, r);
	pu_snap_put(s, t, z, 1, NULL);
	pu_env_set(e, s);
	r = expect_exactly(cl, t, "z", "");
	PU_ASSERT(r->nres == 1, "z reported twice");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D9 ---------------- */

/* rule D9: a NACK (nonce and error_detail) is recorded (one log line with the
 * node, the version and the client's message) and its content not
 * resent; the next change is sent. */
START_TEST(d9_nack)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_client_node(cl, "nacking-node", "test", NULL);
	pu_sub(cl, t, a, NULL);
	r = expect_exactly(cl, t, "a", "");
	pu_nack(cl, r, "delta config rejected");
	pu_expect_none(cl, 0);
	pu_env_expect_log(e, "node 'nacking-node': NACK of %s version %s: delta config rejected",
			  pu_type_label(t), r->version);
	pu_resp_free(r);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D9: a request without response_nonce only changes subscriptions: its
 * error_detail is no NACK, and it answers nothing. */
START_TEST(d9_no_nonce_only_subscribes)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_req q = {.type = t, .names = &b, .nnames = 1,
			   .error = "not a nack"};
	struct pu_resp *r;
	char line[128];

	pu_sub(cl, t, a, NULL);
	r = expect_exactly(cl, t, "a", "");
	pu_send(cl, &q);
	/* b is subscribed (sent, now or after the ACK) */
	pu_ack(cl, r);
	pu_resp_free(r);
	ack_free(cl, expect_exactly(cl, t, "b", ""));
	snprintf(line, sizeof(line), "ACK of %s", pu_type_label(t));
	PU_ASSERT(xdt_daemon_wait_log_count(e->d, line, 2, pu_wait_ms()),
		  "two ACKs not logged");
	PU_ASSERT(!pu_env_log_has(e, "not a nack"),
		  "a request without a nonce was taken as a NACK");
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D9 (as rule S5): an answer carrying a nonce that is not the latest is no
 * ACK or NACK of anything. */
START_TEST(d9_stale_nonce_answers_nothing)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r1, *r2;

	pu_sub(cl, t, a, NULL);
	r1 = expect_exactly(cl, t, "a", "");
	pu_ack(cl, r1);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r2 = expect_exactly(cl, t, "a", "");
	pu_nack(cl, r1, "stale rejection"); /* r1's nonce is stale now */
	pu_expect_none(cl, 0);
	PU_ASSERT(!pu_env_log_has(e, "stale rejection"),
		  "a NACK with a stale nonce was recorded");
	pu_ack(cl, r2);
	pu_snap_put(s, t, a, 3, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, t, "a", ""));
	pu_resp_free(r1);
	pu_resp_free(r2);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D10 ---------------- */

/* rule D10: virtual hosts subscribed by alias "<route config>/<domain>" are
 * sent under their name with the alias; changes follow the alias;
 * unsubscribing the alias stops them; an unknown alias is reported as
 * not existing under the name the client used. */
START_TEST(d10_subscribe_by_alias)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(PU_VHDS, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;
	const struct pu_res *x;
	bool has_alias = false;

	pu_sub(cl, PU_VHDS, "vhds_rc/a.example", NULL);
	r = expect_exactly(cl, PU_VHDS, "a", "");
	x = &r->res[0];
	for (size_t k = 0; k < x->naliases; k++)
		has_alias |= strcmp(x->aliases[k], "vhds_rc/a.example") == 0;
	PU_ASSERT(has_alias, "vhds_rc/a sent without its alias");
	ack_free(cl, r);
	pu_snap_put(s, PU_VHDS, "vhds_rc/a", 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_VHDS, "a", ""));
	pu_unsub(cl, PU_VHDS, "vhds_rc/a.example", NULL);
	pu_snap_put(s, PU_VHDS, "vhds_rc/a", 3, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_sub(cl, PU_VHDS, "vhds_rc/nope.example", NULL);
	r = expect_exactly(cl, PU_VHDS, "", "");
	/* as Envoy takes an alias that resolves to nothing: a Resource
	 * without a body whose alias is the name asked for */
	x = pu_find(r, "vhds_rc/nope.example");
	PU_ASSERT(strcmp(pu_missing(r), "vhds_rc/nope.example") == 0 && x != NULL &&
			  x->naliases == 1 &&
			  strcmp(x->aliases[0], "vhds_rc/nope.example") == 0 &&
			  strcmp(pu_removed(r), "") == 0,
		  "missing [%s] with %zu aliases, removed [%s]", pu_missing(r),
		  x != NULL ? x->naliases : 0, pu_removed(r));
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D10 with rule D4: a virtual host the client subscribed to by alias is
 * removed under its name when it goes. */
START_TEST(d10_removed_by_name)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(PU_VHDS, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);

	pu_sub(cl, PU_VHDS, "vhds_rc/a.example", NULL);
	ack_free(cl, expect_exactly(cl, PU_VHDS, "a", ""));
	pu_snap_del(s, PU_VHDS, "vhds_rc/a");
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_VHDS, "", "a"));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule D10 with rule S11 (no name twice in a response, which the spec asks of
 * every variant): a virtual host subscribed by name and by alias is
 * sent once. */
START_TEST(d10_name_and_alias_sent_once)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(PU_VHDS, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, PU_VHDS, "vhds_rc/a", "vhds_rc/a.example", NULL);
	r = pu_expect(cl, PU_VHDS);
	PU_ASSERT(r->nres == 1, "%zu resources [%s] for one virtual host", r->nres,
		  pu_names(r));
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, PU_VHDS, "vhds_rc/a", 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, PU_VHDS);
	PU_ASSERT(r->nres == 1, "%zu resources [%s] for one virtual host", r->nres,
		  pu_names(r));
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule D11 ---------------- */

/*
 * rule D11: on delta ADS each type is its own world: the same name in two
 * types is two resources; one type's nonce answers nothing of another;
 * unsubscribing in one type leaves the other subscribed.
 */
START_TEST(d11_types_are_separate_worlds)
{
	pu_combo(_i); /* the label of failures */
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *rs, *rr;
	struct pu_req q = {.type = PU_RTDS, .error = "wrong type's nonce"};

	pu_snap_put(s, PU_SDS, "same", 1, NULL);
	pu_snap_put(s, PU_RTDS, "same", 1, NULL);
	e = pu_env_start(s);
	cl = pu_open(e, true, true, PU_SDS);
	pu_sub(cl, PU_SDS, "same", NULL);
	pu_sub(cl, PU_RTDS, "same", NULL);
	rs = expect_exactly(cl, PU_SDS, "same", "");
	pu_ack(cl, rs);
	rr = expect_exactly(cl, PU_RTDS, "same", "");
	PU_ASSERT(strcmp(rs->nonce, rr->nonce) != 0, "one nonce for two types");
	/* SDS's nonce on an RTDS request: no NACK of RTDS */
	q.nonce = rs->nonce;
	pu_send(cl, &q);
	pu_ack(cl, rr);
	PU_ASSERT(xdt_daemon_wait_log(e->d, "ACK of RTDS", pu_wait_ms()),
		  "the RTDS ACK was not taken");
	PU_ASSERT(!pu_env_log_has(e, "wrong type's nonce"),
		  "another type's nonce was taken as a NACK");
	pu_unsub(cl, PU_SDS, "same", NULL);
	pu_snap_put(s, PU_SDS, "same", 2, NULL);
	pu_snap_put(s, PU_RTDS, "same", 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, expect_exactly(cl, PU_RTDS, "same", ""));
	pu_expect_none(cl, 0);
	pu_resp_free(rs);
	pu_resp_free(rr);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_delta(Suite *s, bool subset)
{
	all = pu_combos(true, PU_ALL_TYPES, &nall);
	wild = pu_combos(true, PU_BIT(PU_LDS) | PU_BIT(PU_CDS) | PU_BIT(PU_SRDS),
			 &nwild);
	vhds = pu_combos(true, PU_BIT(PU_VHDS), &nvhds);

	if (subset) {
		pu_add_tests(s, "D4", d4_removed_resources,
			     pu_pick(all, nall, "delta ADS EDS"), 1);
		pu_add_tests(s, "D10", d10_subscribe_by_alias,
			     pu_pick(vhds, nvhds, "delta ADS VHDS"), 1);
		return;
	}
	pu_add_tests(s, "D1", d1_tracks_names_and_versions, all, nall);
	pu_add_tests(s, "D2", d2_wildcard_by_empty_first_request, wild, nwild);
	pu_add_tests(s, "D2", d2_wildcard_by_star_and_back, wild, nwild);
	pu_add_tests(s, "D2", d2_star_beside_names, wild, nwild);
	pu_add_tests(s, "D2", d2_names_first_is_not_wildcard, wild, nwild);
	pu_add_tests(s, "D3", d3_only_changed_with_versions, all, nall);
	pu_add_tests(s, "D4", d4_removed_resources, all, nall);
	pu_add_tests(s, "D4", d4_removed_resources_wildcard, wild, nwild);
	pu_add_tests(s, "D5", d5_resubscribe_resends, all, nall);
	pu_add_tests(s, "D6", d6_phantom_unsubscribe, all, nall);
	pu_add_tests(s, "D7", d7_initial_resource_versions, all, nall);
	pu_add_tests(s, "D7", d7_initial_resource_versions_wildcard, wild, nwild);
	pu_add_test(s, "D7", d7_restart_without_resend);
	pu_add_test(s, "D7", d7_restart_sends_only_changes);
	pu_add_tests(s, "D8", d8_missing_reported, all, nall);
	pu_add_tests(s, "D9", d9_nack, all, nall);
	pu_add_tests(s, "D9", d9_no_nonce_only_subscribes, all, nall);
	pu_add_tests(s, "D9", d9_stale_nonce_answers_nothing, all, nall);
	pu_add_tests(s, "D10", d10_subscribe_by_alias, vhds, nvhds);
	pu_add_tests(s, "D10", d10_removed_by_name, vhds, nvhds);
	pu_add_tests(s, "D10", d10_name_and_alias_sent_once, vhds, nvhds);
	pu_add_test(s, "D11", d11_types_are_separate_worlds);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("delta");

	xdtest_tmpdir();
	pu_register_delta(s, false);
	return pu_run(s);
}
#endif
