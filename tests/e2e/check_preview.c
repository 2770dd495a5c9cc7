/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Previewing a reload against the real daemon: `xdsctl diff` (POST
 * /reload?dry_run=1) on added, removed and changed resources and a
 * snapshot key that vanishes, with real xDS clients connected so that
 * whom each change reaches is counted; its exit statuses (0 nothing
 * would change, 1 something would, 2 the snapshots would be refused or
 * a usage error, 3 xdsd unreachable), --json and -v; that a dry run
 * changes nothing (no response to any client, versions and reload
 * counters as they were); and that a reload which removes a key says
 * how many streams move to the default snapshot, in its log and in
 * what POST /reload and `xdsctl reload` answer. REST-JSON pollers seen
 * lately count among the nodes a change reaches, once per node however
 * it is connected.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "http/client.h"
#include "ctl.h"
#include "daemon.h"
#include "xdtest.h"

#define WAIT_MS 5000
#define QUIET_MS 300

static const char *cluster_file(const char *name, int port)
{
	static char buf[8][512];
	static int k;

	k = (k + 1) % 8; /* room for every call of one test */
	snprintf(buf[k], sizeof(buf[k]),
		 "clusters:\n"
		 "- name: %s\n"
		 "  type: STATIC\n"
		 "  connect_timeout: 1s\n"
		 "  load_assignment:\n"
		 "    cluster_name: %s\n"
		 "    endpoints:\n"
		 "    - lb_endpoints:\n"
		 "      - endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}\n",
		 name, name, port);
	return buf[k];
}

/* The clusters `a` and `b` in one file's text (static). */
static const char *two_clusters(const char *a, const char *b)
{
	static char text[2048];

	snprintf(text, sizeof(text), "%s%s", cluster_file(a, 8080),
		 strchr(cluster_file(b, 8081), '\n') + 1);
	return text;
}

/* default (svc on 8080), edge (edge-svc, edge-old), gone (gone-svc). */
static char *snapshots(void)
{
	char *dir = xdtest_snapdir();

	free(xdtest_write_file(dir, "default.yaml", cluster_file("svc", 8080)));
	free(xdtest_write_file(dir, "edge.yaml", two_clusters("edge-svc", "edge-old")));
	free(xdtest_write_file(dir, "gone.yaml", cluster_file("gone-svc", 8080)));
	return dir;
}

/* The change previewed: svc's port, gone.yaml removed, new.yaml added,
 * edge-old replaced by edge-extra in edge. */
static void change(const char *dir)
{
	char path[4096];

	xdtest_replace_file(dir, "default.yaml", cluster_file("svc", 9090));
	snprintf(path, sizeof(path), "%s/gone.yaml", dir);
	ck_assert(unlink(path) == 0);
	free(xdtest_write_file(dir, "new.yaml", cluster_file("new-svc", 8080)));
	xdtest_replace_file(dir, "edge.yaml", two_clusters("edge-svc", "edge-extra"));
}

/* Nodes: "edge-1" (key edge), "gone-1" on two streams (key gone), and
 * "plain-1" whose key has no snapshot (served the default one), each
 * with every cluster; "edge-2" (key edge) asks for edge-old by name,
 * over delta. */
struct fleet {
	struct xdc_conn *conn;
	struct xdc_stream *s[4];
	char *version[4];
	struct xdc_stream *named;
};

static void ask_by_name(struct fleet *f)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r;
	char *name = "edge-old";

	node.id = "edge-2";
	node.cluster = "edge";
	req.node = &node;
	req.type_url = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
	req.resource_names_subscribe = &name;
	req.n_resource_names_subscribe = 1;
	f->named = xdc_open(f->conn, XDC_DELTA_ADS);
	ck_assert(xdc_send_delta(f->named, &req, WAIT_MS));
	r = xdc_recv_delta(f->named, WAIT_MS);
	ck_assert(r != NULL && r->n_resources == 1);
	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
}

static void fleet_open(struct fleet *f, const struct xdt_daemon *d)
{
	static const char *const node[4][2] = {
		{"edge-1", "edge"}, {"gone-1", "gone"}, {"gone-1", "gone"},
		{"plain-1", "plain"},
	};

	f->conn = xdc_connect(d->target);
	for (int i = 0; i < 4; i++) {
		f->s[i] = xdc_watch_clusters(f->conn, node[i][0], node[i][1]);
		ck_assert_int_eq(xdc_next_clusters(f->s[i], WAIT_MS, &f->version[i]),
				 i == 0 ? 2 : 1);
	}
	ask_by_name(f);
}

