/* SPDX-License-Identifier: Apache-2.0 */
#include "util/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "util/text.h"
#include "util/xalloc.h"

void xd_jw_init(struct xd_jw *w, struct xd_buf *out)
{
	w->out = out;
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}

/* Before any value or key: the comma that separates it from the last. */
static void sep(struct xd_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		xd_buf_putc(w->out, ',');
	w->first[w->depth] = false;
}

static void jw_open(struct xd_jw *w, char c)
{
	sep(w);
	xd_buf_putc(w->out, (uint8_t)c);
	XD_ASSERT(w->depth + 1 < XD_JW_MAX_DEPTH);
	w->first[++w->depth] = true;
}

static void jw_close(struct xd_jw *w, char c)
{
	XD_ASSERT(w->depth > 0 && !w->after_key);
	w->depth--;
	xd_buf_putc(w->out, (uint8_t)c);
}

void xd_jw_obj(struct xd_jw *w)
{
	jw_open(w, '{');
}

void xd_jw_obj_end(struct xd_jw *w)
{
	jw_close(w, '}');
}

void xd_jw_arr(struct xd_jw *w)
{
	jw_open(w, '[');
}

void xd_jw_arr_end(struct xd_jw *w)
{
	jw_close(w, ']');
}

void xd_json_escape(struct xd_buf *out, const char *str, size_t len)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0;

	while (i < len) {
		uint8_t c = s[i];

		if (c == '"' || c == '\\') {
			xd_buf_putc(out, '\\');
			xd_buf_putc(out, c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			xd_buf_printf(out, "\\u%04x", c);
			i++;
		} else if (c == '<' || c == '>' || c == '&') {
			/* safe inside an HTML <script> too */
			xd_buf_printf(out, "\\u%04x", c);
			i++;
		} else {
			i += xd_text_utf8_put(out, s + i, len - i, "\\ufffd");
		}
	}
}

void xd_jw_key(struct xd_jw *w, const char *key)
{
	/* inside an object, and not right after another key */
	XD_ASSERT(w->depth > 0 && !w->after_key);
	sep(w);
	xd_buf_putc(w->out, '"');
	xd_json_escape(w->out, key, strlen(key));
	xd_buf_append(w->out, "\":", 2);
	w->after_key = true;
}

void xd_jw_strn(struct xd_jw *w, const char *s, size_t len)
{
	sep(w);
	xd_buf_putc(w->out, '"');
	xd_json_escape(w->out, s, len);
	xd_buf_putc(w->out, '"');
}

void xd_jw_str(struct xd_jw *w, const char *s)
{
	if (s == NULL)
		xd_jw_null(w);
	else
		xd_jw_strn(w, s, strlen(s));
}

void xd_jw_uint(struct xd_jw *w, uint64_t v)
{
	sep(w);
	xd_buf_printf(w->out, "%llu", (unsigned long long)v);
}

void xd_jw_int(struct xd_jw *w, int64_t v)
{
	sep(w);
	xd_buf_printf(w->out, "%lld", (long long)v);
}

void xd_jw_num(struct xd_jw *w, double v)
{
	sep(w);
	if (isfinite(v))
		xd_buf_printf(w->out, "%.6g", v);
	else
		xd_buf_append(w->out, "null", 4);
}

void xd_jw_bool(struct xd_jw *w, bool v)
{
	sep(w);
	if (v)
		xd_buf_append(w->out, "true", 4);
	else
		xd_buf_append(w->out, "false", 5);
}

void xd_jw_null(struct xd_jw *w)
{
	sep(w);
	xd_buf_append(w->out, "null", 4);
}

void xd_jw_raw(struct xd_jw *w, const char *json, size_t len)
{
	sep(w);
	xd_buf_append(w->out, json, len);
}

void xd_jw_time(char out[32], int64_t unix_ms)
{
	time_t secs = (time_t)(unix_ms / 1000);
	struct tm tm;

	size_t n;

	gmtime_r(&secs, &tm);
	n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(unix_ms % 1000));
}

void xd_jw_time_or_null(struct xd_jw *w, int64_t unix_ms)
{
	char when[32];

	if (unix_ms == 0) {
		xd_jw_null(w);
		return;
	}
	xd_jw_time(when, unix_ms);
	xd_jw_str(w, when);
}
