/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's life, end to end: the real xdsd binary, real gRPC
 * streams over loopback, real signals.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000

/*
 * Opens an ADS stream and asks for every cluster, so the stream is live.
 * The daemons here serve the tree's example snapshot (snapshots/).
 */
static struct xdc_stream *open_ads(struct xdc_conn *c)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	struct xdc_stream *s = xdc_open(c, XDC_ADS);

	node.id = "lifecycle-test";
	node.cluster = "test";
	req.node = &node;
	req.type_url = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
	ck_assert(xdc_send_sotw(s, &req, 5000));
	return s;
}

/* The one response a wildcard CDS request gets, then nothing more. */
static void expect_one_response(struct xdc_stream *s)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(s, 5000);
	uint8_t *data;
	size_t len;

	ck_assert_msg(r != NULL, "no CDS response");
	ck_assert_str_eq(r->type_url,
			 "type.googleapis.com/envoy.config.cluster.v3.Cluster");
	ck_assert_uint_eq(r->n_resources, 1);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	ck_assert_int_eq(xdc_recv(s, &data, &len, 300), -1);
}

START_TEST(version_and_help)
{
	const char *v[] = {"--version", NULL};
	const char *h[] = {"--help", NULL};
	const char *bad[] = {"--bogus", NULL};
	const char *extra[] = {"stray", NULL};
	char *out, *err;

	ck_assert_int_eq(xdt_run_xdsd(v, &out, &err), 0);
	ck_assert_msg(strncmp(out, "xdsd " PACKAGE_VERSION "\n",
			      strlen("xdsd " PACKAGE_VERSION "\n")) == 0, "%s", out);
	/* the compiled-in defaults, and the build tree's that this
	 * binary, run from there, uses */
	ck_assert_ptr_nonnull(strstr(out, "\ninstalled defaults:\n  configuration file  /"));
	ck_assert_ptr_nonnull(strstr(out, "/xdsd/xdsd.yaml\n  snapshot directory  /"));
	ck_assert_ptr_nonnull(strstr(out, "/xdsd/snapshots\n  schema file         /"));
	ck_assert_ptr_nonnull(strstr(out, "/xdsd/xds-api.pb\nrun from its build tree "));
	ck_assert_ptr_nonnull(strstr(out, "/proto/xds-api.pb\n"));
	free(out);
	free(err);
	ck_assert_int_eq(xdt_run_xdsd(h, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: xdsd"));
	ck_assert_ptr_nonnull(strstr(out, "--check"));
	free(out);
	free(err);
	ck_assert_int_eq(xdt_run_xdsd(bad, &out, &err), 2);
	ck_assert_ptr_nonnull(strstr(err, "try 'xdsd --help'"));
	free(out);
	free(err);
	ck_assert_int_eq(xdt_run_xdsd(extra, &out, &err), 2);
	ck_assert_ptr_nonnull(strstr(err, "unexpected argument 'stray'"));
	free(out);
	free(err);
}
END_TEST

START_TEST(check_valid_config)
{
	char *cfg = xdtest_write_file(xdtest_tmpdir(), "ok.yaml",
				      "listen: 0.0.0.0:18001\n");
	const char *args[] = {"--check", "-c", cfg, NULL};
	char *out, *err;

	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "valid"));
	ck_assert_ptr_nonnull(strstr(out, "listen: '0.0.0.0:18001'"));
	free(out);
	free(err);
	free(cfg);
}
END_TEST

/* An `etcd:` section while `source: files` is valid, and most likely
 * not what was meant: --check and the daemon's start warn of it, with
 * where it is. */
