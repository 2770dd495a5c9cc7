/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bad clients on the wire: garbage, truncated and malformed requests,
 * a huge name list, too many unknown types, a client that never reads.
 * Each ends (at most) its own stream with a clear status; the daemon and
 * every other stream go on (docs/design.md §6: bad input from a client
 * ends that stream, never the daemon). Against the real xdsd over
 * loopback.
 */
#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"
#include "proto_util.h"
#include "suites.h"
#include "util/log.h"
#include "xdtest.h"

/* A per-type and an aggregated method of each variant. */
static const struct pu_combo wire_combos[] = {
	{"CDS", false, false, PU_CDS},
	{"ADS", false, true, PU_CDS},
	{"delta EDS", true, false, PU_EDS},
	{"delta ADS", true, true, PU_EDS},
};
static const struct pu_combo *ads_combos = &wire_combos[1];

/* A client with a live subscription, to show the daemon and the other
 * streams go on after a bad one ended. */
static struct pu_client *witness(struct pu_env *e, const struct pu_combo *c)
{
	struct pu_client *w = pu_connect(e, c);
	struct pu_resp *r;

	pu_sub(w, c->type, "a", NULL);
	r = pu_expect(w, c->type);
	pu_ack(w, r);
	pu_resp_free(r);
	return w;
}

static void witness_still_served(struct pu_env *e, struct pu_snap *s,
				 struct pu_client *w, enum pu_type t, int variant)
{
	struct pu_resp *r;

	pu_snap_put(s, t, "a", variant, NULL);
	pu_env_set(e, s);
	r = pu_expect(w, t);
	PU_ASSERT_NAMES(r, t, "a");
	pu_ack(w, r);
	pu_resp_free(r);
}

