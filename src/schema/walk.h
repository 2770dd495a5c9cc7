/*
 * Visits every value at a dotted field path inside encoded bytes, for
 * the checks that need a few fields of many resources (references
 * between resources, names) without decoding whole messages.
 *
 * The path names fields by their proto (or JSON) names; repeated fields
 * and maps are entered element by element; an Any is entered through its
 * type URL, transparently: for a Listener,
 * "filter_chains.filters.typed_config.rds.route_config_name" visits the
 * route names of every HttpConnectionManager in its filters (Anys of
 * other types, without such a field, are skipped).
 *
 * Thread: any; the schema is shared.
 */
#ifndef XD_SCHEMA_WALK_H
#define XD_SCHEMA_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "schema/schema.h"

/* Path components beyond this make the path invalid. */
#define XD_WALK_MAX_COMPONENTS 32

/*
 * Called with each value's bytes: the contents of a string, bytes or
 * message field; the encoded varint of a varint field; the 4 or 8 bytes
 * of a fixed-width one (elements of packed fields one by one).
 */
typedef void (*xd_walk_fn)(const uint8_t *value, size_t len, void *arg);

/*
 * Returns the number of values visited, or -1 when the path does not
 * fit the schema (a name that is not a field of a message known without
 * an Any, or a scalar in the middle) or the bytes are malformed.
 */
int xd_pb_walk(const struct xd_schema *s, const struct xd_msgdesc *m,
	       const uint8_t *data, size_t len, const char *path,
	       xd_walk_fn visit, void *arg);

#endif
