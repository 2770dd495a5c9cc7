/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /fleet.json: the fleet of replicas as this one knows it
 * (rollout/fleet.h), for `xdsctl fleet` and `--fleet`, and the status
 * page. One object:
 *
 *   {"replica": "<this one's name>",
 *    "shared": true,                       (false with `source: files`:
 *                                           this replica alone)
 *    "replicas": [                          (this one first, then the
 *                                           others as they registered)
 *       {"id": "694d9a5ec2b1a01f",          (its key under
 *                                           <prefix>.xdsd/replicas/; ""
 *                                           while this one holds no lease)
 *        "self": true,
 *        ...its registration (rollout/record.h): "replica", "pid",
 *        "started", "xds", "admin", "version", "revision", "serving",
 *        "health", "health_why", "streams", "clients", and its report
 *        on the rollout: "rollout", "candidate", "canaries", ...}],
 *    "rollout": <the rollout's record, record.h>, or null}
 *
 * Another replica is listed as long as its registration is in etcd:
 * a replica that stops, is killed or loses etcd leaves the list once
 * its lease expires (etcd.lease_ttl), or at once when it stops cleanly
 * (it revokes its lease, etcd/lease.h).
 *
 * Thread: loop thread only.
 */
#ifndef XD_ADMIN_FLEET_H
#define XD_ADMIN_FLEET_H

#include "rollout/fleet.h"
#include "util/jsonw.h"

/* The /fleet.json object into `w`. */
void xd_fleet_view_json(struct xd_jw *w, struct xd_fleet *f);

#endif
