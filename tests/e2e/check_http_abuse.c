/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admin endpoint and REST-JSON against hostile HTTP peers, over real
 * sockets on loopback, against the real daemon: what one connection (or
 * one address) can do to the daemon must stay within its own share.
 *
 * Each case is an attack that once worked: a pipelined byte after a
 * closing request, requests pipelined behind a long poll, pipelined
 * reloads, answers never read, one packet of expensive requests,
 * request heads never finished, and pages read or reloads posted from a
 * foreign web origin. After each, the daemon must still answer others
 * and stop cleanly on SIGTERM. What is asserted is what was served and
 * counted, never how fast: how long others wait meanwhile is a figure
 * of bench/served-meanwhile.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "xdtest.h"

#define START_MS 60000
#define STOP_MS 10000
/* The longest an answer that must come is waited for: a deadline
 * against hanging, not a claim of how soon it comes (a loaded machine
 * may take seconds). */
#define ANSWER_MS 30000

/* ---------------- sockets ---------------- */

/* A connection to 127.0.0.1:port from `src` (NULL: the kernel's pick),
 * or -1. */
static int dial(const char *src, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (src != NULL) {
		struct sockaddr_in me = {.sin_family = AF_INET};

		inet_pton(AF_INET, src, &me.sin_addr);
		if (bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0) {
			close(fd);
			return -1;
		}
	}
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void send_text(int fd, const char *text)
{
	size_t len = strlen(text), off = 0;

	while (off < len) {
		ssize_t n = send(fd, text + off, len - off, MSG_NOSIGNAL);

		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		off += (size_t)n;
	}
}

/* Reads until the peer closes, `want` answers have come (counted by
 * their status lines; 0: any number) or `timeout_ms` pass without a
 * byte. NUL-terminated, malloc'd. */
static char *read_answers(int fd, int want, int timeout_ms, size_t *len)
{
	size_t cap = 65536, n = 0, scanned = 0;
	char *buf = malloc(cap);
	int seen = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t got;

		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		if (cap - n < 65536) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		got = recv(fd, buf + n, cap - n - 1, 0);
		if (got <= 0)
			break;
		n += (size_t)got;
		/* status lines so far, one split across reads included */
		for (; scanned + 9 <= n; scanned++)
			if (memcmp(buf + scanned, "HTTP/1.1 ", 9) == 0 &&
			    (scanned == 0 || buf[scanned - 1] == '\n'))
				seen++;
		if (want > 0 && seen >= want)
			break;
	}
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

/* Sends all of `data`, waiting up to `timeout_ms` for room each time;
 * false if none came. */
static bool send_within(int fd, const char *data, size_t len, int timeout_ms)
{
	size_t off = 0;

	while (off < len) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			return false;
		n = send(fd, data + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		off += (size_t)n;
	}
	return true;
}

/* Status lines in `text`. */
static int count_answers(const char *text, size_t len, const char *status)
{
	int count = 0;
	size_t slen = strlen(status);

	for (size_t i = 0; i + slen <= len; i++)
		if ((i == 0 || text[i - 1] == '\n') &&
		    memcmp(text + i, status, slen) == 0)
			count++;
	return count;
}

/* One GET on a new connection from 127.0.0.1; its status, or -1 when
 * nothing came within `timeout_ms`. The time it took in *ms. */
static int probe(int port, const char *request, int timeout_ms, long long *ms)
{
	long long t0 = xdtest_now_ms();
	int fd = dial(NULL, port), status = -1;
	char *out;

	if (fd < 0)
		return -1;
	send_text(fd, request);
	out = read_answers(fd, 1, timeout_ms, NULL);
	if (strncmp(out, "HTTP/1.1 ", 9) == 0)
		status = atoi(out + 9);
	free(out);
	close(fd);
	if (ms != NULL)
		*ms = xdtest_now_ms() - t0;
	return status;
}

#define HEALTHZ "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

/* /healthz is answered 200 on a new connection. */
static void assert_healthy(const struct xdt_daemon *d)
{
	long long ms;
	int status = probe(d->admin_port, HEALTHZ, ANSWER_MS, &ms);

	ck_assert_msg(status == 200, "/healthz: status %d after %lld ms", status, ms);
}

/* The value of one sample of /metrics ("name{labels}" as written), or
 * -1 when absent, asked from `src` (NULL: the kernel's pick). */
static double metric_from(const struct xdt_daemon *d, const char *src,
			  const char *series)
{
	int fd = dial(src, d->admin_port);
	char *out;
	double v;

	ck_assert(fd >= 0);
	send_text(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
	out = read_answers(fd, 0, 10000, NULL);
	close(fd);
	v = xdt_metrics_sample(out, series);
	free(out);
	return v;
}

static double metric(const struct xdt_daemon *d, const char *series)
{
	return metric_from(d, NULL, series);
}

static void raise_fd_limit(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* ---------------- the daemon ---------------- */

static struct xdt_daemon *start(const char *dir, const char *extra)
{
	char cfg[2048];
	struct xdt_daemon *d;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nrest_listen: 127.0.0.1:0\nsnapshots: %s\n%s",
		 dir, extra != NULL ? extra : "");
	d = xdt_daemon_start(cfg, NULL, START_MS);
	ck_assert_msg(d->admin_port > 0 && d->rest_port > 0,
		      "no admin or REST port in the log");
	return d;
}

/* SIGTERM ends it cleanly and at once: a spinning or crashed loop
 * would not. */
static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert_msg(xdt_daemon_wait(d, STOP_MS), "xdsd did not stop on SIGTERM");
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* A REST request for every cluster, as node "n1" of cluster "c1",
 * holding `version` (NULL: none). */
static void rest_request(char *out, size_t cap, const char *version,
			 const char *extra_headers)
{
	char body[256];

	snprintf(body, sizeof(body),
		 "{\"node\": {\"id\": \"n1\", \"cluster\": \"c1\"}%s%s%s}",
		 version ? ", \"versionInfo\": \"" : "", version ? version : "",
		 version ? "\"" : "");
	snprintf(out, cap,
		 "POST /v3/discovery:clusters HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Content-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n%s",
		 extra_headers ? extra_headers : "", strlen(body), body);
}

/* The version REST serves clusters at now. malloc'd. */
static char *rest_version(const struct xdt_daemon *d)
{
	char req[1024], *out, *body, *v;
	int fd = dial(NULL, d->rest_port);
	json_t *j;

	ck_assert(fd >= 0);
	rest_request(req, sizeof(req), NULL, "Connection: close\r\n");
	send_text(fd, req);
	out = read_answers(fd, 0, 10000, NULL);
	close(fd);
	ck_assert_msg(strncmp(out, "HTTP/1.1 200 ", 13) == 0, "REST: '%.300s'", out);
	body = strstr(out, "\r\n\r\n");
	ck_assert(body != NULL);
	j = json_loads(body + 4, 0, NULL);
	ck_assert(j != NULL);
	v = strdup(json_string_value(json_object_get(j, "versionInfo")));
	json_decref(j);
	free(out);
	return v;
}

/* ---------------- the attacks ---------------- */

/*
 * A request that ends its connection (Connection: close, or HTTP/1.0
 * without keep-alive) with one more byte behind it in the same packet:
 * the answer, the close, and nothing else happens to the daemon.
 */
START_TEST(byte_after_closing_request)
{
	static const char *const admin_attacks[] = {
		"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\nX",
		"GET /healthz HTTP/1.0\r\n\r\nX",
	};
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, NULL);
	char rest[1024];

	for (size_t i = 0; i < 2; i++) {
		int fd = dial(NULL, d->admin_port);
		char *out;

		ck_assert(fd >= 0);
		send_text(fd, admin_attacks[i]);
		out = read_answers(fd, 0, 5000, NULL);
		ck_assert_msg(strstr(out, " 200 ") != NULL, "the answer: '%.200s'", out);
		free(out);
		close(fd);
		assert_healthy(d);
	}
	{
		int fd = dial(NULL, d->rest_port);
		char *out;

		ck_assert(fd >= 0);
		rest_request(rest, sizeof(rest) - 2, NULL, "Connection: close\r\n");
		strcat(rest, "X");
		send_text(fd, rest);
		out = read_answers(fd, 0, 5000, NULL);
		ck_assert_msg(strncmp(out, "HTTP/1.1 200 ", 13) == 0, "REST: '%.200s'", out);
		free(out);
		close(fd);
		assert_healthy(d);
	}
	stop(d);
	free(dir);
}
END_TEST

/*
 * Megabytes of requests pipelined behind a held long poll: when the poll
 * is answered, each waiting request is answered in its turn, in order,
 * and the daemon does not go one level deeper for each.
 */
START_TEST(pipeline_behind_long_poll)
{
	static const char next[] = "GET /x HTTP/1.1\r\n\r\n";
	char *dir = xdtest_clusters_snapdir(3);
	/* no request rate limit: what is tried here is the depth */
	struct xdt_daemon *d = start(dir, "rest_poll_timeout: 3s\nmax_requests_per_second: 0\n");
	char *version = rest_version(d), held[1024], *out;
	size_t sent = 0, len;
	long long t0;
	int fd = dial(NULL, d->rest_port), answers;
	char chunk[64 * sizeof(next)];

	ck_assert(fd >= 0);
	rest_request(held, sizeof(held), version, NULL);
	send_text(fd, held);
	for (size_t i = 0; i < 64; i++)
		memcpy(chunk + i * (sizeof(next) - 1), next, sizeof(next) - 1);
	/* push whole requests: the first 1024 whatever it takes (the
	 * socket buffers alone hold them), then more for up to 2 s or
	 * 4 MiB, whichever comes first; a request begun is finished,
	 * however long that takes. The 2 s only bounds how much is tried:
	 * every request that went out must be answered, however many. */
	for (; sent < 1024; sent += 64)
		ck_assert_msg(send_within(fd, chunk, sizeof(chunk) - 64, 30000),
			      "only %zu requests went out in 30 s", sent);
	t0 = xdtest_now_ms();
	while (sent * (sizeof(next) - 1) < 4u << 20 && xdtest_now_ms() - t0 < 2000) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};

		if (poll(&p, 1, 100) != 1)
			continue;
		ck_assert(send_within(fd, chunk, sizeof(chunk) - 64, 30000));
		sent += 64;
	}
	/* the poll ends at rest_poll_timeout; then every request behind it */
	out = read_answers(fd, (int)sent + 1, 20000, &len);
	answers = count_answers(out, len, "HTTP/1.1 404 ");
	ck_assert_msg(strncmp(out, "HTTP/1.1 200 ", 13) == 0,
		      "the poll's answer: '%.200s'", out);
	ck_assert_msg(answers == (int)sent, "%d answers to %zu pipelined requests",
		      answers, sent);
	free(out);
	close(fd);
	assert_healthy(d);
	stop(d);
	free(version);
	free(dir);
}
END_TEST

