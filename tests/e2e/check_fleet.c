/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One staged rollout for several replicas (`rollout:` with `source:
 * etcd`), end to end: a real etcd on loopback, three real xdsd on one
 * prefix, real gRPC streams of canary and other nodes on each, SotW
 * and delta, answering as the test says. A NACK on one replica rolls
 * the change back on all; canaries on two replicas promote it on all
 * three, once; a replica restarted mid-rollout, or cut from etcd (a
 * real haproxy in front of etcd, killed), never serves the change to a
 * node that is no canary before the record says so; and the replicas
 * serve nodes that are no canaries byte for byte the same thing
 * through all of it. And the fleet as operators see it: `xdsctl fleet`
 * lists every replica as it registered, and `--fleet` views list every
 * node once, with its replica.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "balancer.h"
#include "client.h"
#include "daemon.h"
#include "etcd.h"
#include "peer.h"
#include "rollout/fleet.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
/* covers a reconnect after the longest backoff (XD_ETCD_BACKOFF_MAX_MS)
 * on a loaded machine */
#define SERVED_MS 30000
#define PREFIX "/xdsd/snapshots/"
#define RECORD PREFIX ".xdsd/rollout"
#define REPLICAS 3

/* Puts `count` STATIC clusters c-0.. as the default snapshot; returns
 * the revision of that change (the rollout's number). */
static long long put_clusters(const struct xdt_etcd *e, int count)
{
	char text[4096];
	size_t len = (size_t)snprintf(text, sizeof(text), "clusters:\n");

	for (int i = 0; i < count; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"- {name: c-%d, type: STATIC, connect_timeout: 1s}\n",
					i);
	xdt_etcd_put(e, PREFIX "default.yaml", text);
	return xdt_etcd_mod_revision(e, PREFIX "default.yaml");
}

/* Directories a dry run may read (xdsctl diff --snapshots): the tests'. */
static char dry_run_dir[1024];

/* A replica reading etcd at `endpoint`, with a rollout of `bake`, its
 * lease of `lease_ttl` (NULL: the default). */
static struct xdt_daemon *replica_leased(const char *endpoint, const char *bake,
					 const char *lease_ttl)
{
	char cfg[3072], ttl[64] = "";
	struct xdt_daemon *d;

	if (lease_ttl != NULL)
		snprintf(ttl, sizeof(ttl), "  lease_ttl: %s\n", lease_ttl);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsource: etcd\nwatch_delay: 50ms\nlog_level: debug\n"
		 "admin_listen: 127.0.0.1:0\ndry_run_dirs: ['%s']\n"
		 "etcd:\n  endpoints: ['%s']\n  dial_timeout: 1s\n%s"
		 "rollout:\n  canary: ['canary-*']\n  bake: %s\n  max_nacks: 0\n",
		 dry_run_dir, endpoint, ttl, bake);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(xdt_daemon_wait_log(d, "serving the snapshots of etcd prefix", SERVED_MS));
	return d;
}

static struct xdt_daemon *replica(const char *endpoint, const char *bake)
{
	return replica_leased(endpoint, bake, NULL);
}

/* `d` again, as it was configured. */
static struct xdt_daemon *restart(struct xdt_daemon *d)
{
	char *cfg = xdtest_read_file(d->config, NULL);
	struct xdt_daemon *again;

	xdt_daemon_stop(d, STOP_MS);
	again = xdt_daemon_start(cfg, NULL, START_MS);
	free(cfg);
	ck_assert(xdt_daemon_wait_log(again, "serving the snapshots of etcd prefix", SERVED_MS));
	return again;
}

/* The record as etcd holds it (malloc'd), or the test fails. */
static char *record(const struct xdt_etcd *e)
{
	char *r = xdt_etcd_get(e, RECORD);

	ck_assert_msg(r != NULL, "no record at " RECORD);
	return r;
}

/* Why `d` says a rollout was promoted: its log from the first
 * "promoted (baked with " to the ")" (malloc'd). */
static char *promotion(const struct xdt_daemon *d)
{
	static const char start[] = "promoted (baked with ";
	char *log = xdt_daemon_log(d), *at = strstr(log, start), *out;
	size_t n;

	ck_assert_msg(at != NULL, "no '%s' in the log", start);
	n = strcspn(at, ")\n");
	out = strndup(at, n);
	free(log);
	return out;
}

/* Waits until the record holds `needle`. */
static void wait_record(const struct xdt_etcd *e, const char *needle)
{
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		char *r = xdt_etcd_get(e, RECORD);
		bool there = r != NULL && strstr(r, needle) != NULL;

		ck_assert_msg(there || xdtest_now_ms() < end,
			      "the record never held '%s': %s", needle, r ? r : "(none)");
		free(r);
		if (there)
			return;
		xdtest_sleep_ms(50);
	}
}

static void has(const char *text, const char *needle)
{
	/* Check's messages are bounded: the text's start says enough */
	ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in:\n%.2500s", needle,
		      text);
}

/* Runs xdsctl `args` against `d`'s admin endpoint: its exit status, its
 * output in *out. */
