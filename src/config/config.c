/* SPDX-License-Identifier: Apache-2.0 */
#include "config/config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "config/expand.h"
#include "config/paths.h"
#include "util/address.h"
#include "util/file.h"
#include "util/text.h"
#include "util/xalloc.h"

/* A config file is a few dozen lines; anything far larger is a mistake
 * (a snapshot passed as --config, say) and is refused early. */
#define CONFIG_MAX_BYTES (1u << 20)

enum dtype {
	T_ADDRESS,
	T_PATH,
	T_CRED_PATH, /* a path in which ${CREDENTIALS_DIRECTORY} is expanded */
	T_CHOICE,   /* one of `choices`, stored as its index (an enum) */
	T_DURATION, /* stored in milliseconds */
	T_SIZE,     /* stored in bytes */
	T_UINT,
	T_STRING,   /* any non-empty text, kept as written */
};

struct directive {
	const char *name;
	enum dtype type;
	size_t offset;
	const char *def; /* as written in the file; NULL: given to init */
	uint64_t min, max; /* bounds of numbers (max 0: none) */
	bool zero_ok;      /* 0 allowed below min, meaning "off" */
	const char *doc;
	const char *const *choices; /* T_CHOICE: NULL-terminated */
	const char *section;        /* NULL, or the mapping it sits in */
};

