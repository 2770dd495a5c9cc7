/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who a client is (protocol/client.c), without sockets: admission of
 * its node (size limits, a well-formed Node, one node per stream, the
 * authorize: rules on its identity), the response form its capabilities
 * and method give, the key of the snapshot that serves it, and what
 * operators see of it. gRPC streams and REST-JSON polls both ask these.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "envoy/config/core/v3/base.pb-c.h"
#include "protocol/client.h"
#include "xdtest.h"

#define WRAPPED "xds.config.supports-resource-in-sotw"
#define WRAPPED_GRPC "xds.config.resource-in-sotw"
#define TTL "xds.config.supports-resource-ttl"

static struct xd_config cfg;
static struct xd_authz_rule rule = {
	(char *)"spiffe://example.org/ns/prod/sa/*", (char *)"*",
	(char *)"prod-*"};

static void setup(void)
{
	xd_config_init(&cfg, "/nonexistent", "/nonexistent");
	cfg.max_node_size = 512;
	cfg.max_node_id_size = 16;
}

static void teardown(void)
{
	cfg.authorize = NULL; /* static: not the config's to free */
	cfg.nauthorize = 0;
	xd_config_free(&cfg);
}

/* An encoded Node with these fields and client features (NULL-ended). */
struct packed {
	uint8_t data[2048];
	size_t len;
};

static struct xd_span node(struct packed *p, const char *id,
			   const char *cluster, const char *const *features)
{
	Envoy__Config__Core__V3__Node n = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Config__Core__V3__Locality loc =
		ENVOY__CONFIG__CORE__V3__LOCALITY__INIT;

	n.id = (char *)id;
	n.cluster = (char *)cluster;
	loc.region = "eu-west";
	loc.zone = "eu-west-1a";
	n.locality = &loc;
	n.user_agent_name = "envoy";
	while (features != NULL && features[n.n_client_features] != NULL)
		n.n_client_features++;
	n.client_features = (char **)features;
	ck_assert_uint_le(envoy__config__core__v3__node__get_packed_size(&n),
			  sizeof(p->data));
	p->len = envoy__config__core__v3__node__pack(&n, p->data);
	return (struct xd_span){p->data, (uint32_t)p->len};
}

static enum xd_client_verdict admit_as(struct xd_client *c, bool delta,
				       const char *identity, struct xd_span n,
				       char *why, size_t why_len)
{
	xd_client_init(c, &cfg, delta, "ipv4:10.0.0.7:51234", identity, 1000);
	why[0] = '\0';
	return xd_client_admit(c, n, why, why_len);
}

/* The verdict on a SotW client's first request with node (`id`,
 * `cluster`), the client cleared again; the reason in `why` (512
 * bytes). */
static enum xd_client_verdict first(const char *identity, const char *id,
				    const char *cluster, char *why)
{
	struct xd_client c;
	struct packed p;
	enum xd_client_verdict v =
		admit_as(&c, false, identity, node(&p, id, cluster, NULL), why,
			 512);

	xd_client_clear(&c);
	return v;
}

START_TEST(a_node_over_max_node_size_is_refused)
{
	static char big[600];
	struct xd_client c;
	struct packed p;
	char why[512];

	memset(big, 'z', sizeof(big) - 1);
	ck_assert_int_eq(admit_as(&c, false, NULL,
				  node(&p, "web-1", big, NULL), why, sizeof(why)),
			 XD_CLIENT_OVER_LIMIT);
	ck_assert_msg(strstr(why, "(max_node_size)") != NULL, "%s", why);
	ck_assert_int_eq(c.state, XD_CLIENT_REFUSED);
	xd_client_clear(&c);
}
END_TEST

START_TEST(a_node_id_over_max_node_id_size_is_refused)
{
	char why[512];

	ck_assert_int_eq(first(NULL, "a-node-id-of-26-characters", "web", why),
			 XD_CLIENT_OVER_LIMIT);
	ck_assert_str_eq(why, "the node id is 26 bytes; the limit is 16 (max_node_id_size)");
	ck_assert_int_eq(first(NULL, "web-1", "a-cluster-name-of-26-chars", why),
			 XD_CLIENT_OVER_LIMIT);
	ck_assert_msg(strstr(why, "the node cluster is 26 bytes") != NULL, "%s",
		      why);
	/* at the limit is fine */
	ck_assert_int_eq(first(NULL, "sixteen-bytes-id", "web", why),
			 XD_CLIENT_ADMIT);
}
END_TEST

/* A node whose id says 16 bytes follow, and 3 do. */
static const uint8_t truncated[] = {0x0a, 0x10, 'w', 'e', 'b'};

START_TEST(a_malformed_node_is_refused)
{
	struct xd_client c;
	char why[512];

	ck_assert_int_eq(admit_as(&c, false, NULL,
				  (struct xd_span){truncated, sizeof(truncated)},
				  why, sizeof(why)),
			 XD_CLIENT_MALFORMED);
	ck_assert_str_eq(why, "malformed node");
	ck_assert_int_eq(c.state, XD_CLIENT_REFUSED);
	xd_client_clear(&c);
}
END_TEST

