/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Staged rollout (`rollout:`), end to end: the real daemon, real
 * snapshot files and SIGHUP, and real gRPC streams of canary and other
 * nodes, SotW and delta, each answering every response with an ACK or
 * a NACK as the test says. What each node is served when, what the
 * admin endpoint, xdsctl and /metrics say, and what the log says.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "peer.h"
#include "xdtest.h"

#define START_MS 10000
#define WAIT_MS 5000
/* how long "nothing comes" is watched for */
#define QUIET_MS 400
#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"

/* When the daemon logged the first line holding `needle`, in ms of its
 * own clock (the line's "2026-11-22T12:01:07.601Z"): what it did when,
 * however late this process gets to read it. */
static long long logged_at(const struct xdt_daemon *d, const char *needle)
{
	char *log = xdt_daemon_log(d), *at = strstr(log, needle);
	struct tm tm = {0};
	int ms = 0;
	long long when;

	ck_assert_msg(at != NULL, "the log has no '%s'", needle);
	while (at > log && at[-1] != '\n')
		at--;
	ck_assert_msg(sscanf(at, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
			     &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
			     &ms) == 7,
		      "no time on the line of '%s'", needle);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	when = (long long)timegm(&tm) * 1000 + ms;
	free(log);
	return when;
}

/* ---------------- the daemon ---------------- */

static struct xdt_daemon *start(const char *dir, const char *rollout)
{
	char cfg[1024];

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n%s",
		 dir, rollout);
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, WAIT_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* /status.json's rollout state. */
static char *rollout_state(struct xdt_daemon *d)
{
	json_t *st = xdt_status_json(d);
	char *s = strdup(xdt_json_str(json_object_get(st, "rollout"), "state"));

	json_decref(st);
	return s;
}

static void want_state(struct xdt_daemon *d, const char *state)
{
	char *s = rollout_state(d);

	ck_assert_msg(strcmp(s, state) == 0, "rollout state '%s', not '%s'", s,
		      state);
	free(s);
}

/* The rollout's `timeout_seconds` in /status.json. */
static double rollout_timeout(struct xdt_daemon *d)
{
	json_t *st = xdt_status_json(d);
	json_t *t = json_object_get(json_object_get(st, "rollout"), "timeout_seconds");
	double v;

	ck_assert_msg(json_is_number(t), "no rollout.timeout_seconds in /status.json");
	v = json_number_value(t);
	json_decref(st);
	return v;
}

/* Waits until the rollout's state is `state`. */
static void wait_state(struct xdt_daemon *d, const char *state)
{
	for (long long end = xdtest_now_ms() + WAIT_MS;;) {
		char *s = rollout_state(d);
		bool there = strcmp(s, state) == 0;

		free(s);
		if (there)
			return;
		ck_assert_msg(xdtest_now_ms() < end, "rollout never %s", state);
		xdtest_sleep_ms(20);
	}
}

/* Runs xdsctl `args` against the daemon: its exit status; its output
 * (stdout and stderr) in *out (malloc'd). */