#define RELOAD "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n"

/*
 * Two reloads pipelined on one connection, a third on another and a
 * SIGHUP, all while the first runs: each is answered once, in order,
 * and the daemon lives.
 */
START_TEST(pipelined_reloads)
{
	char *dir = xdtest_clusters_snapdir(3000);
	struct xdt_daemon *d = start(dir, NULL);

	for (int round = 0; round < 10; round++) {
		int a = dial(NULL, d->admin_port), b = dial(NULL, d->admin_port);
		char *out;
		size_t len;

		ck_assert(a >= 0 && b >= 0);
		send_text(a, RELOAD RELOAD);
		send_text(b, RELOAD);
		xdt_daemon_signal(d, SIGHUP);
		out = read_answers(a, 2, 20000, &len);
		ck_assert_msg(count_answers(out, len, "HTTP/1.1 200 ") == 2,
			      "round %d, connection a: '%.400s'", round, out);
		free(out);
		out = read_answers(b, 1, 20000, &len);
		ck_assert_msg(count_answers(out, len, "HTTP/1.1 200 ") == 1,
			      "round %d, connection b: '%.400s'", round, out);
		free(out);
		close(a);
		close(b);
	}
	assert_healthy(d);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A client that pipelines requests for a large page and never reads
 * the answers: what the daemon holds for it stays bounded (reading
 * stops while answers wait), however many it asks for.
 */
START_TEST(unread_answers_bounded)
{
	static const char dump[] = "GET /config_dump HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	char *dir = xdtest_clusters_snapdir(2000);
	struct xdt_daemon *d = start(dir, NULL);
	int fd = dial(NULL, d->admin_port), rcv = 4096;
	long before, after, page;
	double handled;
	long long ms;
	char *out;
	size_t len;

	/* one answer's size */
	ck_assert(fd >= 0);
	send_text(fd, "GET /config_dump HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
	out = read_answers(fd, 0, 10000, &len);
	ck_assert_msg(strncmp(out, "HTTP/1.1 200 ", 13) == 0, "'%.200s'", out);
	page = (long)len / 1024;
	ck_assert_msg(page > 100, "config_dump is only %ld KiB", page);
	free(out);
	close(fd);
	before = xdt_daemon_rss_kb(d);

	/* a small receive window, as a client that reads nothing */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	{
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)d->admin_port)};

		inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
		ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	}
	{
		int flags = fcntl(fd, F_GETFL);
		int n = 0;
		long long t0 = xdtest_now_ms();

		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
		while (n < 600 && xdtest_now_ms() - t0 < 5000) {
			if (send(fd, dump, sizeof(dump) - 1, MSG_NOSIGNAL) ==
			    (ssize_t)sizeof(dump) - 1)
				n++;
			else
				xdtest_sleep_ms(10);
		}
	}
	xdtest_sleep_ms(2000);
	after = xdt_daemon_rss_kb(d);
	/* the requests behind an unsent answer are not even read: a few
	 * answers made, not hundreds (the first page and /metrics count) */
	handled = metric(d, "xdsd_http_requests_total{endpoint=\"admin\"}");
	ck_assert_msg(handled >= 2 && handled < 20,
		      "%g of 600 pipelined requests handled while none was read",
		      handled);
	/* and so RSS stays within a few answers; AddressSanitizer keeps
	 * what is freed resident (its quarantine), so there the bound is
	 * the quarantine's */
	ck_assert_msg(after - before < (xdt_daemon_has_asan(d) ? 262144 : 8 * page + 16384),
		      "RSS grew from %ld to %ld kB for answers of %ld KiB",
		      before, after, page);
	ck_assert_msg(probe(d->admin_port, HEALTHZ, ANSWER_MS, &ms) == 200,
		      "/healthz while a client does not read");
	close(fd);
	stop(d);
	free(dir);
}
END_TEST

