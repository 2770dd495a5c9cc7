/* SPDX-License-Identifier: Apache-2.0 */
#include "etcd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xdtest.h"

#define START_MS 10000

int xdt_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	ck_assert(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* etcdctl's command line for `e` up to its arguments: the endpoint,
 * and the client certificate when etcd asks for one (malloc'd). */
static char *etcdctl_cmd(const struct xdt_etcd *e, const char *args,
			 const char *redirect)
{
	char tls[1024] = "";
	char *cmd;

	if (e->tls)
		snprintf(tls, sizeof(tls), "--cacert=%s --cert=%s --key=%s",
			 xdtest_cert("ca.pem"), xdtest_cert("frontend.pem"),
			 xdtest_cert("frontend.key"));
	ck_assert(asprintf(&cmd, "ETCDCTL_API=3 etcdctl --endpoints=%s %s %s %s",
			   e->endpoint, tls, args, redirect) > 0);
	return cmd;
}

int xdt_etcdctl(const struct xdt_etcd *e, const char *args, const char *input)
{
	char *cmd = etcdctl_cmd(e, args, ">/dev/null 2>&1");
	FILE *p;

	p = popen(cmd, "w");
	ck_assert(p != NULL);
	if (input != NULL)
		fputs(input, p);
	free(cmd);
	return pclose(p);
}

void xdt_etcd_run(struct xdt_etcd *e)
{
	char client[64], peer[64], cluster[96];

	snprintf(client, sizeof(client), "%s://127.0.0.1:%d",
		 e->tls ? "https" : "http", e->client_port);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", e->peer_port);
	snprintf(cluster, sizeof(cluster), "default=%s", peer);
	e->pid = fork();
	ck_assert(e->pid >= 0);
	if (e->pid == 0) {
		FILE *f = freopen(e->log, "a", stderr);

		if (f == NULL || dup2(2, 1) < 0)
			_exit(126);
		if (e->tls)
			execlp("etcd", "etcd", "--data-dir", e->data,
			       "--listen-client-urls", client,
			       "--advertise-client-urls", client,
			       "--listen-peer-urls", peer,
			       "--initial-advertise-peer-urls", peer,
			       "--initial-cluster", cluster,
			       "--cert-file", xdtest_cert("server.pem"),
			       "--key-file", xdtest_cert("server.key"),
			       "--trusted-ca-file", xdtest_cert("ca.pem"),
			       "--client-cert-auth", (char *)NULL);
		else
			execlp("etcd", "etcd", "--data-dir", e->data,
			       "--listen-client-urls", client,
			       "--advertise-client-urls", client,
			       "--listen-peer-urls", peer,
			       "--initial-advertise-peer-urls", peer,
			       "--initial-cluster", cluster,
			       /* xdsctl push of a prefix of many keys */
			       "--max-txn-ops", "10000", (char *)NULL);
		_exit(127);
	}
	for (long long end = xdtest_now_ms() + START_MS;;) {
		int status;

		if (xdt_etcdctl(e, "endpoint health", NULL) == 0)
			return;
		XDT_REQUIRE(waitpid(e->pid, &status, WNOHANG) == 0,
			    "etcd exited (status %d): is etcd-server installed (scripts/install-deps)? see %s",
			    status, e->log);
		XDT_REQUIRE(xdtest_now_ms() < end, "etcd did not answer within %d ms; see %s",
			    START_MS, e->log);
		xdtest_sleep_ms(100);
	}
}

struct xdt_etcd *xdt_etcd_new(void)
{
	struct xdt_etcd *e = calloc(1, sizeof(*e));

	ck_assert(e != NULL);
	e->client_port = xdt_free_port();
	do
		e->peer_port = xdt_free_port();
	while (e->peer_port == e->client_port);
	snprintf(e->endpoint, sizeof(e->endpoint), "127.0.0.1:%d",
		 e->client_port);
	e->data = xdtest_snapdir();
	ck_assert(asprintf(&e->log, "%s.log", e->data) > 0);
	return e;
}

void xdt_etcd_kill(struct xdt_etcd *e)
{
	int status;

	if (e->pid <= 0)
		return;
	kill(e->pid, SIGKILL);
	ck_assert(waitpid(e->pid, &status, 0) == e->pid);
	e->pid = 0;
}

void xdt_etcd_free(struct xdt_etcd *e)
{
	char *cmd;

	xdt_etcd_kill(e);
	ck_assert(asprintf(&cmd, "rm -rf '%s'", e->data) > 0);
	ck_assert(system(cmd) == 0);
	free(cmd);
	free(e->data);
	free(e->log);
	free(e);
}

long long xdt_etcd_revision(const struct xdt_etcd *e)
{
	char *cmd, line[4096];
	const char *at;
	long long rev;
	FILE *p;

	cmd = etcdctl_cmd(e, "get / -w json", "2>/dev/null");
	p = popen(cmd, "r");
	ck_assert(p != NULL);
	ck_assert(fgets(line, sizeof(line), p) != NULL);
	ck_assert_int_eq(pclose(p), 0);
	free(cmd);
	/* read by hand: its cluster_id does not fit jansson's integers */
	at = strstr(line, "\"revision\":");
	ck_assert_msg(at != NULL && sscanf(at, "\"revision\":%lld", &rev) == 1,
		      "etcdctl: %s", line);
	ck_assert(rev > 0);
	return rev;
}

char *xdt_etcd_get(const struct xdt_etcd *e, const char *key)
{
	char *args, *cmd, buf[65536];
	size_t len;
	FILE *p;

	ck_assert(asprintf(&args, "get '%s' --print-value-only", key) > 0);
	cmd = etcdctl_cmd(e, args, "2>/dev/null");
	free(args);
	p = popen(cmd, "r");
	ck_assert(p != NULL);
	len = fread(buf, 1, sizeof(buf) - 1, p);
	ck_assert_int_eq(pclose(p), 0);
	free(cmd);
	buf[len] = '\0';
	if (len == 0)
		return NULL;
	if (buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	return strdup(buf);
}

long long xdt_etcd_mod_revision(const struct xdt_etcd *e, const char *key)
{
	char *args, *cmd, line[65536];
	const char *at;
	long long rev;
	FILE *p;

	ck_assert(asprintf(&args, "get '%s' -w json", key) > 0);
	cmd = etcdctl_cmd(e, args, "2>/dev/null");
	free(args);
	p = popen(cmd, "r");
	ck_assert(p != NULL);
	ck_assert(fgets(line, sizeof(line), p) != NULL);
	ck_assert_int_eq(pclose(p), 0);
	free(cmd);
	at = strstr(line, "\"mod_revision\":");
	ck_assert_msg(at != NULL && sscanf(at, "\"mod_revision\":%lld", &rev) == 1,
		      "etcdctl: %s", line);
	return rev;
}

void xdt_etcd_put(const struct xdt_etcd *e, const char *key, const char *text)
{
	char args[1024];

	snprintf(args, sizeof(args), "put '%s'", key);
	ck_assert_int_eq(xdt_etcdctl(e, args, text), 0);
}

int xdt_etcd_count(const struct xdt_etcd *e, const char *prefix)
{
	char *args, *cmd, line[4096];
	int n = 0;
	FILE *p;

	ck_assert(asprintf(&args, "get '%s' --prefix --keys-only", prefix) > 0);
	cmd = etcdctl_cmd(e, args, "2>/dev/null");
	free(args);
	p = popen(cmd, "r");
	ck_assert(p != NULL);
	/* a key a line, each followed by an empty one */
	while (fgets(line, sizeof(line), p) != NULL)
		n += line[0] != '\n';
	ck_assert_int_eq(pclose(p), 0);
	free(cmd);
	return n;
}
