/* SPDX-License-Identifier: Apache-2.0 */
#include "envoy/bootstrap.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/pbjson.h"
#include "util/xalloc.h"
#include "xds/xdstp.h"

#define HCM_URL \
	"type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
#define ROUTER_URL "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
#define HTTP_OPTIONS_URL "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
#define HTTP_OPTIONS_KEY "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

/* A resource printed as JSON, found by its entry's address. */
struct printed {
	const struct xd_entry *e;
	json_t *j;
};

struct xd_bootstrap_cache {
	const struct xd_schema *s;
	struct xd_snapshot *snap;
	struct printed *slots; /* open addressing; `cap` a power of two */
	size_t cap, n;
	char prefix[64];       /* of the bootstrap's own names */
	struct xd_diag diag;   /* what could not be printed */
};

struct xd_bootstrap {
	struct xd_bootstrap_cache *c;
	json_t *root, *listeners, *clusters, *secrets, *layers;
	json_t *scoped_set; /* array: what listeners' SRDS holds; NULL: all */
	json_t *scoped;     /* scoped routes added, for their listener */
	unsigned own;       /* listeners of its own so far */
};

/* ---------------- the cache ---------------- */

static size_t slot_of(const struct xd_bootstrap_cache *c, const struct xd_entry *e)
{
	uintptr_t h = (uintptr_t)e;

	h ^= h >> 17;
	h *= (uintptr_t)0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ (h >> 29)) & (c->cap - 1);
}

static void put(struct xd_bootstrap_cache *c, const struct xd_entry *e, json_t *j)
{
	size_t i;

	if (2 * (c->n + 1) > c->cap) {
		struct printed *old = c->slots;
		size_t ocap = c->cap;

		c->cap = c->cap ? 2 * c->cap : 64;
		c->slots = xd_calloc(c->cap, sizeof(*c->slots));
		c->n = 0;
		for (size_t k = 0; k < ocap; k++)
			if (old[k].e != NULL)
				put(c, old[k].e, old[k].j);
		free(old);
	}
	for (i = slot_of(c, e); c->slots[i].e != NULL; i = (i + 1) & (c->cap - 1))
		;
	c->slots[i] = (struct printed){e, j};
	c->n++;
}

/* The JSON of `e` (of type `t`), printed once; borrowed. An entry that
 * cannot be printed is an empty object, and why in the cache's diag. */
static json_t *json_of(struct xd_bootstrap_cache *c, enum xd_rtype t,
		       const struct xd_entry *e)
{
	const struct xd_msgdesc *m;
	struct xd_diag d = XD_DIAG_INIT;
	json_t *j;

	for (size_t i = c->cap ? slot_of(c, e) : 0; c->cap && c->slots[i].e != NULL;
	     i = (i + 1) & (c->cap - 1))
		if (c->slots[i].e == e)
			return c->slots[i].j;
	m = xd_schema_find_message(c->s, xd_rtype_info(t)->message);
	j = m != NULL ? xd_pbjson_print(c->s, m, e->msg.data, e->msg.len, 0, &d) :
			NULL;
	if (j == NULL) {
		xd_diag_add(&c->diag, "%s '%s': cannot be printed as JSON: %s",
			    xd_rtype_info(t)->noun, e->name,
			    d.count > 0 ? d.msgs[0] : "no such message");
		j = json_object();
	}
	xd_diag_clear(&d);
	put(c, e, j);
	return j;
}

/* Whether a name of table `t` starts with `p`. */
static bool taken(const struct xd_table *t, const char *p)
{
	size_t n = strlen(p);

	for (size_t i = 0; i < xd_table_count(t); i++)
		if (strncmp(xd_table_at(t, i)->name, p, n) == 0)
			return true;
	for (size_t i = 0; i < xd_table_variant_count(t); i++)
		if (strncmp(xd_table_variant_at(t, i)->name, p, n) == 0)
			return true;
	return false;
}

struct xd_bootstrap_cache *xd_bootstrap_cache_new(const struct xd_schema *s,
						  struct xd_snapshot *snap)
{
	struct xd_bootstrap_cache *c = xd_calloc(1, sizeof(*c));
	size_t n;

