/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one peer may make xdsd hold or do (xdsd.yaml(5): the max_*
 * directives): connections per address, names per stream, requests a
 * second, the size of a node, and a client that never reads. Each limit
 * is set low here, and going over it must end the stream with
 * RESOURCE_EXHAUSTED (naming the limit) and a warning, while every other
 * client goes on being served.
 */
#include <errno.h>
#include <grpc/status.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "balancer.h"
#include "client.h"
#include "daemon.h"
#include "hostile.h"
#include "xdtest.h"

#define START_MS 20000
#define STOP_MS 5000
#define WAIT_MS 5000
#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"
#define EDS_URL "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

static struct xdt_daemon *start_with(const char *dir, const char *limits)
{
	char cfg[1024];

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n%s\n", dir,
		 limits);
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

/* An ADS request of `url` for `names` (none: every resource). */
/* A SotW request for `n` names, answering the response of nonce
 * `nonce` (NULL: none). */
static void ask_after(struct xdc_stream *s, const char *url, char **names,
		      size_t n, const char *nonce)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;

	node.id = "limits";
	node.cluster = "test";
	req.node = &node;
	req.type_url = (char *)url;
	req.resource_names = names;
	req.n_resource_names = n;
	if (nonce != NULL)
		req.response_nonce = (char *)nonce;
	xdc_send_sotw(s, &req, WAIT_MS);
}

static void ask(struct xdc_stream *s, const char *url, char **names, size_t n)
{
	ask_after(s, url, names, n, NULL);
}

static struct xdc_stream *watch(struct xdc_conn *c)
{
	return xdc_watch_clusters(c, "limits", "test");
}

/* The next response must come; returns its resource count. */
static int served(struct xdc_stream *s)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(s, WAIT_MS);
	int n;

	ck_assert_msg(r != NULL, "a client within the limits was not served");
	n = (int)r->n_resources;
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	return n;
}

/* The stream must end with RESOURCE_EXHAUSTED naming `limit`, and the
 * daemon log a warning that names it too. */
static void exhausted(struct xdt_daemon *d, struct xdc_stream *s,
		      const char *limit)
{
	grpc_status_code code;
	char *details = NULL, needle[128];

	ck_assert(xdc_drain_status(s, &code, &details, WAIT_MS));
	ck_assert_msg(code == GRPC_STATUS_RESOURCE_EXHAUSTED &&
			      strstr(details, limit) != NULL,
		      "status %d '%s', expected RESOURCE_EXHAUSTED naming %s",
		      (int)code, details ? details : "", limit);
	free(details);
	snprintf(needle, sizeof(needle), "(%s", limit);
	ck_assert_msg(xdt_daemon_wait_log(d, needle, WAIT_MS),
		      "no warning naming %s", limit);
}

/* An address may hold max_connections_per_address connections with
 * streams; more streams on those are fine, and a connection that goes
 * makes room. */
START_TEST(connections_per_address)
{
	char *dir = xdtest_clusters_snapdir(2);
	struct xdt_daemon *d = start_with(dir, "max_connections_per_address: 3");
	struct xdc_conn *c[4];
	struct xdc_stream *s[4], *more;

	for (int i = 0; i < 3; i++) {
		c[i] = xdc_connect(d->target);
		s[i] = watch(c[i]);
		ck_assert_int_eq(served(s[i]), 2);
	}
	c[3] = xdc_connect(d->target);
	s[3] = watch(c[3]);
	exhausted(d, s[3], "max_connections_per_address");
	ck_assert(xdt_daemon_wait_log(d, "refused: 3 connections from this address already", 100));
	xdc_stream_free(s[3]);
	more = watch(c[0]); /* another stream on a counted connection */
	ck_assert_int_eq(served(more), 2);
	xdc_stream_free(more);
	xdc_stream_free(s[1]);
	xdc_conn_free(c[1]);
	/* two streams gone: the extra one and the closed connection's */
	ck_assert(xdt_daemon_wait_log_count(d, ": freed", 2, WAIT_MS));
	s[3] = watch(c[3]);
	ck_assert_int_eq(served(s[3]), 2);
	for (int i = 0; i < 4; i++) {
		if (i == 1)
			continue;
		xdc_stream_free(s[i]);
		xdc_conn_free(c[i]);
	}
	stop(d);
	free(dir);
}
END_TEST

