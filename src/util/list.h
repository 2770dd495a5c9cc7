/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An intrusive, circular, doubly linked list: the node lives inside its
 * owner (found again with xd_container_of), so linking allocates nothing
 * and unlinking is O(1). A node not in a list links to itself, so
 * "is it linked" needs no separate flag.
 *
 * Thread: one owner at a time: the loop thread, or whoever holds the
 * mutex of the structure the list is in (transport/conns.c).
 */
#ifndef XD_UTIL_LIST_H
#define XD_UTIL_LIST_H

#include <stdbool.h>

#include "util/xalloc.h"

struct xd_list {
	struct xd_list *prev, *next;
};

/* A head, or a node about to be used: empty / not linked. */
static inline void xd_list_init(struct xd_list *n)
{
	n->prev = n;
	n->next = n;
}

static inline bool xd_list_empty(const struct xd_list *head)
{
	return head->next == head;
}

static inline bool xd_list_linked(const struct xd_list *n)
{
	return n->next != n;
}

/* Adds `n` (not linked) at the end of `head`. */
static inline void xd_list_push_back(struct xd_list *head, struct xd_list *n)
{
	/* a node in two lists corrupts both: not linked (or never used) */
	XD_ASSERT(n->next == n || n->next == NULL);
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

/* Takes `n` out of its list (harmless when not linked). */
static inline void xd_list_remove(struct xd_list *n)
{
	/* its neighbours still point at it: not freed, not moved */
	XD_ASSERT(n->prev->next == n && n->next->prev == n);
	n->prev->next = n->next;
	n->next->prev = n->prev;
	xd_list_init(n);
}

/* Walks a list; the body may not remove `n`. */
#define xd_list_for_each(n, head) \
	for ((n) = (head)->next; (n) != (head); (n) = (n)->next)

/* Walks a list; `tmp` lets the body remove `n`. */
#define xd_list_for_each_safe(n, tmp, head)                         \
	for ((n) = (head)->next, (tmp) = (n)->next; (n) != (head); \
	     (n) = (tmp), (tmp) = (n)->next)

#endif
