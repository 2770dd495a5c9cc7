/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Load reports (docs/protocol.md, rule M2): a LoadStatsRequest as the
 * service reads it (loads/report.c, written here with the wire writer
 * as protobuf writes it), and the store that keeps them
 * (loads/store.c): per cluster, locality and node over a window, in
 * series bounded for /metrics, entries bounded and aged out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loads/report.h"
#include "loads/store.h"
#include "util/buf.h"
#include "wire/wire.h"
#include "xds/message.h"
#include "xdtest.h"

/* ---------------- writing requests ---------------- */

static void put_str(struct xd_buf *b, uint32_t field, const char *s)
{
	xd_wire_bytes(b, field, s, strlen(s));
}

static void put_uint(struct xd_buf *b, uint32_t field, uint64_t v)
{
	xd_wire_tag(b, field, XD_WT_VARINT);
	xd_wire_varint(b, v);
}

/* An UpstreamLocalityStats of region `r`, zone `z`. */
static void put_locality(struct xd_buf *b, const char *r, const char *z,
			 uint64_t ok, uint64_t err, uint64_t in_progress)
{
	size_t m, loc;

	xd_wire_tag(b, XD_CLUSTER_STATS_LOCALITIES, XD_WT_LEN);
	m = xd_wire_open(b);
	xd_wire_tag(b, XD_LOCALITY_STATS_LOCALITY, XD_WT_LEN);
	loc = xd_wire_open(b);
	put_str(b, XD_LOCALITY_REGION, r);
	put_str(b, XD_LOCALITY_ZONE, z);
	xd_wire_close(b, loc);
	put_uint(b, XD_LOCALITY_STATS_SUCCEEDED, ok);
	put_uint(b, XD_LOCALITY_STATS_IN_PROGRESS, in_progress);
	put_uint(b, XD_LOCALITY_STATS_ERRORS, err);
	put_uint(b, XD_LOCALITY_STATS_ISSUED, ok + err);
	xd_wire_close(b, m);
}

/* A LoadStatsRequest: node "n1" and cluster "web" with two localities,
 * 2 s of load, 3 dropped. The locality fields come before the name, as
 * protobuf allows. */
static void request(struct xd_buf *b)
{
	size_t node, cs, dur;

	xd_wire_tag(b, XD_LRS_REQUEST_NODE, XD_WT_LEN);
	node = xd_wire_open(b);
	put_str(b, XD_NODE_ID, "n1");
	xd_wire_close(b, node);
	xd_wire_tag(b, XD_LRS_REQUEST_CLUSTER_STATS, XD_WT_LEN);
	cs = xd_wire_open(b);
	put_locality(b, "eu", "a", 10, 2, 5);
	put_locality(b, "us", "b", 7, 0, 1);
	put_str(b, XD_CLUSTER_STATS_NAME, "web");
	put_uint(b, XD_CLUSTER_STATS_DROPPED, 3);
	xd_wire_tag(b, XD_CLUSTER_STATS_INTERVAL, XD_WT_LEN);
	dur = xd_wire_open(b);
	put_uint(b, XD_DURATION_SECONDS, 2);
	xd_wire_close(b, dur);
	put_str(b, XD_CLUSTER_STATS_SERVICE_NAME, "web-eds");
	xd_wire_close(b, cs);
}

struct seen {
	char text[1024];
	size_t len;
};

static void on_cluster(void *arg, const struct xd_load_cluster *c)
{
	struct seen *s = arg;

	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len,
				   "cluster %.*s/%.*s dropped %llu per %llu ms;",
				   (int)c->name.len, c->name.data,
				   (int)c->service_name.len, c->service_name.data,
				   (unsigned long long)c->dropped,
				   (unsigned long long)c->interval_ms);
}

static void on_locality(void *arg, const struct xd_load_cluster *c,
			const struct xd_load_locality *l)
{
	struct seen *s = arg;

	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len,
				   " %.*s %.*s/%.*s ok %llu err %llu now %llu issued %llu;",
				   (int)c->name.len, c->name.data,
				   (int)l->region.len, l->region.data,
				   (int)l->zone.len, l->zone.data,
				   (unsigned long long)l->succeeded,
				   (unsigned long long)l->errors,
				   (unsigned long long)l->in_progress,
				   (unsigned long long)l->issued);
}

/* rule M2: a report is read whole, its cluster's own fields wherever
 * they stand, each locality with its counts. */
START_TEST(report_read_whole)
{
	struct xd_buf b = XD_BUF_INIT;
	struct seen s = {{0}, 0};
	struct xd_load_report_sink sink = {on_cluster, on_locality, &s};
	struct xd_span node;
	size_t nc, nl;
	char why[128];

	request(&b);
	ck_assert_int_eq(xd_load_report_read(b.data, b.len, &node, &sink, &nc,
					     &nl, why, sizeof(why)), 0);
	ck_assert_uint_eq(nc, 1);
	ck_assert_uint_eq(nl, 2);
	ck_assert_uint_eq(node.len, 4); /* {id: "n1"} */
	ck_assert_str_eq(s.text,
			 "cluster web/web-eds dropped 3 per 2000 ms;"
			 " web eu/a ok 10 err 2 now 5 issued 12;"
			 " web us/b ok 7 err 0 now 1 issued 7;");
	xd_buf_free(&b);
}
END_TEST

