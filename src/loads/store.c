/* SPDX-License-Identifier: Apache-2.0 */
#include "loads/store.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/common.h"
#include "util/list.h"
#include "util/loop_thread.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The window in slots: a report counts in the slot of its time, and a
 * slot a window old is the next to be reused. */
#define NSLOTS 12
/* Names are clipped to this many bytes: a report's names come from a
 * client, and each entry keeps copies. */
#define NAME_MAX_LEN 256
/* ... and made text every page can show (clean()): at most this long. */
#define CLEAN_MAX (NAME_MAX_LEN * 3 + 1)

struct slot {
	uint64_t epoch; /* now_ms / slot_ms when it was last written */
	uint64_t requests, errors, issued, dropped;
	uint64_t covered_ms; /* the intervals its reports said they cover */
};

struct series {
	char *cluster, *locality;
	uint64_t requests, errors, dropped;
	/* gathered over the entries at each visit */
	uint64_t in_progress, window_requests, window_errors;
	double requests_per_second, errors_per_second;
	size_t nodes;
	struct series *next; /* hash chain */
	struct xd_list link; /* in made order */
};

struct entry {
	uint64_t number; /* made order, for walks across turns */
	uint64_t hash;
	char *cluster, *service_name, *region, *zone, *sub_zone, *node;
	bool drops; /* the cluster's dropped requests: no locality */
	struct series *series;
	struct slot slots[NSLOTS];
	uint64_t first_ms, last_ms;
	int64_t last_wall_ms;
	uint64_t in_progress, reports;
	uint64_t total_requests, total_errors, total_dropped;
	struct entry *next;     /* hash chain */
	struct xd_list by_age;  /* least recently reported first */
	struct xd_list by_made; /* made order */
};

struct xd_loads {
	struct xd_loads_opts o;
	uint64_t slot_ms;
	struct entry **buckets;
	size_t nbuckets, nentries;
	struct series **sbuckets;
	size_t nsbuckets, nseries;
	struct series *other; /* made when first needed */
	struct xd_list by_age, by_made, series;
	uint64_t next_number;
	unsigned long long clusters, localities, refused, folded;
};

/*
 * A name a client sent as the store keeps it, into `buf` (CLEAN_MAX
 * bytes): its first NAME_MAX_LEN bytes, each byte that is no UTF-8 as
 * U+FFFD and each control character (NUL included) as '?', so that
 * /metrics stays the UTF-8 text Prometheus reads and no page is cut
 * short by a NUL. Names are compared and hashed in this form.
 */
static struct xd_name clean(struct xd_name in, char *buf)
{
	const uint8_t *p = (const uint8_t *)in.data;
	size_t left = in.len < NAME_MAX_LEN ? in.len : NAME_MAX_LEN, n = 0;

	while (left > 0) {
		size_t k = *p < 0x20 || *p == 0x7f ? 0 : xd_text_utf8_len(p, left);

		if (*p < 0x20 || *p == 0x7f) {
			buf[n++] = '?';
			k = 1;
		} else if (k == 0) {
			memcpy(buf + n, XD_TEXT_REPLACEMENT, 3);
			n += 3;
			k = 1;
		} else {
			memcpy(buf + n, p, k);
			n += k;
		}
		p += k;
		left -= k;
	}
	buf[n] = '\0';
	return (struct xd_name){buf, n};
}

/* A copy of a clean() name. */
static char *copy_name(struct xd_name n)
{
	char *s = xd_malloc(n.len + 1);

	if (n.len > 0)
		memcpy(s, n.data, n.len);
	s[n.len] = '\0';
	return s;
}

static bool same(const char *s, struct xd_name n)
{
	return strlen(s) == n.len && memcmp(s, n.data, n.len) == 0;
}

static uint64_t mix(uint64_t h, struct xd_name n)
{
	return XXH3_64bits_withSeed(n.data, n.len, h + 0x9e3779b97f4a7c15ull);
}

struct xd_loads *xd_loads_new(const struct xd_loads_opts *o)
{
	struct xd_loads *l = xd_calloc(1, sizeof(*l));

