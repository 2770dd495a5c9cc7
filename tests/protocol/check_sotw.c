/* SPDX-License-Identifier: Apache-2.0 */
/*
 * State of the world (rules S1-S13 of docs/protocol.md), against the
 * real xdsd over gRPC on loopback.
 *
 * Each test is written once and registered for every (method, type)
 * where its rule applies: the per-type SotW method of every type but
 * VHDS (incremental only), and the aggregated method for the same type.
 * Test names carry the combo: "s4_nack_recorded_not_resent [ADS CDS]".
 */
#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

static const struct pu_combo *all, *full, *partial;
static size_t nall, nfull, npartial;

static bool is_nonce(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return false;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* ---------------- rule S1 ---------------- */

/* rule S1: the node of the first request selects the snapshot; later requests
 * without a node keep it. */
START_TEST(s1_first_node_is_used)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *def = pu_snap_of(t, "a", NULL);
	struct pu_snap *blue = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(def);
	struct pu_client *cl;
	struct pu_resp *r;

	pu_env_write(e, "blue", blue);
	pu_env_reload(e);
	cl = pu_connect(e, c);
	pu_client_node(cl, "node-1", "blue", NULL);
	pu_sub(cl, t, a, b, NULL); /* the only request with a node */
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b"); /* b exists in "blue" only */
	pu_ack(cl, r);
	pu_resp_free(r);

	pu_snap_put(blue, t, b, 2, NULL);
	pu_env_write(e, "blue", blue);
	pu_env_reload(e);
	r = pu_expect(cl, t);
	PU_ASSERT(pu_find(r, b) != NULL, "the change of blue's b was not sent");
	pu_ack(cl, r);
	pu_resp_free(r);

	pu_snap_put(def, t, a, 3, NULL);
	pu_env_set(e, def);
	pu_expect_none(cl, 0); /* the default snapshot is not this node's */
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(def);
	pu_snap_free(blue);
}
END_TEST

/* rule S1: repeating the same node is fine; a different node on the same
 * stream ends it with INVALID_ARGUMENT. */
START_TEST(s1_other_node_ends_stream)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;
	struct pu_req q = {.type = t, .names = &a, .nnames = 1};

	pu_sub(cl, t, a, NULL);
	r = pu_expect(cl, t);
	q.version = r->version;
	q.nonce = r->nonce;
	q.node = PU_NODE_ALWAYS; /* same node again: fine */
	pu_send(cl, &q);
	pu_resp_free(r);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	q.version = r->version;
	q.nonce = r->nonce;
	q.node_id = "node-2";
	pu_send(cl, &q);
	pu_expect_status(cl, GRPC_STATUS_INVALID_ARGUMENT, "node");
	pu_resp_free(r);
	pu_client_free(cl);
	/* only that stream: the daemon serves the next one */
	cl = pu_connect(e, c);
	pu_sub(cl, t, a, NULL);
	pu_resp_free(pu_expect(cl, t));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S2 ---------------- */

/* rule S2: an empty first request is a wildcard, and the stream stays in it
 * (later name lists are ignored). */
