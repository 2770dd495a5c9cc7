/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Discovery requests, read straight from the wire.
 *
 * Envoy repeats its whole subscription in every SotW request (every
 * ACK of an EDS response lists every cluster), so requests are parsed
 * in one pass without copying: names point into the received bytes, and
 * a hash of the raw name list lets an unchanged list skip all set work.
 * The node (first request only) is read separately (node.h).
 *
 * Resource locators (SotW resource_locators, delta
 * resource_locators_subscribe and _unsubscribe, rule P1) are read into
 * locator keys (xds/dynparam.h) and join the names: from there on a
 * locator is a name like any other.
 *
 * Ownership: a parsed request points into the caller's bytes and owns
 * only its arrays and locator keys; xd_request_free releases them.
 * Thread: any.
 */
#ifndef XD_PROTOCOL_REQUEST_H
#define XD_PROTOCOL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/nameset.h"
#include "snapshot/table.h"

struct xd_request {
	bool delta;
	struct xd_name type_url;
	struct xd_name nonce;          /* response_nonce */
	struct xd_name version_info;   /* SotW */
	struct xd_span node;           /* the encoded Node, if present */
	bool has_error;                /* error_detail present: a NACK */
	int32_t error_code;
	struct xd_name error_message;
	/* SotW resource_names, or delta resource_names_subscribe */
	struct xd_name *names;
	size_t nnames;
	uint64_t names_hash;
	/* delta */
	struct xd_name *unsubscribe;
	size_t nunsubscribe;
	struct xd_name *initial_names, *initial_versions;
	size_t ninitial;
	size_t cap_names, cap_unsub, cap_initial;
	/* Resource locators (rule P1) go among the names above as locator
	 * keys (xds/dynparam.h), which the request owns: */
	char **keys;
	size_t nkeys, cap_keys;
};

/*
 * Parses a DiscoveryRequest (or, with `delta`, a DeltaDiscoveryRequest);
 * `data` may be NULL when `len` is 0. Returns 0, or -1 with *why set to
 * a static reason for malformed input (not protobuf, or a type_url
 * holding a NUL byte).
 */
int xd_request_parse(struct xd_request *r, const uint8_t *data, size_t len,
		     bool delta, const char **why);

void xd_request_free(struct xd_request *r);

#endif
