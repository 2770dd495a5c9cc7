/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/sub.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"
#include "protocol/derived.h"
#include "xds/dynparam.h"
#include "xds/xdstp.h"

static const char *const state_names[] = {
	[XD_SUB_IDLE] = "idle",
	[XD_SUB_WANTING] = "wanting",
	[XD_SUB_IN_FLIGHT] = "in flight",
	[XD_SUB_HOLDING] = "holding",
};

/* The moves sub.h draws; any other is a bug in this file. */
static bool legal(enum xd_sub_state from, enum xd_sub_state to)
{
	switch (to) {
	case XD_SUB_WANTING:
		return from == XD_SUB_IDLE;
	case XD_SUB_IN_FLIGHT:
		return from == XD_SUB_WANTING || from == XD_SUB_HOLDING;
	case XD_SUB_HOLDING:
		return from == XD_SUB_WANTING || from == XD_SUB_IN_FLIGHT;
	case XD_SUB_IDLE:
		break;
	}
	return false;
}

/* The one place the state changes. */
static void set_state(struct xd_sub *s, enum xd_sub_state to, const char *why)
{
	XD_ASSERT_INFO(legal(s->state, to), "stream %llu: %s %s -> %s (%s)",
		       (unsigned long long)s->stream_id, s->label,
		       state_names[s->state], state_names[to], why);
	/* HOLDING means the ledger says what is held (sub.h) */
	XD_ASSERT_INFO(to != XD_SUB_HOLDING || s->ledger->table != NULL,
		       "stream %llu: %s holding no table (%s)",
		       (unsigned long long)s->stream_id, s->label, why);
	xd_debug("stream %llu: %s %s -> %s (%s)",
		 (unsigned long long)s->stream_id, s->label,
		 state_names[s->state], state_names[to], why);
	s->state = to;
}

static void set_names(struct xd_names *slot, bool all, struct xd_nameset *set)
{
	struct xd_nameset *old = slot->set;

	slot->all = all;
	slot->set = set;
	xd_nameset_unref(old);
}

/*
 * The one place the ledger changes: the client now holds, of `table`,
 * every entry when `all` and the keys of `names`; `resend` and `gone`
 * are owed once (NULL: nothing). Borrows its arguments, which may be
 * the old ledger's.
 */
static void hold(struct xd_sub *s, struct xd_table *table, bool all,
		 struct xd_nameset *names, struct xd_nameset *resend,
		 struct xd_nameset *gone)
{
	struct xd_ledger *old = s->ledger;

	s->ledger = xd_ledger_make(table, all, names, resend, gone);
	xd_ledger_unref(old);
}

void xd_sub_init(struct xd_sub *s, uint64_t stream_id, const char *label)
{
	XD_ASSERT_LOOP();
	memset(s, 0, sizeof(*s));
	s->stream_id = stream_id;
	s->label = label;
	s->want.set = xd_nameset_empty();
	s->ledger = xd_ledger_empty();
	s->running = xd_ledger_ref(s->ledger);
}

void xd_sub_clear(struct xd_sub *s)
{
	XD_ASSERT_LOOP();
	xd_nameset_unref(s->want.set);
	xd_ledger_unref(s->ledger);
	xd_ledger_unref(s->sent);
	xd_ledger_unref(s->running);
	xd_nameset_unref(s->withheld);
	free(s->nack_message);
	memset(s, 0, sizeof(*s));
}