/* No stream hears of anything for a while: nothing was pushed. */
static void fleet_quiet(struct fleet *f)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r;

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(xdc_next_clusters(f->s[i], i == 0 ? QUIET_MS : 20, NULL), -1);
	r = xdc_recv_delta(f->named, 20);
	ck_assert_msg(r == NULL, "a delta response after a dry run");
}

static void fleet_close(struct fleet *f)
{
	for (int i = 0; i < 4; i++) {
		xdc_stream_free(f->s[i]);
		free(f->version[i]);
	}
	xdc_stream_free(f->named);
	xdc_conn_free(f->conn);
}

/* The member `key` of the element of `arr` whose "key"/"name" is `v`. */
static json_t *find(json_t *arr, const char *field, const char *v)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e) {
		const char *s = json_string_value(json_object_get(e, field));

		if (s != NULL && strcmp(s, v) == 0)
			return e;
	}
	ck_abort_msg("no %s '%s' in %s", field, v, json_dumps(arr, 0));
	return NULL;
}

/* A line of `text` that starts with `prefix` and ends with `end`. */
static void has_line(const char *text, const char *prefix, const char *end)
{
	for (const char *p = text; *p != '\0';) {
		size_t len = strcspn(p, "\n");

		if (strncmp(p, prefix, strlen(prefix)) == 0 && len >= strlen(end) &&
		    strncmp(p + len - strlen(end), end, strlen(end)) == 0)
			return;
		p += len + (p[len] == '\n');
	}
	ck_abort_msg("no line '%s...%s' in:\n%s", prefix, end, text);
}

static long long num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	ck_assert_msg(json_is_integer(v), "no integer %s", key);
	return json_integer_value(v);
}