#define LIMITS_REFUSED "xdsd_streams_refused_total{reason=\"limits\"}"

/* `n` clients of `target`, one connection each, every one served. */
static void open_served(const char *target, struct xdc_conn **c,
			struct xdc_stream **s, int n)
{
	for (int i = 0; i < n; i++) {
		c[i] = xdc_connect(target);
		s[i] = watch(c[i]);
		ck_assert_msg(served(s[i]) == 2, "client %d of %s", i, target);
	}
}

/* One more client of `target`, which the per-address limit refuses. */
static void open_refused(struct xdt_daemon *d, const char *target,
			 struct xdc_conn **c, struct xdc_stream **s)
{
	*c = xdc_connect(target);
	*s = watch(*c);
	exhausted(d, *s, "max_connections_per_address");
}

static void close_all(struct xdc_conn **c, struct xdc_stream **s, int n)
{
	for (int i = 0; i < n; i++) {
		xdc_stream_free(s[i]);
		xdc_conn_free(c[i]);
	}
}

/* Behind a TCP balancer (haproxy, connecting from 127.0.0.2) every
 * client has the balancer's address: the per-address limit refuses the
 * sixth, and the warning points at trusted_proxies. */
START_TEST(balancer_not_trusted)
{
	char *dir = xdtest_clusters_snapdir(2);
	struct xdt_daemon *d = start_with(dir, "max_connections_per_address: 5");
	struct xdt_balancer *b = xdt_balancer_start(d->target, "127.0.0.2");
	struct xdc_conn *c[6];
	struct xdc_stream *s[6];

	open_served(b->target, c, s, 5);
	ck_assert(xdt_daemon_metric(d, LIMITS_REFUSED) == 0);
	open_refused(d, b->target, &c[5], &s[5]);
	ck_assert(xdt_daemon_wait_log(d, "from ipv4:127.0.0.2:", 100));
	ck_assert(xdt_daemon_wait_log(d, "refused: 5 connections from this address already (max_connections_per_address); if that address is a balancer's or proxy's, list it in trusted_proxies", 100));
	ck_assert(xdt_daemon_metric(d, LIMITS_REFUSED) == 1);
	close_all(c, s, 6);
	xdt_balancer_stop(b);
	stop(d);
	free(dir);
}
END_TEST

/* With the balancer's address in trusted_proxies, 20 clients through
 * it are all served, while direct clients are still held to the limit. */
START_TEST(balancer_trusted)
{
	enum { FLEET = 20 };
	char *dir = xdtest_clusters_snapdir(2);
	struct xdt_daemon *d = start_with(dir, "max_connections_per_address: 5\n"
					       "trusted_proxies: [127.0.0.2, \"fd00::/8\"]");
	struct xdt_balancer *b = xdt_balancer_start(d->target, "127.0.0.2");
	struct xdc_conn *c[FLEET], *direct[6];
	struct xdc_stream *s[FLEET], *ds[6];

	ck_assert(xdt_daemon_wait_log(d, "trusted proxies (exempt from the per-address limits): 127.0.0.2, fd00::/8", 100));
	open_served(b->target, c, s, FLEET);
	/* direct clients, from 127.0.0.1: limited as before */
	open_served(d->target, direct, ds, 5);
	open_refused(d, d->target, &direct[5], &ds[5]);
	ck_assert(xdt_daemon_wait_log(d, "from ipv4:127.0.0.1:", 100));
	ck_assert(xdt_daemon_metric(d, LIMITS_REFUSED) == 1);
	close_all(c, s, FLEET);
	close_all(direct, ds, 6);
	xdt_balancer_stop(b);
	stop(d);
	free(dir);
}
END_TEST

