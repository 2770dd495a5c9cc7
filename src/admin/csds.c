/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/csds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/wire.h"
#include "util/loop_thread.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "xds/message.h"

/* ---------------- the request ---------------- */

static void matcher_free(struct xd_csds_matcher *m)
{
	free(m->text);
}

void xd_csds_query_free(struct xd_csds_query *q)
{
	for (size_t i = 0; i < q->nmatchers; i++)
		matcher_free(&q->matchers[i]);
	free(q->matchers);
	memset(q, 0, sizeof(*q));
}

/* A StringMatcher on the node id. Its pattern is a oneof: the last one
 * on the wire wins, as in protobuf. */
static int parse_string_matcher(struct xd_csds_matcher *m, const uint8_t *p,
				const uint8_t *end, char *why, size_t why_len)
{
	struct xd_wire_field f;
	int rc;

	m->kind = XD_CSDS_ANY;
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		enum xd_csds_match kind;

		switch (f.number) {
		case XD_STRING_MATCHER_EXACT:
			kind = XD_CSDS_EXACT;
			break;
		case XD_STRING_MATCHER_PREFIX:
			kind = XD_CSDS_PREFIX;
			break;
		case XD_STRING_MATCHER_SUFFIX:
			kind = XD_CSDS_SUFFIX;
			break;
		case XD_STRING_MATCHER_CONTAINS:
			kind = XD_CSDS_CONTAINS;
			break;
		case XD_STRING_MATCHER_IGNORE_CASE:
			if (f.wt != XD_WT_VARINT)
				goto malformed;
			m->ignore_case = f.v != 0;
			continue;
		case XD_STRING_MATCHER_SAFE_REGEX:
			snprintf(why, why_len, "node_matchers: node_id.safe_regex is not supported (use exact, prefix, suffix or contains)");
			return -1;
		case XD_STRING_MATCHER_CUSTOM:
			snprintf(why, why_len, "node_matchers: node_id.custom is not supported (use exact, prefix, suffix or contains)");
			return -1;
		default:
			continue;
		}
		if (f.wt != XD_WT_LEN)
			goto malformed;
		free(m->text);
		/* any bytes, NUL included: compared by length */
		m->text = xd_malloc(f.len + 1);
		if (f.len > 0)
			memcpy(m->text, f.data, f.len);
		m->text[f.len] = '\0';
		m->len = f.len;
		m->kind = kind;
	}
	if (rc < 0)
		goto malformed;
	if (m->kind == XD_CSDS_ANY) {
		snprintf(why, why_len, "node_matchers: node_id has no pattern (exact, prefix, suffix or contains)");
		return -1;
	}
	if (m->kind != XD_CSDS_EXACT && m->len == 0) {
		/* Envoy's own validation: an empty prefix matches anything and
		 * is taken for a mistake. */
		snprintf(why, why_len, "node_matchers: node_id's %s must not be empty",
			 m->kind == XD_CSDS_PREFIX ? "prefix" :
			 m->kind == XD_CSDS_SUFFIX ? "suffix" : "contains");
		return -1;
	}
	return 0;
malformed:
	snprintf(why, why_len, "node_matchers: malformed node_id matcher");
	return -1;
}

static int parse_node_matcher(struct xd_csds_matcher *m, const uint8_t *p,
			      const uint8_t *end, char *why, size_t why_len)
{
	struct xd_wire_field f;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == XD_NODE_MATCHER_NODE_METADATAS) {
			snprintf(why, why_len, "node_matchers: node_metadatas is not supported");
			return -1;
		}
		if (f.number != XD_NODE_MATCHER_NODE_ID)
			continue;
		if (f.wt != XD_WT_LEN)
			break;
		/* a repeated message field merges: later bytes override */
		if (parse_string_matcher(m, f.data, f.data + f.len, why,
					 why_len) != 0)
			return -1;
	}
	if (rc != 0) {
		snprintf(why, why_len, "node_matchers: malformed NodeMatcher");
		return -1;
	}
	return 0;
}

