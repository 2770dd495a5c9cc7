/* SPDX-License-Identifier: Apache-2.0 */
#include "ctl.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xdtest.h"

#define START_MS 20000
#define STOP_MS 5000

static char *slurp(int fd)
{
	char *s = NULL, buf[4096];
	size_t len = 0;
	ssize_t n;
	FILE *m = open_memstream(&s, &len);

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, m);
	fclose(m);
	return s;
}

/* True when the binary carries AddressSanitizer (valgrind cannot run
 * it). */
static bool has_asan(const char *path)
{
	size_t len;
	char *bin = xdtest_read_file(path, &len);
	bool asan;

	ck_assert(bin != NULL);
	asan = memmem(bin, len, "__asan_init", 11) != NULL;
	free(bin);
	return asan;
}

struct xdt_run xdt_ctl(bool vg, const char *admin, const char *const *args)
{
	const char *xdsctl = xdtest_env("XDSCTL");
	const char *valgrind = getenv("VALGRIND");
	char out_path[300], err_path[300], vglog[300];
	const char *argv[32];
	size_t n = 0;
	struct xdt_run r;
	int fo, fe, st;
	pid_t pid;

	vg = vg && valgrind != NULL && valgrind[0] != '\0' && !has_asan(xdsctl);
	snprintf(out_path, sizeof(out_path), "%s/ctl.out.XXXXXX", xdtest_tmpdir());
	snprintf(err_path, sizeof(err_path), "%s/ctl.err.XXXXXX", xdtest_tmpdir());
	snprintf(vglog, sizeof(vglog), "--log-file=%s/ctl.vg.%d", xdtest_tmpdir(),
		 (int)getpid());
	fo = mkstemp(out_path);
	fe = mkstemp(err_path);
	ck_assert(fo >= 0 && fe >= 0);
	if (vg) {
		argv[n++] = valgrind;
		argv[n++] = "--quiet";
		argv[n++] = "--leak-check=full";
		argv[n++] = "--show-leak-kinds=definite,indirect";
		argv[n++] = "--errors-for-leak-kinds=definite,indirect";
		argv[n++] = "--error-exitcode=99";
		argv[n++] = vglog;
	}
	argv[n++] = xdsctl;
	for (; *args != NULL && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		if (admin != NULL)
			setenv("XDSCTL_ADMIN", admin, 1);
		else
			unsetenv("XDSCTL_ADMIN");
		dup2(fo, STDOUT_FILENO);
		dup2(fe, STDERR_FILENO);
		execvp(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert(waitpid(pid, &st, 0) == pid);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = slurp(fo);
	r.err = slurp(fe);
	close(fo);
	close(fe);
	unlink(out_path);
	unlink(err_path);
	if (vg && r.status == 99) {
		char *log = xdtest_read_file(vglog + strlen("--log-file="), NULL);

		fprintf(stderr, "valgrind on xdsctl:\n%s\n", log ? log : "");
		free(log);
		ck_abort_msg("valgrind found errors in xdsctl (see the .log file)");
	}
	return r;
}

void xdt_run_free(struct xdt_run *r)
{
	free(r->out);
	free(r->err);
}

void xdt_want(const struct xdt_run *r, int status)
{
	ck_assert_msg(r->status == status,
		      "exit status %d, not %d\nstdout: %s\nstderr: %s", r->status,
		      status, r->out, r->err);
}

void xdt_has(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

void xdt_lacks(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) == NULL, "'%s' in:\n%s", needle, text);
}

struct xdt_daemon *xdt_ctl_start(const char *dir, const char *extra)
{
	char cfg[8192];

	snprintf(cfg, sizeof(cfg), "listen: 127.0.0.1:0\nsnapshots: %s\n%s", dir,
		 extra ? extra : "");
	return xdt_daemon_start(cfg, NULL, START_MS);
}

void xdt_ctl_stop(struct xdt_daemon *d)
{
	xdt_daemon_signal(d, SIGTERM);
	ck_assert(xdt_daemon_wait(d, STOP_MS));
	ck_assert_int_eq(d->exit_status, 0);
	xdt_daemon_free(d);
}

char *xdt_ctl_admin(const struct xdt_daemon *d)
{
	char *a;

	ck_assert(asprintf(&a, "127.0.0.1:%d", d->admin_port) > 0);
	return a;
}

json_t *xdt_json_parse(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);

	ck_assert_msg(j != NULL, "not JSON (%s): %s", err.text, text);
	return j;
}
