/* SPDX-License-Identifier: Apache-2.0 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/jsonw.h"
#include "util/loop_thread.h"
#include "util/text.h"

enum xd_log_level xd_log_threshold = XD_LOG_INFO;

static bool to_journal;
static enum xd_log_format log_format = XD_LOG_TEXT;

static const char *const level_names[] = {
	[XD_LOG_ERROR] = "error",
	[XD_LOG_WARN] = "warn",
	[XD_LOG_INFO] = "info",
	[XD_LOG_DEBUG] = "debug",
};

/* syslog priorities: err, warning, info, debug. */
static const int journal_prio[] = {3, 4, 6, 7};

/*
 * systemd sets JOURNAL_STREAM="<dev>:<inode>" of the stream it gave us;
 * it is only ours if stderr still is that stream (not redirected).
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void xd_log_init(void)
{
	/* start-up's: the flags below are read by every thread, unlocked */
	XD_ASSERT_LOOP();
	to_journal = stderr_is_journal();
}

void xd_log_set_level(enum xd_log_level level)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(level <= XD_LOG_DEBUG, "log level %d", (int)level);
	xd_log_threshold = level;
}

void xd_log_set_format(enum xd_log_format format)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(format <= XD_LOG_JSON, "log format %d", (int)format);
	log_format = format;
}

int xd_log_level_parse(const char *name, enum xd_log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(name, level_names[i]) == 0) {
			*out = (enum xd_log_level)i;
			return 0;
		}
	}
	return -1;
}

const char *xd_log_level_name(enum xd_log_level level)
{
	XD_ASSERT_INFO(level <= XD_LOG_DEBUG, "log level %d", (int)level);
	return level_names[level];
}

size_t xd_log_escape(char *out, size_t cap, const char *in, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0, i = 0;

	if (cap == 0)
		return 0;
	while (i < len) {
		size_t k = 1;

		if (p[i] >= 0x80)
			k = xd_text_utf8_len(p + i, len - i);
		/* U+0080..U+009F, C1 controls (CSI among them): each byte
		 * escaped, as a terminal may act on them */
		if (k == 2 && p[i] == 0xc2 && p[i + 1] <= 0x9f)
			k = 0;
		if (k == 0 || p[i] < 0x20 || p[i] == 0x7f) {
			if (o + 4 >= cap)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[p[i] >> 4];
			out[o++] = hex[p[i] & 15];
			i++;
			continue;
		}
		if (o + k >= cap)
			break;
		memcpy(out + o, p + i, k);
		o += k;
		i += k;
	}
	XD_ASSERT(o < cap);
	out[o] = '\0';
	return o;
}

/* The text line: priority or time and level, then the message (with
 * the stream's prefix), escaped as a whole. At most 4 KiB. */
static size_t format_text(char *line, size_t size, bool journal,
			  enum xd_log_level level, const struct xd_log_ctx *ctx,
			  int64_t now_ms, const char *msg, size_t len)
{
	char whole[4096];
	size_t n = 0, cap, w = 0;
	int r;

	if (size < 2)
		return 0;
	cap = (size < 4096 ? size : 4096) - 1; /* room for the '\n' */
	if (journal) {
		r = snprintf(line, cap, "<%d>", journal_prio[level]);
	} else {
		char time[32];

		xd_jw_time(time, now_ms);
		r = snprintf(line, cap, "%s %s: ", time, level_names[level]);
	}
	if (r > 0)
		n = (size_t)r < cap ? (size_t)r : cap;
	if (ctx != NULL) {
		size_t nl = ctx->node != NULL ? strlen(ctx->node) : 0;
		const char *id = ctx->identity;

		r = snprintf(whole, sizeof(whole), "stream %llu (%s from %s%s%.*s%s) node '%.*s': ",
			     ctx->stream, ctx->method, ctx->peer,
			     id ? ", identity '" : "",
			     id ? XD_LOG_CLIP(strlen(id)) : 0, id ? id : "",
			     id ? "'" : "", XD_LOG_CLIP(nl),
			     ctx->node != NULL ? ctx->node : "");
		if (r > 0)
			w = (size_t)r < sizeof(whole) ? (size_t)r :
							sizeof(whole) - 1;
	}
	if (len > sizeof(whole) - 1 - w)
		len = sizeof(whole) - 1 - w;
	memcpy(whole + w, msg, len);
	w += len;
	n += xd_log_escape(line + n, cap - n, whole, w);
	line[n++] = '\n';
	return n;
}

static void json_str(struct xd_buf *b, const char *key, const char *s,
		     size_t len)
{
	xd_buf_printf(b, ",\"%s\":\"", key);
	xd_json_escape(b, s, len);
	xd_buf_putc(b, '"');
}