	c->s = s;
	c->snap = xd_snapshot_ref(snap);
	snprintf(c->prefix, sizeof(c->prefix), "xdsd-check-");
	/* a prefix of a name of the snapshot's would make ours clash:
	 * one more letter until none has it (a name of 1 KiB at most
	 * stops that long before the buffer's end) */
	while ((taken(xd_snapshot_table(snap, XD_LISTENER), c->prefix) ||
		taken(xd_snapshot_table(snap, XD_CLUSTER), c->prefix)) &&
	       (n = strlen(c->prefix)) + 2 < sizeof(c->prefix)) {
		c->prefix[n] = 'x';
		c->prefix[n + 1] = '\0';
	}
	return c;
}

void xd_bootstrap_cache_free(struct xd_bootstrap_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i].e != NULL)
			json_decref(c->slots[i].j);
	free(c->slots);
	xd_diag_clear(&c->diag);
	xd_snapshot_unref(c->snap);
	free(c);
}

bool xd_bootstrap_is_api_listener(struct xd_bootstrap_cache *c,
				  const struct xd_entry *e)
{
	return json_object_get(json_of(c, XD_LISTENER, e), "api_listener") != NULL;
}

const struct xd_entry *xd_bootstrap_find(struct xd_bootstrap_cache *c,
					 enum xd_rtype t, const char *name)
{
	const struct xd_table *tab = xd_snapshot_table(c->snap, t);
	const struct xd_entry *e;
	char *canon = NULL;
	const char *why;
	size_t len = strlen(name), n;

	if (xd_xdstp_is(name, len)) {
		canon = xd_xdstp_canon(name, len, &len, NULL, &why);
		if (canon == NULL)
			return NULL;
		name = canon;
	}
	e = xd_table_find(tab, name, len);
	if (e == NULL)
		e = xd_table_variants_of(tab, name, len, &n);
	free(canon);
	return e;
}

size_t xd_bootstrap_vhosts_of(struct xd_bootstrap_cache *c,
			      const struct xd_entry *route, size_t *first)
{
	const struct xd_table *t = xd_snapshot_table(c->snap, XD_VIRTUAL_HOST);
	size_t lo = 0, hi = xd_table_count(t), n = 0;
	size_t plen = route->name_len + 1;
	char *prefix = xd_asprintf("%s/", route->name);

	/* the first name not below the prefix */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(xd_table_at(t, mid)->name, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo + n < xd_table_count(t) &&
	       strncmp(xd_table_at(t, lo + n)->name, prefix, plen) == 0)
		n++;
	free(prefix);
	return n;
}

/* ---------------- the forms of resources ---------------- */

/*
 * Every SdsSecretConfig under `j` that asks ADS or `self` for its
 * secret loses its sds_config: Envoy then takes the static secret of
 * that name. Only objects are changed, in place (on a deep copy).
 */
static void static_secrets(json_t *j, int depth)
{
	const char *k;
	json_t *v;
	size_t i;

	if (depth > 64)
		return;
	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			static_secrets(v, depth + 1);
		return;
	}
	if (!json_is_object(j))
		return;
	v = json_object_get(j, "sds_config");
	if (json_is_object(v) && json_is_string(json_object_get(j, "name")) &&
	    (json_object_get(v, "ads") != NULL || json_object_get(v, "self") != NULL))
		json_object_del(j, "sds_config");
	json_object_foreach(j, k, v)
		static_secrets(v, depth + 1);
}

/* A route configuration as it goes inline: with `n` of its VHDS
 * virtual hosts from `vh` (NULL: all of them) in its virtual_hosts and
 * no vhds, and validate_clusters false unless it says. New reference. */
