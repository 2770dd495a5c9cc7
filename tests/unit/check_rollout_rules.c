/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rollout's rules without a daemon: what every replica decides from
 * the record and the reports (rollout/decide.h), and the record and
 * report as they are written to and read from etcd or state_dir
 * (rollout/record.h), bad values refused with why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "rollout/decide.h"
#include "rollout/record.h"
#include "util/buf.h"
#include "util/log.h"
#include "xdtest.h"

#define PRINT_A "0123456789abcdef"
#define PRINT_B "fedcba9876543210"

static struct xd_config cfg;

static void setup(void)
{
	xd_config_init(&cfg, "/tmp", "/tmp/x.pb");
	cfg.rollout.on = true;
	cfg.rollout.bake_ms = 1000;
	cfg.rollout.max_nacks = 0;
	cfg.rollout.timeout_ms = 10000;
	cfg.rollout.canary_timeout_ms = 2000;
	cfg.rollout.require_canary = XD_REQUIRE_PER_KEY;
	cfg.rollout.on_canary_timeout = XD_CANARY_TIMEOUT_SKIP;
}

static void teardown(void)
{
	xd_config_free(&cfg);
}

/* A record under way since t=1000, a report of `keys` changed keys. */
static void record_init(struct xd_rollout_record *r, enum xd_rollout_state s)
{
	memset(r, 0, sizeof(*r));
	r->id = 41;
	r->state = s;
	memcpy(r->candidate, PRINT_A, 17);
	memcpy(r->stable, PRINT_B, 17);
	r->started_ms = 1000;
	r->baking_ms = s == XD_ROLLOUT_BAKING ? 2000 : 0;
	xd_rollout_text_set(&r->trigger, "etcd");
	xd_rollout_text_set(&r->by, "host/a");
	xd_rollout_text_set(&r->reason, "");
}

static struct xd_rollout_key_count *key(struct xd_rollout_report *r,
					const char *name, size_t canaries,
					size_t acked, bool proven)
{
	struct xd_rollout_key_count *k = xd_rollout_report_key(r, name);

	ck_assert_ptr_nonnull(k);
	k->canaries = canaries;
	k->acked = acked;
	k->proven = proven;
	return k;
}

static enum xd_rollout_decision decide(const struct xd_rollout_record *rec,
				       const struct xd_rollout_report *f,
				       int64_t now, char *why)
{
	return xd_rollout_decide(&cfg, rec, f, now, why, 1024);
}

/* ---------------- decisions ---------------- */

START_TEST(per_key_waits_for_every_key)
{
	struct xd_rollout_record rec;
	struct xd_rollout_report f = {0};
	char why[1024];

	record_init(&rec, XD_ROLLOUT_CANARY);
	f.canaries = f.answered = 1;
	key(&f, "default", 1, 1, true);
	key(&f, "edge", 0, 0, false);
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_WAIT);
	/* `any` is content with the one key */
	cfg.rollout.require_canary = XD_REQUIRE_ANY;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_BAKE);
	cfg.rollout.require_canary = XD_REQUIRE_PER_KEY;
	/* past the timeout, failed, naming the key */
	ck_assert_int_eq(decide(&rec, &f, 11000, why), XD_DECIDE_FAIL);
	ck_assert_msg(strstr(why, "not proven within the timeout of 10000 ms: no canary ACKed snapshot 'edge'") != NULL,
		      "%s", why);
	/* once edge is proven, it bakes */
	key(&f, "edge", 1, 1, true);
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_BAKE);
	ck_assert_str_eq(why, "every canary answered (1, 0 NACKs)");
	xd_rollout_report_clear(&f);
	xd_rollout_record_clear(&rec);
}
END_TEST

START_TEST(none_bakes_without_canaries)
{
	struct xd_rollout_record rec;
	struct xd_rollout_report f = {0};
	char why[1024];

	record_init(&rec, XD_ROLLOUT_CANARY);
	key(&f, "default", 0, 0, false);
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_WAIT);
	cfg.rollout.require_canary = XD_REQUIRE_ANY;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_WAIT);
	cfg.rollout.require_canary = XD_REQUIRE_NONE;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_BAKE);
	ck_assert_msg(strstr(why, "no canary is connected (require_canary: none)") != NULL, "%s", why);
	xd_rollout_report_clear(&f);
	xd_rollout_record_clear(&rec);
}
END_TEST

