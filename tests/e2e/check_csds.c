/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client status service (xdsd(8), CLIENT STATUS SERVICE) against
 * the real daemon: real xDS clients on loopback (one ACKs everything,
 * one NACKs endpoints, SotW and delta ones that NACK a reloaded
 * snapshot after ACKing the first), and gRPC's own Python client calling
 * FetchClientStatus and StreamClientStatus (tests/e2e/csds-client.py),
 * whose answers protobuf's Python runtime decodes with the build's
 * descriptors. Who may call it is tried over mTLS from an address that
 * is not loopback.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <jansson.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 20000
#define STOP_MS 5000
#define WAIT_MS 5000
#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"
#define EDS_URL "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
#define SDS_URL "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
#define NACK_TEXT "endpoints rejected: \"port 1 is reserved\"\nsecond line"
#define SECRET_TEXT "hunter2-s3cr3t"

static char *snapshots(void)
{
	char *dir = xdtest_snapdir();

	xdtest_write_svc_snapshot(dir, 8080,
		"secrets:\n"
		"- name: token\n"
		"  '@allow': ['@anyone']\n"
		"  generic_secret: {secret: {inline_string: " SECRET_TEXT "}}\n");
	return dir;
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* ---------------- xDS clients ---------------- */

struct client {
	struct xdc_conn *conn;
	struct xdc_stream *s;
	const char *id;
	char *cds_version, *eds_version, *sds_version;
};

static void request(struct client *c, const char *url, char **names,
		    size_t nnames, const char *version, const char *nonce,
		    const char *nack)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Config__Core__V3__Locality loc =
		ENVOY__CONFIG__CORE__V3__LOCALITY__INIT;
	Google__Rpc__Status err = GOOGLE__RPC__STATUS__INIT;
	Envoy__Config__Core__V3__BuildVersion build =
		ENVOY__CONFIG__CORE__V3__BUILD_VERSION__INIT;
	Envoy__Type__V3__SemanticVersion semver =
		ENVOY__TYPE__V3__SEMANTIC_VERSION__INIT;

	node.id = (char *)c->id;
	node.cluster = "edge";
	loc.region = "eu-west";
	loc.zone = "eu-west-1a";
	node.locality = &loc;
	node.user_agent_name = "csds-test";
	/* one says its version as Envoy does (a BuildVersion), one as a
	 * string: each is shown the way it came */
	if (strcmp(c->id, "csds-ack") == 0) {
		semver.major_number = 1;
		semver.minor_number = 40;
		build.version = &semver;
		node.user_agent_version_type_case =
			ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_BUILD_VERSION;
		node.user_agent_build_version = &build;
	} else {
		node.user_agent_version_type_case =
			ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_VERSION;
		node.user_agent_version = "9.9-test";
	}
	req.node = &node;
	req.type_url = (char *)url;
	req.resource_names = names;
	req.n_resource_names = nnames;
	req.version_info = (char *)(version ? version : "");
	req.response_nonce = (char *)(nonce ? nonce : "");
	if (nack != NULL) {
		err.code = 3;
		err.message = (char *)nack;
		req.error_detail = &err;
	}
	ck_assert(xdc_send_sotw(c->s, &req, WAIT_MS));
}

/* Receives one response of `url` and answers it (ACK, or NACK with
 * `nack`); returns its version (malloc'd). */
static char *answer(struct client *c, const char *url, char **names,
		    size_t nnames, const char *nack)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(c->s, WAIT_MS);
	char *version;

	ck_assert_msg(r != NULL, "%s: no %s response", c->id, url);
	ck_assert_str_eq(r->type_url, url);
	request(c, url, names, nnames, nack ? "" : r->version_info, r->nonce,
		nack);
	version = strdup(r->version_info);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	return version;
}

/* Clusters by wildcard, the secret "token", then endpoints "svc" and
 * "ghost" (which no snapshot has): ACKed, or NACKed with NACK_TEXT. */
static void client_open(struct client *c, const char *target, const char *id,
			bool nack_endpoints)
{
	char *secret[] = {"token"}, *eds[] = {"svc", "ghost"};

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->conn = xdc_connect(target);
	c->s = xdc_open(c->conn, XDC_ADS);
	request(c, CDS_URL, NULL, 0, NULL, NULL, NULL);
	c->cds_version = answer(c, CDS_URL, NULL, 0, NULL);
	request(c, SDS_URL, secret, 1, NULL, NULL, NULL);
	c->sds_version = answer(c, SDS_URL, secret, 1, NULL);
	request(c, EDS_URL, eds, 2, NULL, NULL, NULL);
	c->eds_version = answer(c, EDS_URL, eds, 2,
				nack_endpoints ? NACK_TEXT : NULL);
}

static void client_close(struct client *c)
{
	xdc_stream_free(c->s);
	xdc_conn_free(c->conn);
	free(c->cds_version);
	free(c->eds_version);
	free(c->sds_version);
}

/* ---------------- the CSDS client ---------------- */

/*
 * Runs csds-client.py against `target` with `args` (shell words, already
 * quoted) and returns its JSON document: {"code", "details",
 * "responses", "raw_hex"}.
 */
static json_t *csds(const char *target, const char *args)
{
	char *cmd, *out;
	json_error_t err;
	json_t *j;
	int rc;

	ck_assert(asprintf(&cmd, "'%s' '%s/tests/e2e/csds-client.py' --schema '%s' '%s' %s",
			   xdtest_env("PYTHON3"), xdtest_env("XDSD_SRCDIR"),
			   xdtest_env("XDSD_SCHEMA"), target, args) > 0);
	out = xdtest_command_output(cmd, &rc);
	ck_assert_msg(rc == 0, "%s: exit status %d: %s", cmd, rc, out);
	j = json_loads(out, 0, &err);
	ck_assert_msg(j != NULL, "%s: not JSON (%s): %s", cmd, err.text, out);
	free(out);
	free(cmd);
	return j;
}

static const char *code_of(json_t *doc)
{
	return json_string_value(json_object_get(doc, "code"));
}

static const char *details_of(json_t *doc)
{
	return json_string_value(json_object_get(doc, "details"));
}

static json_t *response(json_t *doc, size_t i)
{
	json_t *r = json_array_get(json_object_get(doc, "responses"), i);

	ck_assert_msg(r != NULL, "no response %zu (code %s: %s)", i,
		      code_of(doc), details_of(doc));
	return r;
}

static size_t nconfigs(json_t *resp)
{
	return json_array_size(json_object_get(resp, "config"));
}

/* The ClientConfig of node `id`, or NULL. */
static json_t *config_of(json_t *resp, const char *id)
{
	json_t *cfgs = json_object_get(resp, "config"), *c;
	size_t i;

	json_array_foreach(cfgs, i, c) {
		const char *nid = json_string_value(
			json_object_get(json_object_get(c, "node"), "id"));

		if (nid != NULL && strcmp(nid, id) == 0)
			return c;
	}
	return NULL;
}

