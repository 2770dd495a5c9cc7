/* SPDX-License-Identifier: Apache-2.0 */
#include "wire/wire.h"

#include "util/xalloc.h"

/* Groups are a proto2 relic; they only appear here as unknown fields to
 * skip, and this bounds the skipping. */
#define MAX_GROUP_DEPTH 64

size_t xd_wire_close(struct xd_buf *b, size_t mark)
{
	size_t len, k;

	/* `mark` is what xd_wire_open returned on this buffer: just past the
	 * length byte it reserved, which still holds 0 until this close */
	XD_ASSERT(mark >= 1 && mark <= b->len && b->data[mark - 1] == 0);
	len = b->len - mark;
	k = xd_wire_varint_size(len);
	if (k > 1) {
		xd_buf_reserve(b, k - 1);
		memmove(b->data + mark + k - 1, b->data + mark, len);
		b->len += k - 1;
	}
	xd_wire_put_varint(b->data + mark - 1, len);
	return len;
}

int xd_wire_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q == end)
			return -1;
		r |= (uint64_t)(*q & 0x7f) << shift;
		if (*q++ < 0x80) {
			/* The tenth byte may only carry the top bit. */
			if (shift == 63 && q[-1] > 1)
				return -1;
			*v = r;
			*p = q;
			return 0;
		}
	}
	return -1;
}

static int read_tag(const uint8_t **p, const uint8_t *end, uint32_t *number,
		    uint8_t *wt)
{
	uint64_t tag;

	if (xd_wire_get_varint(p, end, &tag) != 0)
		return -1;
	if ((tag >> 3) == 0 || (tag >> 3) > XD_WIRE_MAX_FIELD ||
	    (tag & 7) > XD_WT_I32)
		return -1;
	*number = (uint32_t)(tag >> 3);
	*wt = (uint8_t)(tag & 7);
	return 0;
}

/* Skips a group's fields up to its end tag; iterative, bounded. */
static int skip_group(const uint8_t **p, const uint8_t *end, uint32_t number)
{
	uint32_t open[MAX_GROUP_DEPTH];
	unsigned depth = 0;

	open[depth++] = number;
	while (depth > 0) {
		uint32_t n;
		uint8_t wt;
		uint64_t v;

		if (read_tag(p, end, &n, &wt) != 0)
			return -1;
		switch (wt) {
		case XD_WT_VARINT:
			if (xd_wire_get_varint(p, end, &v) != 0)
				return -1;
			break;
		case XD_WT_I64:
		case XD_WT_I32:
			v = wt == XD_WT_I64 ? 8 : 4;
			if ((size_t)(end - *p) < v)
				return -1;
			*p += v;
			break;
		case XD_WT_LEN:
			if (xd_wire_get_varint(p, end, &v) != 0 ||
			    v > (uint64_t)(end - *p))
				return -1;
			*p += v;
			break;
		case XD_WT_SGROUP:
			if (depth == MAX_GROUP_DEPTH)
				return -1;
			open[depth++] = n;
			break;
		case XD_WT_EGROUP:
			if (open[depth - 1] != n)
				return -1;
			depth--;
			break;
		}
	}
	return 0;
}

int xd_wire_next(const uint8_t **p, const uint8_t *end,
		 struct xd_wire_field *f)
{
	const uint8_t *q = *p;
	uint64_t v = 0;

	if (q == end)
		return 0;
	if (read_tag(&q, end, &f->number, &f->wt) != 0)
		return -1;
	f->data = q;
	switch (f->wt) {
	case XD_WT_VARINT:
		if (xd_wire_get_varint(&q, end, &v) != 0)
			return -1;
		f->len = (size_t)(q - f->data);
		break;
	case XD_WT_I64:
	case XD_WT_I32:
		f->len = f->wt == XD_WT_I64 ? 8 : 4;
		if ((size_t)(end - q) < f->len)
			return -1;
		for (size_t i = 0; i < f->len; i++)
			v |= (uint64_t)q[i] << (8 * i);
		q += f->len;
		break;
	case XD_WT_LEN:
		if (xd_wire_get_varint(&q, end, &v) != 0 ||
		    v > (uint64_t)(end - q))
			return -1;
		f->data = q;
		f->len = (size_t)v;
		q += v;
		break;
	case XD_WT_SGROUP:
		if (skip_group(&q, end, f->number) != 0)
			return -1;
		f->len = (size_t)(q - f->data);
		break;
	default: /* an end tag without its start */
		return -1;
	}
	f->v = v;
	*p = q;
	return 1;
}