START_TEST(diff_shows_what_a_reload_would_change)
{
	char *dir = snapshots();
	struct xdt_daemon *d = xdt_ctl_start(dir, NULL);
	char *admin = xdt_ctl_admin(d);
	struct fleet f;
	struct xdt_run r;
	double ok_before, err_before;
	json_t *j, *gone, *dflt, *edge, *t, *res;
	const char *text;
	int status;

	fleet_open(&f, d);
	r = xdt_ctl(true, admin, (const char *const[]){"diff", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "nothing would change (3 snapshots from 3 files)");
	xdt_run_free(&r);

	change(dir);
	ok_before = xdt_daemon_metric(d, "xdsd_reloads_total{result=\"ok\"}");
	err_before = xdt_daemon_metric(d, "xdsd_reloads_total{result=\"error\"}");

	r = xdt_ctl(true, admin, (const char *const[]){"diff", NULL});
	xdt_want(&r, 1);
	/* the changed resource, as diff -u of its YAML */
	xdt_has(r.out, "snapshot 'default' changed (");
	xdt_has(r.out, "    ~ svc (");
	has_line(r.out, "        -  ", " port_value: 8080");
	has_line(r.out, "        +  ", " port_value: 9090");
	/* the key that goes, the key that comes, a resource added */
	xdt_has(r.out, "snapshot 'gone' removed (");
	xdt_has(r.out, "    - gone-svc (");
	xdt_has(r.out, "snapshot 'new' added ((none) -> ");
	xdt_has(r.out, "    + new-svc ((none) -> ");
	xdt_has(r.out, "snapshot 'edge' changed (");
	xdt_has(r.out, "  clusters (");
	xdt_has(r.out, "    + edge-extra (");
	xdt_has(r.out, "    - edge-old (");
	xdt_has(r.out, "warning: cluster 'edge-old' is removed from snapshot 'edge', but 1 of its connected nodes still asks for it by name\n");
	/* whom: the node of gone on two streams, plain's node by default */
	xdt_has(r.out, "snapshot 'gone' removed");
	xdt_has(r.out, "reaches 1 connected node; 2 streams move to the default snapshot\n");
	xdt_has(r.out, "warning: snapshot 'gone' is removed: its 1 connected node (2 streams) fall back to the default snapshot\n");
	xdt_has(r.out, "4 snapshots would change: 2 resources added, 2 removed, 1 changed; 4 nodes connected\n");
	/* without -v: no node ids, no text of what is only added */
	xdt_lacks(r.out, "nodes: ");
	xdt_lacks(r.out, "+name: new-svc");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"diff", "-v", NULL});
	xdt_want(&r, 1);
	xdt_has(r.out, "  nodes: gone-1\n");
	xdt_has(r.out, "  nodes: plain-1\n");
	xdt_has(r.out, "  nodes: edge-1, edge-2\n");
	xdt_has(r.out, "        +name: new-svc\n");
	xdt_has(r.out, "        -name: gone-svc\n");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"--json", "diff", NULL});
	xdt_want(&r, 1);
	j = xdt_json_parse(r.out);
	ck_assert(json_is_true(json_object_get(j, "dry_run")));
	ck_assert(json_is_true(json_object_get(j, "ok")));
	ck_assert_int_eq(num(j, "changed"), 4);
	t = json_object_get(j, "diff");
	ck_assert_int_eq(num(t, "connected_nodes"), 4);
	ck_assert_int_eq(num(t, "added"), 2);
	ck_assert_int_eq(num(t, "removed"), 2);
	ck_assert_int_eq(num(t, "changed_resources"), 1);
	gone = find(json_object_get(t, "snapshots"), "key", "gone");
	ck_assert_str_eq(json_string_value(json_object_get(gone, "change")), "removed");
	ck_assert_int_eq(num(gone, "streams_moved"), 2);
	ck_assert_int_eq(num(gone, "nodes"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(gone, "version_after")), "");
	dflt = find(json_object_get(t, "snapshots"), "key", "default");
	ck_assert_int_eq(num(dflt, "nodes"), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(dflt, "node_ids"), 0)),
			 "plain-1");
	res = find(json_object_get(find(json_object_get(dflt, "types"), "type", "clusters"),
				   "resources"),
		   "name", "svc");
	ck_assert_str_eq(json_string_value(json_object_get(res, "change")), "changed");
	ck_assert_str_ne(json_string_value(json_object_get(res, "version_before")),
			 json_string_value(json_object_get(res, "version_after")));
	text = json_string_value(json_object_get(res, "diff"));
	ck_assert_msg(strstr(text, "@@ ") == text, "%s", text);
	edge = find(json_object_get(t, "snapshots"), "key", "edge");
	ck_assert_int_eq(num(find(json_object_get(edge, "types"), "type", "clusters"), "added"), 1);
	json_decref(j);
	xdt_run_free(&r);

	/* nothing changed: no push, the same versions, no reload counted */
	fleet_quiet(&f);
	ck_assert_double_eq(xdt_daemon_metric(d, "xdsd_reloads_total{result=\"ok\"}"), ok_before);
	ck_assert_double_eq(xdt_daemon_metric(d, "xdsd_reloads_total{result=\"error\"}"), err_before);
	j = xdt_admin_json(d, "GET", "/config_dump?snapshot=gone", &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(xdt_json_str(j, "snapshot"), "gone");
	json_decref(j);
	r = xdt_ctl(false, admin, (const char *const[]){"diff", NULL});
	xdt_want(&r, 1); /* still to do */
	xdt_run_free(&r);
	/* the dry runs are counted as such */
	ck_assert_double_eq(xdt_daemon_metric(d, "xdsd_reload_dry_runs_total{result=\"ok\"}"), 5);
	ck_assert_double_eq(xdt_daemon_metric(d, "xdsd_reload_dry_runs_total{result=\"refused\"}"), 0);

	fleet_close(&f);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

/*
 * A node that asks for a cluster by a locator with dynamic parameters
 * (rule P1) asks for it by name: the preview of a reload that removes
 * the cluster warns of it.
 */
START_TEST(diff_counts_a_locator_as_asking_by_name)
{
	char *dir = snapshots();
	struct xdt_daemon *d = xdt_ctl_start(dir, NULL);
	char *admin = xdt_ctl_admin(d);
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Service__Discovery__V3__ResourceLocator loc =
		ENVOY__SERVICE__DISCOVERY__V3__RESOURCE_LOCATOR__INIT;
	Envoy__Service__Discovery__V3__ResourceLocator__DynamicParametersEntry env =
		ENVOY__SERVICE__DISCOVERY__V3__RESOURCE_LOCATOR__DYNAMIC_PARAMETERS_ENTRY__INIT;
	Envoy__Service__Discovery__V3__ResourceLocator__DynamicParametersEntry *params[] = {&env};
	Envoy__Service__Discovery__V3__ResourceLocator *locs[] = {&loc};
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *resp;
	struct xdc_conn *conn = xdc_connect(d->target);
	struct xdc_stream *st = xdc_open(conn, XDC_DELTA_ADS);
	struct xdt_run r;

	env.key = "env";
	env.value = "prod";
	loc.name = "edge-old";
	loc.n_dynamic_parameters = 1;
	loc.dynamic_parameters = params;
	node.id = "edge-3";
	node.cluster = "edge";
	req.node = &node;
	req.type_url = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
	req.n_resource_locators_subscribe = 1;
	req.resource_locators_subscribe = locs;
	ck_assert(xdc_send_delta(st, &req, WAIT_MS));
	/* no variant accepts the parameters: the plain cluster (rule P1) */
	resp = xdc_recv_delta(st, WAIT_MS);
	ck_assert(resp != NULL && resp->n_resources == 1);
	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(resp, NULL);

	change(dir);
	r = xdt_ctl(true, admin, (const char *const[]){"diff", NULL});
	xdt_want(&r, 1);
	xdt_has(r.out, "warning: cluster 'edge-old' is removed from snapshot 'edge', but 1 of its connected nodes still asks for it by name\n");
	xdt_run_free(&r);

	xdc_stream_free(st);
	xdc_conn_free(conn);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

START_TEST(diff_exit_statuses)
{
	char *dir = snapshots(), *other = snapshots(), *bad = snapshots(),
	     *everyone = snapshots(), extra[4200];
	struct xdt_daemon *d;
	char *admin;
	struct xdt_run r;
	static const char *const usage[][5] = {
		{"diff", "extra", NULL},
		{"-v", "status", NULL},
		{"--snapshots", "/tmp", "reload", NULL},
		{"diff", "--snapshots", NULL},
		{"diff", "--snapshots", "no/such/dir", NULL},
	};

	/* the test's directories are all below its temporary one */
	snprintf(extra, sizeof(extra), "dry_run_dirs: ['%s']\n", xdtest_tmpdir());
	d = xdt_ctl_start(dir, extra);
	admin = xdt_ctl_admin(d);
	char line[1024];

	/* what a reload reads, unchanged: nothing would change, and the
	 * log says what was checked, though nothing needed parsing again */
	r = xdt_ctl(false, admin, (const char *const[]){"diff", NULL});
	xdt_want(&r, 0);
	xdt_run_free(&r);
	snprintf(line, sizeof(line), "info: dry run of %s: checked 3 files (0 parsed, 3 unchanged since last parsed), 3 snapshots: 0 would change; nothing was changed",
		 dir);
	ck_assert_msg(xdt_daemon_wait_log(d, line, WAIT_MS), "no '%s'", line);
	/* a copy of what is served: nothing would change */
	r = xdt_ctl(false, admin, (const char *const[]){"diff", "--snapshots", other, NULL});
	xdt_want(&r, 0);
	xdt_run_free(&r);
	snprintf(line, sizeof(line), "info: dry run of %s: checked 3 files (3 parsed, 0 unchanged since last parsed), 3 snapshots: 0 would change; nothing was changed",
		 other);
	ck_assert_msg(xdt_daemon_wait_log(d, line, WAIT_MS), "no '%s'", line);
	xdtest_replace_file(other, "edge.yaml", cluster_file("edge-svc", 7070));
	r = xdt_ctl(false, admin, (const char *const[]){"diff", "--snapshots", other, NULL});
	xdt_want(&r, 1);
	has_line(r.out, "        +  ", " port_value: 7070");
	xdt_run_free(&r);

	/* a change that reaches every node connected, here the one */
	{
		struct xdc_conn *conn = xdc_connect(d->target);
		struct xdc_stream *s = xdc_watch_clusters(conn, "plain-1", "plain");

		ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 1);
		xdtest_replace_file(everyone, "default.yaml", cluster_file("svc", 6060));
		r = xdt_ctl(false, admin, (const char *const[]){"diff", "--snapshots", everyone, NULL});
		xdt_want(&r, 1);
		xdt_has(r.out, "warning: the change of snapshot 'default' reaches every connected node (1)\n");
		xdt_run_free(&r);
		xdc_stream_free(s);
		xdc_conn_free(conn);
	}

	/* snapshots xdsd would refuse: 2, with the file and line */
	free(xdtest_write_file(bad, "broken.yaml", "clusters:\n- name: x\n  typo_field: 1\n"));
	r = xdt_ctl(false, admin, (const char *const[]){"diff", "--snapshots", bad, NULL});
	xdt_want(&r, 2);
	xdt_has(r.err, "reload would be refused (dry run");
	xdt_has(r.err, "broken.yaml:3:");
	ck_assert_str_eq(r.out, "");
	xdt_run_free(&r);
	snprintf(line, sizeof(line), "info: dry run of %s: checked 4 files (4 parsed, 0 unchanged since last parsed): a reload would be refused (1 error); nothing was changed",
		 bad);
	ck_assert_msg(xdt_daemon_wait_log(d, line, WAIT_MS), "no '%s'", line);
	r = xdt_ctl(false, admin, (const char *const[]){"--json", "diff", "--snapshots", bad, NULL});
	xdt_want(&r, 2);
	xdt_has(r.out, "\"ok\":false");
	xdt_run_free(&r);
	ck_assert_double_eq(xdt_daemon_metric(d, "xdsd_reload_dry_runs_total{result=\"refused\"}"), 2);
	/* the admin endpoint's own refusals */
	{
		int status;
		char *body = xdt_admin(d, "POST", "/reload?dry_run=1&snapshots=relative", "{}",
				       &status, NULL);

		ck_assert_int_eq(status, 400);
		free(body);
		body = xdt_admin(d, "POST", "/reload?dry_run=maybe", "{}", &status, NULL);
		ck_assert_int_eq(status, 400);
		free(body);
	}
	/* usage errors */
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		r = xdt_ctl(false, admin, usage[i]);
		xdt_want(&r, 2);
		xdt_has(r.err, "xdsctl: ");
		xdt_run_free(&r);
	}
	xdt_ctl_stop(d);
	/* nobody there: 3 */
	r = xdt_ctl(false, admin, (const char *const[]){"diff", NULL});
	xdt_want(&r, 3);
	xdt_run_free(&r);
	free(admin);
	free(dir);
	free(other);
	free(bad);
	free(everyone);
}
END_TEST

