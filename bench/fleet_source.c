/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Binding the fleet's client sockets to chosen loopback addresses
 * (fleet_source.h).
 */
#include "fleet_source.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grpc/support/sync.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fleet_util.h"

/*
 * gRPC core's socket mutator, as src/core/lib/iomgr/socket_mutator.h of
 * 1.51 declares it (not an installed header): a vtable, then a
 * reference count that gRPC takes and drops while a connection attempt
 * holds the mutator.
 */
typedef struct grpc_socket_mutator grpc_socket_mutator;
typedef enum {
	FD_CLIENT_CONNECTION_USAGE,
	FD_SERVER_LISTENER_USAGE,
	FD_SERVER_CONNECTION_USAGE,
} fd_usage;
typedef struct {
	int fd;
	fd_usage usage;
} mutate_socket_info;
struct mutator_vtable {
	bool (*mutate_fd)(int fd, grpc_socket_mutator *m);
	int (*compare)(grpc_socket_mutator *a, grpc_socket_mutator *b);
	void (*destroy)(grpc_socket_mutator *m);
	bool (*mutate_fd_2)(const mutate_socket_info *info,
			    grpc_socket_mutator *m);
};
struct grpc_socket_mutator {
	const struct mutator_vtable *vtable;
	gpr_refcount refcount;
};

/* Our mutator: gRPC's base first, so a pointer to it is a pointer to
 * this. */
struct source {
	grpc_socket_mutator base;
	struct sockaddr_in addr;
	struct sockaddr_in6 addr6; /* the same, v4-mapped */
};

struct source_set {
	int n;
	struct source *src;
};

static bool bind_source(int fd, grpc_socket_mutator *m)
{
	const struct source *s = (const struct source *)m;
	int one = 1, domain = AF_INET;
	socklen_t len = sizeof(domain);
	int rc;

	/* the port is chosen at connect(), per destination, instead of
	 * reserving one of the address's ports for every destination */
	(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			 sizeof(one));
	/* gRPC connects to an IPv4 address from an IPv6 socket when the
	 * host has IPv6 (v4-mapped) */
	(void)getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
	if (domain == AF_INET6)
		rc = bind(fd, (const struct sockaddr *)&s->addr6, sizeof(s->addr6));
	else
		rc = bind(fd, (const struct sockaddr *)&s->addr, sizeof(s->addr));
	if (rc != 0) {
		fprintf(stderr, "fleet: cannot bind a client socket to %s: %s\n",
			inet_ntoa(s->addr.sin_addr), strerror(errno));
		return false;
	}
	return true;
}

static bool mutate(const mutate_socket_info *info, grpc_socket_mutator *m)
{
	if (info->usage != FD_CLIENT_CONNECTION_USAGE)
		return true;
	return bind_source(info->fd, m);
}

static bool mutate_legacy(int fd, grpc_socket_mutator *m)
{
	return bind_source(fd, m);
}

static int compare(grpc_socket_mutator *a, grpc_socket_mutator *b)
{
	return a < b ? -1 : a > b;
}

/* The set frees its mutators; gRPC's last reference does nothing. */
static void destroy(grpc_socket_mutator *m)
{
	(void)m;
}

static const struct mutator_vtable vtable = {
	.mutate_fd = mutate_legacy,
	.compare = compare,
	.destroy = destroy,
	.mutate_fd_2 = mutate,
};

/* The channel argument's pointer: owned by the set, shared as is. */
static void *arg_copy(void *p)
{
	return p;
}

static void arg_destroy(void *p)
{
	(void)p;
}

static int arg_cmp(void *a, void *b)
{
	return a < b ? -1 : a > b;
}

static const grpc_arg_pointer_vtable arg_vtable = {
	.copy = arg_copy,
	.destroy = arg_destroy,
	.cmp = arg_cmp,
};

struct source_set *source_set_new(int n)
{
	struct source_set *set;

	if (n <= 0)
		return NULL;
	if (n > 250)
		die("at most 250 source addresses (127.0.0.2 to 127.0.0.251)");
	set = xcalloc(1, sizeof(*set));
	set->n = n;
	set->src = xcalloc((size_t)n, sizeof(*set->src));
	for (int i = 0; i < n; i++) {
		struct source *s = &set->src[i];

		s->base.vtable = &vtable;
		/* never dropped to 0 by gRPC: the set holds this one */
		gpr_ref_init(&s->base.refcount, 1);
		s->addr.sin_family = AF_INET;
		s->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1u + (uint32_t)i);
		s->addr.sin_port = 0;
		s->addr6.sin6_family = AF_INET6;
		s->addr6.sin6_addr.s6_addr[10] = 0xff;
		s->addr6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&s->addr6.sin6_addr.s6_addr[12], &s->addr.sin_addr, 4);
	}
	return set;
}

int source_set_arg(const struct source_set *set, int idx, grpc_arg *arg)
{
	if (set == NULL)
		return 0;
	memset(arg, 0, sizeof(*arg));
	arg->type = GRPC_ARG_POINTER;
	arg->key = (char *)GRPC_ARG_SOCKET_MUTATOR;
	arg->value.pointer.p = &set->src[idx % set->n].base;
	arg->value.pointer.vtable = &arg_vtable;
	return 1;
}

void source_set_free(struct source_set *set)
{
	if (set == NULL)
		return;
	free(set->src);
	free(set);
}
