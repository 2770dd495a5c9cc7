/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Responses into an Envoy's state (fleet_response.h). SotW responses
 * carry the whole state of CDS and LDS; delta responses add and remove.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_response.h"
#include "fleet_util.h"

/* ---------------- what is held, what is subscribed ---------------- */

static uint64_t res_mix(const struct sm_ent *ent)
{
	return mix64(ent->h ^ mix64(ent->ver + 0x9e3779b97f4a7c15ULL));
}

static void held_set(struct tstate *ts, struct sm_ent *ent, uint64_t ver,
		     bool created)
{
	if (!created)
		ts->digest ^= res_mix(ent);
	ent->ver = ver;
	ts->digest ^= res_mix(ent);
}

static void held_del(struct tstate *ts, struct sm_ent *ent)
{
	ts->digest ^= res_mix(ent);
	sm_del_ent(&ts->held, ent);
}

static bool sets_equal(const struct smap *a, const struct smap *b)
{
	if (a->len != b->len)
		return false;
	SM_EACH(a, ent)
		if (!sm_find(b, ent->key, ent->klen))
			return false;
	return true;
}

/*
 * The names of type `dst` that the resources held of type `src` need
 * (clusters' EDS names; load assignments' LEDS collections; listeners'
 * RDS names). A new set replaces the
 * subscription and schedules a request; resources no longer subscribed
 * are dropped, as Envoy drops them.
 */
static void derive_sub(struct envoy *e, enum rt src, enum rt dst)
{
	struct tstate *ts = &e->t[dst];
	struct smap next = {0};
	bool created;

	/* LEDS: what is held are a glob's members, not the names subscribed */
	bool by_glob = dst == LEDS;

	SM_EACH(&e->t[src].held, ent) {
		const char *p = ent->aux;

		while (p != NULL && *p) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);

			if (n)
				sm_put(&next, p, n, &created);
			p = nl ? nl + 1 : NULL;
		}
	}
	if (sets_equal(&next, &ts->sub)) {
		sm_clear(&next);
		return;
	}
	sm_clear(&ts->sub);
	ts->sub = next;
	for (uint32_t i = 0; i < ts->held.cap;) {
		struct sm_ent *ent = &ts->held.e[i];

		/* deletion shifts a later entry into slot i: look again */
		if (ent->key && !by_glob && !sm_find(&ts->sub, ent->key, ent->klen))
			held_del(ts, ent);
		else
			i++;
	}
	if (ts->started || ts->sub.len > 0) {
		ts->want = true;
		ts->sub_dirty = true;
	}
}

static void twice(struct envoy *e, enum rt t, const uint8_t *p, size_t n)
{
	if (atomic_fetch_add(&e->conf->counters->twice, 1) < 5)
		fprintf(stderr, "fleet: client %d: a %s response names '%.*s' twice\n",
			e->idx, type_name[t], (int)n, (const char *)p);
}

/*
 * Takes one resource (the Any's value) of type t into the held set,
 * with version hash `ver`. `rname` and `vstr` (delta) are the Resource's
 * name, when it has one, and its version. Returns false when malformed;
 * *changed tells whether the held state changed.
 */