/*
 * One packet of pipelined REST requests for every cluster of a large
 * snapshot: the answer is made once and shared (counted: one printed
 * for them all), and the daemon answers others meanwhile. (How long
 * /healthz waits meanwhile is bench/served-meanwhile's figure.)
 */
START_TEST(one_packet_of_rest_requests)
{
	char *dir = xdtest_clusters_snapdir(20000);
	struct xdt_daemon *d = start(dir, NULL);
	char one[1024], packet[8192] = "";
	int fd, count = 0;
	size_t len;
	char *out;

	/* one answer alone, printed: the one the packet's share */
	free(rest_version(d));
	rest_request(one, sizeof(one), NULL, NULL);
	while (strlen(packet) + strlen(one) < 4096) {
		strcat(packet, one);
		count++;
	}
	fd = dial(NULL, d->rest_port);
	ck_assert(fd >= 0);
	send_text(fd, packet);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(probe(d->admin_port, HEALTHZ, ANSWER_MS, NULL), 200);
		xdtest_sleep_ms(100);
	}
	out = read_answers(fd, count, 60000, &len);
	ck_assert_int_eq(count_answers(out, len, "HTTP/1.1 200 "), count);
	free(out);
	close(fd);
	/* every answer but the first shared its JSON */
	ck_assert_msg(metric(d, "xdsd_rest_answers_printed_total") == 1,
		      "%g answers printed for %d requests in one state",
		      metric(d, "xdsd_rest_answers_printed_total"), count + 1);
	ck_assert(metric(d, "xdsd_rest_responses_total{type=\"clusters\"}") == count + 1);
	stop(d);
	free(dir);
}
END_TEST

