/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The make-before-break sequencer (protocol/sequence.c, rule A2 of
 * docs/protocol.md) without sockets: a simulated client's per-type
 * state, a target snapshot and a clock in, the next step out. The tests
 * play the client: they record each response as sent, answer it (ACK),
 * subscribe, and move the target and the clock.
 */
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "protocol/nameset.h"
#include "protocol/sequence.h"
#include "protocol/sub.h"
#include "snapshot/snapshot.h"
#include "xdtest.h"

/* When requests come (Unix ms), as the daemon passes it in: the engine
 * reads no clock. */
#define WALL_MS INT64_C(1700000000000)

/*
 * A table of `type` from "name=content" specs; a cluster's content may
 * end in "@endpoints", the ClusterLoadAssignment it refers to (what
 * resource.c finds in an EDS cluster's eds_cluster_config), a route
 * configuration's in "@cluster", the cluster its route sends to.
 */
static struct xd_table *table_of(enum xd_rtype type, const char *const *spec,
				 size_t n)
{
	struct xd_table_builder *b = xd_table_builder_new(type);

	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(spec[i], '='), *at = strchr(spec[i], '@');
		struct xd_ref ref = {type == XD_ROUTE ? XD_CLUSTER : XD_ENDPOINT,
				     at != NULL ? at + 1 : NULL};
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)(eq - spec[i]), spec[i]);
		ck_assert_int_eq(xd_table_builder_add(b, name, (const uint8_t *)eq + 1,
						      strlen(eq + 1), &ref,
						      at != NULL ? 1 : 0, NULL, 0,
						      "s.yaml", (uint32_t)i + 1, NULL),
				 0);
	}
	return xd_table_builder_finish(b);
}

#define MAX_NAMES 8

static const char *tname(enum xd_rtype t)
{
	return xd_rtype_info(t)->service;
}

/* The type whose service is named `name` ("CDS"). */
static enum xd_rtype type_named(const char *name)
{
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		if (strcmp(name, tname((enum xd_rtype)t)) == 0)
			return (enum xd_rtype)t;
	ck_abort_msg("no type '%s'", name);
	return XD_SECRET;
}

/* A snapshot from "CDS a=A1@ea b=B1; EDS ea=EA1": per type, its
 * resources. Types not named are empty. */
static struct xd_snapshot *snapshot_of(const char *spec)
{
	struct xd_table *tables[XD_RTYPE_COUNT] = {NULL};
	char *copy = strdup(spec), *part, *save;

	for (part = strtok_r(copy, ";", &save); part != NULL;
	     part = strtok_r(NULL, ";", &save)) {
		const char *res[MAX_NAMES];
		char *word, *save2;
		size_t n = 0;
		enum xd_rtype t = type_named(strtok_r(part, " ", &save2));

		while ((word = strtok_r(NULL, " ", &save2)) != NULL) {
			ck_assert_uint_lt(n, MAX_NAMES);
			res[n++] = word;
		}
		tables[t] = table_of(t, res, n);
	}
	free(copy);
	return xd_snapshot_new("k", tables);
}

/* ---------------- a simulated client ---------------- */

struct client {
	struct xd_sub subs[XD_RTYPE_COUNT];
	struct xd_seq_mode mode;
	struct xd_snapshot *from, *to; /* owned */
	struct xd_snapshot *target;    /* from or to */
	uint64_t now, nonce;
	struct xd_seq_waits waits;  /* the stream's waits */
	enum xd_seq_waited eds, uptake; /* of the last step */
	int sent;                   /* type sent by the last step, or -1 */
	/* SotW requests repeat the whole list: the names of each type */
	char text[XD_RTYPE_COUNT][64];
	struct xd_name names[XD_RTYPE_COUNT][MAX_NAMES];
	size_t nnames[XD_RTYPE_COUNT];
	char out[256];
};

static struct xd_name nonce_of(const struct xd_sub *s, char *buf, size_t len)
{
	if (s->nonce == 0)
		return (struct xd_name){"", 0};
	snprintf(buf, len, "%llu", (unsigned long long)s->nonce);
	return (struct xd_name){buf, strlen(buf)};
}

/*
 * The client asks for `list` ("a,b"; NULL: a wildcard first request).
 * SotW: the whole list, with the type's latest nonce, as Envoy does.
 * Delta: only the names it did not subscribe to yet, without a nonce.
 */
