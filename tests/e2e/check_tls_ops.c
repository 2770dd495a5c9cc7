/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Operating xdsd with TLS, end to end against the real daemon: refused
 * connections and streams told with who and why, and counted; when the
 * certificates expire (/metrics, /status, xdsctl status, warnings); TLS
 * files that are FIFOs, unreadable, or systemd credentials
 * (${CREDENTIALS_DIRECTORY}); and the README's openssl recipe, run as
 * written, making certificates xdsd and an mTLS client use.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
#define WAIT_MS 5000

/* ---------------- helpers ---------------- */

/* A directory of its own for a test's TLS files, with copies of NAME.pem
 * and NAME.key as server.pem and server.key (NAME NULL: empty). */
static char *tls_dir(const char *name)
{
	static int seq;
	char *dir, file[64], *text;

	ck_assert(asprintf(&dir, "%s/tlsops.%d.%d", xdtest_tmpdir(),
			   (int)getpid(), seq++) > 0);
	ck_assert(mkdir(dir, 0755) == 0);
	for (int i = 0; name != NULL && i < 2; i++) {
		snprintf(file, sizeof(file), "%s.%s", name, i ? "key" : "pem");
		text = xdtest_read_file(xdtest_cert(file), NULL);
		ck_assert(text != NULL);
		free(xdtest_write_file(dir, i ? "server.key" : "server.pem", text));
		free(text);
	}
	return dir;
}

/* A config serving `snaps` over TLS with `cert` and `key` (and client
 * certificates from the test CA when `mtls`), plus `extra` lines. */
static char *tls_config(const char *snaps, const char *cert, const char *key,
			bool mtls, const char *extra)
{
	char *cfg;

	ck_assert(asprintf(&cfg,
			   "listen: 127.0.0.1:0\nsnapshots: %s\n"
			   "tls:\n  cert: %s\n  key: %s\n%s%s%s%s",
			   snaps, cert, key, mtls ? "  client_ca: " : "",
			   mtls ? xdtest_cert("ca.pem") : "", mtls ? "\n" : "",
			   extra ? extra : "") > 0);
	return cfg;
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* The value of the first sample of `name` whose labels hold `labels`
 * (NULL: any; "" : none), or -1. */
static double metric(const struct xdt_daemon *d, const char *name,
		     const char *labels)
{
	int status;
	char *body = xdt_admin(d, "GET", "/metrics", NULL, &status, NULL);
	size_t n = strlen(name);
	double v = -1;

	ck_assert_int_eq(status, 200);
	for (char *line = body; line != NULL && *line != '\0';) {
		char *end = strchr(line, '\n'), *space;

		if (end != NULL)
			*end = '\0';
		space = strrchr(line, ' ');
		if (strncmp(line, name, n) == 0 && space != NULL &&
		    (line[n] == ' ' || line[n] == '{') &&
		    (labels == NULL ||
		     (labels[0] == '\0' ? line[n] == ' ' :
					  strstr(line, labels) != NULL))) {
			v = strtod(space + 1, NULL);
			break;
		}
		line = end != NULL ? end + 1 : NULL;
	}
	free(body);
	return v;
}

/* The end of validity of the first certificate in `path`, Unix s. */
static long long not_after(const char *path)
{
	FILE *f = fopen(path, "r");
	X509 *x;
	struct tm tm;

	ck_assert(f != NULL);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	ck_assert(x != NULL);
	ck_assert(ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1);
	X509_free(x);
	return (long long)timegm(&tm);
}

/* What `cmd` prints on stdout, and its exit status in *status. */
static char *run(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *out = NULL, chunk[4096];
	size_t len = 0, n;
	FILE *o = open_memstream(&out, &len);
	int rc;

	ck_assert(p != NULL && o != NULL);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, o);
	fclose(o);
	rc = pclose(p);
	*status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
	return out;
}

/* Whether the log has a line with both `a` and `b`. */
static bool log_line_with(const struct xdt_daemon *d, const char *a,
			  const char *b)
{
	char *log = xdt_daemon_log(d), *save = NULL;
	bool found = false;

	for (char *l = strtok_r(log, "\n", &save); l != NULL && !found;
	     l = strtok_r(NULL, "\n", &save))
		found = strstr(l, a) != NULL && strstr(l, b) != NULL;
	free(log);
	return found;
}

static bool wait_line_with(const struct xdt_daemon *d, const char *a,
			   const char *b, int ms)
{
	long long deadline = xdtest_now_ms() + ms;

	while (!log_line_with(d, a, b)) {
		if (xdtest_now_ms() > deadline)
			return false;
		xdtest_sleep_ms(20);
	}
	return true;
}

/* A TCP connection to the daemon that says nothing; its own port in
 * *port. */
