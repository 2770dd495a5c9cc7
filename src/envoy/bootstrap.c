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

/* A resource printed as JSON, found by its entry's address; `gen`:
 * the bootstrap that built it last (a route configuration's, below). */
struct printed {
	const struct xd_entry *e;
	json_t *j;
	unsigned gen;
};

struct xd_bootstrap_cache {
	const struct xd_schema *s;
	struct xd_snapshot *snap;
	struct printed *slots; /* open addressing; `cap` a power of two */
	size_t cap, n;
	char prefix[64];       /* of the bootstrap's own names */
	unsigned gen;          /* bootstraps made so far */
	struct xd_diag diag;   /* what could not be printed */
};

struct entries {
	const struct xd_entry **v;
	size_t n, cap;
};

/*
 * Envoy builds a route configuration once however many listeners take
 * it by RDS: here too, each is inline once in a bootstrap, where it is
 * first used (listeners in the order added, then the route
 * configurations and scoped routes added on their own), and a stub of
 * its name elsewhere. A route configuration of 10,000 virtual hosts
 * taken by 1,000 listeners is one copy, not 1,000.
 */
struct xd_bootstrap {
	struct xd_bootstrap_cache *c;
	unsigned gen;       /* this bootstrap's, for `printed.gen` */
	json_t *root, *listeners, *clusters, *secrets, *layers;
	struct entries scoped_set; /* what listeners' SRDS holds */
	bool scoped_set_given;     /* else every scoped route */
	struct entries routes, scoped; /* added on their own: at the end */
	unsigned own;       /* listeners of its own so far */
};

static void entries_push(struct entries *l, const struct xd_entry *e)
{
	l->v = xd_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = e;
}

/* ---------------- the cache ---------------- */

static size_t slot_of(const struct xd_bootstrap_cache *c, const struct xd_entry *e)
{
	uintptr_t h = (uintptr_t)e;

	h ^= h >> 17;
	h *= (uintptr_t)0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ (h >> 29)) & (c->cap - 1);
}

static struct printed *put(struct xd_bootstrap_cache *c,
			   const struct xd_entry *e, json_t *j, unsigned gen)
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
				put(c, old[k].e, old[k].j, old[k].gen);
		free(old);
	}
	for (i = slot_of(c, e); c->slots[i].e != NULL; i = (i + 1) & (c->cap - 1))
		;
	c->slots[i] = (struct printed){e, j, gen};
	c->n++;
	return &c->slots[i];
}

/* The slot of `e` (of type `t`), printed once. An entry that cannot
 * be printed is an empty object, and why in the cache's diag. */
static struct printed *printed_of(struct xd_bootstrap_cache *c,
				  enum xd_rtype t, const struct xd_entry *e)
{
	const struct xd_msgdesc *m;
	struct xd_diag d = XD_DIAG_INIT;
	json_t *j;

	for (size_t i = c->cap ? slot_of(c, e) : 0; c->cap && c->slots[i].e != NULL;
	     i = (i + 1) & (c->cap - 1))
		if (c->slots[i].e == e)
			return &c->slots[i];
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
	return put(c, e, j, 0);
}

