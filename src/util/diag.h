/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bounded list of diagnostics: the errors of one configuration or
 * snapshot load, each already formatted as "file:line:column: message".
 *
 * Ownership: the list owns its strings; xd_diag_clear frees them.
 * Thread: any, one owner at a time (a loader fills it off the loop and
 * hands it over with its result).
 */
#ifndef XD_UTIL_DIAG_H
#define XD_UTIL_DIAG_H

#include <stdio.h>
#include <stddef.h>

/* Errors beyond this many are counted, not stored: a 15 MB file of
 * garbage must not produce 15 MB of messages. */
#define XD_DIAG_MAX 200

struct xd_diag {
	char *msgs[XD_DIAG_MAX];
	size_t count;   /* stored messages */
	size_t dropped; /* further errors, counted only */
};

#define XD_DIAG_INIT {.count = 0}

void xd_diag_add(struct xd_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
size_t xd_diag_total(const struct xd_diag *d);
/* Moves every message of `from` to the end of `d`; `from` is emptied. */
void xd_diag_append(struct xd_diag *d, struct xd_diag *from);
/* Copies of the first `max` messages (fewer if there are fewer), in a
 * NULL-terminated array; `*n` says how many. For records that outlive
 * the list. */
char **xd_diag_copy_first(const struct xd_diag *d, size_t max, size_t *n);
/* Writes every message, one a line, and a final count of dropped ones. */
void xd_diag_print(const struct xd_diag *d, FILE *out);
void xd_diag_clear(struct xd_diag *d);

#endif
