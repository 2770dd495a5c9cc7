/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http/client.h"
#include "xdtest.h"

#define MAX_ARGS 64

/*
 * $XDT_IO_THREADS=N runs every daemon a test starts with `io_threads: N`
 * (tests/e2e/io-threads.sh runs whole suites so), unless its config
 * sets io_threads itself. Returns the config text to write (malloc'd)
 * and sets *n to N, or 0 when nothing was added.
 */
static char *with_io_threads(const char *config_text, int *n)
{
	const char *v = getenv("XDT_IO_THREADS");
	const char *text = config_text ? config_text : "listen: 127.0.0.1:0\n";
	char *out;

	*n = v != NULL ? atoi(v) : 0;
	if (*n <= 0 || strstr(text, "io_threads") != NULL) {
		*n = 0;
		return strdup(text);
	}
	ck_assert(asprintf(&out, "%s\nio_threads: %d\n", text, *n) > 0);
	return out;
}

static void build_argv(const char *xdsd, const char *const *pre,
		       const char *const *args, char **argv, char *wrapper_buf)
{
	const char *wrapper = getenv("XDSD_WRAPPER");
	size_t n = 0;

	if (wrapper != NULL && wrapper[0] != '\0') {
		char *save = NULL, *tok;

		strcpy(wrapper_buf, wrapper);
		for (tok = strtok_r(wrapper_buf, " ", &save); tok != NULL;
		     tok = strtok_r(NULL, " ", &save))
			argv[n++] = tok;
	}
	argv[n++] = (char *)xdsd;
	for (; pre != NULL && *pre != NULL; pre++)
		argv[n++] = (char *)*pre;
	for (; args != NULL && *args != NULL && n < MAX_ARGS - 1; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
}

static bool mentions_admin(const char *config_text,
			   const char *const *extra_args)
{
	if (config_text != NULL && strstr(config_text, "admin_listen") != NULL)
		return true;
	for (; extra_args != NULL && *extra_args != NULL; extra_args++)
		if (strncmp(*extra_args, "--admin-listen", 14) == 0)
			return true;
	return false;
}

/* In the child: `env` entries into its environment, "$PID" its pid. */
static void put_env(const char *const *env)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (; env != NULL && *env != NULL; env++) {
		const char *eq = strchr(*env, '=');
		char *name;

		if (eq == NULL)
			_exit(127);
		name = strndup(*env, (size_t)(eq - *env));
		if (name == NULL ||
		    setenv(name, strcmp(eq + 1, "$PID") == 0 ? pid : eq + 1,
			   1) != 0)
			_exit(127);
		free(name);
	}
}

struct xdt_daemon *xdt_daemon_spawn(const char *config_text,
				    const char *const *extra_args)
{
	return xdt_daemon_spawn_env(config_text, extra_args, NULL);
}

char *xdt_daemon_vrefused(const char *config_text, va_list needles)
{
	struct xdt_daemon *d = xdt_daemon_spawn(config_text, NULL);
	char *log;

	ck_assert(xdt_daemon_wait(d, 10000));
	ck_assert_int_eq(d->exit_status, 1);
	log = xdt_daemon_log(d);
	for (const char *n; (n = va_arg(needles, const char *)) != NULL;)
		ck_assert_msg(strstr(log, n) != NULL, "no '%s' in:\n%s", n, log);
	ck_assert_ptr_null(strstr(log, "listening on"));
	xdt_daemon_free(d);
	return log;
}

/* The open files limit, soft and hard, of the next daemon (0: the
 * test's own). */
static unsigned long next_nofile;

struct xdt_daemon *xdt_daemon_start_nofile(const char *config_text,
					   unsigned long nofile,
					   int timeout_ms)
{
	struct xdt_daemon *d;

	next_nofile = nofile;
	d = xdt_daemon_spawn(config_text, NULL);
	next_nofile = 0;
	xdt_daemon_wait_ready(d, timeout_ms);
	return d;
}

