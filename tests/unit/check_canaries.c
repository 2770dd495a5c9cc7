/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rollout's canaries (rollout/canaries.h): who is one (the rule the
 * rollout hands the sessions), and each canary stream kept from the
 * engine's events alone (protocol/session.h): known from its
 * admission, waiting once a response is sent, answered once it ACKs
 * or NACKs, following the snapshot it is served, and forgotten when
 * its stream goes away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rollout/canaries.h"
#include "snapshot/snapshot.h"
#include "snapshot/table.h"
#include "util/clock.h"
#include "util/common.h"
#include "xdtest.h"

static struct xd_snapshot *snap(const char *key, const char *content)
{
	struct xd_table *tables[XD_RTYPE_COUNT] = {0};
	struct xd_table_builder *b = xd_table_builder_new(XD_CLUSTER);
	const struct xd_entry *first;

	ck_assert_int_eq(xd_table_builder_add(b, "c", (const uint8_t *)content,
					      strlen(content), NULL, 0, NULL, 0,
					      "t.yaml", 1, &first),
			 0);
	tables[XD_CLUSTER] = xd_table_builder_finish(b);
	return xd_snapshot_new(key, tables);
}

/* A canary stream's view with one type (CDS) in state `sync`, a
 * response in flight when `in_flight`. */
static void view_of(struct xd_client_view *v, uint64_t stream,
		    const struct xd_snapshot *served, enum xd_sub_sync sync,
		    bool in_flight)
{
	memset(v, 0, sizeof(*v));
	v->stream_id = stream;
	v->node_id = "canary-1";
	v->node_cluster = "";
	v->key = "default";
	v->peer = "ipv4:127.0.0.1:1";
	v->canary = true;
	v->snapshot = served;
	v->ntypes = 1;
	v->types[0].label = "CDS";
	v->types[0].sync = sync;
	if (in_flight) {
		v->types[0].pending_since_ms = xd_wall_ms();
		v->types[0].pending_ms = 0;
	}
}

static void note(struct xd_canaries *c, enum xd_sessions_event_kind k,
		 const struct xd_client_view *v)
{
	xd_canaries_note(c, &(struct xd_sessions_event){
				    .kind = k, .view = v, .type = "CDS",
				    .version = "v", .nonce = 1,
				    .message = k == XD_SESSIONS_NACK ? "bad" : NULL,
				    .message_len = k == XD_SESSIONS_NACK ? 3 : 0});
}

/* Whether node (`id`, `cluster`) is a canary under `cfg`'s rollout. */
static bool canary(struct xd_config *cfg, const char *id, const char *cluster)
{
	struct xd_client c = {0};

	c.node_id = (char *)id;
	c.node_cluster = (char *)cluster;
	return xd_canary_rule(cfg, &c);
}

/* rollout.canary globs the node id, "cluster:GLOB" its cluster;
 * rollout.percent picks a share of the ids by their hash, the same
 * ones every time; without rollout: nobody is a canary. */
START_TEST(canaries_by_glob_cluster_and_percent)
{
	char *globs[] = {"canary-*", "cluster:staging-*"};
	struct xd_config cfg = {0};
	int picked = 0;

	ck_assert(!canary(&cfg, "canary-1", "web"));
	cfg.rollout.on = true;
	cfg.rollout.canary = globs;
	cfg.rollout.ncanary = 2;
	ck_assert(canary(&cfg, "canary-1", "web"));
	ck_assert(canary(&cfg, "web-1", "staging-eu"));
	ck_assert(!canary(&cfg, "web-1", "web"));
	ck_assert(!canary(&cfg, "cluster:staging-eu", "web"));
	cfg.rollout.ncanary = 0;
	cfg.rollout.percent = 100;
	ck_assert(canary(&cfg, "web-1", "web"));
	cfg.rollout.percent = 30;
	for (int i = 0; i < 1000; i++) {
		char id[32];
		bool first;

		snprintf(id, sizeof(id), "node-%d", i);
		first = canary(&cfg, id, "web");
		ck_assert(canary(&cfg, id, "other") == first); /* by the id alone */
		picked += first;
	}
	/* about 300 of 1000 */
	ck_assert_msg(picked > 230 && picked < 370, "%d of 1000", picked);
}
END_TEST

