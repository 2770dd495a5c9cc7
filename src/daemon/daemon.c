/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/daemon.h"

#include <grpc/grpc.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <uv.h>

#include "cache/cache.h"
#include "admin/admin.h"
#include "admin/csds_service.h"
#include "admin/health_service.h"
#include "loads/service.h"
#include "loads/store.h"
#include "admin/status.h"
#include "daemon/early_signals.h"
#include "daemon/notify.h"
#include "reload/reload.h"
#include "daemon/snapwatch.h"
#include "etcd/etcd.h"
#include "protocol/body.h"
#include "protocol/nameset.h"
#include "protocol/session.h"
#include "rest/rest.h"
#include "rollout/rollout.h"
#include "schema/schema.h"
#include "snapshot/loader.h"
#include "transport/abseil.h"
#include "transport/fdlimit.h"
#include "transport/grpc_log.h"
#include "transport/handshakes.h"
#include "transport/server.h"
#include "transport/slack.h"
#include "transport/tls.h"
#include "util/clock.h"
#include "util/buf.h"
#include "util/common.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct daemon {
	uv_loop_t loop;
	uv_signal_t sig_term, sig_int, sig_hup, sig_usr1;
	const struct xd_config *cfg;
	struct xd_schema *schema;
	struct xd_cache *cache;
	struct xd_sessions *sessions;
	struct xd_csds_service *csds; /* client status, on the xDS listener */
	struct xd_health_service *health; /* gRPC health, on it too */
	struct xd_loads *loads;           /* the load reports kept */
	struct xd_lrs_service *lrs;       /* which they come through */
	struct xd_server *server;
	struct xd_tls *tls; /* NULL: plaintext */
	bool stopping;

	struct xd_reloader *reloader;
	struct xd_admin *admin; /* NULL: admin_listen off */
	struct xd_rest *rest;   /* NULL: rest_listen off */
	struct xd_notify *notify; /* NULL: not run by systemd */
	struct xd_snapwatch *watch; /* NULL: watch off */
	struct xd_etcd *etcd;       /* NULL: source: files */
	struct xd_rollout *rollout; /* NULL: no `rollout:` */
	/* the replicas and the rollout's record (rollout/fleet.h): the
	 * rollout borrows it, and the admin endpoint */
	struct xd_fleet *fleet;
	/* what the fleet's registration says of the replica's addresses
	 * (fill_self), kept until the next */
	char *reg_xds, *reg_admin;
	/* what the admin endpoint reads; the fleet's registration judges
	 * the replica's health from the same (admin/status.h) */
	struct xd_admin_deps deps;
	/* written by the etcd source, read by the admin endpoint: here,
	 * as both stop at different times */
	struct xd_etcd_health etcd_health;
	/* from etcd, the fleet's follower of xdsd's own keys, for the
	 * etcd source */
	struct xd_etcd_own etcd_own;
	char *source_name;          /* what messages call the snapshots */
	bool served;                /* a load has succeeded */
};

static void log_errors(const struct xd_diag *d)
{
	for (size_t i = 0; i < d->count; i++)
		xd_error("%s", d->msgs[i]);
	if (d->dropped > 0)
		xd_error("(%zu more errors not shown)", d->dropped);
}

/* ---------------- reload ---------------- */

/* The reloader has told systemd READY=1; STATUS= says how it went. */
static void reloaded(void *arg, const struct xd_reload_record *rec)
{
	struct daemon *d = arg;

	/* from etcd, the first snapshots come after start: ready then
	 * (the reloader has said READY=1; notify hears that the start
	 * is over) */
	if ((rec->ok || rec->last_good) && !d->served && !d->stopping) {
		d->served = true;
		if (d->admin != NULL)
			xd_admin_set_ready(d->admin, true);
		xd_health_service_set_serving(d->health, true);
		if (rec->ok)
			xd_info("serving the snapshots of %s", d->source_name);
		xd_notify_status(d->notify, "READY=1");
		return;
	}
	xd_notify_status(d->notify, NULL);
}

/* ---------------- signals and shutdown ---------------- */

static void close_signals(struct daemon *d)
{
	uv_close((uv_handle_t *)&d->sig_term, NULL);
	uv_close((uv_handle_t *)&d->sig_int, NULL);
	uv_close((uv_handle_t *)&d->sig_hup, NULL);
	uv_close((uv_handle_t *)&d->sig_usr1, NULL);
	/* libuv gave SIGHUP and SIGUSR1 their default action back, which
	 * would end the process before it has finished stopping. */
	xd_early_signals_install();
}

