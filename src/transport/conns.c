/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/conns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <grpc/support/sync.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "transport/fdlimit.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/list.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/*
 * gRPC 1.51's socket mutator (src/core/lib/iomgr/socket_mutator.h):
 * the public headers name the type and the channel argument but leave
 * the struct to the core's internal header. The layout is that
 * release's; xd_conns_seen_listener tells whether gRPC called it.
 */
enum fd_usage {
	FD_CLIENT_CONNECTION,
	FD_SERVER_LISTENER,
	FD_SERVER_CONNECTION,
};

struct mutate_info {
	int fd;
	enum fd_usage usage;
};

struct mutator_vtable {
	bool (*mutate_fd)(int fd, grpc_socket_mutator *m);
	int (*compare)(grpc_socket_mutator *a, grpc_socket_mutator *b);
	void (*destroy)(grpc_socket_mutator *m);
	bool (*mutate_fd_2)(const struct mutate_info *info,
			    grpc_socket_mutator *m);
};

struct grpc_socket_mutator {
	const struct mutator_vtable *vtable;
	gpr_refcount refcount;
};

/* Listening sockets remembered (one per address gRPC binds: two at
 * most for a wildcard address without dual-stack). */
#define LISTENERS_MAX 4
/* Spare descriptors given back, one at a time, when none is left. */
#define SPARES 8
/* Waiting connections taken off the listener per accepted one, while
 * the descriptors run out. */
#define DRAIN_MAX 4096
/* Peers of refusals named per sweep (the rest are counted). */
#define SWEEP_LOG_MAX 4
/* Addresses whose new connections the kernel drops at once. */
#define BLOCKED_MAX 64
/* cBPF reads the network header at this offset (linux/filter.h). */
#define NET(off) ((uint32_t)(SKF_NET_OFF + (off)))

enum conn_state {
	CONN_NEW,       /* no stream yet: first_stream_timeout runs */
	CONN_STREAMING, /* holds a stream */
	CONN_IDLE,      /* held streams, holds none now */
};

/* A client address and port, IPv4-mapped IPv6 as IPv4. */
struct key {
	int family;
	uint16_t port; /* 0 when only the address matters */
	unsigned char addr[16];
};

struct entry {
	int fd;
	ino_t ino; /* the socket's: another socket on `fd` has another */
	struct key key;
	uint64_t since_ms; /* accepted, or its last stream ended */
	enum conn_state state;
	bool shut; /* shut down by xdsd, closing */
	struct xd_list by_fd, by_peer;
	struct xd_list by_addr, idle; /* while not streaming */
};

struct xd_conns {
	grpc_socket_mutator base; /* first: gRPC holds a pointer to it */
	struct xd_conns_limits limits;
	uv_loop_t *loop;

	pthread_mutex_t lock; /* everything below */
	bool closed;          /* xd_conns_close ran: judge nothing */
	bool sweeping;        /* the sweep timer runs, or was asked to */
	bool pressure;        /* the last count was within fd_reserve */
	size_t nbuckets;      /* a power of two */
	struct xd_list *fd_buckets, *peer_buckets, *addr_buckets;
	struct xd_list idle; /* entries not streaming, oldest first */
	int listeners[LISTENERS_MAX];
	size_t nlisteners;
	int spares[SPARES];
	size_t nspares;
	/* addresses over max_idle_connections_per_address: the listeners'
	 * socket filter drops their SYNs until they hold fewer */
	struct key blocked[BLOCKED_MAX];
	size_t nblocked;
	bool filter_dirty; /* `blocked` changed since the filter was set */

	unsigned long long refusals_seen; /* by the last sweep; loop's */

	uv_timer_t sweep;
	uv_async_t wake; /* the mutator asks for the sweep */
	int handles;     /* loop handles not yet closed */
};

static atomic_ullong refused[XD_CONN_REFUSED_COUNT];
static atomic_ullong timed_out, accepted;
static atomic_size_t nopen, nidle, nblocked_now;

static const char *const refusal_names[XD_CONN_REFUSED_COUNT] = {
	[XD_CONN_REFUSED_PER_ADDRESS] = "per_address",
	[XD_CONN_REFUSED_IDLE] = "idle",
	[XD_CONN_REFUSED_DESCRIPTORS] = "descriptors",
};

