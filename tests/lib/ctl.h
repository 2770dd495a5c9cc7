/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running xdsctl as an operator does: the built binary ($XDSCTL) in a
 * child process, its exit status, stdout and stderr captured; under
 * valgrind when asked ($VALGRIND, and the build has no sanitizer), any
 * error or leak then failing the test.
 */
#ifndef XDT_CTL_H
#define XDT_CTL_H

#include <jansson.h>
#include <stdbool.h>

#include "daemon.h"

struct xdt_run {
	int status;
	char *out, *err;
};

/*
 * Runs xdsctl with `args` (NULL-terminated), XDSCTL_ADMIN set to
 * `admin` (NULL: unset), under valgrind when `vg` and valgrind can run
 * it.
 */
struct xdt_run xdt_ctl(bool vg, const char *admin, const char *const *args);

void xdt_run_free(struct xdt_run *r);

/* The run ended with `status`; else the test fails showing its output. */
void xdt_want(const struct xdt_run *r, int status);

/* `text` holds `needle`, or does not. */
void xdt_has(const char *text, const char *needle);
void xdt_lacks(const char *text, const char *needle);

/* xdsd serving the snapshots in `dir` on a loopback port, with its
 * admin endpoint, and `extra` lines of configuration (may be NULL). */
struct xdt_daemon *xdt_ctl_start(const char *dir, const char *extra);

/* Stops it with SIGTERM; it must exit 0. Frees it. */
void xdt_ctl_stop(struct xdt_daemon *d);

/* Its admin endpoint's address as xdsctl takes it (malloc'd). */
char *xdt_ctl_admin(const struct xdt_daemon *d);

/* `text` parsed as JSON, or the test fails showing it. */
json_t *xdt_json_parse(const char *text);

#endif