static int xdsctl(const struct xdt_daemon *d, const char *args, char **out)
{
	char cmd[1024];
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' --admin 127.0.0.1:%d %s 2>&1",
		 xdtest_env("XDSCTL"), d->admin_port, args);
	*out = xdtest_command_output(cmd, &st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * What `d` serves a node that is no canary (a probe of its own): the
 * CDS response's version and every resource's bytes, as one text of
 * hex (malloc'd). Equal texts are equal bytes.
 */
static char *served(const struct xdt_daemon *d)
{
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_open(c, XDC_ADS);
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Service__Discovery__V3__DiscoveryResponse *r;
	size_t len = 0, cap = 1024;
	char *out = malloc(cap);

	node.id = "probe-1";
	node.cluster = "edge";
	req.node = &node;
	req.type_url = XDT_PEER_CDS_URL;
	ck_assert(xdc_send_sotw(s, &req, XDT_PEER_WAIT_MS));
	r = xdc_recv_sotw(s, XDT_PEER_WAIT_MS);
	ck_assert_msg(r != NULL, "%s served the probe nothing", d->target);
	len = (size_t)snprintf(out, cap, "%s:", r->version_info);
	for (size_t i = 0; i < r->n_resources; i++) {
		const ProtobufCBinaryData *v = &r->resources[i]->value;

		if (len + v->len * 2 + 2 > cap) {
			cap = (len + v->len * 2 + 2) * 2;
			out = realloc(out, cap);
		}
		for (size_t k = 0; k < v->len; k++)
			len += (size_t)snprintf(out + len, cap - len, "%02x", v->data[k]);
		out[len++] = ',';
		out[len] = '\0';
	}
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	xdc_stream_free(s);
	xdc_conn_free(c);
	return out;
}

/* Every replica of `d` serves a node that is no canary the same bytes
 * (`what` says when). */
static void identical(struct xdt_daemon *const *d, size_t n, const char *what)
{
	char *first = served(d[0]);

	for (size_t i = 1; i < n; i++) {
		char *other = served(d[i]);

		ck_assert_msg(strcmp(first, other) == 0,
			      "%s: replica %zu serves other bytes than replica 0:\n%.1200s\n%.1200s",
			      what, i, first, other);
		free(other);
	}
	free(first);
}

/* etcd, the first snapshot (one cluster), and REPLICAS replicas on it
 * (the second through `via` when not NULL: its balancer's target). */
struct fleet {
	struct xdt_etcd *e;
	struct xdt_balancer *lb; /* in front of etcd for replica 1, or NULL */
	struct xdt_daemon *r[REPLICAS];
	struct xdc_conn *conn[REPLICAS];
	struct xdt_peer other[REPLICAS]; /* no canary, one per replica */
};

static void fleet_start(struct fleet *f, const char *bake, bool cut_one)
{
	memset(f, 0, sizeof(*f));
	f->e = xdt_etcd_new();
	xdt_etcd_run(f->e);
	put_clusters(f->e, 1);
	if (cut_one)
		f->lb = xdt_balancer_start(f->e->endpoint, NULL);
	for (int i = 0; i < REPLICAS; i++) {
		char id[32];

		f->r[i] = replica(i == 1 && f->lb != NULL ? f->lb->target :
							      f->e->endpoint,
				  bake);
		f->conn[i] = xdc_connect(f->r[i]->target);
		snprintf(id, sizeof(id), "edge-%d", i);
		xdt_peer_open(&f->other[i], f->conn[i], i == 2, id);
		xdt_peer_expect(&f->other[i], 1, id);
	}
}

static void fleet_stop(struct fleet *f)
{
	for (int i = 0; i < REPLICAS; i++) {
		if (f->r[i] == NULL) /* stopped by the test */
			continue;
		xdt_peer_close(&f->other[i]);
		xdc_conn_free(f->conn[i]);
		xdt_daemon_stop(f->r[i], STOP_MS);
	}
	if (f->lb != NULL)
		xdt_balancer_stop(f->lb);
	xdt_etcd_free(f->e);
}

/* No node that is no canary, on any replica, was sent anything. */
static void others_quiet(struct fleet *f, const char *when)
{
	for (int i = 0; i < REPLICAS; i++)
		xdt_peer_quiet(&f->other[i], when);
}

/*
 * The only canary, on replica 0, NACKs the change: every replica rolls
 * it back, as the one record says, and no node that is no canary on
 * any of them is sent it, the bake long over. Before the record was
 * the fleet's, replica 0 rolled back and the others promoted it after
 * their bake, with no canary at all.
 */
START_TEST(a_nack_on_one_replica_rolls_back_all)
{
	struct fleet f;
	struct xdt_peer canary;
	long long rev;
	char want[256], *rec, *out;

	fleet_start(&f, "300ms", false);
	xdt_peer_open(&canary, f.conn[0], false, "canary-1");
	xdt_peer_expect(&canary, 1, "canary");
	rev = put_clusters(f.e, 2);
	ck_assert_int_eq(xdt_peer_next(&canary, SERVED_MS), 2);
	xdt_peer_answer(&canary, "cluster c-1: unknown extension");
	ck_assert(xdt_daemon_wait_log(f.r[0], " failed: 1 NACK from canaries, more than max_nacks 0", SERVED_MS));
	/* the bake of 300 ms long over, no other node has it anywhere */
	xdtest_sleep_ms(600);
	others_quiet(&f, "a node that is no canary, after the rollback");
	snprintf(want, sizeof(want),
		 "rollout %lld failed: 1 NACK from canaries, more than max_nacks 0; the NACK past it from node 'canary-1'",
		 rev);
	for (int i = 0; i < REPLICAS; i++)
		ck_assert_msg(xdt_daemon_wait_log(f.r[i], want, SERVED_MS),
			      "replica %d did not say '%s'", i, want);
	rec = record(f.e);
	has(rec, "\"state\":\"failed\"");
	free(rec);
	xdt_peer_expect(&canary, 1, "the canary, rolled back");
	for (int i = 0; i < REPLICAS; i++)
		ck_assert_int_eq(xdt_daemon_log_count(f.r[i], " promoted ("), 0);
	identical(f.r, REPLICAS, "after the rollback");

	/* whichever replica is asked, the rollout is the fleet's */
	ck_assert_int_eq(xdsctl(f.r[2], "rollout status", &out), 1);
	snprintf(want, sizeof(want), "rollout %lld: failed", rev);
	has(out, want);
	has(out, "cluster c-1: unknown extension");
	free(out);

	/* a restart remembers it: nothing of the change for anyone */
	f.r[1] = restart(f.r[1]);
	xdt_peer_close(&f.other[1]);
	xdc_conn_free(f.conn[1]);
	f.conn[1] = xdc_connect(f.r[1]->target);
	xdt_peer_open(&f.other[1], f.conn[1], false, "edge-1");
	xdt_peer_expect(&f.other[1], 1, "the other node, after the restart");
	xdt_peer_close(&canary);
	xdt_peer_open(&canary, f.conn[1], false, "canary-2");
	xdt_peer_expect(&canary, 1, "a canary of the restarted replica");
	xdt_peer_quiet(&canary, "a canary of the restarted replica");
	identical(f.r, REPLICAS, "after a restart");

	xdt_peer_close(&canary);
	fleet_stop(&f);
}
END_TEST

/*
 * Canaries on two replicas ACK: the change is promoted once, by one
 * replica's decision on the record, and every replica serves it to
 * every node, under the same versions.
 */
START_TEST(promoted_once_for_all)
{
	struct fleet f;
	struct xdt_peer c0, c1;
	long long rev;
	char want[256], *rec, *reason[REPLICAS];
	int promoted = 0;

	fleet_start(&f, "500ms", false);
	xdt_peer_open(&c0, f.conn[0], false, "canary-0");
	xdt_peer_open(&c1, f.conn[1], true, "canary-1");
	xdt_peer_expect(&c0, 1, "canary 0");
	xdt_peer_expect(&c1, 1, "canary 1");
	rev = put_clusters(f.e, 2);
	xdt_peer_expect(&c0, 2, "canary 0: the change");
	xdt_peer_expect(&c1, 1, "canary 1: the change (delta: the one added)");
	for (int i = 0; i < REPLICAS; i++)
		xdt_peer_expect(&f.other[i], i == 2 ? 1 : 2, "a node that is no canary, promoted");
	/* the decision as the replica that made it saw the fleet */
	snprintf(want, sizeof(want), "rollout %lld promoted (baked with ", rev);
	for (int i = 0; i < REPLICAS; i++) {
		ck_assert_msg(xdt_daemon_wait_log(f.r[i], "promoted (baked with ", SERVED_MS),
			      "replica %d promoted nothing", i);
		reason[i] = promotion(f.r[i]);
	}
	/* one decision, the same on all: not each replica's own bake */
	for (int i = 1; i < REPLICAS; i++)
		ck_assert_msg(strcmp(reason[i], reason[0]) == 0,
			      "replica %d promoted it as '%s', replica 0 as '%s'", i,
			      reason[i], reason[0]);
	for (int i = 0; i < REPLICAS; i++)
		promoted += xdt_daemon_log_count(f.r[i], want);
	ck_assert_int_eq(promoted, REPLICAS);
	/* and the record says the same, in the state it reached */
	wait_record(f.e, "\"state\":\"promoted\"");
	rec = record(f.e);
	has(rec, "\"state\":\"promoted\"");
	has(rec, "\"reason\":\"baked with ");
	free(rec);
	identical(f.r, REPLICAS, "after the promotion");
	for (int i = 0; i < REPLICAS; i++)
		free(reason[i]);

	xdt_peer_close(&c0);
	xdt_peer_close(&c1);
	fleet_stop(&f);
}
END_TEST

/*
 * A replica restarted while the rollout is under way reads the record
 * first and the snapshots at the revision every node is served: its
 * nodes that are no canaries get the previous snapshots, its canaries
 * the change. Promoted from the restarted replica, every replica
 * serves it to everyone.
 */
START_TEST(a_restart_mid_rollout_serves_the_stable_set)
{
	struct fleet f;
	struct xdt_peer canary, c2;
	long long rev;
	char want[256], *out;

	fleet_start(&f, "1h", false);
	xdt_peer_open(&canary, f.conn[0], false, "canary-0");
	xdt_peer_expect(&canary, 1, "canary");
	rev = put_clusters(f.e, 2);
	xdt_peer_expect(&canary, 2, "canary: the change");
	/* baking, as the record says (the only canary answered) */
	ck_assert(xdt_daemon_wait_log(f.r[0], ": all 1 connected canary answered", SERVED_MS));

	f.r[2] = restart(f.r[2]);
	xdt_peer_close(&f.other[2]);
	xdc_conn_free(f.conn[2]);
	f.conn[2] = xdc_connect(f.r[2]->target);
	xdt_peer_open(&f.other[2], f.conn[2], false, "edge-2");
	xdt_peer_expect(&f.other[2], 1, "the other node of the restarted replica");
	ck_assert(xdt_daemon_wait_log(f.r[2], "reading the snapshots at revision ", SERVED_MS));
	snprintf(want, sizeof(want), "rollout %lld (etcd): 1 snapshot key changed; the rollout under way", rev);
	ck_assert(xdt_daemon_wait_log(f.r[2], want, SERVED_MS));
	xdt_peer_open(&c2, f.conn[2], false, "canary-2");
	xdt_peer_expect(&c2, 2, "a canary of the restarted replica: the change");
	others_quiet(&f, "a node that is no canary, mid-rollout");
	identical(f.r, REPLICAS, "mid-rollout, a replica restarted");

	/* promoted from the restarted replica: everyone has it */
	ck_assert_int_eq(xdsctl(f.r[2], "rollout promote", &out), 0);
	snprintf(want, sizeof(want), "rollout %lld: promoted", rev);
	has(out, want);
	free(out);
	for (int i = 0; i < REPLICAS; i++)
		xdt_peer_expect(&f.other[i], 2, "a node that is no canary, promoted");
	identical(f.r, REPLICAS, "after the promotion");

	xdt_peer_close(&canary);
	xdt_peer_close(&c2);
	fleet_stop(&f);
}
END_TEST

/*
 * Replica 1 is cut from etcd (the balancer in front of it killed) while
 * a rollout is under way: the others promote it; replica 1 decides
 * nothing and serves its nodes that are no canaries the previous
 * snapshots, its bake long over, until it reads the record again.
 */
START_TEST(cut_from_etcd_decides_nothing)
{
	struct fleet f;
	struct xdt_peer canary;
	long long rev;
	char want[256];

	fleet_start(&f, "300ms", true);
	xdt_peer_open(&canary, f.conn[0], false, "canary-0");
	xdt_peer_expect(&canary, 1, "canary");
	rev = put_clusters(f.e, 2);
	ck_assert_int_eq(xdt_peer_next(&canary, SERVED_MS), 2);
	ck_assert(xdt_daemon_wait_log(f.r[1], " (etcd): 1 snapshot key changed", SERVED_MS));
	xdt_balancer_kill(f.lb);
	ck_assert(xdt_daemon_wait_log(f.r[1], "trying again in", SERVED_MS));
	identical(f.r, REPLICAS, "a replica cut from etcd, mid-rollout");

	/* the canary ACKs: promoted by the others, not by the one cut */
	xdt_peer_answer(&canary, NULL);
	xdt_peer_expect(&f.other[0], 2, "replica 0's other node, promoted");
	xdt_peer_expect(&f.other[2], 1, "replica 2's other node, promoted");
	xdtest_sleep_ms(1000); /* its own bake is long over */
	xdt_peer_quiet(&f.other[1], "the node of the replica cut from etcd");
	snprintf(want, sizeof(want), "rollout %lld promoted", rev);
	ck_assert(xdt_daemon_wait_log(f.r[0], want, SERVED_MS));
	ck_assert(xdt_daemon_wait_log(f.r[2], want, SERVED_MS));
	ck_assert_int_eq(xdt_daemon_log_count(f.r[1], want), 0);

	/* etcd back: it reads the record and follows it */
	xdt_balancer_run(f.lb);
	ck_assert(xdt_daemon_wait_log(f.r[1], want, SERVED_MS));
	xdt_peer_expect(&f.other[1], 2, "the node of the replica back on etcd");
	identical(f.r, REPLICAS, "the replica back on etcd");

	xdt_peer_close(&canary);
	fleet_stop(&f);
}
END_TEST

/* `xdsctl push OPTS DIR` to the fleet's etcd: its exit status, its
 * output in *out. */
static int push(const struct fleet *f, const char *opts, const char *dir,
		char **out)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' push --etcd %s --prefix " PREFIX " %s '%s' 2>&1",
		 xdtest_env("XDSCTL"), f->e->endpoint, opts, dir);
	*out = xdtest_command_output(cmd, &st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * push --now: a hotfix or a rollback skips the canaries and the bake.
 * Pushed while a rollout is under way (its bake an hour), it reaches
 * every node of every replica at once, the canaries too, and says so
 * in the record and every replica's log.
 */
START_TEST(push_now_reaches_everyone_at_once)
{
	struct fleet f;
	struct xdt_peer canary;
	char *dir = xdtest_snapdir(), *out, *rec, want[256];
	long long rev;

	fleet_start(&f, "1h", false);
	xdt_peer_open(&canary, f.conn[0], false, "canary-0");
	xdt_peer_expect(&canary, 1, "canary");
	put_clusters(f.e, 2);
	xdt_peer_expect(&canary, 2, "canary: the change under way");

	/* a rollback to the one cluster, at once */
	xdtest_write_clusters(dir, "default.yaml", "c", 1);
	ck_assert_int_eq(push(&f, "--now", dir, &out), 0);
	has(out, "with --now: every replica serves it to every node at once, without canaries or a bake");
	free(out);
	rev = xdt_etcd_mod_revision(f.e, PREFIX "default.yaml");
	xdt_peer_expect(&canary, 1, "the canary, rolled back");
	others_quiet(&f, "the others, who never had the change");
	rec = record(f.e);
	has(rec, "\"now\":true");
	has(rec, "\"state\":\"promoted\"");
	free(rec);

	/* a hotfix, at once to every node */
	xdtest_write_clusters(dir, "default.yaml", "c", 3);
	ck_assert_int_eq(push(&f, "--now", dir, &out), 0);
	free(out);
	rev = xdt_etcd_mod_revision(f.e, PREFIX "default.yaml");
	xdt_peer_expect(&canary, 3, "the canary: the hotfix");
	for (int i = 0; i < REPLICAS; i++)
		xdt_peer_expect(&f.other[i], i == 2 ? 2 : 3, "every other node: the hotfix, at once");
	snprintf(want, sizeof(want), "rollout %lld (etcd): the change is promoted already (pushed with --now by ", rev);
	for (int i = 0; i < REPLICAS; i++)
		ck_assert_msg(xdt_daemon_wait_log(f.r[i], want, SERVED_MS),
			      "replica %d did not say '%s'", i, want);
	identical(f.r, REPLICAS, "after push --now");

	xdt_peer_close(&canary);
	fleet_stop(&f);
	free(dir);
}
END_TEST

/*
 * push --dry-run: what the push would change from what etcd holds, and
 * whom it reaches on every replica (as each reports its nodes), writing
 * nothing; a directory with errors is refused as by a push.
 */
START_TEST(push_dry_run_says_what_and_whom)
{
	struct fleet f;
	struct xdt_peer canary;
	char *dir = xdtest_snapdir(), *out = NULL;
	long long rev;
	int rc = 0;

	fleet_start(&f, "1h", false);
	xdt_peer_open(&canary, f.conn[0], false, "canary-0");
	xdt_peer_expect(&canary, 1, "canary");
	rev = xdt_etcd_mod_revision(f.e, PREFIX "default.yaml");
	xdtest_write_clusters(dir, "default.yaml", "c", 2);
	/* each replica counts its nodes every 2 s: until all four show */
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		free(out);
		rc = push(&f, "--dry-run", dir, &out);
		if (strstr(out, "reaches 4 connected nodes (1 canary connected to any replica)") != NULL ||
		    xdtest_now_ms() >= end)
			break;
		xdtest_sleep_ms(200);
	}
	ck_assert_int_eq(rc, 1);
	has(out, "3 replicas report there:");
	has(out, "snapshot 'default' changed (");
	has(out, "reaches 4 connected nodes (1 canary connected to any replica)");
	has(out, "    + c-1 (");
	has(out, "1 snapshot would change: 1 resource added, 0 removed, 0 changed; 4 nodes connected");
	free(out);
	ck_assert_int_eq(xdt_etcd_mod_revision(f.e, PREFIX "default.yaml"), rev);
	others_quiet(&f, "a dry run changes nothing");

	/* the same as etcd holds: nothing would change */
	xdtest_write_clusters(dir, "default.yaml", "c", 1);
	ck_assert_int_eq(push(&f, "--dry-run", dir, &out), 0);
	has(out, "nothing would change");
	free(out);
	/* refused as a push is */
	free(xdtest_write_file(dir, "broken.yaml", "clusters: {}\n"));
	ck_assert_int_eq(push(&f, "--dry-run", dir, &out), 2);
	has(out, "broken.yaml:1:11: clusters: expected a list");
	free(out);

	xdt_peer_close(&canary);
	fleet_stop(&f);
	free(dir);
}
END_TEST

/* How many times `needle` is in `text`. */
static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *at = strstr(text, needle); at != NULL;
	     at = strstr(at + 1, needle))
		n++;
	return n;
}

