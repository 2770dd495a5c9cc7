/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Secrets only to their owner, end to end: the real daemon, mTLS with
 * certificates made by openssl (tests/lib/make-certs.sh), and clients of
 * several identities asking for every secret by name over each method
 * that serves secrets: SotW and delta, per type (SDS) and aggregated.
 * A client is served the secrets its identity may see ("@allow",
 * xdsd-snapshot(5)); the others do not exist for it (rules S10 and D8):
 * never a byte of them reaches it. A secret without "@allow" is served
 * to clients with a certificate only.
 */
#include <grpc/status.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
#define WAIT_MS 5000
/* How long a client waits to see that nothing more comes. */
#define QUIET_MS 400
#define SDS_URL "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
#define FRONTEND "spiffe://example.org/ns/prod/sa/frontend"
#define BACKEND "spiffe://example.org/ns/prod/sa/backend"

/* The methods that serve secrets. */
static const struct {
	const char *path, *label;
	bool delta;
} methods[] = {
	{"/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets", "SotW SDS", false},
	{"/envoy.service.secret.v3.SecretDiscoveryService/DeltaSecrets", "delta SDS", true},
	{XDC_ADS, "ADS", false},
	{XDC_DELTA_ADS, "delta ADS", true},
};
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

/* Every secret, each holding a marker that no other has: what a client
 * was sent is the markers in the bytes it received. */
static const char *const names[] = {"backend-key", "ca", "frontend-key",
				    "mesh-key"};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static const char *snapshot_text(const char *frontend_key_for)
{
	static char text[2048];

	snprintf(text, sizeof(text),
		 "secrets:\n"
		 "- name: frontend-key\n"
		 "  \"@allow\": [\"%s\"]\n"
		 "  tls_certificate: {private_key: {inline_string: MARK-frontend-key}}\n"
		 "- name: backend-key\n"
		 "  \"@allow\": [\"spiffe://example.org/ns/*/sa/backend\"]\n"
		 "  tls_certificate: {private_key: {inline_string: MARK-backend-key}}\n"
		 "- name: mesh-key\n" /* no "@allow": clients with a certificate */
		 "  tls_certificate: {private_key: {inline_string: MARK-mesh-key}}\n"
		 "- name: ca\n"
		 "  \"@allow\": [\"@anyone\"]\n"
		 "  validation_context: {trusted_ca: {inline_string: MARK-ca}}\n"
		 "clusters:\n"
		 "- {name: c-0, type: STATIC, connect_timeout: 1s}\n",
		 frontend_key_for);
	return text;
}

enum listener { PLAINTEXT, TLS, MTLS };

/* xdsd serving `dir`, in plaintext, over TLS without client
 * certificates, or over mTLS. */
static struct xdt_daemon *start(const char *dir, enum listener how)
{
	char cfg[2048];
	int n = snprintf(cfg, sizeof(cfg),
			 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n",
			 dir);

	if (how != PLAINTEXT)
		n += snprintf(cfg + n, sizeof(cfg) - (size_t)n,
			      "tls:\n  cert: %s\n", xdtest_cert("server.pem"));
	if (how != PLAINTEXT)
		n += snprintf(cfg + n, sizeof(cfg) - (size_t)n, "  key: %s\n",
			      xdtest_cert("server.key"));
	if (how == MTLS)
		snprintf(cfg + n, sizeof(cfg) - (size_t)n, "  client_ca: %s\n",
			 xdtest_cert("ca.pem"));
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* A client: `who` names its certificate (NULL: none), over TLS unless
 * `how` is PLAINTEXT. */
static struct xdc_conn *connect_as(const struct xdt_daemon *d,
				   enum listener how, const char *who)
{
	char pem[64], key[64];

