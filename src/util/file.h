/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a file xdsd (or xdsctl) is given, whole: the configuration,
 * the schema, snapshot files, the saved state, the TLS files of the
 * listener and of the etcd client. Every reader goes through here, so
 * that none can be made to wait or to read without end:
 *
 * - It must be a regular file. Its type is checked before it is
 *   opened: opening a FIFO for reading waits until something opens it
 *   for writing (the loop, or the worker that reads, stuck for good),
 *   and opening a device may have effects of its own. The open itself
 *   does not block either (O_NONBLOCK, which regular files ignore), and
 *   what was opened is checked again, in case the file was replaced in
 *   between. /dev/zero, a directory or a socket is refused the same way.
 * - It is at most `max` bytes, checked before anything is read.
 * - A file that shrinks while it is read is refused, not read short.
 *
 * Messages name the file and what it is to xdsd, and say what is wrong
 * with it: "PATH: the saved state is a FIFO; it must be a regular
 * file", "PATH: cannot read the schema: Permission denied (running as
 * uid 61234)".
 *
 * Thread: any. Nothing is kept between calls.
 */
#ifndef XD_UTIL_FILE_H
#define XD_UTIL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/diag.h"

/* A file read whole by xd_file_read. */
struct xd_file {
	char *text;     /* `len` bytes and a NUL (malloc'd: the caller's) */
	size_t len;
	struct stat st; /* what fstat said of the file opened */
};

/*
 * Opens `path` (`what` names it in messages: "saved state") for
 * reading, as above. Returns the descriptor (O_CLOEXEC; the caller
 * closes it), with what fstat said of it in `*st`; or -1 with the
 * reason in `diag`, and in `*err` the errno when the file could not be
 * looked at or opened (ENOENT: there is none) or 0 when it was refused
 * (not a regular file, too large). `err` may be NULL.
 */
int xd_file_open(const char *path, const char *what, uint64_t max,
		 struct stat *st, int *err, struct xd_diag *diag);

/* Reads exactly `len` bytes of `fd` (opened by xd_file_open) into
 * `buf`: 0, or -1 with the reason in `diag` (a read error, or the file
 * shrank). */
int xd_file_read_fd(int fd, const char *path, const char *what, char *buf,
		    size_t len, struct xd_diag *diag);

/* Both: `path` read whole into `out`. 0; or -1 with `out` empty, the
 * reason in `diag` and `*err` as xd_file_open sets it (may be NULL). */
int xd_file_read(const char *path, const char *what, uint64_t max,
		 struct xd_file *out, int *err, struct xd_diag *diag);

/* Frees out->text (wiped first when it held a secret, `wipe`). */
void xd_file_free(struct xd_file *f, bool wipe);

/* ---------------- writing ---------------- */

/*
 * The temporary file a whole write of `path` writes first,
 * "DIR/.NAME.XXXXXX" (mkostemp's template; malloc'd): hidden, in the
 * same directory, so that the rename stays on one file system and a
 * leftover is never taken for the file. Whoever cleans leftovers up
 * knows them by the same template.
 */
#define XD_FILE_TMP_SUFFIX ".XXXXXX"
char *xd_file_tmp_template(const char *path);

/* fsync of the directory of `path`, so that a rename is on disk too:
 * 0, or -1 with errno. */
int xd_file_sync_dir(const char *path);

/*
 * `len` bytes of `data` as the whole of `path`, atomically: written to
 * the temporary file, fsync'd, renamed over `path`, the directory
 * fsync'd. A crash leaves the old file or the new one. 0, or -1 with
 * why in `err`. Blocks: off the loop thread.
 */
int xd_file_write_whole(const char *path, const void *data, size_t len,
			char *err, size_t errlen);

#endif