static void admin_stopped(void *arg)
{
	struct daemon *d = arg;

	d->admin = NULL;
}

static void rest_stopped(void *arg)
{
	struct daemon *d = arg;

	d->rest = NULL;
}

static void server_stopped(void *arg)
{
	struct daemon *d = arg;

	/* the server stops only once a stop was decided, so that neither
	 * signal nor reload starts anything on what is being freed */
	XD_ASSERT(d->stopping);
	d->server = NULL;
	xd_notify_stop(d->notify);
	d->notify = NULL;
	xd_snapwatch_stop(d->watch);
	d->watch = NULL;
	if (d->admin != NULL)
		xd_admin_stop(d->admin, admin_stopped, d);
	if (d->rest != NULL)
		xd_rest_stop(d->rest, rest_stopped, d);
	xd_rollout_stop(d->rollout);
	d->rollout = NULL;
	/* stopped already, unless the start failed */
	xd_fleet_stop(d->fleet);
	xd_sessions_free(d->sessions);
	d->sessions = NULL;
	close_signals(d);
	xd_info("stopped");
}

/* Every health watcher knows xdsd is stopping: the calls may go. */
static void health_stopped(void *arg)
{
	struct daemon *d = arg;

	xd_server_shutdown(d->server, server_stopped, d);
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
	if (d->admin != NULL)
		xd_admin_set_ready(d->admin, false);
	xd_snapwatch_stop(d->watch);
	d->watch = NULL;
	xd_reloader_stop(d->reloader);
	/* the fleet writes through the etcd source: it stops first */
	xd_fleet_stop(d->fleet);
	/* its calls are on the server's queue: over before it can end */
	xd_etcd_stop(d->etcd);
	d->etcd = NULL;
	/* NOT_SERVING first, told to every watcher before the server
	 * cancels their calls (admin/health_service.h) */
	xd_health_service_stop(d->health, health_stopped, d);
}

static void on_hup(uv_signal_t *h, int signum XD_UNUSED)
{
	struct daemon *d = h->data;

	if (d->stopping)
		return;
	xd_reload_request(d->reloader, "SIGHUP", NULL, NULL);
}

/* SIGUSR1: one line of counters, for operators and for tests that must
 * see from outside what the daemon did. */
static void on_usr1(uv_signal_t *h, int signum XD_UNUSED)
{
	struct daemon *d = h->data;
	struct xd_sessions_stats none = {0};
	const struct xd_sessions_stats *st =
		d->sessions != NULL ? xd_sessions_stats(d->sessions) : &none;
	size_t tables, table_bytes, bodies, body_bytes;

	tables = xd_table_live(&table_bytes);
	bodies = xd_body_live(&body_bytes);
	xd_info("stats: streams %zu, requests %llu, acks %llu, nacks %llu, responses %llu, response bytes %llu, bodies computed %llu, snapshots %zu, snapshots alive %zu, tables alive %zu (%zu bytes), bodies alive %zu (%zu bytes), name sets %zu",
		st->sessions, st->requests, st->acks, st->nacks, st->responses,
		st->response_bytes, xd_body_computed(), xd_cache_count(d->cache),
		xd_snapshot_live(), tables, table_bytes, bodies, body_bytes,
		xd_nameset_live());
}

static int watch_signal(struct daemon *d, uv_signal_t *h, uv_signal_cb cb,
			int signum)
{
	h->data = d;
	return uv_signal_start(h, cb, signum);
}

/* ---------------- start ---------------- */

/* TLS files, when configured: nothing is served over a bad certificate,
 * nor in plaintext when TLS was asked for. */
static int load_tls(struct daemon *d)
{
	struct xd_diag diag = XD_DIAG_INIT;

	if (d->cfg->tls.cert == NULL)
		return 0;
	d->tls = xd_tls_new(d->cfg, &diag);
	if (d->tls == NULL) {
		log_errors(&diag);
		xd_error("cannot use the TLS files; not starting");
		xd_diag_clear(&diag);
		return -1;
	}
	xd_info("TLS%s: %s", xd_tls_mutual(d->tls) ?
				     " with client certificates (mTLS)" : "",
		xd_tls_describe(d->tls));
	xd_tls_warn_expiry(d->tls, xd_wall_ms() / 1000);
	/* gRPC tells failed handshakes only in its log (handshakes.h) */
	if (!xd_handshakes_watch(d->cfg->handshake_timeout_ms))
		xd_info("TLS: failed handshakes are counted and logged without their peer (this gRPC has no handshake tracer xdsd knows)");
	return 0;
}

