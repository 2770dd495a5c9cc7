/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One resource as YAML text, in the form of a snapshot file: what a
 * preview of a reload compares line by line (snapshot/diff.h). The
 * resource's fields as Envoy's proto3 JSON names them (the same
 * printer as /config_dump), written as YAML, after the annotations
 * that change who gets it or how: "@allow" and "@ttl" (xdsd-snapshot(5)).
 * A secret's fields are not shown (private keys stay in the snapshot
 * files): only that its content is there.
 *
 * Thread: any; the schema is shared read-only.
 */
#ifndef XD_SNAPSHOT_RESTEXT_H
#define XD_SNAPSHOT_RESTEXT_H

#include "schema/schema.h"
#include "snapshot/table.h"
#include "util/buf.h"

/* Appends the text of entry `e` of section `t` (xds/rtype.h). */
void xd_restext(struct xd_buf *out, const struct xd_schema *s, int t,
		const struct xd_entry *e);

#endif