/* Connections from `src` that start a request head and add a byte now
 * and then, never finishing it. */
struct slow {
	int fd[1200];
	int n;
};

static void slow_open(struct slow *s, const char *src, int port, int want)
{
	s->n = 0;
	for (int i = 0; i < want; i++) {
		int fd = dial(src, port);

		if (fd < 0)
			break;
		send(fd, "GET /healthz HTTP/1.1\r\nX-Slow: ", 31, MSG_NOSIGNAL);
		s->fd[s->n++] = fd;
	}
}

/* Adds a byte to every head; returns how many the daemon closed. */
static int slow_drip(struct slow *s)
{
	int closed = 0;

	for (int i = 0; i < s->n; i++) {
		struct pollfd p = {.fd = s->fd[i], .events = POLLIN};
		char c;

		if (s->fd[i] < 0) {
			closed++;
			continue;
		}
		if ((poll(&p, 1, 0) == 1 && recv(s->fd[i], &c, 1, MSG_DONTWAIT) <= 0) ||
		    send(s->fd[i], "a", 1, MSG_NOSIGNAL) != 1) {
			close(s->fd[i]);
			s->fd[i] = -1;
			closed++;
		}
	}
	return closed;
}

static void slow_close(struct slow *s)
{
	for (int i = 0; i < s->n; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
}

/*
 * Slowloris: one address opens every connection it can to the admin and
 * REST ports and never finishes a request head. Other addresses are
 * still served throughout, and the unfinished heads are closed once
 * http_header_timeout passes, although a byte comes every 500 ms.
 */
START_TEST(slow_heads)
{
	static struct slow admin, rest;
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, "http_header_timeout: 2s\n");
	char req[1024];
	long long t0;
	int closed_admin = 0, closed_rest = 0;

	raise_fd_limit();
	slow_open(&admin, "127.0.0.2", d->admin_port, 100);
	slow_open(&rest, "127.0.0.2", d->rest_port, 1100);
	rest_request(req, sizeof(req), NULL, "Connection: close\r\n");
	/* until every unfinished head is closed (a deadline of 30 times
	 * http_header_timeout, only against hanging), others served at
	 * each round */
	t0 = xdtest_now_ms();
	do {
		long long ms;
		int status;

		status = probe(d->admin_port, HEALTHZ, ANSWER_MS, &ms);
		ck_assert_msg(status == 200, "admin /healthz under slowloris: %d after %lld ms",
			      status, ms);
		status = probe(d->rest_port, req, ANSWER_MS, &ms);
		ck_assert_msg(status == 200, "REST under slowloris: %d after %lld ms",
			      status, ms);
		closed_admin = slow_drip(&admin);
		closed_rest = slow_drip(&rest);
		if (closed_admin == admin.n && closed_rest == rest.n)
			break;
		xdtest_sleep_ms(500);
	} while (xdtest_now_ms() - t0 < 60000);
	ck_assert_msg(closed_admin == admin.n && closed_rest == rest.n,
		      "after 60 s, %d of %d admin and %d of %d REST unfinished heads are still open",
		      admin.n - closed_admin, admin.n, rest.n - closed_rest, rest.n);
	/* counted, and logged with the peer */
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"header_timeout\"}") > 0);
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"admin\",reason=\"header_timeout\"}") > 0);
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"per_address\"}") > 0);
	ck_assert(xdt_daemon_wait_log(d, "from 127.0.0.2", 1000));
	ck_assert(xdt_daemon_wait_log(d, "(http_header_timeout)", 1000));
	slow_close(&admin);
	slow_close(&rest);
	assert_healthy(d);
	stop(d);
	free(dir);
}
END_TEST

