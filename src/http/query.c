/* SPDX-License-Identifier: Apache-2.0 */
#include "http/http.h"

#include <stdbool.h>
#include <string.h>

/* Query strings as handlers read them (http.h, xd_http_query_get). */

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes `n` bytes of `s` into `out`; false if malformed or too long
 * (no room for even the NUL included). */
static bool decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	if (cap == 0)
		return false;

	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '+') {
			ch = ' ';
		} else if (ch == '%') {
			if (i + 2 >= n || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
				return false;
			ch = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
			i += 2;
		}
		if (ch == '\0' || o + 1 >= cap)
			return false;
		out[o++] = ch;
	}
	out[o] = '\0';
	return true;
}

int xd_http_query_get(const char *query, const char *key, char *out,
		      size_t cap)
{
	size_t klen = strlen(key);

	for (const char *p = query; *p != '\0';) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=')
			return decode(p + klen + 1, len - klen - 1, out, cap) ? 1 : -1;
		if (len == klen && strncmp(p, key, klen) == 0)
			return decode("", 0, out, cap) ? 1 : -1;
		p += len + (end != NULL);
	}
	return 0;
}
