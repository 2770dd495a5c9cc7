/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes JSON straight into a buffer, for the large documents the admin
 * endpoint serves (10,000 clients): no tree of values is built first.
 * Strings are escaped, and bytes that are not UTF-8 (node ids and NACK
 * messages come from clients) become U+FFFD, so the output is always
 * valid JSON that strict parsers accept.
 *
 * The writer puts commas and colons itself; nesting is bounded by
 * XD_JW_MAX_DEPTH (a bug past it: XD_ASSERT).
 *
 * Thread: any, one owner at a time.
 */
#ifndef XD_UTIL_JSONW_H
#define XD_UTIL_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define XD_JW_MAX_DEPTH 32

struct xd_jw {
	struct xd_buf *out;
	int depth;
	bool first[XD_JW_MAX_DEPTH]; /* nothing written yet at this level */
	bool after_key;
};

void xd_jw_init(struct xd_jw *w, struct xd_buf *out);

void xd_jw_obj(struct xd_jw *w);     /* { */
void xd_jw_obj_end(struct xd_jw *w); /* } */
void xd_jw_arr(struct xd_jw *w);     /* [ */
void xd_jw_arr_end(struct xd_jw *w); /* ] */

/* A member's key; its value follows. */
void xd_jw_key(struct xd_jw *w, const char *key);

void xd_jw_str(struct xd_jw *w, const char *s);
void xd_jw_strn(struct xd_jw *w, const char *s, size_t len);
void xd_jw_uint(struct xd_jw *w, uint64_t v);
void xd_jw_int(struct xd_jw *w, int64_t v);
void xd_jw_num(struct xd_jw *w, double v); /* non-finite: null */
void xd_jw_bool(struct xd_jw *w, bool v);
void xd_jw_null(struct xd_jw *w);
/* An already-encoded JSON value, written as it is. */
void xd_jw_raw(struct xd_jw *w, const char *json, size_t len);

/* A Unix-ms time as RFC 3339 UTC with milliseconds
 * ("2026-11-23T08:15:02.113Z") into `out` (at least 25 bytes). */
void xd_jw_time(char out[32], int64_t unix_ms);

/* That time as a JSON string, or null for 0 (not yet, never). */
void xd_jw_time_or_null(struct xd_jw *w, int64_t unix_ms);

/* Escapes `s` as the inside of a JSON string (no quotes) onto `out`:
 * also what HTML-embedding code builds on. */
void xd_json_escape(struct xd_buf *out, const char *s, size_t len);

#endif
