/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The resource types a simulated Envoy subscribes to, and the few
 * fields of their resources that its subscriptions depend on, read
 * straight from the protobuf wire format.
 *
 * Pure functions of their input; the tables are constant. Any thread.
 */
#ifndef BENCH_FLEET_RESOURCE_H
#define BENCH_FLEET_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/wire.h"

/* In Envoy's order of requests; NT: how many, or none of them. */
enum rt { CDS, EDS, LEDS, LDS, RDS, NT };

extern const char *const type_url[NT];
extern const char *const type_name[NT];     /* "cds", ... */

/* The type of a type URL; NT when it is none of them. */
enum rt type_of(const uint8_t *p, size_t n);

/*
 * A resource's name and the names it makes a client subscribe to: a
 * Cluster's EDS name, a Listener's route configurations ('\n'-joined).
 * `name` points into d; *eds and *rds are malloc'ed and the caller's
 * (NULL: none). False when malformed.
 */
bool parse_cluster(const uint8_t *d, size_t n, struct xd_wire_field *name,
		   char **eds);
bool parse_listener(const uint8_t *d, size_t n, struct xd_wire_field *name,
		    char **rds);
/* ClusterLoadAssignment.cluster_name and RouteConfiguration.name. */
bool parse_name1(const uint8_t *d, size_t n, struct xd_wire_field *name);
/* A ClusterLoadAssignment: its name and the glob collections its
 * localities take their endpoints from by LEDS ('\n'-joined; *leds
 * NULL when none). */
bool parse_cla(const uint8_t *d, size_t n, struct xd_wire_field *name,
	       char **leds);

#endif
