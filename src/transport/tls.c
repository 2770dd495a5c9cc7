/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/tls.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/expand.h"
#include "util/file.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/text.h"
#include "util/xalloc.h"

/* PEM files are a few kilobytes; a CA bundle a few hundred. */
#define PEM_MAX_BYTES (4u << 20)

/* The PEM text of one generation of certificates, and what the log,
 * /metrics and /status tell of it. */
struct pems {
	char *cert, *key, *client_ca; /* client_ca NULL: no mTLS */
	char describe[256];
	char cert_subject[160], ca_subject[160];
	int64_t cert_not_after, ca_not_after; /* Unix s; ca: the earliest */
};

struct xd_tls {
	char *cert_path, *key_path, *ca_path;
	bool mutual;

	/* gRPC's threads read these at every handshake */
	pthread_mutex_t lock;
	struct pems now;
	unsigned generation; /* of `now`, from 1 */
	unsigned handed;     /* the generation gRPC has; 0: none yet */
};

/* One of the three files: what messages call it, the directive that
 * names it, and the credential name suggested for it under systemd. */
struct tls_file {
	const char *path, *what, *directive, *credential;
};

static void pems_free(struct pems *p)
{
	free(p->cert);
	if (p->key != NULL) {
		/* a private key: not left in freed memory */
		memset(p->key, 0, strlen(p->key));
		free(p->key);
	}
	free(p->client_ca);
	memset(p, 0, sizeof(*p));
}

/*
 * What to do about a file xdsd may not read: the shipped unit runs xdsd
 * as the system user xdsd, which cannot read a key only root may read
 * (systemd/xdsd.service.in).
 */
static void unreadable_hint(const struct tls_file *f, struct xd_diag *diag)
{
	xd_diag_add(diag,
		    "%s: under systemd (User=xdsd), let the group xdsd read the file (chgrp xdsd; chmod 0640), "
		    "or hand it over as a credential: LoadCredential=%s:%s in the unit, and "
		    "tls.%s: ${CREDENTIALS_DIRECTORY}/%s in xdsd.yaml (xdsd.yaml(5), \"TLS files\")",
		    f->path, f->credential, f->path, f->directive, f->credential);
}

/* The whole file as a NUL-terminated string, or NULL (reported); read
 * as every file xdsd is given is (util/file.h): a FIFO put in its place
 * is refused, not opened. */
static char *read_pem(const struct tls_file *f, struct xd_diag *diag)
{
	struct xd_file file;
	int err;

	if (xd_file_read(f->path, f->what, PEM_MAX_BYTES, &file, &err,
			 diag) != 0) {
		if (err == EACCES || err == EPERM)
			unreadable_hint(f, diag);
		return NULL;
	}
	if (memchr(file.text, '\0', file.len) != NULL) {
		xd_diag_add(diag, "%s: the %s holds a NUL byte: not PEM text",
			    f->path, f->what);
		xd_file_free(&file, true);
		return NULL;
	}
	return file.text;
}

char *xd_tls_read_pem(const char *path, const char *what,
		      const char *directive, struct xd_diag *diag)
{
	const char *slash = strrchr(directive, '.');
	struct tls_file f = {path, what,
			     slash != NULL ? slash + 1 : directive, directive};

	return read_pem(&f, diag);
}

/* OpenSSL's reason for the last failure, for a message. */
static const char *ssl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (e == 0)
		return "no PEM data";
	ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

/* Every certificate in `pem`; their number in *n (0: none, reported). */
static STACK_OF(X509) *certs_of(const char *pem, const char *path,
				const char *what, struct xd_diag *diag)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	STACK_OF(X509) *certs = sk_X509_new_null();
	X509 *x;
	char why[256];

	if (bio == NULL || certs == NULL)
		xd_out_of_memory(strlen(pem));
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
		sk_X509_push(certs, x);
	/* the loop ends at the end of the data, or at something that is
	 * not a certificate */
	if (ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE &&
	    sk_X509_num(certs) > 0)
		ERR_clear_error();
	if (sk_X509_num(certs) == 0 || ERR_peek_last_error() != 0) {
		xd_diag_add(diag, "%s: not a PEM %s: %s", path, what,
			    ssl_reason(why, sizeof(why)));
		sk_X509_pop_free(certs, X509_free);
		certs = NULL;
	}
	BIO_free(bio);
	return certs;
}