static int xdsctl(struct xdt_daemon *d, const char *args, char **out)
{
	char cmd[1024], buf[4096];
	size_t len = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' --admin 127.0.0.1:%d %s 2>&1",
		 xdtest_env("XDSCTL"), d->admin_port, args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	len = fread(buf, 1, sizeof(buf) - 1, p);
	buf[len] = '\0';
	st = pclose(p);
	*out = strdup(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void has(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle,
		      text);
}

/* Whether the daemon's log holds `needle` now. */
static bool logged(struct xdt_daemon *d, const char *needle)
{
	char *log = xdt_daemon_log(d);
	bool yes = strstr(log, needle) != NULL;

	free(log);
	return yes;
}

/* canary-* are the canaries; a short bake */
#define ROLLOUT(bake) \
	"rollout:\n  canary: ['canary-*']\n  bake: " bake "\n  max_nacks: 0\n"

/* The four nodes of a test: a canary and another node, each SotW and
 * delta, all served the default snapshot of `n` clusters. */
struct fleet {
	struct xdc_conn *conn;
	struct xdt_peer canary, other, canary_d, other_d;
};

static void fleet_open(struct fleet *f, struct xdt_daemon *d, int n)
{
	f->conn = xdc_connect(d->target);
	xdt_peer_open(&f->canary, f->conn, false, "canary-1");
	xdt_peer_open(&f->other, f->conn, false, "edge-1");
	xdt_peer_open(&f->canary_d, f->conn, true, "canary-2");
	xdt_peer_open(&f->other_d, f->conn, true, "edge-2");
	xdt_peer_expect(&f->canary, n, "canary");
	xdt_peer_expect(&f->other, n, "other");
	xdt_peer_expect(&f->canary_d, n, "delta canary");
	xdt_peer_expect(&f->other_d, n, "delta other");
}

/* A daemon with `rollout` (configuration lines) serving one cluster
 * from a fresh directory (*dir, malloc'd), and its fleet. */
static struct xdt_daemon *start_fleet(struct fleet *f, char **dir,
				      const char *rollout)
{
	struct xdt_daemon *d;

	*dir = xdtest_snapdir();
	xdtest_write_clusters(*dir, "default.yaml", "a", 1);
	d = start(*dir, rollout);
	fleet_open(f, d, 1);
	return d;
}

static void fleet_close(struct fleet *f)
{
	xdt_peer_close(&f->canary);
	xdt_peer_close(&f->other);
	xdt_peer_close(&f->canary_d);
	xdt_peer_close(&f->other_d);
	xdc_conn_free(f->conn);
}

/*
 * A change goes to the canaries first; once they ACKed and `bake`
 * passed, to everyone, with the version the canaries got.
 */
START_TEST(promotes_after_canaries_ack_and_bake)
{
	char *dir, *v_canary, *out, *page;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, ROLLOUT("1500ms"));
	long long baked;
	json_t *st, *change;
	int status;

	want_state(d, "idle");

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 (SIGHUP): 1 snapshot key changed", WAIT_MS));
	xdt_peer_expect(&f.canary, 2, "canary");
	v_canary = strdup(f.canary.version);
	/* delta: only the new cluster */
	xdt_peer_expect(&f.canary_d, 1, "delta canary");
	xdt_peer_quiet(&f.other, "the other node before the bake");
	xdt_peer_quiet(&f.other_d, "the other delta node before the bake");
	ck_assert(xdt_daemon_wait_log(d, "rollout 1: all 2 connected canaries answered (0 NACKs); baking 1500 ms", WAIT_MS));
	want_state(d, "baking");
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rollout_state{state=\"baking\"}"), 1);
	page = xdt_admin(d, "GET", "/clients?node=canary-1", NULL, &status, NULL);
	has(page, "\"canary\":true");
	free(page);
	page = xdt_admin(d, "GET", "/clients?node=edge-1", NULL, &status, NULL);
	has(page, "\"canary\":false");
	free(page);
	ck_assert_int_eq(xdsctl(d, "rollout status", &out), 0);
	has(out, "rollout 1: baking (SIGHUP, 1 snapshot key changed");
	has(out, "canaries: 2 connected, 2 answered");
	free(out);
	st = xdt_status_json(d);
	change = json_array_get(json_object_get(json_object_get(st, "rollout"),
						"changes"), 0);
	ck_assert_ptr_nonnull(change);
	ck_assert_str_eq(xdt_json_str(change, "key"), "default");
	ck_assert_str_ne(xdt_json_str(change, "version"),
			 xdt_json_str(change, "previous_version"));
	json_decref(st);

	/* the others get it after the bake, no sooner: the promotion comes
	 * a bake after the bake began, by the times of the daemon's own log
	 * lines (a loaded machine only spreads them; the bake is counted
	 * from the loop's time of its turn, which may be a little before
	 * its line is written, hence the slack) */
	xdt_peer_expect(&f.other, 2, "the other node after the bake");
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 promoted (baked with 2 canaries and 0 NACKs)", WAIT_MS));
	baked = logged_at(d, "rollout 1 promoted (") -
		logged_at(d, "rollout 1: all 2 connected canaries answered (0 NACKs); baking 1500 ms");
	ck_assert_msg(baked >= 1000, "promoted %lld ms after a bake of 1500 ms began", baked);
	ck_assert_str_eq(f.other.version, v_canary);
	xdt_peer_expect(&f.other_d, 1, "the other delta node after the bake");
	want_state(d, "promoted");
	/* the canaries hear nothing more: they have it */
	xdt_peer_quiet(&f.canary, "the canary after the promotion");
	xdt_peer_quiet(&f.canary_d, "the delta canary after the promotion");
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rollout_state{state=\"promoted\"}"), 1);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rollout_state{state=\"baking\"}"), 0);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rollout_nacks"), 0);
	page = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	has(page, "<dd id=rollout-state><span class=\"badge ok\">promoted</span>");
	has(page, "<dd id=rollout-canaries>2 / 2</dd>");
	free(page);

	free(v_canary);
	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A canary NACKs the change (the SotW one in run 0, the delta one in
 * run 1): it is rolled back, the canaries get the previous version
 * again, the other nodes never see the change, and the rollout is
 * marked failed with the NACK's message.
 */
