/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/methods.h"

#include <string.h>

#include "util/common.h"

#define SVC(pkg, svc) "/envoy.service." pkg ".v3." svc "/"

const struct xd_method xd_methods[] = {
	{SVC("discovery", "AggregatedDiscoveryService") "StreamAggregatedResources",
	 "ADS", true, XD_RTYPE_COUNT, false, false},
	{SVC("discovery", "AggregatedDiscoveryService") "DeltaAggregatedResources",
	 "delta ADS", true, XD_RTYPE_COUNT, true, false},
	{SVC("listener", "ListenerDiscoveryService") "StreamListeners",
	 "LDS", false, XD_LISTENER, false, false},
	{SVC("listener", "ListenerDiscoveryService") "DeltaListeners",
	 "delta LDS", false, XD_LISTENER, true, false},
	{SVC("route", "RouteDiscoveryService") "StreamRoutes",
	 "RDS", false, XD_ROUTE, false, false},
	{SVC("route", "RouteDiscoveryService") "DeltaRoutes",
	 "delta RDS", false, XD_ROUTE, true, false},
	{SVC("route", "ScopedRoutesDiscoveryService") "StreamScopedRoutes",
	 "SRDS", false, XD_SCOPED_ROUTE, false, false},
	{SVC("route", "ScopedRoutesDiscoveryService") "DeltaScopedRoutes",
	 "delta SRDS", false, XD_SCOPED_ROUTE, true, false},
	{SVC("route", "VirtualHostDiscoveryService") "DeltaVirtualHosts",
	 "delta VHDS", false, XD_VIRTUAL_HOST, true, false},
	{SVC("cluster", "ClusterDiscoveryService") "StreamClusters",
	 "CDS", false, XD_CLUSTER, false, false},
	{SVC("cluster", "ClusterDiscoveryService") "DeltaClusters",
	 "delta CDS", false, XD_CLUSTER, true, false},
	{SVC("endpoint", "EndpointDiscoveryService") "StreamEndpoints",
	 "EDS", false, XD_ENDPOINT, false, false},
	{SVC("endpoint", "EndpointDiscoveryService") "DeltaEndpoints",
	 "delta EDS", false, XD_ENDPOINT, true, false},
	{SVC("secret", "SecretDiscoveryService") "StreamSecrets",
	 "SDS", false, XD_SECRET, false, false},
	{SVC("secret", "SecretDiscoveryService") "DeltaSecrets",
	 "delta SDS", false, XD_SECRET, true, false},
	{SVC("runtime", "RuntimeDiscoveryService") "StreamRuntime",
	 "RTDS", false, XD_RUNTIME, false, false},
	{SVC("runtime", "RuntimeDiscoveryService") "DeltaRuntime",
	 "delta RTDS", false, XD_RUNTIME, true, false},
};

const size_t xd_method_count = XD_ARRAY_LEN(xd_methods);

const struct xd_method xd_csds_methods[] = {
	{SVC("status", "ClientStatusDiscoveryService") "StreamClientStatus",
	 "CSDS", false, XD_RTYPE_COUNT, false, false},
	{SVC("status", "ClientStatusDiscoveryService") "FetchClientStatus",
	 "CSDS fetch", false, XD_RTYPE_COUNT, false, true},
};

const size_t xd_csds_method_count = XD_ARRAY_LEN(xd_csds_methods);

const struct xd_method xd_health_methods[] = {
	{"/" XD_HEALTH_SERVICE "/Check", "health check", false, XD_RTYPE_COUNT,
	 false, true},
	{"/" XD_HEALTH_SERVICE "/Watch", "health watch", false, XD_RTYPE_COUNT,
	 false, false},
};

const size_t xd_health_method_count = XD_ARRAY_LEN(xd_health_methods);

const char *xd_method_service(const struct xd_method *m, size_t *len)
{
	const char *end;

	if (m->path[0] != '/')
		return NULL;
	end = strchr(m->path + 1, '/');
	if (end == NULL || end == m->path + 1)
		return NULL;
	*len = (size_t)(end - (m->path + 1));
	return m->path + 1;
}
