/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/server.h"

#include <errno.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <limits.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/bridge.h"
#include "transport/conns.h"
#include "transport/peers.h"
#include "transport/refusals.h"
#include "transport/tag.h"
#include "transport/tls.h"
#include "util/address.h"
#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/trim.h"
#include "util/xalloc.h"

/*
 * Accepts kept outstanding per method. A call for a registered method
 * waits inside gRPC until one of its accepts is free, and every
 * completion re-arms its slot at once, so the pool only has to cover a
 * burst within one loop iteration. Envoy fleets use ADS; the per-type
 * services see a few streams per client at most.
 */
#define ACCEPTS_AGGREGATED 32
#define ACCEPTS_PER_TYPE 4
#define ACCEPTS_UNKNOWN 4
#define ACCEPTS_CSDS 2 /* operators' tools, a call now and then */
#define ACCEPTS_HEALTH 4 /* balancers' checks, every second or so each */

/* The least a read may take while memory is short (read_chunk_size). */
#define READ_CHUNK_MIN 256

/* gRPC 1.51's experiment whose reads take 8 KiB at least, whatever the
 * read chunk arguments say. */
#define READ_CHUNKS_EXPERIMENT "tcp_read_chunks"

struct accept_slot {
	struct xd_tag tag;
	struct xd_server *srv;
	const struct xd_method *method; /* NULL: any other method */
	const struct xd_stream_handler *handler; /* the server's, for method */
	void *registered;               /* gRPC's handle for `method` */
	grpc_call *call;
	gpr_timespec deadline;
	grpc_metadata_array md;
	grpc_call_details details; /* for unregistered calls */
};

/* A call to a method xdsd does not serve, being answered UNIMPLEMENTED. */
struct reject {
	struct xd_tag tag;
	struct xd_server *srv;
	grpc_call *call;
	grpc_call_details details;
	grpc_metadata_array md;
	grpc_slice message;
	int cancelled;
};

struct xd_server {
	uv_loop_t *loop;
	grpc_server *grpc;
	struct xd_bridge *bridge;
	grpc_completion_queue *cq;
	struct xd_stream_handler handler;
	struct xd_stream_handler csds_handler;
	bool csds; /* csds_handler is set and its methods registered */
	struct xd_stream_handler health_handler;
	bool health; /* the same for the health service */
	int port;

	struct accept_slot *slots;
	size_t nslots, cap_slots;
	struct xd_peers *peers; /* connections per client address */
	struct xd_conns *conns; /* connections from their accept */
	struct xd_trim *trim;   /* gives memory back as streams end */
	size_t max_per_address;
	size_t accepts_pending; /* slots armed in gRPC */
	size_t streams;         /* live xd_streams */
	size_t rejects;         /* unknown-method calls being answered */

	bool shutting_down;
	bool shutdown_notified; /* gRPC delivered shutdown_tag */
	struct xd_tag shutdown_tag;
	void (*on_stopped)(void *arg);
	void *stopped_arg;
};

static void arm(struct accept_slot *a);

/* io_threads, 0 meaning one per CPU core this process may use. */
static size_t io_threads(const struct xd_config *cfg)
{
	size_t n = cfg->io_threads != 0 ? (size_t)cfg->io_threads :
					  (size_t)uv_available_parallelism();

	if (n > XD_BRIDGE_MAX_THREADS)
		n = XD_BRIDGE_MAX_THREADS;
	xd_info("%zu I/O thread%s for gRPC (io_threads: %s)", n,
		n == 1 ? "" : "s", cfg->io_threads != 0 ? "set" : "one per core");
	return n;
}

static void bridge_stopped(void *arg)
{
	struct xd_server *srv = arg;
	void (*done)(void *) = srv->on_stopped;
	void *done_arg = srv->stopped_arg;

	for (size_t i = 0; i < srv->nslots; i++) {
		grpc_metadata_array_destroy(&srv->slots[i].md);
		grpc_call_details_destroy(&srv->slots[i].details);
	}
	free(srv->slots);
	xd_peers_free(srv->peers);
	free(srv);
	xd_debug("server stopped");
	if (done != NULL)
		done(done_arg);
}

/*
 * The last step of shutdown: only once gRPC has confirmed it, every
 * accept came back and every call is released may the server and the
 * queue go (docs/grpc-core.md §3.4).
 */