/* The GenericXdsConfig of (`type_url`, `name`) in a ClientConfig. */
static json_t *generic(json_t *cfg, const char *type_url, const char *name)
{
	json_t *all = json_object_get(cfg, "generic_xds_configs"), *g;
	size_t i;

	json_array_foreach(all, i, g) {
		if (strcmp(json_string_value(json_object_get(g, "type_url")),
			   type_url) == 0 &&
		    strcmp(json_string_value(json_object_get(g, "name")), name) == 0)
			return g;
	}
	ck_abort_msg("no %s '%s' in the ClientConfig", type_url, name);
	return NULL;
}

static const char *str(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s != NULL ? s : "";
}

/* Polls FetchClientStatus until node `id` reports `client_status` for
 * the resource (`url`, `name`) (xdsd reads answers asynchronously);
 * returns that answer's document. */
static json_t *wait_status(const char *target, const char *id,
			   const char *url, const char *name,
			   const char *client_status)
{
	for (long long end = xdtest_now_ms() + WAIT_MS;;) {
		json_t *doc = csds(target, "");
		json_t *c = config_of(response(doc, 0), id);
		json_t *g;
		size_t i;

		json_array_foreach(json_object_get(c, "generic_xds_configs"), i, g)
			if (strcmp(str(g, "type_url"), url) == 0 &&
			    strcmp(str(g, "name"), name) == 0 &&
			    strcmp(str(g, "client_status"), client_status) == 0)
				return doc;
		json_decref(doc);
		ck_assert_msg(xdtest_now_ms() < end, "%s never reported %s '%s' %s",
			      id, url, name, client_status);
		xdtest_sleep_ms(50);
	}
}

static void wait_endpoints(const char *target, const char *id,
			   const char *client_status)
{
	json_decref(wait_status(target, id, EDS_URL, "svc", client_status));
}

struct fixture {
	char *dir;
	struct xdt_daemon *d;
	struct client ack, nack;
};

static void fixture_start(struct fixture *f)
{
	char cfg[1024];

	f->dir = snapshots();
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n",
		 f->dir);
	f->d = xdt_daemon_start(cfg, NULL, START_MS);
	client_open(&f->ack, f->d->target, "csds-ack", false);
	client_open(&f->nack, f->d->target, "csds-nack", true);
	wait_endpoints(f->d->target, "csds-ack", "ACKED");
	wait_endpoints(f->d->target, "csds-nack", "NACKED");
}

static void fixture_stop(struct fixture *f)
{
	client_close(&f->ack);
	client_close(&f->nack);
	stop(f->d);
	free(f->dir);
}

/* The whole report of one answer, as both nodes' clients left it. */
static void check_report(json_t *resp, const struct fixture *f)
{
	json_t *a = config_of(resp, "csds-ack"), *n = config_of(resp, "csds-nack");
	json_t *node, *g, *err;

	ck_assert_int_eq(nconfigs(resp), 2);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(n);
	node = json_object_get(a, "node");
	ck_assert_str_eq(str(node, "cluster"), "edge");
	ck_assert_str_eq(str(json_object_get(node, "locality"), "region"), "eu-west");
	ck_assert_str_eq(str(json_object_get(node, "locality"), "zone"), "eu-west-1a");
	ck_assert_str_eq(str(node, "user_agent_name"), "csds-test");
	ck_assert_ptr_null(json_object_get(node, "user_agent_version"));
	g = json_object_get(json_object_get(node, "user_agent_build_version"), "version");
	ck_assert_int_eq(json_integer_value(json_object_get(g, "major_number")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(g, "minor_number")), 40);
	ck_assert_ptr_null(json_object_get(g, "patch"));
	node = json_object_get(n, "node");
	ck_assert_str_eq(str(node, "user_agent_version"), "9.9-test");
	ck_assert_ptr_null(json_object_get(node, "user_agent_build_version"));

	/* clusters: ACKed, in sync, the resource itself shown */
	g = generic(a, CDS_URL, "svc");
	ck_assert_str_eq(str(g, "config_status"), "SYNCED");
	ck_assert_str_eq(str(g, "client_status"), "ACKED");
	ck_assert_str_eq(str(g, "version_info"), f->ack.cds_version);
	ck_assert_str_eq(str(json_object_get(g, "xds_config"), "@type"), CDS_URL);
	ck_assert_str_eq(str(json_object_get(g, "xds_config"), "name"), "svc");
	ck_assert_str_eq(str(json_object_get(g, "xds_config"), "type"), "EDS");
	ck_assert(str(g, "last_updated")[0] != '\0');
	ck_assert_ptr_null(json_object_get(g, "error_state"));

	/* endpoints: one ACKed, a name nobody has, one NACKed */
	g = generic(a, EDS_URL, "svc");
	ck_assert_str_eq(str(g, "config_status"), "SYNCED");
	ck_assert_str_eq(str(g, "client_status"), "ACKED");
	ck_assert_str_eq(str(g, "version_info"), f->ack.eds_version);
	ck_assert_str_eq(str(json_object_get(g, "xds_config"), "cluster_name"), "svc");
	g = generic(a, EDS_URL, "ghost");
	ck_assert_str_eq(str(g, "client_status"), "DOES_NOT_EXIST");
	ck_assert_ptr_null(json_object_get(g, "xds_config"));

	g = generic(n, EDS_URL, "svc");
	ck_assert_str_eq(str(g, "config_status"), "ERROR");
	ck_assert_str_eq(str(g, "client_status"), "NACKED");
	ck_assert_str_eq(str(g, "version_info"), ""); /* nothing ACKed */
	err = json_object_get(g, "error_state");
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(str(err, "details"), NACK_TEXT);
	ck_assert_str_eq(str(err, "version_info"), f->nack.eds_version);
	ck_assert(str(err, "last_update_attempt")[0] != '\0');
	/* what it refused; it runs nothing of it, having ACKed nothing */
	ck_assert_str_eq(str(json_object_get(err, "failed_configuration"), "@type"),
			 EDS_URL);
	ck_assert_str_eq(str(json_object_get(err, "failed_configuration"),
			     "cluster_name"), "svc");
	ck_assert_ptr_null(json_object_get(g, "xds_config"));
	/* its clusters were ACKed all the same */
	ck_assert_str_eq(str(generic(n, CDS_URL, "svc"), "client_status"), "ACKED");

	/* secrets: the status, never the contents */
	g = generic(a, SDS_URL, "token");
	ck_assert_str_eq(str(g, "client_status"), "ACKED");
	ck_assert_str_eq(str(g, "version_info"), f->ack.sds_version);
	ck_assert_ptr_null(json_object_get(g, "xds_config"));
}

/* Whether any raw answer holds `text` (as hex, in the bytes). */
static bool raw_contains(json_t *doc, const char *text)
{
	char hex[256] = "";
	json_t *r;
	size_t i;

	for (i = 0; text[i] != '\0' && 2 * i + 2 < sizeof(hex); i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)text[i]);
	json_array_foreach(json_object_get(doc, "raw_hex"), i, r)
		if (strstr(json_string_value(r), hex) != NULL)
			return true;
	return false;
}

