/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl(1) against the real daemon: the built binary ($XDSCTL) is run
 * as an operator runs it, its output and exit status checked, with real
 * xDS clients on loopback (one that ACKs, one that NACKs endpoints; over
 * mTLS too, with certificates from tests/lib/make-certs.sh). Its
 * --json output is checked against what the admin endpoint itself
 * answers. Where $VALGRIND is set and the build has no sanitizer, some
 * runs go under valgrind and any error or leak fails them.
 *
 * The "client" case checks xdsctl and its HTTP client (http/client.h,
 * on libcurl) against scripted servers on loopback: answers xdsd would
 * not give but a peer may send (interim 1xx answers, chunks, a length
 * or a stream past the bound).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "ctl.h"
#include "daemon.h"
#include "http/client.h"
#include "xdtest.h"

#define WAIT_MS 5000
#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"
#define EDS_URL "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
#define NACK_TEXT "endpoints rejected: \"port 1 is reserved\"\nsecond line"
/* what a hostile client may name itself: a colour, then a window title */
#define EVIL_ID "evil\x1b[31m\x1b]0;pwned\x07"

/* ---------------- reading xdsctl's output ---------------- */

/* A line of `text` that starts with `prefix` (malloc'd), or NULL. */
static char *line_of(const char *text, const char *prefix)
{
	for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return strndup(p, strcspn(p, "\n"));
	return NULL;
}

/* The cell of `row` in the column headed `head` of the table whose
 * head line is `heads` (columns are aligned; a cell ends at two
 * spaces), malloc'd. */
/* The row of `out` starting with `prefix` holds `state` and `types`. */
static void row_has(const char *out, const char *prefix, const char *state,
		    const char *types)
{
	char *line = line_of(out, prefix);

	ck_assert_msg(line != NULL, "%s", out);
	xdt_has(line, state);
	xdt_has(line, types);
	free(line);
}

static char *cell(const char *heads, const char *row, const char *head)
{
	const char *h = strstr(heads, head), *c, *end;

	ck_assert_msg(h != NULL, "no column %s in '%s'", head, heads);
	ck_assert_msg(strlen(row) > (size_t)(h - heads), "'%s' has no %s", row, head);
	c = row + (h - heads);
	ck_assert_msg(c == row || c[-1] == ' ', "'%s' is not aligned under '%s'", row, heads);
	end = strstr(c, "  ");
	return strndup(c, end ? (size_t)(end - c) : strlen(c));
}

/* ---------------- the daemon and its clients ---------------- */

struct client {
	struct xdc_conn *conn;
	struct xdc_stream *s;
	const char *id;
};

static void request(struct client *c, const char *url, char *name,
		    const char *version, const char *nonce, const char *nack)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Google__Rpc__Status err = GOOGLE__RPC__STATUS__INIT;

	node.id = (char *)c->id;
	node.cluster = "edge";
	req.node = &node;
	req.type_url = (char *)url;
	if (name != NULL) {
		req.resource_names = &name;
		req.n_resource_names = 1;
	}
	req.version_info = (char *)(version ? version : "");
	req.response_nonce = (char *)(nonce ? nonce : "");
	if (nack != NULL) {
		err.code = 3;
		err.message = (char *)nack;
		req.error_detail = &err;
	}
	ck_assert(xdc_send_sotw(c->s, &req, WAIT_MS));
}

static void answer(struct client *c, const char *url, char *name,
		   const char *nack)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(c->s, WAIT_MS);

	ck_assert_msg(r != NULL, "%s: no %s response", c->id, url);
	request(c, url, name, nack ? "" : r->version_info, r->nonce, nack);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
}

/* Clusters by wildcard, then the endpoints of "svc": ACKed, or NACKed
 * with NACK_TEXT; over mTLS with the certificate CERT.pem of
 * make-certs.sh when `cert` is not NULL. */
static void client_open_as(struct client *c, const char *target, const char *id,
			   bool nack, const char *cert)
{
	c->id = id;
	if (cert != NULL) {
		char pem[64], key[64];

		snprintf(pem, sizeof(pem), "%s.pem", cert);
		snprintf(key, sizeof(key), "%s.key", cert);
		c->conn = xdc_connect_tls(target, xdtest_cert("ca.pem"), xdtest_cert(pem),
					  xdtest_cert(key));
	} else {
		c->conn = xdc_connect(target);
	}
	c->s = xdc_open(c->conn, XDC_ADS);
	request(c, CDS_URL, NULL, NULL, NULL, NULL);
	answer(c, CDS_URL, NULL, NULL);
	request(c, EDS_URL, "svc", NULL, NULL, NULL);
	answer(c, EDS_URL, "svc", nack ? NACK_TEXT : NULL);
}

static void client_open(struct client *c, const char *target, const char *id,
			bool nack)
{
	client_open_as(c, target, id, nack, NULL);
}

static void client_close(struct client *c)
{
	xdc_stream_free(c->s);
	xdc_conn_free(c->conn);
}

/* Until xdsd has read the clients' answers: as the admin endpoint
 * itself says, not xdsctl. */
static void wait_states(struct xdt_daemon *d, int synced, int nacked)
{
	long long deadline = xdtest_now_ms() + WAIT_MS;
	char path[64];
	int status, n[2];

	for (;;) {
		for (int i = 0; i < 2; i++) {
			json_t *j;
			char *body;

			snprintf(path, sizeof(path), "/clients?state=%s",
				 i ? "nacked" : "synced");
			body = xdt_admin(d, "GET", path, NULL, &status, NULL);
			j = xdt_json_parse(body);
			n[i] = (int)json_integer_value(json_object_get(j, "count"));
			json_decref(j);
			free(body);
		}
		if (n[0] == synced && n[1] == nacked)
			return;
		ck_assert_msg(xdtest_now_ms() < deadline,
			      "states: %d synced, %d nacked", n[0], n[1]);
		xdtest_sleep_ms(20);
	}
}

/* ---------------- tests ---------------- */

