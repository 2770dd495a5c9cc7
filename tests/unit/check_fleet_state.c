/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fleet's shared part (rollout/fleet.c) on a backend of the test's
 * own, that answers when the test says: proposals one at a time, the
 * newest waiting, a rival's record taken, a failed write; the record
 * told on the loop, never from within a call; other replicas' reports
 * kept, replaced, dropped, bounded, a restarted replica's old one
 * superseded; what is registered, from whom; the stop ending what
 * waits. And the record kept in state_dir (rollout/fleet_file.c): saved
 * and read back by the next process, a save that fails and one that
 * succeeds again, a record that cannot be read. Everything on a real
 * libuv loop and real files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "rollout/fleet_int.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "xdtest.h"

#define PRINT_A "0123456789abcdef"
#define PRINT_B "fedcba9876543210"

static struct xd_config cfg;
static uv_loop_t loop;

/* ---------------- a backend of the test's own ---------------- */

struct fake {
	int writes;                       /* be->write calls */
	struct xd_rollout_record last;    /* the last one asked */
	int64_t last_expect;
	char published[4096];
	int publishes;
	bool reachable, stopped, freed;
};

static struct fake fake;

static void fake_write(struct xd_fleet *f, const struct xd_rollout_record *rec,
		       int64_t expect)
{
	(void)f;
	fake.writes++;
	xd_rollout_record_copy(&fake.last, rec);
	fake.last_expect = expect;
}

static void fake_publish(struct xd_fleet *f, const uint8_t *text, size_t len)
{
	(void)f;
	fake.publishes++;
	snprintf(fake.published, sizeof(fake.published), "%.*s", (int)len,
		 (const char *)text);
}

static bool fake_reachable(const struct xd_fleet *f)
{
	(void)f;
	return fake.reachable;
}

static const char *fake_self_id(const struct xd_fleet *f)
{
	(void)f;
	return "self-id";
}

static void fake_stop(struct xd_fleet *f)
{
	(void)f;
	fake.stopped = true;
}

static void fake_free(struct xd_fleet *f)
{
	(void)f;
	fake.freed = true;
}

static const struct xd_fleet_backend fake_backend = {
	fake_write, fake_publish, fake_reachable, fake_self_id, fake_stop,
	fake_free,
};

static struct xd_fleet *fake_fleet(bool shared)
{
	struct xd_fleet *f = calloc(1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	xd_fleet__init(f, &loop, &cfg, "host/a:1", &fake_backend, "the test",
		       shared);
	return f;
}

/* Stops `f`, runs the loop dry and frees it. */
static void fleet_close(struct xd_fleet *f)
{
	xd_fleet_stop(f);
	xd_fleet_stop(f); /* once is enough */
	uv_run(&loop, UV_RUN_DEFAULT);
	xd_fleet_free(f);
}

/* fleet_close, a fake one: its backend stopped and freed. */
static void fleet_end(struct xd_fleet *f)
{
	fleet_close(f);
	ck_assert(fake.stopped && fake.freed);
}

/* ---------------- what the callers hear ---------------- */

static int told;

static void on_record(void *arg)
{
	(void)arg;
	told++;
}

struct done {
	int calls;
	bool taken;
	char why[256];
};

static void on_done(void *arg, bool taken, const char *why)
{
	struct done *d = arg;

	d->calls++;
	d->taken = taken;
	snprintf(d->why, sizeof(d->why), "%s", why != NULL ? why : "");
}

static void record_init(struct xd_rollout_record *r, uint64_t id,
			enum xd_rollout_state s)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->state = s;
	memcpy(r->candidate, PRINT_A, 17);
	memcpy(r->stable, PRINT_B, 17);
	r->stable_revision = 37;
	xd_rollout_text_set(&r->trigger, "etcd");
	xd_rollout_text_set(&r->by, "host/a:1");
	xd_rollout_text_set(&r->reason, "");
}

static void setup(void)
{
	ck_assert(xd_loop_thread_claim());
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	xd_config_init(&cfg, "/tmp", "/tmp/x.pb");
	cfg.rollout.on = true;
	memset(&fake, 0, sizeof(fake));
	told = 0;
	/* every log line written, so that none hides a mistake in its
	 * arguments */
	xd_log_set_level(XD_LOG_DEBUG);
}

