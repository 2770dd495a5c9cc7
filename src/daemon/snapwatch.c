/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/snapwatch.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/symlinks.h"
#include "util/common.h"
#include "util/debounce.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* One watched directory. Its own allocation: libuv keeps the handle's
 * address until the close callback. */
struct dirwatch {
	uv_fs_event_t h;
	struct xd_snapwatch *w;
	char *path;
	dev_t dev; /* the directory watched: a new one under the same */
	ino_t ino; /* name (renamed into place) is watched anew */
	bool content; /* the snapshot directory or a key's: what the
		       * loader reads, so its visible names count */
	bool seen; /* content: still there at the last scan */
	char **links; /* symlinks in it on the way to the snapshot files:
		       * they count, hidden (..data) or not */
	size_t nlinks, cap;
};

struct xd_snapwatch {
	uv_loop_t *loop;
	const char *dir;  /* NULL: only `files` are watched */
	const char *name; /* what messages call what is watched */
	uint64_t delay_ms;
	struct xd_reloader *reloader;
	const char **files; /* read by a reload too (TLS): watched by name */
	size_t nfiles;
	struct xd_debounce quiet; /* the reload after changes */
	struct dirwatch **dirs; /* dirs[0] is `dir` itself, if any */
	size_t ndirs, cap;
	size_t nlinks; /* in all dirs, at most XD_SNAPWATCH_MAX_LINKS */
	size_t file_links; /* of those, noted for `files` at the last scan */
	size_t open_handles; /* the timer and every dirwatch until closed */
	bool stopping, warned_max, warned_links;
};

static void maybe_free(struct xd_snapwatch *w)
{
	if (w->stopping && w->open_handles == 0) {
		free(w->dirs);
		free(w->files);
		free(w);
	}
}

static void clear_links(struct dirwatch *dw)
{
	for (size_t i = 0; i < dw->nlinks; i++)
		free(dw->links[i]);
	dw->nlinks = 0;
}

static void dir_closed(uv_handle_t *h)
{
	struct dirwatch *dw = h->data;
	struct xd_snapwatch *w = dw->w;

	clear_links(dw);
	free(dw->links);
	free(dw->path);
	free(dw);
	(void)XD_UNREF(w->open_handles);
	maybe_free(w);
}

static void timer_closed(uv_handle_t *h)
{
	struct xd_snapwatch *w = h->data;

	(void)XD_UNREF(w->open_handles);
	maybe_free(w);
}

static void on_quiet(struct xd_debounce *q);

/*
 * Whether a change to `name` in `dw` matters. In a content directory,
 * every visible name does (hidden ones are skipped by the loader: a
 * file written aside as .x.tmp counts when renamed into place); a
 * symlink on the way to the files matters wherever it is, hidden or
 * not. The rest (a ConfigMap's next ..2026_.. directory while it is
 * written, a release directory being unpacked beside `current`) waits
 * until a link is swapped to it, so that a half-written state is never
 * what a reload reads.
 */
static bool matters(const struct dirwatch *dw, const char *name)
{
	if (name == NULL || (dw->content && name[0] != '.'))
		return true;
	for (size_t i = 0; i < dw->nlinks; i++)
		if (strcmp(dw->links[i], name) == 0)
			return true;
	return false;
}

/* A change: (re)starts the quiet period. */
static void on_event(uv_fs_event_t *h, const char *name,
		     int events XD_UNUSED, int status)
{
	struct dirwatch *dw = h->data;
	struct xd_snapwatch *w = dw->w;

	if (w->stopping)
		return;
	if (status < 0) {
		xd_warn("watch: %s: %s", dw->path, uv_strerror(status));
		return;
	}
	if (!matters(dw, name))
		return;
	xd_debounce_change(&w->quiet);
}

static void drop(struct dirwatch *dw)
{
	uv_fs_event_stop(&dw->h);
	uv_close((uv_handle_t *)&dw->h, dir_closed);
}

/* Watches `path` (whose stat is `st`); NULL, with a warning, if the
 * kernel refuses. Takes `path`. */