static int raw_connect(const struct xdt_daemon *d, int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)d->port)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert(fd >= 0);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	ck_assert(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* xdsd logs at most five failed handshakes a second: each case of a
 * test gets a second of its own. */
static void next_second(void)
{
	xdtest_sleep_ms(1100);
}

/* The stream ends with `code` and no response. */
static void ends_with(struct xdc_stream *s, grpc_status_code code)
{
	xdc_expect_refused(s, code, NULL, WAIT_MS);
}

/* ---------------- refused connections and streams ---------------- */

/*
 * A failed handshake is one warning that names the peer and says why
 * in words (gRPC alone logged OpenSSL's reason without the peer), and
 * is counted on /metrics and /status.json.
 */
START_TEST(failed_handshakes_name_the_peer_and_are_counted)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir("server");
	char cert[512], key[512], *cfg, *log;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	json_t *doc;

	snprintf(cert, sizeof(cert), "%s/server.pem", tdir);
	snprintf(key, sizeof(key), "%s/server.key", tdir);
	cfg = tls_config(snaps, cert, key, true, "handshake_timeout: 1s\n");
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(metric(d, "xdsd_tls_handshake_failures_total", "") == 0);

	/* the peer is the connection's own, port included: one that
	 * closes at once, one that says nothing until handshake_timeout */
	{
		char needle[128];
		int port, fd = raw_connect(d, &port);

		close(fd);
		snprintf(needle, sizeof(needle), "info: TLS handshake with ipv4:127.0.0.1:%d failed: ",
			 port);
		ck_assert_msg(wait_line_with(d, needle, "the connection closed during the handshake",
					     WAIT_MS),
			      "no line for the connection from port %d", port);
		fd = raw_connect(d, &port);
		snprintf(needle, sizeof(needle), "warn: TLS handshake with ipv4:127.0.0.1:%d failed: ",
			 port);
		ck_assert_msg(wait_line_with(d, needle, "no TLS handshake within handshake_timeout",
					     WAIT_MS),
			      "no line for the silent connection from port %d", port);
		close(fd);
	}

	/* no client certificate */
	next_second();
	c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"), NULL, NULL);
	s = xdc_watch_clusters(c, "no-cert", "prod");
	ends_with(s, GRPC_STATUS_UNAVAILABLE);
	xdc_stream_free(s);
	xdc_conn_free(c);
	ck_assert_msg(wait_line_with(d, "warn: TLS handshake with ipv4:127.0.0.1:",
				     "failed: the client sent no certificate, and tls.client_ca requires one",
				     WAIT_MS),
		      "no warning naming the peer of a handshake without a client certificate");

	/* a certificate from another CA */
	next_second();
	c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
			    xdtest_cert("rogue.pem"), xdtest_cert("rogue.key"));
	s = xdc_watch_clusters(c, "rogue", "prod");
	ends_with(s, GRPC_STATUS_UNAVAILABLE);
	xdc_stream_free(s);
	xdc_conn_free(c);
	ck_assert(wait_line_with(d, "warn: TLS handshake with ipv4:127.0.0.1:",
				 "the client's certificate was refused", WAIT_MS));

	/* plaintext on the TLS port */
	next_second();
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "plain", "prod");
	ends_with(s, GRPC_STATUS_UNAVAILABLE);
	xdc_stream_free(s);
	xdc_conn_free(c);
	ck_assert(wait_line_with(d, "warn: TLS handshake with ipv4:127.0.0.1:",
				 "the client does not speak TLS", WAIT_MS));

	/* each is told once, with its peer: not also gRPC's own line,
	 * nor gRPC's tracer lines */
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "warn: grpc: Handshake failed") == NULL,
		      "gRPC's peerless line is still a warning:\n%s", log);
	ck_assert_ptr_null(strstr(log, "handshake_manager"));
	ck_assert_ptr_null(strstr(log, "an unknown peer"));
	free(log);
	/* gRPC's client retries a failed connection: at least one each */
	ck_assert(metric(d, "xdsd_tls_handshake_failures_total", "") >= 5);
	doc = xdt_status_json(d);
	ck_assert(json_integer_value(json_object_get(
			  json_object_get(doc, "tls"), "handshake_failures")) >= 5);
	json_decref(doc);
	stop(d);
	free(cfg);
	free(tdir);
	free(snaps);
}
END_TEST

/*
 * Refused streams, by reason: each has its line with the peer and the
 * client's identity, and its count on /metrics.
 */
