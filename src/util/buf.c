/* SPDX-License-Identifier: Apache-2.0 */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/xalloc.h"

uint8_t *xd_buf_grow(struct xd_buf *b, size_t more)
{
	size_t cap = b->cap < 64 ? 64 : b->cap;
	uint8_t *p;

	if (more > SIZE_MAX / 2 - b->len)
		xd_out_of_memory(SIZE_MAX);
	while (cap - b->len < more)
		cap *= 2;
	p = xd_realloc(b->data, cap);
	b->data = p;
	b->cap = cap;
	return p + b->len;
}

void xd_buf_printf(struct xd_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	/* One more for vsnprintf's NUL, which is not counted in len. */
	xd_buf_reserve(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

uint8_t *xd_buf_steal(struct xd_buf *b, size_t *len)
{
	uint8_t *p = b->data;

	if (len != NULL)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void xd_buf_free(struct xd_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
