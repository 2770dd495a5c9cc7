/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admin pages written in slices between loop turns (docs/engine.md,
 * "Admin pages") against the real daemon: a page of thousands of
 * resources or hundreds of streams holds the same bytes as the pages
 * of one resource or one stream written at once; another request is
 * answered while a long page is being written; streams closing and a
 * reload meanwhile leave a whole, valid document.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 30000
#define STOP_MS 10000
/* A dump of this many clusters takes many slices of 2 ms. */
#define DUMP_CLUSTERS 20000
#define STREAMS 400
#define CONNS 8

static struct xdt_daemon *start(const char *dir)
{
	char cfg[1024];

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static char *get(struct xdt_daemon *d, const char *path)
{
	int status;
	char *type, *body = xdt_admin(d, "GET", path, NULL, &status, &type);

	ck_assert_msg(status == 200, "GET %s: %d: %s", path, status, body);
	ck_assert_str_eq(type, "application/json");
	free(type);
	return body;
}

static json_t *parse(const char *path, const char *body)
{
	json_error_t err;
	json_t *j = json_loads(body, 0, &err);

	ck_assert_msg(j != NULL, "GET %s: not JSON (%s at %d)", path, err.text,
		      err.position);
	return j;
}

/* The bytes between the first `open` and the last `close` of `page`
 * (malloc'd): one resource's or one stream's object. */
static char *between(const char *page, const char *open, const char *close)
{
	const char *a = strstr(page, open), *b = NULL, *p = page;

	ck_assert_msg(a != NULL, "no '%s' in %s", open, page);
	a += strlen(open);
	while ((p = strstr(p, close)) != NULL)
		b = p++;
	ck_assert_msg(b != NULL && b >= a, "no '%s' in %s", close, page);
	return strndup(a, (size_t)(b - a));
}

/* The body of chunked transfer coding `in` (malloc'd), every chunk
 * whole and the last one there. */
static char *dechunk(const char *in)
{
	char *body = NULL, *end;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);

	for (;;) {
		unsigned long n = strtoul(in, &end, 16);

		ck_assert_msg(end != in && strncmp(end, "\r\n", 2) == 0,
			      "a chunk's size: '%.40s'", in);
		in = end + 2;
		if (n == 0)
			break;
		ck_assert_msg(strnlen(in, n + 2) == n + 2 &&
				      strncmp(in + n, "\r\n", 2) == 0,
			      "a chunk of %lu bytes cut short", n);
		fwrite(in, 1, n, f);
		in += n + 2;
	}
	ck_assert_msg(strcmp(in, "\r\n") == 0, "after the last chunk: '%.40s'",
		      in);
	fclose(f);
	return body;
}

/* The whole answer's body (malloc'd, chunked coding undone), its
 * status 200 (else the test fails with the daemon's last log lines). */
static char *answer(const struct xdt_daemon *d, int fd)
{
	char *text = NULL, *body, buf[65536];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f);
	fclose(f);
	close(fd);
	if (strncmp(text, "HTTP/1.1 200 ", 13) != 0) {
		char *log = xdt_daemon_log(d);
		size_t end = strlen(log);

		ck_abort_msg("answer: '%.200s'; the log ends: %s", text,
			     log + (end > 2000 ? end - 2000 : 0));
	}
	body = strstr(text, "\r\n\r\n");
	ck_assert(body != NULL);
	body[2] = '\0'; /* the head, its last line's end kept */
	body = strcasestr(text, "\r\ntransfer-encoding: chunked\r\n") != NULL ?
		       dechunk(body + 4) :
		       strdup(body + 4);
	free(text);
	return body;
}

/*
 * The pages of one item each (`fmt` with `k`, written in one step) for
 * every `step`-th of `n`: the item's bytes, between `open` and `close`
 * in its page, are in the whole `page` as they are.
 */