START_TEST(ignored_etcd_section_warned)
{
	char *dir = xdtest_clusters_snapdir(1), text[1024], *cfg, *out, *err;
	const char *args[] = {"--check", "-c", NULL, "--snapshots", dir, NULL};
	static const char warning[] = "ok.yaml:2:1: 'etcd' is ignored: 'source' is 'files', so snapshots are read from ";
	struct xdt_daemon *d;

	snprintf(text, sizeof(text), "listen: 127.0.0.1:0\netcd:\n  endpoints: ['127.0.0.1:2379']\nsnapshots: %s\n",
		 dir);
	cfg = xdtest_write_file(xdtest_tmpdir(), "ok.yaml", text);
	args[2] = cfg;
	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 0);
	ck_assert_msg(strstr(err, "warning: ") == err && strstr(err, warning) != NULL &&
			      strstr(err, dir) != NULL,
		      "--check: %s", err);
	ck_assert_ptr_nonnull(strstr(out, "valid"));
	free(out);
	free(err);

	d = xdt_daemon_start(text, NULL, START_MS);
	ck_assert(xdt_daemon_wait_log(d, "'etcd' is ignored: 'source' is 'files'", 1));
	xdt_daemon_stop(d, 5000);

	/* with `source: etcd` it is read: no warning */
	snprintf(text, sizeof(text), "source: etcd\netcd:\n  endpoints: ['127.0.0.1:2379']\n");
	free(xdtest_write_file(xdtest_tmpdir(), "ok.yaml", text));
	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 0);
	ck_assert_msg(strstr(err, "warning") == NULL, "--check: %s", err);
	free(out);
	free(err);
	free(cfg);
	free(dir);
}
END_TEST

/* A site's settings in conf.d/ beside the configuration: read after it,
 * each replacing what the file set (here a rest_listen the file spells
 * out, which appended to the file would be set twice), by the daemon
 * and by --check alike, and both say which files they read. */
START_TEST(confd_settings_over_the_file)
{
	char *dir = xdtest_snapdir(), *confd, *cfg, *site, *out, *err;
	char *snaps = xdtest_clusters_snapdir(1), text[1024], then[1024];
	const char *check_args[] = {"--check", "-c", NULL, NULL};
	const char *run_args[] = {"-c", NULL, NULL};
	struct xdt_daemon *d;

	snprintf(text, sizeof(text),
		 "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nrest_listen: off\n"
		 "log_level: info\nsnapshots: %s\n", snaps);
	cfg = xdtest_write_file(dir, "xdsd.yaml", text);
	ck_assert(asprintf(&confd, "%s/conf.d", dir) > 0);
	ck_assert(mkdir(confd, 0755) == 0);
	site = xdtest_write_file(confd, "50-site.yaml",
				 "rest_listen: 127.0.0.1:0\nlog_level: debug\n");
	free(xdtest_write_file(confd, "50-site.yaml.dpkg-old", "listen: nowhere\n"));
	snprintf(then, sizeof(then), "then %s", site);

	check_args[2] = cfg;
	ck_assert_int_eq(xdt_run_xdsd(check_args, &out, &err), 0);
	ck_assert_msg(strstr(out, then) != NULL, "--check: %s", out);
	ck_assert_msg(strstr(out, "\nrest_listen: '127.0.0.1:0'") != NULL &&
			      strstr(out, "\nlog_level: debug") != NULL,
		      "--check: %s", out);
	free(out);
	free(err);

	run_args[1] = cfg;
	d = xdt_daemon_start(NULL, run_args, START_MS);
	ck_assert_msg(xdt_daemon_wait_log(d, then, 1), "the log does not say %s", then);
	ck_assert_msg(d->rest_port > 0, "no REST-JSON endpoint: conf.d's rest_listen was not used");
	ck_assert(xdt_daemon_wait_log(d, "debug: ", 1));
	xdt_daemon_stop(d, 5000);
	free(site);
	free(confd);
	free(cfg);
	free(snaps);
	free(dir);
}
END_TEST

/* With `source: etcd`, --check --snapshots DIR checks DIR (the
 * directory about to be pushed), as xdsctl push does: a broken one
 * fails with its errors; a good one passes and is described. Without
 * --snapshots, nothing is read and it says so. */
START_TEST(check_etcd_config_checks_the_directory_given)
{
	char *good = xdtest_clusters_snapdir(1), *bad = xdtest_snapdir();
	char *cfg = xdtest_write_file(xdtest_tmpdir(), "etcd.yaml",
				      "source: etcd\netcd:\n  endpoints: ['127.0.0.1:2379']\n");
	const char *args[] = {"--check", "-c", cfg, "--snapshots", bad, NULL};
	const char *none[] = {"--check", "-c", cfg, NULL};
	char *out, *err;

	free(xdtest_write_file(bad, "default.yaml",
			       "clusters:\n- {name: x, type: BOGUS}\n"));
	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 1);
	ck_assert_msg(strstr(err, "default.yaml:2:") != NULL &&
			      strstr(err, "1 error in the snapshots") != NULL,
		      "--check: %s", err);
	ck_assert_msg(strstr(out, "valid") == NULL, "--check: %s", out);
	free(out);
	free(err);

	args[4] = good;
	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 0);
	ck_assert_msg(strstr(out, "# snapshot 'default': clusters 1") != NULL,
		      "--check: %s", out);
	free(out);
	free(err);

	ck_assert_int_eq(xdt_run_xdsd(none, &out, &err), 0);
	ck_assert_msg(strstr(out, "not read by --check; --snapshots DIR checks a directory") != NULL,
		      "--check: %s", out);
	free(out);
	free(err);
	free(cfg);
	free(good);
	free(bad);
}
END_TEST