static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const node_keys[] = {"cluster", "id", NULL};
static const char *const booleans[] = {"false", "true", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
static const char *const sources[] = {"files", "etcd", NULL};
/* as enum xd_require_canary and enum xd_canary_timeout_policy */
static const char *const require_canary[] = {"per_key", "any", "none", NULL};
static const char *const canary_timeout_policies[] = {"skip", "fail", NULL};


#define OFF(field) offsetof(struct xd_config, field)
#define HOUR_MS (3600ull * 1000)

/* Keep in step with man/xdsd.yaml.5 and etc/xdsd.yaml. */
static const struct directive directives[] = {
	{"listen", T_ADDRESS, OFF(listen), "127.0.0.1:18000", 0, 0, false,
	 "address the xDS gRPC server listens on", NULL, NULL},
	{"snapshots", T_PATH, OFF(snapshots), NULL, 0, 0, false,
	 "directory of snapshot files", NULL, NULL},
	{"schema", T_PATH, OFF(schema), NULL, 0, 0, false,
	 "Envoy API descriptor set", NULL, NULL},
	/* zero_ok on a path: "off" unsets it (under systemd, whose
	 * StateDirectory= gives it a default) */
	{"state_dir", T_PATH, OFF(state_dir), NULL, 0, 0, true,
	 "where the last accepted snapshots are saved, served at start if the snapshots are broken (off: nowhere)",
	 NULL, NULL},
	{"source", T_CHOICE, OFF(source), "files", 0, 0, false,
	 "where snapshots come from: files or etcd", sources, NULL},
	{"log_level", T_CHOICE, OFF(log_level), "info", 0, 0, false,
	 "error, warn, info or debug", log_levels, NULL},
	{"log_format", T_CHOICE, OFF(log_format), "text", 0, 0, false,
	 "log lines as text or json (one object a line)", log_formats, NULL},
	{"node_key", T_CHOICE, OFF(node_key), "cluster", 0, 0, false,
	 "node field that selects its snapshot: cluster or id", node_keys, NULL},
	{"watch", T_CHOICE, OFF(watch), "false", 0, 0, false,
	 "reload by itself when snapshot files change: true or false",
	 booleans, NULL},
	{"watch_delay", T_DURATION, OFF(watch_delay_ms), "500ms", 10, 60000,
	 false, "quiet time after a change before that reload", NULL, NULL},
	{"watch_delay_max", T_DURATION, OFF(watch_delay_max_ms), "5s", 10,
	 600000, false,
	 "longest a reload is put off while changes keep coming (at least watch_delay)",
	 NULL, NULL},
	/* zero_ok on an address: "off" is allowed */
	{"admin_listen", T_ADDRESS, OFF(admin_listen), "127.0.0.1:18080", 0, 0,
	 true, "address of the admin HTTP endpoint (off: none)", NULL, NULL},
	{"admin_advertise", T_ADDRESS, OFF(admin_advertise), NULL, 0, 0, false,
	 "admin address the other replicas and xdsctl --fleet reach this one at (unset: admin_listen's)",
	 NULL, NULL},
	{"rest_listen", T_ADDRESS, OFF(rest_listen), "off", 0, 0, true,
	 "address of the REST-JSON xDS endpoint (off: none)", NULL, NULL},
	{"rest_poll_timeout", T_DURATION, OFF(rest_poll_timeout_ms), "30s", 100,
	 HOUR_MS, false,
	 "longest a REST-JSON poll for a version the client holds waits",
	 NULL, NULL},
	{"http_header_timeout", T_DURATION, OFF(http_header_timeout_ms), "10s",
	 100, HOUR_MS, false,
	 "time an admin or REST-JSON connection gets to send a request's head",
	 NULL, NULL},
	{"admin_max_connections_per_address", T_UINT,
	 OFF(admin_max_connections_per_address), "16", 1, 64, true,
	 "admin connections one client address may hold (0: only the 64 in all)",
	 NULL, NULL},
	{"rest_max_connections_per_address", T_UINT,
	 OFF(rest_max_connections_per_address), "256", 1, 1024, true,
	 "REST-JSON connections one client address may hold (0: only the 1024 in all)",
	 NULL, NULL},

	{"keepalive_time", T_DURATION, OFF(keepalive_time_ms), "30s", 1000,
	 24 * HOUR_MS, true, "idle time before the server pings a client (0: never)", NULL, NULL},
	{"keepalive_timeout", T_DURATION, OFF(keepalive_timeout_ms), "10s",
	 1000, HOUR_MS, false,
	 "time a ping may go unanswered before the connection is closed", NULL, NULL},
	{"min_client_ping_interval", T_DURATION,
	 OFF(min_client_ping_interval_ms), "5s", 0, HOUR_MS, true,
	 "shortest keepalive ping interval a client may use", NULL, NULL},
	{"max_connection_age", T_DURATION, OFF(max_connection_age_ms), "0",
	 1000, 365 * 24 * HOUR_MS, true,
	 "close connections after this age to rebalance clients (0: never)", NULL, NULL},
	{"max_connection_age_grace", T_DURATION,
	 OFF(max_connection_age_grace_ms), "1m", 0, 24 * HOUR_MS, true,
	 "time streams get to end after max_connection_age", NULL, NULL},
	{"handshake_timeout", T_DURATION, OFF(handshake_timeout_ms), "10s",
	 100, HOUR_MS, false,
	 "time a new connection gets to finish its handshake", NULL, NULL},
	/* at most XD_BRIDGE_MAX_THREADS (transport/bridge.h) */
	{"io_threads", T_UINT, OFF(io_threads), "0", 1, 64, true,
	 "threads that run gRPC's network I/O and TLS handshakes (0: one per CPU core)",
	 NULL, NULL},
	{"grpc_timer_slack", T_DURATION, OFF(grpc_timer_slack_ms), "50ms", 1,
	 1000, true,
	 "how late gRPC's threads may wake from timed sleeps, to serve several timers at once (0: the kernel's 50us)",
	 NULL, NULL},
	{"max_streams_per_connection", T_UINT,
	 OFF(max_streams_per_connection), "100", 1, 1u << 20, false,
	 "concurrent streams one client connection may open", NULL, NULL},
	{"max_request_size", T_SIZE, OFF(max_request_size), "4MiB", 1024,
	 1ull << 30, false, "largest request message accepted", NULL, NULL},
	{"read_chunk_size", T_SIZE, OFF(read_chunk_size), "512", 256,
	 1ull << 20, true,
	 "first read buffer of a connection, grown as its messages need (0: gRPC's own, 8KiB at least)",
	 NULL, NULL},
	{"max_connections_per_address", T_UINT,
	 OFF(max_connections_per_address), "1000", 1, 1u << 20, true,
	 "connections with streams one client address may hold (0: no limit)",
	 NULL, NULL},
	{"max_connection_idle", T_DURATION, OFF(max_connection_idle_ms), "5m",
	 1000, 24 * HOUR_MS, true,
	 "close connections that hold no stream for this long (0: never)",
	 NULL, NULL},
	{"max_idle_connections", T_UINT, OFF(max_idle_connections), "4096", 1,
	 1u << 20, true,
	 "connections without a stream xdsd holds in all; more are refused (0: no limit)",
	 NULL, NULL},
	{"max_idle_connections_per_address", T_UINT,
	 OFF(max_idle_connections_per_address), "32", 1, 1u << 20, true,
	 "connections without a stream one client address may hold; more are refused (0: no limit)",
	 NULL, NULL},
	{"first_stream_timeout", T_DURATION, OFF(first_stream_timeout_ms),
	 "20s", 1000, HOUR_MS, true,
	 "close connections that open no stream this long after they connect (0: never)",
	 NULL, NULL},
	{"fd_reserve", T_UINT, OFF(fd_reserve), "64", 16, 1u << 20, false,
	 "descriptors kept free under the open files limit for the admin endpoint, etcd and accepting; connections beyond are refused",
	 NULL, NULL},
	{"ack_timeout", T_DURATION, OFF(ack_timeout_ms), "30s", 1000,
	 24 * HOUR_MS, true,
	 "time a client gets to answer a response before a warning (0: never)",
	 NULL, NULL},
	{"max_names_per_stream", T_UINT, OFF(max_names_per_stream), "200000",
	 1, 1u << 30, false,
	 "resource names one stream may subscribe to, all types together",
	 NULL, NULL},
	{"max_requests_per_second", T_UINT, OFF(max_requests_per_second),
	 "100", 1, 1u << 20, true,
	 "requests a stream may send a second, on average (0: no limit)",
	 NULL, NULL},
	{"max_request_burst", T_UINT, OFF(max_request_burst), "500", 1,
	 1u << 20, false,
	 "requests a stream may send at once above that average", NULL, NULL},
	{"max_node_size", T_SIZE, OFF(max_node_size), "64KiB", 256,
	 1ull << 30, false,
	 "largest node a client may describe itself with, metadata included",
	 NULL, NULL},
	{"max_node_id_size", T_SIZE, OFF(max_node_id_size), "1KiB", 16,
	 1ull << 20, false, "longest node id or cluster", NULL, NULL},
	/* client status answers cost memory in proportion to the fleet:
	 * bounded all together (admin/csds_service.h) */
	{"csds_max_answers", T_UINT, OFF(csds_max_answers), "4", 1, 64, false,
	 "client status (CSDS) answers built or sent at once, over every call",
	 NULL, NULL},
	{"csds_max_memory", T_SIZE, OFF(csds_max_memory), "256MiB", 64 << 10,
	 4ull << 30, false,
	 "bytes those answers hold together (and one alone)", NULL, NULL},
	/* no defaults: unset is plaintext */
	{"cert", T_CRED_PATH, OFF(tls.cert), NULL, 0, 0, false,
	 "certificate chain of the xDS listener, PEM", NULL, "tls"},
	{"key", T_CRED_PATH, OFF(tls.key), NULL, 0, 0, false,
	 "private key of that certificate, PEM", NULL, "tls"},
	{"client_ca", T_CRED_PATH, OFF(tls.client_ca), NULL, 0, 0, false,
	 "CA certificates clients must be signed by (mTLS), PEM", NULL, "tls"},
	{"frame_size", T_SIZE, OFF(tls.frame_size), "4KiB", 1024, 16384,
	 false, "largest TLS record xdsd seals; each connection keeps buffers of it",
	 NULL, "tls"},
	/* source: etcd; `endpoints:` is a list (load_section) */
	{"prefix", T_STRING, OFF(etcd.prefix), "/xdsd/snapshots/", 0, 0, false,
	 "etcd key prefix: <prefix><name>.yaml is snapshot <name>", NULL,
	 "etcd"},
	{"dial_timeout", T_DURATION, OFF(etcd.dial_timeout_ms), "5s", 100,
	 HOUR_MS, false, "time a connection to an etcd endpoint may take",
	 NULL, "etcd"},
	/* etcd's leases are whole seconds: rounded up */
	{"lease_ttl", T_DURATION, OFF(etcd.lease_ttl_ms), "10s", 2000,
	 HOUR_MS, false,
	 "how long a replica that vanished without a clean stop stays registered (its etcd lease)",
	 NULL, "etcd"},
	{"cert", T_CRED_PATH, OFF(etcd.tls.cert), NULL, 0, 0, false,
	 "client certificate chain presented to etcd, PEM", NULL, "etcd.tls"},
	{"key", T_CRED_PATH, OFF(etcd.tls.key), NULL, 0, 0, false,
	 "private key of that certificate, PEM", NULL, "etcd.tls"},
	{"ca", T_CRED_PATH, OFF(etcd.tls.ca), NULL, 0, 0, false,
	 "CA certificates etcd's certificate is signed by, PEM", NULL,
	 "etcd.tls"},
	/* `rollout:` (off when absent); `canary:` is a list (load_section) */
	{"percent", T_UINT, OFF(rollout.percent), "0", 0, 100, false,
	 "share of each snapshot's nodes that are canaries too, by a hash of the node id",
	 NULL, "rollout"},
	{"bake", T_DURATION, OFF(rollout.bake_ms), "60s", 0, 24 * HOUR_MS,
	 false, "time with every canary in sync and no more NACKs before everyone gets a change",
	 NULL, "rollout"},
	{"max_nacks", T_UINT, OFF(rollout.max_nacks), "0", 0, 1u << 20, false,
	 "NACKs from canaries tolerated before a change is rolled back", NULL,
	 "rollout"},
	{"timeout", T_DURATION, OFF(rollout.timeout_ms), "10m", 0, 24 * HOUR_MS,
	 false, "a change not proven by its canaries this long after its rollout started fails (0: wait forever)",
	 NULL, "rollout"},
	/* `load_reports:` (the load reporting service, always served) */
	{"interval", T_DURATION, OFF(load_reports.interval_ms), "10s", 1000,
	 HOUR_MS, false, "how often clients are asked to report their load",
	 NULL, "load_reports"},
	{"window", T_DURATION, OFF(load_reports.window_ms), "1m", 1000,
	 24 * HOUR_MS, false,
	 "how long load reports are kept and summed over (at least twice interval)",
	 NULL, "load_reports"},
	{"max_entries", T_UINT, OFF(load_reports.max_entries), "10000", 1,
	 1u << 20, false,
	 "(cluster, locality, node) triples kept; reports of more are counted and dropped",
	 NULL, "load_reports"},
	{"max_series", T_UINT, OFF(load_reports.max_series), "100", 1, 10000,
	 false,
	 "(cluster, locality) pairs /metrics shows apart; the rest together as _other",
	 NULL, "load_reports"},
	{"require_canary", T_CHOICE, OFF(rollout.require_canary), "per_key", 0,
	 0, false,
	 "what proves a change: per_key (a canary ACKed each snapshot key it changes), any (one canary ACKed it) or none (the bake alone)",
	 require_canary, "rollout"},
	{"canary_timeout", T_DURATION, OFF(rollout.canary_timeout_ms), "2m", 0,
	 24 * HOUR_MS, false,
	 "a canary that has not answered the change this long is named, and on_canary_timeout decides (0: never)",
	 NULL, "rollout"},
	{"on_canary_timeout", T_CHOICE, OFF(rollout.on_canary_timeout), "skip",
	 0, 0, false,
	 "skip (the rollout goes on without that canary) or fail (the rollout fails)",
	 canary_timeout_policies, "rollout"},
};

/* Sections: mappings whose keys are directives of their own. A dotted
 * name is a section inside another (`etcd:` holds `tls:`). */
static const char *const sections[] = {"tls", "etcd", "etcd.tls", "rollout",
				       "load_reports", NULL};

/* The keys of an `authorize:` rule. */
static const char *const rule_keys[] = {"identity", "node_id", "node_cluster",
					NULL};

#define NDIRECTIVES (sizeof(directives) / sizeof(directives[0]))

static bool same_section(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The directive `name` of `section` (NULL: the top level). */
static const struct directive *find_directive(const char *section,
					      const char *name)
{
	for (size_t i = 0; i < NDIRECTIVES; i++)
		if (same_section(directives[i].section, section) &&
		    strcmp(directives[i].name, name) == 0)
			return &directives[i];
	return NULL;
}

/* The section `name` inside `parent` (NULL: the top level), or NULL. */
static const char *find_section(const char *parent, const char *name)
{
	size_t plen = parent != NULL ? strlen(parent) : 0;

	for (size_t i = 0; sections[i] != NULL; i++) {
		const char *s = sections[i];

		if (parent == NULL ? strchr(s, '.') != NULL :
				     strncmp(s, parent, plen) != 0 || s[plen] != '.')
			continue;
		if (strcmp(parent != NULL ? s + plen + 1 : s, name) == 0)
			return s;
	}
	return NULL;
}

static const char *closest(const char *name, const char *best,
			   const char *candidate, size_t *best_d)
{
	/* Plain edits, case-sensitive, as keys are matched. */
	size_t d = xd_text_distance(name, strlen(name), candidate,
				    strlen(candidate), 0);

	if (d < *best_d) {
		*best_d = d;
		return candidate;
	}
	return best;
}

/* A known key close to `name` in `section` (top level: sections and
 * `authorize` too), or NULL. */
static const char *suggest(const char *section, const char *name)
{
	const char *best = NULL;
	size_t best_d = 3; /* suggest only close misspellings */

	for (size_t i = 0; i < NDIRECTIVES; i++)
		if (same_section(directives[i].section, section))
			best = closest(name, best, directives[i].name, &best_d);
	if (section != NULL && strcmp(section, "etcd") == 0) {
		best = closest(name, best, "endpoints", &best_d);
		best = closest(name, best, "tls", &best_d);
	}
	if (section != NULL && strcmp(section, "rollout") == 0)
		best = closest(name, best, "canary", &best_d);
	if (section == NULL) {
		for (size_t i = 0; sections[i] != NULL; i++)
			if (strchr(sections[i], '.') == NULL)
				best = closest(name, best, sections[i], &best_d);
		best = closest(name, best, "authorize", &best_d);
		best = closest(name, best, "csds_allow", &best_d);
		best = closest(name, best, "admin_hosts", &best_d);
		best = closest(name, best, "dry_run_dirs", &best_d);
		best = closest(name, best, "trusted_proxies", &best_d);
	}
	return best;
}

/* ---- value parsers: return NULL on success, else the reason ---- */

static const char *parse_uint(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return "not a non-negative integer";
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return "number too large";
	if (*end != '\0')
		return "not a non-negative integer";
	*out = v;
	return NULL;
}

/* "1.5s", "250ms", "2m", "1h", or "0" (util/text.h). */
static const char *parse_duration(const char *s, uint64_t *ms)
{
	return xd_text_duration(s, ms);
}

/* "4194304", "512KiB", "4MiB", "1GiB" (K/M/G and KB/MB/GB mean the same). */
static const char *parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {{"", 0},    {"B", 0},    {"K", 10},  {"KB", 10},
		     {"KiB", 10}, {"M", 20},  {"MB", 20}, {"MiB", 20},
		     {"G", 30},  {"GB", 30}, {"GiB", 30}};
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return "not a size (examples: 65536, 512KiB, 4MiB)";
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE || v > (1ull << 40))
		return "size too large";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			*bytes = (uint64_t)v << units[i].shift;
			return NULL;
		}
	}
	return "unknown size unit (use KiB, MiB or GiB)";
}

