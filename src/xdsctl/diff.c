/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl diff [--snapshots DIR] [-v]: POST /reload?dry_run=1, what a
 * reload would change, for people: per snapshot, per type, the
 * resources added (+), removed (-) and changed (~) with their versions,
 * each changed one's diff -u, whom each change reaches, and the
 * warnings. With -v, the added and removed resources' text and the
 * node ids too. With --envoy PATH, the directory is read here as well
 * and that Envoy's verdict asked (envoy/verdict.h). Exit status as
 * diff(1)'s: 0 nothing would change, 1 something would, 2 the reload
 * would be refused, or Envoy refuses something (or a usage error), 3
 * xdsd cannot be reached.
 *
 * With --fleet, every replica makes the dry run (members.h): the diff
 * as the replica asked first sees it, then whom each change reaches on
 * each replica, and with -v each node with its replica; replicas that
 * would change something else are said.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "snapshot/loader.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/local.h"
#include "xdsctl/members.h"
#include "xdsctl/reload.h"
#include "xdsctl/show.h"

/* A member string made safe (malloc'd). */
static char *str(json_t *o, const char *key)
{
	return xc_safe_text(o, key);
}

/* "a -> b", "-> b" (added) or "a ->" (removed) */
static void versions(json_t *o)
{
	char *b = str(o, "version_before"), *a = str(o, "version_after");

	printf("%s -> %s", strcmp(b, "") ? b : "(none)", strcmp(a, "") ? a : "(none)");
	free(b);
	free(a);
}

/* Each line of `text` (a diff -u hunk list) indented, made safe. */
static void lines(const char *text, const char *indent)
{
	while (text != NULL && *text != '\0') {
		size_t len = strcspn(text, "\n");
		char *safe = xc_safe(text, len);

		printf("%s%s\n", indent, safe);
		free(safe);
		text += len;
		if (*text == '\n')
			text++;
	}
}

static void resource(json_t *res, bool verbose)
{
	const char *change = json_string_value(json_object_get(res, "change"));
	char *name = str(res, "name");
	char mark = change == NULL ? '?' : change[0] == 'a' ? '+' :
				     change[0] == 'r' ? '-' : '~';

	printf("    %c %s (", mark, name);
	versions(res);
	printf(")\n");
	if (mark == '~' || verbose)
		lines(json_string_value(json_object_get(res, "diff")), "        ");
	free(name);
}

static void type(json_t *t, bool verbose)
{
	char *name = str(t, "type");
	long long n[3] = {xc_int(t, "added"), xc_int(t, "removed"),
			  xc_int(t, "changed")};
	static const char *const what[3] = {"added", "removed", "changed"};
	const char *sep = "";
	json_t *res = json_object_get(t, "resources");
	size_t i;
	json_t *r;

	printf("  %s (", name);
	versions(t);
	printf("):");
	for (int k = 0; k < 3; k++)
		if (n[k] > 0) {
			printf("%s %lld %s", sep, n[k], what[k]);
			sep = ",";
		}
	if (n[0] + n[1] + n[2] == 0)
		printf(" who may see them or their variants");
	printf("\n");
	json_array_foreach(res, i, r)
		resource(r, verbose);
	free(name);
}

static void key(json_t *k, bool verbose)
{
	char *name = str(k, "key"), *change = str(k, "change");
	long long nodes = xc_int(k, "nodes");
	json_t *ids = json_object_get(k, "node_ids"), *t;
	size_t i;

	printf("snapshot '%s' %s (", name, change);
	versions(k);
	printf("): reaches %lld connected node%s", nodes, xd_plural(nodes));
	if (json_is_integer(json_object_get(k, "canaries")))
		printf(" (%lld canar%s connected to any replica)",
		       xc_int(k, "canaries"), xc_int(k, "canaries") == 1 ? "y" : "ies");
	if (xc_int(k, "rest_pollers") > 0)
		printf(" (%lld by REST-JSON)", xc_int(k, "rest_pollers"));
	if (json_object_get(k, "streams_moved") != NULL)
		printf("; %lld stream%s move to the default snapshot",
		       xc_int(k, "streams_moved"), xd_plural(xc_int(k, "streams_moved")));
	printf("\n");
	if (verbose && json_array_size(ids) > 0) {
		printf("  nodes:");
		json_array_foreach(ids, i, t) {
			const char *id = json_string_value(t);
			char *safe = xc_safe(id ? id : "?", id ? strlen(id) : 1);

			printf("%s %s", i ? "," : "", safe);
			free(safe);
		}
		if (nodes > (long long)json_array_size(ids))
			printf(" (and %lld more)", nodes - (long long)json_array_size(ids));
		printf("\n");
	}
	json_array_foreach(json_object_get(k, "types"), i, t)
		type(t, verbose);
	free(name);
	free(change);
}

