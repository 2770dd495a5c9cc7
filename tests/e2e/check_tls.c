/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS and mTLS on the xDS listener, end to end: certificates made with
 * openssl (tests/lib/make-certs.sh), the real daemon, gRPC's own TLS on
 * both sides. Who may connect, what identity a client proves, who may
 * speak for which node (authorize), and certificates replaced without
 * dropping a stream by every reload (SIGHUP, POST /reload, xdsctl, the
 * watch), a bad one failing the whole reload.
 */
#include <grpc/status.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
#define WAIT_MS 5000
#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"

/*
 * xdsd with TLS from `server` (server.pem + server.key, say "server"),
 * client certificates required when `mtls`, and `extra` config lines.
 * Copies of the server files sit in the daemon's own directory, so that
 * a test can replace them. Debug log (identities are logged there).
 */
static struct xdt_daemon *start_tls(const char *dir, const char *server,
				    bool mtls, const char *extra,
				    char **tls_dir)
{
	char cfg[2048], *tdir, *text, name[64];

	ck_assert(asprintf(&tdir, "%s/tls.%d", xdtest_tmpdir(), (int)getpid()) > 0);
	mkdir(tdir, 0755);
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s.%s", server, i ? "key" : "pem");
		text = xdtest_read_file(xdtest_cert(name), NULL);
		ck_assert(text != NULL);
		free(xdtest_write_file(tdir, i ? "server.key" : "server.pem", text));
		free(text);
	}
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n"
		 "tls:\n  cert: %s/server.pem\n  key: %s/server.key\n%s%s\n%s\n",
		 dir, tdir, tdir, mtls ? "  client_ca: " : "", mtls ? xdtest_cert("ca.pem") : "",
		 extra ? extra : "");
	*tls_dir = tdir;
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* The stream must end without a response, with `code`. */
static void refused(struct xdc_stream *s, grpc_status_code code,
		    const char *needle)
{
	xdc_expect_refused(s, code, needle, WAIT_MS);
}

/* Over TLS, a client trusting the CA is served; a plaintext client is
 * not (the port speaks only TLS). */
START_TEST(tls_serves_tls_clients_only)
{
	char *dir = xdtest_clusters_snapdir(2), *tdir, *cn;
	struct xdt_daemon *d = start_tls(dir, "server", false, NULL, &tdir);
	struct xdc_conn *c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"), NULL, NULL);
	struct xdc_conn *plain = xdc_connect(d->target);
	struct xdc_stream *s = xdc_watch_clusters(c, "n1", "prod"), *p;

	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 2);
	cn = xdc_server_property(s, "x509_common_name");
	ck_assert_str_eq(cn, "xdsd server one");
	free(cn);
	ck_assert(xdt_daemon_wait_log(d, "info: TLS: certificate /CN=xdsd server one, valid until", 100));
	p = xdc_watch_clusters(plain, "n2", "prod");
	refused(p, GRPC_STATUS_UNAVAILABLE, NULL);
	xdc_stream_free(p);
	xdc_stream_free(s);
	xdc_conn_free(plain);
	xdc_conn_free(c);
	stop(d);
	free(tdir);
	free(dir);
}
END_TEST

/* With client_ca: only clients with a certificate the CA signed, valid
 * now; a client's identity is its URI SAN, else DNS SAN, else CN. */