START_TEST(fetch_reports_acks_nacks_and_no_secrets)
{
	struct fixture f;
	json_t *doc;

	fixture_start(&f);
	doc = csds(f.d->target, "");
	ck_assert_str_eq(code_of(doc), "OK");
	ck_assert_int_eq(json_array_size(json_object_get(doc, "responses")), 1);
	check_report(response(doc, 0), &f);
	ck_assert(!raw_contains(doc, SECRET_TEXT));
	ck_assert(raw_contains(doc, "svc")); /* the search itself works */
	json_decref(doc);
	fixture_stop(&f);
}
END_TEST

START_TEST(stream_answers_each_request)
{
	struct fixture f;
	json_t *doc;

	fixture_start(&f);
	doc = csds(f.d->target, "--stream 3");
	ck_assert_str_eq(code_of(doc), "OK");
	ck_assert_int_eq(json_array_size(json_object_get(doc, "responses")), 3);
	for (size_t i = 0; i < 3; i++)
		check_report(response(doc, i), &f);
	ck_assert(!raw_contains(doc, SECRET_TEXT));
	json_decref(doc);
	fixture_stop(&f);
}
END_TEST

/* Node ids of an answer's ClientConfigs, sorted, comma-separated. */
static char *ids(json_t *doc)
{
	json_t *resp = response(doc, 0), *c;
	char *list = strdup(""), *next;
	const char *names[8];
	size_t i, n = 0;

	json_array_foreach(json_object_get(resp, "config"), i, c)
		if (n < 8)
			names[n++] = str(json_object_get(c, "node"), "id");
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			if (strcmp(names[b], names[a]) < 0) {
				const char *t = names[a];

				names[a] = names[b];
				names[b] = t;
			}
	for (i = 0; i < n; i++) {
		ck_assert(asprintf(&next, "%s%s%s", list, i ? "," : "", names[i]) > 0);
		free(list);
		list = next;
	}
	return list;
}

static void expect_ids(const char *target, const char *request,
		       const char *want)
{
	char *args, *got;
	json_t *doc;

	ck_assert(asprintf(&args, "--request '%s'", request) > 0);
	doc = csds(target, args);
	ck_assert_msg(strcmp(code_of(doc), "OK") == 0, "%s: %s: %s", request,
		      code_of(doc), details_of(doc));
	got = ids(doc);
	ck_assert_msg(strcmp(got, want) == 0, "%s: nodes '%s', not '%s'",
		      request, got, want);
	free(got);
	free(args);
	json_decref(doc);
}

static void expect_refused(const char *target, const char *args,
			   const char *code, const char *details)
{
	json_t *doc = csds(target, args);

	ck_assert_str_eq(code_of(doc), code);
	ck_assert_msg(strstr(details_of(doc), details) != NULL,
		      "%s: details '%s' lack '%s'", args, details_of(doc), details);
	json_decref(doc);
}

START_TEST(node_matchers_select_nodes)
{
	struct fixture f;
	const char *t;
	json_t *doc, *g;

	fixture_start(&f);
	t = f.d->target;
	expect_ids(t, "{}", "csds-ack,csds-nack");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"exact\": \"csds-ack\"}}]}",
		   "csds-ack");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"exact\": \"CSDS-ACK\"}}]}", "");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"exact\": \"CSDS-ACK\", \"ignore_case\": true}}]}",
		   "csds-ack");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"prefix\": \"csds-\"}}]}",
		   "csds-ack,csds-nack");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"suffix\": \"NACK\", \"ignore_case\": true}}]}",
		   "csds-nack");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"contains\": \"s-a\"}}]}",
		   "csds-ack");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"exact\": \"nobody\"}}]}", "");
	/* matchers are ORed; one without node_id matches every node */
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"exact\": \"nobody\"}}, {\"node_id\": {\"suffix\": \"-nack\"}}]}",
		   "csds-nack");
	expect_ids(t, "{\"node_matchers\": [{\"node_id\": {\"exact\": \"nobody\"}}, {}]}",
		   "csds-ack,csds-nack");

	/* what xdsd does not do is refused, never ignored */
	expect_refused(t, "--request '{\"node_matchers\": [{\"node_metadatas\": [{\"path\": [{\"key\": \"a\"}], \"value\": {\"present_match\": true}}]}]}'",
		       "INVALID_ARGUMENT", "node_metadatas is not supported");
	expect_refused(t, "--request '{\"node_matchers\": [{\"node_id\": {\"safe_regex\": {\"regex\": \"csds.*\"}}}]}'",
		       "INVALID_ARGUMENT", "safe_regex is not supported");
	expect_refused(t, "--request '{\"node_matchers\": [{\"node_id\": {\"prefix\": \"\"}}]}'",
		       "INVALID_ARGUMENT", "prefix must not be empty");
	expect_refused(t, "--request '{\"node_matchers\": [{\"node_id\": {\"ignore_case\": true}}]}'",
		       "INVALID_ARGUMENT", "has no pattern");
	expect_refused(t, "--stream 2 --request '{\"node_matchers\": [{\"node_metadatas\": [{}]}]}'",
		       "INVALID_ARGUMENT", "node_metadatas is not supported");

	/* exclude_resource_contents: statuses without resources */
	doc = csds(t, "--request '{\"exclude_resource_contents\": true}'");
	ck_assert_str_eq(code_of(doc), "OK");
	g = generic(config_of(response(doc, 0), "csds-ack"), CDS_URL, "svc");
	ck_assert_str_eq(str(g, "client_status"), "ACKED");
	ck_assert_ptr_null(json_object_get(g, "xds_config"));
	json_decref(doc);
	fixture_stop(&f);
}
END_TEST

START_TEST(garbage_is_refused_and_harmless)
{
	struct fixture f;
	const char *t;
	char *args, *nest;
	size_t depth = 20000;
	json_t *doc;

	fixture_start(&f);
	t = f.d->target;
	/* a tag whose varint never ends; a length past the end; a group
	 * never closed; a node matcher that is a number */
	expect_refused(t, "--raw ffffffffffffffffffffff", "INVALID_ARGUMENT",
		       "malformed ClientStatusRequest");
	expect_refused(t, "--raw 0a0561626364", "INVALID_ARGUMENT", "malformed");
	expect_refused(t, "--raw 0b0b0b0b", "INVALID_ARGUMENT", "malformed");
	expect_refused(t, "--raw 0801", "INVALID_ARGUMENT", "malformed");
	expect_refused(t, "--stream 1 --raw 0a03ffffff", "INVALID_ARGUMENT",
		       "malformed");
	/* a node nested 20000 levels deep in its metadata: never walked */
	nest = malloc(depth * 4 + 1);
	for (size_t i = 0; i < depth; i++)
		memcpy(nest + 2 * i, "13", 2); /* start group 2 */
	for (size_t i = 0; i < depth; i++)
		memcpy(nest + 2 * (depth + i), "14", 2); /* end group 2 */
	nest[depth * 4] = '\0';
	ck_assert(asprintf(&args, "--raw %s", nest) > 0);
	expect_refused(t, args, "INVALID_ARGUMENT", "malformed");
	free(args);
	free(nest);
	/* over max_request_size (4 MiB by default): gRPC refuses it */
	doc = csds(t, "--node-bytes 5000000");
	ck_assert_str_eq(code_of(doc), "RESOURCE_EXHAUSTED");
	json_decref(doc);
	/* the daemon and its clients are as they were */
	doc = csds(t, "");
	ck_assert_str_eq(code_of(doc), "OK");
	check_report(response(doc, 0), &f);
	json_decref(doc);
	fixture_stop(&f);
}
END_TEST

