/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text forms of protobuf scalars in the proto3 JSON mapping: integers
 * (exact, with range checks), floating point with NaN/Infinity, booleans,
 * base64, Duration, Timestamp and FieldMask paths, in both directions,
 * plus UTF-8 validation. The transcoder reads these forms and the printer
 * (pbjson.h) writes them; whatever is written reads back the same.
 *
 * Thread: any; pure functions.
 */
#ifndef XD_SCHEMA_SCALAR_H
#define XD_SCHEMA_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum xd_num {
	XD_NUM_OK,
	XD_NUM_SYNTAX,  /* not a number at all */
	XD_NUM_FRACTION, /* a number, but not an integer */
	XD_NUM_RANGE,   /* outside the type's range */
};

/*
 * Integers: decimal, optional sign; a fraction or exponent is accepted
 * when the value is still integral ("1.0", "1e3"), as JSON writers may
 * produce them. Exact: no floating point on the way.
 */
enum xd_num xd_scalar_int(const char *s, size_t len, int64_t min, int64_t max,
			  int64_t *out);
enum xd_num xd_scalar_uint(const char *s, size_t len, uint64_t max,
			   uint64_t *out);

/* Doubles: JSON numbers, "NaN", "Infinity", "-Infinity" and YAML's
 * ".nan", ".inf", "-.inf". XD_NUM_RANGE beyond the double range. */
enum xd_num xd_scalar_double(const char *s, size_t len, double *out);

/* "true"/"false" (also "True", "TRUE"...). Returns 0 or -1. */
int xd_scalar_bool(const char *s, size_t len, bool *out);

/* YAML's meaning of a plain scalar where no schema types it (Struct
 * values): null, a boolean, a number, or else a string. */
enum xd_plain {
	XD_PLAIN_STRING,
	XD_PLAIN_BOOL,
	XD_PLAIN_NUMBER,
};
enum xd_plain xd_scalar_plain(const char *s, size_t len, bool *b, double *d);

/* Standard or URL-safe base64, padding optional. Appends the bytes to
 * `out`; returns 0, or -1 when malformed (then `out` is unchanged). */
int xd_scalar_base64_decode(const char *s, size_t len, struct xd_buf *out);
/* Standard alphabet with padding; appends to `out`. */
void xd_scalar_base64_encode(const uint8_t *p, size_t len,
			     struct xd_buf *out);

#define XD_DURATION_MAX_SECONDS 315576000000LL
#define XD_TIMESTAMP_MIN_SECONDS (-62135596800LL) /* 0001-01-01 */
#define XD_TIMESTAMP_MAX_SECONDS 253402300799LL   /* 9999-12-31 */

/* "1.5s", "-0.5s", up to 9 fractional digits. Returns XD_NUM_OK,
 * XD_NUM_SYNTAX or XD_NUM_RANGE. */
enum xd_num xd_scalar_duration_parse(const char *s, size_t len,
				     int64_t *seconds, int32_t *nanos);
/* Into buf (at least 32 bytes); returns -1 for an invalid duration. */
int xd_scalar_duration_format(int64_t seconds, int32_t nanos, char *buf);

/* RFC 3339: "2024-01-02T03:04:05.5Z", "...+01:00". */
enum xd_num xd_scalar_timestamp_parse(const char *s, size_t len,
				      int64_t *seconds, int32_t *nanos);
/* Into buf (at least 48 bytes), always in UTC ("Z"); -1 when invalid. */
int xd_scalar_timestamp_format(int64_t seconds, int32_t nanos, char *buf);

/* One FieldMask path between commas: lowerCamelCase ("a.fooBar") into
 * snake_case ("a.foo_bar"), appended to `out`. -1 when malformed. */
int xd_scalar_fieldmask_parse(const char *s, size_t len, struct xd_buf *out);
/* The reverse, for printing; -1 when the path has no JSON form. */
int xd_scalar_fieldmask_format(const char *s, size_t len, struct xd_buf *out);

bool xd_scalar_utf8_valid(const char *s, size_t len);

/* The shortest decimal form of a float that reads back as the same
 * float, as a double (so JSON printers write "0.1", not 0.100000001). */
double xd_scalar_float_shortest(float f);

#endif
