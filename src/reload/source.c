/* SPDX-License-Identifier: Apache-2.0 */
#include "reload/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/loader.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct xd_source_dir {
	const char *dir;
	/* the last read's outcome (read_done, on the loop thread): the
	 * thread pool's read writes nothing here */
	struct xd_source_health health;
};

struct xd_source_dir *xd_source_dir_new(const char *dir)
{
	struct xd_source_dir *d = xd_calloc(1, sizeof(*d));

	d->dir = dir;
	d->health.name = "files";
	d->health.up = true; /* until a read says otherwise */
	return d;
}

void xd_source_dir_free(struct xd_source_dir *d)
{
	free(d);
}

static int dir_read(void *self, void *taken XD_UNUSED,
		    struct xd_parsed_cache *parsed, struct xd_snapkey **keys,
		    size_t *n, int64_t *at_ms, struct xd_diag *diag)
{
	const struct xd_source_dir *d = self;

	*at_ms = 0;
	return xd_load_read_dir(d->dir, parsed, keys, n, diag);
}

static void dir_read_done(void *self, int rc, const char *error)
{
	struct xd_source_dir *d = self;
	struct xd_source_health *h = &d->health;
	int64_t now = xd_wall_ms();

	XD_ASSERT_LOOP();
	if (h->up != (rc == 0)) {
		h->up = rc == 0;
		h->since_ms = now;
	}
	if (rc != 0) {
		snprintf(h->last_error, sizeof(h->last_error), "%s",
			 error[0] != '\0' ? error : "cannot be read");
		h->last_error_ms = now;
	}
}

static void dir_health(const void *self, struct xd_source_health *out)
{
	const struct xd_source_dir *d = self;

	*out = d->health;
}

static const struct xd_snapsource_ops dir_ops = {
	.name = "files",
	.take = NULL, /* read whole by each load */
	.read = dir_read,
	.read_done = dir_read_done,
	.health = dir_health,
	.stop = NULL,
};

struct xd_snapsource xd_source_dir(struct xd_source_dir *d)
{
	return (struct xd_snapsource){&dir_ops, d};
}