START_TEST(usage_errors_exit_2)
{
	static const char *const cases[][6] = {
		{NULL},
		{"frobnicate", NULL},
		{"--bogus", "status", NULL},
		{"--timeout", "0", "status", NULL},
		{"--timeout", "soon", "status", NULL},
		{"--admin", "localhost", "status", NULL},
		{"--admin", "127.0.0.1:99999", "status", NULL},
		{"--admin", "unix:", "status", NULL},
		{"status", "extra", NULL},
		{"reload", "now", NULL},
		{"dump", NULL},
		{"dump", "a", "b", "c", "d", NULL},
		{"clients", "a*", "b*", NULL},
		{"--nacked", "status", NULL},
		{"--pending", "status", NULL},
		{"--older", "1s", "clients", NULL},
		{"--pending", "--older", "soon", "clients", NULL},
		{"--pending", "--older", NULL},
		{"status", "--admin", NULL},
	};
	struct xdt_run r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = xdt_ctl(false, NULL, cases[i]);
		xdt_want(&r, 2);
		ck_assert_msg(strncmp(r.err, "xdsctl: ", 8) == 0, "%s", r.err);
		xdt_has(r.err, "Try 'xdsctl --help'.");
		ck_assert_str_eq(r.out, "");
		xdt_run_free(&r);
	}
	/* a bad address from the environment is named as such */
	r = xdt_ctl(false, "nowhere", (const char *const[]){"status", NULL});
	xdt_want(&r, 2);
	xdt_has(r.err, "XDSCTL_ADMIN 'nowhere'");
	xdt_run_free(&r);

	r = xdt_ctl(false, NULL, (const char *const[]){"--help", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "dump SNAPSHOT [TYPE [NAME]]");
	xdt_has(r.out, "--admin ADDR");
	xdt_run_free(&r);
	r = xdt_ctl(false, NULL, (const char *const[]){"--version", NULL});
	xdt_want(&r, 0);
	ck_assert_msg(strncmp(r.out, "xdsctl ", 7) == 0, "%s", r.out);
	xdt_run_free(&r);
}
END_TEST

