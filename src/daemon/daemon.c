#include "daemon/daemon.h"

#include <grpc/grpc.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <uv.h>

#include "cache/cache.h"
#include "daemon/early_signals.h"
#include "protocol/body.h"
#include "protocol/nameset.h"
#include "protocol/session.h"
#include "schema/schema.h"
#include "snapshot/loader.h"
#include "transport/abseil.h"
#include "transport/grpc_log.h"
#include "transport/server.h"
#include "transport/tls.h"
#include "util/common.h"
#include "util/log.h"

struct daemon {
	uv_loop_t loop;
	uv_signal_t sig_term, sig_int, sig_hup, sig_usr1;
	const struct xd_config *cfg;
	struct xd_schema *schema;
	struct xd_cache *cache;
	struct xd_sessions *sessions;
	struct xd_server *server;
	struct xd_tls *tls; /* NULL: plaintext */
	bool stopping;

	/* reload in the thread pool */
	bool reloading, reload_again;
	uv_work_t reload_work;
	struct xd_snapshot **prev;
	size_t nprev;
	struct xd_load result;
};

static void log_snapshots(struct xd_snapshot *const *snaps, size_t n)
{
	char desc[256];

	for (size_t i = 0; i < n; i++) {
		xd_snapshot_describe(snaps[i], desc, sizeof(desc));
		xd_info("snapshot '%s': %s", xd_snapshot_key(snaps[i]), desc);
	}
}

static void log_errors(const struct xd_diag *d)
{
	for (size_t i = 0; i < d->count; i++)
		xd_error("%s", d->msgs[i]);
	if (d->dropped > 0)
		xd_error("(%zu more errors not shown)", d->dropped);
}

/* ---------------- reload ---------------- */

static bool has_key(struct xd_snapshot *const *snaps, size_t n,
		    const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(xd_snapshot_key(snaps[i]), key) == 0)
			return true;
	return false;
}

/*
 * A reload may not leave any node without a snapshot: every node served
 * before must still find its key's snapshot or the default one. Without
 * a default snapshot in the new set, that means every key served before
 * (the default one included) must still be there. Adds an error per key
 * that would be lost; the reload then fails as a whole.
 */
static void check_nodes_keep_a_snapshot(const struct xd_cache *cache,
					const char *dir, struct xd_load *load)
{
	struct xd_snapshot **old;
	size_t nold;

	if (load->rc != 0 ||
	    has_key(load->snaps, load->nsnaps, XD_CACHE_DEFAULT_KEY))
		return;
	old = xd_cache_snapshots(cache, &nold);
	for (size_t i = 0; i < nold; i++) {
		const char *key = xd_snapshot_key(old[i]);

		if (has_key(load->snaps, load->nsnaps, key))
			continue;
		if (strcmp(key, XD_CACHE_DEFAULT_KEY) == 0)
			xd_diag_add(&load->diag, "%s: the default snapshot is gone and nodes without a snapshot of their own would be left with none",
				    dir);
		else
			xd_diag_add(&load->diag, "%s: snapshot '%s' is gone and there is no default snapshot: its nodes would be left with none",
				    dir, key);
	}
	for (size_t i = 0; i < nold; i++)
		xd_snapshot_unref(old[i]);
	free(old);
	if (xd_diag_total(&load->diag) != 0)
		load->rc = -1; /* xd_load_free releases what it loaded */
}

static void reload_start(struct daemon *d);

static void reload_work(uv_work_t *w)
{
	struct daemon *d = w->data;

	xd_load_dir(d->schema, d->cfg->snapshots, d->prev, d->nprev, &d->result);
}

static void reload_done(uv_work_t *w, int status XD_UNUSED)
{
	struct daemon *d = w->data;
	struct xd_snapshot **snaps;
	size_t n, changed;

	for (size_t i = 0; i < d->nprev; i++)
		xd_snapshot_unref(d->prev[i]);
	free(d->prev);
	d->prev = NULL;
	d->reloading = false;
	if (d->stopping) {
		xd_load_free(&d->result);
		return;
	}
	check_nodes_keep_a_snapshot(d->cache, d->cfg->snapshots, &d->result);
	if (d->result.rc != 0) {
		log_errors(&d->result.diag);
		xd_error("reload failed: %zu error%s in %s; still serving the previous snapshots",
			 xd_diag_total(&d->result.diag),
			 xd_diag_total(&d->result.diag) == 1 ? "" : "s",
			 d->cfg->snapshots);
		sd_notify(0, "READY=1\nSTATUS=reload failed; serving the previous snapshots");
	} else {
		snaps = xd_load_take(&d->result, &n);
		log_snapshots(snaps, n);
		changed = xd_cache_replace(d->cache, snaps, n);
		free(snaps);
		xd_info("reloaded %zu snapshot%s from %zu file%s in %.3f s: %zu changed",
			n, n == 1 ? "" : "s", d->result.files,
			d->result.files == 1 ? "" : "s", d->result.seconds, changed);
		sd_notifyf(0, "READY=1\nSTATUS=serving on %s", d->cfg->listen);
	}
	xd_load_free(&d->result);
	/* What the load parsed, and the snapshots it superseded, were
	 * freed in the heaps of the threads that made them: give back
	 * the pages that are now free, rather than keep them until
	 * those threads happen to allocate again. */
	malloc_trim(0);
	if (d->reload_again) {
		d->reload_again = false;
		reload_start(d);
	}
}