static void same_bytes(struct xdt_daemon *d, const char *page, const char *fmt,
		       int n, int step, const char *open, const char *close)
{
	for (int k = 0; k < n; k += step) {
		char path[128], *one, *item;

		snprintf(path, sizeof(path), fmt, k);
		one = get(d, path);
		item = between(one, open, close);
		ck_assert_msg(strstr(page, item) != NULL,
			      "%s: not in the whole page as it is here: %s", path,
			      item);
		free(item);
		free(one);
	}
}

/* A quiet daemon writes the same page every time. */
static void same_again(struct xdt_daemon *d, const char *path,
		       const char *page)
{
	char *again = get(d, path);

	ck_assert_msg(strcmp(page, again) == 0, "GET %s changed", path);
	free(again);
}

static double slices_over_pages(struct xdt_daemon *d)
{
	return xdt_daemon_metric(d, "xdsd_admin_page_slices_total") -
	       xdt_daemon_metric(d, "xdsd_admin_pages_total");
}

/* A sample of /metrics. Each scrape is itself a page: counted, so that
 * pages_done leaves them out. */
static int scrapes;

static double metric(struct xdt_daemon *d, const char *series)
{
	scrapes++;
	return xdt_daemon_metric(d, series);
}

/* Pages answered whole, but for the scrapes of `metric`: the same
 * figure twice means no other page was over in between. */
static double pages_done(struct xdt_daemon *d)
{
	int before = scrapes;

	return metric(d, "xdsd_admin_pages_total") - before;
}

/* ---------------- /config_dump ---------------- */

