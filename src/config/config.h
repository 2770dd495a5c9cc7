/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's configuration file (xdsd.yaml, see xdsd.yaml(5)).
 *
 * One table of directives (name, type, default, bounds, description)
 * drives parsing, the command-line overrides, `xdsd --check` output and
 * the man page's list. The file is a YAML mapping of directives; a few
 * are grouped in a section (`tls:` holds cert, key and client_ca;
 * `etcd:` holds the etcd snapshot source's settings and its own `tls:`),
 * `authorize:` is a list of rules, `csds_allow:` a list of globs,
 * `admin_hosts:` one of host names, `dry_run_dirs:` one of directories
 * and `trusted_proxies:` one of addresses and prefixes.
 * Unknown keys, duplicate keys, bad values and settings that do not fit
 * together are errors reported as "file:line:column: message", all of
 * them, not just the first.
 *
 * After the file come the files conf.d/NAME.yaml of its directory, in
 * byte order of their names (at most XD_CONFIG_MAX_CONFD): each sets
 * what it names over what the files before it set, a setting of a
 * section alone (tls.key), a list whole (authorize:, csds_allow: ...).
 * Within one file a key set twice stays an error; settings that go
 * together are checked once all are read, as one may come from a file
 * and its partner from another. Packages and sites drop their own
 * settings there and leave xdsd.yaml alone.
 *
 * Ownership: struct xd_config owns its strings; xd_config_free releases
 * them. Thread: any (start-up and --check run it on the main thread).
 */
#ifndef XD_CONFIG_CONFIG_H
#define XD_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/address.h"
#include "util/diag.h"
#include "util/log.h"

/* Which field of a node selects its snapshot. */
enum xd_node_key {
	XD_NODE_KEY_CLUSTER, /* the node's `cluster` */
	XD_NODE_KEY_ID,      /* the node's `id` */
};

/* Where snapshots come from (`source:`). */
enum xd_source {
	XD_SOURCE_FILES, /* the `snapshots` directory */
	XD_SOURCE_ETCD,  /* the keys under `etcd.prefix` in etcd */
};

/* What proves a change in a staged rollout (`rollout.require_canary`). */
enum xd_require_canary {
	XD_REQUIRE_PER_KEY, /* a canary ACKed each snapshot key it changes */
	XD_REQUIRE_ANY,     /* some canary ACKed it */
	XD_REQUIRE_NONE,    /* the bake alone */
};

/* A canary past `rollout.canary_timeout` (`rollout.on_canary_timeout`). */
enum xd_canary_timeout_policy {
	XD_CANARY_TIMEOUT_SKIP, /* left out: the rollout goes on */
	XD_CANARY_TIMEOUT_FAIL, /* the rollout fails */
};

/* Who may speak for which nodes (`authorize:`): a client whose identity
 * matches `identity` may claim a node whose id and cluster match
 * `node_id` and `node_cluster`. All three are globs (fnmatch(3), where
 * `*` also matches `/`). */
struct xd_authz_rule {
	char *identity;
	char *node_id;
	char *node_cluster;
};

/* conf.d files read at most: a site's few, not a directory of data. */
#define XD_CONFIG_MAX_CONFD 256

struct xd_config {
	/* the files read, in order: the configuration file, then its
	 * conf.d/NAME.yaml */
	char **files;
	size_t nfiles;

	char *listen;    /* "host:port", "[v6]:port" or "unix:/path" */
	char *snapshots; /* snapshot directory, absolute or cwd-relative */
	char *schema;    /* Envoy API descriptor set (xds-api.pb) */
	/* where the last good state is kept (reload/laststate.h); NULL:
	 * nowhere, a start with broken snapshots is refused */
	char *state_dir;
	/* whether the file or a flag set state_dir (a path or off); if
	 * not, it is systemd's $STATE_DIRECTORY, or unset without one */
	bool state_dir_given;
	enum xd_log_level log_level;
	enum xd_log_format log_format;
	enum xd_node_key node_key;

	/* The snapshot source, and the etcd cluster it names when it is
	 * XD_SOURCE_ETCD: its members (host:port, tried in turn), the key
	 * prefix that mirrors the snapshot directory, how long a connection
	 * attempt may take, the TTL of the replica's lease (etcd/lease.h),
	 * and TLS towards etcd (all NULL: plaintext; ca alone:
	 * server-authenticated only). */
	enum xd_source source;
	struct {
		char **endpoints;
		size_t nendpoints;
		char *prefix;
		uint64_t dial_timeout_ms;
		uint64_t lease_ttl_ms;
		struct {
			char *cert; /* client certificate chain, PEM */
			char *key;  /* its private key, PEM */
			char *ca;   /* CA certificates etcd is signed by, PEM */
		} tls;
	} etcd;
	/* where the file's `etcd:` section is, "file:line:column", or
	 * NULL: with `source: files` it is ignored, which
	 * xd_config_warnings says */
	char *etcd_at;

	/* Automatic reload: 1 when on (the index of "true" in the
	 * directive's words), after watch_delay_ms without a change. */
	int watch;
	uint64_t watch_delay_ms;
	/* and at most watch_delay_max_ms after the first change waiting,
	 * however often changes come (util/debounce.h); the etcd source
	 * waits the same */
	uint64_t watch_delay_max_ms;

	/* the admin HTTP endpoint: an address as `listen`, or "off" */
	char *admin_listen;
	/* where the other replicas and `xdsctl --fleet` reach it (the
	 * fleet's registrations, rollout/fleet.h); NULL: admin_listen's
	 * host (the host name for a wildcard) and bound port */
	char *admin_advertise;

	/* REST-JSON xDS over HTTP (docs/protocol.md, rule R1): an address,
	 * or "off" (the default); and how long a poll for a version the
	 * client already holds is held before it is answered. */
	char *rest_listen;
	uint64_t rest_poll_timeout_ms;

	/* Both HTTP endpoints (http.h): how long a request head may take,
	 * and how many connections one client address may hold (0: no
	 * limit but the endpoint's total). */
	uint64_t http_header_timeout_ms;
	uint64_t admin_max_connections_per_address;
	uint64_t rest_max_connections_per_address;
	/* Host names the admin endpoint answers to besides localhost and
	 * IP addresses (a defence against DNS rebinding). */
	char **admin_hosts;
	size_t nadmin_hosts;
	/* Directories (absolute) at or below which a dry run may read
	 * snapshots besides the snapshot directory itself (admin/preview.h):
	 * what xdsd can read, a local user could otherwise read through
	 * its errors. */
	char **dry_run_dirs;
	size_t ndry_run_dirs;

	/* gRPC transport, all in milliseconds or bytes. 0 = off. */
	uint64_t keepalive_time_ms;
	uint64_t keepalive_timeout_ms;
	uint64_t min_client_ping_interval_ms;
	uint64_t max_connection_age_ms;
	uint64_t max_connection_age_grace_ms;
	uint64_t handshake_timeout_ms;
	/* threads in gRPC's completion queue (transport/bridge.h); 0: one
	 * per CPU core */
	uint64_t io_threads;
	/* how late the kernel may end the timed sleeps of gRPC's threads
	 * (transport/slack.h); 0: the kernel's default */
	uint64_t grpc_timer_slack_ms;
	uint64_t max_streams_per_connection;
	uint64_t max_request_size;
	/* A connection's first read buffer (0: gRPC's own reads). */
	uint64_t read_chunk_size;

	/* What one peer may make xdsd hold or do (0: no limit where the
	 * directive allows it). */
	uint64_t max_connections_per_address;
	uint64_t max_connection_idle_ms;
	/* Connections without a stream (transport/conns.h). */
	uint64_t max_idle_connections;
	uint64_t max_idle_connections_per_address;
	uint64_t first_stream_timeout_ms;
	uint64_t fd_reserve;
	/* a response unanswered this long is warned of (0: never) */
	uint64_t ack_timeout_ms;
	uint64_t max_names_per_stream;
	uint64_t max_requests_per_second;
	uint64_t max_request_burst;
	uint64_t max_node_size;
	uint64_t max_node_id_size;
	/* Client status (CSDS) answers being built or sent at once, and
	 * the bytes they may hold together (admin/csds_service.h). */
	uint64_t csds_max_answers;
	uint64_t csds_max_memory;

	/* TLS on the xDS listener: all NULL for plaintext. With client_ca,
	 * clients must present a certificate it signed (mTLS). */
	struct {
		char *cert;      /* certificate chain, PEM */
		char *key;       /* its private key, PEM */
		char *client_ca; /* CA certificates for clients, PEM */
		uint64_t frame_size; /* largest TLS record sealed, bytes */
	} tls;

	/* With mTLS: who may claim which nodes. None: every authenticated
	 * client may claim any node. */
	struct xd_authz_rule *authorize;
	size_t nauthorize;

	/* With mTLS: the identities (globs, as in `authorize:`) that may
	 * call the client status service (CSDS) from another host. None:
	 * only peers on loopback or the unix socket may. */
	char **csds_allow;
	size_t ncsds_allow;

	/* Balancers and proxies whose connections no per-address limit
	 * counts (every client behind one shares its address): as written,
	 * and parsed, `ntrusted_proxies` of each. */
	char **trusted_proxies;
	size_t ntrusted_proxies;
	struct xd_cidr *trusted_nets;

	/* Staged rollout of reloads (`rollout:`; off unless the section is
	 * given): the canaries are the nodes whose id matches one of
	 * `canary` (or whose cluster does, for a glob written
	 * "cluster:GLOB"), and `percent` of every other node by a stable
	 * hash of its id (protocol/client.h). A change reaches them first
	 * and everyone else after `bake_ms` with at most `max_nacks`
	 * NACKs from them (rollout/rollout.h). */
	struct {
		bool on;
		char **canary;
		size_t ncanary;
		uint64_t percent;
		uint64_t bake_ms;
		uint64_t max_nacks;
		/* not proven this long after it started, a rollout fails;
		 * 0: never */
		uint64_t timeout_ms;
		int require_canary;    /* enum xd_require_canary */
		uint64_t canary_timeout_ms; /* 0: never */
		int on_canary_timeout; /* enum xd_canary_timeout_policy */
	} rollout;

	/* The load reporting service (`load_reports:`, docs/protocol.md
	 * rules M1, M2; loads/store.h): how often clients are asked to
	 * report, how long reports are kept and summed over (at least
	 * twice that: the store takes twice the interval for a shorter
	 * one), the (cluster, locality, node) triples kept and the
	 * (cluster, locality) pairs /metrics shows one by one. */
	struct {
		uint64_t interval_ms;
		uint64_t window_ms;
		uint64_t max_entries;
		uint64_t max_series;
	} load_reports;
};

/* Whether the admin endpoint is on (admin_listen is not "off"). */
static inline bool xd_config_admin_on(const struct xd_config *cfg)
{
	return cfg->admin_listen != NULL && strcmp(cfg->admin_listen, "off") != 0;
}

/* Whether REST-JSON is served (rest_listen is not "off"). */
static inline bool xd_config_rest_on(const struct xd_config *cfg)
{
	return cfg->rest_listen != NULL && strcmp(cfg->rest_listen, "off") != 0;
}

/*
 * Sets every directive to its default. `snapshots` and `schema` default
 * to the given paths (see paths.h), which are copied.
 */
void xd_config_init(struct xd_config *cfg, const char *snapshots,
		    const char *schema);

/*
 * Reads `path`, then the conf.d/NAME.yaml files beside it (none when
 * there is no conf.d), over the current values, and lists them in
 * cfg->files. Relative paths in any of them are taken relative to the
 * directory of `path`. Returns 0, or -1 with every problem added to
 * `diag` (then `cfg` may be partly updated; the caller throws it away).
 */
int xd_config_load(struct xd_config *cfg, const char *path,
		   struct xd_diag *diag);

/*
 * Sets one directive from a string, as a command-line flag does.
 * `origin` names the source in messages (e.g. "--listen"). Relative
 * paths stay relative to the working directory. Returns 0 or -1.
 */
int xd_config_set(struct xd_config *cfg, const char *key, const char *value,
		  const char *origin, struct xd_diag *diag);

/*
 * What is valid but most likely not what was meant, each a message
 * "file:line:column: ..." added to `out`: an `etcd:` section while
 * `source: files` (nothing reads it). xdsd logs them at start and
 * --check prints them.
 */
void xd_config_warnings(const struct xd_config *cfg, struct xd_diag *out);

/* Writes the effective configuration as YAML, one directive a line. */
void xd_config_print(const struct xd_config *cfg, FILE *out);

void xd_config_free(struct xd_config *cfg);

#endif
