/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl clients [--nacked] [--pending [--older AGE]] [NODE-GLOB]: GET
 * /clients as a table, one stream a row, each NACK's message under its
 * stream; a type whose response waits for its answer shows for how long
 * ("listeners:pending(12s)"). The identity is
 * what the client's certificate proved over mTLS, "-" without one;
 * VERSION is the version of the snapshot the client runs, "-" while
 * it has not ACKed all of it (runs_version); CANARY says "yes" for a
 * canary of a staged rollout (`rollout:`).
 *
 * With --fleet, every replica is asked (members.h) and each node is one
 * row with the replicas it has streams on: its first stream's details,
 * the worst state of its streams, how many it has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/members.h"
#include "xdsctl/show.h"

#define NCOLS 10

/* "clusters:synced endpoints:nacked" */
static char *type_states(json_t *types)
{
	struct xd_buf b = XD_BUF_INIT;
	size_t i;
	json_t *t;
	char b1[64], b2[64];

	json_array_foreach(types, i, t) {
		json_t *secs = json_object_get(t, "pending_seconds");

		xd_buf_printf(&b, "%s%s:%s", i ? " " : "",
			      xc_text(t, "type", b1, sizeof(b1)),
			      xc_text(t, "state", b2, sizeof(b2)));
		if (json_is_integer(json_object_get(t, "pending_since")) &&
		    json_is_number(secs)) {
			xd_text_age(b1, sizeof(b1), xc_number(secs));
			xd_buf_printf(&b, "(%s)", b1);
		}
	}
	if (b.len == 0)
		xd_buf_printf(&b, "-");
	xd_buf_putc(&b, '\0');
	return (char *)xd_buf_steal(&b, NULL);
}

/*
 * The version of the snapshot the stream runs: its snapshot's version
 * (as /status shows it) when every type it subscribes to last ACKed
 * that snapshot's version of the type; "-" when some type has not (a
 * response not answered yet, a NACK, nothing ACKed yet: STATE and TYPES
 * say which), or it subscribes to nothing. The JSON has each type's
 * acked_version for the rest.
 */
static const char *runs_version(json_t *c, char *buf, size_t size)
{
	json_t *types = json_object_get(c, "types"), *t;
	size_t i;

	if (json_array_size(types) == 0)
		return "-";
	json_array_foreach(types, i, t) {
		json_t *acked = json_object_get(t, "acked_version");
		json_t *cur = json_object_get(t, "current_version");

		if (!json_is_string(acked) || !json_is_string(cur) ||
		    strcmp(json_string_value(acked), json_string_value(cur)) != 0)
			return "-";
	}
	return xc_text(c, "snapshot_version", buf, size);
}

/* Under the row: each type whose last response was NACKed, the time
 * and the client's message. */
static void nack_notes(struct xc_table *tab, json_t *types)
{
	size_t i;
	json_t *t;
	char b1[64], b2[64], b3[64];

	json_array_foreach(types, i, t) {
		json_t *nack = json_object_get(t, "last_nack");
		char *note;

		if (!json_is_object(nack) ||
		    !json_is_string(json_object_get(t, "state")) ||
		    strcmp(json_string_value(json_object_get(t, "state")), "nacked") != 0)
			continue;
		note = xd_asprintf("%s NACKed at %s: %s",
				   xc_text(t, "type", b1, sizeof(b1)),
				   xc_text(nack, "at", b2, sizeof(b2)),
				   xc_text(nack, "message", b3, sizeof(b3)));
		xc_table_note(tab, note);
		free(note);
	}
}

/* The REST-JSON pollers seen lately (xdsd(8)): they hold no stream,
 * so they get a table of their own, each marked REST. */
static void print_pollers(json_t *doc)
{
	static const char *const head[6] = {
		"NODE", "SNAPSHOT", "PEER", "METHOD", "TYPES", "LAST SEEN",
	};
	json_t *list = json_object_get(doc, "rest_pollers"), *p, *t;
	struct xc_table *tab;
	size_t i, j;

	if (json_array_size(list) == 0)
		return;
	tab = xc_table_new(6, head);
	json_array_foreach(list, i, p) {
		struct xd_buf types = XD_BUF_INIT;
		char b[6][64];
		const char *row[6];

		json_array_foreach(json_object_get(p, "types"), j, t)
			xd_buf_printf(&types, "%s%s", j ? "," : "",
				      json_is_string(t) ? json_string_value(t) : "?");
		xd_buf_putc(&types, '\0');
		row[0] = xc_text(p, "node", b[0], sizeof(b[0]));
		row[1] = xc_text(p, "key", b[1], sizeof(b[1]));
		row[2] = xc_text(p, "peer", b[2], sizeof(b[2]));
		row[3] = "REST";
		row[4] = (const char *)types.data;
		row[5] = xc_text(p, "last_seen", b[5], sizeof(b[5]));
		xc_table_row(tab, row);
		xd_buf_free(&types);
	}
	xc_table_print(tab, stdout);
	xc_table_free(tab);
	printf("%zu REST-JSON poller%s seen lately\n", json_array_size(list),
	       json_array_size(list) == 1 ? "" : "s");
}