START_TEST(s2_empty_first_request_is_wildcard)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b");
	pu_ack(cl, r);
	pu_resp_free(r);
	/* a name list later does not leave the legacy wildcard: no answer
	 * to it (the next response is the one below), and c comes */
	pu_sub(cl, t, "a", NULL);
	pu_snap_put(s, t, "c", 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b", "c");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule S2: the name "*" is a wildcard; new resources are sent unasked. */
START_TEST(s2_star_is_wildcard)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, "*", NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, t, "c", 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b", "c");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule S2: a first request with names is not a wildcard. */
START_TEST(s2_names_first_is_not_wildcard)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, "a", NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, t, "c", 1, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S3 ---------------- */

struct vmodel {
	struct pu_strs names;
	char versions[64][17];
};

static void vmodel_apply(struct vmodel *m, const struct pu_resp *r, bool replace)
{
	if (replace)
		pu_strs_clear(&m->names);
	for (size_t i = 0; i < r->nres; i++) {
		size_t k;

		pu_strs_add(&m->names, r->res[i].name);
		for (k = 0; k < m->names.n; k++)
			if (strcmp(m->names.v[k], r->res[i].name) == 0)
				break;
		ck_assert(k < 64);
		pu_hash_hex(r->res[i].body, r->res[i].len, m->versions[k]);
	}
}

static void vmodel_version(const struct vmodel *m, char out[17])
{
	const char *v[64];

	for (size_t i = 0; i < m->names.n; i++)
		v[i] = m->versions[i];
	pu_table_version((const char *const *)m->names.v, v, m->names.n, out);
}

/* rule S3: version_info (the type's version: a content hash of the type's
 * resources), a decimal nonce unique on the stream, the type_url, and
 * resources of that type only. */
START_TEST(s3_response_fields)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct vmodel m = {0};
	char *nonces[3], *versions[3], want[17];

	pu_sub(cl, t, a, b, NULL);
	for (int step = 0; step < 3; step++) {
		struct pu_resp *r = pu_expect(cl, t);

		PU_ASSERT(strcmp(r->type_url, pu_type_url(t)) == 0,
			  "type_url '%s'", r->type_url);
		PU_ASSERT(pu_is_hex16(r->version), "version_info '%s'", r->version);
		PU_ASSERT(is_nonce(r->nonce), "nonce '%s'", r->nonce);
		for (size_t i = 0; i < r->nres; i++) {
			PU_ASSERT(r->res[i].url != NULL &&
					  strcmp(r->res[i].url, pu_type_url(t)) == 0,
				  "resource '%s' of type '%s'", r->res[i].name,
				  r->res[i].url ? r->res[i].url : "");
			PU_ASSERT(!r->res[i].wrapped, "wrapped without the feature");
		}
		vmodel_apply(&m, r, pu_full_state(t));
		vmodel_version(&m, want);
		PU_ASSERT(strcmp(r->version, want) == 0,
			  "step %d: version_info '%s', the table's is '%s'", step,
			  r->version, want);
		nonces[step] = strdup(r->nonce);
		versions[step] = strdup(r->version);
		for (int k = 0; k < step; k++) {
			PU_ASSERT(strcmp(nonces[k], nonces[step]) != 0,
				  "nonce '%s' used twice", nonces[step]);
			PU_ASSERT(strcmp(versions[k], versions[step]) != 0,
				  "new content, same version '%s'", versions[step]);
		}
		pu_ack(cl, r);
		pu_resp_free(r);
		pu_snap_put(s, t, step == 0 ? a : b, 2 + step, NULL);
		if (step < 2)
			pu_env_set(e, s);
	}
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S4 ---------------- */

/* rule S4: a NACK is recorded (one log line with the node, the version and
 * the client's message), the NACKed version is not sent again, the next
 * change is. */
START_TEST(s4_nack_recorded_not_resent)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r, *r2;

	pu_client_node(cl, "nacking-node", "test", NULL);
	pu_sub(cl, t, a, NULL);
	r = pu_expect(cl, t);
	pu_nack(cl, r, "bad config in test");
	/* the same request again: still not resent */
	pu_nack(cl, r, "bad config in test");
	pu_expect_none(cl, 0);
	pu_env_expect_log(e, "node 'nacking-node': NACK of %s version %s: bad config in test",
			  pu_type_label(t), r->version);

	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r2 = pu_expect(cl, t);
	PU_ASSERT_NAMES(r2, t, "a");
	PU_ASSERT(strcmp(r2->version, r->version) != 0, "same version after a change");
	pu_resp_free(r);
	pu_resp_free(r2);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule S4: an ACK is recorded: nothing is resent, and a NACK of a later
 * version keeps what was ACKed. */
START_TEST(s4_ack_then_nack_of_next)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, NULL);
	r = pu_expect(cl, t);
	pu_ack(cl, r);
	pu_env_expect_log(e, "ACK of %s version %s", pu_type_label(t), r->version);
	pu_resp_free(r);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	pu_nack(cl, r, "second version rejected");
	pu_env_expect_log(e, "NACK of %s version %s: second version rejected",
			  pu_type_label(t), r->version);
	pu_expect_none(cl, 0);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S5 ---------------- */