static void reload_start(struct daemon *d)
{
	if (d->reloading) {
		/* the files may have changed after that load read them */
		d->reload_again = true;
		return;
	}
	d->reloading = true;
	sd_notify(0, "RELOADING=1");
	d->prev = xd_cache_snapshots(d->cache, &d->nprev);
	d->reload_work.data = d;
	if (uv_queue_work(&d->loop, &d->reload_work, reload_work, reload_done) != 0) {
		xd_error("cannot start a reload");
		d->reloading = false;
	}
}

/* The TLS files are small: read again on the loop thread, at once. New
 * handshakes get the new certificate; established streams go on. */
static void reload_tls(struct daemon *d)
{
	struct xd_diag diag = XD_DIAG_INIT;

	if (d->tls == NULL)
		return;
	if (xd_tls_reload(d->tls, &diag) != 0) {
		log_errors(&diag);
		xd_error("TLS reload failed: still using the previous certificate (%s)",
			 xd_tls_describe(d->tls));
	} else {
		xd_info("TLS reloaded: %s", xd_tls_describe(d->tls));
	}
	xd_diag_clear(&diag);
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

static void server_stopped(void *arg)
{
	struct daemon *d = arg;

	d->server = NULL;
	xd_sessions_free(d->sessions);
	d->sessions = NULL;
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

static void on_hup(uv_signal_t *h, int signum XD_UNUSED)
{
	struct daemon *d = h->data;

	if (d->stopping)
		return;
	xd_info("SIGHUP: reloading %s", d->cfg->snapshots);
	reload_tls(d);
	reload_start(d);
}

/* SIGUSR1: one line of counters, for operators and for tests that must
 * see from outside what the daemon did. */
static void on_usr1(uv_signal_t *h, int signum XD_UNUSED)
{
	struct daemon *d = h->data;
	struct xd_sessions_stats st = {0};
	size_t tables, table_bytes, bodies, body_bytes;

	if (d->sessions != NULL)
		xd_sessions_stats(d->sessions, &st);
	tables = xd_table_live(&table_bytes);
	bodies = xd_body_live(&body_bytes);
	xd_info("stats: streams %zu, requests %llu, acks %llu, nacks %llu, responses %llu, response bytes %llu, bodies computed %llu, snapshots %zu, snapshots alive %zu, tables alive %zu (%zu bytes), bodies alive %zu (%zu bytes), name sets %zu",
		st.sessions, st.requests, st.acks, st.nacks, st.responses,
		st.response_bytes, xd_body_computed(), xd_cache_count(d->cache),
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
	return 0;
}

/* Schema and first snapshots: nothing is served unless both are good. */
static int load_initial(struct daemon *d)
{
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_load load;
	struct xd_snapshot **snaps;
	size_t n;

	d->schema = xd_schema_load(d->cfg->schema, &diag);
	if (d->schema == NULL) {
		log_errors(&diag);
		xd_error("cannot load the Envoy API schema; not starting");
		xd_diag_clear(&diag);
		return -1;
	}
	xd_load_dir(d->schema, d->cfg->snapshots, NULL, 0, &load);
	if (load.rc != 0) {
		log_errors(&load.diag);
		xd_error("%zu error%s in the snapshots in %s; not starting",
			 xd_diag_total(&load.diag),
			 xd_diag_total(&load.diag) == 1 ? "" : "s",
			 d->cfg->snapshots);
		xd_load_free(&load);
		return -1;
	}
	snaps = xd_load_take(&load, &n);
	log_snapshots(snaps, n);
	xd_info("loaded %zu snapshot%s from %zu file%s (%zu bytes) in %.3f s",
		n, n == 1 ? "" : "s", load.files, load.files == 1 ? "" : "s",
		load.bytes, load.seconds);
	d->cache = xd_cache_new();
	xd_cache_replace(d->cache, snaps, n);
	free(snaps);
	xd_load_free(&load);
	return 0;
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
	if (uv_loop_init(&d.loop) != 0) {
		xd_error("cannot create the event loop");
		return 1;
	}
	if (xd_abseil_deadlock_detection_off())
		xd_debug("abseil's mutex deadlock detection is off");
	grpc_init();
	xd_grpc_log_route();
	/* Initialised up front so every path can close all three. */
	uv_signal_init(&d.loop, &d.sig_term);
	uv_signal_init(&d.loop, &d.sig_int);
	uv_signal_init(&d.loop, &d.sig_hup);
	uv_signal_init(&d.loop, &d.sig_usr1);

	if (load_tls(&d) != 0 || load_initial(&d) != 0)
		goto fail;
	d.sessions = xd_sessions_new(&d.loop, d.cache, cfg);
	opts.handler = xd_sessions_handler(d.sessions);
	opts.tls = d.tls;
	if (xd_server_start(&d.server, &d.loop, &opts) != 0)
		goto fail;
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
	sd_notifyf(0, "READY=1\nSTATUS=serving on %s", cfg->listen);
	/* What arrived while the snapshots loaded is acted on now, once
	 * serving (systemd must hear READY before RELOADING). */
	if (xd_early_signal_take(SIGUSR1))
		on_usr1(&d.sig_usr1, SIGUSR1);
	if (xd_early_signal_take(SIGHUP)) {
		xd_info("SIGHUP during start-up: reloading %s", cfg->snapshots);
		reload_start(&d);
	}

	uv_run(&d.loop, UV_RUN_DEFAULT);
	rc = 0;
	goto out;
fail:
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
	xd_cache_free(d.cache);
	xd_tls_free(d.tls);
	xd_schema_free(d.schema);
	grpc_shutdown_blocking();
	return rc;
}