/* The JSON of `e`, borrowed. */
static json_t *json_of(struct xd_bootstrap_cache *c, enum xd_rtype t,
		       const struct xd_entry *e)
{
	return printed_of(c, t, e)->j;
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

/* Whether `msg` holds 'TEXT', quotes and all. */
static bool quotes(const char *msg, const char *text)
{
	size_t n = strlen(text);

	for (const char *p = strchr(msg, '\''); p != NULL; p = strchr(p + 1, '\''))
		if (strncmp(p + 1, text, n) == 0 && p[1 + n] == '\'')
			return true;
	return false;
}

bool xd_bootstrap_named_in(struct xd_bootstrap_cache *c, enum xd_rtype t,
			   const struct xd_entry *e, const char *msg,
			   bool by_address)
{
	json_t *sa;
	const char *ip;
	char addr[300];

	if (quotes(msg, e->name))
		return true;
	if (t != XD_LISTENER || !by_address)
		return false;
	sa = json_object_get(json_object_get(json_of(c, t, e), "address"),
			     "socket_address");
	ip = json_string_value(json_object_get(sa, "address"));
	if (ip == NULL)
		return false;
	snprintf(addr, sizeof(addr), "%s:%lld", ip,
		 (long long)json_integer_value(json_object_get(sa, "port_value")));
	return quotes(msg, addr);
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

/* Whether `r` is built in `b` yet; from now on it is. */
static bool built(struct xd_bootstrap *b, const struct xd_entry *r)
{
	struct printed *p = printed_of(b->c, XD_ROUTE, r);

	if (p->gen == b->gen)
		return true;
	p->gen = b->gen;
	return false;
}

/* The route configuration `r` where a listener or scoped route takes
 * it: inline the first time, a stub of its name after. New reference. */
static json_t *route_use(struct xd_bootstrap *b, const struct xd_entry *r)
{
	if (built(b, r))
		return json_pack("{s:s,s:b}", "name", r->name, "validate_clusters", 0);
	return route_form(b->c, r, NULL, 0);
}

/* A scoped route with its route configuration inline. New reference. */
static json_t *scoped_form(struct xd_bootstrap *b, const struct xd_entry *e)
{
	json_t *j = json_copy(json_of(b->c, XD_SCOPED_ROUTE, e));
	const char *name = json_string_value(json_object_get(j, "route_configuration_name"));
	const struct xd_entry *r = name != NULL ?
					   xd_bootstrap_find(b->c, XD_ROUTE, name) :
					   NULL;

	if (r != NULL) {
		json_object_del(j, "route_configuration_name");
		json_object_set_new(j, "route_configuration", route_use(b, r));
	}
	return j;
}

/*
 * The filters of `filters` (HTTP, network or listener filters) that
 * take their configs by ECDS, with the snapshot's extension config of
 * their name inline instead (its typed_config), so that Envoy builds
 * the filter with it as it would once ECDS delivered it. A filter whose
 * config the snapshot lacks keeps its config_discovery.
 */
static void ecds_inline(struct xd_bootstrap_cache *c, json_t *filters)
{
	json_t *f;
	size_t i;

	json_array_foreach(filters, i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		const struct xd_entry *x;
		json_t *tc;

		if (name == NULL || json_object_get(f, "config_discovery") == NULL ||
		    (x = xd_bootstrap_find(c, XD_EXTENSION_CONFIG, name)) == NULL ||
		    (tc = json_object_get(json_of(c, XD_EXTENSION_CONFIG, x),
					  "typed_config")) == NULL)
			continue;
		json_object_del(f, "config_discovery");
		json_object_set(f, "typed_config", tc);
	}
}

/* What an HttpConnectionManager config `tc` takes from RDS, SRDS and
 * ECDS, inline. */
static void hcm_inline(struct xd_bootstrap *b, json_t *tc)
{
	struct xd_bootstrap_cache *c = b->c;
	json_t *rds = json_object_get(tc, "rds");
	json_t *scoped = json_object_get(tc, "scoped_routes");

	ecds_inline(c, json_object_get(tc, "http_filters"));

	if (rds != NULL) {
		const char *name = json_string_value(json_object_get(rds, "route_config_name"));
		const struct xd_entry *r = name != NULL ?
						   xd_bootstrap_find(c, XD_ROUTE, name) :
						   NULL;

		if (r != NULL) {
			json_object_set_new(tc, "route_config", route_use(b, r));
			json_object_del(tc, "rds");
		}
	}
	if (scoped != NULL && json_object_get(scoped, "scoped_rds") != NULL) {
		json_t *list = json_array();
		const struct xd_table *st = xd_snapshot_table(c->snap, XD_SCOPED_ROUTE);

		if (b->scoped_set_given) {
			for (size_t i = 0; i < b->scoped_set.n; i++)
				json_array_append_new(list, scoped_form(b, b->scoped_set.v[i]));
		} else {
			for (size_t i = 0; i < xd_table_count(st); i++)
				json_array_append_new(list, scoped_form(b, xd_table_at(st, i)));
		}
		json_object_del(scoped, "scoped_rds");
		json_object_set_new(scoped, "scoped_route_configurations_list",
				    json_pack("{s:o}", "scoped_route_configurations", list));
	}
}

/* The filters of a filter chain, their ECDS configs and their HCMs'
 * routes inline. */
static void chain_inline(struct xd_bootstrap *b, json_t *chain)
{
	json_t *f;
	size_t i;

	ecds_inline(b->c, json_object_get(chain, "filters"));
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

	/* before the routes and extension configs go in: they are the
	 * cache's, shared */
	static_secrets(j, 0);
	ecds_inline(b->c, json_object_get(j, "listener_filters"));
	json_array_foreach(json_object_get(j, "filter_chains"), i, chain)
		chain_inline(b, chain);
	chain = json_object_get(j, "default_filter_chain");
	if (chain != NULL)
		chain_inline(b, chain);
	return j;
}

struct leds_inline {
	struct xd_bootstrap_cache *c;
	json_t *lb_endpoints;
};

static bool add_lb_endpoint(const struct xd_entry *e, void *arg)
{
	struct leds_inline *li = arg;

	json_array_append(li->lb_endpoints, json_of(li->c, XD_LB_ENDPOINT, e));
	return true;
}

/*
 * A load assignment as a STATIC cluster holds it: a locality that takes
 * its endpoints by LEDS (a glob collection, docs/protocol.md rule G1)
 * gets them inline, the collection's members as its lb_endpoints, as
 * Envoy would hold them; Envoy refuses LEDS in a STATIC cluster. A new
 * reference, or `la`'s own when no locality uses LEDS.
 */
static json_t *endpoints_form(struct xd_bootstrap_cache *c, json_t *la)
{
	const struct xd_table *lt = xd_snapshot_table(c->snap, XD_LB_ENDPOINT);
	json_t *j, *loc;
	bool any = false;
	size_t i;

	json_array_foreach(json_object_get(la, "endpoints"), i, loc)
		any |= json_object_get(loc, "leds_cluster_locality_config") != NULL;
	if (!any)
		return json_incref(la);
	/* the cache's is shared: the copy changes */
	j = json_deep_copy(la);
	json_array_foreach(json_object_get(j, "endpoints"), i, loc) {
		json_t *leds = json_object_get(loc, "leds_cluster_locality_config");
		const char *name = json_string_value(
			json_object_get(leds, "leds_collection_name"));
		struct leds_inline li = {c, NULL};
		const char *why;
		size_t len;
		char *glob;

		if (leds == NULL)
			continue;
		glob = name != NULL ? xd_xdstp_canon(name, strlen(name), &len, NULL, &why)
				    : NULL;
		json_object_del(loc, "leds_cluster_locality_config");
		li.lb_endpoints = json_array();
		/* the loader checked it: a glob of locality endpoints */
		if (glob != NULL && lt != NULL)
			xd_table_glob_members(lt, glob, len, add_lb_endpoint, &li);
		free(glob);
		json_object_set_new(loc, "lb_endpoints", li.lb_endpoints);
	}
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
		json_object_set_new(j, "load_assignment",
				    endpoints_form(c, json_of(c, XD_ENDPOINT, la)));
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
	b->gen = ++c->gen;
	b->listeners = json_array();
	b->clusters = json_array();
	b->secrets = json_array();
	b->layers = json_array();
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
	b->scoped_set.n = 0;
	b->scoped_set_given = true;
	for (size_t i = 0; i < n; i++)
		entries_push(&b->scoped_set, scoped[i]);
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
		entries_push(&b->routes, e);
		break;
	case XD_SCOPED_ROUTE:
		entries_push(&b->scoped, e);
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
	built(b, route);
	own_listener(b, "route",
		     json_pack("{s:o}", "route_config",
			       route_form(b->c, route, vhosts, n)));
}

char *xd_bootstrap_finish(struct xd_bootstrap *b, size_t *len,
			  struct xd_diag *diag)
{
	json_t *scoped = json_array();
	char *text = NULL;

	/* what no listener built: the scoped routes' first, then those
	 * on their own */
	for (size_t i = 0; i < b->scoped.n; i++)
		json_array_append_new(scoped, scoped_form(b, b->scoped.v[i]));
	for (size_t i = 0; i < b->routes.n; i++)
		if (!built(b, b->routes.v[i]))
			own_listener(b, "route",
				     json_pack("{s:o}", "route_config",
					       route_form(b->c, b->routes.v[i],
							  NULL, 0)));
	if (json_array_size(scoped) > 0)
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
				  "scoped_route_configurations", scoped));
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
	json_decref(scoped);
	free(b->scoped_set.v);
	free(b->routes.v);
	free(b->scoped.v);
	free(b);
	return text;
}
