/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Completion-queue tags. Every tag handed to gRPC is a struct xd_tag
 * embedded in its owner (a stream, an accept slot, the server); when the
 * operation completes, the bridge calls done() on the loop thread and the
 * owner finds itself with xd_container_of. One tag per kind of operation,
 * so a stream can tell which of its batches finished.
 */
#ifndef XD_TRANSPORT_TAG_H
#define XD_TRANSPORT_TAG_H

#include <stdbool.h>

struct xd_tag {
	void (*done)(struct xd_tag *tag, bool ok);
};

#endif
