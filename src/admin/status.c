/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/status.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "admin/clients.h"
#include "admin/process.h"
#include "admin/reloads.h"
#include "admin/rollout.h"
#include "transport/handshakes.h"
#include "util/clock.h"
#include "util/jsonw.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* What one walk over the streams gathers, in steps (pager.h). Node ids
 * are counted by their 64-bit hashes: a collision among a fleet's ids
 * is far less likely than the fleet changing between two requests, and
 * no id is copied. */
struct xd_status_count {
	struct xd_status_overview o;
	struct xd_sessions_cursor cur;
	uint64_t *ids;
	size_t nids, cap;
	xd_status_also_fn also; /* or NULL */
	void *also_arg;
};

static void count(void *ctx, const struct xd_client_view *c)
{
	struct xd_status_count *k = ctx;
	enum xd_sub_sync state = xd_clients_state(c);

	if (k->also != NULL)
		k->also(k->also_arg, c, state, k->o.now_ms);
	k->o.streams++;
	if (xd_client_view_oldest(c) > k->o.oldest_pending_ms)
		k->o.oldest_pending_ms = xd_client_view_oldest(c);
	if (state == XD_SUB_NACKED)
		k->o.nacked++;
	else if (state == XD_SUB_PENDING)
		k->o.pending++;
	else
		k->o.synced++;
	if (!c->has_node)
		return;
	if (k->nids == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->ids = xd_realloc(k->ids, k->cap * sizeof(*k->ids));
	}
	k->ids[k->nids++] = XXH3_64bits(c->node_id, strlen(c->node_id));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct xd_status_count *xd_status_count_new(struct xd_sessions *sessions,
					    xd_status_also_fn also, void *arg)
{
	/* The process's start, as process_start_time_seconds in /metrics.
	 * It never changes: /proc is read at the first call only (reading
	 * it also lists every descriptor, one per client). Loop thread. */
	static int64_t started_ms;
	struct xd_status_count *k = xd_calloc(1, sizeof(*k));
	struct xd_status_overview *o = &k->o;

	XD_ASSERT_LOOP(); /* started_ms, and the streams walked */
	o->now_ms = xd_wall_ms();
	if (started_ms == 0) {
		struct xd_process_stats p;

		started_ms = xd_process_read(&p) == 0 && p.start_time_seconds > 0 ?
				     (int64_t)(p.start_time_seconds * 1000.0) :
				     o->now_ms;
	}
	/* clock-tick rounding may put the start after now */
	o->started_ms = started_ms < o->now_ms ? started_ms : o->now_ms;
	k->also = also;
	k->also_arg = arg;
	xd_sessions_cursor_open(sessions, &k->cur);
	return k;
}

const struct xd_status_overview *
xd_status_count_step(struct xd_status_count *k, uint64_t deadline_ns)
{
	if (!xd_sessions_cursor_walk(&k->cur, count, k, deadline_ns))
		return NULL;
	if (k->nids > 0) { /* else k->ids is NULL, which qsort must not get */
		qsort(k->ids, k->nids, sizeof(*k->ids), cmp_u64);
		for (size_t i = 0; i < k->nids; i++)
			if (i == 0 || k->ids[i] != k->ids[i - 1])
				k->o.nodes++;
		free(k->ids);
		k->ids = NULL;
		k->nids = 0;
	}
	return &k->o;
}

void xd_status_count_free(struct xd_status_count *k)
{
	if (k == NULL)
		return;
	xd_sessions_cursor_close(&k->cur);
	free(k->ids);
	free(k);
}

size_t xd_status_snapshot_bytes(const struct xd_snapshot *s)
{
	size_t bytes = 0;

	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_table *table = xd_snapshot_table(s, (enum xd_rtype)t);

		for (size_t i = 0; i < xd_table_count(table); i++)
			bytes += xd_table_at(table, i)->msg.len;
	}
	for (int c = 0; c < XD_CTYPE_COUNT; c++) {
		const struct xd_table *table =
			xd_snapshot_collection(s, (enum xd_ctype)c);

		for (size_t i = 0; i < xd_table_count(table); i++)
			bytes += xd_table_at(table, i)->msg.len;
	}
	return bytes;
}

