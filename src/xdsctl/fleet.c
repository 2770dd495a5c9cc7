/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl fleet: GET /fleet.json, every replica registered under the
 * etcd prefix as the replica asked knows it (admin/fleet.h), one a row:
 * its health, version, the etcd revision of the snapshots it loaded
 * last, the set it serves nodes that are no canary (a fingerprint:
 * equal on replicas that serve the same), its streams and nodes, the
 * rollout it reports on; then the fleet's rollout record. Replicas on one revision that
 * serve different sets are said. Exit status 0 when every replica
 * serves and is healthy and those on one revision serve the same; 1
 * otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "util/xalloc.h"
#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/members.h"
#include "xdsctl/show.h"

#define NCOLS 9

/* "10 canary 2/2" (the rollout it reports on, its canaries), or "-". */
static char *rollout_cell(json_t *reg, json_t *rec)
{
	long long id = xc_int(reg, "rollout");
	const char *state = json_string_value(json_object_get(rec, "state"));

	if (id == 0)
		return xd_strdup("-");
	return xd_asprintf("%lld %s %lld/%lld", id,
			   xc_int(rec, "id") == id && state != NULL ? state : "?",
			   xc_int(reg, "answered"), xc_int(reg, "canaries"));
}

/* Replicas on one revision serving different sets: said, true. */
static bool diverging(const struct xc_members *ms)
{
	bool any = false;

	for (size_t i = 0; i < ms->n; i++) {
		json_t *a = ms->m[i].reg;
		long long rev = xc_int(a, "revision");
		const char *print = json_string_value(json_object_get(a, "serving"));

		for (size_t j = i + 1; rev > 0 && print != NULL && j < ms->n; j++) {
			json_t *b = ms->m[j].reg;
			const char *other = json_string_value(json_object_get(b, "serving"));
			char *la, *lb;

			if (xc_int(b, "revision") != rev || other == NULL ||
			    strcmp(print, other) == 0)
				continue;
			la = xc_member_label(&ms->m[i]);
			lb = xc_member_label(&ms->m[j]);
			printf("warning: replicas %s and %s are both on etcd revision %lld but serve different snapshots to nodes that are no canary (%s, %s)\n",
			       la, lb, rev, print, other);
			free(la);
			free(lb);
			any = true;
		}
	}
	return any;
}

static int print_fleet(const struct xc_members *ms)
{
	static const char *const head[NCOLS] = {
		"REPLICA", "HEALTH", "VERSION", "REVISION", "SERVING",
		"STREAMS", "NODES", "ROLLOUT", "ADMIN",
	};
	json_t *rec = json_object_get(ms->doc.json, "rollout");
	struct xc_table *tab = xc_table_new(NCOLS, head);
	int rc = XC_OK;

	for (size_t i = 0; i < ms->n; i++) {
		const struct xc_member *m = &ms->m[i];
		json_t *reg = m->reg;
		const char *health = json_string_value(json_object_get(reg, "health"));
		char b[NCOLS][64], *name, *ro = rollout_cell(reg, rec);
		const char *row[NCOLS];

		name = xd_asprintf("%s%s", m->name, m->self ? " *" : "");
		row[0] = name;
		row[1] = xc_text(reg, "health", b[1], sizeof(b[1]));
		row[2] = xc_text(reg, "version", b[2], sizeof(b[2]));
		row[3] = xc_text(reg, "revision", b[3], sizeof(b[3]));
		row[4] = xc_text(reg, "serving", b[4], sizeof(b[4]));
		row[5] = xc_text(reg, "streams", b[5], sizeof(b[5]));
		row[6] = xc_text(reg, "clients", b[6], sizeof(b[6]));
		row[7] = ro;
		row[8] = m->admin[0] != '\0' ? m->admin : "-";
		xc_table_row(tab, row);
		if (health == NULL || strcmp(health, "serving") != 0) {
			char *note = xd_asprintf("%s: %s", health != NULL ? health : "unknown",
						 xc_text(reg, "health_why", b[0], sizeof(b[0])));

			xc_table_note(tab, note);
			free(note);
			rc = XC_FAILED;
		}
		free(name);
		free(ro);
	}
	xc_table_print(tab, stdout);
	xc_table_free(tab);
	printf("%zu replica%s (* the one asked)%s\n", ms->n, xd_plural((long long)ms->n),
	       json_is_true(json_object_get(ms->doc.json, "shared")) ? "" :
		       ": snapshots from files, this replica alone");
	if (json_is_object(rec)) {
		char *state = xc_safe_text(rec, "state"), *by = xc_safe_text(rec, "by");
		char *reason = xc_safe_text(rec, "reason");

		printf("rollout %lld: %s (by %s)%s%s\n", xc_int(rec, "id"), state, by,
		       reason[0] != '\0' ? ": " : "", reason);
		free(state);
		free(by);
		free(reason);
	}
	if (diverging(ms))
		rc = XC_FAILED;
	return rc;
}

int xc_fleet(const struct xc_opts *o, int argc, char **args)
{
	struct xc_members ms;
	int rc;

	(void)args;
	if (argc > 0)
		return xc_usage_error("fleet takes no arguments");
	rc = xc_members_get(o, &ms);
	if (rc != XC_OK)
		return rc;
	if (o->json)
		xc_print_raw(&ms.doc);
	rc = o->json ? XC_OK : print_fleet(&ms);
	xc_members_free(&ms);
	return rc;
}
