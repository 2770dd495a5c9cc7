/* SPDX-License-Identifier: Apache-2.0 */
#include "util/text.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"

static char fold(char c, unsigned flags)
{
	return (flags & XD_TEXT_FOLD_CASE) && c >= 'A' && c <= 'Z' ?
		       (char)(c - 'A' + 'a') :
		       c;
}

/* Three rows of the dynamic-programming table: the swap looks two rows
 * back ("nmae" is one swap from "name"). */
size_t xd_text_distance(const char *a, size_t la, const char *b, size_t lb,
			unsigned flags)
{
	size_t d[3][65], *prev2 = d[0], *prev = d[1], *cur = d[2];

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		char ca = fold(a[i - 1], flags);
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = prev[j - 1] + (ca != fold(b[j - 1], flags));

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if ((flags & XD_TEXT_SWAPS) && i > 1 && j > 1 &&
			    ca == fold(b[j - 2], flags) &&
			    fold(a[i - 2], flags) == fold(b[j - 1], flags) &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

char *xd_text_copy(struct xd_arena *a, const char *s, size_t len)
{
	char *p = xd_arena_alloc(a, len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

bool xd_text_glob(const char *glob, const char *s)
{
	return fnmatch(glob, s, 0) == 0;
}

size_t xd_text_utf8_len(const uint8_t *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t xd_text_utf8_put(struct xd_buf *out, const uint8_t *s, size_t n,
			const char *replacement)
{
	size_t len = xd_text_utf8_len(s, n);

	if (len == 0) {
		xd_buf_append(out, replacement, strlen(replacement));
		return 1;
	}
	xd_buf_append(out, s, len);
	return len;
}

void xd_text_age(char *out, size_t cap, long long s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(out, cap, "%llds", s);
	else if (s < 3600)
		snprintf(out, cap, "%lldm %llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(out, cap, "%lldh %lldm", s / 3600, s / 60 % 60);
	else
		snprintf(out, cap, "%lldd %lldh", s / 86400, s / 3600 % 24);
}

const char *xd_text_duration(const char *s, uint64_t *ms)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
	char *end;
	double v;

	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return NULL;
	}
	if (*s < '0' || *s > '9')
		return "not a duration (examples: 500ms, 30s, 5m, 1h)";
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE || v > 1e15)
		return "duration too large";
	if (end == s || *end == '\0')
		return "duration needs a unit: ms, s, m or h";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			*ms = (uint64_t)(v * units[i].ms + 0.5);
			return NULL;
		}
	}
	return "unknown duration unit (use ms, s, m or h)";
}

void xd_text_bytes(char *out, size_t cap, double bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(out, cap, "%.0f B", bytes);
		return;
	}
	bytes /= 1024;
	while (bytes >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		bytes /= 1024;
		u++;
	}
	snprintf(out, cap, "%.1f %s", bytes, units[u]);
}

const char *xd_plural(long long n)
{
	return n == 1 ? "" : "s";
}
