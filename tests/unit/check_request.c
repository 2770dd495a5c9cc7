/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading what peers send (protocol/node.c, protocol/request.c) without
 * sockets: the fields xdsd uses come out right, what it does not use is
 * never descended into, and malformed input is refused with a reason.
 */
#include <stdlib.h>
#include <string.h>

#include "envoy/config/core/v3/base.pb-c.h"
#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "google/protobuf/struct.pb-c.h"
#include "hostile.h"
#include "protocol/node.h"
#include "protocol/request.h"
#include "xdtest.h"

static bool is(struct xd_name n, const char *s)
{
	return n.len == strlen(s) && memcmp(n.data, s, n.len) == 0;
}

/* A Node as protobuf-c packs it: every field xdsd reads comes out. */
START_TEST(node_reads_its_fields)
{
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Config__Core__V3__Locality loc =
		ENVOY__CONFIG__CORE__V3__LOCALITY__INIT;
	Google__Protobuf__Struct md = GOOGLE__PROTOBUF__STRUCT__INIT;
	char *features[] = {"envoy.lb.does_not_support_overprovisioning",
			    "xds.config.supports-resource-in-sotw",
			    "xds.config.supports-resource-ttl"};
	struct xd_node n;
	const char *why = NULL;
	uint8_t buf[1024];
	size_t len;

	node.id = "sidecar~10.0.0.1~pod.ns~ns.svc.cluster.local";
	node.cluster = "frontend";
	loc.region = "eu-west";
	loc.zone = "eu-west-1a";
	loc.sub_zone = "rack7";
	node.locality = &loc;
	node.metadata = &md;
	node.user_agent_name = "envoy";
	node.user_agent_version_type_case =
		ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_VERSION;
	node.user_agent_version = "1.31.0";
	node.n_client_features = 3;
	node.client_features = features;
	len = envoy__config__core__v3__node__pack(&node, buf);
	ck_assert_uint_lt(len, sizeof(buf));

	ck_assert_int_eq(xd_node_parse(&n, buf, len, &why), 0);
	ck_assert(is(n.id, node.id));
	ck_assert(is(n.cluster, "frontend"));
	ck_assert(is(n.region, "eu-west"));
	ck_assert(is(n.zone, "eu-west-1a"));
	ck_assert(is(n.sub_zone, "rack7"));
	ck_assert(is(n.user_agent_name, "envoy"));
	ck_assert(is(n.user_agent_version, "1.31.0"));
	ck_assert_uint_eq(n.nfeatures, 3);
	ck_assert_uint_eq(n.features,
			  XD_FEATURE_RESOURCE_IN_SOTW | XD_FEATURE_RESOURCE_TTL);
}
END_TEST

/* gRPC's clients name the wrapped-resources feature their own way. */
START_TEST(node_grpc_feature_name)
{
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	char *features[] = {"envoy.lb.does_not_support_overprovisioning",
			    "xds.config.resource-in-sotw"};
	struct xd_node n;
	const char *why = NULL;
	uint8_t buf[256];
	size_t len;

	node.id = "grpc-client";
	node.n_client_features = 2;
	node.client_features = features;
	len = envoy__config__core__v3__node__pack(&node, buf);
	ck_assert_int_eq(xd_node_parse(&n, buf, len, &why), 0);
	ck_assert_uint_eq(n.features, XD_FEATURE_RESOURCE_IN_SOTW);
}
END_TEST

/*
 * No node at all (a client that sends none): empty id and cluster. The
 * session passes (NULL, 0), and the reader once added 0 to NULL, which
 * is undefined (fuzz_request found it; clang's UBSan reports it, gcc's
 * does not).
 */
START_TEST(node_empty)
{
	struct xd_node n;
	const char *why = NULL;

	ck_assert_int_eq(xd_node_parse(&n, NULL, 0, &why), 0);
	ck_assert(is(n.id, "") && is(n.cluster, ""));
	ck_assert_uint_eq(n.features, 0);
}
END_TEST

/*
 * Metadata 100,000 levels deep (1.3 MB): a recursive decoder runs out
 * of stack on a few thousand; this reader skips metadata in one step.
 */
START_TEST(node_deep_metadata_is_skipped)
{
	size_t len;
	uint8_t *msg = xdt_deep_node("node-1", "prod", 100000, &len);
	struct xd_node n;
	const char *why = NULL;

	ck_assert_uint_gt(len, 1000000);
	ck_assert_int_eq(xd_node_parse(&n, msg, len, &why), 0);
	ck_assert(is(n.id, "node-1") && is(n.cluster, "prod"));
	free(msg);
}
END_TEST