START_TEST(refused_streams_are_told_and_counted_by_reason)
{
	static const char *const reasons[] = {
		"permission_denied", "unauthenticated", "limits",
		"invalid_argument", "no_snapshot", "unimplemented",
	};
	static const char rules[] =
		"max_node_id_size: 16\n"
		"authorize:\n"
		"  - identity: spiffe://example.org/ns/prod/sa/*\n"
		"    node_cluster: prod-*\n";
	static const char frontend[] = "identity 'spiffe://example.org/ns/prod/sa/frontend'";
	char *snaps = xdtest_clusters_snapdir(1), *cfg;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	char label[64];

	cfg = tls_config(snaps, xdtest_cert("server.pem"),
			 xdtest_cert("server.key"), true, rules);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		snprintf(label, sizeof(label), "reason=\"%s\"", reasons[i]);
		ck_assert_msg(metric(d, "xdsd_streams_refused_total", label) == 0,
			      "%s is not 0 at start", reasons[i]);
	}
	c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
			    xdtest_cert("frontend.pem"), xdtest_cert("frontend.key"));

	/* authorize: a node its identity may not claim */
	s = xdc_watch_clusters(c, "web-1", "dev-web");
	ends_with(s, GRPC_STATUS_PERMISSION_DENIED);
	xdc_stream_free(s);
	ck_assert(wait_line_with(d, "warn: stream ", "may not speak for", WAIT_MS));
	ck_assert(log_line_with(d, "may not speak for", "from ipv4:127.0.0.1:"));

	/* a limit: a node id longer than max_node_id_size */
	s = xdc_watch_clusters(c, "a-node-id-far-too-long", "prod-web");
	ends_with(s, GRPC_STATUS_RESOURCE_EXHAUSTED);
	xdc_stream_free(s);
	ck_assert(wait_line_with(d, "(max_node_id_size)", frontend, WAIT_MS));

	/* a request that is not one */
	s = xdc_open(c, XDC_ADS);
	ck_assert(xdc_send(s, "\x0a\xff\xff", 3, WAIT_MS));
	ends_with(s, GRPC_STATUS_INVALID_ARGUMENT);
	xdc_stream_free(s);
	ck_assert(wait_line_with(d, "ending with status 3 (refused: invalid_argument)",
				 frontend, WAIT_MS));

	/* a method xdsd does not serve (xDS v2) */
	s = xdc_open(c, "/envoy.service.discovery.v2.AggregatedDiscoveryService/StreamAggregatedResources");
	ends_with(s, GRPC_STATUS_UNIMPLEMENTED);
	xdc_stream_free(s);
	ck_assert(wait_line_with(d, "unknown method '/envoy.service.discovery.v2", frontend,
				 WAIT_MS));
	ck_assert(log_line_with(d, "unknown method", "from ipv4:127.0.0.1:"));
	xdc_conn_free(c);

	ck_assert(metric(d, "xdsd_streams_refused_total", "reason=\"permission_denied\"") == 1);
	ck_assert(metric(d, "xdsd_streams_refused_total", "reason=\"limits\"") == 1);
	ck_assert(metric(d, "xdsd_streams_refused_total", "reason=\"invalid_argument\"") == 1);
	ck_assert(metric(d, "xdsd_streams_refused_total", "reason=\"unimplemented\"") == 1);
	ck_assert(metric(d, "xdsd_streams_refused_total", "reason=\"unauthenticated\"") == 0);
	ck_assert(metric(d, "xdsd_streams_refused_total", "reason=\"no_snapshot\"") == 0);
	stop(d);
	free(cfg);
	free(snaps);
}
END_TEST

/* In plaintext: refusals are counted too, there are no TLS metrics,
 * and /status.json and xdsctl say TLS is off. */
START_TEST(plaintext_refusals_counted_without_tls_metrics)
{
	char *snaps = xdtest_clusters_snapdir(1), *cfg, cmd[1024], *out;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	json_t *doc;
	int status;

	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nsnapshots: %s\n", snaps) > 0);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	c = xdc_connect(d->target);
	s = xdc_open(c, "/envoy.service.discovery.v2.AggregatedDiscoveryService/StreamAggregatedResources");
	ends_with(s, GRPC_STATUS_UNIMPLEMENTED);
	xdc_stream_free(s);
	xdc_conn_free(c);
	ck_assert(wait_line_with(d, "info: unknown method", "(from ipv4:127.0.0.1:", WAIT_MS));
	ck_assert(metric(d, "xdsd_streams_refused_total", "reason=\"unimplemented\"") == 1);
	ck_assert(metric(d, "xdsd_tls_handshake_failures_total", NULL) == -1);
	ck_assert(metric(d, "xdsd_tls_certificate_expiry_timestamp_seconds", NULL) == -1);
	doc = xdt_status_json(d);
	ck_assert(json_is_null(json_object_get(doc, "tls")));
	json_decref(doc);
	snprintf(cmd, sizeof(cmd), "'%s' --admin 127.0.0.1:%d status",
		 xdtest_env("XDSCTL"), d->admin_port);
	out = run(cmd, &status);
	ck_assert_int_eq(status, 0);
	ck_assert_msg(strstr(out, "\ntls:       off (plaintext)\n") != NULL, "%s", out);
	free(out);
	stop(d);
	free(cfg);
	free(snaps);
}
END_TEST

/* ---------------- certificate expiry ---------------- */

/*
 * A server certificate that expires within 14 days: a warning at
 * start; its expiry, and the client CA's, on /metrics, /status.json,
 * /status and in xdsctl status.
 */
