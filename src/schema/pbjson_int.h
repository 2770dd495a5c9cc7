/*
 * Between pb_json.c (messages, fields, scalars, maps) and pb_json_wkt.c
 * (the well-known types): the decoder's state and shared steps.
 */
#ifndef XD_SCHEMA_PBJSON_INT_H
#define XD_SCHEMA_PBJSON_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "schema/schema.h"
#include "schema/wire.h"
#include "util/buf.h"
#include "util/diag.h"

/* Messages nested deeper than this are refused. */
#define XD_DEC_MAX_DEPTH 64

struct occ {
	const struct xd_fielddesc *f;
	struct xd_wire_field w;
	uint32_t seq;
};

struct dec {
	const struct xd_schema *s;
	unsigned flags;
	struct xd_diag *diag;
	const struct xd_msgdesc *root;
	unsigned depth;
	struct occ *occs; /* fields of the open messages */
	size_t nocc, cap;
	struct xd_buf path; /* "a.b[2]" for messages */
	int failed;
};

/* Reports the first error (later ones follow from it). */
void xd_dec_fail(struct dec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool xd_dec_wire_ok(const struct xd_fielddesc *f,
		    const struct xd_wire_field *w);
/* A scalar's JSON from its wire value (v) or bytes (p, len). */
json_t *xd_dec_scalar(struct dec *d, const struct xd_fielddesc *f,
		      uint64_t v, const uint8_t *p, size_t len);
/* One value of field f as it is on the wire (not packed). */
json_t *xd_dec_value(struct dec *d, const struct xd_fielddesc *f,
		     const struct xd_wire_field *w);
/* The fields of message m into obj. */
int xd_dec_fields(struct dec *d, const struct xd_msgdesc *m,
		  const uint8_t *p, size_t len, json_t *obj);
/* A message's JSON (depth-checked); p may be NULL when len is 0. */
json_t *xd_dec_msg(struct dec *d, const struct xd_msgdesc *m,
		   const uint8_t *p, size_t len);
/* A well-known type's JSON form (pb_json_wkt.c). */
json_t *xd_dec_wkt(struct dec *d, const struct xd_msgdesc *m,
		   const uint8_t *p, size_t len);

#endif
