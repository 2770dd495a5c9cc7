/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared helpers for xdsd's Check test programs.
 *
 * Every test program prints TAP on stdout (one line per test case), so
 * `make check` counts each case. Paths come from the environment that
 * `make check` exports: XDSD (the binary), XDSD_SCHEMA, XDSD_SRCDIR,
 * XDSD_BUILDDIR.
 */
#ifndef XD_TESTS_XDTEST_H
#define XD_TESTS_XDTEST_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * For set-up outside a running test (main), where Check's asserts cannot
 * report: prints a TAP "Bail out!" line and exits.
 */
#define XDT_REQUIRE(cond, ...)                                   \
	do {                                                     \
		if (!(cond))                                     \
			xdtest_bail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

void xdtest_bail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

/* Runs the suite with TAP output; returns the process exit status. */
int xdtest_run(Suite *s);

/* An environment variable that must be set (bails out if not). */
const char *xdtest_env(const char *name);

/* A fresh temporary directory, removed with everything in it at exit. */
const char *xdtest_tmpdir(void);

/*
 * Certificates made by tests/lib/make-certs.sh (openssl: a CA, the
 * server, client identities, an expired and a wrongly signed one) in
 * the temporary directory: call once in main(), before the tests fork.
 */
void xdtest_make_certs(void);

/* The path of one of them ("ca.pem"), in a static buffer of four
 * (enough for one call's arguments). */
const char *xdtest_cert(const char *name);

/* A fresh, empty directory under the temporary one (malloc'd path). */
char *xdtest_snapdir(void);

/* A fresh directory whose default.yaml holds `count` STATIC clusters
 * c-0.. (malloc'd path). */
char *xdtest_clusters_snapdir(int count);

/* Writes DIR/NAME holding `count` STATIC clusters named PREFIX-0.., all
 * at once (a rename), as an operator's deploy tool would. */
void xdtest_write_clusters(const char *dir, const char *name,
			   const char *prefix, int count);

/* Writes `text` to `dir/name`; returns the malloc'd full path. */
char *xdtest_write_file(const char *dir, const char *name, const char *text);

/* Replaces `dir/name` with `text` at once (written beside it, then
 * renamed), as an operator's deploy tool would: a reader never sees
 * half of it. */
void xdtest_replace_file(const char *dir, const char *name, const char *text);

/* Puts the test certificate `name` (make-certs.sh: `name`.pem and its
 * `name`.key) in `dir` as server.pem and server.key, each renamed into
 * place, as a certificate renewal does. */
void xdtest_install_server_cert(const char *dir, const char *name);

/* Replaces `dir/default.yaml` with the EDS cluster "svc" and its one
 * endpoint, 127.0.0.1:`port`, followed by `more` (YAML of further
 * types, or NULL). */
void xdtest_write_svc_snapshot(const char *dir, int port, const char *more);

/* Reads a whole file (NUL-terminated, malloc'd), or NULL. */
char *xdtest_read_file(const char *path, size_t *len);

/* Runs `cmd` with sh and returns all it wrote on stdout (NUL-terminated,
 * malloc'd), its wait status (pclose's) in *status. */
char *xdtest_command_output(const char *cmd, int *status);

/* Milliseconds on a monotonic clock. */
long long xdtest_now_ms(void);

/* Sleeps `ms` milliseconds. */
void xdtest_sleep_ms(int ms);

#endif
