/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/loads.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>

#include "http/http.h"
#include "util/clock.h"
#include "util/jsonw.h"
#include "util/xalloc.h"

/* Entries written between two looks at the clock and at what the page
 * holds unsent: one is a few hundred bytes. */
#define LOADS_BATCH 32
#define GLOB_MAX 1024

struct xd_loads_page {
	struct xd_loads *store;
	const struct xd_lrs_service *lrs;
	const struct xd_config *cfg;
	char glob[GLOB_MAX];
	bool filtered;
	struct xd_jw w;
	bool begun;
	uint64_t after; /* the last entry written (store.h's numbers) */
	size_t shown;
};

struct xd_loads_page *xd_loads_page_new(struct xd_loads *store,
					const struct xd_lrs_service *lrs,
					const struct xd_config *cfg,
					const char *query, char *why,
					size_t why_len)
{
	struct xd_loads_page *p = xd_calloc(1, sizeof(*p));
	int rc = xd_http_query_get(query, "cluster", p->glob, sizeof(p->glob));

	if (rc < 0) {
		snprintf(why, why_len,
			 "cluster: a glob of at most %d bytes, percent-encoded",
			 GLOB_MAX - 1);
		free(p);
		return NULL;
	}
	p->filtered = rc > 0;
	p->store = store;
	p->lrs = lrs;
	p->cfg = cfg;
	return p;
}

static void entry_json(void *arg, const struct xd_load_view *v)
{
	struct xd_loads_page *p = arg;
	struct xd_jw *w = &p->w;
	/* what the counts are over (as xd_loads_rate takes it) */
	uint64_t per = v->covered_ms > 0 ? v->covered_ms : v->span_ms;
	char when[32];

	if (p->filtered && fnmatch(p->glob, v->cluster, 0) != 0)
		return;
	p->shown++;
	xd_jw_obj(w);
	xd_jw_key(w, "cluster");
	xd_jw_str(w, v->cluster);
	xd_jw_key(w, "service_name");
	xd_jw_str(w, v->service_name);
	xd_jw_key(w, "locality");
	if (v->drops) {
		xd_jw_null(w); /* dropped requests reach no locality */
	} else {
		xd_jw_obj(w);
		xd_jw_key(w, "region");
		xd_jw_str(w, v->region);
		xd_jw_key(w, "zone");
		xd_jw_str(w, v->zone);
		xd_jw_key(w, "sub_zone");
		xd_jw_str(w, v->sub_zone);
		xd_jw_obj_end(w);
	}
	xd_jw_key(w, "node");
	xd_jw_str(w, v->node);
	xd_jw_key(w, "window");
	xd_jw_obj(w);
	xd_jw_key(w, "seconds");
	xd_jw_num(w, (double)per / 1000.0);
	xd_jw_key(w, "requests");
	xd_jw_uint(w, v->requests);
	xd_jw_key(w, "errors");
	xd_jw_uint(w, v->errors);
	xd_jw_key(w, "issued");
	xd_jw_uint(w, v->issued);
	xd_jw_key(w, "dropped");
	xd_jw_uint(w, v->dropped);
	xd_jw_key(w, "requests_per_second");
	xd_jw_num(w, xd_loads_rate(v->requests, v));
	xd_jw_key(w, "errors_per_second");
	xd_jw_num(w, xd_loads_rate(v->errors, v));
	xd_jw_obj_end(w);
	xd_jw_key(w, "in_flight");
	xd_jw_uint(w, v->in_progress);
	xd_jw_key(w, "total");
	xd_jw_obj(w);
	xd_jw_key(w, "requests");
	xd_jw_uint(w, v->total_requests);
	xd_jw_key(w, "errors");
	xd_jw_uint(w, v->total_errors);
	xd_jw_key(w, "dropped");
	xd_jw_uint(w, v->total_dropped);
	xd_jw_obj_end(w);
	xd_jw_key(w, "reports");
	xd_jw_uint(w, v->reports);
	xd_jw_key(w, "last_report");
	xd_jw_time(when, v->last_wall_ms);
	xd_jw_str(w, when);
	xd_jw_key(w, "age_seconds");
	xd_jw_num(w, (double)v->age_ms / 1000.0);
	xd_jw_obj_end(w);
}

static bool page_step(void *st, struct xd_http_exchange *x,
		      uint64_t deadline_ns)
{
	struct xd_loads_page *p = st;
	struct xd_jw *w = &p->w;
	struct xd_loads_stats ls;
	struct xd_lrs_stats rs = {0};
	uint64_t now = xd_mono_ms(), last;

	if (!p->begun) {
		p->begun = true;
		xd_jw_init(w, &x->out);
		xd_jw_obj(w);
		xd_jw_key(w, "loads");
		xd_jw_arr(w);
	}
	while ((last = xd_loads_visit_from(p->store, now, p->after, LOADS_BATCH,
					   entry_json, p)) != 0) {
		p->after = last;
		if (xd_pager_enough(x, deadline_ns))
			return false;
	}
	xd_jw_arr_end(w);
	xd_jw_key(w, "count");
	xd_jw_uint(w, p->shown);
	xd_loads_stats(p->store, &ls);
	if (p->lrs != NULL)
		xd_lrs_service_stats(p->lrs, &rs);
	xd_jw_key(w, "entries");
	xd_jw_uint(w, ls.entries);
	xd_jw_key(w, "max_entries");
	xd_jw_uint(w, ls.max_entries);
	xd_jw_key(w, "refused");
	xd_jw_uint(w, ls.refused);
	xd_jw_key(w, "window_seconds");
	xd_jw_num(w, (double)ls.window_ms / 1000.0);
	xd_jw_key(w, "interval_seconds");
	xd_jw_num(w, (double)p->cfg->load_reports.interval_ms / 1000.0);
	xd_jw_key(w, "reporters");
	xd_jw_uint(w, rs.reporters);
	xd_jw_key(w, "reports");
	xd_jw_uint(w, rs.reports);
	xd_jw_obj_end(w);
	XD_ASSERT(w->depth == 0 && !w->after_key);
	xd_buf_putc(&x->out, '\n');
	return true;
}

static void page_free(void *st)
{
	free(st);
}

const struct xd_pager_page xd_loads_pager = {page_step, page_free};
