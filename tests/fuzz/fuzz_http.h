/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The input format of the HTTP endpoints' fuzz target (fuzz_http.c),
 * shared with the program that writes its seeds (http_seeds.c).
 *
 * An input is a list of operations over FH_SLOTS client connections:
 * slots 0-3 talk to the admin endpoint, 4-7 to REST-JSON. Each
 * operation is one byte, then its arguments (cut short by the end of
 * the input, missing bytes read as 0):
 *
 *   bits 0-2  what (enum fh_op)
 *   bits 3-5  the slot
 *   bits 6-7  a variant, per operation
 *
 *   OPEN   arg: bit 0 from 127.0.0.2 rather than 127.0.0.1, bit 1 a
 *          small receive buffer (the server's answers back up sooner).
 *          Closes the slot's connection first if it is open.
 *   SEND   args: a 2-byte little-endian length, then that many bytes,
 *          sent on the slot (opened from 127.0.0.1 if it is not).
 *   READ   reads what has come on the slot.
 *   CLOSE  reads what has come, then closes; variant bit 6: with a
 *          reset (SO_LINGER 0) rather than a FIN.
 *   SHUT   half-closes: shutdown(SHUT_WR).
 *   RUN    arg: the loop runs (arg % 32) + 1 more iterations without
 *          waiting; with variant bit 6, for (arg % 16) ms instead
 *          (FH_WAIT_BUDGET_MS per input in all). Held polls and request
 *          heads time out after FH_TIMEOUT_MS.
 *   RELOAD arg: writes snapshot variant (arg % FH_VARIANTS) to the
 *          directory; variant bit 6 clear: then asks for a reload, as
 *          SIGHUP does.
 *   POLL   args: the type (arg % FH_REST_TYPES, in the order of
 *          fh_rest_paths) and flags (FH_POLL_*): a well-formed REST
 *          DiscoveryRequest on the slot, with the version and nonce
 *          the slot was last answered for that type (else the current
 *          version), so that polls are held.
 *
 * After every operation the loop runs one more iteration.
 */
#ifndef XD_TESTS_FUZZ_HTTP_H
#define XD_TESTS_FUZZ_HTTP_H

enum fh_op {
	FH_OPEN = 0,
	FH_SEND = 1,
	FH_READ = 2,
	FH_CLOSE = 3,
	FH_SHUT = 4,
	FH_RUN = 5,
	FH_RELOAD = 6,
	FH_POLL = 7,
};

#define FH_SLOTS 8
#define FH_ADMIN_SLOTS 4 /* 0-3 admin, 4-7 REST-JSON */
#define FH_VARIANT 0x40
#define FH_WAIT_BUDGET_MS 40
#define FH_TIMEOUT_MS 10

/* The byte of an operation on a slot. */
#define FH_OP(op, slot, variant) \
	((unsigned char)((op) | ((slot) << 3) | ((variant) ? FH_VARIANT : 0)))

/* Snapshot variants: 0 the first, 1 changes every type and drops c1's
 * own snapshot, 2 and 3 are refused (YAML, schema), 4 empties the
 * default snapshot. */
#define FH_VARIANTS 5

/* POLL flags. */
#define FH_POLL_C1 0x01       /* node of cluster c1 (its own snapshot) */
#define FH_POLL_NO_NODE 0x02  /* no node at all */
#define FH_POLL_VERSION 0x04  /* versionInfo: what it holds */
#define FH_POLL_NONCE 0x08    /* responseNonce: the last one it got */
#define FH_POLL_NACK 0x10     /* errorDetail */
#define FH_POLL_CLOSE 0x20    /* Connection: close */
#define FH_POLL_FEATURES 0x40 /* resources wrapped, with TTLs */
#define FH_POLL_NAMES 0x80    /* resourceNames */

/* The REST-JSON paths, in POLL's order. */
#define FH_REST_TYPES 7
#define FH_REST_PATHS                                                  \
	{"listeners", "routes", "scoped-routes", "clusters", "endpoints", \
	 "secrets", "runtime"}

#endif
