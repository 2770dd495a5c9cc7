/* SPDX-License-Identifier: Apache-2.0 */
#include "http/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "util/address.h"

/* Connections the kernel queues before xdsd accepts them. */
#define BACKLOG 128

/* In libuv's words, as every other listener's errors. */
static const char *reason(int err)
{
	return uv_strerror(uv_translate_sys_error(err));
}

static int port_of(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		return 0;
	return ntohs(sa.ss_family == AF_INET6 ?
			     ((struct sockaddr_in6 *)&sa)->sin6_port :
			     ((struct sockaddr_in *)&sa)->sin_port);
}

static int listen_tcp(const char *addr, int *port, char *why, size_t why_len)
{
	struct addrinfo *res;
	int fd, on = 1;

	if (xd_address_resolve(addr, &res, why, why_len) != 0)
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, why_len, "cannot listen on %s: %s", addr,
			 reason(errno));
		freeaddrinfo(res);
		return -1;
	}
	/* as libuv does: a restart may bind while old connections linger */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (res->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(fd, BACKLOG) != 0) {
		snprintf(why, why_len, "cannot listen on %s: %s", addr,
			 reason(errno));
		freeaddrinfo(res);
		close(fd);
		return -1;
	}
	freeaddrinfo(res);
	*port = port_of(fd);
	return fd;
}

static int listen_unix(const char *path, char *why, size_t why_len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, why_len, "cannot listen on unix:%s: path too long",
			 path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, why_len, "cannot listen on unix:%s: %s", path,
			 reason(errno));
		return -1;
	}
	/* a socket file left by a previous run would make bind fail */
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, BACKLOG) != 0) {
		snprintf(why, why_len, "cannot listen on unix:%s: %s", path,
			 reason(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int xd_http_listen(const char *addr, int *port, char *why, size_t why_len)
{
	*port = 0;
	if (strncmp(addr, "unix:", 5) == 0)
		return listen_unix(addr + 5, why, why_len);
	return listen_tcp(addr, port, why, why_len);
}
