/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snapshot directory on disk: which keys it defines, the files of
 * each, and their text.
 *
 *   DIR/<key>.yaml (.yml, .json)   the snapshot of <key>
 *   DIR/<key>/NAME.yaml (...)      files merged into the snapshot of <key>
 *
 * Hidden entries and other files are ignored. A key defined twice is
 * an error, as are unreadable files, files over XD_SNAPSHOT_MAX_FILE
 * and files with nothing but blanks and comments (a truncated file must
 * not tell every client to drop everything; an empty snapshot is `{}`).
 *
 * Symlinks are followed, and the files of one read are of one version:
 * if a path read leads elsewhere once everything is read (a symlink on
 * the way was swapped: a release link re-pointed, a Kubernetes
 * ConfigMap's ..data renamed over), everything is read again, up to
 * XD_SNAPSHOT_READ_TRIES times; then the read fails.
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

/* Reads of a directory that keeps changing while read, before giving up. */
#define XD_SNAPSHOT_READ_TRIES 5

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

/* A snapshot file's text held elsewhere than on disk (an etcd value). */
struct xd_snaptext {
	const char *name; /* as in the directory: "<key>.yaml", "<key>/F.yaml" */
	const char *path; /* how errors name it (the etcd key) */
	const char *text; /* `len` bytes */
	size_t len;
};

/*
 * The keys that `texts` (sorted by name) define, as a directory holding
 * them as files would: the same names count, the same mistakes (a key
 * defined twice, a text with nothing but blanks and comments) are
 * errors. Texts are copied. Returns 0, or -1 with every problem in
 * `diag` (the keys that were fine are returned either way).
 */
int xd_snapkeys_from_texts(const struct xd_snaptext *texts, size_t n,
			   struct xd_snapkey **keys, size_t *nkeys,
			   struct xd_diag *diag);

void xd_snapdir_free(struct xd_snapkey *keys, size_t n);

#endif