/* What a request for `path` with these headers gets on the admin port. */
static int admin_status(const struct xdt_daemon *d, const char *method,
			const char *path, const char *headers)
{
	char req[1024];

	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n",
		 method, path, headers);
	return probe(d->admin_port, req, 10000, NULL);
}

/*
 * The admin endpoint answers only requests meant for it: a Host that is
 * not its own (DNS rebinding) is refused, so is a cross-origin request,
 * and POST /reload wants what a form cannot send (a JSON content type).
 */
START_TEST(admin_refuses_foreign_web_pages)
{
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, "admin_hosts: [xds-admin.example.internal]\n");
	char own[128], log_line[128];

	snprintf(own, sizeof(own), "Host: 127.0.0.1:%d\r\n", d->admin_port);
	ck_assert_int_eq(admin_status(d, "GET", "/status.json", own), 200);
	ck_assert_int_eq(admin_status(d, "GET", "/status.json", "Host: localhost\r\n"), 200);
	ck_assert_int_eq(admin_status(d, "GET", "/clients", "Host: localhost:1234\r\n"), 200);
	ck_assert_int_eq(admin_status(d, "GET", "/config_dump",
				      "Host: xds-admin.example.internal\r\n"), 200);
	/* DNS rebinding: a name the attacker owns, now pointing here */
	ck_assert_int_eq(admin_status(d, "GET", "/config_dump", "Host: evil.example\r\n"), 403);
	ck_assert_int_eq(admin_status(d, "GET", "/clients", "Host: evil.example:18080\r\n"), 403);
	/* cross-site requests */
	ck_assert_int_eq(admin_status(d, "GET", "/status.json",
				      "Host: localhost\r\nOrigin: http://evil.example\r\n"), 403);
	ck_assert_int_eq(admin_status(d, "GET", "/status.json",
				      "Host: localhost\r\nSec-Fetch-Site: cross-site\r\n"), 403);
	ck_assert_int_eq(admin_status(d, "POST", "/reload",
				      "Host: localhost\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\n"),
			 403);
	/* what an HTML form can post: refused */
	ck_assert_int_eq(admin_status(d, "POST", "/reload",
				      "Host: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"),
			 415);
	ck_assert_int_eq(admin_status(d, "POST", "/reload",
				      "Host: localhost\r\nContent-Type: text/plain\r\n"), 415);
	ck_assert_int_eq(admin_status(d, "POST", "/reload", "Host: localhost\r\n"), 415);
	/* the page's own origin, and xdsctl's way */
	snprintf(log_line, sizeof(log_line),
		 "Host: localhost:%d\r\nOrigin: http://localhost:%d\r\nContent-Type: application/json\r\n",
		 d->admin_port, d->admin_port);
	ck_assert_int_eq(admin_status(d, "POST", "/reload", log_line), 200);
	ck_assert_int_eq(admin_status(d, "POST", "/reload",
				      "Host: localhost\r\nContent-Type: application/json\r\n"),
			 200);
	ck_assert_msg(xdt_daemon_wait_log(d, "evil.example", 1000),
		      "the refusals are not logged with the Host they named");
	ck_assert_msg(metric(d, "xdsd_http_refused_total{endpoint=\"admin\",reason=\"foreign_site\"}") == 8,
		      "foreign_site: %g",
		      metric(d, "xdsd_http_refused_total{endpoint=\"admin\",reason=\"foreign_site\"}"));
	stop(d);
	free(dir);
}
END_TEST