/* rule S5: a request whose nonce is not the latest gets no response, and
 * changes nothing. */
START_TEST(s5_stale_nonce_ignored)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	const char *ab[] = {a, b};
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r1, *r2, *r3;
	struct pu_req q = {.type = t, .names = ab, .nnames = 2};

	pu_sub(cl, t, a, NULL);
	r1 = pu_expect(cl, t);
	pu_ack(cl, r1);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r2 = pu_expect(cl, t);
	pu_ack(cl, r2);

	/* the earlier nonce, asking for b: stale */
	q.version = r1->version;
	q.nonce = r1->nonce;
	pu_send(cl, &q);
	/* a nonce never sent: stale */
	q.version = r2->version;
	q.nonce = "987654";
	pu_send(cl, &q);
	pu_expect_none(cl, 0);
	/* the latest nonce: b comes */
	q.nonce = r2->nonce;
	pu_send(cl, &q);
	r3 = pu_expect(cl, t);
	PU_ASSERT(pu_find(r3, b) != NULL, "b not sent for the current request");
	pu_resp_free(r1);
	pu_resp_free(r2);
	pu_resp_free(r3);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S6 ---------------- */

/* rule S6: an ACK of the current version gets nothing until a subscribed
 * resource changes (not for unsubscribed changes, nor for a reload that
 * changes nothing). */
START_TEST(s6_send_only_on_change)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, NULL);
	r = pu_expect(cl, t);
	pu_ack(cl, r);
	pu_ack(cl, r); /* the same ACK again */
	pu_resp_free(r);
	pu_snap_put(s, t, b, 2, NULL); /* not subscribed */
	pu_env_set(e, s);
	pu_env_set(e, s); /* no change at all */
	pu_expect_none(cl, 0); /* to none of the four */
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S7 ---------------- */

/*
 * After the client dropped names, the server owes no response (the
 * client forgets what it dropped); LDS and CDS may still answer, but
 * only with the full state that is left: exactly `left` (NULL: none).
 * Non-full-state types must not answer (rule S9: nothing unsubscribed).
 */
static void shrunk(struct pu_client *cl, enum pu_type t, const char *left)
{
	struct pu_resp *r = pu_recv(cl, pu_quiet_ms());

	if (r == NULL)
		return;
	PU_ASSERT(pu_full_state(t), "a %s response after unsubscribing: [%s]",
		  pu_type_label(t), pu_names(r));
	if (left != NULL)
		PU_ASSERT_NAMES(r, t, left);
	else
		PU_ASSERT(r->nres == 0, "[%s] after unsubscribing all", pu_names(r));
	pu_ack(cl, r);
	pu_resp_free(r);
}

/* rule S7: newly requested names are sent, even unchanged and sent before. */
START_TEST(s7_new_names_sent)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_sub(cl, t, a, b, NULL);
	r = pu_expect(cl, t);
	PU_ASSERT(pu_find(r, b) != NULL, "newly requested b not sent");
	if (pu_full_state(t))
		PU_ASSERT_NAMES(r, t, "a", "b");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_sub(cl, t, a, NULL); /* b dropped */
	shrunk(cl, t, "a");
	pu_sub(cl, t, a, b, NULL); /* b again: sent before, unchanged */
	r = pu_expect(cl, t);
	PU_ASSERT(pu_find(r, b) != NULL, "re-requested b not sent");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S8 ---------------- */

/* rule S8: LDS and CDS responses carry every subscribed resource; a deleted
 * one is left out; an empty response deletes all. Explicit names or
 * wildcard (loop index parity). */