/* A client that sends requests without reading the answers: the first
 * answer (thousands of clusters) outgrows its HTTP/2 window and stays in
 * xdsd's send, XD_CSDS_MAX_PENDING more wait, and the next one ends the
 * call rather than queue without end. */
START_TEST(waiting_requests_are_bounded)
{
	char *dir = xdtest_clusters_snapdir(3000), cfg[1024], *details = NULL;
	struct xdt_daemon *d;
	struct xdc_conn *xc, *cc;
	struct xdc_stream *xs, *cs;
	grpc_status_code code;

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	xc = xdc_connect(d->target);
	xs = xdc_watch_clusters(xc, "many", "default");
	ck_assert_int_eq(xdc_next_clusters(xs, WAIT_MS, NULL), 3000);
	cc = xdc_connect_small_window(d->target);
	cs = xdc_open(cc, "/envoy.service.status.v3.ClientStatusDiscoveryService/StreamClientStatus");
	for (int i = 0; i < 1 + 8 + 1; i++)
		ck_assert(xdc_send(cs, "", 0, WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "requests already wait for their answers", WAIT_MS));
	ck_assert(xdc_drain_status(cs, &code, &details, WAIT_MS));
	ck_assert_int_eq(code, GRPC_STATUS_RESOURCE_EXHAUSTED);
	ck_assert_str_eq(details, "8 requests already wait for their answers; read them first");
	free(details);
	xdc_stream_free(cs);
	xdc_conn_free(cc);
	xdc_stream_free(xs);
	xdc_conn_free(xc);
	stop(d);
	free(dir);
}
END_TEST

/* Waits until the daemon's `series` is `want`; true if it was in time. */
static bool wait_metric(const struct xdt_daemon *d, const char *series, double want)
{
	long long deadline = xdtest_now_ms() + WAIT_MS;

	while (xdt_daemon_metric(d, series) != want) {
		if (xdtest_now_ms() > deadline)
			return false;
		xdtest_sleep_ms(20);
	}
	return true;
}

/*
 * A CSDS call with `args` is refused for `reason` (csds_service.h),
 * RESOURCE_EXHAUSTED with `details`: its warning names the call and who
 * made it, and the reason's count is 1.
 */
static void refused_for(const struct xdt_daemon *d, const char *args,
			const char *reason, const char *details)
{
	json_t *doc = csds(d->target, args);
	char what[64], series[96], *log, *at, *line;

	ck_assert_str_eq(code_of(doc), "RESOURCE_EXHAUSTED");
	ck_assert_str_eq(details_of(doc), details);
	json_decref(doc);
	snprintf(what, sizeof(what), "): refused (%s): ", reason);
	ck_assert(xdt_daemon_wait_log(d, what, WAIT_MS));
	snprintf(series, sizeof(series), "xdsd_csds_refused_total{reason=\"%s\"}", reason);
	ck_assert_int_eq(xdt_daemon_metric(d, series), 1);
	log = xdt_daemon_log(d);
	at = strstr(log, what);
	while (at > log && at[-1] != '\n')
		at--;
	line = strndup(at, strcspn(at, "\n"));
	ck_assert_msg(strstr(line, "warn: stream ") != NULL &&
			      strstr(line, "(CSDS fetch from ipv4:127.0.0.1:") != NULL,
		      "%s", line);
	free(line);
	free(log);
}

/* A CSDS call on a connection whose window is small, sent one request:
 * its answer, larger than the window, stays in xdsd's send. */
struct stuck {
	struct xdc_conn *conn;
	struct xdc_stream *s;
};

static void stuck_open(struct stuck *k, const char *target, bool names_only)
{
	/* exclude_resource_contents (field 3) true, or an empty request */
	static const char exclude[] = "\x18\x01";

	k->conn = xdc_connect_small_window(target);
	k->s = xdc_open(k->conn, "/envoy.service.status.v3.ClientStatusDiscoveryService/StreamClientStatus");
	ck_assert(xdc_send(k->s, exclude, names_only ? 2 : 0, WAIT_MS));
}

static void stuck_close(struct stuck *k)
{
	xdc_stream_free(k->s);
	xdc_conn_free(k->conn);
}


/*
 * Answers are bounded all together, not only each: with answers held
 * in xdsd's send by clients that do not read (as a slow client's
 * would be), a call whose answer would take those under way past
 * csds_max_memory is refused, RESOURCE_EXHAUSTED, and with
 * csds_max_answers under way the next is refused before anything is
 * built. Each refusal is logged with the peer and counted by reason;
 * once the answers are gone, calls are answered again. Before these
 * bounds every call built and held its answer whole, however many at
 * once.
 */
START_TEST(answers_are_bounded_together)
{
	char *dir = xdtest_clusters_snapdir(3000), cfg[1024];
	struct xdt_daemon *d;
	struct xdc_conn *xc;
	struct xdc_stream *xs;
	struct stuck held[2];
	double whole;
	json_t *doc;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\ncsds_max_answers: 2\ncsds_max_memory: 850KiB\n",
		 dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	xc = xdc_connect(d->target);
	xs = xdc_watch_clusters(xc, "many", "default");
	ck_assert_int_eq(xdc_next_clusters(xs, WAIT_MS, NULL), 3000);

	/* the answer with the contents of the node's 3000 clusters is some
	 * 500 KB, without them some 290 KB: one of each fits in 850 KiB,
	 * two whole ones do not */
	stuck_open(&held[0], d->target, false);
	ck_assert(wait_metric(d, "xdsd_csds_answers", 1));
	whole = xdt_daemon_metric(d, "xdsd_csds_answer_bytes");
	ck_assert_msg(whole > 450e3 && whole < 560e3, "an answer holds %.0f bytes", whole);
	refused_for(d, "--max-message 4194304", "memory",
		    "the client status answers under way would hold more than 850 KiB together with this one (csds_max_memory); try again when they are sent, or narrow node_matchers or set exclude_resource_contents");
	ck_assert(wait_metric(d, "xdsd_csds_answers", 1));
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_csds_answer_bytes"), whole);
	/* a small answer fits beside it */
	doc = csds(d->target, "--request '{\"node_matchers\": [{\"node_id\": {\"exact\": \"nobody\"}}]}'");
	ck_assert_str_eq(code_of(doc), "OK");
	json_decref(doc);

	/* two under way: the next is refused before anything is built,
	 * however small its answer */
	stuck_open(&held[1], d->target, true);
	ck_assert(wait_metric(d, "xdsd_csds_answers", 2));
	refused_for(d, "--request '{\"node_matchers\": [{\"node_id\": {\"exact\": \"nobody\"}}]}'",
		    "answers",
		    "2 client status answers are being built or sent already (csds_max_answers); try again when they are done");
	/* both count among the streams refused for limits, too */
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_streams_refused_total{reason=\"limits\"}"), 2);

	/* their clients gone, their bytes are freed: answered again */
	stuck_close(&held[0]);
	stuck_close(&held[1]);
	ck_assert(wait_metric(d, "xdsd_csds_answers", 0));
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_csds_answer_bytes"), 0);
	doc = csds(d->target, "--max-message 4194304");
	ck_assert_msg(strcmp(code_of(doc), "OK") == 0, "%s: %s", code_of(doc), details_of(doc));
	json_decref(doc);
	xdc_stream_free(xs);
	xdc_conn_free(xc);
	stop(d);
	free(dir);
}
END_TEST