/*
 * One address may hold only so many admin connections; another address
 * is still served.
 */
START_TEST(admin_connections_per_address)
{
	static struct slow many;
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, "admin_max_connections_per_address: 8\n");
	int refused = 0;

	slow_open(&many, "127.0.0.2", d->admin_port, 20);
	xdtest_sleep_ms(300);
	for (int i = 0; i < many.n; i++) {
		struct pollfd p = {.fd = many.fd[i], .events = POLLIN};
		char c;

		if (poll(&p, 1, 100) == 1 && recv(many.fd[i], &c, 1, MSG_DONTWAIT) <= 0)
			refused++;
	}
	ck_assert_msg(refused == many.n - 8, "%d of %d connections from one address refused",
		      refused, many.n);
	assert_healthy(d);
	slow_close(&many);
	ck_assert(xdt_daemon_wait_log(d, "refused a connection from 127.0.0.2", 1000));
	/* a loopback address may be a balancer's: the warning says what to do */
	ck_assert(xdt_daemon_wait_log(d, "(admin_max_connections_per_address; if that address is a balancer's or proxy's, list it in trusted_proxies;", 1000));
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"admin\",reason=\"per_address\"}") == many.n - 8);
	stop(d);
	free(dir);
}
END_TEST

/* Connections still open after a moment, of those `s` opened. */
static int still_open(const struct slow *s)
{
	int open = 0;

	for (int i = 0; i < s->n; i++) {
		struct pollfd p = {.fd = s->fd[i], .events = POLLIN};
		char c;

		if (poll(&p, 1, 100) == 0 || recv(s->fd[i], &c, 1, MSG_DONTWAIT) > 0)
			open++;
	}
	return open;
}

/*
 * A balancer's address (127.0.0.2 here) in trusted_proxies holds as
 * many admin and REST-JSON connections as its clients need; another
 * address is still held to the per-address limits.
 */
START_TEST(trusted_proxies_exempt)
{
	static struct slow admin, rest, other;
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, "admin_max_connections_per_address: 8\n"
					  "rest_max_connections_per_address: 4\n"
					  "trusted_proxies: [127.0.0.2/32]\n");

	slow_open(&admin, "127.0.0.2", d->admin_port, 20);
	slow_open(&rest, "127.0.0.2", d->rest_port, 20);
	slow_open(&other, "127.0.0.3", d->admin_port, 20);
	xdtest_sleep_ms(300);
	ck_assert_int_eq(still_open(&admin), 20);
	ck_assert_int_eq(still_open(&rest), 20);
	ck_assert_int_eq(still_open(&other), 8);
	slow_close(&admin);
	slow_close(&rest);
	slow_close(&other);
	ck_assert(xdt_daemon_wait_log(d, "refused a connection from 127.0.0.3", 1000));
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"admin\",reason=\"per_address\"}") == 12);
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"per_address\"}") == 0);
	assert_healthy(d);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A request framed two ways (Content-Length and chunked, or two
 * lengths) is refused rather than read one way: behind a proxy that
 * reads it the other way, it would smuggle a second request.
 */
START_TEST(ambiguous_framing_refused)
{
	static const char *const attempts[] = {
		"POST /v3/discovery:clusters HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
		"2\r\n{}\r\n0\r\n\r\n",
		"POST /v3/discovery:clusters HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
	};
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, NULL);

	for (size_t i = 0; i < 2; i++) {
		int fd = dial(NULL, d->rest_port);
		char *out;

		ck_assert(fd >= 0);
		send_text(fd, attempts[i]);
		out = read_answers(fd, 0, 5000, NULL);
		ck_assert_msg(strncmp(out, "HTTP/1.1 400 ", 13) == 0, "attempt %zu: '%.300s'",
			      i, out);
		free(out);
		close(fd);
	}
	assert_healthy(d);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A REST connection is held to the request rate of a gRPC stream
 * (max_requests_per_second, max_request_burst): over it, 429 and the
 * connection closes; the requests before are answered.
 */