	XD_ASSERT(o->window_ms > 0);
	l->o = *o;
	l->slot_ms = o->window_ms / NSLOTS > 0 ? o->window_ms / NSLOTS : 1;
	l->nbuckets = 64;
	while (l->nbuckets < o->max_entries)
		l->nbuckets *= 2;
	l->buckets = xd_calloc(l->nbuckets, sizeof(*l->buckets));
	l->nsbuckets = 16;
	while (l->nsbuckets < o->max_series)
		l->nsbuckets *= 2;
	l->sbuckets = xd_calloc(l->nsbuckets, sizeof(*l->sbuckets));
	xd_list_init(&l->by_age);
	xd_list_init(&l->by_made);
	xd_list_init(&l->series);
	return l;
}

static void free_entry(struct entry *e)
{
	free(e->cluster);
	free(e->service_name);
	free(e->region);
	free(e->zone);
	free(e->sub_zone);
	free(e->node);
	free(e);
}

static void free_series(struct series *s)
{
	if (s == NULL)
		return;
	free(s->cluster);
	free(s->locality);
	free(s);
}

void xd_loads_free(struct xd_loads *l)
{
	struct xd_list *n, *tmp;

	if (l == NULL)
		return;
	xd_list_for_each_safe(n, tmp, &l->by_made)
		free_entry(xd_container_of(n, struct entry, by_made));
	xd_list_for_each_safe(n, tmp, &l->series)
		free_series(xd_container_of(n, struct series, link));
	free_series(l->other); /* in no list */
	free(l->buckets);
	free(l->sbuckets);
	free(l);
}

/* "region/zone/sub_zone": a series' locality; "" for none (a
 * cluster's dropped requests). */
static char *locality_text(const struct xd_load_locality *loc)
{
	char *a, *b, *c, *out;

	if (loc == NULL)
		return xd_strdup("");
	a = copy_name(loc->region);
	b = copy_name(loc->zone);
	c = copy_name(loc->sub_zone);
	out = xd_asprintf("%s/%s/%s", a, b, c);

	free(a);
	free(b);
	free(c);
	return out;
}

/* The series of (cluster, locality), made if there is room, else the
 * other one. */
static struct series *series_of(struct xd_loads *l, struct xd_name cluster,
				const struct xd_load_locality *loc)
{
	char *where = locality_text(loc);
	struct xd_name w = {where, strlen(where)};
	uint64_t h = mix(mix(0, cluster), w);
	struct series **b = &l->sbuckets[h & (l->nsbuckets - 1)];
	struct series *s;

	for (s = *b; s != NULL; s = s->next)
		if (same(s->cluster, cluster) && strcmp(s->locality, where) == 0)
			break;
	if (s == NULL && l->nseries < l->o.max_series) {
		s = xd_calloc(1, sizeof(*s));
		s->cluster = copy_name(cluster);
		s->locality = where;
		where = NULL;
		s->next = *b;
		*b = s;
		l->nseries++;
		xd_list_push_back(&l->series, &s->link);
	} else if (s == NULL) {
		if (l->other == NULL) {
			s = xd_calloc(1, sizeof(*s));
			s->cluster = xd_strdup(XD_LOADS_OTHER);
			s->locality = xd_strdup(XD_LOADS_OTHER);
			xd_list_init(&s->link);
			l->other = s;
		}
		s = l->other;
		l->folded++;
	}
	free(where);
	return s;
}

static void unlink_entry(struct xd_loads *l, struct entry *e)
{
	struct entry **p = &l->buckets[e->hash & (l->nbuckets - 1)];

	while (*p != e)
		p = &(*p)->next;
	*p = e->next;
	xd_list_remove(&e->by_age);
	xd_list_remove(&e->by_made);
	l->nentries--;
	free_entry(e);
}

/* Entries no report refreshed for a window go. */
static void expire(struct xd_loads *l, uint64_t now_ms)
{
	while (!xd_list_empty(&l->by_age)) {
		struct entry *e =
			xd_container_of(l->by_age.next, struct entry, by_age);

		if (e->last_ms + l->o.window_ms > now_ms)
			break;
		unlink_entry(l, e);
	}
}

static struct slot *slot_at(struct xd_loads *l, struct entry *e,
			    uint64_t now_ms)
{
	uint64_t epoch = now_ms / l->slot_ms;
	struct slot *s = &e->slots[epoch % NSLOTS];

	if (s->epoch != epoch)
		*s = (struct slot){.epoch = epoch};
	return s;
}