/* rule M2: bytes that are no LoadStatsRequest (a cut one, a field of
 * the wrong wire type) hand nothing on. */
START_TEST(report_malformed_hands_nothing_on)
{
	struct xd_buf b = XD_BUF_INIT;
	struct seen s = {{0}, 0};
	struct xd_load_report_sink sink = {on_cluster, on_locality, &s};
	struct xd_span node;
	size_t nc, nl;
	char why[128];
	static const uint8_t bad_type[] = {0x12, 0x02, 0x08, 0x01, /* a
		cluster whose name is a varint */ };

	request(&b);
	ck_assert_int_eq(xd_load_report_read(b.data, b.len - 3, &node, &sink,
					     &nc, &nl, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "LoadStatsRequest"));
	ck_assert_int_eq(xd_load_report_read(bad_type, sizeof(bad_type), &node,
					     &sink, &nc, &nl, why, sizeof(why)),
			 -1);
	ck_assert_uint_eq(s.len, 0);
	xd_buf_free(&b);
}
END_TEST

/* ---------------- the store ---------------- */

static struct xd_load_cluster cluster_of(const char *name, uint64_t dropped,
					 uint64_t interval_ms)
{
	return (struct xd_load_cluster){{name, strlen(name)}, {"", 0}, dropped,
					interval_ms};
}

static struct xd_load_locality locality_of(const char *zone, uint64_t ok,
					   uint64_t err, uint64_t now)
{
	return (struct xd_load_locality){
		.region = {"eu", 2}, .zone = {zone, strlen(zone)},
		.succeeded = ok, .errors = err, .in_progress = now};
}

static struct xd_name name_of(const char *s)
{
	return (struct xd_name){s, strlen(s)};
}

struct rows {
	char text[4096];
	size_t len, n;
};

static void row(void *arg, const struct xd_load_view *v)
{
	struct rows *r = arg;

	r->n++;
	r->len += (size_t)snprintf(r->text + r->len, sizeof(r->text) - r->len,
				   "%s %s %s%s: %llu/%llu now %llu total %llu drop %llu;",
				   v->cluster, v->zone, v->node, v->drops ? " drops" : "",
				   (unsigned long long)v->requests,
				   (unsigned long long)v->errors,
				   (unsigned long long)v->in_progress,
				   (unsigned long long)v->total_requests,
				   (unsigned long long)v->dropped);
}

static void series_row(void *arg, const struct xd_load_series_view *v)
{
	struct rows *r = arg;

	r->n++;
	r->len += (size_t)snprintf(r->text + r->len, sizeof(r->text) - r->len,
				   "%s@%s %llu/%llu now %llu nodes %zu;", v->cluster,
				   v->locality, (unsigned long long)v->requests,
				   (unsigned long long)v->errors,
				   (unsigned long long)v->in_progress, v->nodes);
}

/* rule M2: kept per cluster, locality and node; the window sums what
 * came within it, the totals everything; in flight is the last
 * report's; a cluster's drops stand apart from its localities. */
START_TEST(store_per_cluster_locality_node)
{
	struct xd_loads_opts o = {.window_ms = 12000, .max_entries = 100,
				  .max_series = 10};
	struct xd_loads *l = xd_loads_new(&o);
	struct xd_load_cluster web = cluster_of("web", 4, 1000);
	struct xd_load_locality a1 = locality_of("a", 10, 1, 3);
	struct xd_load_locality a2 = locality_of("a", 5, 0, 2);
	struct rows r = {{0}, 0, 0};

	xd_loads_add(l, name_of("n1"), &web, &a1, 1000, 1);
	xd_loads_add(l, name_of("n2"), &web, &a1, 1000, 1);
	xd_loads_add(l, name_of("n1"), &web, NULL, 1000, 1);
	xd_loads_add(l, name_of("n1"), &web, &a2, 2000, 2);
	xd_loads_visit(l, 2000, row, &r);
	ck_assert_str_eq(r.text,
			 "web a n1: 16/1 now 2 total 16 drop 0;"
			 "web a n2: 11/1 now 3 total 11 drop 0;"
			 "web  n1 drops: 0/0 now 0 total 0 drop 4;");
	/* a window later only n1's second report is in it (every slot
	 * of the first is old), and n2 is gone: nothing refreshed it */
	memset(&r, 0, sizeof(r));
	xd_loads_visit(l, 13500, row, &r);
	ck_assert_str_eq(r.text, "web a n1: 5/0 now 2 total 16 drop 0;");
	memset(&r, 0, sizeof(r));
	xd_loads_visit_series(l, 13500, series_row, &r);
	/* the series' totals stay: /metrics counters never go back */
	ck_assert_str_eq(r.text, "web@eu/a/ 27/2 now 2 nodes 1;web@ 0/0 now 0 nodes 0;");
	xd_loads_free(l);
}
END_TEST

