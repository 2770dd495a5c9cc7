/* SPDX-License-Identifier: Apache-2.0 */
#include "xdsctl/reload.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/show.h"
#include "util/text.h"

/* With a staged rollout, what became of the reload's change (its
 * record's "rollout"): ", staged", ", rolled back", ... or "". */
static const char *rollout_outcome(json_t *rec)
{
	json_t *ro = json_object_get(rec, "rollout");
	const char *s = json_is_string(ro) ? json_string_value(ro) : "";

	if (strcmp(s, "staged") == 0)
		return ", staged for the canaries";
	if (strcmp(s, "promoted") == 0)
		return ", promoted";
	if (strcmp(s, "rolled_back") == 0)
		return ", ROLLED BACK by its rollout";
	if (strcmp(s, "replaced") == 0)
		return ", its rollout replaced by a later one";
	return "";
}

void xc_reload_print(FILE *out, json_t *rec, const char *indent)
{
	char *trigger = xc_safe_text(rec, "trigger");
	char *when = xc_safe_text(rec, "finished");
	json_t *errors = json_object_get(rec, "errors");
	long long nerr = xc_int(rec, "error_count");
	size_t shown = json_array_size(errors);
	json_t *secs = json_object_get(rec, "seconds");

	bool dry = json_is_true(json_object_get(rec, "dry_run"));
	char revision[48] = "";

	/* the snapshots came from etcd: at which revision */
	if (json_is_integer(json_object_get(rec, "etcd_revision")))
		snprintf(revision, sizeof(revision), ", etcd revision %lld",
			 xc_int(rec, "etcd_revision"));
	fprintf(out, "%sreload %s%s (%s, %s, %.3f s%s): ", indent,
		json_is_true(json_object_get(rec, "ok")) ? "ok" :
		dry ? "would be refused" : "refused",
		rollout_outcome(rec), trigger, when,
		json_is_number(secs) ? json_number_value(secs) : 0.0, revision);
	if (dry && !json_is_true(json_object_get(rec, "ok")))
		fprintf(out, "%lld error%s; nothing was changed\n", nerr, xd_plural(nerr));
	else if (json_is_true(json_object_get(rec, "ok")))
		fprintf(out, "%lld snapshot%s from %lld file%s, %lld changed\n",
			xc_int(rec, "snapshots"), xd_plural(xc_int(rec, "snapshots")),
			xc_int(rec, "files"), xd_plural(xc_int(rec, "files")),
			xc_int(rec, "changed"));
	else
		fprintf(out, "%lld error%s; the previous snapshots are still served\n",
			nerr, xd_plural(nerr));
	for (size_t i = 0; i < shown; i++) {
		const char *e = json_string_value(json_array_get(errors, i));
		char *safe = xc_safe(e ? e : "?", e ? strlen(e) : 1);

		fprintf(out, "%s  %s\n", indent, safe);
		free(safe);
	}
	if (nerr > (long long)shown)
		fprintf(out, "%s  (%lld more not shown; xdsd's log has them all)\n",
			indent, nerr - (long long)shown);
	free(trigger);
	free(when);
}

void xc_reload_print_warnings(FILE *out, json_t *diff, const char *indent)
{
	json_t *w;
	size_t i;

	json_array_foreach(json_object_get(diff, "warnings"), i, w) {
		const char *s = json_string_value(w);
		char *safe = xc_safe(s ? s : "?", s ? strlen(s) : 1);

		fprintf(out, "%swarning: %s\n", indent, safe);
		free(safe);
	}
}

/* "    clusters: ~web, +new, -old": the resources of a type the record
 * names (+ added, - removed, ~ changed); a reload's record names the
 * first few of all, its counts say how many. */
static size_t print_names(FILE *out, json_t *t, const char *indent)
{
	json_t *list = json_object_get(t, "resources"), *r;
	char *type;
	size_t i;

	if (json_array_size(list) == 0)
		return 0;
	type = xc_safe_text(t, "type");
	fprintf(out, "%s    %s:", indent, type);
	json_array_foreach(list, i, r) {
		const char *c = json_string_value(json_object_get(r, "change"));
		char *name = xc_safe_text(r, "name");

		fprintf(out, "%s %c%s", i ? "," : "",
			c == NULL ? '?' : strcmp(c, "added") == 0 ? '+' :
			strcmp(c, "removed") == 0 ? '-' : '~', name);
		free(name);
	}
	fprintf(out, "\n");
	free(type);
	return json_array_size(list);
}

/* a + b, held at +-LLONG_MAX: counts from the daemon are summed, and
 * an overflow would be undefined */
static long long add(long long a, long long b)
{
	long long r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? LLONG_MAX : -LLONG_MAX;
	return r < -LLONG_MAX ? -LLONG_MAX : r;
}

void xc_reload_print_diff(FILE *out, json_t *rec, const char *indent)
{
	json_t *d = json_object_get(rec, "diff"), *k;
	long long all = 0;
	size_t i, named = 0;

	json_array_foreach(json_object_get(d, "snapshots"), i, k) {
		char *key = xc_safe_text(k, "key"), *change = xc_safe_text(k, "change");
		long long n[3] = {0, 0, 0};
		size_t j;
		json_t *t;

		json_array_foreach(json_object_get(k, "types"), j, t) {
			n[0] = add(n[0], xc_int(t, "added"));
			n[1] = add(n[1], xc_int(t, "removed"));
			n[2] = add(n[2], xc_int(t, "changed"));
		}
		all += n[0] + n[1] + n[2];
		fprintf(out, "%s  snapshot '%s' %s: %lld resource%s added, %lld removed, %lld changed\n",
			indent, key, change, n[0], xd_plural(n[0]), n[1], n[2]);
		json_array_foreach(json_object_get(k, "types"), j, t)
			named += print_names(out, t, indent);
		free(key);
		free(change);
	}
	if (xc_int(d, "snapshots_not_shown") > 0)
		fprintf(out, "%s  (%lld more snapshots changed)\n", indent,
			xc_int(d, "snapshots_not_shown"));
	else if (named > 0 && all > (long long)named)
		fprintf(out, "%s  (%lld more resources changed, not named)\n", indent,
			all - (long long)named);
	xc_reload_print_warnings(out, d, indent);
}

int xc_reload_post(const struct xc_opts *o, const char *path,
		   struct xc_answer *a)
{
	int rc = xc_call(o, "POST", path, a);

	if (rc != XC_OK)
		return rc;
	/* 200: installed (a dry run: the diff); 422: refused; 503: xdsd
	 * is stopping (or, for a dry run, busy). Each with the record. */
	if ((a->status != 200 && a->status != 422 && a->status != 503) ||
	    !json_is_object(a->json)) {
		rc = xc_refused(o, "/reload", a);
		xc_answer_free(a);
		return rc;
	}
	return XC_OK;
}

int xc_reload(const struct xc_opts *o, int argc, char **args)
{
	struct xc_answer a;
	int rc;
	bool ok;

	(void)args;
	if (argc > 0)
		return xc_usage_error("reload takes no arguments");
	rc = xc_reload_post(o, "/reload", &a);
	if (rc != XC_OK)
		return rc;
	ok = json_is_true(json_object_get(a.json, "ok"));
	if (o->json)
		xc_print_raw(&a);
	else {
		xc_reload_print(ok ? stdout : stderr, a.json, "");
		xc_reload_print_diff(stdout, a.json, "");
	}
	xc_answer_free(&a);
	return ok ? XC_OK : XC_FAILED;
}
