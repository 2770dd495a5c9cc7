/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet: a fleet of simulated Envoys against an xDS server.
 *
 * Opens N ADS streams (SotW or delta), each on its own connection with
 * its own node id, subscribes the way Envoy does (wildcard CDS; EDS for
 * the EDS clusters it learns; in delta, LEDS for the glob collections
 * their load assignments' localities name; wildcard LDS once its
 * clusters are warm;
 * RDS for the route configurations its listeners' HttpConnectionManagers
 * name), ACKs every response, and measures:
 *
 *   - how long until every client holds a full configuration;
 *   - for each --trigger command (e.g. rewrite a snapshot, SIGHUP xdsd),
 *     how long until every client has ACKed the new versions;
 *   - bytes received, the server's RSS (--server-pid) and its CPU time.
 *
 * "Converged", for one trigger: let the types that changed be those for
 * which any client's last ACKed state differs from what it had ACKed when
 * the trigger ran. A client's state of a type is the version_info of the
 * response it ACKed last (SotW), or the set of (name, version) pairs it
 * holds when it sends its last ACK (delta). The new state of a changed
 * type is the one most clients ACKed once the fleet went quiet (nothing
 * received for --settle seconds); every client must have ACKed exactly
 * that state, with no response left un-ACKed. A client's convergence
 * latency is the time from the start of the trigger command to the
 * sending of its ACK of the last changed type (so it includes the
 * server's reload). A fleet that is not converged when --timeout expires
 * fails the run.
 *
 * Responses are parsed straight from the protobuf wire format, and only
 * the fields a subscription depends on (fleet_resource.c).
 *
 * With --tls-ca (and --tls-cert/--tls-key) every connection is TLS
 * (mutual TLS), each with its own handshake, as every Envoy makes one.
 *
 * --threads threads (2), each polling its own completion queue; a client
 * lives on one of them. Its state is guarded by its own mutex, which the
 * main thread takes to measure. fleet.h shows how the files are layered.
 *
 * Output: one line of key=value pairs on stdout; progress on stderr.
 * Exit status: 0 when every client got its configuration and converged
 * after every trigger, 1 otherwise, 2 on bad usage.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fleet.h"
#include "fleet_measure.h"
#include "fleet_proc.h"
#include "fleet_util.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: fleet --target HOST:PORT [options]\n"
"  --clients N        simulated Envoys, one connection each (1000)\n"
"  --mode sotw|delta  StreamAggregatedResources or DeltaAggregatedResources (sotw)\n"
"  --node-prefix P    node ids are P-0, P-1, ... (fleet)\n"
"  --cluster KEY      node.cluster of every client (default)\n"
"  --features LIST    client features the nodes announce, comma-separated\n"
"  --threads N        threads, each polling a completion queue (2)\n"
"  --rate R           open R streams per second (0: all at once)\n"
"  --trigger CMD      run CMD once configured, measure convergence (repeatable)\n"
"  --timeout S        give up on a phase after S seconds (120)\n"
"  --settle S         quiet time that ends a phase (1)\n"
"  --hold S           keep the streams open and idle for S seconds at the end\n"
"  --server-pid PID   report the server's RSS and CPU time\n"
"  --label TEXT       copied into the summary line\n"
"  -v, --verbose      progress on stderr\n"
"  --trace I          log every message of client I on stderr\n"
"  --tls-ca FILE      TLS: the CA that signed the server's certificate (PEM)\n"
"  --tls-cert FILE    mutual TLS: the clients' certificate chain (PEM) ...\n"
"  --tls-key FILE     ... and its private key\n"
"  --tls-name NAME    the name the server's certificate holds (localhost)\n"
"  --failover HOST:PORT  delta: a configured client whose stream ends reopens it\n"
"                     there, with initial_resource_versions; the first --trigger\n"
"                     (which ends the streams) is measured as that storm; a\n"
"                     reopened stream that fails UNAVAILABLE is opened again\n"
"  --failover-stale   ... with every version altered, as if they differed\n"
"  --sources N        bind the clients' sockets to 127.0.0.2 .. 127.0.0.(N+1) in\n"
"                     turn: one address's ephemeral ports (about 28,000) hold\n"
"                     fewer connections to one server (0: the kernel's choice)\n");
}

static double num_arg(const char *name, const char *s, double min)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end != '\0' || v < min) {
		fprintf(stderr, "fleet: bad value for --%s: '%s'\n", name, s);
		exit(2);
	}
	return v;
}

/* HOST:PORT as a gRPC target, malloc'ed: an IPv4 literal skips the DNS
 * resolver. */
static char *grpc_target_of(const char *t)
{
	size_t lead = strspn(t, "0123456789.");
	char *s;

	if (lead > 0 && t[lead] == ':' && !strchr(t + lead + 1, ':')) {
		s = xmalloc(strlen(t) + 6);
		sprintf(s, "ipv4:%s", t);
		return s;
	}
	return xstrndup(t, strlen(t));
}

