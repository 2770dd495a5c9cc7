/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The record of REST-JSON pollers (rest/pollers.c): one entry per node
 * and key, the types asked while fresh, freshness at rest_poll_timeout
 * + 30 s, and the bound, whose least recently seen entry goes first and
 * is counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rest/pollers.h"
#include "xdtest.h"

#define TIMEOUT_MS 30000
#define FRESH_MS (TIMEOUT_MS + XD_REST_POLLERS_GRACE_MS)

struct seen {
	size_t n;
	char node[64], key[64], peer[64];
	unsigned types;
	bool has_n0; /* node "n0" among them */
};

static void count(void *ctx, const struct xd_rest_poller *p)
{
	struct seen *s = ctx;

	s->n++;
	snprintf(s->node, sizeof(s->node), "%s", p->node_id);
	snprintf(s->key, sizeof(s->key), "%s", p->key);
	snprintf(s->peer, sizeof(s->peer), "%s", p->peer);
	s->types = p->types;
	if (strcmp(p->node_id, "n0") == 0)
		s->has_n0 = true;
}

/* The longest node id kept, into *(size_t *)ctx. */
static void keep_len(void *ctx, const struct xd_rest_poller *p)
{
	size_t *n = ctx;

	if (strlen(p->node_id) > *n)
		*n = strlen(p->node_id);
}

static struct seen visit(const struct xd_rest_pollers *ps, uint64_t now)
{
	struct seen s = {0};

	xd_rest_pollers_visit(ps, now, count, &s);
	return s;
}

START_TEST(pollers_one_entry_per_node_and_key)
{
	struct xd_rest_pollers *ps = xd_rest_pollers_new(TIMEOUT_MS);
	struct seen s;

	xd_rest_pollers_seen(ps, "n1", "web", "ipv4:10.0.0.1:1", XD_CLUSTER,
			     false, 1000, 5000);
	xd_rest_pollers_seen(ps, "n1", "web", "ipv4:10.0.0.1:2", XD_LISTENER,
			     false, 2000, 6000);
	s = visit(ps, 2000);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.peer, "ipv4:10.0.0.1:2");
	ck_assert_uint_eq(s.types, (1u << XD_CLUSTER) | (1u << XD_LISTENER));
	/* another key of the same node is another entry */
	xd_rest_pollers_seen(ps, "n1", "api", "ipv4:10.0.0.1:3", XD_CLUSTER,
			     false, 2000, 6000);
	ck_assert_uint_eq(visit(ps, 2000).n, 2);
	/* fresh until rest_poll_timeout + 30 s after it was last seen */
	ck_assert_uint_eq(visit(ps, 2000 + FRESH_MS).n, 2);
	ck_assert_uint_eq(visit(ps, 2001 + FRESH_MS).n, 0);
	/* a stale entry seen again starts its types over */
	xd_rest_pollers_seen(ps, "n1", "web", "ipv4:10.0.0.1:4", XD_ENDPOINT,
			     false, 3000 + FRESH_MS, 9000);
	s = visit(ps, 3000 + FRESH_MS);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.types, 1u << XD_ENDPOINT);
	ck_assert_uint_eq(xd_rest_pollers_dropped(ps), 0);
	xd_rest_pollers_free(ps);
}
END_TEST

START_TEST(pollers_bound_drops_least_recently_seen)
{
	struct xd_rest_pollers *ps = xd_rest_pollers_new(TIMEOUT_MS);
	char id[32];
	struct seen s;

	for (int i = 0; i < XD_REST_POLLERS_MAX; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		xd_rest_pollers_seen(ps, id, "k", "ipv4:10.0.0.1:1", XD_CLUSTER,
				     false, 50000 + (uint64_t)i, 0);
	}
	/* n0, the oldest, is seen again: n1 is now the least recent */
	xd_rest_pollers_seen(ps, "n0", "k", "ipv4:10.0.0.1:1", XD_CLUSTER,
			     false, 60000, 0);
	ck_assert_uint_eq(xd_rest_pollers_dropped(ps), 0);
	xd_rest_pollers_seen(ps, "new", "k", "ipv4:10.0.0.1:1", XD_CLUSTER,
			     false, 60001, 0);
	ck_assert_uint_eq(xd_rest_pollers_dropped(ps), 1);
	s = visit(ps, 60001);
	ck_assert_uint_eq(s.n, XD_REST_POLLERS_MAX);
	ck_assert(s.has_n0);
	/* n1 was dropped: seen again, it takes another's place */
	xd_rest_pollers_seen(ps, "n1", "k", "ipv4:10.0.0.1:1", XD_CLUSTER,
			     false, 60002, 0);
	ck_assert_uint_eq(xd_rest_pollers_dropped(ps), 2);
	ck_assert_uint_eq(visit(ps, 60002).n, XD_REST_POLLERS_MAX);
	xd_rest_pollers_free(ps);
}
END_TEST

/* A node id longer than an entry keeps is known by its first bytes:
 * 4096 ids of max_request_size are not kept whole. */
START_TEST(pollers_keep_a_bounded_node_id)
{
	struct xd_rest_pollers *ps = xd_rest_pollers_new(TIMEOUT_MS);
	size_t big = 1u << 20;
	char *a = malloc(big + 1), *b = malloc(big + 1);
	size_t kept = 0;

	memset(a, 'a', big);
	a[big] = '\0';
	memcpy(b, a, big + 1);
	b[big - 1] = 'b'; /* differs past what is kept */
	xd_rest_pollers_seen(ps, a, "k", "ipv4:10.0.0.1:1", XD_CLUSTER,
			     false, 1000, 0);
	xd_rest_pollers_seen(ps, b, "k", "ipv4:10.0.0.1:1", XD_LISTENER,
			     false, 1001, 0);
	xd_rest_pollers_visit(ps, 1001, keep_len, &kept);
	ck_assert_uint_eq(kept, XD_REST_POLLERS_ID_MAX);
	ck_assert_uint_eq(visit(ps, 1001).n, 1);
	/* an id as long as what is kept is not the same as a longer one */
	a[XD_REST_POLLERS_ID_MAX - 1] = '\0';
	xd_rest_pollers_seen(ps, a, "k", "ipv4:10.0.0.1:1", XD_CLUSTER,
			     false, 1002, 0);
	ck_assert_uint_eq(visit(ps, 1002).n, 2);
	free(a);
	free(b);
	xd_rest_pollers_free(ps);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pollers");
	TCase *tc = tcase_create("pollers");

	tcase_add_test(tc, pollers_one_entry_per_node_and_key);
	tcase_add_test(tc, pollers_bound_drops_least_recently_seen);
	tcase_add_test(tc, pollers_keep_a_bounded_node_id);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
