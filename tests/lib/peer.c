/* SPDX-License-Identifier: Apache-2.0 */
#include "peer.h"

#include <stdlib.h>
#include <string.h>

#include "xdtest.h"

void xdt_peer_open(struct xdt_peer *p, struct xdc_conn *c, bool delta,
		   const char *id)
{
	xdt_peer_open_in(p, c, delta, id, "edge");
}

void xdt_peer_open_in(struct xdt_peer *p, struct xdc_conn *c, bool delta,
		      const char *id, const char *cluster)
{
	Envoy__Config__Core__V3__Node node = ENVOY__CONFIG__CORE__V3__NODE__INIT;

	memset(p, 0, sizeof(*p));
	p->delta = delta;
	p->acked = strdup("");
	node.id = (char *)id;
	node.cluster = (char *)cluster;
	p->s = xdc_open(c, delta ? XDC_DELTA_ADS : XDC_ADS);
	if (delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;
		char *star[] = {"*"};

		req.node = &node;
		req.type_url = XDT_PEER_CDS_URL;
		req.resource_names_subscribe = star;
		req.n_resource_names_subscribe = 1;
		ck_assert(xdc_send_delta(p->s, &req, XDT_PEER_WAIT_MS));
	} else {
		Envoy__Service__Discovery__V3__DiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

		req.node = &node;
		req.type_url = XDT_PEER_CDS_URL;
		ck_assert(xdc_send_sotw(p->s, &req, XDT_PEER_WAIT_MS));
	}
}

/* The next response, unanswered: its resource count (-1: none within
 * `timeout_ms`). Its version (SotW) and nonce are kept. */
int xdt_peer_next(struct xdt_peer *p, int timeout_ms)
{
	int n;

	free(p->version);
	free(p->nonce);
	p->version = p->nonce = NULL;
	p->removed = 0;
	if (p->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryResponse *r =
			xdc_recv_delta(p->s, timeout_ms);

		if (r == NULL)
			return -1;
		n = (int)r->n_resources;
		p->removed = r->n_removed_resources;
		p->nonce = strdup(r->nonce);
		p->version = strdup(n > 0 ? r->resources[0]->version : "");
		envoy__service__discovery__v3__delta_discovery_response__free_unpacked(r, NULL);
		return n;
	}
	Envoy__Service__Discovery__V3__DiscoveryResponse *r =
		xdc_recv_sotw(p->s, timeout_ms);

	if (r == NULL)
		return -1;
	n = (int)r->n_resources;
	p->version = strdup(r->version_info);
	p->nonce = strdup(r->nonce);
	envoy__service__discovery__v3__discovery_response__free_unpacked(r, NULL);
	return n;
}

/* Answers the last response: an ACK, or a NACK with `nack`. */
void xdt_peer_answer(struct xdt_peer *p, const char *nack)
{
	Google__Rpc__Status err = GOOGLE__RPC__STATUS__INIT;

	err.code = 3;
	err.message = (char *)nack;
	ck_assert_ptr_nonnull(p->nonce);
	if (p->delta) {
		Envoy__Service__Discovery__V3__DeltaDiscoveryRequest req =
			ENVOY__SERVICE__DISCOVERY__V3__DELTA_DISCOVERY_REQUEST__INIT;

		req.type_url = XDT_PEER_CDS_URL;
		req.response_nonce = p->nonce;
		req.error_detail = nack != NULL ? &err : NULL;
		ck_assert(xdc_send_delta(p->s, &req, XDT_PEER_WAIT_MS));
		return;
	}
	Envoy__Service__Discovery__V3__DiscoveryRequest req =
		ENVOY__SERVICE__DISCOVERY__V3__DISCOVERY_REQUEST__INIT;

	req.type_url = XDT_PEER_CDS_URL;
	req.response_nonce = p->nonce;
	req.version_info = nack != NULL ? p->acked : p->version;
	req.error_detail = nack != NULL ? &err : NULL;
	ck_assert(xdc_send_sotw(p->s, &req, XDT_PEER_WAIT_MS));
	if (nack == NULL) {
		free(p->acked);
		p->acked = strdup(p->version);
	}
}

/* The next response must come, hold `n` resources, and be ACKed. */
void xdt_peer_expect(struct xdt_peer *p, int n, const char *who)
{
	int got = xdt_peer_next(p, XDT_PEER_WAIT_MS);

	ck_assert_msg(got == n, "%s: %d resources, not %d", who, got, n);
	xdt_peer_answer(p, NULL);
}

/* Nothing may come for XDT_PEER_QUIET_MS. */
void xdt_peer_quiet(struct xdt_peer *p, const char *who)
{
	int got = xdt_peer_next(p, XDT_PEER_QUIET_MS);

	ck_assert_msg(got == -1, "%s was sent %d resources (version %s)", who,
		      got, p->version ? p->version : "");
}

void xdt_peer_close(struct xdt_peer *p)
{
	xdc_stream_free(p->s);
	free(p->acked);
	free(p->version);
	free(p->nonce);
}