static void maybe_finish(struct xd_server *srv)
{
	if (!srv->shutdown_notified || srv->accepts_pending != 0 ||
	    srv->streams != 0 || srv->rejects != 0)
		return;
	/* once: nothing is left that could call here again */
	XD_ASSERT(srv->shutting_down && srv->grpc != NULL);
	grpc_server_destroy(srv->grpc);
	srv->grpc = NULL;
	xd_bridge_stop(srv->bridge, bridge_stopped, srv);
}

/* What a stream's end must undo: its count, and its connection's. */
struct stream_ref {
	struct xd_server *srv;
	char *peer; /* gpr_malloc'd */
};

static void stream_gone(void *arg)
{
	struct stream_ref *ref = arg;
	struct xd_server *srv = ref->srv;

	xd_peers_close(srv->peers, ref->peer);
	if (xd_peers_streams(srv->peers, ref->peer) == 0)
		xd_conns_streams_ended(srv->conns, ref->peer);
	gpr_free(ref->peer);
	free(ref);
	(void)XD_UNREF(srv->streams);
	xd_trim_soon(srv->trim);
	if (srv->shutting_down)
		maybe_finish(srv);
}

static void reject_done(struct xd_tag *tag, bool ok XD_UNUSED)
{
	struct reject *r = xd_container_of(tag, struct reject, tag);
	struct xd_server *srv = r->srv;

	grpc_call_unref(r->call);
	grpc_call_details_destroy(&r->details);
	grpc_metadata_array_destroy(&r->md);
	grpc_slice_unref(r->message);
	free(r);
	(void)XD_UNREF(srv->rejects);
	if (srv->shutting_down)
		maybe_finish(srv);
}

/* Answers the call of `a` (whose client proved `identity`, or NULL)
 * with `code` and `msg` (copied), then lets it go; the slot's details
 * and metadata move into the answer. Counted as a refusal. */
static void reject_call(struct accept_slot *a, const char *identity,
			grpc_status_code code, const char *msg)
{
	struct xd_server *srv = a->srv;
	struct reject *r = xd_calloc(1, sizeof(*r));
	grpc_op ops[3] = {{.op = GRPC_OP_SEND_INITIAL_METADATA},
			  {.op = GRPC_OP_SEND_STATUS_FROM_SERVER},
			  {.op = GRPC_OP_RECV_CLOSE_ON_SERVER}};

	r->tag.done = reject_done;
	r->srv = srv;
	r->call = a->call;
	r->details = a->details;
	r->md = a->md;
	r->message = grpc_slice_from_copied_string(msg);
	xd_refusals_count(code, identity != NULL);
	ops[1].data.send_status_from_server.status = code;
	ops[1].data.send_status_from_server.status_details = &r->message;
	ops[2].data.recv_close_on_server.cancelled = &r->cancelled;
	srv->rejects++;
	if (grpc_call_start_batch(r->call, ops, 3, &r->tag, NULL) !=
	    GRPC_CALL_OK) {
		grpc_call_cancel(r->call, NULL);
		reject_done(&r->tag, false);
	}
}

/* Warnings about refused connections, a few a second (a client that
 * loops reconnecting must not flood the log). */
static struct xd_log_limit refusal_log = XD_LOG_LIMIT_INIT(5, 1000);

/* " (identity 'x')" for a log line, or "" */
static const char *identity_note(char *buf, size_t len, const char *identity)
{
	if (identity == NULL)
		return "";
	snprintf(buf, len, ", identity '%.*s'", XD_LOG_CLIP(strlen(identity)),
		 identity);
	return buf;
}

static void reject_unknown(struct accept_slot *a)
{
	char *method = grpc_slice_to_c_string(a->details.method);
	char *msg = xd_asprintf("xdsd does not serve method %s", method);
	char *peer = grpc_call_get_peer(a->call);
	char *identity = xd_call_identity(a->call), note[XD_LOG_CLIENT_MAX + 16];
	unsigned long dropped;

	if (xd_log_limit_take(&refusal_log, &dropped))
		xd_info("unknown method '%.*s' called (from %s%s); answered UNIMPLEMENTED%s",
			XD_LOG_CLIP(strlen(method)), method, peer,
			identity_note(note, sizeof(note), identity),
			dropped ? " (and more refusals, not logged)" : "");
	reject_call(a, identity, GRPC_STATUS_UNIMPLEMENTED, msg);
	free(msg);
	free(identity);
	gpr_free(peer);
	gpr_free(method);
}

/* For a refusal by address: a private or loopback address may be a
 * balancer's, which every client behind it shares. */
