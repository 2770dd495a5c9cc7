/*
 * Between the files of the transcoder's YAML entry point: a snapshot
 * file may be transcoded in pieces, each on its own thread.
 */
#ifndef XD_SCHEMA_TRANSCODE_INT_H
#define XD_SCHEMA_TRANSCODE_INT_H

#include <stddef.h>

#include "schema/transcode.h"

/*
 * A slice of a snapshot file that is itself a snapshot file once its
 * section key is put back in front: "clusters:\n" + items 5000...
 */
struct xd_yaml_piece {
	const char *text;
	size_t len;
	unsigned first_line; /* the slice's first line in the file */
	const char *key;     /* the section it continues, or NULL */
	size_t keylen;
	size_t first_index;  /* index of its first item in that section */
};

/*
 * Finds up to `max` pieces of about equal size, cut only before an item
 * of a top-level block list ("- " at the items' column, right under a
 * "section:" line at column 0), and never in a file where a cut could
 * change the meaning: anchors and aliases (they may cross a cut),
 * repeated section keys, several documents, explicit keys. Returns the
 * number of pieces; 1 means "do not cut" (out[0] is then the whole
 * text). Pieces smaller than `min_bytes` are not made.
 */
size_t xd_yaml_split(const char *text, size_t len, size_t max,
		     size_t min_bytes, struct xd_yaml_piece *out);

/* The section named key (`len` bytes), or NULL. */
const struct xd_section *xd_transcode_section(const struct xd_section *sections,
					      size_t nsections, const char *key,
					      size_t len);

/* "where: unknown key 'x' (expected one of: clusters, ...)" */
void xd_transcode_unknown_section(struct xd_diag *diag, const char *where,
				  const char *key, size_t len,
				  const struct xd_section *sections,
				  size_t nsections);

/* Transcodes one piece as xd_transcode_yaml_file does a whole file. */
int xd_transcode_yaml_piece(const struct xd_schema *s, const char *file,
			    const struct xd_yaml_piece *p,
			    const struct xd_section *sections,
			    size_t nsections, xd_item_fn fn, void *arg,
			    struct xd_diag *diag);

#endif