/* Whether a line of `text` is `first`, spaces, then `second` and a
 * space (a table's row). */
static bool row_has(const char *text, const char *first, const char *second)
{
	for (const char *line = text; line != NULL && *line != '\0';) {
		const char *end = strchr(line, '\n');
		size_t n = strlen(first);

		if (strncmp(line, first, n) == 0 && line[n] == ' ') {
			const char *at = line + strspn(line + n, " ") + n;

			if (strncmp(at, second, strlen(second)) == 0 &&
			    at[strlen(second)] == ' ')
				return true;
		}
		line = end != NULL ? end + 1 : NULL;
	}
	return false;
}

/* The name replica `d` registers under: "<host>/127.0.0.1:<port>". */
static void replica_name(const struct xdt_daemon *d, char *out, size_t len)
{
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	snprintf(out, len, "%s/%s", host, d->target);
}

/* Runs `xdsctl args` against `d` until its output holds `needle` `n`
 * times: that output (malloc'd), its exit status in *rc. */
static char *xdsctl_until(const struct xdt_daemon *d, const char *args,
			  const char *needle, int n, int *rc)
{
	char *out = NULL;

	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		free(out);
		*rc = xdsctl(d, args, &out);
		if (count_of(out, needle) == n)
			return out;
		ck_assert_msg(xdtest_now_ms() < end, "'%s' never said '%s' %d times:\n%.2500s",
			      args, needle, n, out);
		xdtest_sleep_ms(200);
	}
}

