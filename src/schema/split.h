/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A large YAML snapshot file in pieces, each transcoded on a thread of its
 * own. libyaml is most of the cost of a load and runs on one thread per
 * parser, so a file of 1 MB and more is cut between the items of its
 * top-level lists, where a cut cannot change the meaning, and the pieces
 * are parsed at once. Their items are kept until every piece has
 * succeeded, then handed over in file order: the caller sees what one
 * thread would have given it.
 *
 * Part of the transcoder: only transcode.c includes this. It passes the
 * function that transcodes one piece, so this file never calls back into
 * transcode.c by name.
 *
 * Thread: xd_split_run returns on the calling thread, after every piece's
 * thread has ended; the items reach `fn` on the calling thread.
 */
#ifndef XD_SCHEMA_SPLIT_H
#define XD_SCHEMA_SPLIT_H

#include <stddef.h>

#include "schema/transcode.h"
#include "util/diag.h"

/*
 * A slice of a snapshot file that is itself a snapshot file once its
 * section key is put back in front: "clusters:\n" + items 5000... The
 * whole file is the piece {text, len, 1, NULL, 0, 0}.
 */
struct xd_split_piece {
	const char *text;
	size_t len;
	unsigned first_line; /* the slice's first line in the file */
	const char *key;     /* the section it continues, or NULL */
	size_t keylen;
	size_t first_index;  /* index of its first item in that section */
};

/* Transcodes one piece as a whole file is, handing its items to `fn`;
 * returns 0 when the piece is good. Runs on the piece's thread, with
 * `ctx` shared by every piece (read-only) and `diag` its own. */
typedef int (*xd_split_piece_fn)(void *ctx, const struct xd_split_piece *p,
				 xd_item_fn fn, void *arg,
				 struct xd_diag *diag);

/*
 * Cuts `text` into up to `threads` pieces and runs `piece_fn` on each at
 * once. Returns 1 when that was done, with *rc 0, or -1 when `fn` asked
 * to stop; returns 0 when the file is to be transcoded in one piece
 * instead: too small, unsafe to cut (anchors and aliases, several
 * documents, repeated section keys, explicit keys), or a piece failed,
 * whose messages are then not the authority (a cut inside a quoted
 * scalar, say, makes a piece fail where the file does not). `sections`
 * is the array the items' sections point into.
 */
int xd_split_run(const char *text, size_t len, unsigned threads,
		 const struct xd_section *sections, xd_split_piece_fn piece_fn,
		 void *ctx, xd_item_fn fn, void *arg, int *rc);

#endif