static void snapshot_json(struct xd_jw *w, const struct xd_snapshot *s)
{
	char when[32];

	xd_jw_obj(w);
	xd_jw_key(w, "key");
	xd_jw_str(w, xd_snapshot_key(s));
	xd_jw_key(w, "version");
	xd_jw_str(w, xd_snapshot_version(s));
	xd_jw_key(w, "since");
	xd_jw_time(when, xd_snapshot_since(s));
	xd_jw_str(w, when);
	xd_jw_key(w, "resources");
	xd_jw_obj(w);
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_table *table = xd_snapshot_table(s, (enum xd_rtype)t);
		size_t n = xd_table_count(table);

		if (n == 0)
			continue;
		xd_jw_key(w, xd_rtype_info((enum xd_rtype)t)->snapshot_key);
		xd_jw_uint(w, n);
	}
	for (int c = 0; c < XD_CTYPE_COUNT; c++) {
		size_t n = xd_table_count(xd_snapshot_collection(s, (enum xd_ctype)c));

		if (n == 0)
			continue;
		xd_jw_key(w, xd_ctype_info((enum xd_ctype)c)->snapshot_key);
		xd_jw_uint(w, n);
	}
	xd_jw_obj_end(w);
	xd_jw_key(w, "bytes");
	xd_jw_uint(w, xd_status_snapshot_bytes(s));
	xd_jw_obj_end(w);
}

static void reloads_json(struct xd_jw *w, const struct xd_reloader *r)
{
	const struct xd_reload_stats *st = xd_reloader_stats(r);
	size_t n = xd_reload_history_count(r);

	xd_jw_obj(w);
	xd_jw_key(w, "ok");
	xd_jw_uint(w, st->ok);
	xd_jw_key(w, "failed");
	xd_jw_uint(w, st->failed);
	xd_jw_key(w, "history");
	xd_jw_arr(w);
	for (size_t i = 0; i < n; i++)
		xd_reload_record_json(w, xd_reload_history(r, i));
	xd_jw_arr_end(w);
	xd_jw_obj_end(w);
}

/* The last good state (state_dir), or null without one. */
static void last_good_json(struct xd_jw *w, const struct xd_laststate *s)
{
	const struct xd_laststate_info *i;

	if (s == NULL) {
		xd_jw_null(w);
		return;
	}
	i = xd_laststate_info(s);
	xd_jw_obj(w);
	xd_jw_key(w, "file");
	xd_jw_str(w, i->path);
	xd_jw_key(w, "serving");
	xd_jw_bool(w, i->serving);
	xd_jw_key(w, "saved_at");
	xd_jw_time_or_null(w, i->saved_at_ms);
	xd_jw_key(w, "serving_since");
	xd_jw_time_or_null(w, i->serving ? i->since_ms : 0);
	/* why the snapshots are refused, while the saved state is served */
	xd_errors_json(w, i->nerrors, i->errors, i->nkept);
	xd_jw_key(w, "saves_ok");
	xd_jw_uint(w, i->saves_ok);
	xd_jw_key(w, "saves_failed");
	xd_jw_uint(w, i->saves_failed);
	xd_jw_key(w, "saves_unchanged");
	xd_jw_uint(w, i->saves_unchanged);
	xd_jw_key(w, "last_save_error");
	if (i->last_save_error != NULL)
		xd_jw_str(w, i->last_save_error);
	else
		xd_jw_null(w);
	xd_jw_key(w, "last_save_error_at");
	xd_jw_time_or_null(w, i->last_save_error_at_ms);
	xd_jw_key(w, "save_failing");
	xd_jw_bool(w, i->save_failing);
	xd_jw_obj_end(w);
}

static void certificate_json(struct xd_jw *w, const struct xd_tls_expiry *e,
			     int64_t now_ms)
{
	char when[32];

	xd_jw_obj(w);
	xd_jw_key(w, "file");
	xd_jw_str(w, e->path);
	xd_jw_key(w, "subject");
	xd_jw_str(w, e->subject);
	xd_jw_key(w, "not_after");
	xd_jw_time(when, e->not_after * 1000);
	xd_jw_str(w, when);
	/* negative once expired */
	xd_jw_key(w, "expires_in_seconds");
	xd_jw_int(w, e->not_after - now_ms / 1000);
	xd_jw_obj_end(w);
}