/*
 * The fleet as operators see it, from any replica: `xdsctl fleet` lists
 * each replica once, serving, with its admin address, revision and the
 * set it serves (the same on all three); `clients --fleet` lists every
 * node once, a node on two replicas as one row naming both;
 * `status --fleet` a row per replica; `rollout status --fleet` each
 * replica's view and the canary with its replica; `diff --fleet`
 * whom a change would reach on each replica. A replica that stops is
 * named as not answering, and leaves the list once its lease expires.
 */
START_TEST(the_fleet_seen_from_any_replica)
{
	struct fleet f;
	struct xdt_peer canary, dup1, dup2;
	char name[REPLICAS][320], want[1024], *out, *dir, args[1400];
	int rc;

	fleet_start(&f, "1h", false);
	for (int i = 0; i < REPLICAS; i++)
		replica_name(f.r[i], name[i], sizeof(name[i]));
	xdt_peer_open(&canary, f.conn[0], false, "canary-1");
	xdt_peer_expect(&canary, 1, "canary");
	/* one node on two replicas */
	xdt_peer_open(&dup1, f.conn[1], false, "edge-dup");
	xdt_peer_open(&dup2, f.conn[2], false, "edge-dup");
	xdt_peer_expect(&dup1, 1, "edge-dup on replica 1");
	xdt_peer_expect(&dup2, 1, "edge-dup on replica 2");

	/* every replica registered, seen from replica 2 */
	out = xdsctl_until(f.r[2], "fleet", " serving ", REPLICAS, &rc);
	ck_assert_msg(rc == 0, "xdsctl fleet: exit %d\n%.2500s", rc, out);
	for (int i = 0; i < REPLICAS; i++) {
		snprintf(want, sizeof(want), "\n%s ", name[i]); /* its row */
		ck_assert_msg(count_of(out, want) == 1, "replica %d not once in:\n%.2500s", i, out);
		snprintf(want, sizeof(want), "127.0.0.1:%d", f.r[i]->admin_port);
		has(out, want);
	}
	has(out, "3 replicas (* the one asked)");
	free(out);

	/* every node once, with its replica; edge-dup once, on both */
	out = xdsctl_until(f.r[0], "clients --fleet", "edge-", 4, &rc);
	ck_assert_int_eq(rc, 0);
	has(out, "5 nodes, 6 of 6 streams, on 3 of 3 replicas");
	for (int i = 0; i < REPLICAS; i++) {
		char node[32];

		snprintf(node, sizeof(node), "edge-%d", i);
		ck_assert_msg(row_has(out, name[i], node), "no row of %s on %s:\n%.2500s",
			      node, name[i], out);
	}
	snprintf(want, sizeof(want), "%s,%s", name[1], name[2]);
	ck_assert_msg(row_has(out, want, "edge-dup") ||
			      (snprintf(want, sizeof(want), "%s,%s", name[2], name[1]),
			       row_has(out, want, "edge-dup")),
		      "edge-dup not one row on replicas 1 and 2:\n%.2500s", out);
	ck_assert_int_eq(count_of(out, "canary-1"), 1);
	free(out);

	/* the status page: a row per replica, the rollout's record */
	{
		int status;
		char *page = xdt_admin(f.r[1], "GET", "/status", NULL, &status, NULL);

		ck_assert_int_eq(status, 200);
		has(page, "<section id=replicas><h2>Replicas <small>3</small>");
		ck_assert_int_eq(count_of(page, "<tr class=replica>"), REPLICAS);
		for (int i = 0; i < REPLICAS; i++)
			has(page, name[i]);
		has(page, "<span class=\"badge ok\" title=\"\">serving</span>");
		free(page);
	}

	/* a row per replica, each serving */
	ck_assert_int_eq(xdsctl(f.r[1], "status --fleet", &out), 0);
	ck_assert_int_eq(count_of(out, " serving "), REPLICAS);
	has(out, "3 replicas (* the one asked)");
	free(out);

	/* a rollout: each replica's view, the canary with its replica */
	put_clusters(f.e, 2);
	xdt_peer_expect(&canary, 2, "canary: the change");
	for (int i = 0; i < REPLICAS; i++)
		ck_assert(xdt_daemon_wait_log(f.r[i], " (etcd): 1 snapshot key changed", SERVED_MS));
	/* its first line, and a row per replica */
	out = xdsctl_until(f.r[1], "rollout status --fleet", " baking ", 1 + REPLICAS, &rc);
	ck_assert_int_eq(rc, 0);
	/* replica 2's page, once replica 0's report reached it */
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		int status;
		char *page = xdt_admin(f.r[2], "GET", "/status", NULL, &status, NULL);
		bool there = strstr(page, ": 1 / 1 canaries answered, 0 NACKs") != NULL;

		if (there || xdtest_now_ms() >= end) {
			has(page, "<p id=fleet-rollout>The fleet's rollout: ");
			has(page, ", baking (by ");
			has(page, ": 1 / 1 canaries answered, 0 NACKs");
			free(page);
			break;
		}
		free(page);
		xdtest_sleep_ms(200);
	}
	ck_assert_msg(row_has(out, "canary-1", name[0]), "no row of canary-1 on %s:\n%.2500s",
		      name[0], out);
	free(out);

	/* a change the replicas would read from a directory: whom it
	 * reaches on each */
	dir = xdtest_snapdir();
	xdtest_write_clusters(dir, "default.yaml", "c", 3);
	snprintf(args, sizeof(args), "diff --fleet -v --snapshots '%s'", dir);
	ck_assert_int_eq(xdsctl(f.r[0], args, &out), 1);
	has(out, "snapshot 'default' across the fleet: reaches 5 connected nodes on 3 replicas\n");
	snprintf(want, sizeof(want), "  replica '%s' (this one): 2 nodes\n", name[0]);
	has(out, want);
	snprintf(want, sizeof(want), "  replica '%s': 2 nodes\n", name[2]);
	has(out, want);
	ck_assert_int_eq(count_of(out, "  node edge-dup on"), 1);
	snprintf(want, sizeof(want), "  node edge-dup on '%s', '%s'\n", name[1], name[2]);
	ck_assert_msg(strstr(out, want) != NULL || (snprintf(want, sizeof(want), "  node edge-dup on '%s', '%s'\n",
							      name[2], name[1]),
						    strstr(out, want) != NULL),
		      "edge-dup not one line on replicas 1 and 2:\n%.2500s", out);
	free(out);
	free(dir);

	/* replica 2 stops: named as not answering while its lease lives */
	{
		char *cfg = xdtest_read_file(f.r[2]->config, NULL), *again, *at;
		int port = f.r[2]->port;
		bool old_alive;

		xdt_peer_close(&dup2);
		xdt_peer_close(&f.other[2]);
		xdc_conn_free(f.conn[2]);
		xdt_daemon_stop(f.r[2], STOP_MS);
		rc = xdsctl(f.r[0], "status --fleet", &out);
		if (count_of(out, name[2]) > 0) {
			ck_assert_int_eq(rc, 3);
			snprintf(want, sizeof(want), "replica '%s' at 127.0.0.1:", name[2]);
			has(out, want);
		}
		free(out);

		/* back on the same address, its old key still alive: one row */
		at = strstr(cfg, "listen: 127.0.0.1:0\n");
		ck_assert(at != NULL);
		ck_assert(asprintf(&again, "%.*slisten: 127.0.0.1:%d\n%s", (int)(at - cfg), cfg,
				   port, at + strlen("listen: 127.0.0.1:0\n")) > 0);
		f.r[2] = xdt_daemon_start(again, NULL, START_MS);
		ck_assert(xdt_daemon_wait_log(f.r[2], "serving the snapshots of etcd prefix", SERVED_MS));
		ck_assert(xdt_daemon_wait_log(f.r[2], "reports under '", SERVED_MS));
		f.conn[2] = xdc_connect(f.r[2]->target);
		xdt_peer_open(&f.other[2], f.conn[2], false, "edge-2");
		/* the rollout still bakes: the stable snapshots */
		xdt_peer_expect(&f.other[2], 1, "edge-2, on replica 2 again");
		/* replica 0 has read the new registration */
		snprintf(want, sizeof(want), "\"pid\":%d,", (int)f.r[2]->pid);
		out = xdsctl_until(f.r[0], "--json fleet", want, 1, &rc);
		old_alive = xdt_etcd_count(f.e, PREFIX ".xdsd/replicas/") == REPLICAS + 1;
		/* as replica 0 lists them: the restarted one once (its name
		 * may be the record's "by" too) */
		snprintf(want, sizeof(want), "\"replica\":\"%s\"", name[2]);
		ck_assert_msg(count_of(out, want) == 1,
			      "/fleet.json lists the restarted replica %d times (its old key %s):\n%.2500s",
			      count_of(out, want), old_alive ? "alive" : "gone", out);
		free(out);
		ck_assert_int_eq(xdsctl(f.r[0], "fleet", &out), 0);
		/* its rows: a line it starts */
		snprintf(want, sizeof(want), "\n%s ", name[2]);
		ck_assert_msg(count_of(out, want) == 1,
			      "the restarted replica is not listed once (its old key %s):\n%.2500s",
			      old_alive ? "alive" : "gone", out);
		has(out, "3 replicas (* the one asked)");
		fprintf(stderr, "# listed with the old registration %s\n",
			old_alive ? "still in etcd" : "gone already");
		free(out);
		free(again);
		free(cfg);
	}

	/* stopped for good: it leaves the list once its lease expires */
	xdt_peer_close(&f.other[2]);
	xdc_conn_free(f.conn[2]);
	xdt_daemon_stop(f.r[2], STOP_MS);
	f.r[2] = NULL;
	out = xdsctl_until(f.r[0], "fleet", " serving ", 2, &rc);
	snprintf(want, sizeof(want), "\n%s ", name[2]);
	ck_assert_int_eq(count_of(out, want), 0);
	has(out, "2 replicas (* the one asked)");
	free(out);

	xdt_peer_close(&canary);
	xdt_peer_close(&dup1);
	fleet_stop(&f);
}
END_TEST