static void teardown(void)
{
	xd_rollout_record_clear(&fake.last);
	xd_config_free(&cfg);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}

/* ---------------- proposals ---------------- */

START_TEST(proposals_one_at_a_time)
{
	struct xd_fleet *f = fake_fleet(true);
	struct xd_rollout_record a, b, c, rival;
	struct done da = {0}, db = {0}, dc = {0};

	xd_fleet_on_record(f, on_record, NULL);
	record_init(&a, 41, XD_ROLLOUT_CANARY);
	record_init(&b, 41, XD_ROLLOUT_BAKING);
	record_init(&c, 41, XD_ROLLOUT_PROMOTED);
	xd_fleet_propose(f, &a, on_done, &da);
	ck_assert_int_eq(fake.writes, 1);
	ck_assert_int_eq(fake.last_expect, 0); /* no record yet */
	/* a second while the first is written waits; a third replaces it */
	xd_fleet_propose(f, &b, on_done, &db);
	xd_fleet_propose(f, &c, on_done, &dc);
	ck_assert_int_eq(fake.writes, 1);
	ck_assert_int_eq(db.calls, 1);
	ck_assert(!db.taken);
	ck_assert_str_eq(db.why, "replaced by a newer decision before it was written");
	/* the first taken: it is the record, told before its asker hears */
	xd_fleet__written(f, true, &a, 10, NULL);
	ck_assert_int_eq(told, 1);
	ck_assert(da.calls == 1 && da.taken);
	ck_assert_uint_eq(xd_fleet_record(f)->id, 41);
	/* and the waiting one is written, against the record's mark */
	ck_assert_int_eq(fake.writes, 2);
	ck_assert_int_eq(fake.last_expect, 10);
	ck_assert_int_eq(fake.last.state, XD_ROLLOUT_PROMOTED);
	/* another replica's record won: that one is the record */
	record_init(&rival, 41, XD_ROLLOUT_FAILED);
	xd_fleet__written(f, false, &rival, 12, NULL);
	ck_assert(dc.calls == 1 && !dc.taken);
	ck_assert_str_eq(dc.why, "another replica changed the rollout's record first");
	ck_assert_int_eq(xd_fleet_record(f)->state, XD_ROLLOUT_FAILED);
	/* a write that failed changes nothing */
	xd_fleet_propose(f, &a, on_done, &da);
	xd_fleet__written(f, false, NULL, 0, "etcd is not read yet");
	ck_assert(da.calls == 2 && !da.taken);
	ck_assert_str_eq(da.why, "etcd is not read yet");
	ck_assert_int_eq(xd_fleet_record(f)->state, XD_ROLLOUT_FAILED);
	/* no asker to tell: fine too */
	xd_fleet_propose(f, &b, NULL, NULL);
	xd_fleet__written(f, true, &b, 13, NULL);
	ck_assert_int_eq(xd_fleet_record(f)->state, XD_ROLLOUT_BAKING);

	/* stopping ends what is written and what waits */
	xd_fleet_propose(f, &a, on_done, &da);
	xd_fleet_propose(f, &c, on_done, &dc);
	xd_fleet_stop(f);
	ck_assert(da.calls == 3 && !da.taken);
	ck_assert_str_eq(da.why, "xdsd is stopping");
	ck_assert(dc.calls == 2 && !dc.taken);
	/* and refuses what comes after */
	xd_fleet_propose(f, &a, on_done, &da);
	ck_assert(da.calls == 4 && !da.taken);
	ck_assert(!xd_fleet_reachable(f));
	fleet_end(f);
	xd_rollout_record_clear(&a);
	xd_rollout_record_clear(&b);
	xd_rollout_record_clear(&c);
	xd_rollout_record_clear(&rival);
}
END_TEST

/*
 * A record the backend holds but cannot read is taken as none, yet a
 * write expects it (its mark), so that the next rollout replaces it;
 * once deleted, a write expects none. A rival's unreadable record that
 * won a write is such a record too; a write taken at a mark older than
 * the one known leaves the record known as it is.
 */