static void full_state(int i, bool wildcard)
{
	const struct pu_combo *c = pu_combo(i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", "c", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	if (wildcard)
		pu_sub(cl, t, NULL);
	else
		pu_sub(cl, t, "a", "b", "c", NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b", "c");
	pu_ack(cl, r);
	pu_resp_free(r);

	pu_snap_put(s, t, "a", 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b", "c"); /* unchanged ones too */
	pu_ack(cl, r);
	pu_resp_free(r);

	pu_snap_del(s, t, "b");
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "c");
	pu_ack(cl, r);
	pu_resp_free(r);

	pu_snap_del(s, t, "a");
	pu_snap_del(s, t, "c");
	pu_snap_put(s, PU_SDS, "other", 1, NULL); /* some snapshot remains */
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT(r->nres == 0, "expected an empty response, got %zu resources",
		  r->nres);
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}

START_TEST(s8_full_state_names)
{
	full_state(_i, false);
}
END_TEST

START_TEST(s8_full_state_wildcard)
{
	full_state(_i, true);
}
END_TEST

/* ---------------- rule S9 ---------------- */

/* rule S9: RDS, SRDS, EDS, SDS, RTDS carry the subscribed resources that
 * changed, never unsubscribed ones. */
START_TEST(s9_only_changed_subscribed)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", "c", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, b, NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a", "b");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, t, pu_name(t, "c"), 2, NULL); /* never subscribed */
	pu_env_set(e, s);
	pu_sub(cl, t, a, NULL); /* b unsubscribed */
	pu_expect_none(cl, 0); /* to neither */
	pu_snap_put(s, t, a, 3, NULL);
	pu_snap_put(s, t, b, 3, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S10 ---------------- */

/* rule S10: a requested name that does not exist is remembered and sent when
 * it appears, without asking again. */
START_TEST(s10_missing_name_remembered)
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
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, t, z, 1, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	if (pu_full_state(t))
		PU_ASSERT_NAMES(r, t, "a", "z");
	else
		PU_ASSERT_NAMES(r, t, "z");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S11 ---------------- */

static void assert_unique(const struct pu_resp *r)
{
	for (size_t i = 0; i < r->nres; i++)
		for (size_t k = i + 1; k < r->nres; k++)
			PU_ASSERT(strcmp(r->res[i].name, r->res[k].name) != 0,
				  "'%s' twice in one response", r->res[i].name);
}

/* rule S11: a response never carries the same name twice, even when the
 * request repeats names (or names "*" beside a name). */
START_TEST(s11_no_duplicate_names)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, a, b, b, a, NULL);
	r = pu_expect(cl, t);
	assert_unique(r);
	PU_ASSERT_NAMES(r, t, "a", "b");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	assert_unique(r);
	pu_resp_free(r);
	pu_client_free(cl);
	if (pu_full_state(t)) {
		cl = pu_connect(e, c);
		pu_sub(cl, t, "*", a, a, NULL);
		r = pu_expect(cl, t);
		assert_unique(r);
		PU_ASSERT_NAMES(r, t, "a", "b");
		pu_resp_free(r);
		pu_client_free(cl);
	}
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S12 ---------------- */

/* rule S12: on reconnect a client presenting an old version gets the current
 * state; presenting the current one it may get nothing, or else the
 * complete current state. */
START_TEST(s12_reconnect_with_version)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r1, *r2, *r3;
	struct pu_req q = {.type = t};

	pu_sub(cl, t, NULL);
	r1 = pu_expect(cl, t);
	pu_ack(cl, r1);
	pu_client_free(cl);
	pu_snap_put(s, t, "a", 2, NULL);
	pu_env_set(e, s);

	cl = pu_connect(e, c);
	q.version = r1->version;
	pu_send(cl, &q);
	r2 = pu_expect(cl, t);
	PU_ASSERT_NAMES(r2, t, "a", "b");
	PU_ASSERT(strcmp(r2->version, r1->version) != 0, "old version resent");
	pu_ack(cl, r2);
	pu_client_free(cl);

	cl = pu_connect(e, c);
	q.version = r2->version;
	pu_send(cl, &q);
	r3 = pu_recv(cl, pu_quiet_ms());
	if (r3 != NULL) {
		PU_ASSERT_NAMES(r3, t, "a", "b");
		PU_ASSERT(strcmp(r3->version, r2->version) == 0,
			  "version '%s', expected '%s'", r3->version, r2->version);
	}
	pu_resp_free(r1);
	pu_resp_free(r2);
	pu_resp_free(r3);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule S12 with rule L1: a table with TTLs is sent to a wildcard client
 * that reconnects naming its version all the same. A TTL may have run
 * out while the client was away: Envoy then dropped the resource and
 * still names the version it last accepted, so that version no longer
 * says what it holds. */