int xc_diff_show(json_t *rec, bool verbose)
{
	json_t *d = json_object_get(rec, "diff"), *k;
	long long nkeys = xc_int(rec, "changed"), connected = xc_int(d, "connected_nodes");
	size_t i;

	if (!json_is_object(d)) {
		xc_error("bad answer to the dry run: no diff");
		return XC_UNREACHABLE;
	}
	json_array_foreach(json_object_get(d, "snapshots"), i, k)
		key(k, verbose);
	if (xc_int(d, "snapshots_not_shown") > 0)
		printf("(%lld more snapshots change, not shown)\n",
		       xc_int(d, "snapshots_not_shown"));
	xc_reload_print_warnings(stdout, d, "");
	if (json_is_true(json_object_get(d, "cut")))
		printf("(the diff is cut short: too many resources or too much text)\n");
	if (nkeys == 0) {
		printf("nothing would change (%lld snapshot%s from %lld file%s)\n",
		       xc_int(rec, "snapshots"), xd_plural(xc_int(rec, "snapshots")),
		       xc_int(rec, "files"), xd_plural(xc_int(rec, "files")));
		return XC_OK;
	}
	printf("%lld snapshot%s would change: %lld resource%s added, %lld removed, %lld changed; %lld node%s connected\n",
	       nkeys, xd_plural(nkeys), xc_int(d, "added"), xd_plural(xc_int(d, "added")),
	       xc_int(d, "removed"), xc_int(d, "changed_resources"), connected,
	       xd_plural(connected));
	if (xc_int(d, "rest_pollers") > 0)
		printf("(%lld of the nodes poll by REST-JSON)\n",
		       xc_int(d, "rest_pollers"));
	return XC_DIFFERS;
}

/*
 * --envoy PATH: the directory the dry run read, read here too (so on
 * this machine: --snapshots DIR, or xdsd's own directory when it reads
 * one by an absolute path), and Envoy's verdict on it. XC_OK when Envoy
 * accepts it, XC_USAGE otherwise, having said why.
 */
static int envoy_verdict(const struct xc_opts *o, const char *given)
{
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_config cfg;
	struct xd_schema *schema = NULL;
	struct xc_answer st = {0};
	struct xd_load load;
	char *dir = NULL;
	int rc;

	if (given != NULL) {
		dir = xd_strdup(given);
	} else if ((rc = xc_get_json(o, "/status.json", &st)) != XC_OK) {
		return rc;
	} else {
		json_t *src = json_object_get(st.json, "source");
		const char *kind = json_string_value(json_object_get(src, "kind"));
		const char *d = json_string_value(json_object_get(src, "dir"));

		if (kind == NULL || strcmp(kind, "files") != 0 || d == NULL) {
			xc_answer_free(&st);
			xc_error("--envoy: xdsd reads its snapshots from %s, not from a directory here: name the directory with --snapshots DIR, or check it before it is pushed (xdsctl push --envoy)",
				 kind != NULL ? kind : "elsewhere");
			return XC_USAGE;
		}
		if (d[0] != '/') {
			xc_error("--envoy: xdsd's snapshot directory '%s' is relative to xdsd's working directory: name it with --snapshots DIR",
				 d);
			xc_answer_free(&st);
			return XC_USAGE;
		}
		dir = xd_strdup(d);
		xc_answer_free(&st);
	}
	rc = xc_settings(o, &cfg);
	if (rc == XC_OK && (schema = xd_schema_load(cfg.schema, &diag)) == NULL) {
		xd_diag_print(&diag, stderr);
		xd_diag_clear(&diag);
		xc_error("--envoy: cannot load the Envoy API schema %s (--schema, or 'schema' in xdsd.yaml with -c)",
			 cfg.schema);
		rc = XC_USAGE;
	}
	if (rc == XC_OK) {
		xd_load_dir(schema, dir, NULL, 0, &load);
		if (load.rc != 0) {
			xd_diag_print(&load.diag, stderr);
			xc_error("--envoy: %s: %zu error%s in the snapshots as read here (with the schema %s)",
				 dir, xd_diag_total(&load.diag),
				 xd_plural((long long)xd_diag_total(&load.diag)),
				 cfg.schema);
			rc = XC_USAGE;
		} else {
			rc = xc_envoy_judge(schema, &load, dir, o->envoy, "");
		}
		xd_load_free(&load);
	}
	xd_schema_free(schema);
	xd_config_free(&cfg);
	free(dir);
	return rc;
}

