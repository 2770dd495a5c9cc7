#include "util/text.h"

#include <fnmatch.h>
#include <string.h>

static char fold(char c, unsigned flags)
{
	return (flags & XD_TEXT_FOLD_CASE) && c >= 'A' && c <= 'Z' ?
		       (char)(c - 'A' + 'a') :
		       c;
}

/* Three rows of the dynamic-programming table: the swap looks two rows
 * back ("nmae" is one swap from "name"). */
size_t xd_text_distance(const char *a, size_t la, const char *b, size_t lb,
			unsigned flags)
{
	size_t d[3][65], *prev2 = d[0], *prev = d[1], *cur = d[2];

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		char ca = fold(a[i - 1], flags);
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = prev[j - 1] + (ca != fold(b[j - 1], flags));

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if ((flags & XD_TEXT_SWAPS) && i > 1 && j > 1 &&
			    ca == fold(b[j - 2], flags) &&
			    fold(a[i - 2], flags) == fold(b[j - 1], flags) &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

char *xd_text_copy(struct xd_arena *a, const char *s, size_t len)
{
	char *p = xd_arena_alloc(a, len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

bool xd_text_glob(const char *glob, const char *s)
{
	return fnmatch(glob, s, 0) == 0;
}