	if (how == PLAINTEXT)
		return xdc_connect(d->target);
	if (who == NULL)
		return xdc_connect_tls(d->target, xdtest_cert("ca.pem"), NULL, NULL);
	snprintf(pem, sizeof(pem), "%s.pem", who);
	snprintf(key, sizeof(key), "%s.key", who);
	return xdc_connect_tls(d->target, xdtest_cert("ca.pem"), xdtest_cert(pem),
			       xdtest_cert(key));
}

/* What one client has been told, all responses so far together. */
struct seen {
	bool got[NNAMES];     /* the secret's bytes reached it */
	/* delta: "does not exist" (rule D8), which comes in
	 * removed_resources as a removal (rule D4) does: a name removed
	 * before it reached the client is the one, after, the other */
	bool missing[NNAMES];
	bool removed[NNAMES];
};

static int name_index(const char *name)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	ck_abort_msg("unexpected name '%s'", name);
	return -1;
}

/* Marks every secret whose marker is in `len` bytes at `p`. */
static void scan(struct seen *s, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < NNAMES; i++) {
		char mark[64];

		snprintf(mark, sizeof(mark), "MARK-%s", names[i]);
		if (len > 0 && memmem(p, len, mark, strlen(mark)) != NULL)
			s->got[i] = true;
	}
}

/* "a,b" of the names whose flag is set in `v`; "" for none. */
static char *list(const bool v[NNAMES])
{
	char *out = calloc(1, 256);

	for (size_t i = 0; i < NNAMES; i++)
		if (v[i]) {
			strcat(out, *out ? "," : "");
			strcat(out, names[i]);
		}
	return out;
}

/* A stream of method `m`, subscribed to every secret by name. */
static struct xdc_stream *subscribe(struct xdc_conn *c, size_t m)
{
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	struct xdc_stream *s = xdc_open(c, methods[m].path);

	node.id = (char *)"n-1";
	node.cluster = (char *)"prod";
	if (methods[m].delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest r =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;

		r.node = &node;
		r.type_url = (char *)SDS_URL;
		r.n_resource_names_subscribe = NNAMES;
		r.resource_names_subscribe = (char **)names;
		ck_assert(xdc_send_delta(s, &r, WAIT_MS));
	} else {
		Envoy__Service__Discovery__V3__DiscoveryRequest r =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		r.node = &node;
		r.type_url = (char *)SDS_URL;
		r.n_resource_names = NNAMES;
		r.resource_names = (char **)names;
		ck_assert(xdc_send_sotw(s, &r, WAIT_MS));
	}
	return s;
}

/*
 * Reads one response within `timeout_ms` into `seen` and ACKs it;
 * false when none came. SotW bodies are scanned whole; delta resources
 * by name, and their bodies scanned.
 */
static bool next(struct xdc_stream *s, size_t m, struct seen *seen,
		 int timeout_ms)
{
	if (methods[m].delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r =
			xdc_recv_delta(s, timeout_ms);
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest ack =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;

		if (r == NULL)
			return false;
		ck_assert_str_eq(r->type_url, SDS_URL);
		for (size_t i = 0; i < r->n_resources; i++) {
			Envoy__Service__Discovery__V3__Resource *res = r->resources[i];
			int k = name_index(res->name);

			/* Envoy NACKs a secret without a body (rule D8) */
			ck_assert_msg(res->resource != NULL,
				      "'%s' came as a Resource without a body",
				      res->name);
			scan(seen, res->resource->value.data,
			     res->resource->value.len);
			ck_assert_msg(seen->got[k], "'%s' carries another's bytes",
				      res->name);
		}
		for (size_t i = 0; i < r->n_removed_resources; i++) {
			int k = name_index(r->removed_resources[i]);

			if (seen->got[k])
				seen->removed[k] = true;
			else
				seen->missing[k] = true;
		}
		ack.type_url = (char *)SDS_URL;
		ack.response_nonce = r->nonce;
		ck_assert(xdc_send_delta(s, &ack, WAIT_MS));
		envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
	} else {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r =
			xdc_recv_sotw(s, timeout_ms);
		Envoy__Service__Discovery__V3__DiscoveryRequest ack =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		if (r == NULL)
			return false;
		ck_assert_str_eq(r->type_url, SDS_URL);
		for (size_t i = 0; i < r->n_resources; i++)
			scan(seen, r->resources[i]->value.data,
			     r->resources[i]->value.len);
		ack.type_url = (char *)SDS_URL;
		ack.version_info = r->version_info;
		ack.response_nonce = r->nonce;
		ack.n_resource_names = NNAMES;
		ack.resource_names = (char **)names;
		ck_assert(xdc_send_sotw(s, &ack, WAIT_MS));
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	}
	return true;
}