static bool take_resource(struct envoy *e, enum rt t, const uint8_t *d,
			  size_t n, uint64_t ver,
			  const struct xd_wire_field *rname,
			  const struct xd_wire_field *vstr, struct hset *seen,
			  bool *changed)
{
	struct tstate *ts = &e->t[t];
	struct xd_wire_field name;
	struct sm_ent *ent;
	char *aux = NULL;
	bool created, ok;

	switch (t) {
	case CDS:
		ok = parse_cluster(d, n, &name, &aux);
		break;
	case LDS:
		ok = parse_listener(d, n, &name, &aux);
		break;
	case EDS:
		ok = parse_cla(d, n, &name, &aux);
		break;
	case LEDS:
		/* an LbEndpoint has no name: the Resource's (delta only) */
		ok = true;
		name.data = NULL;
		name.len = 0;
		break;
	default:
		ok = parse_name1(d, n, &name);
		break;
	}
	if (!ok)
		return false;
	if (rname != NULL && rname->len)
		name = *rname;
	if (!hset_add(seen, hash_bytes(name.data, name.len)))
		twice(e, t, name.data, name.len);
	if ((t == EDS || t == RDS) && !sm_find(&ts->sub, (const char *)name.data, name.len)) {
		atomic_fetch_add(&e->conf->counters->unsub, 1);
		free(aux);
		return true;
	}
	ent = sm_put(&ts->held, (const char *)name.data, name.len, &created);
	if (created || ent->ver != ver) {
		held_set(ts, ent, ver, created);
		*changed = true;
		if (e->conf->keep_versions && vstr != NULL) {
			free(ent->vstr);
			ent->vstr = xstrndup(vstr->data, vstr->len);
		}
	}
	if ((aux == NULL) != (ent->aux == NULL) ||
	    (aux != NULL && strcmp(aux, ent->aux) != 0))
		*changed = true;
	free(ent->aux);
	ent->aux = aux;
	return true;
}

/* ---------------- responses ---------------- */

static void after_response(struct envoy *e, enum rt t, bool changed)
{
	struct tstate *ts = &e->t[t];

	if (!changed && !ts->sub_dirty)
		atomic_fetch_add(&e->conf->counters->dups[t], 1);
	ts->sub_dirty = false;
	ts->unacked = true;
	ts->want = true;
	atomic_fetch_add(&e->conf->counters->resp[t], 1);
	if (t == CDS)
		derive_sub(e, CDS, EDS);
	else if (t == EDS)
		derive_sub(e, EDS, LEDS);
	else if (t == LDS)
		derive_sub(e, LDS, RDS);
}

static bool take_sotw(struct envoy *e, const uint8_t *d, size_t n)
{
	struct pb_rd r = pb_sub(d, n), ra;
	struct xd_wire_field f, a, ver = {0}, url = {0}, nonce = {0};
	struct tstate *ts;
	enum rt t;
	struct hset seen = {0};
	bool changed = false;
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.number == 1)
			ver = f;
		else if (f.number == 4)
			url = f;
		else if (f.number == 5)
			nonce = f;
	}
	if (rc < 0)
		return false;
	t = type_of(url.data, url.len);
	if (t == NT || !e->t[t].started) {
		atomic_fetch_add(&e->conf->counters->unknown, 1);
		return true;
	}
	ts = &e->t[t];
	if (ts->version == NULL || !span_eq(ver.data, ver.len, ts->version))
		changed = true;
	free(ts->version);
	free(ts->nonce);
	ts->version = xstrndup(ver.data, ver.len);
	ts->nonce = xstrndup(nonce.data, nonce.len);
	if (t == CDS || t == LDS) {
		/* full state: what is absent is gone */
		sm_clear(&ts->held);
		ts->digest = 0;
	}
	r = pb_sub(d, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		struct xd_wire_field val = {0};

		if (f.number != 2 || f.wt != 2)
			continue;
		ra = pb_sub(f.data, f.len);
		while ((rc = pb_next(&ra, &a)) == 1)
			if (a.number == 2 && a.wt == 2)
				val = a;
		if (rc < 0)
			goto bad;
		/* CDS and LDS are rebuilt whole: their version tells */
		bool rchanged = false;

		if (!take_resource(e, t, val.data, val.len,
				   hash_bytes(val.data, val.len), NULL, NULL, &seen,
				   &rchanged))
			goto bad;
		if (t == EDS || t == RDS)
			changed |= rchanged;
	}
	free(seen.v);
	if (rc < 0)
		return false;
	envoy_trace(e, "<- %s version %s nonce %s: %u held%s%s", type_name[t],
	            ts->version, ts->nonce, ts->held.len, changed ? "" : " (same version)",
	            ts->sub_dirty ? " (subscription changed)" : "");
	after_response(e, t, changed);
	return true;