/* ---------------- the replica in the fleet ---------------- */

/* "host:port" of `listen` with its bound `port`, a wildcard host (or
 * none) replaced by this machine's name; a unix socket as it is. */
static char *reachable_at(const char *listen, int port)
{
	char host[256] = "";
	const char *colon = strrchr(listen, ':');
	size_t len = colon != NULL ? (size_t)(colon - listen) : 0;

	if (strncmp(listen, "unix:", 5) == 0 || colon == NULL)
		return xd_strdup(listen);
	if (len == 0 || (len == 7 && strncmp(listen, "0.0.0.0", 7) == 0) ||
	    (len == 4 && strncmp(listen, "[::]", 4) == 0)) {
		gethostname(host, sizeof(host) - 1);
		return xd_asprintf("%s:%d", host, port);
	}
	return xd_asprintf("%.*s:%d", (int)len, listen, port);
}

/* The replica as the others name it: host name and xDS address. */
static char *replica_name(const struct daemon *d)
{
	char host[256] = "";
	int port = d->server != NULL ? xd_server_port(d->server) : 0;
	char *at, *name;

	gethostname(host, sizeof(host) - 1);
	if (port == 0)
		return xd_asprintf("%s/%s", host, d->cfg->listen);
	at = reachable_at(d->cfg->listen, port);
	name = xd_asprintf("%s/%s", host, at);
	free(at);
	return name;
}

/* What the replica registers of itself (rollout/fleet.h); the strings
 * live in `d` until the next call. */
static void fill_self(void *arg, struct xd_rollout_report *r)
{
	struct daemon *d = arg;
	size_t n;
	struct xd_snapshot **stable;
	const char *why;

	free(d->reg_xds);
	free(d->reg_admin);
	d->reg_xds = d->server != NULL && xd_server_port(d->server) != 0 ?
		      reachable_at(d->cfg->listen, xd_server_port(d->server)) :
		      xd_strdup(d->cfg->listen);
	d->reg_admin = d->admin == NULL ? xd_strdup("") :
		d->cfg->admin_advertise != NULL ?
				   xd_strdup(d->cfg->admin_advertise) :
		xd_admin_port(d->admin) != 0 ?
				   reachable_at(d->cfg->admin_listen,
						xd_admin_port(d->admin)) :
				   xd_strdup(d->cfg->admin_listen);
	r->xds = d->reg_xds;
	r->admin = d->reg_admin;
	r->version = PACKAGE_VERSION;
	/* that of the snapshots it loaded last, not the source's: the
	 * source's moves with every registration written, this one's too */
	r->revision = 0;
	for (size_t i = 0; i < xd_reload_history_count(d->reloader); i++) {
		const struct xd_reload_record *rec = xd_reload_history(d->reloader, i);

		if (rec->ok && rec->revision > 0) {
			r->revision = rec->revision;
			break;
		}
	}
	r->health = xd_status_health(&d->deps, d->served && !d->stopping, &why);
	r->health_why = (char *)why;
	if (d->sessions != NULL) {
		r->streams = xd_sessions_stats(d->sessions)->sessions;
		r->clients = xd_sessions_nodes(d->sessions);
	}
	stable = xd_cache_snapshots(d->cache, &n);
	xd_rollout_fingerprint(stable, n, r->serving);
	for (size_t i = 0; i < n; i++)
		xd_snapshot_unref(stable[i]);
	free(stable);
}

/* The fleet: from etcd, shared through the prefix; from files, this
 * replica alone, the rollout's record in state_dir. */
static struct xd_fleet *new_fleet(struct daemon *d)
{
	char *name = replica_name(d);
	struct xd_fleet *f;

	if (d->cfg->source == XD_SOURCE_ETCD)
		f = xd_fleet_new_etcd(&d->loop, d->cfg, name, &d->etcd_own);
	else
		f = xd_fleet_new_file(&d->loop, d->cfg,
				      d->cfg->rollout.on ? d->cfg->state_dir : NULL,
				      name);
	free(name);
	xd_fleet_on_self(f, fill_self, d);
	return f;
}

