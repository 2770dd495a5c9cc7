/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Envoy API schema: message and enum descriptors loaded at start from
 * the descriptor set xds-api.pb (a FileDescriptorSet that protoc builds
 * from the pinned Envoy API, see docs/design.md §2), and the walker that
 * reads fields out of encoded messages with them.
 *
 * Everything the transcoder and the printer need is precomputed at load:
 * messages by full name, fields by number, proto name and JSON name, enum
 * values by name and number, oneof membership, presence, packed-ness, map
 * entries, the well-known types and the numeric validate.rules limits.
 * The descriptor structs below are read-only views of those tables; they
 * are not opaque because the encoder and the printer read their fields
 * once per value. struct xd_schema itself is opaque.
 *
 * Ownership: xd_schema_load returns a schema the caller frees with
 * xd_schema_free; every descriptor, name and table lives as long as the
 * schema.
 * Thread: a loaded schema is immutable, so any number of threads may use
 * it at once without locks. Loading runs on any one thread.
 */
#ifndef XD_SCHEMA_SCHEMA_H
#define XD_SCHEMA_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/diag.h"

struct xd_schema;

/* Descriptor sets larger than this are refused (xds-api.pb is ~0.5 MB). */
#define XD_SCHEMA_MAX_BYTES (64u << 20)

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

/* ---- loading ---- */

/*
 * Reads and indexes the descriptor set at `path`. Returns NULL with the
 * reason in `diag` ("path: ...") when the file is missing, unreadable,
 * not a descriptor set, or inconsistent (unknown type references,
 * duplicate names or field numbers).
 */
struct xd_schema *xd_schema_load(const char *path, struct xd_diag *diag);

/* The same from bytes in memory; `name` stands for the file in errors. */
struct xd_schema *xd_schema_load_mem(const uint8_t *data, size_t len,
				     const char *name, struct xd_diag *diag);

void xd_schema_free(struct xd_schema *s);

/* ---- types ---- */

/* A message type by full name ("envoy.config.cluster.v3.Cluster"), or
 * NULL. */
const struct xd_msgdesc *xd_schema_find_message(const struct xd_schema *s,
						const char *full_name);

/* The message type a type URL names: the part after the last '/'
 * ("type.googleapis.com/envoy.config.cluster.v3.Cluster"), or NULL. */
const struct xd_msgdesc *xd_schema_find_type_url(const struct xd_schema *s,
						 const char *url, size_t len);

const struct xd_enumdesc *xd_schema_find_enum(const struct xd_schema *s,
					      const char *full_name);

/* A well-known type, or NULL when the descriptor set lacks it. */
const struct xd_msgdesc *xd_schema_wkt(const struct xd_schema *s,
				       enum xd_wkt w);

/* google.protobuf.NullValue (whose fields JSON writes as null), or NULL. */
const struct xd_enumdesc *xd_schema_null_value(const struct xd_schema *s);

/* The full name of a message type (owned by the schema). */
const char *xd_schema_message_name(const struct xd_msgdesc *m);

/* Numbers of message and enum types, for logs. */
size_t xd_schema_message_count(const struct xd_schema *s);
size_t xd_schema_enum_count(const struct xd_schema *s);

/* ---- fields and values ---- */

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

/* "uint32", "string", ... as written in .proto files. */
const char *xd_schema_type_name(enum xd_ftype t);

/* The wire type fields of type `t` are written with (enum xd_wiretype
 * of wire.h). */
uint8_t xd_schema_wiretype(uint8_t t);

/* Whether repeated fields of type `t` may come as one packed run (every
 * scalar but strings and bytes); readers accept both forms. */
static inline bool xd_schema_packable(uint8_t t)
{
	return t != XD_T_STRING && t != XD_T_BYTES && t != XD_T_MESSAGE &&
	       t != XD_T_GROUP;
}

/* ---- did you mean ---- */

/* The closest field name or enum value name to a misspelt one; NULL
 * when none is close. */
const char *xd_schema_suggest_field(const struct xd_msgdesc *m,
				    const char *name, size_t len);
const char *xd_schema_suggest_enum(const struct xd_enumdesc *e,
				   const char *name, size_t len);

/* The message type closest to a misspelt full name, in its package. */
const char *xd_schema_suggest_message(const struct xd_schema *s,
				      const char *name, size_t len);

/* ---- the walker ---- */

/*
 * xd_schema_walk visits every value at a dotted field path inside
 * encoded bytes, for the checks that need a few fields of many resources
 * (references between resources, names) without decoding whole
 * messages.
 *
 * The path names fields by their proto (or JSON) names; repeated fields
 * and maps are entered element by element; an Any is entered through its
 * type URL, transparently: for a Listener,
 * "filter_chains.filters.typed_config.rds.route_config_name" visits the
 * route names of every HttpConnectionManager in its filters (Anys of
 * other types, without such a field, are skipped).
 *
 * A component "name[cond]" enters (or visits) only the elements of the
 * message field `name` that have their own field `cond` set:
 * "filter_chains.filters.typed_config.http_filters[config_discovery].name"
 * visits the names of the HTTP filters that take their config by ECDS.
 */

/* Path components beyond this make the path invalid. */
#define XD_SCHEMA_WALK_MAX_COMPONENTS 32

/*
 * Called with each value's bytes: the contents of a string, bytes or
 * message field; the encoded varint of a varint field; the 4 or 8 bytes
 * of a fixed-width one (elements of packed fields one by one). The bytes
 * are the caller's `data`, valid as long as it is.
 */
typedef void (*xd_schema_walk_fn)(const uint8_t *value, size_t len,
				  void *arg);

/*
 * Returns the number of values visited, or -1 when the path does not
 * fit the schema (a name that is not a field of a message known without
 * an Any, or a scalar in the middle) or the bytes are malformed.
 */
int xd_schema_walk(const struct xd_schema *s, const struct xd_msgdesc *m,
		   const uint8_t *data, size_t len, const char *path,
		   xd_schema_walk_fn visit, void *arg);

#endif
