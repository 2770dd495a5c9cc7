/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl: asks a running xdsd through its admin endpoint, or pushes
 * snapshots to the etcd cluster xdsd replicas read (xdsctl(1)). The
 * command line, then one command.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "util/address.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "xdsctl/ctl.h"
#include "xdsctl/local.h"

#define DEFAULT_ADMIN "127.0.0.1:18080"
#define DEFAULT_TIMEOUT_S 30
/* A reload of a large snapshot tree may take minutes; a day is a typo. */
#define MAX_TIMEOUT_S 86400

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xdsctl [options] command [arguments]\n"
		"\n"
		"Asks a running xdsd through its admin endpoint; pushes snapshots to etcd.\n"
		"\n"
		"commands:\n"
		"  status                       the daemon, its streams, snapshots and reloads;\n"
		"                               exit status 1 when it is not ready, its last\n"
		"                               reload was refused, it serves its last good\n"
		"                               state or its etcd source is not watching\n"
		"  clients [--nacked] [--pending [--older AGE]] [GLOB]\n"
		"                               every stream (those of nodes matching GLOB),\n"
		"                               its mTLS identity and sync state per type;\n"
		"                               NACK messages; how long responses wait\n"
		"  loads [GLOB]                 the load clients report (LRS) of each cluster\n"
		"                               (matching GLOB), locality and node: requests\n"
		"                               and errors a second, requests in flight\n"
		"  dump SNAPSHOT [TYPE [NAME]]  a snapshot's resources, as JSON\n"
		"  reload                       reload the snapshots as SIGHUP does, and say\n"
		"                               what changed; exit status 1 when refused\n"
		"  diff [--snapshots DIR] [-v] [--envoy PATH]\n"
		"                               what a reload would change, changing nothing;\n"
		"                               exit status 0 nothing, 1 something would,\n"
		"                               2 the reload (or that Envoy) would refuse it\n"
		"  rollout status|promote|abort the staged rollout: where it stands and its\n"
		"                               NACKs (exit status 1 when it failed); promote\n"
		"                               it to every node now, or roll it back\n"
		"  fleet                        every replica registered under the etcd\n"
		"                               prefix: health, revision, what it serves,\n"
		"                               streams and nodes, its rollout; exit status\n"
		"                               1 when one is not healthy or two on one\n"
		"                               revision serve different snapshots\n"
		"  push [--now|--dry-run] [--envoy PATH] DIR\n"
		"                               check the snapshot directory as xdsd --check\n"
		"                               does, then write it to the etcd prefix in one\n"
		"                               transaction (keys of files gone are deleted);\n"
		"                               nothing written when a file has an error;\n"
		"                               --now: every node at once, no canaries nor\n"
		"                               bake (a rollback, a hotfix); --dry-run: what\n"
		"                               it would change from what etcd holds, and\n"
		"                               whom it reaches on every replica\n"
		"\n"
		"options:\n"
		"      --admin ADDR      the admin endpoint: host:port or unix:/path\n"
		"                        (default -c's admin_listen, else $XDSCTL_ADMIN,\n"
		"                        else " DEFAULT_ADMIN ")\n"
		"      --fleet           clients, status, diff, rollout status: ask every\n"
		"                        replica the admin endpoint lists (xdsctl fleet),\n"
		"                        one line per node with its replica\n"
		"      --json            print xdsd's JSON answer as it is, for scripts\n"
		"      --timeout SECONDS give up after this long (default %d)\n"
		"      --nacked          clients: only the streams that NACKed\n"
		"      --pending         clients: only the streams with a response\n"
		"                        waiting for its ACK or NACK\n"
		"      --older AGE       with --pending: waiting at least AGE (30s, 5m)\n"
		"      --snapshots DIR   diff: the snapshots in DIR (read by xdsd, on its\n"
		"                        machine) instead of those a reload reads\n"
		"  -v, --verbose         diff: added and removed resources in full, and\n"
		"                        the ids of the nodes each change reaches\n"
		"      --envoy PATH      push, diff: also ask that Envoy binary (envoy --mode\n"
		"                        validate) what it would refuse of the snapshots,\n"
		"                        read here (diff: DIR, or xdsd's directory)\n"
		"  -c, --config FILE     xdsd.yaml (and its conf.d): the admin endpoint is\n"
		"                        its admin_listen; for push, its etcd: section\n"
		"                        and schema give the defaults of the options below\n"
		"                        (diff --envoy: its schema)\n"
		"      --etcd ENDPOINTS  push: etcd's host:port, comma-separated, tried in\n"
		"                        turn (default 127.0.0.1:2379)\n"
		"      --prefix PREFIX   push: the key prefix (default /xdsd/snapshots/)\n"
		"      --cacert FILE     push: CA certificates etcd's is signed by (TLS)\n"
		"      --cert FILE       push: client certificate for etcd, with --key\n"
		"      --key FILE        push: its private key\n"
		"      --schema FILE     push, diff --envoy: the Envoy API descriptor set to\n"
		"                        check with\n"
		"      --now             push: the replicas serve it to every node at once\n"
		"      --dry-run         push: say what it would change, write nothing\n"
		"  -h, --help            show this help and exit\n"
		"  -V, --version         show the version and exit\n"
		"\n"
		"Exit status: 0 done; 1 xdsd refused (reload refused, no such\n"
		"snapshot, no rollout under way), or status found it not ready,\n"
		"its last reload refused or its etcd source not watching, or\n"
		"rollout status its rollout failed, or etcd refused the push, or\n"
		"diff or push --dry-run found changes; 2 usage error, or push\n"
		"found errors in the snapshots, or diff found them refused (or\n"
		"--envoy's Envoy refuses something); 3 xdsd or etcd cannot be\n"
		"reached or its answer is not understood. See xdsctl(1).\n",
		DEFAULT_TIMEOUT_S);
}

