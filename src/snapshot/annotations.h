/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a snapshot file says of a resource beside its fields
 * (xdsd-snapshot(5)): the "@" keys of the resource's own mapping, read
 * by the hooks this module hands the transcoder (schema/transcode.h,
 * struct xd_ann_hooks), which knows none of them. The rules are the
 * snapshot's:
 *
 *   "@allow": [GLOB, ...]  the identities the resource is served to
 *                          (docs/engine.md, "Secrets only to their
 *                          owner"); the keyword "@anyone" serves it to
 *                          every client, identified or not.
 *   "@ttl": DURATION       how long a client that lost xdsd may keep it
 *                          (docs/protocol.md, rule L1), "30s".
 *   "@dynamic_parameter_constraints": {...}
 *                          the parameters this variant of the name is
 *                          for (rule P1): a DynamicParameterConstraints
 *                          in the proto3 JSON form, encoded through the
 *                          schema and checked (xds/dynparam.h).
 *   "@name": NAME          the name of a resource whose message has no
 *                          name field: a list collection's (rule X3).
 *   "@on_demand": BOOL     a virtual host sent only to clients that ask
 *                          for it, not with a VHDS stream's first
 *                          answer (rule D2).
 *
 * Checked while the file is read, where positions are known: a list of
 * non-empty strings, at most XD_ALLOW_MAX of them, each at most
 * XD_ALLOW_GLOB_MAX bytes; a string starting with "@" must be a keyword;
 * a TTL in whole milliseconds from XD_TTL_MIN_MS to XD_TTL_MAX_MS; a
 * name a non-empty string; "@on_demand" true or false. Where each may
 * stand (no variants of a virtual host, "@name" only on a collection,
 * "@on_demand" only on a virtual host) the loader says.
 *
 * Thread: any; the hooks keep no state (each resource's reading is the
 * transcoder's, one encoder per thread).
 */
#ifndef XD_SNAPSHOT_ANNOTATIONS_H
#define XD_SNAPSHOT_ANNOTATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/transcode.h"

#define XD_ALLOW_MAX 256
#define XD_ALLOW_GLOB_MAX 1024
/* A heartbeat goes at half the TTL: below a second it would be a flood;
 * 30 days keeps every TTL in 32 bits of milliseconds. */
#define XD_TTL_MIN_MS 1000u
#define XD_TTL_MAX_MS (30u * 24 * 3600 * 1000)

/* The hooks for a snapshot file's resources: static, for every file. */
const struct xd_ann_hooks *xd_annotations_hooks(void);

/* One resource's annotations, as the hooks read them. Strings point
 * into the item's annotation bytes (NUL-terminated there). */
struct xd_annotations {
	bool allow_set;                  /* "@allow" was given */
	bool allow_anyone;               /* ... and holds "@anyone" */
	const char *allow[XD_ALLOW_MAX]; /* its globs, keywords left out */
	size_t nallow;
	uint32_t ttl_ms;                 /* "@ttl", 0 when not given */
	/* "@dynamic_parameter_constraints", encoded; NULL when not given
	 * (an empty encoding is refused, so dpc_len > 0 when set) */
	const uint8_t *dpc;
	size_t dpc_len;
	const char *name;                /* "@name", NULL when not given */
	bool on_demand;                  /* "@on_demand": true */
};

/* Reads back what the hooks wrote of an item (struct xd_item's
 * ann/ann_len) into `out`, which then points into those bytes. */
void xd_annotations_read(const uint8_t *ann, size_t len,
			 struct xd_annotations *out);

#endif
