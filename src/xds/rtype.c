/* SPDX-License-Identifier: Apache-2.0 */
#include "xds/rtype.h"

#include <stdio.h>
#include <string.h>

#include "util/xalloc.h"

#define URL(m) "type.googleapis.com/" m
/* A gRPC method's path: package envoy.service.<area>.v3 (rule T2). */
#define METHOD(area, svc, m) "/envoy.service." area ".v3." svc "/" m
#define REFS(v) v, sizeof(v) / sizeof((v)[0])

static const struct xd_rtype_ref listener_refs[] = {
	{XD_ROUTE, "filter_chains.filters.typed_config.rds.route_config_name"},
	{XD_ROUTE, "default_filter_chain.filters.typed_config.rds.route_config_name"},
	{XD_ROUTE, "api_listener.api_listener.rds.route_config_name"},
	/* a filter that takes its config by ECDS (`config_discovery`) is
	 * named as that config is: HTTP filters of HttpConnectionManagers,
	 * network filters and listener filters alike */
	{XD_EXTENSION_CONFIG, "filter_chains.filters.typed_config.http_filters[config_discovery].name"},
	{XD_EXTENSION_CONFIG, "default_filter_chain.filters.typed_config.http_filters[config_discovery].name"},
	{XD_EXTENSION_CONFIG, "api_listener.api_listener.http_filters[config_discovery].name"},
	{XD_EXTENSION_CONFIG, "filter_chains.filters[config_discovery].name"},
	{XD_EXTENSION_CONFIG, "default_filter_chain.filters[config_discovery].name"},
	{XD_EXTENSION_CONFIG, "listener_filters[config_discovery].name"},
};

/* A cluster's upstream HTTP filters (HttpProtocolOptions, under its
 * typed_extension_protocol_options map) take theirs by ECDS too. */
static const struct xd_rtype_ref cluster_refs[] = {
	{XD_EXTENSION_CONFIG, "typed_extension_protocol_options.value.http_filters[config_discovery].name"},
};

/* A locality that takes its endpoints by LEDS names their glob
 * collection (rule G1) instead of listing them. */
static const struct xd_rtype_ref endpoint_refs[] = {
	{XD_LB_ENDPOINT, "endpoints.leds_cluster_locality_config.leds_collection_name"},
};

static const struct xd_rtype_ref route_refs[] = {
	{XD_CLUSTER, "virtual_hosts.routes.route.cluster"},
	{XD_CLUSTER, "virtual_hosts.routes.route.weighted_clusters.clusters.name"},
	{XD_CLUSTER, "virtual_hosts.routes.route.request_mirror_policies.cluster"},
};

static const struct xd_rtype_ref virtual_host_refs[] = {
	{XD_CLUSTER, "routes.route.cluster"},
	{XD_CLUSTER, "routes.route.weighted_clusters.clusters.name"},
	{XD_CLUSTER, "routes.route.request_mirror_policies.cluster"},
};

static const struct xd_rtype_ref scoped_route_refs[] = {
	{XD_ROUTE, "route_configuration_name"},
};

/* One row per type, in push order. A field left out is NULL, false,
 * XD_ROLE_PLAIN or no references. */
