/*
 * fleet: a fleet of simulated Envoys against an xDS server.
 *
 * Opens N ADS streams (SotW or delta), each on its own connection with
 * its own node id, subscribes the way Envoy does (wildcard CDS; EDS for
 * the EDS clusters it learns; wildcard LDS once its clusters are warm;
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
 * --threads threads (2), each polling its own completion queue; a client
 * lives on one of them. Its state is guarded by its own mutex, which the
 * main thread takes to measure.
 *
 * Output: one line of key=value pairs on stdout; progress on stderr.
 * Exit status: 0 when every client got its configuration and converged
 * after every trigger, 1 otherwise, 2 on bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fleet.h"
#include "transport/abseil.h"

/* ------------------------------------------------------------------ */
/* Options and global state (fleet.h)                                  */

struct options opt = {
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
};

/*
 * One completion queue per polling thread; client i uses queue i mod
 * threads. Debian builds gRPC without NDEBUG, and then every completion
 * searches its queue's list of outstanding operations linearly
 * (cq_check_tag): with 10,000 streams on one queue that search was 13%
 * of the simulator's CPU time. Splitting the streams over the threads'
 * queues divides it, and keeps each client on one thread.
 */
static grpc_completion_queue *cqs[MAX_THREADS];

struct fleet_counters counters;
struct client *clients;
static uint64_t t_prog;
/* what every client shares, from opt */
static struct client_conf conf;

/* The summary line, built as we go and printed at the end. */
static FILE *out;
static char *out_buf;
static size_t out_len;

void kv(const char *key, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, " %s=", key);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* Start-up and shutdown                                               */

static void usage(FILE *f)
{
	fprintf(f,
"usage: fleet --target HOST:PORT [options]\n"
"  --clients N        simulated Envoys, one connection each (1000)\n"
"  --mode sotw|delta  StreamAggregatedResources or DeltaAggregatedResources (sotw)\n"
"  --node-prefix P    node ids are P-0, P-1, ... (fleet)\n"
"  --cluster KEY      node.cluster of every client (default)\n"
"  --threads N        threads, each polling a completion queue (2)\n"
"  --rate R           open R streams per second (0: all at once)\n"
"  --trigger CMD      run CMD once configured, measure convergence (repeatable)\n"
"  --timeout S        give up on a phase after S seconds (120)\n"
"  --settle S         quiet time that ends a phase (1)\n"
"  --hold S           keep the streams open and idle for S seconds at the end\n"
"  --server-pid PID   report the server's RSS and CPU time\n"
"  --label TEXT       copied into the summary line\n"
"  -v, --verbose      progress on stderr\n"
"  --trace I          log every message of client I on stderr\n");
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

static void parse_args(int argc, char **argv)
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
		{"help", no_argument, NULL, 'H'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (ch) {
		case 't': opt.target = optarg; break;
		case 'n': opt.clients = (int)num_arg("clients", optarg, 1); break;
		case 'm':
			if (strcmp(optarg, "sotw") == 0)
				opt.mode = SOTW;
			else if (strcmp(optarg, "delta") == 0)
				opt.mode = DELTA;
			else {
				fprintf(stderr, "fleet: --mode is sotw or delta\n");
				exit(2);
			}
			break;
		case 'p': opt.node_prefix = optarg; break;
		case 'k': opt.cluster = optarg; break;
		case 'T': opt.threads = (int)num_arg("threads", optarg, 1); break;
		case 'r': opt.rate = num_arg("rate", optarg, 0); break;
		case 'g':
			if (opt.ntriggers == MAX_TRIGGERS) {
				fprintf(stderr, "fleet: at most %d triggers\n", MAX_TRIGGERS);
				exit(2);
			}
			opt.trigger[opt.ntriggers++] = optarg;
			break;
		case 'o': opt.timeout = num_arg("timeout", optarg, 0.1); break;
		case 's': opt.settle = num_arg("settle", optarg, 0); break;
		case 'h': opt.hold = num_arg("hold", optarg, 0); break;
		case 'P': opt.server_pid = (long)num_arg("server-pid", optarg, 1); break;
		case 'l': opt.label = optarg; break;
		case 'v': opt.verbose = true; break;
		case 'X': opt.trace = (int)num_arg("trace", optarg, 0); break;
		case 'H': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc || opt.target == NULL) {
		usage(stderr);
		exit(2);
	}
	if (opt.threads > MAX_THREADS)
		opt.threads = MAX_THREADS;
	/* an IPv4 literal skips the DNS resolver */
	size_t lead = strspn(opt.target, "0123456789.");
	if (lead > 0 && opt.target[lead] == ':' && !strchr(opt.target + lead + 1, ':')) {
		opt.grpc_target = xmalloc(strlen(opt.target) + 6);
		sprintf(opt.grpc_target, "ipv4:%s", opt.target);
	} else {
		opt.grpc_target = xstrndup(opt.target, strlen(opt.target));
	}
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < (rlim_t)opt.clients + 64)
		fprintf(stderr, "fleet: warning: open files limited to %lu for %d connections\n",
			(unsigned long)rl.rlim_cur, opt.clients);
}