START_TEST(check_invalid_config)
{
	char *cfg = xdtest_write_file(xdtest_tmpdir(), "bad.yaml",
				      "listen: 1.2.3.4\nnope: 1\n");
	const char *args[] = {"--check", "-c", cfg, NULL};
	const char *over[] = {"--check", "-c", cfg, "--listen", "x", NULL};
	char *out, *err;

	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 1);
	ck_assert_ptr_nonnull(strstr(err, "bad.yaml:1:9: 'listen': bad value"));
	ck_assert_ptr_nonnull(strstr(err, "bad.yaml:2:1: unknown directive 'nope'"));
	ck_assert_ptr_nonnull(strstr(err, "2 errors in the configuration"));
	free(out);
	free(err);
	ck_assert_int_eq(xdt_run_xdsd(over, &out, &err), 1);
	ck_assert_ptr_nonnull(strstr(err, "--listen: 'listen': bad value 'x'"));
	free(out);
	free(err);
	free(cfg);
}
END_TEST

/*
 * --check that fails says so only: nothing on standard output (no
 * "valid", no effective configuration), the errors on standard error.
 * Broken snapshots under a good configuration file; a broken
 * configuration file; a good file naming TLS files or a schema that
 * cannot be used.
 */
START_TEST(check_failure_prints_no_configuration)
{
	char *dir = xdtest_snapdir(), text[2048], *cfg;
	const char *args[] = {"--check", "-c", NULL, "--schema",
			      xdtest_env("XDSD_SCHEMA"), NULL};
	static const struct {
		const char *file, *snapshot, *why;
	} cases[] = {
		{"", "clusters:\n- {name: a, type: STATIC, connect_timeout: 1s}\nbogus: 1\n",
		 "1 error in the snapshots"},
		{"", "clusters:\n- {name: a, type: EDS, connect_timeout: 1s}\n",
		 "1 error in the snapshots"},
		{"nope: 1\n", "{}\n", "1 error in the configuration"},
		{"tls:\n  cert: /nonexistent/cert.pem\n  key: /nonexistent/key.pem\n",
		 "{}\n", "the TLS files cannot be used"},
		{"schema: /nonexistent/xds-api.pb\n", "{}\n",
		 "cannot load the Envoy API schema"},
	};
	char *out, *err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		free(xdtest_write_file(dir, "default.yaml", cases[i].snapshot));
		snprintf(text, sizeof(text), "listen: 127.0.0.1:0\nsnapshots: %s\n%s",
			 dir, cases[i].file);
		cfg = xdtest_write_file(xdtest_tmpdir(), "bad1.yaml", text);
		args[2] = cfg;
		/* the schema case must not be overridden back to a good one */
		args[3] = strstr(cases[i].file, "schema:") ? NULL : "--schema";
		ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 1);
		ck_assert_msg(strcmp(out, "") == 0, "case %zu: stdout:\n%s\nstderr:\n%s",
			      i, out, err);
		ck_assert_msg(strstr(err, cases[i].why) != NULL, "case %zu: no '%s' in:\n%s",
			      i, cases[i].why, err);
		free(out);
		free(err);
		free(cfg);
	}
	/* and the same directory, repaired, passes with the configuration */
	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n- {name: a, type: STATIC, connect_timeout: 1s}\n"));
	snprintf(text, sizeof(text), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	cfg = xdtest_write_file(xdtest_tmpdir(), "good.yaml", text);
	args[2] = cfg;
	args[3] = "--schema";
	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 0);
	ck_assert_msg(strstr(out, "good.yaml: valid; effective configuration:\n") != NULL,
		      "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "# snapshot 'default': "));
	free(out);
	free(err);
	free(cfg);
	free(dir);
}
END_TEST

