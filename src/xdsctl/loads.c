/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl loads [CLUSTER-GLOB]: GET /loads as a table, one row per
 * cluster, locality and node that reported load within the window:
 * requests and errors a second over the window (as the reports' own
 * intervals say), the requests in flight at its last report, the
 * requests since it was first reported, and how long ago it last
 * reported. A locality "-" holds a cluster's dropped requests, which
 * belong to none.
 */
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"
#include "util/text.h"
#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/show.h"

#define NCOLS 8

/* "region/zone/sub_zone", "-" for a cluster's drops. */
static char *locality(json_t *e)
{
	json_t *l = json_object_get(e, "locality");
	char r[64], z[64], s[64];

	if (!json_is_object(l))
		return xd_strdup("-");
	return xd_asprintf("%s/%s/%s", xc_text(l, "region", r, sizeof(r)),
			   xc_text(l, "zone", z, sizeof(z)),
			   xc_text(l, "sub_zone", s, sizeof(s)));
}

static void print_table(json_t *doc, const char *glob)
{
	static const char *const head[NCOLS] = {
		"CLUSTER", "LOCALITY", "NODE", "REQ/S", "ERR/S", "IN FLIGHT",
		"REQUESTS", "LAST REPORT",
	};
	json_t *list = json_object_get(doc, "loads"), *e;
	struct xc_table *tab;
	size_t i;

	if (json_array_size(list) == 0) {
		printf("no load reports%s within the last %lld s (%lld reporting stream%s)\n",
		       glob != NULL ? " match" : "", xc_int(doc, "window_seconds"),
		       xc_int(doc, "reporters"),
		       xc_int(doc, "reporters") == 1 ? "" : "s");
		return;
	}
	tab = xc_table_new(NCOLS, head);
	json_array_foreach(list, i, e) {
		json_t *w = json_object_get(e, "window");
		char b[NCOLS][64], *where;
		const char *row[NCOLS];

		where = locality(e);
		snprintf(b[3], sizeof(b[3]), "%.1f",
			 json_number_value(json_object_get(w, "requests_per_second")));
		snprintf(b[4], sizeof(b[4]), "%.1f",
			 json_number_value(json_object_get(w, "errors_per_second")));
		xd_text_age(b[7], sizeof(b[7]), xc_int(e, "age_seconds"));
		row[0] = xc_text(e, "cluster", b[0], sizeof(b[0]));
		row[1] = where;
		row[2] = xc_text(e, "node", b[2], sizeof(b[2]));
		row[3] = b[3];
		row[4] = b[4];
		row[5] = xc_text(e, "in_flight", b[5], sizeof(b[5]));
		row[6] = xc_text(json_object_get(e, "total"), "requests", b[6],
				 sizeof(b[6]));
		row[7] = b[7];
		xc_table_row(tab, row);
		free(where);
	}
	xc_table_print(tab, stdout);
	xc_table_free(tab);
	printf("%lld load report%s within the last %lld s, from %lld reporting stream%s\n",
	       xc_int(doc, "count"), xc_int(doc, "count") == 1 ? "" : "s",
	       xc_int(doc, "window_seconds"), xc_int(doc, "reporters"),
	       xc_int(doc, "reporters") == 1 ? "" : "s");
	if (xc_int(doc, "refused") > 0)
		printf("%lld locality report%s not kept: %lld (load_reports.max_entries) were kept already\n",
		       xc_int(doc, "refused"), xc_int(doc, "refused") == 1 ? "" : "s",
		       xc_int(doc, "max_entries"));
}

int xc_loads(const struct xc_opts *o, int argc, char **args)
{
	struct xd_buf path = XD_BUF_INIT;
	struct xc_answer a;
	int rc;

	if (argc > 1)
		return xc_usage_error("loads takes one cluster glob at most");
	xd_buf_printf(&path, "/loads");
	if (argc == 1)
		xc_query_add(&path, "cluster", args[0]);
	xd_buf_putc(&path, '\0');
	rc = xc_get_json(o, (const char *)path.data, &a);
	if (rc == XC_OK) {
		if (o->json)
			xc_print_raw(&a);
		else
			print_table(a.json, argc == 1 ? args[0] : NULL);
		xc_answer_free(&a);
	}
	xd_buf_free(&path);
	return rc;
}