/* An IPv4 address of this host that is not loopback, or NULL. */
static char *outside_address(void)
{
	struct ifaddrs *all, *i;
	char buf[INET_ADDRSTRLEN];
	char *found = NULL;

	ck_assert(getifaddrs(&all) == 0);
	for (i = all; i != NULL && found == NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr,
			  buf, sizeof(buf));
		found = strdup(buf);
	}
	freeifaddrs(all);
	return found;
}

/* With client certificates only the identities of csds_allow may call,
 * from another host and from loopback alike: loopback is no identity. */
START_TEST(only_allowed_identities_from_other_hosts)
{
	char *dir = snapshots(), *addr = outside_address(), cfg[4096], *args;
	char outside[128];
	struct xdt_daemon *d;
	struct client c;
	json_t *doc;

	ck_assert_msg(addr != NULL, "this test needs an IPv4 address that is not loopback");
	snprintf(cfg, sizeof(cfg),
		 "listen: 0.0.0.0:0\nsnapshots: %s\n"
		 "tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n"
		 "csds_allow: ['spiffe://example.org/ns/prod/sa/back*']\n",
		 dir, xdtest_cert("server.pem"), xdtest_cert("server.key"), xdtest_cert("ca.pem"));
	d = xdt_daemon_start(cfg, NULL, START_MS);
	snprintf(outside, sizeof(outside), "%s:%d", addr, d->port);

	/* an xDS client, so that there is something to show */
	memset(&c, 0, sizeof(c));
	c.id = "tls-node";
	c.conn = xdc_connect_tls(d->target, xdtest_cert("ca.pem"), xdtest_cert("frontend.pem"),
				 xdtest_cert("frontend.key"));
	c.s = xdc_open(c.conn, XDC_ADS);
	request(&c, CDS_URL, NULL, 0, NULL, NULL, NULL);
	c.cds_version = answer(&c, CDS_URL, NULL, 0, NULL);

	ck_assert(asprintf(&args, "--tls '%s' '%s' '%s'", xdtest_cert("ca.pem"),
			   xdtest_cert("frontend.pem"), xdtest_cert("frontend.key")) > 0);
	expect_refused(outside, args, "PERMISSION_DENIED",
		       "identity 'spiffe://example.org/ns/prod/sa/frontend' may not call the client status service");
	ck_assert(xdt_daemon_wait_log(d, ", identity 'spiffe://example.org/ns/prod/sa/frontend'): refused (identity): identity 'spiffe://example.org/ns/prod/sa/frontend' may not call", WAIT_MS));
	/* the same identity over loopback: refused all the same */
	expect_refused(d->target, args, "PERMISSION_DENIED",
		       "identity 'spiffe://example.org/ns/prod/sa/frontend' may not call the client status service");
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_csds_refused_total{reason=\"identity\"}"), 2);
	free(args);

	ck_assert(asprintf(&args, "--tls '%s' '%s' '%s'", xdtest_cert("ca.pem"),
			   xdtest_cert("backend.pem"), xdtest_cert("backend.key")) > 0);
	doc = csds(outside, args);
	ck_assert_msg(strcmp(code_of(doc), "OK") == 0, "%s: %s", code_of(doc),
		      details_of(doc));
	ck_assert_ptr_nonnull(config_of(response(doc, 0), "tls-node"));
	json_decref(doc);
	doc = csds(d->target, args);
	ck_assert_msg(strcmp(code_of(doc), "OK") == 0, "%s: %s", code_of(doc),
		      details_of(doc));
	json_decref(doc);
	free(args);

	client_close(&c);
	stop(d);
	free(addr);
	free(dir);
}
END_TEST

/* Without client certificates no identity can be proven: only peers on
 * loopback may call, whatever they present. */
START_TEST(plaintext_answers_loopback_only)
{
	char *dir = snapshots(), *addr = outside_address(), cfg[1024];
	char outside[128];
	struct xdt_daemon *d;
	json_t *doc;

	ck_assert_msg(addr != NULL, "this test needs an IPv4 address that is not loopback");
	snprintf(cfg, sizeof(cfg), "listen: 0.0.0.0:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	snprintf(outside, sizeof(outside), "%s:%d", addr, d->port);
	expect_refused(outside, "", "PERMISSION_DENIED",
		       "only peers on loopback or the unix socket may call the client status service without client certificates");
	ck_assert(xdt_daemon_wait_log(d, "): refused (identity): only peers on loopback", WAIT_MS));
	ck_assert_int_eq(xdt_daemon_metric(d, "xdsd_csds_refused_total{reason=\"identity\"}"), 1);
	doc = csds(d->target, "");
	ck_assert_str_eq(code_of(doc), "OK");
	json_decref(doc);
	stop(d);
	free(addr);
	free(dir);
}
END_TEST

#define XDSTP_CDS "xdstp://cp.example/envoy.config.cluster.v3.Cluster"

/*
 * A delta client subscribed to glob collections (rule X2) is reported
 * by what it was sent: each member under its own name, once, also when
 * it is subscribed by name too; an empty collection as its glob's name,
 * which does not exist. The glob of a collection with members is not a
 * resource and is not listed.
 */
/* Sends the delta CDS request `req`, receives its response (which must
 * carry `nresources` resources) and ACKs it; returns the response. */
static Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *
delta_ack(struct xdc_stream *st,
	  const Envoy__Service__Discovery__V3__DeltaDiscoveryRequest *req,
	  size_t nresources)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest ack =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r;

	ck_assert(xdc_send_delta(st, req, WAIT_MS));
	r = xdc_recv_delta(st, WAIT_MS);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->n_resources, nresources);
	ack.type_url = CDS_URL;
	ack.response_nonce = r->nonce;
	ck_assert(xdc_send_delta(st, &ack, WAIT_MS));
	return r;
}

