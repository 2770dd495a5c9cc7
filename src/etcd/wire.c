/* SPDX-License-Identifier: Apache-2.0 */
#include "etcd/wire.h"

#include <grpc/byte_buffer_reader.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tls.h"
#include "util/xalloc.h"

grpc_byte_buffer *xd_etcd_pack(const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	grpc_slice s = grpc_slice_malloc(len);
	grpc_byte_buffer *bb;

	protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(s));
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	return bb;
}

ProtobufCMessage *xd_etcd_unpack(const ProtobufCMessageDescriptor *d,
				 grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader r;
	ProtobufCMessage *m = NULL;
	grpc_slice all;

	if (bb == NULL)
		return NULL;
	if (grpc_byte_buffer_reader_init(&r, bb)) {
		all = grpc_byte_buffer_reader_readall(&r);
		grpc_byte_buffer_reader_destroy(&r);
		m = protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(all),
					      GRPC_SLICE_START_PTR(all));
		grpc_slice_unref(all);
	}
	grpc_byte_buffer_destroy(bb);
	return m;
}

char *xd_etcd_range_end(const char *prefix, size_t *len)
{
	size_t n = strlen(prefix);
	char *end = xd_strdup(prefix);

	while (n > 0 && (unsigned char)end[n - 1] == 0xff)
		n--;
	if (n == 0) {
		/* all keys from the prefix on: "\0" */
		end[0] = '\0';
		*len = 1;
		return end;
	}
	end[n - 1] = (char)((unsigned char)end[n - 1] + 1);
	*len = n;
	return end;
}

void xd_etcd_status_text(grpc_status_code status, grpc_slice details,
			 char *buf, size_t len)
{
	static const char *const codes[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
		"DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
		"PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
		"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
		"UNAUTHENTICATED"};
	size_t n = GRPC_SLICE_LENGTH(details);

	snprintf(buf, len, "%s: %.*s",
		 (unsigned)status < sizeof(codes) / sizeof(codes[0]) ?
			 codes[status] :
			 "status ?",
		 (int)(n > 400 ? 400 : n),
		 (const char *)GRPC_SLICE_START_PTR(details));
}

grpc_channel_credentials *xd_etcd_credentials(const struct xd_etcd_tls_files *f,
					      struct xd_diag *diag)
{
	size_t before = xd_diag_total(diag);
	char *ca = NULL, *cert = NULL, *key = NULL;
	grpc_ssl_pem_key_cert_pair pair;
	grpc_channel_credentials *creds = NULL;

	if (f->ca == NULL && f->cert == NULL && f->key == NULL)
		return grpc_insecure_credentials_create();
	if (f->ca != NULL)
		ca = xd_tls_read_pem(f->ca, "etcd CA file", f->ca_name,
				     diag);
	if (f->cert != NULL) {
		cert = xd_tls_read_pem(f->cert, "etcd client certificate",
				       f->cert_name, diag);
		if (f->key == NULL)
			xd_diag_add(diag, "%s: '%s' needs its private key (%s)",
				    f->cert_name, f->cert, f->key_name);
		else
			key = xd_tls_read_pem(f->key, "etcd client key",
					      f->key_name, diag);
	} else if (f->key != NULL) {
		xd_diag_add(diag, "%s: '%s' needs its certificate (%s)",
			    f->key_name, f->key, f->cert_name);
	}
	if (xd_diag_total(diag) == before) {
		pair.private_key = key;
		pair.cert_chain = cert;
		creds = grpc_ssl_credentials_create(ca, cert != NULL ? &pair : NULL,
						    NULL, NULL);
	}
	free(ca);
	free(cert);
	if (key != NULL) {
		/* a private key: not left in freed memory */
		memset(key, 0, strlen(key));
		free(key);
	}
	return creds;
}