static void subscribe(struct client *c, enum xd_rtype t, const char *list)
{
	struct xd_sub *s = &c->subs[t];
	const struct xd_rtype_info *info = xd_rtype_info(t);
	struct xd_name add[MAX_NAMES];
	struct xd_request r = {0};
	char nbuf[24];
	size_t nadd = 0;

	c->nnames[t] = 0;
	if (list != NULL) {
		snprintf(c->text[t], sizeof(c->text[t]), "%s", list);
		for (char *p = c->text[t]; *p != '\0';) {
			size_t len = strcspn(p, ",");

			ck_assert_uint_lt(c->nnames[t], MAX_NAMES);
			c->names[t][c->nnames[t]++] = (struct xd_name){p, len};
			p += len + (p[len] == ',');
		}
	}
	if (c->mode.delta) {
		for (size_t i = 0; i < c->nnames[t]; i++)
			if (!xd_nameset_has(s->want.set, c->names[t][i].data,
					    c->names[t][i].len))
				add[nadd++] = c->names[t][i];
		r.delta = true;
		r.names = add;
		r.nnames = nadd;
		ck_assert_int_eq(xd_sub_delta_request(s, &r, info->wildcard_ok, NULL, WALL_MS),
				 XD_SUB_REQUEST);
		return;
	}
	r.nonce = nonce_of(s, nbuf, sizeof(nbuf));
	r.names = c->names[t];
	r.nnames = c->nnames[t];
	r.names_hash = 1469598103934665603ULL; /* FNV-1a of the list */
	for (const char *q = c->text[t]; *q != '\0'; q++)
		r.names_hash = (r.names_hash ^ (unsigned char)*q) * 1099511628211ULL;
	ck_assert_int_ne(xd_sub_sotw_request(s, &r, info->wildcard_ok,
					     info->full_state, NULL, WALL_MS),
			 XD_SUB_STALE);
}

/* The client ACKs the response of `t` in flight. */
static void ack(struct client *c, enum xd_rtype t)
{
	struct xd_sub *s = &c->subs[t];
	struct xd_request r = {0};
	char nbuf[24];

	ck_assert_msg(s->state == XD_SUB_IN_FLIGHT, "no %s response to ACK",
		      tname(t));
	r.nonce = nonce_of(s, nbuf, sizeof(nbuf));
	if (c->mode.delta) {
		ck_assert_int_eq(xd_sub_delta_request(s, &r, false, NULL, WALL_MS), XD_SUB_ACK);
		return;
	}
	/* the same list as before: the hash it was recorded with */
	r.names = c->names[t];
	r.nnames = c->nnames[t];
	r.names_hash = s->names_hash;
	ck_assert_int_eq(xd_sub_sotw_request(s, &r, xd_rtype_info(t)->wildcard_ok,
					     xd_rtype_info(t)->full_state, NULL, WALL_MS),
			 XD_SUB_ACK);
}

/* What a body carries: SotW, each resource's content (up to any '@');
 * delta, each name ("?" after a missing one) and "-name" per removal. */
static void describe(struct client *c, enum xd_rtype t, struct xd_body *b)
{
	const uint8_t *data = GRPC_SLICE_START_PTR(b->slice);
	size_t len = GRPC_SLICE_LENGTH(b->slice), n;
	char *p = c->out;

	n = (size_t)snprintf(p, sizeof(c->out), "%s ", tname(t));
	if (!c->mode.delta) {
		Envoy__Service__Discovery__V3__DiscoveryResponse *r =
			envoy__service__discovery__v3__discovery_response__unpack(NULL, len, data);

		ck_assert_ptr_nonnull(r);
		for (size_t i = 0; i < r->n_resources; i++) {
			const ProtobufCBinaryData *v = &r->resources[i]->value;
			const void *at = memchr(v->data, '@', v->len);
			int vlen = (int)(at ? (size_t)((const uint8_t *)at - v->data) : v->len);

			n += (size_t)snprintf(p + n, sizeof(c->out) - n, "%s%.*s",
					      i ? "," : "", vlen, v->data);
		}
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
		return;
	}
	Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *d =
		envoy__service__discovery__v3__delta_discovery_response__unpack(NULL, len, data);

	ck_assert_ptr_nonnull(d);
	for (size_t i = 0; i < d->n_resources; i++)
		n += (size_t)snprintf(p + n, sizeof(c->out) - n, "%s%s%s", i ? "," : "",
				      d->resources[i]->name,
				      d->resources[i]->resource ? "" : "?");
	for (size_t i = 0; i < d->n_removed_resources; i++)
		n += (size_t)snprintf(p + n, sizeof(c->out) - n, "%s-%s",
				      i || d->n_resources ? "," : "",
				      d->removed_resources[i]);
	envoy__service__discovery__v3__delta_discovery_response__free_unpacked(d, NULL);
}

