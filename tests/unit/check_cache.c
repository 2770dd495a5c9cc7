/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cache's two sets (cache.h): a staged candidate served to canary
 * watchers only, promoted to everyone or dropped, each change notifying
 * exactly the watchers whose served snapshot is another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "snapshot/snapshot.h"
#include "snapshot/table.h"
#include "util/common.h"
#include "xdtest.h"

/* A snapshot of `key` with one cluster holding `content`. */
static struct xd_snapshot *snap(const char *key, const char *content)
{
	struct xd_table *tables[XD_RTYPE_COUNT] = {0};
	struct xd_table_builder *b = xd_table_builder_new(XD_CLUSTER);
	const struct xd_entry *first;

	ck_assert_int_eq(xd_table_builder_add(b, "c", (const uint8_t *)content,
					      strlen(content), NULL, 0, NULL, 0,
					      "t.yaml", 1, &first),
			 0);
	tables[XD_CLUSTER] = xd_table_builder_finish(b);
	return xd_snapshot_new(key, tables);
}

/* A watcher counting its notifications. */
struct counted {
	struct xd_watch w;
	int told;
};

static void on_changed(struct xd_watch *w)
{
	xd_container_of(w, struct counted, w)->told++;
}

static void watch(struct xd_cache *c, struct counted *k, const char *key,
		  bool canary)
{
	memset(k, 0, sizeof(*k));
	k->w.changed = on_changed;
	k->w.canary = canary;
	xd_list_init(&k->w.link);
	xd_cache_watch(c, key, &k->w);
}

/* The content of the one cluster `key` is served (valid until the
 * next call). */
static const char *served(struct xd_cache *c, const char *key, bool canary)
{
	static char buf[64];
	struct xd_snapshot *s = xd_cache_get_for(c, key, canary);
	const struct xd_span *m;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(xd_table_count(xd_snapshot_table(s, XD_CLUSTER)), 1);
	m = &xd_table_at(xd_snapshot_table(s, XD_CLUSTER), 0)->msg;
	snprintf(buf, sizeof(buf), "%.*s", (int)m->len, (const char *)m->data);
	return buf;
}

/* Whether the last install() staging left the candidate set as it was. */
static bool staged_same;

static void install(struct xd_cache *c, bool stage, const char *dflt,
		    const char *web)
{
	struct xd_snapshot *v[2];
	size_t n = 0;

	if (dflt != NULL)
		v[n++] = snap("default", dflt);
	if (web != NULL)
		v[n++] = snap("web", web);
	if (stage)
		xd_cache_stage(c, v, n, &staged_same);
	else
		xd_cache_replace(c, v, n);
}

START_TEST(candidate_reaches_canaries_only)
{
	struct xd_cache *c = xd_cache_new();
	struct counted web, web_canary, other, other_canary;

	install(c, false, "d1", "w1");
	watch(c, &web, "web", false);
	watch(c, &web_canary, "web", true);
	watch(c, &other, "api", false); /* served the default */
	watch(c, &other_canary, "api", true);

	/* web changes: only web's canary hears of it */
	install(c, true, "d1", "w2");
	ck_assert(xd_cache_staged(c));
	ck_assert_str_eq(served(c, "web", true), "w2");
	ck_assert_str_eq(served(c, "web", false), "w1");
	ck_assert_str_eq(served(c, "api", true), "d1");
	ck_assert_int_eq(web_canary.told, 1);
	ck_assert_int_eq(web.told + other.told + other_canary.told, 0);
	/* the default's candidate is the stable snapshot itself */
	ck_assert_ptr_eq(xd_cache_get_for(c, "api", true),
			 xd_cache_get_for(c, "api", false));

	/* promoted: the others hear of it, the canary has it already */
	ck_assert_uint_eq(xd_cache_promote(c), 1);
	ck_assert(!xd_cache_staged(c));
	ck_assert_str_eq(served(c, "web", false), "w2");
	ck_assert_int_eq(web.told, 1);
	ck_assert_int_eq(web_canary.told, 1);
	ck_assert_int_eq(other.told + other_canary.told, 0);

	/* the watchers still watching are let go */
	xd_cache_free(c);
}
END_TEST