int xd_csds_query_parse(struct xd_csds_query *q, const uint8_t *data,
			size_t len, char *why, size_t why_len)
{
	const uint8_t *p = data, *end = len > 0 ? data + len : data;
	struct xd_csds_query out = {0};
	struct xd_wire_field f;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number == XD_CSDS_REQUEST_NODE_MATCHERS) {
			struct xd_csds_matcher *m;

			if (f.wt != XD_WT_LEN)
				goto malformed;
			if (out.nmatchers == XD_CSDS_MAX_MATCHERS) {
				snprintf(why, why_len, "more than %d node_matchers",
					 XD_CSDS_MAX_MATCHERS);
				goto fail;
			}
			out.matchers = xd_reallocarray(out.matchers,
						       out.nmatchers + 1,
						       sizeof(*out.matchers));
			m = &out.matchers[out.nmatchers++];
			memset(m, 0, sizeof(*m));
			if (parse_node_matcher(m, f.data, f.data + f.len, why,
					       why_len) != 0)
				goto fail;
		} else if (f.number == XD_CSDS_REQUEST_EXCLUDE_CONTENTS) {
			if (f.wt != XD_WT_VARINT)
				goto malformed;
			out.exclude_contents = f.v != 0;
		}
		/* node (who asks) and anything newer: not needed, unread */
	}
	if (rc < 0)
		goto malformed;
	*q = out;
	return 0;
malformed:
	snprintf(why, why_len, "malformed ClientStatusRequest");
fail:
	xd_csds_query_free(&out);
	return -1;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static bool same(const char *a, const char *b, size_t n, bool fold)
{
	if (!fold)
		return memcmp(a, b, n) == 0;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return false;
	return true;
}

static bool matcher_matches(const struct xd_csds_matcher *m, const char *s,
			    size_t len)
{
	switch (m->kind) {
	case XD_CSDS_ANY:
		return true;
	case XD_CSDS_EXACT:
		return len == m->len && same(s, m->text, len, m->ignore_case);
	case XD_CSDS_PREFIX:
		return len >= m->len && same(s, m->text, m->len, m->ignore_case);
	case XD_CSDS_SUFFIX:
		return len >= m->len &&
		       same(s + len - m->len, m->text, m->len, m->ignore_case);
	case XD_CSDS_CONTAINS:
		for (size_t i = 0; i + m->len <= len; i++)
			if (same(s + i, m->text, m->len, m->ignore_case))
				return true;
		return false;
	}
	return false;
}

bool xd_csds_query_matches(const struct xd_csds_query *q, const char *node_id,
			   size_t len)
{
	if (q->nmatchers == 0)
		return true;
	for (size_t i = 0; i < q->nmatchers; i++)
		if (matcher_matches(&q->matchers[i], node_id, len))
			return true;
	return false;
}

/* ---------------- the response ---------------- */

/*
 * A string field, as protobuf requires strings to be: well-formed
 * UTF-8. What clients sent (node ids, NACK messages) may not be; each
 * bad byte becomes U+FFFD, as the JSON of /clients does.
 */
static void put_text(struct xd_buf *b, uint32_t field, const char *s,
		     size_t len)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t mark;

	if (len == 0)
		return;
	xd_wire_tag(b, field, XD_WT_LEN);
	mark = xd_wire_open(b);
	for (size_t i = 0; i < len;)
		i += xd_text_utf8_put(b, u + i, len - i, XD_TEXT_REPLACEMENT);
	xd_wire_close(b, mark);
}

static void put_str(struct xd_buf *b, uint32_t field, const char *s)
{
	put_text(b, field, s, strlen(s));
}

static void put_timestamp(struct xd_buf *b, uint32_t field, int64_t ms)
{
	size_t mark;

	if (ms <= 0)
		return;
	xd_wire_tag(b, field, XD_WT_LEN);
	mark = xd_wire_open(b);
	xd_wire_tag(b, XD_TIMESTAMP_SECONDS, XD_WT_VARINT);
	xd_wire_varint(b, (uint64_t)(ms / 1000));
	if (ms % 1000 != 0) {
		xd_wire_tag(b, XD_TIMESTAMP_NANOS, XD_WT_VARINT);
		xd_wire_varint(b, (uint64_t)(ms % 1000) * 1000000u);
	}
	xd_wire_close(b, mark);
}

static void put_enum(struct xd_buf *b, uint32_t field, int v)
{
	xd_wire_tag(b, field, XD_WT_VARINT);
	xd_wire_varint(b, (uint64_t)v);
}