/*
 * What a client of `who` (a certificate's name, or NULL) is served of
 * every secret it asks for over method `m`: the first response, and
 * whatever follows until the stream has been quiet for QUIET_MS. Checks
 * that it got exactly `want` ("a,b"), and over delta that the others
 * were reported missing (rule D8).
 */
static void expect_served(const struct xdt_daemon *d, enum listener how,
			  const char *who, size_t m, const char *want)
{
	struct xdc_conn *c = connect_as(d, how, who);
	struct xdc_stream *s = subscribe(c, m);
	struct seen seen = {0};
	bool not_got[NNAMES];
	char *got, *missing, *others;

	ck_assert_msg(next(s, m, &seen, WAIT_MS), "%s: %s: no response",
		      methods[m].label, who ? who : "no certificate");
	while (next(s, m, &seen, QUIET_MS))
		;
	got = list(seen.got);
	ck_assert_msg(strcmp(got, want) == 0, "%s: %s was sent [%s], not [%s]",
		      methods[m].label, who ? who : "no certificate", got, want);
	if (methods[m].delta) {
		for (size_t i = 0; i < NNAMES; i++)
			not_got[i] = !seen.got[i];
		missing = list(seen.missing);
		others = list(not_got);
		ck_assert_msg(strcmp(missing, others) == 0,
			      "%s: %s was told [%s] do not exist, not [%s]",
			      methods[m].label, who ? who : "no certificate",
			      missing, others);
		free(missing);
		free(others);
	}
	free(got);
	xdc_stream_free(s);
	xdc_conn_free(c);
}

/* Each identity gets its own key and the shared ones, never another's,
 * whatever the method; an identity no "@allow" names gets only what
 * every certificate may. */
START_TEST(one_identity_cannot_obtain_anothers_key)
{
	size_t m = (size_t)_i;
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;

	free(xdtest_write_file(dir, "default.yaml", snapshot_text(FRONTEND)));
	d = start(dir, MTLS);
	expect_served(d, MTLS, "frontend", m, "ca,frontend-key,mesh-key");
	expect_served(d, MTLS, "backend", m, "backend-key,ca,mesh-key");
	expect_served(d, MTLS, "dnsonly", m, "ca,mesh-key");
	expect_served(d, MTLS, "cnonly", m, "ca,mesh-key");
	/* verified, but naming no identity (no SAN, no common name: gRPC
	 * gives it the empty one): mesh-key too, as --check's warning for
	 * secrets without "@allow" says */
	expect_served(d, MTLS, "noid", m, "ca,mesh-key");
	stop(d);
	free(dir);
}
END_TEST

/* A secret without "@allow" (mesh-key) is served only to a client that
 * proved an identity: not over TLS without a client certificate, not
 * over plaintext; nor is any secret an "@allow" names identities for.
 * "@anyone" serves everyone. */
START_TEST(secrets_need_a_client_certificate)
{
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;

	free(xdtest_write_file(dir, "default.yaml", snapshot_text(FRONTEND)));
	d = start(dir, TLS);
	for (size_t m = 0; m < NMETHODS; m++)
		expect_served(d, TLS, NULL, m, "ca");
	stop(d);
	d = start(dir, PLAINTEXT);
	for (size_t m = 0; m < NMETHODS; m++)
		expect_served(d, PLAINTEXT, NULL, m, "ca");
	/* the clusters beside them are served as ever */
	{
		struct xdc_conn *c = xdc_connect(d->target);
		struct xdc_stream *s = xdc_watch_clusters(c, "n-2", "prod");

		ck_assert_int_eq(xdc_next_clusters(s, WAIT_MS, NULL), 1);
		xdc_stream_free(s);
		xdc_conn_free(c);
	}
	stop(d);
	free(dir);
}
END_TEST

/*
 * A reload that gives the frontend's key to the backend instead takes
 * it from the frontend's streams (delta: removed, rule D4) and gives it
 * to the backend's, although the key's bytes did not change.
 */