/* "Nov 23 20:58:01 2027 GMT" */
static void asn1_time(const ASN1_TIME *t, char *buf, size_t len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	int n;

	if (bio == NULL)
		xd_out_of_memory(len);
	ASN1_TIME_print(bio, t);
	n = BIO_read(bio, buf, (int)len - 1);
	buf[n > 0 ? n : 0] = '\0';
	BIO_free(bio);
}

/* `t` as Unix seconds (0 if OpenSSL cannot read it). */
static int64_t asn1_unix(const ASN1_TIME *t)
{
	struct tm tm;

	if (ASN1_TIME_to_tm(t, &tm) != 1)
		return 0;
	return (int64_t)timegm(&tm);
}

/* `path` as xdsd.yaml names it: systemd's copy of a credential by
 * ${CREDENTIALS_DIRECTORY}, the name the operator wrote, with where it
 * is. */
static void as_configured(char *buf, size_t len, const char *path)
{
	const char *cred = xd_expand_credential(path);

	if (cred != NULL)
		snprintf(buf, len, "${" XD_CREDENTIALS_VAR "}/%s (%s)", cred, path);
	else
		snprintf(buf, len, "%s", path);
}

/*
 * The key is not the certificate's. What to do depends on where each
 * comes from: a credential is systemd's copy made when xdsd started,
 * and a reload reads that copy again, so a key replaced with its
 * certificate (a new pair, as certbot makes at each renewal unless told
 * --reuse-key) reaches xdsd only with a restart. Files xdsd reads
 * itself are re-read at each reload; a pair replaced one file at a
 * time looks like this to a reload in between, which is refused (the
 * pair in use keeps serving) while the next one takes the new pair.
 */
static void not_a_pair(const struct xd_tls *t, struct xd_diag *diag)
{
	bool cred_key = xd_expand_credential(t->key_path) != NULL,
	     cred_cert = xd_expand_credential(t->cert_path) != NULL;
	char key[600], cert[600];
	const char *todo;

	as_configured(key, sizeof(key), t->key_path);
	as_configured(cert, sizeof(cert), t->cert_path);
	if (cred_key && cred_cert)
		todo = "both are systemd's copies of credentials, made when xdsd started: put the matching pair "
		       "where the unit's LoadCredential= lines point and restart xdsd (systemctl restart xdsd)";
	else if (cred_key)
		todo = "the key is systemd's copy of a credential, made when xdsd started (LoadCredential=), "
		       "which a reload reads again: a certificate for a new key takes a restart "
		       "(systemctl restart xdsd), or renew the certificate for the same key (certbot --reuse-key) "
		       "for reloads to take each renewal";
	else if (cred_cert)
		todo = "the certificate is systemd's copy of a credential, made when xdsd started (LoadCredential=), "
		       "which a reload reads again: a new key with its certificate takes a restart "
		       "(systemctl restart xdsd)";
	else
		todo = "install the key of that certificate, or the certificate of this key, and reload; "
		       "a pair being replaced one file at a time is refused like this by a reload in between, "
		       "and taken by the next";
	xd_diag_add(diag, "%s: the key does not belong to the first certificate of %s: %s",
		    key, cert, todo);
}

/* The server's chain and key: each parses, they belong together, and
 * the leaf is valid now. Fills p->describe, the subject and expiry. */
static int check_server(struct pems *p, const struct xd_tls *t,
			struct xd_diag *diag)
{
	STACK_OF(X509) *chain = certs_of(p->cert, t->cert_path,
					 "certificate chain", diag);
	BIO *bio;
	EVP_PKEY *key = NULL;
	X509 *leaf;
	char why[256], when[64], subject[160];
	size_t before = xd_diag_total(diag);

