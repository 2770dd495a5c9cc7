/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading the snapshot directory (docs/design.md §3, xdsd(8) SNAPSHOTS).
 *
 *   DIR/<key>.yaml (or .yml, .json)   the snapshot of <key>
 *   DIR/<key>/NAME.yaml (.yml, .json) files merged into the snapshot of <key>
 *
 * Each file is a mapping of sections (clusters, endpoints, listeners,
 * routes, scoped_routes, virtual_hosts, secrets, runtimes,
 * extension_configs, and the list collections listener_collections and
 * cluster_collections, rule X3) to lists of resources in Envoy's own
 * YAML. A resource is named by its `name` (`cluster_name` for
 * endpoints). Checked: the schema (every field, type and value),
 * duplicate names, and references: an EDS cluster needs its endpoints, a
 * listener using RDS its route configuration, a listener's filter using
 * ECDS its extension config, a route its
 * clusters, a scoped route its route configuration, a VHDS virtual host
 * (named "<route configuration>/<name>") its route configuration, a
 * listener or cluster whose TLS context asks for a secret over ADS
 * that secret (resource.h), a list collection its members and what its inline members refer to
 * (collection.h). A directory without any snapshot file is an error too. A load succeeds
 * whole or yields nothing. A resource's "@allow" restricts it to the
 * identities its globs match, and a secret without one is restricted to
 * clients with a certificate (table.h, xd_table_builder_restrict).
 *
 * Tables equal in content and restrictions to the previous snapshot's of
 * the same key are reused, so a reload changes only what changed.
 *
 * Each file is parsed and encoded on its own and the key's tables are
 * merged from the files' (parsed.h); with a cache, a file whose path and
 * bytes are those of a file of the previous load is not parsed again,
 * nor read when stat finds it unchanged (files.h), and a table made of the same files' tables as the previous
 * snapshot's is that table: a reload costs what changed, and gives the
 * versions, errors and open secrets a load without the cache gives.
 *
 * A large YAML file is parsed in pieces on one thread per core (the
 * transcoder cuts it where that is safe); resources are still named,
 * checked and added in file order, so errors and "first defined at" are
 * those of a serial load.
 *
 * Thread: xd_load_dir runs on any thread (the daemon runs it on libuv's
 * thread pool) and starts its own workers; the schema is shared
 * read-only.
 */
#ifndef XD_SNAPSHOT_LOADER_H
#define XD_SNAPSHOT_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include "config/config.h"
#include "schema/schema.h"
#include "snapshot/snapshot.h"
#include "snapshot/files.h"
#include "snapshot/parsed.h"
#include "util/diag.h"

/*
 * A secret written without "@allow": served to every client of its
 * snapshot with a verified certificate, whatever identity it names, if
 * any (loader.c, restrict_access). Not an error, but rarely what a
 * secret holding a private key is meant for: `xdsd --check` and
 * `xdsctl push` warn of each (xd_load_warn_open).
 */
struct xd_open_secret {
	char *where; /* "file:line:column: secrets[0]" ("file: ..." for JSON) */
	char *name;
	char *key;   /* its snapshot's */
};

struct xd_load {
	int rc;                      /* 0, or -1 with errors in diag */
	struct xd_snapshot **snaps;  /* one per key, sorted by key */
	size_t nsnaps;
	struct xd_diag diag;
	/* In file order; at most XD_DIAG_MAX kept, the rest counted. */
	struct xd_open_secret *open;
	size_t nopen, open_dropped;
	size_t files, bytes;
	size_t read;   /* files read; the others found unchanged by stat */
	size_t parsed; /* files parsed; the others came from the cache */
	double seconds;
	/* The files a good load was made of, kept so the reloader can save
	 * them as the last good state (reload/laststate.h); freed by
	 * xd_load_free unless taken (NULL after a failed load). */
	struct xd_snapkey *keys;
	size_t nkeys;
};

/*
 * Loads every snapshot in `dir`. `prev` (may be NULL) are the snapshots
 * currently served, sorted by key (as xd_cache_snapshots gives them),
 * whose equal tables are reused; each key's is found by a binary
 * search. Always fills `out`;
 * free it with xd_load_free.
 */
void xd_load_dir(const struct xd_schema *schema, const char *dir,
		 struct xd_snapshot *const *prev, size_t nprev,
		 struct xd_load *out);

/*
 * xd_load_dir reusing the files `cache` (may be NULL) holds from the
 * previous load, and leaving this load's there (parsed.h). The caller
 * owns the cache and gives it to one load at a time.
 */
void xd_load_dir_cached(const struct xd_schema *schema, const char *dir,
			struct xd_snapshot *const *prev, size_t nprev,
			struct xd_parsed_cache *cache, struct xd_load *out);

/*
 * The reading part of xd_load_dir_cached: lists `dir` and reads its
 * files (those `cache`, may be NULL, knows unchanged are not read
 * again), into `*keys`, `*nkeys`, as xd_snapdir_read. A directory
 * without a snapshot file is an error. 0, or -1 with what went wrong
 * added to `diag`.
 */
int xd_load_read_dir(const char *dir, struct xd_parsed_cache *cache,
		     struct xd_snapkey **keys, size_t *nkeys,
		     struct xd_diag *diag);

/*
 * Loads snapshots read from elsewhere than a directory (the etcd
 * source): `keys` as xd_snapdir_read returns them, taken over and freed;
 * their files' paths name them in errors. `read_errors` are what went
 * wrong reading them, moved into out->diag: any fails the load. Fills
 * `out` as xd_load_dir does.
 */
void xd_load_keys(const struct xd_schema *schema, struct xd_snapkey *keys,
		  size_t nkeys, struct xd_diag *read_errors,
		  struct xd_snapshot *const *prev, size_t nprev,
		  struct xd_load *out);

/* xd_load_keys with a cache, as xd_load_dir_cached. */
void xd_load_keys_cached(const struct xd_schema *schema,
			 struct xd_snapkey *keys, size_t nkeys,
			 struct xd_diag *read_errors,
			 struct xd_snapshot *const *prev, size_t nprev,
			 struct xd_parsed_cache *cache, struct xd_load *out);

/* Who may fetch a secret without "@allow", as the configuration has it
 * (loader.c, restrict_access): a client gets the snapshot of the node it
 * claims; authorize rules, when there are any, bound which nodes a
 * certificate may claim. */
enum xd_open_reach {
	XD_OPEN_NOBODY,    /* no tls.client_ca: no client has a certificate */
	XD_OPEN_ANY_NODE,  /* tls.client_ca, no authorize rules */
	XD_OPEN_KEY_NODES, /* tls.client_ca and authorize rules */
	XD_OPEN_UNKNOWN,   /* the daemon's configuration is not known */
};

/* Who may fetch a secret without "@allow" under `cfg`. */
enum xd_open_reach xd_open_reach_of(const struct xd_config *cfg);

/* A warning on `out` for each secret without "@allow" the load found,
 * saying who may fetch it. */
void xd_load_warn_open(const struct xd_load *l, enum xd_open_reach reach,
		       FILE *out);

/* The snapshot of `key` among `snaps` (sorted by key: a load's, or
 * xd_cache_snapshots'), or NULL; a binary search, so that finding every
 * key's costs keys x log keys. */
struct xd_snapshot *xd_load_find(struct xd_snapshot *const *snaps, size_t n,
				 const char *key);

/* Takes the snapshots out of a load (the caller owns the references). */
struct xd_snapshot **xd_load_take(struct xd_load *l, size_t *n);

void xd_load_free(struct xd_load *l);

#endif