START_TEST(missing_config_is_an_error)
{
	const char *args[] = {"-c", "/nonexistent/xdsd.yaml", NULL};
	char *out, *err;

	ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/xdsd.yaml: cannot read the configuration: No such file or directory"));
	free(out);
	free(err);
}
END_TEST

/*
 * A FIFO, a directory or a device as the configuration, or as the
 * schema: xdsd (and --check) exits 1 at once saying what the path is;
 * it never opens it (a FIFO would hold it until something wrote).
 */
START_TEST(config_or_schema_not_a_regular_file)
{
	char fifo[512], dir[512], *good, *out, *err;
	const struct {
		const char *path, *kind;
	} paths[] = {
		{fifo, "a FIFO"},
		{dir, "a directory"},
		{"/dev/zero", "a character device"},
	};

	snprintf(fifo, sizeof(fifo), "%s/fifo.%d", xdtest_tmpdir(), (int)getpid());
	snprintf(dir, sizeof(dir), "%s/dir.%d", xdtest_tmpdir(), (int)getpid());
	ck_assert(mkfifo(fifo, 0600) == 0);
	ck_assert(mkdir(dir, 0700) == 0);
	good = xdtest_write_file(xdtest_tmpdir(), "good.yaml",
				 "listen: 127.0.0.1:0\nadmin_listen: off\n");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char want[700];
		const char *as_config[] = {"-c", paths[i].path, NULL};
		const char *check[] = {"--check", "-c", paths[i].path, NULL};
		const char *as_schema[] = {"-c", good, "--schema", paths[i].path, NULL};

		snprintf(want, sizeof(want), "%s: the configuration is %s; it must be a regular file",
			 paths[i].path, paths[i].kind);
		ck_assert_int_eq(xdt_run_xdsd(as_config, &out, &err), 1);
		ck_assert_msg(strstr(err, want) != NULL, "no '%s' in:\n%s", want, err);
		free(out);
		free(err);
		ck_assert_int_eq(xdt_run_xdsd(check, &out, &err), 1);
		ck_assert_msg(strstr(err, want) != NULL, "--check: no '%s' in:\n%s", want, err);
		free(out);
		free(err);
		snprintf(want, sizeof(want), "%s: the schema is %s; it must be a regular file",
			 paths[i].path, paths[i].kind);
		ck_assert_int_eq(xdt_run_xdsd(as_schema, &out, &err), 1);
		ck_assert_msg(strstr(err, want) != NULL, "no '%s' in:\n%s", want, err);
		ck_assert_ptr_null(strstr(err, "listening on"));
		free(out);
		free(err);
	}
	unlink(fifo);
	rmdir(dir);
	free(good);
}
END_TEST

/* SIGTERM with live streams: every call cancelled, clean exit 0. */
static void stop_with_streams(int sig)
{
	struct xdt_daemon *d = xdt_daemon_start(NULL, NULL, START_MS);
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = open_ads(c);
	grpc_status_code code;
	char *details, *log;

	/* The stream stays open while the daemon runs. */
	expect_one_response(s);

	xdt_daemon_signal(d, sig);
	ck_assert_msg(xdc_drain_status(s, &code, &details, STOP_MS),
		      "stream not ended by shutdown");
	ck_assert_int_eq(code, GRPC_STATUS_UNAVAILABLE);
	free(details);
	ck_assert_msg(xdt_daemon_wait(d, STOP_MS), "xdsd did not exit");
	ck_assert_int_eq(d->exit_status, 0);
	log = xdt_daemon_log(d);
	ck_assert_ptr_nonnull(strstr(log, "shutting down: 1 streams to cancel"));
	ck_assert_ptr_nonnull(strstr(log, "info: stopped"));
	free(log);
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_free(d);
}

START_TEST(sigterm_with_live_stream)
{
	stop_with_streams(SIGTERM);
}
END_TEST

START_TEST(sigint_with_live_stream)
{
	stop_with_streams(SIGINT);
}
END_TEST

/* Many clients, each on its own connection as Envoy does. Shutdown
 * cancels; it does not wait for clients to leave: they keep their
 * connections open until the daemon is gone. */