START_TEST(bake_then_promote_once_all_answered)
{
	struct xd_rollout_record rec;
	struct xd_rollout_report f = {0};
	char why[1024];

	record_init(&rec, XD_ROLLOUT_BAKING);
	f.canaries = 2;
	f.answered = 2;
	key(&f, "default", 2, 2, true);
	ck_assert_int_eq(decide(&rec, &f, 2500, why), XD_DECIDE_WAIT);
	ck_assert_int_eq(decide(&rec, &f, 3000, why), XD_DECIDE_PROMOTE);
	ck_assert_str_eq(why, "baked with 2 canaries and 0 NACKs");
	/* what `any` lets go unproven is said */
	key(&f, "edge", 0, 0, false);
	cfg.rollout.require_canary = XD_REQUIRE_ANY;
	ck_assert_int_eq(decide(&rec, &f, 3000, why), XD_DECIDE_PROMOTE);
	ck_assert_str_eq(why, "baked with 2 canaries and 0 NACKs; no canary ACKed snapshot 'edge'");
	cfg.rollout.require_canary = XD_REQUIRE_PER_KEY;
	key(&f, "edge", 1, 1, true);
	/* a canary that connected during the bake is waited for */
	f.canaries = 3;
	xd_rollout_list_add(&f.waiting, &f.nwaiting, XD_ROLLOUT_NAMES_MAX,
			    &f.waiting_total, "late-1");
	ck_assert_int_eq(decide(&rec, &f, 3000, why), XD_DECIDE_WAIT);
	/* and bounded by the timeout */
	ck_assert_int_eq(decide(&rec, &f, 12000, why), XD_DECIDE_FAIL);
	ck_assert_msg(strstr(why, "canaries that did not answer: 'late-1'") != NULL, "%s", why);
	/* at rest: nothing to decide */
	rec.state = XD_ROLLOUT_PROMOTED;
	ck_assert_int_eq(decide(&rec, &f, 3000, why), XD_DECIDE_WAIT);
	xd_rollout_report_clear(&f);
	xd_rollout_record_clear(&rec);
}
END_TEST

START_TEST(nacks_and_stuck_canaries_fail_it)
{
	struct xd_rollout_record rec;
	struct xd_rollout_report f = {0}, one = {0};
	struct xd_rollout_nack n = {"canary-1", "edge", "CDS", "v1", "no such lb", 7};
	char why[1024];

	record_init(&rec, XD_ROLLOUT_CANARY);
	key(&f, "default", 1, 0, false);
	f.canaries = 1;
	f.answered = 1;
	/* one NACK, within max_nacks 1 */
	cfg.rollout.max_nacks = 1;
	one.nacks = 1;
	one.nack_list = &n;
	one.nnack_list = 1;
	xd_rollout_report_merge(&f, &one);
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_WAIT);
	cfg.rollout.max_nacks = 0;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_str_eq(why, "1 NACK from canaries, more than max_nacks 0; the NACK past it from node 'canary-1' of CDS version v1: no such lb");
	f.nacks = 0;
	/* a stuck canary: skipped, or the rollout fails */
	xd_rollout_list_add(&f.stuck, &f.nstuck, XD_ROLLOUT_NAMES_MAX,
			    &f.stuck_total, "canary-2");
	key(&f, "default", 1, 1, true);
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_BAKE);
	cfg.rollout.on_canary_timeout = XD_CANARY_TIMEOUT_FAIL;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_msg(strstr(why, "canary node 'canary-2' did not answer within canary_timeout of 2000 ms") != NULL,
		      "%s", why);
	xd_rollout_report_clear(&f);
	xd_rollout_record_clear(&rec);
}
END_TEST

/* A NACK of another replica's, its fields as given (borrowed). */
static struct xd_rollout_nack nack_of(const char *node, int64_t at)
{
	struct xd_rollout_nack n = {(char *)node, "edge", "CDS", "v2", "bad", at};

	return n;
}

/*
 * The NACK a failed rollout's reason names is the one that failed it,
 * the first past max_nacks in time across the fleet, whichever replica
 * it came from and in whatever order the reports merge: each replica
 * keeps its first NACKs and the merge the fleet's earliest, so that it
 * is among them. One past what is kept is not named at all.
 */