static void parse_args(struct fleet_options *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{"target", required_argument, NULL, 't'},
		{"clients", required_argument, NULL, 'n'},
		{"mode", required_argument, NULL, 'm'},
		{"node-prefix", required_argument, NULL, 'p'},
		{"cluster", required_argument, NULL, 'k'},
		{"threads", required_argument, NULL, 'T'},
		{"rate", required_argument, NULL, 'r'},
		{"trigger", required_argument, NULL, 'g'},
		{"timeout", required_argument, NULL, 'o'},
		{"settle", required_argument, NULL, 's'},
		{"hold", required_argument, NULL, 'h'},
		{"server-pid", required_argument, NULL, 'P'},
		{"label", required_argument, NULL, 'l'},
		{"verbose", no_argument, NULL, 'v'},
		{"trace", required_argument, NULL, 'X'},
		{"tls-ca", required_argument, NULL, 'A'},
		{"tls-cert", required_argument, NULL, 'C'},
		{"tls-key", required_argument, NULL, 'K'},
		{"tls-name", required_argument, NULL, 'N'},
		{"features", required_argument, NULL, 'F'},
		{"failover", required_argument, NULL, 'f'},
		{"failover-stale", no_argument, NULL, 'S'},
		{"sources", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'H'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (ch) {
		case 't': o->target = optarg; break;
		case 'n': o->clients = (int)num_arg("clients", optarg, 1); break;
		case 'm':
			if (strcmp(optarg, "sotw") == 0)
				o->mode = SOTW;
			else if (strcmp(optarg, "delta") == 0)
				o->mode = DELTA;
			else {
				fprintf(stderr, "fleet: --mode is sotw or delta\n");
				exit(2);
			}
			break;
		case 'p': o->node_prefix = optarg; break;
		case 'k': o->cluster = optarg; break;
		case 'T': o->threads = (int)num_arg("threads", optarg, 1); break;
		case 'r': o->rate = num_arg("rate", optarg, 0); break;
		case 'g':
			if (o->ntriggers == MAX_TRIGGERS) {
				fprintf(stderr, "fleet: at most %d triggers\n", MAX_TRIGGERS);
				exit(2);
			}
			o->trigger[o->ntriggers++] = optarg;
			break;
		case 'o': o->timeout = num_arg("timeout", optarg, 0.1); break;
		case 's': o->settle = num_arg("settle", optarg, 0); break;
		case 'h': o->hold = num_arg("hold", optarg, 0); break;
		case 'P': o->server_pid = (long)num_arg("server-pid", optarg, 1); break;
		case 'l': o->label = optarg; break;
		case 'v': o->verbose = true; break;
		case 'X': o->trace = (int)num_arg("trace", optarg, 0); break;
		case 'A': o->tls_ca = optarg; break;
		case 'C': o->tls_cert = optarg; break;
		case 'K': o->tls_key = optarg; break;
		case 'N': o->tls_name = optarg; break;
		case 'F': o->features = optarg; break;
		case 'f': o->failover = optarg; break;
		case 'S': o->failover_stale = true; break;
		case 'B': o->sources = (int)num_arg("sources", optarg, 0); break;
		case 'H': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc || o->target == NULL) {
		usage(stderr);
		exit(2);
	}
	if ((o->tls_cert == NULL) != (o->tls_key == NULL) ||
	    (o->tls_cert != NULL && o->tls_ca == NULL)) {
		fprintf(stderr, "fleet: --tls-cert and --tls-key go together, with --tls-ca\n");
		exit(2);
	}
	if ((o->failover != NULL || o->failover_stale) &&
	    (o->mode != DELTA || o->failover == NULL || o->ntriggers == 0)) {
		fprintf(stderr, "fleet: --failover needs --mode delta and a --trigger; "
			"--failover-stale needs --failover\n");
		exit(2);
	}
	if (o->threads > MAX_THREADS)
		o->threads = MAX_THREADS;
	o->grpc_target = grpc_target_of(o->target);
	if (o->failover != NULL)
		o->grpc_failover = grpc_target_of(o->failover);
}

/*
 * Every client holds a socket, and a few more descriptors go to gRPC
 * and stdio: raise the soft limit to the hard one, and as root (or with
 * CAP_SYS_RESOURCE) the hard one too when it is short, up to
 * /proc/sys/fs/nr_open.
 */
static void raise_nofile(int clients)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)clients + 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < want) {
		struct rlimit more = {want, want};

		if (setrlimit(RLIMIT_NOFILE, &more) == 0)
			rl = more;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < (rlim_t)clients + 64)
		fprintf(stderr, "fleet: warning: open files limited to %lu for %d connections\n",
			(unsigned long)rl.rlim_cur, clients);
}