/* Lines about refused and timed-out connections: a few a second, then
 * a count (a flood must not flood the log). */
static struct xd_log_limit conn_log = XD_LOG_LIMIT_INIT(5, 1000);

/* ---------------- keys and the table ---------------- */

static bool key_of(const struct sockaddr_storage *ss, bool with_port,
		   struct key *out)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0,
						 0, 0, 0, 0, 0xff, 0xff};
	struct key k = {0};

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		k.family = AF_INET;
		memcpy(k.addr, &in->sin_addr, 4);
		k.port = in->sin_port;
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		if (memcmp(in6->sin6_addr.s6_addr, mapped, 12) == 0) {
			k.family = AF_INET;
			memcpy(k.addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			k.family = AF_INET6;
			memcpy(k.addr, in6->sin6_addr.s6_addr, 16);
		}
		k.port = in6->sin6_port;
	} else {
		return false;
	}
	if (!with_port)
		k.port = 0;
	*out = k;
	return true;
}

static bool same_addr(const struct key *a, const struct key *b)
{
	return a->family == b->family &&
	       memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

static size_t addr_hash(const struct xd_conns *c, const struct key *k)
{
	return (size_t)XXH3_64bits(k->addr, k->family == AF_INET ? 4 : 16) &
	       (c->nbuckets - 1);
}

static size_t peer_hash(const struct xd_conns *c, const struct key *k)
{
	return (addr_hash(c, k) * 31 + k->port) & (c->nbuckets - 1);
}

static size_t fd_hash(const struct xd_conns *c, int fd)
{
	return (size_t)fd & (c->nbuckets - 1);
}

static struct entry *find_peer(struct xd_conns *c, const struct key *k)
{
	struct xd_list *head = &c->peer_buckets[peer_hash(c, k)], *n;

	xd_list_for_each(n, head) {
		struct entry *e = xd_container_of(n, struct entry, by_peer);

		if (e->key.port == k->port && same_addr(&e->key, k))
			return e;
	}
	return NULL;
}

static struct entry *find_fd(struct xd_conns *c, int fd)
{
	struct xd_list *head = &c->fd_buckets[fd_hash(c, fd)], *n;

	xd_list_for_each(n, head) {
		struct entry *e = xd_container_of(n, struct entry, by_fd);

		if (e->fd == fd)
			return e;
	}
	return NULL;
}

/* Idle connections of `k`'s address. */
static size_t idle_of(struct xd_conns *c, const struct key *k)
{
	struct xd_list *head = &c->addr_buckets[addr_hash(c, k)], *n;
	size_t count = 0;

	xd_list_for_each(n, head) {
		struct entry *e = xd_container_of(n, struct entry, by_addr);

		count += same_addr(&e->key, k);
	}
	return count;
}

static void make_idle(struct xd_conns *c, struct entry *e,
		      enum conn_state state)
{
	e->state = state;
	e->since_ms = xd_mono_ms();
	xd_list_push_back(&c->addr_buckets[addr_hash(c, &e->key)], &e->by_addr);
	xd_list_push_back(&c->idle, &e->idle);
	atomic_fetch_add(&nidle, 1);
}

static void make_streaming(struct entry *e)
{
	XD_ASSERT(e->state != CONN_STREAMING);
	e->state = CONN_STREAMING;
	xd_list_remove(&e->by_addr);
	xd_list_remove(&e->idle);
	atomic_fetch_sub(&nidle, 1);
}

static void remove_entry(struct entry *e)
{
	if (e->state != CONN_STREAMING)
		make_streaming(e); /* out of the idle lists */
	xd_list_remove(&e->by_fd);
	xd_list_remove(&e->by_peer);
	atomic_fetch_sub(&nopen, 1);
	free(e);
}

/* Whether `e` still names an open socket: its descriptor is open and
 * is the same socket (a closed descriptor's number is reused). */
static bool alive(const struct entry *e)
{
	struct stat st;

	return fstat(e->fd, &st) == 0 && st.st_ino == e->ino;
}

/*
 * Ends a connection gRPC owns without closing its descriptor: a reset
 * (SO_LINGER 0, so no TIME_WAIT is left either) and a shutdown, which
 * gRPC reads as the end of the connection before closing it. The
 * descriptor was checked to be the connection's just before (under the
 * table's lock, which every new accept takes).
 */
static void shut(int fd)
{
	struct linger reset = {1, 0};

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	(void)shutdown(fd, SHUT_RDWR);
}

/* ---------------- descriptors ---------------- */

static void fill_spares(struct xd_conns *c)
{
	while (c->nspares < SPARES) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return;
		c->spares[c->nspares++] = fd;
	}
}

