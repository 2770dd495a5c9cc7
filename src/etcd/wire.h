/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the two etcd clients share, the daemon's snapshot source
 * (etcd.h) and `xdsctl push`: etcd's messages to and from gRPC byte
 * buffers, the key range of a prefix, a call's status as text, and the
 * channel credentials from the TLS files.
 *
 * Ownership: as each function says. Thread: any (no state).
 */
#ifndef XD_ETCD_WIRE_H
#define XD_ETCD_WIRE_H

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <protobuf-c/protobuf-c.h>

#include "util/diag.h"

#define XD_ETCD_RANGE_METHOD "/etcdserverpb.KV/Range"
#define XD_ETCD_WATCH_METHOD "/etcdserverpb.Watch/Watch"
#define XD_ETCD_TXN_METHOD "/etcdserverpb.KV/Txn"
#define XD_ETCD_PUT_METHOD "/etcdserverpb.KV/Put"

/* `m` packed into a new byte buffer (the caller destroys it). */
grpc_byte_buffer *xd_etcd_pack(const ProtobufCMessage *m);

/* The message of descriptor `d` in `bb` (consumed; may be NULL), or
 * NULL when there is none or it does not parse. Free it with
 * protobuf_c_message_free_unpacked. */
ProtobufCMessage *xd_etcd_unpack(const ProtobufCMessageDescriptor *d,
				 grpc_byte_buffer *bb);

/* The end of the key range of `prefix`, [prefix, end): the prefix with
 * its last byte below 0xff raised by one ("\0", length 1: every key
 * from the prefix on, when there is none). Malloc'd, `*len` bytes. */
char *xd_etcd_range_end(const char *prefix, size_t *len);

/* A call's status as text: "UNAVAILABLE: failed to connect" (the
 * details cut at 400 bytes). */
void xd_etcd_status_text(grpc_status_code status, grpc_slice details,
			 char *buf, size_t len);

/* The TLS files towards etcd, and how messages name each
 * ("etcd.tls.ca", "--cacert"). All NULL: plaintext. */
struct xd_etcd_tls_files {
	const char *ca, *cert, *key;
	const char *ca_name, *cert_name, *key_name;
};

/* Credentials for channels to etcd: plaintext, server-authenticated
 * (ca alone) or mutual (cert and key). NULL, with every reason in
 * `diag`, when a file cannot be used. Release with
 * grpc_channel_credentials_release. */
grpc_channel_credentials *xd_etcd_credentials(const struct xd_etcd_tls_files *f,
					      struct xd_diag *diag);

#endif