START_TEST(certificate_expiry_shown_and_warned)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir("server-soon");
	char cert[512], key[512], cmd[1024], *cfg, *page, *out;
	long long soon = not_after(xdtest_cert("server-soon.pem")),
		  ca = not_after(xdtest_cert("ca.pem")), before, after;
	struct xdt_daemon *d;
	json_t *doc, *tls;
	int status;

	snprintf(cert, sizeof(cert), "%s/server.pem", tdir);
	snprintf(key, sizeof(key), "%s/server.key", tdir);
	cfg = tls_config(snaps, cert, key, true, NULL);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert_msg(log_line_with(d, "warn: TLS: the server certificate (", "expires on"),
		      "no warning at start about a certificate that expires within 14 days");
	ck_assert(log_line_with(d, "/CN=xdsd server soon", ", in 6d "));

	ck_assert(metric(d, "xdsd_tls_certificate_expiry_timestamp_seconds",
			 "role=\"server\"") == (double)soon);
	{
		char label[600];

		snprintf(label, sizeof(label), "file=\"%s\"", cert);
		ck_assert(metric(d, "xdsd_tls_certificate_expiry_timestamp_seconds",
				 label) == (double)soon);
	}
	ck_assert(metric(d, "xdsd_tls_certificate_expiry_timestamp_seconds",
			 "role=\"client_ca\"") == (double)ca);

	before = (long long)time(NULL);
	doc = xdt_status_json(d);
	after = (long long)time(NULL);
	tls = json_object_get(doc, "tls");
	ck_assert(json_is_true(json_object_get(tls, "mutual")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(tls, "certificate"), "file")),
			 cert);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(tls, "certificate"), "subject")),
			 "/CN=xdsd server soon");
	{
		/* counted from when the page was made, which was between
		 * `before` and `after`, however long that took */
		long long left = json_integer_value(json_object_get(
			json_object_get(tls, "certificate"), "expires_in_seconds"));

		ck_assert_msg(left >= soon - after - 1 && left <= soon - before + 1,
			      "expires_in_seconds %lld, expected %lld to %lld", left,
			      soon - after, soon - before);
	}
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(tls, "client_ca"), "subject")),
			 "/CN=xdsd test CA");
	json_decref(doc);

	page = xdt_admin(d, "GET", "/status", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_msg(strstr(page, "<dd id=tls-certificate class=\"soon\"") != NULL,
		      "the status page does not show the expiry as soon");
	ck_assert_ptr_nonnull(strstr(page, "<dd id=tls-client-ca class=\"valid\""));
	free(page);

	snprintf(cmd, sizeof(cmd), "'%s' --admin 127.0.0.1:%d status",
		 xdtest_env("XDSCTL"), d->admin_port);
	out = run(cmd, &status);
	ck_assert_int_eq(status, 0);
	ck_assert_msg(strstr(out, "tls:       with client certificates (mTLS), 0 failed handshakes\n") != NULL,
		      "xdsctl status:\n%s", out);
	ck_assert_msg(strstr(out, "certificate /CN=xdsd server soon expires ") != NULL &&
			      strstr(out, ": soon)") != NULL,
		      "xdsctl status:\n%s", out);
	ck_assert_msg(strstr(out, "client CA /CN=xdsd test CA expires ") != NULL,
		      "xdsctl status:\n%s", out);
	free(out);
	stop(d);
	free(cfg);
	free(tdir);
	free(snaps);
}
END_TEST

/*
 * The certificate in use expires while xdsd runs: a reload (of the same
 * files) is refused, as before, and says as an error that the
 * certificate in use has expired; /metrics shows when.
 */
START_TEST(expired_certificate_in_use_is_an_error_at_reload)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir(NULL);
	char cert[512], key[512], cmd[2048], start[32], end[32], *cfg;
	/* valid for longer than the daemon may take to start (START_MS):
	 * it must start with the certificate still good */
	time_t now = time(NULL), until = now + START_MS / 1000 + 5;
	struct tm tm;
	struct xdt_daemon *d;

	gmtime_r(&(time_t){now - 3600}, &tm);
	strftime(start, sizeof(start), "%Y%m%d%H%M%SZ", &tm);
	gmtime_r(&until, &tm);
	strftime(end, sizeof(end), "%Y%m%d%H%M%SZ", &tm);
	/* a certificate by the test CA, valid for a few more seconds */
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s' '%s/' && sh '%s/tests/lib/make-certs.sh' '%s' dated short %s %s",
		 xdtest_cert("ca.pem"), xdtest_cert("ca.key"), tdir,
		 xdtest_env("XDSD_SRCDIR"), tdir, start, end);
	ck_assert(system(cmd) == 0);
	snprintf(cert, sizeof(cert), "%s/short.pem", tdir);
	snprintf(key, sizeof(key), "%s/short.key", tdir);
	cfg = tls_config(snaps, cert, key, false, NULL);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(log_line_with(d, "warn: TLS: the server certificate (", "expires on"));
	ck_assert(metric(d, "xdsd_tls_certificate_expiry_timestamp_seconds",
			 "role=\"server\"") == (double)until);
	while (time(NULL) <= until)
		xdtest_sleep_ms(100);
	xdtest_sleep_ms(1000);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "TLS reload failed: still using the previous certificate",
				      WAIT_MS));
	ck_assert_msg(wait_line_with(d, "error: TLS: the server certificate in use (",
				     "expired on", WAIT_MS),
		      "no error saying that the certificate in use has expired");
	stop(d);
	free(cfg);
	free(tdir);
	free(snaps);
}
END_TEST

