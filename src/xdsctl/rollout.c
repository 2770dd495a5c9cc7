/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl rollout status|promote|abort: the staged rollout (`rollout:`
 * in xdsd.yaml). `status` reads /status.json's "rollout"; `promote` and
 * `abort` POST /rollout/promote and /rollout/abort, which answer the
 * same object (admin/rollout.h) or 409 with why not. Exit status 1 when
 * xdsd refused (no rollout under way, none configured), and for
 * `status` when the last rollout failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/show.h"
#include "util/text.h"

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
		free(state);
		return;
	}
	trigger = xc_safe_text(r, "trigger");
	started = xc_safe_text(r, "started");
	reason = xc_safe_text(r, "reason");
	fprintf(out, "rollout %lld: %s (%s, %lld snapshot key%s changed, started %s)\n",
		xc_int(r, "id"), state, trigger, keys, xd_plural(keys), started);
	fprintf(out, "  canaries: %lld connected, %lld answered\n",
		xc_int(r, "canaries"), xc_int(r, "answered"));
	fprintf(out, "  NACKs: %lld (max_nacks %lld)\n", nack,
		xc_int(r, "max_nacks"));
	left = json_object_get(r, "bake_left_seconds");
	if (json_is_number(left))
		fprintf(out, "  bake: %.1f s left\n", json_number_value(left));
	if (reason[0] != '\0')
		fprintf(out, "  %s\n", reason);
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
		return status(o);
	if (strcmp(args[0], "promote") == 0)
		return act(o, "/rollout/promote");
	if (strcmp(args[0], "abort") == 0)
		return act(o, "/rollout/abort");
	return xc_usage_error("rollout '%s': status, promote or abort", args[0]);
}
