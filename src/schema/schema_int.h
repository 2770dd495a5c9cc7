/*
 * The schema's runtime tables, shared by the files of src/schema (the
 * transcoder, the JSON printer, the field walker) and their tests.
 * Everything here is immutable once xd_schema_load returns.
 */
#ifndef XD_SCHEMA_SCHEMA_INT_H
#define XD_SCHEMA_SCHEMA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/schema.h"
#include "util/arena.h"

/* FieldDescriptorProto.Type: the values are the ones on the wire of
 * descriptor.proto. */
enum xd_ftype {
	XD_T_DOUBLE = 1,
	XD_T_FLOAT = 2,
	XD_T_INT64 = 3,
	XD_T_UINT64 = 4,
	XD_T_INT32 = 5,
	XD_T_FIXED64 = 6,
	XD_T_FIXED32 = 7,
	XD_T_BOOL = 8,
	XD_T_STRING = 9,
	XD_T_GROUP = 10,
	XD_T_MESSAGE = 11,
	XD_T_BYTES = 12,
	XD_T_UINT32 = 13,
	XD_T_ENUM = 14,
	XD_T_SFIXED32 = 15,
	XD_T_SFIXED64 = 16,
	XD_T_SINT32 = 17,
	XD_T_SINT64 = 18,
};

/* Messages whose JSON form is not an object of their fields. */
enum xd_wkt {
	XD_WKT_NONE = 0,
	XD_WKT_ANY,
	XD_WKT_DURATION,
	XD_WKT_TIMESTAMP,
	XD_WKT_DOUBLE_VALUE,
	XD_WKT_FLOAT_VALUE,
	XD_WKT_INT64_VALUE,
	XD_WKT_UINT64_VALUE,
	XD_WKT_INT32_VALUE,
	XD_WKT_UINT32_VALUE,
	XD_WKT_BOOL_VALUE,
	XD_WKT_STRING_VALUE,
	XD_WKT_BYTES_VALUE,
	XD_WKT_STRUCT,
	XD_WKT_VALUE,
	XD_WKT_LIST_VALUE,
	XD_WKT_EMPTY,
	XD_WKT_FIELD_MASK,
	XD_WKT_COUNT
};

/* Field flags. */
#define XD_F_REPEATED 0x01
#define XD_F_PACKED 0x02   /* repeated scalar written as one packed run */
#define XD_F_PRESENCE 0x04 /* written even when it holds the default */
#define XD_F_MAP 0x08      /* repeated map entries (map<k, v>) */
#define XD_F_OPTIONAL 0x10 /* proto3 `optional` */

struct xd_msgdesc;
struct xd_enumdesc;

struct xd_fielddesc {
	const char *name;      /* proto name, snake_case */
	const char *json_name; /* lowerCamelCase */
	uint32_t number;
	uint16_t name_len, json_len;
	uint8_t type;  /* enum xd_ftype */
	uint8_t flags; /* XD_F_* */
	int16_t oneof; /* index into the message's oneofs, -1: none */
	const struct xd_msgdesc *msg;  /* MESSAGE, GROUP */
	const struct xd_enumdesc *en;  /* ENUM */
	const struct xd_msgdesc *parent;
	/* Limits from protoc-gen-validate rules ((validate.rules).uint32 =
	 * {lte: 65535} and the like) on a number or a wrapper of one:
	 * numbers a document gives outside them are errors, as Envoy would
	 * find them. Integer limits are inclusive. */
	uint8_t bound_kind;  /* XD_BOUND_* */
	uint8_t bound_flags; /* XD_BOUND_LO, _HI, _LO_OPEN, _HI_OPEN */
	union xd_bound {
		int64_t i;
		uint64_t u;
		double d;
	} lo, hi;
};

enum { XD_BOUND_NONE, XD_BOUND_INT, XD_BOUND_UINT, XD_BOUND_DOUBLE };
#define XD_BOUND_LO 0x1
#define XD_BOUND_HI 0x2
#define XD_BOUND_LO_OPEN 0x4 /* doubles: greater than lo */
#define XD_BOUND_HI_OPEN 0x8 /* doubles: less than hi */

struct xd_msgdesc {
	const char *full_name;
	const struct xd_fielddesc *fields; /* ascending field number */
	uint32_t nfields;
	uint32_t noneofs;
	const char *const *oneofs; /* oneof names, declaration order */
	/* Open addressing over both names of every field: index + 1. */
	const uint16_t *name_slots;
	uint32_t name_mask;
	/* Field index + 1 by number for numbers below ndense. */
	const uint16_t *by_number;
	uint32_t ndense;
	uint8_t wkt;    /* enum xd_wkt */
	bool map_entry; /* a map<k, v> entry: fields 1 (key) and 2 (value) */
	bool proto3;
};

struct xd_enumval {
	const char *name;
	int32_t number;
	uint32_t name_len;
};

struct xd_enumdesc {
	const char *full_name;
	const struct xd_enumval *values; /* declaration order */
	uint32_t nvalues;
	const uint16_t *name_slots; /* index + 1 */
	uint32_t name_mask;
	/* Value indexes by ascending number; for aliases the first
	 * declared, as protobuf prints it. */
	const uint16_t *by_number;
	uint32_t nnumbers;
	bool closed; /* proto2: numbers outside the enum are errors */
};

struct xd_schema {
	struct xd_arena arena; /* every table and string */
	struct xd_msgdesc *msgs;
	uint32_t nmsgs;
	struct xd_enumdesc *enums;
	uint32_t nenums;
	const uint32_t *msg_slots; /* index + 1, by full name */
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

/* Sets f's limits from the field's validate rules (schema_rules.c);
 * f->type must be set. */
struct Google__Protobuf__FieldDescriptorProto;
void xd_schema_rules(struct xd_fielddesc *f,
		     const struct Google__Protobuf__FieldDescriptorProto *fp);

/* A field by proto name or JSON name (`len` bytes, not NUL-terminated). */
const struct xd_fielddesc *xd_schema_field_by_name(const struct xd_msgdesc *m,
						   const char *name,
						   size_t len);
const struct xd_fielddesc *xd_schema_field_by_number(const struct xd_msgdesc *m,
						     uint32_t number);
const struct xd_enumval *xd_schema_enum_by_name(const struct xd_enumdesc *e,
						const char *name, size_t len);
const struct xd_enumval *xd_schema_enum_by_number(const struct xd_enumdesc *e,
						  int32_t number);
const struct xd_enumdesc *xd_schema_find_enum(const struct xd_schema *s,
					      const char *full_name);

/* The closest field name or enum value name to a misspelt one, for "did
 * you mean"; NULL when none is close. */
const char *xd_schema_suggest_field(const struct xd_msgdesc *m,
				    const char *name, size_t len);
const char *xd_schema_suggest_enum(const struct xd_enumdesc *e,
				   const char *name, size_t len);

/* The message type closest to a misspelt full name, in its package. */
const char *xd_schema_suggest_message(const struct xd_schema *s,
				      const char *name, size_t len);

/* "uint32", "string", ... as written in .proto files. */
const char *xd_schema_type_name(enum xd_ftype t);

/* The wire type fields of type `t` are written with (enum xd_wiretype). */
uint8_t xd_ftype_wiretype(uint8_t t);

#endif