static bool release_spare(struct xd_conns *c)
{
	if (c->nspares == 0)
		return false;
	close(c->spares[--c->nspares]);
	return true;
}

/* Whether fewer than fd_reserve descriptors are left: the lowest free
 * number is what accept() returned, so every one below `fd` is open;
 * holes below are seen by the sweep's count. */
static bool short_of_descriptors(const struct xd_conns *c, int fd)
{
	unsigned long limit = c->limits.fd_limit;

	return limit != 0 && ((unsigned long)fd + c->limits.fd_reserve >= limit ||
			      c->pressure);
}

/*
 * The descriptors are (nearly) gone: take every waiting connection off
 * the listeners and close it at once, so that gRPC's next accept()
 * finds none waiting rather than no descriptor (which would stop its
 * listener), and keep one descriptor free for that accept(). Returns
 * how many were closed.
 */
static size_t drain(struct xd_conns *c, int fd)
{
	size_t closed = 0;
	int probe;

	for (size_t i = 0; i < c->nlisteners; i++) {
		int l = c->listeners[i], flags = fcntl(l, F_GETFL);

		/* gRPC's listeners never block; anything else is not one */
		if (flags < 0 || !(flags & O_NONBLOCK))
			continue;
		while (closed < DRAIN_MAX) {
			int cfd = accept4(l, NULL, NULL,
					  SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (cfd < 0) {
				if (errno == EINTR)
					continue;
				if ((errno == EMFILE || errno == ENFILE) &&
				    release_spare(c))
					continue;
				break;
			}
			shut(cfd);
			close(cfd);
			closed++;
		}
	}
	probe = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (probe >= 0)
		close(probe);
	else if (errno == EMFILE)
		(void)release_spare(c);
	return closed;
}

/* ---------------- addresses blocked in the kernel ---------------- */

/*
 * An address that holds max_idle_connections_per_address connections
 * without a stream and connects again is refused; one that does so in a
 * storm (connect, close, connect...) would still cost an accept, a
 * descriptor and gRPC's work for each attempt, and gRPC, busy
 * accepting, closes what it was handed more slowly than a storm brings
 * more. So the listening sockets get a socket filter (classic BPF,
 * which the kernel runs on each SYN before it completes a connection)
 * that drops the SYNs of such addresses until they hold fewer: their
 * clients' kernels retry the SYN a second or more later, every other
 * address connects as before.
 */

static bool is_blocked(const struct xd_conns *c, const struct key *k)
{
	for (size_t i = 0; i < c->nblocked; i++)
		if (same_addr(&c->blocked[i], k))
			return true;
	return false;
}

/* With the lock held. Returns whether `k` was not blocked already. */
static bool block(struct xd_conns *c, const struct key *k)
{
	if (c->nlisteners == 0 || c->nblocked == BLOCKED_MAX ||
	    is_blocked(c, k))
		return false;
	c->blocked[c->nblocked] = *k;
	c->blocked[c->nblocked++].port = 0;
	atomic_store(&nblocked_now, c->nblocked);
	c->filter_dirty = true;
	return true;
}

static uint32_t word(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

/* The filter dropping the SYNs of `blocked` (IPv4 and IPv6 packets,
 * for listeners of either family), into `prog` (room for `cap`).
 * Returns its length. Every jump is short, or a BPF_JA. */
static unsigned short build_filter(const struct xd_conns *c,
				   struct sock_filter *prog, size_t cap)
{
	size_t n = 0, ja;

#define OP(code, k, jt, jf)                                               \
	do {                                                              \
		XD_ASSERT(n < cap);                                       \
		prog[n++] = (struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)); \
	} while (0)
	OP(BPF_LD | BPF_B | BPF_ABS, NET(0), 0, 0); /* version, IHL */
	OP(BPF_ALU | BPF_RSH | BPF_K, 4, 0, 0);
	OP(BPF_JMP | BPF_JEQ | BPF_K, 4, 1, 0);
	ja = n;
	OP(BPF_JMP | BPF_JA, 0, 0, 0); /* to IPv6, set below */
	OP(BPF_LD | BPF_W | BPF_ABS, NET(12), 0, 0); /* IPv4 source */
	for (size_t i = 0; i < c->nblocked; i++) {
		if (c->blocked[i].family != AF_INET)
			continue;
		OP(BPF_JMP | BPF_JEQ | BPF_K, word(c->blocked[i].addr), 0, 1);
		OP(BPF_RET | BPF_K, 0, 0, 0);
	}
	OP(BPF_RET | BPF_K, 0xffffffffu, 0, 0);
	prog[ja].k = (uint32_t)(n - ja - 1);
	OP(BPF_JMP | BPF_JEQ | BPF_K, 6, 1, 0);
	OP(BPF_RET | BPF_K, 0xffffffffu, 0, 0);
	for (size_t i = 0; i < c->nblocked; i++) {
		const unsigned char *a = c->blocked[i].addr;

		if (c->blocked[i].family != AF_INET6)
			continue;
		/* the source is bytes 8..23; a word that differs skips the
		 * rest of this address */
		for (int w = 0; w < 4; w++) {
			OP(BPF_LD | BPF_W | BPF_ABS, NET(8 + 4 * w), 0, 0);
			OP(BPF_JMP | BPF_JEQ | BPF_K, word(a + 4 * w), 0,
			   (unsigned char)(7 - 2 * w));
		}
		OP(BPF_RET | BPF_K, 0, 0, 0);
	}
	OP(BPF_RET | BPF_K, 0xffffffffu, 0, 0);
#undef OP
	return (unsigned short)n;
}

/* Puts the filter of `blocked` on every listener (none when empty).
 * Loop thread, lock held. */
static void set_filter(struct xd_conns *c)
{
	struct sock_filter prog[8 + 9 * BLOCKED_MAX];
	struct sock_fprog fprog = {0, prog};
	int none = 0; /* the kernel wants an int, though it reads none */

	c->filter_dirty = false;
	if (c->nblocked > 0)
		fprog.len = build_filter(c, prog, XD_ARRAY_LEN(prog));
	for (size_t i = 0; i < c->nlisteners; i++) {
		int rc = c->nblocked > 0 ?
				 setsockopt(c->listeners[i], SOL_SOCKET,
					    SO_ATTACH_FILTER, &fprog,
					    sizeof(fprog)) :
				 setsockopt(c->listeners[i], SOL_SOCKET,
					    SO_DETACH_FILTER, &none, sizeof(none));

		/* ENOENT: there was no filter to take off */
		if (rc != 0 && errno != ENOENT)
			xd_warn("cannot %s the listener's filter of blocked addresses: %s",
				c->nblocked > 0 ? "set" : "remove",
				strerror(errno));
	}
}

/* Takes off the addresses that hold fewer idle connections than their
 * limit now. Loop thread, lock held. */
static void unblock_some(struct xd_conns *c)
{
	for (size_t i = 0; i < c->nblocked;) {
		if (idle_of(c, &c->blocked[i]) >= c->limits.max_idle_per_address) {
			i++;
			continue;
		}
		c->blocked[i] = c->blocked[--c->nblocked];
		c->filter_dirty = true;
	}
	atomic_store(&nblocked_now, c->nblocked);
}

/* ---------------- the mutator (gRPC's threads) ---------------- */

/* What a refusal's log line says. */
struct verdict {
	int reason; /* enum xd_conn_refusal, or -1: accepted */
	size_t count;
	size_t drained;
	bool blocked; /* its address is blocked from now on */
};

static struct verdict judge(struct xd_conns *c, int fd, const struct key *k,
			    const struct sockaddr_storage *ss)
{
	const struct xd_conns_limits *l = &c->limits;
	struct verdict v = {-1, 0, 0, false};

	if (short_of_descriptors(c, fd)) {
		v.reason = XD_CONN_REFUSED_DESCRIPTORS;
		v.count = (size_t)fd + 1;
	} else if (l->max_idle_per_address != 0 &&
		   (v.count = idle_of(c, k)) >= l->max_idle_per_address &&
		   !xd_address_in(l->trusted, l->ntrusted,
				  (const struct sockaddr *)ss)) {
		v.reason = XD_CONN_REFUSED_PER_ADDRESS;
	} else if (l->max_idle != 0 &&
		   (v.count = atomic_load(&nidle)) >= l->max_idle) {
		v.reason = XD_CONN_REFUSED_IDLE;
	}
	return v;
}

/* Forgets what an accepted socket proves closed: an entry on the same
 * descriptor, or of the same address and port. */
static void forget_stale(struct xd_conns *c, int fd, const struct key *k)
{
	struct entry *e;

	if ((e = find_fd(c, fd)) != NULL)
		remove_entry(e);
	if ((e = find_peer(c, k)) != NULL)
		remove_entry(e);
}

static void track(struct xd_conns *c, int fd, ino_t ino, const struct key *k)
{
	struct entry *e = xd_calloc(1, sizeof(*e));

	e->fd = fd;
	e->ino = ino;
	e->key = *k;
	xd_list_init(&e->by_addr);
	xd_list_init(&e->idle);
	xd_list_push_back(&c->fd_buckets[fd_hash(c, fd)], &e->by_fd);
	xd_list_push_back(&c->peer_buckets[peer_hash(c, k)], &e->by_peer);
	atomic_fetch_add(&nopen, 1);
	make_idle(c, e, CONN_NEW);
	if (!c->sweeping) {
		c->sweeping = true;
		uv_async_send(&c->wake);
	}
}

static void log_refusal(const struct xd_conns *c,
			const struct sockaddr_storage *ss,
			const struct verdict *v)
{
	char peer[64];
	unsigned long dropped;
	char more[64] = "";

	if (!xd_log_limit_take(&conn_log, &dropped))
		return;
	(void)xd_address_format((const struct sockaddr *)ss, peer, sizeof(peer));
	if (dropped > 0)
		snprintf(more, sizeof(more), " (%lu more not logged)", dropped);
	switch (v->reason) {
	case XD_CONN_REFUSED_PER_ADDRESS:
		xd_warn("connection from %s refused: %zu connections without a stream from this address already (max_idle_connections_per_address)%s%s%s",
			peer, v->count,
			v->blocked ? "; its new connections are dropped until it holds fewer" : "",
			xd_address_is_private((const struct sockaddr *)ss) ?
				"; if that address is a balancer's or proxy's, list it in trusted_proxies" :
				"",
			more);
		break;
	case XD_CONN_REFUSED_IDLE:
		xd_warn("connection from %s refused: %zu connections without a stream already (max_idle_connections)%s",
			peer, v->count, more);
		break;
	default:
		xd_warn("connection from %s refused: %zu descriptors or more open of the open files limit %lu, fd_reserve %zu kept free; %zu waiting connections closed too%s",
			peer, v->count, c->limits.fd_limit,
			c->limits.fd_reserve, v->drained, more);
		break;
	}
}

static bool on_accepted(struct xd_conns *c, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct key k;
	struct stat st;
	struct verdict v;

	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0 ||
	    !key_of(&ss, true, &k) || fstat(fd, &st) != 0)
		return true; /* a unix socket, or one already gone */
	atomic_fetch_add(&accepted, 1);
	pthread_mutex_lock(&c->lock);
	if (c->closed) {
		pthread_mutex_unlock(&c->lock);
		return true;
	}
	forget_stale(c, fd, &k);
	v = judge(c, fd, &k, &ss);
	if (v.reason < 0) {
		track(c, fd, st.st_ino, &k);
	} else {
		shut(fd);
		if (v.reason == XD_CONN_REFUSED_DESCRIPTORS) {
			v.drained = drain(c, fd);
			atomic_fetch_add(&refused[v.reason], v.drained);
			/* the sweep counts again, and gives the spares back */
			if (!c->sweeping) {
				c->sweeping = true;
				uv_async_send(&c->wake);
			}
		}
		if (v.reason == XD_CONN_REFUSED_PER_ADDRESS &&
		    (v.blocked = block(c, &k)))
			uv_async_send(&c->wake); /* the loop sets the filter */
		atomic_fetch_add(&refused[v.reason], 1);
	}
	pthread_mutex_unlock(&c->lock);
	if (v.reason >= 0)
		log_refusal(c, &ss, &v);
	return true;
}

