/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The aggregated methods (rules A1 and A2 of docs/protocol.md)
 * against the real xdsd over gRPC on loopback, SotW and delta alike:
 * every type on one stream, make-before-break as issue #4 words it (a
 * simulated Envoy that must never hold a route to a cluster it lacks),
 * and that a push to many clients encodes no more than to one (issue #4
 * item 4).
 */
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto_util.h"
#include "suites.h"
#include "xdtest.h"

/* The two aggregated methods. */
static const struct pu_combo ads_combos[] = {
	{"ADS", false, true, PU_CDS},
	{"delta ADS", true, true, PU_CDS},
};

static void ack_free(struct pu_client *cl, struct pu_resp *r)
{
	pu_ack(cl, r);
	pu_resp_free(r);
}

/* ---------------- rule A1 ---------------- */

/* Checks one response of the rule A1 test: its type, its one resource. */
static void check_a(const struct pu_resp *r, struct pu_strs *nonces)
{
	enum pu_type t = (enum pu_type)r->type;

	PU_ASSERT(r->type >= 0, "type '%s'", r->type_url);
	PU_ASSERT(r->nres == 1 && r->res[0].has_body &&
			  strcmp(r->res[0].name, pu_name(t, "a")) == 0 &&
			  strcmp(r->res[0].url, pu_type_url(t)) == 0,
		  "%s response: [%s]", pu_type_label(t), pu_names(r));
	PU_ASSERT(!pu_strs_has(nonces, r->nonce), "nonce '%s' reused", r->nonce);
	pu_strs_add(nonces, r->nonce);
}

/*
 * rule A1: one stream carries every type, each with its own responses (its
 * type_url, only its resources, its nonces). A reload that changes
 * every type is sent in the order of rule A2 (SDS, RTDS, CDS, EDS, LEDS,
 * ECDS, LDS, RDS, SRDS, VHDS), a later type held while an earlier one's
 * response is unanswered, but for endpoints and locality endpoints,
 * which go while clusters are.
 */
