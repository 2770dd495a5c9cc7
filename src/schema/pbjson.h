/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protobuf wire bytes → JSON (jansson), driven by the schema: the form
 * Envoy's config dump shows and REST-JSON clients read.
 *
 * proto3 JSON mapping: field names snake_case (the proto names, as in
 * Envoy's config dump) or lowerCamelCase with XD_PBJSON_CAMEL; 64-bit
 * integers as strings; enums by name (numbers they do not name as
 * numbers); bytes as base64; Any as {"@type": url, fields...} (or
 * {"@type": url, "value": ...} for well-known types); Duration "1.5s",
 * Timestamp RFC 3339 in UTC, wrappers as bare values, Struct/Value/
 * ListValue as plain JSON, FieldMask "a.b,cD". Fields come in field-
 * number order; proto3 defaults without presence are left out.
 *
 * The transcoder reads everything this writes back to the same bytes:
 * bytes → JSON → bytes is the identity for the transcoder's own output.
 * Floats are given as the shortest decimal that reads back as the same
 * float, so any printer precision from 9 digits up keeps them exact.
 *
 * Unknown fields are skipped. Thread: any; the schema is shared.
 * Ownership: the caller owns (json_decref) the returned value.
 */
#ifndef XD_SCHEMA_PBJSON_H
#define XD_SCHEMA_PBJSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/schema.h"
#include "util/diag.h"

/* lowerCamelCase JSON names instead of the proto field names. */
#define XD_PBJSON_CAMEL 0x1u

/*
 * Returns the JSON form of `data` as a message of type `m`, or NULL with
 * the reason in `diag` (malformed bytes, an Any of an unknown type,
 * values JSON cannot carry such as a NaN in a Struct, nesting deeper than
 * 64 levels).
 */
json_t *xd_pbjson_print(const struct xd_schema *s, const struct xd_msgdesc *m,
			const uint8_t *data, size_t len, unsigned flags,
			struct xd_diag *diag);

#endif