/*
 * A dry run quotes what it reads in its errors, and xdsd may read what
 * whoever reaches its admin endpoint may not: it reads only the
 * snapshot directory and directories at or below dry_run_dirs, after
 * resolving symlinks and "..", and refuses every other with 403, the
 * same whether it exists or not, logged and counted; the contents of a
 * file elsewhere never come back.
 */
#define SECRET "hunter2-root-only"
START_TEST(dry_run_reads_only_allowed_dirs)
{
	char *dir = snapshots(), *root = xdtest_snapdir(), *secret = xdtest_snapdir();
	char extra[4200], next[4200], link[4200], path[8400], *admin, *body;
	const char *denied[4];
	struct xdt_daemon *d;
	struct xdt_run r;
	int status;

	free(xdtest_write_file(secret, "default.yaml",
			       "clusters:\n- name: x\n  " SECRET ": 1\n"));
	ck_assert_int_eq(chmod(secret, 0700), 0);
	snprintf(next, sizeof(next), "%s/next", root);
	ck_assert_int_eq(mkdir(next, 0755), 0);
	free(xdtest_write_file(next, "default.yaml", cluster_file("svc", 9090)));
	snprintf(link, sizeof(link), "%s/link", root);
	ck_assert_int_eq(symlink(secret, link), 0);
	snprintf(extra, sizeof(extra), "dry_run_dirs: ['%s']\n", root);
	d = xdt_ctl_start(dir, extra);
	admin = xdt_ctl_admin(d);

	/* elsewhere, through a symlink below the root, by "..", and a
	 * directory that does not exist: one answer for all */
	snprintf(path, sizeof(path), "%s/next/../..%s", root, secret + strlen(xdtest_tmpdir()));
	denied[0] = secret;
	denied[1] = link;
	denied[2] = path;
	denied[3] = "/no/such/dir";
	for (size_t i = 0; i < 4; i++) {
		char q[9000], want[9000];

		snprintf(q, sizeof(q), "/reload?dry_run=1&snapshots=%s", denied[i]);
		body = xdt_admin(d, "POST", q, "{}", &status, NULL);
		ck_assert_msg(status == 403, "%s: %d %s", denied[i], status, body);
		snprintf(want, sizeof(want),
			 "snapshots: '%s' is not a directory a dry run may read: the snapshot directory, or one at or below a directory of dry_run_dirs (xdsd.yaml(5))\n",
			 denied[i]);
		ck_assert_str_eq(body, want);
		free(body);
	}
	ck_assert(xdt_daemon_wait_log(d, "admin: refused a dry run asked by 127.0.0.1", WAIT_MS));
	ck_assert_double_eq(xdt_daemon_metric(d, "xdsd_http_refused_total{endpoint=\"admin\",reason=\"dry_run_dir\"}"), 4);
	ck_assert_double_eq(xdt_daemon_metric(d, "xdsd_reload_dry_runs_total{result=\"refused\"}"), 0);
	/* xdsctl says so, exit status 2, and nothing of the file */
	r = xdt_ctl(false, admin, (const char *const[]){"diff", "--snapshots", secret, NULL});
	xdt_want(&r, 2);
	xdt_has(r.err, "is not a directory a dry run may read");
	xdt_lacks(r.err, SECRET);
	xdt_lacks(r.out, SECRET);
	xdt_run_free(&r);

	/* below the root, and the snapshot directory itself: read */
	r = xdt_ctl(false, admin, (const char *const[]){"diff", "--snapshots", next, NULL});
	xdt_want(&r, 1);
	has_line(r.out, "        +  ", " port_value: 9090");
	xdt_run_free(&r);
	r = xdt_ctl(false, admin, (const char *const[]){"diff", "--snapshots", dir, NULL});
	xdt_want(&r, 0);
	xdt_run_free(&r);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
	free(root);
	free(secret);
}
END_TEST

