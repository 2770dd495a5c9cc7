/* SPDX-License-Identifier: Apache-2.0 */
/* xdsctl dump SNAPSHOT [TYPE [NAME]]: GET /config_dump, indented. */
#include <stdio.h>

#include "util/buf.h"
#include "xdsctl/call.h"
#include "xdsctl/ctl.h"
#include "xdsctl/show.h"

int xc_dump(const struct xc_opts *o, int argc, char **args)
{
	static const char *const keys[] = {"snapshot", "type", "name"};
	struct xd_buf path = XD_BUF_INIT;
	struct xc_answer a;
	int rc;

	if (argc < 1)
		return xc_usage_error("dump needs a snapshot: dump SNAPSHOT [TYPE [NAME]]");
	if (argc > 3)
		return xc_usage_error("dump takes at most SNAPSHOT TYPE NAME");
	xd_buf_printf(&path, "/config_dump");
	for (int i = 0; i < argc; i++)
		xc_query_add(&path, keys[i], args[i]);
	xd_buf_putc(&path, '\0');
	rc = xc_get_json(o, (const char *)path.data, &a);
	if (rc == XC_OK) {
		if (o->json)
			xc_print_raw(&a);
		else
			xc_json_pretty(stdout, a.body, a.len);
		xc_answer_free(&a);
	}
	xd_buf_free(&path);
	return rc;
}
