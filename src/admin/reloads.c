/* SPDX-License-Identifier: Apache-2.0 */
#include "admin/reloads.h"

#include "util/xalloc.h"

void xd_reload_record_json(struct xd_jw *w, const struct xd_reload_record *rec)
{
	char when[32];

	/* "errors" lists the first of "error_count" */
	XD_ASSERT_INFO(rec->nkept <= rec->nerrors, "reload by %s: %zu of %zu errors kept",
		       rec->trigger, rec->nkept, rec->nerrors);
	xd_jw_obj(w);
	xd_jw_key(w, "ok");
	xd_jw_bool(w, rec->ok);
	xd_jw_key(w, "trigger");
	xd_jw_str(w, rec->trigger);
	xd_jw_key(w, "finished");
	xd_jw_time(when, rec->at_ms);
	xd_jw_str(w, when);
	xd_jw_key(w, "seconds");
	xd_jw_num(w, rec->seconds);
	xd_jw_key(w, "snapshots");
	xd_jw_uint(w, rec->snapshots);
	xd_jw_key(w, "files");
	xd_jw_uint(w, rec->files);
	xd_jw_key(w, "changed");
	xd_jw_uint(w, rec->changed);
	/* refused, and the last good state served instead */
	xd_jw_key(w, "last_good");
	xd_jw_bool(w, rec->last_good);
	xd_errors_json(w, rec->nerrors, rec->errors, rec->nkept);
	xd_jw_obj_end(w);
}

void xd_errors_json(struct xd_jw *w, size_t nerrors, char *const *errors,
		    size_t nkept)
{
	xd_jw_key(w, "error_count");
	xd_jw_uint(w, nerrors);
	xd_jw_key(w, "errors");
	xd_jw_arr(w);
	for (size_t i = 0; i < nkept; i++)
		xd_jw_str(w, errors[i]);
	xd_jw_arr_end(w);
}