START_TEST(the_nack_named_is_the_one_that_failed_it)
{
	struct xd_rollout_record rec;
	struct xd_rollout_report f = {0}, a = {0}, b = {0};
	struct xd_rollout_nack on_a[3] = {nack_of("canary-a1", 10), nack_of("canary-a2", 20),
					  nack_of("canary-a3", 30)};
	struct xd_rollout_nack on_b[1] = {nack_of("canary-b1", 5)};
	char why[1024];

	record_init(&rec, XD_ROLLOUT_CANARY);
	a.nacks = 3;
	a.nack_list = on_a;
	a.nnack_list = 3;
	b.nacks = 1;
	b.nack_list = on_b;
	b.nnack_list = 1;
	/* replica a's report merged first, b's NACK the fleet's first */
	xd_rollout_report_merge(&f, &a);
	xd_rollout_report_merge(&f, &b);
	ck_assert_uint_eq(f.nacks, 4);
	ck_assert_uint_eq(f.nnack_list, XD_ROLLOUT_NACKS_REPORTED);
	ck_assert_str_eq(f.nack_list[0].node_id, "canary-b1");
	ck_assert_str_eq(f.nack_list[1].node_id, "canary-a1");
	ck_assert_str_eq(f.nack_list[2].node_id, "canary-a2");
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_str_eq(why, "4 NACKs from canaries, more than max_nacks 0; the NACK past it from node 'canary-b1' of CDS version v2: bad");
	/* max_nacks 1: the second in time failed it */
	cfg.rollout.max_nacks = 1;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_msg(strstr(why, "more than max_nacks 1; the NACK past it from node 'canary-a1'") != NULL,
		      "%s", why);
	cfg.rollout.max_nacks = 2;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_msg(strstr(why, "the NACK past it from node 'canary-a2'") != NULL, "%s", why);
	/* the fourth is past what is kept: counted, not named */
	cfg.rollout.max_nacks = 3;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_str_eq(why, "4 NACKs from canaries, more than max_nacks 3");
	xd_rollout_report_clear(&f);
	/* merged the other way round: the same list */
	xd_rollout_report_merge(&f, &b);
	xd_rollout_report_merge(&f, &a);
	ck_assert_str_eq(f.nack_list[0].node_id, "canary-b1");
	ck_assert_str_eq(f.nack_list[2].node_id, "canary-a2");
	/* a later NACK finds no room; ties keep the order they came in */
	{
		struct xd_rollout_report c = {0};
		struct xd_rollout_nack late[2] = {nack_of("canary-late", 40), nack_of("canary-tie", 20)};

		c.nacks = 2;
		c.nack_list = late;
		c.nnack_list = 2;
		xd_rollout_report_merge(&f, &c);
		ck_assert_uint_eq(f.nacks, 6);
		ck_assert_uint_eq(f.nnack_list, XD_ROLLOUT_NACKS_REPORTED);
		ck_assert_str_eq(f.nack_list[2].node_id, "canary-a2");
	}
	xd_rollout_report_clear(&f);
	xd_rollout_record_clear(&rec);
}
END_TEST

/* Names in a reason are clipped (XD_LOG_CLIENT_MAX) and the reason is
 * bounded by its buffer, however many and however long they are. */
START_TEST(reasons_clipped_and_bounded)
{
	struct xd_rollout_record rec;
	struct xd_rollout_report f = {0};
	char why[1024], small[12], long_name[600], want[XD_LOG_CLIENT_MAX + 32];
	struct xd_rollout_nack n = {long_name, "edge", "CDS", "v1", long_name, 5};

	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	snprintf(want, sizeof(want), "'%.*s'", XD_LOG_CLIENT_MAX, long_name);
	record_init(&rec, XD_ROLLOUT_CANARY);
	for (int i = 0; i < 12; i++) {
		char name[16];

		snprintf(name, sizeof(name), "key-%02d", i);
		key(&f, name, 0, 0, false);
	}
	/* eleven more than fit: counted, the text cut at its end */
	ck_assert_uint_eq(xd_rollout_unproven(XD_REQUIRE_PER_KEY, &f, small, sizeof(small)), 12);
	ck_assert_str_eq(small, "'key-00', '");
	/* a long node id and message: clipped */
	f.nacks = 1;
	f.nack_list = &n;
	f.nnack_list = 1;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_msg(strstr(why, want) != NULL, "%s", why);
	ck_assert_msg(strstr(why, long_name + sizeof(long_name) - 1 - XD_LOG_CLIENT_MAX - 1) == NULL,
		      "not clipped: %s", why);
	f.nacks = 0;
	f.nack_list = NULL;
	f.nnack_list = 0;
	/* a long stuck canary: clipped too */
	cfg.rollout.on_canary_timeout = XD_CANARY_TIMEOUT_FAIL;
	xd_rollout_list_add(&f.stuck, &f.nstuck, XD_ROLLOUT_NAMES_MAX, &f.stuck_total,
			    long_name);
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	snprintf(want, sizeof(want), "canary node '%.*s' did", XD_LOG_CLIENT_MAX, long_name);
	ck_assert_msg(strstr(why, want) != NULL, "%s", why);
	xd_rollout_report_clear(&f);
	xd_rollout_record_clear(&rec);
}
END_TEST

START_TEST(unproven_lists_keys)
{
	struct xd_rollout_report f = {0};
	char names[1024], key_name[32];

	for (int i = 0; i < 12; i++) {
		snprintf(key_name, sizeof(key_name), "k%02d", i);
		key(&f, key_name, 0, 0, i == 3);
	}
	ck_assert_uint_eq(xd_rollout_unproven(XD_REQUIRE_PER_KEY, &f, names, sizeof(names)), 11);
	ck_assert_str_eq(names, "'k00', 'k01', 'k02', 'k04', 'k05', 'k06', 'k07', 'k08', 'k09', 'k10' (and 1 more)");
	ck_assert_uint_eq(xd_rollout_unproven(XD_REQUIRE_ANY, &f, names, sizeof(names)), 0);
	ck_assert_uint_eq(xd_rollout_unproven(XD_REQUIRE_NONE, &f, names, sizeof(names)), 0);
	xd_rollout_report_clear(&f);
}
END_TEST

/* Every reason said as it should be, in each of its forms: plurals,
 * names clipped and counted, a NACK without its details, the waiting
 * canaries and unproven keys together. */