/* The xDS listener's TLS, or null in plaintext. */
static void tls_json(struct xd_jw *w, const struct xd_tls *t, int64_t now_ms)
{
	struct xd_tls_expiry cert, ca;

	if (t == NULL) {
		xd_jw_null(w);
		return;
	}
	xd_tls_expiry(t, &cert, &ca);
	xd_jw_obj(w);
	xd_jw_key(w, "mutual");
	xd_jw_bool(w, xd_tls_mutual(t));
	xd_jw_key(w, "certificate");
	certificate_json(w, &cert, now_ms);
	if (ca.path != NULL) {
		xd_jw_key(w, "client_ca");
		certificate_json(w, &ca, now_ms);
	}
	xd_jw_key(w, "handshake_failures");
	xd_jw_uint(w, xd_handshakes_failed());
	xd_jw_obj_end(w);
}

enum xd_replica_health xd_status_health(const struct xd_admin_deps *deps,
					bool ready, const char **why)
{
	const struct xd_laststate *ls = xd_reloader_laststate(deps->reloader);
	const struct xd_laststate_info *li = ls != NULL ? xd_laststate_info(ls) : NULL;
	const struct xd_reload_record *last =
		xd_reload_history_count(deps->reloader) > 0 ?
			xd_reload_history(deps->reloader, 0) : NULL;

	*why = NULL;
	if (!ready)
		*why = "not serving (starting, before its first load, or stopping)";
	else if (li != NULL && li->serving)
		*why = "serves its last good state: its snapshots were refused at start";
	else if (last != NULL && !last->ok)
		*why = "its last reload was refused: it serves the previous snapshots";
	else if (li != NULL && li->save_failing)
		*why = "cannot save its last good state";
	else if (deps->rollout != NULL &&
		 xd_rollout_status(deps->rollout)->state == XD_ROLLOUT_FAILED)
		*why = "the last staged rollout failed and was rolled back";
	else if (deps->etcd != NULL && !deps->etcd->healthy)
		*why = "its etcd source is not watching: it serves what it read last";
	if (*why == NULL)
		return XD_REPLICA_SERVING;
	return ready ? XD_REPLICA_DEGRADED : XD_REPLICA_NOT_SERVING;
}

/* Where the snapshots come from: the directory, or etcd and how it
 * is doing. */
static void source_json(struct xd_jw *w, const struct xd_admin_deps *deps)
{
	const struct xd_config *cfg = deps->cfg;
	const struct xd_etcd_health *h = deps->etcd;
	char when[32];

	xd_jw_obj(w);
	xd_jw_key(w, "kind");
	if (h == NULL) {
		xd_jw_str(w, "files");
		xd_jw_key(w, "dir");
		xd_jw_str(w, cfg->snapshots);
		xd_jw_obj_end(w);
		return;
	}
	xd_jw_str(w, "etcd");
	xd_jw_key(w, "endpoints");
	xd_jw_arr(w);
	for (size_t i = 0; i < cfg->etcd.nendpoints; i++)
		xd_jw_str(w, cfg->etcd.endpoints[i]);
	xd_jw_arr_end(w);
	xd_jw_key(w, "endpoint");
	xd_jw_str(w, cfg->etcd.endpoints[h->endpoint % cfg->etcd.nendpoints]);
	xd_jw_key(w, "prefix");
	xd_jw_str(w, cfg->etcd.prefix);
	xd_jw_key(w, "revision");
	xd_jw_int(w, h->revision);
	xd_jw_key(w, "healthy");
	xd_jw_bool(w, h->healthy);
	xd_jw_key(w, "since");
	xd_jw_time(when, h->since_ms);
	xd_jw_str(w, when);
	xd_jw_key(w, "reconnects");
	xd_jw_uint(w, h->reconnects);
	xd_jw_key(w, "last_error");
	if (h->last_error[0] == '\0') {
		xd_jw_null(w);
	} else {
		xd_jw_str(w, h->last_error);
		xd_jw_key(w, "last_error_at");
		xd_jw_time(when, h->last_error_ms);
		xd_jw_str(w, when);
	}
	xd_jw_obj_end(w);
}

/* Every source a reload reads (reload/source.h), the snapshots' first:
 * the same for each kind, whatever else `source` says of it. */