void xd_loads_add(struct xd_loads *l, struct xd_name raw_node,
		  const struct xd_load_cluster *raw_c,
		  const struct xd_load_locality *raw_loc, uint64_t now_ms,
		  int64_t wall_ms)
{
	char bufs[6][CLEAN_MAX];
	struct xd_name none = {"", 0};
	struct xd_load_cluster cc = *raw_c, *c = &cc;
	struct xd_load_locality cl, *loc = NULL;
	struct xd_name node = clean(raw_node, bufs[0]);
	struct xd_name r, z, sz;
	uint64_t h;
	struct entry **b;
	struct entry *e;
	struct slot *s;
	uint64_t requests, errors;

	XD_ASSERT_LOOP();
	cc.name = clean(raw_c->name, bufs[1]);
	cc.service_name = clean(raw_c->service_name, bufs[2]);
	if (raw_loc != NULL) {
		cl = *raw_loc;
		cl.region = clean(raw_loc->region, bufs[3]);
		cl.zone = clean(raw_loc->zone, bufs[4]);
		cl.sub_zone = clean(raw_loc->sub_zone, bufs[5]);
		loc = &cl;
	}
	r = loc != NULL ? loc->region : none;
	z = loc != NULL ? loc->zone : none;
	sz = loc != NULL ? loc->sub_zone : none;
	h = mix(mix(mix(mix(mix(loc == NULL, c->name), r), z), sz), node);
	expire(l, now_ms);
	if (loc != NULL)
		l->localities++;
	b = &l->buckets[h & (l->nbuckets - 1)];
	for (e = *b; e != NULL; e = e->next)
		if (e->hash == h && e->drops == (loc == NULL) &&
		    same(e->cluster, c->name) &&
		    same(e->region, r) && same(e->zone, z) &&
		    same(e->sub_zone, sz) && same(e->node, node))
			break;
	if (e == NULL) {
		if (l->nentries >= l->o.max_entries) {
			l->refused++;
			return;
		}
		e = xd_calloc(1, sizeof(*e));
		e->number = ++l->next_number;
		e->hash = h;
		e->cluster = copy_name(c->name);
		e->service_name = copy_name(c->service_name);
		e->region = copy_name(r);
		e->zone = copy_name(z);
		e->sub_zone = copy_name(sz);
		e->node = copy_name(node);
		e->drops = loc == NULL;
		e->series = series_of(l, c->name, loc);
		e->first_ms = now_ms;
		e->next = *b;
		*b = e;
		xd_list_init(&e->by_age);
		xd_list_init(&e->by_made);
		xd_list_push_back(&l->by_made, &e->by_made);
		l->nentries++;
	} else {
		xd_list_remove(&e->by_age);
	}
	xd_list_push_back(&l->by_age, &e->by_age);
	e->last_ms = now_ms;
	e->last_wall_ms = wall_ms;
	e->reports++;
	s = slot_at(l, e, now_ms);
	s->covered_ms += c->interval_ms;
	if (loc == NULL) {
		s->dropped += c->dropped;
		e->total_dropped += c->dropped;
		e->series->dropped += c->dropped;
		return;
	}
	requests = loc->succeeded + loc->errors;
	errors = loc->errors;
	s->requests += requests;
	s->errors += errors;
	s->issued += loc->issued;
	e->in_progress = loc->in_progress;
	e->total_requests += requests;
	e->total_errors += errors;
	e->series->requests += requests;
	e->series->errors += errors;
}

void xd_loads_count_cluster(struct xd_loads *l)
{
	l->clusters++;
}

static void view_of(const struct xd_loads *l, const struct entry *e,
		    uint64_t now_ms, struct xd_load_view *v)
{
	uint64_t oldest = now_ms / l->slot_ms >= NSLOTS ?
				  now_ms / l->slot_ms - (NSLOTS - 1) : 0;

	*v = (struct xd_load_view){
		.cluster = e->cluster,
		.service_name = e->service_name,
		.region = e->region,
		.zone = e->zone,
		.sub_zone = e->sub_zone,
		.node = e->node,
		.drops = e->drops,
		.in_progress = e->in_progress,
		.total_requests = e->total_requests,
		.total_errors = e->total_errors,
		.total_dropped = e->total_dropped,
		.reports = e->reports,
		.last_wall_ms = e->last_wall_ms,
		.age_ms = now_ms - e->last_ms,
	};
	v->span_ms = now_ms - e->first_ms < l->o.window_ms ?
			     now_ms - e->first_ms : l->o.window_ms;
	for (size_t i = 0; i < NSLOTS; i++) {
		const struct slot *s = &e->slots[i];

		if (s->epoch < oldest)
			continue;
		v->requests += s->requests;
		v->errors += s->errors;
		v->issued += s->issued;
		v->dropped += s->dropped;
		v->covered_ms += s->covered_ms;
	}
}

