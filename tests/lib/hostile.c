/* SPDX-License-Identifier: Apache-2.0 */
#include "hostile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xdtest.h"

/* How long a raw connection waits for the server to answer its SYN. */
#define RAW_CONNECT_MS 2000

/*
 * Messages are written back to front, so that every length is known
 * when its field's header is written: `p` moves down from the end of a
 * buffer sized for the result.
 */
struct back {
	uint8_t *buf, *end, *p;
};

static void prepend(struct back *b, const void *data, size_t len)
{
	XDT_REQUIRE((size_t)(b->p - b->buf) >= len, "message buffer too small");
	b->p -= len;
	memcpy(b->p, data, len);
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	do {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	} while (v != 0);
	out[n - 1] &= 0x7f;
	return n;
}

/* The tag and length of field `number`, whose `len` bytes are at p. */
static void prepend_header(struct back *b, uint32_t number, size_t len)
{
	uint8_t hdr[20];
	size_t n = put_varint(hdr, ((uint64_t)number << 3) | 2);

	n += put_varint(hdr + n, len);
	prepend(b, hdr, n);
}

/* A whole string field. */
static void prepend_string(struct back *b, uint32_t number, const char *s)
{
	prepend(b, s, strlen(s));
	prepend_header(b, number, strlen(s));
}

/* Wraps everything from `from` to the end as field `number`. */
static void wrap(struct back *b, uint32_t number, const uint8_t *from)
{
	prepend_header(b, number, (size_t)(from - b->p));
}

static void deep_node(struct back *b, const char *id, const char *cluster,
		      int depth)
{
	/* The metadata grows down from here: every level wraps all of it. */
	uint8_t *end = b->p;

	for (int i = 0; i < depth; i++) {
		/* Value {struct_value (5): Struct} */
		wrap(b, 5, end);
		/* map entry {key (1): "k", value (2): Value} */
		wrap(b, 2, end);
		prepend_string(b, 1, "k");
		/* Struct {fields (1): entry} */
		wrap(b, 1, end);
	}
	/* Node {id (1), cluster (2), metadata (3)} */
	wrap(b, 3, end);
	prepend_string(b, 2, cluster);
	prepend_string(b, 1, id);
}

static uint8_t *finish(struct back *b, size_t *len)
{
	uint8_t *out = malloc((size_t)(b->end - b->p));

	XDT_REQUIRE(out != NULL, "out of memory");
	*len = (size_t)(b->end - b->p);
	memcpy(out, b->p, *len);
	free(b->buf);
	return out;
}

static void back_init(struct back *b, int depth)
{
	size_t cap = 256 + (size_t)depth * 32;

	b->buf = malloc(cap);
	XDT_REQUIRE(b->buf != NULL, "out of memory");
	b->end = b->p = b->buf + cap;
}

uint8_t *xdt_deep_node(const char *id, const char *cluster, int depth,
		       size_t *len)
{
	struct back b;

	back_init(&b, depth);
	deep_node(&b, id, cluster, depth);
	return finish(&b, len);
}

uint8_t *xdt_deep_node_request(bool delta, const char *type_url,
			       const char *name, const char *id,
			       const char *cluster, int depth, size_t *len)
{
	struct back b;
	uint8_t *end;

	back_init(&b, depth + (int)strlen(type_url) + (int)strlen(name));
	end = b.p;
	/* node: delta 1, SotW 2 */
	deep_node(&b, id, cluster, depth);
	wrap(&b, delta ? 1 : 2, end);
	/* resource_names (SotW) / resource_names_subscribe (delta): 3 */
	prepend_string(&b, 3, name);
	/* type_url: delta 2, SotW 4 */
	prepend_string(&b, delta ? 2 : 4, type_url);
	return finish(&b, len);
}

/* A non-blocking connect() under way completes: the server answered
 * the SYN within RAW_CONNECT_MS (on loopback it answers at once, unless
 * a filter drops the SYN). */
static bool answered(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int err = 0;
	socklen_t len = sizeof(err);

	if (errno != EINPROGRESS)
		return false;
	while (poll(&p, 1, RAW_CONNECT_MS) < 0)
		if (errno != EINTR)
			return false;
	return (p.revents & POLLOUT) &&
	       getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
	       err == 0;
}

int xdt_raw_connect(const char *target, const char *source, bool preface)
{
	/* the client preface, then SETTINGS with no setting (RFC 9113 3.4) */
	static const char hello[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
				    "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
	struct sockaddr_in to = {.sin_family = AF_INET},
			   from = {.sin_family = AF_INET};
	char host[64];
	int port, fd;

	XDT_REQUIRE(sscanf(target, "%63[^:]:%d", host, &port) == 2 &&
			    inet_pton(AF_INET, host, &to.sin_addr) == 1 &&
			    inet_pton(AF_INET, source, &from.sin_addr) == 1,
		    "bad address '%s' or '%s'", target, source);
	to.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
	    (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0 &&
	     !answered(fd))) {
		close(fd);
		return -1;
	}
	XDT_REQUIRE(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0,
		    "fcntl: %s", strerror(errno));
	/* a server that refused the connection may have reset it already:
	 * xdt_raw_ended tells */
	if (preface &&
	    send(fd, hello, sizeof(hello) - 1, MSG_NOSIGNAL) !=
		    (ssize_t)(sizeof(hello) - 1))
		XDT_REQUIRE(errno == ECONNRESET || errno == EPIPE,
			    "send: %s", strerror(errno));
	XDT_REQUIRE(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0,
		    "fcntl: %s", strerror(errno));
	return fd;
}

bool xdt_raw_ended(int fd)
{
	char buf[4096];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n > 0)
			continue; /* the server's SETTINGS, pings, GOAWAY */
		if (n == 0)
			return true;
		if (errno == EINTR)
			continue;
		return errno != EAGAIN && errno != EWOULDBLOCK;
	}
}
