/* SPDX-License-Identifier: Apache-2.0 */
#include "balancer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xdtest.h"

#define HAPROXY "/usr/sbin/haproxy"
#define START_MS 10000

/* A port nobody listens on now: bound to 0, read and let go (haproxy
 * binds it a moment later; another test taking it between is
 * unlikely, and then the start fails loudly). */
static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	XDT_REQUIRE(fd >= 0, "socket: %s", strerror(errno));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	XDT_REQUIRE(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
			    getsockname(fd, (struct sockaddr *)&a, &len) == 0,
		    "bind: %s", strerror(errno));
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static bool accepts(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Runs haproxy on the configuration in b->dir; returns once it
 * accepts connections on b->port. */
static void run(struct xdt_balancer *b)
{
	char *cfg, *log;
	long long deadline;
	int fd, status;

	XDT_REQUIRE(asprintf(&cfg, "%s/haproxy.cfg", b->dir) > 0 &&
			    asprintf(&log, "%s/haproxy.log", b->dir) > 0,
		    "out of memory");
	b->pid = fork();
	XDT_REQUIRE(b->pid >= 0, "fork: %s", strerror(errno));
	if (b->pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		/* a test that fails mid-way leaves no haproxy behind */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(HAPROXY, HAPROXY, "-db", "-f", cfg, (char *)NULL);
		_exit(127);
	}
	deadline = xdtest_now_ms() + START_MS;
	while (!accepts(b->port)) {
		char *said;

		if (waitpid(b->pid, &status, WNOHANG) == b->pid ||
		    xdtest_now_ms() > deadline) {
			said = xdtest_read_file(log, NULL);
			if (kill(b->pid, SIGKILL) == 0)
				waitpid(b->pid, &status, 0);
			xdtest_bail(__FILE__, __LINE__, "haproxy did not start: %s",
				    said ? said : "(no output)");
		}
		xdtest_sleep_ms(20);
	}
	free(cfg);
	free(log);
}

static struct xdt_balancer *balancer_new(void)
{
	struct xdt_balancer *b = calloc(1, sizeof(*b));

	XDT_REQUIRE(b != NULL, "out of memory");
	XDT_REQUIRE(access(HAPROXY, X_OK) == 0,
		    "%s is missing: install haproxy (scripts/install-deps)", HAPROXY);
	XDT_REQUIRE(asprintf(&b->dir, "%s/haproxy.%d.XXXXXX", xdtest_tmpdir(),
			     (int)getpid()) > 0 && mkdtemp(b->dir) != NULL,
		    "mkdtemp: %s", strerror(errno));
	b->port = free_port();
	snprintf(b->target, sizeof(b->target), "127.0.0.1:%d", b->port);
	return b;
}

/* The check lines of README.md's haproxy backend (see the header), one
 * per line with their indentation, malloc'd; the test bails out if
 * there are none. */
static char *readme_check_lines(void)
{
	char *path, *text, *line, *save, *out;
	size_t len = 0, cap;
	bool armed = false, inside = false;

	XDT_REQUIRE(asprintf(&path, "%s/README.md", xdtest_env("XDSD_SRCDIR")) > 0,
		    "out of memory");
	text = xdtest_read_file(path, NULL);
	XDT_REQUIRE(text != NULL, "cannot read %s", path);
	cap = strlen(text) + 1;
	out = calloc(1, cap);
	XDT_REQUIRE(out != NULL, "out of memory");
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strcmp(line, "<!-- haproxy-health -->") == 0)
			armed = true;
		else if (armed && !inside && strncmp(line, "```", 3) == 0)
			inside = true;
		else if (inside && strcmp(line, "```") == 0)
			break;
		else if (inside && (strncmp(line, "  tcp-check ", 12) == 0 ||
				    strcmp(line, "  option tcp-check") == 0))
			len += (size_t)snprintf(out + len, cap - len, "%s\n", line);
	}
	XDT_REQUIRE(len > 0, "%s: no tcp-check lines after <!-- haproxy-health -->",
		    path);
	free(text);
	free(path);
	return out;
}

/* The README's lines for TLS: its `tcp-check connect` with `ssl alpn
 * h2` (README.md says so below the block). */
