/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What push and diff share to check snapshots on the machine xdsctl
 * runs on: the settings they check with, and Envoy's verdict (--envoy
 * PATH) on a directory they loaded.
 */
#ifndef XD_XDSCTL_LOCAL_H
#define XD_XDSCTL_LOCAL_H

#include "config/config.h"
#include "schema/schema.h"
#include "snapshot/loader.h"
#include "xdsctl/ctl.h"

/*
 * The settings to check with, into `cfg` (initialised here; the caller
 * frees it with xd_config_free): xdsd.yaml's with -c, else the
 * defaults, and --schema over them. XC_OK, or XC_USAGE having said why.
 */
int xc_settings(const struct xc_opts *o, struct xd_config *cfg);

/*
 * Envoy's verdict (envoy/verdict.h) on the snapshots of the good load
 * `load` of `dir`, said on stderr as `xdsd --check --envoy` says it,
 * its last line ending with `outcome` ("nothing written to etcd").
 * XC_OK when Envoy accepts them, XC_USAGE when it refuses something or
 * gives no verdict.
 */
int xc_envoy_judge(const struct xd_schema *schema, const struct xd_load *load,
		   const char *dir, const char *envoy, const char *outcome);

#endif