/* Schema and first snapshots: nothing is served unless both are good. */
static int load_initial(struct daemon *d)
{
	struct xd_diag diag = XD_DIAG_INIT;

	d->schema = xd_schema_load(d->cfg->schema, &diag);
	if (d->schema == NULL) {
		log_errors(&diag);
		xd_error("cannot load the Envoy API schema; not starting");
		xd_diag_clear(&diag);
		return -1;
	}
	d->cache = xd_cache_new();
	d->source_name = d->cfg->source == XD_SOURCE_ETCD ?
				 xd_asprintf("etcd prefix '%s'",
					     d->cfg->etcd.prefix) :
				 xd_strdup(d->cfg->snapshots);
	d->reloader = xd_reloader_new(&d->loop, d->schema, d->cache,
				      d->source_name, d->tls);
	xd_reloader_on_done(d->reloader, reloaded, d);
	if (d->cfg->state_dir != NULL)
		xd_reloader_set_state_dir(d->reloader, d->cfg->state_dir);
	d->sessions = xd_sessions_new(&d->loop, d->cache, d->cfg);
	d->fleet = new_fleet(d);
	if (d->cfg->rollout.on) {
		/* before the first load: what differs from the last good
		 * state goes to the canaries first (reload.h) */
		d->rollout = xd_rollout_new(&d->loop, d->cfg, d->cache,
					    d->sessions, d->fleet);
		xd_reloader_set_install(d->reloader, &xd_rollout_installer,
					d->rollout);
		xd_rollout_on_rest(d->rollout, xd_reloader_rollout_over,
				   d->reloader);
	}
	/* etcd's snapshots are read once serving (etcd/etcd.h) */
	if (d->cfg->source == XD_SOURCE_ETCD)
		return 0;
	d->served = true;
	return xd_reloader_load_first(d->reloader);
}

/* The admin endpoint, when configured: a daemon that cannot open the
 * address it was given does not start (as for the xDS listener). */
/* The store of load reports: its window at least twice the interval
 * clients report at (config.h), or an entry could expire between two
 * reports of a client that keeps reporting. */
static struct xd_loads *new_loads(const struct xd_config *cfg)
{
	struct xd_loads_opts o = {
		.window_ms = cfg->load_reports.window_ms,
		.max_entries = (size_t)cfg->load_reports.max_entries,
		.max_series = (size_t)cfg->load_reports.max_series,
	};

	if (o.window_ms < 2 * cfg->load_reports.interval_ms)
		o.window_ms = 2 * cfg->load_reports.interval_ms;
	return xd_loads_new(&o);
}

static int start_admin(struct daemon *d)
{
	d->deps = (struct xd_admin_deps){
		.cfg = d->cfg,
		.tls = d->tls,
		.sessions = d->sessions,
		.cache = d->cache,
		.schema = d->schema,
		.reloader = d->reloader,
		.rollout = d->rollout,
		.fleet = d->fleet,
		.xds_port = xd_server_port(d->server),
		.rest = d->rest,
		.etcd = d->cfg->source == XD_SOURCE_ETCD ? &d->etcd_health :
							   NULL,
		.csds = d->csds,
		.loads = d->loads,
		.lrs = d->lrs,
	};

	if (!xd_config_admin_on(d->cfg))
		return 0;
	return xd_admin_start(&d->admin, &d->loop, &d->deps);
}

/* REST-JSON, when configured: as for the admin endpoint, an address
 * that cannot be opened stops the start. */
static int start_rest(struct daemon *d)
{
	struct xd_rest_deps deps = {
		.cfg = d->cfg,
		.cache = d->cache,
		.schema = d->schema,
	};

	if (!xd_config_rest_on(d->cfg))
		return 0;
	return xd_rest_start(&d->rest, &d->loop, &deps);
}

/* `watch: true`: a snapshot directory that cannot be watched is an
 * error, as the operator counts on changes being served. From etcd,
 * whose changes its own source follows (start_etcd), only the TLS
 * files are watched, as a reload reads them just the same. */
