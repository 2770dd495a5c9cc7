/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/handshakes.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <grpc/grpc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "util/address.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* "ipv6:[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535" fits;
 * a unix socket's path is cut. */
#define PEER_MAX 72
#define BUCKETS 1024 /* a power of two */
/* The longest a reason from gRPC is quoted in a line. */
#define REASON_MAX 240

/* gRPC 1.51's handshake tracer, as it writes (handshaker.cc). */
static const char MANAGER[] = "handshake_manager ";
static const char STARTS[] = "error=OK shutdown=0 index=0, args={endpoint=";
static const char DONE[] =
	"handshaking complete -- scheduling on_handshake_done with error=";
/* gRPC's own line for a failure, without the tracer (chttp2_server.cc) */
static const char FAILED[] = "Handshaking failed: ";
/* OpenSSL's reason, logged by gRPC as an error before the failure */
static const char FATAL[] = "Handshake failed with fatal error ";

/* A handshake under way and its peer. */
struct entry {
	uintptr_t manager;
	uint64_t since_ms; /* monotonic */
	char peer[PEER_MAX];
	struct entry *next;
};

/* Set once, before `watching`; read by gRPC's threads after it. */
static struct {
	pthread_mutex_t lock;
	bool traced;   /* the tracer is on: peers come from it */
	bool verbose;  /* the operator set GRPC_TRACE: tracer lines at debug */
	uint64_t timeout_ms, max_age_ms;
	int (*endpoint_fd)(void *endpoint);
	struct entry *pool, *free_list; /* XD_HANDSHAKES_MAX entries */
	struct entry *buckets[BUCKETS];
} hs = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Published last: gRPC's threads log (and read `hs`) from grpc_init. */
static atomic_bool watching;
static atomic_ullong failures;

/* A warning or an info line per failure, at most this many a second. */
static struct xd_log_limit failure_log = XD_LOG_LIMIT_INIT(5, 1000);

bool xd_handshakes_watch(uint64_t timeout_ms)
{
	/* int grpc_endpoint_get_fd(grpc_endpoint *), C++ linkage */
	void *sym = dlsym(RTLD_DEFAULT, "_Z20grpc_endpoint_get_fdP13grpc_endpoint");

	/* once, at start: gRPC's threads read `hs` unlocked once watching */
	XD_ASSERT_LOOP();
	XD_ASSERT(!atomic_load(&watching) && hs.pool == NULL);
	hs.pool = xd_calloc(XD_HANDSHAKES_MAX, sizeof(*hs.pool));
	for (size_t i = 0; i < XD_HANDSHAKES_MAX; i++) {
		hs.pool[i].next = hs.free_list;
		hs.free_list = &hs.pool[i];
	}
	*(void **)&hs.endpoint_fd = sym;
	/* a handshake is over by its timeout; a little more for the line
	 * that says so to arrive */
	hs.timeout_ms = timeout_ms;
	hs.max_age_ms = timeout_ms + 5000;
	hs.verbose = getenv("GRPC_TRACE") != NULL;
	hs.traced = sym != NULL && grpc_tracer_set_enabled("handshaker", 1) != 0;
	atomic_store(&watching, true);
	return hs.traced;
}

unsigned long long xd_handshakes_failed(void)
{
	return atomic_load(&failures);
}

/* ---------------- peers of handshakes under way ---------------- */

static struct entry **bucket(uintptr_t manager)
{
	/* heap addresses: the low bits are alignment */
	return &hs.buckets[(manager >> 4) & (BUCKETS - 1)];
}

/* Entries older than any handshake: their end was never seen. Locked. */
static void drop_stale(uint64_t now)
{
	for (size_t b = 0; b < BUCKETS; b++) {
		for (struct entry **p = &hs.buckets[b]; *p != NULL;) {
			struct entry *e = *p;

			if (now - e->since_ms <= hs.max_age_ms) {
				p = &e->next;
				continue;
			}
			*p = e->next;
			e->next = hs.free_list;
			hs.free_list = e;
		}
	}
}

static void remember(uintptr_t manager, const char *peer)
{
	uint64_t now = xd_mono_ms();
	struct entry *e;

	pthread_mutex_lock(&hs.lock);
	for (e = *bucket(manager); e != NULL && e->manager != manager; e = e->next)
		;
	if (e == NULL) {
		if (hs.free_list == NULL)
			drop_stale(now);
		e = hs.free_list;
		if (e != NULL) {
			hs.free_list = e->next;
			e->manager = manager;
			e->next = *bucket(manager);
			*bucket(manager) = e;
		}
	}
	if (e != NULL) {
		e->since_ms = now;
		snprintf(e->peer, sizeof(e->peer), "%s", peer);
	}
	pthread_mutex_unlock(&hs.lock);
}

/* The peer of `manager`'s handshake into `out` (cap PEER_MAX), which
 * is over, and since when it ran; "an unknown peer" and 0 when it was
 * not remembered. */
static uint64_t forget(uintptr_t manager, char *out)
{
	uint64_t since = 0;

	snprintf(out, PEER_MAX, "an unknown peer");
	pthread_mutex_lock(&hs.lock);
	for (struct entry **p = bucket(manager); *p != NULL; p = &(*p)->next) {
		struct entry *e = *p;

		if (e->manager != manager)
			continue;
		memcpy(out, e->peer, PEER_MAX);
		since = e->since_ms;
		*p = e->next;
		e->next = hs.free_list;
		hs.free_list = e;
		break;
	}
	pthread_mutex_unlock(&hs.lock);
	return since;
}

/* A connected socket's peer as gRPC names peers ("ipv4:10.0.0.7:40112",
 * "ipv6:[::1]:5000", "unix:/run/xds.sock"), or false. */
static bool socket_peer(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
		return false;
	if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) {
		char addr[INET6_ADDRSTRLEN + 8];
		int family = xd_address_format((struct sockaddr *)&ss, addr,
					       sizeof(addr));

		snprintf(out, len, "%s:%s", family == AF_INET ? "ipv4" : "ipv6",
			 addr);
		return true;
	}
	if (ss.ss_family == AF_UNIX) {
		/* a client's end is nameless: the socket it came to */
		struct sockaddr_un un;
		socklen_t ul = sizeof(un);
		size_t path_len;

		memset(&un, 0, sizeof(un));
		if (getsockname(fd, (struct sockaddr *)&un, &ul) != 0)
			return false;
		path_len = strnlen(un.sun_path, sizeof(un.sun_path));
		if (len < 6)
			return false;
		if (path_len > len - 6)
			path_len = len - 6; /* cut: this is for a log line */
		memcpy(out, "unix:", 5);
		memcpy(out + 5, un.sun_path, path_len);
		out[5 + path_len] = '\0';
		return true;
	}
	return false;
}

