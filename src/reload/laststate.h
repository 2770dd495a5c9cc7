/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The last good state (`state_dir:`, xdsd.yaml(5)): the snapshot files
 * of the last load xdsd accepted, kept on disk so that a start whose
 * snapshots are broken (a bad file left in the directory, a bad value
 * in etcd) serves them instead of refusing to start.
 *
 * What is kept is what was loaded: every key with its files' names,
 * kinds and bytes. Loading it runs the same checks as loading the files
 * and gives the same content, so the same versions: clients that held
 * it before the restart are sent nothing new.
 *
 * STATE_DIR/snapshots.state, written whole after each accepted load
 * (the first included; with `rollout:`, once its rollout is promoted) to a temporary file in STATE_DIR, fsync'd,
 * renamed over the old one, and the directory fsync'd: a crash leaves
 * the old state or the new one, never a mix. A load whose files the
 * state on disk holds already (the same checksum of its body and key
 * count) is not written again: "saved at" is when that content was
 * first saved. Little-endian:
 *
 *   "xdsdlast"  u32 format (1)  u32 keys  i64 saved at (Unix ms)
 *   u64 length of the body
 *   body: per key  u32 length, key; u32 files;
 *         per file u32 length, name; u8 1 if JSON; u64 length, bytes
 *   u64 XXH3-64 of everything before it
 *
 * A file that is short, long, of another format, fails its checksum or
 * does not parse is refused whole, with why.
 *
 * Saves run on libuv's thread pool, one at a time: an accepted load
 * that comes while one runs waits, and a newer one replaces it (so at
 * most two sets of files are held, and a staged rollout's change
 * besides, xd_laststate_held). A save that fails is logged and
 * counted; it never fails the load that asked for it.
 *
 * Ownership: the reloader owns it (reload.h, xd_reloader_set_state_dir)
 * and borrows the loop. Thread: loop thread, but for its source's read
 * (xd_laststate_source), which reads only the path and may run on any
 * thread.
 */
#ifndef XD_RELOAD_LASTSTATE_H
#define XD_RELOAD_LASTSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "schema/schema.h"
#include "reload/source.h"
#include "snapshot/loader.h"
#include "util/diag.h"

#define XD_LASTSTATE_FILE "snapshots.state"

/* A saved state larger than this is neither written nor read (it is
 * read whole into memory at start). */
#define XD_LASTSTATE_MAX_BYTES (4ull << 30)

/* Why the snapshots were refused while the saved state is served:
 * this many of the errors are kept. */
#define XD_LASTSTATE_ERRORS_KEPT 5

struct xd_laststate_info {
	const char *dir, *path;
	/* The saved state is served: the snapshots were refused at start
	 * (since_ms) and none have been accepted since. */
	bool serving;
	int64_t served_saved_at_ms; /* when what is served was saved */
	int64_t since_ms;
	size_t nerrors;  /* why the snapshots were refused: all of them */
	char **errors;   /* the first nkept */
	size_t nkept;
	/* The state on disk as last written or read (0: none known). */
	int64_t saved_at_ms;
	unsigned long long saves_ok, saves_failed;
	/* saves left undone: the state on disk held those files already */
	unsigned long long saves_unchanged;
	char *last_save_error; /* of the last save that failed, or NULL */
	int64_t last_save_error_at_ms; /* when it failed (0: never) */
	/* The newest save failed: the state on disk (saved_at_ms, if any)
	 * is older than what is served, until a save succeeds. */
	bool save_failing;
};

struct xd_laststate;

/* Keeps the state in `dir`. At start, before any save: the temporary
 * files saves cut short left in `dir` (".snapshots.state.XXXXXX",
 * regular files only) are removed, each logged. */
struct xd_laststate *xd_laststate_new(uv_loop_t *loop, const char *dir);

/* What a load of the saved state found (reload.c). */
enum xd_laststate_found {
	XD_LASTSTATE_LOADED, /* its snapshots load */
	XD_LASTSTATE_NONE,   /* nothing saved yet */
	XD_LASTSTATE_BAD,    /* unusable: why said */
};

/*
 * The saved state as a source (source.h): a read hands over the files
 * it holds (xd_laststate_read: 1 when nothing is saved, -1 unusable)
 * and when they were saved, and may run on any thread (it reads only
 * the path, fixed); the reloader loads them as the files they are.
 * Up while the newest save, if any, succeeded.
 */
struct xd_snapsource xd_laststate_source(struct xd_laststate *s);

/*
 * The snapshots of `source` were refused (`refused`) and the saved
 * state, saved at `saved_at_ms`, is served instead: says so loudly (a
 * warning naming when it was saved and why the snapshots were refused)
 * and shows it in the info until a load is accepted.
 */
void xd_laststate_serving(struct xd_laststate *s, const char *source,
			  int64_t saved_at_ms, const struct xd_diag *refused);

/*
 * A load was accepted and is served: its files (load->keys, taken) are
 * saved, and the saved state, if it was served, no longer is.
 */
void xd_laststate_accepted(struct xd_laststate *s, const char *source,
			   struct xd_load *load);

/*
 * With a staged rollout (rollout/rollout.h), what is saved is what has
 * been proven: a load accepted and staged for the canaries is held
 * (its files taken; a newer one replaces it), the saved state, if it
 * was served, no longer is, and nothing is written. Once the rollout
 * comes to rest, xd_laststate_proven saves what is held if it was
 * promoted and drops it otherwise (failed, aborted): a restart then
 * finds the last state every node was served.
 */
void xd_laststate_held(struct xd_laststate *s, const char *source,
		       struct xd_load *load);
void xd_laststate_proven(struct xd_laststate *s, bool promoted);

const struct xd_laststate_info *xd_laststate_info(const struct xd_laststate *s);

/* Whether a save is running (or waiting). */
bool xd_laststate_busy(const struct xd_laststate *s);

/* Once the loop has run dry (no save can still be running). */
void xd_laststate_free(struct xd_laststate *s);

/*
 * The file format on its own, for tests and the above: writes `keys`
 * to `path` as described (atomically, through a temporary file in its
 * directory), or returns -1 with why in `err`; reads `path` back (0,
 * 1 when it does not exist, -1 with why). Any thread.
 */
int xd_laststate_write(const char *path, const struct xd_snapkey *keys,
		       size_t n, int64_t saved_at_ms, char *err,
		       size_t errlen, size_t *bytes);
int xd_laststate_read(const char *path, struct xd_snapkey **keys, size_t *n,
		      int64_t *saved_at_ms, struct xd_diag *why);

#endif
