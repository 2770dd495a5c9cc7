/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsd under systemd, end to end: the real daemon with NOTIFY_SOCKET
 * pointing at a datagram socket the test binds, as systemd's own: what
 * it says when it is ready, reloads and stops (Type=notify), the
 * STATUS= line `systemctl status` shows, and the watchdog keepalive
 * (WatchdogSec=, passed as WATCHDOG_USEC and WATCHDOG_PID).
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "xdtest.h"

#define START_MS 10000
#define STOP_MS 5000
/* The STATUS= timer runs every 5 s: a few periods, for slow builds. */
#define STATUS_WAIT_MS 20000

struct notify_sock {
	int fd;
	char path[108];
};

static void sock_open(struct notify_sock *ns)
{
	static int seq;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	ns->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert(ns->fd >= 0);
	snprintf(ns->path, sizeof(ns->path), "%s/notify.%d.%d",
		 xdtest_tmpdir(), (int)getpid(), seq++);
	memcpy(sa.sun_path, ns->path, sizeof(ns->path));
	ck_assert(bind(ns->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
}

static void sock_close(struct notify_sock *ns)
{
	close(ns->fd);
	unlink(ns->path);
}

/* The kernel's time of each datagram's send, from now on: what the
 * daemon did when, whenever this process gets to read it. */
static void sock_stamp(struct notify_sock *ns)
{
	int on = 1;

	ck_assert(setsockopt(ns->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on,
			     sizeof(on)) == 0);
}

/* The next message within `ms`, malloc'd, or NULL; with sock_stamp, in
 * *sent_ms (may be NULL) when it was sent, else 0. */
static char *recv_stamped(struct notify_sock *ns, int ms, long long *sent_ms)
{
	struct pollfd p = {.fd = ns->fd, .events = POLLIN};
	char buf[4096];
	union {
		char space[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {buf, sizeof(buf) - 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.space,
			    .msg_controllen = sizeof(ctl.space)};
	ssize_t n;

	if (ms < 0 || poll(&p, 1, ms) != 1)
		return NULL;
	n = recvmsg(ns->fd, &mh, 0);
	ck_assert(n > 0);
	buf[n] = '\0';
	if (sent_ms != NULL) {
		*sent_ms = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL;
		     c = CMSG_NXTHDR(&mh, c)) {
			struct timespec ts;

			if (c->cmsg_level != SOL_SOCKET ||
			    c->cmsg_type != SCM_TIMESTAMPNS)
				continue;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			*sent_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		}
	}
	return strdup(buf);
}

static char *recv_within(struct notify_sock *ns, int ms)
{
	return recv_stamped(ns, ms, NULL);
}

/* The first message containing `needle` within `ms` (others, such as
 * watchdog keepalives, are skipped); fails the test if none comes. */
static char *recv_matching(struct notify_sock *ns, const char *needle, int ms)
{
	long long deadline = xdtest_now_ms() + ms;

	for (;;) {
		char *m = recv_within(ns, (int)(deadline - xdtest_now_ms()));

		ck_assert_msg(m != NULL, "no message with '%s' within %d ms",
			      needle, ms);
		if (strstr(m, needle) != NULL)
			return m;
		free(m);
	}
}

static struct xdt_daemon *start(struct notify_sock *ns, const char *config,
				const char *const *env_more)
{
	char notify[160];
	const char *env[8] = {notify};
	struct xdt_daemon *d;
	size_t n = 1;

	snprintf(notify, sizeof(notify), "NOTIFY_SOCKET=%s", ns->path);
	for (; env_more != NULL && *env_more != NULL && n < 7; env_more++)
		env[n++] = *env_more;
	d = xdt_daemon_spawn_env(config, NULL, env);
	xdt_daemon_wait_ready(d, START_MS);
	return d;
}

static void stop(struct xdt_daemon *d, struct notify_sock *ns)
{
	char *m;

	xdt_daemon_signal(d, SIGTERM);
	m = recv_matching(ns, "STOPPING=1", STOP_MS);
	free(m);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
	sock_close(ns);
}

static char *config_for(const char *dir)
{
	char *cfg;

	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nsnapshots: %s\n",
			   dir) > 0);
	return cfg;
}

/* READY=1 once listening, with a STATUS= that counts what is served;
 * the count of streams follows clients on the status timer. */
START_TEST(ready_then_status_follows_streams)
{
	struct notify_sock ns;
	char *dir = xdtest_clusters_snapdir(3), *cfg = config_for(dir), *m,
	     *log;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;

	sock_open(&ns);
	d = start(&ns, cfg, NULL);
	m = recv_within(&ns, START_MS);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strncmp(m, "READY=1\n", 8) == 0, "got '%s'", m);
	ck_assert_msg(strstr(m, "STATUS=serving 1 snapshot to 0 streams; loaded at start-up ") != NULL,
		      "got '%s'", m);
	/* ready: the start is over, its timeout no longer pushed back */
	ck_assert_msg(strstr(m, "EXTEND_TIMEOUT_USEC") == NULL, "got '%s'", m);
	/* READY comes only after the port is open */
	log = xdt_daemon_log(d);
	ck_assert_ptr_nonnull(strstr(log, "listening on"));
	free(log);
	free(m);

	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "systemd-test", "any");
	m = recv_matching(&ns, "STATUS=serving 1 snapshot to 1 stream;",
			  STATUS_WAIT_MS);
	ck_assert_ptr_null(strstr(m, "READY=1"));
	ck_assert_ptr_null(strstr(m, "EXTEND_TIMEOUT_USEC"));
	free(m);
	xdc_stream_free(s);
	xdc_conn_free(c);
	m = recv_matching(&ns, "to 0 streams;", STATUS_WAIT_MS);
	free(m);
	stop(d, &ns);
	free(cfg);
	free(dir);
}
END_TEST