static json_t *route_form(struct xd_bootstrap_cache *c, const struct xd_entry *r,
			  const struct xd_entry *const *vh, size_t n)
{
	json_t *j = json_copy(json_of(c, XD_ROUTE, r));
	const struct xd_table *vt = xd_snapshot_table(c->snap, XD_VIRTUAL_HOST);
	json_t *hosts;
	size_t first, count;

	if (json_object_get(j, "validate_clusters") == NULL)
		json_object_set_new(j, "validate_clusters", json_false());
	if (json_object_get(j, "vhds") == NULL && vh == NULL)
		return j;
	json_object_del(j, "vhds");
	hosts = json_object_get(j, "virtual_hosts");
	hosts = hosts != NULL ? json_copy(hosts) : json_array();
	if (vh == NULL) {
		count = xd_bootstrap_vhosts_of(c, r, &first);
		for (size_t i = 0; i < count; i++)
			json_array_append(hosts, json_of(c, XD_VIRTUAL_HOST,
							 xd_table_at(vt, first + i)));
	} else {
		for (size_t i = 0; i < n; i++)
			json_array_append(hosts, json_of(c, XD_VIRTUAL_HOST, vh[i]));
	}
	json_object_set_new(j, "virtual_hosts", hosts);
	return j;
}

/* A scoped route with its route configuration inline. New reference. */
static json_t *scoped_form(struct xd_bootstrap_cache *c, const struct xd_entry *e)
{
	json_t *j = json_copy(json_of(c, XD_SCOPED_ROUTE, e));
	const char *name = json_string_value(json_object_get(j, "route_configuration_name"));
	const struct xd_entry *r = name != NULL ?
					   xd_bootstrap_find(c, XD_ROUTE, name) :
					   NULL;

	if (r != NULL) {
		json_object_del(j, "route_configuration_name");
		json_object_set_new(j, "route_configuration", route_form(c, r, NULL, 0));
	}
	return j;
}

/* What an HttpConnectionManager config `tc` takes from RDS and SRDS,
 * inline. */
static void hcm_inline(struct xd_bootstrap *b, json_t *tc)
{
	struct xd_bootstrap_cache *c = b->c;
	json_t *rds = json_object_get(tc, "rds");
	json_t *scoped = json_object_get(tc, "scoped_routes");

	if (rds != NULL) {
		const char *name = json_string_value(json_object_get(rds, "route_config_name"));
		const struct xd_entry *r = name != NULL ?
						   xd_bootstrap_find(c, XD_ROUTE, name) :
						   NULL;

		if (r != NULL) {
			json_object_set_new(tc, "route_config", route_form(c, r, NULL, 0));
			json_object_del(tc, "rds");
		}
	}
	if (scoped != NULL && json_object_get(scoped, "scoped_rds") != NULL) {
		json_t *list = json_array();
		const struct xd_table *st = xd_snapshot_table(c->snap, XD_SCOPED_ROUTE);

		if (b->scoped_set != NULL) {
			json_array_extend(list, b->scoped_set);
		} else {
			for (size_t i = 0; i < xd_table_count(st); i++)
				json_array_append_new(list, scoped_form(c, xd_table_at(st, i)));
		}
		json_object_del(scoped, "scoped_rds");
		json_object_set_new(scoped, "scoped_route_configurations_list",
				    json_pack("{s:o}", "scoped_route_configurations", list));
	}
}

/* The filters of a filter chain, their HCMs' routes inline. */
static void chain_inline(struct xd_bootstrap *b, json_t *chain)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(chain, "filters"), i, f) {
		json_t *tc = json_object_get(f, "typed_config");
		const char *url = json_string_value(json_object_get(tc, "@type"));

		if (url != NULL && strcmp(url, HCM_URL) == 0)
			hcm_inline(b, tc);
	}
}

static json_t *listener_form(struct xd_bootstrap *b, const struct xd_entry *e)
{
	json_t *j = json_deep_copy(json_of(b->c, XD_LISTENER, e)), *chain;
	size_t i;

	/* before the routes go in: they are the cache's, shared */
	static_secrets(j, 0);
	json_array_foreach(json_object_get(j, "filter_chains"), i, chain)
		chain_inline(b, chain);
	chain = json_object_get(j, "default_filter_chain");
	if (chain != NULL)
		chain_inline(b, chain);
	return j;
}

