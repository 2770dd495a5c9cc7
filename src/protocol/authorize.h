/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who may speak for which nodes (xdsd.yaml(5): `authorize:`).
 *
 * With mTLS a client proves an identity (its certificate's URI SAN, DNS
 * SAN or common name) and claims a node (id and cluster) in its first
 * request. It may when a rule matches all three: each field of a rule is
 * a glob (fnmatch(3); `*` matches `/` too, so an identity glob ending in
 * "/sa/" and a star covers every service account of a namespace).
 * Without rules, every authenticated client may claim any node.
 *
 * Thread: any; pure.
 */
#ifndef XD_PROTOCOL_AUTHORIZE_H
#define XD_PROTOCOL_AUTHORIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"

/* Whether `identity` may claim the node (`node_id`, `node_cluster`);
 * the index of the rule that allows it in *rule (when not NULL), or
 * `n` when there are no rules. */
bool xd_authorize(const struct xd_authz_rule *rules, size_t n,
		  const char *identity, const char *node_id,
		  const char *node_cluster, size_t *rule);

#endif