static bool mutate_fd_2(const struct mutate_info *info, grpc_socket_mutator *m)
{
	struct xd_conns *c = xd_container_of(m, struct xd_conns, base);

	switch (info->usage) {
	case FD_SERVER_LISTENER:
		pthread_mutex_lock(&c->lock);
		if (c->nlisteners < LISTENERS_MAX)
			c->listeners[c->nlisteners++] = info->fd;
		pthread_mutex_unlock(&c->lock);
		return true;
	case FD_SERVER_CONNECTION:
		/* Always true: gRPC 1.51 leaks a socket its mutator fails
		 * and stops accepting on that listener. */
		return on_accepted(c, info->fd);
	case FD_CLIENT_CONNECTION:
	default:
		return true;
	}
}

/* gRPC calls mutate_fd_2 when it is set; this is for the other uses of
 * older releases, which have nothing to judge. */
static bool mutate_fd(int fd XD_UNUSED, grpc_socket_mutator *m XD_UNUSED)
{
	return true;
}

static int compare(grpc_socket_mutator *a, grpc_socket_mutator *b)
{
	return a < b ? -1 : a > b;
}

/* The last reference: gRPC's (any thread) or the server's (loop). The
 * loop's handles are closed by then. */
static void destroy(grpc_socket_mutator *m)
{
	struct xd_conns *c = xd_container_of(m, struct xd_conns, base);
	struct xd_list *n, *tmp;

	xd_list_for_each_safe(n, tmp, &c->idle)
		remove_entry(xd_container_of(n, struct entry, idle));
	for (size_t i = 0; i < c->nbuckets; i++)
		xd_list_for_each_safe(n, tmp, &c->fd_buckets[i])
			remove_entry(xd_container_of(n, struct entry, by_fd));
	while (release_spare(c))
		;
	pthread_mutex_destroy(&c->lock);
	free(c->fd_buckets);
	free(c->peer_buckets);
	free(c->addr_buckets);
	free(c);
}