/* ---------------- the files ---------------- */

/*
 * A FIFO, a directory or a device as one of the TLS files at start:
 * never opened, and xdsd stops saying what the path is.
 */
START_TEST(tls_file_not_a_regular_file_refused_at_start)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir("server");
	char fifo[512], dir[512], cert[512], key[512], want[700], *cfg, *log;
	const struct {
		const char *cert, *key, *ca, *why;
	} cases[] = {
		{fifo, key, NULL, "the certificate chain is a FIFO"},
		{cert, "/dev/zero", NULL, "/dev/zero: the private key is a character device"},
		{cert, key, dir, "the client CA file is a directory"},
		{cert, key, fifo, "the client CA file is a FIFO"},
	};
	struct xdt_daemon *d;

	snprintf(cert, sizeof(cert), "%s/server.pem", tdir);
	snprintf(key, sizeof(key), "%s/server.key", tdir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.pem", tdir);
	snprintf(dir, sizeof(dir), "%s/dir.pem", tdir);
	ck_assert(mkfifo(fifo, 0600) == 0);
	ck_assert(mkdir(dir, 0700) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nsnapshots: %s\n"
					 "tls:\n  cert: %s\n  key: %s\n%s%s\n",
				   snaps, cases[i].cert, cases[i].key,
				   cases[i].ca != NULL ? "  client_ca: " : "",
				   cases[i].ca != NULL ? cases[i].ca : "") > 0);
		d = xdt_daemon_spawn(cfg, NULL);
		ck_assert(xdt_daemon_wait(d, START_MS));
		ck_assert_int_eq(d->exit_status, 1);
		log = xdt_daemon_log(d);
		snprintf(want, sizeof(want), "%s; it must be a regular file", cases[i].why);
		ck_assert_msg(strstr(log, want) != NULL, "case %zu: no '%s' in:\n%s", i, want, log);
		ck_assert_ptr_nonnull(strstr(log, "cannot use the TLS files; not starting"));
		free(log);
		xdt_daemon_free(d);
		free(cfg);
	}
	free(tdir);
	free(snaps);
}
END_TEST

/*
 * SIGHUP while a FIFO sits where the key was: the reload is refused
 * with the reason, and xdsd goes on serving with the certificate it
 * had; it does not block on the FIFO.
 */
START_TEST(fifo_in_place_of_a_tls_file_refused_on_reload)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir("server");
	char cert[512], key[512], *cfg, *body, *cn;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	int status;

	snprintf(cert, sizeof(cert), "%s/server.pem", tdir);
	snprintf(key, sizeof(key), "%s/server.key", tdir);
	cfg = tls_config(snaps, cert, key, false, NULL);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert(unlink(key) == 0);
	ck_assert(mkfifo(key, 0600) == 0);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_msg(xdt_daemon_wait_log(d, "the private key is a FIFO; it must be a regular file",
					  WAIT_MS),
		      "the FIFO was not refused");
	ck_assert(xdt_daemon_wait_log(d, "TLS reload failed: still using the previous certificate",
				      WAIT_MS));
	body = xdt_admin(d, "GET", "/healthz", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	free(body);
	c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"), NULL, NULL);
	s = xdc_watch_clusters(c, "after-fifo", "prod");
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 1);
	cn = xdc_server_property(s, "x509_common_name");
	ck_assert_str_eq(cn, "xdsd server one");
	free(cn);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(cfg);
	free(tdir);
	free(snaps);
}
END_TEST

/*
 * ${CREDENTIALS_DIRECTORY} in the TLS paths is the directory systemd
 * puts LoadCredential= files in; unset, or another variable, is a
 * configuration error that says so.
 */
