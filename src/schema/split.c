/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A large snapshot file in pieces on threads of their own (split.h):
 * where it can be cut so that its pieces still mean what the whole file
 * means, the threads, and the items in file order.
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
#include "schema/split.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xalloc.h"

/* Files smaller than this are not worth a thread per piece. */
#define MIN_PIECE_BYTES (512u * 1024)
#define MAX_THREADS 16

/* ---- where to cut ---- */

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

/*
 * Finds up to `max` pieces of about equal size, cut only before an item
 * of a top-level block list ("- " at the items' column, right under a
 * "section:" line at column 0), and never in a file where a cut could
 * change the meaning. Returns the number of pieces; 1 means "do not cut"
 * (out[0] is then the whole text). Pieces smaller than `min_bytes` are
 * not made.
 */
static size_t find_pieces(const char *text, size_t len, size_t max,
			  size_t min_bytes, struct xd_split_piece *out)
{
	struct section seen[MAX_SECTIONS];
	size_t nseen = 0, n = 1, target, line = 1, items = 0, keylen = 0;
	const char *key = NULL, *p = text, *end = text + len;
	long item_col = -1; /* column of the current list's items */
	bool content = false;

	out[0] = (struct xd_split_piece){text, len, 1, NULL, 0, 0};
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
			struct xd_split_piece *last = &out[n - 1];

			if (n < max && items > 0 &&
			    at - (size_t)(last->text - text) >= target &&
			    len - at >= min_bytes) {
				last->len = at - (size_t)(last->text - text);
				out[n++] = (struct xd_split_piece){
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

/* ---- the pieces on their threads ---- */

/* The items of one piece, kept until every piece has succeeded. */
struct item_rec {
	size_t section, index, len;
	unsigned line, column;
	size_t ann_len; /* what the annotation hooks wrote */
	/* then len bytes, padded to 8; then ann_len bytes, padded to 8 */
};

struct piece_job {
	xd_split_piece_fn piece_fn;
	void *ctx;
	const struct xd_split_piece *p;
	const struct xd_section *sections;
	struct xd_buf items;
	struct xd_diag diag;
	int rc;
};

static int collect(const struct xd_item *it, void *arg)
{
	struct piece_job *j = arg;
	struct item_rec rec = {(size_t)(it->section - j->sections), it->index,
			       it->len, it->line, it->column, it->ann_len};
	static const uint8_t pad[8];

	/* its piece fails, so the file is transcoded again in one piece,
	 * which hands it over */
	if (it->broken)
		return 0;
	xd_buf_append(&j->items, &rec, sizeof(rec));
	xd_buf_append(&j->items, it->data, it->len);
	xd_buf_append(&j->items, pad, (8 - it->len % 8) % 8);
	xd_buf_append(&j->items, it->ann, it->ann_len);
	xd_buf_append(&j->items, pad, (8 - it->ann_len % 8) % 8);
	return 0;
}

static void *run_job(void *arg)
{
	struct piece_job *j = arg;

	j->rc = j->piece_fn(j->ctx, j->p, collect, j, &j->diag);
	return NULL;
}

/* Hands every collected item over, in file order. */
static int dispatch(struct piece_job *jobs, size_t n, xd_item_fn fn,
		    void *arg)
{
	int rc = 0;

	for (size_t k = 0; k < n && rc == 0; k++) {
		const uint8_t *p = jobs[k].items.data;
		const uint8_t *end = p ? p + jobs[k].items.len : NULL;

		while (p < end && rc == 0) {
			struct item_rec rec;
			struct xd_item it;
			char path[160];
			const struct xd_section *sec;

			memcpy(&rec, p, sizeof(rec));
			p += sizeof(rec);
			sec = &jobs[k].sections[rec.section];
			snprintf(path, sizeof(path), "%s[%zu]", sec->key,
				 rec.index);
			it = (struct xd_item){.section = sec,
					      .index = rec.index,
					      .line = rec.line,
					      .column = rec.column,
					      .path = path, .data = p,
					      .len = rec.len,
					      .ann_len = rec.ann_len};
			p += rec.len + (8 - rec.len % 8) % 8;
			if (rec.ann_len > 0)
				it.ann = p;
			p += rec.ann_len + (8 - rec.ann_len % 8) % 8;
			XD_ASSERT(p <= end);
			if (fn != NULL && fn(&it, arg) != 0)
				rc = -1;
		}
	}
	return rc;
}

int xd_split_run(const char *text, size_t len, unsigned threads,
		 const struct xd_section *sections, xd_split_piece_fn piece_fn,
		 void *ctx, xd_item_fn fn, void *arg, int *rc)
{
	struct xd_split_piece pieces[MAX_THREADS];
	struct piece_job jobs[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	bool started[MAX_THREADS] = {false};
	size_t n;
	int ok = 1;

	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	n = find_pieces(text, len, threads, MIN_PIECE_BYTES, pieces);
	/* one job and one thread for each, in arrays of MAX_THREADS */
	XD_ASSERT_INFO(n >= 1 && n <= (threads > 0 ? threads : 1),
		       "%zu pieces for %u threads", n, threads);
	if (n < 2)
		return 0;
	for (size_t k = 0; k < n; k++) {
		jobs[k] = (struct piece_job){piece_fn, ctx, &pieces[k],
					     sections, XD_BUF_INIT,
					     XD_DIAG_INIT, 0};
		/* The calling thread takes the last piece itself. */
		if (k + 1 < n)
			started[k] = pthread_create(&th[k], NULL, run_job,
						    &jobs[k]) == 0;
		if (k + 1 < n && !started[k])
			run_job(&jobs[k]);
	}
	run_job(&jobs[n - 1]);
	for (size_t k = 0; k < n; k++) {
		if (started[k])
			pthread_join(th[k], NULL);
		ok &= jobs[k].rc == 0;
	}
	/* Any error: the whole file again in one piece, whose messages
	 * are the authority (a cut inside a quoted scalar, say, makes a
	 * piece fail where the file does not). */
	if (ok)
		*rc = dispatch(jobs, n, fn, arg);
	for (size_t k = 0; k < n; k++) {
		xd_buf_free(&jobs[k].items);
		xd_diag_clear(&jobs[k].diag);
	}
	return ok;
}