START_TEST(mtls_requires_a_valid_client_certificate)
{
	static const struct {
		const char *name, *identity;
	} ok[] = {
		{"frontend", "spiffe://example.org/ns/prod/sa/frontend"},
		{"dnsonly", "envoy-1.example.org"},
		{"cnonly", "envoy-cn"},
	};
	static const char *const bad[] = {NULL, "rogue", "expired"};
	char *dir = xdtest_clusters_snapdir(1), *tdir, key[64], pem[64], needle[256];
	struct xdt_daemon *d = start_tls(dir, "server", true, NULL, &tdir);

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct xdc_conn *c;
		struct xdc_stream *s;

		snprintf(pem, sizeof(pem), "%s.pem", ok[i].name);
		snprintf(key, sizeof(key), "%s.key", ok[i].name);
		c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
				    xdtest_cert(pem), xdtest_cert(key));
		s = xdc_watch_clusters(c, ok[i].name, "prod");
		ck_assert_msg(xdc_next_clusters(s, WAIT_MS, NULL) == 1, "%s not served", ok[i].name);
		snprintf(needle, sizeof(needle), "(identity '%s')", ok[i].identity);
		ck_assert_msg(xdt_daemon_wait_log(d, needle, WAIT_MS), "no %s", needle);
		xdc_stream_free(s);
		xdc_conn_free(c);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xdc_conn *c;
		struct xdc_stream *s;

		snprintf(pem, sizeof(pem), "%s.pem", bad[i] ? bad[i] : "");
		snprintf(key, sizeof(key), "%s.key", bad[i] ? bad[i] : "");
		c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
				    bad[i] ? xdtest_cert(pem) : NULL,
				    bad[i] ? xdtest_cert(key) : NULL);
		s = xdc_watch_clusters(c, "intruder", "prod");
		refused(s, GRPC_STATUS_UNAVAILABLE, NULL);
		xdc_stream_free(s);
		xdc_conn_free(c);
	}
	ck_assert(!xdt_daemon_wait_log(d, "node 'intruder'", 100));
	stop(d);
	free(tdir);
	free(dir);
}
END_TEST

/* authorize: an identity speaks only for the nodes its rules name; any
 * other claim ends the stream with PERMISSION_DENIED before anything
 * is sent, and the log names the identity, node id and cluster. */
START_TEST(authorize_rules_decide_who_speaks_for_a_node)
{
	static const char *const rules =
		"authorize:\n"
		"  - identity: spiffe://example.org/ns/prod/sa/*\n"
		"    node_cluster: prod-*\n"
		"  - identity: envoy-1.example.org\n"
		"    node_id: edge-*\n";
	static const struct {
		const char *who, *id, *cluster;
		bool allowed;
	} cases[] = {
		{"frontend", "web-1", "prod-web", true},
		{"backend", "api-1", "prod-api", true},
		{"frontend", "web-1", "dev-web", false},
		{"dnsonly", "edge-7", "anything", true},
		{"dnsonly", "web-1", "prod-web", false},
		{"cnonly", "web-1", "prod-web", false},
	};
	char *dir = xdtest_clusters_snapdir(1), *tdir, key[64], pem[64], needle[512];
	struct xdt_daemon *d = start_tls(dir, "server", true, rules, &tdir);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xdc_conn *c;
		struct xdc_stream *s;

		snprintf(pem, sizeof(pem), "%s.pem", cases[i].who);
		snprintf(key, sizeof(key), "%s.key", cases[i].who);
		c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
				    xdtest_cert(pem), xdtest_cert(key));
		s = xdc_watch_clusters(c, cases[i].id, cases[i].cluster);
		if (cases[i].allowed) {
			ck_assert_msg(xdc_next_clusters(s, WAIT_MS, NULL) == 1,
				      "%s as %s/%s not served", cases[i].who,
				      cases[i].id, cases[i].cluster);
		} else {
			refused(s, GRPC_STATUS_PERMISSION_DENIED, "may not speak for");
			snprintf(needle, sizeof(needle),
				 "may not speak for node id '%s' cluster '%s'",
				 cases[i].id, cases[i].cluster);
			ck_assert_msg(xdt_daemon_wait_log(d, needle, WAIT_MS),
				      "no '%s' in the log", needle);
		}
		xdc_stream_free(s);
		xdc_conn_free(c);
	}
	ck_assert(xdt_daemon_wait_log(d, "identity 'spiffe://example.org/ns/prod/sa/frontend' may not speak for node id 'web-1' cluster 'dev-web'", 100));
	ck_assert(xdt_daemon_wait_log(d, "identity 'envoy-cn' may not speak for", 100));
	{
		/* one refused client is one line above debug level: the
		 * warning that says why, not also the stream's info line */
		char *log = xdt_daemon_log(d), *line, *save = NULL;
		int warned = 0;

		for (line = strtok_r(log, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save)) {
			if (strstr(line, "may not speak for") == NULL)
				continue;
			ck_assert_msg(strstr(line, " info: ") == NULL,
				      "a refusal logged twice: %s", line);
			warned += strstr(line, " warn: ") != NULL;
		}
		ck_assert_int_ge(warned, 2);
		free(log);
	}
	stop(d);
	free(tdir);
	free(dir);
}
END_TEST

/* What a new connection is served: the number of clusters, and the
 * server's common name in *cn. */