START_TEST(sigterm_with_many_connections)
{
	enum { CONNS = 20, PER = 3 };
	struct xdt_daemon *d = xdt_daemon_start(NULL, NULL, START_MS);
	struct xdc_conn *c[CONNS];
	struct xdc_stream *s[CONNS][PER];

	for (int i = 0; i < CONNS; i++) {
		c[i] = xdc_connect(d->target);
		for (int j = 0; j < PER; j++)
			s[i][j] = open_ads(c[i]);
	}
	/* Live streams: each answered. (A stream the server never saw is
	 * retried by gRPC on a new connection, which is another test.) */
	for (int i = 0; i < CONNS; i++)
		for (int j = 0; j < PER; j++)
			expect_one_response(s[i][j]);
	xdt_daemon_signal(d, SIGTERM);
	for (int i = 0; i < CONNS; i++) {
		for (int j = 0; j < PER; j++) {
			grpc_status_code code;

			ck_assert(xdc_drain_status(s[i][j], &code, NULL, STOP_MS));
			ck_assert_int_eq(code, GRPC_STATUS_UNAVAILABLE);
			xdc_stream_free(s[i][j]);
		}
	}
	ck_assert_msg(xdt_daemon_wait(d, STOP_MS),
		      "xdsd did not exit while its clients stayed connected");
	ck_assert_int_eq(d->exit_status, 0);
	for (int i = 0; i < CONNS; i++)
		xdc_conn_free(c[i]);
	xdt_daemon_free(d);
}
END_TEST

START_TEST(sighup_requests_reload_and_keeps_serving)
{
	struct xdt_daemon *d = xdt_daemon_start(NULL, NULL, START_MS);
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = open_ads(c), *s2;

	expect_one_response(s);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "SIGHUP: reloading", 2000));
	/* nothing changed, so the stream gets nothing new */
	ck_assert(xdt_daemon_wait_log(d, "s: 0 changed", 5000));
	/* the old stream lives on and a new one opens */
	expect_one_response(s2 = open_ads(c));
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdc_stream_free(s);
	xdc_stream_free(s2);
	xdc_conn_free(c);
	xdt_daemon_free(d);
}
END_TEST

START_TEST(unknown_method_unimplemented)
{
	struct xdt_daemon *d = xdt_daemon_start(NULL, NULL, START_MS);
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_open(c, "/no.such.Service/Method");
	grpc_status_code code;
	char *details;

	ck_assert(xdc_send(s, "x", 1, 5000) || true);
	ck_assert(xdc_status(s, &code, &details, 5000));
	ck_assert_int_eq(code, GRPC_STATUS_UNIMPLEMENTED);
	ck_assert_str_eq(details,
			 "xdsd does not serve method /no.such.Service/Method");
	free(details);
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}
END_TEST

/* Every xDS method of rule T2 is served (accepted and kept open). */
START_TEST(every_xds_method_accepted)
{
	static const char *const methods[] = {
		"/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
		"/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources",
		"/envoy.service.listener.v3.ListenerDiscoveryService/StreamListeners",
		"/envoy.service.listener.v3.ListenerDiscoveryService/DeltaListeners",
		"/envoy.service.route.v3.RouteDiscoveryService/StreamRoutes",
		"/envoy.service.route.v3.RouteDiscoveryService/DeltaRoutes",
		"/envoy.service.route.v3.ScopedRoutesDiscoveryService/StreamScopedRoutes",
		"/envoy.service.route.v3.ScopedRoutesDiscoveryService/DeltaScopedRoutes",
		"/envoy.service.route.v3.VirtualHostDiscoveryService/DeltaVirtualHosts",
		"/envoy.service.cluster.v3.ClusterDiscoveryService/StreamClusters",
		"/envoy.service.cluster.v3.ClusterDiscoveryService/DeltaClusters",
		"/envoy.service.endpoint.v3.EndpointDiscoveryService/StreamEndpoints",
		"/envoy.service.endpoint.v3.EndpointDiscoveryService/DeltaEndpoints",
		"/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets",
		"/envoy.service.secret.v3.SecretDiscoveryService/DeltaSecrets",
		"/envoy.service.runtime.v3.RuntimeDiscoveryService/StreamRuntime",
		"/envoy.service.runtime.v3.RuntimeDiscoveryService/DeltaRuntime",
	};
	enum { N = sizeof(methods) / sizeof(methods[0]) };
	struct xdt_daemon *d = xdt_daemon_start("listen: 127.0.0.1:0\nlog_level: debug\n",
						NULL, START_MS);
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s[N];
	grpc_status_code code;

	/* type_url = CDS: field 4 of DiscoveryRequest, field 2 of
	 * DeltaDiscoveryRequest; per-type methods imply their type */
	static const char sotw_ads[] =
		"\x22\x33type.googleapis.com/envoy.config.cluster.v3.Cluster";
	static const char delta_ads[] =
		"\x12\x33type.googleapis.com/envoy.config.cluster.v3.Cluster";

	for (int i = 0; i < N; i++) {
		s[i] = xdc_open(c, methods[i]);
		if (i == 0)
			ck_assert(xdc_send(s[i], sotw_ads, sizeof(sotw_ads) - 1, 5000));
		else if (i == 1)
			ck_assert(xdc_send(s[i], delta_ads, sizeof(delta_ads) - 1, 5000));
		else
			ck_assert(xdc_send(s[i], "", 0, 5000));
	}
	/* every stream stays open: answered or waiting, never ended */
	for (int i = 0; i < N; i++) {
		uint8_t *data;
		size_t len;
		int r;

		while ((r = xdc_recv(s[i], &data, &len, i == 0 ? 300 : 50)) == 1)
			free(data);
		ck_assert_msg(r == -1, "%s ended", methods[i]);
	}
	xdt_daemon_signal(d, SIGTERM);
	for (int i = 0; i < N; i++) {
		ck_assert(xdc_drain_status(s[i], &code, NULL, STOP_MS));
		ck_assert_int_eq(code, GRPC_STATUS_UNAVAILABLE);
		xdc_stream_free(s[i]);
	}
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdc_conn_free(c);
	xdt_daemon_free(d);
}
END_TEST

