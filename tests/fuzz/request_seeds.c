/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes the synthetic seeds of the request fuzzer (fuzz_request.c) into
 * the directory named by its argument: streams no real client we can run
 * sends (the clients captured in seeds-request/ speak SotW over ADS
 * only), written with protobuf-c as a client's library would write them:
 * delta on ADS and per-type methods, reconnections with
 * initial_resource_versions, unsubscriptions, NACKs with error details,
 * aliases, unknown types, a changed node, and node metadata nested
 * thousands deep (tests/lib/hostile.c).
 *
 * Each seed is in the fuzzer's input format (see fuzz_request.c): a
 * method byte, then operations. Names and contents refer to the
 * fuzzer's fixed snapshots, so that the seeds reach past "not found".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "envoy/config/core/v3/base.pb-c.h"
#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/rpc/status.pb-c.h"
#include "hostile.h"
#include "xds/rtype.h"

/* The fuzzer's method byte and operations. */
enum { DELTA = 1, ADS = 2 };
enum { OP_REQUEST = 0, OP_RELOAD = 1, OP_TICK = 2, OP_ANSWER = 3, OP_NACK = 4 };

#define MAX_SEED 65536
#define MAX_LIST 512
#define LIST_BYTES 4096

struct seed {
	uint8_t data[MAX_SEED];
	size_t len;
	bool delta;
	uint8_t stream; /* the op bit of the stream that speaks (0 or 8) */
};

static void put(struct seed *s, const void *p, size_t n)
{
	if (s->len + n > sizeof(s->data)) {
		fprintf(stderr, "request-seeds: a seed outgrew %d bytes\n", MAX_SEED);
		exit(1);
	}
	memcpy(s->data + s->len, p, n);
	s->len += n;
}

static void begin(struct seed *s, unsigned method)
{
	uint8_t m = (uint8_t)method;

	s->len = 0;
	s->delta = (method & DELTA) != 0;
	s->stream = 0;
	put(s, &m, 1);
}

/* A per-type method serving `t`. */
static unsigned per_type(enum xd_rtype t)
{
	return (unsigned)t << 2;
}

static void op(struct seed *s, uint8_t code, int arg)
{
	put(s, &code, 1);
	if (arg >= 0) {
		uint8_t a = (uint8_t)arg;

		put(s, &a, 1);
	}
}

/* What follows is said by the first stream (0) or the second (1). */
static void on_stream(struct seed *s, int stream)
{
	s->stream = stream ? 8 : 0;
}

static void raw_request(struct seed *s, const uint8_t *msg, size_t len)
{
	uint8_t hdr[3] = {OP_REQUEST | s->stream, (uint8_t)len,
			  (uint8_t)(len >> 8)};

	if (len > 0xffff) {
		fprintf(stderr, "request-seeds: a request outgrew 64 KiB\n");
		exit(1);
	}
	put(s, hdr, sizeof(hdr));
	put(s, msg, len);
}

static void packed(struct seed *s, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);

	if (buf == NULL)
		abort();
	protobuf_c_message_pack(m, buf);
	raw_request(s, buf, len);
	free(buf);
}

static void answer(struct seed *s) { op(s, OP_ANSWER | s->stream, -1); }
static void nack(struct seed *s) { op(s, OP_ANSWER | OP_NACK | s->stream, -1); }
static void reload(struct seed *s, int snapshot) { op(s, OP_RELOAD, snapshot); }
static void tick(struct seed *s, int tenths) { op(s, OP_TICK, tenths); }

