/* SPDX-License-Identifier: Apache-2.0 */
#include "xdsctl/local.h"

#include <stdio.h>
#include <stdlib.h>

#include "config/paths.h"
#include "envoy/verdict.h"
#include "util/xalloc.h"

int xc_settings(const struct xc_opts *o, struct xd_config *cfg)
{
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_paths paths;

	xd_paths_defaults(&paths);
	xd_config_init(cfg, paths.snapshots, paths.schema);
	if (o->config != NULL && xd_config_load(cfg, o->config, &diag) != 0) {
		xd_diag_print(&diag, stderr);
		xd_diag_clear(&diag);
		return xc_usage_error("-c %s: the configuration has errors", o->config);
	}
	if (o->schema != NULL) {
		free(cfg->schema);
		cfg->schema = xd_strdup(o->schema);
	}
	return XC_OK;
}

int xc_envoy_judge(const struct xd_schema *schema, const struct xd_load *load,
		   const char *dir, const char *envoy, const char *outcome)
{
	struct xd_envoy_report rep;

	return xd_envoy_judge(schema, load->snaps, load->nsnaps, envoy, "xdsctl",
			      dir, outcome, stderr, &rep) == 0 ?
		       XC_OK :
		       XC_USAGE;
}