START_TEST(rolls_back_when_a_canary_nacks)
{
	char *dir, *v1, *out;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, ROLLOUT("100ms"));
	struct xdt_peer *nacker, *acker;
	json_t *st, *ro, *nack;

	v1 = strdup(f.canary.version);
	nacker = _i == 0 ? &f.canary : &f.canary_d;
	acker = _i == 0 ? &f.canary_d : &f.canary;

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 (SIGHUP)", WAIT_MS));
	ck_assert_int_eq(xdt_peer_next(nacker, WAIT_MS), _i == 0 ? 2 : 1);
	xdt_peer_answer(nacker, "cluster a-1: unknown extension");
	xdt_peer_expect(acker, _i == 0 ? 1 : 2, "the canary that ACKs");
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 failed: 1 NACK from canaries, more than max_nacks 0", WAIT_MS));
	ck_assert(logged(d, "unknown extension"));

	/* the canaries are served the previous snapshot again: the SotW
	 * one its version, the delta one the removal of a-1 */
	xdt_peer_expect(&f.canary, 1, "the SotW canary, rolled back");
	ck_assert_str_eq(f.canary.version, v1);
	ck_assert_int_eq(xdt_peer_next(&f.canary_d, WAIT_MS), 0);
	ck_assert_uint_eq(f.canary_d.removed, 1);
	xdt_peer_answer(&f.canary_d, NULL);
	xdt_peer_quiet(&f.other, "the other node");
	xdt_peer_quiet(&f.other_d, "the other delta node");

	st = xdt_status_json(d);
	ro = json_object_get(st, "rollout");
	ck_assert_str_eq(xdt_json_str(ro, "state"), "failed");
	ck_assert_int_eq(json_integer_value(json_object_get(ro, "nacks")), 1);
	nack = json_array_get(json_object_get(ro, "nack_list"), 0);
	ck_assert_ptr_nonnull(nack);
	ck_assert_str_eq(xdt_json_str(nack, "message"), "cluster a-1: unknown extension");
	ck_assert_str_eq(xdt_json_str(nack, "node_id"), _i == 0 ? "canary-1" : "canary-2");
	json_decref(st);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rollout_state{state=\"failed\"}"), 1);
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_rollout_nacks"), 1);
	ck_assert_int_eq(xdsctl(d, "rollout status", &out), 1);
	has(out, "rollout 1: failed");
	has(out, "cluster a-1: unknown extension");
	free(out);
	/* xdsd at a glance warns of it, and of the reload it rolled back */
	ck_assert_int_eq(xdsctl(d, "status", &out), 1);
	has(out, "\nrollout:   1 FAILED at 20");
	has(out, "rolled back: 1 NACK from canaries, more than max_nacks 0");
	has(out, "\nlast reload:\n  reload ok, ROLLED BACK by its rollout (SIGHUP, 20");
	has(out, "xdsctl: the last staged rollout of xdsd at 127.0.0.1:");
	free(out);

	/* still not served: the bake is long over */
	xdtest_sleep_ms(300);
	xdt_peer_quiet(&f.other, "the other node after the bake");

	/* the next change replaces the file the refused change was read
	 * from: the tables the canaries were served from it go with it,
	 * and xdsd serves the next change to the canaries */
	xdtest_write_clusters(dir, "default.yaml", "a", 3);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 (SIGHUP)", WAIT_MS));
	xdt_peer_expect(&f.canary, 3, "the SotW canary, the next change");

	free(v1);
	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

/*
 * The rollout knows its canaries from the engine's events: a canary
 * whose stream ends before it answered is no longer waited for (its
 * GONE event takes it out), so the one left answering is enough.
 */
START_TEST(a_canary_that_goes_away_is_not_waited_for)
{
	char *dir;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, ROLLOUT("100ms"));

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 (SIGHUP)", WAIT_MS));
	/* the SotW canary is sent the change and never answers it */
	ck_assert_int_eq(xdt_peer_next(&f.canary, WAIT_MS), 2);
	xdt_peer_expect(&f.canary_d, 1, "the delta canary");
	want_state(d, "canary");
	xdt_peer_close(&f.canary);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1: all 1 connected canary answered (0 NACKs); baking", WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 promoted (baked with 1 canary and 0 NACKs)", WAIT_MS));
	xdt_peer_expect(&f.other, 2, "the other node after the bake");
	xdt_peer_close(&f.other);
	xdt_peer_close(&f.canary_d);
	xdt_peer_close(&f.other_d);
	xdc_conn_free(f.conn);
	stop(d);
	free(dir);
}
END_TEST

/* An operator promotes a rollout before its bake is over, and aborts
 * another, by xdsctl and by the admin endpoint. */