/* A stream may subscribe to max_names_per_stream names, all types
 * together. */
START_TEST(names_per_stream)
{
	char *dir = xdtest_clusters_snapdir(20), *names[12], buf[12][8];
	struct xdt_daemon *d = start_with(dir, "max_names_per_stream: 10");
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_open(c, XDC_ADS);
	Envoy__Service__Discovery__V3__DiscoveryResponse *r;

	for (int i = 0; i < 12; i++) {
		snprintf(buf[i], sizeof(buf[i]), "c-%d", i);
		names[i] = buf[i];
	}
	ask(s, CDS_URL, names, 6);
	ck_assert_int_eq(served(s), 6);
	/* 6 clusters and 4 endpoints: 10, at the limit; none exists, which
	 * is said (rule N1): a request that does not answer that would be
	 * stale (rule S5) */
	ask(s, EDS_URL, names, 4);
	ck_assert(xdt_daemon_wait_log(d, "EDS request: 4 names", WAIT_MS));
	r = xdc_recv_sotw(s, WAIT_MS);
	ck_assert_msg(r != NULL && r->n_resource_errors == 4,
		      "the 4 endpoints said not to exist");
	/* 6 and 5: one over */
	ask_after(s, EDS_URL, names, 5, r->nonce);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	exhausted(d, s, "max_names_per_stream");
	ck_assert(xdt_daemon_wait_log(d, "the stream subscribes to 11 names; the limit is 10", 100));
	xdc_stream_free(s);
	/* one type alone over the limit */
	s = xdc_open(c, XDC_ADS);
	ask(s, CDS_URL, names, 11);
	exhausted(d, s, "max_names_per_stream");
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* A stream may send max_requests_per_second requests a second on
 * average, max_request_burst at once: a flood ends it, a steady client
 * goes on. */
START_TEST(requests_per_second)
{
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = start_with(dir, "max_requests_per_second: 5\n"
					       "max_request_burst: 10");
	struct xdc_conn *c = xdc_connect(d->target), *c2 = xdc_connect(d->target);
	struct xdc_stream *flood = watch(c), *steady = watch(c2);
	uint8_t *data;
	size_t len;

	ck_assert_int_eq(served(flood), 1);
	ck_assert_int_eq(served(steady), 1);
	for (int i = 0; i < 30; i++)
		ask(flood, EDS_URL, NULL, 0);
	exhausted(d, flood, "max_requests_per_second");
	/* 8 requests at 4 a second: never over */
	for (int i = 0; i < 8; i++) {
		ask(steady, EDS_URL, NULL, 0);
		xdtest_sleep_ms(250);
	}
	ck_assert_int_eq(xdc_recv(steady, &data, &len, 300), -1); /* still open */
	ck_assert(!xdc_status(steady, NULL, NULL, 0));
	xdc_stream_free(flood);
	xdc_stream_free(steady);
	xdc_conn_free(c);
	xdc_conn_free(c2);
	stop(d);
	free(dir);
}
END_TEST

/* A node is at most max_node_size bytes (metadata included), its id
 * and cluster at most max_node_id_size. */
START_TEST(node_size)
{
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = start_with(dir, "max_node_size: 1KiB\n"
					       "max_node_id_size: 16");
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s;
	size_t len;
	uint8_t *big = xdt_deep_node_request(false, CDS_URL, "c-0", "n1", "test",
					     200, &len);
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;

	ck_assert_uint_gt(len, 2048);
	s = xdc_open(c, XDC_ADS);
	xdc_send(s, big, len, WAIT_MS);
	exhausted(d, s, "max_node_size");
	xdc_stream_free(s);
	node.id = "seventeen-chars-x";
	node.cluster = "test";
	req.node = &node;
	req.type_url = CDS_URL;
	s = xdc_open(c, XDC_ADS);
	xdc_send_sotw(s, &req, WAIT_MS);
	exhausted(d, s, "max_node_id_size");
	ck_assert(xdt_daemon_wait_log(d, "the node id is 17 bytes; the limit is 16", 100));
	xdc_stream_free(s);
	node.id = "sixteen-chars-xx";
	s = xdc_open(c, XDC_ADS);
	xdc_send_sotw(s, &req, WAIT_MS);
	ck_assert_int_eq(served(s), 1);
	xdc_stream_free(s);
	free(big);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* `n` clients that never read, each on its own connection, as nodes
 * "<prefix>-<i>" (xdc_mute_open). */
/* Asks for the statistics line (SIGUSR1) until one holds both `a` and
 * `b`; fails the test when none has within a minute. */
static void stats_become(struct xdt_daemon *d, const char *a, const char *b)
{
	long long deadline = xdtest_now_ms() + 60000;
	char line[1024] = "";

	for (;;) {
		int k = xdt_daemon_log_count(d, "info: stats: ");
		char *log, *at, *end;

		xdt_daemon_signal(d, SIGUSR1);
		ck_assert(xdt_daemon_wait_log_count(d, "info: stats: ", k + 1, WAIT_MS));
		log = xdt_daemon_log(d);
		/* the newest line */
		at = strstr(log, "info: stats: ");
		while ((end = strstr(at + 1, "info: stats: ")) != NULL)
			at = end;
		end = strchr(at, '\n');
		snprintf(line, sizeof(line), "%.*s",
			 (int)(end != NULL ? end - at : (long)strlen(at)), at);
		free(log);
		if (strstr(line, a) != NULL && strstr(line, b) != NULL)
			return;
		ck_assert_msg(xdtest_now_ms() < deadline, "the statistics say '%s', never %s %s",
			      line, a, b);
		xdtest_sleep_ms(200);
	}
}

static void mutes_open(struct xdc_mute **m, int n, const char *target,
		       const char *prefix)
{
	char id[32];

	for (int i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s-%d", prefix, i);
		m[i] = xdc_mute_open(target, id);
	}
}

/* Closes those, then the client `c` and its stream `s`, stops `d` and
 * frees `dir`: the end of a test that held many connections. */
static void finish_crowd(struct xdc_mute **m, int n, struct xdc_stream *s,
			 struct xdc_conn *c, struct xdt_daemon *d, char *dir)
{
	for (int i = 0; i < n; i++)
		xdc_mute_close(m[i]);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}

/*
 * 200 clients that never read, each subscribed to every cluster of a
 * 10,000-cluster snapshot (a CDS response of several MB): each costs
 * xdsd one response in flight (shared, not copied), xdsd's memory stays
 * bounded, and another client is served meanwhile (how soon is a figure
 * of bench/served-meanwhile).
 */
START_TEST(clients_that_never_read)
{
	enum { MUTE = 200 };
	char *dir, *cmd, cfg[512];
	struct xdt_daemon *d;
	struct xdc_mute *m[MUTE];
	struct xdc_conn *c;
	struct xdc_stream *s;
	long before, after, bound;

	ck_assert(asprintf(&dir, "%s/big.%d", xdtest_tmpdir(), (int)getpid()) > 0);
	ck_assert(mkdir(dir, 0755) == 0);
	ck_assert(asprintf(&cmd, "'%s/bench/gen-snapshot' --clusters 10000 -o '%s/default.yaml'",
			   xdtest_env("XDSD_SRCDIR"), dir) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	/* info level: 200 streams' debug lines would be noise */
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	c = xdc_connect(d->target);
	s = watch(c);
	ck_assert_int_eq(served(s), 10000);
	before = xdt_daemon_rss_kb(d);
	mutes_open(m, MUTE, d->target, "mute");
	/* every mute stream gets its response in flight: the statistics
	 * (SIGUSR1) come to count 200 + 1 CDS responses, and none more */
	stats_become(d, "streams 201,", "responses 201,");
	xdtest_sleep_ms(500);
	stats_become(d, "streams 201,", "responses 201,");
	after = xdt_daemon_rss_kb(d);
	/* AddressSanitizer keeps freed memory in quarantine (up to 256 MB) */
	bound = xdt_daemon_has_asan(d) ? 512 * 1024 : 64 * 1024;
	ck_assert_msg(after - before < bound,
		      "RSS grew from %ld kB to %ld kB for %d clients that never read",
		      before, after, MUTE);
	/* another client is served meanwhile */
	xdc_stream_free(s);
	s = watch(c);
	ck_assert_int_eq(served(s), 10000);
	finish_crowd(m, MUTE, s, c, d, dir);
}
END_TEST

/*
 * A request far larger than the first read buffer (read_chunk_size:
 * 256 bytes) is read whole: a CDS request naming 60,000 clusters,
 * about 1 MB, is answered, and the small ones after it on the same
 * connection too.
 */
START_TEST(large_request_small_read_chunks)
{
	enum { NAMES = 60000 };
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = start_with(dir, "read_chunk_size: 256");
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = xdc_open(c, XDC_ADS);
	char **names = calloc(NAMES, sizeof(*names));

	ck_assert_ptr_nonnull(names);
	for (int i = 0; i < NAMES; i++)
		ck_assert(asprintf(&names[i], "c-%d", i) > 0);
	ask(s, CDS_URL, names, NAMES);
	ck_assert_int_eq(served(s), 1);
	xdc_stream_free(s);
	/* the same connection reads the small requests after it */
	s = watch(c);
	ck_assert_int_eq(served(s), 1);
	for (int i = 0; i < NAMES; i++)
		free(names[i]);
	free(names);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* The soft and hard "Max open files" of process `pid`. */
static void open_files_limits(pid_t pid, unsigned long *soft,
			      unsigned long *hard)
{
	char path[64], line[256];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Max open files %lu %lu", soft, hard) == 2)
			found = true;
	fclose(f);
	ck_assert_msg(found, "no open files limit in %s", path);
}

/*
 * Every client connection is a descriptor: started with a soft
 * open-files limit of 128 (a shell's is often 1024) under a higher hard
 * one, xdsd raises its soft limit to the hard one, says so, and holds
 * more connections than the soft limit it was started with.
 */
START_TEST(open_files_limit_raised)
{
	enum { CONNS = 200 };
	char *dir = xdtest_clusters_snapdir(1);
	struct rlimit mine, low;
	struct xdt_daemon *d;
	struct xdc_mute *m[CONNS];
	struct xdc_conn *c;
	struct xdc_stream *s;
	unsigned long soft, hard;
	char cfg[512];

	ck_assert(getrlimit(RLIMIT_NOFILE, &mine) == 0);
	ck_assert_msg(mine.rlim_max > 4 * CONNS,
		      "the hard open files limit (%lu) is too low for this test",
		      (unsigned long)mine.rlim_max);
	low = (struct rlimit){128, mine.rlim_max};
	ck_assert(setrlimit(RLIMIT_NOFILE, &low) == 0);
	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	/* the test's own connections need the descriptors back */
	ck_assert(setrlimit(RLIMIT_NOFILE, &mine) == 0);
	open_files_limits(d->pid, &soft, &hard);
	ck_assert_uint_eq(hard, (unsigned long)mine.rlim_max);
	ck_assert_msg(soft == hard, "xdsd kept a soft open files limit of %lu (hard %lu)",
		      soft, hard);
	snprintf(cfg, sizeof(cfg), "open files: limit %lu (raised from 128", hard);
	ck_assert(xdt_daemon_wait_log(d, cfg, WAIT_MS));
	mutes_open(m, CONNS, d->target, "conn");
	c = xdc_connect(d->target);
	s = watch(c);
	ck_assert_int_eq(served(s), 1);
	xdt_daemon_signal(d, SIGUSR1);
	ck_assert(xdt_daemon_wait_log(d, "info: stats: streams 201,", WAIT_MS));
	finish_crowd(m, CONNS, s, c, d, dir);
}
END_TEST

/* ---------------- connections without a stream ---------------- */

#define IDLE_CONNS "xdsd_connections{state=\"idle\"}"
#define STREAMING_CONNS "xdsd_connections{state=\"streaming\"}"

/* Waits until the daemon's metric `series` is `want`; fails the test
 * with what it was if it does not get there. */
static void wait_metric(const struct xdt_daemon *d, const char *series,
			double want)
{
	long long deadline = xdtest_now_ms() + 4 * WAIT_MS;
	double v;

	while ((v = xdt_daemon_metric(d, series)) != want &&
	       xdtest_now_ms() < deadline)
		xdtest_sleep_ms(20);
	ck_assert_msg(v == want, "%s is %g, expected %g", series, v, want);
}

/* Of raw connections `fd[0..n)`, how many the daemon ended, once that
 * number stops changing at `want` (or the wait is over). */
static int wait_ended(const int *fd, int n, int want)
{
	long long deadline = xdtest_now_ms() + 4 * WAIT_MS;
	int ended;

	for (;;) {
		ended = 0;
		for (int i = 0; i < n; i++)
			ended += fd[i] >= 0 && xdt_raw_ended(fd[i]);
		if (ended == want || xdtest_now_ms() >= deadline)
			return ended;
		xdtest_sleep_ms(20);
	}
}

/* `n` raw connections from 127.0.0.2, every other one an HTTP/2
 * connection that opens no stream, every other one silent; returns how
 * many connected (the others are -1: their SYN was dropped). */
static int raw_try(const struct xdt_daemon *d, int *fd, int n)
{
	int connected = 0;

	for (int i = 0; i < n; i++) {
		fd[i] = xdt_raw_connect(d->target, "127.0.0.2", i % 2 == 0);
		connected += fd[i] >= 0;
	}
	return connected;
}

/* The same, every one of them connected. */
static void raw_open(const struct xdt_daemon *d, int *fd, int n)
{
	ck_assert_int_eq(raw_try(d, fd, n), n);
}

static void raw_close(int *fd, int n)
{
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

#define BLOCKED "xdsd_connections_blocked_addresses"

/*
 * Connections that never open a stream (silent, or HTTP/2 without a
 * call) are held to max_idle_connections_per_address from their
 * accept: the rest are refused, counted, logged with the peer, and the
 * address's new connections are dropped (no answer to their SYN) while
 * a client from another address is served; once the address's
 * connections close, they leave the count and it connects again.
 */
START_TEST(idle_connections_per_address)
{
	enum { RAW = 20, KEPT = 4 };
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = start_with(
		dir, "max_idle_connections_per_address: 4\n"
		     "first_stream_timeout: 0\nhandshake_timeout: 1h");
	int fd[RAW], more, connected;
	struct xdc_conn *c;
	struct xdc_stream *s;

	/* the fifth is refused; those after it may find the address
	 * blocked already */
	connected = raw_try(d, fd, RAW);
	ck_assert_int_gt(connected, KEPT);
	wait_metric(d, "xdsd_connections_refused_total{reason=\"per_address\"}",
		    connected - KEPT);
	ck_assert_int_eq(wait_ended(fd, RAW, connected - KEPT), connected - KEPT);
	ck_assert(xdt_daemon_wait_log(d, "connection from 127.0.0.2:", WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "refused: 4 connections without a stream from this address already (max_idle_connections_per_address); its new connections are dropped until it holds fewer", WAIT_MS));
	wait_metric(d, IDLE_CONNS, KEPT);
	wait_metric(d, BLOCKED, 1);
	more = xdt_raw_connect(d->target, "127.0.0.2", false);
	ck_assert_msg(more < 0, "a blocked address connected");
	/* another address is served meanwhile */
	c = xdc_connect(d->target);
	s = watch(c);
	ck_assert_int_eq(served(s), 1);
	wait_metric(d, STREAMING_CONNS, 1);
	raw_close(fd, RAW);
	wait_metric(d, IDLE_CONNS, 0);
	wait_metric(d, BLOCKED, 0);
	more = xdt_raw_connect(d->target, "127.0.0.2", false);
	ck_assert_msg(more >= 0, "an address no longer over its limit still blocked");
	close(more);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/* A connection that opens no stream within first_stream_timeout is
 * closed (counted, logged); one with a stream is not. */
START_TEST(first_stream_timeout)
{
	enum { RAW = 6 };
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = start_with(
		dir, "first_stream_timeout: 1s\nhandshake_timeout: 1h");
	struct xdc_conn *c = xdc_connect(d->target);
	struct xdc_stream *s = watch(c);
	int fd[RAW];

	ck_assert_int_eq(served(s), 1);
	raw_open(d, fd, RAW);
	ck_assert_int_eq(wait_ended(fd, RAW, RAW), RAW);
	wait_metric(d, "xdsd_connections_first_stream_timeouts_total", RAW);
	ck_assert(xdt_daemon_wait_log(d, "connection from 127.0.0.2:", WAIT_MS));
	ck_assert(xdt_daemon_wait_log(d, "closed: no stream within first_stream_timeout (1000 ms)", WAIT_MS));
	wait_metric(d, IDLE_CONNS, 0);
	wait_metric(d, STREAMING_CONNS, 1);
	raw_close(fd, RAW);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/*
 * More connections than the open files limit allows, from an address
 * exempt from the per-address limit: those beyond fd_reserve are
 * refused (counted, logged) while the admin endpoint still answers,
 * and once they go xDS clients are served again: gRPC's listener never
 * met EMFILE, which in gRPC 1.51 would have stopped it for good. The
 * reserve is the default, 64: a refused connection holds its descriptor
 * until gRPC closes it, and under load gRPC accepted over 30 more of
 * such a burst before closing those refused (a reserve of 32 was
 * overrun in some runs).
 */
START_TEST(descriptors_kept)
{
	enum { NOFILE = 256, RAW = 400, RESERVE = 64 };
	char *dir = xdtest_clusters_snapdir(1);
	char cfg[1024];
	struct xdt_daemon *d;
	int fd[RAW];
	struct xdc_conn *c;
	struct xdc_stream *s;
	char *log;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n"
		 "trusted_proxies: [127.0.0.2]\nfd_reserve: %d\n"
		 "first_stream_timeout: 0\nhandshake_timeout: 1h\n", dir, RESERVE);
	d = xdt_daemon_start_nofile(cfg, NOFILE, START_MS);
	/* a few may get no answer while the descriptors are short */
	ck_assert_int_gt(raw_try(d, fd, RAW), NOFILE);
	/* the admin endpoint answers, and says why the rest were refused */
	ck_assert(xdt_daemon_wait_log(d, "descriptors or more open of the open files limit 256, fd_reserve 64 kept free", 4 * WAIT_MS));
	ck_assert(xdt_daemon_metric(d, "xdsd_connections_refused_total{reason=\"descriptors\"}") > 0);
	ck_assert(xdt_daemon_metric(d, IDLE_CONNS) < NOFILE - RESERVE);
	raw_close(fd, RAW);
	wait_metric(d, IDLE_CONNS, 0);
	c = xdc_connect(d->target);
	s = watch(c);
	ck_assert_int_eq(served(s), 1);
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "Failed accept4") == NULL,
		      "gRPC's accept failed:\n%s", log);
	free(log);
	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d);
	free(dir);
}
END_TEST

/*
 * A storm of connections from one address, each closed at once, with
 * the open files limit low: the address goes over its limit of
 * connections without a stream, is refused and then blocked, and a
 * client from another address is served throughout and after (gRPC,
 * busy accepting, closes connections more slowly than such a storm
 * opens them: unchecked, they took every descriptor and its listener
 * stopped for good).
 */
START_TEST(connect_close_storm)
{
	enum { NOFILE = 256, ROUNDS = 4, PER_ROUND = 1000 };
	char *dir = xdtest_clusters_snapdir(1);
	char cfg[512], *log;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nlog_level: debug\n"
		 "max_idle_connections_per_address: 8\n", dir);
	d = xdt_daemon_start_nofile(cfg, NOFILE, START_MS);
	/* each round ends at the first attempt that gets no answer */
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < PER_ROUND; i++) {
			int fd = xdt_raw_connect(d->target, "127.0.0.2", false);

			if (fd < 0)
				break;
			close(fd);
		}
	}
	/* a client is served once the storm is over, on a connection of
	 * its own (one refused while the descriptors ran short is not
	 * retried by this test's client) */
	for (int tries = 0;; tries++) {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r;

		c = xdc_connect(d->target);
		s = watch(c);
		r = xdc_recv_sotw(s, WAIT_MS);
		xdc_stream_free(s);
		xdc_conn_free(c);
		if (r != NULL) {
			envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
			break;
		}
		ck_assert_msg(tries < 5, "no client served after the storm");
	}
	ck_assert(xdt_daemon_metric(d, "xdsd_connections_refused_total{reason=\"per_address\"}") > 0);
	log = xdt_daemon_log(d);
	ck_assert_msg(strstr(log, "Failed accept4") == NULL,
		      "gRPC's accept failed:\n%s", log);
	free(log);
	stop(d);
	free(dir);
}
END_TEST

