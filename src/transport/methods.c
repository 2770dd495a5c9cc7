/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/methods.h"

#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "util/common.h"

#define SVC(pkg, svc) "/envoy.service." pkg ".v3." svc "/"

/* The two aggregated methods, then each type's SotW (if it has one) and
 * delta method, in push order: built once from the type table. */
static struct xd_method methods[2 + 2 * XD_RTYPE_COUNT];
static char names[XD_RTYPE_COUNT][2][32];
static size_t count;
static uv_once_t once = UV_ONCE_INIT;

static void build(void)
{
	methods[count++] = (struct xd_method){
		SVC("discovery", "AggregatedDiscoveryService") "StreamAggregatedResources",
		"ADS", true, XD_RTYPE_COUNT, false, false};
	methods[count++] = (struct xd_method){
		SVC("discovery", "AggregatedDiscoveryService") "DeltaAggregatedResources",
		"delta ADS", true, XD_RTYPE_COUNT, true, false};
	for (int t = 0; t < XD_RTYPE_COUNT; t++) {
		const struct xd_rtype_info *i = xd_rtype_info((enum xd_rtype)t);

		for (int delta = 0; delta < 2; delta++) {
			const char *path = delta ? i->delta_path : i->sotw_path;

			if (path == NULL)
				continue;
			snprintf(names[t][delta], sizeof(names[t][delta]), "%s%s",
				 delta ? "delta " : "", i->service);
			methods[count++] = (struct xd_method){
				path, names[t][delta], false, (enum xd_rtype)t,
				delta != 0, false};
		}
	}
}

const struct xd_method *xd_methods(size_t *n)
{
	uv_once(&once, build);
	*n = count;
	return methods;
}

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