START_TEST(operator_promotes_and_aborts)
{
	char *dir, *out, *body;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, ROLLOUT("1h"));
	int status;

	ck_assert(rollout_timeout(d) == 600.0); /* the default, 10m */
	/* nothing under way */
	ck_assert_int_eq(xdsctl(d, "rollout promote", &out), 1);
	has(out, "no rollout is under way");
	free(out);

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.canary, 2, "canary");
	xdt_peer_expect(&f.canary_d, 1, "delta canary");
	wait_state(d, "baking");
	xdt_peer_quiet(&f.other, "the other node while baking");
	ck_assert_int_eq(xdsctl(d, "rollout promote", &out), 0);
	has(out, "rollout 1: promoted");
	free(out);
	xdt_peer_expect(&f.other, 2, "the other node, promoted");
	xdt_peer_expect(&f.other_d, 1, "the other delta node, promoted");
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 promoted (promoted by admin from ", WAIT_MS));

	/* the next change, aborted through the endpoint */
	xdtest_write_clusters(dir, "default.yaml", "a", 3);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.canary, 3, "canary");
	xdt_peer_expect(&f.canary_d, 1, "delta canary");
	body = xdt_admin(d, "POST", "/rollout/abort", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	has(body, "\"state\":\"aborted\"");
	has(body, "\"changes\":[]");
	free(body);
	xdt_peer_expect(&f.canary, 2, "canary, rolled back");
	ck_assert_int_eq(xdt_peer_next(&f.canary_d, WAIT_MS), 0);
	ck_assert_uint_eq(f.canary_d.removed, 1);
	xdt_peer_answer(&f.canary_d, NULL);
	xdt_peer_quiet(&f.other, "the other node after the abort");
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 aborted (aborted by admin from ", WAIT_MS));
	body = xdt_admin(d, "POST", "/rollout/abort", NULL, &status, NULL);
	ck_assert_int_eq(status, 409);
	has(body, "no rollout is under way: rollout 2 is aborted");
	free(body);

	/* the files still hold the aborted change: the next reload
	 * stages it again */
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 3 (SIGHUP)", WAIT_MS));
	xdt_peer_expect(&f.canary, 3, "canary, staged again");
	ck_assert_int_eq(xdsctl(d, "rollout abort", &out), 0);
	has(out, "rollout 3: aborted");
	free(out);

	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

/* A reload during a rollout replaces it: the canaries get the newest
 * set, the others still the stable one, then the newest once promoted. */
START_TEST(reload_during_a_rollout_replaces_it)
{
	char *dir, *body;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, ROLLOUT("1h"));
	int status;


	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.canary, 2, "canary");
	xdt_peer_expect(&f.canary_d, 1, "delta canary");
	xdtest_write_clusters(dir, "default.yaml", "a", 4);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 replaced by a new reload (SIGHUP)", WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 (SIGHUP)", WAIT_MS));
	xdt_peer_expect(&f.canary, 4, "canary, the newest");
	xdt_peer_expect(&f.canary_d, 2, "delta canary, the newest");
	xdt_peer_quiet(&f.other, "the other node");
	/* a reload that changes nothing it staged lets it go on */
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 goes on", WAIT_MS));
	xdt_peer_quiet(&f.canary, "the canary after a reload that changes nothing");

	body = xdt_admin(d, "POST", "/rollout/promote", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	free(body);
	xdt_peer_expect(&f.other, 4, "the other node, promoted");
	xdt_peer_expect(&f.other_d, 3, "the other delta node, promoted");

	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

/* A reload back to the stable set, the change undone in the files
 * while it rolls out, ends the rollout: aborted, its canaries served
 * the stable set again, the other nodes sent nothing; nothing is left
 * for an operator to promote or abort. */
START_TEST(a_reload_back_to_the_stable_set_aborts_it)
{
	char *dir, *out, *v1;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, ROLLOUT("1h"));

	v1 = strdup(f.canary.version);
	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.canary, 2, "canary");
	xdt_peer_expect(&f.canary_d, 1, "delta canary");
	wait_state(d, "baking");
	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 replaced by a reload (SIGHUP) that changes nothing: canaries are served the stable snapshots again",
				      WAIT_MS));
	want_state(d, "aborted");
	xdt_peer_expect(&f.canary, 1, "canary, back on the stable set");
	ck_assert_str_eq(f.canary.version, v1);
	ck_assert_int_eq(xdt_peer_next(&f.canary_d, WAIT_MS), 0);
	ck_assert_uint_eq(f.canary_d.removed, 1);
	xdt_peer_answer(&f.canary_d, NULL);
	xdt_peer_quiet(&f.other, "the other node");
	xdt_peer_quiet(&f.other_d, "the other delta node");
	ck_assert_int_eq(xdsctl(d, "rollout promote", &out), 1);
	has(out, "no rollout is under way: rollout 1 is aborted");
	free(out);

	free(v1);
	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

/* A canary whose node id is longer than the log's bound for a name
 * (XD_LOG_CLIENT_MAX, 256): the rollout's lines about it, past
 * canary_timeout and on its NACK, and the reason the rollout failed,
 * name it clipped to the bound. */
START_TEST(a_long_canary_id_is_clipped_where_named)
{
	char *dir = xdtest_snapdir(), id[320], want[400];
	struct xdc_conn *c;
	struct xdt_peer canary, other;
	struct xdt_daemon *d;

	memcpy(id, "canary-", 7);
	memset(id + 7, 'x', sizeof(id) - 8);
	id[sizeof(id) - 1] = '\0';
	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	d = start(dir, ROLLOUT("1h") "  canary_timeout: 1s\n");
	c = xdc_connect(d->target);
	xdt_peer_open(&canary, c, false, id);
	xdt_peer_open(&other, c, false, "edge-1");
	xdt_peer_expect(&canary, 1, "the canary");
	xdt_peer_expect(&other, 1, "the other node");
	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_int_eq(xdt_peer_next(&canary, WAIT_MS), 2); /* not answered yet */
	snprintf(want, sizeof(want), "rollout 1: canary node '%.256s' (stream ", id);
	ck_assert(xdt_daemon_wait_log(d, want, WAIT_MS));
	xdt_peer_answer(&canary, "cluster a-1: refused");
	snprintf(want, sizeof(want), "max_nacks 0 across the fleet) from canary node '%.256s' of ", id);
	ck_assert(xdt_daemon_wait_log(d, want, WAIT_MS));
	snprintf(want, sizeof(want), "rollout 1 failed: 1 NACK from canaries, more than max_nacks 0; the NACK past it from node '%.256s' of ", id);
	ck_assert(xdt_daemon_wait_log(d, want, WAIT_MS));
	xdt_peer_expect(&canary, 1, "the canary, rolled back");
	xdt_peer_answer(&canary, NULL);
	xdt_peer_quiet(&other, "the other node");

	xdt_peer_close(&canary);
	xdt_peer_close(&other);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* A key only a rollout added serves its canaries: a reload that drops
 * it with no default snapshot is refused, as for a key everyone has. */
START_TEST(reload_may_not_orphan_a_canary)
{
	char *dir = xdtest_snapdir(), path[512];
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdt_peer canary;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

	xdtest_write_clusters(dir, "web.yaml", "w", 1);
	d = start(dir, ROLLOUT("1h"));
	xdtest_write_clusters(dir, "api.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 (SIGHUP)", WAIT_MS));
	/* a canary of the new key */
	c = xdc_connect(d->target);
	memset(&canary, 0, sizeof(canary));
	canary.acked = strdup("");
	canary.s = xdc_open(c, XDC_ADS);
	node.id = "canary-api";
	node.cluster = "api";
	req.node = &node;
	req.type_url = CDS_URL;
	ck_assert(xdc_send_sotw(canary.s, &req, WAIT_MS));
	xdt_peer_expect(&canary, 2, "the canary of api");

	snprintf(path, sizeof(path), "%s/api.yaml", dir);
	ck_assert_int_eq(unlink(path), 0);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "snapshot 'api' is gone and there is no default snapshot", WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "reload failed", WAIT_MS));
	/* still under way: waiting for the canary, or baking if the rollout
	 * looked at its canaries before this one connected (none, then) */
	{
		char *st = rollout_state(d);

		ck_assert_msg(strcmp(st, "canary") == 0 || strcmp(st, "baking") == 0,
			      "rollout state '%s', not under way", st);
		free(st);
	}
	xdt_peer_quiet(&canary, "the canary of api after the refused reload");

	xdt_peer_close(&canary);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* Without `rollout:` a reload reaches every node at once and the
 * rollout's endpoints say there is none. */
