/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile peer input for tests: messages a client could send to hurt a
 * server, built byte by byte (no protobuf library would write them).
 */
#ifndef XD_TESTS_HOSTILE_H
#define XD_TESTS_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An envoy.config.core.v3.Node {id, cluster, metadata} whose metadata
 * nests Struct -> Value -> Struct ... `depth` levels deep (about 13
 * bytes a level). malloc'd; its length in *len.
 */
uint8_t *xdt_deep_node(const char *id, const char *cluster, int depth,
		       size_t *len);

/*
 * A DiscoveryRequest (or, with `delta`, a DeltaDiscoveryRequest) of
 * `type_url` subscribing to `name`, with the node above. malloc'd.
 */
uint8_t *xdt_deep_node_request(bool delta, const char *type_url,
			       const char *name, const char *id,
			       const char *cluster, int depth, size_t *len);

#endif