START_TEST(s12_reconnect_after_ttl_resent)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r1, *r2;
	struct pu_req q = {.type = t};
	const char *features = "xds.config.supports-resource-in-sotw,"
			       "xds.config.supports-resource-ttl";

	/* long enough that no heartbeat (a whole state in SotW) comes
	 * within the test */
	pu_snap_ttl(s, t, pu_name(t, "a"), 600000);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_client_node(cl, "node-ttl", "test", features);
	pu_sub(cl, t, NULL);
	r1 = pu_expect(cl, t);
	pu_ack(cl, r1);
	pu_client_free(cl);

	cl = pu_connect(e, c);
	pu_client_node(cl, "node-ttl", "test", features);
	q.version = r1->version;
	pu_send(cl, &q);
	r2 = pu_expect(cl, t);
	PU_ASSERT_NAMES(r2, t, "a", "b");
	PU_ASSERT(strcmp(r2->version, r1->version) == 0, "version '%s', expected '%s'",
		  r2->version, r1->version);
	/* a response, not the heartbeat a resumed stream would get at
	 * once, whose content is the same in SotW */
	PU_ASSERT(!pu_env_log_has(e, "reconnected holding the current version") &&
			  !pu_env_log_has(e, "heartbeat of"),
		  "the reconnected client was taken to hold what it named");
	pu_resp_free(r1);
	pu_resp_free(r2);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule S12 (with rule S7): on a new stream, a client naming resources gets them
 * even when it presents the current version (the server cannot know it
 * holds them). */
START_TEST(s12_reconnect_named_resent)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	const char *ab[] = {a, b};
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r1, *r2;
	struct pu_req q = {.type = t, .names = ab, .nnames = 2};

	pu_sub(cl, t, a, b, NULL);
	r1 = pu_expect(cl, t);
	pu_ack(cl, r1);
	pu_client_free(cl);
	cl = pu_connect(e, c);
	q.version = r1->version;
	pu_send(cl, &q);
	r2 = pu_expect(cl, t);
	PU_ASSERT_NAMES(r2, t, "a", "b");
	pu_resp_free(r1);
	pu_resp_free(r2);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule S12: on the aggregated stream each type has its own version: a change
 * of one type moves that type's version only and sends only it. */