void xc_error(const char *fmt, ...)
{
	va_list ap;

	fputs("xdsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int xc_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("xdsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'xdsctl --help'.\n", stderr);
	return XC_USAGE;
}

static int timeout_ms(const char *arg, int *out)
{
	char *end;
	double s = strtod(arg, &end);

	if (end == arg || *end != '\0' || !(s > 0) || s > MAX_TIMEOUT_S)
		return -1;
	*out = (int)(s * 1000);
	if (*out < 1)
		*out = 1;
	return 0;
}

/*
 * The admin endpoint the configuration `path` gives xdsd, as an address
 * to connect to in *out (malloc'd): an address xdsd listens on for any
 * (0.0.0.0, [::]) is reached on loopback. So that whoever runs xdsd
 * with a configuration (systemd's ExecReload=) asks where that xdsd
 * listens, whatever a site set. XC_OK, XC_USAGE for a configuration
 * with errors, XC_UNREACHABLE when its endpoint is off.
 */
static int admin_of_config(const char *path, char **out)
{
	struct xd_config cfg;
	char host[256], port[16], why[512];
	int rc = xc_config_read(path, &cfg);

	*out = NULL;
	if (rc != XC_OK)
		goto out;
	if (!xd_config_admin_on(&cfg)) {
		xc_error("%s: admin_listen is off: xdsd has no admin endpoint to ask (a reload is SIGHUP then: systemctl kill -s HUP xdsd)",
			 path);
		rc = XC_UNREACHABLE;
		goto out;
	}
	if (strncmp(cfg.admin_listen, "unix:", 5) == 0 ||
	    xd_address_split(cfg.admin_listen, host, sizeof(host), port,
			     sizeof(port), why, sizeof(why)) != 0)
		*out = xd_strdup(cfg.admin_listen);
	else if (strcmp(host, "0.0.0.0") == 0)
		*out = xd_asprintf("127.0.0.1:%s", port);
	else if (strcmp(host, "::") == 0)
		*out = xd_asprintf("[::1]:%s", port);
	else
		*out = xd_strdup(cfg.admin_listen);
out:
	xd_config_free(&cfg);
	return rc;
}

enum {
	OPT_ADMIN = 256,
	OPT_JSON,
	OPT_TIMEOUT,
	OPT_NACKED,
	OPT_PENDING,
	OPT_OLDER,
	OPT_ETCD,
	OPT_PREFIX,
	OPT_CACERT,
	OPT_CERT,
	OPT_KEY,
	OPT_SCHEMA,
	OPT_SNAPSHOTS,
	OPT_NOW,
	OPT_DRY_RUN,
	OPT_ENVOY,
	OPT_FLEET
};

static const struct option long_opts[] = {
	{"admin", required_argument, NULL, OPT_ADMIN},
	{"json", no_argument, NULL, OPT_JSON},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"nacked", no_argument, NULL, OPT_NACKED},
	{"pending", no_argument, NULL, OPT_PENDING},
	{"older", required_argument, NULL, OPT_OLDER},
	{"config", required_argument, NULL, 'c'},
	{"etcd", required_argument, NULL, OPT_ETCD},
	{"prefix", required_argument, NULL, OPT_PREFIX},
	{"cacert", required_argument, NULL, OPT_CACERT},
	{"cert", required_argument, NULL, OPT_CERT},
	{"key", required_argument, NULL, OPT_KEY},
	{"schema", required_argument, NULL, OPT_SCHEMA},
	{"snapshots", required_argument, NULL, OPT_SNAPSHOTS},
	{"now", no_argument, NULL, OPT_NOW},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"envoy", required_argument, NULL, OPT_ENVOY},
	{"fleet", no_argument, NULL, OPT_FLEET},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static const struct {
	const char *name;
	int (*run)(const struct xc_opts *o, int argc, char **args);
} commands[] = {
	{"status", xc_status},
	{"clients", xc_clients},
	{"loads", xc_loads},
	{"dump", xc_dump},
	{"reload", xc_reload},
	{"rollout", xc_rollout},
	{"push", xc_push},
	{"diff", xc_diff},
	{"fleet", xc_fleet},
};

