/* SPDX-License-Identifier: Apache-2.0 */
#include "util/linediff.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct line {
	const char *p;
	size_t len; /* without the newline */
};

/* The lines of `s`; a final line without a newline counts too. */
static struct line *split(const char *s, size_t len, size_t *n)
{
	size_t cap = 16, count = 0;
	struct line *v = xd_malloc(cap * sizeof(*v));

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t l = nl != NULL ? (size_t)(nl - (s + i)) : len - i;

		if (count == cap) {
			cap *= 2;
			v = xd_realloc(v, cap * sizeof(*v));
		}
		v[count++] = (struct line){s + i, l};
		i += l + 1;
	}
	*n = count;
	return v;
}

static bool same(const struct line *x, const struct line *y)
{
	return x->len == y->len && memcmp(x->p, y->p, x->len) == 0;
}

/* One step of the edit script: a line kept, removed or added. */
struct op {
	char kind; /* ' ', '-', '+' */
	const struct line *line;
	size_t ai, bi; /* the line numbers (0-based) it is at in a and b */
};

/*
 * The edit script of a[0..na) into b[0..nb) by the longest common
 * subsequence (dynamic programming over the lengths of suffixes), or,
 * past the cell bound, every line of a removed then every line of b
 * added. `ops` has room for na + nb.
 */
static size_t script(const struct line *a, size_t na, const struct line *b,
		     size_t nb, size_t a0, size_t b0, struct op *ops)
{
	size_t n = 0, i = 0, j = 0;
	uint32_t *len;

	if (na == 0 || nb == 0 || (na + 1) * (nb + 1) > XD_LINEDIFF_MAX_CELLS) {
		for (i = 0; i < na; i++)
			ops[n++] = (struct op){'-', &a[i], a0 + i, b0};
		for (j = 0; j < nb; j++)
			ops[n++] = (struct op){'+', &b[j], a0 + na, b0 + j};
		return n;
	}
	/* len[i * (nb + 1) + j]: the LCS of a[i..] and b[j..] */
	len = xd_calloc((na + 1) * (nb + 1), sizeof(*len));
	for (size_t x = na; x-- > 0;)
		for (size_t y = nb; y-- > 0;) {
			uint32_t *c = &len[x * (nb + 1) + y];

			if (same(&a[x], &b[y]))
				*c = len[(x + 1) * (nb + 1) + y + 1] + 1;
			else {
				uint32_t down = len[(x + 1) * (nb + 1) + y],
					 right = len[x * (nb + 1) + y + 1];

				*c = down >= right ? down : right;
			}
		}
	while (i < na || j < nb) {
		if (i < na && j < nb && same(&a[i], &b[j])) {
			ops[n++] = (struct op){' ', &a[i], a0 + i, b0 + j};
			i++;
			j++;
		} else if (j == nb || (i < na && len[(i + 1) * (nb + 1) + j] >=
						      len[i * (nb + 1) + j + 1])) {
			ops[n++] = (struct op){'-', &a[i], a0 + i, b0 + j};
			i++;
		} else {
			ops[n++] = (struct op){'+', &b[j], a0 + i, b0 + j};
			j++;
		}
	}
	free(len);
	return n;
}

/* Appends `s` unless that passes `limit`; false when it would. */
static bool put(struct xd_buf *out, size_t limit, const char *s, size_t len)
{
	if (out->len + len > limit)
		return false;
	xd_buf_append(out, s, len);
	return true;
}

/* The hunk of ops[from..to): its header, then its lines. */
static bool hunk(struct xd_buf *out, size_t limit, const struct op *ops,
		 size_t from, size_t to)
{
	size_t an = 0, bn = 0, as = ops[from].ai, bs = ops[from].bi;
	char head[96];
	int hl;

	for (size_t k = from; k < to; k++) {
		an += ops[k].kind != '+';
		bn += ops[k].kind != '-';
	}
	/* diff -u numbers from 1, and an empty side from the line before */
	hl = snprintf(head, sizeof(head), "@@ -%zu,%zu +%zu,%zu @@\n",
		      an ? as + 1 : as, an, bn ? bs + 1 : bs, bn);
	if (!put(out, limit, head, (size_t)hl))
		return false;
	for (size_t k = from; k < to; k++) {
		const struct line *l = ops[k].line;

		if (out->len + l->len + 2 > limit)
			return false;
		xd_buf_putc(out, (uint8_t)ops[k].kind);
		xd_buf_append(out, l->p, l->len);
		xd_buf_putc(out, '\n');
	}
	return true;
}

bool xd_linediff(struct xd_buf *out, const char *a, size_t alen,
		 const char *b, size_t blen, size_t max)
{
	static const char cut[] = "@@ (diff cut short) @@\n";
	size_t na, nb, pre = 0, suf = 0, nops, k = 0, start = out->len;
	struct line *la = split(a, alen, &na), *lb = split(b, blen, &nb);
	struct op *ops;
	bool ok = true;
	/* room kept for the line saying the diff was cut */
	size_t limit = max > sizeof(cut) ? start + max - (sizeof(cut) - 1) : start;

	while (pre < na && pre < nb && same(&la[pre], &lb[pre]))
		pre++;
	while (suf < na - pre && suf < nb - pre &&
	       same(&la[na - 1 - suf], &lb[nb - 1 - suf]))
		suf++;
	/* the context around the change comes from the lines set aside */
	ops = xd_malloc((na + nb + 1) * sizeof(*ops));
	nops = 0;
	for (size_t i = 0; i < pre; i++)
		ops[nops++] = (struct op){' ', &la[i], i, i};
	nops += script(la + pre, na - pre - suf, lb + pre, nb - pre - suf, pre,
		       pre, ops + nops);
	for (size_t i = suf; i-- > 0;)
		ops[nops++] = (struct op){' ', &la[na - 1 - i], na - 1 - i,
					  nb - 1 - i};
	XD_ASSERT(nops <= na + nb);
	/* hunks: each change with its context, merged when they touch */
	while (ok && k < nops) {
		size_t from, to, quiet;

		while (k < nops && ops[k].kind == ' ')
			k++;
		if (k == nops)
			break;
		from = k > XD_LINEDIFF_CONTEXT ? k - XD_LINEDIFF_CONTEXT : 0;
		to = k;
		for (;;) {
			while (to < nops && ops[to].kind != ' ')
				to++;
			quiet = 0;
			while (to + quiet < nops && ops[to + quiet].kind == ' ')
				quiet++;
			if (to + quiet < nops && quiet <= 2 * XD_LINEDIFF_CONTEXT) {
				to += quiet;
				continue;
			}
			to += quiet < XD_LINEDIFF_CONTEXT ? quiet : XD_LINEDIFF_CONTEXT;
			break;
		}
		ok = hunk(out, limit, ops, from, to);
		k = to;
	}
	if (!ok) {
		/* a hunk that did not fit: whole lines only, then the note */
		while (out->len > start && out->data[out->len - 1] != '\n')
			out->len--;
		if (out->len + sizeof(cut) - 1 <= start + max)
			xd_buf_append(out, cut, sizeof(cut) - 1);
	}
	free(ops);
	free(la);
	free(lb);
	return !ok;
}