/* A port nothing listens on: bound, then closed. */
static int dead_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	ck_assert(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* A listener with `backlog` that never accepts nor answers. */
static int mute_listener(int backlog, int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	ck_assert(listen(fd, backlog) == 0);
	ck_assert(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* ---------------- a scripted server ---------------- */

#define CHUNK_SIZE 65536
/* what an endless answer sends at most, if nobody stops reading it */
#define ENDLESS_CAP (256 << 20)

struct scripted {
	pid_t pid;
	char admin[64];
	char request_file[300]; /* where the request's head is kept */
};

/* Reads the request's head (up to its blank line) from `fd`. */
static void read_head(int fd, const char *keep)
{
	char head[16384];
	size_t len = 0;
	ssize_t n;
	FILE *f;

	while (len < sizeof(head) - 1 &&
	       (n = read(fd, head + len, sizeof(head) - 1 - len)) > 0) {
		len += (size_t)n;
		head[len] = '\0';
		if (strstr(head, "\r\n\r\n") != NULL)
			break;
	}
	f = fopen(keep, "w");
	if (f != NULL) {
		fwrite(head, 1, len, f);
		fclose(f);
	}
}

/*
 * A server on loopback for one connection: it reads the request's head,
 * sends `parts` (NULL-terminated) 100 ms apart, so that each arrives on
 * its own, then, with `endless`, 64 KiB chunks until the peer stops
 * reading, and holds the connection until the peer closes it. A child
 * process, gone within 30 s whatever happens.
 */
static struct scripted script_serve(const char *const *parts, bool endless)
{
	struct scripted sv;
	int port, lfd = mute_listener(1, &port);

	snprintf(sv.admin, sizeof(sv.admin), "127.0.0.1:%d", port);
	snprintf(sv.request_file, sizeof(sv.request_file), "%s/request.%d",
		 xdtest_tmpdir(), port);
	sv.pid = fork();
	ck_assert(sv.pid >= 0);
	if (sv.pid == 0) {
		static char chunk[CHUNK_SIZE + 16];
		int fd, len;
		char sink[4096];

		/* Check's handler would pass SIGTERM on to the test */
		signal(SIGTERM, SIG_DFL);
		alarm(30);
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			_exit(1);
		read_head(fd, sv.request_file);
		for (; *parts != NULL; parts++) {
			if (send(fd, *parts, strlen(*parts), MSG_NOSIGNAL) < 0)
				_exit(0);
			xdtest_sleep_ms(100);
		}
		len = snprintf(chunk, sizeof(chunk), "%x\r\n", CHUNK_SIZE);
		memset(chunk + len, 'x', CHUNK_SIZE);
		memcpy(chunk + len + CHUNK_SIZE, "\r\n", 2);
		for (long sent = 0; endless && sent < ENDLESS_CAP; sent += CHUNK_SIZE)
			if (send(fd, chunk, (size_t)len + CHUNK_SIZE + 2, MSG_NOSIGNAL) < 0)
				_exit(0);
		while (read(fd, sink, sizeof(sink)) > 0)
			;
		_exit(0);
	}
	close(lfd);
	return sv;
}

/* The request's head as the server read it ("" when none came;
 * malloc'd); the server is then gone. */
static char *script_end(struct scripted *sv)
{
	char *head;

	kill(sv->pid, SIGTERM);
	ck_assert(waitpid(sv->pid, NULL, 0) == sv->pid);
	head = xdtest_read_file(sv->request_file, NULL);
	unlink(sv->request_file);
	return head != NULL ? head : strdup("");
}

/* An interim "100 Continue" (xdsd sends one to a client that asks for
 * it), then the answer, chunked: xdsctl shows the answer. It asks the
 * address it is given, whatever proxy the environment names. */
START_TEST(interim_answer_then_chunks)
{
	static const char *const parts[] = {
		"HTTP/1.1 100 Continue\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		"Transfer-Encoding: chunked\r\n\r\n"
		"c\r\n{\"snapshot\":\r\n",
		"f\r\n \"default\", \"a\"\r\n",
		"5\r\n: 1}\n\r\n0\r\n\r\n",
		NULL,
	};
	struct scripted sv = script_serve(parts, false);
	char *head, host[80], proxy[64];
	struct xdt_run r;

	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", dead_port());
	setenv("http_proxy", proxy, 1);
	setenv("all_proxy", proxy, 1);
	r = xdt_ctl(true, sv.admin, (const char *const[]){"--json", "dump", "default", NULL});
	head = script_end(&sv);

	xdt_want(&r, 0);
	ck_assert_str_eq(r.out, "{\"snapshot\": \"default\", \"a\": 1}\n");
	ck_assert_str_eq(r.err, "");
	/* the request went as xdsctl wrote it, to the address named */
	ck_assert_msg(strncmp(head, "GET /config_dump?snapshot=default HTTP/1.1\r\n", 44) == 0,
		      "%s", head);
	snprintf(host, sizeof(host), "\r\nHost: %s\r\n", sv.admin);
	xdt_has(head, host);
	free(head);
	xdt_run_free(&r);
}
END_TEST

/* A length past the bound: refused as soon as it is announced, not
 * waited for until the timeout (the server holds the connection: had
 * xdsctl waited, it would say it had no answer within its 10 s). */
START_TEST(announced_length_over_the_bound)
{
	static const char *const parts[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		"Content-Length: 2147483648\r\n\r\n{",
		NULL,
	};
	struct scripted sv = script_serve(parts, false);
	char want_msg[256];
	struct xdt_run r = xdt_ctl(false, sv.admin,
			   (const char *const[]){"--timeout", "10", "status", NULL});

	free(script_end(&sv));
	xdt_want(&r, 3);
	snprintf(want_msg, sizeof(want_msg),
		 "xdsctl: answer from %s too large: over %zu bytes\n", sv.admin,
		 XD_HTTP_MAX_BODY);
	ck_assert_str_eq(r.err, want_msg);
	ck_assert_str_eq(r.out, "");
	xdt_run_free(&r);
}
END_TEST

/* Chunks without end, no length announced (CURLOPT_MAXFILESIZE_LARGE
 * has nothing to act on): the client stops once past its bound, long
 * before the server would (it sends more than the bound, then holds:
 * a client that read on would say it had no answer within 10 s). */
START_TEST(endless_answer_stops_at_the_bound)
{
	static const char *const parts[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		"Transfer-Encoding: chunked\r\n\r\n",
		NULL,
	};
	struct scripted sv = script_serve(parts, true);
	struct xd_http_request q = {.target = sv.admin, .method = "GET",
				    .path = "/status.json", .timeout_ms = 10000,
				    .max_body = 1 << 20};
	struct xd_http_response a;
	char why[256], want_msg[256];
	int rc = xd_http_fetch(&q, &a, why, sizeof(why));

	free(script_end(&sv));
	ck_assert_int_eq(rc, -1);
	snprintf(want_msg, sizeof(want_msg), "answer from %s too large: over %d bytes",
		 sv.admin, 1 << 20);
	ck_assert_str_eq(why, want_msg);
	ck_assert_ptr_null(a.body);
}
END_TEST

START_TEST(unreachable_exits_3)
{
	char admin[64], want_msg[256];
	struct xdt_run r;
	int port, lfd, fill[3];

	port = dead_port();
	snprintf(admin, sizeof(admin), "127.0.0.1:%d", port);
	r = xdt_ctl(true, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 3);
	snprintf(want_msg, sizeof(want_msg),
		 "xdsctl: cannot connect to %s: Connection refused (is xdsd running? --admin or XDSCTL_ADMIN)\n",
		 admin);
	ck_assert_str_eq(r.err, want_msg);
	ck_assert_str_eq(r.out, "");
	xdt_run_free(&r);

	/* --admin wins over XDSCTL_ADMIN */
	r = xdt_ctl(false, "127.0.0.1:18080", (const char *const[]){"--admin", admin, "reload", NULL});
	xdt_want(&r, 3);
	xdt_has(r.err, admin);
	xdt_run_free(&r);

	/* accepted by the kernel, never answered: --timeout ends it (the
	 * listener would hold it for ever), and says so */
	lfd = mute_listener(16, &port);
	snprintf(admin, sizeof(admin), "127.0.0.1:%d", port);
	r = xdt_ctl(false, NULL, (const char *const[]){"--admin", admin, "--timeout", "0.3",
						  "clients", NULL});
	xdt_want(&r, 3);
	snprintf(want_msg, sizeof(want_msg), "xdsctl: no answer from %s within 300 ms\n",
		 admin);
	ck_assert_str_eq(r.err, want_msg);
	xdt_run_free(&r);
	close(lfd);

	/* a full backlog drops the SYN: connecting is bounded too, by
	 * --timeout (the kernel itself gives up only after about two
	 * minutes of retries, past this test case's timeout) */
	lfd = mute_listener(0, &port);
	snprintf(admin, sizeof(admin), "127.0.0.1:%d", port);
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)port)};

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[i], (struct sockaddr *)&sa, sizeof(sa));
	}
	xdtest_sleep_ms(50);
	r = xdt_ctl(false, admin, (const char *const[]){"--timeout", "0.5", "status", NULL});
	xdt_want(&r, 3);
	xdt_has(r.err, "Connection timed out");
	xdt_run_free(&r);
	for (int i = 0; i < 3; i++)
		close(fill[i]);
	close(lfd);
}
END_TEST

/*
 * Python's static HTTP server, serving `dir` on 127.0.0.1:`port`; its pid.
 * Wait for it with `ctl_when_up`.
 */