/*
 * A replica that stops cleanly leaves the fleet at once: it revokes
 * its lease, and its registration goes with it, though the lease had
 * an hour to live; the others list it no more. One that stops while
 * etcd does not answer (etcd frozen, its connections open) still stops,
 * its revoke given up after a bound (etcd, thawed, may still act on the
 * request it had been sent: what it keeps is not asserted).
 */
START_TEST(a_clean_stop_revokes_the_lease)
{
	struct xdt_etcd *e = xdt_etcd_new();
	struct xdt_daemon *r[3];
	char name[2][320], want[400], *out, *log;
	int rc;

	xdt_etcd_run(e);
	put_clusters(e, 1);
	for (int i = 0; i < 3; i++) {
		r[i] = replica_leased(e->endpoint, "1h", "1h");
		ck_assert(xdt_daemon_wait_log(r[i], "reports under '", SERVED_MS));
		if (i < 2)
			replica_name(r[i], name[i], sizeof(name[i]));
	}
	ck_assert(xdt_daemon_wait_log(r[0], "granted for 3600 s", SERVED_MS));
	free(xdsctl_until(r[0], "fleet", " serving ", 3, &rc));

	/* replica 1 stops: gone from etcd and from replica 0's list */
	xdt_daemon_signal(r[1], SIGTERM);
	ck_assert(xdt_daemon_wait(r[1], STOP_MS));
	ck_assert_int_eq(r[1]->exit_status, 0);
	log = xdt_daemon_log(r[1]);
	has(log, "revoked: this replica's keys under the prefix are gone");
	free(log);
	xdt_daemon_free(r[1]);
	out = xdsctl_until(r[0], "fleet", " serving ", 2, &rc);
	snprintf(want, sizeof(want), "\n%s ", name[1]);
	ck_assert_int_eq(count_of(out, want), 0);
	has(out, "2 replicas (* the one asked)");
	free(out);
	ck_assert_int_eq(xdt_etcd_count(e, PREFIX ".xdsd/replicas/"), 2);

	/* replica 2 stops with etcd frozen: it stops, its revoke given up */
	ck_assert_int_eq(kill(e->pid, SIGSTOP), 0);
	xdt_daemon_signal(r[2], SIGTERM);
	ck_assert_msg(xdt_daemon_wait(r[2], STOP_MS),
		      "xdsd did not stop with etcd not answering");
	ck_assert_int_eq(r[2]->exit_status, 0);
	ck_assert_int_eq(kill(e->pid, SIGCONT), 0);
	log = xdt_daemon_log(r[2]);
	has(log, "etcd: revoking lease ");
	has(log, "; its keys go when it expires");
	free(log);
	xdt_daemon_free(r[2]);
	xdt_daemon_stop(r[0], STOP_MS);
	xdt_etcd_free(e);
}
END_TEST