struct xdt_daemon *xdt_daemon_spawn_env(const char *config_text,
					const char *const *extra_args,
					const char *const *env)
{
	struct rlimit nofile = {next_nofile, next_nofile};
	struct xdt_daemon *d = calloc(1, sizeof(*d));
	const char *xdsd = xdtest_env("XDSD");
	char *argv[MAX_ARGS], wrapper[1024];
	const char *pre[6];
	char tmpl[256], *text;
	int fd;

	ck_assert(d != NULL);
	snprintf(tmpl, sizeof(tmpl), "%s/daemon.XXXXXX", xdtest_tmpdir());
	ck_assert(mkdtemp(tmpl) != NULL);
	d->dir = strdup(tmpl);
	text = with_io_threads(config_text, &d->io_threads);
	d->config = xdtest_write_file(d->dir, "xdsd.yaml", text);
	free(text);
	ck_assert(asprintf(&d->log_path, "%s/xdsd.log", d->dir) > 0);
	pre[0] = "-c";
	pre[1] = d->config;
	pre[2] = NULL;
	/* The admin endpoint's default port would be shared by every test
	 * running at once: a free one, unless the test chose. */
	if (!mentions_admin(config_text, extra_args)) {
		pre[2] = "--admin-listen";
		pre[3] = "127.0.0.1:0";
		pre[4] = NULL;
	}
	build_argv(xdsd, pre, extra_args, argv, wrapper);

	d->pid = fork();
	ck_assert(d->pid >= 0);
	if (d->pid == 0) {
		fd = open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(127);
		dup2(fd, STDERR_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
		/* A test harness may block signals; the daemon must not
		 * inherit that. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		put_env(env);
		/* lowering a limit needs no privilege */
		if (nofile.rlim_cur != 0 &&
		    setrlimit(RLIMIT_NOFILE, &nofile) != 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	return d;
}

void xdt_daemon_wait_ready(struct xdt_daemon *d, int timeout_ms)
{
	long long deadline = xdtest_now_ms() + timeout_ms;

	for (;;) {
		char *log = xdt_daemon_log(d);
		const char *p = log ? strstr(log, "(port ") : NULL;
		int status;

		if (p != NULL && sscanf(p, "(port %d)", &d->port) == 1) {
			const char *a = strstr(log, "(admin port ");

			d->admin_port = 0;
			if (a != NULL)
				sscanf(a, "(admin port %d)", &d->admin_port);
			a = strstr(log, "(rest port ");
			d->rest_port = 0;
			if (a != NULL)
				sscanf(a, "(rest port %d)", &d->rest_port);
			/* the knob $XDT_IO_THREADS asked for is in effect */
			if (d->io_threads > 0) {
				char want[64];

				snprintf(want, sizeof(want), "info: %d I/O thread",
					 d->io_threads);
				ck_assert_msg(strstr(log, want) != NULL,
					      "xdsd did not start %d I/O threads:\n%s",
					      d->io_threads, log);
			}
			free(log);
			break;
		}
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			ck_abort_msg("xdsd exited at start-up (%s %d):\n%s",
				     WIFSIGNALED(status) ? "signal" : "status",
				     WIFSIGNALED(status) ? WTERMSIG(status) :
							   WEXITSTATUS(status),
				     log ? log : "");
		}
		free(log);
		ck_assert_msg(xdtest_now_ms() < deadline,
			      "xdsd did not start within %d ms", timeout_ms);
		xdtest_sleep_ms(10);
	}
	snprintf(d->target, sizeof(d->target), "127.0.0.1:%d", d->port);
}

struct xdt_daemon *xdt_daemon_start(const char *config_text,
				    const char *const *extra_args,
				    int timeout_ms)
{
	struct xdt_daemon *d = xdt_daemon_spawn(config_text, extra_args);

	xdt_daemon_wait_ready(d, timeout_ms);
	return d;
}

void xdt_daemon_signal(struct xdt_daemon *d, int sig)
{
	ck_assert_msg(d->pid > 0, "daemon not running");
	ck_assert(kill(d->pid, sig) == 0);
}

bool xdt_daemon_wait(struct xdt_daemon *d, int timeout_ms)
{
	long long deadline = xdtest_now_ms() + timeout_ms;
	int status;

	if (d->pid == 0)
		return true;
	for (;;) {
		pid_t r = waitpid(d->pid, &status, WNOHANG);

		if (r == d->pid)
			break;
		if (xdtest_now_ms() >= deadline)
			return false;
		xdtest_sleep_ms(5);
	}
	d->pid = 0;
	d->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			 128 + WTERMSIG(status);
	return true;
}

char *xdt_daemon_log(const struct xdt_daemon *d)
{
	return xdtest_read_file(d->log_path, NULL);
}

bool xdt_daemon_wait_log(const struct xdt_daemon *d, const char *needle,
			 int timeout_ms)
{
	return xdt_daemon_wait_log_count(d, needle, 1, timeout_ms);
}

int xdt_daemon_log_count(const struct xdt_daemon *d, const char *needle)
{
	char *log = xdt_daemon_log(d);
	int n = 0;

	for (const char *p = log; (p = strstr(p, needle)) != NULL; p++)
		n++;
	free(log);
	return n;
}

bool xdt_daemon_wait_log_count(const struct xdt_daemon *d, const char *needle,
			       int count, int timeout_ms)
{
	long long deadline = xdtest_now_ms() + timeout_ms;

	for (;;) {
		char *log = xdt_daemon_log(d);
		int seen = 0;

		for (const char *p = log; p != NULL && seen < count &&
					  (p = strstr(p, needle)) != NULL;
		     p++)
			seen++;
		free(log);
		bool found = seen >= count;

		if (found)
			return true;
		if (xdtest_now_ms() >= deadline)
			return false;
		xdtest_sleep_ms(10);
	}
}

long xdt_daemon_rss_kb(const struct xdt_daemon *d)
{
	char path[64], *status, *p;
	long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)d->pid);
	status = xdtest_read_file(path, NULL);
	ck_assert(status != NULL);
	p = strstr(status, "VmRSS:");
	if (p != NULL)
		kb = strtol(p + 6, NULL, 10);
	free(status);
	return kb;
}