static pid_t serve_dir(const char *dir, int port)
{
	const char *python = xdtest_env("PYTHON3");
	char portarg[16];
	pid_t pid;

	snprintf(portarg, sizeof(portarg), "%d", port);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, STDERR_FILENO);
		dup2(null, STDOUT_FILENO);
		if (chdir(dir) != 0)
			_exit(126);
		execl(python, python, "-m", "http.server", "--bind", "127.0.0.1",
		      portarg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Runs xdsctl `args` against `admin` until something listens there. */
static struct xdt_run ctl_when_up(const char *admin, const char *const *args)
{
	long long deadline = xdtest_now_ms() + WAIT_MS;
	struct xdt_run r;

	for (;;) {
		r = xdt_ctl(false, admin, args);
		if (strstr(r.err, "cannot connect") == NULL ||
		    xdtest_now_ms() > deadline)
			return r;
		xdt_run_free(&r);
		xdtest_sleep_ms(50);
	}
}

START_TEST(not_xdsd_exits_3)
{
	/* another HTTP server on the address: its 404 page is no refusal
	 * by xdsd */
	int port = dead_port();
	char admin[64];
	struct xdt_run r;
	pid_t pid;

	snprintf(admin, sizeof(admin), "127.0.0.1:%d", port);
	pid = serve_dir(xdtest_tmpdir(), port);
	r = ctl_when_up(admin, (const char *const[]){"clients", NULL});
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	xdt_want(&r, 3);
	xdt_has(r.err, "does not serve /clients: is it xdsd's admin endpoint?");
	xdt_run_free(&r);
}
END_TEST

START_TEST(clients_table_and_filters)
{
	char *dir = xdtest_snapdir(), *admin, *line, *body, *heads, *ident, *version;
	struct xdt_daemon *d;
	struct client ok, bad, evil;
	json_t *j, *mine;
	struct xdt_run r;
	int status;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = xdt_ctl_start(dir, NULL);
	admin = xdt_ctl_admin(d);
	client_open(&ok, d->target, "ack-1", false);
	client_open(&bad, d->target, "nack-1", true);
	client_open(&evil, d->target, EVIL_ID, false);
	wait_states(d, 2, 1);

	r = xdt_ctl(true, admin, (const char *const[]){"clients", NULL});
	xdt_want(&r, 0);
	ck_assert_msg(strncmp(r.out, "NODE ", 5) == 0, "%s", r.out);
	xdt_has(r.out, "PEER");
	xdt_has(r.out, "TYPES\n");
	heads = line_of(r.out, "NODE ");
	line = line_of(r.out, "ack-1 ");
	ck_assert_msg(line != NULL, "%s", r.out);
	/* over plaintext a client proves no identity */
	ident = cell(heads, line, "IDENTITY");
	ck_assert_str_eq(ident, "-");
	free(ident);
	/* the client that ACKed everything runs its snapshot's version;
	 * the one that NACKed a type runs no version of it */
	j = xdt_admin_json(d, "GET", "/clients?node=ack-1", &status);
	ck_assert_int_eq(status, 200);
	version = cell(heads, line, "VERSION");
	ck_assert_str_eq(version, xdt_json_str(json_array_get(json_object_get(j, "clients"), 0),
					       "snapshot_version"));
	ck_assert_uint_eq(strlen(version), 16);
	free(version);
	json_decref(j);
	free(line);
	line = line_of(r.out, "nack-1 ");
	ck_assert_msg(line != NULL, "%s", r.out);
	version = cell(heads, line, "VERSION");
	ck_assert_str_eq(version, "-");
	free(version);
	free(line);
	line = line_of(r.out, "ack-1 ");
	free(heads);
	xdt_has(line, " edge ");
	xdt_has(line, " ipv4:127.0.0.1:");
	xdt_has(line, " ADS sotw ");
	xdt_has(line, " default ");
	xdt_has(line, " synced ");
	xdt_has(line, "clusters:synced endpoints:synced");
	free(line);
	row_has(r.out, "nack-1 ", " nacked ", "clusters:synced endpoints:nacked");
	/* the NACK under its stream, each line of the message */
	xdt_has(r.out, "endpoints:nacked\n    endpoints NACKed at 20");
	xdt_has(r.out, ": endpoints rejected: \"port 1 is reserved\"\n      second line\n");
	/* what a client sent cannot drive the terminal */
	ck_assert_ptr_null(strchr(r.out, '\x1b'));
	ck_assert_ptr_null(strchr(r.out, '\x07'));
	xdt_has(r.out, "evil\\x1b[31m\\x1b]0;pwned\\x07 ");
	xdt_has(r.out, "\n3 of 3 streams\n");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--nacked", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "\nnack-1 ");
	xdt_lacks(r.out, "\nack-1 ");
	xdt_lacks(r.out, "evil");
	xdt_has(r.out, "\n1 of 3 streams\n");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"clients", "ack-*", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "\nack-1 ");
	xdt_lacks(r.out, "nack-1");
	xdt_has(r.out, "\n1 of 3 streams\n");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"--nacked", "clients", "ack-*", NULL});
	xdt_want(&r, 0);
	ck_assert_str_eq(r.out, "no streams match (of 3)\n");
	xdt_run_free(&r);

	/* --json: the endpoint's document, as the endpoint gives it */
	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--json", "--nacked", NULL});
	xdt_want(&r, 0);
	j = xdt_json_parse(r.out);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "count")), 1);
	mine = json_array_get(json_object_get(j, "clients"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(mine, "node"), "id")),
			 "nack-1");
	json_decref(j);
	body = xdt_admin(d, "GET", "/clients?state=nacked", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(r.out, body);
	free(body);
	xdt_run_free(&r);

	client_close(&ok);
	client_close(&bad);
	client_close(&evil);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

/* xdsctl clients --pending [--older AGE]: the streams whose response
 * waits for its answer (that long), not those in sync. */
START_TEST(clients_pending_and_older)
{
	char *dir = xdtest_snapdir(), *admin;
	struct xdt_daemon *d;
	struct client ok, slow;
	Envoy__Service__Discovery__V3__DiscoveryResponse *held;
	json_t *j, *mine;
	struct xdt_run r;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = xdt_ctl_start(dir, NULL);
	admin = xdt_ctl_admin(d);
	client_open(&ok, d->target, "ack-1", false);
	/* slow-1 takes the endpoints and never answers */
	slow.id = "slow-1";
	slow.conn = xdc_connect(d->target);
	slow.s = xdc_open(slow.conn, XDC_ADS);
	request(&slow, CDS_URL, NULL, NULL, NULL, NULL);
	answer(&slow, CDS_URL, NULL, NULL);
	request(&slow, EDS_URL, "svc", NULL, NULL, NULL);
	held = xdc_recv_sotw(slow.s, WAIT_MS);
	ck_assert_ptr_nonnull(held);
	wait_states(d, 1, 0);

	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--pending", NULL});
	xdt_want(&r, 0);
	row_has(r.out, "slow-1 ", " pending ", "clusters:synced endpoints:pending(");
	xdt_lacks(r.out, "ack-1");
	xdt_has(r.out, "\n1 of 2 streams\n");
	xdt_run_free(&r);

	xdtest_sleep_ms(1100);
	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--pending", "--older", "1s", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "\nslow-1 ");
	xdt_lacks(r.out, "ack-1");
	/* at least a second: "1s", "2s"..., never "0s" */
	xdt_lacks(r.out, "endpoints:pending(0s)");
	xdt_run_free(&r);
	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--pending", "--older", "1h", NULL});
	xdt_want(&r, 0);
	ck_assert_str_eq(r.out, "no streams match (of 2)\n");
	xdt_run_free(&r);
	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--json", "--pending", "--older", "500ms", NULL});
	xdt_want(&r, 0);
	j = xdt_json_parse(r.out);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "count")), 1);
	mine = json_array_get(json_object_get(j, "clients"), 0);
	ck_assert(json_integer_value(json_object_get(
			  json_array_get(json_object_get(mine, "types"), 1),
			  "pending_since")) > 1.7e12);
	json_decref(j);
	xdt_run_free(&r);

	/* once it ACKs, nothing is pending */
	request(&slow, EDS_URL, "svc", held->version_info, held->nonce, NULL);
	envoy__service__discovery__v3__discovery_response__free_unpacked(held, NULL);
	wait_states(d, 2, 0);
	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--pending", NULL});
	xdt_want(&r, 0);
	ck_assert_str_eq(r.out, "no streams match (of 2)\n");
	xdt_run_free(&r);

	client_close(&ok);
	client_close(&slow);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

