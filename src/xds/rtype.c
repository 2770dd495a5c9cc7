/* SPDX-License-Identifier: Apache-2.0 */
#include "xds/rtype.h"

#include <string.h>

#include "util/xalloc.h"

#define URL(m) "type.googleapis.com/" m

static const struct xd_rtype_info infos[XD_RTYPE_COUNT] = {
	[XD_SECRET] = {URL("envoy.extensions.transport_sockets.tls.v3.Secret"),
		       "envoy.extensions.transport_sockets.tls.v3.Secret",
		       "secrets", "SDS", "secret", false, false},
	[XD_RUNTIME] = {URL("envoy.service.runtime.v3.Runtime"),
			"envoy.service.runtime.v3.Runtime", "runtimes",
			"RTDS", "runtime", false, false},
	[XD_CLUSTER] = {URL("envoy.config.cluster.v3.Cluster"),
			"envoy.config.cluster.v3.Cluster", "clusters", "CDS", "cluster",
			true, true},
	[XD_ENDPOINT] = {URL("envoy.config.endpoint.v3.ClusterLoadAssignment"),
			 "envoy.config.endpoint.v3.ClusterLoadAssignment",
			 "endpoints", "EDS", "endpoints", false, false},
	[XD_LISTENER] = {URL("envoy.config.listener.v3.Listener"),
			 "envoy.config.listener.v3.Listener", "listeners",
			 "LDS", "listener", true, true},
	[XD_ROUTE] = {URL("envoy.config.route.v3.RouteConfiguration"),
		      "envoy.config.route.v3.RouteConfiguration", "routes",
		      "RDS", "route configuration", false, false},
	[XD_SCOPED_ROUTE] = {URL("envoy.config.route.v3.ScopedRouteConfiguration"),
			     "envoy.config.route.v3.ScopedRouteConfiguration",
			     "scoped_routes", "SRDS", "scoped route", true, true},
	[XD_VIRTUAL_HOST] = {URL("envoy.config.route.v3.VirtualHost"),
			     "envoy.config.route.v3.VirtualHost",
			     "virtual_hosts", "VHDS", "virtual host", true, false},
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
					   i->message, i->noun};
	} else {
		const struct xd_ctype_info *i =
			xd_ctype_info((enum xd_ctype)(t - XD_RTYPE_COUNT));

		return (struct xd_section_info){i->snapshot_key, i->type_url,
					   i->message, i->noun};
	}
}
