/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growable byte buffer.
 *
 * Used to build encoded protobuf messages and other output whose size is
 * not known in advance. Capacity grows geometrically, so appending n
 * bytes costs O(n) amortized. A failed allocation aborts, as every
 * allocation does (xalloc.h).
 *
 * Ownership: the buffer owns `data`; xd_buf_free releases it and
 * xd_buf_steal hands it to the caller. Thread: any, one owner at a time.
 */
#ifndef XD_UTIL_BUF_H
#define XD_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/xalloc.h" /* xd_grow, for arrays beside buffers */

struct xd_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

#define XD_BUF_INIT {.data = NULL, .len = 0, .cap = 0}

/* Makes room for `more` bytes after `len`; returns data + len. */
uint8_t *xd_buf_grow(struct xd_buf *b, size_t more);

static inline uint8_t *xd_buf_reserve(struct xd_buf *b, size_t more)
{
	/* data is NULL until the first growth, even for 0 bytes: no
	 * pointer arithmetic on NULL. */
	if (b->cap - b->len < more || b->data == NULL)
		return xd_buf_grow(b, more);
	return b->data + b->len;
}

static inline void xd_buf_append(struct xd_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	memcpy(xd_buf_reserve(b, n), p, n);
	b->len += n;
}

static inline void xd_buf_putc(struct xd_buf *b, uint8_t c)
{
	*xd_buf_reserve(b, 1) = c;
	b->len++;
}

/* Appends a formatted string (without its NUL). */
void xd_buf_printf(struct xd_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Returns the data (caller frees it) and empties the buffer. */
uint8_t *xd_buf_steal(struct xd_buf *b, size_t *len);

void xd_buf_free(struct xd_buf *b);

#endif