	bio = BIO_new_mem_buf(p->key, -1);
	if (bio == NULL)
		xd_out_of_memory(strlen(p->key));
	/* no passphrase callback: an encrypted key is refused */
	key = PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *)"");
	BIO_free(bio);
	if (key == NULL)
		xd_diag_add(diag, "%s: not a PEM private key (unencrypted): %s",
			    t->key_path, ssl_reason(why, sizeof(why)));
	if (chain == NULL || key == NULL)
		goto out;
	leaf = sk_X509_value(chain, 0);
	if (X509_check_private_key(leaf, key) != 1) {
		ERR_clear_error();
		not_a_pair(t, diag);
	}
	if (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0) {
		asn1_time(X509_get0_notAfter(leaf), when, sizeof(when));
		xd_diag_add(diag, "%s: the certificate expired on %s", t->cert_path,
			    when);
	} else if (X509_cmp_current_time(X509_get0_notBefore(leaf)) >= 0) {
		asn1_time(X509_get0_notBefore(leaf), when, sizeof(when));
		xd_diag_add(diag, "%s: the certificate is not valid before %s",
			    t->cert_path, when);
	}
	X509_NAME_oneline(X509_get_subject_name(leaf), subject, sizeof(subject));
	asn1_time(X509_get0_notAfter(leaf), when, sizeof(when));
	snprintf(p->describe, sizeof(p->describe), "certificate %s, valid until %s",
		 subject, when);
	snprintf(p->cert_subject, sizeof(p->cert_subject), "%s", subject);
	p->cert_not_after = asn1_unix(X509_get0_notAfter(leaf));
out:
	EVP_PKEY_free(key);
	if (chain != NULL)
		sk_X509_pop_free(chain, X509_free);
	return xd_diag_total(diag) == before ? 0 : -1;
}

/* The CA bundle's certificate that expires first: clients whose chain
 * goes through it are refused from then on. */
static void earliest_ca(struct pems *p, STACK_OF(X509) *ca)
{
	for (int i = 0; i < sk_X509_num(ca); i++) {
		X509 *x = sk_X509_value(ca, i);
		int64_t at = asn1_unix(X509_get0_notAfter(x));

		if (i > 0 && at >= p->ca_not_after)
			continue;
		p->ca_not_after = at;
		X509_NAME_oneline(X509_get_subject_name(x), p->ca_subject,
				  sizeof(p->ca_subject));
	}
}

/* Reads and checks the files into `p`; -1 (nothing kept) on a problem. */
static int load(const struct xd_tls *t, struct pems *p, struct xd_diag *diag)
{
	const struct tls_file cert = {t->cert_path, "certificate chain", "cert",
				      "tls.pem"},
			      key = {t->key_path, "private key", "key", "tls.key"},
			      ca = {t->ca_path, "client CA file",
				    "client_ca", "ca.pem"};
	size_t before = xd_diag_total(diag);

	ERR_clear_error();
	memset(p, 0, sizeof(*p));
	p->cert = read_pem(&cert, diag);
	p->key = read_pem(&key, diag);
	if (t->ca_path != NULL)
		p->client_ca = read_pem(&ca, diag);
	if (xd_diag_total(diag) == before)
		check_server(p, t, diag);
	if (p->client_ca != NULL) {
		STACK_OF(X509) *certs = certs_of(p->client_ca, t->ca_path,
						 "CA certificate", diag);

		if (certs != NULL) {
			earliest_ca(p, certs);
			sk_X509_pop_free(certs, X509_free);
		}
	}
	if (xd_diag_total(diag) != before) {
		pems_free(p);
		return -1;
	}
	return 0;
}

struct xd_tls *xd_tls_new(const struct xd_config *cfg, struct xd_diag *diag)
{
	struct xd_tls *t = xd_calloc(1, sizeof(*t));

	XD_ASSERT(cfg->tls.cert != NULL && cfg->tls.key != NULL);
	t->cert_path = xd_strdup(cfg->tls.cert);
	t->key_path = xd_strdup(cfg->tls.key);
	t->ca_path = cfg->tls.client_ca ? xd_strdup(cfg->tls.client_ca) : NULL;
	t->mutual = cfg->tls.client_ca != NULL;
	pthread_mutex_init(&t->lock, NULL);
	if (load(t, &t->now, diag) != 0) {
		xd_tls_free(t);
		return NULL;
	}
	t->generation = 1;
	return t;
}

struct xd_tls_next {
	struct pems pems;
};

struct xd_tls_next *xd_tls_read(const struct xd_tls *t, struct xd_diag *diag)
{
	struct xd_tls_next *next = xd_calloc(1, sizeof(*next));

	if (load(t, &next->pems, diag) != 0) {
		free(next);
		return NULL;
	}
	return next;
}

void xd_tls_use(struct xd_tls *t, struct xd_tls_next *next)
{
	struct pems old;

	XD_ASSERT_LOOP();
	XD_ASSERT(next != NULL && next->pems.cert != NULL);
	pthread_mutex_lock(&t->lock);
	old = t->now;
	t->now = next->pems;
	t->generation++;
	pthread_mutex_unlock(&t->lock);
	pems_free(&old);
	free(next);
}

