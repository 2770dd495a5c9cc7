/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types, services and wrapping (rules T1-T3 and L2 of
 * docs/protocol.md), against the real xdsd over gRPC on loopback.
 */
#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

#define RESOURCE_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"
#define FEATURE "xds.config.supports-resource-in-sotw"

static const struct pu_combo *sotw_all, *delta_all;
static size_t nsotw_all, ndelta_all;
/* per-type methods only (two a type, VHDS one), and the two aggregated ones */
static struct pu_combo per_type[2 * PU_NTYPES];
static size_t nper_type;
static const struct pu_combo ads_combos[] = {
	{"ADS", false, true, PU_CDS},
	{"delta ADS", true, true, PU_CDS},
};

/* The full message name of each type, as rule T1 lists them. */
static const char *const messages[PU_NTYPES] = {
	[PU_SDS] = "envoy.extensions.transport_sockets.tls.v3.Secret",
	[PU_RTDS] = "envoy.service.runtime.v3.Runtime",
	[PU_CDS] = "envoy.config.cluster.v3.Cluster",
	[PU_EDS] = "envoy.config.endpoint.v3.ClusterLoadAssignment",
	[PU_LEDS] = "envoy.config.endpoint.v3.LbEndpoint",
	[PU_ECDS] = "envoy.config.core.v3.TypedExtensionConfig",
	[PU_LDS] = "envoy.config.listener.v3.Listener",
	[PU_RDS] = "envoy.config.route.v3.RouteConfiguration",
	[PU_SRDS] = "envoy.config.route.v3.ScopedRouteConfiguration",
	[PU_VHDS] = "envoy.config.route.v3.VirtualHost",
};

/* Each type's SotW and incremental method, as rule T2 lists them. */
#define SVC(pkg, svc) "/envoy.service." pkg ".v3." svc "/"
static const char *const methods[PU_NTYPES][2] = {
	[PU_SDS] = {SVC("secret", "SecretDiscoveryService") "StreamSecrets",
		    SVC("secret", "SecretDiscoveryService") "DeltaSecrets"},
	[PU_RTDS] = {SVC("runtime", "RuntimeDiscoveryService") "StreamRuntime",
		     SVC("runtime", "RuntimeDiscoveryService") "DeltaRuntime"},
	[PU_CDS] = {SVC("cluster", "ClusterDiscoveryService") "StreamClusters",
		    SVC("cluster", "ClusterDiscoveryService") "DeltaClusters"},
	[PU_EDS] = {SVC("endpoint", "EndpointDiscoveryService") "StreamEndpoints",
		    SVC("endpoint", "EndpointDiscoveryService") "DeltaEndpoints"},
	[PU_LEDS] = {NULL, SVC("endpoint", "LocalityEndpointDiscoveryService") "DeltaLocalityEndpoints"},
	[PU_ECDS] = {SVC("extension", "ExtensionConfigDiscoveryService") "StreamExtensionConfigs",
		     SVC("extension", "ExtensionConfigDiscoveryService") "DeltaExtensionConfigs"},
	[PU_LDS] = {SVC("listener", "ListenerDiscoveryService") "StreamListeners",
		    SVC("listener", "ListenerDiscoveryService") "DeltaListeners"},
	[PU_RDS] = {SVC("route", "RouteDiscoveryService") "StreamRoutes",
		    SVC("route", "RouteDiscoveryService") "DeltaRoutes"},
	[PU_SRDS] = {SVC("route", "ScopedRoutesDiscoveryService") "StreamScopedRoutes",
		     SVC("route", "ScopedRoutesDiscoveryService") "DeltaScopedRoutes"},
	[PU_VHDS] = {NULL, SVC("route", "VirtualHostDiscoveryService") "DeltaVirtualHosts"},
};

/* ---------------- rule T1 ---------------- */

/* rule T1: each type is served under type.googleapis.com/<full message name>,
 * in the response and in each resource's Any. */
START_TEST(t1_type_url)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_req q = {.type = t};
	const char *a = pu_name(t, "a");
	struct pu_resp *r;
	char url[200];

	snprintf(url, sizeof(url), "type.googleapis.com/%s", messages[t]);
	q.type_url = url;
	q.names = &a;
	q.nnames = 1;
	pu_send(cl, &q);
	r = pu_expect(cl, t);
	PU_ASSERT(strcmp(r->type_url, url) == 0, "type_url '%s', expected '%s'",
		  r->type_url, url);
	PU_ASSERT(r->nres == 1 && r->res[0].has_body &&
			  strcmp(r->res[0].url, url) == 0,
		  "resource Any type '%s'", r->nres ? r->res[0].url : "(none)");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule T2 ---------------- */