static char *over_tls(char *lines)
{
	const char *plain = "  tcp-check connect\n";
	char *at = strstr(lines, plain), *out;

	XDT_REQUIRE(at != NULL, "README.md's check has no '  tcp-check connect' line");
	XDT_REQUIRE(asprintf(&out, "%.*s  tcp-check connect ssl alpn h2\n%s",
			     (int)(at - lines), lines, at + strlen(plain)) > 0,
		    "out of memory");
	free(lines);
	return out;
}

struct xdt_balancer *xdt_balancer_start_health(const char *backend,
						int inter_ms, const char *ca,
						const char *crt)
{
	struct xdt_balancer *b = balancer_new();
	char *lines = readme_check_lines(), *text, tls[2048] = "";

	if (ca != NULL) {
		lines = over_tls(lines);
		snprintf(tls, sizeof(tls),
			 " check-ssl verify required ca-file %s verifyhost localhost%s%s",
			 ca, crt ? " crt " : "", crt ? crt : "");
	}
	XDT_REQUIRE(asprintf(&text,
			     "global\n  maxconn 512\n"
			     "defaults\n  mode tcp\n  timeout connect 5s\n"
			     "  timeout client 10m\n  timeout server 10m\n"
			     "  timeout check 5s\n"
			     "frontend xds\n  bind %s\n  default_backend xdsd\n"
			     "backend xdsd\n%s"
			     "  server xdsd-1 %s check inter %d fall 1 rise 1%s\n",
			     b->target, lines, backend, inter_ms, tls) > 0,
		    "out of memory");
	free(xdtest_write_file(b->dir, "haproxy.cfg", text));
	free(text);
	free(lines);
	run(b);
	return b;
}

char *xdt_balancer_log(const struct xdt_balancer *b)
{
	char *path, *text;

	XDT_REQUIRE(asprintf(&path, "%s/haproxy.log", b->dir) > 0, "out of memory");
	text = xdtest_read_file(path, NULL);
	free(path);
	return text != NULL ? text : strdup("");
}

bool xdt_balancer_wait_log(const struct xdt_balancer *b, const char *needle,
			   int count, int timeout_ms)
{
	for (long long end = xdtest_now_ms() + timeout_ms;;) {
		char *text = xdt_balancer_log(b);
		int n = 0;

		for (const char *p = text; (p = strstr(p, needle)) != NULL;
		     p += strlen(needle))
			n++;
		free(text);
		if (n >= count)
			return true;
		if (xdtest_now_ms() > end)
			return false;
		xdtest_sleep_ms(50);
	}
}

struct xdt_balancer *xdt_balancer_start(const char *backend,
					 const char *source)
{
	struct xdt_balancer *b = balancer_new();
	char *text;

	/* TCP mode: bytes pass as they are (HTTP/2, TLS alike); long
	 * timeouts, as xDS streams last */
	XDT_REQUIRE(asprintf(&text,
			     "global\n  maxconn 512\n"
			     "defaults\n  mode tcp\n  timeout connect 5s\n"
			     "  timeout client 10m\n  timeout server 10m\n"
			     "frontend xds\n  bind %s\n  default_backend xdsd\n"
			     "backend xdsd\n  server xdsd-1 %s%s%s\n",
			     b->target, backend, source ? " source " : "",
			     source ? source : "") > 0, "out of memory");
	free(xdtest_write_file(b->dir, "haproxy.cfg", text));
	free(text);
	run(b);
	return b;
}

void xdt_balancer_kill(struct xdt_balancer *b)
{
	int status;

	XDT_REQUIRE(b->pid > 0, "haproxy is not running");
	kill(b->pid, SIGKILL);
	waitpid(b->pid, &status, 0);
	b->pid = 0;
}

void xdt_balancer_run(struct xdt_balancer *b)
{
	XDT_REQUIRE(b->pid == 0, "haproxy is running already");
	run(b);
}

void xdt_balancer_stop(struct xdt_balancer *b)
{
	int status;

	if (b == NULL)
		return;
	if (b->pid > 0) {
		kill(b->pid, SIGKILL);
		waitpid(b->pid, &status, 0);
	}
	free(b->dir);
	free(b);
}