/* The JSON line into `b`, with at most `len` bytes of the message. */
static void json_line(struct xd_buf *b, bool journal,
		      enum xd_log_level level, const struct xd_log_ctx *ctx,
		      int64_t now_ms, const char *msg, size_t len)
{
	char time[32];

	b->len = 0;
	if (journal)
		xd_buf_printf(b, "<%d>", journal_prio[level]);
	xd_jw_time(time, now_ms);
	xd_buf_printf(b, "{\"time\":\"%s\",\"level\":\"%s\"", time,
		      level_names[level]);
	json_str(b, "message", msg, len);
	if (ctx != NULL) {
		xd_buf_printf(b, ",\"stream\":%llu", ctx->stream);
		json_str(b, "method", ctx->method, strlen(ctx->method));
		json_str(b, "peer", ctx->peer, strlen(ctx->peer));
		if (ctx->node != NULL)
			json_str(b, "node", ctx->node,
				 (size_t)XD_LOG_CLIP(strlen(ctx->node)));
		if (ctx->cluster != NULL)
			json_str(b, "cluster", ctx->cluster,
				 (size_t)XD_LOG_CLIP(strlen(ctx->cluster)));
		if (ctx->identity != NULL)
			json_str(b, "identity", ctx->identity,
				 (size_t)XD_LOG_CLIP(strlen(ctx->identity)));
	}
	xd_buf_append(b, "}\n", 2);
}

/* The JSON line, its message cut until the line fits (the fields are
 * clipped so that they alone always do). */
static size_t format_json(char *out, size_t size, bool journal,
			  enum xd_log_level level, const struct xd_log_ctx *ctx,
			  int64_t now_ms, const char *msg, size_t len)
{
	struct xd_buf b = XD_BUF_INIT;
	size_t n = 0;

	if (size > XD_LOG_JSON_MAX)
		size = XD_LOG_JSON_MAX;
	for (;;) {
		json_line(&b, journal, level, ctx, now_ms, msg, len);
		if (b.len <= size || len == 0)
			break;
		/* shorter in proportion (a byte of the message takes 1
		 * to 6 in the line), a little more for a character cut
		 * in two; at least a byte each time */
		size_t shorter = (size_t)((double)len * size / b.len);

		len = shorter > 8 && shorter - 8 < len ? shorter - 8 :
		      len > 0 ? len - 1 : 0;
	}
	if (b.len <= size) {
		memcpy(out, b.data, b.len);
		n = b.len;
	}
	xd_buf_free(&b);
	return n;
}

size_t xd_log_format_line(char *out, size_t cap, enum xd_log_format format,
			  bool journal, enum xd_log_level level,
			  const struct xd_log_ctx *ctx, int64_t now_ms,
			  const char *msg, size_t len)
{
	if (format == XD_LOG_JSON)
		return format_json(out, cap, journal, level, ctx, now_ms, msg,
				   len);
	return format_text(out, cap, journal, level, ctx, now_ms, msg, len);
}

static void log_vwrite(enum xd_log_level level, const struct xd_log_ctx *ctx,
		       const char *fmt, va_list ap)
{
	char msg[4096], line[XD_LOG_JSON_MAX];
	size_t n, len = 0;
	struct timeval tv;
	int r;

	/* the index of level_names and journal_prio */
	XD_ASSERT_INFO(level <= XD_LOG_DEBUG, "log level %d", (int)level);
	gettimeofday(&tv, NULL);
	r = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (r > 0)
		len = (size_t)r < sizeof(msg) ? (size_t)r : sizeof(msg) - 1;
	n = xd_log_format_line(line, sizeof(line), log_format, to_journal,
			       level, ctx,
			       (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000,
			       msg, len);
	/* One write per line; a short write to stderr is not worth a retry. */
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}

void xd_log_write(enum xd_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, NULL, fmt, ap);
	va_end(ap);
}

void xd_log_write_ctx(enum xd_log_level level, const struct xd_log_ctx *ctx,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, ctx, fmt, ap);
	va_end(ap);
}

bool xd_log_limit_take(struct xd_log_limit *l, unsigned long *dropped)
{
	struct timespec ts;
	uint64_t now;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	pthread_mutex_lock(&l->lock);
	if (l->used == 0 || now - l->window_start >= l->window_ms) {
		l->window_start = now;
		l->used = 0;
	}
	ok = l->used < l->burst;
	if (ok) {
		l->used++;
		*dropped = l->dropped;
		l->dropped = 0;
	} else {
		l->dropped++;
	}
	pthread_mutex_unlock(&l->lock);
	return ok;
}