static const struct xd_rtype_info infos[XD_RTYPE_COUNT] = {
	[XD_SECRET] = {
		.type_url = URL("envoy.extensions.transport_sockets.tls.v3.Secret"),
		.message = "envoy.extensions.transport_sockets.tls.v3.Secret",
		.snapshot_key = "secrets", .service = "SDS", .noun = "secret",
		.name_field = "name",
		.sotw_path = METHOD("secret", "SecretDiscoveryService", "StreamSecrets"),
		.delta_path = METHOD("secret", "SecretDiscoveryService", "DeltaSecrets"),
		.rest_path = "secrets",
		.secret = true,
	},
	[XD_RUNTIME] = {
		.type_url = URL("envoy.service.runtime.v3.Runtime"),
		.message = "envoy.service.runtime.v3.Runtime",
		.snapshot_key = "runtimes", .service = "RTDS", .noun = "runtime",
		.name_field = "name",
		.sotw_path = METHOD("runtime", "RuntimeDiscoveryService", "StreamRuntime"),
		.delta_path = METHOD("runtime", "RuntimeDiscoveryService", "DeltaRuntime"),
		.rest_path = "runtime",
	},
	[XD_CLUSTER] = {
		.type_url = URL("envoy.config.cluster.v3.Cluster"),
		.message = "envoy.config.cluster.v3.Cluster",
		.snapshot_key = "clusters", .service = "CDS", .noun = "cluster",
		.name_field = "name",
		.sotw_path = METHOD("cluster", "ClusterDiscoveryService", "StreamClusters"),
		.delta_path = METHOD("cluster", "ClusterDiscoveryService", "DeltaClusters"),
		.rest_path = "clusters",
		.wildcard_ok = true, .full_state = true,
		.role = XD_ROLE_KEPT,
		.refs = REFS(cluster_refs),
		/* and an EDS cluster's endpoints (resource.c) */
	},
	[XD_ENDPOINT] = {
		.type_url = URL("envoy.config.endpoint.v3.ClusterLoadAssignment"),
		.message = "envoy.config.endpoint.v3.ClusterLoadAssignment",
		.snapshot_key = "endpoints", .service = "EDS", .noun = "endpoints",
		.name_field = "cluster_name",
		.sotw_path = METHOD("endpoint", "EndpointDiscoveryService", "StreamEndpoints"),
		.delta_path = METHOD("endpoint", "EndpointDiscoveryService", "DeltaEndpoints"),
		.rest_path = "endpoints",
		.role = XD_ROLE_WARMS, .warms = XD_CLUSTER,
		.refs = REFS(endpoint_refs),
	},
	[XD_LB_ENDPOINT] = {
		.type_url = URL("envoy.config.endpoint.v3.LbEndpoint"),
		.message = "envoy.config.endpoint.v3.LbEndpoint",
		.snapshot_key = "locality_endpoints", .service = "LEDS",
		.noun = "locality endpoint",
		/* the message has no name: "@name", an xdstp name */
		.name_field = XD_NAME_ANNOTATION,
		/* incremental only (leds.proto has no SotW method, and a
		 * SotW stream cannot say a member left a glob): no REST
		 * path either */
		.delta_path = METHOD("endpoint", "LocalityEndpointDiscoveryService", "DeltaLocalityEndpoints"),
		.by_glob = true,
		/* Envoy warms an EDS cluster until its localities' LEDS
		 * collections come, and holds its CDS ACK meanwhile, as it
		 * does for the endpoints themselves */
		.role = XD_ROLE_WARMS, .warms = XD_CLUSTER,
	},
	[XD_EXTENSION_CONFIG] = {
		.type_url = URL("envoy.config.core.v3.TypedExtensionConfig"),
		.message = "envoy.config.core.v3.TypedExtensionConfig",
		.snapshot_key = "extension_configs", .service = "ECDS",
		.noun = "extension config",
		.name_field = "name",
		.sotw_path = METHOD("extension", "ExtensionConfigDiscoveryService", "StreamExtensionConfigs"),
		.delta_path = METHOD("extension", "ExtensionConfigDiscoveryService", "DeltaExtensionConfigs"),
		.rest_path = "extension_configs",
		/* goes before the listeners whose filters run it; goes
		 * away when the client stops asking for it */
		.kept_while_subscribed = true,
	},
	[XD_LISTENER] = {
		.type_url = URL("envoy.config.listener.v3.Listener"),
		.message = "envoy.config.listener.v3.Listener",
		.snapshot_key = "listeners", .service = "LDS", .noun = "listener",
		.name_field = "name",
		.sotw_path = METHOD("listener", "ListenerDiscoveryService", "StreamListeners"),
		.delta_path = METHOD("listener", "ListenerDiscoveryService", "DeltaListeners"),
		.rest_path = "listeners",
		.wildcard_ok = true, .full_state = true,
		.role = XD_ROLE_USER,
		.refs = REFS(listener_refs),
	},
	[XD_ROUTE] = {
		.type_url = URL("envoy.config.route.v3.RouteConfiguration"),
		.message = "envoy.config.route.v3.RouteConfiguration",
		.snapshot_key = "routes", .service = "RDS",
		.noun = "route configuration",
		.name_field = "name",
		.sotw_path = METHOD("route", "RouteDiscoveryService", "StreamRoutes"),
		.delta_path = METHOD("route", "RouteDiscoveryService", "DeltaRoutes"),
		.rest_path = "routes",
		.role = XD_ROLE_USER, .kept_in_delta = true,
		.refs = REFS(route_refs),
	},
	[XD_SCOPED_ROUTE] = {
		.type_url = URL("envoy.config.route.v3.ScopedRouteConfiguration"),
		.message = "envoy.config.route.v3.ScopedRouteConfiguration",
		.snapshot_key = "scoped_routes", .service = "SRDS",
		.noun = "scoped route",
		.name_field = "name",
		/* the service is "ScopedRoutes..." in Envoy's srds.proto */
		.sotw_path = METHOD("route", "ScopedRoutesDiscoveryService", "StreamScopedRoutes"),
		.delta_path = METHOD("route", "ScopedRoutesDiscoveryService", "DeltaScopedRoutes"),
		.rest_path = "scoped-routes",
		.wildcard_ok = true, .full_state = true,
		.role = XD_ROLE_USER,
		.refs = REFS(scoped_route_refs),
	},
	[XD_VIRTUAL_HOST] = {
		.type_url = URL("envoy.config.route.v3.VirtualHost"),
		.message = "envoy.config.route.v3.VirtualHost",
		.snapshot_key = "virtual_hosts", .service = "VHDS",
		.noun = "virtual host",
		.name_field = "name",
		/* incremental only: no SotW method, no REST path */
		.delta_path = METHOD("route", "VirtualHostDiscoveryService", "DeltaVirtualHosts"),
		.wildcard_ok = true, .aliased = true,
		.role = XD_ROLE_USER,
		/* and its route configuration, by its name (resource.c) */
		.refs = REFS(virtual_host_refs),
	},
};