static void print_table(json_t *doc, const struct xc_opts *o, const char *glob)
{
	static const char *const head[NCOLS] = {
		"NODE", "CLUSTER", "PEER", "IDENTITY", "METHOD", "SNAPSHOT",
		"VERSION", "CANARY", "STATE", "TYPES",
	};
	json_t *list = json_object_get(doc, "clients"), *c;
	struct xc_table *tab;
	size_t i;

	if (json_array_size(list) == 0) {
		printf("no streams%s (of %lld)\n",
		       o->nacked || o->pending || glob ? " match" : "",
		       xc_int(doc, "streams"));
		print_pollers(doc);
		return;
	}
	tab = xc_table_new(NCOLS, head);
	json_array_foreach(list, i, c) {
		json_t *node = json_object_get(c, "node");
		json_t *types = json_object_get(c, "types");
		char b[NCOLS][64], *method, *states;
		const char *row[NCOLS];

		method = xd_asprintf("%s %s", xc_text(c, "method", b[0], sizeof(b[0])),
				     xc_text(c, "mode", b[1], sizeof(b[1])));
		states = type_states(types);
		row[0] = xc_text(node, "id", b[0], sizeof(b[0]));
		row[1] = xc_text(node, "cluster", b[1], sizeof(b[1]));
		row[2] = xc_text(c, "peer", b[2], sizeof(b[2]));
		row[3] = xc_text(c, "identity", b[3], sizeof(b[3])); /* null: "-" */
		row[4] = method;
		row[5] = xc_text(c, "snapshot", b[5], sizeof(b[5]));
		row[6] = runs_version(c, b[6], sizeof(b[6]));
		/* served a staged rollout's change first */
		row[7] = json_is_true(json_object_get(c, "canary")) ? "yes" : "-";
		row[8] = xc_text(c, "state", b[8], sizeof(b[8]));
		row[9] = states;
		xc_table_row(tab, row);
		nack_notes(tab, types);
		free(method);
		free(states);
	}
	xc_table_print(tab, stdout);
	xc_table_free(tab);
	printf("%lld of %lld stream%s\n", xc_int(doc, "count"),
	       xc_int(doc, "streams"), xc_int(doc, "streams") == 1 ? "" : "s");
	print_pollers(doc);
}

/* A stream of a --fleet answer: its client object and its replica. */
struct seen_stream {
	const char *node;
	json_t *c;
	const struct xc_member *m;
};

static int by_node(const void *a, const void *b)
{
	const struct seen_stream *x = a, *y = b;

	return strcmp(x->node, y->node);
}

/* "nacked" over "pending" over the rest, as /clients' "state" ranks. */
static int state_rank(json_t *c)
{
	const char *s = json_string_value(json_object_get(c, "state"));

	return s == NULL ? 0 : strcmp(s, "nacked") == 0 ? 2 :
			       strcmp(s, "pending") == 0 ? 1 : 0;
}

#define FLEET_NCOLS 10