/*
 * One step of the sequencer, as the session takes it: a response due is
 * recorded as sent. Returns "CDS A2,B1" for a response, "(CDS in flight)",
 * "(wait)" or "(idle)".
 */
static const char *pump(struct client *c)
{
	struct xd_seq_step st;

	xd_seq_next(c->subs, c->target, &c->mode, c->now, &c->waits, &st);
	c->eds = st.eds;
	c->uptake = st.uptake;
	c->sent = st.action == XD_SEQ_SEND ? (int)st.type : -1;
	switch (st.action) {
	case XD_SEQ_SEND:
		describe(c, st.type, st.body);
		xd_sub_sent(&c->subs[st.type], st.table, ++c->nonce, 0, 0);
		xd_seq_step_clear(&st);
		break;
	case XD_SEQ_INFLIGHT:
		snprintf(c->out, sizeof(c->out), "(%s in flight)", tname(st.type));
		break;
	case XD_SEQ_WAIT_EDS:
		snprintf(c->out, sizeof(c->out), "(wait)");
		break;
	case XD_SEQ_IDLE:
		snprintf(c->out, sizeof(c->out), "(idle)");
		break;
	}
	ck_assert_ptr_null(st.body);
	ck_assert_ptr_null(st.table);
	return c->out;
}

/* Pumps and ACKs until nothing is due; returns the types sent in order
 * ("CDS EDS LDS"). The client answers at once, as Envoy does. */
static const char *settle(struct client *c)
{
	static char order[256];

	order[0] = '\0';
	for (int i = 0; i < 64; i++) {
		pump(c);
		if (c->sent < 0)
			break;
		strcat(order, *order ? " " : "");
		strcat(order, tname((enum xd_rtype)c->sent));
		ack(c, (enum xd_rtype)c->sent);
	}
	ck_assert_str_eq(c->out, "(idle)");
	return order;
}


/* The next step is `want`; a response it sends is ACKed at once. */
static void expect(struct client *c, const char *want)
{
	ck_assert_str_eq(pump(c), want);
	if (c->sent >= 0)
		ack(c, (enum xd_rtype)c->sent);
}

/*
 * A client of `method` ("ADS", "delta ADS", "CDS": a per-type one) that
 * subscribed as `subs` says ("CDS *; EDS ea,eb": per type, the names of
 * its first request; "*" a wildcard one) while `from` was served, and
 * took everything (the types sent, in `order`). Then the target becomes
 * `to`.
 */
static void begin(struct client *c, const char *method, const char *subs,
		  const char *from, const char *order, const char *to)
{
	char *copy = strdup(subs), *part, *save;
	bool delta = strncmp(method, "delta ", 6) == 0;

	grpc_init();
	memset(c, 0, sizeof(*c));
	if (delta)
		method += 6;
	c->mode.aggregated = strcmp(method, "ADS") == 0;
	c->mode.type = c->mode.aggregated ? XD_SECRET : type_named(method);
	c->mode.delta = delta;
	c->mode.form = delta ? XD_FORM_DELTA : XD_FORM_SOTW;
	c->now = 1000;
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_sub_init(&c->subs[t], 0, tname((enum xd_rtype)t));
	c->from = snapshot_of(from);
	c->to = snapshot_of(to);
	c->target = c->from;
	for (part = strtok_r(copy, ";", &save); part != NULL;
	     part = strtok_r(NULL, ";", &save)) {
		char *save2, *type = strtok_r(part, " ", &save2);
		char *names = strtok_r(NULL, " ", &save2);

		subscribe(c, type_named(type), strcmp(names, "*") == 0 ? NULL : names);
	}
	free(copy);
	ck_assert_str_eq(settle(c), order);
	c->target = c->to;
}

/* The client is in step: nothing is due. Frees everything; no name set
 * may outlive the client. */
static void end(struct client *c)
{
	ck_assert_str_eq(pump(c), "(idle)");
	for (int t = 0; t < XD_RTYPE_COUNT; t++)
		xd_sub_clear(&c->subs[t]);
	xd_snapshot_unref(c->from);
	xd_snapshot_unref(c->to);
	ck_assert_uint_eq(xd_nameset_live(), 0);
	grpc_shutdown_blocking();
}

/* ---------------- rule A2 on the aggregated methods ---------------- */

/* rule A2: one change touching every type goes out SDS, RTDS, CDS, EDS, LDS,
 * RDS, SRDS, VHDS, one at a time, whatever order the client subscribed
 * in. _i: 0 SotW, 1 delta. */