static int served(const struct xdt_daemon *d, char **cn)
{
	struct xdc_conn *c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
					     xdtest_cert("frontend.pem"),
					     xdtest_cert("frontend.key"));
	struct xdc_stream *s = xdc_watch_clusters(c, "probe", "prod");
	int n = xdc_next_clusters(s, WAIT_MS, NULL);

	ck_assert(n >= 0);
	*cn = xdc_server_property(s, "x509_common_name");
	ck_assert(*cn != NULL);
	xdc_stream_free(s);
	xdc_conn_free(c);
	return n;
}

/* A new connection is handed the certificate whose name is `want`. */
static void cert_in_use(const struct xdt_daemon *d, const char *want)
{
	char *cn;

	served(d, &cn);
	ck_assert_str_eq(cn, want);
	free(cn);
}

/* A new connection is served `n` clusters over the certificate `want`. */
static void served_over(const struct xdt_daemon *d, int n, const char *want)
{
	char *cn;

	ck_assert_int_eq(served(d, &cn), n);
	ck_assert_str_eq(cn, want);
	free(cn);
}

/* A stream from the frontend's connection (in *c), served the one
 * cluster the tests start with. */
static struct xdc_stream *long_lived(const struct xdt_daemon *d,
				     struct xdc_conn **c)
{
	struct xdc_stream *s;

	*c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
			     xdtest_cert("frontend.pem"), xdtest_cert("frontend.key"));
	s = xdc_watch_clusters(*c, "long-lived", "prod");
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 1);
	return s;
}

/* The end of a test with one long-lived stream. */
static void done(struct xdt_daemon *d, struct xdc_conn *c,
		 struct xdc_stream *s, char *tdir, char *dir)
{
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(tdir);
	free(dir);
}

/*
 * SIGHUP re-reads the certificate: new handshakes get the new one, an
 * established stream goes on (and follows the snapshot reloaded with
 * it). A bad new certificate (expired) is refused with the reason, and
 * the previous one stays in use.
 */
START_TEST(sighup_replaces_the_certificate_without_dropping_streams)
{
	char *dir = xdtest_clusters_snapdir(1), *tdir;
	struct xdt_daemon *d = start_tls(dir, "server", true, NULL, &tdir);
	struct xdc_conn *c;
	struct xdc_stream *s = long_lived(d, &c);

	cert_in_use(d, "xdsd server one");

	xdtest_install_server_cert(tdir, "server2");
	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n"
			       "- {name: c-0, type: STATIC, connect_timeout: 1s}\n"
			       "- {name: c-1, type: STATIC, connect_timeout: 1s}\n"));
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "info: TLS reloaded: certificate /CN=xdsd server two", WAIT_MS));
	/* the old stream lives on and gets the new snapshot */
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 2);
	cert_in_use(d, "xdsd server two");

	xdtest_install_server_cert(tdir, "server-expired");
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "the certificate expired on Jan  2 00:00:00 2020 GMT", WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "TLS reload failed: still using the previous certificate (certificate /CN=xdsd server two", WAIT_MS));
	cert_in_use(d, "xdsd server two");
	ck_assert_int_eq(xdc_next_clusters(s, 300, NULL), -1); /* nothing new, still open */
	done(d, c, s, tdir, dir);
}
END_TEST

/* ---------------- one reload: certificates with the snapshots ---------------- */

/* `name` of the test certificates as server.key alone, by rename: the
 * certificate in place no longer matches its key. */
static void install_key(const char *tdir, const char *name)
{
	char src[64], tmp[600], dst[600], *text;

	snprintf(src, sizeof(src), "%s.key", name);
	text = xdtest_read_file(xdtest_cert(src), NULL);
	ck_assert(text != NULL);
	free(xdtest_write_file(tdir, "new", text));
	free(text);
	snprintf(tmp, sizeof(tmp), "%s/new", tdir);
	snprintf(dst, sizeof(dst), "%s/server.key", tdir);
	ck_assert(rename(tmp, dst) == 0);
}

/* The newest record of /status.json's reload history. */
static json_t *last_reload(const struct xdt_daemon *d)
{
	int status;
	json_t *doc = xdt_admin_json(d, "GET", "/status.json", &status), *rec;

	ck_assert_int_eq(status, 200);
	rec = json_array_get(json_object_get(json_object_get(doc, "reloads"),
					     "history"), 0);
	ck_assert_ptr_nonnull(rec);
	json_incref(rec);
	json_decref(doc);
	return rec;
}

