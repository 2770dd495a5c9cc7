/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One simulated Envoy's requests (fleet_envoy.h): the Node it sends
 * first, the next request due in Envoy's order, its ACKs, and when it
 * holds a full configuration.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_envoy.h"
#include "fleet_util.h"

void envoy_trace(const struct envoy *e, const char *fmt, ...)
{
	va_list ap;

	if (e->idx != e->conf->trace)
		return;
	fprintf(stderr, "%9.3f client %d: ",
		(double)(now_ns() - e->conf->t_prog) / 1e9, e->idx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void envoy_init(struct envoy *e, int idx, const struct envoy_conf *conf)
{
	struct pb_wr w = {0};
	char id[256];

	memset(e, 0, sizeof(*e));
	e->idx = idx;
	e->conf = conf;
	snprintf(id, sizeof(id), "%s-%d", conf->node_prefix, idx);
	pbw_str(&w, 1, id);
	pbw_str(&w, 2, conf->cluster);
	pbw_str(&w, 6, "xdsd-fleet");
	for (const char *f = conf->features; f != NULL && *f != '\0';) {
		size_t n = strcspn(f, ",");
		char one[128];

		snprintf(one, sizeof(one), "%.*s", (int)n, f);
		pbw_str(&w, 10, one);
		f += n + (f[n] == ',');
	}
	e->node = w.buf;
	e->node_len = w.len;
	e->t[CDS].want = true;              /* wildcard */
}

void envoy_free(struct envoy *e)
{
	for (int t = 0; t < NT; t++) {
		struct tstate *ts = &e->t[t];

		sm_clear(&ts->sub);
		sm_clear(&ts->sent);
		sm_clear(&ts->held);
		free(ts->version);
		free(ts->nonce);
		for (uint32_t j = 0; j < ts->nq_len; j++)
			free(ts->nq[j]);
		free(ts->nq);
	}
	free(e->node);
}

void envoy_reopen(struct envoy *e)
{
	e->node_sent = false;
	e->stream_no++;
	e->resent = e->resent_due = 0;
	for (int t = 0; t < NT; t++) {
		struct tstate *ts = &e->t[t];

		if (e->conf->stale_versions && ts->started)
			e->resent_due += ts->held.len;
		for (uint32_t j = 0; j < ts->nq_len; j++)
			free(ts->nq[j]);
		ts->nq_len = 0;
		sm_clear(&ts->sent);    /* EDS/RDS: every name subscribed anew */
		ts->unacked = false;
		ts->sub_dirty = false;
		ts->want = ts->started;
		ts->resume = ts->started;
	}
	envoy_trace(e, "stream %d: reopened", e->stream_no);
}

bool envoy_busy(const struct envoy *e)
{
	for (int t = 0; t < NT; t++)
		if (e->t[t].want || e->t[t].unacked)
			return true;
	return false;
}

/* rule D7: the name and version of every resource held, as the map
 * initial_resource_versions (field 5: entries of key 1, value 2). */
static void put_initial_versions(const struct envoy *e, enum rt t, struct pb_wr *w)
{
	const struct tstate *ts = &e->t[t];
	unsigned n = 0;

	SM_EACH(&ts->held, ent) {
		struct pb_wr kv = {0};
		char stale[160];
		const char *v = ent->vstr ? ent->vstr : "";

		if (e->conf->stale_versions) {
			snprintf(stale, sizeof(stale), "other-%s", v);
			v = stale;
		}
		pbw_bytes(&kv, 1, ent->key, ent->klen);
		pbw_str(&kv, 2, v);
		pbw_bytes(w, 5, kv.buf, kv.len);
		free(kv.buf);
		n++;
	}
	envoy_trace(e, "-> %s initial_resource_versions: %u%s", type_name[t], n,
		    e->conf->stale_versions ? " (altered)" : "");
}

static bool covered(const struct tstate *ts)
{
	SM_EACH(&ts->sub, ent)
		if (!sm_find(&ts->held, ent->key, ent->klen))
			return false;
	return true;
}

static bool type_ready(const struct envoy *e, enum rt t)
{
	const struct tstate *ts = &e->t[t];

	if (t == EDS || t == RDS) {
		if (ts->sub.len == 0)
			return true;
		return ts->acks > 0 && !ts->unacked && covered(ts);
	}
	if (t == LEDS) /* globs: their members are not their names */
		return ts->sub.len == 0 || (ts->acks > 0 && !ts->unacked);
	return ts->acks > 0 && !ts->unacked;
}

/* Envoy's start-up order: listeners once the clusters are warm. */
static void check_progress(struct envoy *e)
{
	if (e->t_full)
		return;
	if (!e->t[LDS].started && !e->t[LDS].want &&
	    type_ready(e, CDS) && type_ready(e, EDS) && type_ready(e, LEDS))
		e->t[LDS].want = true;
	for (int t = 0; t < NT; t++)
		if (!type_ready(e, (enum rt)t))
			return;
	if (e->t[LDS].acks == 0)
		return;
	e->t_full = now_ns();
	atomic_fetch_add(&e->conf->counters->configured, 1);
}

static void note_ack(struct tstate *ts, uint64_t state)
{
	ts->unacked = false;
	ts->acks++;
	if (state != ts->ack_state) {
		ts->ack_state = state;
		ts->ack_at = now_ns();
	}
}

static void build_sotw(struct envoy *e, enum rt t, struct pb_wr *w)
{
	struct tstate *ts = &e->t[t];

	pbw_str(w, 1, ts->version);
	if (!e->node_sent) {
		pbw_bytes(w, 2, e->node, e->node_len);
		e->node_sent = true;
	}
	if (t == EDS || t == LEDS || t == RDS)
		SM_EACH(&ts->sub, ent)
			pbw_bytes(w, 3, ent->key, ent->klen);
	pbw_str(w, 4, type_url[t]);
	pbw_str(w, 5, ts->nonce);
	envoy_trace(e, "-> %s version %s nonce %s, %u names%s", type_name[t],
		    ts->version ? ts->version : "", ts->nonce ? ts->nonce : "",
		    ts->sub.len, ts->unacked ? " (ACK)" : "");
	ts->want = false;
	if (ts->unacked)
		note_ack(ts, hash_bytes(ts->version, strlen(ts->version)));
}

static void build_delta(struct envoy *e, enum rt t, struct pb_wr *w)
{
	struct tstate *ts = &e->t[t];
	bool created;

	if (!e->node_sent) {
		pbw_bytes(w, 1, e->node, e->node_len);
		e->node_sent = true;
	}
	pbw_str(w, 2, type_url[t]);
	if (ts->resume) {
		put_initial_versions(e, t, w);
		ts->resume = false;
	}
	if (t == EDS || t == LEDS || t == RDS) {
		unsigned nsub = 0, nunsub = 0;

		SM_EACH(&ts->sub, ent)
			if (!sm_find(&ts->sent, ent->key, ent->klen)) {
				pbw_bytes(w, 3, ent->key, ent->klen);
				nsub++;
			}
		SM_EACH(&ts->sent, ent)
			if (!sm_find(&ts->sub, ent->key, ent->klen)) {
				pbw_bytes(w, 4, ent->key, ent->klen);
				nunsub++;
			}
		if (nsub || nunsub)
			envoy_trace(e, "-> %s subscribe %u, unsubscribe %u",
				    type_name[t], nsub, nunsub);
		sm_clear(&ts->sent);
		SM_EACH(&ts->sub, ent)
			sm_put(&ts->sent, ent->key, ent->klen, &created);
	}
	/* one ACK per response, oldest first, as Envoy sends them */
	if (ts->nq_len) {
		envoy_trace(e, "-> %s ACK nonce %s", type_name[t], ts->nq[0]);
		pbw_str(w, 6, ts->nq[0]);
		free(ts->nq[0]);
		memmove(ts->nq, ts->nq + 1, --ts->nq_len * sizeof(*ts->nq));
	}
	ts->want = ts->nq_len > 0;
	if (ts->unacked && ts->nq_len == 0)
		note_ack(ts, ts->digest);
}

bool envoy_next_request(struct envoy *e, struct pb_wr *w)
{
	int t;

	check_progress(e);
	for (t = 0; t < NT; t++)
		if (e->t[t].want)
			break;
	if (t == NT)
		return false;
	if (e->conf->mode == SOTW)
		build_sotw(e, (enum rt)t, w);
	else
		build_delta(e, (enum rt)t, w);
	e->t[t].started = true;
	/* the ACK just written may complete the configuration */
	check_progress(e);
	return true;
}
