/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl rollout status|promote|abort: the staged rollout (`rollout:`
 * in xdsd.yaml). `status` reads /status.json's "rollout"; `promote` and
 * `abort` POST /rollout/promote and /rollout/abort, which answer the
 * same object (admin/rollout.h) or 409 with why not. Exit status 1 when
 * xdsd refused (no rollout under way, none configured), and for
 * `status` when the last rollout failed.
 *
 * `status --fleet` asks every replica (members.h): the rollout as the
 * replica asked first sees it, then each replica's own view (the
 * rollout it serves, its canaries), then every canary node once, with
 * its replica and whether it answered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/members.h"
#include "xdsctl/show.h"
#include "util/text.h"
#include "util/xalloc.h"

/* "  what: a, b (and 3 more)" of the names in r[key], when any. */
static void names_line(FILE *out, json_t *r, const char *key,
		       const char *total_key, const char *what,
		       const char *after)
{
	json_t *a = json_object_get(r, key), *v;
	long long total = xc_int(r, total_key);
	size_t i;

	if (json_array_size(a) == 0)
		return;
	fprintf(out, "  %s: ", what);
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);
		char *safe = xc_safe(s != NULL ? s : "?", s != NULL ? strlen(s) : 1);

		fprintf(out, "%s%s", i > 0 ? ", " : "", safe);
		free(safe);
	}
	if (total > (long long)json_array_size(a))
		fprintf(out, " (and %lld more)", total - (long long)json_array_size(a));
	fprintf(out, "%s\n", after);
}

/* What is the fleet's: its record when it is another rollout than this
 * replica's, the keys and their canaries, each replica on it. */
static void print_fleet(FILE *out, json_t *r)
{
	json_t *fleet = json_object_get(r, "fleet");
	json_t *rec = json_object_get(fleet, "record"), *k, *rep;
	size_t i;

	if (json_is_object(rec) &&
	    (xc_int(rec, "id") != xc_int(r, "id") ||
	     !json_equal(json_object_get(rec, "state"), json_object_get(r, "state")))) {
		char *state = xc_safe_text(rec, "state"), *by = xc_safe_text(rec, "by");

		fprintf(out, "  the fleet's record: rollout %lld %s (by %s)\n",
			xc_int(rec, "id"), state, by);
		free(state);
		free(by);
	}
	if (json_is_true(json_object_get(r, "held")))
		fprintf(out, "  this change is refused: served to no node until a newer change\n");
	if (json_is_true(json_object_get(r, "rollback")))
		fprintf(out, "  a rollback to the snapshots before the last promotion: no bake\n");
	if (json_is_true(json_object_get(r, "now")))
		fprintf(out, "  pushed with --now: no bake\n");
	if (json_is_true(json_object_get(r, "waiting_fleet")))
		fprintf(out, "  waiting: the fleet's record is of a newer change than this replica holds\n");
	json_array_foreach(json_object_get(r, "key_canaries"), i, k) {
		char *key = xc_safe_text(k, "key");
		long long c = xc_int(k, "canaries"), a = xc_int(k, "acked");

		fprintf(out, "  snapshot '%s': %lld canar%s served it, %lld ACKed%s\n",
			key, c, c == 1 ? "y" : "ies", a,
			json_is_true(json_object_get(k, "proven")) ? "" :
								   " (NOT PROVEN: no canary ACKed it)");
		free(key);
	}
	names_line(out, r, "waiting", "waiting_total", "waiting for", "");
	names_line(out, r, "stuck", "stuck_total", "past canary_timeout",
		   strcmp(json_string_value(json_object_get(r, "on_canary_timeout")) ?
				  json_string_value(json_object_get(r, "on_canary_timeout")) : "",
			  "fail") == 0 ?
			   " (on_canary_timeout: fail)" :
			   " (left out: on_canary_timeout: skip)");
	if (json_array_size(json_object_get(r, "replicas")) > 1 ||
	    json_is_true(json_object_get(fleet, "shared"))) {
		json_array_foreach(json_object_get(r, "replicas"), i, rep) {
			char *name = xc_safe_text(rep, "replica");

			fprintf(out, "  replica '%s'%s: %lld canar%s, %lld answered, %lld NACK%s\n",
				name,
				json_is_true(json_object_get(rep, "self")) ? " (this one)" : "",
				xc_int(rep, "canaries"),
				xc_int(rep, "canaries") == 1 ? "y" : "ies",
				xc_int(rep, "answered"), xc_int(rep, "nacks"),
				xc_int(rep, "nacks") == 1 ? "" : "s");
			free(name);
		}
	}
	if (json_is_object(fleet) && !json_is_true(json_object_get(fleet, "reachable"))) {
		char *where = xc_safe_text(fleet, "where");

		fprintf(out, "  %s CANNOT BE WRITTEN: this replica decides nothing until it can\n",
			where);
		free(where);
	}
}

