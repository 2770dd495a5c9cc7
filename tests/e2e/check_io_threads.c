/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC's I/O on several threads (io_threads, xdsd.yaml(5)): the daemon
 * runs as many completion-queue threads as asked, one per CPU core by
 * default; many mutual-TLS clients handshaking at once on their own
 * connections are all served, and the daemon stops cleanly with their
 * streams open (every thread sees the queue's shutdown and is joined).
 * Threads past the first sleep while the queue is quiet, even with
 * traffic on the connections, come back at the next completion, and
 * the daemon stops cleanly while they sleep. gRPC's threads run with a
 * timer slack of 50 ms, the loop thread with the default.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 10000
#define WAIT_MS 20000
#define CLIENTS 64
/* the bridge's XD_BRIDGE_LINGER_MS, and some */
#define PARK_MS 2500

#define MAX_IO 8

/*
 * Threads of `pid` named `name`; the first `max` of them also give their
 * thread id and their context switches so far, voluntary and not, in
 * `tid` and `sw` (/proc/PID/task/N/status).
 */
static int threads_named(pid_t pid, const char *name, int *tid, long *sw,
			 int max)
{
	char path[320], line[128];
	struct dirent *e;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	ck_assert_msg(dir != NULL, "cannot list %s", path);
	while ((e = readdir(dir)) != NULL) {
		bool named = false;
		long total = 0;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
			 (int)pid, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue; /* a thread that just ended */
		while (fgets(line, sizeof(line), f) != NULL) {
			long v;

			line[strcspn(line, "\n")] = '\0';
			if (strncmp(line, "Name:", 5) == 0)
				named = strcmp(line + 5 + strspn(line + 5, " \t"),
					       name) == 0;
			else if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
				 sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
				total += v;
		}
		fclose(f);
		if (named && n < max) {
			tid[n] = atoi(e->d_name);
			sw[n] = total;
		}
		n += named;
	}
	closedir(dir);
	return n;
}

/* xdsd serving 2 clusters over mTLS, with `extra` config lines. */
static struct xdt_daemon *start_mtls(const char *dir, const char *extra)
{
	char cfg[2048];

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\n"
		 "max_connections_per_address: 0\n"
		 /* every client is on 127.0.0.1, handshaking at once */
		 "max_idle_connections_per_address: 0\n"
		 "tls:\n  cert: %s\n  key: %s\n  client_ca: %s\n%s",
		 dir, xdtest_cert("server.pem"), xdtest_cert("server.key"),
		 xdtest_cert("ca.pem"), extra);
	return xdt_daemon_start(cfg, NULL, START_MS);
}

static void stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert_msg(xdt_daemon_wait(d, STOP_MS), "xdsd did not stop");
	ck_assert_int_eq(d->exit_status, 0);
	ck_assert(xdt_daemon_wait_log(d, "info: stopped", 100));
	xdt_daemon_free(d);
}

/* Without io_threads, one thread per core this process may run on. */
START_TEST(one_io_thread_per_core_by_default)
{
	char *dir = xdtest_clusters_snapdir(2);
	struct xdt_daemon *d = start_mtls(dir, "io_threads: 0\n");
	cpu_set_t set;
	int cores;

	ck_assert(sched_getaffinity(0, sizeof(set), &set) == 0);
	cores = CPU_COUNT(&set);
	ck_assert_int_eq(threads_named(d->pid, "xdsd-io", NULL, NULL, 0), cores);
	stop(d);
	free(dir);
}
END_TEST

/*
 * io_threads: 4, and CLIENTS mTLS clients, each on its own connection,
 * all opened before any is read: their handshakes overlap. Each is
 * served the snapshot; then the daemon stops with all their streams
 * open.
 */
START_TEST(many_tls_clients_at_once_on_four_threads)
{
	char *dir = xdtest_clusters_snapdir(2), id[32];
	struct xdt_daemon *d = start_mtls(dir, "io_threads: 4\n");
	struct xdc_conn *c[CLIENTS];
	struct xdc_stream *s[CLIENTS];

	ck_assert_int_eq(threads_named(d->pid, "xdsd-io", NULL, NULL, 0), 4);
	ck_assert(xdt_daemon_wait_log(d, "info: 4 I/O threads for gRPC", 100));
	for (int i = 0; i < CLIENTS; i++) {
		c[i] = xdc_connect_tls(d->target, xdtest_cert("ca.pem"),
				       xdtest_cert("frontend.pem"),
				       xdtest_cert("frontend.key"));
		snprintf(id, sizeof(id), "n%d", i);
		s[i] = xdc_watch_clusters(c[i], id, "prod");
	}
	for (int i = 0; i < CLIENTS; i++)
		ck_assert_msg(xdc_next_clusters(s[i], WAIT_MS, NULL) == 2,
			      "client %d not served", i);
	ck_assert(!xdt_daemon_wait_log(d, "TLS handshake with", 0));
	stop(d);
	for (int i = 0; i < CLIENTS; i++) {
		xdc_stream_free(s[i]);
		xdc_conn_free(c[i]);
	}
	free(dir);
}
END_TEST

/* Switches of thread `t` in a sample taken by threads_named, -1 if
 * it is not there. */
static long switches_of(int t, const int *tid, const long *sw, int n)
{
	for (int i = 0; i < n; i++)
		if (tid[i] == t)
			return sw[i];
	return -1;
}

/*
 * A bare HTTP/2 connection to 127.0.0.1:`port` that has said its
 * preface and acknowledged the server's settings: traffic for gRPC's
 * pollers that makes no completion (as a keepalive ping's answer).
 */