/* A uint32, left out when 0 as proto3 does. */
static void put_varint(struct xd_buf *b, uint32_t field, uint32_t v)
{
	if (v == 0)
		return;
	xd_wire_tag(b, field, XD_WT_VARINT);
	xd_wire_varint(b, v);
}

/* What a type's statuses are, from the sync state /clients shows. */
struct type_status {
	int config;          /* STALE or NOT_SENT when pending */
	const char *version; /* last ACKed; "" for none */
	bool synced, nacked; /* xd_sub_sync's SYNCED, NACKED */
	bool delta;
	bool answered; /* the client has had a response of the type */
	bool contents; /* resources may be shown */
};

static struct type_status type_status(const struct xd_client_type *ct,
				      bool delta,
				      const struct xd_csds_query *q)
{
	const struct xd_sub *sub = ct->sub;
	struct type_status s = {.version = sub->acked_version, .delta = delta};

	switch (ct->sync) {
	case XD_SUB_SYNCED:
		s.config = XD_CONFIG_SYNCED;
		s.synced = true;
		/* held without an ACK too (rule S12): it is the current one */
		s.version = ct->current ? xd_table_version(ct->current) :
					  sub->acked_version;
		break;
	case XD_SUB_NACKED:
		s.config = XD_CONFIG_ERROR;
		s.nacked = true;
		break;
	case XD_SUB_PENDING:
		s.config = sub->state == XD_SUB_IN_FLIGHT ? XD_CONFIG_STALE :
							    XD_CONFIG_NOT_SENT;
		break;
	}
	s.answered = ct->sync == XD_SUB_SYNCED || sub->sent_version[0] != '\0';
	/* Secrets' contents never leave through CSDS, whoever asks. */
	s.contents = !q->exclude_contents &&
		     !xd_rtype_url_secret(ct->type_url, strlen(ct->type_url));
	return s;
}

/* One resource's statuses. */
struct res_status {
	int config, client;
	const struct xd_entry *shown;   /* xds_config, or NULL */
	const struct xd_entry *refused; /* with error_state: what the client
					 * NACKed of it; NULL: no error */
};

/*
 * Resource by resource, from what the client runs (the content it last
 * ACKed, sub.h) and, after a NACK, what it refused (the content it
 * answered last). A SotW NACK refuses the whole response: every
 * resource in it. A delta response carries what changed, so its NACK
 * concerns the resources that differ from what the client runs; the
 * others it still runs, ACKed. A resource the client was never seen to
 * ACK is REQUESTED.
 */
static struct res_status res_status(const struct type_status *s,
				     const struct xd_client_resource *res)
{
	const struct xd_entry *ran = res->running, *e = res->current;
	struct res_status r = {.config = s->config, .shown = e};

	if (s->nacked) {
		const struct xd_entry *refused = res->held;

		if (refused != NULL &&
		    (!s->delta || ran == NULL || ran->hash != refused->hash)) {
			r.client = XD_CLIENT_NACKED;
			r.shown = ran; /* what it kept running */
			r.refused = refused;
			return r;
		}
		/* not in the refused response */
		r.config = (ran != NULL ? e != NULL && ran->hash == e->hash :
					  e == NULL) ?
				   XD_CONFIG_SYNCED :
				   XD_CONFIG_NOT_SENT;
	}
	if (e == NULL && s->answered)
		r.client = XD_CLIENT_DOES_NOT_EXIST;
	else if (s->synced || ran != NULL)
		r.client = XD_CLIENT_ACKED;
	else
		r.client = XD_CLIENT_REQUESTED;
	return r;
}

static void put_any(struct xd_buf *b, uint32_t field, const char *type_url,
		    const struct xd_entry *e)
{
	size_t mark;

	xd_wire_tag(b, field, XD_WT_LEN);
	mark = xd_wire_open(b);
	xd_wire_bytes(b, XD_ANY_TYPE_URL, type_url, strlen(type_url));
	xd_wire_bytes(b, XD_ANY_VALUE, e->msg.data, e->msg.len);
	xd_wire_close(b, mark);
}

/* One GenericXdsConfig as a ClientConfig field: a resource the client
 * asks for (its name, what the table has under it now, NULL if
 * nothing, what the client runs and holds). */
