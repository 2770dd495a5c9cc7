#include "http/client.h"

#include <errno.h>
#include <http_parser.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"

/* A response bigger than this is not the admin endpoint talking. */
#define MAX_RESPONSE (1ull << 30)

struct reading {
	struct xd_buf body, field, type;
	bool in_value; /* the last piece read was a header value */
	bool in_type;  /* that value is Content-Type's */
	bool done;
	bool too_big;
	bool head; /* the request was HEAD */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Header names and values may come in pieces: a name ends where a
 * value begins. Only Content-Type is kept. */
static int on_header_field(http_parser *p, const char *at, size_t n)
{
	struct reading *r = p->data;

	if (r->in_value) {
		r->field.len = 0;
		r->in_value = false;
	}
	if (r->field.len < 64)
		xd_buf_append(&r->field, at, n);
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
	struct reading *r = p->data;

	if (!r->in_value) {
		r->in_value = true;
		r->in_type = r->field.len == 12 &&
			     strncasecmp((const char *)r->field.data,
					 "content-type", 12) == 0;
		if (r->in_type)
			r->type.len = 0;
	}
	if (r->in_type && r->type.len < 256)
		xd_buf_append(&r->type, at, n);
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	struct reading *r = p->data;

	if (r->body.len + n > MAX_RESPONSE) {
		r->too_big = true;
		return -1;
	}
	xd_buf_append(&r->body, at, n);
	return 0;
}

/* A response to HEAD has no body, whatever its Content-Length says. */
static int on_headers_complete(http_parser *p)
{
	struct reading *r = p->data;

	return r->head ? 1 : 0;
}

static int on_complete(http_parser *p)
{
	struct reading *r = p->data;

	r->done = true;
	return 0;
}

/* Waits for `events` until the deadline; false on timeout. */
static bool wait_for(int fd, short events, long long deadline)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	long long left = deadline - now_ms();

	if (left <= 0)
		return false;
	return poll(&pfd, 1, (int)left) > 0;
}

/*
 * connect() on a non-blocking socket, bounded by the deadline: a host
 * that drops SYNs (or a listener whose backlog is full) would otherwise
 * hold a blocking connect for minutes, whatever the caller's timeout.
 * Returns 0, or -1 with errno set (ETIMEDOUT at the deadline).
 */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len,
			  long long deadline)
{
	int err = 0;
	socklen_t elen = sizeof(err);

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -1;
	if (!wait_for(fd, POLLOUT, deadline)) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
		return -1;
	if (err != 0) {
		errno = err;
		return -1;
	}
	return 0;
}

static int connect_to(const char *target, long long deadline, char *why,
		      size_t why_len)
{
	char host[256], *port;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *ai;
	int fd = -1, err;

	if (strncmp(target, "unix:", 5) == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		if (strlen(target + 5) >= sizeof(sa.sun_path)) {
			snprintf(why, why_len, "socket path too long: %s", target + 5);
			return -1;
		}
		strcpy(sa.sun_path, target + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd >= 0 && connect_within(fd, (struct sockaddr *)&sa,
					      sizeof(sa), deadline) == 0)
			return fd;
		snprintf(why, why_len, "cannot connect to %s: %s", target,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(host, sizeof(host), "%s", target[0] == '[' ? target + 1 : target);
	port = strrchr(host, ':');
	if (port == NULL) {
		snprintf(why, why_len, "'%s': missing :port", target);
		return -1;
	}
	*port++ = '\0';
	if (host[0] != '\0' && host[strlen(host) - 1] == ']')
		host[strlen(host) - 1] = '\0';
	err = getaddrinfo(host, port, &hints, &res);
	if (err != 0) {
		snprintf(why, why_len, "cannot resolve '%s': %s", host,
			 gai_strerror(err));
		return -1;
	}
	errno = 0;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family,
			    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect_within(fd, ai->ai_addr, ai->ai_addrlen, deadline) == 0)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		snprintf(why, why_len, "cannot connect to %s: %s", target,
			 strerror(errno ? errno : ECONNREFUSED));
	freeaddrinfo(res);
	return fd;
}


static int send_all(int fd, const char *data, size_t len, long long deadline)
{
	while (len > 0) {
		ssize_t n;

		if (!wait_for(fd, POLLOUT, deadline))
			return -1;
		n = send(fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int xd_http_fetch(const char *target, const char *method, const char *path,
		  const char *body, size_t body_len, int timeout_ms,
		  struct xd_http_response *out, char *why, size_t why_len)
{
	long long deadline = now_ms() + timeout_ms;
	struct reading r = {0};
	http_parser_settings settings = {0};
	http_parser parser;
	struct xd_buf req = XD_BUF_INIT;
	char chunk[16384];
	int fd, rc = -1;

	memset(out, 0, sizeof(*out));
	fd = connect_to(target, deadline, why, why_len);
	if (fd < 0)
		return -1;
	xd_buf_printf(&req,
		      "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
		      "Content-Length: %zu\r\n\r\n",
		      method, path, strncmp(target, "unix:", 5) == 0 ? "localhost" : target,
		      body_len);
	xd_buf_append(&req, body, body_len);
	if (send_all(fd, (const char *)req.data, req.len, deadline) != 0) {
		snprintf(why, why_len, "cannot send to %s: %s", target,
			 errno ? strerror(errno) : "timed out");
		goto out;
	}
	settings.on_header_field = on_header_field;
	settings.on_header_value = on_header_value;
	settings.on_headers_complete = on_headers_complete;
	settings.on_body = on_body;
	r.head = strcmp(method, "HEAD") == 0;
	settings.on_message_complete = on_complete;
	http_parser_init(&parser, HTTP_RESPONSE);
	parser.data = &r;
	while (!r.done) {
		ssize_t n;

		if (!wait_for(fd, POLLIN, deadline)) {
			snprintf(why, why_len, "no answer from %s within %d ms",
				 target, timeout_ms);
			goto out;
		}
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			snprintf(why, why_len, "reading from %s: %s", target,
				 strerror(errno));
			goto out;
		}
		/* n == 0 tells the parser the connection closed */
		if (http_parser_execute(&parser, &settings, chunk, (size_t)n) !=
			    (size_t)n ||
		    HTTP_PARSER_ERRNO(&parser) != HPE_OK) {
			snprintf(why, why_len, "bad response from %s: %s", target,
				 r.too_big ? "too large" :
					     http_errno_description(
						     HTTP_PARSER_ERRNO(&parser)));
			goto out;
		}
		if (n == 0 && !r.done) {
			snprintf(why, why_len, "%s closed the connection before answering",
				 target);
			goto out;
		}
	}
	out->status = parser.status_code;
	xd_buf_putc(&r.type, '\0');
	out->content_type = (char *)xd_buf_steal(&r.type, NULL);
	out->body_len = r.body.len;
	xd_buf_putc(&r.body, '\0');
	out->body = (char *)xd_buf_steal(&r.body, NULL);
	rc = 0;
out:
	close(fd);
	xd_buf_free(&req);
	xd_buf_free(&r.body);
	xd_buf_free(&r.field);
	xd_buf_free(&r.type);
	return rc;
}

void xd_http_response_free(struct xd_http_response *r)
{
	free(r->content_type);
	free(r->body);
	memset(r, 0, sizeof(*r));
}