START_TEST(reload_says_whom_it_moves)
{
	char *dir = snapshots();
	struct xdt_daemon *d = xdt_ctl_start(dir, NULL);
	char *admin = xdt_ctl_admin(d);
	struct fleet f;
	struct xdt_run r;
	json_t *j, *diff, *gone;
	int status;

	fleet_open(&f, d);
	change(dir);
	r = xdt_ctl(false, admin, (const char *const[]){"reload", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "reload ok (admin");
	xdt_has(r.out, "  snapshot 'gone' removed: 0 resources added, 1 removed, 0 changed\n");
	xdt_has(r.out, "  snapshot 'new' added: 1 resource added, 0 removed, 0 changed\n");
	xdt_has(r.out, "  snapshot 'default' changed: 0 resources added, 0 removed, 1 changed\n");
	xdt_has(r.out, "warning: snapshot 'gone' was removed: 2 streams moved to the default snapshot\n");
	xdt_run_free(&r);
	ck_assert(xdt_daemon_wait_log(d, "reload removes snapshot 'gone': 2 streams of its nodes move to the default snapshot",
				      WAIT_MS));

	/* POST /reload's own answer: nothing more to apply */
	j = xdt_admin_json(d, "POST", "/reload", &status);
	ck_assert_int_eq(status, 200);
	diff = json_object_get(j, "diff");
	ck_assert(json_is_object(diff));
	ck_assert(json_is_false(json_object_get(diff, "changed")));
	ck_assert_int_eq(json_array_size(json_object_get(diff, "snapshots")), 0);
	json_decref(j);

	/* and one that removes a key again, read as JSON */
	free(xdtest_write_file(dir, "gone.yaml", cluster_file("gone-svc", 8080)));
	j = xdt_admin_json(d, "POST", "/reload", &status);
	ck_assert_int_eq(status, 200);
	gone = find(json_object_get(json_object_get(j, "diff"), "snapshots"), "key", "gone");
	ck_assert_str_eq(json_string_value(json_object_get(gone, "change")), "added");
	ck_assert(json_object_get(gone, "nodes") == NULL); /* a dry run's only */
	json_decref(j);
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/gone.yaml", dir);
		ck_assert(unlink(path) == 0);
	}
	j = xdt_admin_json(d, "POST", "/reload", &status);
	ck_assert_int_eq(status, 200);
	diff = json_object_get(j, "diff");
	gone = find(json_object_get(diff, "snapshots"), "key", "gone");
	ck_assert_int_eq(num(gone, "streams_moved"), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(diff, "warnings"), 0)),
			 "snapshot 'gone' was removed: 2 streams moved to the default snapshot");
	json_decref(j);

	fleet_close(&f);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

