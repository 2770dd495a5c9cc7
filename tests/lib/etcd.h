/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A real etcd (Debian's etcd-server) for a test: started on loopback on
 * free ports in a temporary data directory, over TLS with client
 * certificates when asked (tests/lib/make-certs.sh), killed and started
 * again on the same data, and etcdctl to put and read keys.
 */
#ifndef XD_TESTS_ETCD_H
#define XD_TESTS_ETCD_H

#include <stdbool.h>
#include <sys/types.h>

struct xdt_etcd {
	pid_t pid;
	int client_port, peer_port;
	char *data, *log;
	char endpoint[64];
	bool tls; /* https, client certificates required (tests/lib/make-certs.sh) */
};

/* A port nothing listens on now (the kernel's pick, released). */
int xdt_free_port(void);

/* A new etcd's ports and data directory; not started. */
struct xdt_etcd *xdt_etcd_new(void);

/* Starts (or restarts, on its data) etcd on its ports; waits until it
 * answers. */
void xdt_etcd_run(struct xdt_etcd *e);

/* SIGKILL, and waits for it (nothing when not running). */
void xdt_etcd_kill(struct xdt_etcd *e);

/* Kills it and removes its data. */
void xdt_etcd_free(struct xdt_etcd *e);

/* Runs etcdctl with `args` (a shell word list) and `input` on stdin;
 * returns its exit status. */
int xdt_etcdctl(const struct xdt_etcd *e, const char *args, const char *input);

/* Puts `text` at `key`, or the test fails. */
void xdt_etcd_put(const struct xdt_etcd *e, const char *key, const char *text);

/* The value at `key` (malloc'd), or NULL when etcd has none. */
char *xdt_etcd_get(const struct xdt_etcd *e, const char *key);

/* etcd's revision now. */
long long xdt_etcd_revision(const struct xdt_etcd *e);

/* The mod revision of `key`: the revision of the change that put it. */
long long xdt_etcd_mod_revision(const struct xdt_etcd *e, const char *key);

#endif