START_TEST(without_rollout_every_node_at_once)
{
	char *dir, *body, *metrics, *out;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, "");
	json_t *st;
	int status;

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.other, 2, "other");
	xdt_peer_expect(&f.canary, 2, "canary-named node");
	xdt_peer_expect(&f.other_d, 1, "delta other");
	xdt_peer_expect(&f.canary_d, 1, "delta canary-named node");
	ck_assert(!logged(d, "rollout"));

	body = xdt_admin(d, "POST", "/rollout/promote", NULL, &status, NULL);
	ck_assert_int_eq(status, 409);
	has(body, "no staged rollout");
	free(body);
	st = xdt_status_json(d);
	ck_assert(json_is_false(json_object_get(json_object_get(st, "rollout"),
						"configured")));
	json_decref(st);
	metrics = xdt_admin(d, "GET", "/metrics", NULL, &status, NULL);
	ck_assert(strstr(metrics, "xdsd_rollout") == NULL);
	free(metrics);
	ck_assert_int_eq(xdsctl(d, "rollout status", &out), 0);
	has(out, "no staged rollout");
	free(out);

	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

/* percent: a share of the nodes by a stable hash of the id, with no
 * glob; a node's stream is a canary or not the same each time. */
START_TEST(percent_picks_nodes_by_their_id)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdt_peer all[20];
	char ids[20][16];
	int canaries = 0;

	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	d = start(dir, "rollout:\n  percent: 50\n  bake: 1h\n");
	c = xdc_connect(d->target);
	for (int i = 0; i < 20; i++) {
		snprintf(ids[i], sizeof(ids[i]), "node-%d", i);
		xdt_peer_open(&all[i], c, false, ids[i]);
		xdt_peer_expect(&all[i], 1, ids[i]);
	}
	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 (SIGHUP)", WAIT_MS));
	for (int i = 0; i < 20; i++) {
		int n = xdt_peer_next(&all[i], i == 0 ? 1000 : 150);

		ck_assert(n == -1 || n == 2);
		if (n == 2)
			canaries++;
	}
	/* 50 of 100 buckets: neither none nor all of 20 */
	ck_assert_msg(canaries > 0 && canaries < 20, "%d canaries of 20",
		      canaries);
	for (int i = 0; i < 20; i++)
		xdt_peer_close(&all[i]);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- with the last good state (state_dir:) ---------------- */

#define SAVED "saved the last good state to "

/* `rollout` (its lines) and a state_dir of `state`, malloc'd. */
static char *with_state(const char *rollout, const char *state)
{
	char *cfg;

	ck_assert(asprintf(&cfg, "%sstate_dir: %s\n", rollout, state) > 0);
	return cfg;
}

/* A daemon with a short rollout of its own and a state_dir of *state
 * (both malloc'd, with *dir and *cfg), started on one cluster, that
 * state saved, and its fleet. */
static struct xdt_daemon *start_saved(struct fleet *f, char **dir,
				      char **state, char **cfg)
{
	struct xdt_daemon *d;

	*dir = xdtest_snapdir();
	*state = xdtest_snapdir();
	xdtest_write_clusters(*dir, "default.yaml", "a", 1);
	*cfg = with_state(ROLLOUT("1h"), *state);
	d = start(*dir, *cfg);
	/* nothing saved yet: the first load goes to everyone and is saved */
	ck_assert(xdt_daemon_wait_log(d, SAVED, WAIT_MS));
	fleet_open(f, d, 1);
	return d;
}

/* The saved state's bytes (malloc'd, `*len`). */
static char *state_bytes(const char *state, size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/snapshots.state", state);
	return xdtest_read_file(path, len);
}

/* The state on disk is still `bytes`, a while after the daemon could
 * have saved another. */
static void state_unchanged(const char *state, const char *bytes, size_t len)
{
	size_t now_len;
	char *now;

	xdtest_sleep_ms(QUIET_MS);
	now = state_bytes(state, &now_len);
	ck_assert_msg(now_len == len && memcmp(now, bytes, len) == 0,
		      "the last good state in %s changed", state);
	free(now);
}

