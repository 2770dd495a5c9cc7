/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An xDS node as the admin endpoint's tests need one: a SotW ADS stream
 * that subscribes to every cluster and to the endpoints of one cluster,
 * and answers every response as an Envoy would, with an ACK, or, when
 * told to reject endpoints, with a NACK carrying a given message. The
 * node's id, cluster and user agent are the test's to choose (hostile
 * strings included), and so is the client certificate it proves an
 * identity with over mTLS.
 *
 * Built on client.h; single-threaded, every call blocks with a deadline
 * and fails the running Check test when it passes.
 */
#ifndef XD_TESTS_NODE_H
#define XD_TESTS_NODE_H

#include "client.h"

#define XDT_CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"
#define XDT_EDS_URL "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

struct xdt_node_opts {
	const char *id;
	const char *cluster;    /* NULL: "edge" */
	const char *zone;       /* NULL: "eu-west-1a" (region "eu-west") */
	const char *agent;      /* NULL: "admin-test" */
	const char *agent_version; /* NULL: "1.2.3" */
	const char *endpoints;  /* the cluster whose endpoints it asks for */
	const char *nack_endpoints; /* NULL: ACK them; else the NACK message */
	/* receive the endpoints' response but answer it only at
	 * xdt_node_release: a client that does not ACK */
	bool hold_endpoints;
	/* NULL: plaintext; else mTLS with the certificate NAME.pem and key
	 * NAME.key of tests/lib/make-certs.sh ("frontend"), trusting ca.pem
	 * (xdtest_make_certs must have run) */
	const char *cert;
};

struct xdt_node {
	struct xdt_node_opts o; /* strings borrowed: they must outlive it */
	struct xdc_conn *conn;
	struct xdc_stream *s;
	char *held_version, *held_nonce; /* a held response's, or NULL */
};

/*
 * Connects to `target`, asks for every cluster, answers, asks for the
 * endpoints of o->endpoints, answers; returns once both answers are
 * sent (xdsd may not have read the last one yet).
 */
void xdt_node_open(struct xdt_node *n, const char *target,
		   const struct xdt_node_opts *o);

/* Receives the next response, which must be of `type_url`, and answers
 * it; its version in *version (malloc'd) when not NULL. */
void xdt_node_answer(struct xdt_node *n, const char *type_url,
		     char **version);

/* Answers the endpoints' response held back (hold_endpoints) now. */
void xdt_node_release(struct xdt_node *n);

void xdt_node_close(struct xdt_node *n);

#endif