START_TEST(a1_every_type_on_one_stream)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_strs nonces = {0};
	bool seen[PU_NTYPES] = {false}, on[PU_NTYPES];
	int ntypes = 0, last = -1;

	/* the types of the stream: SotW has no VHDS, no LEDS */
	for (int t = 0; t < PU_NTYPES; t++) {
		on[t] = c->delta || pu_has_sotw((enum pu_type)t);
		ntypes += on[t];
		if (on[t])
			last = t;
	}
	for (int t = 0; t < PU_NTYPES; t++)
		if (on[t])
			pu_snap_put(s, (enum pu_type)t, pu_name((enum pu_type)t, "a"), 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	/* every subscription at once, later types first: each is answered
	 * (in whatever order the requests arrived), once */
	for (int t = PU_NTYPES - 1; t >= 0; t--)
		if (on[t])
			pu_sub(cl, (enum pu_type)t, pu_name((enum pu_type)t, "a"), NULL);
	for (int k = 0; k < ntypes; k++) {
		struct pu_resp *r = pu_recv(cl, pu_wait_ms());

		PU_ASSERT(r != NULL, "%d of %d types answered", k, ntypes);
		check_a(r, &nonces);
		PU_ASSERT(!seen[r->type], "%s answered twice",
			  pu_type_label((enum pu_type)r->type));
		seen[r->type] = true;
		ack_free(cl, r);
	}
	pu_expect_none(cl, 0);

	for (int t = 0; t < PU_NTYPES; t++)
		if (on[t])
			pu_snap_put(s, (enum pu_type)t, pu_name((enum pu_type)t, "a"), 2, NULL);
	pu_env_set(e, s);
	for (int t = 0; t < PU_NTYPES; t++) {
		struct pu_resp *r, *warm[2] = {NULL, NULL};

		if (!on[t])
			continue;
		r = pu_expect(cl, (enum pu_type)t);
		check_a(r, &nonces);
		/* endpoints and locality endpoints go while clusters are
		 * unanswered (a client warms the clusters until they come) */
		if (t == PU_CDS) {
			warm[0] = pu_expect(cl, PU_EDS);
			check_a(warm[0], &nonces);
			t = PU_EDS;
			if (on[PU_LEDS]) {
				warm[1] = pu_expect(cl, PU_LEDS);
				check_a(warm[1], &nonces);
				t = PU_LEDS;
			}
		}
		/* the next type waits for this answer */
		if (t < last)
			pu_expect_none(cl, 0);
		for (int w = 0; w < 2; w++)
			if (warm[w] != NULL)
				ack_free(cl, warm[w]);
		ack_free(cl, r);
	}
	pu_expect_none(cl, 0);
	pu_strs_clear(&nonces);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule A1: subscribing to one type does not subscribe to others, and a
 * change of one type disturbs no other on the stream. */
START_TEST(a1_types_do_not_leak)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;

	pu_snap_put(s, PU_CDS, "a", 1, NULL);
	pu_snap_put(s, PU_LDS, "a", 1, NULL);
	pu_snap_put(s, PU_SDS, "a", 1, NULL);
	e = pu_env_start(s);
	cl = pu_connect(e, c);
	pu_sub(cl, PU_LDS, NULL); /* wildcard LDS only */
	r = pu_expect(cl, PU_LDS);
	PU_ASSERT(strcmp(pu_names(r), "a") == 0, "LDS [%s]", pu_names(r));
	ack_free(cl, r);
	pu_snap_put(s, PU_CDS, "b", 1, NULL);
	pu_snap_put(s, PU_SDS, "a", 2, NULL);
	pu_env_set(e, s);
	pu_expect_none(cl, 0);
	pu_snap_put(s, PU_LDS, "a", 2, NULL);
	pu_env_set(e, s);
	ack_free(cl, pu_expect(cl, PU_LDS));
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- rule A2: a simulated Envoy ---------------- */

/* name -> value (or NULL) */
struct map {
	struct pu_strs keys;
	char *vals[64];
};

static size_t map_slot(struct map *m, const char *k)
{
	size_t i;

	for (i = 0; i < m->keys.n; i++)
		if (strcmp(m->keys.v[i], k) == 0)
			return i;
	ck_assert(m->keys.n < 64);
	pu_strs_add(&m->keys, k);
	m->vals[i] = NULL;
	return i;
}

static void map_put(struct map *m, const char *k, char *v)
{
	size_t i = map_slot(m, k);

	free(m->vals[i]);
	m->vals[i] = v;
}

static const char *map_get(const struct map *m, const char *k)
{
	for (size_t i = 0; i < m->keys.n; i++)
		if (strcmp(m->keys.v[i], k) == 0)
			return m->vals[i] ? m->vals[i] : "";
	return NULL;
}

static void map_del(struct map *m, const char *k)
{
	for (size_t i = 0; i < m->keys.n; i++) {
		if (strcmp(m->keys.v[i], k) == 0) {
			size_t last = m->keys.n - 1;

			free(m->vals[i]);
			m->vals[i] = m->vals[last];
			pu_strs_del(&m->keys, k); /* moves the last key to i */
			return;
		}
	}
}

static void map_clear(struct map *m)
{
	for (size_t i = 0; i < m->keys.n; i++)
		free(m->vals[i]);
	pu_strs_clear(&m->keys);
}

struct envoy {
	struct pu_client *cl;
	bool delta, ack_first;
	/* warm: as Envoy once initialized, CDS is answered only when every
	 * cluster it holds has its endpoints (its clusters warmed); the
	 * response waits unanswered in cds_unanswered until then */
	bool warm;
	struct pu_resp *cds_unanswered;
	struct map clusters;  /* cluster -> EDS service ("" for static) */
	struct map endpoints; /* service -> "" */
	struct map listeners; /* listener -> route configuration */
	struct map routes;    /* route configuration -> "c1,c2" */
	struct pu_strs eds_sub, rds_sub;
	int messages;
	char last[512];       /* the last message, for failure reports */
};

static void collect_cluster(const uint8_t *v, size_t n, void *arg)
{
	struct pu_strs *s = arg;
	char *x = strndup((const char *)v, n);

	pu_strs_add(s, x);
	free(x);
}

/* What a resource refers to, read from its bytes. */
static char *refs_of(enum pu_type t, const struct pu_res *x)
{
	static const int cds_eds[] = {3, 2};               /* eds_cluster_config.service_name */
	static const int lds_rds[] = {3, 3, 4, 2, 3, 2};   /* filter_chains.filters.typed_config.value.rds.route_config_name */
	static const int rds_cluster[] = {2, 3, 2, 1};     /* virtual_hosts.routes.route.cluster */
	struct pu_strs s = {0};
	char *out;

	switch (t) {
	case PU_CDS:
		out = pu_pb_string(x->body, x->len, cds_eds, 2);
		return out != NULL ? out : strdup("");
	case PU_LDS:
		out = pu_pb_string(x->body, x->len, lds_rds, 6);
		return out != NULL ? out : strdup("");
	case PU_RDS:
		pu_pb_walk(x->body, x->len, rds_cluster, 4, collect_cluster, &s);
		out = pu_strs_join(&s);
		pu_strs_clear(&s);
		return out;
	default:
		return strdup("");
	}
}

/* Applies a response: SotW LDS/CDS replace, others add; delta adds and
 * removes. */
static void apply(struct map *m, const struct pu_resp *r, bool replace)
{
	if (replace)
		map_clear(m);
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].has_body)
			map_put(m, r->res[i].name, refs_of((enum pu_type)r->type, &r->res[i]));
	for (size_t i = 0; i < r->nremoved; i++)
		map_del(m, r->removed[i]);
}

