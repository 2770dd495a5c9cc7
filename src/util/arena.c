/* SPDX-License-Identifier: Apache-2.0 */
#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>

#include "util/xalloc.h"

struct xd_arena_block {
	struct xd_arena_block *next;
	size_t size; /* usable bytes after the header */
	/* Keeps the usable space 8-byte aligned. */
	uint64_t data[];
};

#define FIRST_BLOCK (64u * 1024)
#define MAX_BLOCK (4u * 1024 * 1024)

void *xd_arena_alloc_slow(struct xd_arena *a, size_t n)
{
	struct xd_arena_block *b;
	size_t size = a->block_size < FIRST_BLOCK ? FIRST_BLOCK : a->block_size;

	/* Blocks double up to a limit, so a large tree needs few mallocs;
	 * an object larger than that gets a block of its own. */
	if (a->head != NULL && size < MAX_BLOCK)
		size *= 2;
	if (size < n)
		size = n;
	if (size > SIZE_MAX - sizeof(*b))
		xd_out_of_memory(SIZE_MAX);
	b = xd_malloc(sizeof(*b) + size);
	b->size = size;
	b->next = a->head;
	a->head = b;
	a->block_size = size;
	a->p = (char *)b->data + n;
	a->end = (char *)b->data + size;
	return b->data;
}

void xd_arena_reset(struct xd_arena *a)
{
	struct xd_arena_block *b = a->head, *next;

	if (b == NULL)
		return;
	/* Keep the newest block, the largest: a tree of the same size as
	 * the last one then fits without a malloc. */
	next = b->next;
	b->next = NULL;
	while (next != NULL) {
		struct xd_arena_block *n = next->next;

		free(next);
		next = n;
	}
	a->p = (char *)b->data;
	a->end = (char *)b->data + b->size;
	a->block_size = b->size;
}

void xd_arena_free(struct xd_arena *a)
{
	struct xd_arena_block *b = a->head, *next;

	while (b != NULL) {
		next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->p = a->end = NULL;
	a->block_size = 0;
}
