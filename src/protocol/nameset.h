/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interned sets of resource names.
 *
 * A stream's subscription to a type is a set of names. Fleets send the
 * same sets over and over (every Envoy of a group asks for the same
 * endpoints), so sets are interned: equal sets are one shared, immutable,
 * refcounted object, a stream holds a pointer, and "same subscription"
 * is a pointer comparison. Each set has a process-unique id for the
 * response caches (body.h), which must never confuse a freed set with a
 * new one at the same address.
 *
 * Names are byte strings; a set is sorted (bytewise) and duplicate-free.
 * Each is read once, when its set is interned, into the record of what
 * it is as a client's key (key.h): plain, a glob, a locator.
 *
 * Ownership: refcounted; the intern table holds no reference (a set
 * leaves it when its last reference goes). Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_NAMESET_H
#define XD_PROTOCOL_NAMESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/key.h"
#include "util/span.h"

struct xd_nameset;


/* The set of `n` names (any order, repeats allowed). */
struct xd_nameset *xd_nameset_intern(const struct xd_name *names, size_t n);

/* The empty set (interned too). */
struct xd_nameset *xd_nameset_empty(void);

/* `a` plus `b`, `a` minus `b` (interned; new references). */
struct xd_nameset *xd_nameset_union(const struct xd_nameset *a,
				    const struct xd_nameset *b);
struct xd_nameset *xd_nameset_minus(const struct xd_nameset *a,
				    const struct xd_nameset *b);

struct xd_nameset *xd_nameset_ref(struct xd_nameset *s);
void xd_nameset_unref(struct xd_nameset *s);

size_t xd_nameset_count(const struct xd_nameset *s);
uint64_t xd_nameset_id(const struct xd_nameset *s);
/* What the set allocated: names, their bytes, its index. */
size_t xd_nameset_bytes(const struct xd_nameset *s);
struct xd_name xd_nameset_at(const struct xd_nameset *s, size_t i);
/* Name i as a key (key.h), valid as long as the set. */
const struct xd_key *xd_nameset_key(const struct xd_nameset *s, size_t i);
bool xd_nameset_has(const struct xd_nameset *s, const char *name, size_t len);

/* How many of its names are xdstp glob collections (rule X2; in the
 * canonical form of xds/xdstp.h): 0 spares looking for them. */
size_t xd_nameset_globs(const struct xd_nameset *s);

/* How many are locator keys (rule P1; key.h). */
size_t xd_nameset_locators(const struct xd_nameset *s);

/* Interned sets alive now (for tests and statistics). */
size_t xd_nameset_live(void);

#endif