/* Waiting for etcd's first snapshots, not ready: every STATUS= says
 * EXTEND_TIMEOUT_USEC= (the first at once), so that systemd's start
 * timeout does not kill a start that is waiting, not stuck. */
START_TEST(waiting_for_etcd_extends_the_start)
{
	static const char cfg[] =
		"listen: 127.0.0.1:0\nstate_dir: off\nsource: etcd\n"
		"etcd:\n  endpoints: ['127.0.0.1:1']\n  dial_timeout: 100ms\n";
	struct notify_sock ns;
	struct xdt_daemon *d;
	char *m;

	sock_open(&ns);
	d = start(&ns, cfg, NULL);
	for (int i = 0; i < 2; i++) {
		m = recv_matching(&ns, "STATUS=", i == 0 ? START_MS : STATUS_WAIT_MS);
		ck_assert_msg(strncmp(m, "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=serving 0 snapshots", 55) == 0,
			      "got '%s'", m);
		ck_assert_ptr_null(strstr(m, "READY=1"));
		free(m);
	}
	stop(d, &ns);
}
END_TEST

/* SIGHUP: RELOADING=1, then READY=1 and a STATUS= that says how the
 * reload went, ok or FAILED with its first error. */
START_TEST(reload_notifies_and_reports)
{
	struct notify_sock ns;
	char *dir = xdtest_clusters_snapdir(2), *cfg = config_for(dir), *m;
	struct xdt_daemon *d;

	sock_open(&ns);
	d = start(&ns, cfg, NULL);
	free(recv_matching(&ns, "READY=1", START_MS));

	xdtest_write_clusters(dir, "team-a.yaml", "a", 1);
	xdt_daemon_signal(d, SIGHUP);
	m = recv_within(&ns, START_MS);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m, "RELOADING=1");
	free(m);
	m = recv_within(&ns, START_MS);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m, "READY=1");
	free(m);
	m = recv_within(&ns, START_MS);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strstr(m, "STATUS=serving 2 snapshots to 0 streams; last reload ok ") == m,
		      "got '%s'", m);
	free(m);

	free(xdtest_write_file(dir, "team-b.yaml",
			       "clusters:\n- {name: b, type: NONSENSE}\n"));
	xdt_daemon_signal(d, SIGHUP);
	free(recv_matching(&ns, "RELOADING=1", START_MS));
	free(recv_matching(&ns, "READY=1", START_MS));
	m = recv_matching(&ns, "STATUS=", START_MS);
	ck_assert_msg(strstr(m, "STATUS=serving 2 snapshots to 0 streams; last reload FAILED ") != NULL,
		      "got '%s'", m);
	ck_assert_msg(strstr(m, "team-b.yaml:") != NULL, "got '%s'", m);
	ck_assert_ptr_null(strchr(m, '\n'));
	free(m);
	stop(d, &ns);
	free(cfg);
	free(dir);
}
END_TEST