START_TEST(reasons_in_every_form)
{
	struct xd_rollout_record rec;
	struct xd_rollout_report f = {0};
	struct xd_rollout_nack n[2] = {
		{"canary-1", "edge", "CDS", "v1", "old", 5},
		{"canary-2", "edge", "EDS", "v2", "new", 9},
	};
	char why[1024], long_name[600];

	record_init(&rec, XD_ROLLOUT_CANARY);
	/* two NACKs: the first named, the one past max_nacks 0, whatever
	 * their order in the list */
	f.nacks = 2;
	f.nack_list = n;
	f.nnack_list = 2;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_str_eq(why, "2 NACKs from canaries, more than max_nacks 0; the NACK past it from node 'canary-1' of CDS version v1: old");
	n[0].at_ms = 20;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert(strstr(why, "the NACK past it from node 'canary-2'") != NULL);
	/* counted but none kept (another replica's, past the bound) */
	f.nack_list = NULL;
	f.nnack_list = 0;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert_str_eq(why, "2 NACKs from canaries, more than max_nacks 0");
	f.nacks = 0;
	/* a stuck canary counted but not named */
	cfg.rollout.on_canary_timeout = XD_CANARY_TIMEOUT_FAIL;
	f.stuck_total = 1;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_FAIL);
	ck_assert(strstr(why, "canary node '?' did not answer") != NULL);
	f.stuck_total = 0;
	/* nothing changed to prove (no key), no canary: bakes */
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_BAKE);
	ck_assert_str_eq(why, "no canary is connected (require_canary: any or per_key, and no change to prove)");
	/* one canary, one NACK within max_nacks: singular */
	cfg.rollout.max_nacks = 1;
	f.canaries = f.answered = 1;
	f.nacks = 1;
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_BAKE);
	ck_assert_str_eq(why, "every canary answered (1, 1 NACK)");
	rec.state = XD_ROLLOUT_BAKING;
	rec.baking_ms = 2000;
	ck_assert_int_eq(decide(&rec, &f, 3000, why), XD_DECIDE_PROMOTE);
	ck_assert_str_eq(why, "baked with 1 canary and 1 NACK");
	/* `none` says what it let go unproven; and nothing when all is */
	cfg.rollout.require_canary = XD_REQUIRE_NONE;
	key(&f, "edge", 0, 0, false);
	ck_assert_int_eq(decide(&rec, &f, 3000, why), XD_DECIDE_PROMOTE);
	ck_assert_str_eq(why, "baked with 1 canary and 1 NACK; no canary ACKed snapshot 'edge'");
	key(&f, "edge", 1, 1, true);
	ck_assert_int_eq(decide(&rec, &f, 3000, why), XD_DECIDE_PROMOTE);
	ck_assert_str_eq(why, "baked with 1 canary and 1 NACK");
	cfg.rollout.require_canary = XD_REQUIRE_PER_KEY;
	/* past the timeout: the keys and the canaries waited for, long
	 * names clipped, the rest counted */
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	key(&f, "web", 0, 0, false);
	for (int i = 0; i < XD_ROLLOUT_NAMES_MAX + 2; i++)
		xd_rollout_list_add(&f.waiting, &f.nwaiting, XD_ROLLOUT_NAMES_MAX,
				    &f.waiting_total, i == 0 ? long_name : "late");
	ck_assert_int_eq(decide(&rec, &f, 1500, why), XD_DECIDE_WAIT);
	ck_assert_int_eq(decide(&rec, &f, 11000, why), XD_DECIDE_FAIL);
	ck_assert_msg(strstr(why, "no canary ACKed snapshot 'web'; canaries that did not answer: 'nnn") != NULL,
		      "%s", why);
	ck_assert_msg(strstr(why, "(and 2 more)") != NULL || strlen(why) == sizeof(why) - 1,
		      "%s", why);
	/* only canaries waited for */
	key(&f, "web", 1, 1, true);
	ck_assert_int_eq(decide(&rec, &f, 11000, why), XD_DECIDE_FAIL);
	{
		static const char want[] = "not proven within the timeout of 10000 ms: canaries that did not answer: ";

		ck_assert_msg(strncmp(why, want, strlen(want)) == 0, "%s", why);
	}
	/* no timeout, or a record with no start: it waits */
	cfg.rollout.timeout_ms = 0;
	ck_assert_int_eq(decide(&rec, &f, 11000, why), XD_DECIDE_WAIT);
	cfg.rollout.timeout_ms = 10000;
	rec.started_ms = 0;
	ck_assert_int_eq(decide(&rec, &f, 11000, why), XD_DECIDE_WAIT);
	/* a short buffer: cut, never overrun */
	{
		char names[16];

		ck_assert_uint_eq(xd_rollout_unproven(XD_REQUIRE_PER_KEY, &f, names,
						      sizeof(names)), 0);
		key(&f, "a-rather-long-key-name", 0, 0, false);
		key(&f, "b-rather-long-key-name", 0, 0, false);
		ck_assert_uint_eq(xd_rollout_unproven(XD_REQUIRE_PER_KEY, &f, names,
						      sizeof(names)), 2);
		ck_assert_uint_eq(strlen(names), sizeof(names) - 1);
	}
	xd_rollout_report_clear(&f);
	xd_rollout_record_clear(&rec);
}
END_TEST

