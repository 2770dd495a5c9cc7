/* SPDX-License-Identifier: Apache-2.0 */
#include "xdtest.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * LeakSanitizer, in the sanitizer build, reads this from the test
 * programs only, never from xdsd (another program, checked in full).
 * A test's own gRPC client may exit while OpenSSL objects of a TLS
 * connection are still being released by gRPC's threads (a connection
 * torn down as the daemon stops, in the last milliseconds before
 * exit): those are reported as leaks of the test process, at random.
 * OpenSSL has no frame pointers, so its allocator is all a stack shows.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:CRYPTO_zalloc\n";
}

void xdtest_bail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

int xdtest_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_tap(sr, "-");
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

const char *xdtest_env(const char *name)
{
	const char *v = getenv(name);

	XDT_REQUIRE(v != NULL && v[0] != '\0',
		    "%s is not set (run the tests through make check)", name);
	return v;
}

static char tmpdir[256];
static pid_t tmpdir_owner;

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tmpdir(void)
{
	/* Only the process that made it removes it: Check forks every test,
	 * and the children run atexit handlers too. */
	if (tmpdir[0] != '\0' && tmpdir_owner == getpid())
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *xdtest_tmpdir(void)
{
	if (tmpdir[0] == '\0') {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/xdsd-test.XXXXXX");
		XDT_REQUIRE(mkdtemp(tmpdir) != NULL, "mkdtemp: %s",
			    strerror(errno));
		tmpdir_owner = getpid();
		atexit(rm_tmpdir);
	}
	return tmpdir;
}

static char *certs_dir;

void xdtest_make_certs(void)
{
	char *cmd;

	XDT_REQUIRE(asprintf(&certs_dir, "%s/certs", xdtest_tmpdir()) > 0, "out of memory");
	XDT_REQUIRE(asprintf(&cmd, "sh '%s/tests/lib/make-certs.sh' '%s'",
			     xdtest_env("XDSD_SRCDIR"), certs_dir) > 0, "out of memory");
	XDT_REQUIRE(system(cmd) == 0, "%s failed (is openssl installed?)", cmd);
	free(cmd);
}

const char *xdtest_cert(const char *name)
{
	static char buf[4][1024];
	static int i;

	XDT_REQUIRE(certs_dir != NULL, "xdtest_make_certs() was not called");
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", certs_dir, name);
	return buf[i];
}

char *xdtest_write_file(const char *dir, const char *name, const char *text)
{
	char *path;
	FILE *f;

	ck_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert(fwrite(text, 1, strlen(text), f) == strlen(text));
	ck_assert(fclose(f) == 0);
	return path;
}

void xdtest_replace_file(const char *dir, const char *name, const char *text)
{
	char *tmp, *from, *to;

	ck_assert(asprintf(&tmp, "%s.tmp", name) > 0);
	from = xdtest_write_file(dir, tmp, text);
	ck_assert(asprintf(&to, "%s/%s", dir, name) > 0);
	ck_assert_msg(rename(from, to) == 0, "rename %s: %s", to, strerror(errno));
	free(tmp);
	free(from);
	free(to);
}

void xdtest_install_server_cert(const char *dir, const char *name)
{
	char src[64], *text;

	for (int i = 0; i < 2; i++) {
		snprintf(src, sizeof(src), "%s.%s", name, i ? "key" : "pem");
		text = xdtest_read_file(xdtest_cert(src), NULL);
		ck_assert_msg(text != NULL, "no test certificate %s", src);
		xdtest_replace_file(dir, i ? "server.key" : "server.pem", text);
		free(text);
	}
}

void xdtest_write_svc_snapshot(const char *dir, int port, const char *more)
{
	char *text;

	ck_assert(asprintf(&text,
			   "clusters:\n"
			   "- name: svc\n"
			   "  type: EDS\n"
			   "  connect_timeout: 1s\n"
			   "  eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}}\n"
			   "endpoints:\n"
			   "- cluster_name: svc\n"
			   "  endpoints:\n"
			   "  - lb_endpoints:\n"
			   "    - endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}\n"
			   "%s",
			   port, more != NULL ? more : "") > 0);
	xdtest_replace_file(dir, "default.yaml", text);
	free(text);
}

char *xdtest_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			ck_assert(buf != NULL);
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

char *xdtest_command_output(const char *cmd, int *status)
{
	char *out = NULL, chunk[4096];
	size_t len = 0, n;
	FILE *p = popen(cmd, "r"), *o;

	ck_assert_msg(p != NULL, "cannot run %s", cmd);
	o = open_memstream(&out, &len);
	ck_assert(o != NULL);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, o);
	ck_assert(fclose(o) == 0);
	*status = pclose(p);
	return out;
}

long long xdtest_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void xdtest_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

char *xdtest_snapdir(void)
{
	static int n;
	char *dir;

	ck_assert(asprintf(&dir, "%s/snap.%d.%d", xdtest_tmpdir(), (int)getpid(),
			   n++) > 0);
	ck_assert(mkdir(dir, 0755) == 0);
	return dir;
}

void xdtest_write_clusters(const char *dir, const char *name,
			   const char *prefix, int count)
{
	char *text = NULL, *tmp_name, *tmp, *path;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert(f != NULL);
	fputs("clusters:\n", f);
	for (int i = 0; i < count; i++)
		fprintf(f, "- {name: %s-%d, type: STATIC, connect_timeout: 1s}\n",
			prefix, i);
	ck_assert(fclose(f) == 0);
	ck_assert(asprintf(&tmp_name, ".%s.tmp", name) > 0);
	tmp = xdtest_write_file(dir, tmp_name, text);
	ck_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	ck_assert(rename(tmp, path) == 0);
	free(path);
	free(tmp);
	free(tmp_name);
	free(text);
}

char *xdtest_clusters_snapdir(int count)
{
	char *dir = xdtest_snapdir();

	xdtest_write_clusters(dir, "default.yaml", "c", count);
	return dir;
}