static json_t *cluster_form(struct xd_bootstrap_cache *c, const struct xd_entry *e,
			    bool endpoints)
{
	json_t *j = json_deep_copy(json_of(c, XD_CLUSTER, e));
	const char *type = json_string_value(json_object_get(j, "type"));
	const struct xd_table *et = xd_snapshot_table(c->snap, XD_ENDPOINT);
	const struct xd_entry *la = NULL;

	static_secrets(j, 0);
	if (type == NULL || strcmp(type, "EDS") != 0)
		return j;
	/* the one endpoints reference of an EDS cluster, by its canonical
	 * name (resource.h) */
	for (uint32_t i = 0; i < e->nrefs && la == NULL; i++)
		if (e->refs[i].type == XD_ENDPOINT) {
			size_t n;

			la = xd_table_find(et, e->refs[i].name, strlen(e->refs[i].name));
			if (la == NULL)
				la = xd_table_variants_of(et, e->refs[i].name,
							  strlen(e->refs[i].name), &n);
		}
	json_object_del(j, "eds_cluster_config");
	json_object_set_new(j, "type", json_string("STATIC"));
	if (endpoints && la != NULL)
		json_object_set(j, "load_assignment", json_of(c, XD_ENDPOINT, la));
	else
		json_object_set_new(j, "load_assignment",
				    json_pack("{s:s}", "cluster_name", e->name));
	return j;
}

/* A listener of the bootstrap's own holding the HCM config `tc`
 * (taken). */
static void own_listener(struct xd_bootstrap *b, const char *what, json_t *tc)
{
	char name[128], path[160];

	snprintf(name, sizeof(name), "%s%s-%u", b->c->prefix, what, b->own);
	snprintf(path, sizeof(path), "@%s", name);
	b->own++;
	json_object_set_new(tc, "@type", json_string(HCM_URL));
	json_object_set_new(tc, "stat_prefix", json_string("xdsd_check"));
	json_object_set_new(tc, "http_filters",
			    json_pack("[{s:s,s:{s:s}}]", "name",
				      "envoy.filters.http.router", "typed_config",
				      "@type", ROUTER_URL));
	json_array_append_new(
		b->listeners,
		json_pack("{s:s,s:{s:{s:s}},s:[{s:[{s:s,s:o}]}]}", "name", name,
			  "address", "pipe", "path", path, "filter_chains",
			  "filters", "name",
			  "envoy.filters.network.http_connection_manager",
			  "typed_config", tc));
}

/* ---------------- a bootstrap ---------------- */

struct xd_bootstrap *xd_bootstrap_new(struct xd_bootstrap_cache *c,
				      const char *node_id)
{
	struct xd_bootstrap *b = xd_calloc(1, sizeof(*b));
	char ads[128], path[160];

	b->c = c;
	b->listeners = json_array();
	b->clusters = json_array();
	b->secrets = json_array();
	b->layers = json_array();
	b->scoped = json_array();
	snprintf(ads, sizeof(ads), "%sads", c->prefix);
	snprintf(path, sizeof(path), "@%s", ads);
	/* ADS over HTTP/2, as Envoy requires of a gRPC service's cluster */
	json_array_append_new(
		b->clusters,
		json_pack("{s:s,s:s,s:{s:{s:s,s:{s:{}}}},s:{s:s,s:[{s:[{s:{s:{s:{s:s}}}}]}]}}",
			  "name", ads, "type", "STATIC",
			  "typed_extension_protocol_options", HTTP_OPTIONS_KEY,
			  "@type", HTTP_OPTIONS_URL, "explicit_http_config",
			  "http2_protocol_options", "load_assignment",
			  "cluster_name", ads, "endpoints", "lb_endpoints",
			  "endpoint", "address", "pipe", "path", path));
	b->root = json_pack(
		"{s:{s:s,s:s},s:{s:o,s:o,s:o},s:{s:{s:s,s:s,s:[{s:{s:s}}]}}}",
		"node", "id", node_id, "cluster", "xdsd-check",
		"static_resources", "listeners", json_incref(b->listeners),
		"clusters", json_incref(b->clusters), "secrets",
		json_incref(b->secrets), "dynamic_resources", "ads_config",
		"api_type", "GRPC", "transport_api_version", "V3",
		"grpc_services", "envoy_grpc", "cluster_name", ads);
	return b;
}