/* ---------------- what is written ---------------- */

START_TEST(record_round_trip)
{
	struct xd_rollout_record rec, back, copy = {0};
	struct xd_buf b = XD_BUF_INIT;
	char why[256];

	record_init(&rec, XD_ROLLOUT_FAILED);
	rec.stable_revision = 37;
	rec.ended_ms = 5000;
	rec.now = true;
	xd_rollout_text_set(&rec.reason, "2 NACKs \"quoted\"\n");
	xd_rollout_list_add(&rec.keys, &rec.nkeys, XD_ROLLOUT_KEYS_MAX,
			    &rec.keys_total, "default");
	xd_rollout_list_add(&rec.uncovered, &rec.nuncovered, XD_ROLLOUT_KEYS_MAX,
			    NULL, "edge");
	xd_rollout_record_write(&rec, &b);
	ck_assert_int_eq(xd_rollout_record_read(&back, b.data, b.len, why, sizeof(why)), 0);
	ck_assert_uint_eq(back.id, 41);
	ck_assert_int_eq(back.state, XD_ROLLOUT_FAILED);
	ck_assert_str_eq(back.candidate, PRINT_A);
	ck_assert_str_eq(back.stable, PRINT_B);
	ck_assert_int_eq(back.stable_revision, 37);
	ck_assert_int_eq(back.ended_ms, 5000);
	ck_assert(back.now && !back.rollback);
	ck_assert_str_eq(back.reason, "2 NACKs \"quoted\"\n");
	ck_assert_str_eq(back.by, "host/a");
	ck_assert_uint_eq(back.nkeys, 1);
	ck_assert_str_eq(back.keys[0], "default");
	ck_assert_str_eq(back.uncovered[0], "edge");
	xd_rollout_record_copy(&copy, &back);
	ck_assert_str_eq(copy.trigger, "etcd");
	ck_assert_uint_eq(copy.keys_total, 1);
	xd_rollout_record_clear(&copy);
	xd_rollout_record_clear(&back);
	xd_rollout_record_clear(&rec);
	xd_buf_free(&b);
}
END_TEST

START_TEST(bad_records_refused_with_why)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"not json", "not a JSON object"},
		{"[1]", "not a JSON object"},
		{"{\"format\": 2}", "format 2, not 1"},
		{"{\"format\": 1, \"state\": \"canary\"}", "missing 'candidate'"},
		{"{\"format\": 1, \"state\": \"dozing\", \"candidate\": \"" PRINT_A "\"}",
		 "no such state: 'dozing'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"xyz\"}",
		 "not 16 hex digits: 'candidate'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"id\": -3}",
		 "not a non-negative integer: 'id'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"now\": 1}",
		 "not true or false: 'now'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"keys\": {}}",
		 "not a list: 'keys'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"keys\": [1]}",
		 "not a list of strings: 'keys'"},
		{"{\"format\": 1, \"state\": 3, \"candidate\": \"" PRINT_A "\"}",
		 "not a string: 'state'"},
		/* what another hand, or a newer or broken xdsd, may write */
		{"{\"format\": \"1\", \"state\": \"failed\"}",
		 "not a non-negative integer: 'format'"},
		{"{\"format\": 1.0, \"state\": \"failed\"}",
		 "not a non-negative integer: 'format'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"stable\": \"0123456789ABCDEF\"}",
		 "not 16 hex digits: 'stable'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"stable\": \"0123456789abcdef0\"}",
		 "not 16 hex digits: 'stable'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"rollback\": \"yes\"}",
		 "not true or false: 'rollback'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"rollback\": null}",
		 "not true or false: 'rollback'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"uncovered\": \"edge\"}",
		 "not a list: 'uncovered'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"uncovered\": [\"edge\", null]}",
		 "not a list of strings: 'uncovered'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"reason\": 7}",
		 "not a string: 'reason'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"started\": -1}",
		 "not a non-negative integer: 'started'"},
		{"{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"keys_total\": \"many\"}",
		 "not a non-negative integer: 'keys_total'"},
		{"{\"format\": 1, \"candidate\": \"" PRINT_A "\"}", "missing 'state'"},
		{"{\"format\": 1, \"state\": \"idle\", \"candidate\": \"" PRINT_A "\"}",
		 "no such state: 'idle'"},
		{"", "not a JSON object"},
		{"\"a string\"", "not a JSON object"},
	};
	struct xd_rollout_record r;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(xd_rollout_record_read(&r, bad[i].text,
							strlen(bad[i].text), why,
							sizeof(why)),
				 -1);
		ck_assert_msg(strstr(why, bad[i].why) != NULL, "%s: '%s', not '%s'",
			      bad[i].text, why, bad[i].why);
	}
	ck_assert_int_eq(xd_rollout_record_read(&r, "{}", XD_ROLLOUT_VALUE_MAX + 1,
						why, sizeof(why)),
			 -1);
	ck_assert_msg(strstr(why, "bytes, more than") != NULL, "%s", why);
	/* what may be left out, or empty, is read as such */
	{
		const char *ok = "{\"format\": 1, \"state\": \"failed\", \"candidate\": \"" PRINT_A "\", \"stable\": \"\", \"now\": true, "
				 "\"rollback\": false, \"keys\": [\"a\", \"b\"], \"keys_total\": 1}";

		ck_assert_int_eq(xd_rollout_record_read(&r, ok, strlen(ok), why, sizeof(why)), 0);
		ck_assert_str_eq(r.stable, "");
		ck_assert(r.now);
		ck_assert(!r.rollback);
		ck_assert_int_eq(r.state, XD_ROLLOUT_FAILED);
		/* a total never below what is named */
		ck_assert_uint_eq(r.keys_total, 2);
		ck_assert_str_eq(r.trigger, "");
		ck_assert_ptr_null(r.uncovered);
		xd_rollout_record_clear(&r);
	}
}
END_TEST