static struct dirwatch *add(struct xd_snapwatch *w, char *path,
			    const struct stat *st, bool content)
{
	struct dirwatch *dw = xd_calloc(1, sizeof(*dw));
	int rc;

	dw->w = w;
	dw->path = path;
	dw->dev = st->st_dev;
	dw->ino = st->st_ino;
	dw->content = content;
	dw->seen = true;
	uv_fs_event_init(w->loop, &dw->h);
	dw->h.data = dw;
	w->open_handles++;
	rc = uv_fs_event_start(&dw->h, on_event, path, 0);
	if (rc != 0) {
		xd_warn("watch: cannot watch %s: %s; changes there need a SIGHUP",
			path, uv_strerror(rc));
		uv_close((uv_handle_t *)&dw->h, dir_closed);
		return NULL;
	}
	xd_debug("watch: watching %s", path);
	return dw;
}

/* The content subdirectory watched as `path`, or NULL. */
static struct dirwatch *find(struct xd_snapwatch *w, const char *path)
{
	for (size_t i = 1; i < w->ndirs; i++)
		if (w->dirs[i]->content && strcmp(w->dirs[i]->path, path) == 0)
			return w->dirs[i];
	return NULL;
}

/* The watch of the directory `st` describes, or NULL: one that the
 * scan keeps, whatever the name it was watched under. */
static struct dirwatch *find_same(struct xd_snapwatch *w, const struct stat *st)
{
	for (size_t i = 0; i < w->ndirs; i++) {
		struct dirwatch *dw = w->dirs[i];

		if (dw->dev == st->st_dev && dw->ino == st->st_ino &&
		    (!dw->content || dw->seen))
			return dw;
	}
	return NULL;
}

static void push(struct xd_snapwatch *w, struct dirwatch *dw)
{
	/* room() came first: the stated bound, the top one aside */
	XD_ASSERT_INFO(w->ndirs < XD_SNAPWATCH_MAX_DIRS + 1, "watch of %s: %s",
		       w->name, dw->path);
	w->dirs = xd_grow(w->dirs, &w->cap, w->ndirs + 1, sizeof(*w->dirs));
	w->dirs[w->ndirs++] = dw;
}

/* Room for one more watch; warns once when there is none. */
static bool room(struct xd_snapwatch *w, const char *path)
{
	if (w->ndirs < XD_SNAPWATCH_MAX_DIRS + 1)
		return true;
	if (!w->warned_max)
		xd_warn("watch: more than %d directories to watch for %s; changes in %s and beyond need a SIGHUP",
			XD_SNAPWATCH_MAX_DIRS, w->name, path);
	w->warned_max = true;
	return false;
}

/* One subdirectory found by the scan: keep, renew or add its watch. */
static void scan_one(struct xd_snapwatch *w, char *path, const struct stat *st)
{
	struct dirwatch *dw = find(w, path);

	if (dw != NULL && dw->dev == st->st_dev && dw->ino == st->st_ino) {
		dw->seen = true;
		free(path);
		return;
	}
	if (dw != NULL)
		dw->seen = false; /* replaced: dropped below, watched anew */
	if (!room(w, path)) {
		free(path);
		return;
	}
	dw = add(w, path, st, true);
	if (dw != NULL)
		push(w, dw);
}

/* xd_symlinks_walk's report: the link `name` in `dir` is on the way to
 * a snapshot file, so changes to it count. */
static void note_link(void *arg, const char *dir, const char *name)
{
	struct xd_snapwatch *w = arg;
	struct dirwatch *dw;
	struct stat st;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	dw = find_same(w, &st);
	if (dw != NULL)
		for (size_t i = 0; i < dw->nlinks; i++)
			if (strcmp(dw->links[i], name) == 0)
				return;
	if (w->nlinks >= XD_SNAPWATCH_MAX_LINKS) {
		if (!w->warned_links)
			xd_warn("watch: more than %d symlinks on the way to the files of %s; swapping %s/%s and beyond needs a SIGHUP",
				XD_SNAPWATCH_MAX_LINKS, w->name, dir, name);
		w->warned_links = true;
		return;
	}
	if (dw == NULL) {
		if (!room(w, dir))
			return;
		dw = add(w, xd_strdup(dir), &st, false);
		if (dw == NULL)
			return;
		push(w, dw);
	}
	dw->links = xd_grow(dw->links, &dw->cap, dw->nlinks + 1,
			    sizeof(*dw->links));
	dw->links[dw->nlinks++] = xd_strdup(name);
	w->nlinks++;
	xd_debug("watch: following the symlink %s/%s", dir, name);
}

