#include "daemon/snapwatch.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/common.h"
#include "util/log.h"
#include "util/xalloc.h"

/* One watched directory. Its own allocation: libuv keeps the handle's
 * address until the close callback. */
struct dirwatch {
	uv_fs_event_t h;
	struct xd_snapwatch *w;
	char *path;
	dev_t dev; /* the directory watched: a new one under the same */
	ino_t ino; /* name (renamed into place) is watched anew */
	bool seen; /* still there at the last scan */
};

struct xd_snapwatch {
	uv_loop_t *loop;
	const char *dir;
	uint64_t delay_ms;
	struct xd_reloader *reloader;
	uv_timer_t timer;
	struct dirwatch **dirs; /* dirs[0] is `dir` itself */
	size_t ndirs, cap;
	size_t open_handles; /* the timer and every dirwatch until closed */
	bool stopping, warned_max;
};

static void maybe_free(struct xd_snapwatch *w)
{
	if (w->stopping && w->open_handles == 0) {
		free(w->dirs);
		free(w);
	}
}

static void dir_closed(uv_handle_t *h)
{
	struct dirwatch *dw = h->data;
	struct xd_snapwatch *w = dw->w;

	free(dw->path);
	free(dw);
	w->open_handles--;
	maybe_free(w);
}

static void timer_closed(uv_handle_t *h)
{
	struct xd_snapwatch *w = h->data;

	w->open_handles--;
	maybe_free(w);
}

static void on_quiet(uv_timer_t *t);

/* A change: (re)starts the quiet period. */
static void on_event(uv_fs_event_t *h, const char *name XD_UNUSED,
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
	uv_timer_start(&w->timer, on_quiet, w->delay_ms, 0);
}

static void drop(struct dirwatch *dw)
{
	uv_fs_event_stop(&dw->h);
	uv_close((uv_handle_t *)&dw->h, dir_closed);
}

/* Watches `path` (whose stat is `st`); NULL, with a warning, if the
 * kernel refuses. Takes `path`. */
static struct dirwatch *add(struct xd_snapwatch *w, char *path,
			    const struct stat *st)
{
	struct dirwatch *dw = xd_calloc(1, sizeof(*dw));
	int rc;

	dw->w = w;
	dw->path = path;
	dw->dev = st->st_dev;
	dw->ino = st->st_ino;
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

/* The watch of `path`, or NULL. */
static struct dirwatch *find(struct xd_snapwatch *w, const char *path)
{
	for (size_t i = 1; i < w->ndirs; i++)
		if (strcmp(w->dirs[i]->path, path) == 0)
			return w->dirs[i];
	return NULL;
}

static void push(struct xd_snapwatch *w, struct dirwatch *dw)
{
	w->dirs = xd_grow(w->dirs, &w->cap, w->ndirs + 1, sizeof(*w->dirs));
	w->dirs[w->ndirs++] = dw;
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
	if (w->ndirs >= XD_SNAPWATCH_MAX_DIRS + 1) {
		if (!w->warned_max)
			xd_warn("watch: more than %d subdirectories in %s; changes in %s and beyond need a SIGHUP",
				XD_SNAPWATCH_MAX_DIRS, w->dir, path);
		w->warned_max = true;
		free(path);
		return;
	}
	dw = add(w, path, st);
	if (dw != NULL)
		push(w, dw);
}

/*
 * Reads the list of subdirectories again (hidden ones skipped, as the
 * loader does) and updates the watches. `dir` itself is watched anew
 * when another directory has taken its name.
 */
static void scan(struct xd_snapwatch *w)
{
	struct stat st;
	DIR *d;
	size_t keep = 1;

	if (stat(w->dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (st.st_dev != w->dirs[0]->dev || st.st_ino != w->dirs[0]->ino)) {
		struct dirwatch *dw = add(w, xd_strdup(w->dir), &st);

		if (dw != NULL) {
			drop(w->dirs[0]);
			w->dirs[0] = dw;
		}
	}
	for (size_t i = 1; i < w->ndirs; i++)
		w->dirs[i]->seen = false;
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
	/* drop what is gone or replaced; the new watches were pushed after
	 * the old ones, and the old ones are compacted in place */
	for (size_t i = 1; i < w->ndirs; i++) {
		if (w->dirs[i]->seen)
			w->dirs[keep++] = w->dirs[i];
		else
			drop(w->dirs[i]);
	}
	w->ndirs = keep;
}

static void on_quiet(uv_timer_t *t)
{
	struct xd_snapwatch *w = t->data;

	if (w->stopping)
		return;
	scan(w);
	xd_reload_request(w->reloader, "watch", NULL, NULL);
}

int xd_snapwatch_start(struct xd_snapwatch **out, uv_loop_t *loop, const char *dir,
		   uint64_t delay_ms, struct xd_reloader *reloader)
{
	struct xd_snapwatch *w = xd_calloc(1, sizeof(*w));
	struct dirwatch *top = NULL;
	struct stat st;

	w->loop = loop;
	w->dir = dir;
	w->delay_ms = delay_ms;
	w->reloader = reloader;
	uv_timer_init(loop, &w->timer);
	w->timer.data = w;
	w->open_handles = 1;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		xd_error("watch: %s is not a directory", dir);
	else
		top = add(w, xd_strdup(dir), &st);
	if (top == NULL) {
		xd_error("watch: cannot watch the snapshot directory %s", dir);
		w->stopping = true;
		uv_close((uv_handle_t *)&w->timer, timer_closed);
		return -1;
	}
	push(w, top);
	scan(w);
	xd_info("watching %s and %zu subdirector%s: reloading %llu ms after a change",
		dir, w->ndirs - 1, w->ndirs == 2 ? "y" : "ies",
		(unsigned long long)delay_ms);
	*out = w;
	return 0;
}

void xd_snapwatch_stop(struct xd_snapwatch *w)
{
	if (w == NULL || w->stopping)
		return;
	w->stopping = true;
	uv_close((uv_handle_t *)&w->timer, timer_closed);
	for (size_t i = 0; i < w->ndirs; i++)
		drop(w->dirs[i]);
	w->ndirs = 0;
}