static void put_config(struct xd_buf *b, const struct xd_client_type *ct,
		       const struct type_status *s,
		       const struct xd_client_resource *res)
{
	const struct xd_sub *sub = ct->sub;
	struct res_status r = res_status(s, res);
	size_t mark, m2;

	/* error_state goes with NACKED, and only with it */
	XD_ASSERT_INFO((r.refused != NULL) == (r.client == XD_CLIENT_NACKED),
		       "%s '%.*s': client status %d", ct->type_url,
		       (int)res->name.len, res->name.data, r.client);
	xd_wire_tag(b, XD_CLIENT_CONFIG_GENERIC, XD_WT_LEN);
	mark = xd_wire_open(b);
	put_str(b, XD_GENERIC_TYPE_URL, ct->type_url);
	put_text(b, XD_GENERIC_NAME, res->name.data, res->name.len);
	put_str(b, XD_GENERIC_VERSION_INFO, s->version);
	if (r.shown != NULL && s->contents)
		put_any(b, XD_GENERIC_XDS_CONFIG, ct->type_url, r.shown);
	put_timestamp(b, XD_GENERIC_LAST_UPDATED, sub->acked_at_ms);
	put_enum(b, XD_GENERIC_CONFIG_STATUS, r.config);
	put_enum(b, XD_GENERIC_CLIENT_STATUS, r.client);
	if (r.refused != NULL) {
		xd_wire_tag(b, XD_GENERIC_ERROR_STATE, XD_WT_LEN);
		m2 = xd_wire_open(b);
		if (s->contents)
			put_any(b, XD_FAILURE_CONFIGURATION, ct->type_url,
				r.refused);
		put_timestamp(b, XD_FAILURE_LAST_ATTEMPT, sub->nack_at_ms);
		if (sub->nack_message != NULL)
			put_str(b, XD_FAILURE_DETAILS, sub->nack_message);
		put_str(b, XD_FAILURE_VERSION_INFO, sub->sent_version);
		xd_wire_close(b, m2);
	}
	xd_wire_close(b, mark);
}

struct put_ctx {
	struct xd_buf *b;
	const struct xd_client_type *ct;
	const struct type_status *s;
};

static void put_one(void *arg, const struct xd_client_resource *res)
{
	const struct put_ctx *p = arg;

	put_config(p->b, p->ct, p->s, res);
}

/*
 * Every resource the stream asks for of one type, each once
 * (xd_client_type_resources): by wildcard, by name, by locator (under its
 * name, rule P1), a glob collection's members under their own names as
 * the client was sent them (rule X2), an empty one as the glob's name,
 * which does not exist, as the client was told with removed_resources.
 */
static void put_type(struct xd_buf *b, const struct xd_client_type *ct,
		     bool delta, const struct xd_csds_query *q)
{
	struct type_status s = type_status(ct, delta, q);
	struct put_ctx p = {b, ct, &s};

	/* the glob members are memoized on the table (derived.h); this
	 * runs on the loop thread, as the sessions that share that memo
	 * do */
	xd_client_type_resources(ct, delta, put_one, &p);
}

/* One node: the streams that share its id and cluster. */
struct group_type {
	char *type_url;
	struct xd_buf configs; /* GenericXdsConfig fields, whole */
};

struct group {
	char *id, *cluster;
	struct xd_buf node; /* the Node message */
	struct group_type *types;
	size_t ntypes;
};

/* The answer being built: each node's parts are copies, so streams
 * that close between two steps leave it whole. */
struct render {
	struct xd_sessions_cursor cur;
	const struct xd_csds_query *q;
	struct group *groups;
	size_t ngroups;
	uint32_t *index; /* open addressing: group + 1, 0 for empty */
	size_t index_cap;
	size_t bytes; /* the groups' parts held (their lengths) */
	size_t max;   /* of the step under way */
	bool over;
	size_t written; /* groups appended to the answer, once walked */
};

static uint32_t group_hash(const char *id, const char *cluster)
{
	return xd_text_hash(id, strlen(id)) * 31u ^
	       xd_text_hash(cluster, strlen(cluster));
}

static void index_put(struct render *r, uint32_t g)
{
	size_t mask = r->index_cap - 1;
	size_t i = group_hash(r->groups[g].id, r->groups[g].cluster) & mask;

	while (r->index[i] != 0)
		i = (i + 1) & mask;
	r->index[i] = g + 1;
}

