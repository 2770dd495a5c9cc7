/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/node.h"

#include <string.h>

#include "wire/wire.h"
#include "util/common.h"
#include "xds/message.h"

/* gRPC's clients (C core, Go, Java) announce wrapped SotW resources
 * under a name of their own; it means the same thing (rule L2). */
static const struct {
	const char *name;
	unsigned bit;
} known_features[] = {
	{"xds.config.supports-resource-in-sotw", XD_FEATURE_RESOURCE_IN_SOTW},
	{"xds.config.resource-in-sotw", XD_FEATURE_RESOURCE_IN_SOTW},
	{"xds.config.supports-resource-ttl", XD_FEATURE_RESOURCE_TTL},
};

static struct xd_name as_name(const struct xd_wire_field *f)
{
	return (struct xd_name){(const char *)f->data, f->len};
}

static bool name_is(struct xd_name n, const char *s)
{
	return n.len == strlen(s) && memcmp(n.data, s, n.len) == 0;
}

static int parse_locality(struct xd_node *n, const uint8_t *p,
			  const uint8_t *end)
{
	struct xd_wire_field f;
	int rc;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.wt != XD_WT_LEN)
			continue;
		if (f.number == XD_LOCALITY_REGION)
			n->region = as_name(&f);
		else if (f.number == XD_LOCALITY_ZONE)
			n->zone = as_name(&f);
		else if (f.number == XD_LOCALITY_SUB_ZONE)
			n->sub_zone = as_name(&f);
	}
	return rc;
}

/* BuildVersion.version, a SemanticVersion; its metadata is not read. */
static int parse_build_version(struct xd_node *n, const uint8_t *p,
			       const uint8_t *end)
{
	const uint8_t *q, *qend;
	struct xd_wire_field f, g;
	int rc, rc2;

	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		if (f.number != XD_BUILD_VERSION_VERSION || f.wt != XD_WT_LEN)
			continue;
		n->has_build_version = true;
		n->build_version = (struct xd_semver){0, 0, 0};
		q = f.data;
		qend = f.data + f.len;
		while ((rc2 = xd_wire_next(&q, qend, &g)) == 1) {
			uint32_t v = g.v > UINT32_MAX ? UINT32_MAX : (uint32_t)g.v;

			if (g.wt != XD_WT_VARINT)
				continue;
			if (g.number == XD_SEMVER_MAJOR)
				n->build_version.major = v;
			else if (g.number == XD_SEMVER_MINOR)
				n->build_version.minor = v;
			else if (g.number == XD_SEMVER_PATCH)
				n->build_version.patch = v;
		}
		if (rc2 < 0)
			return -1;
	}
	return rc;
}

int xd_node_parse(struct xd_node *n, const uint8_t *data, size_t len,
		  const char **why)
{
	/* (NULL, 0) is the node of a client that sent none: no arithmetic
	 * on NULL, which is undefined even to add 0. */
	const uint8_t *p = data, *end = len > 0 ? data + len : data;
	struct xd_wire_field f;
	int rc;

	memset(n, 0, sizeof(*n));
	n->id = n->cluster = (struct xd_name){"", 0};
	while ((rc = xd_wire_next(&p, end, &f)) == 1) {
		/* Every field read here is length-delimited; the others
		 * (metadata and the rest) are skipped unread. */
		if (f.wt != XD_WT_LEN)
			continue;
		switch (f.number) {
		case XD_NODE_ID:
			n->id = as_name(&f);
			break;
		case XD_NODE_CLUSTER:
			n->cluster = as_name(&f);
			break;
		case XD_NODE_LOCALITY:
			if (parse_locality(n, f.data, f.data + f.len) < 0) {
				*why = "malformed node locality";
				return -1;
			}
			break;
		case XD_NODE_USER_AGENT_NAME:
			n->user_agent_name = as_name(&f);
			break;
		case XD_NODE_USER_AGENT_VERSION:
			n->user_agent_version = as_name(&f);
			break;
		case XD_NODE_USER_AGENT_BUILD_VERSION:
			if (parse_build_version(n, f.data, f.data + f.len) < 0) {
				*why = "malformed node user_agent_build_version";
				return -1;
			}
			break;
		case XD_NODE_CLIENT_FEATURES:
			n->nfeatures++;
			for (size_t i = 0; i < XD_ARRAY_LEN(known_features); i++)
				if (name_is(as_name(&f), known_features[i].name))
					n->features |= known_features[i].bit;
			break;
		default:
			break;
		}
	}
	if (rc < 0) {
		*why = "malformed node";
		return -1;
	}
	if (memchr(n->id.data, 0, n->id.len) != NULL ||
	    memchr(n->cluster.data, 0, n->cluster.len) != NULL) {
		*why = "node id and cluster must not contain NUL bytes";
		return -1;
	}
	return 0;
}