/* One of the directive's words; the message lists them all. */
static const char *parse_choice(const struct directive *d, const char *s,
				int *out, char *why, size_t len)
{
	size_t n = 0;

	for (int i = 0; d->choices[i] != NULL; i++) {
		if (strcmp(s, d->choices[i]) == 0) {
			*out = i;
			return NULL;
		}
	}
	n += (size_t)snprintf(why, len, "must be ");
	for (int i = 0; d->choices[i] != NULL && n < len; i++)
		n += (size_t)snprintf(why + n, len - n, "%s%s",
				      i == 0 ? "" :
				      d->choices[i + 1] == NULL ? " or " : ", ",
				      d->choices[i]);
	return why;
}

/* Writes a number back in the directive's own notation. */
static void format_number(char *buf, size_t len, enum dtype type, uint64_t n)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} dur[] = {{3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}},
	  size[] = {{1u << 30, "GiB"}, {1u << 20, "MiB"}, {1u << 10, "KiB"},
		    {1, ""}};
	const __typeof__(dur[0]) *u = type == T_DURATION ? dur : size;

	if (type == T_UINT || n == 0) {
		snprintf(buf, len, "%" PRIu64, n);
		return;
	}
	while (n % u->div != 0)
		u++;
	snprintf(buf, len, "%" PRIu64 "%s", n / u->div, u->unit);
}

static char *join_path(const char *dir, const char *value)
{
	if (value[0] == '/' || dir == NULL || dir[0] == '\0')
		return xd_strdup(value);
	return xd_asprintf("%s/%s", dir, value);
}

static void replace_str(char **slot, char *value)
{
	free(*slot);
	*slot = value;
}

/*
 * Applies one value. `where` prefixes messages ("file:3:11" or
 * "--listen"); `dir` is the base for relative paths (NULL: cwd).
 */
static int apply(struct xd_config *cfg, const struct directive *d,
		 const char *value, const char *where, const char *dir,
		 struct xd_diag *diag)
{
	char *base = (char *)cfg + d->offset;
	const char *why = NULL;
	char bound[32], range[256];
	uint64_t n = 0;

