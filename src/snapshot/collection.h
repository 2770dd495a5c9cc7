/* SPDX-License-Identifier: Apache-2.0 */
/*
 * List collections in snapshot files (docs/protocol.md rule X3,
 * xdsd-snapshot(5)): what the loader learns of one <T>Collection
 * (envoy.config.listener.v3.ListenerCollection, ...) and the checks it
 * passes before it is served.
 *
 *   - Its name ("@name": the message has no name field) is an xdstp
 *     name of the collection's own type, kept in canonical form (rule
 *     X1) with its context parameters: a client asks for the
 *     collection by that name, parameters included.
 *   - Each entry is a locator or an inline entry. A locator names one
 *     resource of the member type (not a glob), which the snapshot
 *     must have: it becomes a reference, checked with every other. An
 *     inline entry holds a resource of the member type in its Any; it
 *     is checked as a resource of that type (its name, its references,
 *     which must resolve too), and its optional entry name matches
 *     protoc-gen-validate's pattern for it and is unique in the
 *     collection.
 *   - No member twice: a locator and an inline resource of the same
 *     name are one member written twice.
 *
 * An inline resource whose xdstp name is spelled otherwise than in
 * canonical form is served with the canonical name (rule X1), so the
 * collection's bytes are then rewritten.
 *
 * Thread: any; the schema is shared read-only.
 */
#ifndef XD_SNAPSHOT_COLLECTION_H
#define XD_SNAPSHOT_COLLECTION_H

#include <stddef.h>
#include <stdint.h>

#include "schema/schema.h"
#include "snapshot/table.h"

struct xd_collinfo {
	char *name;          /* canonical */
	struct xd_ref *refs; /* sorted, unique; names malloc'd */
	size_t nrefs;
	uint8_t *data;       /* the bytes to serve, when they are not the
				input's (an inline name made canonical);
				else NULL */
	size_t len;
};

/*
 * Analyzes the collection `data` of type `c` named `name` (NULL: not
 * named), whose inline resources are messages `member`. Returns 0, or
 * -1 with the first problem in `why` ("entries[2].locator: ...") and
 * nothing to free.
 */
int xd_collection_analyze(const struct xd_schema *s, enum xd_ctype c,
			  const struct xd_msgdesc *member, const char *name,
			  const uint8_t *data, size_t len,
			  struct xd_collinfo *out, char *why, size_t whylen);

void xd_collinfo_clear(struct xd_collinfo *ci);

#endif
