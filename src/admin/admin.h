/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admin endpoint: HTTP on `admin_listen` (xdsd.yaml(5), "Admin
 * endpoint"), for operators and their tools.
 *
 *   GET  /healthz      200 while the loop runs
 *   GET  /ready        200 once serving, 503 before and while stopping
 *   GET  /metrics      Prometheus text format 0.0.4 (metrics.h)
 *   GET  /clients      every stream and its sync state, JSON (clients.h)
 *   GET  /loads        the load reports kept, JSON (loads.h)
 *   GET  /config_dump  a snapshot as Envoy's proto3 JSON (dump.h)
 *   GET  /status       an HTML page for people (status_page.h)
 *   GET  /status.json  the same overview as JSON, for xdsctl (status.h)
 *   GET  /fleet.json   every replica of the fleet, as registered
 *                      (fleet.h)
 *   POST /reload       the reload SIGHUP asks for (reload/reload.h),
 *                      snapshots and TLS files; answers when it is over,
 *                      with what it changed; ?dry_run=1 changes nothing
 *                      and answers what it would change (preview.h)
 *   POST /rollout/promote, /rollout/abort
 *                      promote or roll back the staged rollout under way
 *                      (rollout/rollout.h); answer its status (rollout.h)
 *
 * Everything is computed on the loop thread from live state, when asked:
 * the endpoint costs nothing while nobody calls it.
 *
 * Ownership: the admin borrows everything in its deps (they must outlive
 * it). Thread: loop thread only.
 */
#ifndef XD_ADMIN_ADMIN_H
#define XD_ADMIN_ADMIN_H

#include <stdbool.h>
#include <uv.h>

#include "admin/csds_service.h"
#include "cache/cache.h"
#include "config/config.h"
#include "etcd/etcd.h"
#include "loads/service.h"
#include "loads/store.h"
#include "reload/reload.h"
#include "protocol/session.h"
#include "rest/rest.h"
#include "rollout/rollout.h"
#include "schema/schema.h"
#include "transport/tls.h"

/* What the admin endpoint reports on and acts on. */
struct xd_admin_deps {
	const struct xd_config *cfg;
	struct xd_sessions *sessions;
	struct xd_cache *cache;
	const struct xd_schema *schema;
	struct xd_reloader *reloader;
	struct xd_rollout *rollout; /* NULL: no `rollout:` */
	struct xd_fleet *fleet; /* the replicas, and the rollout's record */
	int xds_port; /* the xDS listener's bound TCP port; 0: unix socket */
	struct xd_rest *rest; /* REST-JSON, or NULL when off */
	const struct xd_tls *tls; /* the xDS listener's TLS, or NULL */
	/* the etcd source's health, or NULL with `source: files` */
	const struct xd_etcd_health *etcd;
	/* the client status service, for its figures (NULL: none) */
	const struct xd_csds_service *csds;
	/* the load reports kept, and the service they come through (NULL:
	 * none) */
	struct xd_loads *loads;
	const struct xd_lrs_service *lrs;
};

struct xd_admin;

/*
 * Listens on cfg->admin_listen. Returns 0, or -1 with the reason logged
 * (nothing is then left open).
 */
int xd_admin_start(struct xd_admin **out, uv_loop_t *loop,
		   const struct xd_admin_deps *deps);

/* What /ready answers: true once serving, false when stopping. */
void xd_admin_set_ready(struct xd_admin *a, bool ready);

/* The bound TCP port (the real one for port 0), or 0 for a unix socket. */
int xd_admin_port(const struct xd_admin *a);

/* Closes the listener and every connection; `done(arg)` then runs. */
void xd_admin_stop(struct xd_admin *a, void (*done)(void *arg), void *arg);

#endif
