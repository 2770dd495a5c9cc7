/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text into HTML: the status page shows strings that clients chose
 * (node ids, user agents, NACK messages) and that snapshot files hold
 * (keys, error text). Escaped here, they are always text, never markup,
 * in element content and in quoted attribute values alike.
 *
 * Bytes that are not well-formed UTF-8, and control characters other
 * than tab and newline, become U+FFFD, so the page is valid UTF-8 and
 * shows where a client sent something odd.
 *
 * Thread: any; writes only to the caller's buffer.
 */
#ifndef XD_UTIL_HTML_H
#define XD_UTIL_HTML_H

#include <stddef.h>

#include "util/buf.h"

/* `len` bytes of `s`, escaped (& < > " '), onto `out`. */
void xd_html_escape(struct xd_buf *out, const char *s, size_t len);

/* A NUL-terminated string, escaped; NULL writes nothing. */
void xd_html_str(struct xd_buf *out, const char *s);

#endif