/* The client's subscription of `t` becomes `want` (it sends the change). */
static void resubscribe(struct envoy *ev, enum pu_type t, struct pu_strs *cur,
			const struct pu_strs *want, struct map *held)
{
	struct pu_strs add = {0}, drop = {0};

	for (size_t i = 0; i < want->n; i++)
		if (!pu_strs_has(cur, want->v[i]))
			pu_strs_add(&add, want->v[i]);
	for (size_t i = 0; i < cur->n; i++)
		if (!pu_strs_has(want, cur->v[i]))
			pu_strs_add(&drop, cur->v[i]);
	if (add.n == 0 && drop.n == 0)
		return;
	if (!ev->delta) {
		pu_subv(ev->cl, t, (const char *const *)want->v, want->n);
	} else {
		struct pu_req q = {.type = t,
				   .names = (const char *const *)add.v, .nnames = add.n,
				   .unsub = (const char *const *)drop.v, .nunsub = drop.n};

		pu_send(ev->cl, &q);
	}
	/* what it no longer asks for, it forgets */
	for (size_t i = 0; i < drop.n; i++)
		map_del(held, drop.v[i]);
	pu_strs_clear(cur);
	for (size_t i = 0; i < want->n; i++)
		pu_strs_add(cur, want->v[i]);
	pu_strs_clear(&add);
	pu_strs_clear(&drop);
}

static void envoy_follow(struct envoy *ev, enum pu_type t)
{
	struct pu_strs want = {0};

	if (t == PU_CDS) {
		for (size_t i = 0; i < ev->clusters.keys.n; i++)
			if (ev->clusters.vals[i] != NULL && ev->clusters.vals[i][0] != '\0')
				pu_strs_add(&want, ev->clusters.vals[i]);
		resubscribe(ev, PU_EDS, &ev->eds_sub, &want, &ev->endpoints);
	} else {
		for (size_t i = 0; i < ev->listeners.keys.n; i++)
			if (ev->listeners.vals[i] != NULL && ev->listeners.vals[i][0] != '\0')
				pu_strs_add(&want, ev->listeners.vals[i]);
		resubscribe(ev, PU_RDS, &ev->rds_sub, &want, &ev->routes);
	}
	pu_strs_clear(&want);
}

/*
 * The invariant of issue #4: every route the client holds points only
 * to clusters it holds, and (EDS before RDS) each of those clusters'
 * endpoints are there too.
 */
static void check_invariant(struct envoy *ev)
{
	for (size_t i = 0; i < ev->routes.keys.n; i++) {
		char *list = strdup(ev->routes.vals[i] ? ev->routes.vals[i] : "");

		for (char *save = NULL, *cl = strtok_r(list, ",", &save); cl != NULL;
		     cl = strtok_r(NULL, ",", &save)) {
			const char *svc = map_get(&ev->clusters, cl);

			PU_ASSERT(svc != NULL,
				  "after message %d (%s): route '%s' points to cluster '%s', which the client lacks",
				  ev->messages, ev->last, ev->routes.keys.v[i], cl);
			PU_ASSERT(svc[0] == '\0' || map_get(&ev->endpoints, svc) != NULL,
				  "after message %d (%s): route '%s' points to cluster '%s' whose endpoints '%s' it lacks",
				  ev->messages, ev->last, ev->routes.keys.v[i], cl, svc);
		}
		free(list);
	}
}

/* Every cluster the client holds has its endpoints. */
static bool clusters_warm(const struct envoy *ev)
{
	for (size_t i = 0; i < ev->clusters.keys.n; i++) {
		const char *svc = ev->clusters.vals[i];

		if (svc != NULL && svc[0] != '\0' && map_get(&ev->endpoints, svc) == NULL)
			return false;
	}
	return true;
}