/* Over mTLS each stream shows the identity its certificate proves: a
 * URI SAN, else a DNS SAN, else the subject's CN. */
START_TEST(clients_show_mtls_identities)
{
	static const struct {
		const char *node, *cert, *identity;
		bool nack;
	} who[] = {
		{"front-1", "frontend", "spiffe://example.org/ns/prod/sa/frontend", true},
		{"dns-1", "dnsonly", "envoy-1.example.org", false},
		{"cn-1", "cnonly", "envoy-cn", false},
	};
	char *dir = xdtest_snapdir(), *admin, *heads, *line, *ident, extra[3072], prefix[32];
	struct xdt_daemon *d;
	struct client c[3];
	struct xdt_run r;
	json_t *j, *list;
	int n;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	n = snprintf(extra, sizeof(extra), "tls:\n  cert: %s\n", xdtest_cert("server.pem"));
	snprintf(extra + n, sizeof(extra) - (size_t)n, "  key: %s\n  client_ca: %s\n",
		 xdtest_cert("server.key"), xdtest_cert("ca.pem"));
	d = xdt_ctl_start(dir, extra);
	admin = xdt_ctl_admin(d);
	for (int i = 0; i < 3; i++)
		client_open_as(&c[i], d->target, who[i].node, who[i].nack, who[i].cert);
	wait_states(d, 2, 1);

	r = xdt_ctl(true, admin, (const char *const[]){"clients", NULL});
	xdt_want(&r, 0);
	heads = line_of(r.out, "NODE ");
	ck_assert_msg(heads != NULL, "%s", r.out);
	for (int i = 0; i < 3; i++) {
		snprintf(prefix, sizeof(prefix), "%s ", who[i].node);
		line = line_of(r.out, prefix);
		ck_assert_msg(line != NULL, "no %s in:\n%s", who[i].node, r.out);
		ident = cell(heads, line, "IDENTITY");
		ck_assert_str_eq(ident, who[i].identity);
		free(ident);
		free(line);
	}
	free(heads);
	xdt_run_free(&r);

	/* --nacked keeps the column; --json has it as /clients does */
	r = xdt_ctl(false, admin, (const char *const[]){"clients", "--nacked", NULL});
	xdt_want(&r, 0);
	heads = line_of(r.out, "NODE ");
	line = line_of(r.out, "front-1 ");
	ck_assert_msg(heads != NULL && line != NULL, "%s", r.out);
	ident = cell(heads, line, "IDENTITY");
	ck_assert_str_eq(ident, who[0].identity);
	free(ident);
	free(line);
	free(heads);
	xdt_has(r.out, "\n1 of 3 streams\n");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"--json", "clients", "dns-*", NULL});
	xdt_want(&r, 0);
	j = xdt_json_parse(r.out);
	list = json_object_get(j, "clients");
	ck_assert_int_eq(json_array_size(list), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "identity")),
			 who[1].identity);
	json_decref(j);
	xdt_run_free(&r);

	for (int i = 0; i < 3; i++)
		client_close(&c[i]);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

START_TEST(dump_snapshot_type_name)
{
	char *dir = xdtest_snapdir(), *admin, *body;
	struct xdt_daemon *d;
	json_t *pretty, *raw;
	struct xdt_run r;
	int status;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = xdt_ctl_start(dir, NULL);
	admin = xdt_ctl_admin(d);

	r = xdt_ctl(true, admin, (const char *const[]){"dump", "default", "endpoints", "svc", NULL});
	xdt_want(&r, 0);
	/* indented, numbers as xdsd wrote them */
	ck_assert_msg(strncmp(r.out, "{\n  \"snapshot\": \"default\",\n", 27) == 0, "%s", r.out);
	xdt_has(r.out, "\n          \"line\": 7,\n");
	xdt_has(r.out, "\"port_value\": 8080\n");
	pretty = xdt_json_parse(r.out);
	body = xdt_admin(d, "GET", "/config_dump?snapshot=default&type=endpoints&name=svc",
			 NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	raw = xdt_json_parse(body);
	ck_assert(json_equal(pretty, raw));
	json_decref(pretty);
	json_decref(raw);
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"--json", "dump", "default", "endpoints", "svc", NULL});
	xdt_want(&r, 0);
	ck_assert_str_eq(r.out, body);
	free(body);
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"dump", "default", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "\"type\": \"clusters\"");
	xdt_has(r.out, "\"type\": \"endpoints\"");
	xdt_has(r.out, "\"connect_timeout\": \"1s\"");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"dump", "nope", NULL});
	xdt_want(&r, 1);
	ck_assert_str_eq(r.err, "xdsctl: no snapshot 'nope'; served: default\n");
	ck_assert_str_eq(r.out, "");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"dump", "default", "bogus", NULL});
	xdt_want(&r, 1);
	xdt_has(r.err, "type must be one of:");
	xdt_run_free(&r);

	/* the name travels percent-encoded and comes back whole */
	r = xdt_ctl(false, admin, (const char *const[]){"dump", "default", "clusters", "a b&name=svc#%", NULL});
	xdt_want(&r, 1);
	ck_assert_str_eq(r.err, "xdsctl: snapshot 'default' has no cluster named 'a b&name=svc#%'\n");
	xdt_run_free(&r);

	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