/*
 * A replica whose lease is lost (cut from etcd past its TTL, short
 * here) decides nothing, and refuses an operator's promote with why; the others promote the rollout meanwhile, and once back on
 * etcd under a new lease it registers again and follows the record.
 */
START_TEST(a_lost_lease_decides_nothing)
{
	struct fleet f;
	struct xdt_peer canary;
	struct xdt_daemon *cut;
	struct xdc_conn *conn;
	struct xdt_peer other;
	long long rev;
	char want[256], *out;
	int rc;

	fleet_start(&f, "300ms", true);
	/* replica 1 again, through the balancer, with a short lease */
	xdt_peer_close(&f.other[1]);
	xdc_conn_free(f.conn[1]);
	xdt_daemon_stop(f.r[1], STOP_MS);
	f.r[1] = NULL;
	cut = replica_leased(f.lb->target, "300ms", "2s");
	ck_assert(xdt_daemon_wait_log(cut, "reports under '", SERVED_MS));
	conn = xdc_connect(cut->target);
	xdt_peer_open(&other, conn, false, "edge-1");
	xdt_peer_expect(&other, 1, "replica 1's other node");
	xdt_peer_open(&canary, f.conn[0], false, "canary-0");
	xdt_peer_expect(&canary, 1, "canary");
	rev = put_clusters(f.e, 2);
	ck_assert_int_eq(xdt_peer_next(&canary, SERVED_MS), 2);
	ck_assert(xdt_daemon_wait_log(cut, " (etcd): 1 snapshot key changed", SERVED_MS));
	wait_record(f.e, "\"state\":\"canary\"");

	xdt_balancer_kill(f.lb);
	ck_assert_msg(xdt_daemon_wait_log(cut, "lost (", SERVED_MS), "the lease was never lost");
	/* an operator's promote is refused, with why */
	for (long long end = xdtest_now_ms() + SERVED_MS;;) {
		rc = xdsctl(cut, "rollout promote", &out);
		if (strstr(out, "cannot be written now: the rollout is left as it is") != NULL)
			break;
		ck_assert_msg(xdtest_now_ms() < end, "promote without a lease: exit %d, %s", rc, out);
		free(out);
		xdtest_sleep_ms(200);
	}
	ck_assert_int_eq(rc, 1);
	free(out);

	/* the canary ACKs: the others promote it, the one cut does not */
	xdt_peer_answer(&canary, NULL);
	snprintf(want, sizeof(want), "rollout %lld promoted", rev);
	ck_assert(xdt_daemon_wait_log(f.r[0], want, SERVED_MS));
	xdt_peer_quiet(&other, "the node of the replica without a lease");
	ck_assert_int_eq(xdt_daemon_log_count(cut, want), 0);

	/* back: a new lease, registered again, the record followed */
	xdt_balancer_run(f.lb);
	ck_assert_msg(xdt_daemon_wait_log_count(cut, "reports under '", 2, SERVED_MS),
		      "no new lease");
	ck_assert_msg(xdt_daemon_wait_log(cut, want, SERVED_MS), "the promotion not followed");
	xdt_peer_expect(&other, 2, "the node of the replica back on etcd");
	free(xdsctl_until(f.r[0], "fleet", " serving ", REPLICAS, &rc));

	xdt_peer_close(&other);
	xdc_conn_free(conn);
	xdt_daemon_stop(cut, STOP_MS);
	xdt_peer_close(&canary);
	fleet_stop(&f);
}
END_TEST