/* The cell of `line` under the heading `col` of `table`'s first line
 * (xdsctl's tables align each cell under its heading). */
static char *cell_of(const char *table, const char *line_start,
		     const char *col)
{
	const char *head = strstr(table, col), *line = strstr(table, line_start);
	size_t at, n = 0;

	ck_assert_msg(head != NULL && line != NULL, "no %s or %s in:\n%s", col,
		      line_start, table);
	at = (size_t)(head - table);
	ck_assert(memchr(table, '\n', at) == NULL); /* in the heading */
	ck_assert(strlen(line) > at);
	while (line[at + n] != ' ' && line[at + n] != '\n' && line[at + n] != '\0')
		n++;
	return strndup(line + at, n);
}

/*
 * With `rollout:`, the last good state is what was promoted: a change
 * staged for the canaries is not saved, one promoted is, and one that
 * fails is not. xdsctl clients says who the canaries are.
 */
START_TEST(only_a_promoted_change_is_saved)
{
	char *dir, *state, *cfg, *s0, *s1, *out, *c;
	size_t len0, len1;
	struct fleet f;
	struct xdt_daemon *d = start_saved(&f, &dir, &state, &cfg);
	int status;

	s0 = state_bytes(state, &len0);

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 (SIGHUP)", WAIT_MS));
	xdt_peer_expect(&f.canary, 2, "canary");
	xdt_peer_expect(&f.canary_d, 1, "delta canary");
	wait_state(d, "baking");
	state_unchanged(state, s0, len0);
	ck_assert_int_eq(xdt_daemon_log_count(d, SAVED), 1);
	ck_assert(logged(d, "is kept as it is until the staged change is promoted"));

	/* the canaries, and only they, say yes */
	ck_assert_int_eq(xdsctl(d, "clients", &out), 0);
	c = cell_of(out, "canary-1 ", "CANARY");
	ck_assert_str_eq(c, "yes");
	free(c);
	c = cell_of(out, "edge-1 ", "CANARY");
	ck_assert_str_eq(c, "-");
	free(c);
	free(out);

	free(xdt_admin(d, "POST", "/rollout/promote", NULL, &status, NULL));
	ck_assert_int_eq(status, 200);
	xdt_peer_expect(&f.other, 2, "the other node, promoted");
	xdt_peer_expect(&f.other_d, 1, "the other delta node, promoted");
	ck_assert(xdt_daemon_wait_log_count(d, SAVED, 2, WAIT_MS));
	s1 = state_bytes(state, &len1);
	ck_assert(len1 != len0 || memcmp(s1, s0, len0) != 0);

	/* a change the canaries refuse is never saved */
	xdtest_write_clusters(dir, "default.yaml", "a", 3);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 (SIGHUP)", WAIT_MS));
	ck_assert_int_eq(xdt_peer_next(&f.canary, WAIT_MS), 3);
	xdt_peer_answer(&f.canary, "cluster a-2: unknown extension");
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 failed", WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "the change rolled back is not saved", WAIT_MS));
	state_unchanged(state, s1, len1);
	ck_assert_int_eq(xdt_daemon_log_count(d, SAVED), 2);

	fleet_close(&f);
	stop(d);
	free(s0);
	free(s1);
	free(cfg);
	free(state);
	free(dir);
}
END_TEST

/*
 * A restart after a rollout failed, the files on disk still holding the
 * change the canaries refused: the rollout stays failed (its record is
 * in state_dir, read at start): every node, the canaries too, is served
 * the last good state (the last promoted), and nothing is staged or
 * saved. An operator's reload tries the change again: a new rollout,
 * staged for the canaries; promoted, everyone has it and it is saved.
 */
START_TEST(restart_after_a_failed_rollout_stays_failed)
{
	char *dir, *state, *cfg, *out, path[512];
	struct fleet f;
	struct xdt_daemon *d = start_saved(&f, &dir, &state, &cfg);
	int status;

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_int_eq(xdt_peer_next(&f.canary, WAIT_MS), 2);
	xdt_peer_answer(&f.canary, "cluster a-1: unknown extension");
	ck_assert(xdt_daemon_wait_log(d, "rollout 1 failed", WAIT_MS));
	fleet_close(&f);
	stop(d);
	snprintf(path, sizeof(path), "%s/rollout.state", state);
	ck_assert_msg(access(path, F_OK) == 0, "no %s", path);

	d = start(dir, cfg);
	ck_assert(xdt_daemon_wait_log(d, "rollout: the last rollout, 1, was failed", WAIT_MS));
	f.conn = xdc_connect(d->target);
	xdt_peer_open(&f.canary, f.conn, false, "canary-1");
	xdt_peer_open(&f.other, f.conn, false, "edge-1");
	xdt_peer_open(&f.canary_d, f.conn, true, "canary-2");
	xdt_peer_open(&f.other_d, f.conn, true, "edge-2");
	xdt_peer_expect(&f.other, 1, "the other node: the last good state");
	xdt_peer_expect(&f.other_d, 1, "the other delta node: the last good state");
	xdt_peer_expect(&f.canary, 1, "the canary: the last good state too");
	xdt_peer_expect(&f.canary_d, 1, "the delta canary: the last good state too");
	xdt_peer_quiet(&f.canary, "the canary, the change refused");
	ck_assert(logged(d, "rollout 1 (start-up): the change was failed (1 NACK from canaries, more than max_nacks 0"));
	want_state(d, "failed");
	ck_assert_int_eq(xdsctl(d, "rollout status", &out), 1);
	has(out, "rollout 1: failed");
	free(out);
	ck_assert_int_eq(xdt_daemon_log_count(d, SAVED), 0);

	/* an operator's reload tries it again */
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 (SIGHUP): 1 snapshot key changed", WAIT_MS));
	xdt_peer_expect(&f.canary, 2, "the canary: the files, retried");
	xdt_peer_quiet(&f.other, "the other node while staged");
	free(xdt_admin(d, "POST", "/rollout/promote", NULL, &status, NULL));
	ck_assert_int_eq(status, 200);
	xdt_peer_expect(&f.other, 2, "the other node, promoted");
	xdt_peer_expect(&f.other_d, 1, "the other delta node, promoted");
	ck_assert(xdt_daemon_wait_log(d, SAVED, WAIT_MS));

	fleet_close(&f);
	stop(d);
	free(cfg);
	free(state);
	free(dir);
}
END_TEST