START_TEST(events_alone_keep_each_canary)
{
	struct xd_canaries c = {0};
	struct xd_snapshot *stable = snap("default", "s"), *cand = snap("default", "c");
	struct xd_client_view v;

	/* admitted before any snapshot: known, serving nothing */
	view_of(&v, 7, NULL, XD_SUB_PENDING, false);
	note(&c, XD_SESSIONS_ADMITTED, &v);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_ptr_null(c.v[0].serving);
	ck_assert_str_eq(c.v[0].node_id, "canary-1");

	/* served the candidate, its response sent: it waits */
	view_of(&v, 7, cand, XD_SUB_PENDING, true);
	note(&c, XD_SESSIONS_SENT, &v);
	ck_assert_ptr_eq(c.v[0].serving, cand);
	ck_assert(c.v[0].pending && c.v[0].waits && !c.v[0].nacked);

	/* a second canary, ahead of it by stream id: entries stay sorted */
	view_of(&v, 3, stable, XD_SUB_SYNCED, false);
	note(&c, XD_SESSIONS_ADMITTED, &v);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_uint_eq(c.v[0].stream_id, 3);
	ck_assert_uint_eq(c.v[1].stream_id, 7);

	/* the NACK: answered, refused; nothing in flight any more */
	view_of(&v, 7, cand, XD_SUB_NACKED, false);
	note(&c, XD_SESSIONS_NACK, &v);
	ck_assert(!c.v[1].pending && !c.v[1].waits && c.v[1].nacked);
	ck_assert_uint_eq(xd_canary_waited(&c.v[1], xd_mono_ms()), 0);

	/* sent again and ACKed: answered, taken */
	view_of(&v, 7, cand, XD_SUB_PENDING, true);
	note(&c, XD_SESSIONS_SENT, &v);
	view_of(&v, 7, cand, XD_SUB_SYNCED, false);
	note(&c, XD_SESSIONS_ACK, &v);
	ck_assert(!c.v[1].pending && !c.v[1].nacked);
	ck_assert_uint_eq(c.v[1].ntypes, 1);

	/* back on the stable set (the rollout rolled back) */
	view_of(&v, 7, stable, XD_SUB_SYNCED, false);
	note(&c, XD_SESSIONS_SERVING, &v);
	ck_assert_ptr_eq(c.v[1].serving, stable);

	/* a canary that goes away is forgotten; an unknown GONE is none */
	note(&c, XD_SESSIONS_GONE, &v);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(c.v[0].stream_id, 3);
	note(&c, XD_SESSIONS_GONE, &v);
	ck_assert_uint_eq(c.n, 1);

	/* the entries held their snapshots: freed with the table */
	xd_canaries_clear(&c);
	ck_assert_uint_eq(c.n, 0);
	xd_snapshot_unref(stable);
	xd_snapshot_unref(cand);
}
END_TEST

/* A response unanswered counts its wait from its send, not from the
 * event that told of it. */
START_TEST(a_wait_is_counted_from_the_send)
{
	struct xd_canaries c = {0};
	struct xd_snapshot *cand = snap("default", "c");
	struct xd_client_view v;
	uint64_t now = xd_mono_ms();

	view_of(&v, 1, cand, XD_SUB_PENDING, true);
	v.types[0].pending_ms = 5000; /* sent five seconds before the event */
	note(&c, XD_SESSIONS_SENT, &v);
	ck_assert_uint_ge(xd_canary_waited(&c.v[0], now + 1000), 6000);
	xd_canaries_clear(&c);
	xd_snapshot_unref(cand);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("canaries");
	TCase *tc = tcase_create("events");

	tcase_add_test(tc, canaries_by_glob_cluster_and_percent);
	tcase_add_test(tc, events_alone_keep_each_canary);
	tcase_add_test(tc, a_wait_is_counted_from_the_send);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
