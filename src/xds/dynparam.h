/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dynamic parameters (docs/protocol.md, rule P1): a client subscribes
 * with a ResourceLocator {name, dynamic_parameters}, and a snapshot may
 * hold several variants of one name, each with the
 * DynamicParameterConstraints that say which parameters it is for.
 *
 * Locator keys. A locator becomes one string, so that it travels through
 * subscriptions, interned name sets and the response memos exactly as a
 * name does (docs/engine.md, "Dynamic parameters"):
 *
 *     name 0x1f key1 0x1d value1 0x1e key2 0x1d value2 ...
 *
 * its parameters sorted by key. A locator without parameters is the name
 * and a lone 0x1f. The request parser refuses keys and values holding
 * control bytes, so the separators are unambiguous; a resource name in a
 * snapshot never holds 0x1f (the loader refuses it), so a plain name is
 * never taken for a key.
 *
 * Constraints stay in their protobuf encoding (the bytes the snapshot's
 * "@dynamic_parameter_constraints" encodes to, which also go to clients
 * in ResourceName): xd_dpc_check validates them once at load, and
 * xd_dpc_match walks them in place, without allocating.
 *
 * Thread: any; nothing here keeps state.
 */
#ifndef XD_XDS_DYNPARAM_H
#define XD_XDS_DYNPARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/span.h"

#define XD_LOCATOR_SEP '\x1f'
#define XD_LOCATOR_PAIR '\x1e'
#define XD_LOCATOR_KV '\x1d'

/* Bounds on what one locator may carry (rule P1): its parameters, and
 * the bytes of its key. */
#define XD_DPARAM_MAX 32
#define XD_LOCATOR_KEY_MAX 4096
/* How deep constraints may nest (not of and of or of ...). */
#define XD_DPC_MAX_DEPTH 16

/* One dynamic parameter; lists of them are sorted by key, keys unique. */
struct xd_dparam {
	struct xd_name key, value;
};

/* Whether `key` is a locator key rather than a plain name. */
static inline bool xd_locator_is(const char *key, size_t len)
{
	return len > 0 && __builtin_memchr(key, XD_LOCATOR_SEP, len) != NULL;
}

/*
 * The key of the locator (`name`, the `n` parameters in any order):
 * malloc'ed, NUL-terminated, its length in *len. Returns NULL with *why
 * set to a static reason when a key repeats, a name, key or value holds
 * a control byte, there are more than XD_DPARAM_MAX parameters or the
 * key would exceed XD_LOCATOR_KEY_MAX. Sorts `params`.
 */
char *xd_locator_key(struct xd_name name, struct xd_dparam *params, size_t n,
		     size_t *len, const char **why);

/*
 * The parts of a locator key: its name, and (when `params` is not NULL)
 * up to XD_DPARAM_MAX parameters pointing into `key`, sorted by key, their
 * count in *n. Returns -1 if `key` is not a well-formed locator key.
 */
int xd_locator_split(const char *key, size_t len, struct xd_name *name,
		     struct xd_dparam *params, size_t *n);

/*
 * Checks an encoded envoy.service.discovery.v3.DynamicParameterConstraints:
 * each level sets one of constraint, or_constraints, and_constraints or
 * not_constraints; a single constraint has a key and one of value or
 * exists; at most XD_DPC_MAX_DEPTH levels. Returns NULL if it is good,
 * else a static reason.
 */
const char *xd_dpc_check(const uint8_t *dpc, size_t len);

/* Whether checked constraints accept the parameters (sorted by key). */
bool xd_dpc_match(const uint8_t *dpc, size_t len,
		  const struct xd_dparam *params, size_t n);

#endif