START_TEST(an_unreadable_record_is_replaced)
{
	struct xd_fleet *f = fake_fleet(true);
	struct xd_rollout_record r, newer;
	struct done d = {0};

	record_init(&r, 41, XD_ROLLOUT_CANARY);
	xd_fleet__record_unreadable(f, 20);
	xd_fleet__record_unreadable(f, 20); /* seen again: nothing */
	ck_assert_ptr_null(xd_fleet_record(f));
	xd_fleet_propose(f, &r, on_done, &d);
	ck_assert_int_eq(fake.last_expect, 20);
	xd_fleet__written(f, false, NULL, 0, "etcd is not read yet");
	/* deleted: none expected */
	xd_fleet__record(f, NULL, 21);
	xd_fleet_propose(f, &r, on_done, &d);
	ck_assert_int_eq(fake.last_expect, 0);
	/* a rival's that cannot be read won: it is expected next */
	xd_fleet__written(f, false, NULL, 30, NULL);
	ck_assert(d.calls == 2 && !d.taken);
	ck_assert_ptr_null(xd_fleet_record(f));
	xd_fleet_propose(f, &r, on_done, &d);
	ck_assert_int_eq(fake.last_expect, 30);
	xd_fleet__written(f, true, &r, 31, NULL);
	ck_assert(d.calls == 3 && d.taken);
	ck_assert_uint_eq(xd_fleet_record(f)->id, 41);
	/* a newer record read meanwhile stays when an older write is taken */
	record_init(&newer, 42, XD_ROLLOUT_CANARY);
	xd_fleet__record(f, &newer, 40);
	xd_fleet_propose(f, &r, on_done, &d);
	ck_assert_int_eq(fake.last_expect, 40);
	xd_fleet__written(f, true, &r, 35, NULL);
	ck_assert_uint_eq(xd_fleet_record(f)->id, 42);
	fleet_end(f);
	/* nothing to stop or free */
	xd_fleet_stop(NULL);
	xd_fleet_free(NULL);
	xd_rollout_record_clear(&r);
	xd_rollout_record_clear(&newer);
}
END_TEST

START_TEST(the_record_told_on_the_loop)
{
	struct xd_fleet *f = fake_fleet(true);
	struct xd_rollout_record r;

	xd_fleet_on_record(f, on_record, NULL);
	record_init(&r, 41, XD_ROLLOUT_CANARY);
	xd_fleet__record(f, &r, 5);
	xd_fleet__record(f, &r, 6);
	ck_assert_int_eq(told, 0); /* not from within the call */
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_int_eq(told, 1); /* once for both */
	/* as old as the one known, or older: ignored */
	r.state = XD_ROLLOUT_FAILED;
	xd_fleet__record(f, &r, 6);
	xd_fleet__record(f, &r, 2);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_int_eq(told, 1);
	ck_assert_int_eq(xd_fleet_record(f)->state, XD_ROLLOUT_CANARY);
	/* under way: the etcd source is anchored at the stable revision */
	ck_assert_int_eq(xd_fleet_anchor(f), 37);
	cfg.rollout.on = false; /* without `rollout:`, never */
	ck_assert_int_eq(xd_fleet_anchor(f), 0);
	cfg.rollout.on = true;
	r.state = XD_ROLLOUT_PROMOTED;
	xd_fleet__record(f, &r, 7);
	ck_assert_int_eq(xd_fleet_anchor(f), 0);
	/* gone */
	xd_fleet__record(f, NULL, 8);
	xd_fleet__record(f, NULL, 9);
	ck_assert_ptr_null(xd_fleet_record(f));
	ck_assert_int_eq(xd_fleet_anchor(f), 0);
	/* a poke tells too, unless nobody listens */
	xd_fleet__poke(f);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_int_eq(told, 2);
	xd_fleet_on_record(f, NULL, NULL);
	xd_fleet__poke(f);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_int_eq(told, 2);
	ck_assert_str_eq(xd_fleet_where(f), "the test");
	ck_assert(xd_fleet_shared(f));
	fake.reachable = true;
	ck_assert(xd_fleet_reachable(f));
	fleet_end(f);
	xd_rollout_record_clear(&r);
}
END_TEST