	if (value[0] == '\0') {
		xd_diag_add(diag, "%s: '%s%s%s': empty value", where,
			    d->section ? d->section : "", d->section ? "." : "",
			    d->name);
		return -1;
	}
	switch (d->type) {
	case T_ADDRESS:
		why = d->zero_ok && strcmp(value, "off") == 0 ?
			      NULL :
			      xd_address_error(value);
		if (why == NULL)
			replace_str((char **)base, xd_strdup(value));
		break;
	case T_PATH:
		replace_str((char **)base,
			    d->zero_ok && strcmp(value, "off") == 0 ?
				    NULL :
				    join_path(dir, value));
		if (d->offset == OFF(state_dir))
			cfg->state_dir_given = true;
		break;
	case T_STRING:
		replace_str((char **)base, xd_strdup(value));
		break;
	case T_CRED_PATH: {
		char *expanded = xd_expand_path(value, range, sizeof(range));

		if (expanded == NULL) {
			why = range;
			break;
		}
		replace_str((char **)base, join_path(dir, expanded));
		free(expanded);
		break;
	}
	case T_CHOICE:
		why = parse_choice(d, value, (int *)(void *)base, range,
				   sizeof(range));
		break;
	case T_DURATION:
	case T_SIZE:
	case T_UINT:
		why = d->type == T_DURATION ? parse_duration(value, &n) :
		      d->type == T_SIZE     ? parse_size(value, &n) :
					      parse_uint(value, &n);
		if (why == NULL && n < d->min && !(n == 0 && d->zero_ok)) {
			format_number(bound, sizeof(bound), d->type, d->min);
			snprintf(range, sizeof(range), "below the minimum %s%s",
				 bound, d->zero_ok ? " (0 turns it off)" : "");
			why = range;
		} else if (why == NULL && d->max != 0 && n > d->max) {
			format_number(bound, sizeof(bound), d->type, d->max);
			snprintf(range, sizeof(range), "above the maximum %s",
				 bound);
			why = range;
		}
		if (why == NULL)
			*(uint64_t *)(void *)base = n;
		break;
	}
	if (why != NULL) {
		xd_diag_add(diag, "%s: '%s%s%s': bad value '%s': %s", where,
			    d->section ? d->section : "", d->section ? "." : "",
			    d->name, value, why);
		return -1;
	}
	return 0;
}

void xd_config_init(struct xd_config *cfg, const char *snapshots,
		    const char *schema)
{
	struct xd_diag diag = XD_DIAG_INIT;

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NDIRECTIVES; i++) {
		const struct directive *d = &directives[i];

		/* the table's own rules, which apply() and the printer
		 * rely on: a value inside the struct, bounds in order, a
		 * choice with its choices */
		XD_ASSERT_INFO(d->offset + sizeof(uint64_t) <= sizeof(*cfg) &&
			       (d->max == 0 || d->min <= d->max) &&
			       (d->type == T_CHOICE) == (d->choices != NULL),
			       "directive '%s'", d->name);
		if (d->def != NULL)
			apply(cfg, d, d->def, "default", NULL, &diag);
	}
	cfg->snapshots = xd_strdup(snapshots);
	cfg->schema = xd_strdup(schema);
	cfg->state_dir = xd_paths_state_dir();
	/* The defaults above are constants; one that fails is a bug. */
	if (xd_diag_total(&diag) != 0) {
		xd_diag_print(&diag, stderr);
		xd_panic(__FILE__, __LINE__, "a built-in default is invalid");
	}
}

int xd_config_set(struct xd_config *cfg, const char *key, const char *value,
		  const char *origin, struct xd_diag *diag)
{
	const char *dot = strrchr(key, '.');
	char section[32];
	const struct directive *d;

	/* "tls.cert" names cert in the tls section, "etcd.tls.ca" ca in
	 * etcd's */
	snprintf(section, sizeof(section), "%.*s",
		 dot != NULL ? (int)(dot - key) : 0, key);
	d = find_directive(dot != NULL ? section : NULL,
			   dot != NULL ? dot + 1 : key);
	if (d == NULL) {
		xd_diag_add(diag, "%s: unknown directive '%s'", origin, key);
		return -1;
	}
	return apply(cfg, d, value, origin, NULL, diag);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xd_strdup("");
	if (slash == path)
		return xd_strdup("/");
	return xd_strndup(path, (size_t)(slash - path));
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return "a scalar";
	}
}

/* Where the value in force of a setting was set, over every file read:
 * the file (its index in cfg->files) and line; line 0: in none. */
struct origin {
	size_t file;
	size_t line;
};

/* The configuration file and its conf.d files, read in turn over one
 * struct xd_config: a later file's setting replaces an earlier one's. */
struct reading {
	struct xd_config *cfg;
	struct xd_diag *diag;
	char *dir; /* base of relative paths: the configuration file's */
	struct origin at[NDIRECTIVES];
	struct origin authorize, csds_allow, rollout;
	/* where each file's mapping starts: checks of settings that go
	 * together are reported there */
	struct {
		size_t line, column;
	} root[XD_CONFIG_MAX_CONFD + 1];
};

/* One file being read. */
struct loading {
	struct reading *r;
	struct xd_config *cfg;
	const char *path;
	size_t file; /* its index in cfg->files */
	const char *dir; /* base of relative paths */
	yaml_document_t *doc;
	struct xd_diag *diag;
	size_t seen_line[NDIRECTIVES]; /* where each directive was set in it */
	size_t authorize_line;
	size_t csds_allow_line;
	size_t admin_hosts_line;
	size_t dry_run_dirs_line;
	size_t trusted_proxies_line;
	size_t etcd_endpoints_line;
	size_t rollout_line, rollout_canary_line;
	int rc;
};

/* An error at `at`: "file:line:column: message". */
static void fail(struct loading *l, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct loading *l, const yaml_node_t *at, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xd_vasprintf(fmt, ap);
	va_end(ap);
	xd_diag_add(l->diag, "%s:%zu:%zu: %s", l->path, at->start_mark.line + 1,
		    at->start_mark.column + 1, msg);
	free(msg);
	l->rc = -1;
}

/* The text of a key (NULL, reported, when it is not a plain name). */
static const char *key_of(struct loading *l, const yaml_node_t *k)
{
	if (k->type != YAML_SCALAR_NODE) {
		fail(l, k, "keys must be plain names, not %s", node_kind(k));
		return NULL;
	}
	return (const char *)k->data.scalar.value;
}

/* The text of the value of `key` (NULL, reported, when it is not one
 * value, is missing, or holds a NUL byte). */
static const char *value_of(struct loading *l, const yaml_node_t *v,
			    const char *key)
{
	if (v->type != YAML_SCALAR_NODE) {
		fail(l, v, "'%s': expected a single value, not %s", key,
		     node_kind(v));
		return NULL;
	}
	if (v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (v->data.scalar.length == 0 ||
	     strcmp((char *)v->data.scalar.value, "~") == 0 ||
	     strcmp((char *)v->data.scalar.value, "null") == 0)) {
		fail(l, v, "'%s': missing value", key);
		return NULL;
	}
	if (strlen((char *)v->data.scalar.value) != v->data.scalar.length) {
		fail(l, v, "'%s': value contains a NUL byte", key);
		return NULL;
	}
	return (const char *)v->data.scalar.value;
}