START_TEST(glob_subscription_shows_its_members)
{
	char *dir = xdtest_snapdir(), cfg[1024];
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	char *names[] = {XDSTP_CDS "/edge/*", XDSTP_CDS "/edge/a",
			 XDSTP_CDS "/empty/*"};
	struct xdt_daemon *d;
	struct xdc_conn *conn;
	struct xdc_stream *st;
	json_t *doc, *c, *g;
	size_t i, listed = 0;

	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n"
			       "- {name: '" XDSTP_CDS "/edge/a', connect_timeout: 1s}\n"
			       "- {name: '" XDSTP_CDS "/edge/b', connect_timeout: 2s}\n"
			       "- {name: '" XDSTP_CDS "/other/c', connect_timeout: 3s}\n"));
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	conn = xdc_connect(d->target);
	st = xdc_open(conn, XDC_DELTA_ADS);
	node.id = "glob-node";
	req.node = &node;
	req.type_url = CDS_URL;
	req.resource_names_subscribe = names;
	req.n_resource_names_subscribe = 3;
	r = delta_ack(st, &req, 2);

	for (long long end = xdtest_now_ms() + WAIT_MS;;) {
		doc = csds(d->target, "");
		c = config_of(response(doc, 0), "glob-node");
		if (c != NULL &&
		    strcmp(str(generic(c, CDS_URL, XDSTP_CDS "/edge/b"), "client_status"),
			   "ACKED") == 0)
			break;
		json_decref(doc);
		ck_assert_msg(xdtest_now_ms() < end, "the ACK was never reported");
		xdtest_sleep_ms(50);
	}
	g = generic(c, CDS_URL, XDSTP_CDS "/edge/b");
	ck_assert_str_eq(str(json_object_get(g, "xds_config"), "connect_timeout"), "2s");
	g = generic(c, CDS_URL, XDSTP_CDS "/edge/a");
	ck_assert_str_eq(str(g, "client_status"), "ACKED");
	ck_assert_str_eq(str(json_object_get(g, "xds_config"), "connect_timeout"), "1s");
	g = generic(c, CDS_URL, XDSTP_CDS "/empty/*");
	ck_assert_str_eq(str(g, "client_status"), "DOES_NOT_EXIST");
	json_array_foreach(json_object_get(c, "generic_xds_configs"), i, g) {
		ck_assert_str_ne(str(g, "name"), XDSTP_CDS "/edge/*");
		ck_assert_str_ne(str(g, "name"), XDSTP_CDS "/other/c");
		listed++;
	}
	ck_assert_int_eq(listed, 3); /* "a" once */
	json_decref(doc);

	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	xdc_stream_free(st);
	xdc_conn_free(conn);
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- a locator (dynamic parameters) ---------------- */

/* The locator {name: r, dynamic_parameters: {env: prod}} (rule P1). */
struct locator {
	Envoy__Service__Discovery__V3__ResourceLocator loc;
	Envoy__Service__Discovery__V3__ResourceLocator__DynamicParametersEntry env;
	Envoy__Service__Discovery__V3__ResourceLocator__DynamicParametersEntry *params[1];
	Envoy__Service__Discovery__V3__ResourceLocator *locs[1];
};

static void locator_init(struct locator *l)
{
	envoy__service__discovery__v3__resource_locator__init(&l->loc);
	envoy__service__discovery__v3__resource_locator__dynamic_parameters_entry__init(&l->env);
	l->env.key = "env";
	l->env.value = "prod";
	l->params[0] = &l->env;
	l->loc.name = "r";
	l->loc.n_dynamic_parameters = 1;
	l->loc.dynamic_parameters = l->params;
	l->locs[0] = &l->loc;
}

/* A SotW request for clusters by the locator alone, answering
 * `version` and `nonce` (NULL: the first request). */
static void sotw_locator(struct xdc_stream *st, struct locator *l,
			 const char *version, const char *nonce)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;

	node.id = "locator-sotw";
	req.node = &node;
	req.type_url = CDS_URL;
	req.n_resource_locators = 1;
	req.resource_locators = l->locs;
	req.version_info = (char *)(version ? version : "");
	req.response_nonce = (char *)(nonce ? nonce : "");
	ck_assert(xdc_send_sotw(st, &req, WAIT_MS));
}

/* The client's status of cluster "r" is what it holds and ACKed: the
 * variant for env=prod (connect_timeout 2s), shown under the
 * resource's name. */
static void locator_reported(const char *target, const char *id)
{
	json_t *doc = wait_status(target, id, CDS_URL, "r", "ACKED");
	json_t *c = config_of(response(doc, 0), id), *g;
	size_t i;

	g = generic(c, CDS_URL, "r");
	ck_assert_str_eq(str(json_object_get(g, "xds_config"), "connect_timeout"), "2s");
	ck_assert_str_eq(str(g, "config_status"), "SYNCED");
	/* one entry: never under the locator's key inside xdsd */
	ck_assert_int_eq(json_array_size(json_object_get(c, "generic_xds_configs")), 1);
	json_array_foreach(json_object_get(c, "generic_xds_configs"), i, g)
		ck_assert_msg(strchr(str(g, "name"), '\x1f') == NULL, "%s",
			      str(g, "name"));
	json_decref(doc);
}

/*
 * A client that asks for a resource by a locator with dynamic
 * parameters (rule P1) and ACKs the variant it is sent is shown
 * holding that variant, ACKED, under the resource's name: SotW and
 * delta.
 */
START_TEST(locator_subscription_shows_its_variant)
{
	char *dir = xdtest_snapdir(), cfg[1024];
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest dreq =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *dr;
	Envoy__Service__Discovery__V3__DiscoveryResponse *sr;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	struct xdt_daemon *d;
	struct xdc_conn *conn;
	struct xdc_stream *sotw, *delta;
	struct locator l;

	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n"
			       "- {name: r, type: STATIC, connect_timeout: 1s}\n"
			       "- name: r\n"
			       "  type: STATIC\n"
			       "  connect_timeout: 2s\n"
			       "  '@dynamic_parameter_constraints': {constraint: {key: env, value: prod}}\n"));
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	conn = xdc_connect(d->target);
	locator_init(&l);

	sotw = xdc_open(conn, XDC_ADS);
	sotw_locator(sotw, &l, NULL, NULL);
	sr = xdc_recv_sotw(sotw, WAIT_MS);
	ck_assert_ptr_nonnull(sr);
	ck_assert_int_eq(sr->n_resources, 1);
	sotw_locator(sotw, &l, sr->version_info, sr->nonce);

	delta = xdc_open(conn, XDC_DELTA_ADS);
	node.id = "locator-delta";
	dreq.node = &node;
	dreq.type_url = CDS_URL;
	dreq.n_resource_locators_subscribe = 1;
	dreq.resource_locators_subscribe = l.locs;
	dr = delta_ack(delta, &dreq, 1);

	locator_reported(d->target, "locator-sotw");
	locator_reported(d->target, "locator-delta");

	envoy__service__discovery__v3__discovery_response__free_unpacked(sr, NULL);
	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(dr, NULL);
	xdc_stream_free(sotw);
	xdc_stream_free(delta);
	xdc_conn_free(conn);
	stop(d);
	free(dir);
}
END_TEST

/* ---------------- a NACK after ACKs, resource by resource ---------------- */

#define NACK_CDS "cluster svc: connect_timeout 2s is too long"
#define NACK_SDS "secret token: too short"
#define SECRET_V2 "n3w-hunter3-s3cr3t"

/* Version `v` of a snapshot: clusters svc (connect_timeout v s), other
 * (always the same) and, from v2 on, fresh; the secret token. */