void xd_tls_next_free(struct xd_tls_next *next)
{
	if (next == NULL)
		return;
	pems_free(&next->pems);
	free(next);
}

/*
 * gRPC's question at each handshake: is there a newer certificate
 * config than the one it has? It takes ownership of what it is given.
 */
static grpc_ssl_certificate_config_reload_status
fetch(void *user_data, grpc_ssl_server_certificate_config **config)
{
	struct xd_tls *t = user_data;
	grpc_ssl_certificate_config_reload_status status =
		GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;

	pthread_mutex_lock(&t->lock);
	if (t->handed != t->generation) {
		grpc_ssl_pem_key_cert_pair pair = {t->now.key, t->now.cert};

		/* gRPC 1.51 asserts that a fetched config has root
		 * certificates, even when client certificates are not
		 * requested and roots go unused: then it gets the server's
		 * own chain. */
		*config = grpc_ssl_server_certificate_config_create(
			t->now.client_ca != NULL ? t->now.client_ca : t->now.cert,
			&pair, 1);
		t->handed = t->generation;
		status = GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
	}
	pthread_mutex_unlock(&t->lock);
	return status;
}

grpc_server_credentials *xd_tls_credentials(struct xd_tls *t)
{
	grpc_ssl_server_credentials_options *o;

	XD_ASSERT_LOOP();
	o = grpc_ssl_server_credentials_create_options_using_config_fetcher(
			t->mutual ?
				GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY :
				GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
			fetch, t);

	return grpc_ssl_server_credentials_create_with_options(o);
}

bool xd_tls_mutual(const struct xd_tls *t)
{
	return t->mutual;
}

const char *xd_tls_describe(const struct xd_tls *t)
{
	return t->now.describe;
}

void xd_tls_expiry(const struct xd_tls *t, struct xd_tls_expiry *cert,
		   struct xd_tls_expiry *ca)
{
	/* `now` changes on this thread only (xd_tls_use): no lock */
	XD_ASSERT_LOOP();
	*cert = (struct xd_tls_expiry){t->cert_path, t->now.cert_subject,
				       t->now.cert_not_after};
	*ca = (struct xd_tls_expiry){t->ca_path, t->now.ca_subject,
				     t->now.ca_not_after};
}

/* "Nov 26 21:04:05 2027 UTC" */
static void unix_time(char *buf, size_t len, int64_t s)
{
	time_t secs = (time_t)s;
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, len, "%b %e %H:%M:%S %Y UTC", &tm);
}

void xd_tls_warn_expiry(const struct xd_tls *t, int64_t now_s)
{
	const int64_t soon = (int64_t)XD_TLS_EXPIRY_WARN_DAYS * 86400;
	const struct pems *p = &t->now;
	char when[64], left[32];

	unix_time(when, sizeof(when), p->cert_not_after);
	xd_text_age(left, sizeof(left), p->cert_not_after - now_s);
	if (p->cert_not_after <= now_s)
		xd_error("TLS: the server certificate in use (%s, %s) expired on %s: "
			 "clients refuse it, so every new TLS connection fails; install a valid one and reload (SIGHUP)",
			 t->cert_path, p->cert_subject, when);
	else if (p->cert_not_after - now_s <= soon)
		xd_warn("TLS: the server certificate (%s, %s) expires on %s, in %s: "
			"install a new one before then and reload (SIGHUP)",
			t->cert_path, p->cert_subject, when, left);
	if (p->client_ca == NULL)
		return;
	/* a bundle may keep an expired CA beside its successor: a warning,
	 * never a refusal */
	unix_time(when, sizeof(when), p->ca_not_after);
	xd_text_age(left, sizeof(left), p->ca_not_after - now_s);
	if (p->ca_not_after <= now_s)
		xd_warn("TLS: the client CA %s in %s expired on %s: client certificates it signed are refused",
			p->ca_subject, t->ca_path, when);
	else if (p->ca_not_after - now_s <= soon)
		xd_warn("TLS: the client CA %s in %s expires on %s, in %s: client certificates it signed will be refused from then on",
			p->ca_subject, t->ca_path, when, left);
}

void xd_tls_free(struct xd_tls *t)
{
	if (t == NULL)
		return;
	XD_ASSERT_LOOP();
	pems_free(&t->now);
	pthread_mutex_destroy(&t->lock);
	free(t->cert_path);
	free(t->key_path);
	free(t->ca_path);
	free(t);
}