/* The rollout object, for people. */
static void print_rollout(FILE *out, json_t *r)
{
	char *state, *trigger, *started, *reason;
	json_t *nacks = json_object_get(r, "nack_list"), *n, *left;
	long long keys = xc_int(r, "keys"), nack = xc_int(r, "nacks");
	size_t i;

	if (!json_is_true(json_object_get(r, "configured"))) {
		fprintf(out, "no staged rollout: xdsd.yaml has no 'rollout:' section; every reload reaches every node at once\n");
		return;
	}
	state = xc_safe_text(r, "state");
	if (xc_int(r, "id") == 0) {
		fprintf(out, "rollout: %s (no reload has changed anything since xdsd started)\n",
			state);
		print_fleet(out, r);
		free(state);
		return;
	}
	trigger = xc_safe_text(r, "trigger");
	started = xc_safe_text(r, "started");
	reason = xc_safe_text(r, "reason");
	fprintf(out, "rollout %lld: %s (%s, %lld snapshot key%s changed, started %s)\n",
		xc_int(r, "id"), state, trigger, keys, xd_plural(keys), started);
	fprintf(out, "  canaries: %lld connected, %lld answered%s\n",
		xc_int(r, "canaries"), xc_int(r, "answered"),
		json_array_size(json_object_get(r, "replicas")) > 1 ?
			", across the replicas" : "");
	fprintf(out, "  NACKs: %lld (max_nacks %lld)\n", nack,
		xc_int(r, "max_nacks"));
	left = json_object_get(r, "bake_left_seconds");
	if (json_is_number(left))
		fprintf(out, "  bake: %.1f s left\n", json_number_value(left));
	if (reason[0] != '\0')
		fprintf(out, "  %s\n", reason);
	print_fleet(out, r);
	json_array_foreach(json_object_get(r, "changes"), i, n) {
		char *key = xc_safe_text(n, "key");
		/* a version is null where there is none */
		char *was = xc_safe_text(n, "previous_version");
		char *now = xc_safe_text(n, "version");

		fprintf(out, "  snapshot '%s': %s -> %s\n", key,
			json_is_string(json_object_get(n, "previous_version")) ? was : "(none)",
			json_is_string(json_object_get(n, "version")) ? now : "(none)");
		free(key);
		free(was);
		free(now);
	}
	json_array_foreach(nacks, i, n) {
		char *node = xc_safe_text(n, "node_id");
		char *type = xc_safe_text(n, "type");
		char *version = xc_safe_text(n, "version");
		char *msg = xc_safe_text(n, "message");

		fprintf(out, "  NACK from node '%s' of %s version %s: %s\n", node,
			type, version, msg);
		free(node);
		free(type);
		free(version);
		free(msg);
	}
	if (nack > (long long)json_array_size(nacks))
		fprintf(out, "  (%lld more NACKs; xdsd's log has them all)\n",
			nack - (long long)json_array_size(nacks));
	free(state);
	free(trigger);
	free(started);
	free(reason);
}

static int status(const struct xc_opts *o)
{
	struct xc_answer a;
	json_t *r;
	int rc = xc_get_json(o, "/status.json", &a);

	if (rc != XC_OK)
		return rc;
	r = json_object_get(a.json, "rollout");
	if (!json_is_object(r)) {
		xc_error("/status.json has no rollout: is this xdsd older than xdsctl?");
		xc_answer_free(&a);
		return XC_UNREACHABLE;
	}
	if (o->json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
	} else {
		print_rollout(stdout, r);
	}
	rc = json_is_string(json_object_get(r, "state")) &&
			     strcmp(json_string_value(json_object_get(r, "state")),
				    "failed") == 0 ?
		     XC_FAILED :
		     XC_OK;
	xc_answer_free(&a);
	return rc;
}

/* Each replica's view of the rollout, a row each. */
static void fleet_replicas(const struct xc_members *ms)
{
	static const char *const head[7] = {
		"REPLICA", "ROLLOUT", "STATE", "CANARIES", "ANSWERED", "NACKS", "NOTE",
	};
	struct xc_table *tab = xc_table_new(7, head);

	for (size_t i = 0; i < ms->n; i++) {
		const struct xc_member *m = &ms->m[i];
		json_t *r = json_object_get(m->a.json, "rollout");
		json_t *local = NULL, *rep;
		char b[7][64], *name;
		const char *row[7], *note = "";
		size_t k;

		if (!m->ok || !json_is_object(r))
			continue;
		json_array_foreach(json_object_get(r, "replicas"), k, rep)
			if (json_is_true(json_object_get(rep, "self")))
				local = rep;
		if (json_is_true(json_object_get(r, "held")))
			note = "change refused: served to no node";
		else if (json_is_true(json_object_get(r, "waiting_fleet")))
			note = "waiting: the record is of a newer change";
		else if (json_is_object(json_object_get(r, "fleet")) &&
			 !json_is_true(json_object_get(json_object_get(r, "fleet"), "reachable")))
			note = "CUT from the record: decides nothing";
		name = xd_asprintf("%s%s", m->name, m->self ? " *" : "");
		row[0] = name;
		row[1] = xc_text(r, "id", b[1], sizeof(b[1]));
		row[2] = xc_text(r, "state", b[2], sizeof(b[2]));
		row[3] = xc_text(local, "canaries", b[3], sizeof(b[3]));
		row[4] = xc_text(local, "answered", b[4], sizeof(b[4]));
		row[5] = xc_text(local, "nacks", b[5], sizeof(b[5]));
		row[6] = note;
		xc_table_row(tab, row);
		free(name);
	}
	printf("\n");
	xc_table_print(tab, stdout);
	xc_table_free(tab);
}