uint64_t xd_sub_parse_nonce(struct xd_name n)
{
	uint64_t v = 0;

	if (n.len == 0 || n.len > 19)
		return 0;
	for (size_t i = 0; i < n.len; i++) {
		if (n.data[i] < '0' || n.data[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(n.data[i] - '0');
	}
	return v;
}

/*
 * Names of a request with the xdstp ones in canonical form (rule X1),
 * the form tables hold them in, so that any spelling of a name finds
 * it. Other names, and xdstp names that are not well-formed (which then
 * name nothing), stay as sent. Done once per request that changes the
 * subscription, before the names are interned: nothing is cached, so
 * nothing grows with what clients send.
 */
struct canon {
	const struct xd_name *v; /* the request's names, or `own` */
	struct xd_name *own;
	size_t n;
};

static void canon_init(struct canon *c, const struct xd_name *in, size_t n)
{
	c->v = in;
	c->own = NULL;
	c->n = n;
	for (size_t i = 0; i < n; i++) {
		const char *why;
		size_t len;
		char *canon;

		/* a locator key (rule P1) had its name put in this form
		 * when it was made (request.c) */
		if (!xd_xdstp_is(in[i].data, in[i].len) ||
		    xd_locator_is(in[i].data, in[i].len))
			continue;
		canon = xd_xdstp_canon(in[i].data, in[i].len, &len, NULL, &why);
		if (canon == NULL)
			continue;
		if (c->own == NULL) {
			c->own = xd_calloc(n, sizeof(*c->own));
			c->v = c->own;
		}
		c->own[i] = (struct xd_name){canon, len};
	}
	if (c->own == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		if (c->own[i].data == NULL)
			c->own[i] = in[i];
}

static void canon_free(struct canon *c, const struct xd_name *in)
{
	if (c->own == NULL)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->own[i].data != in[i].data)
			free((char *)c->own[i].data);
	free(c->own);
}

static bool is_star(struct xd_name n)
{
	return n.len == 1 && n.data[0] == '*';
}

/* The client runs what it holds, unless it refused it: `running`
 * follows the ledger until a NACK, and stays at what came before. */
static void note_running(struct xd_sub *s)
{
	struct xd_ledger *old = s->running;

	if (s->nacked || old == s->ledger)
		return;
	s->running = xd_ledger_ref(s->ledger);
	xd_ledger_unref(old);
}

/* What an operator is shown of an answer. */
static void note_answer(struct xd_sub *s, const struct xd_request *r, bool nack,
			int64_t wall_ms)
{
	s->nacked = nack;
	if (!nack) {
		memcpy(s->acked_version, xd_table_version(s->sent->table),
		       sizeof(s->acked_version) - 1);
		s->acked_version[sizeof(s->acked_version) - 1] = '\0';
		s->acked_at_ms = wall_ms;
		return;
	}
	free(s->nack_message);
	s->nack_message = xd_strndup(r->error_message.data,
				     r->error_message.len > XD_SUB_NACK_MESSAGE_MAX ?
					     XD_SUB_NACK_MESSAGE_MAX :
					     r->error_message.len);
	s->nack_at_ms = wall_ms;
}

/* The answer to the response in flight: what it carried is now held. */
static void answered(struct xd_sub *s, const struct xd_request *r, bool nack,
		     int64_t wall_ms)
{
	note_answer(s, r, nack, wall_ms);
	hold(s, s->sent->table, s->sent->names.all, s->sent->names.set,
	     s->ledger->resend, s->ledger->gone);
	xd_ledger_unref(s->sent);
	s->sent = NULL;
	note_running(s);
	set_state(s, XD_SUB_HOLDING, nack ? "NACK" : "ACK");
	if (nack)
		s->nacks++;
	else
		s->acks++;
}

/*
 * The subscription changed: forget holding what is no longer wanted, so
 * that asking for it again sends it again (rules S7, D5).
 */
static void narrow_held(struct xd_sub *s, bool delta)
{
	const struct xd_ledger *l = s->ledger;
	struct xd_name *keep;
	size_t n = 0, count, nheld;
	struct xd_nameset *set;
	bool globs;

	if (l->table == NULL || s->want.all)
		return;
	count = xd_nameset_count(s->want.set);
	nheld = l->nheld;
	globs = delta && xd_nameset_globs(s->want.set) > 0;
	keep = xd_malloc((count + (globs ? nheld : 0) + 1) * sizeof(*keep));
	for (size_t i = 0; i < count; i++) {
		const struct xd_key *k = xd_nameset_key(s->want.set, i);
		struct xd_name name = k->text;
		bool held = l->names.all ?
				    xd_table_find(l->table, name.data, name.len) != NULL ||
					    xd_table_find_alias(l->table, name.data, name.len) != NULL :
				    xd_ledger_find(l, name.data, name.len) != NULL;

		if (!held && globs && l->names.all && k->kind == XD_KEY_GLOB) {
			/* a wildcard client held every member already */
			struct xd_nameset *m = xd_derived_glob(l->table, name);

			held = xd_nameset_count(m) > 0;
			xd_nameset_unref(m);
		}
		if (held)
			keep[n++] = name;
	}
	/* rule X2: members held one by one (a reconnecting client lists
	 * them, rule D7) stay held while their glob is subscribed */
	for (size_t i = 0; globs && !l->names.all && i < nheld; i++) {
		struct xd_name name = l->held[i].key;

		if (xd_derived_in_glob(s->want.set, name.data, name.len))
			keep[n++] = name;
	}
	set = xd_nameset_intern(keep, n);
	free(keep);
	hold(s, l->table, false, set, l->resend, l->gone);
	xd_nameset_unref(set);
	note_running(s); /* it no longer runs what it dropped */
}

/* Classifies the nonce: the answer to the response in flight, a request
 * that answers nothing, or stale (rule S5). */
static enum xd_sub_verdict classify(struct xd_sub *s,
				    const struct xd_request *r)
{
	uint64_t nonce = xd_sub_parse_nonce(r->nonce);

	if (r->nonce.len == 0)
		return s->nonce == 0 ? XD_SUB_REQUEST : XD_SUB_STALE;
	if (nonce == 0 || nonce != s->nonce)
		return XD_SUB_STALE;
	if (s->state == XD_SUB_IN_FLIGHT)
		return r->has_error ? XD_SUB_NACK : XD_SUB_ACK;
	return XD_SUB_REQUEST;
}

/* rule S12: a wildcard client already holding the current full state. */
static void resume(struct xd_sub *s, const struct xd_request *r,
		   struct xd_table *current)
{
	if (current == NULL || !s->want.all || r->version_info.len != 16 ||
	    memcmp(r->version_info.data, xd_table_version(current), 16) != 0)
		return;
	hold(s, current, s->want.all, s->want.set, s->ledger->resend,
	     s->ledger->gone);
	note_running(s);
	set_state(s, XD_SUB_HOLDING, "reconnected holding the current version");
}

enum xd_sub_verdict xd_sub_sotw_request(struct xd_sub *s,
					const struct xd_request *r,
					bool wildcard_ok, bool full_state,
					struct xd_table *current, int64_t wall_ms)
{
	enum xd_sub_verdict v;
	bool first = s->state == XD_SUB_IDLE;

	XD_ASSERT_LOOP();
	v = classify(s, r);
	if (v == XD_SUB_STALE)
		return v;
	if (v == XD_SUB_ACK || v == XD_SUB_NACK)
		answered(s, r, v == XD_SUB_NACK, wall_ms);
	if (first)
		set_state(s, XD_SUB_WANTING, "first request");

	if (first && wildcard_ok && r->nnames == 0) {
		/* rule S2: the legacy wildcard, for the life of the stream */
		s->legacy_wildcard = true;
		set_names(&s->want, true, xd_nameset_empty());
		if (full_state)
			resume(s, r, current);
		return v;
	}
	if (s->legacy_wildcard)
		return v;
	/* The same list as last time (the common ACK): nothing to redo. */
	if (!first && r->names_hash == s->names_hash)
		return v;
	s->names_hash = r->names_hash;

	bool all = false;
	struct xd_name *names = xd_malloc((r->nnames + 1) * sizeof(*names));
	size_t n = 0;
	struct xd_nameset *set;
	struct canon c;

	canon_init(&c, r->names, r->nnames);
	for (size_t i = 0; i < r->nnames; i++) {
		if (wildcard_ok && is_star(c.v[i]))
			all = true;
		else
			names[n++] = c.v[i];
	}
	set = xd_nameset_intern(names, n);
	free(names);
	canon_free(&c, r->names);
	if (set != s->want.set || all != s->want.all) {
		set_names(&s->want, all, set);
		narrow_held(s, false);
	} else {
		xd_nameset_unref(set);
	}
	if (first && full_state && xd_nameset_count(s->want.set) == 0)
		resume(s, r, current);
	return v;
}

/* `base` with `add` added and `drop` dropped. */
static struct xd_nameset *edit_set(struct xd_nameset *base,
				   const struct xd_name *add, size_t nadd,
				   const struct xd_name *drop, size_t ndrop)
{
	size_t count = xd_nameset_count(base);
	struct xd_name *v = xd_malloc((count + nadd + 1) * sizeof(*v));
	struct xd_nameset *dropset, *set;
	size_t n = 0;

	dropset = xd_nameset_intern(drop, ndrop);
	for (size_t i = 0; i < count; i++) {
		struct xd_name name = xd_nameset_at(base, i);

		if (!xd_nameset_has(dropset, name.data, name.len))
			v[n++] = name;
	}
	for (size_t i = 0; i < nadd; i++)
		if (!is_star(add[i]) &&
		    !xd_nameset_has(dropset, add[i].data, add[i].len))
			v[n++] = add[i];
	set = xd_nameset_intern(v, n);
	free(v);
	xd_nameset_unref(dropset);
	return set;
}

static void apply_initial_versions(struct xd_sub *s,
				   const struct xd_request *r,
				   struct xd_table *current)
{
	struct xd_name *match = xd_malloc((r->ninitial + 1) * sizeof(*match));
	struct xd_name *gone = xd_malloc((r->ninitial + 1) * sizeof(*gone));
	size_t nmatch = 0, ngone = 0;
	struct xd_nameset *set, *goneset;
	struct canon c;

	canon_init(&c, r->initial_names, r->ninitial);
	for (size_t i = 0; i < r->ninitial; i++) {
		struct xd_name name = c.v[i];
		struct xd_name ver = r->initial_versions[i];
		const struct xd_entry *e = xd_table_find(current, name.data, name.len);

		if (e == NULL)
			gone[ngone++] = name;
		else if (ver.len == 16 && memcmp(ver.data, e->version, 16) == 0)
			match[nmatch++] = name;
		/* another version: not held, so it is sent */
	}
	/* rule D7: the client holds `current`'s version of the matching
	 * names, and what it listed that is gone here is owed a removal */
	set = xd_nameset_intern(match, nmatch);
	goneset = xd_nameset_intern(gone, ngone);
	hold(s, current, false, set, s->ledger->resend, goneset);
	xd_nameset_unref(set);
	xd_nameset_unref(goneset);
	set_state(s, XD_SUB_HOLDING, "initial_resource_versions");
	note_running(s);
	free(match);
	free(gone);
	canon_free(&c, r->initial_names);
}

enum xd_sub_verdict xd_sub_delta_request(struct xd_sub *s,
					 const struct xd_request *r,
					 bool wildcard_ok,
					 struct xd_table *current,
					 int64_t wall_ms)
{
	enum xd_sub_verdict v;
	bool first = s->state == XD_SUB_IDLE, all = s->want.all;
	struct xd_nameset *set, *force;
	struct canon names, unsub;

	XD_ASSERT_LOOP();
	/* rule D9: without a nonce a request only changes subscriptions; with
	 * one that is not the response in flight, its ACK part is stale. */
	if (r->nonce.len == 0) {
		v = XD_SUB_REQUEST;
	} else {
		uint64_t nonce = xd_sub_parse_nonce(r->nonce);

		if (s->state == XD_SUB_IN_FLIGHT && nonce != 0 && nonce == s->nonce)
			v = r->has_error ? XD_SUB_NACK : XD_SUB_ACK;
		else
			v = XD_SUB_STALE;
	}
	if (v == XD_SUB_ACK || v == XD_SUB_NACK)
		answered(s, r, v == XD_SUB_NACK, wall_ms);
	if (first)
		set_state(s, XD_SUB_WANTING, "first request");

	if (first && current != NULL && r->ninitial > 0)
		apply_initial_versions(s, r, current);

	/* rule D2: wildcard by an empty first request, or by subscribing "*" */
	if (first && wildcard_ok && r->nnames == 0 && r->nunsubscribe == 0)
		all = true;
	for (size_t i = 0; i < r->nnames; i++)
		if (wildcard_ok && is_star(r->names[i]))
			all = true;
	for (size_t i = 0; i < r->nunsubscribe; i++)
		if (is_star(r->unsubscribe[i]))
			all = false;

	if (r->nnames == 0 && r->nunsubscribe == 0 && all == s->want.all)
		return v;
	canon_init(&names, r->names, r->nnames);
	canon_init(&unsub, r->unsubscribe, r->nunsubscribe);
	set = edit_set(s->want.set, names.v, r->nnames,
		       unsub.v, r->nunsubscribe);
	set_names(&s->want, all, set);
	/* rule D5: names subscribed now are sent even if the client holds them;
	 * rule D6: unsubscribing what was never there is harmless. */
	force = edit_set(s->ledger->resend, names.v, r->nnames, unsub.v,
			 r->nunsubscribe);
	if (first && r->ninitial > 0) {
		/* rule D7 over rule D5: what a reconnecting client just said it holds
		 * at the current version is not sent again */
		struct xd_nameset *less = xd_nameset_minus(force,
							   s->ledger->names.set);

		xd_nameset_unref(force);
		force = less;
	}
	hold(s, s->ledger->table, s->ledger->names.all, s->ledger->names.set,
	     force, s->ledger->gone);
	xd_nameset_unref(force);
	narrow_held(s, true);
	canon_free(&names, r->names);
	canon_free(&unsub, r->unsubscribe);
	return v;
}

/* What is owed once was sent (or nothing was due). */
static void clear_once_only(struct xd_sub *s)
{
	const struct xd_ledger *l = s->ledger;

	if (xd_nameset_count(l->resend) > 0 || xd_nameset_count(l->gone) > 0)
		hold(s, l->table, l->names.all, l->names.set, NULL, NULL);
}

/* What the body code is asked for `s` served from `table`; every other
 * field of xd_want zero. */
static struct xd_want want_of(const struct xd_sub *s, struct xd_table *table,
			      enum xd_form form)
{
	return (struct xd_want){
		.table = table,
		.sub = s->want,
		.ledger = s->ledger,
		.form = form,
	};
}

struct xd_body *xd_sub_next(struct xd_sub *s, struct xd_table *table,
			    enum xd_form form, bool full_state)
{
	struct xd_want w;
	struct xd_body *b;

	XD_ASSERT_LOOP();
	if (s->state == XD_SUB_IDLE || s->state == XD_SUB_IN_FLIGHT)
		return NULL;
	w = want_of(s, table, form);
	w.full_state = full_state;
	b = xd_body_get(&w);
	if (!b->empty)
		return b;
	/* Nothing differs: the client already holds this content. */
	xd_body_unref(b);
	hold(s, table, s->want.all, s->want.set, NULL, NULL);
	note_running(s);
	if (s->state == XD_SUB_WANTING)
		set_state(s, XD_SUB_HOLDING, "nothing to send");
	return NULL;
}

struct xd_body *xd_sub_heartbeat(struct xd_sub *s, enum xd_form form,
				 uint64_t now_ms, uint64_t *due_ms)
{
	struct xd_table *held = s->ledger->table;
	struct xd_want w;
	struct xd_body *b;
	uint32_t ttl;

	XD_ASSERT_LOOP();
	*due_ms = 0;
	if (!xd_form_ttl(form) || s->state != XD_SUB_HOLDING || s->nacked ||
	    held == NULL || (ttl = xd_table_min_ttl(held)) == 0)
		return NULL;
	/* a subscription that moved has a response due, not a heartbeat */
	if (s->want.all != s->ledger->names.all ||
	    s->want.set != s->ledger->names.set)
		return NULL;
	*due_ms = s->ttl_refreshed_ms + ttl / 2;
	if (now_ms < *due_ms)
		return NULL;
	w = want_of(s, held, form); /* its subscription is what it holds */
	w.heartbeat = true;
	b = xd_body_get(&w);
	if (!b->empty)
		return b;
	/* none of the resources it holds has a TTL: look again a period
	 * later, or when it holds others */
	xd_body_unref(b);
	s->ttl_refreshed_ms = now_ms;
	*due_ms = now_ms + ttl / 2;
	return NULL;
}

void xd_sub_sent(struct xd_sub *s, struct xd_table *table, uint64_t nonce,
		 uint64_t now_ms, int64_t wall_ms)
{
	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(table != NULL && nonce != 0,
		       "stream %llu: %s sent nonce %llu",
		       (unsigned long long)s->stream_id, s->label,
		       (unsigned long long)nonce);
	s->sent_at_ms = now_ms;
	s->sent_wall_ms = wall_ms;
	s->ack_overdue = false;
	memcpy(s->sent_version, xd_table_version(table),
	       sizeof(s->sent_version) - 1);
	s->sent_version[sizeof(s->sent_version) - 1] = '\0';
	xd_ledger_unref(s->sent);
	s->sent = xd_ledger_make(table, s->want.all, s->want.set, NULL, NULL);
	set_state(s, XD_SUB_IN_FLIGHT, "response sent");
	s->nonce = nonce;
	clear_once_only(s);
}

enum xd_sub_sync xd_sub_sync(const struct xd_sub *s,
			     const struct xd_table *current)
{
	if (s->state == XD_SUB_IN_FLIGHT)
		return XD_SUB_PENDING;
	if (s->nacked)
		return XD_SUB_NACKED;
	if (s->state == XD_SUB_HOLDING && s->ledger->table != NULL &&
	    current != NULL &&
	    xd_table_vhash(s->ledger->table) == xd_table_vhash(current))
		return XD_SUB_SYNCED;
	return XD_SUB_PENDING;
}

bool xd_sub_pending_since(const struct xd_sub *s, uint64_t *since_ms)
{
	if (s->state != XD_SUB_IN_FLIGHT)
		return false;
	*since_ms = s->sent_at_ms;
	return true;
}

const char *xd_sub_sync_name(enum xd_sub_sync sync)
{
	static const char *const names[] = {
		[XD_SUB_SYNCED] = "synced",
		[XD_SUB_PENDING] = "pending",
		[XD_SUB_NACKED] = "nacked",
	};

	return names[sync];
}
