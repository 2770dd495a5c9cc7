/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A real etcd for a test (Debian's etcd-server): one member on
 * loopback, on free ports, its data in a fresh directory under the
 * test's temporary one, its output in a log beside it, over TLS with
 * client certificates when asked (tests/lib/make-certs.sh); and etcdctl
 * against it to put and read keys. Stopped with SIGKILL, as an outage
 * would stop it, and run again on the same data and ports.
 */
#ifndef XD_TESTS_ETCD_H
#define XD_TESTS_ETCD_H

#include <stdbool.h>
#include <sys/types.h>

struct xdt_etcd {
	pid_t pid; /* 0: not running */
	int client_port, peer_port;
	char *data, *log;
	char endpoint[64]; /* "127.0.0.1:<client port>" */
	bool tls; /* https, client certificates required (tests/lib/make-certs.sh) */
};

/* A port nothing listens on now (the kernel's pick, released). */
int xdt_free_port(void);

/* Chooses ports and a data directory; runs nothing yet. */
struct xdt_etcd *xdt_etcd_new(void);

/* Starts (or restarts, on its data) etcd on its ports; waits until it
 * answers (bails out if it does not). */
void xdt_etcd_run(struct xdt_etcd *e);

/* SIGKILL, and waits for it; nothing if it is not running. */
void xdt_etcd_kill(struct xdt_etcd *e);

/* Kills it, removes its data and frees `e`. */
void xdt_etcd_free(struct xdt_etcd *e);

/* Runs etcdctl (API 3) on `e` with `args` (a shell word list) and
 * `input` on stdin (NULL: none); returns its wait status. */
int xdt_etcdctl(const struct xdt_etcd *e, const char *args, const char *input);

/* Puts `text` at `key`, or the test fails. */
void xdt_etcd_put(const struct xdt_etcd *e, const char *key, const char *text);

/* The value at `key` (malloc'd), or NULL when etcd has none. */
char *xdt_etcd_get(const struct xdt_etcd *e, const char *key);

/* How many keys etcd has under `prefix`. */
int xdt_etcd_count(const struct xdt_etcd *e, const char *prefix);

/* etcd's revision now. */
long long xdt_etcd_revision(const struct xdt_etcd *e);

/* The mod revision of `key`: the revision of the change that put it. */
long long xdt_etcd_mod_revision(const struct xdt_etcd *e, const char *key);

#endif
