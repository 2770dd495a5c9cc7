/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsd: an xDS management server. Command line, configuration, then the
 * daemon (daemon.c) or, with --check, validation only (with --envoy,
 * Envoy's verdict too: envoy/verdict.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/paths.h"
#include "daemon/daemon.h"
#include "daemon/early_signals.h"
#include "envoy/verdict.h"
#include "schema/schema.h"
#include "snapshot/loader.h"
#include "transport/tls.h"
#include "util/log.h"
#include "xds/rtype.h"

static void usage(FILE *out, const char *default_config)
{
	fprintf(out,
		"usage: xdsd [options]\n"
		"\n"
		"Serves Envoy and gRPC xDS clients from snapshot files.\n"
		"\n"
		"options:\n"
		"  -c, --config FILE      configuration file (default %s)\n"
		"      --listen ADDR      listen address, host:port (overrides the file)\n"
		"      --snapshots DIR    snapshot directory (overrides the file)\n"
		"      --schema FILE      Envoy API descriptor set (overrides the file)\n"
		"      --log-level LEVEL  error, warn, info or debug (overrides the file)\n"
		"      --admin-listen ADDR  admin HTTP endpoint, host:port or off\n"
		"                         (overrides the file)\n"
		"      --check            validate the configuration, the schema and every\n"
		"                         snapshot, print errors, and exit: 0 if all are valid\n"
		"      --envoy PATH       with --check: also ask that Envoy binary (envoy\n"
		"                         --mode validate) what it would refuse of each snapshot\n"
		"      --print-types      print the resource types served, one a line in\n"
		"                         push order, and exit (xdsd(8), TYPES)\n"
		"  -h, --help             show this help and exit\n"
		"  -V, --version          show the version and the default paths, and exit\n"
		"\n"
		"Signals: SIGHUP reloads snapshots and TLS files; SIGTERM or SIGINT stop.\n"
		"See xdsd(8), xdsd.yaml(5) and xdsd-snapshot(5).\n",
		default_config);
}

enum {
	OPT_LISTEN = 256,
	OPT_SNAPSHOTS,
	OPT_SCHEMA,
	OPT_LOG_LEVEL,
	OPT_ADMIN_LISTEN,
	OPT_CHECK,
	OPT_ENVOY,
	OPT_PRINT_TYPES
};

static const struct option long_opts[] = {
	{"config", required_argument, NULL, 'c'},
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"snapshots", required_argument, NULL, OPT_SNAPSHOTS},
	{"schema", required_argument, NULL, OPT_SCHEMA},
	{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
	{"admin-listen", required_argument, NULL, OPT_ADMIN_LISTEN},
	{"check", no_argument, NULL, OPT_CHECK},
	{"envoy", required_argument, NULL, OPT_ENVOY},
	{"print-types", no_argument, NULL, OPT_PRINT_TYPES},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/*
 * --check: the configuration, the schema and every snapshot, all errors
 * printed on stderr. The effective configuration goes to stdout only
 * once everything is valid: a "valid" line above errors would be read
 * as a pass by whoever looks at the top. With `envoy` (--envoy PATH),
 * a good load is valid only once that Envoy accepts it too
 * (envoy/verdict.h). Returns the exit status.
 */
static int check(const struct xd_config *cfg, const char *config_path,
		 bool dir_given, const char *envoy)
{
	struct xd_envoy_report rep;
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_tls *tls = NULL;
	struct xd_schema *schema;
	struct xd_load load;
	char desc[256];
	int rc;

	if (cfg->tls.cert != NULL) {
		tls = xd_tls_new(cfg, &diag);
		if (tls == NULL) {
			xd_diag_print(&diag, stderr);
			fprintf(stderr, "xdsd: the TLS files cannot be used\n");
			xd_diag_clear(&diag);
			return 1;
		}
	}
	schema = xd_schema_load(cfg->schema, &diag);
	if (schema == NULL) {
		xd_diag_print(&diag, stderr);
		fprintf(stderr, "xdsd: cannot load the Envoy API schema\n");
		xd_diag_clear(&diag);
		xd_tls_free(tls);
		return 1;
	}
	if (cfg->source == XD_SOURCE_ETCD && !dir_given) {
		/* what etcd holds is checked by the daemon as it reads it:
		 * --check does not connect anywhere; a directory named with
		 * --snapshots (one about to be pushed) is checked below */
		printf("# %s: valid; effective configuration:\n", config_path);
		xd_config_print(cfg, stdout);
		printf("# snapshots from etcd prefix '%s' (not read by --check%s; --snapshots DIR checks a directory)\n",
		       cfg->etcd.prefix, envoy != NULL ? " nor by envoy" : "");
		xd_schema_free(schema);
		xd_tls_free(tls);
		return 0;
	}
	xd_load_dir(schema, cfg->snapshots, NULL, 0, &load);
	xd_load_warn_open(&load, xd_open_reach_of(cfg), stderr);
	if (load.rc == 0 && envoy != NULL &&
	    xd_envoy_judge(schema, load.snaps, load.nsnaps, envoy, "xdsd",
			   cfg->snapshots, "", stderr, &rep) != 0) {
		rc = 1;
	} else if (load.rc == 0) {
		printf("# %s: valid; effective configuration:\n", config_path);
		xd_config_print(cfg, stdout);
		if (tls != NULL)
			printf("# TLS%s: %s\n",
			       xd_tls_mutual(tls) ?
				       " with client certificates (mTLS)" : "",
			       xd_tls_describe(tls));
		printf("# snapshots in %s: %zu, from %zu file%s\n", cfg->snapshots,
		       load.nsnaps, load.files, load.files == 1 ? "" : "s");
		for (size_t i = 0; i < load.nsnaps; i++) {
			xd_snapshot_describe(load.snaps[i], desc, sizeof(desc));
			printf("# snapshot '%s': %s\n",
			       xd_snapshot_key(load.snaps[i]), desc);
		}
		if (envoy != NULL)
			printf("# envoy %s (%s) accepts every snapshot (%zu run%s)\n",
			       rep.version, envoy, rep.runs,
			       rep.runs == 1 ? "" : "s");
		rc = 0;
	} else {
		xd_diag_print(&load.diag, stderr);
		fprintf(stderr, "xdsd: %s: %zu error%s in the snapshots\n",
			cfg->snapshots, xd_diag_total(&load.diag),
			xd_diag_total(&load.diag) == 1 ? "" : "s");
		rc = 1;
	}
	xd_load_free(&load);
	xd_schema_free(schema);
	xd_tls_free(tls);
	return rc;
}

/* Command-line values are applied after the file, whatever their order. */
struct override {
	const char *key, *flag, *value;
};

int main(int argc, char **argv)
{
	struct xd_paths paths;
	struct xd_config cfg;
	struct xd_diag diag = XD_DIAG_INIT;
	/* in the order of the OPT_ values */
	struct override ov[] = {{"listen", "--listen", NULL},
				{"snapshots", "--snapshots", NULL},
				{"schema", "--schema", NULL},
				{"log_level", "--log-level", NULL},
				{"admin_listen", "--admin-listen", NULL}};
	const char *config_path, *envoy = NULL;
	bool check_only = false;
	int c, rc;

	/* Before anything that takes time: a SIGHUP from now on is a
	 * reload request, never the end of the process. */
	xd_early_signals_install();
	xd_paths_defaults(&paths);
	config_path = paths.config;
	while ((c = getopt_long(argc, argv, "c:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case OPT_LISTEN:
		case OPT_SNAPSHOTS:
		case OPT_SCHEMA:
		case OPT_LOG_LEVEL:
		case OPT_ADMIN_LISTEN:
			ov[c - OPT_LISTEN].value = optarg;
			break;
		case OPT_CHECK:
			check_only = true;
			break;
		case OPT_ENVOY:
			envoy = optarg;
			break;
		case OPT_PRINT_TYPES:
			xd_rtype_print(stdout);
			return 0;
		case 'h':
			usage(stdout, paths.config);
			return 0;
		case 'V':
			printf("xdsd %s\n", PACKAGE_VERSION);
			xd_paths_print(stdout);
			return 0;
		default:
			fprintf(stderr, "xdsd: try 'xdsd --help'\n");
			return 2;
		}
	}
	if (envoy != NULL && (!check_only || envoy[0] == '\0')) {
		fprintf(stderr, "xdsd: %s; try 'xdsd --help'\n",
			!check_only ? "--envoy goes with --check (the daemon never runs Envoy)" :
				      "--envoy needs the path of an Envoy binary");
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "xdsd: unexpected argument '%s'; try 'xdsd --help'\n",
			argv[optind]);
		return 2;
	}

	xd_log_init();
	xd_config_init(&cfg, paths.snapshots, paths.schema);
	rc = xd_config_load(&cfg, config_path, &diag);
	for (size_t i = 0; i < sizeof(ov) / sizeof(ov[0]); i++)
		if (ov[i].value != NULL &&
		    xd_config_set(&cfg, ov[i].key, ov[i].value, ov[i].flag,
				  &diag) != 0)
			rc = -1;
	if (rc != 0) {
		xd_diag_print(&diag, stderr);
		fprintf(stderr, "xdsd: %s: %zu error%s in the configuration\n",
			config_path, xd_diag_total(&diag),
			xd_diag_total(&diag) == 1 ? "" : "s");
		xd_diag_clear(&diag);
		xd_config_free(&cfg);
		return 1;
	}
	xd_log_set_level(cfg.log_level);
	xd_log_set_format(cfg.log_format);
	xd_config_warnings(&cfg, &diag);
	for (size_t i = 0; i < diag.count; i++) {
		if (check_only)
			fprintf(stderr, "warning: %s\n", diag.msgs[i]);
		else
			xd_warn("%s", diag.msgs[i]);
	}
	xd_diag_clear(&diag);

	if (check_only) {
		rc = check(&cfg, config_path, ov[1].value != NULL, envoy);
		xd_config_free(&cfg);
		return rc;
	}
	xd_info("configuration %s", config_path);
	rc = xd_daemon_run(&cfg);
	xd_config_free(&cfg);
	return rc;
}