static void write_version(const char *dir, int v, const char *secret)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "clusters:\n"
		 "- {name: svc, type: STATIC, connect_timeout: %ds}\n"
		 "- {name: other, type: STATIC, connect_timeout: 9s}\n"
		 "%s"
		 "secrets:\n"
		 "- name: token\n"
		 "  '@allow': ['@anyone']\n"
		 "  generic_secret: {secret: {inline_string: %s}}\n",
		 v, v >= 2 ? "- {name: fresh, type: STATIC, connect_timeout: 5s}\n" : "",
		 secret);
	free(xdtest_write_file(dir, "default.yaml", text));
}

static void reload(struct xdt_daemon *d, int n)
{
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log_count(d, "reloaded ", n, WAIT_MS));
}

/* The next response, of either type (CDS_URL or SDS_URL); its nonce
 * and version, malloc'd. */
static const char *next_response(struct client *c, char **nonce,
				 char **version)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(c->s, WAIT_MS);
	const char *url;

	ck_assert_msg(r != NULL, "%s: no response", c->id);
	url = strcmp(r->type_url, CDS_URL) == 0 ? CDS_URL :
	      strcmp(r->type_url, SDS_URL) == 0 ? SDS_URL : NULL;
	ck_assert_msg(url != NULL, "unexpected %s", r->type_url);
	*nonce = strdup(r->nonce);
	*version = strdup(r->version_info);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	return url;
}

static json_t *cfg_node(json_t *doc, const char *id)
{
	json_t *c = config_of(response(doc, 0), id);

	ck_assert_ptr_nonnull(c);
	return c;
}

static const char *field(json_t *g, const char *obj, const char *key)
{
	return str(json_object_get(g, obj), key);
}

/*
 * A SotW client ACKs version 1, is sent version 2 and first leaves it
 * unanswered, then NACKs it, then ACKs version 3. CSDS says, resource by
 * resource: what it runs (version_info, xds_config), what it refused
 * (error_state: when, why, which version, failed_configuration) and
 * what it was sent but never ACKed (REQUESTED). In SotW a NACK refuses
 * the whole response: every resource in it is NACKED.
 */
START_TEST(sotw_nack_after_ack_per_resource)
{
	char *dir = xdtest_snapdir(), cfg[1024], *secret[] = {"token"};
	char *cds_nonce, *cds_v2, *sds_nonce, *sds_v2, *nonce, *ver;
	struct xdt_daemon *d;
	struct client c;
	json_t *doc, *n, *g, *err;

	write_version(dir, 1, SECRET_TEXT);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	memset(&c, 0, sizeof(c));
	c.id = "sotw-nack";
	c.conn = xdc_connect(d->target);
	c.s = xdc_open(c.conn, XDC_ADS);
	request(&c, CDS_URL, NULL, 0, NULL, NULL, NULL);
	c.cds_version = answer(&c, CDS_URL, NULL, 0, NULL);
	request(&c, SDS_URL, secret, 1, NULL, NULL, NULL);
	c.sds_version = answer(&c, SDS_URL, secret, 1, NULL);

	/* version 2: each type NACKed, clusters first looked at while
	 * their response is not answered yet */
	write_version(dir, 2, SECRET_V2);
	reload(d, 1);
	cds_nonce = sds_nonce = cds_v2 = sds_v2 = NULL;
	for (int i = 0; i < 2; i++) {
		if (strcmp(next_response(&c, &nonce, &ver), SDS_URL) == 0) {
			sds_nonce = nonce;
			sds_v2 = ver;
			request(&c, SDS_URL, secret, 1, c.sds_version,
				sds_nonce, NACK_SDS);
			continue;
		}
		cds_nonce = nonce;
		cds_v2 = ver;
		doc = wait_status(d->target, c.id, CDS_URL, "fresh", "REQUESTED");
		n = cfg_node(doc, c.id);
		g = generic(n, CDS_URL, "svc");
		ck_assert_str_eq(str(g, "client_status"), "ACKED");
		ck_assert_str_eq(str(g, "config_status"), "STALE");
		ck_assert_str_eq(str(g, "version_info"), c.cds_version);
		g = generic(n, CDS_URL, "fresh");
		ck_assert_str_eq(str(g, "config_status"), "STALE");
		ck_assert_str_eq(str(g, "version_info"), c.cds_version);
		json_decref(doc);
		request(&c, CDS_URL, NULL, 0, c.cds_version, cds_nonce,
			NACK_CDS);
	}
	ck_assert_ptr_nonnull(cds_nonce);
	ck_assert_ptr_nonnull(sds_nonce);
	json_decref(wait_status(d->target, c.id, SDS_URL, "token", "NACKED"));
	doc = wait_status(d->target, c.id, CDS_URL, "svc", "NACKED");
	n = cfg_node(doc, c.id);
	g = generic(n, CDS_URL, "svc");
	ck_assert_str_eq(str(g, "config_status"), "ERROR");
	/* it runs version 1 of svc still */
	ck_assert_str_eq(str(g, "version_info"), c.cds_version);
	ck_assert_str_eq(field(g, "xds_config", "connect_timeout"), "1s");
	err = json_object_get(g, "error_state");
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(str(err, "details"), NACK_CDS);
	ck_assert_str_eq(str(err, "version_info"), cds_v2);
	ck_assert(str(err, "last_update_attempt")[0] != '\0');
	ck_assert_str_eq(field(err, "failed_configuration", "@type"), CDS_URL);
	ck_assert_str_eq(field(err, "failed_configuration", "name"), "svc");
	ck_assert_str_eq(field(err, "failed_configuration", "connect_timeout"), "2s");
	/* the whole response was refused: other (unchanged) too */
	g = generic(n, CDS_URL, "other");
	ck_assert_str_eq(str(g, "client_status"), "NACKED");
	ck_assert_str_eq(field(g, "xds_config", "connect_timeout"), "9s");
	ck_assert_str_eq(field(json_object_get(g, "error_state"),
			       "failed_configuration", "connect_timeout"), "9s");
	/* fresh: refused, and never ACKed, so nothing runs */
	g = generic(n, CDS_URL, "fresh");
	ck_assert_str_eq(str(g, "client_status"), "NACKED");
	ck_assert_ptr_null(json_object_get(g, "xds_config"));
	ck_assert_str_eq(field(json_object_get(g, "error_state"),
			       "failed_configuration", "connect_timeout"), "5s");
	/* a refused secret: the status and the message, never the contents */
	g = generic(n, SDS_URL, "token");
	ck_assert_str_eq(str(g, "version_info"), c.sds_version);
	err = json_object_get(g, "error_state");
	ck_assert_str_eq(str(err, "details"), NACK_SDS);
	ck_assert_str_eq(str(err, "version_info"), sds_v2);
	ck_assert_ptr_null(json_object_get(err, "failed_configuration"));
	ck_assert_ptr_null(json_object_get(g, "xds_config"));
	ck_assert(!raw_contains(doc, SECRET_TEXT));
	ck_assert(!raw_contains(doc, SECRET_V2));
	json_decref(doc);
	/* and without contents when asked */
	doc = csds(d->target, "--request '{\"exclude_resource_contents\": true}'");
	g = generic(cfg_node(doc, c.id), CDS_URL, "svc");
	ck_assert_str_eq(str(g, "client_status"), "NACKED");
	ck_assert_str_eq(field(g, "error_state", "details"), NACK_CDS);
	ck_assert_ptr_null(json_object_get(json_object_get(g, "error_state"),
					   "failed_configuration"));
	ck_assert_ptr_null(json_object_get(g, "xds_config"));
	json_decref(doc);

	/* version 3 (the secret back as it was) ACKed: the errors are gone */
	write_version(dir, 3, SECRET_TEXT);
	reload(d, 2);
	for (int i = 0; i < 2; i++) {
		const char *url = next_response(&c, &nonce, &ver);
		bool sds = strcmp(url, SDS_URL) == 0;

		request(&c, url, sds ? secret : NULL, sds ? 1 : 0, ver, nonce,
			NULL);
		if (!sds) {
			free(c.cds_version);
			c.cds_version = ver;
		} else {
			free(ver);
		}
		free(nonce);
	}
	doc = wait_status(d->target, c.id, CDS_URL, "fresh", "ACKED");
	g = generic(cfg_node(doc, c.id), CDS_URL, "svc");
	ck_assert_str_eq(str(g, "client_status"), "ACKED");
	ck_assert_str_eq(str(g, "version_info"), c.cds_version);
	ck_assert_str_eq(field(g, "xds_config", "connect_timeout"), "3s");
	ck_assert_ptr_null(json_object_get(g, "error_state"));
	json_decref(doc);

	free(cds_nonce);
	free(cds_v2);
	free(sds_nonce);
	free(sds_v2);
	client_close(&c);
	stop(d);
	free(dir);
}
END_TEST

