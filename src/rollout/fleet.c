/* SPDX-License-Identifier: Apache-2.0 */
#include "rollout/fleet_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

static void on_tell(uv_timer_t *t)
{
	struct xd_fleet *f = t->data;

	f->tell_pending = false;
	if (!f->stopped && f->on_record != NULL)
		f->on_record(f->on_record_arg);
}

/* on_record, on the next turn of the loop (once for many changes). */
static void tell(struct xd_fleet *f)
{
	if (f->tell_pending || f->stopped)
		return;
	f->tell_pending = true;
	uv_timer_start(&f->tell, on_tell, 0, 0);
}

/* on_record now: the record a write settled on is acted on before the
 * asker hears that it was taken. */
static void tell_now(struct xd_fleet *f)
{
	if (f->tell_pending) {
		uv_timer_stop(&f->tell);
		f->tell_pending = false;
	}
	if (!f->stopped && f->on_record != NULL)
		f->on_record(f->on_record_arg);
}

void xd_fleet__poke(struct xd_fleet *f)
{
	tell(f);
}

static void on_register(uv_timer_t *t)
{
	xd_fleet_publish(t->data);
}

void xd_fleet__init(struct xd_fleet *f, uv_loop_t *loop,
		    const struct xd_config *cfg, const char *replica,
		    const struct xd_fleet_backend *be, const char *where,
		    bool shared)
{
	f->loop = loop;
	f->cfg = cfg;
	f->replica = xd_strdup(replica);
	f->be = be;
	f->where = xd_strdup(where);
	f->shared = shared;
	f->started_ms = xd_wall_ms();
	uv_timer_init(loop, &f->tell);
	f->tell.data = f;
	uv_timer_init(loop, &f->reg);
	f->reg.data = f;
	/* nobody else reads a registration that is not shared */
	if (shared)
		uv_timer_start(&f->reg, on_register, XD_FLEET_REGISTER_MS,
			       XD_FLEET_REGISTER_MS);
}

static void set_record(struct xd_fleet *f, const struct xd_rollout_record *rec,
		       int64_t mod, bool present)
{
	if (rec == NULL) {
		if (f->has_record)
			xd_rollout_record_clear(&f->record);
		f->has_record = false;
	} else {
		xd_rollout_record_copy(&f->record, rec);
		f->has_record = true;
	}
	f->mod = mod;
	f->present = rec != NULL || present;
	tell(f);
}

void xd_fleet__record(struct xd_fleet *f, const struct xd_rollout_record *rec,
		      int64_t mod)
{
	XD_ASSERT_LOOP();
	if (mod != 0 && mod <= f->mod)
		return; /* known already (a write of ours, seen again) */
	if (rec != NULL)
		xd_debug("rollout record: %llu %s (%s) from %s",
			 (unsigned long long)rec->id,
			 xd_rollout_state_name(rec->state), rec->candidate,
			 f->where);
	set_record(f, rec, mod, false);
}

void xd_fleet__record_unreadable(struct xd_fleet *f, int64_t mod)
{
	XD_ASSERT_LOOP();
	if (mod != 0 && mod <= f->mod)
		return;
	set_record(f, NULL, mod, true);
}

/* ---------------- proposals ---------------- */

static void start_write(struct xd_fleet *f)
{
	XD_ASSERT(f->flight.used);
	f->be->write(f, &f->flight.rec, f->present ? f->mod : 0);
}

static void proposal_end(struct proposal *p, bool taken, const char *why)
{
	xd_fleet_done_fn done = p->done;
	void *arg = p->arg;

	xd_rollout_record_clear(&p->rec);
	p->used = false;
	p->done = NULL;
	if (done != NULL)
		done(arg, taken, why);
}

