/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `xdsctl push` (push.c) and its dry run (push_preview.c) share:
 * the push's settings and the directory checked, and one synchronous
 * call to etcd.
 *
 * Ownership: struct push owns what it names but `o`. Thread: main.
 */
#ifndef XD_XDSCTL_PUSH_H
#define XD_XDSCTL_PUSH_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>

#include "config/config.h"
#include "rollout/record.h"
#include "schema/schema.h"
#include "util/buf.h"
#include "xdsctl/ctl.h"

/* the largest answer read: a Range of the prefix, keys (a push) or
 * values (its dry run) */
#define XC_PUSH_MAX_RESPONSE (64 << 20)

/* What is written: <prefix><name> = text, one per snapshot file. */
struct put {
	char *key;
	const char *text; /* in the keys read (struct xd_snapkey) */
	size_t len;
};

struct push {
	const struct xc_opts *o;
	struct xd_config cfg;  /* xdsd.yaml's (-c) or the defaults */
	/* --etcd split (owned, checked here), or cfg's (checked by
	 * xd_config_load: one host:port each) */
	char *const *endpoints;
	size_t nendpoints;
	char **split;
	size_t nsplit;
	const char *prefix;
	struct put *puts;
	size_t nputs;
	grpc_channel_credentials *creds;
	/* the directory as the replicas will load it, and its print
	 * (rollout/record.h) */
	struct xd_schema *schema;
	struct xd_snapshot **snaps;
	size_t nsnaps, files;
	char print[XD_ROLLOUT_PRINT_LEN + 1];
	/* --now: the rollout's record put with the change; NULL: none */
	char *record_key;
	struct xd_buf record;
};

/*
 * Calls `method` on `ch` with `req`; the answer, of descriptor `d`, in
 * *resp. XC_OK, or with why in `why`: XC_UNREACHABLE when etcd could
 * not be reached or did not answer in time, XC_FAILED when it answered
 * with an error.
 */
int xc_push_unary(const struct push *p, grpc_channel *ch, const char *method,
		  const ProtobufCMessage *req,
		  const ProtobufCMessageDescriptor *d, ProtobufCMessage **resp,
		  char *why, size_t len);

/* A channel to `endpoint` with the push's credentials. */
grpc_channel *xc_push_channel(const struct push *p, const char *endpoint);

/* Whether `key` is one of xdsd's own under the prefix (etcd.h). */
bool xc_push_own_key(const struct push *p, const ProtobufCBinaryData *key);

/* `push --dry-run` (push_preview.c): what the push would change from
 * what the first endpoint that answers holds, and whom it reaches; exit
 * status as diff(1)'s. */
int xc_push_preview(struct push *p, const char *dir);

#endif