/*
 * WatchdogSec=: WATCHDOG=1 every half of WATCHDOG_USEC, from the loop:
 * they keep coming, and paced, not in a burst. The pace is read from
 * the kernel's time of each send, not from when this process got to
 * read them: a busy machine can only spread the daemon's sends out,
 * never bunch them, so five intervals of 150 ms span at least 650 ms
 * however loaded it is (a timer that fired at once would not).
 */
START_TEST(watchdog_keepalive)
{
	static const char *const env[] = {"WATCHDOG_USEC=300000",
					  "WATCHDOG_PID=$PID", NULL};
	struct notify_sock ns;
	struct xdt_daemon *d;
	long long first = 0, last = 0;
	int seen = 0;

	sock_open(&ns);
	sock_stamp(&ns);
	d = start(&ns, NULL, env);
	while (seen < 6) {
		long long deadline = xdtest_now_ms() + START_MS, sent = 0;
		char *m;

		do {
			m = recv_stamped(&ns, (int)(deadline - xdtest_now_ms()), &sent);
			ck_assert_msg(m != NULL, "keepalive %d: no WATCHDOG=1 within %d ms",
				      seen + 1, START_MS);
			if (strcmp(m, "WATCHDOG=1") != 0) {
				free(m); /* READY=1, STATUS=... */
				m = NULL;
			}
		} while (m == NULL);
		free(m);
		ck_assert_msg(sent > 0, "no send time on the notify socket");
		last = sent;
		if (seen++ == 0)
			first = last;
	}
	ck_assert_msg(last - first >= 5 * 150 - 100,
		      "six keepalives sent within %lld ms: a burst, not every 150 ms",
		      last - first);
	ck_assert(xdt_daemon_wait_log(d, "systemd watchdog: 300 ms, keepalive every 150 ms", 1000));
	stop(d, &ns);
}
END_TEST

/* WATCHDOG_PID names another process: the watchdog is not ours. */
START_TEST(watchdog_of_another_process_ignored)
{
	static const char *const env[] = {"WATCHDOG_USEC=100000",
					  "WATCHDOG_PID=1", NULL};
	struct notify_sock ns;
	struct xdt_daemon *d;
	long long deadline;
	char *m, *log;

	sock_open(&ns);
	d = start(&ns, NULL, env);
	free(recv_matching(&ns, "READY=1", START_MS));
	deadline = xdtest_now_ms() + 1000;
	while ((m = recv_within(&ns, (int)(deadline - xdtest_now_ms()))) !=
	       NULL) {
		ck_assert_msg(strstr(m, "WATCHDOG=1") == NULL, "got '%s'", m);
		free(m);
	}
	log = xdt_daemon_log(d);
	ck_assert_ptr_null(strstr(log, "systemd watchdog"));
	free(log);
	stop(d, &ns);
}
END_TEST

/* Broken snapshots at start with a saved state: READY=1 (the saved
 * state is served), and STATUS= leads with it until they are fixed. */