/* The same files as the saved state at start: nothing to stage. */
START_TEST(restart_on_the_saved_state_stages_nothing)
{
	char *dir = xdtest_snapdir(), *state = xdtest_snapdir(), *cfg;
	struct xdt_daemon *d;

	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	cfg = with_state(ROLLOUT("1h"), state);
	d = start(dir, cfg);
	ck_assert(xdt_daemon_wait_log(d, SAVED, WAIT_MS));
	stop(d);
	d = start(dir, cfg);
	ck_assert(xdt_daemon_wait_log(d, "are the last good state saved ", WAIT_MS));
	want_state(d, "idle");
	stop(d);
	free(cfg);
	free(state);
	free(dir);
}
END_TEST

/*
 * rollout.canary_timeout: a canary that is served the change and never
 * answers is named. With on_canary_timeout: fail it fails the rollout;
 * with skip (the default) it is left out, named in the log, /status.json
 * and `xdsctl rollout status`, and the rollout goes on with the canary
 * that answered.
 */
START_TEST(a_canary_that_never_answers_is_named)
{
	char *dir, *v1, *out;
	struct fleet f;
	bool fail = _i == 0;
	struct xdt_daemon *d = start_fleet(&f, &dir,
					   fail ? ROLLOUT("100ms") "  canary_timeout: 1s\n  on_canary_timeout: fail\n" :
						  ROLLOUT("100ms") "  canary_timeout: 1s\n");
	json_t *st, *stuck;

	v1 = strdup(f.canary.version);
	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_int_eq(xdt_peer_next(&f.canary, WAIT_MS), 2); /* not answered */
	xdt_peer_expect(&f.canary_d, 1, "the delta canary");
	ck_assert(xdt_daemon_wait_log(d, "rollout 1: canary node 'canary-1' (stream ", WAIT_MS));
	ck_assert(logged(d, "has not answered the change within canary_timeout of 1000 ms"));
	if (fail) {
		ck_assert(xdt_daemon_wait_log(d, "rollout 1 failed: canary node 'canary-1' did not answer within canary_timeout of 1000 ms (1 of 2 connected canaries answered)", WAIT_MS));
		want_state(d, "failed");
		/* answered late: it is served the previous snapshot again */
		xdt_peer_answer(&f.canary, NULL);
		xdt_peer_expect(&f.canary, 1, "the canary, rolled back");
		ck_assert_str_eq(f.canary.version, v1);
		xdt_peer_quiet(&f.other, "the other node");
		xdt_peer_quiet(&f.other_d, "the other delta node");
	} else {
		ck_assert(logged(d, "left out, the rollout goes on with the others (on_canary_timeout: skip)"));
		xdt_peer_expect(&f.other, 2, "the other node, promoted without the stuck canary");
		xdt_peer_expect(&f.other_d, 1, "the other delta node, promoted");
		want_state(d, "promoted");
		st = xdt_status_json(d);
		stuck = json_object_get(json_object_get(st, "rollout"), "stuck");
		ck_assert_msg(json_array_size(stuck) == 1 &&
				      strcmp(json_string_value(json_array_get(stuck, 0)), "canary-1") == 0,
			      "rollout.stuck is not [canary-1]");
		json_decref(st);
		ck_assert_int_eq(xdsctl(d, "rollout status", &out), 0);
		has(out, "past canary_timeout: canary-1");
		free(out);
	}
	ck_assert(rollout_timeout(d) == 600.0);

	free(v1);
	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A canary proves only what it received: with the canaries in a
 * snapshot of their own and a change to the default one alone, the
 * canaries are sent nothing, `xdsctl diff` and the rollout's start say
 * that no canary serves the change, and with require_canary: per_key
 * (the default) it is never promoted: it fails once `timeout` passed,
 * naming the key. With require_canary: none the bake alone promotes it.
 */
START_TEST(a_canary_proves_only_what_it_received)
{
	char *dir = xdtest_snapdir(), *out, cfg[256];
	struct xdc_conn *c;
	struct xdt_peer canary, other;
	struct xdt_daemon *d;
	bool none = _i == 1;

	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	xdtest_write_clusters(dir, "canary.yaml", "k", 1);
	snprintf(cfg, sizeof(cfg), ROLLOUT("200ms") "  timeout: 2s\n%s",
		 none ? "  require_canary: none\n" : "");
	d = start(dir, cfg);
	c = xdc_connect(d->target);
	xdt_peer_open_in(&canary, c, false, "canary-1", "canary");
	xdt_peer_open(&other, c, false, "edge-1");
	xdt_peer_expect(&canary, 1, "the canary, of its own snapshot");
	xdt_peer_expect(&other, 1, "the other node");

	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	ck_assert_int_eq(xdsctl(d, "diff", &out), 1);
	has(out, "snapshot 'default' changed");
	has(out, "reaches 1 connected node (0 canaries connected to any replica)");
	has(out, "warning: no canary of snapshot 'default' is connected to any replica");
	free(out);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "rollout 1: snapshot 'default' changes and no canary of it is connected: ", WAIT_MS));
	xdt_peer_quiet(&canary, "the canary, whose snapshot did not change");
	if (none) {
		xdt_peer_expect(&other, 2, "the other node, after the bake alone");
		ck_assert(xdt_daemon_wait_log(d, "rollout 1 promoted (baked with 1 canary and 0 NACKs; no canary ACKed snapshot 'default'): every node is served the change now (1 snapshot key); no canary proved it", WAIT_MS));
	} else {
		/* its bake long over, unproven: not promoted */
		xdtest_sleep_ms(600);
		xdt_peer_quiet(&other, "the other node, the change unproven");
		ck_assert_int_eq(xdsctl(d, "rollout status", &out), 0);
		has(out, "snapshot 'default': 0 canaries served it, 0 ACKed (NOT PROVEN: no canary ACKed it)");
		free(out);
		ck_assert(xdt_daemon_wait_log(d, "rollout 1 failed: not proven within the timeout of 2000 ms: no canary ACKed snapshot 'default'", WAIT_MS));
		xdt_peer_quiet(&other, "the other node, the rollout failed");
	}

	xdt_peer_close(&canary);
	xdt_peer_close(&other);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/*
 * Rolling back does not wait in the bake: once a change was promoted,
 * a change back to the snapshots it replaced is promoted to every node
 * at once (a rollback), and logged so; any other change is staged.
 */
