/* A large snapshot file in pieces, each transcoded on a thread of its
 * own (split.c finds where to cut); the items reach the caller in file
 * order once every piece has succeeded. */
#include "schema/transcode_int.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Files smaller than this are not worth a thread per piece. */
#define MIN_PIECE_BYTES (512u * 1024)
#define MAX_THREADS 16

/* The items of one piece, kept until every piece has succeeded. */
struct item_rec {
	size_t section, index, len;
	unsigned line, column;
	/* then len bytes, padded to 8 */
};

struct piece_job {
	const struct xd_schema *s;
	const char *file;
	const struct xd_yaml_piece *p;
	const struct xd_section *sections;
	size_t nsections;
	struct xd_buf items;
	struct xd_diag diag;
	int rc;
};

static int collect(const struct xd_item *it, void *arg)
{
	struct piece_job *j = arg;
	struct item_rec rec = {(size_t)(it->section - j->sections), it->index,
			       it->len, it->line, it->column};
	static const uint8_t pad[8];

	xd_buf_append(&j->items, &rec, sizeof(rec));
	xd_buf_append(&j->items, it->data, it->len);
	xd_buf_append(&j->items, pad, (8 - it->len % 8) % 8);
	return 0;
}

static void *run_job(void *arg)
{
	struct piece_job *j = arg;

	j->rc = xd_transcode_yaml_piece(j->s, j->file, j->p, j->sections,
					j->nsections, collect, j, &j->diag);
	return NULL;
}

/* Hands every collected item over, in file order. */
static int dispatch(struct piece_job *jobs, size_t n, xd_item_fn fn,
		    void *arg)
{
	for (size_t k = 0; k < n; k++) {
		const uint8_t *p = jobs[k].items.data;
		const uint8_t *end = p ? p + jobs[k].items.len : NULL;

		while (p < end) {
			struct item_rec rec;
			struct xd_item it;
			char path[160];

			const struct xd_section *sec;

			memcpy(&rec, p, sizeof(rec));
			p += sizeof(rec);
			sec = &jobs[k].sections[rec.section];
			snprintf(path, sizeof(path), "%s[%zu]", sec->key,
				 rec.index);
			it = (struct xd_item){sec, rec.index, rec.line,
					      rec.column, path, p, rec.len};
			if (fn != NULL && fn(&it, arg) != 0)
				return -1;
			p += rec.len + (8 - rec.len % 8) % 8;
		}
	}
	return 0;
}

/* 1: done (rc set), 0: transcode the file in one piece instead. */
static int in_pieces(const struct xd_schema *s, const char *file,
		     const char *text, size_t len, unsigned threads,
		     const struct xd_section *sections, size_t nsections,
		     xd_item_fn fn, void *arg, int *rc)
{
	struct xd_yaml_piece pieces[MAX_THREADS];
	struct piece_job jobs[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	bool started[MAX_THREADS] = {false};
	size_t n;
	int ok = 1;

	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	n = xd_yaml_split(text, len, threads, MIN_PIECE_BYTES, pieces);
	if (n < 2)
		return 0;
	for (size_t k = 0; k < n; k++) {
		jobs[k] = (struct piece_job){s, file, &pieces[k], sections,
					     nsections, XD_BUF_INIT,
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

int xd_transcode_yaml_file(const struct xd_schema *s, const char *file,
			   const char *text, size_t len, unsigned threads,
			   const struct xd_section *sections, size_t nsections,
			   xd_item_fn fn, void *arg, struct xd_diag *diag)
{
	struct xd_yaml_piece whole = {text, len, 1, NULL, 0, 0};
	int rc;

	if (threads > 1 && in_pieces(s, file, text, len, threads, sections,
				     nsections, fn, arg, &rc))
		return rc;
	return xd_transcode_yaml_piece(s, file, &whole, sections, nsections,
				       fn, arg, diag);
}