const struct xd_rtype_info *xd_rtype_info(enum xd_rtype t)
{
	/* XD_RTYPE_COUNT stands for "no type" (ADS, unknown URLs) */
	XD_ASSERT_INFO((unsigned)t < XD_RTYPE_COUNT, "resource type %d", (int)t);
	return &infos[t];
}

int xd_rtype_from_url(const char *url, size_t len, enum xd_rtype *out)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		if (strlen(infos[t].type_url) == len &&
		    memcmp(infos[t].type_url, url, len) == 0) {
			*out = (enum xd_rtype)t;
			return 0;
		}
	}
	return -1;
}

bool xd_rtype_url_secret(const char *url, size_t len)
{
	enum xd_rtype t;

	return xd_rtype_from_url(url, len, &t) == 0 && infos[t].secret;
}

static const struct xd_ctype_info cinfos[XD_CTYPE_COUNT] = {
	[XD_LISTENER_COLLECTION] = {URL("envoy.config.listener.v3.ListenerCollection"),
				    "envoy.config.listener.v3.ListenerCollection",
				    "listener_collections", "listener collection",
				    XD_LISTENER},
	[XD_CLUSTER_COLLECTION] = {URL("envoy.config.cluster.v3.ClusterCollection"),
				   "envoy.config.cluster.v3.ClusterCollection",
				   "cluster_collections", "cluster collection",
				   XD_CLUSTER},
};

const struct xd_ctype_info *xd_ctype_info(enum xd_ctype c)
{
	XD_ASSERT_INFO((unsigned)c < XD_CTYPE_COUNT, "collection type %d", (int)c);
	return &cinfos[c];
}

int xd_ctype_from_url(const char *url, size_t len, enum xd_ctype *out)
{
	for (int c = 0; c < XD_CTYPE_COUNT; c++) {
		if (strlen(cinfos[c].type_url) == len &&
		    memcmp(cinfos[c].type_url, url, len) == 0) {
			*out = (enum xd_ctype)c;
			return 0;
		}
	}
	return -1;
}

struct xd_section_info xd_section(int t)
{
	XD_ASSERT_INFO(t >= 0 && t < XD_SECTION_COUNT, "section %d", t);
	if (t < XD_RTYPE_COUNT) {
		const struct xd_rtype_info *i = xd_rtype_info((enum xd_rtype)t);

		return (struct xd_section_info){i->snapshot_key, i->type_url,
					   i->message, i->noun, i->secret};
	} else {
		const struct xd_ctype_info *i =
			xd_ctype_info((enum xd_ctype)(t - XD_RTYPE_COUNT));

		return (struct xd_section_info){i->snapshot_key, i->type_url,
					   i->message, i->noun, false};
	}
}

static const char *role_name(enum xd_rtype_role r)
{
	static const char *const names[] = {
		[XD_ROLE_PLAIN] = "plain",
		[XD_ROLE_KEPT] = "kept",
		[XD_ROLE_WARMS] = "warms",
		[XD_ROLE_USER] = "user",
	};

	return names[r];
}

/* The flags of a type, comma-separated, or "-". */
static void flags(const struct xd_rtype_info *i, char *buf, size_t len)
{
	const struct {
		bool on;
		const char *name;
	} f[] = {
		{i->wildcard_ok, "wildcard"},
		{i->full_state, "full-state"},
		{i->secret, "secret"},
		{i->aliased, "aliased"},
		{i->kept_in_delta, "kept-in-delta"},
		{i->kept_while_subscribed, "kept-while-subscribed"},
		{i->by_glob, "by-glob"},
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
		if (f[k].on && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n > 0 ? "," : "", f[k].name);
	if (n == 0)
		snprintf(buf, len, "-");
}

void xd_rtype_print(FILE *out)
{
	fprintf(out, "# service type_url snapshot_key name_field sotw_method delta_method rest_path role flags\n");
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_rtype_info *i = &infos[t];
		char role[64], fl[96];

		if (i->role == XD_ROLE_WARMS)
			snprintf(role, sizeof(role), "warms:%s",
				 infos[i->warms].service);
		else
			snprintf(role, sizeof(role), "%s", role_name(i->role));
		flags(i, fl, sizeof(fl));
		fprintf(out, "%s %s %s %s %s %s %s %s %s\n", i->service,
			i->type_url, i->snapshot_key, i->name_field,
			i->sotw_path != NULL ? i->sotw_path : "-", i->delta_path,
			i->rest_path != NULL ? i->rest_path : "-", role, fl);
	}
}