/* ---------------- reports and the registration ---------------- */

static void report_of(struct xd_rollout_report *r, const char *replica,
		      int64_t started)
{
	memset(r, 0, sizeof(*r));
	xd_rollout_text_set(&r->replica, replica);
	r->started_ms = started;
	r->canaries = 1;
}

START_TEST(reports_kept_replaced_bounded)
{
	struct xd_fleet *f = fake_fleet(true);
	struct xd_rollout_report r;
	char id[32], name[64];

	xd_fleet_on_record(f, on_record, NULL);
	report_of(&r, "host/b:1", 100);
	xd_fleet__report(f, "b1", &r);
	ck_assert_ptr_null(r.replica); /* taken */
	report_of(&r, "host/b:1", 200); /* b restarted: a new lease */
	xd_fleet__report(f, "b2", &r);
	report_of(&r, "host/a:1", 300); /* this replica's own name */
	xd_fleet__report(f, "a0", &r);
	report_of(&r, "host/c:1", 100);
	r.canaries = 5;
	xd_fleet__report(f, "c1", &r);
	report_of(&r, "host/c:1", 100); /* the same, anew */
	r.canaries = 6;
	xd_fleet__report(f, "c1", &r);
	ck_assert_uint_eq(xd_fleet_nreports(f), 4);
	for (size_t i = 0; i < xd_fleet_nreports(f); i++) {
		const char *rid = xd_fleet_report_id(f, i);
		bool current = xd_fleet_report_current(f, i);

		if (strcmp(rid, "b1") == 0 || strcmp(rid, "a0") == 0)
			ck_assert_msg(!current, "%s listed", rid);
		else
			ck_assert_msg(current, "%s not listed", rid);
		if (strcmp(rid, "c1") == 0)
			ck_assert_uint_eq(xd_fleet_report(f, i)->canaries, 6);
	}
	/* gone, and gone again */
	xd_fleet__report(f, "b2", NULL);
	xd_fleet__report(f, "b2", NULL);
	ck_assert_uint_eq(xd_fleet_nreports(f), 3);
	for (size_t i = 0; i < xd_fleet_nreports(f); i++)
		if (strcmp(xd_fleet_report_id(f, i), "b1") == 0)
			ck_assert(xd_fleet_report_current(f, i)); /* the newest now */
	/* two of one name started at once: one of them */
	report_of(&r, "host/d:1", 100);
	xd_fleet__report(f, "d1", &r);
	report_of(&r, "host/d:1", 100);
	xd_fleet__report(f, "d2", &r);
	{
		int listed = 0;

		for (size_t i = 0; i < xd_fleet_nreports(f); i++)
			if (strncmp(xd_fleet_report_id(f, i), "d", 1) == 0)
				listed += xd_fleet_report_current(f, i);
		ck_assert_int_eq(listed, 1);
	}
	/* bounded: the ones past XD_FLEET_REPLICAS_MAX are left out */
	for (int i = 0; i < XD_FLEET_REPLICAS_MAX + 3; i++) {
		snprintf(id, sizeof(id), "x%d", i);
		snprintf(name, sizeof(name), "host/x%d:1", i);
		report_of(&r, name, 1);
		xd_fleet__report(f, id, &r);
		xd_rollout_report_clear(&r); /* left with what was refused */
	}
	ck_assert_uint_eq(xd_fleet_nreports(f), XD_FLEET_REPLICAS_MAX);
	xd_fleet__reports_clear(f);
	ck_assert_uint_eq(xd_fleet_nreports(f), 0);
	fleet_end(f);
}
END_TEST

static void fill_self(void *arg, struct xd_rollout_report *r)
{
	(void)arg;
	r->xds = "10.0.0.5:18000";
	r->admin = "10.0.0.5:18080";
	r->version = "9.9";
	r->revision = 42;
	memcpy(r->serving, PRINT_B, 17);
	r->health = XD_REPLICA_DEGRADED;
	r->health_why = "its etcd source is not watching";
	r->streams = 3;
	r->clients = 2;
}