START_TEST(dump_in_slices_same_bytes)
{
	char *dir = xdtest_clusters_snapdir(DUMP_CLUSTERS);
	struct xdt_daemon *d = start(dir);
	double before = slices_over_pages(d);
	char *page = get(d, "/config_dump");
	json_t *doc = parse("/config_dump", page), *res;

	/* written over several loop turns */
	ck_assert_msg(slices_over_pages(d) > before,
		      "a dump of %d clusters was written in one slice",
		      DUMP_CLUSTERS);
	res = json_object_get(json_array_get(json_object_get(doc, "types"), 0),
			      "resources");
	ck_assert_int_eq(json_array_size(res), DUMP_CLUSTERS);
	/* each resource's bytes, as its own page (written in one step)
	 * shows them, are in the whole page */
	same_bytes(d, page, "/config_dump?type=clusters&name=c-%d", DUMP_CLUSTERS,
		   DUMP_CLUSTERS / 16, "\"resources\":[", "]}]}");
	same_again(d, "/config_dump", page);
	json_decref(doc);
	free(page);
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

/* Another admin request is answered while a long page is written; so
 * is an xDS stream's first response. */
START_TEST(dump_does_not_block)
{
	char *dir = xdtest_clusters_snapdir(DUMP_CLUSTERS * 2);
	struct xdt_daemon *d = start(dir);
	int status, fd;
	char *ok, *page;
	json_t *doc;
	double pages = pages_done(d);

	fd = xdt_admin_ask(d, "/config_dump", 0);
	/* the request is read before /healthz comes */
	xdtest_sleep_ms(20);
	ok = xdt_admin(d, "GET", "/healthz", NULL, &status, NULL);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(ok, "ok\n");
	/* its first bytes may be sent already (pages are sent as they are
	 * written), its end not */
	ck_assert_msg(pages_done(d) == pages,
		      "the dump was written before /healthz was answered");
	free(ok);
	page = answer(d, fd);
	doc = parse("/config_dump", page);
	ck_assert_int_eq(json_array_size(json_object_get(
				 json_array_get(json_object_get(doc, "types"), 0),
				 "resources")),
			 DUMP_CLUSTERS * 2);
	json_decref(doc);
	free(page);
	/* a stop while a dump is written: a clean exit */
	fd = xdt_admin_ask(d, "/config_dump", 0);
	xdtest_sleep_ms(20);
	xdt_daemon_stop(d, STOP_MS);
	close(fd);
	free(dir);
}
END_TEST

/* Reads `want` bytes of the answer on `fd` into `f`. */
static void read_some(int fd, FILE *f, size_t want)
{
	char buf[4096];

	while (want > 0) {
		ssize_t n = read(fd, buf, want < sizeof(buf) ? want : sizeof(buf));

		ck_assert_msg(n > 0, "the answer ended after too few bytes");
		fwrite(buf, 1, (size_t)n, f);
		want -= (size_t)n;
	}
}

/* A slow client's receive buffer: the kernel takes little of a page
 * it does not read. */
#define SMALL_RCVBUF (64 * 1024)
/* The buffer a page holds, bounded (pager.h: XD_PAGER_BUFFER). */
#define PAGE_BUFFER (256 * 1024)
/* A dump of this many clusters is much more than the kernel's socket
 * buffers and the page's together. */
#define SLOW_CLUSTERS 60000

/*
 * A client that reads the first bytes of a big dump, then pauses: the
 * dump waits for it, holding no more than its bounded buffer (the
 * metric; and xdsd's memory does not grow by the page's size), while
 * other admin requests and an xDS stream are served. Read to the end
 * after the pause, the dump has the bytes of a page read at once.
 */
START_TEST(dump_read_slowly)
{
	char *dir = xdtest_clusters_snapdir(SLOW_CLUSTERS);
	struct xdt_daemon *d = start(dir);
	double pages;
	long rss0, rss1;
	char *text = NULL, *slow, *fast, buf[65536];
	size_t len = 0;
	FILE *f;
	ssize_t n;
	int fd, status;
	struct xdc_conn *conn;
	struct xdc_stream *stream;

	/* the dump read once, quickly, and the memory xdsd settles at */
	fast = get(d, "/config_dump");
	ck_assert_msg(strlen(fast) > 20 * PAGE_BUFFER, "a dump of %zu bytes",
		      strlen(fast));
	rss0 = xdt_daemon_rss_kb(d);
	pages = pages_done(d);

	fd = xdt_admin_ask(d, "/config_dump", SMALL_RCVBUF);
	f = open_memstream(&text, &len);
	read_some(fd, f, 64 * 1024);
	/* the pause: the page stops where its buffer is full */
	xdtest_sleep_ms(500);
	free(xdt_admin(d, "GET", "/healthz", NULL, &status, NULL));
	ck_assert_int_eq(status, 200);
	conn = xdc_connect(d->target);
	stream = xdc_open(conn, XDC_ADS);
	{
		Envoy__Service__Discovery__V3__DiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
		Envoy__Service__Discovery__V3__DiscoveryResponse *r;
		Envoy__Config__Core__V3__Node node =
			ENVOY__CONFIG__CORE__V3__NODE__INIT;
		char *names[] = {"c-7"};

		node.id = "slow-reader-neighbour";
		node.cluster = "fleet";
		req.node = &node;
		req.type_url = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
		req.n_resource_names = 1;
		req.resource_names = names;
		ck_assert(xdc_send_sotw(stream, &req, 5000));
		r = xdc_recv_sotw(stream, 10000);
		ck_assert_msg(r != NULL && r->n_resources == 1,
			      "no xDS answer while a dump waited for its client");
		envoy__service__discovery__v3__discovery_response__free_unpacked(r,
										 NULL);
	}
	xdc_stream_free(stream);
	xdc_conn_free(conn);
	ck_assert_msg(pages_done(d) == pages,
		      "the dump was over while its client read nothing");
	rss1 = xdt_daemon_rss_kb(d);
	ck_assert_msg(xdt_daemon_has_asan(d) ||
			      (size_t)(rss1 - rss0) * 1024 < strlen(fast) / 4,
		      "xdsd grew by %ld kB while a dump of %zu bytes waited",
		      rss1 - rss0, strlen(fast));
	{
		double held = metric(d, "xdsd_admin_page_buffer_bytes");

		ck_assert_msg(held > 0 && held <= PAGE_BUFFER,
			      "the waiting dump holds %.0f bytes", held);
	}
	/* the rest, at the client's pace */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f);
	fclose(f);
	close(fd);
	ck_assert_msg(strncmp(text, "HTTP/1.1 200 ", 13) == 0, "%.200s", text);
	ck_assert(strcasestr(text, "\r\ncontent-type: application/json\r\n") != NULL);
	ck_assert(strstr(text, "\r\n\r\n") != NULL);
	strstr(text, "\r\n\r\n")[2] = '\0';
	ck_assert(strcasestr(text, "\r\ntransfer-encoding: chunked\r\n") != NULL);
	slow = dechunk(text + strlen(text) + 2);
	ck_assert_msg(strcmp(slow, fast) == 0,
		      "the dump read slowly (%zu bytes) differs from the one read at once (%zu bytes)",
		      strlen(slow), strlen(fast));
	ck_assert_msg(metric(d, "xdsd_admin_page_buffer_max_bytes") <=
			      PAGE_BUFFER,
		      "a page held more than its buffer");
	free(slow);
	free(fast);
	free(text);
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

/* A client that leaves in the middle of a dump ends it: its buffer is
 * freed, nothing else is held (the sanitizer build's exit says so for
 * memory), and the daemon serves on. */
START_TEST(dump_client_leaves)
{
	char *dir = xdtest_clusters_snapdir(SLOW_CLUSTERS);
	struct xdt_daemon *d = start(dir);
	double pages = pages_done(d);
	char *text = NULL, *page;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (int round = 0; round < 3; round++) {
		int fd = xdt_admin_ask(d, "/config_dump", SMALL_RCVBUF);

		read_some(fd, f, 64 * 1024);
		close(fd);
	}
	fclose(f);
	free(text);
	for (int i = 0; metric(d, "xdsd_admin_page_buffer_bytes") != 0; i++) {
		ck_assert_msg(i < 200, "the pages of clients gone still hold %.0f bytes",
			      metric(d, "xdsd_admin_page_buffer_bytes"));
		xdtest_sleep_ms(25);
	}
	/* none was answered whole, and the next one is */
	ck_assert(pages_done(d) == pages);
	page = get(d, "/config_dump");
	json_decref(parse("/config_dump", page));
	free(page);
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

/* A reload while a dump is written: the dump is of the snapshot it
 * began with, whole. */
START_TEST(dump_across_reload)
{
	char *dir = xdtest_clusters_snapdir(DUMP_CLUSTERS);
	struct xdt_daemon *d = start(dir);
	json_t *before = xdt_status_json(d), *doc, *after, *types;
	char *page, version[128];
	int fd;

	snprintf(version, sizeof(version), "%s",
		 json_string_value(json_object_get(
			 json_array_get(json_object_get(before, "snapshots"), 0),
			 "version")));
	fd = xdt_admin_ask(d, "/config_dump", 0);
	xdtest_sleep_ms(10);
	xdtest_write_clusters(dir, "default.yaml", "d", 3);
	xdt_daemon_signal(d, SIGHUP);
	page = answer(d, fd);
	doc = parse("/config_dump", page);
	ck_assert_str_eq(xdt_json_str(doc, "version"), version);
	types = json_object_get(doc, "types");
	ck_assert_int_eq(json_array_size(json_object_get(json_array_get(types, 0),
							 "resources")),
			 DUMP_CLUSTERS);
	ck_assert(strstr(page, "\"d-0\"") == NULL);
	/* the reload happened, and the next dump shows it */
	ck_assert(xdt_daemon_wait_log(d, "reloaded", 10000));
	for (int i = 0;; i++) {
		json_t *s;

		after = xdt_status_json(d);
		s = json_array_get(json_object_get(after, "snapshots"), 0);
		if (strcmp(json_string_value(json_object_get(s, "version")),
			   version) != 0)
			break;
		json_decref(after);
		ck_assert_msg(i < 200, "the reload never came");
		xdtest_sleep_ms(50);
	}
	json_decref(after);
	free(page);
	page = get(d, "/config_dump");
	ck_assert(strstr(page, "\"d-2\"") != NULL);
	free(page);
	json_decref(doc);
	json_decref(before);
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

/* ---------------- /clients ---------------- */

struct fleet {
	struct xdc_conn *conns[CONNS];
	struct xdc_stream *streams[STREAMS];
};

static void fleet_open(struct fleet *f, struct xdt_daemon *d)
{
	for (int i = 0; i < CONNS; i++)
		f->conns[i] = xdc_connect(d->target);
	for (int i = 0; i < STREAMS; i++) {
		char id[32];

		snprintf(id, sizeof(id), "node-%04d", i);
		f->streams[i] = xdc_watch_clusters(f->conns[i % CONNS], id, "fleet");
		ck_assert(f->streams[i] != NULL);
	}
	for (int i = 0; i < STREAMS; i++)
		ck_assert_int_eq(xdc_next_clusters(f->streams[i], 10000, NULL), 3);
}

static void fleet_close(struct fleet *f, int from, int to)
{
	for (int i = from; i < to; i++) {
		if (f->streams[i] != NULL)
			xdc_stream_free(f->streams[i]);
		f->streams[i] = NULL;
	}
}

/* Every stream once, oldest first; count and streams agree. */
/* A /clients page: `count` streams listed in order, of `streams`
 * walked (all of them listed unless `filtered`). */
static void check_clients(json_t *doc, size_t want, bool filtered)
{
	json_t *list = json_object_get(doc, "clients"), *c;
	json_int_t last = 0;
	json_int_t walked = json_integer_value(json_object_get(doc, "streams"));
	size_t i;

	ck_assert_int_eq(json_array_size(list),
			 json_integer_value(json_object_get(doc, "count")));
	if (filtered)
		ck_assert_int_ge(walked, (json_int_t)json_array_size(list));
	else
		ck_assert_int_eq(walked, json_array_size(list));
	if (want > 0)
		ck_assert_int_eq(json_array_size(list), want);
	json_array_foreach(list, i, c) {
		json_int_t id = json_integer_value(json_object_get(c, "stream"));

		ck_assert_msg(id > last, "stream %lld after %lld", (long long)id,
			      (long long)last);
		last = id;
	}
}

static void wait_synced(struct xdt_daemon *d, int n)
{
	for (int i = 0;; i++) {
		char *body = get(d, "/clients?state=synced");
		json_t *doc = parse("/clients", body);
		json_int_t count = json_integer_value(json_object_get(doc, "count"));

		json_decref(doc);
		free(body);
		if (count == n)
			return;
		ck_assert_msg(i < 400, "%lld synced, not %d", (long long)count, n);
		xdtest_sleep_ms(25);
	}
}

START_TEST(clients_same_bytes)
{
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir);
	struct fleet f;
	char *page;
	json_t *doc;

	fleet_open(&f, d);
	wait_synced(d, STREAMS);
	page = get(d, "/clients");
	doc = parse("/clients", page);
	check_clients(doc, STREAMS, false);
	/* each stream's bytes, as the page filtered to its node has them,
	 * are in the whole page */
	same_bytes(d, page, "/clients?node=node-%04d", STREAMS, STREAMS / 16,
		   "{\"clients\":[", "],\"count\":1,");
	same_again(d, "/clients", page);
	json_decref(doc);
	free(page);
	fleet_close(&f, 0, STREAMS);
	for (int i = 0; i < CONNS; i++)
		xdc_conn_free(f.conns[i]);
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

/* Streams close and a reload comes while pages of them are written:
 * each page is a whole document of streams that were open. */
START_TEST(clients_while_streams_close)
{
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir);
	struct fleet f;
	int fds[4];

	fleet_open(&f, d);
	wait_synced(d, STREAMS);
	for (int round = 0; round < 4; round++)
		fds[round] = xdt_admin_ask(
			d, round % 2 ? "/clients" : "/clients?state=synced", 0);
	fleet_close(&f, 0, STREAMS / 2);
	xdtest_write_clusters(dir, "default.yaml", "c", 4);
	xdt_daemon_signal(d, SIGHUP);
	for (int i = STREAMS / 2; i < STREAMS; i += 2) {
		xdc_stream_free(f.streams[i]);
		f.streams[i] = NULL;
	}
	for (int round = 0; round < 4; round++) {
		char *page = answer(d, fds[round]);
		json_t *doc = parse("/clients", page);

		/* the synced ones of a page filtered by state: after the
		 * reload some may still owe their ACK when walked */
		check_clients(doc, 0, round % 2 == 0);
		json_decref(doc);
		free(page);
	}
	/* a stop while pages of the streams are written: a clean exit */
	for (int round = 0; round < 4; round++)
		fds[round] = xdt_admin_ask(d, "/clients", 0);
	xdt_daemon_stop(d, STOP_MS);
	for (int round = 0; round < 4; round++)
		close(fds[round]);
	fleet_close(&f, STREAMS / 2, STREAMS);
	for (int i = 0; i < CONNS; i++)
		xdc_conn_free(f.conns[i]);
	free(dir);
}
END_TEST

/* ---------------- CSDS ---------------- */

/* csds-client.py's FetchClientStatus of every node: its JSON document
 * ({"code", "responses": [...]}). */
static json_t *csds(const struct xdt_daemon *d)
{
	char *cmd, *out;
	json_error_t err;
	json_t *j;
	int status;

	ck_assert(asprintf(&cmd, "'%s' '%s/tests/e2e/csds-client.py' --schema '%s' "
				 "--max-message 268435456 '%s'",
			   xdtest_env("PYTHON3"), xdtest_env("XDSD_SRCDIR"),
			   xdtest_env("XDSD_SCHEMA"), d->target) > 0);
	out = xdtest_command_output(cmd, &status);
	ck_assert_msg(status == 0, "%s: %s", cmd, out);
	j = json_loads(out, 0, &err);
	ck_assert_msg(j != NULL, "%s: not JSON (%s)", cmd, err.text);
	free(out);
	free(cmd);
	return j;
}

/* Every node once. */
static void check_nodes(json_t *doc, int want)
{
	json_t *configs = json_object_get(
		json_array_get(json_object_get(doc, "responses"), 0), "config");
	json_t *c;
	size_t i;
	bool seen[STREAMS] = {false};

	ck_assert_str_eq(xdt_json_str(doc, "code"), "OK");
	if (want >= 0)
		ck_assert_int_eq(json_array_size(configs), want);
	json_array_foreach(configs, i, c) {
		const char *id = json_string_value(
			json_object_get(json_object_get(c, "node"), "id"));
		int k;

		ck_assert(id != NULL && sscanf(id, "node-%d", &k) == 1);
		ck_assert(k >= 0 && k < STREAMS);
		ck_assert_msg(!seen[k], "node-%04d twice", k);
		seen[k] = true;
	}
}

/* A CSDS answer over hundreds of streams is built between loop turns:
 * every node once, whole, also when streams close meanwhile. */
START_TEST(csds_of_many_streams)
{
	char *dir = xdtest_clusters_snapdir(3);
	struct xdt_daemon *d = start(dir);
	struct fleet f;
	json_t *doc;

	fleet_open(&f, d);
	wait_synced(d, STREAMS);
	doc = csds(d);
	check_nodes(doc, STREAMS);
	json_decref(doc);
	/* the same while a dump shares the turns and streams close */
	{
		int fd = xdt_admin_ask(d, "/config_dump", 0);

		fleet_close(&f, 0, STREAMS / 4);
		doc = csds(d);
		check_nodes(doc, -1);
		json_decref(doc);
		free(answer(d, fd));
	}
	fleet_close(&f, STREAMS / 4, STREAMS);
	for (int i = 0; i < CONNS; i++)
		xdc_conn_free(f.conns[i]);
	xdt_daemon_stop(d, STOP_MS);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pages");
	TCase *tc = tcase_create("dump");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, dump_in_slices_same_bytes);
	tcase_add_test(tc, dump_does_not_block);
	tcase_add_test(tc, dump_across_reload);
	suite_add_tcase(s, tc);
	tc = tcase_create("slow");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, dump_read_slowly);
	tcase_add_test(tc, dump_client_leaves);
	suite_add_tcase(s, tc);
	tc = tcase_create("clients");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, clients_same_bytes);
	tcase_add_test(tc, clients_while_streams_close);
	suite_add_tcase(s, tc);
	tc = tcase_create("csds");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, csds_of_many_streams);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
