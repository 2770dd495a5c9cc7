/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/refusals.h"

#include <stddef.h>

#include "util/loop_thread.h"

static const char *const names[XD_REFUSED_COUNT] = {
	[XD_REFUSED_PERMISSION_DENIED] = "permission_denied",
	[XD_REFUSED_UNAUTHENTICATED] = "unauthenticated",
	[XD_REFUSED_LIMITS] = "limits",
	[XD_REFUSED_INVALID_ARGUMENT] = "invalid_argument",
	[XD_REFUSED_NO_SNAPSHOT] = "no_snapshot",
	[XD_REFUSED_UNIMPLEMENTED] = "unimplemented",
};

static unsigned long long counts[XD_REFUSED_COUNT];

bool xd_refusal_of(grpc_status_code code, bool has_identity,
		   enum xd_refusal *out)
{
	switch (code) {
	case GRPC_STATUS_PERMISSION_DENIED:
		*out = has_identity ? XD_REFUSED_PERMISSION_DENIED :
				      XD_REFUSED_UNAUTHENTICATED;
		return true;
	case GRPC_STATUS_UNAUTHENTICATED:
		*out = XD_REFUSED_UNAUTHENTICATED;
		return true;
	case GRPC_STATUS_RESOURCE_EXHAUSTED:
		*out = XD_REFUSED_LIMITS;
		return true;
	case GRPC_STATUS_INVALID_ARGUMENT:
		*out = XD_REFUSED_INVALID_ARGUMENT;
		return true;
	case GRPC_STATUS_NOT_FOUND:
		*out = XD_REFUSED_NO_SNAPSHOT;
		return true;
	case GRPC_STATUS_UNIMPLEMENTED:
		*out = XD_REFUSED_UNIMPLEMENTED;
		return true;
	default:
		return false;
	}
}

const char *xd_refusals_count(grpc_status_code code, bool has_identity)
{
	enum xd_refusal r;

	XD_ASSERT_LOOP(); /* counts[] is the loop's, unlocked */
	if (!xd_refusal_of(code, has_identity, &r))
		return NULL;
	counts[r]++;
	return names[r];
}

const char *xd_refusal_name(enum xd_refusal r)
{
	XD_ASSERT_INFO(r < XD_REFUSED_COUNT, "refusal %d", (int)r);
	return names[r];
}

unsigned long long xd_refusals(enum xd_refusal r)
{
	XD_ASSERT_INFO(r < XD_REFUSED_COUNT, "refusal %d", (int)r);
	return counts[r];
}