static struct group *group_of(struct render *r, const char *id,
			      const char *cluster)
{
	size_t mask, i;
	struct group *g;

	if (r->index_cap == 0 || (r->ngroups + 1) * 2 > r->index_cap) {
		free(r->index);
		r->index_cap = r->index_cap ? r->index_cap * 2 : 64;
		r->index = xd_calloc(r->index_cap, sizeof(*r->index));
		for (uint32_t k = 0; k < r->ngroups; k++)
			index_put(r, k);
	}
	/* at most half full, a power of two: the probe meets a free slot */
	XD_ASSERT_INFO((r->ngroups + 1) * 2 <= r->index_cap &&
			       (r->index_cap & (r->index_cap - 1)) == 0,
		       "%zu nodes in %zu slots", r->ngroups, r->index_cap);
	mask = r->index_cap - 1;
	for (i = group_hash(id, cluster) & mask; r->index[i] != 0;
	     i = (i + 1) & mask) {
		g = &r->groups[r->index[i] - 1];
		if (strcmp(g->id, id) == 0 && strcmp(g->cluster, cluster) == 0)
			return g;
	}
	r->groups = xd_reallocarray(r->groups, r->ngroups + 1,
				    sizeof(*r->groups));
	g = &r->groups[r->ngroups];
	memset(g, 0, sizeof(*g));
	g->id = xd_strdup(id);
	g->cluster = xd_strdup(cluster);
	r->index[i] = (uint32_t)++r->ngroups;
	return g;
}

static struct group_type *type_of(struct group *g, const char *type_url)
{
	struct group_type *t;

	for (size_t i = 0; i < g->ntypes; i++)
		if (strcmp(g->types[i].type_url, type_url) == 0)
			return &g->types[i];
	g->types = xd_reallocarray(g->types, g->ntypes + 1, sizeof(*g->types));
	t = &g->types[g->ntypes++];
	t->type_url = xd_strdup(type_url);
	t->configs = (struct xd_buf)XD_BUF_INIT;
	return t;
}

/* The node as xdsd keeps it (client.h, struct xd_client_view). */
static void put_node(struct xd_buf *b, const struct xd_client_view *c)
{
	size_t mark, inner;

	put_str(b, XD_NODE_ID, c->node_id);
	put_str(b, XD_NODE_CLUSTER, c->node_cluster);
	if (c->region[0] != '\0' || c->zone[0] != '\0' || c->sub_zone[0] != '\0') {
		xd_wire_tag(b, XD_NODE_LOCALITY, XD_WT_LEN);
		mark = xd_wire_open(b);
		put_str(b, XD_LOCALITY_REGION, c->region);
		put_str(b, XD_LOCALITY_ZONE, c->zone);
		put_str(b, XD_LOCALITY_SUB_ZONE, c->sub_zone);
		xd_wire_close(b, mark);
	}
	put_str(b, XD_NODE_USER_AGENT_NAME, c->user_agent_name);
	if (c->user_agent_build == NULL) {
		put_str(b, XD_NODE_USER_AGENT_VERSION, c->user_agent_version);
		return;
	}
	/* as the client sent it: a BuildVersion, not a string */
	xd_wire_tag(b, XD_NODE_USER_AGENT_BUILD_VERSION, XD_WT_LEN);
	mark = xd_wire_open(b);
	xd_wire_tag(b, XD_BUILD_VERSION_VERSION, XD_WT_LEN);
	inner = xd_wire_open(b);
	put_varint(b, XD_SEMVER_MAJOR, c->user_agent_build->major);
	put_varint(b, XD_SEMVER_MINOR, c->user_agent_build->minor);
	put_varint(b, XD_SEMVER_PATCH, c->user_agent_build->patch);
	xd_wire_close(b, inner);
	xd_wire_close(b, mark);
}

/* Streams come oldest first: a newer stream's node and types replace
 * an older one's. */