/*
 * Memory comes back once clients go: 600 clients connect, subscribe and
 * go; xdsd gives the heap pages their connections took back to the
 * system (counted), so that its RSS falls back at least halfway to
 * what it was before them (under AddressSanitizer, whose quarantine
 * holds freed memory, only the count is checked).
 */
START_TEST(memory_back_after_clients_go)
{
	enum { CLIENTS = 600 };
	char *dir = xdtest_clusters_snapdir(1);
	struct xdt_daemon *d = start_with(dir, "");
	struct xdc_mute *m[CLIENTS];
	long before, peak, now;
	long long deadline;

	before = xdt_daemon_rss_kb(d);
	mutes_open(m, CLIENTS, d->target, "churn");
	wait_metric(d, STREAMING_CONNS, CLIENTS);
	peak = xdt_daemon_rss_kb(d);
	for (int i = 0; i < CLIENTS; i++)
		xdc_mute_close(m[i]);
	wait_metric(d, STREAMING_CONNS, 0);
	deadline = xdtest_now_ms() + 6 * WAIT_MS;
	while (xdt_daemon_metric(d, "xdsd_heap_trims_total") < 1 &&
	       xdtest_now_ms() < deadline)
		xdtest_sleep_ms(50);
	ck_assert_msg(xdt_daemon_metric(d, "xdsd_heap_trims_total") >= 1,
		      "no heap trim after %d clients went", CLIENTS);
	while ((now = xdt_daemon_rss_kb(d)) > before + (peak - before) / 2 &&
	       xdtest_now_ms() < deadline)
		xdtest_sleep_ms(50);
	ck_assert_msg(xdt_daemon_has_asan(d) || now <= before + (peak - before) / 2,
		      "RSS %ld kB before %d clients, %ld kB with them, %ld kB once they went",
		      before, CLIENTS, peak, now);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");

	xdtest_tmpdir();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, connections_per_address);
	tcase_add_test(tc, balancer_not_trusted);
	tcase_add_test(tc, balancer_trusted);
	tcase_add_test(tc, names_per_stream);
	tcase_add_test(tc, requests_per_second);
	tcase_add_test(tc, node_size);
	tcase_add_test(tc, clients_that_never_read);
	tcase_add_test(tc, open_files_limit_raised);
	tcase_add_test(tc, large_request_small_read_chunks);
	tcase_add_test(tc, idle_connections_per_address);
	tcase_add_test(tc, first_stream_timeout);
	tcase_add_test(tc, descriptors_kept);
	tcase_add_test(tc, connect_close_storm);
	tcase_add_test(tc, memory_back_after_clients_go);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
