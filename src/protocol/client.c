/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/client.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cache/cache.h"
#include "protocol/authorize.h"
#include "protocol/derived.h"
#include "protocol/node.h"
#include "snapshot/table.h"
#include "util/common.h"
#include "util/loop_thread.h"
#include "util/text.h"
#include "util/xalloc.h"

/* Who a failed contract concerns: the client's address and node. */
#define WHO(c)                                                      \
	"client from %s, node id '%s' cluster '%s'", (c)->peer,       \
		(c)->node_id ? (c)->node_id : "",                     \
		(c)->node_cluster ? (c)->node_cluster : ""

/* Locality and user agent are shown to operators, never acted on: a
 * bounded, NUL-free copy. */
#define NODE_TEXT_MAX 256

void xd_client_init(struct xd_client *c, const struct xd_config *cfg,
		    bool delta, const char *peer, const char *identity,
		    int64_t since_ms)
{
	XD_ASSERT_LOOP();
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->state = XD_CLIENT_NEW;
	c->delta = delta;
	c->peer = xd_strdup(peer != NULL ? peer : "");
	c->identity = identity != NULL ? xd_strdup(identity) : NULL;
	c->since_ms = since_ms;
}

void xd_client_clear(struct xd_client *c)
{
	XD_ASSERT_LOOP();
	free(c->peer);
	free(c->identity);
	free(c->node_id);
	free(c->node_cluster);
	free(c->region);
	free(c->zone);
	free(c->sub_zone);
	free(c->ua_name);
	free(c->ua_version);
	memset(c, 0, sizeof(*c));
}

static char *clipped(struct xd_name n)
{
	/* xd_strndup stops at a NUL, and takes an absent field (NULL, 0) */
	return xd_strndup(n.data, n.len > NODE_TEXT_MAX ? NODE_TEXT_MAX : n.len);
}

static bool same_text(struct xd_name n, const char *s)
{
	return n.len == strlen(s) && memcmp(n.data, s, n.len) == 0;
}

/* The node's own fields, kept once: the first node names the client. */
static void take_node(struct xd_client *c, const struct xd_node *n)
{
	XD_ASSERT_INFO(c->node_id == NULL, WHO(c));
	c->node_id = xd_strndup(n->id.data, n->id.len);
	c->node_cluster = xd_strndup(n->cluster.data, n->cluster.len);
	c->region = clipped(n->region);
	c->zone = clipped(n->zone);
	c->sub_zone = clipped(n->sub_zone);
	c->ua_name = clipped(n->user_agent_name);
	if (n->user_agent_version.len == 0 && n->has_build_version) {
		c->has_ua_build = true;
		c->ua_build = n->build_version;
		c->ua_version = xd_asprintf("%" PRIu32 ".%" PRIu32 ".%" PRIu32,
					     n->build_version.major,
					     n->build_version.minor,
					     n->build_version.patch);
	} else {
		c->ua_version = clipped(n->user_agent_version);
	}
	c->wrapped = (n->features & XD_FEATURE_RESOURCE_IN_SOTW) != 0;
	c->ttl = (n->features & XD_FEATURE_RESOURCE_TTL) != 0;
}

/*
 * With mTLS, whether the client's identity may speak for the node it
 * claims (authorize.h). A client without one (plaintext, a certificate
 * naming nobody, REST-JSON) may not when there are rules.
 */
static bool authorized(const struct xd_client *c, char *why, size_t why_len)
{
	const struct xd_config *cfg = c->cfg;

	if (cfg->nauthorize == 0)
		return true;
	if (c->identity != NULL &&
	    xd_authorize(cfg->authorize, cfg->nauthorize, c->identity,
			 c->node_id, c->node_cluster, NULL))
		return true;
	if (c->identity != NULL)
		snprintf(why, why_len,
			 "identity '%.200s' may not speak for node id '%.100s' cluster '%.100s'",
			 c->identity, c->node_id, c->node_cluster);
	else
		snprintf(why, why_len,
			 "a client with no identity may not speak for node id '%.100s' cluster '%.100s': authorize: rules admit only identified clients",
			 c->node_id, c->node_cluster);
	return false;
}

/* Moves the client to ADMITTED or REFUSED, once (the header's states). */
static enum xd_client_verdict settle(struct xd_client *c,
				     enum xd_client_verdict v)
{
	XD_ASSERT_INFO(c->state == XD_CLIENT_NEW, WHO(c));
	c->state = v == XD_CLIENT_ADMIT ? XD_CLIENT_ADMITTED : XD_CLIENT_REFUSED;
	return v;
}