static int start_watch(struct daemon *d)
{
	/* what a reload reads besides the snapshots: the TLS files */
	const char *tls[] = {d->cfg->tls.cert, d->cfg->tls.key,
			     d->cfg->tls.client_ca, NULL};
	bool etcd = d->cfg->source == XD_SOURCE_ETCD;

	if (!d->cfg->watch)
		return 0;
	if (d->tls == NULL)
		tls[0] = NULL;
	if (etcd && tls[0] == NULL) {
		xd_info("watch: nothing to watch: etcd's changes are followed by the etcd source, and the xDS listener has no TLS files");
		return 0;
	}
	return xd_snapwatch_start(&d->watch, &d->loop,
				  etcd ? NULL : d->cfg->snapshots,
				  d->cfg->watch_delay_ms,
				  d->cfg->watch_delay_max_ms, d->reloader, tls);
}

/* Once at start: whose connections no per-address limit counts. */
static void log_trusted_proxies(const struct xd_config *cfg)
{
	struct xd_buf b = {0};

	if (cfg->ntrusted_proxies == 0)
		return;
	for (size_t i = 0; i < cfg->ntrusted_proxies; i++)
		xd_buf_printf(&b, "%s%s", i ? ", " : "", cfg->trusted_proxies[i]);
	xd_info("trusted proxies (exempt from the per-address limits): %.*s",
		(int)b.len, (const char *)b.data);
	xd_buf_free(&b);
}

/* `source: etcd`: starts reading, with the server's completion queue;
 * last to start, so a failure leaves nothing of it running. */
static int start_etcd(struct daemon *d)
{
	if (d->cfg->source != XD_SOURCE_ETCD)
		return 0;
	if (xd_etcd_start(&d->etcd, &d->loop, xd_server_cq(d->server), d->cfg,
			  d->reloader, &d->etcd_health, &d->etcd_own) != 0)
		return -1;
	/* a reload reads etcd from now on, no longer the directory */
	xd_reloader_set_source(d->reloader, xd_etcd_source(d->etcd));
	xd_fleet_attach_etcd(d->fleet, d->etcd);
	return 0;
}

/* How long xdsd waits at exit for gRPC's own clean-up to end. */
#define GRPC_GONE_MS 2000

/*
 * gRPC objects that outlive the server by a moment (a connection's
 * security state, released on one of gRPC's threads) hold the library
 * open: the last of them to go, not grpc_shutdown_blocking, shuts it
 * down, in a thread of its own. Exiting meanwhile would cut that
 * clean-up short (and the sanitizer build report what it had not freed
 * yet); so wait for it, a bounded while.
 */
static void wait_grpc_gone(void)
{
	for (int ms = 0; grpc_is_initialized() && ms < GRPC_GONE_MS; ms += 5) {
		struct timespec t = {0, 5 * 1000 * 1000};

		nanosleep(&t, NULL);
	}
	if (grpc_is_initialized())
		xd_debug("gRPC's clean-up still runs after %d ms: exiting anyway",
			 GRPC_GONE_MS);
}

