#include "transport/methods.h"

#include "util/common.h"

#define SVC(pkg, svc) "/envoy.service." pkg ".v3." svc "/"

const struct xd_method xd_methods[] = {
	{SVC("discovery", "AggregatedDiscoveryService") "StreamAggregatedResources",
	 "ADS", true, XD_RTYPE_COUNT, false},
	{SVC("discovery", "AggregatedDiscoveryService") "DeltaAggregatedResources",
	 "delta ADS", true, XD_RTYPE_COUNT, true},
	{SVC("listener", "ListenerDiscoveryService") "StreamListeners",
	 "LDS", false, XD_LISTENER, false},
	{SVC("listener", "ListenerDiscoveryService") "DeltaListeners",
	 "delta LDS", false, XD_LISTENER, true},
	{SVC("route", "RouteDiscoveryService") "StreamRoutes",
	 "RDS", false, XD_ROUTE, false},
	{SVC("route", "RouteDiscoveryService") "DeltaRoutes",
	 "delta RDS", false, XD_ROUTE, true},
	{SVC("route", "ScopedRoutesDiscoveryService") "StreamScopedRoutes",
	 "SRDS", false, XD_SCOPED_ROUTE, false},
	{SVC("route", "ScopedRoutesDiscoveryService") "DeltaScopedRoutes",
	 "delta SRDS", false, XD_SCOPED_ROUTE, true},
	{SVC("route", "VirtualHostDiscoveryService") "DeltaVirtualHosts",
	 "delta VHDS", false, XD_VIRTUAL_HOST, true},
	{SVC("cluster", "ClusterDiscoveryService") "StreamClusters",
	 "CDS", false, XD_CLUSTER, false},
	{SVC("cluster", "ClusterDiscoveryService") "DeltaClusters",
	 "delta CDS", false, XD_CLUSTER, true},
	{SVC("endpoint", "EndpointDiscoveryService") "StreamEndpoints",
	 "EDS", false, XD_ENDPOINT, false},
	{SVC("endpoint", "EndpointDiscoveryService") "DeltaEndpoints",
	 "delta EDS", false, XD_ENDPOINT, true},
	{SVC("secret", "SecretDiscoveryService") "StreamSecrets",
	 "SDS", false, XD_SECRET, false},
	{SVC("secret", "SecretDiscoveryService") "DeltaSecrets",
	 "delta SDS", false, XD_SECRET, true},
	{SVC("runtime", "RuntimeDiscoveryService") "StreamRuntime",
	 "RTDS", false, XD_RUNTIME, false},
	{SVC("runtime", "RuntimeDiscoveryService") "DeltaRuntime",
	 "delta RTDS", false, XD_RUNTIME, true},
};

const size_t xd_method_count = XD_ARRAY_LEN(xd_methods);