START_TEST(report_round_trip_and_merge)
{
	struct xd_rollout_report r = {0}, back, fleet = {0};
	struct xd_rollout_nack n = {"canary-1", "edge", "CDS", "v1", "refused", 7};
	struct xd_buf b = XD_BUF_INIT;
	char why[256];

	xd_rollout_text_set(&r.replica, "host/b:18000");
	r.pid = 42;
	r.started_ms = 9;
	r.rollout = 41;
	memcpy(r.candidate, PRINT_A, 17);
	r.canaries = 2;
	r.answered = 1;
	r.nacks = 1;
	r.nack_list = &n;
	r.nnack_list = 1;
	key(&r, "default", 2, 1, true);
	xd_rollout_list_add(&r.waiting, &r.nwaiting, XD_ROLLOUT_NAMES_MAX,
			    &r.waiting_total, "canary-2");
	xd_rollout_list_add(&r.stuck, &r.nstuck, XD_ROLLOUT_NAMES_MAX,
			    &r.stuck_total, "canary-3");
	r.nodes = calloc(1, sizeof(*r.nodes));
	r.nodes[0].key = strdup("edge");
	r.nodes[0].nodes = 3;
	r.nodes[0].canaries = 1;
	r.nnodes = r.nodes_total = 1;
	xd_rollout_report_write(&r, &b);
	ck_assert_int_eq(xd_rollout_report_read(&back, b.data, b.len, why, sizeof(why)), 0);
	ck_assert_str_eq(back.replica, "host/b:18000");
	ck_assert_uint_eq(back.rollout, 41);
	ck_assert_uint_eq(back.canaries, 2);
	ck_assert_uint_eq(back.nkeys, 1);
	ck_assert(back.keys[0].proven);
	ck_assert_str_eq(back.waiting[0], "canary-2");
	ck_assert_str_eq(back.stuck[0], "canary-3");
	ck_assert_str_eq(back.nack_list[0].message, "refused");
	ck_assert_uint_eq(back.nodes[0].nodes, 3);

	/* two replicas' canaries together */
	xd_rollout_report_merge(&fleet, &back);
	xd_rollout_report_merge(&fleet, &back);
	ck_assert_uint_eq(fleet.canaries, 4);
	ck_assert_uint_eq(fleet.nacks, 2);
	ck_assert_uint_eq(fleet.nkeys, 1);
	ck_assert_uint_eq(fleet.keys[0].canaries, 4);
	ck_assert_uint_eq(fleet.keys[0].acked, 2);
	ck_assert_uint_eq(fleet.waiting_total, 2);
	ck_assert_uint_eq(fleet.nnack_list, 2);
	ck_assert_uint_eq(fleet.nnodes, 1);
	ck_assert_uint_eq(fleet.nodes[0].nodes, 6);

	xd_rollout_report_clear(&back);
	ck_assert_int_eq(xd_rollout_report_read(&back, "{\"format\": 1, \"keys\": [3]}", 26,
						why, sizeof(why)),
			 -1);
	ck_assert_msg(strstr(why, "not a list of keys") != NULL, "%s", why);
	r.nack_list = NULL;
	r.nnack_list = 0;
	xd_rollout_report_clear(&r);
	xd_rollout_report_clear(&fleet);
	xd_buf_free(&b);
}
END_TEST

/* What another replica or a hand wrote is input: each way a report can
 * be wrong refused with why; the registration's fields read back; the
 * bounds of keys, NACKs and node counts held, and counted. */