START_TEST(a2_order_of_one_change_touching_all)
{
	const char *order = "SDS RTDS CDS EDS LDS RDS SRDS VHDS";
	struct client c;

	begin(&c, _i ? "delta ADS" : "ADS",
	      "VHDS r/vh; SRDS *; RDS r; LDS *; EDS e; CDS *; RTDS rt; SDS s",
	      "SDS s=S1; RTDS rt=T1; CDS c=C1@e; EDS e=E1; LDS l=L1; RDS r=R1;"
	      "SRDS sr=SR1; VHDS r/vh=V1",
	      order,
	      "SDS s=S2; RTDS rt=T2; CDS c=C2@e; EDS e=E2; LDS l=L2; RDS r=R2;"
	      "SRDS sr=SR2; VHDS r/vh=V2");
	ck_assert_str_eq(settle(&c), order);
	end(&c);
}
END_TEST

/* rule A2: a later type waits while an earlier one is in flight, however
 * long; the answer lets it go. */
START_TEST(a2_later_type_waits_for_earlier_in_flight)
{
	struct client c;

	begin(&c, "ADS", "LDS *; CDS *", "CDS c=C1; LDS l=L1", "CDS LDS",
	      "CDS c=C2; LDS l=L2");
	ck_assert_str_eq(pump(&c), "CDS C2");
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	c.now += 60000;
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	ck_assert_int_ne(c.subs[XD_LISTENER].state, XD_SUB_IN_FLIGHT);
	ack(&c, XD_CLUSTER);
	ck_assert_str_eq(pump(&c), "LDS L2");
	ck_assert_str_eq(pump(&c), "(LDS in flight)");
	ack(&c, XD_LISTENER);
	end(&c);
}
END_TEST

/* rule A2: endpoints go while clusters are in flight, since a client that
 * warms its new clusters answers CDS only once their endpoints came (Envoy
 * does, once initialized); listeners still wait for the CDS answer. _i: 0
 * SotW, 1 delta. */
START_TEST(a2_endpoints_go_while_clusters_in_flight)
{
	struct client c;

	begin(&c, _i ? "delta ADS" : "ADS", "CDS *; EDS ea; LDS *",
	      "CDS a=A1@ea; EDS ea=EA1; LDS l=L1", "CDS EDS LDS",
	      "CDS a=A1@ea b=B1@eb; EDS ea=EA1 eb=EB1; LDS l=L2");
	ck_assert_str_eq(pump(&c), _i ? "CDS b" : "CDS A1,B1");
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	/* the new cluster warms: its endpoints are asked for, CDS unanswered */
	subscribe(&c, XD_ENDPOINT, "ea,eb");
	ck_assert_str_eq(pump(&c), _i ? "EDS eb" : "EDS EB1");
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	ack(&c, XD_ENDPOINT);
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	ck_assert_int_ne(c.subs[XD_LISTENER].state, XD_SUB_IN_FLIGHT);
	ack(&c, XD_CLUSTER);
	expect(&c, _i ? "LDS l" : "LDS L2");
	end(&c);
}
END_TEST

/* rules A2, G3: locality endpoints go while clusters are in flight too:
 * Envoy warms a new cluster until its LEDS collection came as well, and
 * holds its CDS answer meanwhile. They go after the endpoints, and
 * listeners still wait for the CDS answer. */
START_TEST(a2_locality_endpoints_go_while_clusters_in_flight)
{
	struct client c;

	begin(&c, "delta ADS", "CDS *; EDS ea; LEDS g; LDS *",
	      "CDS a=A1@ea; EDS ea=EA1; LEDS g=G1; LDS l=L1", "CDS EDS LEDS LDS",
	      "CDS a=A1@ea b=B1@eb; EDS ea=EA1 eb=EB1; LEDS g=G1 h=H1; LDS l=L2");
	ck_assert_str_eq(pump(&c), "CDS b");
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	subscribe(&c, XD_ENDPOINT, "ea,eb");
	ck_assert_str_eq(pump(&c), "EDS eb");
	/* the new cluster's load assignment names a collection: asked for,
	 * and sent with CDS and EDS both unanswered */
	subscribe(&c, XD_LB_ENDPOINT, "g,h");
	ck_assert_str_eq(pump(&c), "LEDS h");
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	ack(&c, XD_ENDPOINT);
	ack(&c, XD_LB_ENDPOINT);
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	ck_assert_int_ne(c.subs[XD_LISTENER].state, XD_SUB_IN_FLIGHT);
	ack(&c, XD_CLUSTER);
	expect(&c, "LDS l");
	end(&c);
}
END_TEST

