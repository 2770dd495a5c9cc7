/* SPDX-License-Identifier: Apache-2.0 */
#include "rest/answer.h"

#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "protocol/sub.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"
#include "xds/message.h"

static uint64_t nonce_of(const char *version, const struct xd_request *r)
{
	uint64_t n = XXH3_64bits_withSeed(version, strlen(version),
					  r->names_hash);

	/* 63 bits: xd_sub_parse_nonce reads up to 19 digits, and 0 is
	 * "no nonce" to it */
	n >>= 1;
	return n != 0 ? n : 1;
}

void xd_rest_state(struct xd_snapshot *snap, enum xd_rtype type,
		   const struct xd_request *r, struct xd_rest_state *out)
{
	const char *version = xd_table_version(xd_snapshot_table(snap, type));
	uint64_t sent = xd_sub_parse_nonce(r->nonce);

	memset(out, 0, sizeof(*out));
	snprintf(out->version, sizeof(out->version), "%s", version);
	out->nonce = nonce_of(out->version, r);
	if (r->has_error)
		out->current = sent == out->nonce;
	else
		out->current = r->version_info.len == strlen(version) &&
			       memcmp(r->version_info.data, version,
				      r->version_info.len) == 0 &&
			       (r->nonce.len == 0 || sent == out->nonce);
}

struct xd_body *xd_rest_body(struct xd_snapshot *snap, enum xd_rtype type,
			     const struct xd_request *r, enum xd_form form)
{
	const struct xd_rtype_info *info = xd_rtype_info(type);
	struct xd_table *table = xd_snapshot_table(snap, type);
	struct xd_request first = *r;
	struct xd_body *b;
	struct xd_sub sub;
	/* what the subscription code's debug lines call the type here (it
	 * logs as "stream 0", a REST request having no stream) */
	char label[32];

	XD_ASSERT_LOOP(); /* the body is memoized on the table */
	/* REST is SotW, and only types with a path have it (not virtual
	 * hosts, delta only) */
	XD_ASSERT_INFO(!xd_form_delta(form) && type < XD_RTYPE_COUNT &&
			       info->rest_path != NULL,
		       "REST-JSON %s, form %d", info->service, (int)form);
	/* The request as the first of a stream: a stream's nonce and
	 * version would make it stale or a reconnection (sub.h); the
	 * version and nonce decided whether to wait (xd_rest_state). */
	first.nonce = (struct xd_name){NULL, 0};
	first.version_info = (struct xd_name){NULL, 0};
	first.has_error = false;
	snprintf(label, sizeof(label), "REST-JSON %s", info->service);
	xd_sub_init(&sub, 0, label);
	xd_sub_sotw_request(&sub, &first, info->wildcard_ok, false, NULL,
			    0 /* a first request answers nothing: no time kept */);
	b = xd_sub_next(&sub, table, form, info->full_state);
	xd_sub_clear(&sub);
	return b;
}

void xd_rest_encode_bare(struct xd_snapshot *snap, enum xd_rtype type,
			 struct xd_buf *out)
{
	const struct xd_rtype_info *info = xd_rtype_info(type);
	const char *version = xd_table_version(xd_snapshot_table(snap, type));
	struct xd_response resp = {
		.version = {version, strlen(version)},
		.type_url = {info->type_url, strlen(info->type_url)},
	};
	size_t len = xd_response_size(&resp);

	xd_response_put(xd_buf_reserve(out, len), &resp);
	out->len += len;
}