static void write_seed(const struct seed *s, const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(s->data, 1, s->len, f) != s->len ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* ---------------- messages ---------------- */

static const char *url(enum xd_rtype t)
{
	return xd_rtype_info(t)->type_url;
}

/*
 * The node a sidecar describes itself with; `wrapped` announces
 * xds.config.supports-resource-in-sotw (rule L2: resources come wrapped in
 * SotW), `id` may change.
 */
static Envoy__Config__Core__V3__Node *node(const char *id, bool wrapped)
{
	static Envoy__Config__Core__V3__Node n;
	static Envoy__Config__Core__V3__Locality loc;
	static char *features[] = {"envoy.lb.does_not_support_overprovisioning",
				   "xds.config.supports-resource-ttl",
				   "xds.config.supports-resource-in-sotw"};

	envoy__config__core__v3__node__init(&n);
	envoy__config__core__v3__locality__init(&loc);
	loc.region = "eu-west";
	loc.zone = "eu-west-1a";
	n.id = (char *)id;
	n.cluster = "demo";
	n.locality = &loc;
	n.user_agent_name = "envoy";
	n.user_agent_version_type_case =
		ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_VERSION;
	n.user_agent_version = "1.31.0";
	n.client_features = features;
	n.n_client_features = wrapped ? 3 : 2;
	return &n;
}

/* "a,b,c" into v (pointing into buf); the count. */
static size_t split(char *buf, size_t size, const char *list, char **v)
{
	size_t n = 0;

	if (list == NULL)
		return 0;
	snprintf(buf, size, "%s", list);
	for (char *p = strtok(buf, ","); p != NULL && n < MAX_LIST;
	     p = strtok(NULL, ","))
		v[n++] = p;
	return n;
}

static Google__Rpc__Status *status(const char *message)
{
	static Google__Rpc__Status st;
	static Google__Protobuf__Any detail, *details[] = {&detail};
	static uint8_t bytes[] = {0x0a, 0x03, 'x', 'y', 'z'};

	google__rpc__status__init(&st);
	google__protobuf__any__init(&detail);
	st.code = 3; /* INVALID_ARGUMENT */
	st.message = (char *)message;
	/* details are never read: one is here to be skipped */
	detail.type_url = "type.googleapis.com/google.protobuf.StringValue";
	detail.value.data = bytes;
	detail.value.len = sizeof(bytes);
	st.details = details;
	st.n_details = 1;
	return &st;
}

/* A SotW DiscoveryRequest; NULLs leave fields out. */
static void sotw(struct seed *s, Envoy__Config__Core__V3__Node *n,
		 const char *type_url, const char *version, const char *nonce,
		 const char *names, const char *error)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest r =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	char buf[LIST_BYTES], *v[MAX_LIST];

	r.node = n;
	r.type_url = (char *)type_url;
	if (version != NULL)
		r.version_info = (char *)version;
	if (nonce != NULL)
		r.response_nonce = (char *)nonce;
	r.n_resource_names = split(buf, sizeof(buf), names, v);
	r.resource_names = v;
	if (error != NULL)
		r.error_detail = status(error);
	packed(s, &r.base);
}

/* A DeltaDiscoveryRequest; `initial` is "name=version,...". */
static void delta(struct seed *s, Envoy__Config__Core__V3__Node *n,
		  const char *type_url, const char *subscribe,
		  const char *unsubscribe, const char *initial,
		  const char *nonce, const char *error)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest r =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
	static Envoy__Service__Discovery__V3__DeltaDiscoveryRequest__InitialResourceVersionsEntry
		entries[MAX_LIST], *pentries[MAX_LIST];
	static char sbuf[LIST_BYTES], ubuf[LIST_BYTES], ibuf[LIST_BYTES],
		*sv[MAX_LIST], *uv[MAX_LIST], *iv[MAX_LIST];
	size_t ni;

	r.node = n;
	r.type_url = (char *)type_url;
	r.n_resource_names_subscribe = split(sbuf, sizeof(sbuf), subscribe, sv);
	r.resource_names_subscribe = sv;
	r.n_resource_names_unsubscribe = split(ubuf, sizeof(ubuf), unsubscribe, uv);
	r.resource_names_unsubscribe = uv;
	ni = split(ibuf, sizeof(ibuf), initial, iv);
	for (size_t i = 0; i < ni; i++) {
		char *eq = strchr(iv[i], '=');

		envoy__service__discovery__v3__delta_discovery_request__initial_resource_versions_entry__init(
			&entries[i]);
		entries[i].key = iv[i];
		if (eq != NULL) {
			*eq = '\0';
			entries[i].value = eq + 1;
		}
		pentries[i] = &entries[i];
	}
	r.n_initial_resource_versions = ni;
	r.initial_resource_versions = pentries;
	if (nonce != NULL)
		r.response_nonce = (char *)nonce;
	if (error != NULL)
		r.error_detail = status(error);
	packed(s, &r.base);
}

