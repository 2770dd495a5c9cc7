/*
 * Where a large snapshot file can be cut so that its pieces parse on
 * separate threads and still mean what the whole file means.
 *
 * A cut goes before a line that starts an item of a top-level block list
 * ("- " at the column of that list's items). Such a line cannot be inside
 * a block scalar (its content is indented deeper than its parent key),
 * nor inside a plain scalar (continuation lines are indented too), nor a
 * nested list (deeper again). It can be inside a quoted scalar or a flow
 * collection spanning lines -- but then the piece before the cut ends in
 * an unterminated scalar or collection, which libyaml reports, and the
 * caller transcodes the whole file in one piece instead. What could make
 * two valid pieces mean something else is refused here: anchors and
 * aliases, repeated section keys, more than one document.
 */
#include "schema/transcode_int.h"

#include <stdbool.h>
#include <string.h>

#define MAX_SECTIONS 64

struct section {
	const char *key;
	size_t keylen;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* An anchor (&a) or alias (*a) might start at p. */
static bool node_property(const char *line, const char *p, const char *end)
{
	char prev = p == line ? ' ' : p[-1];

	return (*p == '&' || *p == '*') && p + 1 < end && !is_blank(p[1]) &&
	       (is_blank(prev) || prev == '[' || prev == '{' || prev == ',');
}

/* "key:" alone on its line (spaces or a comment may follow). */
static bool section_line(const char *p, const char *end, size_t *keylen)
{
	const char *colon = memchr(p, ':', (size_t)(end - p));
	const char *q;

	/* The key is put back in front of pieces: keep it short. */
	if (colon == NULL || colon == p || colon - p > 200)
		return false;
	for (const char *k = p; k < colon; k++)
		if (is_blank(*k) || *k == '"' || *k == '\'' || *k == '#')
			return false;
	for (q = colon + 1; q < end && (*q == ' ' || *q == '\t'); q++)
		;
	if (q < end && *q != '#' && *q != '\r' && *q != '\n')
		return false;
	*keylen = (size_t)(colon - p);
	return true;
}

static bool item_line(const char *q, const char *eol)
{
	return *q == '-' && (q + 1 == eol || is_blank(q[1]));
}

size_t xd_yaml_split(const char *text, size_t len, size_t max,
		     size_t min_bytes, struct xd_yaml_piece *out)
{
	struct section seen[MAX_SECTIONS];
	size_t nseen = 0, n = 1, target, line = 1, items = 0, keylen = 0;
	const char *key = NULL, *p = text, *end = text + len;
	long item_col = -1; /* column of the current list's items */
	bool content = false;

	out[0] = (struct xd_yaml_piece){text, len, 1, NULL, 0, 0};
	if (max < 2 || len < 2 * min_bytes)
		return 1;
	target = len / max > min_bytes ? len / max : min_bytes;
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	for (; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl + 1 : end, *q;
		long col;

		for (q = p; q < eol; q++)
			if (node_property(p, q, eol))
				return 1;
		for (q = p; q < eol && *q == ' '; q++)
			;
		col = (long)(q - p);
		if (q == eol || *q == '#' || *q == '\r' || *q == '\n') {
			p = eol; /* blank or comment */
			continue;
		}
		if (col == 0 && eol - q >= 3 &&
		    (memcmp(q, "---", 3) == 0 || memcmp(q, "...", 3) == 0) &&
		    (eol - q == 3 || is_blank(q[3]))) {
			if (content || *q == '.')
				return 1; /* several documents */
		} else if (col == 0 && !item_line(q, eol)) {
			if (*q == '?' || *q == '%')
				return 1;
			key = NULL;
			if (section_line(q, eol, &keylen)) {
				for (size_t i = 0; i < nseen; i++)
					if (seen[i].keylen == keylen &&
					    memcmp(seen[i].key, q, keylen) == 0)
						return 1;
				if (nseen == MAX_SECTIONS)
					return 1;
				seen[nseen++] = (struct section){q, keylen};
				key = q;
				item_col = -1;
				items = 0;
			}
		} else if (key != NULL && item_col < 0) {
			/* The section's value: a block list, or no cuts. */
			if (item_line(q, eol))
				item_col = col;
			else
				key = NULL;
		}
		if (key != NULL && col == item_col && item_line(q, eol)) {
			size_t at = (size_t)(p - text);
			struct xd_yaml_piece *last = &out[n - 1];

			if (n < max && items > 0 &&
			    at - (size_t)(last->text - text) >= target &&
			    len - at >= min_bytes) {
				last->len = at - (size_t)(last->text - text);
				out[n++] = (struct xd_yaml_piece){
					p, len - at, (unsigned)line, key,
					keylen, items};
			}
			items++;
		}
		content = true;
		p = eol;
	}
	return n;
}