void xd_fleet__written(struct xd_fleet *f, bool taken,
		       const struct xd_rollout_record *now, int64_t mod,
		       const char *why)
{
	struct proposal ended;

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(f->flight.used, "rollout record of %s: a write answered with none under way",
		       f->where);
	if (taken) {
		if (mod > f->mod || !f->has_record)
			set_record(f, now, mod, false);
	} else if (why == NULL) {
		/* another's won: that one is the record (unreadable when
		 * NULL at a revision) */
		set_record(f, now, mod, mod != 0);
	}
	ended = f->flight;
	memset(&f->flight, 0, sizeof(f->flight));
	if (f->tell_pending)
		tell_now(f);
	if (f->queued.used && !f->stopped) {
		f->flight = f->queued;
		memset(&f->queued, 0, sizeof(f->queued));
		start_write(f);
	}
	proposal_end(&ended, taken,
		     taken ? NULL : why != NULL ? why :
				  "another replica changed the rollout's record first");
}

void xd_fleet_propose(struct xd_fleet *f, const struct xd_rollout_record *rec,
		      xd_fleet_done_fn done, void *arg)
{
	struct proposal *p;

	XD_ASSERT_LOOP();
	if (f->stopped) {
		if (done != NULL)
			done(arg, false, "xdsd is stopping");
		return;
	}
	if (f->flight.used) {
		if (f->queued.used)
			proposal_end(&f->queued, false,
				     "replaced by a newer decision before it was written");
		p = &f->queued;
	} else {
		p = &f->flight;
	}
	memset(p, 0, sizeof(*p));
	xd_rollout_record_copy(&p->rec, rec);
	p->used = true;
	p->done = done;
	p->arg = arg;
	if (p == &f->flight)
		start_write(f);
}

/* ---------------- reports ---------------- */

void xd_fleet_on_self(struct xd_fleet *f, xd_fleet_fill_fn fn, void *arg)
{
	XD_ASSERT_LOOP();
	f->self_fn = fn;
	f->self_arg = arg;
}

void xd_fleet_on_report(struct xd_fleet *f, xd_fleet_fill_fn fn, void *arg)
{
	XD_ASSERT_LOOP();
	f->report_fn = fn;
	f->report_arg = arg;
}

void xd_fleet_self_json(struct xd_fleet *f, struct xd_buf *out)
{
	/* filled by others, borrowed: nothing in it is freed here */
	struct xd_rollout_report r = {0};

	XD_ASSERT_LOOP();
	if (f->self_fn != NULL)
		f->self_fn(f->self_arg, &r);
	if (f->report_fn != NULL)
		f->report_fn(f->report_arg, &r);
	r.replica = f->replica;
	r.pid = (int64_t)getpid();
	r.started_ms = f->started_ms;
	xd_rollout_report_write(&r, out);
}

void xd_fleet_publish(struct xd_fleet *f)
{
	struct xd_buf b = XD_BUF_INIT;

	XD_ASSERT_LOOP();
	if (f->stopped || !f->shared)
		return;
	xd_fleet_self_json(f, &b);
	f->be->publish(f, b.data, b.len);
	xd_buf_free(&b);
}

int64_t xd_fleet_started(const struct xd_fleet *f)
{
	return f->started_ms;
}

static void entry_free(struct report_entry *e)
{
	free(e->id);
	xd_rollout_report_clear(&e->r);
}

void xd_fleet__reports_clear(struct xd_fleet *f)
{
	for (size_t i = 0; i < f->nreports; i++)
		entry_free(&f->reports[i]);
	free(f->reports);
	f->reports = NULL;
	f->nreports = 0;
}

void xd_fleet__report(struct xd_fleet *f, const char *id,
		      struct xd_rollout_report *r)
{
	size_t i;

	XD_ASSERT_LOOP();
	for (i = 0; i < f->nreports; i++)
		if (strcmp(f->reports[i].id, id) == 0)
			break;
	if (r == NULL) {
		if (i == f->nreports)
			return;
		entry_free(&f->reports[i]);
		f->reports[i] = f->reports[--f->nreports];
		tell(f);
		return;
	}
	if (i == f->nreports) {
		if (f->nreports >= XD_FLEET_REPLICAS_MAX) {
			xd_warn("rollout: more than %d replicas report under %s: the report of '%s' is left out",
				XD_FLEET_REPLICAS_MAX, f->where, r->replica);
			return;
		}
		f->reports = xd_reallocarray(f->reports, f->nreports + 1,
					     sizeof(*f->reports));
		f->reports[i].id = xd_strdup(id);
		memset(&f->reports[i].r, 0, sizeof(f->reports[i].r));
		f->nreports++;
	}
	xd_rollout_report_clear(&f->reports[i].r);
	f->reports[i].r = *r; /* taken: the caller's is emptied */
	memset(r, 0, sizeof(*r));
	tell(f);
}