bool xdt_daemon_has_asan(const struct xdt_daemon *d)
{
	char path[64], *maps;
	bool asan;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)d->pid);
	maps = xdtest_read_file(path, NULL);
	ck_assert(maps != NULL);
	/* gcc links the runtime as libasan.so; clang links it in, and only
	 * the shadow memory's fixed place on x86-64 tells */
	asan = strstr(maps, "libasan") != NULL ||
	       strncmp(maps, "7fff7000-", 9) == 0 || strstr(maps, "\n7fff7000-") != NULL;
	free(maps);
	return asan;
}

int xdt_daemon_fd_count(const struct xdt_daemon *d)
{
	char path[64];
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)d->pid);
	dir = opendir(path);
	ck_assert_msg(dir != NULL, "%s: %s", path, strerror(errno));
	for (struct dirent *e; (e = readdir(dir)) != NULL;)
		if (e->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

void xdt_daemon_stop(struct xdt_daemon *d, int timeout_ms)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert_msg(xdt_daemon_wait(d, timeout_ms),
		      "xdsd did not stop within %d ms of SIGTERM", timeout_ms);
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

void xdt_daemon_free(struct xdt_daemon *d)
{
	if (d == NULL)
		return;
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
	}
	free(d->dir);
	free(d->config);
	free(d->log_path);
	free(d);
}

static char *slurp_fd(int fd)
{
	char *buf = NULL;
	size_t n = 0, cap = 0;
	ssize_t r;

	do {
		if (cap - n < 1024) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			ck_assert(buf != NULL);
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r > 0)
			n += (size_t)r;
	} while (r > 0 || (r < 0 && errno == EINTR));
	buf[n] = '\0';
	return buf;
}