START_TEST(unstage_takes_canaries_back)
{
	struct xd_cache *c = xd_cache_new();
	struct counted web, web_canary, other_canary;
	struct xd_snapshot **cand;
	size_t n;

	install(c, false, "d1", "w1");
	watch(c, &web, "web", false);
	watch(c, &web_canary, "web", true);
	watch(c, &other_canary, "api", true);
	/* the default changes and web's own snapshot goes: web's canary
	 * falls back to the candidate default */
	install(c, true, "d2", NULL);
	ck_assert(!staged_same);
	ck_assert_str_eq(served(c, "web", true), "d2");
	ck_assert_str_eq(served(c, "api", true), "d2");
	ck_assert_int_eq(web_canary.told, 1);
	ck_assert_int_eq(other_canary.told, 1);
	ck_assert_int_eq(web.told, 0);
	cand = xd_cache_candidates(c, &n);
	ck_assert_uint_eq(n, 1);
	xd_snapshot_unref(cand[0]);
	free(cand);

	xd_cache_unstage(c);
	ck_assert_str_eq(served(c, "web", true), "w1");
	ck_assert_str_eq(served(c, "api", true), "d1");
	ck_assert_int_eq(web_canary.told, 2);
	ck_assert_int_eq(other_canary.told, 2);
	ck_assert_int_eq(web.told, 0);

	/* staging what is served already stages nothing, as before */
	install(c, true, "d1", "w1");
	ck_assert(!xd_cache_staged(c));
	ck_assert(staged_same);
	ck_assert_int_eq(web_canary.told, 2);

	/* the watchers still watching are let go */
	xd_cache_free(c);
}
END_TEST

START_TEST(restaging_keeps_what_did_not_change)
{
	struct xd_cache *c = xd_cache_new();
	struct counted web_canary, api_canary, web;

	install(c, false, "d1", "w1");
	watch(c, &web_canary, "web", true);
	watch(c, &api_canary, "api", true);
	watch(c, &web, "web", false);
	install(c, true, "d2", "w2");
	ck_assert(!staged_same);
	ck_assert_int_eq(web_canary.told, 1);
	ck_assert_int_eq(api_canary.told, 1);
	/* the same set again: the very candidates, said so */
	install(c, true, "d2", "w2");
	ck_assert(staged_same);
	ck_assert_int_eq(web_canary.told + api_canary.told, 2);
	/* a new set changing only the default again: web's canary keeps
	 * its candidate and hears nothing */
	install(c, true, "d3", "w2");
	ck_assert(!staged_same);
	ck_assert_int_eq(web_canary.told, 1);
	ck_assert_int_eq(api_canary.told, 2);
	ck_assert_str_eq(served(c, "api", true), "d3");
	/* replacing the stable set drops the candidate */
	install(c, false, "d4", "w1");
	ck_assert(!xd_cache_staged(c));
	ck_assert_str_eq(served(c, "web", true), "w1");
	ck_assert_int_eq(web_canary.told, 2);
	ck_assert_int_eq(web.told, 0);

	/* the watchers still watching are let go */
	xd_cache_free(c);
}
END_TEST

/* `n` keys k00000.. each with one cluster of content "<prefix><i>",
 * and the default, sorted by key. */
static struct xd_snapshot **many(size_t n, const char *dflt,
				 const char *prefix, size_t changed_at)
{
	struct xd_snapshot **v = calloc(n + 2, sizeof(*v));
	char key[32], content[64];
	size_t i;

	ck_assert_ptr_nonnull(v);
	v[0] = snap("default", dflt);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "k%05zu", i);
		snprintf(content, sizeof(content), "%s%zu",
			 i == changed_at ? prefix : "c", i);
		v[i + 1] = snap(key, content);
	}
	return v;
}

