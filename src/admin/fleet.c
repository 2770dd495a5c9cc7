/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/fleet.h"

#include <string.h>

#include "util/loop_thread.h"
#include "util/xalloc.h"

/* A registration's JSON object (`text`, from record.h) with its id and
 * whether it is this replica's put first. */
static void entry(struct xd_jw *w, const char *id, bool self,
		  const struct xd_buf *text)
{
	struct xd_buf b = XD_BUF_INIT;

	XD_ASSERT(text->len >= 2 && text->data[0] == '{');
	xd_buf_printf(&b, "{\"id\":\"");
	xd_json_escape(&b, id, strlen(id));
	xd_buf_printf(&b, "\",\"self\":%s,", self ? "true" : "false");
	xd_buf_append(&b, text->data + 1, text->len - 1);
	xd_jw_raw(w, (const char *)b.data, b.len);
	xd_buf_free(&b);
}

void xd_fleet_view_json(struct xd_jw *w, struct xd_fleet *f)
{
	const struct xd_rollout_record *rec = xd_fleet_record(f);
	struct xd_buf text = XD_BUF_INIT;

	XD_ASSERT_LOOP();
	xd_jw_obj(w);
	xd_jw_key(w, "replica");
	xd_jw_str(w, xd_fleet_replica(f));
	xd_jw_key(w, "shared");
	xd_jw_bool(w, xd_fleet_shared(f));
	xd_jw_key(w, "replicas");
	xd_jw_arr(w);
	xd_fleet_self_json(f, &text);
	entry(w, xd_fleet_self_id(f), true, &text);
	for (size_t i = 0; i < xd_fleet_nreports(f); i++) {
		if (!xd_fleet_report_current(f, i))
			continue;
		text.len = 0;
		xd_rollout_report_write(xd_fleet_report(f, i), &text);
		entry(w, xd_fleet_report_id(f, i), false, &text);
	}
	xd_jw_arr_end(w);
	xd_jw_key(w, "rollout");
	if (rec != NULL) {
		text.len = 0;
		xd_rollout_record_write(rec, &text);
		xd_jw_raw(w, (const char *)text.data, text.len);
	} else {
		xd_jw_null(w);
	}
	xd_jw_obj_end(w);
	xd_buf_free(&text);
}
