/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/key.h"

#include <string.h>

#include "xds/xdstp.h"

void xd_key_read(struct xd_name text, struct xd_key *out,
		 struct xd_dparam params[XD_DPARAM_MAX])
{
	struct xd_name base;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->text = text;
	out->base_len = (uint32_t)text.len;
	/* a locator key by the 0x1f it holds and no name of a snapshot
	 * does (xds/dynparam.h), before anything else: its parameters may
	 * end in "/" and "*" and so look like a glob; a glob by its last
	 * segment */
	if (xd_locator_is(text.data, text.len) &&
	    xd_locator_split(text.data, text.len, &base, params, &n) == 0) {
		out->kind = XD_KEY_LOCATOR;
		out->base_len = (uint32_t)base.len;
		out->params = n > 0 ? params : NULL;
		out->nparams = (uint16_t)n;
		out->xdstp = xd_xdstp_is(base.data, base.len);
		return;
	}
	out->xdstp = xd_xdstp_is(text.data, text.len);
	if (out->xdstp && xd_xdstp_is_glob(text.data, text.len))
		out->kind = XD_KEY_GLOB;
}
