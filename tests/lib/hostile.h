/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile peer input for tests: messages a client could send to hurt a
 * server, built byte by byte (no protobuf library would write them),
 * and raw TCP peers that connect and then open no stream.
 */
#ifndef XD_TESTS_HOSTILE_H
#define XD_TESTS_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An envoy.config.core.v3.Node {id, cluster, metadata} whose metadata
 * nests Struct -> Value -> Struct ... `depth` levels deep (about 13
 * bytes a level). malloc'd; its length in *len.
 */
uint8_t *xdt_deep_node(const char *id, const char *cluster, int depth,
		       size_t *len);

/*
 * A DiscoveryRequest (or, with `delta`, a DeltaDiscoveryRequest) of
 * `type_url` subscribing to `name`, with the node above. malloc'd.
 */
uint8_t *xdt_deep_node_request(bool delta, const char *type_url,
			       const char *name, const char *id,
			       const char *cluster, int depth, size_t *len);

/*
 * A TCP connection to `target` ("127.0.0.1:<port>") from `source` (an
 * address of lo such as "127.0.0.2"), non-blocking once connected.
 * With `preface`, it sends HTTP/2's client preface and an empty
 * SETTINGS frame (a real HTTP/2 connection), and then nothing more;
 * without, nothing at all. Returns the socket, or -1 when connect()
 * fails (the caller's open files, say) or the server does not answer
 * within 2 s (a listener's filter dropped the SYN: on loopback an
 * answer is at once).
 */
int xdt_raw_connect(const char *target, const char *source, bool preface);

/* Whether the server has ended raw connection `fd` (an end of stream
 * or a reset, after reading whatever it sent); does not wait. */
bool xdt_raw_ended(int fd);

#endif