/* Receives, applies, answers one message; false on timeout. */
static bool envoy_step(struct envoy *ev, int timeout_ms)
{
	struct pu_resp *r = pu_recv(ev->cl, timeout_ms);
	enum pu_type t;
	char *names, *removed;

	if (r == NULL)
		return false;
	PU_ASSERT(r->type == PU_CDS || r->type == PU_EDS || r->type == PU_LDS ||
			  r->type == PU_RDS,
		  "unexpected type '%s'", r->type_url);
	t = (enum pu_type)r->type;
	ev->messages++;
	names = pu_names(r);
	removed = pu_removed(r);
	snprintf(ev->last, sizeof(ev->last), "%s [%s] removed [%s]",
		 pu_type_label(t), names, removed);
	free(names);
	free(removed);
	switch (t) {
	case PU_CDS:
		apply(&ev->clusters, r, !ev->delta);
		break;
	case PU_EDS:
		apply(&ev->endpoints, r, false);
		break;
	case PU_LDS:
		apply(&ev->listeners, r, !ev->delta);
		break;
	default:
		apply(&ev->routes, r, false);
		break;
	}
	check_invariant(ev);
	/* Envoy asks for what the new clusters/listeners need, and ACKs */
	if (t == PU_CDS || t == PU_LDS) {
		if (ev->ack_first)
			pu_ack(ev->cl, r);
		envoy_follow(ev, t);
		if (t == PU_CDS && ev->warm && !clusters_warm(ev)) {
			/* a later CDS supersedes one still unanswered */
			pu_resp_free(ev->cds_unanswered);
			ev->cds_unanswered = r;
			r = NULL;
		} else if (!ev->ack_first) {
			pu_ack(ev->cl, r);
		}
	} else {
		pu_ack(ev->cl, r);
	}
	if (ev->cds_unanswered != NULL && clusters_warm(ev)) {
		pu_ack(ev->cl, ev->cds_unanswered);
		pu_resp_free(ev->cds_unanswered);
		ev->cds_unanswered = NULL;
	}
	check_invariant(ev);
	pu_resp_free(r);
	return true;
}

static char *describe(const struct envoy *ev)
{
	char *c = pu_strs_join(&ev->clusters.keys), *e = pu_strs_join(&ev->endpoints.keys);
	char *l = pu_strs_join(&ev->listeners.keys), *out;
	struct pu_strs routes = {0};
	char *r;

	for (size_t i = 0; i < ev->routes.keys.n; i++) {
		char *x;

		ck_assert(asprintf(&x, "%s->%s", ev->routes.keys.v[i],
				   ev->routes.vals[i] ? ev->routes.vals[i] : "") > 0);
		pu_strs_add(&routes, x);
		free(x);
	}
	r = pu_strs_join(&routes);
	ck_assert(asprintf(&out, "clusters [%s] endpoints [%s] listeners [%s] routes [%s]",
			   c, e, l, r) > 0);
	free(c);
	free(e);
	free(l);
	free(r);
	pu_strs_clear(&routes);
	return out;
}

/* Runs the client until it holds exactly `want` (describe() form) and
 * nothing more comes. */
static void envoy_run_until(struct envoy *ev, const char *want)
{
	long long deadline = xdtest_now_ms() + pu_wait_ms();

	for (;;) {
		char *now = describe(ev);
		bool done = strcmp(now, want) == 0;

		if (done && !envoy_step(ev, pu_quiet_ms())) {
			free(now);
			return;
		}
		PU_ASSERT(xdtest_now_ms() < deadline,
			  "the client holds %s, expected %s", now, want);
		free(now);
		if (!done)
			envoy_step(ev, 200);
	}
}

/*
 * rule A2 for scoped routes, over delta ADS: a reload moves scope "s1"
 * from route configuration "r1" to a new "r2" and drops "r1". The scope
 * goes first; "r1" is not said removed while the scope that names it is
 * not settled, for a scope left naming a route configuration the
 * client lacks answers 404 (as a real Envoy did). The client, as Envoy,
 * then asks for "r2" and drops "r1" itself, before it answers the
 * scopes.
 */