START_TEST(port_in_use_fails_clearly)
{
	struct xdt_daemon *a = xdt_daemon_start(NULL, NULL, START_MS);
	char cfg[64];
	struct xdt_daemon *b;
	char *log;

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:%d\n", a->port);
	b = xdt_daemon_spawn(cfg, NULL);
	ck_assert_msg(xdt_daemon_wait(b, STOP_MS), "second xdsd kept running");
	ck_assert_int_eq(b->exit_status, 1);
	log = xdt_daemon_log(b);
	ck_assert_msg(strstr(log, "cannot listen on '127.0.0.1:") != NULL &&
		      strstr(log, "Address already in use") != NULL,
		      "log: %s", log);
	free(log);
	xdt_daemon_signal(a, SIGTERM);
	ck_assert(xdt_daemon_wait(a, STOP_MS));
	ck_assert_int_eq(a->exit_status, 0);
	xdt_daemon_free(a);
	xdt_daemon_free(b);
}
END_TEST

/* Ended calls must be released, or each keeps its connection (and fd)
 * alive (docs/grpc-core.md §3.5). */
START_TEST(ended_streams_release_connections)
{
	struct xdt_daemon *d = xdt_daemon_start(NULL, NULL, START_MS);
	int base, peak, after = 0;

	base = xdt_daemon_fd_count(d);
	for (int round = 0; round < 3; round++) {
		struct xdc_conn *c[10];
		struct xdc_stream *s[10];

		for (int i = 0; i < 10; i++) {
			c[i] = xdc_connect(d->target);
			s[i] = open_ads(c[i]);
		}
		peak = xdt_daemon_fd_count(d);
		ck_assert_int_ge(peak, base + 10);
		for (int i = 0; i < 10; i++) {
			xdc_stream_free(s[i]); /* cancels */
			xdc_conn_free(c[i]);
		}
	}
	for (int tries = 0; tries < 200; tries++) {
		after = xdt_daemon_fd_count(d);
		if (after <= base)
			break;
		xdtest_sleep_ms(10);
	}
	ck_assert_int_le(after, base);
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}
END_TEST

/* A client half-close ends the stream with OK. */
START_TEST(client_half_close_gets_ok)
{
	struct xdt_daemon *d = xdt_daemon_start(NULL, NULL, START_MS);
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = open_ads(c);
	grpc_status_code code;

	ck_assert(xdc_close_send(s, 5000));
	ck_assert(xdc_drain_status(s, &code, NULL, 5000));
	ck_assert_int_eq(code, GRPC_STATUS_OK);
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}
END_TEST

