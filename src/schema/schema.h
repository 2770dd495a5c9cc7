/*
 * The Envoy API schema: message and enum descriptors loaded at start from
 * the descriptor set xds-api.pb (a FileDescriptorSet that protoc builds
 * from the pinned Envoy API, see docs/design.md §2).
 *
 * Everything the transcoder needs is precomputed at load: messages by
 * full name, fields by number, proto name and JSON name, enum values by
 * name and number, oneof membership, presence, packed-ness, map entries
 * and the well-known types. The structures are private to src/schema
 * (schema_int.h); other modules only name message types.
 *
 * Ownership: xd_schema_load returns a schema the caller frees with
 * xd_schema_free; descriptor pointers live as long as the schema.
 * Thread: a loaded schema is immutable, so any number of threads may
 * use it at once without locks. Loading runs on any one thread.
 */
#ifndef XD_SCHEMA_SCHEMA_H
#define XD_SCHEMA_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "util/diag.h"

struct xd_schema;
struct xd_msgdesc;

/* Descriptor sets larger than this are refused (xds-api.pb is ~0.5 MB). */
#define XD_SCHEMA_MAX_BYTES (64u << 20)

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

/* A message type by full name ("envoy.config.cluster.v3.Cluster"), or
 * NULL. */
const struct xd_msgdesc *xd_schema_find_message(const struct xd_schema *s,
						const char *full_name);

/* The message type a type URL names: the part after the last '/'
 * ("type.googleapis.com/envoy.config.cluster.v3.Cluster"), or NULL. */
const struct xd_msgdesc *xd_schema_find_type_url(const struct xd_schema *s,
						 const char *url, size_t len);

/* The full name of a message type (owned by the schema). */
const char *xd_schema_message_name(const struct xd_msgdesc *m);

/* Numbers of message and enum types, for logs. */
size_t xd_schema_message_count(const struct xd_schema *s);
size_t xd_schema_enum_count(const struct xd_schema *s);

#endif
