/* SPDX-License-Identifier: Apache-2.0 */
#include "node.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xdtest.h"

#define WAIT_MS 5000

static const char *or(const char *s, const char *dflt)
{
	return s != NULL ? s : dflt;
}

static void request(struct xdt_node *n, const char *url, const char *version,
		    const char *nonce, const char *nack)
{
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;
	Envoy__Config__Core__V3__Locality loc =
		ENVOY__CONFIG__CORE__V3__LOCALITY__INIT;
	Google__Rpc__Status err = GOOGLE__RPC__STATUS__INIT;
	char *name = (char *)n->o.endpoints;

	node.id = (char *)n->o.id;
	node.cluster = (char *)or(n->o.cluster, "edge");
	loc.region = "eu-west";
	loc.zone = (char *)or(n->o.zone, "eu-west-1a");
	node.locality = &loc;
	node.user_agent_name = (char *)or(n->o.agent, "admin-test");
	node.user_agent_version_type_case =
		ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_VERSION;
	node.user_agent_version = (char *)or(n->o.agent_version, "1.2.3");
	req.node = &node;
	req.type_url = (char *)url;
	if (strcmp(url, XDT_EDS_URL) == 0) {
		req.resource_names = &name;
		req.n_resource_names = 1;
	}
	req.version_info = (char *)(version ? version : "");
	req.response_nonce = (char *)(nonce ? nonce : "");
	if (nack != NULL) {
		err.code = 3; /* INVALID_ARGUMENT, as Envoy sends */
		err.message = (char *)nack;
		req.error_detail = &err;
	}
	ck_assert(xdc_send_sotw(n->s, &req, WAIT_MS));
}

void xdt_node_answer(struct xdt_node *n, const char *url, char **version)
{
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(n->s, WAIT_MS);
	const char *nack = strcmp(url, XDT_EDS_URL) == 0 ? n->o.nack_endpoints : NULL;

	ck_assert_msg(r != NULL, "%s: no %s response", n->o.id, url);
	ck_assert_str_eq(r->type_url, url);
	if (strcmp(url, XDT_EDS_URL) == 0 && n->o.hold_endpoints) {
		ck_assert_ptr_null(n->held_nonce);
		n->held_version = strdup(r->version_info);
		n->held_nonce = strdup(r->nonce);
		if (version != NULL)
			*version = strdup(r->version_info);
		envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
		return;
	}
	/* a NACK names the version the client still holds: none here */
	request(n, url, nack ? "" : r->version_info, r->nonce, nack);
	if (version != NULL)
		*version = strdup(r->version_info);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
}

void xdt_node_open(struct xdt_node *n, const char *target,
		   const struct xdt_node_opts *o)
{
	n->o = *o;
	n->held_version = n->held_nonce = NULL;
	if (o->cert != NULL) {
		char pem[64], key[64];

		snprintf(pem, sizeof(pem), "%s.pem", o->cert);
		snprintf(key, sizeof(key), "%s.key", o->cert);
		n->conn = xdc_connect_tls(target, xdtest_cert("ca.pem"),
					  xdtest_cert(pem), xdtest_cert(key));
	} else {
		n->conn = xdc_connect(target);
	}
	n->s = xdc_open(n->conn, XDC_ADS);
	request(n, XDT_CDS_URL, NULL, NULL, NULL);
	xdt_node_answer(n, XDT_CDS_URL, NULL);
	request(n, XDT_EDS_URL, NULL, NULL, NULL);
	xdt_node_answer(n, XDT_EDS_URL, NULL);
}

void xdt_node_release(struct xdt_node *n)
{
	ck_assert_ptr_nonnull(n->held_nonce);
	request(n, XDT_EDS_URL, n->held_version, n->held_nonce, NULL);
	free(n->held_version);
	free(n->held_nonce);
	n->held_version = n->held_nonce = NULL;
}

void xdt_node_close(struct xdt_node *n)
{
	free(n->held_version);
	free(n->held_nonce);
	xdc_stream_free(n->s);
	xdc_conn_free(n->conn);
}