static void each(void *ctx, const struct xd_client_view *c)
{
	struct render *r = ctx;
	struct group *g;

	if (r->over || !c->has_node ||
	    !xd_csds_query_matches(r->q, c->node_id, strlen(c->node_id)))
		return;
	g = group_of(r, c->node_id, c->node_cluster);
	r->bytes -= g->node.len;
	g->node.len = 0;
	put_node(&g->node, c);
	r->bytes += g->node.len;
	for (size_t i = 0; i < c->ntypes; i++) {
		struct group_type *t = type_of(g, c->types[i].type_url);

		r->bytes -= t->configs.len;
		t->configs.len = 0;
		put_type(&t->configs, &c->types[i], c->method->delta, r->q);
		r->bytes += t->configs.len;
	}
	if (r->bytes > r->max)
		r->over = true;
}

static void group_free(struct group *g)
{
	free(g->id);
	free(g->cluster);
	xd_buf_free(&g->node);
	for (size_t i = 0; i < g->ntypes; i++) {
		free(g->types[i].type_url);
		xd_buf_free(&g->types[i].configs);
	}
	free(g->types);
}

struct xd_csds_build *xd_csds_build_new(struct xd_sessions *sessions,
					const struct xd_csds_query *q)
{
	struct render *r = xd_calloc(1, sizeof(*r));

	r->q = q;
	xd_sessions_cursor_open(sessions, &r->cur);
	return (struct xd_csds_build *)r;
}

/* The bytes of a field's tag, length and `len` bytes of body. */
static size_t field_size(uint32_t field, size_t len)
{
	return xd_wire_varint_size((uint64_t)field << 3 | XD_WT_LEN) +
	       xd_wire_varint_size(len) + len;
}

/* A group's ClientConfig, whole: its tag and length too. */
static size_t group_size(const struct group *g)
{
	size_t inner = field_size(XD_CLIENT_CONFIG_NODE, g->node.len);

	for (size_t k = 0; k < g->ntypes; k++)
		inner += g->types[k].configs.len;
	return field_size(XD_CSDS_RESPONSE_CONFIG, inner);
}

int xd_csds_build_step(struct xd_csds_build *b, struct xd_buf *out,
		       uint64_t deadline_ns, size_t max)
{
	struct render *r = (struct render *)b;

	/* the streams, and the glob members memoized on their tables */
	XD_ASSERT_LOOP();
	r->max = max;
	if (r->bytes > max)
		r->over = true;
	if (!r->over && !xd_sessions_cursor_walk(&r->cur, each, r, deadline_ns))
		return r->over ? -1 : 0;
	if (r->over)
		return -1;
	if (r->written == 0 && r->ngroups > 0) {
		/* the answer's size is known now: one allocation of it,
		 * where growing by doubling could hold twice as much */
		size_t total = 0;

		for (size_t i = 0; i < r->ngroups; i++)
			total += group_size(&r->groups[i]);
		if (total > max)
			return -1;
		xd_buf_reserve(out, total);
	}
	if (r->bytes + out->len > max)
		return -1;
	/* then the answer: tens of MB for thousands of nodes, copied a
	 * slice at a time too, each node's parts freed once copied */
	while (r->written < r->ngroups) {
		struct group *g = &r->groups[r->written++];
		size_t mark;

		xd_wire_tag(out, XD_CSDS_RESPONSE_CONFIG, XD_WT_LEN);
		mark = xd_wire_open(out);
		xd_wire_bytes(out, XD_CLIENT_CONFIG_NODE, g->node.data,
			      g->node.len);
		for (size_t k = 0; k < g->ntypes; k++)
			xd_buf_append(out, g->types[k].configs.data,
				      g->types[k].configs.len);
		xd_wire_close(out, mark);
		r->bytes -= g->node.len;
		for (size_t k = 0; k < g->ntypes; k++)
			r->bytes -= g->types[k].configs.len;
		group_free(g);
		memset(g, 0, sizeof(*g));
		if (r->written % 64 == 0 && uv_hrtime() >= deadline_ns)
			return 0;
	}
	return 1;
}

size_t xd_csds_build_bytes(const struct xd_csds_build *b)
{
	return ((const struct render *)b)->bytes;
}

void xd_csds_build_free(struct xd_csds_build *b)
{
	struct render *r = (struct render *)b;

	if (r == NULL)
		return;
	xd_sessions_cursor_close(&r->cur);
	for (size_t i = 0; i < r->ngroups; i++)
		group_free(&r->groups[i]);
	free(r->groups);
	free(r->index);
	free(r);
}