/* The defaults of the options usage() lists. */
static const struct fleet_options defaults = {
	.trace = -1,
	.clients = 1000,
	.mode = SOTW,
	.node_prefix = "fleet",
	.cluster = "default",
	.threads = 2,
	.timeout = 120,
	.settle = 1,
	.hold = 0,
	.rate = 0,
	.server_pid = 0,
	.tls_name = "localhost",
};

int main(int argc, char **argv)
{
	struct fleet f = {.opt = defaults};
	const struct fleet_options *o = &f.opt;
	struct fleet_counters *cnt = &f.counters;
	uint64_t t0;
	long pid, rss0, rss1, rss2;
	double cpu0, cpu1, busy0, srv0;
	bool ok;
	struct rusage ru;

	f.t_prog = now_ns();
	parse_args(&f.opt, argc, argv);
	pid = o->server_pid;
	raise_nofile(o->clients);
	busy0 = system_busy_s();
	srv0 = proc_cpu_s(pid);
	fleet_start(&f);

	rss0 = proc_status_kb(pid, "VmRSS");
	cpu0 = proc_cpu_s(pid);
	t0 = now_ns();
	fleet_connect(&f);
	fleet_kv(&f, "connect_ms", "%.1f", (double)(now_ns() - t0) / 1e6);
	ok = measure_wait_configured(&f, t0);
	measure_initial(&f, t0);
	rss1 = proc_status_kb(pid, "VmRSS");
	cpu1 = proc_cpu_s(pid);
	if (cpu0 >= 0 && cpu1 >= 0)
		fleet_kv(&f, "init_server_cpu_ms", "%.0f", (cpu1 - cpu0) * 1000);
	if (rss0 >= 0) {
		fleet_kv(&f, "rss_before_kb", "%ld", rss0);
		fleet_kv(&f, "rss_configured_kb", "%ld", rss1);
		fleet_kv(&f, "rss_per_stream_kb", "%.1f",
			 (double)(rss1 - rss0) / o->clients);
	}
	if (!ok)
		fprintf(stderr, "fleet: %" PRIu64 " of %d clients got a full "
			"configuration within %.0f s (%" PRIu64 " streams failed)\n",
			atomic_load(&cnt->configured), o->clients, o->timeout,
			atomic_load(&cnt->failed));

	for (int k = 0; ok && k < o->ntriggers; k++)
		ok = o->failover != NULL && k == 0 ? measure_failover(&f, k)
						   : measure_trigger(&f, k);
	if (o->ntriggers) {
		rss2 = proc_status_kb(pid, "VmRSS");
		if (rss2 >= 0)
			fleet_kv(&f, "rss_after_kb", "%ld", rss2);
	}
	if (o->hold > 0 && ok)
		measure_hold(&f);
	fleet_kv(&f, "server_hwm_kb", "%ld", proc_status_kb(pid, "VmHWM"));
	fleet_kv(&f, "failed_streams", "%" PRIu64, atomic_load(&cnt->failed));
	fleet_kv(&f, "dup_responses", "%" PRIu64, atomic_load(&cnt->dups[CDS]) +
		 atomic_load(&cnt->dups[EDS]) + atomic_load(&cnt->dups[LDS]) +
		 atomic_load(&cnt->dups[RDS]) + atomic_load(&cnt->dups[LEDS]));
	fleet_kv(&f, "unsubscribed_resources", "%" PRIu64, atomic_load(&cnt->unsub));
	fleet_kv(&f, "unexpected_types", "%" PRIu64, atomic_load(&cnt->unknown));
	fleet_kv(&f, "malformed", "%" PRIu64, atomic_load(&cnt->bad));
	fleet_kv(&f, "names_twice", "%" PRIu64, atomic_load(&cnt->twice));
	getrusage(RUSAGE_SELF, &ru);
	fleet_kv(&f, "fleet_cpu_s", "%.1f", self_cpu_s());
	fleet_kv(&f, "fleet_rss_kb", "%ld", ru.ru_maxrss);
	/* what neither the fleet nor the server used: other load, noise */
	double busy1 = system_busy_s(), srv1 = proc_cpu_s(pid);
	double other = (busy1 - busy0) - self_cpu_s() - (srv1 - srv0);

	fleet_kv(&f, "wall_s", "%.1f", (double)(now_ns() - f.t_prog) / 1e9);
	/* clock-tick rounding can make it slightly negative */
	if (busy0 >= 0 && busy1 >= 0 && srv0 >= 0 && srv1 >= 0)
		fleet_kv(&f, "other_cpu_s", "%.1f", other > 0 ? other : 0.0);
	fleet_kv(&f, "result", "%s", ok ? "ok" : "FAIL");
	fleet_print(&f);

	fleet_stop(&f);
	free(f.opt.grpc_target);
	free(f.opt.grpc_failover);
	return ok ? 0 : 1;
}
