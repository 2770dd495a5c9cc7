/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small blocking xDS client for tests, on gRPC's C core: one channel
 * per connection, streams on any method, send and receive with
 * deadlines, and the final status. It speaks raw bytes; helpers pack
 * the discovery messages with the generated protobuf-c code.
 *
 * Single-threaded; every call blocks until done or its deadline.
 */
#ifndef XD_TESTS_CLIENT_H
#define XD_TESTS_CLIENT_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envoy/service/discovery/v3/discovery.pb-c.h"

#define XDC_ADS "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
#define XDC_DELTA_ADS "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources"

struct xdc_conn;
struct xdc_stream;

/* gRPC is initialised on first use and shut down at exit. */
struct xdc_conn *xdc_connect(const char *target);

/* The same with BDP probing off, so that its HTTP/2 window stays at
 * 64 KiB: a larger message the test does not read stays in the
 * server's send. */
struct xdc_conn *xdc_connect_small_window(const char *target);

/* Over TLS, trusting the CA certificates in the file `ca`; with `cert`
 * and `key` (PEM files, or NULL: none) as the client's certificate. The
 * server is expected to present a certificate for "localhost". */
struct xdc_conn *xdc_connect_tls(const char *target, const char *ca,
				 const char *cert, const char *key);
/* The same, expecting a certificate for the server name `name`. */
struct xdc_conn *xdc_connect_tls_name(const char *target, const char *ca,
				      const char *cert, const char *key,
				      const char *name);

/* An ADS stream subscribed to every cluster (SotW wildcard) as node
 * (`id`, `cluster`). */
struct xdc_stream *xdc_watch_clusters(struct xdc_conn *c, const char *id,
				      const char *cluster);

/* The next CDS response on such a stream, ACKed: its cluster count, or
 * -1 after `timeout_ms`; its version in *version (malloc'd) when asked. */
int xdc_next_clusters(struct xdc_stream *s, int timeout_ms, char **version);

/*
 * A client that subscribes to every cluster as node `id` (cluster
 * "default") on its own connection, then never reads: with BDP probing
 * off its HTTP/2 window stays at 64 KiB, so a larger response stays in
 * xdsd's send for good, as when an Envoy stops reading. (The streams
 * above read what they are sent; this is raw gRPC.)
 */
struct xdc_mute;
struct xdc_mute *xdc_mute_open(const char *target, const char *id);
void xdc_mute_close(struct xdc_mute *m);

/* A property of the server's certificate as this stream's connection
 * saw it (e.g. "x509_common_name"), malloc'd, or NULL. */
char *xdc_server_property(struct xdc_stream *s, const char *name);
void xdc_conn_free(struct xdc_conn *c);

struct xdc_stream *xdc_open(struct xdc_conn *c, const char *method);

/* Sends one message; true once gRPC has taken it. */
bool xdc_send(struct xdc_stream *s, const void *data, size_t len,
	      int timeout_ms);

/* Half-closes the client side. */
bool xdc_close_send(struct xdc_stream *s, int timeout_ms);

/*
 * Receives one message into *data (malloc'd). Returns 1 with a message,
 * 0 at the end of the stream, -1 on timeout (the receive stays armed;
 * the next call keeps waiting for it).
 */
int xdc_recv(struct xdc_stream *s, uint8_t **data, size_t *len,
	     int timeout_ms);

/* Waits for the call's status; true if it came in time. `details` is
 * malloc'd (may be NULL). */
bool xdc_status(struct xdc_stream *s, grpc_status_code *code, char **details,
		int timeout_ms);

/*
 * Reads and drops messages until the server ends the call, then returns
 * its status like xdc_status. gRPC delivers a call's status only once
 * every message before it was read, so a test that does not care about
 * the responses still has to read them.
 */
bool xdc_drain_status(struct xdc_stream *s, grpc_status_code *code,
		      char **details, int timeout_ms);

/* Asserts that the server ends the call without a response, with
 * `code` and, unless `needle` is NULL, a message holding it. */
void xdc_expect_refused(struct xdc_stream *s, grpc_status_code code,
			const char *needle, int timeout_ms);

/* Cancels the call if still open, drains it and frees it. */
void xdc_stream_free(struct xdc_stream *s);

/* Packs and sends a DiscoveryRequest / DeltaDiscoveryRequest. */
bool xdc_send_sotw(struct xdc_stream *s,
		   const Envoy__Service__Discovery__V3__DiscoveryRequest *req,
		   int timeout_ms);
bool xdc_send_delta(struct xdc_stream *s,
		    const Envoy__Service__Discovery__V3__DeltaDiscoveryRequest *req,
		    int timeout_ms);

/* Receives and unpacks one response; NULL on end, timeout or garbage.
 * Free with the matching __free_unpacked(r, NULL). */
Envoy__Service__Discovery__V3__DiscoveryResponse *
xdc_recv_sotw(struct xdc_stream *s, int timeout_ms);
Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *
xdc_recv_delta(struct xdc_stream *s, int timeout_ms);

#endif