/* A request over max_request_size ends its stream, not the daemon. */
START_TEST(oversized_request_refused)
{
	struct xdt_daemon *d = xdt_daemon_start(
		"listen: 127.0.0.1:0\nmax_request_size: 1KiB\n", NULL, START_MS);
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_open(c, XDC_ADS), *ok;
	static char big[4096];
	grpc_status_code code;
	uint8_t *data;
	size_t len;

	memset(big, 'x', sizeof(big));
	xdc_send(s, big, sizeof(big), 5000);
	ck_assert(xdc_status(s, &code, NULL, 5000));
	ck_assert_int_eq(code, GRPC_STATUS_RESOURCE_EXHAUSTED);
	xdc_stream_free(s);
	/* a request under the limit on a new stream is answered: CDS for
	 * one cluster with a 900-byte name (absent, so nothing in it) */
	ok = xdc_open(c, XDC_ADS);
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	char *name = big + 3000;
	big[3900] = '\0';
	req.type_url = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
	req.n_resource_names = 1;
	req.resource_names = &name;
	ck_assert(xdc_send_sotw(ok, &req, 5000));
	ck_assert_int_eq(xdc_recv(ok, &data, &len, 5000), 1);
	free(data);
	xdc_stream_free(ok);
	xdc_conn_free(c);
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}
END_TEST

