/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protobuf wire format: varints, tags, fixed-width values and
 * length-delimited fields, written into an xd_buf or read from bytes.
 *
 * Nested messages are written in one pass: xd_wire_open reserves one byte
 * for the length, and xd_wire_close writes it once the body is complete,
 * moving the body up when the length needs more bytes (bodies of 128
 * bytes or more). Each level moves its body at most once, so the extra
 * copying is bounded by the nesting depth times the size, and the output
 * is the minimal encoding protobuf's own serializers produce.
 *
 * Thread: any; pure functions over caller-owned memory.
 */
#ifndef XD_WIRE_WIRE_H
#define XD_WIRE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"

enum xd_wiretype {
	XD_WT_VARINT = 0,
	XD_WT_I64 = 1,
	XD_WT_LEN = 2,
	XD_WT_SGROUP = 3,
	XD_WT_EGROUP = 4,
	XD_WT_I32 = 5,
};

#define XD_WIRE_MAX_FIELD 536870911u

static inline size_t xd_wire_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes at p, which has room for 10 bytes; returns the end. */
static inline uint8_t *xd_wire_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline void xd_wire_varint(struct xd_buf *b, uint64_t v)
{
	uint8_t *p = xd_buf_reserve(b, 10);

	b->len += (size_t)(xd_wire_put_varint(p, v) - p);
}

static inline void xd_wire_tag(struct xd_buf *b, uint32_t number,
			       enum xd_wiretype wt)
{
	xd_wire_varint(b, ((uint64_t)number << 3) | wt);
}

static inline void xd_wire_fixed32(struct xd_buf *b, uint32_t v)
{
	uint8_t *p = xd_buf_reserve(b, 4);

	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	b->len += 4;
}

static inline void xd_wire_fixed64(struct xd_buf *b, uint64_t v)
{
	uint8_t *p = xd_buf_reserve(b, 8);

	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	b->len += 8;
}

static inline void xd_wire_bytes(struct xd_buf *b, uint32_t number,
				 const void *data, size_t len)
{
	xd_wire_tag(b, number, XD_WT_LEN);
	xd_wire_varint(b, len);
	xd_buf_append(b, data, len);
}

static inline uint64_t xd_wire_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t xd_wire_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Starts a length-delimited body (after its tag); returns the mark that
 * xd_wire_close takes. */
static inline size_t xd_wire_open(struct xd_buf *b)
{
	xd_buf_putc(b, 0);
	return b->len;
}

/* Ends the body started at `mark`; returns its length. */
size_t xd_wire_close(struct xd_buf *b, size_t mark);

/* One field read from the wire. For VARINT, I32 and I64 `v` holds the
 * value; for every type `data`/`len` span the value's bytes on the wire
 * (the body, for LEN; the whole group, for SGROUP). */
struct xd_wire_field {
	uint32_t number;
	uint8_t wt;
	uint64_t v;
	const uint8_t *data;
	size_t len;
};

/* Reads a varint; returns 0, or -1 when truncated or over 10 bytes. */
int xd_wire_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* Reads the next field at *p and advances past it. Returns 1 for a
 * field, 0 at `end`, -1 for malformed input (bad tag, truncated value,
 * unbalanced or too deeply nested groups). */
int xd_wire_next(const uint8_t **p, const uint8_t *end,
		 struct xd_wire_field *f);

#endif