START_TEST(a_reload_moves_a_key_to_another_identity)
{
	size_t m = (size_t)_i;
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_conn *fc, *bc;
	struct xdc_stream *fs, *bs;
	struct seen fseen = {0}, bseen = {0};
	int k = name_index("frontend-key");

	free(xdtest_write_file(dir, "default.yaml", snapshot_text(FRONTEND)));
	d = start(dir, MTLS);
	fc = connect_as(d, MTLS, "frontend");
	bc = connect_as(d, MTLS, "backend");
	fs = subscribe(fc, m);
	bs = subscribe(bc, m);
	ck_assert(next(fs, m, &fseen, WAIT_MS));
	ck_assert(next(bs, m, &bseen, WAIT_MS));
	ck_assert(fseen.got[k] && !bseen.got[k]);

	free(xdtest_write_file(dir, "default.yaml", snapshot_text(BACKEND)));
	xdt_daemon_signal(d, SIGHUP);
	ck_assert(xdt_daemon_wait_log(d, "1 changed", WAIT_MS));
	ck_assert_msg(next(bs, m, &bseen, WAIT_MS), "%s: the backend was sent nothing",
		      methods[m].label);
	ck_assert(bseen.got[k]);
	if (methods[m].delta) {
		ck_assert_msg(next(fs, m, &fseen, WAIT_MS),
			      "%s: the frontend was not told", methods[m].label);
		ck_assert(fseen.removed[k]);
	}
	xdc_stream_free(fs);
	xdc_stream_free(bs);
	xdc_conn_free(fc);
	xdc_conn_free(bc);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A secret a client asks for and may not have is refused in the open:
 * xdsd warns, naming the node, the identity, the secret and "@allow",
 * once per stream (a SotW client repeats its names on every request),
 * and /metrics counts it; a reload that takes a secret away from an
 * identity that asks for it is told the same way.
 */
START_TEST(a_withheld_secret_is_told)
{
	size_t m = (size_t)_i;
	char *dir = xdtest_snapdir();
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s1, *s2;
	struct seen seen = {0};
	const char *series = "xdsd_resources_withheld_total{type=\"secrets\"}";
	char backend_key[256], frontend_key[256];

	snprintf(backend_key, sizeof(backend_key),
		 "node 'n-1': may not be served SDS 'backend-key': its \"@allow\" names no glob that identity '%s' matches; told it does not exist",
		 FRONTEND);
	snprintf(frontend_key, sizeof(frontend_key),
		 "node 'n-1': may not be served SDS 'frontend-key': its \"@allow\" names no glob that identity '%s' matches",
		 FRONTEND);
	free(xdtest_write_file(dir, "default.yaml", snapshot_text(FRONTEND)));
	d = start(dir, MTLS);
	c = connect_as(d, MTLS, "frontend");
	s1 = subscribe(c, m);
	ck_assert(next(s1, m, &seen, WAIT_MS));
	ck_assert_msg(xdt_daemon_wait_log(d, backend_key, WAIT_MS),
		      "%s: no warning \"%s\"", methods[m].label, backend_key);
	while (next(s1, m, &seen, QUIET_MS)) /* its ACKs ask again */
		;
	ck_assert_int_eq(xdt_daemon_log_count(d, backend_key), 1);
	ck_assert_int_eq((int)xdt_daemon_metric(d, series), 1);
	/* another stream is told again */
	s2 = subscribe(c, m);
	ck_assert(next(s2, m, &seen, WAIT_MS));
	ck_assert(xdt_daemon_wait_log_count(d, backend_key, 2, WAIT_MS));
	ck_assert_int_eq((int)xdt_daemon_metric(d, series), 2);
	/* the frontend's key goes to the backend: both streams ask for it */
	free(xdtest_write_file(dir, "default.yaml", snapshot_text(BACKEND)));
	xdt_daemon_signal(d, SIGHUP);
	ck_assert_msg(xdt_daemon_wait_log_count(d, frontend_key, 2, WAIT_MS),
		      "%s: the reload's refusals were not told", methods[m].label);
	ck_assert_int_eq((int)xdt_daemon_metric(d, series), 4);
	ck_assert_int_eq(xdt_daemon_log_count(d, backend_key), 2);
	xdc_stream_free(s1);
	xdc_stream_free(s2);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* The lines of `text` that start with `prefix`, counted. */
static int count_lines(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			n++;
	return n;
}

/*
 * --check warns of each secret without "@allow" (mesh-key in YAML, one
 * in JSON, which has no line numbers), and of no other, saying who may
 * fetch it under each configuration: every certificate, nobody without
 * client_ca. The check still passes.
 */
START_TEST(check_warns_of_secrets_without_allow)
{
	char *dir = xdtest_snapdir(), text[4096], want[2][2048], *cfg, *out, *err;
	const char *args[] = {"--check", "-c", NULL, "--schema",
			      xdtest_env("XDSD_SCHEMA"), NULL};
	static const struct {
		const char *extra, *yaml_tail, *json_tail;
	} cases[] = {
		{"tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n",
		 "every client with a certificate that tls.client_ca verifies may fetch it, whatever identity it names, if any: with no authorize rules, any such client may claim a node of snapshot 'default'",
		 "every client with a certificate that tls.client_ca verifies may fetch it, whatever identity it names, if any: with no authorize rules, any such client may claim a node of snapshot 'edge'"},
		{"tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n"
		 "authorize:\n- {identity: \"spiffe://example.org/*\", node_cluster: edge}\n",
		 "every client of snapshot 'default' with a certificate that tls.client_ca verifies may fetch it, whatever identity it names, if any",
		 "every client of snapshot 'edge' with a certificate that tls.client_ca verifies may fetch it, whatever identity it names, if any"},
		{"",
		 "no client may fetch it: without \"@allow\" a secret is served only to clients with a certificate that tls.client_ca verifies, and tls.client_ca is not set",
		 "no client may fetch it: without \"@allow\" a secret is served only to clients with a certificate that tls.client_ca verifies, and tls.client_ca is not set"},
	};

	free(xdtest_write_file(dir, "default.yaml", snapshot_text(FRONTEND)));
	free(xdtest_write_file(dir, "edge.json",
			       "{\"secrets\": [{\"name\": \"edge-key\", \"tls_certificate\": "
			       "{\"private_key\": {\"inline_string\": \"MARK-edge\"}}}]}\n"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = snprintf(text, sizeof(text), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);

		snprintf(text + n, sizeof(text) - (size_t)n, cases[i].extra,
			 xdtest_cert("server.pem"), xdtest_cert("server.key"),
			 xdtest_cert("ca.pem"));
		cfg = xdtest_write_file(xdtest_tmpdir(), "check.yaml", text);
		args[2] = cfg;
		ck_assert_int_eq(xdt_run_xdsd(args, &out, &err), 0);
		ck_assert_ptr_nonnull(strstr(out, "check.yaml: valid; effective configuration:"));
		snprintf(want[0], sizeof(want[0]),
			 "warning: %s/default.yaml:8:3: secrets[2] 'mesh-key': no \"@allow\": %s\n",
			 dir, cases[i].yaml_tail);
		snprintf(want[1], sizeof(want[1]),
			 "warning: %s/edge.json: secrets[0] 'edge-key': no \"@allow\": %s\n",
			 dir, cases[i].json_tail);
		ck_assert_msg(strstr(err, want[0]) != NULL, "case %zu: no\n%s in:\n%s", i,
			      want[0], err);
		ck_assert_msg(strstr(err, want[1]) != NULL, "case %zu: no\n%s in:\n%s", i,
			      want[1], err);
		ck_assert_msg(count_lines(err, "warning: ") == 2, "case %zu:\n%s", i, err);
		free(out);
		free(err);
		free(cfg);
	}
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("secrets");
	TCase *tc = tcase_create("secrets");

	xdtest_make_certs();

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, one_identity_cannot_obtain_anothers_key, 0,
			    (int)NMETHODS);
	tcase_add_test(tc, secrets_need_a_client_certificate);
	tcase_add_test(tc, check_warns_of_secrets_without_allow);
	tcase_add_loop_test(tc, a_reload_moves_a_key_to_another_identity, 0,
			    (int)NMETHODS);
	tcase_add_loop_test(tc, a_withheld_secret_is_told, 0, (int)NMETHODS);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