/* rule A2: clusters the old listeners and routes used stay in what the client
 * is sent (the union) until LDS and RDS are settled on the new snapshot;
 * then a final CDS drops them. Route r moves from cluster a to the new
 * cluster c. _i: 0 SotW (full state: the union's content), 1 delta (no
 * removal until the end). */
START_TEST(a2_dropped_clusters_stay_until_listeners_settle)
{
	struct client c;

	begin(&c, _i ? "delta ADS" : "ADS", "CDS *; LDS *; RDS r",
	      "CDS a=A1 b=B1; LDS l=L1; RDS r=R1", "CDS LDS RDS",
	      "CDS b=B1 c=C1; LDS l=L2; RDS r=R2");
	expect(&c, _i ? "CDS c" : "CDS A1,B1,C1");
	expect(&c, _i ? "LDS l" : "LDS L2");
	/* listeners settled, routes not yet: a stays */
	ck_assert_str_eq(pump(&c), _i ? "RDS r" : "RDS R2");
	ck_assert_ptr_nonnull(xd_table_find(xd_sub_held(&c.subs[XD_CLUSTER]), "a", 1));
	ack(&c, XD_ROUTE);
	expect(&c, _i ? "CDS -a" : "CDS B1,C1");
	ck_assert_ptr_eq(xd_sub_held(&c.subs[XD_CLUSTER]), xd_snapshot_table(c.to, XD_CLUSTER));
	end(&c);
}
END_TEST

/*
 * rule A2, SotW with clusters subscribed by name, as gRPC's clients do:
 * the route moves from a to a new cluster c and a is dropped. Once the
 * client has the route it asks for c, and it goes on using a until c
 * comes: a stays until the client's subscription names c, and the
 * answer to that request carries c beside a; once the client holds c
 * (which needs no endpoints), a goes.
 */
START_TEST(a2_dropped_clusters_stay_until_new_ones_subscribed)
{
	struct client c;

	begin(&c, "ADS", "CDS a; LDS *; RDS r", "CDS a=A1; LDS l=L1; RDS r=R1@a",
	      "CDS LDS RDS", "CDS c=C1; LDS l=L1; RDS r=R2@c");
	/* c is not asked for yet, a is unchanged: nothing for clusters */
	expect(&c, "RDS R2");
	/* routes settled, c not subscribed: a is not removed */
	ck_assert_str_eq(pump(&c), "(idle)");
	ck_assert_ptr_nonnull(xd_table_find(xd_sub_held(&c.subs[XD_CLUSTER]), "a", 1));
	subscribe(&c, XD_CLUSTER, "a,c");
	expect(&c, "CDS A1,C1");
	expect(&c, "CDS C1");
	ck_assert_ptr_eq(xd_sub_held(&c.subs[XD_CLUSTER]), xd_snapshot_table(c.to, XD_CLUSTER));
	end(&c);
}
END_TEST

/*
 * rule A2, clusters subscribed by name: the route moves from a (with
 * endpoints ea) to a new cluster c (with ec). The client asks for c once
 * it has the route, for ec once it has c, and goes on using a until
 * both came: a stays (and in delta ea) after the client asked for c,
 * until it ACKed c and ec, not merely asked for them or was sent them;
 * then a last response removes it. _i: 0 SotW, 1 delta.
 */