/* The command argv[0], once its options are known to go with it. */
static int run(struct xc_opts *o, int argc, char **argv, bool pushing,
	       bool checking, bool pending, const char *older)
{
	int rc;

	if (!pushing && (o->etcd != NULL || o->prefix != NULL ||
			 o->cacert != NULL || o->cert != NULL || o->key != NULL))
		return xc_usage_error("--etcd, --prefix, --cacert, --cert and --key go with push");
	if (!checking && o->schema != NULL)
		return xc_usage_error("--schema goes with push, and with diff --envoy");
	if (o->envoy != NULL && !pushing && strcmp(argv[0], "diff") != 0)
		return xc_usage_error("--envoy goes with push and diff");
	if (o->nacked && strcmp(argv[0], "clients") != 0)
		return xc_usage_error("--nacked goes with clients");
	if (older != NULL && !pending)
		return xc_usage_error("--older goes with --pending");
	if (pending && strcmp(argv[0], "clients") != 0)
		return xc_usage_error("--pending goes with clients");
	if (o->fleet && strcmp(argv[0], "clients") != 0 &&
	    strcmp(argv[0], "status") != 0 && strcmp(argv[0], "diff") != 0 &&
	    !(strcmp(argv[0], "rollout") == 0 && argc > 1 &&
	      strcmp(argv[1], "status") == 0))
		return xc_usage_error("--fleet goes with clients, status, diff and rollout status");
	if ((o->now || o->dry_run) && !pushing)
		return xc_usage_error("%s goes with push", o->now ? "--now" : "--dry-run");
	if (o->snapshots != NULL && strcmp(argv[0], "diff") != 0)
		return xc_usage_error("--snapshots goes with diff");
	if (o->verbose && strcmp(argv[0], "diff") != 0 && !(pushing && o->dry_run))
		return xc_usage_error("-v goes with diff and push --dry-run");
	if (pending)
		o->pending = older != NULL ? older : "0";
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, argv[0]) != 0)
			continue;
		rc = commands[i].run(o, argc - 1, argv + 1);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			xc_error("cannot write the output");
			return XC_FAILED;
		}
		return rc;
	}
	return xc_usage_error("unknown command '%s': status, clients, loads, dump, reload, diff, rollout, fleet or push",
			      argv[0]);
}

