/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC server: listening socket, channel arguments, the registered
 * xDS methods and their pools of outstanding accepts, and the ordered
 * shutdown of all of it.
 *
 * Every accepted xDS call becomes an xd_stream driven by the handler in
 * the options, every client status (CSDS) call one driven by the CSDS
 * handler and every gRPC health call one driven by the health handler,
 * all admitted alike (connections per address, streams per connection).
 * Calls to any other method are answered UNIMPLEMENTED with the
 * method's name.
 *
 * Ownership: the server owns the gRPC server, the bridge (and so the
 * completion queue) and every accept context; streams free themselves
 * and tell the server. Thread: loop thread only.
 */
#ifndef XD_TRANSPORT_SERVER_H
#define XD_TRANSPORT_SERVER_H

#include <grpc/grpc.h>
#include <uv.h>

#include "config/config.h"
#include "transport/stream.h"

struct xd_server;

struct xd_tls;

struct xd_server_opts {
	const struct xd_config *cfg;
	const struct xd_stream_handler *handler; /* must outlive the server */
	/* The client status service's calls (xd_csds_methods); NULL: not
	 * served, answered UNIMPLEMENTED like any unknown method. */
	const struct xd_stream_handler *csds_handler;
	/* gRPC's health service's calls (xd_health_methods); NULL: not
	 * served, as for CSDS. */
	const struct xd_stream_handler *health_handler;
	struct xd_tls *tls; /* NULL: plaintext; else must outlive the server */
	/* The open files limit (xd_fdlimit_raise); 0: unknown. */
	unsigned long fd_limit;
};

/*
 * What must be settled before grpc_init: gRPC reads its experiments
 * (GRPC_EXPERIMENTS) once, and with read_chunk_size set the
 * tcp_read_chunks experiment, whose reads take 8 KiB at least, is
 * switched off (added to what the environment says, unless it names
 * that experiment itself). Main thread, before grpc_init.
 */
void xd_server_prepare(const struct xd_config *cfg);

/*
 * Binds cfg->listen and starts serving. On failure logs why (address in
 * use, permission denied...) and returns -1 with nothing left running.
 */
int xd_server_start(struct xd_server **out, uv_loop_t *loop,
		    const struct xd_server_opts *opts);

/* The bound TCP port (the real one when the config asked for port 0),
 * or 0 for a unix socket. */
int xd_server_port(const struct xd_server *srv);

/* The server's completion queue, for the client calls xdsd makes (the
 * etcd source): their tags are struct xd_tag, delivered on the loop
 * thread by the bridge like the server's. Calls on it must be over
 * before the server's shutdown can finish. */
grpc_completion_queue *xd_server_cq(struct xd_server *srv);

/* Live streams, for logs and status. */
size_t xd_server_stream_count(const struct xd_server *srv);

/*
 * Stops accepting, cancels every call, waits for every stream to end,
 * destroys the server and the completion queue, frees `srv`, then calls
 * `done(arg)` on the loop thread.
 */
void xd_server_shutdown(struct xd_server *srv, void (*done)(void *arg),
			void *arg);

#endif