/* ---------------- failures ---------------- */

/* What an OpenSSL or gRPC reason means for an operator. */
static const struct {
	const char *needle, *says;
	enum xd_log_level level;
} meanings[] = {
	{"peer did not return a certificate",
	 "the client sent no certificate, and tls.client_ca requires one", XD_LOG_WARN},
	{"certificate verify failed",
	 "the client's certificate was refused: not signed by tls.client_ca, expired, or not yet valid",
	 XD_LOG_WARN},
	{"alert unknown ca",
	 "the client does not trust the CA that signed xdsd's certificate", XD_LOG_WARN},
	{"alert bad certificate",
	 "the client refused xdsd's certificate (its name or dates?)", XD_LOG_WARN},
	{"alert certificate",
	 "the client refused xdsd's certificate (its name or dates?)", XD_LOG_WARN},
	{"wrong version number", "the client does not speak TLS (plaintext?)", XD_LOG_WARN},
	{"http request", "the client does not speak TLS (plaintext HTTP)", XD_LOG_WARN},
	{"packet length too long", "the client does not speak TLS", XD_LOG_WARN},
	{"no shared cipher",
	 "the client and xdsd have no TLS version, cipher or protocol (ALPN) in common",
	 XD_LOG_WARN},
	{"unsupported protocol",
	 "the client and xdsd have no TLS version, cipher or protocol (ALPN) in common",
	 XD_LOG_WARN},
	{"no application protocol",
	 "the client and xdsd have no TLS version, cipher or protocol (ALPN) in common",
	 XD_LOG_WARN},
	/* what gRPC says when the peer closed, and when it closed the
	 * connection at handshake_timeout: told apart by the time */
	{"Handshake read failed",
	 "the connection closed during the handshake", XD_LOG_INFO},
	{"Handshake write failed",
	 "the connection closed during the handshake", XD_LOG_INFO},
};