bad:
	free(seen.v);
	return false;
}

static void nq_push(struct tstate *ts, const uint8_t *p, size_t n)
{
	if (ts->nq_len == ts->nq_cap) {
		ts->nq_cap = ts->nq_cap ? ts->nq_cap * 2 : 4;
		ts->nq = xrealloc(ts->nq, ts->nq_cap * sizeof(*ts->nq));
	}
	ts->nq[ts->nq_len++] = xstrndup(p, n);
}

static bool take_delta(struct envoy *e, const uint8_t *d, size_t n)
{
	struct pb_rd r = pb_sub(d, n), rr;
	struct xd_wire_field f, g, url = {0}, nonce = {0};
	struct tstate *ts;
	struct hset seen = {0};
	enum rt t;
	bool changed = false;
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.number == 4)
			url = f;
		else if (f.number == 5)
			nonce = f;
	}
	if (rc < 0)
		return false;
	t = type_of(url.data, url.len);
	if (t == NT || !e->t[t].started) {
		atomic_fetch_add(&e->conf->counters->unknown, 1);
		return true;
	}
	ts = &e->t[t];
	r = pb_sub(d, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.number == 2) {                 /* Resource */
			struct xd_wire_field name = {0}, ver = {0}, any = {0}, val = {0};

			rr = pb_sub(f.data, f.len);
			while ((rc = pb_next(&rr, &g)) == 1) {
				if (g.wt != 2)
					continue;
				if (g.number == 3)
					name = g;
				else if (g.number == 1)
					ver = g;
				else if (g.number == 2)
					any = g;
			}
			if (rc < 0)
				goto bad;
			if (any.data == NULL && ver.len > 0) {
				/* a heartbeat (TTL refresh): the resource as held */
				atomic_fetch_add(&e->conf->counters->heartbeats, 1);
				continue;
			}
			if (any.data == NULL) {
				if (!hset_add(&seen, hash_bytes(name.data, name.len)))
					twice(e, t, name.data, name.len);
				envoy_trace(e, "   %s %.*s: does not exist", type_name[t],
				            (int)name.len, (const char *)name.data);
				/* rule D8: a name that does not exist */
				struct sm_ent *ent = sm_find(&ts->held, (const char *)name.data, name.len);

				if (ent) {
					held_del(ts, ent);
					changed = true;
				}
				continue;
			}
			rr = pb_sub(any.data, any.len);
			while ((rc = pb_next(&rr, &g)) == 1)
				if (g.number == 2 && g.wt == 2)
					val = g;
			if (rc < 0)
				goto bad;
			if (!take_resource(e, t, val.data, val.len,
					   hash_bytes(ver.data, ver.len), &name, &ver,
					   &seen, &changed))
				goto bad;
			if (e->stream_no > 0) {
				e->resent++;
				atomic_fetch_add(&e->conf->counters->resent, 1);
			}
		} else if (f.number == 6) {          /* removed_resources */
			struct sm_ent *ent = sm_find(&ts->held, (const char *)f.data, f.len);

			if (!hset_add(&seen, hash_bytes(f.data, f.len)))
				twice(e, t, f.data, f.len);
			envoy_trace(e, "   %s %.*s: removed", type_name[t], (int)f.len,
			            (const char *)f.data);
			if (ent) {
				held_del(ts, ent);
				changed = true;
			}
		}
	}
	free(seen.v);
	if (rc < 0)
		return false;
	nq_push(ts, nonce.data, nonce.len);
	envoy_trace(e, "<- %s nonce %s: %u held%s%s", type_name[t], ts->nq[ts->nq_len - 1],
	            ts->held.len, changed ? "" : " (nothing changed)",
	            ts->sub_dirty ? " (subscription changed)" : "");
	after_response(e, t, changed);
	return true;
bad:
	free(seen.v);
	return false;
}

bool response_take(struct envoy *e, const uint8_t *d, size_t n)
{
	return e->conf->mode == SOTW ? take_sotw(e, d, n) : take_delta(e, d, n);
}