static void fill_rollout(void *arg, struct xd_rollout_report *r)
{
	(void)arg;
	r->rollout = 41;
	memcpy(r->candidate, PRINT_A, 17);
	r->canaries = 1;
	r->answered = 1;
}

START_TEST(the_registration_from_who_knows_it)
{
	struct xd_fleet *f = fake_fleet(true), *alone;
	struct xd_rollout_report back;
	struct xd_buf text = XD_BUF_INIT;
	char why[256];

	xd_fleet_on_self(f, fill_self, NULL);
	xd_fleet_on_report(f, fill_rollout, NULL);
	xd_fleet_publish(f);
	ck_assert_int_eq(fake.publishes, 1);
	ck_assert_int_eq(xd_rollout_report_read(&back, fake.published,
						strlen(fake.published), why, sizeof(why)),
			 0);
	ck_assert_str_eq(back.replica, "host/a:1");
	ck_assert_int_eq(back.pid, getpid());
	ck_assert_int_eq(back.started_ms, xd_fleet_started(f));
	ck_assert_str_eq(back.xds, "10.0.0.5:18000");
	ck_assert_str_eq(back.admin, "10.0.0.5:18080");
	ck_assert_str_eq(back.version, "9.9");
	ck_assert_int_eq(back.revision, 42);
	ck_assert_str_eq(back.serving, PRINT_B);
	ck_assert_int_eq(back.health, XD_REPLICA_DEGRADED);
	ck_assert_str_eq(back.health_why, "its etcd source is not watching");
	ck_assert_uint_eq(back.streams, 3);
	ck_assert_uint_eq(back.clients, 2);
	ck_assert_uint_eq(back.rollout, 41);
	ck_assert_uint_eq(back.answered, 1);
	xd_rollout_report_clear(&back);
	/* the registration timer writes it again: as it is unchanged, the
	 * backend is handed the same text */
	fake.publishes = 0;
	uv_run(&loop, UV_RUN_ONCE);
	ck_assert_int_eq(fake.publishes, 1);
	/* renamed once its port is known */
	xd_fleet_set_replica(f, "host/a:2");
	ck_assert_str_eq(xd_fleet_replica(f), "host/a:2");
	xd_fleet_self_json(f, &text);
	ck_assert(strstr((const char *)text.data, "\"replica\":\"host/a:2\"") != NULL);
	ck_assert_str_eq(xd_fleet_self_id(f), "self-id");
	xd_buf_free(&text);
	fleet_end(f);

	/* not shared: nobody reads it, nothing is written */
	memset(&fake, 0, sizeof(fake));
	alone = fake_fleet(false);
	xd_fleet_publish(alone);
	ck_assert_int_eq(fake.publishes, 0);
	fleet_end(alone);
}
END_TEST

/* ---------------- the record in state_dir ---------------- */

/* Runs the loop a while: the answers, on the next turn, and the saves,
 * on the thread pool, are over. */
static void settle(void)
{
	for (int i = 0; i < 200; i++) {
		uv_run(&loop, UV_RUN_NOWAIT);
		xdtest_sleep_ms(5);
	}
}