enum xd_client_verdict xd_client_admit(struct xd_client *c,
				       struct xd_span node, char *why,
				       size_t why_len)
{
	const struct xd_config *cfg = c->cfg;
	bool admitted = c->state == XD_CLIENT_ADMITTED;
	const char *parse_why;
	struct xd_node n;

	XD_ASSERT_LOOP();
	/* a refused client's transport ended it: it reads no more */
	XD_ASSERT_INFO(c->state != XD_CLIENT_REFUSED, WHO(c));
	if (admitted && node.len == 0)
		return XD_CLIENT_SAME; /* rule S1: the node once is enough */
	if (node.len > cfg->max_node_size) {
		snprintf(why, why_len,
			 "the node is %u bytes; the limit is %llu (max_node_size)",
			 (unsigned)node.len, (unsigned long long)cfg->max_node_size);
		return admitted ? XD_CLIENT_OVER_LIMIT :
				  settle(c, XD_CLIENT_OVER_LIMIT);
	}
	if (xd_node_parse(&n, node.data, node.len, &parse_why) != 0) {
		snprintf(why, why_len, "%s", parse_why);
		return admitted ? XD_CLIENT_MALFORMED :
				  settle(c, XD_CLIENT_MALFORMED);
	}
	if (n.id.len > cfg->max_node_id_size ||
	    n.cluster.len > cfg->max_node_id_size) {
		bool id = n.id.len > cfg->max_node_id_size;

		snprintf(why, why_len,
			 "the node %s is %zu bytes; the limit is %llu (max_node_id_size)",
			 id ? "id" : "cluster", id ? n.id.len : n.cluster.len,
			 (unsigned long long)cfg->max_node_id_size);
		return admitted ? XD_CLIENT_OVER_LIMIT :
				  settle(c, XD_CLIENT_OVER_LIMIT);
	}
	if (admitted) {
		/* rule S1: one node per stream */
		if (same_text(n.id, c->node_id) &&
		    same_text(n.cluster, c->node_cluster))
			return XD_CLIENT_SAME;
		snprintf(why, why_len, "%s", "the node changed on the stream");
		return XD_CLIENT_CHANGED;
	}
	take_node(c, &n);
	if (!authorized(c, why, why_len))
		return settle(c, XD_CLIENT_FORBIDDEN);
	return settle(c, XD_CLIENT_ADMIT);
}

/* TTLs go in Resource: in SotW only to clients that take it wrapped
 * (rules L1, L2). */
enum xd_form xd_client_form(const struct xd_client *c)
{
	XD_ASSERT_INFO(c->state == XD_CLIENT_ADMITTED, WHO(c));
	if (c->delta)
		return c->ttl ? XD_FORM_DELTA_TTL : XD_FORM_DELTA;
	if (!c->wrapped)
		return XD_FORM_SOTW;
	return c->ttl ? XD_FORM_SOTW_TTL : XD_FORM_SOTW_WRAPPED;
}

/* The node's own key (node_key), "" for a node without one. */
static const char *node_key(const struct xd_client *c)
{
	return c->cfg->node_key == XD_NODE_KEY_ID ? c->node_id : c->node_cluster;
}

const char *xd_client_key(const struct xd_client *c)
{
	const char *key;

	XD_ASSERT_INFO(c->state == XD_CLIENT_ADMITTED, WHO(c));
	key = node_key(c);
	return key[0] != '\0' ? key : XD_CACHE_DEFAULT_KEY;
}

void xd_client_unserved(const struct xd_client *c, char *msg, size_t len)
{
	XD_ASSERT_INFO(c->state == XD_CLIENT_ADMITTED, WHO(c));
	snprintf(msg, len,
		 "no snapshot serves node %s '%.200s': xdsd has no snapshot '%.200s' and no default snapshot",
		 c->cfg->node_key == XD_NODE_KEY_ID ? "id" : "cluster",
		 node_key(c), xd_client_key(c));
}

/* ---------------- the operator's view ---------------- */

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