/*
 * Resource locators (rule P1) from "name:key=value,name,..." (a name
 * without ':' has no parameters), into static storage: `slot` 0 for
 * subscribing, 1 for unsubscribing. The count in *n.
 */
static Envoy__Service__Discovery__V3__ResourceLocator **
locators(const char *list, int slot, size_t *n)
{
	static Envoy__Service__Discovery__V3__ResourceLocator loc[2][16], *ploc[2][16];
	static Envoy__Service__Discovery__V3__ResourceLocator__DynamicParametersEntry
		par[2][16], *ppar[2][16];
	static char buf[2][LIST_BYTES];
	char *v[MAX_LIST];
	size_t k = split(buf[slot], sizeof(buf[slot]), list, v);

	*n = k < 16 ? k : 16;
	for (size_t i = 0; i < *n; i++) {
		char *colon = strchr(v[i], ':'), *eq;

		envoy__service__discovery__v3__resource_locator__init(&loc[slot][i]);
		loc[slot][i].name = v[i];
		if (colon != NULL && (eq = strchr(colon, '=')) != NULL) {
			*colon = *eq = '\0';
			envoy__service__discovery__v3__resource_locator__dynamic_parameters_entry__init(
				&par[slot][i]);
			par[slot][i].key = colon + 1;
			par[slot][i].value = eq + 1;
			ppar[slot][i] = &par[slot][i];
			loc[slot][i].dynamic_parameters = &ppar[slot][i];
			loc[slot][i].n_dynamic_parameters = 1;
		}
		ploc[slot][i] = &loc[slot][i];
	}
	return ploc[slot];
}

/* A DeltaDiscoveryRequest subscribing and unsubscribing by locator. */
static void delta_locators(struct seed *s, Envoy__Config__Core__V3__Node *n,
			   const char *type_url, const char *subscribe,
			   const char *unsubscribe, const char *nonce)
{
	Envoy__Service__Discovery__V3__DeltaDiscoveryRequest r =
		ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;

	r.node = n;
	r.type_url = (char *)type_url;
	r.resource_locators_subscribe =
		locators(subscribe, 0, &r.n_resource_locators_subscribe);
	r.resource_locators_unsubscribe =
		locators(unsubscribe, 1, &r.n_resource_locators_unsubscribe);
	if (nonce != NULL)
		r.response_nonce = (char *)nonce;
	packed(s, &r.base);
}

/* A SotW DiscoveryRequest asking by locator. */
static void sotw_locators(struct seed *s, Envoy__Config__Core__V3__Node *n,
			  const char *type_url, const char *version,
			  const char *nonce, const char *list)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest r =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

	r.node = n;
	r.type_url = (char *)type_url;
	if (version != NULL)
		r.version_info = (char *)version;
	if (nonce != NULL)
		r.response_nonce = (char *)nonce;
	r.resource_locators = locators(list, 0, &r.n_resource_locators);
	packed(s, &r.base);
}

/*
 * The version xdsd gives the fuzzer's resource `name` with `content`
 * (fuzz_request.c: the message {1: name, 15: content}; the version is
 * the XXH3-64 of it in hex), so a reconnecting client can say it holds
 * exactly that. "name=version" in a static buffer.
 */
static const char *held(const char *name, const char *content)
{
	static char out[8][96];
	static int next;
	uint8_t msg[128];
	size_t n = 0, ln = strlen(name), lc = strlen(content);
	char *o = out[next++ % 8];

	msg[n++] = 0x0a;
	msg[n++] = (uint8_t)ln;
	memcpy(msg + n, name, ln);
	n += ln;
	msg[n++] = 0x7a; /* field 15, length-delimited */
	msg[n++] = (uint8_t)lc;
	memcpy(msg + n, content, lc);
	n += lc;
	snprintf(o, sizeof(out[0]), "%s=%016llx", name,
		 (unsigned long long)XXH3_64bits(msg, n));
	return o;
}

/*
 * The version of a table of the fuzzer's resources "name=content ..."
 * (given in name order): the XXH3-64 of each name with its NUL and its
 * version, in hex, as the tables compute it. For a reconnecting client
 * that says it holds exactly that (rule S12).
 */
