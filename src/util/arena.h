/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bump allocator: many small objects that die together.
 *
 * The transcoder builds one document tree per resource here and drops it
 * all at once with xd_arena_reset, which keeps the first block so the
 * next resource allocates nothing from malloc. A failed allocation aborts,
 * as every allocation does (xalloc.h).
 *
 * Ownership: the arena owns every block; pointers it returned die at
 * xd_arena_reset / xd_arena_free. Thread: any, one owner at a time.
 */
#ifndef XD_UTIL_ARENA_H
#define XD_UTIL_ARENA_H

#include <stddef.h>

struct xd_arena_block;

struct xd_arena {
	struct xd_arena_block *head; /* newest block first */
	char *p, *end;               /* free space in head */
	size_t block_size;
};

#define XD_ARENA_INIT {.head = NULL, .p = NULL, .end = NULL, .block_size = 0}

void *xd_arena_alloc_slow(struct xd_arena *a, size_t n);

/* `n` bytes aligned for any object of up to 8 bytes' alignment. */
static inline void *xd_arena_alloc(struct xd_arena *a, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if ((size_t)(a->end - a->p) >= n && a->p != NULL) {
		void *r = a->p;

		a->p += n;
		return r;
	}
	return xd_arena_alloc_slow(a, n);
}

/* Frees every block but the first; everything allocated is gone. */
void xd_arena_reset(struct xd_arena *a);
void xd_arena_free(struct xd_arena *a);

#endif