static const struct mutator_vtable vtable = {
	.mutate_fd = mutate_fd,
	.compare = compare,
	.destroy = destroy,
	.mutate_fd_2 = mutate_fd_2,
};

static void unref(struct xd_conns *c)
{
	if (gpr_unref(&c->base.refcount))
		c->base.vtable->destroy(&c->base);
}

static void *arg_copy(void *p)
{
	struct xd_conns *c = p;

	gpr_ref(&c->base.refcount);
	return p;
}

static void arg_destroy(void *p)
{
	unref(p);
}

static int arg_cmp(void *a, void *b)
{
	return compare(a, b);
}

static const grpc_arg_pointer_vtable arg_vtable = {arg_copy, arg_destroy,
						   arg_cmp};

/* ---------------- the sweep (loop thread) ---------------- */

static uint64_t sweep_period_ms(const struct xd_conns *c)
{
	uint64_t ms = c->limits.first_stream_ms / 4;

	if (c->limits.first_stream_ms == 0 || ms > 1000)
		return 1000;
	return ms < 100 ? 100 : ms;
}

/* Counts the open descriptors when they may be near the limit. */
static void count_descriptors(struct xd_conns *c)
{
	unsigned long limit = c->limits.fd_limit;
	long open;

	if (limit == 0)
		return;
	if (!c->pressure &&
	    (atomic_load(&nopen) + SPARES + c->limits.fd_reserve) * 2 < limit) {
		return;
	}
	open = xd_fdlimit_open_count();
	/* no descriptor to count with is pressure too */
	c->pressure = open < 0 ||
		      (unsigned long)open + c->limits.fd_reserve >= limit;
}