START_TEST(a2_scoped_route_moves)
{
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl;
	struct pu_resp *r;
	char *removed;
	struct pu_req q = {.type = PU_RDS};
	const char *add[] = {"r2"}, *drop[] = {"r1"};

	pu_snap_put(s, PU_SRDS, "s1", 1, "r1");
	pu_snap_put(s, PU_RDS, "r1", 1, NULL);
	e = pu_env_start(s);
	cl = pu_open(e, true, true, PU_SRDS);
	pu_sub(cl, PU_SRDS, NULL);
	ack_free(cl, pu_expect(cl, PU_SRDS));
	pu_sub(cl, PU_RDS, "r1", NULL);
	ack_free(cl, pu_expect(cl, PU_RDS));

	pu_snap_put(s, PU_SRDS, "s1", 2, "r2");
	pu_snap_del(s, PU_RDS, "r1");
	pu_snap_put(s, PU_RDS, "r2", 1, NULL);
	pu_env_set(e, s);
	r = pu_recv(cl, pu_wait_ms());
	PU_ASSERT(r != NULL, "nothing after the reload");
	removed = pu_removed(r);
	PU_ASSERT(r->type == PU_SRDS, "%s first (removed [%s]), not the scoped routes",
		  pu_type_label((enum pu_type)r->type), removed);
	free(removed);
	/* as Envoy: the route configurations the scopes name now, before
	 * the scopes' ACK */
	q.names = add;
	q.nnames = 1;
	q.unsub = drop;
	q.nunsub = 1;
	pu_send(cl, &q);
	ack_free(cl, r);
	r = pu_expect(cl, PU_RDS);
	PU_ASSERT_NAMES(r, PU_RDS, "r2");
	PU_ASSERT(r->nremoved == 0, "removed [%s], which the client dropped itself",
		  pu_removed(r));
	ack_free(cl, r);
	pu_expect_none(cl, 0);
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

static const struct {
	const char *label;
	bool delta, ack_first, warm;
} a2_variants[] = {
	{"ADS, EDS request before the CDS ACK", false, false, false},
	{"ADS, CDS ACK before the EDS request", false, true, false},
	{"delta ADS, EDS request before the CDS ACK", true, false, false},
	{"delta ADS, CDS ACK before the EDS request", true, true, false},
	{"ADS, CDS ACK once the clusters' endpoints came", false, false, true},
	{"delta ADS, CDS ACK once the clusters' endpoints came", true, false, true},
};
#define A2_VARIANTS (int)(sizeof(a2_variants) / sizeof(a2_variants[0]))
static struct pu_combo a2_combos[A2_VARIANTS];

/*
 * rule A2 (issue #4): a reload moves route R from cluster X to a new cluster
 * Y and removes X, and adds listener "L2" -> route "R2" -> new cluster "Z". A
 * simulated Envoy (wildcard CDS and LDS, EDS and RDS by name) applies
 * each message and checks after every one that no route points to a
 * cluster (or endpoints) it lacks; X goes only in a last CDS after the
 * route moved. The client answers CDS before or after asking for the new
 * clusters' endpoints, or, as Envoy does once initialized, only when
 * those endpoints came (the server must send them before the CDS ACK).
 */
START_TEST(a2_make_before_break)
{
	const struct pu_combo *c = pu_combo(_i);
	int v = (int)(c - a2_combos);
	struct envoy ev = {.delta = a2_variants[v].delta,
			   .ack_first = a2_variants[v].ack_first,
			   .warm = a2_variants[v].warm};
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;

	pu_snap_put(s, PU_CDS, "X", 1, "X");
	pu_snap_put(s, PU_EDS, "X", 1, NULL);
	pu_snap_put(s, PU_CDS, "keep", 1, NULL);
	pu_snap_put(s, PU_LDS, "L", 1, "R");
	pu_snap_put(s, PU_RDS, "R", 1, "X");
	e = pu_env_start(s);
	ev.cl = pu_open(e, ev.delta, true, PU_CDS);
	pu_sub(ev.cl, PU_CDS, NULL);
	pu_sub(ev.cl, PU_LDS, NULL);
	envoy_run_until(&ev, "clusters [X,keep] endpoints [X] listeners [L] routes [R->X]");

	pu_snap_del(s, PU_CDS, "X");
	pu_snap_del(s, PU_EDS, "X");
	pu_snap_put(s, PU_CDS, "Y", 1, "Y");
	pu_snap_put(s, PU_EDS, "Y", 1, NULL);
	pu_snap_put(s, PU_CDS, "Z", 1, "Z");
	pu_snap_put(s, PU_EDS, "Z", 1, NULL);
	pu_snap_put(s, PU_RDS, "R", 2, "Y");
	pu_snap_put(s, PU_LDS, "L2", 1, "R2");
	pu_snap_put(s, PU_RDS, "R2", 1, "Z");
	pu_env_set(e, s);
	envoy_run_until(&ev, "clusters [Y,Z,keep] endpoints [Y,Z] listeners [L,L2] routes [R->Y,R2->Z]");
	pu_client_free(ev.cl);
	pu_resp_free(ev.cds_unanswered);
	map_clear(&ev.clusters);
	map_clear(&ev.endpoints);
	map_clear(&ev.listeners);
	map_clear(&ev.routes);
	pu_strs_clear(&ev.eds_sub);
	pu_strs_clear(&ev.rds_sub);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule A2, with clusters subscribed by name, as gRPC's xDS clients do: a
 * route moves from cluster X to a new cluster Y and X goes. The client
 * asks for Y only once it has the route, for Y's endpoints once it has
 * Y, and goes on using X until both came (grpc-go fails calls when X
 * goes first, grpc-java a call already bound to X). So X is not removed
 * by a response to the names it asked before, nor by the answer to the
 * request that adds Y, which carries Y beside X. Up to there, on a
 * stream of `c` that *e serves from `s`; returns the client, which has
 * ACKed that answer.
 */
static struct pu_client *named_move(const struct pu_combo *c,
				    struct pu_snap *s, struct pu_env **e)
{
	struct pu_client *cl;
	struct pu_resp *r;

	pu_snap_put(s, PU_CDS, "X", 1, "X");
	pu_snap_put(s, PU_EDS, "X", 1, NULL);
	pu_snap_put(s, PU_LDS, "L", 1, "R");
	pu_snap_put(s, PU_RDS, "R", 1, "X");
	*e = pu_env_start(s);
	cl = pu_open(*e, c->delta, true, PU_CDS);
	/* as gRPC asks: each type once it has what refers to it */
	for (int i = 0; i < 4; i++) {
		const enum pu_type order[] = {PU_LDS, PU_RDS, PU_CDS, PU_EDS};
		const char *name[] = {"L", "R", "X", "X"};

		pu_sub(cl, order[i], name[i], NULL);
		r = pu_expect(cl, order[i]);
		pu_ack(cl, r);
		pu_resp_free(r);
	}

	pu_snap_del(s, PU_CDS, "X");
	pu_snap_del(s, PU_EDS, "X");
	pu_snap_put(s, PU_CDS, "Y", 1, "Y");
	pu_snap_put(s, PU_EDS, "Y", 1, NULL);
	pu_snap_put(s, PU_RDS, "R", 2, "Y");
	pu_env_set(*e, s);
	r = pu_expect(cl, PU_RDS);
	PU_ASSERT_NAMES(r, PU_RDS, "R");
	pu_ack(cl, r);
	pu_resp_free(r);
	/* the route's answer is in; X stays while the client asks for X only */
	pu_expect_none(cl, pu_quiet_ms());
	/* it asks for Y (SotW: the whole list; delta: the name added) */
	if (c->delta)
		pu_sub(cl, PU_CDS, "Y", NULL);
	else
		pu_sub(cl, PU_CDS, "X", "Y", NULL);
	r = pu_expect(cl, PU_CDS);
	if (c->delta) {
		PU_ASSERT_NAMES(r, PU_CDS, "Y");
		PU_ASSERT(r->nremoved == 0, "removed [%s] with Y", pu_removed(r));
	} else {
		PU_ASSERT_NAMES(r, PU_CDS, "X", "Y");
	}
	pu_ack(cl, r);
	pu_resp_free(r);
	return cl;
}

/* The last response of a move: X removed, and in delta its endpoints. */
static void expect_x_removed(const struct pu_combo *c, struct pu_client *cl)
{
	struct pu_resp *r = pu_expect(cl, PU_CDS), *eds;

	if (c->delta) {
		PU_ASSERT(r->nres == 0, "%zu resources, expected none", r->nres);
		PU_ASSERT_LIST("removed", pu_removed(r), PU_CDS, "X");
		eds = pu_expect(cl, PU_EDS);
		PU_ASSERT_LIST("removed", pu_removed(eds), PU_EDS, "X");
		pu_ack(cl, eds);
		pu_resp_free(eds);
	} else {
		PU_ASSERT_NAMES(r, PU_CDS, "Y");
	}
	pu_ack(cl, r);
	pu_resp_free(r);
}

/*
 * rule A2, clusters subscribed by name (named_move): X goes only once the
 * client ACKed Y and Y's endpoints, in the response that follows that
 * ACK. _i: SotW, delta.
 */
START_TEST(a2_named_clusters_kept_until_new_ones_held)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl = named_move(c, s, &e);
	struct pu_resp *eds;

	/* Y held, its endpoints asked for: they come before X goes */
	if (c->delta)
		pu_sub(cl, PU_EDS, "Y", NULL);
	else
		pu_sub(cl, PU_EDS, "X", "Y", NULL);
	eds = pu_expect(cl, PU_EDS);
	PU_ASSERT_NAMES(eds, PU_EDS, "Y");
	/* Y's endpoints sent, not ACKed yet: X stays */
	pu_expect_none(cl, pu_quiet_ms());
	pu_ack(cl, eds);
	pu_resp_free(eds);
	/* both held: a last response removes X */
	expect_x_removed(c, cl);
	pu_expect_none(cl, pu_quiet_ms());
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/*
 * rule A2, clusters subscribed by name (named_move): a client that asks
 * for Y's endpoints but refuses them (NACK) keeps X for a while only
 * (2 s from when it asked for Y): then xdsd removes it unasked, on its
 * own timer (nothing else is due: the listeners' wait for endpoints
 * ended when they were asked for). _i: SotW, delta.
 */
START_TEST(a2_named_clusters_go_when_new_ones_not_taken_up)
{
	const struct pu_combo *c = pu_combo(_i);
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;
	struct pu_client *cl = named_move(c, s, &e);
	struct pu_resp *r;

	if (c->delta)
		pu_sub(cl, PU_EDS, "Y", NULL);
	else
		pu_sub(cl, PU_EDS, "X", "Y", NULL);
	r = pu_expect(cl, PU_EDS);
	PU_ASSERT_NAMES(r, PU_EDS, "Y");
	pu_nack(cl, r, "refused");
	pu_resp_free(r);
	/* X goes at the deadline */
	r = pu_expect(cl, PU_CDS);
	if (c->delta)
		PU_ASSERT_LIST("removed", pu_removed(r), PU_CDS, "X");
	else
		PU_ASSERT_NAMES(r, PU_CDS, "Y");
	PU_ASSERT(pu_env_log_has(e, "not taken up in time"),
		  "xdsd did not log that the new clusters were not taken up");
	if (c->delta) {
		struct pu_resp *eds = pu_expect(cl, PU_EDS);

		PU_ASSERT_LIST("removed", pu_removed(eds), PU_EDS, "X");
		pu_ack(cl, eds);
		pu_resp_free(eds);
	}
	pu_ack(cl, r);
	pu_resp_free(r);
	pu_expect_none(cl, pu_quiet_ms());
	pu_client_free(cl);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* rule A2: a cluster whose endpoints change goes out before the listeners and
 * routes that start to use it, and the old cluster stays until they
 * moved (same simulated Envoy; the route swaps between two clusters). */
START_TEST(a2_swap_back_and_forth)
{
	const struct pu_combo *c = pu_combo(_i);
	int v = (int)(c - a2_combos);
	struct envoy ev = {.delta = a2_variants[v].delta,
			   .ack_first = a2_variants[v].ack_first,
			   .warm = a2_variants[v].warm};
	struct pu_snap *s = pu_snap_new();
	struct pu_env *e;

	pu_snap_put(s, PU_CDS, "P", 1, "P");
	pu_snap_put(s, PU_EDS, "P", 1, NULL);
	pu_snap_put(s, PU_LDS, "L", 1, "R");
	pu_snap_put(s, PU_RDS, "R", 1, "P");
	e = pu_env_start(s);
	ev.cl = pu_open(e, ev.delta, true, PU_CDS);
	pu_sub(ev.cl, PU_CDS, NULL);
	pu_sub(ev.cl, PU_LDS, NULL);
	envoy_run_until(&ev, "clusters [P] endpoints [P] listeners [L] routes [R->P]");
	for (int round = 0; round < 3; round++) {
		const char *from = round % 2 == 0 ? "P" : "Q", *to = round % 2 == 0 ? "Q" : "P";
		char want[256];

		pu_snap_del(s, PU_CDS, from);
		pu_snap_del(s, PU_EDS, from);
		pu_snap_put(s, PU_CDS, to, round + 2, to);
		pu_snap_put(s, PU_EDS, to, round + 2, NULL);
		pu_snap_put(s, PU_RDS, "R", round + 2, to);
		pu_env_set(e, s);
		snprintf(want, sizeof(want),
			 "clusters [%s] endpoints [%s] listeners [L] routes [R->%s]",
			 to, to, to);
		envoy_run_until(&ev, want);
	}
	pu_client_free(ev.cl);
	pu_resp_free(ev.cds_unanswered);
	map_clear(&ev.clusters);
	map_clear(&ev.endpoints);
	map_clear(&ev.listeners);
	map_clear(&ev.routes);
	pu_strs_clear(&ev.eds_sub);
	pu_strs_clear(&ev.rds_sub);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

/* ---------------- encoded once (issue #4 item 4) ---------------- */

/*
 * The response bodies xdsd has computed so far, from the statistics line
 * it logs on SIGUSR1 (each call asks for a fresh one).
 */
static unsigned long long bodies_computed(struct pu_env *e)
{
	static const char tag[] = "bodies computed ";
	static int asked;
	char *log;
	unsigned long long value = 0;

	asked++;
	xdt_daemon_signal(e->d, SIGUSR1);
	ck_assert_msg(xdt_daemon_wait_log_count(e->d, "info: stats: ", asked, 5000),
		      "no statistics line after SIGUSR1");
	log = xdt_daemon_log(e->d);
	for (const char *p = log; (p = strstr(p, tag)) != NULL; p++)
		value = strtoull(p + sizeof(tag) - 1, NULL, 10);
	free(log);
	return value;
}

/* The count once it stopped moving (the daemon finished the push). */
static unsigned long long settled_count(struct pu_env *e)
{
	unsigned long long a = bodies_computed(e), b;

	for (;;) {
		xdtest_sleep_ms(100);
		b = bodies_computed(e);
		if (a == b)
			return b;
		a = b;
	}
}

#define MAXC 32

/* `n` SotW and `n` delta wildcard CDS clients, synced and ACKed. */
static void connect_clients(struct pu_env *e, struct pu_client **cl, int from,
			    int n)
{
	for (int i = from; i < from + n; i++) {
		cl[2 * i] = pu_open(e, false, true, PU_CDS);
		cl[2 * i + 1] = pu_open(e, true, true, PU_CDS);
		pu_sub(cl[2 * i], PU_CDS, NULL);
		pu_sub(cl[2 * i + 1], PU_CDS, NULL);
	}
	for (int i = 2 * from; i < 2 * (from + n); i++)
		ack_free(cl[i], pu_expect(cl[i], PU_CDS));
}

/* A reload every client takes; the bodies it cost. */
static unsigned long long push(struct pu_env *e, struct pu_snap *s,
			       struct pu_client **cl, int n, int variant)
{
	unsigned long long before = settled_count(e);
	char line[64];

	pu_snap_put(s, PU_CDS, "c0", variant, NULL);
	pu_env_set(e, s);
	for (int i = 0; i < 2 * n; i++) {
		struct pu_resp *r = pu_expect(cl[i], PU_CDS);

		if (i == 0)
			snprintf(line, sizeof(line), "ACK of CDS version %s", r->version);
		ack_free(cl[i], r);
	}
	ck_assert(xdt_daemon_wait_log_count(e->d, line, 2 * n, pu_wait_ms()));
	return settled_count(e) - before;
}

START_TEST(encoded_once_per_push)
{
	pu_combo(_i); /* the label of failures */
	struct pu_snap *s = pu_snap_new();
	struct pu_client *cl[2 * MAXC];
	struct pu_env *e;
	unsigned long long one, many;
	char name[16];

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		pu_snap_put(s, PU_CDS, name, 1, NULL);
	}
	e = pu_env_start(s);
	connect_clients(e, cl, 0, 1);
	one = push(e, s, cl, 1, 2);
	connect_clients(e, cl, 1, MAXC - 1);
	many = push(e, s, cl, MAXC, 3);
	ck_assert_msg(one > 0, "no body computed for a push (is the count logged?)");
	ck_assert_msg(many == one,
		      "a push to %d clients computed %llu bodies, to 1 client %llu",
		      2 * MAXC, many, one);
	for (int i = 0; i < 2 * MAXC; i++)
		pu_client_free(cl[i]);
	pu_env_free(e);
	pu_snap_free(s);
}
END_TEST

void pu_register_ads(Suite *s, bool subset)
{
	for (int i = 0; i < A2_VARIANTS; i++)
		a2_combos[i] = (struct pu_combo){a2_variants[i].label,
						 a2_variants[i].delta, true, PU_CDS};
	if (subset) {
		pu_add_tests(s, "A1", a1_every_type_on_one_stream, &ads_combos[1], 1);
		pu_add_tests(s, "A2", a2_make_before_break, &a2_combos[0], 1);
		pu_add_tests(s, "A2", a2_make_before_break, &a2_combos[3], 1);
		return;
	}
	pu_add_tests(s, "A1", a1_every_type_on_one_stream, ads_combos, 2);
	pu_add_tests(s, "A2", a2_make_before_break, a2_combos, A2_VARIANTS);
	pu_add_tests(s, "A1", a1_types_do_not_leak, ads_combos, 2);
	pu_add_tests(s, "A2", a2_swap_back_and_forth, a2_combos, A2_VARIANTS);
	pu_add_test(s, "A2", a2_scoped_route_moves);
	pu_add_tests(s, "A2", a2_named_clusters_kept_until_new_ones_held, ads_combos, 2);
	pu_add_tests(s, "A2", a2_named_clusters_go_when_new_ones_not_taken_up, ads_combos, 2);
	pu_add_test(s, "encoded-once", encoded_once_per_push);
}

#ifndef PU_NO_MAIN
int main(void)
{
	Suite *s = suite_create("ads");

	xdtest_tmpdir();
	pu_register_ads(s, false);
	return pu_run(s);
}
#endif