START_TEST(status_says_last_good_state)
{
	struct notify_sock ns;
	char *dir = xdtest_clusters_snapdir(1), *state = xdtest_snapdir(),
	     *cfg, *m;
	struct xdt_daemon *d;

	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nsnapshots: %s\nstate_dir: %s\n",
			   dir, state) > 0);
	sock_open(&ns);
	d = start(&ns, cfg, NULL);
	free(recv_matching(&ns, "READY=1", START_MS));
	ck_assert(xdt_daemon_wait_log(d, "saved the last good state", 5000));
	stop(d, &ns);

	free(xdtest_write_file(dir, "default.yaml",
			       "clusters:\n- {name: b, type: NONSENSE}\n"));
	sock_open(&ns);
	d = start(&ns, cfg, NULL);
	m = recv_matching(&ns, "READY=1", START_MS);
	ck_assert_msg(strstr(m, "\nSTATUS=SERVING THE LAST GOOD STATE saved ") != NULL,
		      "got '%s'", m);
	ck_assert_msg(strstr(m, ": the snapshots are refused (1 error); serving 1 snapshot to 0 streams") != NULL,
		      "got '%s'", m);
	free(m);

	xdtest_write_clusters(dir, "default.yaml", "fixed", 2);
	xdt_daemon_signal(d, SIGHUP);
	free(recv_matching(&ns, "RELOADING=1", START_MS));
	m = recv_matching(&ns, "STATUS=", START_MS);
	ck_assert_msg(strstr(m, "STATUS=serving 1 snapshot to 0 streams; last reload ok ") == m,
		      "got '%s'", m);
	free(m);
	stop(d, &ns);
	free(cfg);
	free(state);
	free(dir);
}
END_TEST

/*
 * `rollout:`: STATUS= says a rollout is under way, with its canaries,
 * and after a canary that never answers has failed it (rollout.timeout),
 * that it failed and why, ahead of what is served.
 */
START_TEST(status_says_rollout_under_way_and_failed)
{
	struct notify_sock ns;
	char *dir = xdtest_clusters_snapdir(1), *cfg, *m;
	struct xdt_daemon *d;
	struct xdc_conn *c;
	struct xdc_stream *s;
	char *v;

	ck_assert(asprintf(&cfg, "listen: 127.0.0.1:0\nsnapshots: %s\n"
				 "rollout:\n  canary: ['canary-*']\n  bake: 1h\n"
				 "  canary_timeout: 2s\n  on_canary_timeout: fail\n",
			   dir) > 0);
	sock_open(&ns);
	d = start(&ns, cfg, NULL);
	free(recv_matching(&ns, "READY=1", START_MS));
	c = xdc_connect(d->target);
	s = xdc_watch_clusters(c, "canary-1", "x");
	ck_assert_int_eq(xdc_next_clusters(s, START_MS, &v), 1);
	free(v);

	/* the canary is sent the change and never answers it */
	xdtest_write_clusters(dir, "default.yaml", "c", 2);
	xdt_daemon_signal(d, SIGHUP);
	m = recv_matching(&ns, "STATUS=rollout 1 ", STATUS_WAIT_MS);
	ck_assert_msg(strstr(m, "STATUS=rollout 1 canary: 0 of 1 canary answered; serving 1 snapshot to 1 stream; ") != NULL,
		      "got '%s'", m);
	free(m);
	m = recv_matching(&ns, "STATUS=ROLLOUT 1 FAILED ", STATUS_WAIT_MS);
	ck_assert_msg(strstr(m, ", rolled back: canary node 'canary-1' did not answer within canary_timeout of 2000 ms (0 of 1 connected canaries answered); serving 1 snapshot to 1 stream; ") != NULL,
		      "got '%s'", m);
	free(m);

	xdc_stream_free(s);
	xdc_conn_free(c);
	stop(d, &ns);
	free(cfg);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("systemd");
	TCase *tc = tcase_create("notify");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ready_then_status_follows_streams);
	tcase_add_test(tc, reload_notifies_and_reports);
	tcase_add_test(tc, waiting_for_etcd_extends_the_start);
	tcase_add_test(tc, watchdog_keepalive);
	tcase_add_test(tc, watchdog_of_another_process_ignored);
	tcase_add_test(tc, status_says_last_good_state);
	tcase_add_test(tc, status_says_rollout_under_way_and_failed);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