START_TEST(a2_named_dropped_clusters_stay_until_new_ones_held)
{
	struct client c;
	uint64_t start;

	begin(&c, _i ? "delta ADS" : "ADS", "CDS a; EDS ea; LDS *; RDS r",
	      "CDS a=A1@ea; EDS ea=EA1; LDS l=L1; RDS r=R1@a", "CDS EDS LDS RDS",
	      "CDS c=C1@ec; EDS ec=EC1; LDS l=L1; RDS r=R2@c");
	expect(&c, _i ? "RDS r" : "RDS R2");
	ck_assert_str_eq(pump(&c), "(idle)");
	subscribe(&c, XD_CLUSTER, "a,c");
	start = c.now;
	/* asked for: sent beside a, which stays */
	ck_assert_str_eq(pump(&c), _i ? "CDS c" : "CDS A1,C1");
	ck_assert_int_eq(c.uptake, XD_WAITED_WAITING);
	ck_assert_int_eq(c.waits.uptake.state, XD_WAIT_RUNNING);
	ck_assert_uint_eq(c.waits.uptake.until, start + XD_SEQ_WAIT_MS);
	c.now += 10;
	ack(&c, XD_CLUSTER);
	/* c held, ec not yet asked for: a stays (listeners wait for ec) */
	ck_assert_str_eq(pump(&c), "(wait)");
	ck_assert_ptr_nonnull(xd_table_find(xd_sub_held(&c.subs[XD_CLUSTER]), "a", 1));
	ck_assert_int_eq(c.waits.uptake.state, XD_WAIT_RUNNING);
	subscribe(&c, XD_ENDPOINT, "ea,ec");
	/* ec sent, not ACKed: a stays, and in delta ea */
	ck_assert_str_eq(pump(&c), _i ? "EDS ec" : "EDS EC1");
	ck_assert_str_eq(pump(&c), "(EDS in flight)");
	ck_assert_ptr_nonnull(xd_table_find(xd_sub_held(&c.subs[XD_CLUSTER]), "a", 1));
	ack(&c, XD_ENDPOINT);
	/* both held: the old ones go, before the deadline */
	if (_i) {
		ck_assert_str_eq(pump(&c), "CDS -a");
		ck_assert_int_eq(c.uptake, XD_WAITED_OVER);
		ck_assert_str_eq(pump(&c), "EDS -ea");
		ack(&c, XD_ENDPOINT);
		ack(&c, XD_CLUSTER);
	} else {
		expect(&c, "CDS C1");
		ck_assert_int_eq(c.uptake, XD_WAITED_OVER);
	}
	ck_assert_int_eq(c.waits.uptake.state, XD_WAIT_NONE);
	ck_assert_ptr_eq(xd_sub_held(&c.subs[XD_CLUSTER]), xd_snapshot_table(c.to, XD_CLUSTER));
	end(&c);
}
END_TEST

/*
 * rule A2, clusters subscribed by name: a client that asked for the new
 * cluster but never takes up its endpoints keeps the old cluster (and in
 * delta its endpoints) XD_SEQ_WAIT_MS from when it asked, not longer.
 * _i: 0 SotW, 1 delta.
 */
START_TEST(a2_named_dropped_clusters_go_after_deadline)
{
	struct client c;
	uint64_t start;

	begin(&c, _i ? "delta ADS" : "ADS", "CDS a; EDS ea; LDS *; RDS r",
	      "CDS a=A1@ea; EDS ea=EA1; LDS l=L1; RDS r=R1@a", "CDS EDS LDS RDS",
	      "CDS c=C1@ec; EDS ec=EC1; LDS l=L1; RDS r=R2@c");
	expect(&c, _i ? "RDS r" : "RDS R2");
	subscribe(&c, XD_CLUSTER, "a,c");
	start = c.now;
	expect(&c, _i ? "CDS c" : "CDS A1,C1");
	c.now = start + XD_SEQ_WAIT_MS - 1;
	ck_assert_str_eq(pump(&c), "(wait)");
	ck_assert_int_eq(c.waits.uptake.state, XD_WAIT_RUNNING);
	ck_assert_ptr_nonnull(xd_table_find(xd_sub_held(&c.subs[XD_CLUSTER]), "a", 1));
	c.now = start + XD_SEQ_WAIT_MS;
	ck_assert_str_eq(pump(&c), _i ? "CDS -a" : "CDS C1");
	ck_assert_int_eq(c.uptake, XD_WAITED_LATE);
	ck_assert_int_eq(c.waits.uptake.state, XD_WAIT_OVERDUE);
	if (_i) {
		ck_assert_str_eq(pump(&c), "EDS -ea");
		ack(&c, XD_ENDPOINT);
	}
	ack(&c, XD_CLUSTER);
	/* the listeners' wait for ec, started later, runs out too */
	ck_assert_str_eq(pump(&c), "(wait)");
	c.now += XD_SEQ_WAIT_MS;
	end(&c);
}
END_TEST

/*
 * rule A2, a wildcard cluster subscription (Envoy's): once the listeners
 * and routes settled, the dropped cluster goes at once, whether the
 * client holds the new cluster's endpoints or not (here it never asks
 * for them, and the listeners' EDS wait ran out): no uptake wait.
 * _i: 0 SotW, 1 delta.
 */
