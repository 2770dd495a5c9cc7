/* SPDX-License-Identifier: Apache-2.0 */
#include "util/bucket.h"

void xd_bucket_init(struct xd_bucket *b, uint64_t burst, uint64_t now_ms)
{
	b->tokens = (double)burst;
	b->at_ms = now_ms;
}

bool xd_bucket_take(struct xd_bucket *b, uint64_t rate, uint64_t burst,
		    uint64_t now_ms)
{
	if (now_ms > b->at_ms) {
		b->tokens += (double)(now_ms - b->at_ms) * (double)rate / 1000.0;
		if (b->tokens > (double)burst)
			b->tokens = (double)burst;
		b->at_ms = now_ms;
	}
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}
