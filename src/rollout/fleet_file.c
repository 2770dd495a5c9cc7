/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fleet's record with `source: files` (fleet.h): one replica, the
 * record in STATE_DIR/rollout.state, or in memory without state_dir.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rollout/fleet_int.h"
#include "util/common.h"
#include "util/file.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct file_be {
	struct xd_fleet *f;  /* NULL once the fleet is gone, a save running */
	uv_loop_t *loop;
	char *path;          /* NULL: in memory */
	int64_t mod;         /* counts the records written */
	/* the answer to a write, on the next turn of the loop */
	uv_timer_t answer;
	bool answering;
	/* saves, on the thread pool: one running, the newest waiting */
	uv_work_t work;
	bool saving;
	struct xd_buf text, waiting;
	bool has_waiting;
	int rc;
	char err[512];
	bool failing;
};

static struct file_be *be_of(const struct xd_fleet *f)
{
	return f->be_state;
}

static void save_work(uv_work_t *w)
{
	struct file_be *b = w->data;

	b->rc = xd_file_write_whole(b->path, b->text.data, b->text.len, b->err,
				    sizeof(b->err));
}

static void save_start(struct file_be *b);

static void save_done(uv_work_t *w, int status)
{
	struct file_be *b = w->data;

	b->saving = false;
	if (status != 0) {
		b->rc = -1;
		snprintf(b->err, sizeof(b->err), "%s: the save was cancelled", b->path);
	}
	if (b->rc != 0 && !b->failing)
		xd_error("rollout: cannot save the rollout's record: %s; a restart would not remember it",
			 b->err);
	else if (b->rc == 0 && b->failing)
		xd_info("rollout: the rollout's record is saved again in %s", b->path);
	b->failing = b->rc != 0;
	if (b->f == NULL && !b->has_waiting) {
		/* the fleet went meanwhile: the last save was this one */
		xd_buf_free(&b->text);
		xd_buf_free(&b->waiting);
		free(b->path);
		free(b);
		return;
	}
	save_start(b);
}

static void save_start(struct file_be *b)
{
	if (b->saving || !b->has_waiting)
		return;
	b->text.len = 0;
	xd_buf_append(&b->text, b->waiting.data, b->waiting.len);
	b->has_waiting = false;
	if (uv_queue_work(b->loop, &b->work, save_work, save_done) == 0)
		b->saving = true;
	else
		xd_error("rollout: cannot start saving the rollout's record in %s",
			 b->path);
}

static void on_answer(uv_timer_t *t)
{
	struct file_be *b = t->data;
	struct xd_fleet *f = b->f;

	b->answering = false;
	if (f == NULL || !f->flight.used)
		return;
	b->mod++;
	xd_fleet__written(f, true, &f->flight.rec, b->mod, NULL);
}

static void be_write(struct xd_fleet *f, const struct xd_rollout_record *rec,
		     int64_t expect)
{
	struct file_be *b = be_of(f);

	(void)expect; /* one replica: nobody else writes */
	if (b->path != NULL) {
		b->waiting.len = 0;
		xd_rollout_record_write(rec, &b->waiting);
		xd_buf_putc(&b->waiting, '\n');
		b->has_waiting = true;
		save_start(b);
	}
	if (!b->answering) {
		b->answering = true;
		uv_timer_start(&b->answer, on_answer, 0, 0);
	}
}

static void be_publish(struct xd_fleet *f XD_UNUSED,
		       const uint8_t *text XD_UNUSED, size_t len XD_UNUSED)
{
	/* one replica: nobody reads it */
}

static bool be_reachable(const struct xd_fleet *f XD_UNUSED)
{
	return true;
}

static const char *be_self_id(const struct xd_fleet *f XD_UNUSED)
{
	return "";
}

static void be_stop(struct xd_fleet *f)
{
	struct file_be *b = be_of(f);

	uv_close((uv_handle_t *)&b->answer, NULL);
}

static void be_free(struct xd_fleet *f)
{
	struct file_be *b = be_of(f);

	b->f = NULL;
	if (b->saving)
		return; /* save_done frees it, the save waiting dropped */
	xd_buf_free(&b->text);
	xd_buf_free(&b->waiting);
	free(b->path);
	free(b);
}

static const struct xd_fleet_backend file_backend = {
	be_write, be_publish, be_reachable, be_self_id, be_stop, be_free,
};

/* The record saved in b->path, if any. */
static void load(struct xd_fleet *f, struct file_be *b)
{
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_rollout_record rec;
	struct xd_file file;
	char why[256];
	int err = 0;

	if (xd_file_read(b->path, "rollout record", XD_ROLLOUT_VALUE_MAX, &file,
			 &err, &diag) != 0) {
		if (err != ENOENT)
			for (size_t i = 0; i < diag.count; i++)
				xd_error("rollout: %s; no record of the last rollout",
					 diag.msgs[i]);
		xd_diag_clear(&diag);
		return;
	}
	if (xd_rollout_record_read(&rec, file.text, file.len, why, sizeof(why)) != 0) {
		xd_error("rollout: %s: %s; no record of the last rollout", b->path,
			 why);
	} else {
		b->mod = 1;
		xd_fleet__record(f, &rec, b->mod);
		xd_info("rollout: the last rollout, %llu, was %s (%s)",
			(unsigned long long)rec.id, xd_rollout_state_name(rec.state),
			b->path);
		xd_rollout_record_clear(&rec);
	}
	xd_file_free(&file, false);
}

struct xd_fleet *xd_fleet_new_file(uv_loop_t *loop, const struct xd_config *cfg,
				   const char *state_dir, const char *replica)
{
	struct xd_fleet *f = xd_calloc(1, sizeof(*f));
	struct file_be *b = xd_calloc(1, sizeof(*b));

	XD_ASSERT_LOOP();
	b->f = f;
	b->loop = loop;
	b->work.data = b;
	uv_timer_init(loop, &b->answer);
	b->answer.data = b;
	if (state_dir != NULL)
		b->path = xd_asprintf("%s/%s", state_dir, XD_FLEET_STATE_FILE);
	xd_fleet__init(f, loop, cfg, replica, &file_backend,
		       b->path != NULL ? b->path : "memory", false);
	f->be_state = b;
	if (b->path != NULL)
		load(f, b);
	return f;
}