/* Sends raw bytes as one message; the stream must end with `code`. */
static void bad_message(const struct pu_combo *c, const uint8_t *msg,
			size_t len, int code, const char *needle)
{
	struct pu_snap *s = pu_snap_of(c->type, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *w = witness(e, c), *bad = pu_connect(e, c);

	xdc_send(pu_stream(bad), msg, len, pu_wait_ms());
	pu_expect_status(bad, code, needle);
	pu_client_free(bad);
	witness_still_served(e, s, w, c->type, 2);
	/* and a new stream is served */
	bad = pu_connect(e, c);
	pu_sub(bad, c->type, "a", NULL);
	pu_resp_free(pu_expect(bad, c->type));
	pu_client_free(bad);
	pu_client_free(w);
	pu_env_free(e);
	pu_snap_free(s);
}

/* Random bytes (a fixed seed), whose first byte is no valid tag. */
START_TEST(wire_random_bytes)
{
	const struct pu_combo *c = pu_combo(_i);
	uint8_t msg[64];
	uint32_t x = 2463534242u;

	for (size_t i = 0; i < sizeof(msg); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		msg[i] = (uint8_t)x;
	}
	msg[0] = 0x07; /* field 0, wire type 7 */
	bad_message(c, msg, sizeof(msg), GRPC_STATUS_INVALID_ARGUMENT, "malformed");
}
END_TEST

/* A valid request cut in the middle of its last field. */
START_TEST(wire_truncated_request)
{
	const struct pu_combo *c = pu_combo(_i);
	char *names[] = {"aaaaaaaaaa", "bbbbbbbbbb"};
	uint8_t buf[1024];
	size_t len;

	if (c->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest q =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;

		q.type_url = (char *)pu_type_url(c->type);
		q.n_resource_names_subscribe = 2;
		q.resource_names_subscribe = names;
		len = envoy__service__discovery__v3__delta_discovery_request__pack(&q, buf);
	} else {
		Envoy__Service__Discovery__V3__DiscoveryRequest q =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		q.type_url = (char *)pu_type_url(c->type);
		q.n_resource_names = 2;
		q.resource_names = names;
		len = envoy__service__discovery__v3__discovery_request__pack(&q, buf);
	}
	bad_message(c, buf, len - 3, GRPC_STATUS_INVALID_ARGUMENT, "malformed");
}
END_TEST

/* A node field that is no Node. */
START_TEST(wire_malformed_node)
{
	const struct pu_combo *c = pu_combo(_i);
	const char *url = pu_type_url(c->type);
	uint8_t buf[256];
	size_t n = 0, ul = strlen(url);

	buf[n++] = c->delta ? 0x0a : 0x12; /* node: delta 1, SotW 2 */
	buf[n++] = 4;
	memset(buf + n, 0xff, 4); /* an unterminated tag */
	n += 4;
	buf[n++] = c->delta ? 0x12 : 0x22; /* type_url: delta 2, SotW 4 */
	buf[n++] = (uint8_t)ul;
	memcpy(buf + n, url, ul);
	n += ul;
	bad_message(c, buf, n, GRPC_STATUS_INVALID_ARGUMENT, "node");
}
END_TEST

/* An error_detail that is no google.rpc.Status. */
START_TEST(wire_malformed_error_detail)
{
	const struct pu_combo *c = pu_combo(_i);
	const char *url = pu_type_url(c->type);
	uint8_t buf[256];
	size_t n = 0, ul = strlen(url);

	buf[n++] = c->delta ? 0x12 : 0x22; /* type_url */
	buf[n++] = (uint8_t)ul;
	memcpy(buf + n, url, ul);
	n += ul;
	buf[n++] = c->delta ? 0x3a : 0x32; /* error_detail: delta 7, SotW 6 */
	buf[n++] = 3;
	buf[n++] = 0x08; /* code: an unterminated varint */
	buf[n++] = 0xff;
	buf[n++] = 0xff;
	bad_message(c, buf, n, GRPC_STATUS_INVALID_ARGUMENT, "error_detail");
}
END_TEST

/*
 * A node whose metadata nests 3,000 levels deep (about 40 kB, far under
 * the size limit) once overflowed the stack of a recursive decoder.
 * xdsd reads only the node fields it uses and never descends into
 * metadata: the request is served like any other.
 */
START_TEST(wire_deep_node_metadata)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(c->type, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *w = witness(e, c), *deep = pu_connect(e, c);
	size_t len;
	uint8_t *msg = xdt_deep_node_request(c->delta, pu_type_url(c->type),
					     "a", "node-1", "test", 3000, &len);
	struct pu_resp *r;

	PU_ASSERT(len > 30000 && len < 64 * 1024, "request of %zu bytes", len);
	xdc_send(pu_stream(deep), msg, len, pu_wait_ms());
	r = pu_expect(deep, c->type);
	PU_ASSERT_NAMES(r, c->type, "a");
	pu_resp_free(r);
	witness_still_served(e, s, w, c->type, 2);
	free(msg);
	pu_client_free(deep);
	pu_client_free(w);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* 100,000 names in one request (1.2 MB, under max_request_size): served
 * (the one that exists; in delta the others reported missing), and the
 * daemon keeps answering others. How long such a request takes is a
 * figure of bench/served-meanwhile, not a bound of this test: the
 * response is waited for, for as long as a loaded machine may need. */
START_TEST(wire_huge_name_list)
{
	enum { N = 100000 };
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(c->type, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *w = witness(e, c), *big = pu_connect(e, c);
	const char **names = calloc(N, sizeof(*names));
	char *pool = malloc((size_t)N * 12);
	struct pu_resp *r;

	ck_assert(names != NULL && pool != NULL);
	names[0] = "a";
	for (int i = 1; i < N; i++) {
		names[i] = pool + (size_t)i * 12;
		snprintf(pool + (size_t)i * 12, 12, "n%09d", i);
	}
	pu_subv(big, c->type, names, N);
	r = pu_recv(big, 10 * pu_wait_ms());
	PU_ASSERT(r != NULL, "no response to %d names within %d ms", N,
		  10 * pu_wait_ms());
	PU_ASSERT_NAMES(r, c->type, "a");
	/* delta: the others said not to exist, in removed_resources (rule D8) */
	if (c->delta)
		PU_ASSERT(r->nres == 1 && r->nremoved == N - 1,
			  "%zu resources, %zu names said not to exist", r->nres,
			  r->nremoved);
	pu_ack(big, r);
	pu_resp_free(r);
	witness_still_served(e, s, w, c->type, 2);
	r = pu_expect(big, c->type); /* the big stream follows changes too */
	PU_ASSERT_NAMES(r, c->type, "a");
	pu_resp_free(r);
	free(names);
	free(pool);
	pu_client_free(big);
	pu_client_free(w);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* Unknown type URLs are answered (rule T3), but one stream may keep only a
 * few: the fifth ends that stream with INVALID_ARGUMENT. */
START_TEST(wire_too_many_unknown_types)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_of(c->type, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *w = witness(e, c), *bad = pu_connect(e, c);
	char url[128];
	int answered = 0;

	for (int i = 0; i < 5; i++) {
		struct pu_req q = {.type_url = url};

		snprintf(url, sizeof(url), "type.googleapis.com/test.Unknown%d", i);
		pu_send(bad, &q);
	}
	for (;;) {
		struct pu_resp *r = NULL;
		grpc_status_code code;
		char *details = NULL;

		if (xdc_status(pu_stream(bad), &code, &details, 50)) {
			PU_ASSERT(code == GRPC_STATUS_INVALID_ARGUMENT &&
					  strstr(details, "unknown type") != NULL,
				  "status %d '%s'", (int)code, details);
			free(details);
			break;
		}
		r = pu_recv(bad, 50);
		if (r != NULL) {
			answered++;
			pu_resp_free(r);
		}
		PU_ASSERT(answered <= 4, "%d unknown types answered", answered);
	}
	pu_client_free(bad);
	witness_still_served(e, s, w, c->type, 2);
	pu_client_free(w);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* Every line of the log is one line of valid UTF-8 without control
 * characters; none starts with `forged`. */
static void assert_log_clean(struct pu_env *e, const char *forged)
{
	char *log = pu_env_log(e), *line = log;

	for (char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		*nl = '\0';
		PU_ASSERT(strncmp(line, forged, strlen(forged)) != 0,
			  "a client forged a log line: %s", line);
		for (const unsigned char *p = (const unsigned char *)line; *p; p++)
			PU_ASSERT(*p >= 0x20 && *p != 0x7f && *p < 0xf5,
				  "byte 0x%02x in log line: %s", *p, line);
	}
	free(log);
}

/*
 * Node ids, clusters, NACK messages, nonces and type URLs come from
 * clients and go to the log: a newline in them must not start a line of
 * the client's making, and bytes that are not UTF-8 must not reach the
 * journal. They are escaped (\xNN) and long ones clipped.
 */
START_TEST(wire_client_strings_escaped_in_log)
{
	pu_combo(_i); /* the label of failures */
	struct pu_snap *s = pu_snap_of(PU_CDS, "a", NULL);
	struct pu_env *e = pu_env_start(s);
	struct pu_client *c = pu_open(e, false, true, PU_CDS);
	const char *forged = "2031-01-01T00:00:00.000Z error: forged";
	char id[512], msg[512], *long_id = malloc(1001), *log;
	struct pu_req stale = {.type = PU_CDS, .nonce = "stale\nnonce"};
	struct pu_req unknown = {.type_url = "type.googleapis.com/x\n2031-01-01T00:00:00.000Z error: forged"};
	struct pu_resp *r;

	ck_assert(long_id != NULL);
	snprintf(id, sizeof(id), "evil\n%s by the id \xff\xc0\x80\x1b[31m", forged);
	snprintf(msg, sizeof(msg), "bad\r\n%s by the NACK", forged);
	pu_client_node(c, id, "cluster\n2031-01-01T00:00:00.000Z error: forged", NULL);
	pu_sub(c, PU_CDS, "a", NULL);
	r = pu_expect(c, PU_CDS);
	pu_nack(c, r, msg);
	pu_resp_free(r);
	pu_send(c, &stale);
	pu_send(c, &unknown);
	r = pu_recv(c, pu_wait_ms());
	PU_ASSERT(r != NULL && r->type == -1, "no answer for the unknown type");
	pu_resp_free(r);
	pu_env_sync(e);

	/* a long id is clipped, on every line */
	memset(long_id, 'x', 1000);
	long_id[1000] = '\0';
	pu_client_free(c);
	c = pu_open(e, false, true, PU_CDS);
	pu_client_node(c, long_id, "test", NULL);
	pu_sub(c, PU_CDS, "a", NULL);
	pu_resp_free(pu_expect(c, PU_CDS));
	pu_env_sync(e);

	assert_log_clean(e, "2031-01-01T00:00:00.000Z");
	log = pu_env_log(e);
	PU_ASSERT(strstr(log, "node 'evil\\x0a2031-01-01T00:00:00.000Z error: forged by the id \\xff\\xc0\\x80\\x1b[31m'") != NULL,
		  "no escaped node id in the log");
	PU_ASSERT(strstr(log, "bad\\x0d\\x0a2031-01-01T00:00:00.000Z error: forged by the NACK") != NULL,
		  "no escaped NACK message in the log");
	PU_ASSERT(strstr(log, "stale\\x0anonce") != NULL, "no escaped nonce in the log");
	PU_ASSERT(strstr(log, "type 'type.googleapis.com/x\\x0a2031") != NULL,
		  "no escaped type URL in the log");
	long_id[XD_LOG_CLIENT_MAX] = '\0';
	PU_ASSERT(strstr(log, long_id) != NULL, "the long id is not in the log");
	long_id[XD_LOG_CLIENT_MAX] = 'x';
	long_id[XD_LOG_CLIENT_MAX + 1] = '\0';
	PU_ASSERT(strstr(log, long_id) == NULL, "the long id is not clipped");
	free(log);
	free(long_id);
	pu_client_free(c);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * A client that sends requests (guessing nonces, so each could be an
 * ACK asking for a new full state of ~1 MB) but never reads: xdsd stops
 * sending to it once flow control holds a response back (one in flight,
 * a few MB at most), its memory stays bounded, and it goes on serving
 * others meanwhile: between every 50 of its requests another client is
 * sent a change (how soon is bench/served-meanwhile's figure).
 */
START_TEST(wire_client_never_reads)
{
	pu_combo(_i); /* the label of failures */
	enum { CLUSTERS = 300, NAME = 3000, REQUESTS = 300 };
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *w, *mute;
	char *name = malloc(NAME + 16);
	struct pu_resp *r;
	long before, after;
	char *log;
	int sent;

	ck_assert(name != NULL);
	for (int i = 0; i < CLUSTERS; i++) {
		memset(name, 'c', NAME);
		snprintf(name + NAME, 16, "%d", i);
		pu_snap_put(s, PU_CDS, name, 1, NULL);
	}
	pu_snap_put(s, PU_SDS, "a", 1, NULL);
	e = pu_env_start(s);
	w = pu_open(e, false, true, PU_SDS);
	pu_sub(w, PU_SDS, "a", NULL);
	r = pu_expect(w, PU_SDS);
	pu_ack(w, r);
	pu_resp_free(r);
	before = xdt_daemon_rss_kb(e->d);

	mute = pu_open(e, false, true, PU_CDS);
	for (int i = 0; i < REQUESTS; i++) {
		char nonce[16], extra[16];
		const char *names[] = {"*", extra};
		struct pu_req q = {.type = PU_CDS, .names = names,
				   .nnames = (size_t)(i % 2 + 1), .nonce = nonce};

		snprintf(nonce, sizeof(nonce), "%d", i);
		snprintf(extra, sizeof(extra), "x%d", i);
		if (i == 0)
			q.nonce = NULL;
		pu_send(mute, &q);
		if (i % 50 == 49) {
			/* others are served meanwhile */
			pu_snap_put(s, PU_SDS, "a", 2 + i, NULL);
			pu_env_set(e, s);
			r = pu_expect(w, PU_SDS);
			pu_ack(w, r);
			pu_resp_free(r);
		}
	}
	pu_env_sync(e);
	after = xdt_daemon_rss_kb(e->d);
	log = pu_env_log(e);
	sent = 0;
	for (const char *p = log; (p = strstr(p, "sending CDS version")) != NULL; p++)
		sent++;
	free(log);
	ck_assert_msg(sent <= 8, "%d responses of ~1 MB sent to a client that reads none",
		      sent);
	ck_assert_msg(xdt_daemon_has_asan(e->d) || after - before < 100 * 1024,
		      "RSS grew from %ld kB to %ld kB for a client that never reads",
		      before, after);
	pu_client_free(mute); /* cancels: the daemon lets it go */
	ck_assert(xdt_daemon_wait_log(e->d, ": freed", pu_wait_ms()));
	pu_client_free(w);
	pu_env_free(e);
	pu_snap_free(s);
	free(name);
}
END_TEST

void pu_register_wire(Suite *s, bool subset)
{
	if (subset) {
		pu_add_tests(s, "wire", wire_truncated_request, &wire_combos[3], 1);
		return;
	}
	pu_add_tests(s, "wire", wire_random_bytes, wire_combos, 4);
	pu_add_tests(s, "wire", wire_truncated_request, wire_combos, 4);
	pu_add_tests(s, "wire", wire_malformed_node, wire_combos, 4);
	pu_add_tests(s, "wire", wire_malformed_error_detail, wire_combos, 4);
	pu_add_tests(s, "wire", wire_deep_node_metadata, wire_combos, 4);
	pu_add_tests(s, "wire", wire_huge_name_list, wire_combos, 4);
	pu_add_tests(s, "wire", wire_too_many_unknown_types, ads_combos, 1);
	pu_add_tests(s, "wire", wire_too_many_unknown_types, &wire_combos[3], 1);
	pu_add_test(s, "wire", wire_client_never_reads);
	pu_add_test(s, "wire", wire_client_strings_escaped_in_log);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("wire");

	xdtest_tmpdir();
	pu_register_wire(s, false);
	return pu_run(s);
}
#endif