/* The rows of nodes v[0..n) (sorted by node), one a node. */
static void fleet_rows(struct xc_table *tab, const struct seen_stream *v,
		       size_t n, size_t *nodes)
{
	for (size_t i = 0, j; i < n; i = j) {
		struct xd_buf reps = XD_BUF_INIT;
		json_t *c = v[i].c, *node = json_object_get(c, "node"), *worst = c;
		char b[FLEET_NCOLS][64], *method, streams[32];
		const char *row[FLEET_NCOLS];

		for (j = i; j < n && strcmp(v[j].node, v[i].node) == 0; j++) {
			bool again = false;

			for (size_t k = i; k < j; k++)
				again |= v[k].m == v[j].m;
			if (!again)
				xd_buf_printf(&reps, "%s%s", reps.len ? "," : "",
					      v[j].m->name);
			if (state_rank(v[j].c) > state_rank(worst))
				worst = v[j].c;
		}
		xd_buf_putc(&reps, '\0');
		method = xd_asprintf("%s %s", xc_text(c, "method", b[0], sizeof(b[0])),
				     xc_text(c, "mode", b[1], sizeof(b[1])));
		snprintf(streams, sizeof(streams), "%zu", j - i);
		row[0] = (const char *)reps.data;
		row[1] = xc_text(node, "id", b[1], sizeof(b[1]));
		row[2] = xc_text(node, "cluster", b[2], sizeof(b[2]));
		row[3] = xc_text(c, "peer", b[3], sizeof(b[3]));
		row[4] = method;
		row[5] = xc_text(c, "snapshot", b[5], sizeof(b[5]));
		row[6] = runs_version(c, b[6], sizeof(b[6]));
		row[7] = json_is_true(json_object_get(c, "canary")) ? "yes" : "-";
		row[8] = xc_text(worst, "state", b[8], sizeof(b[8]));
		row[9] = streams;
		xc_table_row(tab, row);
		nack_notes(tab, json_object_get(worst, "types"));
		free(method);
		xd_buf_free(&reps);
		(*nodes)++;
	}
}

/* clients --fleet: every replica's streams, a row per node. */
static int fleet_clients(const struct xc_opts *o, const char *path,
			 bool filtered)
{
	static const char *const head[FLEET_NCOLS] = {
		"REPLICA", "NODE", "CLUSTER", "PEER", "METHOD", "SNAPSHOT",
		"VERSION", "CANARY", "STATE", "STREAMS",
	};
	struct xc_members ms;
	struct seen_stream *v = NULL;
	size_t n = 0, cap = 0, nodes = 0, answered = 0;
	long long streams = 0;
	int rc = xc_members_get(o, &ms), asked;

	if (rc != XC_OK)
		return rc;
	asked = xc_members_ask(&ms, path);
	if (o->json) {
		/* every replica's answer as it came, by replica */
		xc_members_print_json(&ms, "clients");
		xc_members_free(&ms);
		return asked;
	}
	for (size_t i = 0; i < ms.n; i++) {
		json_t *c;
		size_t k;

		if (!ms.m[i].ok)
			continue;
		answered++;
		streams += xc_int(ms.m[i].a.json, "streams");
		json_array_foreach(json_object_get(ms.m[i].a.json, "clients"), k, c) {
			const char *id = json_string_value(
				json_object_get(json_object_get(c, "node"), "id"));

			v = xd_grow(v, &cap, n + 1, sizeof(*v));
			v[n++] = (struct seen_stream){id != NULL ? id : "", c, &ms.m[i]};
		}
	}
	qsort(v, n, sizeof(*v), by_node);
	if (n == 0) {
		printf("no streams%s (of %lld on %zu replica%s)\n",
		       filtered ? " match" : "",
		       streams, answered, xd_plural((long long)answered));
	} else {
		struct xc_table *tab = xc_table_new(FLEET_NCOLS, head);

		fleet_rows(tab, v, n, &nodes);
		xc_table_print(tab, stdout);
		xc_table_free(tab);
		printf("%zu node%s, %zu of %lld stream%s, on %zu of %zu replica%s\n",
		       nodes, xd_plural((long long)nodes), n, streams,
		       xd_plural(streams), answered, ms.n, xd_plural((long long)ms.n));
	}
	free(v);
	xc_members_free(&ms);
	return asked;
}

int xc_clients(const struct xc_opts *o, int argc, char **args)
{
	struct xd_buf path = XD_BUF_INIT;
	struct xc_answer a;
	int rc;

	if (argc > 1)
		return xc_usage_error("clients takes one node glob at most");
	xd_buf_printf(&path, "/clients");
	if (o->nacked)
		xc_query_add(&path, "state", "nacked");
	if (o->pending != NULL)
		xc_query_add(&path, "pending", o->pending);
	if (argc == 1)
		xc_query_add(&path, "node", args[0]);
	xd_buf_putc(&path, '\0');
	if (o->fleet) {
		rc = fleet_clients(o, (const char *)path.data,
				   o->nacked || o->pending != NULL || argc == 1);
		xd_buf_free(&path);
		return rc;
	}
	rc = xc_get_json(o, (const char *)path.data, &a);
	if (rc == XC_OK) {
		if (o->json)
			xc_print_raw(&a);
		else
			print_table(a.json, o, argc == 1 ? args[0] : NULL);
		xc_answer_free(&a);
	}
	xd_buf_free(&path);
	return rc;
}
