/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The listening socket of an HTTP endpoint, made by xdsd rather than by
 * the HTTP library: the same address forms as every *_listen directive
 * (host:port, [v6]:port, unix:/path; util/address.h), the same errors,
 * and the real port when port 0 asks the kernel for one.
 *
 * Thread: any.
 */
#ifndef XD_HTTP_LISTEN_H
#define XD_HTTP_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

/* A non-blocking, close-on-exec socket listening on `addr`. Returns the
 * descriptor and sets *port (0 for a unix socket), or returns -1 with
 * the reason in `why`. A unix socket's file left by an earlier run is
 * replaced. */
int xd_http_listen(const char *addr, int *port, char *why, size_t why_len);

#endif