static void on_sweep(uv_timer_t *t)
{
	struct xd_conns *c = t->data;
	uint64_t now = xd_mono_ms(), deadline = c->limits.first_stream_ms;
	struct xd_list *n, *tmp;
	struct sockaddr_storage late[SWEEP_LOG_MAX];
	size_t nlate = 0, more = 0, gone = 0;
	unsigned long long refusals = 0;
	unsigned long dropped;

	XD_ASSERT_LOOP();
	pthread_mutex_lock(&c->lock);
	count_descriptors(c);
	xd_list_for_each_safe(n, tmp, &c->idle) {
		struct entry *e = xd_container_of(n, struct entry, idle);

		if (!alive(e)) {
			remove_entry(e);
			gone++;
			continue;
		}
		if (e->state != CONN_NEW || e->shut || deadline == 0 ||
		    now - e->since_ms < deadline)
			continue;
		shut(e->fd);
		e->shut = true;
		atomic_fetch_add(&timed_out, 1);
		if (nlate < SWEEP_LOG_MAX) {
			struct sockaddr_in6 *in6 = (void *)&late[nlate++];

			/* the key as an address, for the line below */
			memset(in6, 0, sizeof(late[0]));
			if (e->key.family == AF_INET) {
				struct sockaddr_in *in = (void *)in6;

				in->sin_family = AF_INET;
				memcpy(&in->sin_addr, e->key.addr, 4);
				in->sin_port = e->key.port;
			} else {
				in6->sin6_family = AF_INET6;
				memcpy(&in6->sin6_addr, e->key.addr, 16);
				in6->sin6_port = e->key.port;
			}
		} else {
			more++;
		}
	}
	if (!c->pressure)
		fill_spares(c);
	unblock_some(c);
	if (c->filter_dirty)
		set_filter(c);
	if (xd_list_empty(&c->idle) && !c->pressure && c->nblocked == 0) {
		c->sweeping = false;
		uv_timer_stop(t);
	}
	pthread_mutex_unlock(&c->lock);
	for (int r = 0; r < XD_CONN_REFUSED_COUNT; r++)
		refusals += atomic_load(&refused[r]);
	if (gone > 0 || refusals != c->refusals_seen)
		xd_trim_soon(c->limits.trim);
	c->refusals_seen = refusals;
	for (size_t i = 0; i < nlate; i++) {
		char peer[64];

		if (!xd_log_limit_take(&conn_log, &dropped))
			break;
		(void)xd_address_format((struct sockaddr *)&late[i], peer,
					sizeof(peer));
		xd_warn("connection from %s closed: no stream within first_stream_timeout (%llu ms)%s",
			peer, (unsigned long long)deadline,
			i == nlate - 1 && more > 0 ? ", and more like it" : "");
	}
}

