/*
 * The snapshot directory on disk: which keys it defines, the files of
 * each, and their text.
 *
 *   DIR/<key>.yaml (.yml, .json)   the snapshot of <key>
 *   DIR/<key>/NAME.yaml (...)      files merged into the snapshot of <key>
 *
 * Hidden entries and other files are ignored. A key defined twice is an
 * error, as are unreadable files, files over XD_SNAPSHOT_MAX_FILE and
 * files with nothing but blanks and comments (a truncated file must not
 * tell every client to drop everything; an empty snapshot is `{}`).
 *
 * Thread: any.
 */
#ifndef XD_SNAPSHOT_FILES_H
#define XD_SNAPSHOT_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "util/diag.h"

/* Files larger than this are refused rather than read. */
#define XD_SNAPSHOT_MAX_FILE (256u << 20)

struct xd_snapfile {
	char *path;
	char *text; /* NUL-terminated */
	size_t len;
	bool json;
};

struct xd_snapkey {
	char *key;
	struct xd_snapfile *files; /* sorted by name */
	size_t nfiles;
};

/*
 * Lists `dir` and reads every file. Returns 0, or -1 with every problem
 * in `diag` (keys and files that were fine are returned either way).
 */
int xd_snapdir_read(const char *dir, struct xd_snapkey **keys, size_t *n,
		    struct xd_diag *diag);

void xd_snapdir_free(struct xd_snapkey *keys, size_t n);

#endif