static void unknown_key(struct loading *l, const yaml_node_t *k,
			const char *section, const char *key)
{
	const char *s = suggest(section, key);
	char what[64];

	if (section != NULL)
		snprintf(what, sizeof(what), " in '%s'", section);
	else
		what[0] = '\0';
	fail(l, k, "unknown %s '%s'%s%s%s%s", section ? "setting" : "directive",
	     key, what, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
}

static void load_directive(struct loading *l, const char *section,
			   const yaml_node_t *k, const yaml_node_t *v)
{
	const char *key = key_of(l, k), *value;
	const struct directive *d;
	char where[PATH_MAX + 64];
	size_t i;

	if (key == NULL)
		return;
	d = find_directive(section, key);
	if (d == NULL) {
		unknown_key(l, k, section, key);
		return;
	}
	i = (size_t)(d - directives);
	if (l->seen_line[i] != 0) {
		fail(l, k, "'%s' is set twice (first on line %zu)", key,
		     l->seen_line[i]);
		return;
	}
	l->seen_line[i] = k->start_mark.line + 1;
	l->r->at[i] = (struct origin){l->file, l->seen_line[i]};
	value = value_of(l, v, key);
	if (value == NULL)
		return;
	snprintf(where, sizeof(where), "%s:%zu:%zu", l->path,
		 v->start_mark.line + 1, v->start_mark.column + 1);
	if (apply(l->cfg, d, value, where, l->dir, l->diag) != 0)
		l->rc = -1;
}

static void load_etcd_endpoints(struct loading *l, const yaml_node_t *k,
				const yaml_node_t *v);
static void load_rollout_canary(struct loading *l, const yaml_node_t *k,
				const yaml_node_t *v);

/* A section: a mapping of its own directives, and of the sections
 * inside it. */
static void load_section(struct loading *l, const char *section,
			 const yaml_node_t *v)
{
	/* "tls:" with nothing under it (all commented out) sets nothing */
	if (v->type == YAML_SCALAR_NODE &&
	    v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    v->data.scalar.length == 0)
		return;
	if (v->type != YAML_MAPPING_NODE) {
		fail(l, v, "'%s' must be a mapping of its settings, not %s",
		     section, node_kind(v));
		return;
	}
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
	     p < v->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
		const yaml_node_t *pv = yaml_document_get_node(l->doc, p->value);
		const char *key = k->type == YAML_SCALAR_NODE ?
					  (const char *)k->data.scalar.value :
					  NULL;
		const char *inner = key != NULL ? find_section(section, key) : NULL;

		if (inner != NULL)
			load_section(l, inner, pv);
		else if (key != NULL && strcmp(section, "etcd") == 0 &&
			 strcmp(key, "endpoints") == 0)
			load_etcd_endpoints(l, k, pv);
		else if (key != NULL && strcmp(section, "rollout") == 0 &&
			 strcmp(key, "canary") == 0)
			load_rollout_canary(l, k, pv);
		else
			load_directive(l, section, k, pv);
	}
}

static void free_strings(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

static void free_rules(struct xd_config *cfg)
{
	for (size_t i = 0; i < cfg->nauthorize; i++) {
		free(cfg->authorize[i].identity);
		free(cfg->authorize[i].node_id);
		free(cfg->authorize[i].node_cluster);
	}
	free(cfg->authorize);
	cfg->authorize = NULL;
	cfg->nauthorize = 0;
}

/* One `authorize:` rule: identity (required), node_id, node_cluster. */
static void load_rule(struct loading *l, const yaml_node_t *m)
{
	char *vals[3] = {NULL, NULL, NULL};
	struct xd_config *cfg = l->cfg;
	int before = l->rc;

	if (m->type != YAML_MAPPING_NODE) {
		fail(l, m, "an authorize rule is a mapping (identity, node_id, node_cluster), not %s",
		     node_kind(m));
		return;
	}
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
		const char *key = key_of(l, k), *value;
		size_t i = 0;

		if (key == NULL)
			continue;
		while (rule_keys[i] != NULL && strcmp(rule_keys[i], key) != 0)
			i++;
		if (rule_keys[i] == NULL) {
			const char *best = NULL;
			size_t best_d = 3;

			for (size_t j = 0; rule_keys[j] != NULL; j++)
				best = closest(key, best, rule_keys[j], &best_d);
			fail(l, k, "unknown authorize key '%s'%s%s%s", key,
			     best ? " (did you mean '" : "", best ? best : "",
			     best ? "'?)" : "");
			continue;
		}
		if (vals[i] != NULL) {
			fail(l, k, "'%s' is set twice in one rule", key);
			continue;
		}
		value = value_of(l, v, key);
		if (value != NULL)
			vals[i] = xd_strdup(value);
	}
	if (vals[0] == NULL && l->rc == before)
		fail(l, m, "an authorize rule needs an identity (a glob such as spiffe://example.org/ns/prod/sa/*)");
	if (l->rc != before) {
		for (int i = 0; i < 3; i++)
			free(vals[i]);
		return;
	}
	XD_ASSERT(vals[0] != NULL); /* a rule without an identity failed above */
	cfg->authorize = xd_reallocarray(cfg->authorize, cfg->nauthorize + 1,
					 sizeof(*cfg->authorize));
	cfg->authorize[cfg->nauthorize++] = (struct xd_authz_rule){
		vals[0], vals[1] ? vals[1] : xd_strdup("*"),
		vals[2] ? vals[2] : xd_strdup("*")};
}

static void load_rules(struct loading *l, const yaml_node_t *k,
		       const yaml_node_t *v)
{
	if (l->authorize_line != 0) {
		fail(l, k, "'authorize' is set twice (first on line %zu)",
		     l->authorize_line);
		return;
	}
	l->authorize_line = k->start_mark.line + 1;
	l->r->authorize = (struct origin){l->file, l->authorize_line};
	/* an earlier file's rules are replaced, not added to */
	free_rules(l->cfg);
	if (v->type != YAML_SEQUENCE_NODE) {
		fail(l, v, "'authorize' is a list of rules, not %s", node_kind(v));
		return;
	}
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++)
		load_rule(l, yaml_document_get_node(l->doc, *i));
}

/* A list of strings: `csds_allow:` (identity globs), `admin_hosts:`
 * (host names)... A list an earlier file set is replaced. Returns the
 * index of the first string this file added (*n when none). */
static size_t load_strings(struct loading *l, const yaml_node_t *k,
			   const yaml_node_t *v, const char *name,
			   const char *what, size_t *line, char ***list,
			   size_t *n)
{
	if (*line != 0) {
		fail(l, k, "'%s' is set twice (first on line %zu)", name, *line);
		return *n;
	}
	*line = k->start_mark.line + 1;
	free_strings(*list, *n);
	*list = NULL;
	*n = 0;
	if (v->type != YAML_SEQUENCE_NODE) {
		fail(l, v, "'%s' is a list of %s, not %s", name, what,
		     node_kind(v));
		return 0;
	}
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		const yaml_node_t *g = yaml_document_get_node(l->doc, *i);
		const char *text = value_of(l, g, name);

		if (text == NULL)
			continue;
		*list = xd_reallocarray(*list, *n + 1, sizeof(**list));
		(*list)[(*n)++] = xd_strdup(text);
	}
	return 0;
}

/* `admin_hosts:` names the admin endpoint answers to, besides
 * localhost and addresses: each a host name as in a Host header. */