static void refused(const uint8_t *msg, size_t len, const char *reason)
{
	struct xd_node n;
	const char *why = NULL;

	ck_assert_int_eq(xd_node_parse(&n, msg, len, &why), -1);
	ck_assert_msg(why != NULL && strstr(why, reason) != NULL,
		      "reason '%s', expected '%s'", why ? why : "(none)", reason);
}

/* Envoy says its version with user_agent_build_version (a BuildVersion
 * holding a SemanticVersion), not with the string user_agent_version. */
START_TEST(node_reads_build_version)
{
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Config__Core__V3__BuildVersion build =
		ENVOY__CONFIG__CORE__V3__BUILD_VERSION__INIT;
	Envoy__Type__V3__SemanticVersion semver =
		ENVOY__TYPE__V3__SEMANTIC_VERSION__INIT;
	Google__Protobuf__Struct md = GOOGLE__PROTOBUF__STRUCT__INIT;
	struct xd_node n;
	const char *why = NULL;
	uint8_t buf[256];
	size_t len;

	node.id = "edge-1";
	node.user_agent_name = "envoy";
	semver.major_number = 1;
	semver.minor_number = 40;
	semver.patch = 2;
	build.version = &semver;
	build.metadata = &md;
	node.user_agent_version_type_case =
		ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_BUILD_VERSION;
	node.user_agent_build_version = &build;
	len = envoy__config__core__v3__node__pack(&node, buf);
	ck_assert_uint_lt(len, sizeof(buf));

	ck_assert_int_eq(xd_node_parse(&n, buf, len, &why), 0);
	ck_assert(is(n.user_agent_name, "envoy"));
	ck_assert_uint_eq(n.user_agent_version.len, 0);
	ck_assert(n.has_build_version);
	ck_assert_uint_eq(n.build_version.major, 1);
	ck_assert_uint_eq(n.build_version.minor, 40);
	ck_assert_uint_eq(n.build_version.patch, 2);

	/* a string version: no build version */
	node.user_agent_version_type_case =
		ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_VERSION;
	node.user_agent_version = "1.31.0";
	len = envoy__config__core__v3__node__pack(&node, buf);
	ck_assert_int_eq(xd_node_parse(&n, buf, len, &why), 0);
	ck_assert(!n.has_build_version);
	ck_assert(is(n.user_agent_version, "1.31.0"));
}
END_TEST

START_TEST(node_malformed_refused)
{
	/* id (1) whose length runs past the end */
	static const uint8_t truncated[] = {0x0a, 0x05, 'a', 'b'};
	/* locality (4) holding an unterminated varint */
	static const uint8_t bad_locality[] = {0x22, 0x02, 0x08, 0xff};
	/* a NUL inside the id and inside the cluster */
	static const uint8_t nul_id[] = {0x0a, 0x03, 'a', 0, 'b'};
	static const uint8_t nul_cluster[] = {0x12, 0x01, 0};
	/* field 0 */
	static const uint8_t field_zero[] = {0x02, 0x00};
	/* user_agent_build_version (8) whose version (1) is cut short */
	static const uint8_t bad_build[] = {0x42, 0x04, 0x0a, 0x02, 0x08, 0xff};

	refused(truncated, sizeof(truncated), "malformed node");
	refused(bad_locality, sizeof(bad_locality), "malformed node locality");
	refused(nul_id, sizeof(nul_id), "NUL");
	refused(nul_cluster, sizeof(nul_cluster), "NUL");
	refused(field_zero, sizeof(field_zero), "malformed node");
	refused(bad_build, sizeof(bad_build), "malformed node user_agent_build_version");
}
END_TEST

/*
 * A request's node comes back as the bytes to read; error_detail is
 * read for its code and message only (its details, Any messages of any
 * depth, are not descended into); initial_resource_versions pair up.
 */
