/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leveled logging to stderr.
 *
 * Under systemd (stderr connected to the journal, detected through
 * $JOURNAL_STREAM) each line starts with a syslog priority prefix such as
 * "<3>" so journald records the level; otherwise with an ISO-8601 UTC
 * timestamp and the level name. Each line is written with one write(2),
 * so lines from gRPC's threads (routed here by xd_log_route_grpc) never
 * interleave. The threshold is checked before any argument is formatted.
 *
 * Log lines carry what clients send (node ids, type URLs, NACK
 * messages, method names). Every line is escaped as it is written:
 * control characters (C1 too) and bytes that are not valid UTF-8 become \xNN,
 * so a client can neither forge a line (a newline in its node id) nor
 * put binary in the journal. Callers cap the length of client-supplied
 * strings with XD_LOG_CLIENT_MAX, so one long field cannot push the
 * rest of a line out; the line itself is capped at 4 KiB.
 *
 * With `log_format: json` each line is instead one JSON object:
 *   {"time":"2026-11-23T08:15:02.113Z","level":"warn","message":"...",
 *    "stream":7,"method":"ADS","peer":"ipv4:10.0.0.7:40112",
 *    "node":"envoy-1","cluster":"web"}
 * where the stream's fields are there for lines about a stream
 * (xd_log_ctx), and strings are JSON-escaped (invalid UTF-8 as U+FFFD)
 * rather than \xNN-escaped. Such a line is capped at XD_LOG_JSON_MAX,
 * its message shortened to fit, and stays valid JSON.
 *
 * Thread: any. xd_log_init, xd_log_set_level and xd_log_set_format
 * belong to start-up, on the loop thread, before other threads exist.
 */
#ifndef XD_UTIL_LOG_H
#define XD_UTIL_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xd_log_level {
	XD_LOG_ERROR = 0,
	XD_LOG_WARN = 1,
	XD_LOG_INFO = 2,
	XD_LOG_DEBUG = 3,
};

enum xd_log_format {
	XD_LOG_TEXT = 0,
	XD_LOG_JSON = 1,
};

extern enum xd_log_level xd_log_threshold;

/* Bytes of one JSON line, '\n' included. */
#define XD_LOG_JSON_MAX 16384

/*
 * What a line about one stream is about. Text lines start with
 * "stream 7 (ADS from ipv4:10.0.0.7:40112) node 'envoy-1': ", or with
 * "(ADS from ipv4:10.0.0.7:40112, identity 'spiffe://...')" for a
 * client with a certificate; JSON lines carry these as fields of their
 * own. Strings are borrowed for the call; node and cluster are NULL
 * until the client has said, identity without one.
 */
struct xd_log_ctx {
	unsigned long long stream;
	const char *method;
	const char *peer;
	const char *node;
	const char *cluster;
	const char *identity;
};

/* Bytes of one client-supplied string a log line shows ("%.*s"). */
#define XD_LOG_CLIENT_MAX 256
/* min(len, XD_LOG_CLIENT_MAX) as the int that "%.*s" takes. */
#define XD_LOG_CLIP(len) \
	((int)((len) < XD_LOG_CLIENT_MAX ? (len) : XD_LOG_CLIENT_MAX))

void xd_log_init(void);
void xd_log_set_level(enum xd_log_level level);
void xd_log_set_format(enum xd_log_format format);

/* Parses "error", "warn", "info" or "debug". Returns 0, or -1. */
int xd_log_level_parse(const char *name, enum xd_log_level *out);
const char *xd_log_level_name(enum xd_log_level level);

void xd_log_write(enum xd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xd_log_write_ctx(enum xd_log_level level, const struct xd_log_ctx *ctx,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * One line as xd_log_write writes it (the '\n' included) into `out`
 * (`cap` bytes), for a message already formatted, at Unix ms `now_ms`,
 * under the journal or not. Returns the length. Exported for tests.
 */
size_t xd_log_format_line(char *out, size_t cap, enum xd_log_format format,
			  bool journal, enum xd_log_level level,
			  const struct xd_log_ctx *ctx, int64_t now_ms,
			  const char *msg, size_t len);

/*
 * Rate limits for log lines that clients can cause in numbers (dropped
 * connections, say): at most `burst` lines per `window_ms`, the rest
 * counted and mentioned in the next line written. Thread-safe (gRPC's
 * threads log too).
 */
struct xd_log_limit {
	pthread_mutex_t lock;
	unsigned burst, window_ms;
	uint64_t window_start; /* ms, monotonic */
	unsigned used;         /* lines written in this window */
	unsigned long dropped; /* lines not written since the last one */
};

#define XD_LOG_LIMIT_INIT(burst, window_ms) \
	{PTHREAD_MUTEX_INITIALIZER, (burst), (window_ms), 0, 0, 0}

/* Whether a line may be written now; if so, *dropped is the number of
 * lines not written since the last one (for that line to say). */
bool xd_log_limit_take(struct xd_log_limit *l, unsigned long *dropped);

/*
 * Copies `len` bytes of `in` to `out` (room for `cap` bytes, NUL
 * included), control characters (C0, DEL and the C1 controls
 * U+0080..U+009F) and invalid UTF-8 written as \xNN, byte by byte; a
 * character is never cut in half at the end. Returns the length
 * written. What every log line and every text answer of the HTTP
 * endpoints (http.h, xd_http_text) goes through.
 */
size_t xd_log_escape(char *out, size_t cap, const char *in, size_t len);

#define xd_log(level, ...)                                   \
	do {                                                 \
		if ((level) <= xd_log_threshold)             \
			xd_log_write((level), __VA_ARGS__); \
	} while (0)

/* A line about a stream: the level checked before ctx is even read. */
#define xd_log_about(level, ctx, ...)                                 \
	do {                                                          \
		if ((level) <= xd_log_threshold)                      \
			xd_log_write_ctx((level), (ctx), __VA_ARGS__); \
	} while (0)

#define xd_error(...) xd_log(XD_LOG_ERROR, __VA_ARGS__)
#define xd_warn(...) xd_log(XD_LOG_WARN, __VA_ARGS__)
#define xd_info(...) xd_log(XD_LOG_INFO, __VA_ARGS__)
#define xd_debug(...) xd_log(XD_LOG_DEBUG, __VA_ARGS__)

#endif