void xd_client_view(const struct xd_client *c, struct xd_client_view *v)
{
	XD_ASSERT_LOOP();
	memset(v, 0, sizeof(*v));
	v->peer = c->peer;
	v->identity = c->identity;
	v->since_ms = c->since_ms;
	v->has_node = c->state == XD_CLIENT_ADMITTED;
	v->node_id = or_empty(c->node_id);
	v->node_cluster = or_empty(c->node_cluster);
	v->key = v->has_node ? xd_client_key(c) : "";
	v->region = or_empty(c->region);
	v->zone = or_empty(c->zone);
	v->sub_zone = or_empty(c->sub_zone);
	v->user_agent_name = or_empty(c->ua_name);
	v->user_agent_version = or_empty(c->ua_version);
	v->user_agent_build = c->has_ua_build ? &c->ua_build : NULL;
}

void xd_client_view_type(struct xd_client_view *v, const struct xd_sub *sub,
			 const struct xd_table *current, const char *label,
			 const char *type_url)
{
	struct xd_client_type *ct;

	XD_ASSERT_INFO(v->ntypes < XD_ARRAY_LEN(v->types),
		       "stream %llu from %s", (unsigned long long)v->stream_id,
		       v->peer);
	ct = &v->types[v->ntypes++];
	ct->type_url = current != NULL ? xd_table_type_url(current) : type_url;
	ct->label = label;
	ct->sub = sub;
	ct->current = current;
	ct->sync = xd_sub_sync(sub, current);
	ct->pending_since_ms = 0;
	ct->pending_ms = 0;
}

void xd_client_view_ages(struct xd_client_view *v, uint64_t now_mono_ms)
{
	for (size_t i = 0; i < v->ntypes; i++) {
		struct xd_client_type *ct = &v->types[i];
		uint64_t since;

		if (!xd_sub_pending_since(ct->sub, &since))
			continue;
		/* a send is recorded on the clock read after it: never later
		 * than now, unless a caller mixed clocks */
		XD_ASSERT_INFO(since <= now_mono_ms,
			       "stream %llu from %s: %s sent at %llu, now %llu",
			       (unsigned long long)v->stream_id, v->peer,
			       ct->label, (unsigned long long)since,
			       (unsigned long long)now_mono_ms);
		/* the age on the monotonic clock, right across a step of the
		 * wall clock; the Unix time as the send read it */
		ct->pending_ms = now_mono_ms - since;
		ct->pending_since_ms = ct->sub->sent_wall_ms;
	}
}

uint64_t xd_client_view_oldest(const struct xd_client_view *v)
{
	uint64_t oldest = 0;

	for (size_t i = 0; i < v->ntypes; i++)
		if (v->types[i].pending_ms > oldest)
			oldest = v->types[i].pending_ms;
	return oldest;
}


/* One resource the client asks for, reached by `k` (asked for by
 * `asked`, NULL: by a wildcard or a glob), found as `e` in the table
 * now, with what the client runs and holds under it. */
static void shown(const struct xd_sub *s, const struct xd_key *asked, const struct xd_key *k,
		  const struct xd_entry *e,
		  void (*fn)(void *, const struct xd_client_resource *), void *arg)
{
	struct xd_client_resource r = {
		.name = xd_key_base(k),
		.key = asked,
		.current = e,
		.running = xd_ledger_entry(s->running, k),
		.held = xd_ledger_entry(s->ledger, k),
	};

	fn(arg, &r);
}

static bool is_star(struct xd_name n)
{
	return n.len == 1 && n.data[0] == '*';
}

void xd_client_type_resources(const struct xd_client_type *ct,
			      void (*fn)(void *arg,
					 const struct xd_client_resource *r),
			      void *arg)
{
	const struct xd_sub *s = ct->sub;
	const struct xd_table *current = ct->current;
	size_t n = xd_nameset_count(s->want.set);

	XD_ASSERT_LOOP(); /* glob members are memoized on tables */
	for (size_t i = 0; s->want.all && current != NULL &&
			   i < xd_table_count(current); i++) {
		const struct xd_entry *e = xd_table_at(current, i);
		struct xd_key k = xd_key_of_name(e->name, e->name_len);

		if (!e->on_demand) /* which no wildcard reaches (rule D2) */
			shown(s, NULL, &k, e, fn, arg);
	}
	for (size_t i = 0; i < n; i++) {
		const struct xd_key *k = xd_nameset_key(s->want.set, i);
		const struct xd_entry *e;

		if (is_star(k->text))
			continue;
		if (k->kind == XD_KEY_GLOB && current != NULL) {
			struct xd_nameset *members =
				xd_derived_glob((struct xd_table *)current, k->text);
			size_t nm = xd_nameset_count(members);

			if (nm == 0)
				shown(s, k, k, NULL, fn, arg);
			for (size_t j = 0; j < nm; j++) {
				struct xd_name m = xd_nameset_at(members, j);
				struct xd_key mk = xd_key_of_name(m.data, m.len);

				if (s->want.all ||
				    xd_nameset_has(s->want.set, m.data, m.len))
					continue; /* shown as a name of its own */
				shown(s, NULL, &mk,
				      xd_table_find(current, m.data, m.len), fn,
				      arg);
			}
			xd_nameset_unref(members);
			continue;
		}
		e = xd_ledger_lookup(current, k);
		/* a resource of the table was shown by the wildcard; a
		 * variant or one on demand, which no wildcard reaches, was
		 * not */
		if (s->want.all && e != NULL && e->constraints.data == NULL &&
		    !e->on_demand)
			continue;
		shown(s, k, k, e, fn, arg);
	}
}