/* A reload record that failed, from `trigger`, with an error holding
 * `why` (the file and the reason). */
static void record_failed(json_t *rec, const char *trigger, const char *why)
{
	json_t *errors = json_object_get(rec, "errors");
	bool found = false;
	char *text = json_dumps(rec, 0);

	ck_assert_msg(json_is_false(json_object_get(rec, "ok")), "not failed: %s", text);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "trigger")), trigger);
	ck_assert(json_integer_value(json_object_get(rec, "error_count")) >= 1);
	for (size_t i = 0; i < json_array_size(errors); i++)
		found |= strstr(json_string_value(json_array_get(errors, i)), why) != NULL;
	ck_assert_msg(found, "no error with '%s' in %s", why, text);
	free(text);
}

/* The `n`th failed reload, from `trigger`, failed on `why`: counted,
 * the last one unsuccessful, in /status.json's history. */
static void reload_failed(const struct xdt_daemon *d, int n, const char *trigger,
			  const char *why)
{
	json_t *rec = last_reload(d);

	record_failed(rec, trigger, why);
	json_decref(rec);
	ck_assert(xdt_daemon_metric(d, "xdsd_reloads_total{result=\"error\"}") == n);
	ck_assert(xdt_daemon_metric(d, "xdsd_last_reload_successful") == 0);
}

/* `xdsctl reload`'s exit status. */
static int xdsctl_reload(const struct xdt_daemon *d)
{
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd), "'%s' --admin 127.0.0.1:%d reload >/dev/null 2>&1",
		 xdtest_env("XDSCTL"), d->admin_port);
	rc = system(cmd);
	ck_assert(WIFEXITED(rc));
	return WEXITSTATUS(rc);
}

/*
 * POST /reload re-reads the certificate as SIGHUP does: a new
 * connection is handed the new one, and the answer says ok.
 */
START_TEST(post_reload_rotates_the_certificate)
{
	char *dir = xdtest_clusters_snapdir(1), *tdir;
	struct xdt_daemon *d = start_tls(dir, "server", false, NULL, &tdir);
	json_t *rec;
	int status;

	cert_in_use(d, "xdsd server one");
	xdtest_install_server_cert(tdir, "server2");
	rec = xdt_admin_json(d, "POST", "/reload", &status);
	ck_assert_int_eq(status, 200);
	ck_assert(json_is_true(json_object_get(rec, "ok")));
	json_decref(rec);
	cert_in_use(d, "xdsd server two");
	ck_assert(xdt_daemon_wait_log(d, "info: TLS reloaded: certificate /CN=xdsd server two", WAIT_MS));
	ck_assert(xdt_daemon_metric(d, "xdsd_last_reload_successful") == 1);
	stop(d);
	free(tdir);
	free(dir);
}
END_TEST

/*
 * A reload is one unit: a certificate that does not match its key fails
 * the reload asked by POST /reload, by xdsctl and by SIGHUP alike (the
 * answer, /metrics, /status.json, the exit status, the log line naming
 * the file and why), and nothing of it goes into use, neither the
 * certificate nor the snapshot changed with it. Fixed, both go in.
 */