/* Follows the visible symlinks of the content directory `path`. */
static void walk_entries(struct xd_snapwatch *w, const char *path)
{
	DIR *d = opendir(path);

	for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
		struct stat st;
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = xd_asprintf("%s/%s", path, e->d_name);
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
			xd_symlinks_walk(p, note_link, w);
		free(p);
	}
	if (d != NULL)
		closedir(d);
}

/*
 * A file a reload reads besides the snapshots (a TLS file): watched by
 * its name in the directory that holds it, wherever links lead, and
 * through every symlink on the way (a Kubernetes Secret volume's
 * `tls.crt -> ..data/tls.crt`, certbot's `live/` links re-pointed to a
 * renewal). A file that is gone for now is watched for by name in its
 * directory, so that its return is seen.
 */
static void watch_file(struct xd_snapwatch *w, const char *path)
{
	char *target = realpath(path, NULL), *slash;

	xd_symlinks_walk(path, note_link, w);
	if (target == NULL) {
		char *parent = xd_strdup(path), *dir;
		const char *name = path;

		slash = strrchr(parent, '/');
		if (slash != NULL) {
			name = path + (slash - parent) + 1;
			*slash = '\0';
		}
		dir = realpath(slash == NULL ? "." : slash == parent ? "/" : parent,
			       NULL);
		if (dir != NULL)
			target = xd_asprintf("%s/%s", strcmp(dir, "/") ? dir : "",
					     name);
		free(dir);
		free(parent);
		if (target == NULL)
			return;
	}
	slash = strrchr(target, '/');
	XD_ASSERT_INFO(slash != NULL, "watch: %s resolved to '%s'", path, target);
	*slash = '\0';
	note_link(w, slash == target ? "/" : target, slash + 1);
	free(target);
}

/* `dir` itself, watched anew when another directory has taken its
 * name (a new one renamed into place, or a symlink re-pointed). */