static void shutdown_fleet(pthread_t *th)
{
	uint64_t deadline;

	atomic_store(&counters.stopping, true);
	for (int i = 0; i < opt.clients; i++)
		client_cancel(&clients[i]);
	deadline = now_ns() + 30000000000ull;
	while (atomic_load(&counters.ops) > 0 && now_ns() < deadline)
		sleep_ms(10);
	if (atomic_load(&counters.ops) > 0) {
		/* not worth hanging a benchmark over */
		fprintf(stderr, "fleet: %" PRId64 " operations still pending at exit\n",
			atomic_load(&counters.ops));
		return;
	}
	for (int i = 0; i < opt.clients; i++)
		client_destroy(&clients[i]);
	for (int i = 0; i < opt.threads; i++)
		grpc_completion_queue_shutdown(cqs[i]);
	for (int i = 0; i < opt.threads; i++) {
		pthread_join(th[i], NULL);
		grpc_completion_queue_destroy(cqs[i]);
	}
	free(clients);
	grpc_shutdown_blocking();
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	uint64_t t0;
	long rss0, rss1, rss2;
	double cpu0, cpu1, busy0, srv0;
	bool ok;
	struct rusage ru;

	t_prog = now_ns();
	parse_args(argc, argv);
	raise_nofile();
	busy0 = system_busy_s();
	srv0 = proc_cpu_s(opt.server_pid);
	out = open_memstream(&out_buf, &out_len);
	if (out == NULL)
		die("open_memstream: %s", strerror(errno));
	fprintf(out, "fleet");
	if (opt.label)
		kv("label", "%s", opt.label);
	kv("mode", "%s", opt.mode == SOTW ? "sotw" : "delta");
	kv("clients", "%d", opt.clients);

	/* A 10k-connection client serializes on abseil's deadlock-detection
	 * lock (opening 2000 streams: 5.1 s with it, 1.5 s without). */
	xd_abseil_deadlock_detection_off();
	grpc_init();
	for (int i = 0; i < opt.threads; i++) {
		cqs[i] = grpc_completion_queue_create_for_next(NULL);
		if (pthread_create(&th[i], NULL, client_poll, cqs[i]) != 0)
			die("pthread_create failed");
	}

	conf = (struct client_conf){
		.envoy = {
			.mode = opt.mode,
			.node_prefix = opt.node_prefix,
			.cluster = opt.cluster,
			.trace = opt.trace,
			.t_prog = t_prog,
			.counters = &counters,
		},
		.grpc_target = opt.grpc_target,
	};
	clients = xcalloc((size_t)opt.clients, sizeof(*clients));
	for (int i = 0; i < opt.clients; i++)
		client_init(&clients[i], i, &conf, cqs[i % opt.threads]);

	rss0 = proc_status_kb(opt.server_pid, "VmRSS");
	cpu0 = proc_cpu_s(opt.server_pid);
	t0 = now_ns();
	for (int i = 0; i < opt.clients; i++) {
		if (opt.rate > 0) {
			uint64_t due = t0 + (uint64_t)((double)i / opt.rate * 1e9);
			uint64_t now = now_ns();

			if (due > now)
				sleep_ms((int)((due - now) / 1000000));
		}
		client_start(&clients[i]);
	}
	kv("connect_ms", "%.1f", (double)(now_ns() - t0) / 1e6);
	ok = wait_configured(t0);
	print_initial(t0);
	rss1 = proc_status_kb(opt.server_pid, "VmRSS");
	cpu1 = proc_cpu_s(opt.server_pid);
	if (cpu0 >= 0 && cpu1 >= 0)
		kv("init_server_cpu_ms", "%.0f", (cpu1 - cpu0) * 1000);
	if (rss0 >= 0) {
		kv("rss_before_kb", "%ld", rss0);
		kv("rss_configured_kb", "%ld", rss1);
		kv("rss_per_stream_kb", "%.1f", (double)(rss1 - rss0) / opt.clients);
	}
	if (!ok)
		fprintf(stderr, "fleet: %" PRIu64 " of %d clients got a full "
			"configuration within %.0f s (%" PRIu64 " streams failed)\n",
			atomic_load(&counters.configured), opt.clients, opt.timeout,
			atomic_load(&counters.failed));

	for (int k = 0; ok && k < opt.ntriggers; k++)
		ok = run_trigger(k);
	if (opt.ntriggers) {
		rss2 = proc_status_kb(opt.server_pid, "VmRSS");
		if (rss2 >= 0)
			kv("rss_after_kb", "%ld", rss2);
	}
	if (opt.hold > 0 && ok) {
		uint64_t m0 = atomic_load(&counters.rx_msgs);
		double c0 = proc_cpu_s(opt.server_pid), c1;
		long s0 = proc_switches(opt.server_pid), s1;

		if (opt.verbose)
			fprintf(stderr, "fleet: holding %d idle streams for %.0f s\n",
				opt.clients, opt.hold);
		sleep_ms((int)(opt.hold * 1000));
		c1 = proc_cpu_s(opt.server_pid);
		s1 = proc_switches(opt.server_pid);
		kv("hold_s", "%.0f", opt.hold);
		kv("hold_responses", "%" PRIu64, atomic_load(&counters.rx_msgs) - m0);
		if (c0 >= 0 && c1 >= 0) {
			kv("hold_server_cpu_pct", "%.3f", 100 * (c1 - c0) / opt.hold);
			kv("hold_server_wakeups_per_s", "%.1f", (double)(s1 - s0) / opt.hold);
			kv("hold_rss_kb", "%ld", proc_status_kb(opt.server_pid, "VmRSS"));
		}
	}
	kv("server_hwm_kb", "%ld", proc_status_kb(opt.server_pid, "VmHWM"));
	kv("failed_streams", "%" PRIu64, atomic_load(&counters.failed));
	kv("dup_responses", "%" PRIu64, atomic_load(&counters.dups[CDS]) +
	   atomic_load(&counters.dups[EDS]) + atomic_load(&counters.dups[LDS]) +
	   atomic_load(&counters.dups[RDS]));
	kv("unsubscribed_resources", "%" PRIu64, atomic_load(&counters.unsub));
	kv("unexpected_types", "%" PRIu64, atomic_load(&counters.unknown));
	kv("malformed", "%" PRIu64, atomic_load(&counters.bad));
	kv("names_twice", "%" PRIu64, atomic_load(&counters.twice));
	getrusage(RUSAGE_SELF, &ru);
	kv("fleet_cpu_s", "%.1f", self_cpu_s());
	kv("fleet_rss_kb", "%ld", ru.ru_maxrss);
	/* what neither the fleet nor the server used: other load, noise */
	double busy1 = system_busy_s(), srv1 = proc_cpu_s(opt.server_pid);
	double other = (busy1 - busy0) - self_cpu_s() - (srv1 - srv0);

	kv("wall_s", "%.1f", (double)(now_ns() - t_prog) / 1e9);
	/* clock-tick rounding can make it slightly negative */
	if (busy0 >= 0 && busy1 >= 0 && srv0 >= 0 && srv1 >= 0)
		kv("other_cpu_s", "%.1f", other > 0 ? other : 0.0);
	kv("result", "%s", ok ? "ok" : "FAIL");
	fclose(out);
	printf("%s\n", out_buf);
	fflush(stdout);
	free(out_buf);

	shutdown_fleet(th);
	free(opt.grpc_target);
	return ok ? 0 : 1;
}
