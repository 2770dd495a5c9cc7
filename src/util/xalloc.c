/* SPDX-License-Identifier: Apache-2.0 */
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Written without allocating: there may be nothing left to allocate. */
static void say(const char *msg)
{
	ssize_t w = write(STDERR_FILENO, msg, strlen(msg));

	(void)w;
}

void xd_out_of_memory(size_t n)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "xdsd: out of memory (allocating %zu bytes)\n", n);
	say(msg);
	abort();
}

void xd_panic(const char *file, int line, const char *what)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "xdsd: %s:%d: internal error: %s\n", file,
		 line, what);
	say(msg);
	abort();
}

void xd_panicf(const char *file, int line, const char *what, const char *fmt,
	       ...)
{
	char who[256], msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(who, sizeof(who), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "xdsd: %s:%d: internal error: %s (%s)\n",
		 file, line, what, who);
	say(msg);
	abort();
}

void *xd_malloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL && n != 0)
		xd_out_of_memory(n);
	return p;
}

void *xd_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL && n != 0 && size != 0)
		xd_out_of_memory(n * size);
	return p;
}

void *xd_realloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (q == NULL && n != 0)
		xd_out_of_memory(n);
	return q;
}

void *xd_reallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		xd_out_of_memory(SIZE_MAX);
	return xd_realloc(p, n * size);
}

char *xd_vasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		xd_out_of_memory(strlen(fmt));
	return s;
}

char *xd_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xd_vasprintf(fmt, ap);
	va_end(ap);
	return s;
}

char *xd_strdup(const char *s)
{
	return xd_strndup(s, strlen(s));
}

char *xd_strndup(const char *s, size_t n)
{
	char *d;

	/* An absent field is (NULL, 0), and neither strnlen nor memcpy may
	 * be passed NULL, even for no bytes. */
	n = n ? strnlen(s, n) : 0;
	d = xd_malloc(n + 1);
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void *xd_grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			xd_out_of_memory(SIZE_MAX);
		n *= 2;
	}
	p = xd_reallocarray(p, n, size);
	*cap = n;
	return p;
}
