/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP pieces below the endpoints (src/http/): the listening socket
 * (listen.c), query strings (query.c), and the blocking client xdsctl
 * asks the admin endpoint with (client.c), each against real sockets.
 * The client's peer here is a scripted server on loopback that answers
 * the way a broken or hostile one would, so that each of the client's
 * refusals is the sentence xdsctl's users read, naming the address.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/client.h"
#include "http/http.h"
#include "http/listen.h"
#include "xdtest.h"

static char why[1024];

/* ---------------- the listening socket ---------------- */

START_TEST(listen_reports_the_kernels_port)
{
	int port = -1, fd = xd_http_listen("127.0.0.1:0", &port, why, sizeof(why));

	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_int_gt(port, 0);
	close(fd);
	fd = xd_http_listen("[::1]:0", &port, why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_int_gt(port, 0);
	close(fd);
}
END_TEST

START_TEST(listen_failures_name_the_address)
{
	char addr[64], path[300], want[400];
	int port, fd = xd_http_listen("127.0.0.1:0", &port, why, sizeof(why));

	ck_assert_msg(fd >= 0, "%s", why);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	ck_assert_int_eq(xd_http_listen(addr, &port, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "cannot listen on %s: address already in use", addr);
	ck_assert_str_eq(why, want);
	close(fd);

	ck_assert_int_eq(xd_http_listen("127.0.0.1", &port, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "'127.0.0.1': missing :port (form: host:port)");
	ck_assert_int_eq(xd_http_listen("nowhere.invalid:80", &port, why, sizeof(why)), -1);
	ck_assert_msg(strncmp(why, "cannot resolve 'nowhere.invalid': ", 34) == 0, "%s", why);

	snprintf(path, sizeof(path), "unix:%s/no-such-dir/admin.sock", xdtest_tmpdir());
	ck_assert_int_eq(xd_http_listen(path, &port, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "cannot listen on %s: no such file or directory", path);
	ck_assert_str_eq(why, want);
	memset(path, 'a', sizeof(path) - 1);
	memcpy(path, "unix:/", 6);
	path[sizeof(path) - 1] = '\0';
	ck_assert_int_eq(xd_http_listen(path, &port, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "cannot listen on %s: path too long", path);
	ck_assert_str_eq(why, want);
}
END_TEST

START_TEST(listen_unix_replaces_a_stale_socket)
{
	char addr[300];
	int port = -1, fd;

	snprintf(addr, sizeof(addr), "unix:%s/stale.sock", xdtest_tmpdir());
	fd = xd_http_listen(addr, &port, why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_int_eq(port, 0);
	close(fd); /* its file stays, as after a crash */
	fd = xd_http_listen(addr, &port, why, sizeof(why));
	ck_assert_msg(fd >= 0, "a stale socket file blocks the listener: %s", why);
	close(fd);
}
END_TEST

/* ---------------- query strings ---------------- */

START_TEST(query_values_decoded)
{
	char v[16];

	ck_assert_int_eq(xd_http_query_get("a=1&node=x%2Fy+z", "node", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "x/y z");
	ck_assert_int_eq(xd_http_query_get("a=1&node=x", "a", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "1");
	/* a key alone is an empty value; a longer key is another key */
	ck_assert_int_eq(xd_http_query_get("verbose&x=1", "verbose", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "");
	ck_assert_int_eq(xd_http_query_get("nodes=1", "node", v, sizeof(v)), 0);
	ck_assert_int_eq(xd_http_query_get("", "node", v, sizeof(v)), 0);
	ck_assert_int_eq(xd_http_query_get("a=%4a%4A", "a", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "JJ");
}
END_TEST

START_TEST(query_bad_values_refused)
{
	char v[8];

	/* cut escapes, non-hex digits, an escaped NUL, too long for `v` */
	ck_assert_int_eq(xd_http_query_get("a=%4", "a", v, sizeof(v)), -1);
	ck_assert_int_eq(xd_http_query_get("a=%g1", "a", v, sizeof(v)), -1);
	ck_assert_int_eq(xd_http_query_get("a=%1g", "a", v, sizeof(v)), -1);
	ck_assert_int_eq(xd_http_query_get("a=x%00y", "a", v, sizeof(v)), -1);
	ck_assert_int_eq(xd_http_query_get("a=12345678", "a", v, sizeof(v)), -1);
	ck_assert_int_eq(xd_http_query_get("a=1234567", "a", v, sizeof(v)), 1);
	ck_assert_int_eq(xd_http_query_get("a", "a", v, 0), -1);
}
END_TEST

/* ---------------- the client, against a scripted server ---------------- */

static int fcntl_blocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

/* One connection: read the request's head, send `answer` (its first
 * `len` bytes; all when 0), then close or, with `hold`, wait for the
 * client to go first. */
struct script {
	int lfd;
	char target[64];
	const char *answer;
	size_t len;
	bool hold;
	pthread_t thread;
};

static void *serve(void *arg)
{
	struct script *s = arg;
	char buf[4096], head[16384];
	size_t got = 0;
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	head[0] = '\0';
	while (strstr(head, "\r\n\r\n") == NULL && got < sizeof(head) - 1) {
		ssize_t n = recv(fd, head + got, sizeof(head) - 1 - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
		head[got] = '\0';
	}
	if (s->answer != NULL) {
		size_t len = s->len != 0 ? s->len : strlen(s->answer);

		/* the client may hang up first: no SIGPIPE */
		for (size_t off = 0; off < len;) {
			ssize_t n = send(fd, s->answer + off, len - off, MSG_NOSIGNAL);

			if (n <= 0)
				break;
			off += (size_t)n;
		}
	}
	while (s->hold && recv(fd, buf, sizeof(buf), 0) > 0)
		;
	close(fd);
	return NULL;
}

static void script_start(struct script *s, const char *answer)
{
	int port;

	s->answer = answer;
	s->lfd = xd_http_listen("127.0.0.1:0", &port, why, sizeof(why));
	ck_assert_msg(s->lfd >= 0, "%s", why);
	/* xd_http_listen's socket does not block; accept here should */
	ck_assert(fcntl_blocking(s->lfd) == 0);
	snprintf(s->target, sizeof(s->target), "127.0.0.1:%d", port);
	ck_assert(pthread_create(&s->thread, NULL, serve, s) == 0);
}

static void script_end(struct script *s)
{
	pthread_join(s->thread, NULL);
	close(s->lfd);
}

/* GET / of the scripted server: xd_http_fetch's result. */
static int ask(struct script *s, size_t max_body, int timeout_ms,
	       struct xd_http_response *out)
{
	struct xd_http_request q = {.target = s->target, .method = "GET",
				    .path = "/", .timeout_ms = timeout_ms,
				    .max_body = max_body};
	int rc;

	why[0] = '\0';
	rc = xd_http_fetch(&q, out, why, sizeof(why));
	script_end(s);
	return rc;
}

/* `why` is `fmt` with the scripted server's address in it. */
static void why_is(const struct script *s, const char *fmt)
{
	char want[512];

	snprintf(want, sizeof(want), fmt, s->target);
	ck_assert_str_eq(why, want);
}

START_TEST(client_reads_an_answer)
{
	struct script s = {0};
	struct xd_http_response r;

	script_start(&s, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
			 "Content-Length: 2\r\nConnection: close\r\n\r\nhi");
	ck_assert_msg(ask(&s, 0, 5000, &r) == 0, "%s", why);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.content_type, "text/plain");
	ck_assert_uint_eq(r.body_len, 2);
	ck_assert_str_eq(r.body, "hi");
	xd_http_response_free(&r);
}
END_TEST

START_TEST(client_peer_closes_early)
{
	struct script s = {0};
	struct xd_http_response r;

	script_start(&s, NULL);
	ck_assert_int_eq(ask(&s, 0, 5000, &r), -1);
	why_is(&s, "%s closed the connection before answering");

	script_start(&s, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
	ck_assert_int_eq(ask(&s, 0, 5000, &r), -1);
	why_is(&s, "%s closed the connection before the answer's end");
}
END_TEST

START_TEST(client_bounds_the_answer)
{
	struct script s = {0};
	struct xd_http_response r;
	size_t pad = XD_HTTP_MAX_HEAD + 1024, n = 0;
	char *big = malloc(pad + 256);

	/* announced: refused before the body comes */
	script_start(&s, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
	ck_assert_int_eq(ask(&s, 10, 5000, &r), -1);
	why_is(&s, "answer from %s too large: over 10 bytes");
	/* not announced: refused as it comes */
	script_start(&s, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n0123456789abcdef");
	ck_assert_int_eq(ask(&s, 10, 5000, &r), -1);
	why_is(&s, "answer from %s too large: over 10 bytes");
	/* headers without end */
	n += (size_t)sprintf(big, "HTTP/1.1 200 OK\r\n");
	while (n < pad)
		n += (size_t)sprintf(big + n, "X-Pad: %064d\r\n", 0);
	sprintf(big + n, "\r\n");
	script_start(&s, big);
	ck_assert_int_eq(ask(&s, 0, 5000, &r), -1);
	why_is(&s, "answer from %s too large: headers over 65536 bytes");
	free(big);
}
END_TEST

/* A server that holds the connection and never answers: the client's
 * own timeout ends the call (the server would wait for ever), and says
 * so with the time it was given. */
START_TEST(client_gives_up_on_silence)
{
	struct script s = {.hold = true};
	struct xd_http_response r;

	script_start(&s, NULL);
	ck_assert_int_eq(ask(&s, 0, 300, &r), -1);
	why_is(&s, "no answer from %s within 300 ms");
}
END_TEST

START_TEST(client_refuses_what_is_not_http)
{
	struct script s = {0};
	struct xd_http_response r;
	char want[128];

	script_start(&s, "SSH-2.0-OpenSSH_9.2\r\n\r\n");
	ck_assert_int_eq(ask(&s, 0, 5000, &r), -1);
	snprintf(want, sizeof(want), "bad answer from %s: ", s.target);
	ck_assert_msg(strncmp(why, want, strlen(want)) == 0 &&
		      strlen(why) > strlen(want), "%s", why);
}
END_TEST

START_TEST(client_names_what_it_cannot_reach)
{
	struct xd_http_request q = {.target = "nowhere.invalid:80", .method = "GET",
				    .path = "/", .timeout_ms = 5000};
	struct xd_http_response r;
	char path[300];

	ck_assert_int_eq(xd_http_fetch(&q, &r, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "cannot resolve 'nowhere.invalid'");
	q.target = "127.0.0.1";
	ck_assert_int_eq(xd_http_fetch(&q, &r, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "'127.0.0.1': missing :port (form: host:port)");
	memset(path, 'a', sizeof(path) - 1);
	memcpy(path, "unix:/", 6);
	path[sizeof(path) - 1] = '\0';
	q.target = path;
	ck_assert_int_eq(xd_http_fetch(&q, &r, why, sizeof(why)), -1);
	ck_assert_msg(strncmp(why, "socket path too long: /aaa", 26) == 0, "%s", why);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("http");
	TCase *listen = tcase_create("listen");
	TCase *query = tcase_create("query");
	TCase *client = tcase_create("client");

	tcase_add_test(listen, listen_reports_the_kernels_port);
	tcase_add_test(listen, listen_failures_name_the_address);
	tcase_add_test(listen, listen_unix_replaces_a_stale_socket);
	tcase_add_test(query, query_values_decoded);
	tcase_add_test(query, query_bad_values_refused);
	tcase_add_test(client, client_reads_an_answer);
	tcase_add_test(client, client_peer_closes_early);
	tcase_add_test(client, client_bounds_the_answer);
	tcase_add_test(client, client_gives_up_on_silence);
	tcase_add_test(client, client_refuses_what_is_not_http);
	tcase_add_test(client, client_names_what_it_cannot_reach);
	suite_add_tcase(s, listen);
	suite_add_tcase(s, query);
	suite_add_tcase(s, client);
	return xdtest_run(s);
}
