/* SPDX-License-Identifier: Apache-2.0 */
#include "xdsctl/members.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "xdsctl/show.h"

/* Whether an earlier member is the same replica (the same name: its
 * host and xDS address). */
static bool seen(const struct xc_members *ms, json_t *reg)
{
	const char *name = json_string_value(json_object_get(reg, "replica"));

	for (size_t i = 0; i < ms->n; i++)
		if (name != NULL && strcmp(ms->m[i].name, name) == 0)
			return true;
	return false;
}

int xc_members_get(const struct xc_opts *o, struct xc_members *ms)
{
	json_t *list, *reg;
	size_t i;
	int rc;

	memset(ms, 0, sizeof(*ms));
	rc = xc_get_json(o, "/fleet.json", &ms->doc);
	if (rc != XC_OK)
		return rc;
	list = json_object_get(ms->doc.json, "replicas");
	if (!json_is_array(list) || json_array_size(list) == 0) {
		xc_error("bad answer from %s to /fleet.json: no replicas (is this xdsd older than xdsctl?)",
			 o->admin);
		xc_answer_free(&ms->doc);
		return XC_UNREACHABLE;
	}
	ms->m = xd_calloc(json_array_size(list), sizeof(*ms->m));
	json_array_foreach(list, i, reg) {
		struct xc_member *m;
		bool self = json_is_true(json_object_get(reg, "self"));
		const char *name = json_string_value(json_object_get(reg, "replica"));
		const char *admin = json_string_value(json_object_get(reg, "admin"));

		if (!json_is_object(reg) || name == NULL || ms->n == XC_FLEET_MAX ||
		    seen(ms, reg))
			continue;
		m = &ms->m[ms->n++];
		m->name = name;
		m->self = self;
		m->reg = reg;
		m->admin = self ? o->admin : admin != NULL ? admin : "";
		m->o = *o;
		m->o.admin = m->admin;
	}
	return XC_OK;
}

int xc_members_ask(struct xc_members *ms, const char *path)
{
	int worst = XC_OK;

	for (size_t i = 0; i < ms->n; i++) {
		struct xc_member *m = &ms->m[i];
		char *label = xc_member_label(m);
		int rc;

		if (m->admin[0] == '\0') {
			xc_error("replica %s has no admin endpoint (admin_listen: off): left out",
				 label);
			worst = XC_UNREACHABLE;
			free(label);
			continue;
		}
		rc = xc_get_json(&m->o, path, &m->a);
		m->ok = rc == XC_OK;
		if (!m->ok) {
			xc_error("replica %s at %s: no answer to %s: left out", label,
				 m->admin, path);
			if (worst != XC_UNREACHABLE)
				worst = rc;
		}
		free(label);
	}
	return worst;
}

void xc_members_print_json(const struct xc_members *ms, const char *what)
{
	printf("{\"replicas\": [");
	for (size_t i = 0; i < ms->n; i++) {
		json_t *name = json_string(ms->m[i].name);
		char *text = json_dumps(name, JSON_ENCODE_ANY);

		printf("%s{\"replica\": %s, \"%s\": ", i ? ", " : "",
		       text != NULL ? text : "null", what);
		if (ms->m[i].ok)
			fwrite(ms->m[i].a.body, 1, ms->m[i].a.len, stdout);
		else
			printf("null");
		printf("}");
		free(text);
		json_decref(name);
	}
	printf("]}\n");
}

void xc_members_free(struct xc_members *ms)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->m[i].ok)
			xc_answer_free(&ms->m[i].a);
	free(ms->m);
	xc_answer_free(&ms->doc);
	memset(ms, 0, sizeof(*ms));
}

char *xc_member_label(const struct xc_member *m)
{
	char *safe = xc_safe(m->name, strlen(m->name)), *label;

	label = xd_asprintf("'%s'%s", safe, m->self ? " (this one)" : "");
	free(safe);
	return label;
}
