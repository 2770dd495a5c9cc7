/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the HTTP endpoints (make fuzz-http; clang only):
 * the real admin endpoint and REST-JSON, on libmicrohttpd driven from
 * the libuv loop, set up once as daemon.c sets them up (default
 * configuration, the build's schema, a cache and a reloader over a
 * snapshot directory written here, the sessions for /clients; no gRPC
 * server), and real client sockets on loopback, nonblocking, all on
 * the loop's thread.
 *
 * An input is a little program over eight client connections
 * (fuzz_http.h): open, send bytes, read, close or reset, half-close,
 * run the loop, change the snapshots and reload, send a well-formed
 * REST poll. Built without libFuzzer (http_replay.c) it replays files,
 * which `make check` does with the seeds and the committed corpus.
 *
 * Beyond "no crash, no leak, no undefined behaviour" it checks:
 *   - every answer is a well-formed HTTP/1.1 response: a status line,
 *     headers, exactly one Content-Length and no Transfer-Encoding (for
 *     all but an interim 100), a body of that length (none for HEAD),
 *     nothing after an answer that says Connection: close, nor after
 *     the answer to a request that asked to close, and the server
 *     then closes; a connection the server closed ends on a whole
 *     answer, unless it reset it (a server that closes with bytes
 *     unread resets, and what it had not sent yet is lost: the client
 *     sent more after what closed, its own fault); a 405 says Allow, a
 *     302 Location; a JSON body parses, a text one ends its line;
 *   - while the bytes sent on a connection are requests of a strict
 *     subset of HTTP/1.1 (CRLF lines, known framing, no Expect or
 *     Transfer-Encoding, heads under 8 KiB), they are modelled: no
 *     answer comes without a request, and each answer is one its
 *     request may get, in order (the admin guard as guard.h decides,
 *     the route, the body bound; REST-JSON's path and method), any
 *     other status being a refusal that closes the connection;
 *   - a REST-JSON 200 is a DiscoveryResponse of the path's type (its
 *     typeUrl, a versionInfo, a nonce, resources of that type or
 *     wrapped), and no REST-JSON answer carries the secret that has no
 *     "@allow" (clients without a certificate may not see it);
 *   - held polls never outnumber REST-JSON connections;
 *   - once the input's connections are closed, both servers get back
 *     to no connection, no held poll and no reload running, within
 *     seconds.
 *
 * One defect of libmicrohttpd 0.9.75 (Debian 12's) is let through: its
 * own refusal of a Content-Length it cannot read or take (400, 413)
 * sends its head twice (the connection then closes).
 *
 * Held polls and request heads time out after FH_TIMEOUT_MS, below what
 * xdsd.yaml allows, so that inputs reach both quickly; each input starts
 * from the first snapshots, whatever the one before did.
 *
 * Environment: FUZZ_HTTP_TRACE=1 says what each input does and what
 * comes back; FUZZ_HTTP_LOG=debug|info|warn|error sets xdsd's log level
 * (error by default); XDSD_SCHEMA names the schema (default: the build
 * tree's).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "admin/admin.h"
#include "admin/guard.h"
#include "cache/cache.h"
#include "config/config.h"
#include "config/paths_gen.h" /* XD_BUILD_DIR */
#include "reload/reload.h"
#include "fuzz_http.h"
#include "http/http.h"
#include "protocol/derived.h"
#include "protocol/session.h"
#include "rest/rest.h"
#include "schema/schema.h"
#include "snapshot/snapshot.h"
#include "snapshot/table.h"
#include "util/buf.h"
#include "util/common.h"
#include "util/log.h"
#include "xds/rtype.h"

/* admin.c's body bound (ADMIN_MAX_BODY), which decides its 413s. */
#define ADMIN_MAX_BODY 4096
/* Heads the model reads; longer ones are left to the server alone. */
#define MODEL_HEAD_MAX 8192
/* Bytes of a connection's requests the model follows. */
#define MODEL_SENT_MAX (256u * 1024)
#define MODEL_REQS_MAX 4096
/* An answer's head, at most (xdsd's are a few hundred bytes). */
#define ANSWER_HEAD_MAX 16384
/* Connections an input may open in all (each leaves a TIME_WAIT). */
#define OPENS_MAX 64
/* How long the servers get to close everything after an input. */
#define SETTLE_MS 5000
#define RESOURCE_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"
/* In the secret without "@allow": no REST-JSON answer may hold it. */
#define PRIVATE_MARK "xdsd-fuzz-private-key"

/* ---------------- reporting ---------------- */

static bool trace;
static int report_fd = 2; /* stderr, kept apart from xdsd's log */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(report_fd, line,
			   (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

#define TRACE(...)                                                         \
	do {                                                               \
		if (trace)                                                 \
			say(__VA_ARGS__);                                  \
	} while (0)

#define NEED(cond, ...)                                                    \
	do {                                                               \
		if (!(cond)) {                                             \
			say("%s:%d: invariant failed: %s: ", __FILE__,     \
			    __LINE__, #cond);                              \
			say(__VA_ARGS__);                                  \
			say("\n");                                         \
			abort();                                           \
		}                                                          \
	} while (0)

/* ---------------- the daemon's side ---------------- */

static struct {
	uv_loop_t loop;
	struct xd_config cfg;
	struct xd_schema *schema;
	struct xd_cache *cache;
	struct xd_reloader *reloader;
	struct xd_sessions *sessions;
	struct xd_rest *rest;
	struct xd_admin *admin;
	/* the endpoints' HTTP servers, for their counters */
	struct xd_http_server *admin_http, *rest_http;
	int admin_port, rest_port;
	char dir[PATH_MAX];
	unsigned reloads; /* asked for here, not yet over */
	bool up;
} S;

/*
 * The admin endpoint keeps its HTTP server to itself; the link wraps
 * xd_http_start (-Wl,--wrap=xd_http_start) so that the harness learns
 * both servers and can read their counters.
 */
int __real_xd_http_start(struct xd_http_server **out, uv_loop_t *loop,
			 const struct xd_http_opts *opts, char *why,
			 size_t why_len);
int __wrap_xd_http_start(struct xd_http_server **out, uv_loop_t *loop,
			 const struct xd_http_opts *opts, char *why,
			 size_t why_len);

int __wrap_xd_http_start(struct xd_http_server **out, uv_loop_t *loop,
			 const struct xd_http_opts *opts, char *why,
			 size_t why_len)
{
	int rc = __real_xd_http_start(out, loop, opts, why, why_len);

	if (rc == 0 && strcmp(opts->name, "admin") == 0)
		S.admin_http = *out;
	else if (rc == 0)
		S.rest_http = *out;
	return rc;
}

/* The snapshot directory's variants (fuzz_http.h): default.yaml, and
 * c1.yaml for nodes of cluster c1 (NULL: no such file). */
static const char default_v0[] =
	"clusters:\n"
	"- name: a\n"
	"  connect_timeout: 1s\n"
	"  type: EDS\n"
	"  eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}}\n"
	"- name: b\n"
	"  \"@ttl\": 30s\n"
	"  connect_timeout: 2s\n"
	"endpoints:\n"
	"- cluster_name: a\n"
	"  endpoints:\n"
	"  - lb_endpoints:\n"
	"    - endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 8080}}}\n"
	"listeners:\n"
	"- name: l0\n"
	"  address: {socket_address: {address: 0.0.0.0, port_value: 10000}}\n"
	"routes:\n"
	"- name: r0\n"
	"  virtual_hosts:\n"
	"  - name: all\n"
	"    domains: [\"*\"]\n"
	"    routes:\n"
	"    - match: {prefix: \"/\"}\n"
	"      route: {cluster: a}\n"
	"scoped_routes:\n"
	"- name: sr0\n"
	"  route_configuration_name: r0\n"
	"  key: {fragments: [{string_key: x}]}\n"
	"secrets:\n"
	"- name: ca\n"
	"  \"@allow\": [\"@anyone\"]\n"
	"  validation_context: {trusted_ca: {inline_string: xdsd-fuzz-public-ca}}\n"
	"- name: key\n"
	"  tls_certificate: {private_key: {inline_string: " PRIVATE_MARK "}}\n"
	"runtimes:\n"
	"- name: rt0\n"
	"  layer: {flag: true}\n";

static const char default_v1[] =
	"clusters:\n"
	"- name: a\n"
	"  \"@ttl\": 10s\n"
	"  connect_timeout: 3s\n"
	"  type: EDS\n"
	"  eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}}\n"
	"endpoints:\n"
	"- cluster_name: a\n"
	"  endpoints:\n"
	"  - lb_endpoints:\n"
	"    - endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: 8081}}}\n"
	"listeners:\n"
	"- name: l0\n"
	"  address: {socket_address: {address: 0.0.0.0, port_value: 10002}}\n"
	"routes:\n"
	"- name: r0\n"
	"  virtual_hosts:\n"
	"  - name: all\n"
	"    domains: [\"*\"]\n"
	"    routes:\n"
	"    - match: {prefix: \"/v1\"}\n"
	"      route: {cluster: a}\n"
	"scoped_routes:\n"
	"- name: sr0\n"
	"  route_configuration_name: r0\n"
	"  key: {fragments: [{string_key: y}]}\n"
	"secrets:\n"
	"- name: ca\n"
	"  \"@allow\": [\"@anyone\"]\n"
	"  validation_context: {trusted_ca: {inline_string: xdsd-fuzz-public-ca-2}}\n"
	"- name: key\n"
	"  tls_certificate: {private_key: {inline_string: " PRIVATE_MARK "-2}}\n"
	"runtimes:\n"
	"- name: rt0\n"
	"  layer: {flag: false}\n";

static const char c1_v0[] =
	"clusters:\n"
	"- name: c1only\n"
	"  connect_timeout: 5s\n"
	"listeners:\n"
	"- name: l0\n"
	"  address: {socket_address: {address: 0.0.0.0, port_value: 10001}}\n";

static const struct {
	const char *def, *c1;
} variants[FH_VARIANTS] = {
	{default_v0, c1_v0},
	{default_v1, NULL},
	{"clusters: [\n", c1_v0},
	{"clusters:\n- name: a\n  conect_timeout: 1s\n", c1_v0},
	{"clusters: []\n", c1_v0},
};

/* Writes `text` as dir/name, or removes it (NULL); by a rename, so that
 * a reload running meanwhile reads the old file or the new one. */
static void put_file(const char *name, const char *text)
{
	char path[PATH_MAX + 64], tmp[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", S.dir, name);
	if (text == NULL) {
		NEED(unlink(path) == 0 || errno == ENOENT, "unlink %s: %s", path,
		     strerror(errno));
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", S.dir, name);
	f = fopen(tmp, "w");
	NEED(f != NULL, "%s: %s", tmp, strerror(errno));
	fputs(text, f);
	NEED(fclose(f) == 0, "%s", tmp);
	NEED(rename(tmp, path) == 0, "rename %s: %s", tmp, strerror(errno));
}

static void write_variant(unsigned v)
{
	put_file("default.yaml", variants[v].def);
	put_file("c1.yaml", variants[v].c1);
}

static void reloaded(void *arg XD_UNUSED, const struct xd_reload_record *rec)
{
	TRACE("  reload over: %s\n", rec->ok ? "ok" : "refused");
	S.reloads--;
}

static void remove_dir(void)
{
	static const char *const names[] = {"default.yaml", "c1.yaml",
					    ".default.yaml.tmp", ".c1.yaml.tmp"};
	char path[PATH_MAX + 64];

	for (size_t i = 0; i < XD_ARRAY_LEN(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", S.dir, names[i]);
		unlink(path);
	}
	rmdir(S.dir);
}

static void stopped(void *arg)
{
	*(bool *)arg = true;
}

/* At exit: everything stopped and freed, as daemon.c does, so that
 * LeakSanitizer sees what the inputs left. */
static void teardown(void)
{
	bool admin_done = false, rest_done = false;

	if (!S.up)
		return;
	S.up = false;
	xd_reloader_stop(S.reloader);
	xd_admin_stop(S.admin, stopped, &admin_done);
	xd_rest_stop(S.rest, stopped, &rest_done);
	xd_sessions_free(S.sessions);
	uv_run(&S.loop, UV_RUN_DEFAULT);
	NEED(admin_done && rest_done, "the endpoints did not stop");
	NEED(uv_loop_close(&S.loop) == 0, "handles left open at exit");
	xd_reloader_free(S.reloader);
	xd_cache_free(S.cache);
	xd_schema_free(S.schema);
	xd_config_free(&S.cfg);
	remove_dir();
}

static void setup(void)
{
	const char *schema = getenv("XDSD_SCHEMA");
	const char *level = getenv("FUZZ_HTTP_LOG");
	const char *tmp = getenv("TMPDIR");
	struct xd_diag diag = XD_DIAG_INIT;
	enum xd_log_level lv = XD_LOG_ERROR;
	struct xd_rest_deps rest_deps;
	struct xd_admin_deps admin_deps;

	trace = getenv("FUZZ_HTTP_TRACE") != NULL;
	/* libFuzzer may close stderr (-close_fd_mask=2) to quiet xdsd's
	 * log; what the harness reports goes to a copy of it. */
	report_fd = dup(2);
	if (report_fd < 0)
		report_fd = 2;
	xd_log_init();
	if (level != NULL && xd_log_level_parse(level, &lv) != 0) {
		say("FUZZ_HTTP_LOG: '%s' is not error, warn, info or debug\n", level);
		exit(1);
	}
	xd_log_set_level(lv);

	snprintf(S.dir, sizeof(S.dir), "%s/xdsd-fuzz-http.XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	NEED(mkdtemp(S.dir) != NULL, "mkdtemp %s: %s", S.dir, strerror(errno));
	write_variant(0);

	xd_config_init(&S.cfg, S.dir,
		       schema != NULL ? schema : XD_BUILD_DIR "/proto/xds-api.pb");
	free(S.cfg.admin_listen);
	S.cfg.admin_listen = strdup("127.0.0.1:0");
	free(S.cfg.rest_listen);
	S.cfg.rest_listen = strdup("127.0.0.1:0");
	/* below the 100 ms xdsd.yaml allows, the same code: held polls
	 * and slow heads end within an input that waits a little */
	S.cfg.rest_poll_timeout_ms = FH_TIMEOUT_MS;
	S.cfg.http_header_timeout_ms = FH_TIMEOUT_MS;
	/* bounds an input can reach */
	S.cfg.admin_max_connections_per_address = 2;
	S.cfg.rest_max_connections_per_address = 2;
	S.cfg.max_requests_per_second = 50;
	S.cfg.max_request_burst = 4;
	S.cfg.max_request_size = 8192;
	S.cfg.max_node_size = 512;
	S.cfg.max_node_id_size = 64;
	S.cfg.max_names_per_stream = 8;

	NEED(uv_loop_init(&S.loop) == 0, "uv_loop_init");
	S.schema = xd_schema_load(S.cfg.schema, &diag);
	if (S.schema == NULL) {
		say("fuzz_http: cannot load the schema %s (set XDSD_SCHEMA): %s\n",
		    S.cfg.schema, diag.count > 0 ? diag.msgs[0] : "?");
		exit(1);
	}
	S.cache = xd_cache_new();
	S.reloader = xd_reloader_new(&S.loop, S.schema, S.cache, S.cfg.snapshots, NULL);
	NEED(xd_reloader_load_first(S.reloader) == 0, "the first snapshots");
	S.sessions = xd_sessions_new(&S.loop, S.cache, &S.cfg);

	rest_deps = (struct xd_rest_deps){
		.cfg = &S.cfg, .cache = S.cache, .schema = S.schema};
	NEED(xd_rest_start(&S.rest, &S.loop, &rest_deps) == 0, "REST-JSON starts");
	admin_deps = (struct xd_admin_deps){
		.cfg = &S.cfg,
		.sessions = S.sessions,
		.cache = S.cache,
		.schema = S.schema,
		.reloader = S.reloader,
		.xds_port = 18000, /* no xDS listener here: a number to show */
		.rest = S.rest,
	};
	NEED(xd_admin_start(&S.admin, &S.loop, &admin_deps) == 0, "admin starts");
	xd_admin_set_ready(S.admin, true);
	NEED(S.admin_http != NULL && S.rest_http != NULL,
	     "the HTTP servers were seen starting (--wrap=xd_http_start)");
	S.admin_port = xd_admin_port(S.admin);
	S.rest_port = xd_rest_port(S.rest);
	S.up = true;
	atexit(teardown);
}

/* ---------------- running the loop ---------------- */

static void on_tick(uv_timer_t *t XD_UNUSED)
{
}

/* Runs the loop, waking at least every millisecond, until `done()` or
 * `ms` pass; returns done(). What is due at once (the servers seeing
 * their clients leave) takes a few turns without waiting first. */
static bool run_until(bool (*done)(void), uint64_t ms)
{
	uv_timer_t tick;
	uint64_t start = uv_hrtime();
	bool ok;

	for (int i = 0; done != NULL && i < 64; i++) {
		if (done())
			return true;
		uv_run(&S.loop, UV_RUN_NOWAIT);
	}
	uv_timer_init(&S.loop, &tick);
	uv_timer_start(&tick, on_tick, 1, 1);
	while (!(ok = done != NULL && done()) &&
	       uv_hrtime() - start < ms * 1000000)
		uv_run(&S.loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(&S.loop, UV_RUN_NOWAIT);
	return ok;
}

static size_t conns(const struct xd_http_server *h)
{
	return xd_http_stats(h)->connections;
}

static bool settled(void)
{
	return conns(S.admin_http) == 0 && conns(S.rest_http) == 0 &&
	       xd_rest_stats(S.rest)->waiting == 0 &&
	       !xd_reloader_busy(S.reloader) && S.reloads == 0;
}

/* What holds at any time. */
static void check_live(void)
{
	NEED(xd_rest_stats(S.rest)->waiting <= conns(S.rest_http),
	     "%zu polls held, %zu REST-JSON connections",
	     xd_rest_stats(S.rest)->waiting, conns(S.rest_http));
}

/* ---------------- the client's side ---------------- */

/* Statuses an answer may have, as bits. */
static const int codes[] = {100, 200, 302, 400, 403, 404, 405,
			    413, 415, 422, 429, 431, 500, 503};
static uint32_t bit(int status)
{
	for (size_t i = 0; i < XD_ARRAY_LEN(codes); i++)
		if (codes[i] == status)
			return 1u << i;
	return 0;
}

/* One request the model read: the answers it may get. */
struct req {
	uint32_t route;   /* from the handler */
	uint32_t refusal; /* from the server, closing the connection */
	bool head;        /* HEAD: no body in the answer */
	bool closes;      /* the server closes after answering it */
	int type;         /* REST-JSON: its type, else -1 */
};

struct client {
	int fd;           /* -1: none */
	int slot;
	bool rest;        /* the REST-JSON endpoint, else the admin */
	bool eof;         /* the server closed (or reset) */
	bool reset;       /* by a reset: what it sent last may be lost */

	/* what was sent, as the model reads it */
	struct xd_buf sent;
	size_t mpos, body_left;
	bool modeled;     /* every byte so far was strict requests */
	bool ended;       /* a request that closes was sent */
	struct req *reqs;
	size_t nreqs, answered;

	/* what came back */
	struct xd_buf in;
	size_t ipos;
	bool closing;     /* an answer said the connection ends */
	/* the last REST-JSON answer per type: what a poll holds */
	char version[XD_RTYPE_COUNT][40];
	char nonce[XD_RTYPE_COUNT][40];
};

static struct client clients[FH_SLOTS];
static unsigned opens;

static const char *const rest_paths[FH_REST_TYPES] = FH_REST_PATHS;
static const enum xd_rtype rest_types[FH_REST_TYPES] = {
	XD_LISTENER, XD_ROUTE, XD_SCOPED_ROUTE, XD_CLUSTER,
	XD_ENDPOINT, XD_SECRET, XD_RUNTIME,
};

static void client_reset(struct client *c)
{
	xd_buf_free(&c->sent);
	xd_buf_free(&c->in);
	free(c->reqs);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* ---- the model of the requests sent ---- */

static void unmodel(struct client *c, const char *why)
{
	if (!c->modeled)
		return;
	TRACE("  slot %d: no longer modelled: %s\n", c->slot, why);
	c->modeled = false;
}

static bool tchar(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '-';
}

/* Bytes a modelled request target may hold (no '#', no '%' before the
 * query: the path is compared as sent). */
static bool target_char(int ch, bool in_query)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr("-._~/?=&:@!$'()*+,;", ch) != NULL) ||
	       (in_query && ch == '%');
}

/* What the admin endpoint may answer (admin.c, guard.h). */
static uint32_t admin_route(const char *method, const char *path,
			    const struct xd_admin_request *g, bool guard_known)
{
	static const struct {
		const char *method, *path;
		uint32_t ok;
	} routes[] = {
		{"GET", "/healthz", 0}, {"GET", "/ready", 0},
		{"GET", "/metrics", 0}, {"GET", "/clients", 0},
		{"GET", "/config_dump", 0}, {"POST", "/reload", 0},
		{"GET", "/status", 0}, {"GET", "/status.json", 0},
		{"GET", "/loads", 0}, {"GET", "/fleet.json", 0},
	};
	uint32_t ok[XD_ARRAY_LEN(routes)] = {
		bit(200), bit(200), bit(200), bit(200) | bit(400),
		bit(200) | bit(400) | bit(404), bit(200) | bit(422),
		bit(200), bit(200),
		bit(200) | bit(400) | bit(404), bit(200),
	};
	bool head = strcmp(method, "HEAD") == 0, known = false;
	uint32_t m = 0;
	char why[512];

	if (guard_known) {
		int st = xd_admin_guard(&S.cfg, g, why, sizeof(why));

		if (st != 0)
			return bit(st);
	} else {
		m |= bit(403) | bit(415);
	}
	if (strcmp(path, "/") == 0 && strcmp(method, "GET") == 0)
		return m | bit(302);
	for (size_t i = 0; i < XD_ARRAY_LEN(routes); i++) {
		if (strcmp(routes[i].path, path) != 0)
			continue;
		known = true;
		if (strcmp(routes[i].method, method) == 0 ||
		    (head && strcmp(routes[i].method, "GET") == 0))
			return m | ok[i];
	}
	return m | bit(known ? 405 : 404);
}

/* What REST-JSON may answer (rest.c); its type in *type. */
static uint32_t rest_route(const char *method, const char *path, int *type)
{
	static const char prefix[] = "/v3/discovery:";

	*type = -1;
	if (strncmp(path, prefix, sizeof(prefix) - 1) == 0) {
		for (int i = 0; i < FH_REST_TYPES; i++) {
			if (strcmp(path + sizeof(prefix) - 1, rest_paths[i]) != 0)
				continue;
			if (strcmp(method, "POST") != 0)
				return bit(405);
			*type = (int)rest_types[i];
			return bit(200) | bit(400);
		}
	}
	return bit(404);
}

/*
 * One request head of `len` bytes (its blank line included), in the
 * strict subset the model follows. False when it is not in it.
 */
static bool model_head(struct client *c, const char *p, size_t len,
		       struct req *r, unsigned long long *body)
{
	char *h, *line, *next, *sp, *target, *path;
	char method[17], *q;
	const char *host = NULL, *origin = NULL, *site = NULL, *ctype = NULL;
	int dup_guard = 0, ncl = 0, nconn = 0, nheaders = 0;
	bool v10, keep = false, close_ = false, ok = false;
	unsigned long long cl = 0;
	struct xd_admin_request g;

	/* CRLF line ends only, and no NUL */
	for (size_t i = 0; i < len; i++) {
		if ((p[i] == '\r') != (i + 1 < len && p[i + 1] == '\n'))
			return false;
		if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
			return false;
		if (p[i] == '\0')
			return false;
	}
	h = malloc(len + 1);
	NEED(h != NULL, "malloc");
	memcpy(h, p, len);
	h[len] = '\0';
	/* the request line: METHOD SP target SP HTTP/1.x */
	line = h;
	next = strstr(line, "\r\n");
	*next = '\0';
	sp = strchr(line, ' ');
	if (sp == NULL || sp == line || sp - line > 16)
		goto out;
	for (q = line; q < sp; q++)
		if (*q < 'A' || *q > 'Z')
			goto out;
	memcpy(method, line, (size_t)(sp - line));
	method[sp - line] = '\0';
	target = sp + 1;
	sp = strchr(target, ' ');
	if (sp == NULL || target[0] != '/' || sp - target > 2048)
		goto out;
	*sp = '\0';
	for (q = target; *q != '\0'; q++)
		if (!target_char(*q, strchr(target, '?') != NULL &&
					     q > strchr(target, '?')))
			goto out;
	if (strcmp(sp + 1, "HTTP/1.1") == 0)
		v10 = false;
	else if (strcmp(sp + 1, "HTTP/1.0") == 0)
		v10 = true;
	else
		goto out;
	/* the headers */
	for (line = next + 2; *line != '\r'; line = next + 2) {
		char *colon, *value, *end;

		next = strstr(line, "\r\n");
		*next = '\0';
		colon = strchr(line, ':');
		if (colon == NULL || colon == line || colon - line > 64 ||
		    ++nheaders > 64)
			goto out;
		for (q = line; q < colon; q++)
			if (!tchar(*q))
				goto out;
		*colon = '\0';
		value = colon + 1;
		while (*value == ' ')
			value++;
		for (q = value; *q != '\0'; q++)
			if (*q < 0x20 || *q > 0x7e)
				goto out;
		end = value + strlen(value);
		while (end > value && end[-1] == ' ')
			*--end = '\0';
		if (strcasecmp(line, "content-length") == 0) {
			if (ncl++ > 0 || value[0] == '\0' || strlen(value) > 15 ||
			    (value[0] == '0' && value[1] != '\0'))
				goto out;
			for (q = value; *q != '\0'; q++)
				if (*q < '0' || *q > '9')
					goto out;
			cl = strtoull(value, NULL, 10);
		} else if (strcasecmp(line, "transfer-encoding") == 0 ||
			   strcasecmp(line, "expect") == 0 ||
			   strcasecmp(line, "upgrade") == 0) {
			goto out;
		} else if (strcasecmp(line, "connection") == 0) {
			if (nconn++ > 0)
				goto out;
			if (strcasecmp(value, "close") == 0)
				close_ = true;
			else if (strcasecmp(value, "keep-alive") == 0)
				keep = true;
			else
				goto out;
		} else if (strcasecmp(line, "host") == 0) {
			dup_guard += host != NULL;
			host = value;
		} else if (strcasecmp(line, "origin") == 0) {
			dup_guard += origin != NULL;
			origin = value;
		} else if (strcasecmp(line, "sec-fetch-site") == 0) {
			dup_guard += site != NULL;
			site = value;
		} else if (strcasecmp(line, "content-type") == 0) {
			dup_guard += ctype != NULL;
			ctype = value;
		}
	}
	path = target;
	q = strchr(target, '?');
	if (q != NULL)
		*q = '\0';
	memset(r, 0, sizeof(*r));
	r->head = strcmp(method, "HEAD") == 0;
	r->closes = close_ || (v10 && !keep);
	r->refusal = bit(400) | bit(431);
	r->type = -1;
	if (c->rest) {
		r->refusal |= bit(429);
		if (cl > S.cfg.max_request_size) {
			r->refusal |= bit(413);
			r->closes = true;
		} else {
			r->route = rest_route(method, path, &r->type);
		}
	} else if (cl > ADMIN_MAX_BODY) {
		r->refusal |= bit(413);
		r->closes = true;
	} else {
		g = (struct xd_admin_request){
			.method = method,
			.host = host,
			.origin = origin,
			.fetch_site = site,
			.content_type = ctype,
		};
		r->route = admin_route(method, path, &g, dup_guard == 0);
	}
	*body = cl;
	ok = true;
out:
	free(h);
	return ok;
}

/*
 * Whether the first `len` bytes of a head (no blank line yet) may still
 * become one the model reads: its whole lines are, and what there is of
 * the last holds no byte a strict head cannot. The server may act on a
 * head before its end (a bare LF ends lines for it), so the model must
 * let go as soon as the head leaves the subset.
 */
static bool model_prefix(struct client *c, const char *p, size_t len)
{
	const char *last = NULL;
	size_t whole;
	char *h;
	struct req r;
	unsigned long long body;
	bool ok;

	for (size_t i = 0; i < len; i++) {
		if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
			return false;
		if (p[i] == '\r' && i + 1 < len && p[i + 1] != '\n')
			return false;
		if (p[i] != '\r' && p[i] != '\n' && (p[i] < 0x20 || p[i] > 0x7e))
			return false;
		if (p[i] == '\n')
			last = p + i;
	}
	if (last == NULL)
		return true;
	whole = (size_t)(last - p) + 1;
	h = malloc(whole + 2);
	NEED(h != NULL, "malloc");
	memcpy(h, p, whole);
	memcpy(h + whole, "\r\n", 2);
	ok = model_head(c, h, whole + 2, &r, &body);
	free(h);
	return ok;
}

/* Reads the requests sent on `c` so far. */
static void model_feed(struct client *c)
{
	while (c->modeled && !c->ended) {
		size_t avail = c->sent.len - c->mpos, hlen;
		const char *p = (const char *)c->sent.data + c->mpos, *e;
		unsigned long long body;
		struct req r;

		if (c->body_left > 0) {
			size_t k = avail < c->body_left ? avail : c->body_left;

			c->mpos += k;
			c->body_left -= k;
			if (c->body_left > 0)
				return;
			continue;
		}
		if (avail == 0)
			return;
		e = memmem(p, avail, "\r\n\r\n", 4);
		if (e == NULL) {
			if (avail > MODEL_HEAD_MAX)
				unmodel(c, "a head over 8 KiB");
			else if (!model_prefix(c, p, avail))
				unmodel(c, "a head that cannot become a strict one");
			return;
		}
		hlen = (size_t)(e - p) + 4;
		if (hlen > MODEL_HEAD_MAX) {
			unmodel(c, "a head over 8 KiB");
			return;
		}
		if (!model_head(c, p, hlen, &r, &body)) {
			unmodel(c, "a request outside the strict subset");
			return;
		}
		if (c->nreqs == MODEL_REQS_MAX) {
			unmodel(c, "too many requests");
			return;
		}
		if (c->reqs == NULL)
			c->reqs = calloc(MODEL_REQS_MAX, sizeof(*c->reqs));
		NEED(c->reqs != NULL, "calloc");
		c->reqs[c->nreqs++] = r;
		c->mpos += hlen;
		c->body_left = (size_t)body;
		if (r.closes)
			c->ended = true;
	}
}

/* ---- answers ---- */

struct answer {
	int status;
	long long length;    /* Content-Length, -1: none */
	bool chunked;        /* Transfer-Encoding: chunked (a page sent
			      * while written) */
	bool close;          /* Connection: close */
	bool allow, location;
	char type[128];      /* Content-Type, "" when none */
	size_t head_len;
};

/* The head of an answer: `len` bytes, its blank line included. */
static void parse_head(const struct client *c, const char *p, size_t len,
		       struct answer *a)
{
	const char *line = p, *end = p + len - 2, *eol;
	int nlength = 0;

	memset(a, 0, sizeof(*a));
	a->length = -1;
	a->head_len = len;
	NEED(len >= 17 && memcmp(p, "HTTP/1.1 ", 9) == 0 &&
		     p[9] >= '1' && p[9] <= '5' && p[10] >= '0' &&
		     p[10] <= '9' && p[11] >= '0' && p[11] <= '9' && p[12] == ' ',
	     "slot %d: a bad status line: '%.60s'", c->slot, p);
	a->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	for (;;) {
		const char *colon, *v;
		size_t n;

		eol = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
		NEED(eol != NULL, "slot %d: a header line without its end",
		     c->slot);
		for (const char *q = line; q < eol; q++)
			NEED((*q >= 0x20 && *q <= 0x7e) || *q == '\t',
			     "slot %d: byte 0x%02x in the head: '%.*s'",
			     c->slot, (unsigned char)*q, (int)(eol - line), line);
		if (line == p) { /* the status line */
			line = eol + 2;
			continue;
		}
		if (eol == end)
			break;
		colon = memchr(line, ':', (size_t)(eol - line));
		NEED(colon != NULL && colon > line,
		     "slot %d: a header without a name: '%.*s'", c->slot,
		     (int)(eol - line), line);
		for (const char *q = line; q < colon; q++)
			NEED(tchar(*q), "slot %d: a bad header name '%.*s'",
			     c->slot, (int)(colon - line), line);
		v = colon + 1;
		while (v < eol && *v == ' ')
			v++;
		n = (size_t)(eol - v);
		if ((size_t)(colon - line) == 14 &&
		    strncasecmp(line, "content-length", 14) == 0) {
			char num[24];

			NEED(++nlength == 1 && n > 0 && n < sizeof(num),
			     "slot %d: Content-Length twice or empty", c->slot);
			memcpy(num, v, n);
			num[n] = '\0';
			for (size_t i = 0; i < n; i++)
				NEED(num[i] >= '0' && num[i] <= '9',
				     "slot %d: Content-Length '%s'", c->slot, num);
			a->length = strtoll(num, NULL, 10);
		} else if ((size_t)(colon - line) == 17 &&
			   strncasecmp(line, "transfer-encoding", 17) == 0) {
			/* the one coding xdsd sends: a page sent while it
			 * is written (admin/pager.h) */
			NEED(!a->chunked && n == 7 && strncasecmp(v, "chunked", 7) == 0,
			     "slot %d: Transfer-Encoding '%.*s'", c->slot,
			     (int)n, v);
			a->chunked = true;
		} else if ((size_t)(colon - line) == 10 &&
			   strncasecmp(line, "connection", 10) == 0) {
			if (n == 5 && strncasecmp(v, "close", 5) == 0)
				a->close = true;
		} else if ((size_t)(colon - line) == 12 &&
			   strncasecmp(line, "content-type", 12) == 0) {
			snprintf(a->type, sizeof(a->type), "%.*s", (int)n, v);
		} else if ((size_t)(colon - line) == 5 &&
			   strncasecmp(line, "allow", 5) == 0) {
			a->allow = true;
		} else if ((size_t)(colon - line) == 8 &&
			   strncasecmp(line, "location", 8) == 0) {
			a->location = true;
		}
		line = eol + 2;
	}
	NEED(!(a->chunked && nlength > 0),
	     "slot %d: both Content-Length and Transfer-Encoding", c->slot);
}

/*
 * A chunked body at `p` (`avail` bytes): false while it has not all
 * come; else true with its length on the wire in *raw and its bytes,
 * decoded, in *body (*len of them; the caller frees it).
 */
static bool dechunk(const struct client *c, const char *p, size_t avail,
		    size_t *raw, char **body, size_t *len)
{
	size_t at = 0;
	char *out = NULL;
	size_t n = 0;

	for (;;) {
		const char *eol = memmem(p + at, avail - at, "\r\n", 2);
		size_t size = 0;

		if (eol == NULL)
			goto more;
		NEED(eol > p + at, "slot %d: a chunk without its size", c->slot);
		for (const char *q = p + at; q < eol; q++) {
			int d = *q >= '0' && *q <= '9'   ? *q - '0' :
				*q >= 'a' && *q <= 'f' ? *q - 'a' + 10 :
				*q >= 'A' && *q <= 'F' ? *q - 'A' + 10 :
							 -1;

			NEED(d >= 0 && size < ((size_t)1 << 40),
			     "slot %d: a chunk size '%.*s'", c->slot,
			     (int)(eol - (p + at)), p + at);
			size = size * 16 + (size_t)d;
		}
		at = (size_t)(eol - p) + 2;
		if (size == 0) {
			/* no trailers: the blank line ends it */
			if (avail - at < 2)
				goto more;
			NEED(memcmp(p + at, "\r\n", 2) == 0,
			     "slot %d: trailers after the last chunk", c->slot);
			*raw = at + 2;
			*body = out;
			*len = n;
			return true;
		}
		if (avail - at < size + 2)
			goto more;
		NEED(memcmp(p + at + size, "\r\n", 2) == 0,
		     "slot %d: a chunk of %zu bytes not ended by CRLF", c->slot,
		     size);
		out = realloc(out, n + size + 1);
		NEED(out != NULL, "out of memory");
		memcpy(out + n, p + at, size);
		n += size;
		out[n] = '\0';
		at += size + 2;
	}
more:
	free(out);
	return false;
}

/* A REST-JSON 200: a DiscoveryResponse of its type. Remembered for
 * the slot's next poll. */
static void check_rest_answer(struct client *c, int type, json_t *v)
{
	const char *url = xd_rtype_info((enum xd_rtype)type)->type_url;
	json_t *t = json_object_get(v, "typeUrl");
	json_t *ver = json_object_get(v, "versionInfo");
	json_t *nonce = json_object_get(v, "nonce");
	json_t *res = json_object_get(v, "resources");
	size_t i;
	json_t *r;

	NEED(json_is_object(v), "slot %d: REST-JSON answered a non-object",
	     c->slot);
	NEED(json_is_string(t) && strcmp(json_string_value(t), url) == 0,
	     "slot %d: REST-JSON typeUrl '%s', asked for %s", c->slot,
	     json_is_string(t) ? json_string_value(t) : "?", url);
	NEED(json_is_string(ver) && json_is_string(nonce),
	     "slot %d: REST-JSON answer without versionInfo or nonce", c->slot);
	for (const char *q = json_string_value(nonce); *q != '\0'; q++)
		NEED(*q >= '0' && *q <= '9', "slot %d: nonce '%s'", c->slot,
		     json_string_value(nonce));
	NEED(res == NULL || json_is_array(res),
	     "slot %d: resources is not a list", c->slot);
	json_array_foreach(res, i, r) {
		json_t *rt = json_object_get(r, "@type");

		NEED(json_is_string(rt) &&
			     (strcmp(json_string_value(rt), url) == 0 ||
			      strcmp(json_string_value(rt), RESOURCE_URL) == 0),
		     "slot %d: a resource of type '%s' in a %s answer", c->slot,
		     json_is_string(rt) ? json_string_value(rt) : "?", url);
	}
	snprintf(c->version[type], sizeof(c->version[type]), "%s",
		 json_string_value(ver));
	snprintf(c->nonce[type], sizeof(c->nonce[type]), "%s",
		 json_string_value(nonce));
}

static void check_body(struct client *c, const struct answer *a,
		       const struct req *r, const char *body, size_t len)
{
	if (c->rest)
		NEED(memmem(body, len, PRIVATE_MARK, strlen(PRIVATE_MARK)) == NULL,
		     "slot %d: REST-JSON served the secret without \"@allow\"",
		     c->slot);
	if (strncmp(a->type, "application/json", 16) == 0) {
		json_error_t err;
		json_t *v = json_loadb(body, len, 0, &err);

		NEED(v != NULL, "slot %d: a %d JSON answer that is not JSON: %s: '%.200s'",
		     c->slot, a->status, err.text, body);
		if (r != NULL && r->type >= 0 && a->status == 200)
			check_rest_answer(c, r->type, v);
		json_decref(v);
	} else if (strncmp(a->type, "text/plain", 10) == 0 &&
		   strstr(a->type, "version=") == NULL) {
		NEED(len > 0 && body[len - 1] == '\n',
		     "slot %d: a %d text answer that does not end its line: '%.*s'",
		     c->slot, a->status, (int)(len < 200 ? len : 200), body);
	}
}

/* A whole answer to request `r` (NULL: not modelled), its body
 * decoded. */
static void answered(struct client *c, const struct answer *a,
		     const struct req *r, const char *body, size_t blen)
{
	if (r != NULL) {
		NEED(((r->route | r->refusal) & bit(a->status)) != 0,
		     "slot %d: answer %zu is %d, which its request cannot get",
		     c->slot, c->answered, a->status);
		NEED((r->route & bit(a->status)) != 0 || a->close,
		     "slot %d: the refusal %d keeps the connection open",
		     c->slot, a->status);
		if (r->closes)
			c->closing = true;
	}
	NEED(a->status != 405 || a->allow, "slot %d: a 405 without Allow", c->slot);
	NEED(a->status != 302 || a->location, "slot %d: a 302 without Location",
	     c->slot);
	if (blen > 0)
		check_body(c, a, r, body, blen);
	if (a->close)
		c->closing = true;
	c->answered++;
}

/* Whether `p` (n bytes) may be the start of a status line. */
static bool status_prefix(const char *p, size_t n)
{
	return memcmp(p, "HTTP/1.1 ", n < 9 ? n : 9) == 0;
}

/*
 * Reads the whole answers that came on `c`. `final`: nothing more will
 * come, so what is left is a truncated answer (unless the connection
 * was reset, which may lose what was in flight).
 */
static void parse_answers(struct client *c, bool final)
{
	for (;;) {
		const char *p = (const char *)c->in.data + c->ipos;
		size_t n = c->in.len - c->ipos, avail, blen;
		const struct req *r = NULL;
		const char *e;
		struct answer a;

		if (n == 0)
			break;
		NEED(!c->closing, "slot %d: %zu bytes after the answer that closed: '%.80s'",
		     c->slot, n, p);
		e = memmem(p, n < ANSWER_HEAD_MAX ? n : ANSWER_HEAD_MAX, "\r\n\r\n", 4);
		if (e == NULL) {
			NEED(n < ANSWER_HEAD_MAX, "slot %d: an answer's head over %d bytes",
			     c->slot, ANSWER_HEAD_MAX);
			NEED(!(final && c->eof && !c->reset),
			     "slot %d: the connection closed within an answer's head: '%.*s'",
			     c->slot, (int)n, p);
			break;
		}
		parse_head(c, p, (size_t)(e - p) + 4, &a);
		avail = n - a.head_len;
		if (a.status < 200) {
			NEED(a.status == 100 && a.length < 0,
			     "slot %d: interim answer %d", c->slot, a.status);
			c->ipos += a.head_len;
			continue;
		}
		/* a page sent while written goes chunked, or to an HTTP/1.0
		 * client to the connection's end */
		NEED(a.length >= 0 || a.chunked || a.close,
		     "slot %d: a %d answer without Content-Length", c->slot,
		     a.status);
		/* libmicrohttpd 0.9.75 sends the head of its own refusal of a
		 * Content-Length it cannot read (400) or take (413) twice,
		 * then the body: its defect, not xdsd's (the connection
		 * closes after it anyway). The copy is let through, and only
		 * an exact one, from the library (no Content-Type). */
		if (a.type[0] == '\0' && a.close &&
		    (a.status == 400 || a.status == 413) && avail > 0 &&
		    memcmp(p + a.head_len, p,
			   avail < a.head_len ? avail : a.head_len) == 0) {
			if (avail >= a.head_len) {
				TRACE("  slot %d: libmicrohttpd's %d head came twice\n",
				      c->slot, a.status);
				c->ipos += a.head_len;
				continue;
			}
			if (!(final && c->eof))
				break;
		}
		if (c->answered < c->nreqs)
			r = &c->reqs[c->answered];
		else
			NEED(!c->modeled, "slot %d: an answer (%d) to no request (%zu sent)",
			     c->slot, a.status, c->nreqs);
		/* the body: none for HEAD, which an unmodelled answer shows by
		 * the next status line coming at once */
		if (a.chunked && !(r != NULL ? r->head :
			avail >= 9 && status_prefix(p + a.head_len, avail))) {
			char *body;
			size_t raw, len;

			if (!dechunk(c, p + a.head_len, avail, &raw, &body, &len)) {
				NEED(!(final && c->eof && !c->reset),
				     "slot %d: the connection closed within a chunked %d answer",
				     c->slot, a.status);
				break;
			}
			TRACE("  slot %d: answer %zu: %d, %zu bytes chunked\n",
			      c->slot, c->answered, a.status, len);
			answered(c, &a, r, body, len);
			free(body);
			c->ipos += a.head_len + raw;
			continue;
		}
		if (a.length < 0 && !a.chunked) {
			/* to the end: whole once the connection closed */
			if (!(final && c->eof))
				break;
			if (c->reset) { /* what was in flight may be lost */
				c->ipos = c->in.len;
				break;
			}
			blen = r != NULL && r->head ? 0 : avail;
		} else if (r != NULL) {
			blen = r->head ? 0 : (size_t)a.length;
		} else if (a.length <= 0) {
			blen = 0;
		} else if (avail > 0 && avail < 9 && status_prefix(p + a.head_len, avail) &&
			   !(final && c->eof)) {
			break;
		} else if (avail >= 9 && status_prefix(p + a.head_len, avail)) {
			blen = 0;
		} else if (avail == 0 && final && c->eof) {
			blen = 0;
		} else {
			blen = (size_t)a.length;
		}
		if (avail < blen) {
			NEED(!(final && c->eof && !c->reset),
			     "slot %d: the connection closed within a %d answer: %zu of %zu bytes",
			     c->slot, a.status, avail, blen);
			break;
		}
		TRACE("  slot %d: answer %zu: %d, %lld bytes%s%s\n", c->slot,
		      c->answered, a.status, a.length, blen == 0 && a.length > 0 ? " (HEAD)" : "",
		      a.close ? ", Connection: close" : "");
		answered(c, &a, r, p + a.head_len, blen);
		c->ipos += a.head_len + blen;
	}
	if (c->ipos == c->in.len) {
		c->in.len = 0;
		c->ipos = 0;
	}
}

/* Reads what has come; true if anything did. */
static bool client_read(struct client *c)
{
	bool got = false;

	if (c->fd < 0 || c->eof)
		return false;
	for (;;) {
		ssize_t n = recv(c->fd, xd_buf_reserve(&c->in, 65536), 65536,
				 MSG_DONTWAIT);

		if (n > 0) {
			c->in.len += (size_t)n;
			got = true;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			c->eof = true;
			c->reset |= n < 0;
			got = true;
			TRACE("  slot %d: %s by the server\n", c->slot,
			      n == 0 ? "closed" : "reset");
		}
		if (n == 0 || errno != EINTR)
			break;
	}
	parse_answers(c, false);
	return got;
}

/* Closes the slot; what it held is checked as final. */
static void client_close(struct client *c, bool reset)
{
	if (c->fd < 0)
		return;
	client_read(c);
	parse_answers(c, true);
	if (reset) {
		struct linger l = {.l_onoff = 1, .l_linger = 0};

		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(c->fd);
	TRACE("  slot %d: closed%s\n", c->slot, reset ? " with a reset" : "");
	client_reset(c);
}

static void client_open(struct client *c, int slot, uint8_t how)
{
	struct sockaddr_in to = {.sin_family = AF_INET};
	int fd, one = 1;

	client_close(c, false);
	client_reset(c);
	c->slot = slot;
	c->rest = slot >= FH_ADMIN_SLOTS;
	c->modeled = true;
	if (opens >= OPENS_MAX)
		return;
	opens++;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	NEED(fd >= 0, "socket: %s", strerror(errno));
	if (how & 2) {
		int small = 4096;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	if (how & 1) {
		struct sockaddr_in me = {.sin_family = AF_INET};

		inet_pton(AF_INET, "127.0.0.2", &me.sin_addr);
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		NEED(bind(fd, (struct sockaddr *)&me, sizeof(me)) == 0,
		     "bind 127.0.0.2: %s", strerror(errno));
	}
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	to.sin_port = htons((uint16_t)(c->rest ? S.rest_port : S.admin_port));
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		int err = 0;
		socklen_t len = sizeof(err);

		NEED(errno == EINPROGRESS, "connect: %s", strerror(errno));
		NEED(poll(&pf, 1, 5000) == 1, "connect: no answer in 5 s");
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		NEED(err == 0, "connect: %s", strerror(err));
	}
	c->fd = fd;
	TRACE("  slot %d: open (%s%s)\n", slot, how & 1 ? "from 127.0.0.2" : "",
	      how & 2 ? ", small buffer" : "");
}

/* Sends what the socket takes now; the model reads what was sent. */
static void client_send(struct client *c, const uint8_t *data, size_t len)
{
	size_t off = 0;

	if (c->fd < 0)
		return;
	while (off < len) {
		ssize_t n = send(c->fd, data + off, len - off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		/* a reset reported here is not reported to recv() again */
		if (n < 0 && errno == ECONNRESET) {
			c->reset = true;
			TRACE("  slot %d: reset by the server\n", c->slot);
		}
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	TRACE("  slot %d: sent %zu of %zu bytes\n", c->slot, off, len);
	if (off == 0)
		return;
	if (c->modeled && !c->ended) {
		if (c->sent.len + off > MODEL_SENT_MAX) {
			unmodel(c, "over 256 KiB sent");
		} else {
			xd_buf_append(&c->sent, data, off);
			model_feed(c);
		}
	}
}

/* ---- the canned REST poll ---- */

/* The version REST-JSON serves `type` at for cluster `key`, now. */
static void current_version(const char *key, enum xd_rtype type, char *out,
			    size_t cap)
{
	struct xd_snapshot *s = xd_cache_get(S.cache, key);
	struct xd_snapshot *view;

	out[0] = '\0';
	if (s == NULL)
		return;
	view = xd_derived_snapshot_view(s, NULL);
	snprintf(out, cap, "%s", xd_table_version(xd_snapshot_table(view, type)));
	xd_snapshot_unref(view);
}

static void poll_request(struct client *c, int slot, uint8_t which,
			 uint8_t flags)
{
	int i = which % FH_REST_TYPES;
	enum xd_rtype type = rest_types[i];
	const char *key = flags & FH_POLL_C1 ? "c1" : "zz";
	struct xd_buf body = XD_BUF_INIT, req = XD_BUF_INIT;
	char version[40];

	if (c->fd < 0)
		client_open(c, slot, 0);
	xd_buf_printf(&body, "{");
	if (!(flags & FH_POLL_NO_NODE))
		xd_buf_printf(&body,
			      "\"node\":{\"id\":\"n%d\",\"cluster\":\"%s\",\"userAgentName\":\"fuzz\"%s},",
			      slot, key,
			      flags & FH_POLL_FEATURES ?
				      ",\"clientFeatures\":[\"xds.config.supports-resource-in-sotw\",\"xds.config.supports-resource-ttl\"]" :
				      "");
	if (flags & FH_POLL_VERSION) {
		if (c->version[type][0] != '\0')
			snprintf(version, sizeof(version), "%s", c->version[type]);
		else
			current_version(flags & FH_POLL_NO_NODE ? "" : key, type,
					version, sizeof(version));
		xd_buf_printf(&body, "\"versionInfo\":\"%s\",", version);
	}
	if (flags & FH_POLL_NONCE)
		xd_buf_printf(&body, "\"responseNonce\":\"%s\",",
			      c->nonce[type][0] != '\0' ? c->nonce[type] : "1");
	if (flags & FH_POLL_NACK)
		xd_buf_printf(&body,
			      "\"errorDetail\":{\"code\":3,\"message\":\"rejected by fuzz\"},");
	if (flags & FH_POLL_NAMES)
		xd_buf_printf(&body, "\"resourceNames\":[\"a\",\"c1only\",\"l0\",\"r0\",\"ca\",\"key\",\"rt0\",\"sr0\"],");
	xd_buf_printf(&body, "\"typeUrl\":\"%s\"}", xd_rtype_info(type)->type_url);
	xd_buf_printf(&req,
		      "POST /v3/discovery:%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		      "Content-Type: application/json\r\n%s"
		      "Content-Length: %zu\r\n\r\n",
		      rest_paths[i], flags & FH_POLL_CLOSE ? "Connection: close\r\n" : "",
		      body.len);
	xd_buf_append(&req, body.data, body.len);
	TRACE("  slot %d: poll %s%s%s\n", slot, rest_paths[i],
	      flags & FH_POLL_VERSION ? " holding " : "",
	      flags & FH_POLL_VERSION ? version : "");
	client_send(c, req.data, req.len);
	xd_buf_free(&body);
	xd_buf_free(&req);
}

/* ---------------- one input ---------------- */

static bool snapshots_changed;

static bool closers_closed(void)
{
	bool done = true;

	for (int i = 0; i < FH_SLOTS; i++) {
		client_read(&clients[i]);
		if (clients[i].fd >= 0 && clients[i].closing && !clients[i].eof)
			done = false;
	}
	return done;
}

static uint8_t next_byte(const uint8_t **q, const uint8_t *end)
{
	return *q < end ? *(*q)++ : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc XD_UNUSED, char ***argv XD_UNUSED)
{
	setup();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *q = data, *end = data + size;
	unsigned waited = 0;

	if (!S.up)
		setup();
	NEED(settled(), "the last input left connections or polls");
	opens = 0;
	for (int i = 0; i < FH_SLOTS; i++)
		client_reset(&clients[i]);
	while (q < end) {
		uint8_t op = *q++;
		int slot = (op >> 3) & 7;
		bool variant = (op & FH_VARIANT) != 0;
		struct client *c = &clients[slot];

		switch ((enum fh_op)(op & 7)) {
		case FH_OPEN:
			client_open(c, slot, next_byte(&q, end));
			break;
		case FH_SEND: {
			size_t len = next_byte(&q, end);

			len |= (size_t)next_byte(&q, end) << 8;
			if (len > (size_t)(end - q))
				len = (size_t)(end - q);
			if (c->fd < 0 && !c->eof)
				client_open(c, slot, 0);
			client_send(c, q, len);
			q += len;
			break;
		}
		case FH_READ:
			client_read(c);
			break;
		case FH_CLOSE:
			client_close(c, variant);
			break;
		case FH_SHUT:
			if (c->fd >= 0) {
				shutdown(c->fd, SHUT_WR);
				TRACE("  slot %d: half-closed\n", slot);
			}
			break;
		case FH_RUN: {
			uint8_t n = next_byte(&q, end);

			if (variant && waited < FH_WAIT_BUDGET_MS) {
				unsigned ms = n % 16u;

				if (ms > FH_WAIT_BUDGET_MS - waited)
					ms = FH_WAIT_BUDGET_MS - waited;
				waited += ms;
				TRACE("  wait %u ms\n", ms);
				run_until(NULL, ms);
			} else {
				for (int i = 0; i <= n % 32; i++)
					uv_run(&S.loop, UV_RUN_NOWAIT);
			}
			break;
		}
		case FH_RELOAD: {
			unsigned v = next_byte(&q, end) % FH_VARIANTS;

			write_variant(v);
			snapshots_changed = true;
			TRACE("  snapshot variant %u%s\n", v, variant ? "" : ", reload");
			if (!variant) {
				S.reloads++;
				xd_reload_request(S.reloader, "fuzz", reloaded, NULL);
			}
			break;
		}
		case FH_POLL: {
			uint8_t which = next_byte(&q, end);

			poll_request(c, slot, which, next_byte(&q, end));
			break;
		}
		}
		uv_run(&S.loop, UV_RUN_NOWAIT);
		check_live();
	}

	/* What is on its way comes in; the connections that must close
	 * do; then every connection closes and the servers settle. */
	for (int idle = 0, round = 0; idle < 4 && round < 200; round++) {
		bool got = false;

		uv_run(&S.loop, UV_RUN_NOWAIT);
		for (int i = 0; i < FH_SLOTS; i++)
			got |= client_read(&clients[i]);
		idle = got ? 0 : idle + 1;
	}
	NEED(run_until(closers_closed, 2000),
	     "a connection whose last answer said it closes stays open");
	for (int i = 0; i < FH_SLOTS; i++)
		client_close(&clients[i], false);
	if (!run_until(settled, SETTLE_MS))
		NEED(false, "%zu admin and %zu REST-JSON connections, %zu held polls, reload %s, %u asked for, %d ms after the clients left",
		     conns(S.admin_http), conns(S.rest_http),
		     xd_rest_stats(S.rest)->waiting,
		     xd_reloader_busy(S.reloader) ? "running" : "idle", S.reloads,
		     SETTLE_MS);
	/* each input starts from the first snapshots, so that it runs
	 * the same alone as after others */
	if (snapshots_changed) {
		snapshots_changed = false;
		write_variant(0);
		S.reloads++;
		xd_reload_request(S.reloader, "fuzz", reloaded, NULL);
		NEED(run_until(settled, SETTLE_MS), "the first snapshots again");
	}
	return 0;
}
