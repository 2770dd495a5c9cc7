/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fields of a resource that a client's subscriptions depend on
 * (fleet_resource.h), read straight from the protobuf wire format;
 * nothing else is decoded.
 *
 * The fields read: Cluster name (1), type (2), eds_cluster_config (3)
 * .service_name (2); ClusterLoadAssignment cluster_name (1); Listener
 * name (1), filter_chains (3), default_filter_chain (25), api_listener
 * (19) .api_listener (1); FilterChain filters (3); Filter typed_config
 * (4); HttpConnectionManager rds (3) .route_config_name (2);
 * RouteConfiguration name (1); ClusterLoadAssignment endpoints (2)
 * .leds_cluster_locality_config (8) .leds_collection_name (2).
 *
 * Pure functions of their input, on any thread.
 */
#include <stdlib.h>
#include <string.h>

#include "fleet_pb.h"
#include "fleet_resource.h"
#include "fleet_util.h"

const char *const type_url[NT] = {
	"type.googleapis.com/envoy.config.cluster.v3.Cluster",
	"type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
	"type.googleapis.com/envoy.config.endpoint.v3.LbEndpoint",
	"type.googleapis.com/envoy.config.listener.v3.Listener",
	"type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
};
const char *const type_name[NT] = {"cds", "eds", "leds", "lds", "rds"};

static const char HCM_URL[] =
	"type.googleapis.com/envoy.extensions.filters.network."
	"http_connection_manager.v3.HttpConnectionManager";

/* Cluster: name and, for type EDS (3), the name its endpoints go by. */
bool parse_cluster(const uint8_t *d, size_t n, struct xd_wire_field *name,
		   char **eds)
{
	struct pb_rd r = pb_sub(d, n), r2;
	struct xd_wire_field f, g, svc = {0};
	uint64_t type = 0;
	int rc;

	name->len = 0;
	name->data = NULL;
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.number == 1 && f.wt == 2)
			*name = f;
		else if (f.number == 2 && f.wt == 0)
			type = f.v;
		else if (f.number == 3 && f.wt == 2) {
			r2 = pb_sub(f.data, f.len);
			while ((rc = pb_next(&r2, &g)) == 1)
				if (g.number == 2 && g.wt == 2)
					svc = g;
			if (rc < 0)
				return false;
		}
	}
	if (rc < 0)
		return false;
	*eds = NULL;
	if (type == 3)
		*eds = svc.len ? xstrndup(svc.data, svc.len)
			       : xstrndup(name->data, name->len);
	return true;
}

struct names {
	char *s;
	size_t len, cap;
};

static void names_add(struct names *ns, const uint8_t *p, size_t n)
{
	if (ns->len + n + 2 > ns->cap) {
		ns->cap = (ns->len + n + 2) * 2;
		ns->s = xrealloc(ns->s, ns->cap);
	}
	if (ns->len)
		ns->s[ns->len++] = '\n';
	memcpy(ns->s + ns->len, p, n);
	ns->len += n;
	ns->s[ns->len] = '\0';
}

/* An Any: if it holds an HttpConnectionManager using RDS, its route name. */
static bool parse_hcm_any(const uint8_t *d, size_t n, struct names *ns)
{
	struct pb_rd r = pb_sub(d, n), r2, r3;
	struct xd_wire_field f, g, h, url = {0}, val = {0};
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.number == 1 && f.wt == 2)
			url = f;
		else if (f.number == 2 && f.wt == 2)
			val = f;
	}
	if (rc < 0)
		return false;
	if (!span_eq(url.data, url.len, HCM_URL))
		return true;
	r2 = pb_sub(val.data, val.len);
	while ((rc = pb_next(&r2, &g)) == 1) {
		if (g.number != 3 || g.wt != 2)      /* rds */
			continue;
		r3 = pb_sub(g.data, g.len);
		while ((rc = pb_next(&r3, &h)) == 1)
			if (h.number == 2 && h.wt == 2 && h.len) /* route_config_name */
				names_add(ns, h.data, h.len);
		if (rc < 0)
			return false;
	}
	return rc == 0;
}

static bool parse_filter_chain(const uint8_t *d, size_t n, struct names *ns)
{
	struct pb_rd r = pb_sub(d, n), r2;
	struct xd_wire_field f, g;
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.number != 3 || f.wt != 2)          /* filters */
			continue;
		r2 = pb_sub(f.data, f.len);
		while ((rc = pb_next(&r2, &g)) == 1)
			if (g.number == 4 && g.wt == 2 &&    /* typed_config */
			    !parse_hcm_any(g.data, g.len, ns))
				return false;
		if (rc < 0)
			return false;
	}
	return rc == 0;
}

/* Listener: name and the route configurations its HCMs get over RDS. */
bool parse_listener(const uint8_t *d, size_t n, struct xd_wire_field *name,
		    char **rds)
{
	struct pb_rd r = pb_sub(d, n), r2;
	struct xd_wire_field f, g;
	struct names ns = {0};
	int rc;

	name->len = 0;
	name->data = NULL;
	*rds = NULL;
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.number == 1) {
			*name = f;
		} else if (f.number == 3 || f.number == 25) {
			if (!parse_filter_chain(f.data, f.len, &ns))
				goto bad;
		} else if (f.number == 19) {             /* api_listener */
			r2 = pb_sub(f.data, f.len);
			while ((rc = pb_next(&r2, &g)) == 1)
				if (g.number == 1 && g.wt == 2 &&
				    !parse_hcm_any(g.data, g.len, &ns))
					goto bad;
			if (rc < 0)
				goto bad;
		}
	}
	if (rc < 0)
		goto bad;
	*rds = ns.s;
	return true;
bad:
	free(ns.s);
	return false;
}

/* ClusterLoadAssignment.cluster_name and RouteConfiguration.name: field 1. */
bool parse_name1(const uint8_t *d, size_t n, struct xd_wire_field *name)
{
	struct pb_rd r = pb_sub(d, n);
	struct xd_wire_field f;
	int rc;

	name->len = 0;
	name->data = NULL;
	while ((rc = pb_next(&r, &f)) == 1)
		if (f.number == 1 && f.wt == 2)
			*name = f;
	return rc == 0;
}

bool parse_cla(const uint8_t *d, size_t n, struct xd_wire_field *name,
	       char **leds)
{
	struct pb_rd r = pb_sub(d, n), r2, r3;
	struct xd_wire_field f, g, h;
	struct names ns = {0};
	int rc;

	name->len = 0;
	name->data = NULL;
	*leds = NULL;
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.number == 1) {
			*name = f;
		} else if (f.number == 2) {              /* endpoints */
			r2 = pb_sub(f.data, f.len);
			while ((rc = pb_next(&r2, &g)) == 1) {
				if (g.number != 8 || g.wt != 2)  /* leds_cluster_locality_config */
					continue;
				r3 = pb_sub(g.data, g.len);
				while ((rc = pb_next(&r3, &h)) == 1)
					if (h.number == 2 && h.wt == 2 && h.len)
						names_add(&ns, h.data, h.len);
				if (rc < 0)
					goto bad;
			}
			if (rc < 0)
				goto bad;
		}
	}
	if (rc < 0)
		goto bad;
	*leds = ns.s;
	return true;
bad:
	free(ns.s);
	return false;
}

enum rt type_of(const uint8_t *p, size_t n)
{
	for (int t = 0; t < NT; t++)
		if (span_eq(p, n, type_url[t]))
			return (enum rt)t;
	return NT;
}