int main(int argc, char **argv)
{
	struct xc_opts o = {.timeout_ms = DEFAULT_TIMEOUT_S * 1000};
	const char *env = getenv("XDSCTL_ADMIN");
	const char *admin_from = "--admin", *why, *older = NULL;
	char *config_admin = NULL; /* -c's admin_listen, to connect to */
	bool pending = false;
	uint64_t older_ms;
	bool pushing, checking;
	int c, rc;

	o.admin = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:hVv", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config = optarg;
			break;
		case OPT_ETCD:
			o.etcd = optarg;
			break;
		case OPT_PREFIX:
			o.prefix = optarg;
			break;
		case OPT_CACERT:
			o.cacert = optarg;
			break;
		case OPT_CERT:
			o.cert = optarg;
			break;
		case OPT_KEY:
			o.key = optarg;
			break;
		case OPT_SCHEMA:
			o.schema = optarg;
			break;
		case OPT_ADMIN:
			o.admin = optarg;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_TIMEOUT:
			if (timeout_ms(optarg, &o.timeout_ms) != 0)
				return xc_usage_error("--timeout '%s': a number of seconds, more than 0 and at most %d",
						      optarg, MAX_TIMEOUT_S);
			break;
		case OPT_NACKED:
			o.nacked = true;
			break;
		case OPT_PENDING:
			pending = true;
			break;
		case OPT_OLDER:
			why = xd_text_duration(optarg, &older_ms);
			if (why != NULL)
				return xc_usage_error("--older '%s': %s", optarg, why);
			older = optarg;
			break;
		case OPT_SNAPSHOTS:
			if (optarg[0] == '\0')
				return xc_usage_error("--snapshots needs a directory");
			o.snapshots = optarg;
			break;
		case OPT_ENVOY:
			if (optarg[0] == '\0')
				return xc_usage_error("--envoy needs the path of an Envoy binary");
			o.envoy = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		case OPT_NOW:
			o.now = true;
			break;
		case OPT_DRY_RUN:
			o.dry_run = true;
			break;
		case OPT_FLEET:
			o.fleet = true;
			break;
		case 'h':
			usage(stdout);
			return XC_OK;
		case 'V':
			printf("xdsctl %s\n", PACKAGE_VERSION);
			return XC_OK;
		case ':':
			return xc_usage_error("%s needs a value", argv[optind - 1]);
		default:
			return xc_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return xc_usage_error("which command? status, clients, loads, dump, reload, diff, rollout, fleet or push");
	pushing = strcmp(argv[optind], "push") == 0;
	/* -c: push's etcd settings, the admin endpoint of the others */
	if (o.admin == NULL && o.config != NULL && !pushing) {
		rc = admin_of_config(o.config, &config_admin);
		if (rc != XC_OK)
			return rc;
		o.admin = config_admin;
		admin_from = "the configuration's admin_listen";
	}
	if (o.admin == NULL && env != NULL && env[0] != '\0') {
		o.admin = env;
		admin_from = "XDSCTL_ADMIN";
	}
	if (o.admin == NULL)
		o.admin = DEFAULT_ADMIN;
	/* diff --envoy loads the directory here, as push does */
	checking = pushing ||
		   (strcmp(argv[optind], "diff") == 0 && o.envoy != NULL);
	/* push speaks to etcd, not to the admin endpoint */
	why = pushing ? NULL : xd_address_error(o.admin);
	if (why == NULL && !pushing && strncmp(o.admin, "unix:", 5) != 0 &&
	    strcmp(strrchr(o.admin, ':'), ":0") == 0)
		why = "port 0 is no address to connect to";
	if (why != NULL) {
		rc = xc_usage_error("%s '%s': %s", admin_from, o.admin, why);
		goto out;
	}
	rc = run(&o, argc - optind, argv + optind, pushing, checking, pending,
		 older);
out:
	free(config_admin);
	return rc;
}
