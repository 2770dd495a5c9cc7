/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Printing admin answers for a terminal: strings made safe to show,
 * aligned tables, JSON indented, durations and sizes for people.
 *
 * Node ids, NACK messages and peers come from xDS clients, not from the
 * operator: whatever reaches the terminal goes through xc_safe first, so
 * that a client cannot move the cursor or retitle the window.
 *
 * Ownership: xc_safe's result is the caller's; a table owns copies of
 * its cells. Thread: single.
 */
#ifndef XD_XDSCTL_SHOW_H
#define XD_XDSCTL_SHOW_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* `len` bytes of `s` with C0 and C1 control characters and DEL written
 * as \n, \t, \xNN (malloc'd, NUL-terminated). */
char *xc_safe(const char *s, size_t len);

/* A JSON object's member as text: its string, or a number, true/false,
 * or "-" when absent or null. Not made safe: pass it to a table. */
const char *xc_text(json_t *obj, const char *key, char *buf, size_t cap);

/* xc_text made safe (malloc'd), for printing outside a table. */
char *xc_safe_text(json_t *obj, const char *key);

/* A JSON number as an integer: a real's fraction dropped, one out of
 * range clamped to -LLONG_MAX or LLONG_MAX (so that its negation is
 * defined too); 0 for anything else (absent, a string, null). Whatever
 * the daemon, or what answers in its place, sends: never undefined. */
long long xc_number(json_t *v);

/* xc_number of a member. */
long long xc_int(json_t *obj, const char *key);

/*
 * Writes the valid JSON `text` indented by two spaces a level, its
 * strings and numbers byte for byte as they came (a parse and print
 * would round numbers and reorder nothing useful).
 */
void xc_json_pretty(FILE *out, const char *text, size_t len);

/* Columns padded to their widest cell; a row may carry notes, lines
 * printed under it, indented. */
struct xc_table;

struct xc_table *xc_table_new(size_t ncols, const char *const *headers);
/* Adds a row of ncols cells (each made safe). */
void xc_table_row(struct xc_table *t, const char *const *cells);
/* Adds a note under the last row (made safe; newlines start new,
 * further indented lines). */
void xc_table_note(struct xc_table *t, const char *note);
void xc_table_print(const struct xc_table *t, FILE *out);
void xc_table_free(struct xc_table *t);

#endif