static void on_wake(uv_async_t *a)
{
	struct xd_conns *c = a->data;
	uint64_t ms = sweep_period_ms(c);

	pthread_mutex_lock(&c->lock);
	if (c->filter_dirty && !c->closed)
		set_filter(c);
	pthread_mutex_unlock(&c->lock);

	if (!uv_is_active((uv_handle_t *)&c->sweep))
		uv_timer_start(&c->sweep, on_sweep, ms, ms);
}

/* ---------------- the server's side (loop thread) ---------------- */

static size_t buckets_for(unsigned long fd_limit)
{
	size_t n = 256;

	while (n < 65536 && n * 4 < fd_limit)
		n *= 2;
	return n;
}

static struct xd_list *new_buckets(size_t n)
{
	struct xd_list *b = xd_calloc(n, sizeof(*b));

	for (size_t i = 0; i < n; i++)
		xd_list_init(&b[i]);
	return b;
}

struct xd_conns *xd_conns_new(uv_loop_t *loop,
			      const struct xd_conns_limits *limits)
{
	struct xd_conns *c = xd_calloc(1, sizeof(*c));

	XD_ASSERT_LOOP();
	c->base.vtable = &vtable;
	gpr_ref_init(&c->base.refcount, 1);
	c->limits = *limits;
	c->loop = loop;
	pthread_mutex_init(&c->lock, NULL);
	c->nbuckets = buckets_for(limits->fd_limit);
	c->fd_buckets = new_buckets(c->nbuckets);
	c->peer_buckets = new_buckets(c->nbuckets);
	c->addr_buckets = new_buckets(c->nbuckets);
	xd_list_init(&c->idle);
	fill_spares(c);
	uv_timer_init(loop, &c->sweep);
	c->sweep.data = c;
	uv_async_init(loop, &c->wake, on_wake);
	c->wake.data = c;
	c->handles = 2;
	return c;
}

