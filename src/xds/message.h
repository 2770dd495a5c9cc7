/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The xDS transport messages on the wire: the field numbers of every
 * message xdsd reads or writes (CSDS's too), and the encoders of the ones it writes
 * (Any, Resource, DiscoveryResponse, DeltaDiscoveryResponse). Every
 * other module that touches these messages names their fields here,
 * never by tag bytes.
 *
 * Encoders work in two passes over caller-owned memory: *_size says
 * how many bytes, *_put writes them at p and returns the end. Fields
 * are written in field-number order, as protobuf's own serializers do,
 * except that a response's nonce is appended per stream after its
 * shared body (protobuf accepts fields in any order).
 *
 * Thread: any; pure.
 */
#ifndef XD_XDS_MESSAGE_H
#define XD_XDS_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/span.h"

/* google.protobuf.Any */
enum { XD_ANY_TYPE_URL = 1, XD_ANY_VALUE = 2 };

/* google.rpc.Status (a request's error_detail) */
enum { XD_STATUS_CODE = 1, XD_STATUS_MESSAGE = 2, XD_STATUS_DETAILS = 3 };

/* envoy.service.discovery.v3.Resource */
enum {
	XD_RESOURCE_VERSION = 1,
	XD_RESOURCE_RESOURCE = 2,
	XD_RESOURCE_NAME = 3,
	XD_RESOURCE_ALIASES = 4,
	XD_RESOURCE_TTL = 6,
	XD_RESOURCE_RESOURCE_NAME = 8, /* ResourceName, instead of name */
};

/* envoy.service.discovery.v3.ResourceName and ResourceLocator (rule P1) */
enum { XD_RESOURCE_NAME_NAME = 1, XD_RESOURCE_NAME_CONSTRAINTS = 2 };
enum { XD_LOCATOR_NAME = 1, XD_LOCATOR_PARAMETERS = 2 /* map<string, string> */ };

#define XD_RESOURCE_TYPE_URL \
	"type.googleapis.com/envoy.service.discovery.v3.Resource"

/* envoy.service.discovery.v3.DiscoveryRequest */
enum {
	XD_REQUEST_VERSION_INFO = 1,
	XD_REQUEST_NODE = 2,
	XD_REQUEST_RESOURCE_NAMES = 3,
	XD_REQUEST_TYPE_URL = 4,
	XD_REQUEST_RESPONSE_NONCE = 5,
	XD_REQUEST_ERROR_DETAIL = 6,
	XD_REQUEST_RESOURCE_LOCATORS = 7,
};

/* envoy.service.discovery.v3.DeltaDiscoveryRequest */
enum {
	XD_DELTA_REQUEST_NODE = 1,
	XD_DELTA_REQUEST_TYPE_URL = 2,
	XD_DELTA_REQUEST_SUBSCRIBE = 3,
	XD_DELTA_REQUEST_UNSUBSCRIBE = 4,
	XD_DELTA_REQUEST_INITIAL_VERSIONS = 5, /* map<string, string> */
	XD_DELTA_REQUEST_RESPONSE_NONCE = 6,
	XD_DELTA_REQUEST_ERROR_DETAIL = 7,
	XD_DELTA_REQUEST_LOCATORS_SUBSCRIBE = 8,
	XD_DELTA_REQUEST_LOCATORS_UNSUBSCRIBE = 9,
};

/* A map<string, string> entry */
enum { XD_MAP_KEY = 1, XD_MAP_VALUE = 2 };

/* envoy.service.discovery.v3.DiscoveryResponse and, where they share a
 * number, DeltaDiscoveryResponse */
enum {
	XD_RESPONSE_VERSION_INFO = 1, /* delta: system_version_info */
	XD_RESPONSE_RESOURCES = 2,
	XD_RESPONSE_TYPE_URL = 4,
	XD_RESPONSE_NONCE = 5,
	XD_DELTA_RESPONSE_REMOVED = 6,
	XD_DELTA_RESPONSE_REMOVED_NAMES = 8, /* ResourceName */
};

/* envoy.config.core.v3.Node, and its Locality */
enum {
	XD_NODE_ID = 1,
	XD_NODE_CLUSTER = 2,
	XD_NODE_METADATA = 3,
	XD_NODE_LOCALITY = 4,
	XD_NODE_USER_AGENT_NAME = 6,
	XD_NODE_USER_AGENT_VERSION = 7,
	XD_NODE_USER_AGENT_BUILD_VERSION = 8, /* BuildVersion, as Envoy sends */
	XD_NODE_CLIENT_FEATURES = 10,
};
enum { XD_LOCALITY_REGION = 1, XD_LOCALITY_ZONE = 2, XD_LOCALITY_SUB_ZONE = 3 };
/* envoy.config.core.v3.BuildVersion and envoy.type.v3.SemanticVersion */
enum { XD_BUILD_VERSION_VERSION = 1 };
enum { XD_SEMVER_MAJOR = 1, XD_SEMVER_MINOR = 2, XD_SEMVER_PATCH = 3 };

/* google.protobuf.Timestamp */
enum { XD_TIMESTAMP_SECONDS = 1, XD_TIMESTAMP_NANOS = 2 };

/* The client status service (CSDS, envoy.service.status.v3): the
 * request, its matchers (envoy.type.matcher.v3) and the response. */
enum {
	XD_CSDS_REQUEST_NODE_MATCHERS = 1,
	XD_CSDS_REQUEST_NODE = 2,
	XD_CSDS_REQUEST_EXCLUDE_CONTENTS = 3, /* exclude_resource_contents */
};
enum { XD_NODE_MATCHER_NODE_ID = 1, XD_NODE_MATCHER_NODE_METADATAS = 2 };
enum {
	XD_STRING_MATCHER_EXACT = 1,
	XD_STRING_MATCHER_PREFIX = 2,
	XD_STRING_MATCHER_SUFFIX = 3,
	XD_STRING_MATCHER_SAFE_REGEX = 5,
	XD_STRING_MATCHER_IGNORE_CASE = 6,
	XD_STRING_MATCHER_CONTAINS = 7,
	XD_STRING_MATCHER_CUSTOM = 8,
};
enum { XD_CSDS_RESPONSE_CONFIG = 1 };
enum { XD_CLIENT_CONFIG_NODE = 1, XD_CLIENT_CONFIG_GENERIC = 3 };
/* ClientConfig.GenericXdsConfig */
enum {
	XD_GENERIC_TYPE_URL = 1,
	XD_GENERIC_NAME = 2,
	XD_GENERIC_VERSION_INFO = 3,
	XD_GENERIC_XDS_CONFIG = 4,
	XD_GENERIC_LAST_UPDATED = 5,
	XD_GENERIC_CONFIG_STATUS = 6,
	XD_GENERIC_CLIENT_STATUS = 7,
	XD_GENERIC_ERROR_STATE = 8,
};
/* envoy.admin.v3.UpdateFailureState */
enum {
	XD_FAILURE_CONFIGURATION = 1,
	XD_FAILURE_LAST_ATTEMPT = 2,
	XD_FAILURE_DETAILS = 3,
	XD_FAILURE_VERSION_INFO = 4,
};
/* envoy.service.status.v3.ConfigStatus: the server's view */
enum {
	XD_CONFIG_SYNCED = 1,
	XD_CONFIG_NOT_SENT = 2,
	XD_CONFIG_STALE = 3,
	XD_CONFIG_ERROR = 4,
};
/* envoy.admin.v3.ClientResourceStatus: the client's */
enum {
	XD_CLIENT_REQUESTED = 1,
	XD_CLIENT_DOES_NOT_EXIST = 2,
	XD_CLIENT_ACKED = 3,
	XD_CLIENT_NACKED = 4,
};

/* ---------------- fields ---------------- */

/* A length-delimited field `number` of `len` bytes, whole. */
size_t xd_msg_field_size(uint32_t number, size_t len);
/* Its tag and length only; the `len` bytes follow. */
uint8_t *xd_msg_put_header(uint8_t *p, uint32_t number, size_t len);
uint8_t *xd_msg_put_bytes(uint8_t *p, uint32_t number, const void *data,
			  size_t len);

/* ---------------- Any ---------------- */

/* Any {type_url, value = `len` bytes} (the message, without a field
 * header of its own). */
size_t xd_any_size(const char *type_url, size_t len);
uint8_t *xd_any_put(uint8_t *p, const char *type_url, const void *value,
		    size_t len);

/* ---------------- Resource ---------------- */

struct xd_resource {
	struct xd_name version;      /* empty: none */
	const char *type_url;        /* of `body`; NULL: no body (rule D8) */
	struct xd_span body;         /* the resource message */
	struct xd_name name;
	const char *const *aliases;
	size_t naliases;
	uint32_t ttl_ms;             /* 0: no ttl field (rule L1) */
	/* A variant's encoded DynamicParameterConstraints (rule P1): when
	 * set, the name goes in resource_name with them, not in name. */
	struct xd_span constraints;
};

/* google.protobuf.Duration */
enum { XD_DURATION_SECONDS = 1, XD_DURATION_NANOS = 2 };

/* List collections (docs/protocol.md rule X3): a <T>Collection
 * (envoy.config.listener.v3.ListenerCollection, ...) holds
 * xds.core.v3.CollectionEntry, each a ResourceLocator or an
 * InlineEntry; a locator's context parameters are a ContextParams. */
enum { XD_COLLECTION_ENTRIES = 1 };
enum { XD_ENTRY_LOCATOR = 1, XD_ENTRY_INLINE = 2 };
enum { XD_INLINE_NAME = 1, XD_INLINE_VERSION = 2, XD_INLINE_RESOURCE = 3 };
enum {
	XD_LOCATOR_SCHEME = 1, /* enum Scheme: 0 is XDSTP */
	XD_LOCATOR_ID = 2,
	XD_LOCATOR_AUTHORITY = 3,
	XD_LOCATOR_RESOURCE_TYPE = 4,
	XD_LOCATOR_EXACT_CONTEXT = 5,
	XD_LOCATOR_DIRECTIVES = 6,
};
enum { XD_CONTEXT_PARAMS = 1 }; /* map<string, string> */

size_t xd_resource_size(const struct xd_resource *r);
uint8_t *xd_resource_put(uint8_t *p, const struct xd_resource *r);

/* ---------------- responses ---------------- */

/*
 * A DiscoveryResponse (SotW) or DeltaDiscoveryResponse, without the
 * nonce. `resources` are whole `resources` fields, header included (the
 * forms tables store, snapshot/table.h). Delta only: `removed` go out
 * as removed_resources, and so do the `missing` names (subscribed, and
 * not existing: rule D8), unless `missing_by_alias`: then each is a
 * Resource without a body whose alias is its name, as Envoy takes an
 * alias that resolves to nothing (rule D10).
 */
struct xd_removed_variant {
	struct xd_name name;
	struct xd_span constraints; /* encoded DynamicParameterConstraints */
};

struct xd_response {
	struct xd_name version;
	const struct xd_span *resources;
	size_t nresources;
	const struct xd_name *missing;
	size_t nmissing;
	bool missing_by_alias;
	struct xd_name type_url;
	const struct xd_name *removed;
	size_t nremoved;
	/* delta: variants removed, as removed_resource_names (rule P1) */
	const struct xd_removed_variant *removed_variants;
	size_t nremoved_variants;
};

size_t xd_response_size(const struct xd_response *r);
uint8_t *xd_response_put(uint8_t *p, const struct xd_response *r);

/* The nonce field a stream appends to a shared body: its decimal digits
 * (up to 20 bytes, so at most 22 with the header). */
#define XD_RESPONSE_NONCE_MAX 22
size_t xd_response_put_nonce(uint8_t p[XD_RESPONSE_NONCE_MAX],
			     uint64_t nonce);

#endif
