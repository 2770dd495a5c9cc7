/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS for the xDS listener: the server's certificate chain and private
 * key, and the CA certificates that client certificates must be signed
 * by (mTLS) (xdsd.yaml(5): `tls:`).
 *
 * The files are read and checked with OpenSSL before gRPC is given them:
 * each is a regular file (a FIFO put in a file's place is refused, not
 * opened: that would block the loop), each PEM parses, the key belongs
 * to the first (leaf) certificate, the leaf is within its validity
 * period, and the client CA file holds at least one certificate. Each
 * problem is reported with the file and the reason, so that a bad file
 * is refused up front rather than failing every handshake later. A file
 * xdsd may not read says how to let it under systemd (the group xdsd),
 * or to hand it over (a credential: LoadCredential=).
 *
 * The certificate in use and the client CA that expires first are
 * known with their expiry, for /metrics, /status and the warnings at
 * start and at each reload (XD_TLS_EXPIRY_WARN_DAYS before, and an
 * error once the certificate in use has expired: reloading the same,
 * expired, file is refused, and the expired one stays in use).
 *
 * A reload (reload/reload.h: SIGHUP, POST /reload, the watch) reads
 * the same files again in two steps, so that certificates and snapshots
 * go into use together or not at all: xd_tls_read checks them beside
 * the snapshots, off the loop, and xd_tls_use puts them in use once the
 * whole reload is good (xd_tls_next_free throws them away otherwise).
 * Certificate and key are read again together and go in use only as a
 * pair: a key that is not the certificate's (a new pair put in place
 * one file at a time, read in between; a new certificate beside
 * systemd's start-time copy of the old key) is refused, naming the
 * files as xdsd.yaml does (${CREDENTIALS_DIRECTORY}/...) and saying
 * what to do, and the pair in use keeps serving.
 * From then on every handshake uses them; established connections keep
 * what they were set up with, so no stream is dropped. gRPC asks for
 * the current certificates at each new handshake, from its own threads
 * (the server certificate config callback), so the PEM text is kept
 * under a mutex with a generation number that says when it changed.
 *
 * Ownership: the caller owns the xd_tls and must keep it until the
 * gRPC server that uses its credentials is destroyed. Thread: new, use,
 * credentials and free on one thread (the loop's); read on any (it
 * reads only the paths, which never change); the callback runs on
 * gRPC's.
 */
#ifndef XD_TRANSPORT_TLS_H
#define XD_TRANSPORT_TLS_H

#include <grpc/grpc_security.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "util/diag.h"

struct xd_tls;

/* Reads and checks cfg->tls's files. NULL, with each problem in `diag`,
 * when one is bad. cfg->tls.cert must be set. */
struct xd_tls *xd_tls_new(const struct xd_config *cfg, struct xd_diag *diag);

/* Certificates read and checked again, not yet in use. */
struct xd_tls_next;

/* Reads and checks the files again, leaving those in use alone: NULL,
 * with each problem in `diag`, when one is bad. Any thread. */
struct xd_tls_next *xd_tls_read(const struct xd_tls *t, struct xd_diag *diag);

/* Puts `next` (taken) in use: every handshake from now on gets it. */
void xd_tls_use(struct xd_tls *t, struct xd_tls_next *next);

/* Throws away certificates read but not put in use (NULL: nothing). */
void xd_tls_next_free(struct xd_tls_next *next);

/* Server credentials that ask `t` for the certificates at every
 * handshake (a new reference for grpc_server_add_http2_port). */
grpc_server_credentials *xd_tls_credentials(struct xd_tls *t);

/* Whether clients must present a certificate (tls.client_ca is set). */
bool xd_tls_mutual(const struct xd_tls *t);

/* One line for the log: the leaf certificate's subject and expiry. */
const char *xd_tls_describe(const struct xd_tls *t);

/* How long before the server certificate expires xdsd starts warning. */
#define XD_TLS_EXPIRY_WARN_DAYS 14

/* A certificate of the files in use: its file (NULL: no such file),
 * subject and end of validity. Strings belong to `t`, valid until its
 * next reload. */
struct xd_tls_expiry {
	const char *path;
	const char *subject;
	int64_t not_after; /* Unix seconds */
};

/* The server certificate, and the client CA that expires first (path
 * NULL without tls.client_ca). */
void xd_tls_expiry(const struct xd_tls *t, struct xd_tls_expiry *cert,
		   struct xd_tls_expiry *ca);

/* Logs a warning when the certificate in use expires within
 * XD_TLS_EXPIRY_WARN_DAYS of `now_s`, an error once it has expired; a
 * warning for a client CA that expires as soon or has expired. */
void xd_tls_warn_expiry(const struct xd_tls *t, int64_t now_s);

/*
 * A PEM file read whole as the listener's are (a regular file, at most
 * the same size, no NUL byte), for another TLS user (the etcd client):
 * `what` and `directive` name it in messages. Returns the text, or NULL
 * with the reason in `diag`.
 */
char *xd_tls_read_pem(const char *path, const char *what,
		      const char *directive, struct xd_diag *diag);

void xd_tls_free(struct xd_tls *t);

#endif