START_TEST(a2_wildcard_dropped_clusters_go_without_uptake)
{
	struct client c;

	begin(&c, _i ? "delta ADS" : "ADS", "CDS *; EDS ea; LDS *; RDS r",
	      "CDS a=A1@ea; EDS ea=EA1; LDS l=L1; RDS r=R1@a", "CDS EDS LDS RDS",
	      "CDS c=C1@ec; EDS ec=EC1; LDS l=L1; RDS r=R2@c");
	expect(&c, _i ? "CDS c" : "CDS A1,C1");
	ck_assert_str_eq(pump(&c), "(wait)");
	c.now += XD_SEQ_WAIT_MS;
	expect(&c, _i ? "RDS r" : "RDS R2");
	if (_i) {
		ck_assert_str_eq(pump(&c), "CDS -a");
		ck_assert_str_eq(pump(&c), "EDS -ea");
		ack(&c, XD_ENDPOINT);
		ack(&c, XD_CLUSTER);
	} else {
		expect(&c, "CDS C1");
	}
	ck_assert_int_eq(c.uptake, XD_WAITED_UNTOUCHED);
	ck_assert_int_eq(c.waits.uptake.state, XD_WAIT_NONE);
	end(&c);
}
END_TEST

/* rule A2, delta: endpoints of dropped clusters are kept too, and removed
 * after the clusters; listeners wait for the new clusters' endpoints. */
START_TEST(a2_delta_keeps_endpoints_too)
{
	struct client c;

	begin(&c, "delta ADS", "CDS *; EDS ea; LDS *; RDS r",
	      "CDS a=A1@ea; EDS ea=EA1; LDS l=L1; RDS r=R1", "CDS EDS LDS RDS",
	      "CDS b=B1@eb; EDS eb=EB1; LDS l=L2; RDS r=R2");
	expect(&c, "CDS b");
	/* ea is not removed; listeners wait for eb's subscription */
	ck_assert_str_eq(pump(&c), "(wait)");
	subscribe(&c, XD_ENDPOINT, "ea,eb");
	expect(&c, "EDS eb");
	ck_assert_str_eq(pump(&c), "LDS l");
	ck_assert_int_eq(c.eds, XD_WAITED_OVER);
	ack(&c, XD_LISTENER);
	expect(&c, "RDS r");
	/* settled: clusters first, then endpoints, which go without waiting
	 * for the clusters' answer (the client reads them after those) */
	ck_assert_str_eq(pump(&c), "CDS -a");
	ck_assert_str_eq(pump(&c), "EDS -ea");
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	ack(&c, XD_ENDPOINT);
	ack(&c, XD_CLUSTER);
	end(&c);
}
END_TEST

/* rule A2, SotW: endpoints are served from the target at once (a SotW EDS
 * response deletes nothing it leaves out); clusters are still kept. */
START_TEST(a2_sotw_endpoints_not_kept)
{
	struct client c;

	begin(&c, "ADS", "CDS *; EDS ea; LDS *", "CDS a=A1@ea; EDS ea=EA1; LDS l=L1",
	      "CDS EDS LDS", "CDS b=B1@ea; EDS ea=EA2; LDS l=L2");
	expect(&c, "CDS A1,B1");
	expect(&c, "EDS EA2");
	ck_assert_ptr_eq(xd_sub_held(&c.subs[XD_ENDPOINT]), xd_snapshot_table(c.to, XD_ENDPOINT));
	ck_assert_str_eq(settle(&c), "LDS CDS");
	end(&c);
}
END_TEST

/* rule A2: listeners wait for the client to subscribe to its new clusters'
 * endpoints, up to XD_SEQ_WAIT_MS; then they go on (the session logs
 * it). _i: 0 the client never subscribes, 1 it does in time. */
START_TEST(a2_listeners_wait_for_eds_until_deadline)
{
	struct client c;
	uint64_t start;

	begin(&c, "ADS", "CDS *; EDS ea; LDS *",
	      "CDS a=A1@ea; EDS ea=EA1 eb=EB1; LDS l=L1", "CDS EDS LDS",
	      "CDS a=A1@ea b=B1@eb; EDS ea=EA1 eb=EB1; LDS l=L2");
	ck_assert_int_eq(c.waits.eds.state, XD_WAIT_NONE);
	expect(&c, "CDS A1,B1");
	start = c.now;
	ck_assert_str_eq(pump(&c), "(wait)");
	ck_assert_int_eq(c.eds, XD_WAITED_WAITING);
	ck_assert_int_eq(c.waits.eds.state, XD_WAIT_RUNNING);
	ck_assert_uint_eq(c.waits.eds.until, start + XD_SEQ_WAIT_MS);
	c.now = start + XD_SEQ_WAIT_MS - 1;
	ck_assert_str_eq(pump(&c), "(wait)");
	ck_assert_int_eq(c.waits.eds.state, XD_WAIT_RUNNING);
	ck_assert_uint_eq(c.waits.eds.until, start + XD_SEQ_WAIT_MS);
	if (_i == 1) {
		subscribe(&c, XD_ENDPOINT, "ea,eb");
		expect(&c, "EDS EB1");
		ck_assert_str_eq(pump(&c), "LDS L2");
		ck_assert_int_eq(c.eds, XD_WAITED_OVER);
		ck_assert_int_eq(c.waits.eds.state, XD_WAIT_NONE);
	} else {
		c.now = start + XD_SEQ_WAIT_MS;
		ck_assert_str_eq(pump(&c), "LDS L2");
		ck_assert_int_eq(c.eds, XD_WAITED_LATE);
		ck_assert_int_eq(c.waits.eds.state, XD_WAIT_OVERDUE);
	}
	ack(&c, XD_LISTENER);
	end(&c);
}
END_TEST