START_TEST(rest_request_rate)
{
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, "max_requests_per_second: 1\nmax_request_burst: 5\n");
	char one[1024], all[16384] = "", *out;
	int fd = dial(NULL, d->rest_port);
	size_t len;

	ck_assert(fd >= 0);
	rest_request(one, sizeof(one), NULL, NULL);
	for (int i = 0; i < 10; i++)
		strcat(all, one);
	send_text(fd, all);
	out = read_answers(fd, 0, 10000, &len);
	ck_assert_msg(count_answers(out, len, "HTTP/1.1 200 ") == 5 &&
			      count_answers(out, len, "HTTP/1.1 429 ") == 1,
		      "'%.2000s'", out);
	free(out);
	close(fd);
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"rest\",reason=\"rate\"}") == 1);
	ck_assert(xdt_daemon_wait_log(d, "sent more than 1 requests a second", 1000));
	stop(d);
	free(dir);
}
END_TEST

/* Sends `text` and the end of the stream in one segment: TCP_CORK holds
 * the bytes back until shutdown() adds the FIN to them. */
static void send_with_fin(int fd, const char *text)
{
	int one = 1;

	ck_assert(setsockopt(fd, IPPROTO_TCP, TCP_CORK, &one, sizeof(one)) == 0);
	send_text(fd, text);
	ck_assert(shutdown(fd, SHUT_WR) == 0);
}

/* Waits until the endpoints hold `admin` and `rest` connections (the
 * one asking for /metrics, from 127.0.0.3, counted); false if not
 * within `ms`. */
static bool connections_become(const struct xdt_daemon *d, int admin, int rest,
			       int ms)
{
	long long end = xdtest_now_ms() + ms;

	do {
		if (metric_from(d, "127.0.0.3", "xdsd_http_connections{endpoint=\"admin\"}") == admin &&
		    metric_from(d, "127.0.0.3", "xdsd_http_connections{endpoint=\"rest\"}") == rest)
			return true;
		xdtest_sleep_ms(50);
	} while (xdtest_now_ms() < end);
	return false;
}

/*
 * A client whose last bytes and end of stream come in one segment: a
 * request cut short (its body not all sent), then gone. The library
 * watches its sockets edge-triggered, and read those bytes but not the
 * end behind them; the connection stayed until the idle timeout (two
 * minutes for REST-JSON), holding a place of the endpoint's and of the
 * client's address, so that a client could fill both at no cost to
 * itself. Each must close at once; and a whole request sent the same
 * way is still answered before its connection closes.
 */
START_TEST(end_of_stream_with_last_bytes)
{
	static const char admin_cut[] =
		"POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{";
	static const char rest_cut[] =
		"POST /v3/discovery:clusters HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"node\"";
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, "admin_max_connections_per_address: 4\n"
					  "rest_max_connections_per_address: 4\n");
	char req[1024], *out;
	size_t len;
	int fd;

	for (int i = 0; i < 8; i++) {
		int a = dial(NULL, d->admin_port), r = dial(NULL, d->rest_port);

		ck_assert(a >= 0 && r >= 0);
		send_with_fin(a, admin_cut);
		send_with_fin(r, rest_cut);
		close(a);
		close(r);
	}
	ck_assert_msg(connections_become(d, 1, 0, 3000),
		      "connections left by clients gone: admin %.0f (1 is /metrics), REST-JSON %.0f",
		      metric_from(d, "127.0.0.3", "xdsd_http_connections{endpoint=\"admin\"}"),
		      metric_from(d, "127.0.0.3", "xdsd_http_connections{endpoint=\"rest\"}"));

	/* a whole request and the end of the stream: answered, then closed */
	fd = dial(NULL, d->rest_port);
	ck_assert(fd >= 0);
	rest_request(req, sizeof(req), NULL, NULL);
	send_with_fin(fd, req);
	out = read_answers(fd, 0, 5000, &len);
	ck_assert_msg(count_answers(out, len, "HTTP/1.1 200 ") == 1, "'%.300s'", out);
	free(out);
	close(fd);
	fd = dial(NULL, d->admin_port);
	ck_assert(fd >= 0);
	send_with_fin(fd, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	out = read_answers(fd, 0, 5000, &len);
	ck_assert_msg(count_answers(out, len, "HTTP/1.1 200 ") == 1, "'%.300s'", out);
	{
		const char *cl = strstr(out, "Content-Length: ");
		const char *body = strstr(out, "\r\n\r\n");

		ck_assert(cl != NULL && body != NULL);
		ck_assert_msg(strlen(body + 4) == strtoul(cl + 16, NULL, 10),
			      "/status: %zu bytes of %lu", strlen(body + 4),
			      strtoul(cl + 16, NULL, 10));
	}
	free(out);
	close(fd);
	ck_assert_msg(connections_become(d, 1, 0, 3000),
		      "connections left after whole requests: admin %.0f (1 is /metrics), REST-JSON %.0f",
		      metric_from(d, "127.0.0.3", "xdsd_http_connections{endpoint=\"admin\"}"),
		      metric_from(d, "127.0.0.3", "xdsd_http_connections{endpoint=\"rest\"}"));
	assert_healthy(d);
	stop(d);
	free(dir);
}
END_TEST

