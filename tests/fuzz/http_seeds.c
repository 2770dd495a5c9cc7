/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes the seeds of the HTTP endpoints' fuzz target (fuzz_http.c) into
 * the directory named on the command line: well-formed requests for
 * every admin page and every REST-JSON type, each alone, pipelined and
 * split across sends; the admin guard's cases; held polls answered by a
 * change, by the poll timeout and by the client leaving; the bounds
 * (body, head, rate, connections per address, slow heads). Written at
 * `make fuzz-http` and `make check` time, so that they follow the
 * input format (fuzz_http.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_http.h"

#define SEED_MAX 65536

struct seed {
	unsigned char buf[SEED_MAX];
	size_t len;
};

static const char *dir;
static int written;

static void byte(struct seed *s, unsigned v)
{
	if (s->len == SEED_MAX) {
		fprintf(stderr, "http-seeds: a seed over %d bytes\n", SEED_MAX);
		exit(1);
	}
	s->buf[s->len++] = (unsigned char)v;
}

static void op(struct seed *s, enum fh_op o, int slot, int variant)
{
	byte(s, FH_OP(o, slot, variant));
}

static void send_n(struct seed *s, int slot, const char *data, size_t n)
{
	op(s, FH_SEND, slot, 0);
	byte(s, n & 0xff);
	byte(s, n >> 8);
	for (size_t i = 0; i < n; i++)
		byte(s, (unsigned char)data[i]);
}

static void send_s(struct seed *s, int slot, const char *text)
{
	send_n(s, slot, text, strlen(text));
}

static void run(struct seed *s, unsigned n)
{
	op(s, FH_RUN, 0, 0);
	byte(s, n);
}

static void wait_ms(struct seed *s, unsigned ms)
{
	op(s, FH_RUN, 0, 1);
	byte(s, ms);
}

static void rd(struct seed *s, int slot)
{
	op(s, FH_READ, slot, 0);
}

static void reload(struct seed *s, unsigned variant, int ask)
{
	op(s, FH_RELOAD, 0, !ask);
	byte(s, variant);
}

static void poll_(struct seed *s, int slot, unsigned type, unsigned flags)
{
	op(s, FH_POLL, slot, 0);
	byte(s, type);
	byte(s, flags);
}

static void save(struct seed *s, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(s->buf, 1, s->len, f) != s->len ||
	    fclose(f) != 0) {
		fprintf(stderr, "http-seeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	written++;
	s->len = 0;
}

/* One request alone on an admin slot, answered. */
static void one(const char *name, int slot, const char *request)
{
	static struct seed s;

	send_s(&s, slot, request);
	run(&s, 8);
	rd(&s, slot);
	save(&s, name);
}

#define H "Host: 127.0.0.1:18080\r\n"

static const struct {
	const char *name, *request;
} admin[] = {
	{"admin-status", "GET /status HTTP/1.1\r\n" H "\r\n"},
	{"admin-status-json", "GET /status.json HTTP/1.1\r\n" H "\r\n"},
	{"admin-clients", "GET /clients HTTP/1.1\r\n" H "\r\n"},
	{"admin-clients-filter",
	 "GET /clients?node=n%2A&state=synced HTTP/1.1\r\n" H "\r\n"},
	{"admin-clients-bad", "GET /clients?state=bored HTTP/1.1\r\n" H "\r\n"},
	{"admin-loads", "GET /loads?cluster=w%2A HTTP/1.1\r\n" H "\r\n"},
	{"admin-dump", "GET /config_dump HTTP/1.1\r\n" H "\r\n"},
	{"admin-dump-default",
	 "GET /config_dump?snapshot=default HTTP/1.1\r\n" H "\r\n"},
	{"admin-dump-name",
	 "GET /config_dump?snapshot=c1&type=clusters&name=c1only HTTP/1.1\r\n" H "\r\n"},
	{"admin-dump-type",
	 "GET /config_dump?snapshot=default&type=secrets HTTP/1.1\r\n" H "\r\n"},
	{"admin-dump-bad-type",
	 "GET /config_dump?snapshot=default&type=nope HTTP/1.1\r\n" H "\r\n"},
	{"admin-dump-no-snapshot",
	 "GET /config_dump?snapshot=zz HTTP/1.1\r\n" H "\r\n"},
	{"admin-dump-name-alone",
	 "GET /config_dump?snapshot=default&name=a HTTP/1.1\r\n" H "\r\n"},
	{"admin-metrics", "GET /metrics HTTP/1.1\r\n" H "\r\n"},
	{"admin-healthz", "GET /healthz HTTP/1.1\r\n" H "\r\n"},
	{"admin-ready", "GET /ready HTTP/1.1\r\n" H "\r\n"},
	{"admin-root", "GET / HTTP/1.1\r\n" H "\r\n"},
	{"admin-head-status", "HEAD /status HTTP/1.1\r\n" H "\r\n"},
	{"admin-head-metrics", "HEAD /metrics HTTP/1.1\r\n" H "\r\n"},
	{"admin-not-found", "GET /nothing HTTP/1.1\r\n" H "\r\n"},
	{"admin-wrong-method", "DELETE /status HTTP/1.1\r\n" H "\r\n"},
	{"admin-get-reload", "GET /reload HTTP/1.1\r\n" H "\r\n"},
	{"admin-reload",
	 "POST /reload HTTP/1.1\r\n" H "Content-Type: application/json\r\n"
	 "Content-Length: 0\r\n\r\n"},
	{"admin-reload-body",
	 "POST /reload HTTP/1.1\r\n" H
	 "Content-Type: application/json; charset=utf-8\r\n"
	 "Content-Length: 2\r\n\r\n{}"},
	{"admin-reload-form",
	 "POST /reload HTTP/1.1\r\n" H
	 "Content-Type: application/x-www-form-urlencoded\r\n"
	 "Content-Length: 3\r\n\r\na=b"},
	{"admin-reload-no-type",
	 "POST /reload HTTP/1.1\r\n" H "Content-Length: 0\r\n\r\n"},
	{"admin-guard-host", "GET /status HTTP/1.1\r\nHost: evil.example\r\n\r\n"},
	{"admin-guard-localhost",
	 "GET /status.json HTTP/1.1\r\nHost: localhost:18080\r\n\r\n"},
	{"admin-guard-v6", "GET /healthz HTTP/1.1\r\nHost: [::1]:18080\r\n\r\n"},
	{"admin-guard-origin",
	 "GET /clients HTTP/1.1\r\n" H "Origin: http://evil.example\r\n\r\n"},
	{"admin-guard-own-origin",
	 "GET /clients HTTP/1.1\r\n" H "Origin: http://127.0.0.1:18080\r\n\r\n"},
	{"admin-guard-null-origin",
	 "GET /metrics HTTP/1.1\r\n" H "Origin: null\r\n\r\n"},
	{"admin-guard-fetch-site",
	 "GET /status HTTP/1.1\r\n" H "Sec-Fetch-Site: cross-site\r\n\r\n"},
	{"admin-guard-same-origin",
	 "GET /status HTTP/1.1\r\n" H "Sec-Fetch-Site: same-origin\r\n\r\n"},
	{"admin-guard-post-origin",
	 "POST /reload HTTP/1.1\r\n" H "Origin: https://evil.example\r\n"
	 "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n"},
	{"admin-http10", "GET /healthz HTTP/1.0\r\n\r\n"},
	{"admin-http10-keep-alive",
	 "GET /ready HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	 "GET /healthz HTTP/1.0\r\n\r\n"},
	{"admin-close",
	 "GET /healthz HTTP/1.1\r\n" H "Connection: close\r\n\r\nGET /ready HTTP/1.1\r\n\r\n"},
	{"admin-byte-after-close",
	 "GET /healthz HTTP/1.1\r\n" H "Connection: close\r\n\r\nX"},
	{"admin-pipelined",
	 "GET /healthz HTTP/1.1\r\n" H "\r\nGET /nothing HTTP/1.1\r\n" H
	 "\r\nHEAD /status HTTP/1.1\r\n" H "\r\nGET /ready HTTP/1.1\r\n" H
	 "\r\nGET /status.json HTTP/1.1\r\n" H "\r\n"},
	{"admin-body-too-large",
	 "POST /reload HTTP/1.1\r\n" H "Content-Type: application/json\r\n"
	 "Content-Length: 5000\r\n\r\n{}"},
	{"admin-chunked",
	 "POST /reload HTTP/1.1\r\n" H "Content-Type: application/json\r\n"
	 "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
	{"admin-both-framings",
	 "POST /reload HTTP/1.1\r\n" H "Content-Type: application/json\r\n"
	 "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}"},
	{"admin-expect",
	 "POST /reload HTTP/1.1\r\n" H "Content-Type: application/json\r\n"
	 "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{}"},
	{"admin-bare-lf", "GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n"},
	{"admin-http2", "GET /healthz HTTP/2.0\r\n\r\n"},
	{"admin-garbage", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"},
	{"admin-absolute", "GET http://127.0.0.1/healthz HTTP/1.1\r\n" H "\r\n"},
	{"admin-percent", "GET /%68ealthz HTTP/1.1\r\n" H "\r\n"},
};

static const char *const types[FH_REST_TYPES] = FH_REST_PATHS;
static const char *const urls[FH_REST_TYPES] = {
	"type.googleapis.com/envoy.config.listener.v3.Listener",
	"type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
	"type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration",
	"type.googleapis.com/envoy.config.cluster.v3.Cluster",
	"type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
	"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
	"type.googleapis.com/envoy.service.runtime.v3.Runtime",
};

/* A REST-JSON request of type `i` with this body. */
static void rest_request(char *out, size_t cap, int i, const char *body,
			 const char *extra)
{
	snprintf(out, cap,
		 "POST /v3/discovery:%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Content-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n%s",
		 types[i], extra, strlen(body), body);
}

static void rest_seeds(void)
{
	static struct seed s;
	char req[8192], body[4096], name[64];

	for (int i = 0; i < FH_REST_TYPES; i++) {
		/* a DiscoveryRequest as Envoy sends one, and its poll */
		snprintf(body, sizeof(body),
			 "{\"node\":{\"id\":\"n1\",\"cluster\":\"%s\","
			 "\"userAgentName\":\"envoy\",\"userAgentVersion\":\"1.30.0\","
			 "\"locality\":{\"region\":\"r\",\"zone\":\"z\"},"
			 "\"metadata\":{\"k\":\"v\"}},\"typeUrl\":\"%s\"}",
			 i % 2 ? "c1" : "web", urls[i]);
		rest_request(req, sizeof(req), i, body, "");
		send_s(&s, 4, req);
		run(&s, 8);
		rd(&s, 4);
		snprintf(name, sizeof(name), "rest-%s", types[i]);
		save(&s, name);

		/* with the names it wants, then held at what it got */
		snprintf(body, sizeof(body),
			 "{\"versionInfo\":\"\",\"node\":{\"id\":\"n1\"},"
			 "\"resourceNames\":[\"a\",\"c1only\",\"l0\",\"r0\",\"ca\",\"key\",\"rt0\",\"sr0\"],"
			 "\"typeUrl\":\"%s\",\"responseNonce\":\"\"}",
			 urls[i]);
		rest_request(req, sizeof(req), i, body, "");
		send_s(&s, 5, req);
		run(&s, 8);
		rd(&s, 5);
		poll_(&s, 5, (unsigned)i, FH_POLL_VERSION | FH_POLL_NONCE | FH_POLL_NAMES);
		wait_ms(&s, FH_TIMEOUT_MS + 4); /* rest_poll_timeout */
		rd(&s, 5);
		snprintf(name, sizeof(name), "rest-%s-names-held", types[i]);
		save(&s, name);
	}

	/* held, then the snapshots change */
	poll_(&s, 4, 3, FH_POLL_VERSION | FH_POLL_C1);
	run(&s, 4);
	reload(&s, 1, 1);
	wait_ms(&s, 15);
	rd(&s, 4);
	save(&s, "rest-held-changed");

	/* held, then POST /reload with nothing changed, then a change */
	poll_(&s, 4, 4, FH_POLL_VERSION | FH_POLL_FEATURES);
	send_s(&s, 0, "POST /reload HTTP/1.1\r\n" H
		      "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n");
	wait_ms(&s, 15);
	rd(&s, 0);
	reload(&s, 1, 0);
	send_s(&s, 0, "POST /reload HTTP/1.1\r\n" H
		      "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n");
	wait_ms(&s, 15);
	rd(&s, 0);
	rd(&s, 4);
	save(&s, "rest-held-admin-reload");

	/* a refused reload: the poll stays held, the reload answers 422 */
	poll_(&s, 4, 3, FH_POLL_VERSION);
	reload(&s, 2, 0);
	send_s(&s, 1, "POST /reload HTTP/1.1\r\n" H
		      "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n");
	wait_ms(&s, 15);
	rd(&s, 1);
	reload(&s, 3, 1);
	wait_ms(&s, 15);
	rd(&s, 4);
	save(&s, "rest-reload-refused");

	/* held, and the client leaves: with a FIN, a reset, half-closed */
	poll_(&s, 4, 0, FH_POLL_VERSION);
	poll_(&s, 5, 3, FH_POLL_VERSION | FH_POLL_C1);
	poll_(&s, 6, 5, FH_POLL_VERSION | FH_POLL_FEATURES);
	run(&s, 4);
	op(&s, FH_CLOSE, 4, 0);
	op(&s, FH_CLOSE, 5, 1);
	op(&s, FH_SHUT, 6, 0);
	run(&s, 8);
	save(&s, "rest-held-gone");

	/* requests pipelined behind a held poll */
	poll_(&s, 4, 3, FH_POLL_VERSION);
	poll_(&s, 4, 0, 0);
	send_s(&s, 4, "GET /v3/discovery:clusters HTTP/1.1\r\n\r\n"
		      "POST /nothing HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	run(&s, 4);
	rd(&s, 4);
	reload(&s, 1, 1);
	wait_ms(&s, 15);
	rd(&s, 4);
	save(&s, "rest-pipeline-behind-poll");

	/* a NACK of what it holds is held too */
	poll_(&s, 4, 3, 0);
	run(&s, 8);
	rd(&s, 4);
	poll_(&s, 4, 3, FH_POLL_VERSION | FH_POLL_NONCE | FH_POLL_NACK);
	wait_ms(&s, FH_TIMEOUT_MS + 4);
	rd(&s, 4);
	save(&s, "rest-nack-held");

	/* the per-connection rate: a burst of 4, then 429 and closed */
	for (int i = 0; i < 6; i++)
		poll_(&s, 4, (unsigned)i, FH_POLL_C1);
	run(&s, 16);
	rd(&s, 4);
	save(&s, "rest-rate");

	/* a poll that asks to close */
	poll_(&s, 7, 1, FH_POLL_CLOSE | FH_POLL_NAMES);
	run(&s, 8);
	rd(&s, 7);
	save(&s, "rest-close");

	/* bad bodies */
	{
		static const char *const bad[] = {
			"{\"node\":", "[]", "{\"node\":{\"clustr\":\"c\"}}",
			"{\"typeUrl\":\"type.googleapis.com/envoy.config.route.v3.RouteConfiguration\"}",
			"{\"resourceNames\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]}",
			"{\"node\":{\"id\":\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\"}}",
			"{\"node\":{\"metadata\":{\"a\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}}",
			"{\"versionInfo\":7}", "{\"a\":1,\"a\":2}", "",
			"{\"node\":{\"id\":\"\\u0000\\n\\ud800\"}}",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			rest_request(req, sizeof(req), 3, bad[i], "");
			send_s(&s, 4, req);
			run(&s, 4);
		}
		rd(&s, 4);
		save(&s, "rest-bad-bodies");
	}

	/* wrong method, wrong path, too large */
	send_s(&s, 4, "GET /v3/discovery:clusters HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
		      "HEAD /v3/discovery:listeners HTTP/1.1\r\n\r\n"
		      "POST /v3/discovery:virtual-hosts HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"
		      "POST /v2/discovery:clusters HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
	run(&s, 8);
	rd(&s, 4);
	send_s(&s, 5, "POST /v3/discovery:clusters HTTP/1.1\r\nContent-Length: 9000\r\n\r\n{");
	run(&s, 8);
	rd(&s, 5);
	save(&s, "rest-refusals");
}

static void bounds_seeds(void)
{
	static struct seed s;
	char head[20000];
	size_t n;

	/* one request split across sends, the loop running between */
	send_s(&s, 0, "GET /stat");
	run(&s, 2);
	send_s(&s, 0, "us.json HTTP/1.1\r\nHo");
	run(&s, 2);
	send_s(&s, 0, "st: 127.0.0.1\r\n");
	run(&s, 2);
	send_s(&s, 0, "\r\nGET /healthz HTTP/1.1\r\n\r\nGET /rea");
	run(&s, 4);
	rd(&s, 0);
	send_s(&s, 0, "dy HTTP/1.1\r\n\r\n");
	run(&s, 4);
	rd(&s, 0);
	save(&s, "split");

	/* a REST request split inside its body */
	{
		static const char first[] = "{\"node\":{\"id\":\"n\",";
		static const char second[] = "\"cluster\":\"c1\"}}";

		snprintf(head, sizeof(head),
			 "POST /v3/discovery:clusters HTTP/1.1\r\n"
			 "Content-Length: %zu\r\n\r\n%s",
			 strlen(first) + strlen(second), first);
		send_s(&s, 4, head);
		run(&s, 2);
		send_s(&s, 4, second);
	}
	run(&s, 8);
	rd(&s, 4);
	save(&s, "rest-split-body");

	/* a head over 16 KiB, and one the library's memory refuses */
	n = (size_t)snprintf(head, sizeof(head), "GET /status HTTP/1.1\r\n" H "X-Pad: ");
	memset(head + n, 'a', 17000);
	memcpy(head + n + 17000, "\r\n\r\n", 4);
	send_n(&s, 1, head, n + 17004);
	run(&s, 8);
	rd(&s, 1);
	save(&s, "head-too-large");

	/* a chunked body that grows over the admin's bound as it comes */
	n = (size_t)snprintf(head, sizeof(head),
			     "POST /reload HTTP/1.1\r\n" H
			     "Content-Type: application/json\r\n"
			     "Transfer-Encoding: chunked\r\n\r\n");
	for (int i = 0; i < 3; i++) {
		n += (size_t)snprintf(head + n, sizeof(head) - n, "800\r\n");
		memset(head + n, ' ', 0x800);
		n += 0x800;
		n += (size_t)snprintf(head + n, sizeof(head) - n, "\r\n");
	}
	n += (size_t)snprintf(head + n, sizeof(head) - n, "0\r\n\r\n");
	send_n(&s, 0, head, n);
	run(&s, 8);
	rd(&s, 0);
	save(&s, "chunked-too-large");

	/* a slow head: the header timeout closes it */
	send_s(&s, 0, "GET /status HTTP/1.1\r\nHost:");
	wait_ms(&s, FH_TIMEOUT_MS + 4);
	rd(&s, 0);
	send_s(&s, 4, "POST /v3/discovery:cl");
	wait_ms(&s, FH_TIMEOUT_MS + 4);
	rd(&s, 4);
	save(&s, "slow-heads");

	/* idle keep-alive connections end at the header timeout too */
	send_s(&s, 0, "GET /healthz HTTP/1.1\r\n\r\n");
	wait_ms(&s, FH_TIMEOUT_MS + 5);
	rd(&s, 0);
	save(&s, "idle-keep-alive");

	/* connections per address: 2 from 127.0.0.1, 2 from 127.0.0.2 */
	op(&s, FH_OPEN, 0, 0);
	byte(&s, 0);
	op(&s, FH_OPEN, 1, 0);
	byte(&s, 0);
	op(&s, FH_OPEN, 2, 0);
	byte(&s, 0);
	op(&s, FH_OPEN, 3, 0);
	byte(&s, 1);
	run(&s, 4);
	for (int i = 0; i < 4; i++)
		send_s(&s, i, "GET /healthz HTTP/1.1\r\n\r\n");
	run(&s, 8);
	for (int i = 0; i < 4; i++)
		rd(&s, i);
	save(&s, "per-address");

	/* answers that back up: a small receive buffer, never read */
	op(&s, FH_OPEN, 2, 0);
	byte(&s, 2);
	for (int i = 0; i < 40; i++)
		send_s(&s, 2, "GET /status HTTP/1.1\r\n" H "\r\n");
	run(&s, 31);
	op(&s, FH_CLOSE, 2, 0);
	run(&s, 4);
	save(&s, "unread-answers");

	/* the same, read at last */
	op(&s, FH_OPEN, 2, 0);
	byte(&s, 3);
	for (int i = 0; i < 20; i++)
		send_s(&s, 2, "GET /config_dump?snapshot=default HTTP/1.1\r\n" H "\r\n");
	run(&s, 31);
	rd(&s, 2);
	run(&s, 31);
	rd(&s, 2);
	save(&s, "backed-up-answers");

	/* a reload asked for, then the client leaves before its answer */
	send_s(&s, 3, "POST /reload HTTP/1.1\r\n" H
		      "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n");
	run(&s, 1);
	op(&s, FH_CLOSE, 3, 1);
	wait_ms(&s, 15);
	save(&s, "reload-gone");

	/* pipelined reloads */
	for (int i = 0; i < 3; i++)
		send_s(&s, 3, "POST /reload HTTP/1.1\r\n" H
			      "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n");
	wait_ms(&s, 15);
	rd(&s, 3);
	save(&s, "reload-pipelined");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: http-seeds DIR\n");
		return 2;
	}
	dir = argv[1];
	for (size_t i = 0; i < sizeof(admin) / sizeof(admin[0]); i++)
		one(admin[i].name, (int)(i % FH_ADMIN_SLOTS), admin[i].request);
	rest_seeds();
	bounds_seeds();
	printf("http-seeds: %d seeds in %s\n", written, dir);
	return 0;
}