grpc_arg xd_conns_channel_arg(struct xd_conns *c)
{
	grpc_arg a = {.type = GRPC_ARG_POINTER,
		      .key = (char *)GRPC_ARG_SOCKET_MUTATOR};

	a.value.pointer.p = &c->base;
	a.value.pointer.vtable = &arg_vtable;
	return a;
}

bool xd_conns_seen_listener(const struct xd_conns *c)
{
	bool seen;

	pthread_mutex_lock((pthread_mutex_t *)&c->lock);
	seen = c->nlisteners > 0;
	pthread_mutex_unlock((pthread_mutex_t *)&c->lock);
	return seen;
}

/* The entry of `peer`, with the lock held; NULL when untracked. */
static struct entry *entry_of(struct xd_conns *c, const char *peer)
{
	struct sockaddr_storage ss;
	struct key k;

	if (!xd_address_from_peer(peer, &ss) || !key_of(&ss, true, &k))
		return NULL;
	return find_peer(c, &k);
}

void xd_conns_streams_began(struct xd_conns *c, const char *peer)
{
	struct entry *e;

	XD_ASSERT_LOOP();
	pthread_mutex_lock(&c->lock);
	e = entry_of(c, peer);
	if (e != NULL && e->state != CONN_STREAMING)
		make_streaming(e);
	pthread_mutex_unlock(&c->lock);
}

void xd_conns_streams_ended(struct xd_conns *c, const char *peer)
{
	struct entry *e;

	XD_ASSERT_LOOP();
	pthread_mutex_lock(&c->lock);
	e = entry_of(c, peer);
	if (e != NULL && e->state == CONN_STREAMING) {
		make_idle(c, e, CONN_IDLE);
		if (!c->sweeping) {
			uint64_t ms = sweep_period_ms(c);

			c->sweeping = true;
			uv_timer_start(&c->sweep, on_sweep, ms, ms);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

static void handle_closed(uv_handle_t *h)
{
	struct xd_conns *c = h->data;

	if (--c->handles == 0)
		unref(c);
}

void xd_conns_close(struct xd_conns *c)
{
	XD_ASSERT_LOOP();
	pthread_mutex_lock(&c->lock);
	XD_ASSERT(!c->closed);
	c->closed = true; /* from now on the mutator sends nothing */
	if (c->nblocked > 0) {
		c->nblocked = 0;
		set_filter(c);
		atomic_store(&nblocked_now, 0);
	}
	pthread_mutex_unlock(&c->lock);
	uv_close((uv_handle_t *)&c->sweep, handle_closed);
	uv_close((uv_handle_t *)&c->wake, handle_closed);
}

unsigned long long xd_conns_refused(enum xd_conn_refusal r)
{
	XD_ASSERT_INFO(r < XD_CONN_REFUSED_COUNT, "refusal %d", (int)r);
	return atomic_load(&refused[r]);
}

const char *xd_conn_refusal_name(enum xd_conn_refusal r)
{
	XD_ASSERT_INFO(r < XD_CONN_REFUSED_COUNT, "refusal %d", (int)r);
	return refusal_names[r];
}

unsigned long long xd_conns_timed_out(void)
{
	return atomic_load(&timed_out);
}

unsigned long long xd_conns_accepted(void)
{
	return atomic_load(&accepted);
}

size_t xd_conns_open(void)
{
	return atomic_load(&nopen);
}

size_t xd_conns_idle(void)
{
	return atomic_load(&nidle);
}

size_t xd_conns_blocked(void)
{
	return atomic_load(&nblocked_now);
}