/* A chunked request to `path` with `chunks` chunks of 1 KiB, ended
 * (the last, empty chunk) when `end`. malloc'd. */
static char *chunked(const char *path, int chunks, bool end)
{
	size_t cap = 512 + (size_t)chunks * 1040, n;
	char *req = malloc(cap);

	ck_assert(req != NULL);
	n = (size_t)snprintf(req, cap,
			     "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			     "Content-Type: application/json\r\n"
			     "Transfer-Encoding: chunked\r\n\r\n", path);
	for (int i = 0; i < chunks; i++) {
		n += (size_t)snprintf(req + n, cap - n, "400\r\n");
		memset(req + n, ' ', 1024);
		n += 1024;
		n += (size_t)snprintf(req + n, cap - n, "\r\n");
	}
	if (end)
		snprintf(req + n, cap - n, "0\r\n\r\n");
	else
		req[n] = '\0';
	return req;
}

/*
 * A chunked body, whose length nothing says up front, that grows over
 * the endpoint's bound: answered 413 like a Content-Length over it (the
 * library takes no answer while a body comes in, so the connection used
 * to close with none). One that goes on far past the bound is not read
 * forever: its connection closes.
 */
START_TEST(chunked_body_too_large)
{
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir, "max_request_size: 2KiB\n");
	const struct {
		int port;
		const char *path;
		int chunks; /* the bounds: admin 4 KiB, REST-JSON 2 KiB here */
	} cases[] = {
		{d->admin_port, "/reload", 6},
		{d->rest_port, "/v3/discovery:clusters", 3},
	};

	for (size_t i = 0; i < 2; i++) {
		char *req = chunked(cases[i].path, cases[i].chunks, true), *out;
		int fd = dial(NULL, cases[i].port);
		size_t len;

		ck_assert(fd >= 0);
		send_text(fd, req);
		out = read_answers(fd, 0, 5000, &len);
		ck_assert_msg(count_answers(out, len, "HTTP/1.1 413 ") == 1,
			      "%s: '%.300s'", cases[i].path, out);
		free(out);
		free(req);
		close(fd);
	}
	{
		/* 64 KiB and no end: closed, not read on and on. What is
		 * sent may stop short once the daemon closes; then the
		 * end of the connection must come (a silence of ANSWER_MS
		 * means it was kept open). */
		char *req = chunked("/reload", 64, false);
		int fd = dial(NULL, d->admin_port);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char *out;

		ck_assert(fd >= 0);
		send_within(fd, req, strlen(req), ANSWER_MS);
		out = read_answers(fd, 0, ANSWER_MS, NULL);
		ck_assert_msg(poll(&p, 1, 0) == 1 &&
			      recv(fd, (char[1]){0}, 1, MSG_DONTWAIT) <= 0,
			      "an endless chunked body kept its connection open for %d ms",
			      ANSWER_MS);
		free(out);
		free(req);
		close(fd);
	}
	ck_assert(metric(d, "xdsd_http_refused_total{endpoint=\"admin\",reason=\"too_large\"}") >= 2);
	assert_healthy(d);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("http_abuse");
	TCase *tc = tcase_create("http_abuse");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, byte_after_closing_request);
	tcase_add_test(tc, pipeline_behind_long_poll);
	tcase_add_test(tc, pipelined_reloads);
	tcase_add_test(tc, unread_answers_bounded);
	tcase_add_test(tc, one_packet_of_rest_requests);
	tcase_add_test(tc, slow_heads);
	tcase_add_test(tc, admin_refuses_foreign_web_pages);
	tcase_add_test(tc, admin_connections_per_address);
	tcase_add_test(tc, trusted_proxies_exempt);
	tcase_add_test(tc, rest_request_rate);
	tcase_add_test(tc, ambiguous_framing_refused);
	suite_add_tcase(s, tc);
	/* cases of their own, to run alone (CK_RUN_CASE=end_of_stream) */
	tc = tcase_create("end_of_stream");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, end_of_stream_with_last_bytes);
	tcase_add_test(tc, chunked_body_too_large);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