void xd_bootstrap_scoped_for_listeners(struct xd_bootstrap *b,
				       const struct xd_entry *const *scoped,
				       size_t n)
{
	json_decref(b->scoped_set);
	b->scoped_set = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(b->scoped_set, scoped_form(b->c, scoped[i]));
}

void xd_bootstrap_add(struct xd_bootstrap *b, enum xd_rtype t,
		      const struct xd_entry *e)
{
	struct xd_bootstrap_cache *c = b->c;
	json_t *j;

	switch (t) {
	case XD_SECRET:
		json_array_append(b->secrets, json_of(c, t, e));
		break;
	case XD_RUNTIME:
		j = json_of(c, t, e);
		json_array_append_new(
			b->layers,
			json_pack("{s:O?,s:O}", "name", json_object_get(j, "name"),
				  "static_layer",
				  json_object_get(j, "layer") != NULL ?
					  json_object_get(j, "layer") :
					  json_object()));
		break;
	case XD_CLUSTER:
		json_array_append_new(b->clusters, cluster_form(c, e, true));
		break;
	case XD_LISTENER:
		json_array_append_new(b->listeners, listener_form(b, e));
		break;
	case XD_ROUTE:
		own_listener(b, "route",
			     json_pack("{s:o}", "route_config",
				       route_form(c, e, NULL, 0)));
		break;
	case XD_SCOPED_ROUTE:
		json_array_append_new(b->scoped, scoped_form(c, e));
		break;
	default:
		/* endpoints and virtual hosts go with their cluster and
		 * route configuration */
		XD_ASSERT_INFO(false, "%s in a bootstrap of its own",
			       xd_rtype_info(t)->noun);
	}
}

void xd_bootstrap_add_bare_cluster(struct xd_bootstrap *b,
				   const struct xd_entry *e)
{
	json_array_append_new(b->clusters, cluster_form(b->c, e, false));
}

void xd_bootstrap_add_route_with(struct xd_bootstrap *b,
				 const struct xd_entry *route,
				 const struct xd_entry *const *vhosts, size_t n)
{
	own_listener(b, "route",
		     json_pack("{s:o}", "route_config",
			       route_form(b->c, route, vhosts, n)));
}

char *xd_bootstrap_finish(struct xd_bootstrap *b, size_t *len,
			  struct xd_diag *diag)
{
	char *text = NULL;

	if (json_array_size(b->scoped) > 0)
		/* the scopes' key builder: one header's value (a scope's
		 * key matches or not; nothing else about it is checked) */
		own_listener(
			b, "scoped",
			json_pack("{s:{s:s,s:{s:[{s:{s:s,s:i}}]},s:{s:{},s:s},s:{s:O}}}",
				  "scoped_routes", "name", "xdsd-check",
				  "scope_key_builder", "fragments",
				  "header_value_extractor", "name",
				  "x-xdsd-check-scope", "index", 0,
				  "rds_config_source", "ads",
				  "resource_api_version", "V3",
				  "scoped_route_configurations_list",
				  "scoped_route_configurations", b->scoped));
	if (json_array_size(b->layers) > 0)
		json_object_set_new(b->root, "layered_runtime",
				    json_pack("{s:O}", "layers", b->layers));
	if (b->c->diag.count > 0) {
		for (size_t i = 0; i < b->c->diag.count; i++)
			xd_diag_add(diag, "%s", b->c->diag.msgs[i]);
	} else {
		text = json_dumps(b->root, JSON_COMPACT);
		XD_ASSERT(text != NULL); /* only allocation fails it */
		*len = strlen(text);
	}
	json_decref(b->root);
	json_decref(b->listeners);
	json_decref(b->clusters);
	json_decref(b->secrets);
	json_decref(b->layers);
	json_decref(b->scoped);
	json_decref(b->scoped_set);
	free(b);
	return text;
}
