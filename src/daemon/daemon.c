#include "daemon/daemon.h"

#include <grpc/grpc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <uv.h>

#include "transport/server.h"
#include "util/common.h"
#include "util/log.h"

struct daemon {
	uv_loop_t loop;
	uv_signal_t sig_term, sig_int, sig_hup;
	struct xd_server *server;
	bool stopping;
};

/*
 * Until the protocol engine serves snapshots, a stream reads and logs
 * its requests and is answered nothing; it stays open so that clients,
 * shutdown and leak checks see real, live streams.
 */
static void *stream_open(void *ctx XD_UNUSED, struct xd_stream *s)
{
	return s;
}

static void stream_request(void *st XD_UNUSED, struct xd_stream *s,
			   const uint8_t *data XD_UNUSED, size_t len)
{
	xd_debug("stream %llu: request of %zu bytes",
		 (unsigned long long)xd_stream_id(s), len);
}

static void stream_send_done(void *st XD_UNUSED, struct xd_stream *s XD_UNUSED)
{
}

static void stream_close(void *st XD_UNUSED, struct xd_stream *s XD_UNUSED)
{
}

static const struct xd_stream_handler handler = {
	.open = stream_open,
	.on_request = stream_request,
	.on_send_done = stream_send_done,
	.on_close = stream_close,
};

static void close_signals(struct daemon *d)
{
	uv_close((uv_handle_t *)&d->sig_term, NULL);
	uv_close((uv_handle_t *)&d->sig_int, NULL);
	uv_close((uv_handle_t *)&d->sig_hup, NULL);
}

static void server_stopped(void *arg)
{
	struct daemon *d = arg;

	d->server = NULL;
	close_signals(d);
	xd_info("stopped");
}

static void on_stop_signal(uv_signal_t *h, int signum)
{
	struct daemon *d = h->data;

	if (d->stopping) {
		xd_info("%s again: already shutting down", strsignal(signum));
		return;
	}
	d->stopping = true;
	xd_info("%s: shutting down", strsignal(signum));
	sd_notify(0, "STOPPING=1");
	xd_server_shutdown(d->server, server_stopped, d);
}

static void on_hup(uv_signal_t *h XD_UNUSED, int signum XD_UNUSED)
{
	xd_info("SIGHUP: reload requested");
}

static int watch_signal(struct daemon *d, uv_signal_t *h, uv_signal_cb cb,
			int signum)
{
	h->data = d;
	return uv_signal_start(h, cb, signum);
}

int xd_daemon_run(const struct xd_config *cfg)
{
	struct daemon d = {.stopping = false};
	struct xd_server_opts opts = {.cfg = cfg, .handler = &handler};
	int rc = 1;

	/* A client that goes away mid-write must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	if (uv_loop_init(&d.loop) != 0) {
		xd_error("cannot create the event loop");
		return 1;
	}
	grpc_init();
	xd_log_route_grpc();
	/* Initialised up front so every path can close all three. */
	uv_signal_init(&d.loop, &d.sig_term);
	uv_signal_init(&d.loop, &d.sig_int);
	uv_signal_init(&d.loop, &d.sig_hup);

	if (xd_server_start(&d.server, &d.loop, &opts) != 0) {
		close_signals(&d);
		uv_run(&d.loop, UV_RUN_DEFAULT);
		goto out;
	}
	if (watch_signal(&d, &d.sig_term, on_stop_signal, SIGTERM) != 0 ||
	    watch_signal(&d, &d.sig_int, on_stop_signal, SIGINT) != 0 ||
	    watch_signal(&d, &d.sig_hup, on_hup, SIGHUP) != 0) {
		xd_error("cannot install signal handlers");
		d.stopping = true;
		xd_server_shutdown(d.server, server_stopped, &d);
		uv_run(&d.loop, UV_RUN_DEFAULT);
		goto out;
	}
	if (xd_server_port(d.server) != 0)
		xd_info("xdsd " PACKAGE_VERSION " listening on %s (port %d)",
			cfg->listen, xd_server_port(d.server));
	else
		xd_info("xdsd " PACKAGE_VERSION " listening on %s", cfg->listen);
	sd_notifyf(0, "READY=1\nSTATUS=serving on %s", cfg->listen);

	uv_run(&d.loop, UV_RUN_DEFAULT);
	rc = 0;
out:
	if (uv_loop_close(&d.loop) != 0) {
		xd_error("event loop closed with handles still open");
		rc = 1;
	}
	grpc_shutdown_blocking();
	return rc;
}