bool xd_client_type_asks_for(const struct xd_client_type *ct, const char *name,
			     size_t len)
{
	const struct xd_sub *s = ct->sub;

	if (xd_nameset_has(s->want.set, name, len))
		return true;
	for (size_t i = 0; xd_nameset_locators(s->want.set) > 0 &&
			   i < xd_nameset_count(s->want.set); i++) {
		const struct xd_key *k = xd_nameset_key(s->want.set, i);

		if (k->kind == XD_KEY_LOCATOR && k->base_len == len &&
		    memcmp(k->text.data, name, len) == 0)
			return true;
	}
	return false;
}

/* Subscriptions of more names than this have the names their table
 * lacks memoized on it (a fleet's endpoints); smaller ones are looked
 * up at each visit. */
#define MISSING_MEMO_MIN 64

static void release_missing(union xd_derived_value v)
{
	xd_nameset_unref(v.set);
}

/* The keys of `set` that name nothing in `t`, glob collections left out
 * in delta: memoized on `t` by the set (a new reference). */
static struct xd_nameset *missing_keys(struct xd_table *t,
				       struct xd_nameset *set, bool delta)
{
	struct xd_derived_key key = {.words = {delta}, .sets = {set}};
	union xd_derived_value v;
	struct xd_name *names;
	size_t n = 0, count = xd_nameset_count(set);

	if (xd_derived_find(t, XD_DERIVED_MISSING, &key, &v))
		return xd_nameset_ref(v.set);
	names = xd_malloc((count + 1) * sizeof(*names));
	for (size_t i = 0; i < count; i++) {
		const struct xd_key *k = xd_nameset_key(set, i);

		if (delta && k->kind == XD_KEY_GLOB)
			continue;
		if (xd_ledger_lookup(t, k) == NULL)
			names[n++] = k->text;
	}
	v.set = xd_nameset_intern(names, n);
	free(names);
	xd_derived_store(t, XD_DERIVED_MISSING, &key,
			 (struct xd_derived_owned){v, xd_nameset_bytes(v.set),
						   release_missing});
	return xd_nameset_ref(v.set);
}

size_t xd_client_type_missing(const struct xd_client_type *ct, bool delta,
			      void (*fn)(void *arg, struct xd_name name,
					 bool denied),
			      void *arg, size_t *ndenied)
{
	struct xd_table *current = (struct xd_table *)ct->current;
	struct xd_table *full;
	struct xd_nameset *m;
	size_t n, denied = 0;

	XD_ASSERT_LOOP(); /* memoized on the table */
	if (ndenied != NULL)
		*ndenied = 0;
	if (current == NULL || xd_nameset_count(ct->sub->want.set) == 0)
		return 0;
	full = xd_table_filter_source(current);
	/* a few names are looked up at once; only a subscription worth
	 * the memo's room (bodies live there too) is found there */
	m = xd_nameset_count(ct->sub->want.set) > MISSING_MEMO_MIN ?
		    missing_keys(current, ct->sub->want.set, delta) :
		    xd_nameset_ref(ct->sub->want.set);
	n = 0;
	for (size_t i = 0; i < xd_nameset_count(m); i++) {
		const struct xd_key *k = xd_nameset_key(m, i);
		bool d;

		if ((delta && k->kind == XD_KEY_GLOB) ||
		    xd_ledger_lookup(current, k) != NULL)
			continue;
		d = full != NULL && xd_ledger_lookup(full, k) != NULL;
		n++;
		denied += d;
		if (fn != NULL)
			fn(arg, xd_key_base(k), d);
	}
	xd_nameset_unref(m);
	if (ndenied != NULL)
		*ndenied = denied;
	return n;
}