START_TEST(authorize_rules_refuse_identities_that_may_not_speak)
{
	struct xd_client c;
	struct packed p;
	char why[512];

	cfg.authorize = &rule;
	cfg.nauthorize = 1;
	ck_assert_int_eq(first("spiffe://example.org/ns/prod/sa/frontend",
			       "web-1", "prod-web", why),
			 XD_CLIENT_ADMIT);
	/* the identity matches, the cluster does not */
	ck_assert_int_eq(admit_as(&c, false,
				  "spiffe://example.org/ns/prod/sa/frontend",
				  node(&p, "web-1", "dev-web", NULL), why,
				  sizeof(why)),
			 XD_CLIENT_FORBIDDEN);
	ck_assert_str_eq(why, "identity 'spiffe://example.org/ns/prod/sa/frontend' may not speak for node id 'web-1' cluster 'dev-web'");
	ck_assert_int_eq(c.state, XD_CLIENT_REFUSED);
	/* the refusal's log line names the node */
	ck_assert_str_eq(c.node_cluster, "dev-web");
	xd_client_clear(&c);
	/* another namespace's identity */
	ck_assert_int_eq(first("spiffe://example.org/ns/dev/sa/frontend",
			       "web-1", "prod-web", why),
			 XD_CLIENT_FORBIDDEN);
	/* no identity at all (plaintext, REST-JSON) */
	ck_assert_int_eq(first(NULL, "web-1", "prod-web", why),
			 XD_CLIENT_FORBIDDEN);
	ck_assert_msg(strstr(why, "no identity may not speak for node id 'web-1' cluster 'prod-web'") != NULL,
		      "%s", why);
	/* without rules, anyone may speak for any node */
	cfg.nauthorize = 0;
	ck_assert_int_eq(first(NULL, "web-1", "prod-web", why), XD_CLIENT_ADMIT);
}
END_TEST

/* Rule S1: the node of the first request names the stream's client. */
START_TEST(later_requests_keep_the_first_node)
{
	static const char *const ttl[] = {TTL, NULL};
	struct xd_client c;
	struct packed p;
	char why[512];

	ck_assert_int_eq(admit_as(&c, false, NULL,
				  node(&p, "web-1", "web", NULL), why,
				  sizeof(why)),
			 XD_CLIENT_ADMIT);
	/* without a node, or with the same one (its capabilities are the
	 * first request's) */
	ck_assert_int_eq(xd_client_admit(&c, (struct xd_span){NULL, 0}, why,
					 sizeof(why)),
			 XD_CLIENT_SAME);
	ck_assert_int_eq(xd_client_admit(&c, node(&p, "web-1", "web", ttl), why,
					 sizeof(why)),
			 XD_CLIENT_SAME);
	ck_assert(!c.ttl);
	ck_assert_int_eq(xd_client_admit(&c, node(&p, "web-2", "web", NULL),
					 why, sizeof(why)),
			 XD_CLIENT_CHANGED);
	ck_assert_str_eq(why, "the node changed on the stream");
	ck_assert_int_eq(xd_client_admit(&c, node(&p, "web-1", "api", NULL),
					 why, sizeof(why)),
			 XD_CLIENT_CHANGED);
	/* the limits hold for every request's node */
	ck_assert_int_eq(xd_client_admit(&c,
					 node(&p, "a-node-id-of-26-characters",
					      "web", NULL),
					 why, sizeof(why)),
			 XD_CLIENT_OVER_LIMIT);
	ck_assert_str_eq(c.node_id, "web-1");
	xd_client_clear(&c);
}
END_TEST