static const char *table_version(const char *spec)
{
	static char out[17];
	char buf[256], *save = NULL;
	XXH3_state_t *st = XXH3_createState();

	if (st == NULL)
		abort();
	XXH3_64bits_reset(st);
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *w = strtok_r(buf, " ", &save); w != NULL;
	     w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '=');
		const char *v;

		*eq = '\0';
		v = strchr(held(w, eq + 1), '=') + 1;
		XXH3_64bits_update(st, w, strlen(w) + 1);
		XXH3_64bits_update(st, v, 16);
	}
	snprintf(out, sizeof(out), "%016llx",
		 (unsigned long long)XXH3_64bits_digest(st));
	XXH3_freeState(st);
	return out;
}

/* ---------------- the seeds ---------------- */

int main(int argc, char **argv)
{
	static struct seed s;
	static char list[LIST_BYTES];
	const char *dir;

	if (argc != 2) {
		fprintf(stderr, "usage: request-seeds DIR\n");
		return 2;
	}
	dir = argv[1];

	/* Delta over ADS as Envoy does it: clusters by wildcard, their
	 * endpoints, listeners, routes; a reload that changes every type
	 * and drops a cluster (make before break); then all gone. */
	begin(&s, ADS | DELTA);
	delta(&s, node("sidecar-1", false), url(XD_CLUSTER), NULL, NULL, NULL, NULL, NULL);
	answer(&s);
	delta(&s, NULL, url(XD_ENDPOINT), "demo,c2", NULL, NULL, NULL, NULL);
	answer(&s);
	delta(&s, NULL, url(XD_LISTENER), NULL, NULL, NULL, NULL, NULL);
	answer(&s);
	delta(&s, NULL, url(XD_ROUTE), "demo,r2", NULL, NULL, NULL, NULL);
	answer(&s);
	reload(&s, 1);
	answer(&s);
	delta(&s, NULL, url(XD_ENDPOINT), "c3", "c2", NULL, NULL, NULL);
	for (int i = 0; i < 6; i++)
		answer(&s);
	reload(&s, 3);
	for (int i = 0; i < 6; i++)
		answer(&s);
	write_seed(&s, dir, "delta-ads-envoy");

	/* A reconnection (rule D7): the client holds some resources at the
	 * current version, one at another, one that is gone. */
	begin(&s, ADS | DELTA);
	snprintf(list, sizeof(list), "%s,c2=0123456789abcdef,gone=0000000000000000",
		 held("demo", "D1"));
	delta(&s, node("sidecar-1", false), url(XD_CLUSTER), "*", NULL, list, NULL, NULL);
	answer(&s);
	snprintf(list, sizeof(list), "%s,%s", held("demo", "E1"), held("c2", "E2"));
	delta(&s, NULL, url(XD_ENDPOINT), "demo,c2", NULL, list, NULL, NULL);
	answer(&s);
	reload(&s, 1);
	for (int i = 0; i < 4; i++)
		answer(&s);
	write_seed(&s, dir, "delta-ads-reconnect");

	/* Subscriptions narrowed and widened again (rules D5, D6), "*" on and
	 * off, stale and foreign nonces (rule D9). */
	begin(&s, ADS | DELTA);
	delta(&s, node("sidecar-1", false), url(XD_ENDPOINT), "demo,c2,spare,nothing",
	      NULL, NULL, NULL, NULL);
	answer(&s);
	delta(&s, NULL, url(XD_ENDPOINT), NULL, "c2,spare,never", NULL, NULL, NULL);
	delta(&s, NULL, url(XD_ENDPOINT), "c2", NULL, NULL, "1", NULL);
	answer(&s);
	delta(&s, NULL, url(XD_CLUSTER), "*,demo", NULL, NULL, NULL, NULL);
	answer(&s);
	delta(&s, NULL, url(XD_CLUSTER), NULL, "*", NULL, "7", NULL);
	delta(&s, NULL, url(XD_CLUSTER), NULL, "demo", NULL, "x1", NULL);
	answer(&s);
	write_seed(&s, dir, "delta-ads-unsubscribe");

	/* NACKs with error details (never read past code and message), and
	 * the next change after a NACK. */
	begin(&s, ADS | DELTA);
	delta(&s, node("sidecar-1", false), url(XD_CLUSTER), "*", NULL, NULL, NULL, NULL);
	delta(&s, NULL, url(XD_CLUSTER), NULL, NULL, NULL, "1",
	      "cluster demo: unknown field 'lb_polcy'");
	nack(&s);
	reload(&s, 1);
	delta(&s, NULL, url(XD_CLUSTER), NULL, NULL, NULL, "2", "refused again");
	answer(&s);
	write_seed(&s, dir, "delta-ads-nack");

	/* Virtual hosts by alias (rule D10), some missing (rule D8); the
	 * alias moves to another resource and then becomes a name of its
	 * own. */
	begin(&s, ADS | DELTA);
	delta(&s, node("sidecar-1", false), url(XD_VIRTUAL_HOST),
	      "vh1,demo/a,demo/b,vh2,demo/none", NULL, NULL, NULL, NULL);
	answer(&s);
	reload(&s, 1);
	answer(&s);
	reload(&s, 2);
	answer(&s);
	delta(&s, NULL, url(XD_VIRTUAL_HOST), NULL, "demo/a", NULL, NULL, NULL);
	answer(&s);
	write_seed(&s, dir, "delta-ads-vhds");

	/* A per-type delta method (EDS), and one asked for a wrong type. */
	begin(&s, DELTA | per_type(XD_ENDPOINT));
	delta(&s, node("sidecar-1", false), "", "demo,c2,gone", NULL, NULL, NULL, NULL);
	answer(&s);
	reload(&s, 1);
	answer(&s);
	delta(&s, NULL, url(XD_CLUSTER), "demo", NULL, NULL, NULL, NULL);
	write_seed(&s, dir, "delta-eds");

	/* SotW over ADS as Envoy does it, with a reload and stale nonces. */
	begin(&s, ADS);
	sotw(&s, node("sidecar-1", false), url(XD_CLUSTER), NULL, NULL, NULL, NULL);
	answer(&s);
	sotw(&s, NULL, url(XD_ENDPOINT), NULL, NULL, "demo,c2", NULL);
	answer(&s);
	sotw(&s, NULL, url(XD_LISTENER), NULL, NULL, NULL, NULL);
	answer(&s);
	sotw(&s, NULL, url(XD_ROUTE), NULL, NULL, "demo", NULL);
	answer(&s);
	reload(&s, 1);
	answer(&s);
	tick(&s, 5);
	sotw(&s, NULL, url(XD_ENDPOINT), "", "2", "demo,c3", NULL);
	sotw(&s, NULL, url(XD_ROUTE), "", "99", "demo,r2", NULL);
	for (int i = 0; i < 6; i++)
		answer(&s);
	tick(&s, 30);
	for (int i = 0; i < 4; i++)
		answer(&s);
	write_seed(&s, dir, "sotw-ads-envoy");

	/* Listeners wait for the endpoints of the clusters (rule A2) and then
	 * go on without them. */
	begin(&s, ADS);
	sotw(&s, node("sidecar-1", false), url(XD_CLUSTER), NULL, NULL, NULL, NULL);
	answer(&s);
	sotw(&s, NULL, url(XD_LISTENER), NULL, NULL, NULL, NULL);
	tick(&s, 10);
	tick(&s, 15);
	answer(&s);
	write_seed(&s, dir, "sotw-ads-eds-wait");

	/* gRPC-style: resources wrapped (rule L2), virtual hosts by alias, a
	 * NACK, secrets and runtime. */
	begin(&s, ADS);
	sotw(&s, node("grpc-client", true), url(XD_SECRET), NULL, NULL, "s1,s2", NULL);
	answer(&s);
	sotw(&s, NULL, url(XD_RUNTIME), NULL, NULL, "rt", NULL);
	nack(&s);
	sotw(&s, NULL, url(XD_VIRTUAL_HOST), NULL, NULL, "demo/a,vh2", NULL);
	sotw(&s, NULL, url(XD_SCOPED_ROUTE), NULL, NULL, NULL, NULL);
	for (int i = 0; i < 4; i++)
		answer(&s);
	reload(&s, 2);
	for (int i = 0; i < 4; i++)
		answer(&s);
	write_seed(&s, dir, "sotw-ads-wrapped");

	/* A per-type SotW method (CDS): a legacy wildcard, the same list
	 * again, an explicit "*", NACK of a version. */
	begin(&s, per_type(XD_CLUSTER));
	sotw(&s, node("sidecar-1", false), "", NULL, NULL, NULL, NULL);
	sotw(&s, NULL, url(XD_CLUSTER), "", "1", NULL, "bad cluster");
	reload(&s, 1);
	answer(&s);
	sotw(&s, NULL, url(XD_LISTENER), NULL, NULL, NULL, NULL);
	write_seed(&s, dir, "sotw-cds");

	/* Reconnecting wildcard clients that hold the current clusters and
	 * listeners are not sent them again (rule S12); an explicit "*"
	 * beside a name. */
	begin(&s, ADS);
	sotw(&s, node("sidecar-1", false), url(XD_CLUSTER),
	     table_version("c2=C2 demo=D1 static=X1"), NULL, NULL, NULL);
	sotw(&s, NULL, url(XD_LISTENER), table_version("demo=L1 l2=L2"), NULL,
	     NULL, NULL);
	sotw(&s, NULL, url(XD_ROUTE), "0123456789abcdef", NULL, "demo", NULL);
	answer(&s);
	reload(&s, 1);
	for (int i = 0; i < 4; i++)
		answer(&s);
	write_seed(&s, dir, "sotw-ads-resume");
	begin(&s, per_type(XD_LISTENER));
	sotw(&s, node("sidecar-1", false), url(XD_LISTENER),
	     table_version("demo=L1 l2=L2"), NULL, "*", NULL);
	sotw(&s, NULL, url(XD_LISTENER), "", NULL, "*,demo", NULL);
	answer(&s);
	write_seed(&s, dir, "sotw-lds-resume-star");

	/* A per-type SotW method (EDS) narrowing and widening (rule S7). */
	begin(&s, per_type(XD_ENDPOINT));
	sotw(&s, node("sidecar-1", false), url(XD_ENDPOINT), NULL, NULL, "demo,c2", NULL);
	sotw(&s, NULL, url(XD_ENDPOINT), "x", "1", "demo", NULL);
	sotw(&s, NULL, url(XD_ENDPOINT), "x", "1", "demo,c2,spare", NULL);
	answer(&s);
	write_seed(&s, dir, "sotw-eds");

	/* Types xdsd does not serve on ADS, more than it remembers. */
	begin(&s, ADS);
	sotw(&s, node("sidecar-1", false), "type.googleapis.com/x.A", NULL, NULL, "a", NULL);
	sotw(&s, NULL, "type.googleapis.com/x.A", NULL, "1", "a", NULL);
	sotw(&s, NULL, "type.googleapis.com/x.B", NULL, NULL, NULL, NULL);
	sotw(&s, NULL, url(XD_CLUSTER), NULL, NULL, NULL, NULL);
	sotw(&s, NULL, "type.googleapis.com/x.C", NULL, NULL, NULL, NULL);
	sotw(&s, NULL, "type.googleapis.com/x.D", NULL, NULL, NULL, NULL);
	sotw(&s, NULL, "type.googleapis.com/x.E", NULL, NULL, NULL, NULL);
	write_seed(&s, dir, "sotw-ads-unknown");

	begin(&s, ADS | DELTA);
	delta(&s, node("sidecar-1", false), "type.googleapis.com/x.A", "a,b", NULL,
	      NULL, NULL, NULL);
	delta(&s, NULL, "type.googleapis.com/x.A", NULL, NULL, NULL, "1", NULL);
	delta(&s, NULL, "type.googleapis.com/x.A", "c", "a", NULL, NULL, NULL);
	delta(&s, NULL, url(XD_CLUSTER), "*", NULL, NULL, NULL, NULL);
	write_seed(&s, dir, "delta-ads-unknown");

	/* The node changes on the stream (rule S1): the stream ends. */
	begin(&s, ADS);
	sotw(&s, node("sidecar-1", false), url(XD_CLUSTER), NULL, NULL, NULL, NULL);
	sotw(&s, node("sidecar-1", false), url(XD_LISTENER), NULL, NULL, NULL, NULL);
	sotw(&s, node("sidecar-2", false), url(XD_ROUTE), NULL, NULL, "demo", NULL);
	write_seed(&s, dir, "sotw-ads-node-change");

	/* No node at all: the default snapshot. */
	begin(&s, ADS | DELTA);
	delta(&s, NULL, url(XD_LISTENER), "demo", NULL, NULL, NULL, NULL);
	answer(&s);
	write_seed(&s, dir, "delta-ads-no-node");

	/* Two streams of one fleet: the second meets what the first had
	 * computed (bodies, the make-before-break union), and must be
	 * served right by it. */
	for (int d = 0; d < 2; d++) {
		begin(&s, ADS | (d == 1 ? DELTA : 0));
		for (int k = 0; k < 2; k++) {
			on_stream(&s, k);
			if (d == 1) {
				delta(&s, node(k ? "sidecar-2" : "sidecar-1", false),
				      url(XD_CLUSTER), NULL, NULL, NULL, NULL, NULL);
				answer(&s);
				delta(&s, NULL, url(XD_ENDPOINT), k ? "demo" : "demo,c2",
				      NULL, NULL, NULL, NULL);
				answer(&s);
				delta(&s, NULL, url(XD_LISTENER), NULL, NULL, NULL, NULL, NULL);
				answer(&s);
			} else {
				sotw(&s, node(k ? "sidecar-2" : "sidecar-1", false),
				     url(XD_CLUSTER), NULL, NULL, NULL, NULL);
				answer(&s);
				sotw(&s, NULL, url(XD_ENDPOINT), NULL, NULL,
				     k ? "demo" : "demo,c2", NULL);
				answer(&s);
				sotw(&s, NULL, url(XD_LISTENER), NULL, NULL, NULL, NULL);
				answer(&s);
			}
		}
		reload(&s, 1);
		for (int i = 0; i < 6; i++) {
			on_stream(&s, i & 1);
			answer(&s);
		}
		tick(&s, 25);
		for (int i = 0; i < 6; i++) {
			on_stream(&s, i & 1);
			answer(&s);
		}
		write_seed(&s, dir, d == 1 ? "delta-ads-two-streams" : "sotw-ads-two-streams");
	}

	/* Hundreds of names: name sets past their first index size. */
	{
		size_t n = 0;

		for (int i = 0; i < 300; i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%sn%d",
					      i ? "," : "", i);
		snprintf(list + n, sizeof(list) - n, ",demo");
	}
	begin(&s, ADS | DELTA);
	delta(&s, node("sidecar-1", false), url(XD_ENDPOINT), list, NULL, NULL, NULL, NULL);
	answer(&s);
	/* unsubscribes the names from about the fiftieth on */
	delta(&s, NULL, url(XD_ENDPOINT), NULL, strchr(list + 200, ',') + 1, NULL,
	      NULL, NULL);
	answer(&s);
	write_seed(&s, dir, "delta-ads-many-names");
	begin(&s, per_type(XD_ENDPOINT));
	sotw(&s, node("sidecar-1", false), url(XD_ENDPOINT), NULL, NULL, list, NULL);
	answer(&s);
	/* narrows to the names from about the thirtieth on (rule S7) */
	sotw(&s, NULL, url(XD_ENDPOINT), NULL, NULL, strchr(list + 100, ',') + 1, NULL);
	answer(&s);
	write_seed(&s, dir, "sotw-eds-many-names");

	/* TTLs (rule L1): resources with one, held until heartbeats are
	 * due (half the shortest TTL), answered; a reload that gives one a
	 * TTL, drops another's and changes a third's alone. Delta, then SotW
	 * wrapped (the TTL forms), then a node without the feature. */
	for (int d = 0; d < 3; d++) {
		begin(&s, ADS | (d == 0 ? DELTA : 0));
		if (d == 0)
			delta(&s, node("sidecar-1", false), url(XD_SECRET), "s2", NULL,
			      NULL, NULL, NULL);
		else
			sotw(&s, node("grpc-client", d == 1), url(XD_SECRET), NULL,
			     NULL, "s2", NULL);
		answer(&s);
		if (d == 0) {
			delta(&s, NULL, url(XD_RUNTIME), "rt", NULL, NULL, NULL, NULL);
			answer(&s);
			delta(&s, NULL, url(XD_ENDPOINT), "demo,spare", NULL, NULL,
			      NULL, NULL);
		} else {
			sotw(&s, NULL, url(XD_RUNTIME), NULL, NULL, "rt", NULL);
			answer(&s);
			sotw(&s, NULL, url(XD_ENDPOINT), NULL, NULL, "demo,spare", NULL);
		}
		answer(&s);
		tick(&s, 8);
		answer(&s);
		tick(&s, 10);
		for (int i = 0; i < 3; i++)
			answer(&s);
		tick(&s, 12);
		nack(&s);
		tick(&s, 20);
		for (int i = 0; i < 3; i++)
			answer(&s);
		reload(&s, 1);
		for (int i = 0; i < 3; i++)
			answer(&s);
		tick(&s, 15);
		for (int i = 0; i < 3; i++)
			answer(&s);
		reload(&s, 2);
		for (int i = 0; i < 3; i++)
			answer(&s);
		tick(&s, 30);
		answer(&s);
		write_seed(&s, dir, d == 0 ? "delta-ads-ttl" :
				    d == 1 ? "sotw-ads-ttl" : "sotw-ads-no-ttl");
	}

	/* A glob collection of xdstp names (rules X1, X2) in delta: its
	 * members come, one goes and another comes with a reload, the
	 * collection is left and asked for again beside a member outside it. */
	begin(&s, ADS | DELTA);
	delta(&s, node("sidecar-1", false), url(XD_ENDPOINT),
	      "xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/g/*",
	      NULL, NULL, NULL, NULL);
	answer(&s);
	reload(&s, 1);
	answer(&s);
	reload(&s, 2);
	answer(&s);
	tick(&s, 12);
	answer(&s);
	delta(&s, NULL, url(XD_ENDPOINT), NULL,
	      "xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/g/*",
	      NULL, NULL, NULL);
	answer(&s);
	reload(&s, 0);
	delta(&s, NULL, url(XD_ENDPOINT),
	      "xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/g/*,"
	      "xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/h/e3,"
	      "xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/g/e2",
	      NULL, NULL, NULL, NULL);
	answer(&s);
	delta(&s, NULL, url(XD_ENDPOINT), NULL,
	      "xdstp://a/envoy.config.endpoint.v3.ClusterLoadAssignment/g/*",
	      NULL, NULL, NULL);
	answer(&s);
	reload(&s, 3);
	answer(&s);
	write_seed(&s, dir, "delta-ads-glob");

	/* Variants (rule P1): secrets asked for by locator, by parameters
	 * that pick a variant, none, or the plain resource; a reload that
	 * changes the variants; a locator dropped. */
	begin(&s, ADS | DELTA);
	delta_locators(&s, node("sidecar-1", false), url(XD_SECRET),
		       "s1:env=prod,s1:env=dev,s1:env=test,s2", NULL, NULL);
	answer(&s);
	reload(&s, 1);
	answer(&s);
	tick(&s, 16);
	answer(&s);
	reload(&s, 2);
	answer(&s);
	delta_locators(&s, NULL, url(XD_SECRET), NULL, "s1:env=dev", NULL);
	answer(&s);
	reload(&s, 0);
	answer(&s);
	write_seed(&s, dir, "delta-ads-variants");
	begin(&s, ADS);
	sotw_locators(&s, node("grpc-client", true), url(XD_SECRET), NULL, NULL,
		      "s1:env=prod,s2");
	answer(&s);
	reload(&s, 1);
	answer(&s);
	tick(&s, 16);
	answer(&s);
	reload(&s, 2);
	answer(&s);
	write_seed(&s, dir, "sotw-ads-variants");

	/* Node metadata nested 500 deep (6.5 kB): skipped unread. */
	for (int d = 0; d < 2; d++) {
		size_t len;
		uint8_t *msg = xdt_deep_node_request(d == 1, url(XD_CLUSTER), "demo",
						     "deep", "demo", 500, &len);

		begin(&s, ADS | (d == 1 ? DELTA : 0));
		raw_request(&s, msg, len);
		answer(&s);
		free(msg);
		write_seed(&s, dir, d == 1 ? "delta-ads-deep-node" : "sotw-ads-deep-node");
	}
	return 0;
}
