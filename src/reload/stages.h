/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stages a change passes through (docs/design.md §13), as
 * functions of one value, struct xd_change:
 *
 *   source     what a source (source.h) holds now, read through its
 *              ops: the files, the revision they are at;
 *   load       those files parsed and built into snapshots (the
 *              unchanged ones traded for those served), and, when it
 *              may be wanted, the last good state loaded beside them;
 *   verdict    whether the change may be served: it loaded, every node
 *              served keeps a snapshot (and the TLS files read, the
 *              reloader's part);
 *   placement  who is served it: every node (the cache), or the
 *              rollout's canaries first (the installer, rollout.h),
 *              which says what became of it; refused with nothing
 *              served, the last good state instead;
 *   persist    what was placed for everyone becomes the last good state
 *              (laststate.h); what is staged is held until promoted.
 *
 * The reloader (reload.h) only sequences and coalesces the requests
 * for changes and runs these in order, source and load on the thread
 * pool, the others on the loop; none of them knows who asked, nor
 * queues anything.
 *
 * Ownership: struct xd_stages borrows all it names (the reloader's);
 * a change owns its load and its load of the saved state until taken.
 * Thread: as each stage says.
 */
#ifndef XD_RELOAD_STAGES_H
#define XD_RELOAD_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "reload/laststate.h"
#include "reload/reload.h"
#include "reload/source.h"
#include "schema/schema.h"
#include "snapshot/loader.h"

/* What the stages work with. */
struct xd_stages {
	const struct xd_schema *schema;
	struct xd_cache *cache;
	const char *dir; /* names the source in messages */
	const struct xd_reload_installer *install; /* NULL: the cache */
	void *install_arg;
	struct xd_laststate *last;          /* NULL: no state_dir */
	struct xd_snapsource saved_source;  /* last's, when there is one */
};

/* One change on its way through the stages. */
struct xd_change {
	/* source: the revision its source is at with it, and that of the
	 * newest change to the snapshots among it (source.h, take); its
	 * read's outcome, for the source's health */
	int64_t revision, changed;
	int read_rc;
	char read_error[XD_SOURCE_ERROR_MAX];
	/* load */
	struct xd_load load;
	/* the last good state, loaded when nothing is served (in case the
	 * snapshots are refused) or a rollout places the first snapshots */
	struct {
		bool wanted;
		enum xd_laststate_found found;
		struct xd_load load;
		int64_t saved_at_ms;
		struct xd_diag why;
	} saved;
};

/*
 * Source and load, on the thread pool (the loop for the first load):
 * reads `src` (its take `taken`), then loads what it read into
 * c->load, reusing `prev` and `parsed` (may be NULL) as the load before
 * left them; the snapshots equal to those served are traded for them.
 */
void xd_stage_load(const struct xd_stages *s, struct xd_change *c,
		   const struct xd_snapsource *src, void *taken,
		   struct xd_parsed_cache *parsed,
		   struct xd_snapshot *const *prev, size_t nprev);

/* On the loop once the load is over: the source hears how its read
 * went (source.h, read_done). */
void xd_stage_source_over(const struct xd_change *c,
			  const struct xd_snapsource *src);

/* The last good state loaded into c->saved (any thread). */
void xd_stage_load_saved(const struct xd_stages *s, struct xd_change *c);

/* Whatever c->saved holds, freed. */
void xd_stage_saved_done(struct xd_change *c);

/*
 * The verdict, on the loop: `load` may be served when it loaded and
 * every node served now still finds a snapshot (its own key's, or the
 * default); each key that would be lost is an error of `load`, named
 * after `dir`. Returns whether it may.
 */
bool xd_stage_verdict(const struct xd_stages *s, const char *dir,
		      struct xd_load *load);

/*
 * Placement, on the loop: puts an accepted load's snapshots (`snaps`,
 * taken) in use and returns the keys changed; `*outcome` says what
 * became of the change. `serving`: snapshots are served already (not
 * the first ones).
 */
size_t xd_stage_place(const struct xd_stages *s, struct xd_change *c,
		      struct xd_snapshot **snaps, size_t n,
		      const char *trigger, bool serving,
		      enum xd_reload_rollout *outcome);

/*
 * Placement of a refused change with nothing served: the last good
 * state c->saved found, said loudly, or why it cannot be. Returns
 * whether it is served; `*changed` counts the snapshots put in.
 */
bool xd_stage_place_saved(const struct xd_stages *s, struct xd_change *c,
			  const struct xd_diag *refused, size_t *changed);

/*
 * Persist, on the loop: a placed load (its files, taken) is the last
 * good state; staged, it is held until its rollout is promoted;
 * refused by its rollout, it is not.
 */
void xd_stage_persist(const struct xd_stages *s, struct xd_load *load,
		      enum xd_reload_rollout outcome);

/* The log lines the stages share with the reloader. */
void xd_stage_log_errors(const struct xd_diag *d);
void xd_stage_log_snapshots(struct xd_snapshot *const *snaps, size_t n);

#endif