START_TEST(reload_ok_and_refused)
{
	char *dir = xdtest_snapdir(), *admin, want_err[1200];
	struct xdt_daemon *d;
	struct xdt_run r;
	json_t *j;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = xdt_ctl_start(dir, NULL);
	admin = xdt_ctl_admin(d);

	r = xdt_ctl(true, admin, (const char *const[]){"reload", NULL});
	xdt_want(&r, 0);
	ck_assert_msg(strncmp(r.out, "reload ok (admin, 20", 20) == 0, "%s", r.out);
	xdt_has(r.out, " s): 1 snapshot from 1 file, 0 changed\n");
	ck_assert_str_eq(r.err, "");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"reload", "--json", NULL});
	xdt_want(&r, 0);
	j = xdt_json_parse(r.out);
	ck_assert(json_is_true(json_object_get(j, "ok")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "trigger")), "admin");
	json_decref(j);
	xdt_run_free(&r);

	/* an unknown section on line 3: refused, with file:line */
	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n- {name: a, type: STATIC, connect_timeout: 1s}\n"
			       "bogus_section: []\n"));
	r = xdt_ctl(true, admin, (const char *const[]){"reload", NULL});
	xdt_want(&r, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strncmp(r.err, "reload refused (admin, 20", 25) == 0, "%s", r.err);
	xdt_has(r.err, " s): 1 error; the previous snapshots are still served\n");
	snprintf(want_err, sizeof(want_err), "\n  %s/default.yaml:3:", dir);
	xdt_has(r.err, want_err);
	xdt_has(r.err, "bogus_section");
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"--json", "reload", NULL});
	xdt_want(&r, 1);
	j = xdt_json_parse(r.out);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "error_count")), 1);
	json_decref(j);
	xdt_run_free(&r);

	/* the previous snapshot is still what is served */
	r = xdt_ctl(false, admin, (const char *const[]){"dump", "default", "endpoints", "svc", NULL});
	xdt_want(&r, 0);
	xdt_run_free(&r);

	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

START_TEST(status_at_a_glance)
{
	char *dir = xdtest_snapdir(), *admin, *line, want_err[1200];
	struct xdt_daemon *d;
	struct client ok, bad;
	struct xdt_run r;
	json_t *j, *snap;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = xdt_ctl_start(dir, NULL);
	admin = xdt_ctl_admin(d);
	client_open(&ok, d->target, "ack-1", false);
	client_open(&bad, d->target, "nack-1", true);
	wait_states(d, 1, 1);
	/* a refused reload: status shows it last, with its error */
	free(xdtest_write_file(dir, "broken.yaml", "clusters:\n- {name: b}\nnope: 1\n"));
	r = xdt_ctl(false, admin, (const char *const[]){"reload", NULL});
	xdt_want(&r, 1);
	xdt_run_free(&r);

	/* the whole page, and exit status 1: the last reload was refused */
	r = xdt_ctl(true, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 1);
	snprintf(want_err, sizeof(want_err),
		 "xdsctl: the last reload of xdsd at %s was refused; it serves the previous snapshots\n",
		 admin);
	ck_assert_str_eq(r.err, want_err);
	ck_assert_msg(strncmp(r.out, "xdsd:      ", 11) == 0, "%s", r.out);
	line = line_of(r.out, "xdsd: ");
	ck_assert_msg(line != NULL && strstr(line, ", ready") != NULL, "%s", r.out);
	free(line);
	xdt_has(r.out, "\nadmin:     127.0.0.1:");
	xdt_has(r.out, "\nlisten:    127.0.0.1:0\n");
	xdt_has(r.out, "\nstarted:   20");
	xdt_has(r.out, "\nstreams:   2 from 2 nodes: 1 synced, 0 pending, 1 nacked\n");
	xdt_has(r.out, "\nreloads:   0 ok, 1 failed\n");
	xdt_has(r.out, "\nSNAPSHOT  VERSION ");
	line = line_of(r.out, "default ");
	ck_assert_msg(line != NULL, "%s", r.out);
	xdt_has(line, " B  clusters 1, endpoints 1");
	free(line);
	xdt_has(r.out, "\nlast reload:\n  reload refused (admin, 20");
	snprintf(want_err, sizeof(want_err), "\n    %s/broken.yaml:3:", dir);
	xdt_has(r.out, want_err);
	xdt_run_free(&r);

	r = xdt_ctl(false, admin, (const char *const[]){"status", "--json", NULL});
	xdt_want(&r, 1);
	j = xdt_json_parse(r.out);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "streams")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "clients"), "nacked")), 1);
	snap = json_array_get(json_object_get(j, "snapshots"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(snap, "key")), "default");
	ck_assert(json_is_false(json_object_get(
		json_array_get(json_object_get(json_object_get(j, "reloads"), "history"), 0),
		"ok")));
	json_decref(j);
	xdt_run_free(&r);

	/* a reload that succeeds clears it: NACKing clients do not */
	snprintf(want_err, sizeof(want_err), "%s/broken.yaml", dir);
	ck_assert(unlink(want_err) == 0);
	r = xdt_ctl(false, admin, (const char *const[]){"reload", NULL});
	xdt_want(&r, 0);
	xdt_run_free(&r);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 0);
	ck_assert_str_eq(r.err, "");
	xdt_has(r.out, "\nreloads:   1 ok, 1 failed\n");
	xdt_has(r.out, "\nlast reload:\n  reload ok (admin, 20");
	xdt_run_free(&r);

	client_close(&ok);
	client_close(&bad);
	xdt_ctl_stop(d);
	free(admin);
	free(dir);
}
END_TEST

