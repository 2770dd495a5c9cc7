/* SPDX-License-Identifier: Apache-2.0 */
/*
 * REST-JSON answers printed once: the JSON of a response body (body.h),
 * shared by every REST answer that carries that body, as gRPC clients in
 * one state share the body's bytes (docs/design.md §4). Printing a large
 * snapshot's answer as JSON costs far more than looking it up, and one
 * packet can hold dozens of requests for it.
 *
 * The cache is keyed by the body (it holds a reference, so the key
 * cannot be reused while cached), least recently used first out, bounded
 * by PRINTED_MAX_ENTRIES entries and PRINTED_MAX_BYTES of text. An
 * answer being sent holds its own reference to the printed text, so
 * eviction never pulls bytes from under a send.
 *
 * Ownership: the cache owns its entries; xd_rest_printed_get hands out
 * references. Thread: loop thread only.
 */
#ifndef XD_REST_PRINTED_H
#define XD_REST_PRINTED_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/body.h"
#include "schema/schema.h"
#include "util/diag.h"

/* A response printed as JSON: `text` is the whole object but its
 * closing brace, so that an answer appends its own nonce and the brace. */
struct xd_rest_json {
	unsigned refs;
	struct xd_body *body; /* the key, or NULL when not cached */
	char *text;
	size_t len;
	bool empty;           /* the object had no member ("{") */
};

struct xd_rest_printed;

struct xd_rest_printed *xd_rest_printed_new(const struct xd_schema *schema,
					    const struct xd_msgdesc *response);
void xd_rest_printed_free(struct xd_rest_printed *p);

/*
 * The JSON of `len` bytes of a DiscoveryResponse without its nonce: of
 * `body` when not NULL (cached by it; `data` and `len` are then its
 * bytes), else printed for this answer alone. A new reference, or NULL
 * with the reason in `diag` (the bytes were checked at load: a bug).
 */
struct xd_rest_json *xd_rest_printed_get(struct xd_rest_printed *p,
					 struct xd_body *body,
					 const uint8_t *data, size_t len,
					 struct xd_diag *diag);

void xd_rest_json_unref(struct xd_rest_json *j);

/* Bodies printed since start (an answer found in the cache is not). */
unsigned long long xd_rest_printed_count(const struct xd_rest_printed *p);

#endif
