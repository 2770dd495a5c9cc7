/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Node a client describes itself with, read straight from the wire.
 *
 * xdsd uses a handful of a Node's fields: id and cluster (which snapshot
 * serves it), locality and user agent (for logs and status), and client
 * features. The rest — metadata, dynamic parameters, extensions — is
 * arbitrarily nested (a Struct in a Value in a Struct ...) and a
 * recursive decoder can be driven off the end of its stack by one
 * request of a few tens of kilobytes. So this reader walks only the
 * Node's own fields, its Locality and the version numbers of its
 * BuildVersion, one level each with the bounded, iterative wire
 * reader, and never looks inside anything else.
 *
 * Ownership: every string points into the caller's bytes (valid while
 * they are). Thread: any; pure.
 */
#ifndef XD_PROTOCOL_NODE_H
#define XD_PROTOCOL_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/nameset.h"

/* Client features xdsd acts on (Node.client_features). */
enum {
	XD_FEATURE_RESOURCE_IN_SOTW = 1u << 0, /* xds.config.supports-resource-in-sotw,
						  or gRPC's xds.config.resource-in-sotw */
	XD_FEATURE_RESOURCE_TTL = 1u << 1,     /* xds.config.supports-resource-ttl */
};

/* A SemanticVersion: major.minor.patch. */
struct xd_semver {
	uint32_t major, minor, patch;
};

struct xd_node {
	struct xd_name id, cluster;
	struct xd_name region, zone, sub_zone; /* locality */
	struct xd_name user_agent_name, user_agent_version;
	/* user_agent_build_version's version: Envoy says its version this
	 * way, and leaves user_agent_version empty */
	bool has_build_version;
	struct xd_semver build_version;
	unsigned features; /* XD_FEATURE_* bits */
	size_t nfeatures;  /* every client feature announced */
};

/*
 * Reads an encoded envoy.config.core.v3.Node; (NULL, 0) is the empty
 * Node of a client that sent none. Returns 0, or -1 with *why
 * set to a static reason when the Node's own fields (or its Locality's,
 * or its BuildVersion's) are not well-formed protobuf, or when id or cluster holds a NUL byte
 * (they name snapshots and appear in logs as text).
 */
int xd_node_parse(struct xd_node *n, const uint8_t *data, size_t len,
		  const char **why);

#endif