/* `doc` (xdsd's /status.json) with "ready" set to `ready`, written to
 * DIR/status.json for serve_dir. */
static void write_status(const char *dir, json_t *doc, bool ready)
{
	char *text;

	json_object_set_new(doc, "ready", json_boolean(ready));
	text = json_dumps(doc, JSON_COMPACT);
	ck_assert(text != NULL);
	free(xdtest_write_file(dir, "status.json", text));
	free(text);
}

/*
 * The exit status says whether xdsd serves: 0 serving and healthy, 1
 * serving but degraded (here: its etcd source not watching, as in an
 * etcd outage, which must not take every replica out of a balancer at
 * once), 4 serving nothing (starting or stopping), whatever else is
 * wrong. xdsd's own /status.json, its "ready" and "source" changed, is
 * served as a file; xdsctl reads it as it would xdsd's (an etcd source
 * and a stopping xdsd are shown against the real daemon in
 * check_health).
 */
START_TEST(status_exit_tells_serving_degraded_not_serving)
{
	char *dir = xdtest_snapdir(), *body, admin[64], want_err[512], src_err[256];
	struct xdt_daemon *d;
	json_t *doc;
	struct xdt_run r;
	int status, port = dead_port();
	pid_t pid;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	d = xdt_ctl_start(dir, NULL);
	body = xdt_admin(d, "GET", "/status.json", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	doc = xdt_json_parse(body);
	free(body);
	xdt_ctl_stop(d);
	ck_assert(json_is_true(json_object_get(doc, "ready")));

	snprintf(admin, sizeof(admin), "127.0.0.1:%d", port);
	write_status(dir, doc, true);
	pid = serve_dir(dir, port);
	r = ctl_when_up(admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, ", ready\n");
	xdt_run_free(&r);

	write_status(dir, doc, false);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 4);
	xdt_has(r.out, ", not ready, serving nothing (starting or stopping)\n");
	xdt_has(r.out, "\nSNAPSHOT ");
	snprintf(want_err, sizeof(want_err),
		 "xdsctl: xdsd at %s is not serving (starting, before its first load, or stopping)\n",
		 admin);
	ck_assert_str_eq(r.err, want_err);
	xdt_run_free(&r);
	r = xdt_ctl(false, admin, (const char *const[]){"--json", "status", NULL});
	xdt_want(&r, 4);
	ck_assert_str_eq(r.err, want_err);
	json_decref(xdt_json_parse(r.out));
	xdt_run_free(&r);

	/* serving from an etcd that does not answer: degraded, not out */
	json_object_set_new(doc, "source",
			    json_pack("{s:s, s:s, s:s, s:i, s:b, s:s, s:i}", "kind",
				      "etcd", "endpoint", "127.0.0.1:2379", "prefix",
				      "/xdsd/", "revision", 7, "healthy", 0, "since",
				      "2026-01-01T00:00:00.000Z", "reconnects", 3));
	write_status(dir, doc, true);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 1);
	xdt_has(r.out, ", ready\n");
	xdt_has(r.out, "revision 7, NOT WATCHING since ");
	snprintf(src_err, sizeof(src_err),
		 "xdsctl: the etcd source of xdsd at %s is not watching; it serves what it read last\n",
		 admin);
	ck_assert_str_eq(r.err, src_err);
	xdt_run_free(&r);

	/* and not serving outranks it, both said */
	write_status(dir, doc, false);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 4);
	xdt_has(r.err, src_err);
	xdt_has(r.err, want_err);
	xdt_run_free(&r);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	json_decref(doc);
	free(dir);
}
END_TEST

START_TEST(unix_socket_admin)
{
	char *dir = xdtest_snapdir(), extra[1200], target[1200];
	struct xdt_daemon *d;
	struct xdt_run r;

	xdtest_write_svc_snapshot(dir, 8080, NULL);
	snprintf(extra, sizeof(extra), "admin_listen: unix:%s/admin.sock\n", dir);
	snprintf(target, sizeof(target), "unix:%s/admin.sock", dir);
	d = xdt_ctl_start(dir, extra);

	r = xdt_ctl(false, NULL, (const char *const[]){"--admin", target, "clients", NULL});
	xdt_want(&r, 0);
	ck_assert_str_eq(r.out, "no streams (of 0)\n");
	xdt_run_free(&r);
	r = xdt_ctl(false, target, (const char *const[]){"reload", NULL});
	xdt_want(&r, 0);
	xdt_has(r.out, "reload ok (admin, ");
	xdt_run_free(&r);
	xdt_ctl_stop(d);

	/* gone: the path is named, exit 3 */
	r = xdt_ctl(false, target, (const char *const[]){"clients", NULL});
	xdt_want(&r, 3);
	xdt_has(r.err, "cannot connect to unix:");
	xdt_has(r.err, "No such file or directory (is xdsd running?");
	xdt_run_free(&r);
	free(dir);
}
END_TEST

/* Serving the last good state (state_dir) in place of refused
 * snapshots: said, and exit status 1 until a reload accepts them. */