/* A TCP connection that never speaks HTTP/2; its local port in *port. */
static int silent_connection(const struct xdt_daemon *d, int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert(fd >= 0);
	sa.sin_port = htons((uint16_t)d->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	ck_assert(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static int count_of(const char *log, const char *needle)
{
	int n = 0;

	for (const char *p = log; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

#define NO_HANDSHAKE "closed: no HTTP/2 handshake within handshake_timeout"

/*
 * Connections that gRPC drops (no HTTP/2 handshake in time; a peer that
 * stopped answering keepalive pings) are warnings naming the peer, a
 * few a second: the rest are counted in the next line.
 */
START_TEST(dropped_connections_logged)
{
	enum { SILENT = 8 };
	struct xdt_daemon *d = xdt_daemon_start(
		"listen: 127.0.0.1:0\nhandshake_timeout: 200ms\n"
		"keepalive_time: 1s\nkeepalive_timeout: 1s\n", NULL, START_MS);
	int fds[SILENT + 1], ports[SILENT + 1], logged = 0, ready[2];
	char needle[160], *log;
	pid_t child;

	for (int i = 0; i < SILENT; i++)
		fds[i] = silent_connection(d, &ports[i]);
	ck_assert(xdt_daemon_wait_log_count(d, NO_HANDSHAKE, 5, 5000));
	xdtest_sleep_ms(500);
	log = xdt_daemon_log(d);
	for (int i = 0; i < SILENT; i++) {
		snprintf(needle, sizeof(needle),
			 "warn: connection from ipv4:127.0.0.1:%d " NO_HANDSHAKE "\n",
			 ports[i]);
		logged += count_of(log, needle);
	}
	ck_assert_int_eq(count_of(log, NO_HANDSHAKE), 5);
	ck_assert_int_eq(logged, 5);
	free(log);
	/* the next second: the next drop is logged, with the count */
	xdtest_sleep_ms(1000);
	fds[SILENT] = silent_connection(d, &ports[SILENT]);
	snprintf(needle, sizeof(needle),
		 "warn: connection from ipv4:127.0.0.1:%d " NO_HANDSHAKE
		 " (3 more like it not logged)", ports[SILENT]);
	ck_assert_msg(xdt_daemon_wait_log(d, needle, 5000), "no '%s'", needle);
	for (int i = 0; i <= SILENT; i++)
		close(fds[i]);

	/* A client that stops answering pings (stopped, as a hung host
	 * would be). It runs in a child, whose gRPC the stop freezes. */
	ck_assert(pipe(ready) == 0);
	child = fork();
	ck_assert(child >= 0);
	if (child == 0) {
		struct xdc_conn *c = xdc_connect(d->target);
		struct xdc_stream *s = open_ads(c);

		expect_one_response(s);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	ck_assert(read(ready[0], needle, 1) == 1);
	ck_assert(kill(child, SIGSTOP) == 0);
	ck_assert(xdt_daemon_wait_log(d, "warn: connection from ipv4:127.0.0.1:", 100));
	/* found within keepalive_time + keepalive_timeout (2 s), gRPC's
	 * timer slack (50 ms a timer) and a loaded machine's delays */
	ck_assert(xdt_daemon_wait_log(d, " closed: keepalive ping not answered within keepalive_timeout",
				      4000));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}
END_TEST

#define CONNECTED "client connected, snapshot key 'test'"
#define DISCONNECTED "client disconnected after "
#define NOT_LOGGED " connect and disconnect lines not logged)"

/* What "(N connect and disconnect lines not logged)" add up to. */
static long not_logged(const char *log)
{
	long sum = 0;

	for (const char *p = log; (p = strstr(p, NOT_LOGGED)) != NULL; p++) {
		const char *q = p;

		while (q > log && q[-1] >= '0' && q[-1] <= '9')
			q--;
		ck_assert_msg(q > log && q[-1] == '(', "a count without its '('");
		sum += strtol(q, NULL, 10);
	}
	return sum;
}

/*
 * A client's stream says at info when its node is admitted and when it
 * ends, with the node; a storm of them is rate-limited, and every line
 * left out is counted in the next one written.
 */
START_TEST(clients_connect_and_disconnect_logged)
{
	enum { STORM = 100 };
	struct xdt_daemon *d = xdt_daemon_start(NULL, NULL, START_MS);
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = open_ads(c), *storm[STORM];
	long long deadline;
	char *log;
	int lines;

	expect_one_response(s);
	ck_assert(xdt_daemon_wait_log(d, CONNECTED, 5000));
	ck_assert(xdt_daemon_wait_log(d, "lifecycle-test", 100));
	xdc_stream_free(s);
	ck_assert(xdt_daemon_wait_log(d, DISCONNECTED, 5000));
	for (int i = 0; i < STORM; i++)
		storm[i] = open_ads(c);
	for (int i = 0; i < STORM; i++) {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r =
			xdc_recv_sotw(storm[i], 5000);

		ck_assert(r != NULL);
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	}
	for (int i = 0; i < STORM; i++)
		xdc_stream_free(storm[i]);
	xdc_conn_free(c);
	deadline = xdtest_now_ms() + 10000;
	while (xdt_daemon_metric(d, "xdsd_connections{state=\"streaming\"}") != 0 &&
	       xdtest_now_ms() < deadline)
		xdtest_sleep_ms(20);
	/* a new second: the next line is written, with the count */
	xdtest_sleep_ms(1100);
	c = xdc_connect(d->target);
	s = open_ads(c);
	expect_one_response(s);
	ck_assert(xdt_daemon_wait_log_count(d, NOT_LOGGED, 1, 5000));
	xdtest_sleep_ms(200);
	log = xdt_daemon_log(d);
	lines = count_of(log, CONNECTED) + count_of(log, DISCONNECTED);
	/* 102 streams admitted, 101 ended so far: each told or counted */
	ck_assert_int_eq(lines + not_logged(log), 2 * STORM + 3);
	ck_assert_msg(not_logged(log) > 0, "a storm of %d streams was not rate-limited", STORM);
	free(log);
	xdc_stream_free(s);
	xdc_conn_free(c);
	xdt_daemon_stop(d, STOP_MS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lifecycle");
	TCase *cli = tcase_create("cli");
	TCase *run = tcase_create("run");

	xdtest_tmpdir();
	tcase_set_timeout(cli, 30);
	tcase_add_test(cli, version_and_help);
	tcase_add_test(cli, check_valid_config);
	tcase_add_test(cli, check_invalid_config);
	tcase_add_test(cli, check_etcd_config_checks_the_directory_given);
	tcase_add_test(cli, check_failure_prints_no_configuration);
	tcase_add_test(cli, missing_config_is_an_error);
	tcase_add_test(cli, config_or_schema_not_a_regular_file);
	suite_add_tcase(s, cli);

	tcase_set_timeout(run, 60);
	tcase_add_test(run, ignored_etcd_section_warned);
	tcase_add_test(run, confd_settings_over_the_file);
	tcase_add_test(run, sigterm_with_live_stream);
	tcase_add_test(run, sigint_with_live_stream);
	tcase_add_test(run, sigterm_with_many_connections);
	tcase_add_test(run, sighup_requests_reload_and_keeps_serving);
	tcase_add_test(run, unknown_method_unimplemented);
	tcase_add_test(run, every_xds_method_accepted);
	tcase_add_test(run, port_in_use_fails_clearly);
	tcase_add_test(run, ended_streams_release_connections);
	tcase_add_test(run, client_half_close_gets_ok);
	tcase_add_test(run, oversized_request_refused);
	tcase_add_test(run, dropped_connections_logged);
	tcase_add_test(run, clients_connect_and_disconnect_logged);
	suite_add_tcase(s, run);
	return xdtest_run(s);
}