static void load_admin_hosts(struct loading *l, const yaml_node_t *k,
			     const yaml_node_t *v)
{
	struct xd_config *cfg = l->cfg;
	size_t before = load_strings(l, k, v, "admin_hosts", "host names",
				     &l->admin_hosts_line, &cfg->admin_hosts,
				     &cfg->nadmin_hosts);

	for (size_t i = before; i < cfg->nadmin_hosts; i++) {
		const char *h = cfg->admin_hosts[i];
		const yaml_node_t *at = yaml_document_get_node(
			l->doc, v->data.sequence.items.start[i - before]);

		if (h[0] == '\0' || strspn(h, "abcdefghijklmnopqrstuvwxyz"
					      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789.-") != strlen(h))
			fail(l, at, "admin_hosts: '%s' is not a host name (letters, digits, dots and dashes; no port)",
			     h);
	}
}

/* `dry_run_dirs:` where a dry run may read snapshots: directories, a
 * relative one taken from the file's own directory as every path. */
static void load_dry_run_dirs(struct loading *l, const yaml_node_t *k,
			      const yaml_node_t *v)
{
	struct xd_config *cfg = l->cfg;
	size_t before = load_strings(l, k, v, "dry_run_dirs", "directories",
				     &l->dry_run_dirs_line, &cfg->dry_run_dirs,
				     &cfg->ndry_run_dirs);

	for (size_t i = before; i < cfg->ndry_run_dirs; i++) {
		char *p = cfg->dry_run_dirs[i];

		if (p[0] == '\0') {
			fail(l, yaml_document_get_node(l->doc, v->data.sequence.items.start[i - before]),
			     "dry_run_dirs: an empty path");
			continue;
		}
		cfg->dry_run_dirs[i] = join_path(l->dir, p);
		free(p);
	}
}

/* `trusted_proxies:` addresses and prefixes exempt from the
 * per-address limits, each parsed as the servers will match it. */
static void load_trusted_proxies(struct loading *l, const yaml_node_t *k,
				 const yaml_node_t *v)
{
	struct xd_config *cfg = l->cfg;
	char why[256];
	size_t before = load_strings(l, k, v, "trusted_proxies",
				     "addresses and prefixes",
				     &l->trusted_proxies_line,
				     &cfg->trusted_proxies,
				     &cfg->ntrusted_proxies);

	if (cfg->ntrusted_proxies > before)
		cfg->trusted_nets = xd_reallocarray(cfg->trusted_nets,
						    cfg->ntrusted_proxies,
						    sizeof(*cfg->trusted_nets));
	for (size_t i = before; i < cfg->ntrusted_proxies; i++)
		if (xd_address_cidr_parse(cfg->trusted_proxies[i],
					  &cfg->trusted_nets[i], why,
					  sizeof(why)) != 0)
			fail(l, yaml_document_get_node(l->doc, v->data.sequence.items.start[i - before]),
			     "trusted_proxies: %s", why);
}

/* `etcd.endpoints:` the members of the etcd cluster, each host:port or
 * [v6]:port with a port that is not 0 (xdsd connects to them). */
static void load_etcd_endpoints(struct loading *l, const yaml_node_t *k,
				const yaml_node_t *v)
{
	struct xd_config *cfg = l->cfg;
	size_t before = load_strings(l, k, v, "etcd.endpoints",
				     "host:port addresses",
				     &l->etcd_endpoints_line,
				     &cfg->etcd.endpoints, &cfg->etcd.nendpoints);

	for (size_t i = before; i < cfg->etcd.nendpoints; i++) {
		const char *e = cfg->etcd.endpoints[i];
		const yaml_node_t *at = yaml_document_get_node(
			l->doc, v->data.sequence.items.start[i - before]);
		char host[256], port[16], why[512];

		if (xd_address_split(e, host, sizeof(host), port, sizeof(port),
				     why, sizeof(why)) != 0)
			fail(l, at, "etcd.endpoints: %s", why);
		else if (strcmp(port, "0") == 0)
			fail(l, at, "etcd.endpoints: '%s': port 0 cannot be connected to",
			     e);
	}
}

/* `rollout.canary:` node id globs, or node cluster globs written
 * "cluster:GLOB" (protocol/client.c matches them). */
static void load_rollout_canary(struct loading *l, const yaml_node_t *k,
				const yaml_node_t *v)
{
	struct xd_config *cfg = l->cfg;
	size_t before = load_strings(l, k, v, "rollout.canary", "node id globs",
				     &l->rollout_canary_line,
				     &cfg->rollout.canary, &cfg->rollout.ncanary);

	for (size_t i = before; i < cfg->rollout.ncanary; i++) {
		const char *g = cfg->rollout.canary[i];

		if (strcmp(g, "cluster:") == 0)
			fail(l, yaml_document_get_node(l->doc, v->data.sequence.items.start[i - before]),
			     "rollout.canary: 'cluster:' needs a glob of node clusters after it");
	}
}

static struct origin origin_of(const struct reading *r, const char *section,
			       const char *name)
{
	const struct directive *d = find_directive(section, name);

	XD_ASSERT_INFO(d != NULL, "directive '%s'", name); /* names in the code */
	return r->at[d - directives];
}

/* An error about settings that go together, reported at the start of
 * the file that set `o` (whose "line N" the message names). */
static void fail_whole(struct reading *r, struct origin o, const char *fmt,
		       ...) __attribute__((format(printf, 3, 4)));

static void fail_whole(struct reading *r, struct origin o, const char *fmt,
		       ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xd_vasprintf(fmt, ap);
	va_end(ap);
	xd_diag_add(r->diag, "%s:%zu:%zu: %s", r->cfg->files[o.file],
		    r->root[o.file].line, r->root[o.file].column, msg);
	free(msg);
}

/* Settings that must go together, once every file is read: one file
 * may set what another needs. */
static int check_together(struct reading *r)
{
	const struct xd_config *cfg = r->cfg;
	size_t before = xd_diag_total(r->diag);
	struct origin o;

	if ((cfg->tls.cert == NULL) != (cfg->tls.key == NULL)) {
		o = origin_of(r, "tls", cfg->tls.cert ? "cert" : "key");
		fail_whole(r, o, "tls: 'cert' and 'key' go together (line %zu sets only '%s')",
			   o.line,
			   cfg->tls.cert ? "cert" : "key");
	} else if (cfg->tls.client_ca != NULL && cfg->tls.cert == NULL) {
		fail_whole(r, origin_of(r, "tls", "client_ca"),
			   "tls: 'client_ca' needs the server's own 'cert' and 'key'");
	}
	if (cfg->source == XD_SOURCE_ETCD && cfg->etcd.nendpoints == 0) {
		o = origin_of(r, NULL, "source");
		fail_whole(r, o, "'source: etcd' (line %zu) needs etcd.endpoints: a list of host:port addresses of the etcd cluster",
			   o.line);
	}
	if ((cfg->etcd.tls.cert == NULL) != (cfg->etcd.tls.key == NULL)) {
		o = origin_of(r, "etcd.tls", cfg->etcd.tls.cert ? "cert" : "key");
		fail_whole(r, o, "etcd.tls: 'cert' and 'key' go together (line %zu sets only '%s')",
			   o.line,
			   cfg->etcd.tls.cert ? "cert" : "key");
	}
	if (cfg->nauthorize > 0 && cfg->tls.client_ca == NULL)
		fail_whole(r, r->authorize, "'authorize' (line %zu) needs tls.client_ca: only a client certificate proves an identity",
			   r->authorize.line);
	if (cfg->ncsds_allow > 0 && cfg->tls.client_ca == NULL)
		fail_whole(r, r->csds_allow, "'csds_allow' (line %zu) needs tls.client_ca: only a client certificate proves an identity",
			   r->csds_allow.line);
	if (cfg->rollout.on && cfg->rollout.ncanary == 0 &&
	    cfg->rollout.percent == 0)
		fail_whole(r, r->rollout, "'rollout' (line %zu) names no canaries: give rollout.canary (node id globs, or cluster:GLOB) or rollout.percent",
			   r->rollout.line);
	return xd_diag_total(r->diag) == before ? 0 : -1;
}

static int load_document(struct reading *r, size_t file, yaml_document_t *doc)
{
	struct xd_config *cfg = r->cfg;
	const char *path = cfg->files[file];
	yaml_node_t *root = yaml_document_get_root_node(doc);
	struct loading l = {.r = r, .cfg = cfg, .path = path, .file = file,
			    .dir = r->dir, .doc = doc, .diag = r->diag};

	if (root == NULL)
		return 0; /* an empty file: sets nothing */
	r->root[file].line = root->start_mark.line + 1;
	r->root[file].column = root->start_mark.column + 1;
	if (root->type != YAML_MAPPING_NODE) {
		fail(&l, root, "the configuration must be a mapping of directives, not %s",
		     node_kind(root));
		return l.rc;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *key = key_of(&l, k);

		if (key == NULL)
			continue;
		if (strcmp(key, "rollout") == 0 && l.rollout_line == 0) {
			/* present: on (a bare "rollout:" too, which then
			 * names no canaries: check_together says so) */
			l.rollout_line = k->start_mark.line + 1;
			r->rollout = (struct origin){file, l.rollout_line};
			cfg->rollout.on = true;
		} else if (strcmp(key, "rollout") == 0) {
			fail(&l, k, "'rollout' is set twice (first on line %zu)",
			     l.rollout_line);
			continue;
		}
		if (strcmp(key, "etcd") == 0 && cfg->etcd_at == NULL)
			cfg->etcd_at = xd_asprintf("%s:%zu:%zu", path,
						   k->start_mark.line + 1,
						   k->start_mark.column + 1);
		if (find_section(NULL, key) != NULL) {
			load_section(&l, key, v);
		} else if (strcmp(key, "authorize") == 0) {
			load_rules(&l, k, v);
		} else if (strcmp(key, "csds_allow") == 0) {
			load_strings(&l, k, v, "csds_allow", "identity globs",
				     &l.csds_allow_line, &cfg->csds_allow,
				     &cfg->ncsds_allow);
			r->csds_allow = (struct origin){file, l.csds_allow_line};
		} else if (strcmp(key, "admin_hosts") == 0) {
			load_admin_hosts(&l, k, v);
		} else if (strcmp(key, "dry_run_dirs") == 0) {
			load_dry_run_dirs(&l, k, v);
		} else if (strcmp(key, "trusted_proxies") == 0) {
			load_trusted_proxies(&l, k, v);
		} else {
			load_directive(&l, NULL, k, v);
		}
	}
	return l.rc;
}

/* Reads one file of the configuration over `r->cfg`. */
static int load_file(struct reading *r, const char *path)
{
	struct xd_config *cfg = r->cfg;
	struct xd_diag *diag = r->diag;
	yaml_parser_t parser;
	yaml_document_t doc;
	struct xd_file file;
	size_t index = cfg->nfiles;
	int rc = -1;

	XD_ASSERT(index < XD_CONFIG_MAX_CONFD + 1); /* listed bounded */
	cfg->files = xd_reallocarray(cfg->files, index + 1, sizeof(*cfg->files));
	cfg->files[cfg->nfiles++] = xd_strdup(path);
	r->root[index].line = r->root[index].column = 1;
	if (xd_file_read(path, "configuration", CONFIG_MAX_BYTES, &file, NULL,
			 diag) != 0)
		return -1;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)file.text,
				     file.len);
	if (!yaml_parser_load(&parser, &doc)) {
		xd_diag_add(diag, "%s:%zu:%zu: %s%s%s", path,
			    parser.problem_mark.line + 1,
			    parser.problem_mark.column + 1,
			    parser.problem ? parser.problem : "syntax error",
			    parser.context ? " " : "",
			    parser.context ? parser.context : "");
		goto out;
	}
	rc = load_document(r, index, &doc);
	yaml_document_delete(&doc);
	if (rc == 0) {
		/* A second document is almost certainly a stray "---". */
		if (!yaml_parser_load(&parser, &doc)) {
			xd_diag_add(diag, "%s:%zu:%zu: %s", path,
				    parser.problem_mark.line + 1,
				    parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "syntax error");
			rc = -1;
		} else {
			yaml_node_t *extra = yaml_document_get_root_node(&doc);

			if (extra != NULL) {
				xd_diag_add(diag, "%s:%zu:%zu: only one YAML document is allowed",
					    path, extra->start_mark.line + 1,
					    extra->start_mark.column + 1);
				rc = -1;
			}
			yaml_document_delete(&doc);
		}
	}
out:
	yaml_parser_delete(&parser);
	xd_file_free(&file, false);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A name conf.d reads: NAME.yaml, not hidden ("NAME.yaml.dpkg-old",
 * "NAME.yaml~" and the like are left alone). */
static bool confd_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".yaml") == 0;
}

