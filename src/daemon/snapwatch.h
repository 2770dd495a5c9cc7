/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Automatic reload (`watch: true`): the snapshot directory and its
 * subdirectories (DIR/<key>/, one level, as the loader reads them) are
 * watched with inotify through libuv; after a change, and `delay` ms
 * without another, a reload is asked for with the trigger "watch", as
 * SIGHUP asks for one; changes that never stop put it off `max_ms` at
 * most (watch_delay_max, util/debounce.h). A burst of writes (a deploy
 * tool writing twenty files, an editor saving) gives one reload; a change during a reload
 * gives one more after it (the reloader's rule).
 *
 * Renames count: a file written aside and moved into place (the atomic
 * way to publish one), and a directory or symlink swapped in DIR. Other
 * visible files that change in those directories (an editor's backup)
 * only cause a reload that finds nothing new; hidden ones are not
 * looked at, as the loader skips them.
 *
 * The other files a reload reads, the TLS certificate, key and client
 * CA, are watched too, each by its name in the directory that holds it
 * and through the symlinks on the way to it (as below): a certificate
 * renewed in place, renamed into place or swapped behind a link asks
 * for a reload, which reads the snapshots and the TLS files together.
 *
 * Symlinks are followed, wherever they are: DIR itself a link
 * re-pointed to a new release (`current -> releases/v41`, swapped by
 * rename), and files or subdirectories that are links through another
 * link (a Kubernetes ConfigMap volume: `default.yaml ->
 * ..data/default.yaml`, `..data -> ..2026_11_26_10_00_00.123`, a new
 * ..data renamed over the old one). Every symlink on the way to DIR and
 * to DIR's and its subdirectories' entries (daemon/symlinks.h) is
 * watched by watching the directory that holds it, for that name only:
 * the swap is the change, and what is written before it (the next
 * generation directory, the next release) is not, so a reload never
 * reads a half-written state and a swap gives one reload.
 *
 * Before each reload the list of subdirectories and the symlinks are
 * read again: a new subdirectory is watched from then on, a removed one
 * no longer, a directory replaced by another of the same name (or
 * reached through a re-pointed link) is watched anew, and a directory
 * that holds no link on the way any more is no longer watched. At most
 * XD_SNAPWATCH_MAX_DIRS directories and XD_SNAPWATCH_MAX_LINKS links
 * are watched; past that, and when the kernel refuses a watch
 * (fs.inotify.max_user_watches), a warning says which changes need a
 * SIGHUP.
 *
 * Ownership: borrows the loop, the directory name and the reloader, all
 * of which must outlive it. Thread: loop thread (checked).
 */
#ifndef XD_DAEMON_SNAPWATCH_H
#define XD_DAEMON_SNAPWATCH_H

#include <stdint.h>
#include <uv.h>

#include "reload/reload.h"

#define XD_SNAPWATCH_MAX_DIRS 4096
#define XD_SNAPWATCH_MAX_LINKS 4096

struct xd_snapwatch;

/*
 * Starts watching `dir`, and `files` (NULL-terminated, may be NULL; the
 * strings must outlive the watch): the other files a reload reads, the
 * TLS files. `dir` NULL: only the files (snapshots from etcd, whose
 * changes the etcd source follows). Returns 0, or -1 (logged) when
 * `dir` itself cannot be watched.
 */
int xd_snapwatch_start(struct xd_snapwatch **out, uv_loop_t *loop, const char *dir,
		   uint64_t delay_ms, uint64_t max_ms,
		   struct xd_reloader *reloader,
		   const char *const *files);

/* Stops watching; the memory goes once libuv has closed every handle.
 * w may be NULL. */
void xd_snapwatch_stop(struct xd_snapwatch *w);

#endif