/*
 * Replacing a sorted set of many keys with one that changes, adds or
 * removes a key other than the default tells exactly the watchers of
 * that key, whatever the size of the set, and the set it leaves is the
 * one xd_cache_snapshots gives, sorted; the default changed tells every
 * watcher it serves.
 */
START_TEST(replace_tells_only_what_changed)
{
	struct xd_cache *c = xd_cache_new();
	struct counted k7, k8, api, web;
	struct xd_snapshot **v, **got;
	size_t n;

	v = many(1000, "d1", "c", 1000);
	ck_assert_uint_eq(xd_cache_replace(c, v, 1001), 1001);
	free(v);
	watch(c, &k7, "k00007", false);
	watch(c, &k8, "k00008", false);
	watch(c, &api, "api", false); /* served the default */
	watch(c, &web, "web", false); /* no snapshot yet: the default */

	/* k00007 changed; the others the same content, new copies */
	v = many(1000, "d1", "x", 7);
	ck_assert_uint_eq(xd_cache_replace(c, v, 1001), 1);
	free(v);
	ck_assert_int_eq(k7.told, 1);
	ck_assert_int_eq(k8.told, 0);
	ck_assert_int_eq(api.told, 0);
	ck_assert_str_eq(served(c, "k00007", false), "x7");

	/* "web" added (after every k), k00008 removed: its nodes get the
	 * default */
	v = many(1000, "d1", "x", 7);
	xd_snapshot_unref(v[9]);
	memmove(&v[9], &v[10], (1001 - 10) * sizeof(*v));
	v[1000] = snap("web", "w1");
	ck_assert_uint_eq(xd_cache_replace(c, v, 1001), 2);
	free(v);
	ck_assert_int_eq(k7.told, 1);
	ck_assert_int_eq(k8.told, 1);
	ck_assert_int_eq(web.told, 1);
	ck_assert_int_eq(api.told, 0);
	ck_assert_str_eq(served(c, "k00008", false), "d1");
	ck_assert_str_eq(served(c, "web", false), "w1");
	ck_assert_uint_eq(xd_cache_count(c), 1001);
	got = xd_cache_snapshots(c, &n);
	ck_assert_uint_eq(n, 1001);
	ck_assert_str_eq(xd_snapshot_key(got[0]), "default");
	ck_assert_str_eq(xd_snapshot_key(got[9]), "k00009");
	ck_assert_str_eq(xd_snapshot_key(got[1000]), "web");
	for (size_t i = 0; i < n; i++)
		xd_snapshot_unref(got[i]);
	free(got);

	/* the default changed: its nodes are told, the others not */
	v = many(1000, "d2", "x", 7);
	xd_snapshot_unref(v[9]);
	memmove(&v[9], &v[10], (1001 - 10) * sizeof(*v));
	v[1000] = snap("web", "w1");
	ck_assert_uint_eq(xd_cache_replace(c, v, 1001), 1);
	free(v);
	ck_assert_int_eq(api.told, 1);
	ck_assert_int_eq(k8.told, 2);
	ck_assert_int_eq(k7.told, 1);
	ck_assert_int_eq(web.told, 1);
	xd_cache_unwatch(&k7.w);
	xd_cache_unwatch(&k8.w);
	xd_cache_unwatch(&api.w);
	xd_cache_unwatch(&web.w);
	xd_cache_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("rollout");

	tcase_add_test(tc, candidate_reaches_canaries_only);
	tcase_add_test(tc, unstage_takes_canaries_back);
	tcase_add_test(tc, restaging_keeps_what_did_not_change);
	tcase_add_test(tc, replace_tells_only_what_changed);
	suite_add_tcase(s, tc);
	return xdtest_run(s);
}
