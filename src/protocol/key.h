/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A key a client subscribes by, read once: a plain name, a glob
 * collection of xdstp names (rule X2), or a resource locator with its
 * dynamic parameters (rule P1), kept as its locator key
 * (xds/dynparam.h). Every name set (nameset.h) reads each of its names
 * into this record when it is interned, so the body code, the
 * subscription code and the operator's pages ask the record what a
 * key is instead of reading its bytes again; sets are interned, so a
 * set that every client of a fleet shares is read once.
 *
 * What a key stands for in a given table (a resource's own name, an
 * alias, a variant, a glob's member) is a lookup, ledger.h's.
 *
 * Static functions of their input; thread: any.
 */
#ifndef XD_PROTOCOL_KEY_H
#define XD_PROTOCOL_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/span.h"
#include "xds/dynparam.h"

enum xd_key_kind {
	XD_KEY_PLAIN,   /* a name: a resource's, or one no resource has */
	XD_KEY_GLOB,    /* an xdstp glob collection: "xdstp://a/T/p/" "*" */
	XD_KEY_LOCATOR, /* a name with dynamic parameters: one variant of it */
};

struct xd_key {
	struct xd_name text;            /* as subscribed (a locator: its key) */
	const struct xd_dparam *params; /* LOCATOR: its parameters, sorted
					   by key, pointing into `text`;
					   NULL when it has none */
	uint32_t base_len;              /* the name: `text` up to its
					   parameters (all of it but for a
					   locator) */
	uint16_t nparams;
	uint8_t kind;                   /* enum xd_key_kind */
	bool xdstp;                     /* the name is an xdstp:// one (rule X1) */
};

/* The name of `k` without its parameters: what a resource of it is
 * named. */
static inline struct xd_name xd_key_base(const struct xd_key *k)
{
	return (struct xd_name){k->text.data, k->base_len};
}

/* A resource's own name as a key: plain, as every name of a table is
 * (the loader refuses a name with parameters or a glob's). */
static inline struct xd_key xd_key_of_name(const char *name, size_t len)
{
	return (struct xd_key){.text = {name, len}, .base_len = (uint32_t)len};
}

/*
 * Reads `text` (which must outlive *out) into *out; a locator's
 * parameters go to `params` (room for XD_DPARAM_MAX), and *out points
 * at them: the caller keeps them where *out can use them. A locator
 * key that is not well-formed, which the request parser never makes,
 * is taken for a plain name.
 */
void xd_key_read(struct xd_name text, struct xd_key *out,
		 struct xd_dparam params[XD_DPARAM_MAX]);

#endif
