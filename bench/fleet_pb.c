/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protobuf wire format, writing side (fleet_pb.h): the requests fleet
 * sends (DiscoveryRequest, DeltaDiscoveryRequest and the Node inside
 * them) are a few length-delimited fields, written straight into a
 * growing buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "fleet_pb.h"
#include "fleet_util.h"

static void pbw_need(struct pb_wr *w, size_t n)
{
	if (w->len + n <= w->cap)
		return;
	while (w->len + n > w->cap)
		w->cap = w->cap ? w->cap * 2 : 256;
	w->buf = xrealloc(w->buf, w->cap);
}

static void pbw_varint(struct pb_wr *w, uint64_t v)
{
	pbw_need(w, 10);
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		w->buf[w->len++] = b | (v ? 0x80 : 0);
	} while (v);
}

void pbw_bytes(struct pb_wr *w, uint32_t num, const void *p, size_t n)
{
	pbw_varint(w, (uint64_t)num << 3 | 2);
	pbw_varint(w, n);
	pbw_need(w, n);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void pbw_str(struct pb_wr *w, uint32_t num, const char *s)
{
	if (s != NULL && *s)
		pbw_bytes(w, num, s, strlen(s));
}
