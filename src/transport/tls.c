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
#include <sys/stat.h>

#include "util/xalloc.h"

/* PEM files are a few kilobytes; a CA bundle a few hundred. */
#define PEM_MAX_BYTES (4u << 20)

/* The PEM text of one generation of certificates. */
struct pems {
	char *cert, *key, *client_ca; /* client_ca NULL: no mTLS */
	char describe[256];
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

/* The whole file as a NUL-terminated string, or NULL (reported). */
static char *read_pem(const char *path, const char *what, struct xd_diag *diag)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *text;
	size_t n;

	if (f == NULL) {
		xd_diag_add(diag, "%s: cannot read the %s: %s", path, what,
			    strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > PEM_MAX_BYTES) {
		xd_diag_add(diag, "%s: the %s must be a regular file of at most %u MiB",
			    path, what, PEM_MAX_BYTES >> 20);
		fclose(f);
		return NULL;
	}
	text = xd_malloc((size_t)st.st_size + 1);
	n = fread(text, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size || memchr(text, '\0', n) != NULL) {
		xd_diag_add(diag, "%s: cannot read the %s (read error, or not PEM text)",
			    path, what);
		free(text);
		return NULL;
	}
	text[n] = '\0';
	return text;
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

/* The server's chain and key: each parses, they belong together, and
 * the leaf is valid now. Fills p->describe. */
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
		xd_diag_add(diag, "%s: the key does not belong to the first certificate of %s",
			    t->key_path, t->cert_path);
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
out:
	EVP_PKEY_free(key);
	if (chain != NULL)
		sk_X509_pop_free(chain, X509_free);
	return xd_diag_total(diag) == before ? 0 : -1;
}

/* Reads and checks the files into `p`; -1 (nothing kept) on a problem. */
static int load(const struct xd_tls *t, struct pems *p, struct xd_diag *diag)
{
	size_t before = xd_diag_total(diag);

	ERR_clear_error();
	memset(p, 0, sizeof(*p));
	p->cert = read_pem(t->cert_path, "certificate chain", diag);
	p->key = read_pem(t->key_path, "private key", diag);
	if (t->ca_path != NULL)
		p->client_ca = read_pem(t->ca_path, "client CA certificates", diag);
	if (xd_diag_total(diag) == before)
		check_server(p, t, diag);
	if (p->client_ca != NULL) {
		STACK_OF(X509) *ca = certs_of(p->client_ca, t->ca_path,
					      "CA certificate", diag);

		if (ca != NULL)
			sk_X509_pop_free(ca, X509_free);
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

int xd_tls_reload(struct xd_tls *t, struct xd_diag *diag)
{
	struct pems next, old;

	if (load(t, &next, diag) != 0)
		return -1;
	pthread_mutex_lock(&t->lock);
	old = t->now;
	t->now = next;
	t->generation++;
	pthread_mutex_unlock(&t->lock);
	pems_free(&old);
	return 0;
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
	grpc_ssl_server_credentials_options *o =
		grpc_ssl_server_credentials_create_options_using_config_fetcher(
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

void xd_tls_free(struct xd_tls *t)
{
	if (t == NULL)
		return;
	pems_free(&t->now);
	pthread_mutex_destroy(&t->lock);
	free(t->cert_path);
	free(t->key_path);
	free(t->ca_path);
	free(t);
}