/* Key `name` of a dry run's diff, or NULL. */
static json_t *diff_key(json_t *rec, const char *name)
{
	json_t *k;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rec, "diff"), "snapshots"), i, k)
		if (json_is_string(json_object_get(k, "key")) &&
		    strcmp(json_string_value(json_object_get(k, "key")), name) == 0)
			return k;
	return NULL;
}

/* A node a replica's dry run names, and that replica. */
struct named_node {
	const char *id;
	const struct xc_member *m;
};

static int by_id(const void *a, const void *b)
{
	const struct named_node *x = a, *y = b;

	return strcmp(x->id, y->id);
}

/* Whom the change of key `name` reaches: each node once across the
 * replicas (counted per replica when one names only some of its
 * nodes), each replica's count, and with `verbose` each node with the
 * replicas it is on. */
static void key_reach(const struct xc_members *ms, const char *name,
		      const char *safe, bool verbose)
{
	struct named_node *v = NULL;
	size_t n = 0, cap = 0, replicas = 0, distinct = 0;
	long long summed = 0;
	bool all_named = true;

	for (size_t r = 0; r < ms->n; r++) {
		json_t *theirs = ms->m[r].ok ? diff_key(ms->m[r].a.json, name) : NULL;
		json_t *ids = json_object_get(theirs, "node_ids"), *id;
		size_t j;

		if (theirs == NULL)
			continue;
		replicas++;
		summed += xc_int(theirs, "nodes");
		all_named &= xc_int(theirs, "nodes") == (long long)json_array_size(ids);
		json_array_foreach(ids, j, id) {
			if (!json_is_string(id))
				continue;
			v = xd_grow(v, &cap, n + 1, sizeof(*v));
			v[n++] = (struct named_node){json_string_value(id), &ms->m[r]};
		}
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), by_id);
	for (size_t j = 0; j < n; j++)
		distinct += j == 0 || strcmp(v[j].id, v[j - 1].id) != 0;
	if (all_named)
		printf("snapshot '%s' across the fleet: reaches %zu connected node%s on %zu replica%s\n",
		       safe, distinct, xd_plural((long long)distinct), replicas,
		       xd_plural((long long)replicas));
	else
		printf("snapshot '%s' across the fleet: reaches %lld connected node%s on %zu replica%s (counted on each replica: a node on two counts twice)\n",
		       safe, summed, xd_plural(summed), replicas, xd_plural((long long)replicas));
	for (size_t r = 0; r < ms->n; r++) {
		json_t *theirs = ms->m[r].ok ? diff_key(ms->m[r].a.json, name) : NULL;
		char *label;

		if (theirs == NULL)
			continue;
		label = xc_member_label(&ms->m[r]);
		printf("  replica %s: %lld node%s\n", label, xc_int(theirs, "nodes"),
		       xd_plural(xc_int(theirs, "nodes")));
		free(label);
	}
	for (size_t j = 0, e; verbose && j < n; j = e) {
		char *node = xc_safe(v[j].id, strlen(v[j].id));

		printf("  node %s on", node);
		for (e = j; e < n && strcmp(v[e].id, v[j].id) == 0; e++) {
			char *label = xc_member_label(v[e].m);

			printf("%s %s", e > j ? "," : "", label);
			free(label);
		}
		printf("\n");
		free(node);
	}
	free(v);
}

/* Whom each change of `first` reaches on every replica; replicas whose
 * dry run differs said. */
static void fleet_reach(const struct xc_members *ms, json_t *first, bool verbose)
{
	json_t *k;
	size_t i;

	for (size_t r = 0; r < ms->n; r++) {
		json_t *rec = ms->m[r].a.json;
		char *label;

		if (!ms->m[r].ok || rec == first ||
		    xc_int(rec, "changed") == xc_int(first, "changed"))
			continue;
		label = xc_member_label(&ms->m[r]);
		printf("warning: replica %s would change %lld snapshot%s, not %lld: its source differs\n",
		       label, xc_int(rec, "changed"), xd_plural(xc_int(rec, "changed")),
		       xc_int(first, "changed"));
		free(label);
	}
	json_array_foreach(json_object_get(json_object_get(first, "diff"), "snapshots"), i, k) {
		const char *name = json_string_value(json_object_get(k, "key"));
		char *safe = str(k, "key");

		if (name != NULL)
			key_reach(ms, name, safe, verbose);
		free(safe);
	}
}

