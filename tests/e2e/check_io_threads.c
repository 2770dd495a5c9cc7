/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC's I/O on several threads (io_threads, xdsd.yaml(5)): the daemon
 * runs as many completion-queue threads as asked, one per CPU core by
 * default; many mutual-TLS clients handshaking at once on their own
 * connections are all served, and the daemon stops cleanly with their
 * streams open (every thread sees the queue's shutdown and is joined).
 */
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 10000
#define WAIT_MS 20000
#define CLIENTS 64

/* Threads of `pid` named `name` (/proc/PID/task/N/comm). */
static int threads_named(pid_t pid, const char *name)
{
	char path[320], comm[64];
	struct dirent *e;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	ck_assert_msg(dir != NULL, "cannot list %s", path);
	while ((e = readdir(dir)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid,
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue; /* a thread that just ended */
		if (fgets(comm, sizeof(comm), f) != NULL) {
			comm[strcspn(comm, "\n")] = '\0';
			n += strcmp(comm, name) == 0;
		}
		fclose(f);
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
	ck_assert_int_eq(threads_named(d->pid, "xdsd-io"), cores);
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

	ck_assert_int_eq(threads_named(d->pid, "xdsd-io"), 4);
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

int main(void)
{
	Suite *s = suite_create("io_threads");
	TCase *tc = tcase_create("io_threads");

	xdtest_make_certs();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_io_thread_per_core_by_default);
	tcase_add_test(tc, many_tls_clients_at_once_on_four_threads);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