START_TEST(a_rollback_skips_the_bake)
{
	char *dir, *v1;
	struct fleet f;
	struct xdt_daemon *d = start_fleet(&f, &dir, ROLLOUT("1h"));
	int status;

	v1 = strdup(f.other.version);
	xdtest_write_clusters(dir, "default.yaml", "a", 2);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.canary, 2, "canary");
	xdt_peer_expect(&f.canary_d, 1, "delta canary");
	free(xdt_admin(d, "POST", "/rollout/promote", NULL, &status, NULL));
	ck_assert_int_eq(status, 200);
	xdt_peer_expect(&f.other, 2, "the other node, promoted");
	xdt_peer_expect(&f.other_d, 1, "the other delta node, promoted");

	/* back to the one cluster: everyone at once, the bake an hour */
	xdtest_write_clusters(dir, "default.yaml", "a", 1);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.other, 1, "the other node, rolled back at once");
	ck_assert_str_eq(f.other.version, v1);
	xdt_peer_expect(&f.canary, 1, "the canary, rolled back at once");
	ck_assert(xdt_daemon_wait_log(d, "rollout 2 (SIGHUP): a return to the snapshots rollout 1 replaced: a rollback, promoted without a bake: every node is served it now", WAIT_MS));
	want_state(d, "promoted");

	/* and a change that is no rollback is staged as ever */
	xdtest_write_clusters(dir, "default.yaml", "a", 3);
	xdt_daemon_signal(d, SIGHUP);
	xdt_peer_expect(&f.canary, 3, "the canary, the next change");
	xdt_peer_quiet(&f.other, "the other node, the next change staged");
	want_state(d, "canary");

	free(v1);
	fleet_close(&f);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rollout");
	TCase *tc = tcase_create("rollout");

	xdtest_tmpdir();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, promotes_after_canaries_ack_and_bake);
	tcase_add_loop_test(tc, rolls_back_when_a_canary_nacks, 0, 2);
	tcase_add_test(tc, operator_promotes_and_aborts);
	tcase_add_test(tc, reload_during_a_rollout_replaces_it);
	tcase_add_test(tc, a_reload_back_to_the_stable_set_aborts_it);
	tcase_add_test(tc, a_long_canary_id_is_clipped_where_named);
	tcase_add_test(tc, reload_may_not_orphan_a_canary);
	tcase_add_test(tc, without_rollout_every_node_at_once);
	tcase_add_test(tc, percent_picks_nodes_by_their_id);
	tcase_add_test(tc, only_a_promoted_change_is_saved);
	tcase_add_test(tc, restart_after_a_failed_rollout_stays_failed);
	tcase_add_test(tc, restart_on_the_saved_state_stages_nothing);
	tcase_add_loop_test(tc, a_canary_that_never_answers_is_named, 0, 2);
	tcase_add_loop_test(tc, a_canary_proves_only_what_it_received, 0, 2);
	tcase_add_test(tc, a_rollback_skips_the_bake);
	tcase_add_test(tc, a_canary_that_goes_away_is_not_waited_for);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