/* diff --fleet: the dry run `path` on every replica. */
static int fleet_diff(const struct xc_opts *o, const char *path)
{
	struct xc_members ms;
	json_t *first = NULL;
	int rc = xc_members_get(o, &ms), asked = XC_OK;

	if (rc != XC_OK)
		return rc;
	for (size_t i = 0; i < ms.n; i++) {
		struct xc_member *m = &ms.m[i];
		char *label = xc_member_label(m);

		if (m->admin[0] == '\0') {
			xc_error("replica %s has no admin endpoint (admin_listen: off): left out",
				 label);
			asked = XC_UNREACHABLE;
		} else if ((rc = xc_reload_post(&m->o, path, &m->a)) != XC_OK) {
			xc_error("replica %s at %s: no dry run: left out", label, m->admin);
			asked = rc == XC_UNREACHABLE ? rc : asked;
		} else {
			m->ok = true;
			if (first == NULL)
				first = m->a.json;
		}
		free(label);
	}
	if (o->json) {
		xc_members_print_json(&ms, "dry_run");
		rc = first != NULL && xc_int(first, "changed") > 0 ? XC_DIFFERS : XC_OK;
	} else if (first == NULL) {
		rc = XC_UNREACHABLE;
	} else if (!json_is_true(json_object_get(first, "ok"))) {
		xc_reload_print(stderr, first, "");
		rc = XC_USAGE;
	} else {
		rc = xc_diff_show(first, o->verbose);
		if (rc == XC_DIFFERS)
			fleet_reach(&ms, first, o->verbose);
	}
	xc_members_free(&ms);
	return asked == XC_UNREACHABLE && rc != XC_USAGE ? asked : rc;
}

int xc_diff(const struct xc_opts *o, int argc, char **args)
{
	struct xd_buf path = XD_BUF_INIT;
	char abs[PATH_MAX];
	struct xc_answer a;
	int rc;

	(void)args;
	if (argc > 0)
		return xc_usage_error("diff takes no arguments (--snapshots DIR names another directory)");
	xd_buf_printf(&path, "/reload");
	xc_query_add(&path, "dry_run", "1");
	if (o->snapshots != NULL) {
		/* xdsd reads it: a path on its machine, absolute */
		if (o->snapshots[0] != '/' && realpath(o->snapshots, abs) == NULL) {
			xd_buf_free(&path);
			return xc_usage_error("--snapshots '%s': no such directory here; give xdsd's absolute path",
					      o->snapshots);
		}
		xc_query_add(&path, "snapshots", o->snapshots[0] == '/' ? o->snapshots : abs);
	}
	xd_buf_putc(&path, '\0');
	if (o->fleet) {
		rc = fleet_diff(o, (const char *)path.data);
		xd_buf_free(&path);
		goto envoy;
	}
	rc = xc_reload_post(o, (const char *)path.data, &a);
	xd_buf_free(&path);
	/* xdsd answered, but not with a diff (a malformed query): trouble,
	 * as diff(1) says it */
	if (rc != XC_OK)
		return rc == XC_FAILED ? XC_USAGE : rc;
	if (o->json)
		xc_print_raw(&a);
	if (!json_is_true(json_object_get(a.json, "ok"))) {
		if (!o->json)
			xc_reload_print(stderr, a.json, "");
		rc = XC_USAGE;
	} else if (o->json) {
		rc = xc_int(a.json, "changed") > 0 ? XC_DIFFERS : XC_OK;
	} else {
		rc = xc_diff_show(a.json, o->verbose);
	}
	xc_answer_free(&a);
envoy:
	if (rc != XC_USAGE && o->envoy != NULL) {
		int v = envoy_verdict(o, o->snapshots == NULL ? NULL :
					   o->snapshots[0] == '/' ? o->snapshots : abs);

		if (v != XC_OK)
			rc = v == XC_UNREACHABLE ? v : XC_USAGE;
	}
	return rc;
}