static const char *proxy_hint(const char *peer)
{
	struct sockaddr_storage ss;

	if (!xd_address_from_peer(peer, &ss) ||
	    !xd_address_is_private((struct sockaddr *)&ss))
		return "";
	return "; if that address is a balancer's or proxy's, list it in trusted_proxies";
}

/* An xDS, CSDS or health call: a stream, unless its address holds too
 * many connections already (max_connections_per_address). The same
 * for every method, so that no service is a way around the limits. */
static void start_stream(struct accept_slot *a)
{
	struct xd_server *srv = a->srv;
	struct stream_ref *ref;
	char *peer = grpc_call_get_peer(a->call);
	unsigned long dropped;

	if (!xd_peers_open(srv->peers, peer, srv->max_per_address)) {
		char *msg = xd_asprintf(
			"%zu connections from this address already (max_connections_per_address)",
			xd_peers_connections(srv->peers, peer));
		char *identity = xd_call_identity(a->call);
		char note[XD_LOG_CLIENT_MAX + 16];

		if (xd_log_limit_take(&refusal_log, &dropped))
			xd_warn("stream (%s from %.*s%s) refused: %s%s%s", a->method->name,
				XD_LOG_CLIP(strlen(peer)), peer,
				identity_note(note, sizeof(note), identity), msg,
				proxy_hint(peer),
				dropped ? " (and more such streams, not logged)" : "");
		reject_call(a, identity, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
		free(identity);
		free(msg);
		gpr_free(peer);
		return;
	}
	if (xd_peers_streams(srv->peers, peer) == 1)
		xd_conns_streams_began(srv->conns, peer);
	ref = xd_calloc(1, sizeof(*ref));
	ref->srv = srv;
	ref->peer = peer;
	srv->streams++;
	xd_stream_start(a->call, &a->md, a->method, a->handler, stream_gone,
			ref);
}

static void accept_done(struct xd_tag *tag, bool ok)
{
	struct accept_slot *a = xd_container_of(tag, struct accept_slot, tag);
	struct xd_server *srv = a->srv;

	(void)XD_UNREF(srv->accepts_pending);
	if (!ok) {
		/* Only server shutdown fails an accept; there is no call. */
		if (!srv->shutting_down)
			xd_error("an accept failed while serving");
		maybe_finish(srv);
		return;
	}
	if (a->method != NULL)
		start_stream(a);
	else
		reject_unknown(a);
	grpc_call_details_init(&a->details);
	grpc_metadata_array_init(&a->md);
	a->call = NULL;
	if (!srv->shutting_down)
		arm(a);
}

static void arm(struct accept_slot *a)
{
	struct xd_server *srv = a->srv;
	grpc_call_error err;

	/* one accept per slot: gRPC writes the call into it */
	XD_ASSERT(a->call == NULL);
	if (a->method != NULL)
		err = grpc_server_request_registered_call(
			srv->grpc, a->registered, &a->call, &a->deadline,
			&a->md, NULL, srv->cq, srv->cq, &a->tag);
	else
		err = grpc_server_request_call(srv->grpc, &a->call,
					       &a->details, &a->md, srv->cq,
					       srv->cq, &a->tag);
	if (err != GRPC_CALL_OK) {
		xd_error("cannot arm an accept for %s (error %d)",
			 a->method ? a->method->path : "other methods",
			 (int)err);
		return;
	}
	srv->accepts_pending++;
}

static void shutdown_done(struct xd_tag *tag, bool ok XD_UNUSED)
{
	struct xd_server *srv =
		xd_container_of(tag, struct xd_server, shutdown_tag);

	XD_ASSERT(srv->shutting_down && !srv->shutdown_notified);
	srv->shutdown_notified = true;
	maybe_finish(srv);
}

void xd_server_prepare(const struct xd_config *cfg)
{
	const char *was = getenv("GRPC_EXPERIMENTS");
	char *want;

	/* the environment is read by gRPC's threads once they exist */
	XD_ASSERT_LOOP();
	if (cfg->read_chunk_size == 0)
		return;
	/* the operator's own choice about that experiment stands */
	if (was != NULL && strstr(was, READ_CHUNKS_EXPERIMENT) != NULL) {
		xd_info("GRPC_EXPERIMENTS names %s: read_chunk_size may not apply",
			READ_CHUNKS_EXPERIMENT);
		return;
	}
	want = xd_asprintf("%s%s-%s", was != NULL ? was : "",
			   was != NULL && *was != '\0' ? "," : "",
			   READ_CHUNKS_EXPERIMENT);
	if (setenv("GRPC_EXPERIMENTS", want, 1) != 0)
		xd_warn("cannot set GRPC_EXPERIMENTS: read_chunk_size does not apply");
	free(want);
}

/* The connection table, its limits from the configuration; at most a
 * quarter of the descriptors are kept in reserve. */
static struct xd_conns *new_conns(uv_loop_t *loop,
				  const struct xd_config *cfg,
				  unsigned long fd_limit,
				  struct xd_trim *trim)
{
	struct xd_conns_limits l = {
		.max_idle = (size_t)cfg->max_idle_connections,
		.max_idle_per_address =
			(size_t)cfg->max_idle_connections_per_address,
		.first_stream_ms = cfg->first_stream_timeout_ms,
		.fd_limit = fd_limit == (unsigned long)-1 ? 0 : fd_limit,
		.fd_reserve = (size_t)cfg->fd_reserve,
		.trusted = cfg->trusted_nets,
		.ntrusted = cfg->ntrusted_proxies,
		.trim = trim,
	};

	if (l.fd_limit != 0 && l.fd_reserve > l.fd_limit / 4) {
		xd_warn("fd_reserve %zu is over a quarter of the open files limit %lu: keeping %lu",
			l.fd_reserve, l.fd_limit, l.fd_limit / 4);
		l.fd_reserve = l.fd_limit / 4;
	}
	return xd_conns_new(loop, &l);
}

static int clamp_ms(uint64_t ms)
{
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void make_args(const struct xd_config *cfg, struct xd_conns *conns,
		      grpc_channel_args *out, grpc_arg *args, size_t cap)
{
	size_t n = 0;

#define INT_ARG(name, val)                                            \
	do {                                                         \
		XD_ASSERT(n < cap); /* argv's bound, in the caller */ \
		if (n < cap) {                                       \
			args[n].type = GRPC_ARG_INTEGER;             \
			args[n].key = (char *)(name);                 \
			args[n].value.integer = (val);               \
			n++;                                         \
		}                                                    \
	} while (0)

	/* keepalive_time 0 turns server pings off. */
	INT_ARG(GRPC_ARG_KEEPALIVE_TIME_MS,
		cfg->keepalive_time_ms ? clamp_ms(cfg->keepalive_time_ms) :
					 INT_MAX);
	INT_ARG(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
		clamp_ms(cfg->keepalive_timeout_ms));
	/* xDS streams sit idle for hours: the server's own keepalive pings
	 * must not stop after the default two pings without data, and
	 * clients' pings on idle streams must not earn a GOAWAY. */
	INT_ARG(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
	INT_ARG(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
	INT_ARG(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
		clamp_ms(cfg->min_client_ping_interval_ms));
	INT_ARG(GRPC_ARG_MAX_CONCURRENT_STREAMS,
		(int)cfg->max_streams_per_connection);
	INT_ARG(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
		(int)cfg->max_request_size);
	/* Responses are as large as the snapshot makes them. */
	INT_ARG(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, -1);
	if (cfg->max_connection_age_ms != 0) {
		INT_ARG(GRPC_ARG_MAX_CONNECTION_AGE_MS,
			clamp_ms(cfg->max_connection_age_ms));
		INT_ARG(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
			clamp_ms(cfg->max_connection_age_grace_ms));
	}
	INT_ARG(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
		clamp_ms(cfg->handshake_timeout_ms));
	/* A connection whose streams all ended goes after
	 * max_connection_idle; one that never opened a stream, after
	 * first_stream_timeout (conns.h). */
	if (cfg->max_connection_idle_ms != 0)
		INT_ARG(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
			clamp_ms(cfg->max_connection_idle_ms));
	/* gRPC sets SO_REUSEPORT by default: a second xdsd on the same port
	 * would then start "fine" and take half the clients. */
	INT_ARG(GRPC_ARG_ALLOW_REUSEPORT, 0);
	/* BDP probing pings a peer when its data arrives, to size xdsd's
	 * receive window; xDS requests are small, and every ACK of every
	 * client would cost a ping. Off: 15% less CPU configuring 10,000
	 * clients (bench/README.md). */
	INT_ARG(GRPC_ARG_HTTP2_BDP_PROBE, 0);
	/* Over TLS a connection keeps buffers of the TLS frame size (16 KB
	 * by gRPC's default) for what it seals and opens: 4 KB frames
	 * (tls.frame_size's default) cost 29 KB less per mTLS connection
	 * for the same convergence and CPU within noise, even for 5.7 MB
	 * configurations (bench/README.md, "Mutual TLS"). */
	if (cfg->tls.cert != NULL)
		INT_ARG(GRPC_ARG_TSI_MAX_FRAME_SIZE, (int)cfg->tls.frame_size);
	/* A connection's read buffer starts at read_chunk_size and grows
	 * (doubling) while reads fill it, up to gRPC's 4 MiB; it shrinks
	 * back slowly. xDS requests are small: 512 bytes instead of gRPC's
	 * 8 KiB save about 5 KB per idle connection (bench/README.md,
	 * "Memory per stream"). Only gRPC's reads without its
	 * tcp_read_chunks experiment follow these (xd_server_prepare). */
	if (cfg->read_chunk_size != 0) {
		INT_ARG(GRPC_ARG_TCP_READ_CHUNK_SIZE, (int)cfg->read_chunk_size);
		INT_ARG(GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE,
			(int)(cfg->read_chunk_size < READ_CHUNK_MIN ?
				      cfg->read_chunk_size :
				      READ_CHUNK_MIN));
	}
#undef INT_ARG
	/* Every accepted socket is shown to the connection table first
	 * (conns.h): the one way to see connections without streams. */
	XD_ASSERT(n < cap);
	args[n++] = xd_conns_channel_arg(conns);
	out->num_args = n;
	out->args = args;
}

/*
 * gRPC only says that binding failed. Binding the same address with a
 * plain socket recovers the reason (in use, not an address of this
 * host, permission denied) for the error message.
 */
static const char *bind_failure_reason(const char *listen)
{
	/* the whole address and gai_strerror's text: never cut */
	static char reason[NI_MAXHOST + 256];
	struct addrinfo *res;
	int fd;

	if (strncmp(listen, "unix:", 5) == 0)
		return "cannot create the unix socket";
	if (xd_address_resolve(listen, &res, reason, sizeof(reason)) != 0)
		return reason;
	fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
	if (fd < 0) {
		snprintf(reason, sizeof(reason), "%s", strerror(errno));
	} else if (bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
		snprintf(reason, sizeof(reason), "%s", strerror(errno));
	} else {
		snprintf(reason, sizeof(reason), "gRPC refused the address");
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return reason;
}

static void add_slots(struct xd_server *srv, const struct xd_method *m,
		      const struct xd_stream_handler *handler,
		      void *registered, size_t count)
{
	XD_ASSERT(srv->nslots + count <= srv->cap_slots);
	for (size_t i = 0; i < count; i++) {
		struct accept_slot *a = &srv->slots[srv->nslots++];

		a->tag.done = accept_done;
		a->srv = srv;
		a->method = m;
		a->handler = handler;
		a->registered = registered;
		grpc_metadata_array_init(&a->md);
		grpc_call_details_init(&a->details);
	}
}

int xd_server_start(struct xd_server **out, uv_loop_t *loop,
		    const struct xd_server_opts *opts)
{
	const struct xd_config *cfg = opts->cfg;
	struct xd_server *srv;
	grpc_arg argv[24];
	grpc_channel_args args;
	grpc_server_credentials *creds;
	size_t nmethods;
	const struct xd_method *methods = xd_methods(&nmethods);
	void *registered[nmethods];
	void *registered_csds[xd_csds_method_count];
	void *registered_health[xd_health_method_count];
	size_t total = ACCEPTS_UNKNOWN + ACCEPTS_CSDS * xd_csds_method_count +
		       ACCEPTS_HEALTH * xd_health_method_count;

	XD_ASSERT_LOOP();
	srv = xd_calloc(1, sizeof(*srv));
	for (size_t i = 0; i < nmethods; i++)
		total += methods[i].aggregated ? ACCEPTS_AGGREGATED :
						 ACCEPTS_PER_TYPE;
	srv->slots = xd_calloc(total, sizeof(*srv->slots));
	srv->cap_slots = total;
	srv->loop = loop;
	srv->handler = *opts->handler;
	if (opts->csds_handler != NULL) {
		srv->csds_handler = *opts->csds_handler;
		srv->csds = true;
	}
	if (opts->health_handler != NULL) {
		srv->health_handler = *opts->health_handler;
		srv->health = true;
	}
	srv->peers = xd_peers_new(cfg->trusted_nets, cfg->ntrusted_proxies);
	srv->max_per_address = (size_t)cfg->max_connections_per_address;
	srv->shutdown_tag.done = shutdown_done;

	srv->trim = xd_trim_new(loop);
	srv->conns = new_conns(loop, cfg, opts->fd_limit, srv->trim);
	make_args(cfg, srv->conns, &args, argv, XD_ARRAY_LEN(argv));
	srv->grpc = grpc_server_create(&args, NULL);
	for (size_t i = 0; i < nmethods; i++)
		registered[i] = grpc_server_register_method(
			srv->grpc, methods[i].path, NULL,
			GRPC_SRM_PAYLOAD_NONE, 0);
	for (size_t i = 0; srv->csds && i < xd_csds_method_count; i++)
		registered_csds[i] = grpc_server_register_method(
			srv->grpc, xd_csds_methods[i].path, NULL,
			GRPC_SRM_PAYLOAD_NONE, 0);
	for (size_t i = 0; srv->health && i < xd_health_method_count; i++)
		registered_health[i] = grpc_server_register_method(
			srv->grpc, xd_health_methods[i].path, NULL,
			GRPC_SRM_PAYLOAD_NONE, 0);

	/* Bind before the completion queue exists: a server that never
	 * bound has no listener and may be destroyed on the spot. */
	creds = opts->tls != NULL ? xd_tls_credentials(opts->tls) :
				    grpc_insecure_server_credentials_create();
	srv->port = grpc_server_add_http2_port(srv->grpc, cfg->listen, creds);
	grpc_server_credentials_release(creds);
	if (srv->port == 0) {
		xd_error("cannot listen on '%s': %s", cfg->listen,
			 bind_failure_reason(cfg->listen));
		grpc_server_destroy(srv->grpc);
		xd_conns_close(srv->conns);
		xd_trim_free(srv->trim);
		free(srv->slots);
		xd_peers_free(srv->peers);
		free(srv);
		return -1;
	}
	if (xd_bridge_start(&srv->bridge, loop, io_threads(cfg)) != 0) {
		xd_error("cannot start the completion queue");
		grpc_server_destroy(srv->grpc);
		xd_conns_close(srv->conns);
		xd_trim_free(srv->trim);
		free(srv->slots);
		xd_peers_free(srv->peers);
		free(srv);
		return -1;
	}
	if (!xd_conns_seen_listener(srv->conns))
		xd_warn("gRPC did not show xdsd its listening socket: connections without a stream are not bounded (max_idle_connections, first_stream_timeout, fd_reserve)");
	srv->cq = xd_bridge_cq(srv->bridge);
	grpc_server_register_completion_queue(srv->grpc, srv->cq, NULL);
	grpc_server_start(srv->grpc);

	for (size_t i = 0; i < nmethods; i++)
		add_slots(srv, &methods[i], &srv->handler, registered[i],
			  methods[i].aggregated ? ACCEPTS_AGGREGATED :
						  ACCEPTS_PER_TYPE);
	for (size_t i = 0; srv->csds && i < xd_csds_method_count; i++)
		add_slots(srv, &xd_csds_methods[i], &srv->csds_handler,
			  registered_csds[i],
			  ACCEPTS_CSDS);
	for (size_t i = 0; srv->health && i < xd_health_method_count; i++)
		add_slots(srv, &xd_health_methods[i], &srv->health_handler,
			  registered_health[i], ACCEPTS_HEALTH);
	add_slots(srv, NULL, NULL, NULL, ACCEPTS_UNKNOWN);
	for (size_t i = 0; i < srv->nslots; i++)
		arm(&srv->slots[i]);
	if (strncmp(cfg->listen, "unix:", 5) == 0)
		srv->port = 0;
	*out = srv;
	return 0;
}

grpc_completion_queue *xd_server_cq(struct xd_server *srv)
{
	XD_ASSERT_LOOP();
	return srv->cq;
}

int xd_server_port(const struct xd_server *srv)
{
	return srv->port;
}

size_t xd_server_stream_count(const struct xd_server *srv)
{
	return srv->streams;
}

void xd_server_shutdown(struct xd_server *srv, void (*done)(void *arg),
			void *arg)
{
	XD_ASSERT_LOOP();
	if (srv->shutting_down)
		return;
	srv->shutting_down = true;
	srv->on_stopped = done;
	srv->stopped_arg = arg;
	xd_info("shutting down: %zu streams to cancel", srv->streams);
	xd_conns_close(srv->conns);
	/* the streams ending now go with the process */
	xd_trim_free(srv->trim);
	srv->trim = NULL;
	grpc_server_shutdown_and_notify(srv->grpc, srv->cq, &srv->shutdown_tag);
	/* xDS streams never end on their own (docs/grpc-core.md §3.4). */
	grpc_server_cancel_all_calls(srv->grpc);
}