START_TEST(the_record_in_state_dir)
{
	char *dir = xdtest_snapdir(), *path, *text, *moved;
	struct xd_fleet *f;
	struct xd_rollout_record r;
	struct done d = {0};

	record_init(&r, 3, XD_ROLLOUT_FAILED);
	/* nothing saved yet: no record */
	f = xd_fleet_new_file(&loop, &cfg, dir, "host/a:1");
	ck_assert_ptr_null(xd_fleet_record(f));
	ck_assert(!xd_fleet_shared(f));
	ck_assert(xd_fleet_reachable(f));
	ck_assert_str_eq(xd_fleet_self_id(f), "");
	xd_fleet_publish(f); /* nobody else reads it */
	xd_fleet_propose(f, &r, on_done, &d);
	ck_assert_int_eq(d.calls, 0); /* answered on the loop */
	settle();
	ck_assert(d.calls == 1 && d.taken);
	ck_assert_uint_eq(xd_fleet_record(f)->id, 3);
	fleet_close(f);
	ck_assert(asprintf(&path, "%s/" XD_FLEET_STATE_FILE, dir) > 0);
	text = xdtest_read_file(path, NULL);
	ck_assert(strstr(text, "\"state\":\"failed\"") != NULL);
	free(text);

	/* the next process reads it */
	f = xd_fleet_new_file(&loop, &cfg, dir, "host/a:1");
	ck_assert_ptr_nonnull(xd_fleet_record(f));
	ck_assert_int_eq(xd_fleet_record(f)->state, XD_ROLLOUT_FAILED);
	/* its directory gone: the save fails, the record is still taken */
	ck_assert(asprintf(&moved, "%s.moved", dir) > 0);
	ck_assert(rename(dir, moved) == 0);
	r.state = XD_ROLLOUT_ABORTED;
	xd_fleet_propose(f, &r, on_done, &d);
	settle();
	ck_assert(d.calls == 2 && d.taken);
	/* back: the next save succeeds */
	ck_assert(rename(moved, dir) == 0);
	r.state = XD_ROLLOUT_PROMOTED;
	xd_fleet_propose(f, &r, on_done, &d);
	/* and one more, waiting while it is saved */
	r.id = 4;
	xd_fleet_propose(f, &r, NULL, NULL);
	settle();
	ck_assert(d.calls == 3 && d.taken);
	ck_assert_uint_eq(xd_fleet_record(f)->id, 4);
	fleet_close(f);
	text = xdtest_read_file(path, NULL);
	ck_assert_msg(strstr(text, "\"id\":4") != NULL, "%s", text);
	free(text);

	/* a record that cannot be read: none, said, and the next rollout's
	 * replaces it */
	free(xdtest_write_file(dir, XD_FLEET_STATE_FILE, "{\"format\": 1}"));
	f = xd_fleet_new_file(&loop, &cfg, dir, "host/a:1");
	ck_assert_ptr_null(xd_fleet_record(f));
	r.id = 5;
	r.state = XD_ROLLOUT_CANARY;
	xd_fleet_propose(f, &r, on_done, &d);
	settle();
	ck_assert(d.calls == 4 && d.taken);
	fleet_close(f);
	text = xdtest_read_file(path, NULL);
	ck_assert_msg(strstr(text, "\"id\":5,\"state\":\"canary\"") != NULL, "%s", text);
	free(text);
	/* read back under way, as a restart mid-rollout finds it */
	f = xd_fleet_new_file(&loop, &cfg, dir, "host/a:1");
	ck_assert_ptr_nonnull(xd_fleet_record(f));
	ck_assert_int_eq(xd_fleet_record(f)->state, XD_ROLLOUT_CANARY);
	ck_assert_uint_eq(xd_fleet_record(f)->id, 5);
	fleet_close(f);
	/* one that is not a file: none either */
	ck_assert(unlink(path) == 0 && mkdir(path, 0755) == 0);
	f = xd_fleet_new_file(&loop, &cfg, dir, "host/a:1");
	ck_assert_ptr_null(xd_fleet_record(f));
	/* gone while a save runs: the save frees what is left */
	ck_assert(rmdir(path) == 0);
	xd_fleet_propose(f, &r, NULL, NULL);
	xd_fleet_stop(f);
	xd_fleet_free(f);
	uv_run(&loop, UV_RUN_DEFAULT);

	/* in memory: no state_dir */
	f = xd_fleet_new_file(&loop, &cfg, NULL, "host/a:1");
	ck_assert_str_eq(xd_fleet_where(f), "memory");
	xd_fleet_propose(f, &r, on_done, &d);
	settle();
	ck_assert(d.calls == 5 && d.taken);
	fleet_close(f);
	xd_rollout_record_clear(&r);
	free(path);
	free(moved);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fleet_state");
	TCase *tc = tcase_create("fleet");

	xdtest_tmpdir();
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, proposals_one_at_a_time);
	tcase_add_test(tc, an_unreadable_record_is_replaced);
	tcase_add_test(tc, the_record_told_on_the_loop);
	tcase_add_test(tc, reports_kept_replaced_bounded);
	tcase_add_test(tc, the_registration_from_who_knows_it);
	tcase_add_test(tc, the_record_in_state_dir);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