static void renew_top(struct xd_snapwatch *w)
{
	struct stat st;
	struct dirwatch *dw;
	char *real;

	if (stat(w->dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    (st.st_dev == w->dirs[0]->dev && st.st_ino == w->dirs[0]->ino))
		return;
	dw = add(w, xd_strdup(w->dir), &st, true);
	if (dw == NULL)
		return;
	drop(w->dirs[0]);
	w->dirs[0] = dw;
	real = realpath(w->dir, NULL);
	xd_info("watch: %s is now the directory %s", w->dir,
		real != NULL ? real : "(unknown)");
	free(real);
}

/*
 * Reads the list of subdirectories again (hidden ones skipped, as the
 * loader does), then the symlinks on the way to the directory and to
 * every visible entry of the watched ones, and updates the watches: a
 * directory that holds such links and nothing else the loader reads
 * is watched for those names only, and no longer once it holds none.
 */
static void scan(struct xd_snapwatch *w)
{
	struct stat st;
	DIR *d = NULL;
	/* dirs[0], `dir` itself, is never dropped */
	size_t first = w->dir != NULL ? 1 : 0, keep = first, ncontent, links;

	if (w->dir != NULL)
		renew_top(w);
	for (size_t i = 0; i < w->ndirs; i++) {
		w->dirs[i]->seen = i < first;
		clear_links(w->dirs[i]);
	}
	w->nlinks = 0;
	if (w->dir != NULL)
		d = opendir(w->dir);
	for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
		char *path;

		if (e->d_name[0] == '.')
			continue;
		path = xd_asprintf("%s/%s", w->dir, e->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			scan_one(w, path, &st);
		else
			free(path);
	}
	if (d != NULL)
		closedir(d);
	if (w->dir != NULL)
		xd_symlinks_walk(w->dir, note_link, w);
	ncontent = w->ndirs;
	for (size_t i = 0; i < ncontent; i++)
		if (w->dirs[i]->content && w->dirs[i]->seen)
			walk_entries(w, w->dirs[i]->path);
	links = w->nlinks;
	for (size_t i = 0; i < w->nfiles; i++)
		watch_file(w, w->files[i]);
	w->file_links = w->nlinks - links;
	/* drop what is gone, replaced or no longer on the way; the new
	 * watches were pushed after the old ones, and the old ones are
	 * compacted in place */
	for (size_t i = first; i < w->ndirs; i++) {
		struct dirwatch *dw = w->dirs[i];

		if (dw->content ? dw->seen : dw->nlinks > 0)
			w->dirs[keep++] = dw;
		else
			drop(dw);
	}
	w->ndirs = keep;
}

static void on_quiet(struct xd_debounce *q)
{
	struct xd_snapwatch *w = q->data;

	XD_ASSERT_LOOP();
	if (w->stopping)
		return;
	scan(w);
	xd_reload_request(w->reloader, "watch", NULL, NULL);
}

int xd_snapwatch_start(struct xd_snapwatch **out, uv_loop_t *loop, const char *dir,
		   uint64_t delay_ms, uint64_t max_ms,
		   struct xd_reloader *reloader, const char *const *files)
{
	struct xd_snapwatch *w = xd_calloc(1, sizeof(*w));
	struct dirwatch *top = NULL;
	struct stat st;
	size_t subdirs = 0, links;

	XD_ASSERT_LOOP();
	w->loop = loop;
	w->dir = dir;
	w->name = dir != NULL ? dir : "the TLS files";
	w->delay_ms = delay_ms;
	w->reloader = reloader;
	while (files != NULL && files[w->nfiles] != NULL)
		w->nfiles++;
	w->files = xd_calloc(w->nfiles + 1, sizeof(*w->files));
	memcpy(w->files, files, w->nfiles * sizeof(*w->files));
	xd_debounce_init(&w->quiet, loop, delay_ms, max_ms, on_quiet, w);
	w->open_handles = 1;
	if (dir == NULL) {
		/* the etcd source's: its own source follows the snapshots */
		scan(w);
		for (size_t i = 0; i < w->nfiles; i++)
			xd_info("watching %s: a change to it reloads (after %llu ms without another)",
				w->files[i], (unsigned long long)delay_ms);
		*out = w;
		return 0;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		xd_error("watch: %s is not a directory", dir);
	else
		top = add(w, xd_strdup(dir), &st, true);
	if (top == NULL) {
		xd_error("watch: cannot watch the snapshot directory %s", dir);
		w->stopping = true;
		xd_debounce_close(&w->quiet, timer_closed);
		return -1;
	}
	push(w, top);
	scan(w);
	for (size_t i = 1; i < w->ndirs; i++)
		subdirs += w->dirs[i]->content;
	links = w->nlinks - w->file_links;
	if (links > 0)
		xd_info("watching %s and %zu subdirector%s, and %zu symlink%s on the way to them: reloading %llu ms after a change (at most %llu ms after the first while changes go on)",
			dir, subdirs, subdirs == 1 ? "y" : "ies", links,
			links == 1 ? "" : "s", (unsigned long long)delay_ms,
			(unsigned long long)w->quiet.max_ms);
	else
		xd_info("watching %s and %zu subdirector%s: reloading %llu ms after a change (at most %llu ms after the first while changes go on)",
			dir, subdirs, subdirs == 1 ? "y" : "ies",
			(unsigned long long)delay_ms,
			(unsigned long long)w->quiet.max_ms);
	for (size_t i = 0; i < w->nfiles; i++)
		xd_info("watching %s too: a change to it reloads", w->files[i]);
	*out = w;
	return 0;
}

void xd_snapwatch_stop(struct xd_snapwatch *w)
{
	if (w == NULL || w->stopping)
		return;
	w->stopping = true;
	xd_debounce_close(&w->quiet, timer_closed);
	for (size_t i = 0; i < w->ndirs; i++)
		drop(w->dirs[i]);
	w->ndirs = 0;
}
