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
 * Thread: any. xd_log_init and xd_log_set_level belong to start-up, on
 * the loop thread, before other threads exist.
 */
#ifndef XD_UTIL_LOG_H
#define XD_UTIL_LOG_H

#include <stdbool.h>

enum xd_log_level {
	XD_LOG_ERROR = 0,
	XD_LOG_WARN = 1,
	XD_LOG_INFO = 2,
	XD_LOG_DEBUG = 3,
};

extern enum xd_log_level xd_log_threshold;

void xd_log_init(void);
void xd_log_set_level(enum xd_log_level level);

/* Parses "error", "warn", "info" or "debug". Returns 0, or -1. */
int xd_log_level_parse(const char *name, enum xd_log_level *out);
const char *xd_log_level_name(enum xd_log_level level);

/* Routes gRPC's own log (gpr_log) through this module. */
void xd_log_route_grpc(void);

void xd_log_write(enum xd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define xd_log(level, ...)                                   \
	do {                                                 \
		if ((level) <= xd_log_threshold)             \
			xd_log_write((level), __VA_ARGS__); \
	} while (0)

#define xd_error(...) xd_log(XD_LOG_ERROR, __VA_ARGS__)
#define xd_warn(...) xd_log(XD_LOG_WARN, __VA_ARGS__)
#define xd_info(...) xd_log(XD_LOG_INFO, __VA_ARGS__)
#define xd_debug(...) xd_log(XD_LOG_DEBUG, __VA_ARGS__)

#endif