/* rule T2: every per-type method serves its type, at its full method name
 * (envoy.service.<pkg>.v3.<Service>/<Method>). */
START_TEST(t2_method_serves_its_type)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *want = methods[t][c->delta];
	struct pu_snap *s;
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	/* the method the helpers connect to, from xdsd's own table, is
	 * the one rule T2 names */
	PU_ASSERT(strcmp(pu_method(c->delta, false, t), want) == 0,
		  "method '%s', rule T2 names '%s'", pu_method(c->delta, false, t),
		  want);
	s = pu_snap_of(t, "a", "b", NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);

	pu_sub(cl, t, pu_name(t, "b"), NULL);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "b");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule T2: VHDS is incremental only: there is no StreamVirtualHosts. */
START_TEST(t2_no_sotw_vhds)
{
	pu_combo(_i); /* the label of failures */
	struct pu_snap *s = pu_snap_of(PU_VHDS, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_open_method(
		e, "/envoy.service.route.v3.VirtualHostDiscoveryService/StreamVirtualHosts",
		false);

	pu_sub(cl, PU_VHDS, "vhds_rc/a", NULL);
	pu_expect_status(cl, GRPC_STATUS_UNIMPLEMENTED, NULL);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule T3 ---------------- */

/* rule T3: on a per-type method the type is implied: a request without a
 * type_url is served. */
START_TEST(t3_per_type_implies_type)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a");
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_req q = {.type = t, .no_type_url = true, .names = &a, .nnames = 1};
	struct pu_resp *r;

	pu_send(cl, &q);
	r = pu_expect(cl, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule T3: on a per-type method another type's URL, or an unknown one, ends
 * the stream with INVALID_ARGUMENT and a message naming it; only that
 * stream. */
START_TEST(t3_per_type_rejects_other_types)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type, other = (enum pu_type)((t + 1) % PU_NTYPES);
	struct pu_snap *s = pu_snap_of(t, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c), *ok;
	struct pu_req q = {.type = other};
	const char *a = pu_name(t, "a");
	struct pu_resp *r;

	ok = pu_connect(e, c);
	pu_sub(ok, t, a, NULL);
	r = pu_expect(ok, t);
	pu_ack(ok, r);
	pu_resp_free(r);
	pu_send(cl, &q);
	pu_expect_status(cl, GRPC_STATUS_INVALID_ARGUMENT, pu_type_url(other));
	pu_client_free(cl);
	cl = pu_connect(e, c);
	q.type_url = "type.googleapis.com/envoy.config.nothing.v3.Nothing";
	pu_send(cl, &q);
	pu_expect_status(cl, GRPC_STATUS_INVALID_ARGUMENT,
			 "envoy.config.nothing.v3.Nothing");
	pu_client_free(cl);
	/* the other stream is undisturbed */
	pu_snap_put(s, t, a, 2, NULL);
	pu_env_set(e, s);
	pu_resp_free(pu_expect(ok, t));
	pu_client_free(ok);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule T3: on the aggregated methods the type URL is required. */
START_TEST(t3_ads_requires_type_url)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(PU_CDS, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_req q = {.type = PU_CDS, .no_type_url = true};

	pu_send(cl, &q);
	pu_expect_status(cl, GRPC_STATUS_INVALID_ARGUMENT, "type_url");
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule T3: on the aggregated methods an unknown type URL gets a clear answer
 * that disturbs no other type on the stream (a status would end them
 * all): an empty response of that type (SotW), or each name reported as
 * not existing (delta), once; the log names the type.
 */
START_TEST(t3_ads_unknown_type_answered)
{
	const struct pu_combo *c = pu_combo(_i);
	static const char *const url = "type.googleapis.com/envoy.config.nothing.v3.Nothing";
	const char *names[] = {"p", "q"};
	struct pu_snap *s = pu_snap_of(PU_CDS, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *cl = pu_connect(e, c);
	struct pu_req q = {.type_url = url, .names = names, .nnames = 2};
	struct pu_resp *r;

	pu_sub(cl, PU_CDS, "a", NULL);
	r = pu_expect(cl, PU_CDS);
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_send(cl, &q);
	r = pu_recv(cl, pu_wait_ms());
	PU_ASSERT(r != NULL, "no answer to an unknown type");
	PU_ASSERT(r->type == -1 && strcmp(r->type_url, url) == 0, "type_url '%s'",
		  r->type_url);
	if (c->delta) /* said not to exist (rule D8) */
		PU_ASSERT(r->nres == 0 && strcmp(pu_removed(r), "p,q") == 0,
			  "resources [%s] removed [%s]", pu_names(r), pu_removed(r));
	else
		PU_ASSERT(r->nres == 0, "%zu resources", r->nres);
	/* rule S3 holds for it too: a version and a nonce */
	PU_ASSERT(r->nonce != NULL && r->nonce[0] != '\0', "no nonce");
	if (!c->delta)
		PU_ASSERT(r->version != NULL && r->version[0] != '\0', "no version_info");
	pu_ack(cl, r);
	pu_resp_free(r);
	PU_ASSERT(xdt_daemon_wait_log(e->d, "envoy.config.nothing.v3.Nothing", pu_wait_ms()),
		  "the unknown type is not in the log");
	/* clusters keep flowing */
	pu_snap_put(s, PU_CDS, "a", 2, NULL);
	pu_env_set(e, s);
	r = pu_expect(cl, PU_CDS);
	PU_ASSERT_NAMES(r, PU_CDS, "a");
	pu_resp_free(r);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule L2 ---------------- */

/*
 * rule L2: SotW resources are wrapped in envoy.service.discovery.v3.Resource
 * (name, version = hash of the resource, the resource in an Any) for a
 * node announcing xds.config.supports-resource-in-sotw, and only then.
 */
START_TEST(l2_wrapped_only_for_the_feature)
{
	const struct pu_combo *c = pu_combo(_i);
	enum pu_type t = c->type;
	const char *a = pu_name(t, "a"), *b = pu_name(t, "b");
	struct pu_snap *s = pu_snap_of(t, "a", "b", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *plain = pu_connect(e, c), *wrap = pu_connect(e, c);
	struct pu_resp *r;

	pu_client_node(wrap, "node-w", "test", FEATURE);
	pu_sub(wrap, t, a, b, NULL);
	pu_sub(plain, t, a, b, NULL);
	r = pu_expect(wrap, t);
	PU_ASSERT_NAMES(r, t, "a", "b");
	for (size_t i = 0; i < r->nres; i++) {
		const struct pu_res *x = &r->res[i];
		char want[17];

		PU_ASSERT(x->wrapped, "'%s' not wrapped for a node with the feature",
			  x->name);
		PU_ASSERT(strcmp(x->url, pu_type_url(t)) == 0, "wrapped Any of '%s'",
			  x->url);
		pu_hash_hex(x->body, x->len, want);
		PU_ASSERT(strcmp(x->version, want) == 0, "Resource.version '%s', expected '%s'",
			  x->version, want);
	}
	pu_resp_free(r);
	r = pu_expect(plain, t);
	PU_ASSERT_NAMES(r, t, "a", "b");
	for (size_t i = 0; i < r->nres; i++)
		PU_ASSERT(!r->res[i].wrapped && strcmp(r->res[i].url, pu_type_url(t)) == 0,
			  "'%s' wrapped for a node without the feature", r->res[i].name);
	pu_resp_free(r);
	pu_client_free(plain);
	pu_client_free(wrap);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_types(Suite *s, bool subset)
{
	(void)subset;
	sotw_all = pu_combos(false, PU_ALL_TYPES, &nsotw_all);
	delta_all = pu_combos(true, PU_ALL_TYPES, &ndelta_all);
	for (size_t i = 0; i < nsotw_all; i++)
		if (!sotw_all[i].ads)
			per_type[nper_type++] = sotw_all[i];
	for (size_t i = 0; i < ndelta_all; i++)
		if (!delta_all[i].ads)
			per_type[nper_type++] = delta_all[i];

	pu_add_tests(s, "T1", t1_type_url, sotw_all, nsotw_all);
	pu_add_tests(s, "T1", t1_type_url, delta_all, ndelta_all);
	pu_add_tests(s, "T2", t2_method_serves_its_type, per_type, nper_type);
	pu_add_test(s, "T2", t2_no_sotw_vhds);
	pu_add_tests(s, "T3", t3_per_type_implies_type, per_type, nper_type);
	pu_add_tests(s, "T3", t3_per_type_rejects_other_types, per_type, nper_type);
	pu_add_tests(s, "T3", t3_ads_requires_type_url, ads_combos, 2);
	pu_add_tests(s, "T3", t3_ads_unknown_type_answered, ads_combos, 2);
	pu_add_tests(s, "L2", l2_wrapped_only_for_the_feature, sotw_all, nsotw_all);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("types");

	xdtest_tmpdir();
	pu_register_types(s, false);
	return pu_run(s);
}
#endif