/*
 * xdsd's own keys are input like any other: a record or a report that
 * does not parse is refused with why, naming the key, and taken as none
 * (the record: the next change's rollout replaces it, as it is written
 * where a deleted one was) or left out (the report); one another hand writes and
 * then deletes comes and goes from every view; the replicas serve on,
 * the same bytes.
 */
START_TEST(bad_keys_of_xdsd_refused_with_why)
{
	struct fleet f;
	char *out, want[512];
	long long rev;
	int rc;

	fleet_start(&f, "1h", false);
	xdt_etcd_put(f.e, RECORD, "{\"format\": 1, \"state\": \"dozing\"}");
	snprintf(want, sizeof(want), "rollout: the record at '%s' (revision %lld) is unreadable: ",
		 RECORD, xdt_etcd_mod_revision(f.e, RECORD));
	for (int i = 0; i < REPLICAS; i++)
		ck_assert_msg(xdt_daemon_wait_log(f.r[i], want, SERVED_MS),
			      "replica %d did not say '%s'", i, want);
	ck_assert(xdt_daemon_wait_log(f.r[0], "; taken as no record", SERVED_MS));
	/* and replaced by the next change's rollout, not in its way */
	rev = put_clusters(f.e, 2);
	snprintf(want, sizeof(want), "\"id\":%lld,\"state\":\"canary\"", rev);
	wait_record(f.e, want);
	for (int i = 0; i < REPLICAS; i++)
		xdt_peer_quiet(&f.other[i], "the change after an unreadable record");
	/* deleted by another hand: none, and the next change's rollout is
	 * written where it was */
	ck_assert_int_eq(xdt_etcdctl(f.e, "del " RECORD, NULL), 0);
	rev = put_clusters(f.e, 3);
	snprintf(want, sizeof(want), "\"id\":%lld,\"state\":\"canary\"", rev);
	wait_record(f.e, want);
	for (int i = 0; i < REPLICAS; i++)
		xdt_peer_quiet(&f.other[i], "the change after the record was deleted");
	xdt_etcd_put(f.e, PREFIX ".xdsd/replicas/bogus", "not json");
	ck_assert(xdt_daemon_wait_log(f.r[1], "rollout: the report at '" PREFIX
					      ".xdsd/replicas/bogus' is unreadable: not a JSON object",
				      SERVED_MS));
	out = xdsctl_until(f.r[1], "fleet", " serving ", REPLICAS, &rc);
	has(out, "3 replicas (* the one asked)");
	free(out);
	/* another hand's registration: listed, then gone */
	xdt_etcd_put(f.e, PREFIX ".xdsd/replicas/ghost",
		     "{\"format\": 1, \"replica\": \"ghost/10.9.9.9:1\", \"health\": \"degraded\","
		     " \"health_why\": \"a test\"}");
	out = xdsctl_until(f.r[2], "fleet", "ghost/10.9.9.9:1", 1, &rc);
	ck_assert_int_eq(rc, 1); /* one replica not healthy */
	has(out, "degraded: a test");
	has(out, "4 replicas (* the one asked)");
	free(out);
	ck_assert_int_eq(xdt_etcdctl(f.e, "del " PREFIX ".xdsd/replicas/ghost", NULL), 0);
	out = xdsctl_until(f.r[2], "fleet", "ghost/10.9.9.9:1", 0, &rc);
	ck_assert_int_eq(rc, 0);
	free(out);
	identical(f.r, REPLICAS, "with bad keys of xdsd's own");
	fleet_stop(&f);
}
END_TEST

