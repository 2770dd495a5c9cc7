/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protobuf wire format for fleet. Reading goes through xdsd's own reader
 * (src/wire/wire.h): pb_sub/pb_next walk the fields of one message,
 * pointing into the caller's bytes. Writing builds the few
 * length-delimited fields of a request into a growing buffer.
 *
 * No state; any thread.
 */
#ifndef BENCH_FLEET_PB_H
#define BENCH_FLEET_PB_H

#include <stddef.h>
#include <stdint.h>

#include "wire/wire.h"

/* Reading: the fields of one message. Groups are skipped as unknown
 * fields; anything malformed ends with -1. */
struct pb_rd {
	const uint8_t *p, *end;
};

static inline struct pb_rd pb_sub(const uint8_t *data, size_t len)
{
	struct pb_rd r = {data, data + len};

	return r;
}

/* 1: a field; 0: end of message; -1: malformed. */
static inline int pb_next(struct pb_rd *r, struct xd_wire_field *f)
{
	return xd_wire_next(&r->p, r->end, f);
}

/* Writing: `buf` is malloc'ed and owned by the writer's user, who frees
 * it or hands it to gRPC. Start from {0}. */
struct pb_wr {
	uint8_t *buf;
	size_t len, cap;
};

void pbw_bytes(struct pb_wr *w, uint32_t num, const void *p, size_t n);
/* Writes nothing for a NULL or empty string, as protobuf omits them. */
void pbw_str(struct pb_wr *w, uint32_t num, const char *s);

#endif