START_TEST(credentials_directory_in_tls_paths)
{
	char *snaps = xdtest_clusters_snapdir(2), *creds = tls_dir(NULL);
	char env[600], *cfg, *text, *log;
	const char *envs[] = {env, NULL};
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	text = xdtest_read_file(xdtest_cert("server.key"), NULL);
	free(xdtest_write_file(creds, "tls.key", text));
	free(text);
	cfg = tls_config(snaps, xdtest_cert("server.pem"),
			 "${CREDENTIALS_DIRECTORY}/tls.key", false, NULL);
	snprintf(env, sizeof(env), "CREDENTIALS_DIRECTORY=%s", creds);
	d = xdt_daemon_spawn_env(cfg, NULL, envs);
	xdt_daemon_wait_ready(d, START_MS);
	c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"), NULL, NULL);
	s = xdc_watch_clusters(c, "cred", "prod");
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 2);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);

	/* not run by systemd: nothing to expand */
	d = xdt_daemon_spawn(cfg, NULL);
	ck_assert(xdt_daemon_wait(d, START_MS));
	ck_assert_int_eq(d->exit_status, 1);
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "'tls.key': bad value '${CREDENTIALS_DIRECTORY}/tls.key': "
				  "${CREDENTIALS_DIRECTORY} is not set") != NULL,
		      "%s", log);
	ck_assert_ptr_null(strstr(log, "listening on"));
	free(log);
	xdt_daemon_free(d);
	free(cfg);

	/* one variable only */
	cfg = tls_config(snaps, xdtest_cert("server.pem"), "${HOME}/tls.key",
			 false, NULL);
	d = xdt_daemon_spawn_env(cfg, NULL, envs);
	ck_assert(xdt_daemon_wait(d, START_MS));
	ck_assert_int_eq(d->exit_status, 1);
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "unknown variable '${HOME}': only ${CREDENTIALS_DIRECTORY} is expanded") != NULL,
		      "%s", log);
	free(log);
	xdt_daemon_free(d);
	free(cfg);
	free(creds);
	free(snaps);
}
END_TEST

/*
 * A key xdsd may not read (as root's key is to the unit's user xdsd):
 * the error says how to let it, or to hand it over. The daemon runs without
 * the capabilities that let root read anything.
 */
START_TEST(unreadable_key_says_how_to_pass_it)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir("server");
	char cert[512], key[512], *cfg, *path, *log, *text;
	const char *xdsd = xdtest_env("XDSD");
	int status, fd;
	pid_t pid;

	snprintf(cert, sizeof(cert), "%s/server.pem", tdir);
	snprintf(key, sizeof(key), "%s/server.key", tdir);
	ck_assert(chmod(key, 0) == 0);
	cfg = tls_config(snaps, cert, key, false, NULL);
	path = xdtest_write_file(tdir, "xdsd.yaml", cfg);
	ck_assert(asprintf(&log, "%s/xdsd.log", tdir) > 0);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(127);
		dup2(fd, STDERR_FILENO);
		dup2(fd, STDOUT_FILENO);
		/* root reads any file with these; without them, as any
		 * other user (EPERM when not root: nothing to drop) */
		prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0);
		prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0);
		execl(xdsd, xdsd, "-c", path, "--admin-listen", "off",
		      "--schema", xdtest_env("XDSD_SCHEMA"), (char *)NULL);
		_exit(127);
	}
	ck_assert(waitpid(pid, &status, 0) == pid);
	text = xdtest_read_file(log, NULL);
	ck_assert(text != NULL);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		      "xdsd did not exit with 1:\n%s", text);
	ck_assert_msg(strstr(text, ": cannot read the private key: Permission denied (running as uid ") != NULL,
		      "%s", text);
	ck_assert_msg(strstr(text, "LoadCredential=tls.key:") != NULL &&
			      strstr(text, "tls.key: ${CREDENTIALS_DIRECTORY}/tls.key") != NULL &&
			      strstr(text, "let the group xdsd read the file (chgrp xdsd; chmod 0640)") != NULL,
		      "the error does not say how to pass the key:\n%s", text);
	free(text);
	chmod(key, 0600);
	free(log);
	free(path);
	free(cfg);
	free(tdir);
	free(snaps);
}
END_TEST

/* ---------------- a new key pair ---------------- */

/* A new key and a certificate for it, by the test CA, made with openssl
 * as an operator (or certbot) would: DIR/NAME.pem and DIR/NAME.key,
 * for "localhost" and 127.0.0.1, subject CN=CN. */
static void new_pair(const char *dir, const char *name, const char *cn)
{
	char cmd[4096], *out;
	int status;

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc "
		 "-keyout %s.key -out %s.csr -subj '/CN=%s' && "
		 "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > %s.ext && "
		 "openssl x509 -req -in %s.csr -CA '%s' -CAkey '%s' -CAcreateserial -CAserial %s.srl "
		 "-days 30 -extfile %s.ext -out %s.pem && rm %s.csr %s.ext %s.srl 2>&1",
		 dir, name, name, cn, name, name, xdtest_cert("ca.pem"),
		 xdtest_cert("ca.key"), name, name, name, name, name, name);
	out = run(cmd, &status);
	ck_assert_msg(status == 0, "openssl: %s", out);
	free(out);
}

/* DIR/FROM renamed to DIR/TO, as a deploy tool puts a file in place. */
static void put_in_place(const char *dir, const char *from, const char *to)
{
	char a[600], b[600];

	snprintf(a, sizeof(a), "%s/%s", dir, from);
	snprintf(b, sizeof(b), "%s/%s", dir, to);
	ck_assert_msg(rename(a, b) == 0, "rename %s %s", a, b);
}