/* Whether `node` is among the names of r[key]. */
static bool named(json_t *r, const char *key, const char *node)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(r, key), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), node) == 0)
			return true;
	return false;
}

/* Every canary node once, with its replica and what it did; the
 * replicas' /clients in ms' answers. */
static void fleet_canaries(const struct xc_members *ms, json_t *r)
{
	static const char *const head[5] = {
		"NODE", "REPLICA", "SNAPSHOT", "STATE", "NOTE",
	};
	struct xc_table *tab = xc_table_new(5, head);
	size_t rows = 0;

	for (size_t i = 0; i < ms->n; i++) {
		const struct xc_member *m = &ms->m[i];
		json_t *c;
		size_t k;

		if (!m->ok)
			continue;
		json_array_foreach(json_object_get(m->a.json, "clients"), k, c) {
			const char *node = json_string_value(
				json_object_get(json_object_get(c, "node"), "id"));
			char b[5][64];
			const char *row[5];

			if (!json_is_true(json_object_get(c, "canary")) || node == NULL)
				continue;
			row[0] = node;
			row[1] = m->name;
			row[2] = xc_text(c, "snapshot", b[2], sizeof(b[2]));
			row[3] = xc_text(c, "state", b[3], sizeof(b[3]));
			row[4] = named(r, "stuck", node) ? "past canary_timeout" :
				 named(r, "waiting", node) ? "not answered yet" : "";
			xc_table_row(tab, row);
			rows++;
		}
	}
	if (rows > 0) {
		printf("\n");
		xc_table_print(tab, stdout);
	} else {
		printf("\nno canary node is connected to any replica\n");
	}
	xc_table_free(tab);
}

/* rollout status --fleet */
static int fleet_status(const struct xc_opts *o)
{
	struct xc_members ms, clients;
	json_t *r = NULL;
	int rc = xc_members_get(o, &ms), asked;

	if (rc != XC_OK)
		return rc;
	asked = xc_members_ask(&ms, "/status.json");
	if (o->json) {
		xc_members_print_json(&ms, "status");
		xc_members_free(&ms);
		return asked;
	}
	for (size_t i = 0; i < ms.n && r == NULL; i++)
		if (ms.m[i].ok && json_is_object(json_object_get(ms.m[i].a.json, "rollout")))
			r = json_object_get(ms.m[i].a.json, "rollout");
	if (r == NULL) {
		xc_error("no replica answered with its rollout");
		xc_members_free(&ms);
		return asked != XC_OK ? asked : XC_UNREACHABLE;
	}
	print_rollout(stdout, r);
	if (json_is_true(json_object_get(r, "configured"))) {
		fleet_replicas(&ms);
		/* the canaries by name: each replica's streams */
		if (xc_members_get(o, &clients) == XC_OK) {
			if (xc_members_ask(&clients, "/clients") != XC_OK && asked == XC_OK)
				asked = XC_UNREACHABLE;
			fleet_canaries(&clients, r);
			xc_members_free(&clients);
		}
	}
	rc = json_is_string(json_object_get(r, "state")) &&
			     strcmp(json_string_value(json_object_get(r, "state")),
				    "failed") == 0 ?
		     XC_FAILED :
		     XC_OK;
	if (asked == XC_UNREACHABLE)
		rc = asked;
	xc_members_free(&ms);
	return rc;
}

static int act(const struct xc_opts *o, const char *path)
{
	struct xc_answer a;
	int rc = xc_call(o, "POST", path, &a);

	if (rc != XC_OK)
		return rc;
	if (a.status != 200 || !json_is_object(a.json)) {
		rc = xc_refused(o, path, &a);
		xc_answer_free(&a);
		return rc;
	}
	if (o->json)
		xc_print_raw(&a);
	else
		print_rollout(stdout, a.json);
	xc_answer_free(&a);
	return XC_OK;
}

int xc_rollout(const struct xc_opts *o, int argc, char **args)
{
	if (argc != 1)
		return xc_usage_error("rollout takes one of status, promote or abort");
	if (strcmp(args[0], "status") == 0)
		return o->fleet ? fleet_status(o) : status(o);
	if (strcmp(args[0], "promote") == 0)
		return act(o, "/rollout/promote");
	if (strcmp(args[0], "abort") == 0)
		return act(o, "/rollout/abort");
	return xc_usage_error("rollout '%s': status, promote or abort", args[0]);
}
