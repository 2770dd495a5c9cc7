/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The line diff of two texts, as the hunks of `diff -u` (three lines of
 * context): what xdsctl diff shows of a resource that a reload would
 * change (snapshot/diff.h).
 *
 * Bounds: the longest common subsequence is computed over at most
 * XD_LINEDIFF_MAX_CELLS line pairs, after the lines both texts start
 * and end with are set aside; a longer change is shown as every old
 * line removed and every new one added, still correct, only coarser.
 * The output appended is at most `max` bytes: a diff cut short ends
 * with a line saying so.
 *
 * Thread: any; pure, over caller-owned memory.
 */
#ifndef XD_UTIL_LINEDIFF_H
#define XD_UTIL_LINEDIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

#define XD_LINEDIFF_MAX_CELLS (4u * 1024 * 1024)
#define XD_LINEDIFF_CONTEXT 3

/*
 * Appends the hunks ("@@ -1,4 +1,5 @@", then " ", "-" and "+" lines)
 * that turn `a` into `b`, nothing when they are equal. A last line
 * without its newline is treated as if it had one. Returns true when
 * the output was cut at `max` bytes.
 */
bool xd_linediff(struct xd_buf *out, const char *a, size_t alen,
		 const char *b, size_t blen, size_t max);

#endif