START_TEST(bad_certificate_fails_the_whole_reload)
{
	static const char why[] = "server.key: the key does not belong to the first certificate";
	char *dir = xdtest_clusters_snapdir(1), *tdir, line[2048];
	struct xdt_daemon *d = start_tls(dir, "server", false, NULL, &tdir);
	struct xdc_conn *c;
	struct xdc_stream *s = long_lived(d, &c);
	json_t *rec;
	int status;

	install_key(tdir, "server2");
	xdtest_write_clusters(dir, "default.yaml", "c", 2);

	rec = xdt_admin_json(d, "POST", "/reload", &status);
	ck_assert_int_eq(status, 422);
	record_failed(rec, "admin", why);
	json_decref(rec);
	reload_failed(d, 1, "admin", why);
	/* one line says it all: the file, why, and that nothing changed */
	snprintf(line, sizeof(line), "reload failed: TLS: %s/%s of %s/server.pem: install the key of that "
		 "certificate, or the certificate of this key, and reload; a pair being replaced one file at a "
		 "time is refused like this by a reload in between, and taken by the next; "
		 "still serving the previous snapshots and certificate", tdir, why, tdir);
	ck_assert_msg(xdt_daemon_wait_log(d, line, WAIT_MS), "no '%s' in the log", line);

	ck_assert_int_eq(xdsctl_reload(d), 1);
	reload_failed(d, 2, "admin", why);

	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, "reload failed: TLS: ", 3, WAIT_MS));
	reload_failed(d, 3, "SIGHUP", why);

	/* nothing went into use: the old certificate, the old snapshot */
	ck_assert_int_eq(xdc_next_clusters(s, 300, NULL), -1);
	served_over(d, 1, "xdsd server one");

	/* the matching certificate: both go into use together */
	xdtest_install_server_cert(tdir, "server2");
	ck_assert_int_eq(xdsctl_reload(d), 0);
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 2);
	served_over(d, 2, "xdsd server two");
	ck_assert(xdt_daemon_metric(d, "xdsd_last_reload_successful") == 1);
	ck_assert(xdt_daemon_metric(d, "xdsd_reloads_total{result=\"error\"}") == 3);
	done(d, c, s, tdir, dir);
}
END_TEST

/*
 * `watch: true` reloads the certificate with the snapshots, and when the
 * certificate alone changes; a broken one written in place is a failed
 * reload, and the certificate in use stays.
 */
START_TEST(watch_rotates_the_certificate)
{
	char *dir = xdtest_clusters_snapdir(1), *tdir, line[1024];
	struct xdt_daemon *d = start_tls(dir, "server", false,
					 "watch: true\nwatch_delay: 100ms", &tdir);
	struct xdc_conn *c;
	struct xdc_stream *s = long_lived(d, &c);


	/* a snapshot change and a new certificate */
	xdtest_install_server_cert(tdir, "server2");
	xdtest_write_clusters(dir, "default.yaml", "c", 2);
	ck_assert(xdt_daemon_wait_log(d, "info: TLS reloaded: certificate /CN=xdsd server two", WAIT_MS));
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 2);
	served_over(d, 2, "xdsd server two");

	/* the certificate alone */
	xdtest_install_server_cert(tdir, "server-soon");
	ck_assert(xdt_daemon_wait_log(d, "info: TLS reloaded: certificate /CN=xdsd server soon", WAIT_MS));
	cert_in_use(d, "xdsd server soon");

	snprintf(line, sizeof(line), "info: watching %s/server.pem too", tdir);
	ck_assert_msg(xdt_daemon_wait_log(d, line, WAIT_MS), "no '%s' in the log", line);

	/* a broken one, written in place */
	free(xdtest_write_file(tdir, "server.pem", "not a certificate\n"));
	ck_assert(xdt_daemon_wait_log(d, "reload failed: TLS: ", WAIT_MS));
	reload_failed(d, 1, "watch", "server.pem: not a PEM certificate chain");
	cert_in_use(d, "xdsd server soon");
	done(d, c, s, tdir, dir);
}
END_TEST

/* Bad TLS files stop xdsd at start, and --check says why. */
START_TEST(bad_tls_files_refused_at_start_and_by_check)
{
	static const struct {
		const char *pem, *key, *why;
	} cases[] = {
		{"server-expired.pem", "server-expired.key", "the certificate expired on"},
		{"server.pem", "server2.key", "the key does not belong to the first certificate"},
		{"server.key", "server.key", "not a PEM certificate chain"},
		{"server.pem", "server.pem", "not a PEM private key"},
		{"missing.pem", "server.key", "cannot read the certificate chain"},
	};
	char *dir = xdtest_clusters_snapdir(1);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cfg[2048], *out = NULL, *err = NULL, *log;
		char *path = NULL;
		const char *args[8];
		struct xdt_daemon *d;

		snprintf(cfg, sizeof(cfg),
			 "listen: 127.0.0.1:0\nsnapshots: %s\ntls:\n  cert: %s\n  key: %s\n",
			 dir, xdtest_cert(cases[i].pem), xdtest_cert(cases[i].key));
		d = xdt_daemon_spawn(cfg, NULL);
		ck_assert(xdt_daemon_wait(d, START_MS));
		ck_assert_int_eq(d->exit_status, 1);
		log = xdt_daemon_log(d);
		ck_assert_msg(strstr(log, cases[i].why) != NULL, "case %zu: no '%s' in:\n%s",
			      i, cases[i].why, log);
		ck_assert_ptr_nonnull(strstr(log, "cannot use the TLS files; not starting"));
		ck_assert_ptr_null(strstr(log, "listening on"));
		free(log);
		path = xdtest_write_file(xdtest_tmpdir(), "check.yaml", cfg);
		args[0] = "--check";
		args[1] = "-c";
		args[2] = path;
		args[3] = "--schema";
		args[4] = xdtest_env("XDSD_SCHEMA");
		args[5] = NULL;
		ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 1);
		ck_assert_msg(strstr(err, cases[i].why) != NULL, "--check: no '%s' in:\n%s",
			      cases[i].why, err);
		free(out);
		free(err);
		free(path);
		xdt_daemon_free(d);
	}
	free(dir);
}
END_TEST

