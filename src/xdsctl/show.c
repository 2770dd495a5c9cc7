/* SPDX-License-Identifier: Apache-2.0 */
#include "xdsctl/show.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xalloc.h"

char *xc_safe(const char *s, size_t len)
{
	struct xd_buf b = XD_BUF_INIT;
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len; i++) {
		if (p[i] == '\n') {
			xd_buf_append(&b, "\\n", 2);
		} else if (p[i] == '\t') {
			xd_buf_append(&b, "\\t", 2);
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			xd_buf_printf(&b, "\\x%02x", p[i]);
		} else if (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 &&
			   p[i + 1] <= 0x9f) {
			/* U+0080..U+009F: C1 controls, CSI among them */
			xd_buf_printf(&b, "\\u%04x", p[i + 1]);
			i++;
		} else {
			xd_buf_putc(&b, p[i]);
		}
	}
	xd_buf_putc(&b, '\0');
	return (char *)xd_buf_steal(&b, NULL);
}

const char *xc_text(json_t *obj, const char *key, char *buf, size_t cap)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, cap, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, cap, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, cap, "-");
	return buf;
}

char *xc_safe_text(json_t *obj, const char *key)
{
	char buf[64];
	const char *t = xc_text(obj, key, buf, sizeof(buf));

	return xc_safe(t, strlen(t));
}

long long xc_number(json_t *v)
{
	double d;

	if (json_is_integer(v))
		return json_integer_value(v) < -LLONG_MAX ?
			       -LLONG_MAX :
			       (long long)json_integer_value(v);
	if (!json_is_real(v))
		return 0;
	/* a double out of long long's range converts to undefined
	 * behaviour, not to a value (jansson refuses an integer too large
	 * for json_int_t, but reads 1e300 as a real): clamped first */
	d = json_real_value(v);
	if (d != d)
		return 0;
	if (d >= 0x1p63)
		return LLONG_MAX;
	if (d <= -0x1p63)
		return -LLONG_MAX;
	return (long long)d;
}

long long xc_int(json_t *obj, const char *key)
{
	return xc_number(json_object_get(obj, key));
}

/* ---------------- JSON ---------------- */

static void newline(FILE *out, int depth)
{
	fputc('\n', out);
	for (int i = 0; i < depth; i++)
		fputs("  ", out);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void xc_json_pretty(FILE *out, const char *text, size_t len)
{
	int depth = 0;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		size_t j;

		switch (c) {
		case '"':
			/* a string, escapes and all, as it is */
			for (j = i + 1; j < len && text[j] != '"'; j++)
				if (text[j] == '\\')
					j++;
			fwrite(text + i, 1, (j < len ? j + 1 : len) - i, out);
			i = j;
			break;
		case '{':
		case '[':
			for (j = i + 1; j < len && is_space(text[j]); j++)
				;
			if (j < len && (text[j] == '}' || text[j] == ']')) {
				/* empty: {} or [] on the line */
				fputc(c, out);
				fputc(text[j], out);
				i = j;
				break;
			}
			fputc(c, out);
			newline(out, ++depth);
			break;
		case '}':
		case ']':
			/* `text` is valid JSON: each close has its open */
			XD_ASSERT_INFO(depth > 0, "'%c' at byte %zu", c, i);
			newline(out, --depth);
			fputc(c, out);
			break;
		case ',':
			fputc(c, out);
			newline(out, depth);
			break;
		case ':':
			fputs(": ", out);
			break;
		default:
			if (!is_space(c))
				fputc(c, out);
		}
	}
	fputc('\n', out);
}

/* ---------------- tables ---------------- */

struct row {
	char **cells;
	char **notes; /* lines */
	size_t nnotes;
};

struct xc_table {
	size_t ncols;
	struct row *rows; /* rows[0]: the headers */
	size_t nrows, cap;
};

/* Columns a cell takes: one per UTF-8 character (xc_safe leaves no
 * control characters; wide scripts are not measured). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

struct xc_table *xc_table_new(size_t ncols, const char *const *headers)
{
	struct xc_table *t = xd_calloc(1, sizeof(*t));

	t->ncols = ncols;
	xc_table_row(t, headers);
	return t;
}

void xc_table_row(struct xc_table *t, const char *const *cells)
{
	struct row *r;

	t->rows = xd_grow(t->rows, &t->cap, t->nrows + 1, sizeof(*t->rows));
	r = &t->rows[t->nrows++];
	memset(r, 0, sizeof(*r));
	r->cells = xd_calloc(t->ncols, sizeof(char *));
	for (size_t i = 0; i < t->ncols; i++)
		r->cells[i] = xc_safe(cells[i], strlen(cells[i]));
}

void xc_table_note(struct xc_table *t, const char *note)
{
	struct row *r;

	/* under a row of cells, never under the headers */
	XD_ASSERT(t->nrows > 1);
	r = &t->rows[t->nrows - 1];
	for (;;) {
		size_t n = strcspn(note, "\n");

		r->notes = xd_reallocarray(r->notes, r->nnotes + 1, sizeof(char *));
		r->notes[r->nnotes++] = xc_safe(note, n);
		if (note[n] == '\0')
			break;
		note += n + 1;
	}
}

void xc_table_print(const struct xc_table *t, FILE *out)
{
	size_t *w = xd_calloc(t->ncols, sizeof(size_t));

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (width(t->rows[r].cells[c]) > w[c])
				w[c] = width(t->rows[r].cells[c]);
	for (size_t r = 0; r < t->nrows; r++) {
		const struct row *row = &t->rows[r];

		for (size_t c = 0; c < t->ncols; c++) {
			fputs(row->cells[c], out);
			if (c + 1 == t->ncols)
				break;
			for (size_t k = width(row->cells[c]); k < w[c] + 2; k++)
				fputc(' ', out);
		}
		fputc('\n', out);
		for (size_t n = 0; n < row->nnotes; n++)
			fprintf(out, "%s%s\n", n == 0 ? "    " : "      ",
				row->notes[n]);
	}
	free(w);
}

void xc_table_free(struct xc_table *t)
{
	if (t == NULL)
		return;
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++)
			free(t->rows[r].cells[c]);
		free(t->rows[r].cells);
		for (size_t n = 0; n < t->rows[r].nnotes; n++)
			free(t->rows[r].notes[n]);
		free(t->rows[r].notes);
	}
	free(t->rows);
	free(t);
}