START_TEST(request_fields)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest q =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	Google__Rpc__Status status = GOOGLE__RPC__STATUS__INIT;
	Google__Protobuf__Any detail = GOOGLE__PROTOBUF__ANY__INIT, *details[] = {&detail};
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest__InitialResourceVersionsEntry
		e1 = ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INITIAL_RESOURCE_VERSIONS_ENTRY__INIT,
		e2 = e1, *entries[] = {&e1, &e2};
	char *subs[] = {"a", "b"}, *unsubs[] = {"c"};
	size_t deep_len, len;
	uint8_t *deep = xdt_deep_node("x", "y", 20000, &deep_len);
	uint8_t *buf = malloc(deep_len + 1024);
	struct xd_request r;
	const char *why = NULL;

	ck_assert(buf != NULL);
	q.type_url = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
	q.n_resource_names_subscribe = 2;
	q.resource_names_subscribe = subs;
	q.n_resource_names_unsubscribe = 1;
	q.resource_names_unsubscribe = unsubs;
	e1.key = "a";
	e1.value = "v1";
	e2.key = "b";
	e2.value = "v2";
	q.n_initial_resource_versions = 2;
	q.initial_resource_versions = entries;
	q.response_nonce = "7";
	status.code = 3;
	status.message = "bad cluster";
	detail.type_url = "type.googleapis.com/google.protobuf.Struct";
	detail.value.data = deep; /* bytes: never parsed */
	detail.value.len = deep_len;
	status.n_details = 1;
	status.details = details;
	q.error_detail = &status;
	len = envoy__service__discovery__v3__delta_discovery_request__pack(&q, buf);

	ck_assert_int_eq(xd_request_parse(&r, buf, len, true, &why), 0);
	ck_assert(is(r.type_url, q.type_url));
	ck_assert(is(r.nonce, "7"));
	ck_assert(r.has_error);
	ck_assert_int_eq(r.error_code, 3);
	ck_assert(is(r.error_message, "bad cluster"));
	ck_assert_uint_eq(r.nnames, 2);
	ck_assert(is(r.names[0], "a") && is(r.names[1], "b"));
	ck_assert_uint_eq(r.nunsubscribe, 1);
	ck_assert(is(r.unsubscribe[0], "c"));
	ck_assert_uint_eq(r.ninitial, 2);
	ck_assert(is(r.initial_names[1], "b") && is(r.initial_versions[1], "v2"));
	ck_assert_uint_eq(r.node.len, 0);
	xd_request_free(&r);
	free(buf);
	free(deep);
}
END_TEST

/* An empty message, as (NULL, 0): a request with nothing in it, with
 * no arithmetic on NULL (see node_empty). _i: 0 SotW, 1 delta. */
START_TEST(request_empty)
{
	struct xd_request r;
	const char *why = NULL;

	ck_assert_int_eq(xd_request_parse(&r, NULL, 0, _i == 1, &why), 0);
	ck_assert_uint_eq(r.type_url.len, 0);
	ck_assert_uint_eq(r.nonce.len, 0);
	ck_assert_uint_eq(r.node.len, 0);
	ck_assert(!r.has_error);
	ck_assert_uint_eq(r.nnames + r.nunsubscribe + r.ninitial, 0);
	xd_request_free(&r);
}
END_TEST

/* A type URL with a NUL byte is refused: it is kept and logged as text. */
START_TEST(request_type_url_with_nul)
{
	static const uint8_t sotw[] = {0x22, 0x03, 'a', 0, 'b'};
	static const uint8_t delta[] = {0x12, 0x03, 'a', 0, 'b'};
	struct xd_request r;
	const char *why = NULL;

	ck_assert_int_eq(xd_request_parse(&r, _i ? delta : sotw, sizeof(sotw),
					  _i == 1, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "NUL"));
}
END_TEST

/* A plain name holding 0x1f, the byte of locator keys (rule P1), is
 * refused wherever a name goes: it would be taken for a key. _i: 0 a
 * SotW name, 1 a delta subscription, 2 an unsubscription, 3 a name in
 * initial_resource_versions. */
START_TEST(request_name_with_locator_separator)
{
	static const uint8_t name[] = {0x1a, 0x03, 'a', 0x1f, 'b'};
	static const uint8_t unsub[] = {0x22, 0x03, 'a', 0x1f, 'b'};
	static const uint8_t initial[] = {0x2a, 0x07, 0x0a, 0x03, 'a', 0x1f,
					  'b', 0x12, 0x00};
	const uint8_t *in = _i == 2 ? unsub : _i == 3 ? initial : name;
	size_t len = _i == 2 ? sizeof(unsub) : _i == 3 ? sizeof(initial) :
		     sizeof(name);
	struct xd_request r;
	const char *why = NULL;

	ck_assert_int_eq(xd_request_parse(&r, in, len, _i > 0, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "0x1f"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("request");
	TCase *node = tcase_create("node"), *req = tcase_create("request");

	tcase_add_test(node, node_reads_its_fields);
	tcase_add_test(node, node_grpc_feature_name);
	tcase_add_test(node, node_empty);
	tcase_add_test(node, node_deep_metadata_is_skipped);
	tcase_add_test(node, node_reads_build_version);
	tcase_add_test(node, node_malformed_refused);
	suite_add_tcase(s, node);
	tcase_add_test(req, request_fields);
	tcase_add_loop_test(req, request_empty, 0, 2);
	tcase_add_loop_test(req, request_type_url_with_nul, 0, 2);
	tcase_add_loop_test(req, request_name_with_locator_separator, 0, 4);
	suite_add_tcase(s, req);
	return xdtest_run(s);
}
