/*
 * Automatic reload (`watch: true`): the snapshot directory and its
 * subdirectories (DIR/<key>/, one level, as the loader reads them) are
 * watched with inotify through libuv; after a change, and `delay` ms
 * without another, a reload is asked for with the trigger "watch", as
 * SIGHUP asks for one. A burst of writes (a deploy tool writing twenty
 * files, an editor saving) gives one reload; a change during a reload
 * gives one more after it (the reloader's rule).
 *
 * Renames count: a file written aside and moved into place (the atomic
 * way to publish one), and a directory or symlink swapped in DIR (as
 * Kubernetes updates a ConfigMap volume). Other files that change in
 * those directories (an editor's swap file) only cause a reload that
 * finds nothing new.
 *
 * Before each reload the list of subdirectories is read again: a new
 * one is watched from then on, a removed one no longer, and a directory
 * replaced by another of the same name is watched anew. At most
 * XD_SNAPWATCH_MAX_DIRS directories are watched; past that, and when the
 * kernel refuses a watch (fs.inotify.max_user_watches), a warning says
 * which changes need a SIGHUP.
 *
 * Ownership: borrows the loop, the directory name and the reloader, all
 * of which must outlive it. Thread: loop thread.
 */
#ifndef XD_DAEMON_SNAPWATCH_H
#define XD_DAEMON_SNAPWATCH_H

#include <stdint.h>
#include <uv.h>

#include "daemon/reload.h"

#define XD_SNAPWATCH_MAX_DIRS 4096

struct xd_snapwatch;

/*
 * Starts watching `dir`. Returns 0, or -1 (logged) when `dir` itself
 * cannot be watched.
 */
int xd_snapwatch_start(struct xd_snapwatch **out, uv_loop_t *loop, const char *dir,
		   uint64_t delay_ms, struct xd_reloader *reloader);

/* Stops watching; the memory goes once libuv has closed every handle.
 * w may be NULL. */
void xd_snapwatch_stop(struct xd_snapwatch *w);

#endif