START_TEST(reports_refused_bounded_and_merged)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"{\"format\": 1, \"health\": \"fine\"}", "no such health: 'fine'"},
		{"{\"format\": 1, \"health\": 1}", "not a string: 'health'"},
		{"{\"format\": 1, \"serving\": \"XYZ\"}", "not 16 hex digits: 'serving'"},
		{"{\"format\": 1, \"streams\": -1}", "not a non-negative integer: 'streams'"},
		{"{\"format\": 1, \"streams\": 1.5}", "not a non-negative integer: 'streams'"},
		{"{\"format\": 1, \"keys\": [{\"canaries\": 1}]}", "missing 'key'"},
		{"{\"format\": 1, \"keys\": {}}", "not a list: 'keys'"},
		{"{\"format\": 1, \"keys\": [{\"key\": \"a\", \"proven\": 1}]}", "not true or false: 'proven'"},
		{"{\"format\": 1, \"nack_list\": [3]}", "not a list of NACKs: 'nack_list'"},
		{"{\"format\": 1, \"nodes\": [3]}", "not a list of node counts: 'nodes'"},
		{"{\"format\": 1, \"nodes\": {}}", "not a list: 'nodes'"},
		{"{\"format\": 1, \"waiting\": [1]}", "not a list of strings: 'waiting'"},
		{"{\"format\": 1, \"format\": 1}", "not a JSON object"},
		{"{}", "format 0, not 1"},
		{"{\"format\": 1, \"keys\": [3]}", "not a list of keys: 'keys'"},
		{"{\"format\": 1, \"keys\": [{\"key\": 3}]}", "not a string: 'key'"},
		{"{\"format\": 1, \"keys\": [{\"key\": \"a\", \"acked\": -2}]}",
		 "not a non-negative integer: 'acked'"},
		{"{\"format\": 1, \"nack_list\": {}}", "not a list: 'nack_list'"},
		{"{\"format\": 1, \"nack_list\": [{\"node_id\": 1}]}", "not a string: 'node_id'"},
		{"{\"format\": 1, \"nack_list\": [{\"at\": \"now\"}]}",
		 "not a non-negative integer: 'at'"},
		{"{\"format\": 1, \"nodes\": [{\"nodes\": 1}]}", "missing 'key'"},
		{"{\"format\": 1, \"nodes\": [{\"key\": \"e\", \"canaries\": true}]}",
		 "not a non-negative integer: 'canaries'"},
		{"{\"format\": 1, \"stuck\": \"a\"}", "not a list: 'stuck'"},
		{"{\"format\": 1, \"candidate\": \"abc\"}", "not 16 hex digits: 'candidate'"},
		{"{\"format\": 1, \"replica\": []}", "not a string: 'replica'"},
	};
	struct xd_rollout_report r, fleet = {0}, many = {0};
	struct xd_rollout_nack n = {"c", "edge", "CDS", "v", "m", 1};
	struct xd_buf b = XD_BUF_INIT;
	char why[256], name[32];
	const char *good = "{\"format\": 1, \"replica\": \"h/x:1\", \"xds\": \"x:1\", "
			   "\"admin\": \"x:2\", \"version\": \"1.0\", \"revision\": 7, "
			   "\"serving\": \"" PRINT_A "\", \"health\": \"not_serving\", "
			   "\"health_why\": \"stopping\", \"streams\": 4, \"clients\": 3, "
			   "\"waiting\": [\"a\"], \"waiting_total\": 0, \"nodes\": "
			   "[{\"key\": \"edge\", \"nodes\": 2}], \"nodes_total\": 5}";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(xd_rollout_report_read(&r, bad[i].text, strlen(bad[i].text),
							why, sizeof(why)),
				 -1);
		ck_assert_msg(strstr(why, bad[i].why) != NULL, "%s: '%s', not '%s'",
			      bad[i].text, why, bad[i].why);
	}
	ck_assert_int_eq(xd_rollout_report_read(&r, good, strlen(good), why, sizeof(why)), 0);
	ck_assert_str_eq(r.xds, "x:1");
	ck_assert_str_eq(r.admin, "x:2");
	ck_assert_int_eq(r.revision, 7);
	ck_assert_str_eq(r.serving, PRINT_A);
	ck_assert_int_eq(r.health, XD_REPLICA_NOT_SERVING);
	ck_assert_str_eq(xd_replica_health_name(r.health), "not_serving");
	ck_assert_str_eq(xd_replica_health_name((enum xd_replica_health)99), "unknown");
	ck_assert_uint_eq(r.streams, 4);
	ck_assert_uint_eq(r.clients, 3);
	/* totals never below what is named */
	ck_assert_uint_eq(r.waiting_total, 1);
	ck_assert_uint_eq(r.nodes_total, 5);
	/* an older xdsd's report says nothing of its health */
	xd_rollout_report_clear(&r);
	ck_assert_int_eq(xd_rollout_report_read(&r, "{\"format\": 1}", 13, why, sizeof(why)), 0);
	ck_assert_int_eq(r.health, XD_REPLICA_UNKNOWN);
	xd_rollout_report_clear(&r);

	/* bounds: keys, NACKs, node keys */
	for (int i = 0; i < XD_ROLLOUT_KEYS_MAX; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		ck_assert_ptr_nonnull(xd_rollout_report_key(&many, name));
	}
	ck_assert_ptr_null(xd_rollout_report_key(&many, "one-more"));
	ck_assert_ptr_nonnull(xd_rollout_report_key(&many, "k7")); /* known */
	many.nack_list = &n;
	many.nnack_list = 1;
	for (int i = 0; i < XD_ROLLOUT_NACKS_REPORTED + 2; i++)
		xd_rollout_report_merge(&fleet, &many);
	ck_assert_uint_eq(fleet.nnack_list, XD_ROLLOUT_NACKS_REPORTED);
	ck_assert_uint_eq(fleet.nkeys, XD_ROLLOUT_KEYS_MAX);
	many.nack_list = NULL;
	many.nnack_list = 0;
	xd_rollout_report_clear(&many);
	xd_rollout_report_clear(&fleet);
	xd_buf_printf(&b, "{\"format\": 1, \"nodes\": [");
	for (int i = 0; i < XD_ROLLOUT_NODES_MAX + 2; i++)
		xd_buf_printf(&b, "%s{\"key\": \"n%d\", \"nodes\": 1}", i ? ", " : "", i);
	xd_buf_printf(&b, ", {\"key\": \"n0\", \"nodes\": 1}]}");
	ck_assert_int_eq(xd_rollout_report_read(&r, b.data, b.len, why, sizeof(why)), 0);
	ck_assert_uint_eq(r.nnodes, XD_ROLLOUT_NODES_MAX);
	ck_assert_uint_eq(r.nodes_total, XD_ROLLOUT_NODES_MAX + 2);
	ck_assert_uint_eq(r.nodes[0].nodes, 2); /* n0 twice: one key */
	/* merged: the ones past the bound counted, not named */
	xd_rollout_report_merge(&fleet, &r);
	ck_assert_uint_eq(fleet.nnodes, XD_ROLLOUT_NODES_MAX);
	ck_assert_uint_eq(fleet.nodes_total, XD_ROLLOUT_NODES_MAX + 2);
	xd_rollout_report_clear(&r);
	xd_rollout_report_clear(&fleet);
	xd_buf_free(&b);
}
END_TEST

