#include "util/xalloc.h"

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

static void __attribute__((noreturn)) out_of_memory(size_t n)
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

void *xd_malloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL && n != 0)
		out_of_memory(n);
	return p;
}

void *xd_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL && n != 0 && size != 0)
		out_of_memory(n * size);
	return p;
}

void *xd_realloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (q == NULL && n != 0)
		out_of_memory(n);
	return q;
}

void *xd_reallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	return xd_realloc(p, n * size);
}

char *xd_strdup(const char *s)
{
	return xd_strndup(s, strlen(s));
}

char *xd_strndup(const char *s, size_t n)
{
	char *d;

	n = strnlen(s, n);
	d = xd_malloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}