/* A delta request on `s`: subscribing to every cluster on the first,
 * answering `nonce` (NACK with `nack`) on the others. */
static void delta_send(struct xdc_stream *s, const char *id, bool first,
		       const char *nonce, const char *nack)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Google__Rpc__Status err = GOOGLE__RPC__STATUS__INIT;
	char *star[] = {"*"};

	node.id = (char *)id;
	node.cluster = "edge";
	req.node = first ? &node : NULL;
	req.type_url = CDS_URL;
	if (first) {
		req.resource_names_subscribe = star;
		req.n_resource_names_subscribe = 1;
	}
	req.response_nonce = (char *)(nonce ? nonce : "");
	if (nack != NULL) {
		err.code = 3;
		err.message = (char *)nack;
		req.error_detail = &err;
	}
	ck_assert(xdc_send_delta(s, &req, WAIT_MS));
}

/* The next delta response: its resource count; its nonce (malloc'd). */
static size_t delta_next(struct xdc_stream *s, char **nonce)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r =
		xdc_recv_delta(s, WAIT_MS);
	size_t n;

	ck_assert_ptr_nonnull(r);
	*nonce = strdup(r->nonce);
	n = r->n_resources;
	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	return n;
}

/*
 * In delta a NACK refuses the resources of that response, and xdsd
 * knows which they were: those that differ from what the client last
 * ACKed. The others stay ACKED and in sync.
 */
START_TEST(delta_nack_concerns_its_resources)
{
	char *dir = xdtest_snapdir(), cfg[1024], *nonce;
	struct xdt_daemon *d;
	struct xdc_conn *conn;
	struct xdc_stream *st;
	json_t *doc, *n, *g, *err;

	write_version(dir, 1, SECRET_TEXT);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	conn = xdc_connect(d->target);
	st = xdc_open(conn, XDC_DELTA_ADS);
	delta_send(st, "delta-nack", true, NULL, NULL);
	ck_assert_int_eq(delta_next(st, &nonce), 2);
	delta_send(st, "delta-nack", false, nonce, NULL);
	free(nonce);
	json_decref(wait_status(d->target, "delta-nack", CDS_URL, "other", "ACKED"));

	write_version(dir, 2, SECRET_TEXT);
	reload(d, 1);
	ck_assert_int_eq(delta_next(st, &nonce), 2); /* svc and fresh */
	delta_send(st, "delta-nack", false, nonce, NACK_CDS);
	free(nonce);
	doc = wait_status(d->target, "delta-nack", CDS_URL, "svc", "NACKED");
	n = cfg_node(doc, "delta-nack");
	g = generic(n, CDS_URL, "svc");
	ck_assert_str_eq(str(g, "config_status"), "ERROR");
	ck_assert_str_eq(field(g, "xds_config", "connect_timeout"), "1s");
	err = json_object_get(g, "error_state");
	ck_assert_str_eq(str(err, "details"), NACK_CDS);
	ck_assert_str_eq(field(err, "failed_configuration", "connect_timeout"), "2s");
	g = generic(n, CDS_URL, "fresh");
	ck_assert_str_eq(str(g, "client_status"), "NACKED");
	ck_assert_ptr_null(json_object_get(g, "xds_config"));
	/* not in the refused response: ACKED, as xdsd serves it */
	g = generic(n, CDS_URL, "other");
	ck_assert_str_eq(str(g, "client_status"), "ACKED");
	ck_assert_str_eq(str(g, "config_status"), "SYNCED");
	ck_assert_str_eq(field(g, "xds_config", "connect_timeout"), "9s");
	ck_assert_ptr_null(json_object_get(g, "error_state"));
	json_decref(doc);

	xdc_stream_free(st);
	xdc_conn_free(conn);
	stop(d);
	free(dir);
}
END_TEST

/* csds_allow names identities: without client certificates it is an
 * error, reported with its line. */
START_TEST(csds_allow_needs_mtls)
{
	char *dir = xdtest_snapdir();
	char *path = xdtest_write_file(dir, "c.yaml",
				       "listen: 127.0.0.1:0\ncsds_allow: ['spiffe://x/*']\n");
	const char *args[] = {"--check", "-c", path, NULL};
	char *out, *err;

	ck_assert_int_ne(xdt_run_xdsd(args, &out, &err), 0);
	ck_assert_msg(strstr(err, "'csds_allow' (line 2) needs tls.client_ca") != NULL,
		      "%s", err);
	free(out);
	free(err);
	free(path);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("csds");
	TCase *tc = tcase_create("csds");

	xdtest_make_certs();

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, fetch_reports_acks_nacks_and_no_secrets);
	tcase_add_test(tc, stream_answers_each_request);
	tcase_add_test(tc, waiting_requests_are_bounded);
	tcase_add_test(tc, answers_are_bounded_together);
	tcase_add_test(tc, node_matchers_select_nodes);
	tcase_add_test(tc, garbage_is_refused_and_harmless);
	tcase_add_test(tc, only_allowed_identities_from_other_hosts);
	tcase_add_test(tc, plaintext_answers_loopback_only);
	tcase_add_test(tc, csds_allow_needs_mtls);
	tcase_add_test(tc, glob_subscription_shows_its_members);
	tcase_add_test(tc, locator_subscription_shows_its_variant);
	tcase_add_test(tc, sotw_nack_after_ack_per_resource);
	tcase_add_test(tc, delta_nack_concerns_its_resources);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