START_TEST(s12_versions_per_type_on_ads)
{
	pu_combo(_i); /* the label of failures */
	static const enum pu_type order[] = {PU_SDS, PU_RTDS, PU_CDS, PU_EDS,
					     PU_LDS, PU_RDS, PU_SRDS};
	enum { N = sizeof(order) / sizeof(order[0]) };
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	char *versions[PU_NTYPES] = {0};
	struct pu_resp *r;

	for (int i = 0; i < N; i++)
		pu_snap_put(s, order[i], "a", 1, NULL);
	e = pu_env_start(s);
	cl = pu_open(e, false, true, PU_CDS);
	for (int i = 0; i < N; i++) {
		if (order[i] == PU_RDS)
			pu_sub(cl, PU_RDS, "a", "srds_rc", NULL);
		else
			pu_sub(cl, order[i], "a", NULL);
	}
	for (int i = 0; i < N; i++) {
		struct vmodel m = {0};
		char want[17];

		r = pu_expect(cl, order[i]); /* in the order of rule A2 */
		for (size_t k = 0; k < r->nres; k++)
			PU_ASSERT(strcmp(r->res[k].url, pu_type_url(order[i])) == 0,
				  "a %s resource in a %s response", r->res[k].url,
				  pu_type_label(order[i]));
		vmodel_apply(&m, r, true);
		vmodel_version(&m, want);
		PU_ASSERT(strcmp(r->version, want) == 0,
			  "%s version '%s', its table's is '%s'",
			  pu_type_label(order[i]), r->version, want);
		versions[order[i]] = strdup(r->version);
		pu_ack(cl, r);
		pu_resp_free(r);
	}
	for (int i = 0; i < N; i++)
		for (int k = i + 1; k < N; k++)
			PU_ASSERT(strcmp(versions[order[i]], versions[order[k]]) != 0,
				  "%s and %s share version '%s'", pu_type_label(order[i]),
				  pu_type_label(order[k]), versions[order[i]]);
	/* one type changes: only it is sent, with a new version */
	pu_snap_put(s, PU_EDS, "a", 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, PU_EDS);
	PU_ASSERT(strcmp(r->version, versions[PU_EDS]) != 0, "EDS version unchanged");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_snap_put(s, PU_RTDS, "a", 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, PU_RTDS);
	PU_ASSERT(strcmp(r->version, versions[PU_RTDS]) != 0, "RTDS version unchanged");
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule S13 ---------------- */

/* rule S13: a request listing fewer names unsubscribes the others; an empty
 * list (after the first request) means no interest at all. */
START_TEST(s13_unsubscribe_by_list)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(cl, t, a, b, NULL);
	r = pu_expect(cl, t);
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_sub(cl, t, a, NULL);
	shrunk(cl, t, "a");
	/* b's change is not sent: the next response is a's alone */
	pu_snap_put(s, t, b, 2, NULL);
	pu_env_set(e, s);
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_ack(cl, r);
	pu_resp_free(r);

	pu_sub(cl, t, NULL); /* no interest */
	shrunk(cl, t, NULL);
	pu_snap_put(s, t, a, 3, NULL);
	pu_snap_put(s, t, b, 3, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_sotw(Suite *s, bool subset)
{
	all = pu_combos(false, PU_ALL_TYPES, &nall);
	full = pu_combos(false, PU_BIT(PU_LDS) | PU_BIT(PU_CDS) | PU_BIT(PU_SRDS),
			 &nfull);
	partial = pu_combos(false, PU_ALL_TYPES & ~(PU_BIT(PU_LDS) | PU_BIT(PU_CDS) |
						    PU_BIT(PU_SRDS)),
			    &npartial);

	if (subset) {
		pu_add_tests(s, "S3", s3_response_fields, pu_pick(all, nall, "ADS CDS"), 1);
		pu_add_tests(s, "S4", s4_nack_recorded_not_resent, pu_pick(all, nall, "EDS"), 1);
		return;
	}
	pu_add_tests(s, "S1", s1_first_node_is_used, all, nall);
	pu_add_tests(s, "S1", s1_other_node_ends_stream, all, nall);
	pu_add_tests(s, "S2", s2_empty_first_request_is_wildcard, full, nfull);
	pu_add_tests(s, "S2", s2_star_is_wildcard, full, nfull);
	pu_add_tests(s, "S2", s2_names_first_is_not_wildcard, full, nfull);
	pu_add_tests(s, "S3", s3_response_fields, all, nall);
	pu_add_tests(s, "S4", s4_nack_recorded_not_resent, all, nall);
	pu_add_tests(s, "S4", s4_ack_then_nack_of_next, all, nall);
	pu_add_tests(s, "S5", s5_stale_nonce_ignored, all, nall);
	pu_add_tests(s, "S6", s6_send_only_on_change, all, nall);
	pu_add_tests(s, "S7", s7_new_names_sent, all, nall);
	pu_add_tests(s, "S8", s8_full_state_names, full, nfull);
	pu_add_tests(s, "S8", s8_full_state_wildcard, full, nfull);
	pu_add_tests(s, "S9", s9_only_changed_subscribed, partial, npartial);
	pu_add_tests(s, "S10", s10_missing_name_remembered, all, nall);
	pu_add_tests(s, "S11", s11_no_duplicate_names, all, nall);
	pu_add_tests(s, "S12", s12_reconnect_with_version, full, nfull);
	pu_add_tests(s, "S12", s12_reconnect_after_ttl_resent, full, nfull);
	pu_add_tests(s, "S12", s12_reconnect_named_resent, all, nall);
	pu_add_test(s, "S12", s12_versions_per_type_on_ads);
	pu_add_tests(s, "S13", s13_unsubscribe_by_list, all, nall);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("sotw");

	xdtest_tmpdir();
	pu_register_sotw(s, false);
	return pu_run(s);
}
#endif