size_t xd_fleet_nreports(const struct xd_fleet *f)
{
	return f->nreports;
}

const struct xd_rollout_report *xd_fleet_report(const struct xd_fleet *f,
						size_t i)
{
	XD_ASSERT(i < f->nreports);
	return &f->reports[i].r;
}

bool xd_fleet_report_current(const struct xd_fleet *f, size_t i)
{
	const struct xd_rollout_report *r = &f->reports[i].r;

	XD_ASSERT(i < f->nreports);
	if (r->replica == NULL || strcmp(r->replica, f->replica) == 0)
		return false;
	for (size_t j = 0; j < f->nreports; j++) {
		const struct xd_rollout_report *o = &f->reports[j].r;

		if (j == i || o->replica == NULL || strcmp(o->replica, r->replica) != 0)
			continue;
		/* the later start; of two at once, one of them */
		if (o->started_ms > r->started_ms ||
		    (o->started_ms == r->started_ms && j < i))
			return false;
	}
	return true;
}

const char *xd_fleet_report_id(const struct xd_fleet *f, size_t i)
{
	XD_ASSERT(i < f->nreports);
	return f->reports[i].id;
}

const char *xd_fleet_self_id(const struct xd_fleet *f)
{
	return f->be->self_id(f);
}

/* ---------------- the rest ---------------- */

void xd_fleet_on_record(struct xd_fleet *f, xd_fleet_record_fn fn, void *arg)
{
	XD_ASSERT_LOOP();
	f->on_record = fn;
	f->on_record_arg = arg;
}

const struct xd_rollout_record *xd_fleet_record(const struct xd_fleet *f)
{
	return f->has_record ? &f->record : NULL;
}

void xd_fleet_set_replica(struct xd_fleet *f, const char *replica)
{
	XD_ASSERT_LOOP();
	free(f->replica);
	f->replica = xd_strdup(replica);
}

const char *xd_fleet_replica(const struct xd_fleet *f)
{
	return f->replica;
}

const char *xd_fleet_where(const struct xd_fleet *f)
{
	return f->where;
}

bool xd_fleet_shared(const struct xd_fleet *f)
{
	return f->shared;
}

bool xd_fleet_reachable(const struct xd_fleet *f)
{
	return !f->stopped && f->be->reachable(f);
}

int64_t xd_fleet_anchor(const struct xd_fleet *f)
{
	/* without `rollout:`, the newest snapshots are served, whatever a
	 * record says */
	if (!f->cfg->rollout.on || !f->has_record || f->record.state == XD_ROLLOUT_PROMOTED)
		return 0;
	return f->record.stable_revision;
}

void xd_fleet_stop(struct xd_fleet *f)
{
	if (f == NULL || f->stopped)
		return;
	XD_ASSERT_LOOP();
	f->stopped = true;
	f->be->stop(f);
	if (f->queued.used)
		proposal_end(&f->queued, false, "xdsd is stopping");
	if (f->flight.used)
		proposal_end(&f->flight, false, "xdsd is stopping");
	uv_close((uv_handle_t *)&f->tell, NULL);
	uv_close((uv_handle_t *)&f->reg, NULL);
}

void xd_fleet_free(struct xd_fleet *f)
{
	if (f == NULL)
		return;
	XD_ASSERT_INFO(f->stopped, "rollout fleet of %s freed while running",
		       f->where);
	f->be->free(f);
	if (f->has_record)
		xd_rollout_record_clear(&f->record);
	xd_fleet__reports_clear(f);
	free(f->replica);
	free(f->where);
	free(f);
}