/* The subject CN of the certificate a new TLS connection is served
 * over, once it is served (malloc'd). */
static char *served_cn(const struct xdt_daemon *d)
{
	struct xdc_conn *c = xdc_connect_tls(d->target, xdtest_cert("ca.pem"), NULL, NULL);
	struct xdc_stream *s = xdc_watch_clusters(c, "rotation", "prod");
	char *cn;

	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 1);
	cn = xdc_server_property(s, "x509_common_name");
	xdc_stream_free(s);
	xdc_conn_free(c);
	return cn;
}

static void serves_cn(const struct xdt_daemon *d, const char *want)
{
	char *cn = served_cn(d);

	ck_assert_str_eq(cn, want);
	free(cn);
}

/*
 * A certificate renewed with a new key (certbot's default), its files
 * put in place one after the other with a reload in between: that
 * reload finds the new certificate with the old key and is refused,
 * naming both files and saying what to do, and the pair in use keeps
 * serving; the reload once both are in place serves the new pair,
 * which a TLS client sees. A pair that truly does not match is refused
 * the same way, the pair in use still serving.
 */
START_TEST(new_key_pair_taken_by_the_reload_after_both_files)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir("server");
	char cert[512], key[512], want[2048], *cfg;
	struct xdt_daemon *d;

	snprintf(cert, sizeof(cert), "%s/server.pem", tdir);
	snprintf(key, sizeof(key), "%s/server.key", tdir);
	cfg = tls_config(snaps, cert, key, false, NULL);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	serves_cn(d, "xdsd server one");

	new_pair(tdir, "renewed", "xdsd server renewed");
	put_in_place(tdir, "renewed.pem", "server.pem");
	xdt_daemon_signal(d, SIGHUP);
	snprintf(want, sizeof(want),
		 "%s: the key does not belong to the first certificate of %s: install the key of that certificate, "
		 "or the certificate of this key, and reload; a pair being replaced one file at a time is refused "
		 "like this by a reload in between, and taken by the next", key, cert);
	ck_assert_msg(xdt_daemon_wait_log(d, want, WAIT_MS), "no '%s' in the log", want);
	ck_assert(xdt_daemon_wait_log(d, "TLS reload failed: still using the previous certificate (certificate /CN=xdsd server one",
				      WAIT_MS));
	serves_cn(d, "xdsd server one");

	put_in_place(tdir, "renewed.key", "server.key");
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "info: TLS reloaded: certificate /CN=xdsd server renewed", WAIT_MS));
	serves_cn(d, "xdsd server renewed");

	/* a key that belongs to no certificate here */
	new_pair(tdir, "stray", "xdsd server stray");
	put_in_place(tdir, "stray.key", "server.key");
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, want, 2, WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "TLS reload failed: still using the previous certificate (certificate /CN=xdsd server renewed",
				      WAIT_MS));
	serves_cn(d, "xdsd server renewed");
	stop(d);
	free(cfg);
	free(tdir);
	free(snaps);
}
END_TEST

/*
 * The key as a systemd credential (the unit's LoadCredential=, the
 * copy in ${CREDENTIALS_DIRECTORY} made at start, as systemd makes it)
 * and a new pair installed: the reload reads the new certificate and
 * the copy of the old key, and is refused with a message that names
 * the key as xdsd.yaml does and says that this takes a restart; the
 * pair in use keeps serving. The restart (a fresh copy, as systemd
 * makes at each start) serves the new pair.
 */