int xd_daemon_run(const struct xd_config *cfg)
{
	struct daemon d = {.cfg = cfg};
	struct xd_server_opts opts = {.cfg = cfg};
	int rc = 1;

	/* glibc raises its mmap threshold to the size of the largest block
	 * freed (up to 32 MiB): after the first reload, the large blocks of
	 * each load (tables, file text, parse trees) come from the heap of
	 * the thread-pool thread that loaded it and stay there once freed,
	 * 23 MB more RSS with each of the first reloads of a 12.7 MB
	 * snapshot (bench/README.md, "Memory over time"). A fixed threshold
	 * keeps large blocks in mappings of their own, unmapped when freed. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* This thread runs the loop: claimed before any other starts, so
	 * XD_ASSERT_LOOP catches a call from the completion-queue thread or
	 * the thread pool even if it came first. */
	XD_ASSERT(xd_loop_thread_claim());
	if (uv_loop_init(&d.loop) != 0) {
		xd_error("cannot create the event loop");
		return 1;
	}
	if (xd_abseil_deadlock_detection_off())
		xd_debug("abseil's mutex deadlock detection is off");
	xd_server_prepare(cfg);
	xd_slack_for_grpc_begin(cfg->grpc_timer_slack_ms);
	grpc_init();
	xd_grpc_log_route();
	/* one descriptor per client connection (transport/fdlimit.h) */
	opts.fd_limit = xd_fdlimit_raise();
	/* Initialised up front so every path can close all three. */
	uv_signal_init(&d.loop, &d.sig_term);
	uv_signal_init(&d.loop, &d.sig_int);
	uv_signal_init(&d.loop, &d.sig_hup);
	uv_signal_init(&d.loop, &d.sig_usr1);

	if (load_tls(&d) != 0 || load_initial(&d) != 0)
		goto fail;
	opts.handler = xd_sessions_handler(d.sessions);
	d.csds = xd_csds_service_new(&d.loop, cfg, d.sessions);
	opts.csds_handler = xd_csds_service_handler(d.csds);
	d.health = xd_health_service_new(&d.loop);
	opts.health_handler = xd_health_service_handler(d.health);
	d.loads = new_loads(cfg);
	d.lrs = xd_lrs_service_new(cfg, d.loads);
	opts.lrs_handler = xd_lrs_service_handler(d.lrs);
	opts.tls = d.tls;
	if (xd_server_start(&d.server, &d.loop, &opts) != 0)
		goto fail;
	/* named by its port, now bound */
	{
		char *name = replica_name(&d);

		xd_fleet_set_replica(d.fleet, name);
		free(name);
	}
	xd_slack_for_grpc_end();
	if (start_rest(&d) != 0 || start_admin(&d) != 0 ||
	    start_watch(&d) != 0 || start_etcd(&d) != 0) {
		d.stopping = true;
		xd_server_shutdown(d.server, server_stopped, &d);
		uv_run(&d.loop, UV_RUN_DEFAULT);
		rc = 1;
		goto out;
	}
	if (watch_signal(&d, &d.sig_term, on_stop_signal, SIGTERM) != 0 ||
	    watch_signal(&d, &d.sig_int, on_stop_signal, SIGINT) != 0 ||
	    watch_signal(&d, &d.sig_hup, on_hup, SIGHUP) != 0 ||
	    watch_signal(&d, &d.sig_usr1, on_usr1, SIGUSR1) != 0) {
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
	log_trusted_proxies(cfg);
	d.notify = xd_notify_start(&d.loop, d.cache, d.sessions, d.reloader,
				   d.rollout);
	if (d.served) {
		xd_notify_status(d.notify, "READY=1");
		if (d.admin != NULL)
			xd_admin_set_ready(d.admin, true);
		xd_health_service_set_serving(d.health, true);
	} else {
		/* waiting for etcd: systemd hears at once that the start
		 * goes on (EXTEND_TIMEOUT_USEC=) */
		xd_notify_status(d.notify, NULL);
	}
	/* What arrived while the snapshots loaded is acted on now, once
	 * serving (systemd must hear READY before RELOADING). */
	if (xd_early_signal_take(SIGUSR1))
		on_usr1(&d.sig_usr1, SIGUSR1);
	if (xd_early_signal_take(SIGHUP))
		xd_reload_request(d.reloader, "SIGHUP during start-up", NULL,
				  NULL);

	uv_run(&d.loop, UV_RUN_DEFAULT);
	/* the loop runs out once every part has closed its handles */
	XD_ASSERT(d.server == NULL && d.admin == NULL && d.rest == NULL &&
		  d.notify == NULL && d.watch == NULL);
	rc = 0;
	goto out;
fail:
	xd_rollout_stop(d.rollout);
	xd_fleet_stop(d.fleet);
	xd_sessions_free(d.sessions);
	close_signals(&d);
	uv_run(&d.loop, UV_RUN_DEFAULT);
out:
	if (uv_loop_close(&d.loop) != 0) {
		xd_error("event loop closed with handles still open");
		rc = 1;
	}
	/* Snapshots hold gRPC slices: release them before gRPC goes. The
	 * TLS state goes after the server that asked it for certificates. */
	xd_csds_service_free(d.csds);
	xd_health_service_free(d.health);
	xd_lrs_service_free(d.lrs);
	xd_loads_free(d.loads);
	xd_fleet_free(d.fleet);
	free(d.reg_xds);
	free(d.reg_admin);
	xd_reloader_free(d.reloader);
	xd_cache_free(d.cache);
	xd_tls_free(d.tls);
	xd_schema_free(d.schema);
	free(d.source_name);
	grpc_shutdown_blocking();
	wait_grpc_gone();
	return rc;
}