/* A record written without its texts reads back with empty ones; one
 * whose total is below its list is raised to it. */
START_TEST(records_without_texts)
{
	struct xd_rollout_record r = {0}, back;
	struct xd_buf b = XD_BUF_INIT;
	const char *low = "{\"format\": 1, \"state\": \"canary\", \"candidate\": \"" PRINT_A
			  "\", \"keys\": [\"a\", \"b\"], \"keys_total\": 1, \"rollback\": true}";
	char why[256];

	r.id = 9;
	r.state = XD_ROLLOUT_ABORTED;
	memcpy(r.candidate, PRINT_A, 17);
	xd_rollout_record_write(&r, &b);
	ck_assert_int_eq(xd_rollout_record_read(&back, b.data, b.len, why, sizeof(why)), 0);
	ck_assert_str_eq(back.trigger, "");
	ck_assert_str_eq(back.by, "");
	ck_assert_str_eq(back.stable, "");
	ck_assert_int_eq(back.state, XD_ROLLOUT_ABORTED);
	xd_rollout_record_clear(&back);
	ck_assert_int_eq(xd_rollout_record_read(&back, low, strlen(low), why, sizeof(why)), 0);
	ck_assert_uint_eq(back.keys_total, 2);
	ck_assert(back.rollback);
	xd_rollout_record_clear(&back);
	xd_buf_free(&b);
}
END_TEST

START_TEST(names_are_bounded)
{
	char **list = NULL;
	size_t n = 0, total = 0;
	char long_name[XD_ROLLOUT_TEXT_MAX * 2];

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	for (int i = 0; i < XD_ROLLOUT_NAMES_MAX + 5; i++)
		xd_rollout_list_add(&list, &n, XD_ROLLOUT_NAMES_MAX, &total, long_name);
	ck_assert_uint_eq(n, XD_ROLLOUT_NAMES_MAX);
	ck_assert_uint_eq(total, XD_ROLLOUT_NAMES_MAX + 5);
	ck_assert_uint_eq(strlen(list[0]), XD_ROLLOUT_TEXT_MAX);
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
	ck_assert_str_eq(xd_rollout_state_name(XD_ROLLOUT_BAKING), "baking");
	ck_assert(!xd_rollout_state_active(XD_ROLLOUT_FAILED));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rollout_rules");
	TCase *tc = tcase_create("decide");
	TCase *rec = tcase_create("record");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, per_key_waits_for_every_key);
	tcase_add_test(tc, none_bakes_without_canaries);
	tcase_add_test(tc, bake_then_promote_once_all_answered);
	tcase_add_test(tc, nacks_and_stuck_canaries_fail_it);
	tcase_add_test(tc, the_nack_named_is_the_one_that_failed_it);
	tcase_add_test(tc, reasons_clipped_and_bounded);
	tcase_add_test(tc, unproven_lists_keys);
	tcase_add_test(tc, reasons_in_every_form);
	tcase_add_test(rec, record_round_trip);
	tcase_add_test(rec, bad_records_refused_with_why);
	tcase_add_test(rec, report_round_trip_and_merge);
	tcase_add_test(rec, names_are_bounded);
	tcase_add_test(rec, reports_refused_bounded_and_merged);
	tcase_add_test(rec, records_without_texts);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, rec);
	return xdtest_run(s);
}