void xd_loads_visit(struct xd_loads *l, uint64_t now_ms,
		    void (*fn)(void *arg, const struct xd_load_view *v),
		    void *arg)
{
	(void)xd_loads_visit_from(l, now_ms, 0, SIZE_MAX, fn, arg);
}

uint64_t xd_loads_visit_from(struct xd_loads *l, uint64_t now_ms,
			     uint64_t after, size_t max,
			     void (*fn)(void *arg, const struct xd_load_view *v),
			     void *arg)
{
	struct xd_list *n;
	uint64_t last = 0;
	size_t done = 0;

	XD_ASSERT_LOOP();
	expire(l, now_ms);
	xd_list_for_each(n, &l->by_made) {
		const struct entry *e = xd_container_of(n, struct entry, by_made);
		struct xd_load_view v;

		if (e->number <= after)
			continue;
		if (done++ == max)
			break;
		view_of(l, e, now_ms, &v);
		fn(arg, &v);
		last = e->number;
	}
	return last;
}

static void series_view(const struct series *s, struct xd_load_series_view *v)
{
	*v = (struct xd_load_series_view){
		.cluster = s->cluster,
		.locality = s->locality,
		.requests = s->requests,
		.errors = s->errors,
		.dropped = s->dropped,
		.in_progress = s->in_progress,
		.window_requests = s->window_requests,
		.window_errors = s->window_errors,
		.requests_per_second = s->requests_per_second,
		.errors_per_second = s->errors_per_second,
		.nodes = s->nodes,
	};
}

double xd_loads_rate(uint64_t n, const struct xd_load_view *v)
{
	/* over what the reports say they cover, else over the time they
	 * were taken in */
	uint64_t per = v->covered_ms > 0 ? v->covered_ms : v->span_ms;

	return per == 0 ? 0 : (double)n * 1000.0 / (double)per;
}

/* What a visit gathers over the entries, from nothing. */
static void regather(struct series *s)
{
	s->in_progress = s->window_requests = s->window_errors = 0;
	s->requests_per_second = s->errors_per_second = 0;
	s->nodes = 0;
}

void xd_loads_visit_series(struct xd_loads *l, uint64_t now_ms,
			   void (*fn)(void *arg,
				      const struct xd_load_series_view *v),
			   void *arg)
{
	struct xd_list *n;
	struct xd_load_series_view v;

	XD_ASSERT_LOOP();
	expire(l, now_ms);
	xd_list_for_each(n, &l->series)
		regather(xd_container_of(n, struct series, link));
	if (l->other != NULL)
		regather(l->other);
	xd_list_for_each(n, &l->by_made) {
		const struct entry *e = xd_container_of(n, struct entry, by_made);
		struct xd_load_view ev;

		view_of(l, e, now_ms, &ev);
		e->series->in_progress += e->in_progress;
		e->series->window_requests += ev.requests;
		e->series->window_errors += ev.errors;
		e->series->requests_per_second += xd_loads_rate(ev.requests, &ev);
		e->series->errors_per_second += xd_loads_rate(ev.errors, &ev);
		e->series->nodes++;
	}
	xd_list_for_each(n, &l->series) {
		series_view(xd_container_of(n, struct series, link), &v);
		fn(arg, &v);
	}
	if (l->other != NULL) {
		series_view(l->other, &v);
		fn(arg, &v);
	}
}

void xd_loads_stats(const struct xd_loads *l, struct xd_loads_stats *out)
{
	*out = (struct xd_loads_stats){
		.entries = l->nentries,
		.max_entries = l->o.max_entries,
		.series = l->nseries,
		.max_series = l->o.max_series,
		.window_ms = l->o.window_ms,
		.clusters = l->clusters,
		.localities = l->localities,
		.refused = l->refused,
		.folded = l->folded,
	};
}
