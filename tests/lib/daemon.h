/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs the real xdsd binary for a test: in its own temporary directory,
 * listening on 127.0.0.1 with a port the kernel picks (so tests can run
 * in parallel; the admin endpoint too, unless the test configures it),
 * stderr captured to a log file.
 *
 * $XDSD_WRAPPER, when set, is prepended to the command (e.g. valgrind).
 * $XDT_IO_THREADS=N adds `io_threads: N` to a config that does not set
 * it, and start-up then checks that xdsd runs that many.
 */
#ifndef XD_TESTS_DAEMON_H
#define XD_TESTS_DAEMON_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

struct xdt_daemon {
	pid_t pid;
	int port;
	int admin_port;   /* its admin endpoint's, 0 when off or on a socket */
	int rest_port;    /* its REST-JSON endpoint's, 0 when off */
	char *dir;      /* the daemon's own directory */
	char *config;   /* dir/xdsd.yaml */
	char *log_path; /* dir/xdsd.log (its stderr) */
	char target[64];  /* "127.0.0.1:<port>" */
	int exit_status;  /* after xdt_daemon_wait: exit code, or 128+signal */
	int io_threads;   /* from $XDT_IO_THREADS; 0: the config's own */
};

/*
 * Writes `config_text` (NULL: "listen: 127.0.0.1:0") to a fresh config,
 * starts xdsd with it plus `extra_args` (NULL-terminated, may be NULL)
 * and waits until it logs its port. Fails the test if it does not start
 * within `timeout_ms`.
 */
struct xdt_daemon *xdt_daemon_start(const char *config_text,
				    const char *const *extra_args,
				    int timeout_ms);

/* The same, the daemon's open files limit (soft and hard) lowered to
 * `nofile`: what a test must exhaust stays small. */
struct xdt_daemon *xdt_daemon_start_nofile(const char *config_text,
					   unsigned long nofile,
					   int timeout_ms);

/* Starts without waiting for a port (for start-up failures). */
struct xdt_daemon *xdt_daemon_spawn(const char *config_text,
				    const char *const *extra_args);

/*
 * xdsd with `config_text` must exit 1 at start, without listening, its
 * log saying each of the `needles` (const char *, up to a NULL; the
 * caller's va_start and va_end); else the test fails. Returns the log
 * (malloc'd) for more checks.
 */
char *xdt_daemon_vrefused(const char *config_text, va_list needles);

/* The same with `env` ("NAME=value", NULL-terminated) added to the
 * daemon's environment; the value "$PID" becomes the daemon's own pid
 * (as systemd sets WATCHDOG_PID). */
struct xdt_daemon *xdt_daemon_spawn_env(const char *config_text,
					const char *const *extra_args,
					const char *const *env);

/* After xdt_daemon_spawn: waits until it logs its port (sets `port`
 * and `target`); fails the test if it exits or takes over `timeout_ms`. */
void xdt_daemon_wait_ready(struct xdt_daemon *d, int timeout_ms);

void xdt_daemon_signal(struct xdt_daemon *d, int sig);

/* Waits for exit; returns true if it exited within `timeout_ms`. */
bool xdt_daemon_wait(struct xdt_daemon *d, int timeout_ms);

/* The log so far (malloc'd). */
char *xdt_daemon_log(const struct xdt_daemon *d);

/* Waits until the log contains `needle`; true if it did in time. */
bool xdt_daemon_wait_log(const struct xdt_daemon *d, const char *needle,
			 int timeout_ms);

/* Waits until the log contains `needle` at least `count` times. */
bool xdt_daemon_wait_log_count(const struct xdt_daemon *d, const char *needle,
			       int count, int timeout_ms);

/* How many times its log says `needle` now. */
int xdt_daemon_log_count(const struct xdt_daemon *d, const char *needle);

/* Its resident memory in kB (VmRSS), and whether it runs with
 * AddressSanitizer (whose quarantine keeps freed memory resident, so
 * that RSS says little about leaks there). */
long xdt_daemon_rss_kb(const struct xdt_daemon *d);
bool xdt_daemon_has_asan(const struct xdt_daemon *d);

/* Open file descriptors of the running daemon, from /proc. */
int xdt_daemon_fd_count(const struct xdt_daemon *d);

/* The clean stop: SIGTERM, its exit within `timeout_ms` with status 0
 * (else the test fails), then xdt_daemon_free. */
void xdt_daemon_stop(struct xdt_daemon *d, int timeout_ms);

/* Kills it if still running and frees everything. */
void xdt_daemon_free(struct xdt_daemon *d);

/*
 * Runs the xdsd binary to completion with `args` (NULL-terminated).
 * Returns its exit status; stdout and stderr come back malloc'd.
 */
int xdt_run_xdsd(const char *const *args, char **out, char **err);

/*
 * Asks the daemon's admin endpoint `method path` (body may be NULL);
 * returns the response body (malloc'd) and its status in *status (and
 * its Content-Type in *type, malloc'd, when not NULL). Fails the test
 * when there is no answer.
 */
char *xdt_admin(const struct xdt_daemon *d, const char *method,
		const char *path, const char *body, int *status, char **type);

/*
 * A raw GET of `path` on its own connection to the admin endpoint
 * (`Connection: close`), its answer left for the caller to read from
 * the returned socket. A `rcvbuf` > 0 sets the socket's receive buffer
 * first: the kernel then takes no more than that of an answer the
 * caller does not read (its own tuning would take megabytes).
 */
int xdt_admin_ask(const struct xdt_daemon *d, const char *path, int rcvbuf);

/* The same, for an answer that must be JSON: parsed (the caller
 * decrefs it), or the test fails. */
json_t *xdt_admin_json(const struct xdt_daemon *d, const char *method,
		       const char *path, int *status);

/* The value of the sample `series` ("name{labels}" exactly as written)
 * in a /metrics text, or -1 when it has none. */
double xdt_metrics_sample(const char *text, const char *series);

/* The value of `series` in the daemon's /metrics (its admin endpoint);
 * fails the test when it has none. */
double xdt_daemon_metric(const struct xdt_daemon *d, const char *series);

/* The daemon's GET /status.json, parsed (json_decref it). Fails the
 * test unless it answers 200, application/json, with JSON. */
json_t *xdt_status_json(const struct xdt_daemon *d);

/* The string member `key` of `obj`; fails the test when there is none. */
const char *xdt_json_str(json_t *obj, const char *key);

#endif
