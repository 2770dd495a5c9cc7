#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum xd_log_level xd_log_threshold = XD_LOG_INFO;

static bool to_journal;

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
	to_journal = stderr_is_journal();
}

void xd_log_set_level(enum xd_log_level level)
{
	xd_log_threshold = level;
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
	return level_names[level];
}

/* The length of the valid UTF-8 character at p (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		need = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		need = 3;
		if (p[0] == 0xe0)
			lo = 0xa0; /* overlong */
		else if (p[0] == 0xed)
			hi = 0x9f; /* UTF-16 surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		need = 4;
		if (p[0] == 0xf0)
			lo = 0x90; /* overlong */
		else if (p[0] == 0xf4)
			hi = 0x8f; /* beyond U+10FFFF */
	} else {
		return 0;
	}
	if (n < need || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < need; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return need;
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
			k = utf8_len(p + i, len - i);
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
	out[o] = '\0';
	return o;
}

static void log_vwrite(enum xd_log_level level, const char *fmt, va_list ap)
{
	char msg[4096], line[4096];
	size_t n = 0, cap = sizeof(line) - 1; /* room for the '\n' */
	int r;

	if (to_journal) {
		r = snprintf(line, cap, "<%d>", journal_prio[level]);
	} else {
		struct timeval tv;
		struct tm tm;

		gettimeofday(&tv, NULL);
		gmtime_r(&tv.tv_sec, &tm);
		r = snprintf(line, cap,
			     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s: ",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			     tm.tm_hour, tm.tm_min, tm.tm_sec,
			     (long)(tv.tv_usec / 1000), level_names[level]);
	}
	if (r > 0)
		n = (size_t)r < cap ? (size_t)r : cap;
	r = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (r > 0)
		n += xd_log_escape(line + n, cap - n, msg,
				   (size_t)r < sizeof(msg) ? (size_t)r :
							     sizeof(msg) - 1);
	line[n++] = '\n';
	/* One write per line; a short write to stderr is not worth a retry. */
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}

void xd_log_write(enum xd_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, fmt, ap);
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
