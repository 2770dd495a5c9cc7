/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The layout of a loaded schema, private to the descriptor tables' own
 * files: schema.c builds it (with schema_rules.c for the limits) and
 * schema_lookup.c reads it. Everyone else goes through schema.h.
 * Everything here is immutable once xd_schema_load returns.
 */
#ifndef XD_SCHEMA_SCHEMA_INT_H
#define XD_SCHEMA_SCHEMA_INT_H

#include <stddef.h>
#include <stdint.h>

#include "schema/schema.h"
#include "util/arena.h"

struct xd_schema {
	struct xd_arena arena; /* every table and string */
	struct xd_msgdesc *msgs;
	uint32_t nmsgs;
	struct xd_enumdesc *enums;
	uint32_t nenums;
	/* Open addressing by full name (xd_text_hash): index + 1. */
	const uint32_t *msg_slots;
	uint32_t msg_mask;
	const uint32_t *enum_slots;
	uint32_t enum_mask;
	const struct xd_msgdesc *wkt[XD_WKT_COUNT];
	const struct xd_enumdesc *null_value; /* google.protobuf.NullValue */
};

/* Types by full name of `len` bytes (not NUL-terminated). */
const struct xd_msgdesc *xd_schema_message_n(const struct xd_schema *s,
					     const char *name, size_t len);
const struct xd_enumdesc *xd_schema_enum_n(const struct xd_schema *s,
					   const char *name, size_t len);

/* Sets f's limits from the field's validate rules (schema_rules.c), while
 * the field is built; f->type must be set. */
struct Google__Protobuf__FieldDescriptorProto;
void xd_schema_rules(struct xd_fielddesc *f,
		     const struct Google__Protobuf__FieldDescriptorProto *fp);

#endif