int xdt_run_xdsd(const char *const *args, char **out, char **err)
{
	const char *xdsd = xdtest_env("XDSD");
	char *argv[MAX_ARGS], wrapper[1024];
	char out_path[300], err_path[300];
	int status, fo, fe;
	pid_t pid;

	snprintf(out_path, sizeof(out_path), "%s/run.out.XXXXXX", xdtest_tmpdir());
	snprintf(err_path, sizeof(err_path), "%s/run.err.XXXXXX", xdtest_tmpdir());
	fo = mkstemp(out_path);
	fe = mkstemp(err_path);
	ck_assert(fo >= 0 && fe >= 0);
	build_argv(xdsd, NULL, args, argv, wrapper);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		dup2(fo, STDOUT_FILENO);
		dup2(fe, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert(waitpid(pid, &status, 0) == pid);
	lseek(fo, 0, SEEK_SET);
	lseek(fe, 0, SEEK_SET);
	if (out != NULL)
		*out = slurp_fd(fo);
	if (err != NULL)
		*err = slurp_fd(fe);
	close(fo);
	close(fe);
	unlink(out_path);
	unlink(err_path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int xdt_admin_ask(const struct xdt_daemon *d, const char *path, int rcvbuf)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)d->admin_port)};
	char req[512];
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int n;

	ck_assert(fd >= 0);
	if (rcvbuf > 0)
		ck_assert(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				     sizeof(rcvbuf)) == 0);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
		     path, d->admin_port);
	ck_assert(write(fd, req, (size_t)n) == n);
	return fd;
}

char *xdt_admin(const struct xdt_daemon *d, const char *method,
		const char *path, const char *body, int *status, char **type)
{
	char target[64], why[256];
	struct xd_http_request q = {.target = target, .method = method,
				    .path = path, .body = body,
				    .body_len = body ? strlen(body) : 0,
				    .timeout_ms = 10000};
	struct xd_http_response r;

	ck_assert_msg(d->admin_port > 0, "the daemon has no admin port");
	snprintf(target, sizeof(target), "127.0.0.1:%d", d->admin_port);
	ck_assert_msg(xd_http_fetch(&q, &r, why, sizeof(why)) == 0,
		      "%s %s: %s", method, path, why);
	*status = r.status;
	if (type != NULL)
		*type = strdup(r.content_type);
	free(r.content_type);
	return r.body;
}

json_t *xdt_admin_json(const struct xdt_daemon *d, const char *method,
		       const char *path, int *status)
{
	char *body = xdt_admin(d, method, path, NULL, status, NULL);
	json_error_t err;
	json_t *doc = json_loads(body, 0, &err);

	ck_assert_msg(doc != NULL, "%s %s: %s: %s", method, path, err.text, body);
	free(body);
	return doc;
}

double xdt_metrics_sample(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; (p = strstr(p, series)) != NULL; p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

json_t *xdt_status_json(const struct xdt_daemon *d)
{
	int status;
	char *type, *body = xdt_admin(d, "GET", "/status.json", NULL, &status, &type);
	json_error_t err;
	json_t *j;

	ck_assert_msg(status == 200, "GET /status.json: %d: %s", status, body);
	ck_assert_str_eq(type, "application/json");
	j = json_loads(body, 0, &err);
	ck_assert_msg(j != NULL, "/status.json is not JSON (%s): %s", err.text, body);
	free(body);
	free(type);
	return j;
}

const char *xdt_json_str(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	ck_assert_msg(s != NULL, "no string '%s'", key);
	return s;
}

double xdt_daemon_metric(const struct xdt_daemon *d, const char *series)
{
	int status;
	char *body = xdt_admin(d, "GET", "/metrics", NULL, &status, NULL);
	double v;

	ck_assert_int_eq(status, 200);
	v = xdt_metrics_sample(body, series);
	ck_assert_msg(v >= 0, "no sample %s in /metrics", series);
	free(body);
	return v;
}