/*
 * A registration is written when it changes, not on and on: once every
 * replica registered and nothing changes, etcd's revision stays where
 * it is, registration periods on end (each replica reads its own
 * writes, which must not make it write again).
 */
START_TEST(registrations_rest_when_nothing_changes)
{
	struct fleet f;
	long long rev;

	fleet_start(&f, "1h", false);
	for (long long end = xdtest_now_ms() + SERVED_MS;
	     xdt_etcd_count(f.e, PREFIX ".xdsd/replicas/") < REPLICAS;) {
		ck_assert_msg(xdtest_now_ms() < end, "the replicas never registered");
		xdtest_sleep_ms(100);
	}
	/* the first registrations, and those with their streams counted */
	xdtest_sleep_ms(3 * XD_FLEET_REGISTER_MS);
	rev = xdt_etcd_revision(f.e);
	xdtest_sleep_ms(4 * XD_FLEET_REGISTER_MS);
	ck_assert_msg(xdt_etcd_revision(f.e) == rev,
		      "etcd's revision moved from %lld to %lld with nothing changing",
		      rev, xdt_etcd_revision(f.e));
	identical(f.r, REPLICAS, "at rest");
	fleet_stop(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fleet");
	TCase *tc = tcase_create("fleet");

	/* the tests' directories (xdtest_snapdir) are all under it */
	snprintf(dry_run_dir, sizeof(dry_run_dir), "%s", xdtest_tmpdir());
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, a_nack_on_one_replica_rolls_back_all);
	tcase_add_test(tc, promoted_once_for_all);
	tcase_add_test(tc, a_restart_mid_rollout_serves_the_stable_set);
	tcase_add_test(tc, cut_from_etcd_decides_nothing);
	tcase_add_test(tc, push_now_reaches_everyone_at_once);
	tcase_add_test(tc, push_dry_run_says_what_and_whom);
	tcase_add_test(tc, the_fleet_seen_from_any_replica);
	tcase_add_test(tc, a_clean_stop_revokes_the_lease);
	tcase_add_test(tc, a_lost_lease_decides_nothing);
	tcase_add_test(tc, bad_keys_of_xdsd_refused_with_why);
	tcase_add_test(tc, registrations_rest_when_nothing_changes);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