/* A REST-JSON DiscoveryRequest for clusters by node `id` of cluster
 * `cluster` (its key), answered at once: it holds no version. */
static void rest_poll(const struct xdt_daemon *d, const char *id,
		      const char *cluster)
{
	char target[64], body[256], why[256];
	struct xd_http_request q = {.target = target, .method = "POST",
				    .path = "/v3/discovery:clusters",
				    .body = body, .timeout_ms = 10000};
	struct xd_http_response r;

	snprintf(target, sizeof(target), "127.0.0.1:%d", d->rest_port);
	snprintf(body, sizeof(body), "{\"node\": {\"id\": \"%s\", \"cluster\": \"%s\"}}",
		 id, cluster);
	q.body_len = strlen(body);
	ck_assert_msg(xd_http_fetch(&q, &r, why, sizeof(why)) == 0, "%s", why);
	ck_assert_msg(r.status == 200, "%d: %s", r.status, r.body);
	xd_http_response_free(&r);
}

START_TEST(rest_pollers_are_reached)
{
	char *dir = snapshots();
	struct xdt_daemon *d = xdt_ctl_start(dir, "rest_listen: 127.0.0.1:0\n");
	char *admin = xdt_ctl_admin(d);
	struct fleet f;
	struct xdt_run r;
	json_t *j, *diff, *k;
	int status;

	ck_assert(d->rest_port > 0);
	fleet_open(&f, d);
	/* rest-1 polls only, of gone; edge-1 both streams and polls */
	rest_poll(d, "rest-1", "gone");
	rest_poll(d, "edge-1", "edge");
	rest_poll(d, "edge-1", "edge");
	change(dir);

	j = xdt_admin_json(d, "POST", "/reload?dry_run=1", &status);
	ck_assert_int_eq(status, 200);
	diff = json_object_get(j, "diff");
	/* edge-1, gone-1, plain-1, edge-2 and rest-1 */
	ck_assert_int_eq(num(diff, "connected_nodes"), 5);
	ck_assert_int_eq(num(diff, "rest_pollers"), 2);
	k = find(json_object_get(diff, "snapshots"), "key", "gone");
	ck_assert_int_eq(num(k, "nodes"), 2);
	ck_assert_int_eq(num(k, "rest_pollers"), 1);
	ck_assert_int_eq(json_array_size(json_object_get(k, "node_ids")), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(k, "node_ids"), 1)),
			 "rest-1");
	k = find(json_object_get(diff, "snapshots"), "key", "edge");
	ck_assert_int_eq(num(k, "nodes"), 2); /* edge-1 once, edge-2 */
	ck_assert_int_eq(num(k, "rest_pollers"), 1);
	json_decref(j);

	r = xdt_ctl(false, admin, (const char *const[]){"diff", NULL});
	xdt_want(&r, 1);
	has_line(r.out, "snapshot 'gone' removed (", "): reaches 2 connected nodes (1 by REST-JSON); 2 streams move to the default snapshot");
	xdt_has(r.out, "warning: snapshot 'gone' is removed: its 2 connected nodes (2 streams, 1 REST-JSON poller) fall back to the default snapshot\n");
	xdt_has(r.out, "(2 of the nodes poll by REST-JSON)\n");
	xdt_run_free(&r);

	fleet_close(&f);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("preview");
	TCase *tc = tcase_create("preview");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, diff_shows_what_a_reload_would_change);
	tcase_add_test(tc, diff_counts_a_locator_as_asking_by_name);
	tcase_add_test(tc, diff_exit_statuses);
	tcase_add_test(tc, dry_run_reads_only_allowed_dirs);
	tcase_add_test(tc, reload_says_whom_it_moves);
	tcase_add_test(tc, rest_pollers_are_reached);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
