/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the loader learns of one encoded resource besides its bytes: its
 * name, the resources it refers to, and its aliases (VHDS).
 *
 * Names: the type's name field (xds/rtype.h: `name`, or `cluster_name`
 * for endpoints). References, read through Anys: the type's reference
 * rules, field paths in the type table (a listener names the route
 * configurations of its HttpConnectionManagers using RDS: filter
 * chains, default chain, API listener; routes and VHDS virtual hosts
 * name their clusters: single, weighted, mirrors; a scoped route names
 * its route configuration), and the rules of this file's that a field
 * path cannot say: an EDS cluster names its endpoints (service_name, or
 * its own name), a virtual host its route configuration, and a
 * listener's or cluster's TLS contexts the secrets they ask for over
 * ADS (SdsSecretConfig with sds_config `ads` or `self`).
 * A VHDS virtual host is named "<route configuration>/<name>", refers to
 * that route configuration and has an alias "<route configuration>/
 * <domain>" per domain (rule D10).
 *
 * Thread: any; the schema is shared read-only.
 */
#ifndef XD_SNAPSHOT_RESOURCE_H
#define XD_SNAPSHOT_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/schema.h"
#include "snapshot/table.h"

struct xd_resinfo {
	char *name;
	bool renamed; /* `name` is the canonical form of an xdstp name
			 written otherwise (xd_resource_rename) */
	struct xd_ref *refs; /* sorted, unique; names malloc'd */
	size_t nrefs;
	char **aliases;
	size_t naliases;
};

/*
 * Analyzes a resource of type `t` (message `m`). A type named by an
 * annotation (xd_rtype_named_by_annotation: LEDS) takes its name from
 * `ann_name`, its "@name" (NULL: none given); other types from their
 * name field, and ignore it. Returns 0, or -1 with a reason in `why`
 * ("cluster without a name") and nothing to free.
 */
int xd_resource_analyze(const struct xd_schema *s, const struct xd_msgdesc *m,
			enum xd_rtype t, const uint8_t *data, size_t len,
			const char *ann_name, struct xd_resinfo *out,
			char *why, size_t whylen);

void xd_resinfo_clear(struct xd_resinfo *r);

/*
 * Whether the filters of `data` (a resource of type `t`, message `m`)
 * that take their config `name` by ECDS accept a config `config` (an
 * encoded TypedExtensionConfig): each lists its type among its
 * config_discovery's type_urls, as Envoy requires (it refuses a config
 * of another type). True when no filter names `name` as written (an xdstp name spelled
 * otherwise). When false, `got` holds the config's type URL and
 * `accepts` the refusing filter's type_urls, comma-separated (both
 * truncated to their sizes).
 */
bool xd_resource_ecds_accepts(const struct xd_schema *s,
			      const struct xd_msgdesc *m, enum xd_rtype t,
			      const uint8_t *data, size_t len, const char *name,
			      struct xd_span config, char *got, size_t gotlen,
			      char *accepts, size_t acceptslen);

/*
 * The resource `data` with its name (field 1 of every type xdsd serves)
 * set to `name`: a resource named by an xdstp name is served with the
 * canonical form in its own name field too, which is where SotW clients
 * read it (rule X1). Returns malloc'd bytes (length in *out_len), or
 * NULL when `data` is not a well-formed message.
 */
uint8_t *xd_resource_rename(const uint8_t *data, size_t len,
			    const char *name, size_t *out_len);

#endif
