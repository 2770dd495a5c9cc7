/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl: a command-line client of xdsd's admin endpoint (xdsctl(1)),
 * and of the etcd cluster xdsd replicas read their snapshots from.
 *
 * main.c reads the command line; call.c asks the endpoint; one file per
 * command renders its answer (status.c, clients.c, loads.c, dump.c,
 * reload.c, diff.c, rollout.c); show.c holds what they share to print for a
 * terminal. push.c writes a snapshot directory to etcd, over gRPC;
 * local.c checks snapshots on this machine for push and diff. fleet.c
 * lists the replicas; members.c asks each of them, for --fleet.
 *
 * Every command returns an exit status from enum xc_exit, having said
 * on stderr what went wrong. Single-threaded, one request per command.
 */
#ifndef XD_XDSCTL_CTL_H
#define XD_XDSCTL_CTL_H

#include <stdbool.h>

/* The exit statuses, as xdsctl(1) documents them. */
enum xc_exit {
	XC_OK = 0,
	XC_FAILED = 1,      /* xdsd refused: reload refused, no such snapshot */
	XC_USAGE = 2,       /* the command line is wrong */
	XC_UNREACHABLE = 3, /* no answer, or one that is not xdsd's */
	/* diff, as diff(1): 1 something would change, 2 the reload
	 * would be refused */
	XC_DIFFERS = 1,
	/* status: xdsd serves, but its source or state needs an
	 * operator (a refused reload, etcd not watched...): a balancer
	 * keeps it */
	XC_DEGRADED = 1,
	/* status: xdsd serves nothing (starting, or stopping): a
	 * balancer takes it out */
	XC_NOT_SERVING = 4,
};

struct xc_opts {
	const char *admin; /* host:port, [v6]:port or unix:/path (checked) */
	int timeout_ms;
	bool json;   /* print the endpoint's JSON as it came */
	bool nacked; /* clients: only the NACKed streams */
	/* clients: only streams whose response waited this long for its
	 * answer, as the duration given ("0" for --pending alone); NULL:
	 * every stream */
	const char *pending;
	/* xdsd.yaml (-c): push reads the etcd settings and schema from
	 * it, under what the command line sets; the other commands ask
	 * its admin_listen. NULL: not given */
	const char *config;
	const char *etcd;   /* endpoints, comma-separated */
	const char *prefix;
	const char *cacert, *cert, *key;
	const char *schema;
	const char *snapshots; /* diff: another directory; NULL: xdsd's */
	/* push, diff: the Envoy binary whose verdict the snapshots need
	 * too (envoy/verdict.h); NULL: none asked */
	const char *envoy;
	bool verbose;          /* diff: resources' text and node ids */
	bool now;     /* push: every node at once, no rollout's bake */
	bool dry_run; /* push: what it would change, writing nothing */
	/* clients, status, diff, rollout status: every replica's answer
	 * (members.h) */
	bool fleet;
};

/* The commands: `args` are the words after the command's name. */
int xc_status(const struct xc_opts *o, int argc, char **args);
int xc_clients(const struct xc_opts *o, int argc, char **args);
int xc_loads(const struct xc_opts *o, int argc, char **args);
int xc_dump(const struct xc_opts *o, int argc, char **args);
int xc_reload(const struct xc_opts *o, int argc, char **args);
int xc_rollout(const struct xc_opts *o, int argc, char **args);
int xc_push(const struct xc_opts *o, int argc, char **args);
int xc_diff(const struct xc_opts *o, int argc, char **args);
int xc_fleet(const struct xc_opts *o, int argc, char **args);

/* A dry run's answer (a reload record with its diff and reach, as
 * POST /reload?dry_run=1 gives it), for people: diff.c's, shared with
 * push --dry-run. Returns the exit status, as diff(1)'s. */
#include <jansson.h>
int xc_diff_show(json_t *rec, bool verbose);

/* "xdsctl: " + the message + newline, on stderr. */
void xc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error: says what, points at --help; returns XC_USAGE. */
int xc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