/* The form of every response, for each method and capability. */
START_TEST(form_follows_method_and_capabilities)
{
	static const char *const none[] = {NULL};
	static const char *const wrapped[] = {WRAPPED, NULL};
	static const char *const wrapped_grpc[] = {WRAPPED_GRPC, NULL};
	static const char *const ttl[] = {TTL, NULL};
	static const char *const both[] = {TTL, WRAPPED, NULL};
	static const struct {
		bool delta;
		const char *const *features;
		enum xd_form want;
	} cases[] = {
		{false, none, XD_FORM_SOTW},
		{false, wrapped, XD_FORM_SOTW_WRAPPED},
		{false, wrapped_grpc, XD_FORM_SOTW_WRAPPED},
		/* TTLs go in Resource: a bare SotW client gets none */
		{false, ttl, XD_FORM_SOTW},
		{false, both, XD_FORM_SOTW_TTL},
		{true, none, XD_FORM_DELTA},
		{true, wrapped, XD_FORM_DELTA},
		{true, ttl, XD_FORM_DELTA_TTL},
		{true, both, XD_FORM_DELTA_TTL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xd_client c;
		struct packed p;
		char why[512];

		ck_assert_int_eq(admit_as(&c, cases[i].delta, NULL,
					  node(&p, "n", "c", cases[i].features),
					  why, sizeof(why)),
				 XD_CLIENT_ADMIT);
		ck_assert_msg(xd_client_form(&c) == cases[i].want,
			      "case %zu: form %d, want %d", i,
			      (int)xd_client_form(&c), (int)cases[i].want);
		xd_client_clear(&c);
	}
}
END_TEST

/* node_key picks the field; an empty one is the default snapshot's. */
START_TEST(key_follows_node_key)
{
	static const struct {
		enum xd_node_key by;
		bool has_node;
		const char *key, *unserved;
	} cases[] = {
		{XD_NODE_KEY_CLUSTER, true, "web",
		 "no snapshot serves node cluster 'web': xdsd has no snapshot 'web' and no default snapshot"},
		{XD_NODE_KEY_ID, true, "web-1",
		 "no snapshot serves node id 'web-1': xdsd has no snapshot 'web-1' and no default snapshot"},
		/* a first request without a node: the default snapshot */
		{XD_NODE_KEY_ID, false, XD_CACHE_DEFAULT_KEY,
		 "no snapshot serves node id '': xdsd has no snapshot 'default' and no default snapshot"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xd_client c;
		struct packed p;
		char why[512], msg[512];

		cfg.node_key = cases[i].by;
		ck_assert_int_eq(admit_as(&c, false, NULL,
					  cases[i].has_node ?
						  node(&p, "web-1", "web", NULL) :
						  (struct xd_span){NULL, 0},
					  why, sizeof(why)),
				 XD_CLIENT_ADMIT);
		ck_assert_str_eq(xd_client_key(&c), cases[i].key);
		xd_client_unserved(&c, msg, sizeof(msg));
		ck_assert_str_eq(msg, cases[i].unserved);
		xd_client_clear(&c);
	}
}
END_TEST

/* What operators see: before the node, and after. */
START_TEST(view_shows_the_client)
{
	struct xd_client c;
	struct xd_client_view v;
	struct packed p;
	char why[512];

	xd_client_init(&c, &cfg, false, "ipv4:10.0.0.7:51234", "envoy-cn", 1234);
	xd_client_view(&c, &v);
	ck_assert(!v.has_node);
	ck_assert_str_eq(v.node_id, "");
	ck_assert_str_eq(v.node_cluster, "");
	ck_assert_str_eq(v.peer, "ipv4:10.0.0.7:51234");
	ck_assert_str_eq(v.identity, "envoy-cn");
	ck_assert_int_eq(v.since_ms, 1234);
	ck_assert_uint_eq(v.ntypes, 0);
	ck_assert_int_eq(xd_client_admit(&c, node(&p, "web-1", "web", NULL), why,
					 sizeof(why)),
			 XD_CLIENT_ADMIT);
	xd_client_view(&c, &v);
	ck_assert(v.has_node);
	ck_assert_str_eq(v.node_id, "web-1");
	ck_assert_str_eq(v.node_cluster, "web");
	ck_assert_str_eq(v.region, "eu-west");
	ck_assert_str_eq(v.zone, "eu-west-1a");
	ck_assert_str_eq(v.sub_zone, "");
	ck_assert_str_eq(v.user_agent_name, "envoy");
	ck_assert_str_eq(v.user_agent_version, "");
	xd_client_clear(&c);
}
END_TEST

/* Contracts (client.h's states): a refused client is not asked again,
 * and an unadmitted one has no key; breaking either aborts. */
START_TEST(a_refused_client_is_not_admitted_again)
{
	struct xd_client c;
	char why[512];

	ck_assert_int_eq(admit_as(&c, false, NULL,
				  (struct xd_span){truncated, 2}, why,
				  sizeof(why)),
			 XD_CLIENT_MALFORMED);
	xd_client_admit(&c, (struct xd_span){NULL, 0}, why, sizeof(why));
}
END_TEST

START_TEST(an_unadmitted_client_has_no_key)
{
	struct xd_client c;

	xd_client_init(&c, &cfg, false, "ipv4:10.0.0.7:51234", NULL, 0);
	(void)xd_client_key(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("client");
	TCase *adm = tcase_create("admission"), *cap = tcase_create("form"),
	      *key = tcase_create("key");

	tcase_add_checked_fixture(adm, setup, teardown);
	tcase_add_checked_fixture(cap, setup, teardown);
	tcase_add_checked_fixture(key, setup, teardown);
	tcase_add_test(adm, a_node_over_max_node_size_is_refused);
	tcase_add_test(adm, a_node_id_over_max_node_id_size_is_refused);
	tcase_add_test(adm, a_malformed_node_is_refused);
	tcase_add_test(adm, authorize_rules_refuse_identities_that_may_not_speak);
	tcase_add_test(adm, later_requests_keep_the_first_node);
	tcase_add_test(cap, form_follows_method_and_capabilities);
	tcase_add_test(key, key_follows_node_key);
	tcase_add_test(key, view_shows_the_client);
	tcase_add_test_raise_signal(adm, a_refused_client_is_not_admitted_again,
				    SIGABRT);
	tcase_add_test_raise_signal(key, an_unadmitted_client_has_no_key,
				    SIGABRT);
	suite_add_tcase(s, adm);
	suite_add_tcase(s, cap);
	suite_add_tcase(s, key);
	return xdtest_run(s);
}
