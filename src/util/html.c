#include "util/html.h"

#include <stdint.h>
#include <string.h>

#include "util/text.h"

/* U+FFFD REPLACEMENT CHARACTER */
#define REPLACEMENT "\xef\xbf\xbd"

void xd_html_escape(struct xd_buf *out, const char *str, size_t len)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0, n;

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
				xd_buf_append(out, REPLACEMENT, 3);
				break;
			}
			n = xd_text_utf8_len(s + i, len - i);
			if (n == 0) {
				xd_buf_append(out, REPLACEMENT, 3);
				break;
			}
			xd_buf_append(out, s + i, n);
			i += n;
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