/*
 * Rule A2: the final CDS goes out even when listeners settle without a
 * response. The client's listener did not change (another did), so the
 * step that finds it in step is the one that ends the hold on the
 * dropped cluster: the clusters that were checked earlier in that same
 * step must be looked at again, not when something else happens to pump
 * the stream. _i: 0 SotW, 1 delta.
 */
START_TEST(a2_final_cds_after_listeners_settle_unsent)
{
	struct client c;

	begin(&c, _i ? "delta ADS" : "ADS", "CDS *; EDS ea,eb; LDS m",
	      "CDS a=A1@ea b=B1@eb; EDS ea=EA1 eb=EB1; LDS l=L1 m=M1",
	      "CDS EDS LDS", "CDS a=A1@ea; EDS ea=EA1; LDS l=L2 m=M1");
	if (_i) {
		expect(&c, "CDS -b");
		expect(&c, "EDS -eb");
	} else {
		expect(&c, "CDS A1");
	}
	end(&c);
}
END_TEST

/* ---------------- per-type methods ---------------- */

/* rule A2 applies to the aggregated methods only: a per-type method sends its
 * type when due, with no order, no union and no EDS wait. One state,
 * pumped as the CDS method and as the LDS method. */
START_TEST(a2_per_type_methods_send_only_their_type)
{
	struct client c;

	begin(&c, "CDS", "CDS *; LDS *", "CDS a=A1@ea b=B1; EDS ea=EA1; LDS l=L1",
	      "CDS", "CDS b=B1; EDS ea=EA1; LDS l=L2");
	/* CDS drops a at once, though listeners are not settled */
	ck_assert_str_eq(pump(&c), "CDS B1");
	/* LDS goes while CDS is in flight, and does not wait for the
	 * subscription to ea (which never comes) */
	c.mode.type = XD_LISTENER;
	ck_assert_str_eq(pump(&c), "LDS L2");
	ck_assert_int_eq(c.eds, XD_WAITED_UNTOUCHED);
	ack(&c, XD_LISTENER);
	c.mode.type = XD_CLUSTER;
	ck_assert_str_eq(pump(&c), "(CDS in flight)");
	ack(&c, XD_CLUSTER);
	end(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sequence");
	TCase *ads = tcase_create("ads"), *per_type = tcase_create("per-type");

	tcase_add_loop_test(ads, a2_order_of_one_change_touching_all, 0, 2);
	tcase_add_test(ads, a2_later_type_waits_for_earlier_in_flight);
	tcase_add_loop_test(ads, a2_endpoints_go_while_clusters_in_flight, 0, 2);
	tcase_add_test(ads, a2_locality_endpoints_go_while_clusters_in_flight);
	tcase_add_loop_test(ads, a2_dropped_clusters_stay_until_listeners_settle, 0, 2);
	tcase_add_test(ads, a2_dropped_clusters_stay_until_new_ones_subscribed);
	tcase_add_loop_test(ads, a2_named_dropped_clusters_stay_until_new_ones_held, 0, 2);
	tcase_add_loop_test(ads, a2_named_dropped_clusters_go_after_deadline, 0, 2);
	tcase_add_loop_test(ads, a2_wildcard_dropped_clusters_go_without_uptake, 0, 2);
	tcase_add_test(ads, a2_delta_keeps_endpoints_too);
	tcase_add_test(ads, a2_sotw_endpoints_not_kept);
	tcase_add_loop_test(ads, a2_listeners_wait_for_eds_until_deadline, 0, 2);
	tcase_add_loop_test(ads, a2_final_cds_after_listeners_settle_unsent, 0, 2);
	suite_add_tcase(s, ads);

	tcase_add_test(per_type, a2_per_type_methods_send_only_their_type);
	suite_add_tcase(s, per_type);
	return xdtest_run(s);
}