/*
 * gRPC's error as a reason: "UNKNOWN:Ssl handshake failed: SSL_ERROR_SSL:
 * error:0A0000C7:SSL routines::peer did not return a certificate
 * {file:..., tsi_code:10}" without its status word and its properties.
 */
static int reason_len(const char *error, const char **start)
{
	const char *p = error, *props;

	while ((*p >= 'A' && *p <= 'Z') || *p == '_')
		p++;
	*start = *p == ':' && p > error ? p + 1 : error;
	props = strstr(*start, " {");
	return XD_LOG_CLIP(props != NULL ? (size_t)(props - *start) :
					   strlen(*start));
}

/* A handshake with `peer` failed with gRPC's `error` after `took_ms`
 * (0: unknown). */
static void failed(const char *peer, const char *error, uint64_t took_ms)
{
	const char *reason, *says = NULL;
	enum xd_log_level level = XD_LOG_WARN;
	int len = reason_len(error, &reason);
	unsigned long dropped;

	atomic_fetch_add(&failures, 1);
	/* a timer's precision short of the timeout is the timeout */
	if (took_ms != 0 && took_ms + 100 >= hs.timeout_ms)
		says = "no TLS handshake within handshake_timeout";
	for (size_t i = 0; says == NULL && i < XD_ARRAY_LEN(meanings); i++) {
		const char *at = strstr(reason, meanings[i].needle);

		if (at != NULL && at < reason + len) {
			says = meanings[i].says;
			level = meanings[i].level;
			break;
		}
	}
	if (len > REASON_MAX)
		len = REASON_MAX;
	if (level > xd_log_threshold || !xd_log_limit_take(&failure_log, &dropped))
		return;
	xd_log(level, "TLS handshake with %s failed: %s%s%.*s%s%s", peer,
	       says ? says : "", says ? " (" : "", len, reason, says ? ")" : "",
	       dropped ? " (and more failed handshakes, not logged)" : "");
}

/* ---------------- gRPC's lines ---------------- */

/* "0x7f59..: " at `p`: the pointer, and where its line goes on. */
static bool pointer_at(const char *p, uintptr_t *out, const char **rest)
{
	char *end;
	unsigned long long v;

	if (strncmp(p, "0x", 2) != 0)
		return false;
	v = strtoull(p, &end, 16);
	if (end == p || v == 0)
		return false;
	*out = (uintptr_t)v;
	*rest = end;
	return true;
}

static void tracer_line(const char *msg)
{
	uintptr_t manager, endpoint;
	const char *rest;
	char peer[PEER_MAX];

	if (!pointer_at(msg + sizeof(MANAGER) - 1, &manager, &rest) ||
	    strncmp(rest, ": ", 2) != 0)
		return;
	rest += 2;
	if (strncmp(rest, STARTS, sizeof(STARTS) - 1) == 0) {
		/* the endpoint is the handshake's, alive while it runs */
		if (!pointer_at(rest + sizeof(STARTS) - 1, &endpoint, &rest) ||
		    !socket_peer(hs.endpoint_fd((void *)endpoint), peer,
				 sizeof(peer)))
			return;
		remember(manager, peer);
	} else if (strncmp(rest, DONE, sizeof(DONE) - 1) == 0) {
		uint64_t since;

		rest += sizeof(DONE) - 1;
		since = forget(manager, peer);
		if (strcmp(rest, "OK") != 0)
			failed(peer, rest, since ? xd_mono_ms() - since : 0);
	}
}

enum xd_handshake_line xd_handshakes_on_log(const char *message)
{
	if (!atomic_load(&watching))
		return XD_HANDSHAKE_OTHER;
	if (strncmp(message, MANAGER, sizeof(MANAGER) - 1) == 0) {
		if (hs.traced)
			tracer_line(message);
		return hs.verbose ? XD_HANDSHAKE_DEBUG : XD_HANDSHAKE_TRACE;
	}
	if (strncmp(message, FAILED, sizeof(FAILED) - 1) == 0) {
		/* with the tracer, its line said it, with the peer */
		if (!hs.traced)
			failed("an unknown peer", message + sizeof(FAILED) - 1, 0);
		return XD_HANDSHAKE_DEBUG;
	}
	/* said again, with the peer, when the handshake is over */
	if (strncmp(message, FATAL, sizeof(FATAL) - 1) == 0)
		return XD_HANDSHAKE_DEBUG;
	return XD_HANDSHAKE_OTHER;
}
