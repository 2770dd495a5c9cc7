/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Resources of one snapshot as a static Envoy bootstrap (JSON), for
 * Envoy's verdict on them (run.h, verdict.h): what xdsd would serve
 * over xDS, held in the forms a bootstrap can hold it.
 *
 *   secrets          static_resources.secrets, as they are
 *   runtimes         layered_runtime, a static layer each
 *   clusters         static_resources.clusters; an EDS cluster made
 *                    STATIC with its ClusterLoadAssignment inline
 *   locality         (LEDS) inline in the locality that names their
 *   endpoints        collection, as its lb_endpoints
 *   listeners        static_resources.listeners; in each
 *                    HttpConnectionManager, the route configuration
 *                    RDS names inline (route_config), and SRDS's scoped
 *                    routes inline (scoped_route_configurations_list),
 *                    each with its route configuration inline
 *   extension        (ECDS) inline in each filter that names them, the
 *   configs          listener's, network and HTTP filters alike: its
 *                    typed_config instead of its config_discovery
 *   routes           each in a listener of its own, a plain
 *                    HttpConnectionManager with the router, unless a
 *                    listener or scoped route of the bootstrap holds
 *                    it inline already (so that one no listener names
 *                    is checked too, and each is built once)
 *   scoped routes    together in one such listener
 *   virtual hosts    (VHDS) in the virtual_hosts of their route
 *                    configuration, whose vhds goes
 *
 * A route configuration goes inline once in a bootstrap, where it is
 * first used, and as a stub of its name wherever else it is used: as
 * Envoy builds one however many listeners take it by RDS (and a large
 * one taken by many listeners stays one copy). Wherever it goes
 * inline, validate_clusters left unset is false, as RDS has it. An SdsSecretConfig that asks ADS (or
 * `self`) loses its sds_config, so that Envoy takes the secret of that
 * name among the static ones. The bootstrap names ADS (a STATIC cluster
 * of its own on an abstract unix socket, never connected to in validate
 * mode), so that config sources left on ADS (on-demand CDS, LEDS) are
 * accepted as a dynamic bootstrap accepts them. The listeners of
 * its own (routes, scoped routes) listen on abstract unix sockets too;
 * their names and the ADS cluster's start with a prefix that no
 * listener or cluster of the snapshot starts with.
 *
 * A cache holds the resources printed as JSON (once each, for the many
 * bootstraps a snapshot may take) and lives as long as its snapshot;
 * a bootstrap is assembled from it, then written out once.
 *
 * Thread: any, one at a time per cache; the schema is shared read-only.
 */
#ifndef XD_ENVOY_BOOTSTRAP_H
#define XD_ENVOY_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>

#include "schema/schema.h"
#include "snapshot/snapshot.h"
#include "util/diag.h"

struct xd_bootstrap_cache;
struct xd_bootstrap;

/* Keeps a reference to `snap` until freed. */
struct xd_bootstrap_cache *xd_bootstrap_cache_new(const struct xd_schema *s,
						  struct xd_snapshot *snap);
void xd_bootstrap_cache_free(struct xd_bootstrap_cache *c);

/* Whether the listener `e` is an API listener (gRPC clients'). */
bool xd_bootstrap_is_api_listener(struct xd_bootstrap_cache *c,
				  const struct xd_entry *e);

/* Whether Envoy's message `msg` names the resource `e` of type `t`:
 * quotes its name ('NAME'), or, `by_address`, for a listener, its
 * socket address ('IP:PORT'), as Envoy names listeners too. */
bool xd_bootstrap_named_in(struct xd_bootstrap_cache *c, enum xd_rtype t,
			   const struct xd_entry *e, const char *msg,
			   bool by_address);

/* The entry of `name` in table `t` of the snapshot, as a reference
 * names it: the plain resource, else its first variant; NULL if none.
 * An xdstp name is looked up by its canonical form. */
const struct xd_entry *xd_bootstrap_find(struct xd_bootstrap_cache *c,
					 enum xd_rtype t, const char *name);

/* A bootstrap for the snapshot's node `node_id`. */
struct xd_bootstrap *xd_bootstrap_new(struct xd_bootstrap_cache *c,
				      const char *node_id);

/*
 * Adds the resource `e` of type `t` in its form above: a secret, a
 * runtime, a cluster, a listener, a route configuration (in a listener
 * of its own) or a scoped route (in the one listener of scoped routes).
 * Endpoints and virtual hosts come with their cluster and route
 * configuration.
 */
void xd_bootstrap_add(struct xd_bootstrap *b, enum xd_rtype t,
		      const struct xd_entry *e);

/* The EDS cluster `e` with no endpoints (a load assignment that names
 * only the cluster): whether its endpoints are what Envoy refuses. */
void xd_bootstrap_add_bare_cluster(struct xd_bootstrap *b,
				   const struct xd_entry *e);

/* The route configuration `route` in a listener of its own with, of
 * its VHDS virtual hosts, only the `n` of `vhosts`. */
void xd_bootstrap_add_route_with(struct xd_bootstrap *b,
				 const struct xd_entry *route,
				 const struct xd_entry *const *vhosts, size_t n);

/* The scoped routes the listeners added after this call hold for SRDS
 * (the `n` of `scoped`, copied); until it is called, every scoped
 * route of the snapshot. */
void xd_bootstrap_scoped_for_listeners(struct xd_bootstrap *b,
				       const struct xd_entry *const *scoped,
				       size_t n);

/* The VHDS virtual hosts of the route configuration `route`: their
 * number, the first at *first in the snapshot's virtual host table
 * (their names all begin "<route configuration>/", so they stand
 * together there). */
size_t xd_bootstrap_vhosts_of(struct xd_bootstrap_cache *c,
			      const struct xd_entry *route, size_t *first);

/*
 * The bootstrap as JSON text (malloc'd, NUL-terminated, length in
 * *len), and `b` freed; or NULL, with why in `diag`, when a resource
 * could not be printed.
 */
char *xd_bootstrap_finish(struct xd_bootstrap *b, size_t *len,
			  struct xd_diag *diag);

#endif