START_TEST(new_key_pair_with_the_key_a_credential_says_to_restart)
{
	char *snaps = xdtest_clusters_snapdir(1), *tdir = tls_dir("server");
	char *creds = tls_dir(NULL), *text, *cfg;
	char cert[512], src[512], copy[600], env[600], want[2048];
	const char *envs[] = {env, NULL};
	struct xdt_daemon *d;

	snprintf(cert, sizeof(cert), "%s/server.pem", tdir);
	snprintf(src, sizeof(src), "%s/server.key", tdir);
	snprintf(copy, sizeof(copy), "%s/tls.key", creds);
	snprintf(env, sizeof(env), "CREDENTIALS_DIRECTORY=%s", creds);
	/* systemd's copy, at start */
	text = xdtest_read_file(src, NULL);
	free(xdtest_write_file(creds, "tls.key", text));
	free(text);
	cfg = tls_config(snaps, cert, "${CREDENTIALS_DIRECTORY}/tls.key", false, NULL);
	d = xdt_daemon_spawn_env(cfg, NULL, envs);
	xdt_daemon_wait_ready(d, START_MS);
	serves_cn(d, "xdsd server one");

	/* renewed with a new key: both files the unit names replaced */
	new_pair(tdir, "renewed", "xdsd server renewed");
	put_in_place(tdir, "renewed.key", "server.key");
	put_in_place(tdir, "renewed.pem", "server.pem");
	xdt_daemon_signal(d, SIGHUP);
	snprintf(want, sizeof(want),
		 "${CREDENTIALS_DIRECTORY}/tls.key (%s): the key does not belong to the first certificate of %s: "
		 "the key is systemd's copy of a credential, made when xdsd started (LoadCredential=), which a "
		 "reload reads again: a certificate for a new key takes a restart (systemctl restart xdsd)",
		 copy, cert);
	ck_assert_msg(xdt_daemon_wait_log(d, want, WAIT_MS), "no '%s' in the log", want);
	ck_assert(xdt_daemon_wait_log(d, "TLS reload failed: still using the previous certificate (certificate /CN=xdsd server one",
				      WAIT_MS));
	serves_cn(d, "xdsd server one");
	stop(d);

	/* the restart: systemd copies the credential again */
	text = xdtest_read_file(src, NULL);
	xdtest_replace_file(creds, "tls.key", text);
	free(text);
	d = xdt_daemon_spawn_env(cfg, NULL, envs);
	xdt_daemon_wait_ready(d, START_MS);
	serves_cn(d, "xdsd server renewed");
	stop(d);
	free(cfg);
	free(creds);
	free(tdir);
	free(snaps);
}
END_TEST

/*
 * README.md's openssl recipe, exactly as written there (and in
 * xdsd.yaml(5), which must say the same), makes a CA, a server
 * certificate and a client certificate that xdsd and an mTLS client
 * use: the client's identity is what the README's authorize: rule
 * matches.
 */
START_TEST(readme_recipe_makes_working_certificates)
{
	static const char rules[] =
		"authorize:\n"
		"  - identity: \"spiffe://example.org/ns/prod/sa/*\"\n"
		"    node_cluster: \"prod-*\"\n";
	char *snaps = xdtest_clusters_snapdir(3), *dir = tls_dir(NULL);
	char cmd[1024], cert[512], key[512], ca[512], ccert[512], ckey[512];
	char *cfg, *out;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	int status;

	snprintf(cmd, sizeof(cmd), "sh '%s/tests/e2e/tls-recipe.sh' '%s' 2>&1",
		 xdtest_env("XDSD_SRCDIR"), dir);
	out = run(cmd, &status);
	ck_assert_msg(status == 0, "the recipe failed:\n%s", out);
	free(out);
	snprintf(cert, sizeof(cert), "%s/server.pem", dir);
	snprintf(key, sizeof(key), "%s/server.key", dir);
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(ccert, sizeof(ccert), "%s/client.pem", dir);
	snprintf(ckey, sizeof(ckey), "%s/client.key", dir);
	ck_assert(asprintf(&cfg,
			   "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n"
			   "tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n%s",
			   snaps, cert, key, ca, rules) > 0);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	c = xdc_connect_tls_name(d->target, ca, ccert, ckey, "xds.example.org");
	s = xdc_watch_clusters(c, "web-1", "prod-web");
	ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 3);
	ck_assert(xdt_daemon_wait_log(d, "(identity 'spiffe://example.org/ns/prod/sa/frontend')",
				      WAIT_MS));
	xdc_stream_free(s);
	/* the identity the rule allows, for the nodes it allows only */
	s = xdc_watch_clusters(c, "web-1", "dev-web");
	ends_with(s, GRPC_STATUS_PERMISSION_DENIED);
	xdc_stream_free(s);
	xdc_conn_free(c);
	/* the server certificate is for the name the recipe gave it */
	c = xdc_connect_tls_name(d->target, ca, ccert, ckey, "localhost");
	s = xdc_watch_clusters(c, "web-2", "prod-web");
	ends_with(s, GRPC_STATUS_UNAVAILABLE);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(cfg);
	free(dir);
	free(snaps);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tls_ops");
	TCase *tc = tcase_create("tls_ops");

	xdtest_make_certs();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, failed_handshakes_name_the_peer_and_are_counted);
	tcase_add_test(tc, refused_streams_are_told_and_counted_by_reason);
	tcase_add_test(tc, plaintext_refusals_counted_without_tls_metrics);
	tcase_add_test(tc, certificate_expiry_shown_and_warned);
	tcase_add_test(tc, expired_certificate_in_use_is_an_error_at_reload);
	tcase_add_test(tc, fifo_in_place_of_a_tls_file_refused_on_reload);
	tcase_add_test(tc, tls_file_not_a_regular_file_refused_at_start);
	tcase_add_test(tc, credentials_directory_in_tls_paths);
	tcase_add_test(tc, unreadable_key_says_how_to_pass_it);
	tcase_add_test(tc, readme_recipe_makes_working_certificates);
	tcase_add_test(tc, new_key_pair_taken_by_the_reload_after_both_files);
	tcase_add_test(tc, new_key_pair_with_the_key_a_credential_says_to_restart);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