/* rule M2: at most max_entries live, a report for one more is counted
 * and not kept; past max_series, pairs go to the one other series. */
START_TEST(store_bounded)
{
	struct xd_loads_opts o = {.window_ms = 60000, .max_entries = 3,
				  .max_series = 2};
	struct xd_loads *l = xd_loads_new(&o);
	struct xd_load_cluster web = cluster_of("web", 0, 1000);
	struct xd_loads_stats st;
	struct rows r = {{0}, 0, 0};
	const char *zones[] = {"a", "b", "c", "d"};

	for (size_t i = 0; i < 4; i++) {
		struct xd_load_locality loc = locality_of(zones[i], 1, 0, 0);

		xd_loads_add(l, name_of("n1"), &web, &loc, 1000, 1);
	}
	xd_loads_stats(l, &st);
	ck_assert_uint_eq(st.entries, 3);
	ck_assert_uint_eq(st.refused, 1);
	ck_assert_uint_eq(st.series, 2);
	ck_assert_uint_eq(st.folded, 1);
	xd_loads_visit_series(l, 1000, series_row, &r);
	ck_assert_str_eq(r.text, "web@eu/a/ 1/0 now 0 nodes 1;web@eu/b/ 1/0 now 0 nodes 1;"
				 "_other@_other 1/0 now 0 nodes 1;");
	xd_loads_free(l);
}
END_TEST

/* A walk in batches across turns (the /loads page) visits each entry
 * once, in the order they were made, those made meanwhile too, and
 * leaves out those gone meanwhile. */
START_TEST(store_walk_in_batches)
{
	struct xd_loads_opts o = {.window_ms = 60000, .max_entries = 100,
				  .max_series = 100};
	struct xd_loads *l = xd_loads_new(&o);
	struct xd_load_cluster web = cluster_of("web", 0, 1000);
	struct xd_load_cluster late = cluster_of("late", 0, 1000);
	struct xd_load_locality loc = locality_of("a", 1, 0, 0);
	struct rows r = {{0}, 0, 0};
	uint64_t after = 0, last;
	int turns = 0;
	char node[8];

	for (int i = 0; i < 5; i++) {
		snprintf(node, sizeof(node), "n%d", i);
		/* n0 reports first: a window later it is the one gone */
		xd_loads_add(l, name_of(node), &web, &loc, i == 0 ? 1000 : 30000, 1);
	}
	while ((last = xd_loads_visit_from(l, 30000, after, 2, row, &r)) != 0) {
		after = last;
		if (++turns == 1) {
			/* between two turns: one comes, one goes */
			xd_loads_add(l, name_of("n9"), &late, &loc, 61500, 1);
			ck_assert_uint_eq(r.n, 2);
		}
	}
	ck_assert_uint_eq(r.n, 6);
	ck_assert_ptr_nonnull(strstr(r.text, "web a n0: 1/0"));
	ck_assert_ptr_nonnull(strstr(r.text, "web a n4: 1/0"));
	ck_assert_ptr_nonnull(strstr(r.text, "late a n9: 1/0"));
	memset(&r, 0, sizeof(r));
	xd_loads_visit(l, 61500, row, &r);
	ck_assert_msg(strstr(r.text, "n0:") == NULL && r.n == 5, "%s", r.text);
	xd_loads_free(l);
}
END_TEST

/* rule M2: what a client names is kept as text every page can show:
 * no byte that is not UTF-8 (it reaches /metrics), no control
 * character, no NUL cutting it short; the same bytes again are the same
 * entry. */
START_TEST(store_names_made_text)
{
	struct xd_loads_opts o = {.window_ms = 60000, .max_entries = 100,
				  .max_series = 100};
	struct xd_loads *l = xd_loads_new(&o);
	static const char raw[] = "we\xff" "b\n\0" "x";
	struct xd_load_cluster c = {{raw, sizeof(raw) - 1}, {"", 0}, 0, 1000};
	struct xd_load_locality loc = locality_of("a", 1, 0, 0);
	struct rows r = {{0}, 0, 0};

	xd_loads_add(l, name_of("n1"), &c, &loc, 1000, 1);
	xd_loads_add(l, name_of("n1"), &c, &loc, 1000, 1);
	xd_loads_visit(l, 1000, row, &r);
	ck_assert_str_eq(r.text, "we\xef\xbf\xbd" "b??x a n1: 2/0 now 0 total 2 drop 0;");
	xd_loads_free(l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loads");
	TCase *tc = tcase_create("loads");

	tcase_add_test(tc, report_read_whole);
	tcase_add_test(tc, report_malformed_hands_nothing_on);
	tcase_add_test(tc, store_per_cluster_locality_node);
	tcase_add_test(tc, store_bounded);
	tcase_add_test(tc, store_walk_in_batches);
	tcase_add_test(tc, store_names_made_text);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