START_TEST(status_last_good_state)
{
	char *dir = xdtest_clusters_snapdir(1), *state = xdtest_snapdir(),
	     *admin, extra[512], want_err[256], want_out[512];
	struct xdt_daemon *d;
	struct xdt_run r;

	snprintf(extra, sizeof(extra), "state_dir: %s\nadmin_listen: 127.0.0.1:0\n", state);
	d = xdt_ctl_start(dir, extra);
	ck_assert(xdt_daemon_wait_log(d, "saved the last good state", 5000));
	xdt_ctl_stop(d);
	free(xdtest_write_file(dir, "default.yaml", "clusters:\n- {name: b, type: EDS}\n"));
	d = xdt_ctl_start(dir, extra);
	admin = xdt_ctl_admin(d);
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 1);
	xdt_has(r.out, "\nLAST GOOD: SERVING the state saved 20");
	snprintf(want_out, sizeof(want_out), "(%s/snapshots.state): the snapshots were refused at start, 1 error\n",
		 state);
	xdt_has(r.out, want_out);
	snprintf(want_err, sizeof(want_err),
		 "xdsctl: xdsd at %s serves its last good state: its snapshots were refused at start\n",
		 admin);
	xdt_has(r.err, want_err);
	xdt_run_free(&r);

	xdtest_write_clusters(dir, "default.yaml", "fixed", 1);
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "no longer serving the last good state", 5000));
	r = xdt_ctl(false, admin, (const char *const[]){"status", NULL});
	xdt_want(&r, 0);
	xdt_lacks(r.out, "LAST GOOD");
	snprintf(want_out, sizeof(want_out), "\nstate:     %s/snapshots.state, saved 20", state);
	xdt_has(r.out, want_out);
	xdt_run_free(&r);
	xdt_ctl_stop(d);
	free(admin);
	free(state);
	free(dir);
}
END_TEST

/* What answers in xdsd's place may send numbers no field holds: a real
 * far out of any integer's range, the most negative integer, a string
 * or a list where a count goes, and counts whose sum overflows. Each
 * is shown clamped to +-LLONG_MAX (or 0 for what is not a number),
 * never converted or summed out of range (undefined; the sanitizer
 * build reports it). */
#define HUGE_TEXT "9223372036854775807"

/* A 200 answer carrying `json` (malloc'd). */
static char *json_answer(const char *json)
{
	char *a;

	ck_assert(asprintf(&a, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			   "Content-Length: %zu\r\n\r\n%s", strlen(json), json) > 0);
	return a;
}

START_TEST(hostile_numbers_are_clamped)
{
	static const char status[] =
		"{\"version\": \"x\", \"ready\": true, \"listen\": \"l\", \"started\": \"s\","
		" \"uptime_seconds\": 1e300, \"streams\": 1e300, \"nodes\": -1e300,"
		" \"clients\": {\"synced\": \"many\", \"pending\": [1], \"nacked\": -9223372036854775808},"
		" \"reloads\": {\"ok\": 1.9, \"failed\": null, \"history\": []},"
		" \"tls\": {\"mutual\": true, \"handshake_failures\": 1e19,"
		"  \"certificate\": {\"subject\": \"s\", \"not_after\": \"t\","
		"   \"expires_in_seconds\": -1e300}},"
		" \"snapshots\": [{\"key\": \"k\", \"version\": \"v\", \"since\": \"s\","
		"  \"bytes\": 1e300, \"resources\": {\"clusters\": 1e300}}]}\n";
	static const char reload[] =
		"{\"ok\": true, \"trigger\": \"admin\", \"finished\": \"f\", \"seconds\": 1,"
		" \"snapshots\": 1e300, \"files\": -1e300, \"changed\": 1,"
		" \"diff\": {\"snapshots\": [{\"key\": \"k\", \"change\": \"changed\","
		"  \"types\": [{\"added\": 9000000000000000000, \"removed\": -9223372036854775808},"
		"   {\"added\": 9000000000000000000, \"removed\": -1e300}]}]}}\n";
	char *answer = json_answer(status);
	struct scripted sv = script_serve((const char *const[]){answer, NULL}, false);
	struct xdt_run r = xdt_ctl(true, sv.admin, (const char *const[]){"status", NULL});
	char *line;

	free(script_end(&sv));
	xdt_want(&r, 0);
	xdt_has(r.out, "\nstreams:   " HUGE_TEXT " from -" HUGE_TEXT
		       " nodes: 0 synced, 0 pending, -" HUGE_TEXT " nacked\n");
	xdt_has(r.out, "\nreloads:   1 ok, 0 failed\n");
	xdt_has(r.out, ", " HUGE_TEXT " failed handshakes\n");
	xdt_has(r.out, " certificate s EXPIRED on t (106751991167300d 15h ago)\n");
	xdt_has(r.out, "(up 106751991167300d 15h)\n");
	line = line_of(r.out, "k ");
	ck_assert_msg(line != NULL, "%s", r.out);
	xdt_has(line, "  clusters " HUGE_TEXT);
	free(line);
	xdt_run_free(&r);

	free(answer);
	answer = json_answer(reload);
	sv = script_serve((const char *const[]){answer, NULL}, false);
	r = xdt_ctl(true, sv.admin, (const char *const[]){"reload", NULL});
	free(script_end(&sv));
	free(answer);
	xdt_want(&r, 0);
	xdt_has(r.out, "reload ok (admin, f, 1.000 s): " HUGE_TEXT " snapshots from -"
		       HUGE_TEXT " files, 1 changed\n");
	xdt_has(r.out, "  snapshot 'k' changed: " HUGE_TEXT " resources added, -"
		       HUGE_TEXT " removed, 0 changed\n");
	xdt_run_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xdsctl");
	TCase *tc = tcase_create("xdsctl");

	xdtest_make_certs();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, usage_errors_exit_2);
	tcase_add_test(tc, unreachable_exits_3);
	tcase_add_test(tc, not_xdsd_exits_3);
	tcase_add_test(tc, clients_table_and_filters);
	tcase_add_test(tc, clients_pending_and_older);
	tcase_add_test(tc, clients_show_mtls_identities);
	tcase_add_test(tc, dump_snapshot_type_name);
	tcase_add_test(tc, reload_ok_and_refused);
	tcase_add_test(tc, status_at_a_glance);
	tcase_add_test(tc, status_exit_tells_serving_degraded_not_serving);
	tcase_add_test(tc, status_last_good_state);
	tcase_add_test(tc, unix_socket_admin);
	suite_add_tcase(s, tc);
	tc = tcase_create("client");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, interim_answer_then_chunks);
	tcase_add_test(tc, announced_length_over_the_bound);
	tcase_add_test(tc, endless_answer_stops_at_the_bound);
	tcase_add_test(tc, hostile_numbers_are_clamped);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
