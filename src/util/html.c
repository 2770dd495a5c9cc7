/* SPDX-License-Identifier: Apache-2.0 */
#include "util/html.h"

#include <stdint.h>
#include <string.h>

#include "util/text.h"

void xd_html_escape(struct xd_buf *out, const char *str, size_t len)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0;

	while (i < len) {
		uint8_t c = s[i];

		switch (c) {
		case '&':
			xd_buf_append(out, "&amp;", 5);
			break;
		case '<':
			xd_buf_append(out, "&lt;", 4);
			break;
		case '>':
			xd_buf_append(out, "&gt;", 4);
			break;
		case '"':
			xd_buf_append(out, "&quot;", 6);
			break;
		case '\'':
			xd_buf_append(out, "&#39;", 5);
			break;
		case '\t':
		case '\n':
			xd_buf_putc(out, c);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				xd_buf_append(out, XD_TEXT_REPLACEMENT, 3);
				break;
			}
			i += xd_text_utf8_put(out, s + i, len - i,
					      XD_TEXT_REPLACEMENT);
			continue;
		}
		i++;
	}
}

void xd_html_str(struct xd_buf *out, const char *s)
{
	if (s != NULL)
		xd_html_escape(out, s, strlen(s));
}