/* The paths of DIR/conf.d/NAME.yaml in byte order of their names, in
 * *out (NULL when there is no conf.d): 0, or -1 when conf.d cannot be
 * read or holds more than XD_CONFIG_MAX_CONFD of them. */
static int list_confd(const char *dir, char ***out, size_t *n,
		      struct xd_diag *diag)
{
	char *confd = xd_asprintf("%s/conf.d", dir[0] != '\0' ? dir : ".");
	char **v = NULL;
	DIR *d = opendir(confd);
	int rc = 0;

	*n = 0;
	if (d == NULL) {
		if (errno != ENOENT) {
			xd_diag_add(diag, "%s: cannot read the configuration's conf.d: %s",
				    confd, strerror(errno));
			rc = -1;
		}
		goto out;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!confd_name(e->d_name))
			continue;
		if (*n == XD_CONFIG_MAX_CONFD) {
			xd_diag_add(diag, "%s: more than %d files NAME.yaml; xdsd reads at most %d",
				    confd, XD_CONFIG_MAX_CONFD,
				    XD_CONFIG_MAX_CONFD);
			rc = -1;
			break;
		}
		v = xd_reallocarray(v, *n + 1, sizeof(*v));
		v[(*n)++] = xd_asprintf("%s/%s", confd, e->d_name);
	}
	closedir(d);
	if (rc != 0) {
		free_strings(v, *n);
		v = NULL;
		*n = 0;
	} else if (*n > 0) {
		qsort(v, *n, sizeof(*v), by_name);
	}
out:
	free(confd);
	*out = v;
	return rc;
}

int xd_config_load(struct xd_config *cfg, const char *path,
		   struct xd_diag *diag)
{
	struct reading *r = xd_calloc(1, sizeof(*r));
	char **confd = NULL;
	size_t nconfd = 0;
	int rc;

	r->cfg = cfg;
	r->diag = diag;
	r->dir = dir_of(path);
	free_strings(cfg->files, cfg->nfiles);
	cfg->files = NULL;
	cfg->nfiles = 0;
	rc = load_file(r, path);
	if (list_confd(r->dir, &confd, &nconfd, diag) != 0)
		rc = -1;
	/* every file, so that every error is reported at once */
	for (size_t i = 0; i < nconfd; i++)
		if (load_file(r, confd[i]) != 0)
			rc = -1;
	if (rc == 0)
		rc = check_together(r);
	/* what the TLS module takes for granted (tls.h, xd_tls_new) */
	XD_ASSERT(rc != 0 || (cfg->tls.cert == NULL) == (cfg->tls.key == NULL));
	free_strings(confd, nconfd);
	free(r->dir);
	free(r);
	return rc;
}

/* A string as a single-quoted YAML scalar ("[::]:1" would otherwise
 * read back as a list). */
static void print_quoted(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputc('\'', out);
		fputc(*s, out);
	}
	fputc('\'', out);
}

