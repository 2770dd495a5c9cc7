/* SPDX-License-Identifier: Apache-2.0 */
#include "etcd/lease.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/rpc.pb-c.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct xd_etcd_lease {
	uv_loop_t *loop;
	struct xd_etcd *e;
	uv_timer_t timer;
	int64_t ttl_s;
	int64_t id;          /* 0: none */
	uint64_t kept;       /* loop ms of the last grant or keep-alive */
	bool calling;        /* a call under way */
	bool failing;        /* the last call failed (said once) */
	void (*changed)(void *arg, int64_t id);
	void *arg;
};

static void tick(uv_timer_t *t);

static void again(struct xd_etcd_lease *l, uint64_t ms)
{
	uv_timer_start(&l->timer, tick, ms, 0);
}

/* The call failed: said once until one succeeds, then tried again. */
static void failed(struct xd_etcd_lease *l, const char *what, const char *why)
{
	if (!l->failing)
		xd_warn("etcd: %s failed: %s; trying again every %d ms", what,
			why, XD_ETCD_LEASE_RETRY_MS);
	l->failing = true;
	again(l, XD_ETCD_LEASE_RETRY_MS);
}

static void lost(struct xd_etcd_lease *l, const char *why)
{
	xd_warn("etcd: lease %llx lost (%s): this replica's keys under the prefix are gone until a new lease",
		(unsigned long long)l->id, why);
	l->id = 0;
	l->changed(l->arg, 0);
}

static void granted(void *arg, const ProtobufCMessage *m, const char *why)
{
	struct xd_etcd_lease *l = arg;
	const Etcdserverpb__LeaseGrantResponse *r =
		(const Etcdserverpb__LeaseGrantResponse *)m;

	XD_ASSERT_LOOP();
	l->calling = false;
	if (r == NULL || r->id == 0 || (r->error != NULL && r->error[0] != '\0')) {
		failed(l, "granting a lease",
		       r == NULL ? why : r->error != NULL && r->error[0] ? r->error : "no lease granted");
		return;
	}
	l->failing = false;
	l->id = r->id;
	l->kept = uv_now(l->loop);
	xd_info("etcd: lease %llx granted for %lld s", (unsigned long long)l->id,
		(long long)r->ttl);
	again(l, (uint64_t)l->ttl_s * 1000 / 3);
	l->changed(l->arg, l->id);
}

static void kept_alive(void *arg, const ProtobufCMessage *m, const char *why)
{
	struct xd_etcd_lease *l = arg;
	const Etcdserverpb__LeaseKeepAliveResponse *r =
		(const Etcdserverpb__LeaseKeepAliveResponse *)m;

	XD_ASSERT_LOOP();
	l->calling = false;
	if (r == NULL) {
		if (uv_now(l->loop) - l->kept >= (uint64_t)l->ttl_s * 1000) {
			lost(l, why);
			again(l, 0);
			return;
		}
		failed(l, "keeping the lease alive", why);
		return;
	}
	l->failing = false;
	if (r->ttl <= 0) {
		lost(l, "etcd says it expired");
		again(l, 0);
		return;
	}
	l->kept = uv_now(l->loop);
	again(l, (uint64_t)l->ttl_s * 1000 / 3);
}

static void tick(uv_timer_t *t)
{
	struct xd_etcd_lease *l = t->data;
	char why[512];
	int rc;

	if (l->calling)
		return;
	if (l->id == 0) {
		Etcdserverpb__LeaseGrantRequest req =
			ETCDSERVERPB__LEASE_GRANT_REQUEST__INIT;

		req.ttl = l->ttl_s;
		rc = xd_etcd_call(l->e, XD_ETCD_LEASE_GRANT_METHOD, &req.base,
				  &etcdserverpb__lease_grant_response__descriptor,
				  granted, l, why, sizeof(why));
	} else {
		Etcdserverpb__LeaseKeepAliveRequest req =
			ETCDSERVERPB__LEASE_KEEP_ALIVE_REQUEST__INIT;

		req.id = l->id;
		rc = xd_etcd_call(l->e, XD_ETCD_LEASE_KEEPALIVE_METHOD, &req.base,
				  &etcdserverpb__lease_keep_alive_response__descriptor,
				  kept_alive, l, why, sizeof(why));
	}
	if (rc != 0) {
		failed(l, l->id == 0 ? "granting a lease" : "keeping the lease alive",
		       why);
		return;
	}
	l->calling = true;
}

struct xd_etcd_lease *xd_etcd_lease_start(uv_loop_t *loop, struct xd_etcd *e,
					  uint64_t ttl_ms,
					  void (*changed)(void *arg,
							  int64_t id),
					  void *arg)
{
	struct xd_etcd_lease *l = xd_calloc(1, sizeof(*l));

	XD_ASSERT_LOOP();
	l->loop = loop;
	l->e = e;
	/* etcd's TTLs are whole seconds */
	l->ttl_s = (int64_t)((ttl_ms + 999) / 1000);
	l->changed = changed;
	l->arg = arg;
	uv_timer_init(loop, &l->timer);
	l->timer.data = l;
	again(l, 0);
	return l;
}

int64_t xd_etcd_lease_id(const struct xd_etcd_lease *l)
{
	return l->id;
}

static void closed(uv_handle_t *h)
{
	free(h->data);
}

/* The revoke's end: its own, the lease being gone already. */
struct revoke {
	int64_t id;
};

static void revoked(void *arg, const ProtobufCMessage *m, const char *why)
{
	struct revoke *r = arg;

	if (m != NULL)
		xd_info("etcd: lease %llx revoked: this replica's keys under the prefix are gone",
			(unsigned long long)r->id);
	else
		xd_warn("etcd: revoking lease %llx failed: %s; its keys go when it expires",
			(unsigned long long)r->id, why);
	free(r);
}

/* Revoked rather than left to expire: the others see this replica go
 * at once (its registration, rollout/fleet.h), not a TTL later. */
static void revoke_lease(struct xd_etcd_lease *l)
{
	Etcdserverpb__LeaseRevokeRequest req = ETCDSERVERPB__LEASE_REVOKE_REQUEST__INIT;
	struct revoke *r = xd_calloc(1, sizeof(*r));
	char why[512];

	r->id = l->id;
	req.id = l->id;
	if (xd_etcd_call_last(l->e, XD_ETCD_LEASE_REVOKE_METHOD, &req.base,
			      &etcdserverpb__lease_revoke_response__descriptor,
			      revoked, r, why, sizeof(why)) != 0)
		revoked(r, NULL, why);
}

void xd_etcd_lease_stop(struct xd_etcd_lease *l)
{
	if (l == NULL)
		return;
	XD_ASSERT_LOOP();
	xd_etcd_forget(l->e, l);
	if (l->id != 0)
		revoke_lease(l);
	uv_close((uv_handle_t *)&l->timer, closed);
}