/* TLS on a unix socket as well. */
START_TEST(tls_on_a_unix_socket)
{
	char *dir = xdtest_clusters_snapdir(3), cfg[2048], target[512];
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	snprintf(target, sizeof(target), "unix:%s/xds.%d.sock", xdtest_tmpdir(),
		 (int)getpid());
	snprintf(cfg, sizeof(cfg),
		 "listen: %s\nsnapshots: %s\ntls:\n  cert: %s\n  key: %s\n  client_ca: %s\n",
		 target, dir, xdtest_cert("server.pem"), xdtest_cert("server.key"),
		 xdtest_cert("ca.pem"));
	d = xdt_daemon_spawn(cfg, NULL);
	ck_assert(xdt_daemon_wait_log(d, "listening on unix:", START_MS));
	c = xdc_connect_tls(target, xdtest_cert("ca.pem"), xdtest_cert("frontend.pem"),
			    xdtest_cert("frontend.key"));
	s = xdc_watch_clusters(c, "n1", "prod");
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 3);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/*
 * The smallest buffers xdsd allows still carry the largest messages: a
 * 4 MB CDS response sealed in 1 KiB TLS records (tls.frame_size), to a
 * client whose connection xdsd reads 256 bytes at a time at first
 * (read_chunk_size), arrives whole.
 */
START_TEST(large_response_over_small_frames)
{
	enum { CLUSTERS = 45000 };
	char *dir, *cmd, cfg[2048], *version = NULL;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	ck_assert(asprintf(&dir, "%s/large.%d", xdtest_tmpdir(), (int)getpid()) > 0);
	ck_assert(mkdir(dir, 0755) == 0);
	ck_assert(asprintf(&cmd, "'%s/bench/gen-snapshot' --clusters %d -o '%s/default.yaml'",
			   xdtest_env("XDSD_SRCDIR"), CLUSTERS, dir) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nread_chunk_size: 256\n"
		 "tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n  frame_size: 1KiB\n",
		 dir, xdtest_cert("server.pem"), xdtest_cert("server.key"),
		 xdtest_cert("ca.pem"));
	d = xdt_daemon_start(cfg, NULL, 60000);
	c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"), xdtest_cert("frontend.pem"),
			    xdtest_cert("frontend.key"));
	s = xdc_watch_clusters(c, "n1", "prod");
	ck_assert_int_eq(xdc_next_clusters(s, 30000, &version), CLUSTERS);
	ck_assert_ptr_nonnull(version);
	free(version);
	xdc_stream_free(s);
	xdc_conn_free(c);
	/* freeing 45,000 clusters takes its time under the sanitizers */
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, 60000));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("tls");

	xdtest_make_certs();

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tls_serves_tls_clients_only);
	tcase_add_test(tc, mtls_requires_a_valid_client_certificate);
	tcase_add_test(tc, authorize_rules_decide_who_speaks_for_a_node);
	tcase_add_test(tc, sighup_replaces_the_certificate_without_dropping_streams);
	tcase_add_test(tc, post_reload_rotates_the_certificate);
	tcase_add_test(tc, bad_certificate_fails_the_whole_reload);
	tcase_add_test(tc, watch_rotates_the_certificate);
	tcase_add_test(tc, bad_tls_files_refused_at_start_and_by_check);
	tcase_add_test(tc, tls_on_a_unix_socket);
	tcase_add_test(tc, large_response_over_small_frames);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