static int h2_open(int port)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	static const unsigned char settings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
	static const unsigned char settings_ack[9] = {0, 0, 0, 4, 1, 0, 0, 0, 0};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct pollfd p;
	char buf[512];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	ck_assert(write(fd, preface, sizeof(preface) - 1) == sizeof(preface) - 1);
	ck_assert(write(fd, settings, sizeof(settings)) == sizeof(settings));
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "no settings from xdsd");
	ck_assert(read(fd, buf, sizeof(buf)) > 0);
	ck_assert(write(fd, settings_ack, sizeof(settings_ack)) == sizeof(settings_ack));
	return fd;
}

/* Pings over `fd` every 50 ms for `ms`, reading the answers. */
static void h2_ping_for(int fd, int ms)
{
	unsigned char ping[17] = {0, 0, 8, 6, 0, 0, 0, 0, 0};
	char buf[512];

	for (int t = 0; t < ms; t += 50) {
		ping[16] = (unsigned char)t;
		ck_assert(write(fd, ping, sizeof(ping)) == sizeof(ping));
		xdtest_sleep_ms(50);
		while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
	}
}

/*
 * io_threads: 2. Once the queue has been quiet for a while, one thread
 * polls and the other sleeps: a peer's pings (answered inside gRPC, no
 * completion) wake only the first. A new stream (completions) wakes
 * the other; and the daemon stops cleanly while it sleeps again.
 */
START_TEST(threads_past_the_first_sleep_while_the_queue_is_quiet)
{
	char *dir = xdtest_clusters_snapdir(2), cfg[1024];
	int tid[2][MAX_IO], n[2], fd, polled = 0, slept = -1;
	long sw[2][MAX_IO], after;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s1, *s2;

	snprintf(cfg, sizeof(cfg),
		 "listen: 127.0.0.1:0\nsnapshots: %s\nio_threads: 2\n"
		 "min_client_ping_interval: 0\n", dir);
	d = xdt_daemon_start(cfg, NULL, START_MS);
	c = xdc_connect(d->target);
	s1 = xdc_watch_clusters(c, "n1", "prod");
	ck_assert_int_eq(xdc_next_clusters(s1, WAIT_MS, NULL), 2);
	fd = h2_open(d->port);
	h2_ping_for(fd, PARK_MS);

	/* pings only: one thread wakes for them, the other sleeps on */
	n[0] = threads_named(d->pid, "xdsd-io", tid[0], sw[0], MAX_IO);
	ck_assert_int_eq(n[0], 2);
	h2_ping_for(fd, 2000);
	n[1] = threads_named(d->pid, "xdsd-io", tid[1], sw[1], MAX_IO);
	ck_assert_int_eq(n[1], 2);
	for (int i = 0; i < n[0]; i++) {
		after = switches_of(tid[0][i], tid[1], sw[1], n[1]);
		ck_assert_msg(after >= 0, "I/O thread %d ended", tid[0][i]);
		if (after > sw[0][i])
			polled++;
		else
			slept = tid[0][i];
	}
	ck_assert_msg(polled == 1 && slept > 0,
		      "%d of 2 I/O threads woke for 40 pings that make no completion",
		      polled);

	/* a stream: completions, and the sleeping thread polls again */
	s2 = xdc_watch_clusters(c, "n2", "prod");
	ck_assert_int_eq(xdc_next_clusters(s2, WAIT_MS, NULL), 2);
	/* woken, it counts a switch once it waits on the queue again,
	 * which a loaded machine may let it do after the answer came */
	for (int t = 0;; t += 50) {
		n[1] = threads_named(d->pid, "xdsd-io", tid[1], sw[1], MAX_IO);
		ck_assert_int_eq(n[1], 2);
		if (switches_of(slept, tid[1], sw[1], n[1]) >
		    switches_of(slept, tid[0], sw[0], n[0]))
			break;
		ck_assert_msg(t < WAIT_MS,
			      "the sleeping I/O thread did not wake for a new stream");
		xdtest_sleep_ms(50);
	}

	/* it sleeps again, and the daemon stops all the same */
	h2_ping_for(fd, PARK_MS);
	stop(d);
	close(fd);
	xdc_stream_free(s1);
	xdc_stream_free(s2);
	xdc_conn_free(c);
	free(dir);
}
END_TEST

/* Timer slack of thread `tid` (/proc/TID/timerslack_ns), -1 if unread. */
static long slack_of(int tid)
{
	char path[64];
	long ns = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", tid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

/*
 * gRPC's timer thread and the I/O threads may wake 50 ms late, so that
 * the keepalive pings due within that time go out together; the loop
 * thread keeps the slack it started with (this process's).
 */
START_TEST(grpc_threads_have_timer_slack_and_the_loop_has_not)
{
	char *dir = xdtest_clusters_snapdir(2);
	struct xdt_daemon *d = start_mtls(dir, "io_threads: 2\n");
	int tid[MAX_IO], n;
	long sw[MAX_IO];

	ck_assert_int_eq(slack_of(d->pid), slack_of((int)getpid()));
	n = threads_named(d->pid, "xdsd-io", tid, sw, MAX_IO);
	ck_assert_int_eq(n, 2);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(slack_of(tid[i]), 50000000);
	n = threads_named(d->pid, "grpc_global_tim", tid, sw, MAX_IO);
	ck_assert(n >= 1 && n <= MAX_IO);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(slack_of(tid[i]), 50000000);
	stop(d);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("io_threads");
	TCase *tc = tcase_create("io_threads");

	xdtest_make_certs();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_io_thread_per_core_by_default);
	tcase_add_test(tc, many_tls_clients_at_once_on_four_threads);
	tcase_add_test(tc, threads_past_the_first_sleep_while_the_queue_is_quiet);
	tcase_add_test(tc, grpc_threads_have_timer_slack_and_the_loop_has_not);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