/*
 * state_dir when neither the file nor a flag set it: its value comes
 * from the environment systemd gives the service, so --check run by
 * hand (without it) would say "off" where the service saves. Says where
 * the value comes from instead, and, without one, what the shipped unit
 * gives; commented out then, so that the printout reads back as unset.
 */
static void print_state_dir_default(const struct xd_config *cfg,
				    const struct directive *d, FILE *out)
{
	if (cfg->state_dir != NULL) {
		fprintf(out, "%s: ", d->name);
		print_quoted(out, cfg->state_dir);
		fprintf(out, "    # %s (from $STATE_DIRECTORY, which systemd sets for the unit's StateDirectory=)\n",
			d->doc);
		return;
	}
	fprintf(out, "#%s:    # %s (unset: no $STATE_DIRECTORY here; under the shipped xdsd.service systemd sets it to %s, StateDirectory=xdsd, and the service saves there)\n",
		d->name, d->doc, XD_PATHS_UNIT_STATE_DIR);
}

static void print_directive(const struct xd_config *cfg,
			    const struct directive *d, FILE *out)
{
	const char *base = (const char *)cfg + d->offset;
	const char *indent = d->section == NULL		 ? "" :
			     strchr(d->section, '.') == NULL ? "  " :
							       "    ";
	char num[32];

	if (d->offset == OFF(state_dir) && !cfg->state_dir_given) {
		print_state_dir_default(cfg, d, out);
		return;
	}
	switch (d->type) {
	case T_ADDRESS:
	case T_PATH:
	case T_CRED_PATH:
	case T_STRING:
		if (*(char *const *)(const void *)base == NULL &&
		    d->zero_ok) {
			fprintf(out, "%s%s: off", indent, d->name);
			break;
		}
		if (*(char *const *)(const void *)base == NULL) {
			/* unset: shown, and read back as unset */
			fprintf(out, "%s#%s:    # %s (unset)\n", indent, d->name,
				d->doc);
			return;
		}
		fprintf(out, "%s%s: ", indent, d->name);
		print_quoted(out, *(char *const *)(const void *)base);
		break;
	case T_CHOICE: {
		int i = *(const int *)(const void *)base, n = 0;

		while (d->choices[n] != NULL)
			n++;
		XD_ASSERT_INFO(i >= 0 && i < n, "directive '%s'", d->name);
		fprintf(out, "%s%s: %s", indent, d->name, d->choices[i]);
		break;
	}
	case T_DURATION:
	case T_SIZE:
	case T_UINT:
		format_number(num, sizeof(num), d->type,
			      *(const uint64_t *)(const void *)base);
		fprintf(out, "%s%s: %s", indent, d->name, num);
		break;
	}
	fprintf(out, "    # %s\n", d->doc);
}

/* A list of strings (load_strings) as --check prints it. */
static void print_strings(FILE *out, const char *indent, const char *name,
			  const char *doc, char *const *list, size_t n)
{
	fprintf(out, "%s%s:%s    # %s\n", indent, name, n == 0 ? " []" : "",
		doc);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s  - ", indent);
		print_quoted(out, list[i]);
		fputc('\n', out);
	}
}

void xd_config_print(const struct xd_config *cfg, FILE *out)
{
	for (size_t i = 0; i < NDIRECTIVES; i++)
		if (directives[i].section == NULL)
			print_directive(cfg, &directives[i], out);
	for (size_t s = 0; sections[s] != NULL; s++) {
		const char *dot = strrchr(sections[s], '.');

		/* off unless given: printed only then, so that the printout
		 * reads back the same */
		if (strcmp(sections[s], "rollout") == 0 && !cfg->rollout.on) {
			fputs("#rollout:    # staged rollout of reloads, canaries first (unset: off)\n",
			      out);
			continue;
		}

		/* an inner section follows its parent's own lines */
		fprintf(out, "%s%s:\n", dot != NULL ? "  " : "",
			dot != NULL ? dot + 1 : sections[s]);
		for (size_t i = 0; i < NDIRECTIVES; i++)
			if (same_section(directives[i].section, sections[s]))
				print_directive(cfg, &directives[i], out);
		if (strcmp(sections[s], "etcd") == 0)
			print_strings(out, "  ", "endpoints",
				      "members of the etcd cluster (source: etcd)",
				      cfg->etcd.endpoints, cfg->etcd.nendpoints);
		if (strcmp(sections[s], "rollout") == 0)
			print_strings(out, "  ", "canary",
				      "canary node id globs (cluster:GLOB: node clusters)",
				      cfg->rollout.canary, cfg->rollout.ncanary);
	}
	fprintf(out, "authorize:%s    # who may claim which nodes (with mTLS)\n",
		cfg->nauthorize == 0 ? " []" : "");
	for (size_t i = 0; i < cfg->nauthorize; i++) {
		fputs("  - identity: ", out);
		print_quoted(out, cfg->authorize[i].identity);
		fputs("\n    node_id: ", out);
		print_quoted(out, cfg->authorize[i].node_id);
		fputs("\n    node_cluster: ", out);
		print_quoted(out, cfg->authorize[i].node_cluster);
		fputc('\n', out);
	}
	print_strings(out, "", "csds_allow",
		      "identities that may call CSDS from other hosts (with mTLS)",
		      cfg->csds_allow, cfg->ncsds_allow);
	print_strings(out, "", "admin_hosts",
		      "names the admin endpoint answers to, besides localhost and addresses",
		      cfg->admin_hosts, cfg->nadmin_hosts);
	print_strings(out, "", "dry_run_dirs",
		      "directories a dry run may read, besides the snapshot directory",
		      cfg->dry_run_dirs, cfg->ndry_run_dirs);
	print_strings(out, "", "trusted_proxies",
		      "balancers and proxies exempt from the per-address limits",
		      cfg->trusted_proxies, cfg->ntrusted_proxies);
}

void xd_config_warnings(const struct xd_config *cfg, struct xd_diag *out)
{
	if (cfg->source == XD_SOURCE_FILES && cfg->etcd_at != NULL)
		xd_diag_add(out, "%s: 'etcd' is ignored: 'source' is 'files', so snapshots are read from %s (set 'source: etcd' to read them from etcd)",
			    cfg->etcd_at, cfg->snapshots);
}

void xd_config_free(struct xd_config *cfg)
{
	free(cfg->etcd_at);
	free(cfg->listen);
	free(cfg->admin_listen);
	free(cfg->admin_advertise);
	free(cfg->rest_listen);
	free(cfg->snapshots);
	free(cfg->schema);
	free(cfg->state_dir);
	free(cfg->tls.cert);
	free(cfg->tls.key);
	free(cfg->tls.client_ca);
	free_strings(cfg->etcd.endpoints, cfg->etcd.nendpoints);
	free(cfg->etcd.prefix);
	free(cfg->etcd.tls.cert);
	free(cfg->etcd.tls.key);
	free(cfg->etcd.tls.ca);
	free_rules(cfg);
	free_strings(cfg->csds_allow, cfg->ncsds_allow);
	free_strings(cfg->admin_hosts, cfg->nadmin_hosts);
	free_strings(cfg->dry_run_dirs, cfg->ndry_run_dirs);
	free_strings(cfg->trusted_proxies, cfg->ntrusted_proxies);
	free(cfg->trusted_nets);
	free_strings(cfg->rollout.canary, cfg->rollout.ncanary);
	free_strings(cfg->files, cfg->nfiles);
	memset(cfg, 0, sizeof(*cfg));
}
