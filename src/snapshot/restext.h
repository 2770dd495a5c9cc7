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

/*
 * The texts of two versions of one resource, `a` into `out_a` and `b`
 * into `out_b`, for a diff of them: a field that proto3 leaves out of
 * the bytes at its default (a plain scalar: a number, a string, a bool,
 * an enum) and that one side sets is shown on the other side at its
 * default value, marked, as "lb_policy: ROUND_ROBIN (default)", so the
 * diff shows it change from its default rather than appear from
 * nowhere. Inside the fields both set (messages, an Any of one type on
 * both sides, lists of messages item by item); at most 512 such values
 * a resource.
 */
void xd_restext_pair(struct xd_buf *out_a, struct xd_buf *out_b,
		     const struct xd_schema *s, int t, const struct xd_entry *a,
		     const struct xd_entry *b);

#endif