static void sources_json(struct xd_jw *w, const struct xd_reloader *r)
{
	struct xd_source_health h[XD_RELOAD_SOURCES];
	size_t n = xd_reloader_sources(r, h);
	char when[32];

	xd_jw_arr(w);
	for (size_t i = 0; i < n; i++) {
		xd_jw_obj(w);
		xd_jw_key(w, "name");
		xd_jw_str(w, h[i].name);
		xd_jw_key(w, "up");
		xd_jw_bool(w, h[i].up);
		xd_jw_key(w, "since");
		if (h[i].since_ms == 0) {
			xd_jw_null(w);
		} else {
			xd_jw_time(when, h[i].since_ms);
			xd_jw_str(w, when);
		}
		xd_jw_key(w, "last_good");
		if (h[i].last_good_ms == 0) {
			xd_jw_null(w);
		} else {
			xd_jw_time(when, h[i].last_good_ms);
			xd_jw_str(w, when);
		}
		xd_jw_key(w, "last_error");
		if (h[i].last_error[0] == '\0') {
			xd_jw_null(w);
		} else {
			xd_jw_str(w, h[i].last_error);
			xd_jw_key(w, "last_error_at");
			xd_jw_time(when, h[i].last_error_ms);
			xd_jw_str(w, when);
		}
		if (h[i].revision != 0) {
			xd_jw_key(w, "revision");
			xd_jw_int(w, h[i].revision);
		}
		xd_jw_obj_end(w);
	}
	xd_jw_arr_end(w);
}

void xd_status_render(struct xd_buf *out, const struct xd_admin_deps *deps,
		      bool ready, const struct xd_status_overview *op)
{
	const struct xd_status_overview o = *op;
	struct xd_jw w;
	struct xd_snapshot **snaps;
	size_t n;
	char when[32];

	xd_jw_init(&w, out);
	xd_jw_obj(&w);
	xd_jw_key(&w, "version");
	xd_jw_str(&w, PACKAGE_VERSION);
	xd_jw_key(&w, "started");
	xd_jw_time(when, o.started_ms);
	xd_jw_str(&w, when);
	xd_jw_key(&w, "uptime_seconds");
	xd_jw_uint(&w, (uint64_t)(o.now_ms - o.started_ms) / 1000);
	xd_jw_key(&w, "ready");
	xd_jw_bool(&w, ready);
	xd_jw_key(&w, "listen");
	xd_jw_str(&w, deps->cfg->listen);
	/* the port bound, which differs from `listen` for port 0 */
	xd_jw_key(&w, "port");
	xd_jw_uint(&w, (uint64_t)deps->xds_port);
	xd_jw_key(&w, "tls");
	tls_json(&w, deps->tls, o.now_ms);
	xd_jw_key(&w, "source");
	source_json(&w, deps);
	xd_jw_key(&w, "sources");
	sources_json(&w, deps->reloader);
	xd_jw_key(&w, "streams");
	xd_jw_uint(&w, o.streams);
	xd_jw_key(&w, "nodes");
	xd_jw_uint(&w, o.nodes);
	xd_jw_key(&w, "clients");
	xd_jw_obj(&w);
	xd_jw_key(&w, "synced");
	xd_jw_uint(&w, o.synced);
	xd_jw_key(&w, "pending");
	xd_jw_uint(&w, o.pending);
	xd_jw_key(&w, "nacked");
	xd_jw_uint(&w, o.nacked);
	xd_jw_key(&w, "oldest_pending_seconds");
	xd_jw_num(&w, (double)o.oldest_pending_ms / 1000.0);
	xd_jw_obj_end(&w);

	xd_jw_key(&w, "snapshots");
	xd_jw_arr(&w);
	snaps = xd_cache_snapshots(deps->cache, &n);
	for (size_t i = 0; i < n; i++) {
		snapshot_json(&w, snaps[i]);
		xd_snapshot_unref(snaps[i]);
	}
	free(snaps);
	xd_jw_arr_end(&w);

	xd_jw_key(&w, "reloads");
	reloads_json(&w, deps->reloader);
	xd_jw_key(&w, "rollout");
	xd_rollout_json(&w, deps->rollout, deps->cache);
	xd_jw_key(&w, "last_good");
	last_good_json(&w, xd_reloader_laststate(deps->reloader));
	xd_jw_obj_end(&w);
	XD_ASSERT(w.depth == 0 && !w.after_key); /* xdsctl parses it whole */
	xd_buf_putc(out, '\n');
}
