/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fleet's record and reports in etcd (fleet.h, "source: etcd").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/kv.pb-c.h"
#include "etcd/lease.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/wire.h"
#include "rollout/fleet_int.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

struct etcd_be {
	struct xd_fleet *f;
	struct xd_etcd *e;            /* NULL until attached */
	struct xd_etcd_lease *lease;  /* the same */
	char *record_key;             /* <prefix>.xdsd/rollout */
	char *own_prefix;             /* <prefix>.xdsd/ */
	char *report_id;              /* replicas/<id> of the lease; NULL */
	/* the report: wanted, and as last written, under which lease */
	struct xd_buf want, written, sending;
	int64_t written_lease;
	bool putting;
	bool put_failing;
	uint64_t last_put; /* loop ms */
	uv_timer_t pub;
	bool stopped;
};

static struct etcd_be *be_of(const struct xd_fleet *f)
{
	return f->be_state;
}

/* ---------------- what the watch brings ---------------- */

/* `kv` as a record (NULL when deleted or unreadable, logged). */
static bool read_record(const struct etcd_be *b, const struct xd_etcd_own_kv *kv,
			struct xd_rollout_record *rec)
{
	char why[256];

	if (kv->deleted)
		return false;
	if (xd_rollout_record_read(rec, kv->value, kv->len, why, sizeof(why)) == 0) {
		/* written with the change it names (push --now): its
		 * revision is the change's */
		if (rec->id == 0)
			rec->id = (uint64_t)kv->mod_revision;
		return true;
	}
	xd_warn("rollout: the record at '%s' (revision %lld) is unreadable: %s; taken as no record",
		b->record_key, (long long)kv->mod_revision, why);
	return false;
}

/* A report's key: its id under replicas/, or NULL for another key. */
static const char *report_id(const char *name)
{
	size_t len = strlen(XD_FLEET_REPORTS_DIR);

	return strncmp(name, XD_FLEET_REPORTS_DIR, len) == 0 && name[len] != '\0' ?
		       name + len : NULL;
}

static void take_kv(struct etcd_be *b, const struct xd_etcd_own_kv *kv)
{
	struct xd_fleet *f = b->f;
	const char *id;

	if (strcmp(kv->name, XD_FLEET_RECORD_NAME) == 0) {
		struct xd_rollout_record rec;
		bool got = read_record(b, kv, &rec);

		if (got || kv->deleted)
			xd_fleet__record(f, got ? &rec : NULL, kv->mod_revision);
		else
			xd_fleet__record_unreadable(f, kv->mod_revision);
		if (got)
			xd_rollout_record_clear(&rec);
		return;
	}
	id = report_id(kv->name);
	if (id == NULL || (b->report_id != NULL && strcmp(id, b->report_id) == 0))
		return; /* another key, or this replica's own report */
	if (kv->deleted) {
		xd_fleet__report(f, id, NULL);
	} else {
		struct xd_rollout_report r;
		char why[256];

		if (xd_rollout_report_read(&r, kv->value, kv->len, why, sizeof(why)) != 0) {
			xd_warn("rollout: the report at '%s%s' is unreadable: %s; left out",
				b->own_prefix, kv->name, why);
			xd_fleet__report(f, id, NULL);
			return;
		}
		xd_fleet__report(f, id, &r);
		xd_rollout_report_clear(&r);
	}
}

static void own_read(void *arg, const struct xd_etcd_own_kv *kvs, size_t n,
		     int64_t revision)
{
	struct etcd_be *b = arg;
	bool record = false;

	if (b->stopped)
		return;
	xd_fleet__reports_clear(b->f);
	for (size_t i = 0; i < n; i++) {
		record |= strcmp(kvs[i].name, XD_FLEET_RECORD_NAME) == 0;
		take_kv(b, &kvs[i]);
	}
	if (!record && (b->f->has_record || b->f->present))
		xd_fleet__record(b->f, NULL, revision);
}

static void own_changed(void *arg, const struct xd_etcd_own_kv *kv)
{
	struct etcd_be *b = arg;

	if (!b->stopped)
		take_kv(b, kv);
}

static int64_t own_anchor(void *arg)
{
	struct etcd_be *b = arg;

	return xd_fleet_anchor(b->f);
}

/* ---------------- the record: a Txn ---------------- */

static void written(void *arg, const ProtobufCMessage *m, const char *why)
{
	struct etcd_be *b = arg;
	struct xd_fleet *f = b->f;
	const Etcdserverpb__TxnResponse *r = (const Etcdserverpb__TxnResponse *)m;
	const Etcdserverpb__RangeResponse *cur;

	if (r == NULL || r->header == NULL) {
		xd_warn("rollout: writing the record at '%s' failed: %s",
			b->record_key, why != NULL ? why : "no header");
		xd_fleet__written(f, false, NULL, 0,
				  why != NULL ? why : "an answer without its header");
		return;
	}
	if (r->succeeded) {
		xd_fleet__written(f, true, &f->flight.rec, r->header->revision, NULL);
		return;
	}
	cur = r->n_responses > 0 && r->responses[0]->response_case ==
					    ETCDSERVERPB__RESPONSE_OP__RESPONSE_RESPONSE_RANGE ?
		      r->responses[0]->response_range :
		      NULL;
	if (cur != NULL && cur->n_kvs > 0) {
		struct xd_etcd_own_kv kv = {
			.name = XD_FLEET_RECORD_NAME,
			.value = cur->kvs[0]->value.data,
			.len = cur->kvs[0]->value.len,
			.mod_revision = cur->kvs[0]->mod_revision,
		};
		struct xd_rollout_record rec;
		bool got = read_record(b, &kv, &rec);

		xd_fleet__written(f, false, got ? &rec : NULL, kv.mod_revision, NULL);
		if (got)
			xd_rollout_record_clear(&rec);
		return;
	}
	xd_fleet__written(f, false, NULL, 0, NULL);
}

static void be_write(struct xd_fleet *f, const struct xd_rollout_record *rec,
		     int64_t expect)
{
	struct etcd_be *b = be_of(f);
	Etcdserverpb__TxnRequest txn = ETCDSERVERPB__TXN_REQUEST__INIT;
	Etcdserverpb__Compare cmp = ETCDSERVERPB__COMPARE__INIT, *cmps[1] = {&cmp};
	Etcdserverpb__PutRequest put = ETCDSERVERPB__PUT_REQUEST__INIT;
	Etcdserverpb__RangeRequest get = ETCDSERVERPB__RANGE_REQUEST__INIT;
	Etcdserverpb__RequestOp on_ok = ETCDSERVERPB__REQUEST_OP__INIT,
				on_no = ETCDSERVERPB__REQUEST_OP__INIT;
	Etcdserverpb__RequestOp *ok_ops[1] = {&on_ok}, *no_ops[1] = {&on_no};
	struct xd_buf text = XD_BUF_INIT;
	char why[512];

	if (b->e == NULL) {
		xd_fleet__written(f, false, NULL, 0, "etcd is not read yet");
		return;
	}
	xd_rollout_record_write(rec, &text);
	cmp.result = ETCDSERVERPB__COMPARE__COMPARE_RESULT__Equal;
	cmp.target = ETCDSERVERPB__COMPARE__COMPARE_TARGET__Mod;
	cmp.key.data = (uint8_t *)b->record_key;
	cmp.key.len = strlen(b->record_key);
	cmp.target_union_case = ETCDSERVERPB__COMPARE__TARGET_UNION_MOD_REVISION;
	cmp.mod_revision = expect;
	put.key = cmp.key;
	put.value.data = text.data;
	put.value.len = text.len;
	on_ok.request_case = ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_PUT;
	on_ok.request_put = &put;
	get.key = cmp.key;
	on_no.request_case = ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_RANGE;
	on_no.request_range = &get;
	txn.n_compare = 1;
	txn.compare = cmps;
	txn.n_success = 1;
	txn.success = ok_ops;
	txn.n_failure = 1;
	txn.failure = no_ops;
	if (xd_etcd_call(b->e, XD_ETCD_TXN_METHOD, &txn.base,
			 &etcdserverpb__txn_response__descriptor, written, b,
			 why, sizeof(why)) != 0)
		xd_fleet__written(f, false, NULL, 0, why);
	xd_buf_free(&text);
}

/* ---------------- the report: a Put under the lease ---------------- */

static void schedule_put(struct etcd_be *b);

static void on_pub(uv_timer_t *t)
{
	schedule_put(t->data);
}

static void put_done(void *arg, const ProtobufCMessage *m, const char *why)
{
	struct etcd_be *b = arg;

	b->putting = false;
	b->last_put = uv_now(b->f->loop);
	if (m == NULL) {
		if (!b->put_failing)
			xd_warn("rollout: writing this replica's report failed: %s; trying again",
				why);
		b->put_failing = true;
		uv_timer_start(&b->pub, on_pub, XD_ETCD_LEASE_RETRY_MS, 0);
		return;
	}
	b->put_failing = false;
	b->written.len = 0;
	xd_buf_append(&b->written, b->sending.data, b->sending.len);
	schedule_put(b);
}

static void schedule_put(struct etcd_be *b)
{
	int64_t lease = b->lease != NULL ? xd_etcd_lease_id(b->lease) : 0;
	Etcdserverpb__PutRequest put = ETCDSERVERPB__PUT_REQUEST__INIT;
	uint64_t now, since;
	char *key, why[512];

	if (b->stopped || lease == 0 || b->putting || b->want.len == 0 ||
	    uv_is_active((uv_handle_t *)&b->pub))
		return;
	if (lease == b->written_lease && b->want.len == b->written.len &&
	    memcmp(b->want.data, b->written.data, b->want.len) == 0)
		return;
	now = uv_now(b->f->loop);
	since = now - b->last_put;
	if (b->last_put != 0 && since < XD_FLEET_PUBLISH_MS) {
		uv_timer_start(&b->pub, on_pub, XD_FLEET_PUBLISH_MS - since, 0);
		return;
	}
	key = xd_asprintf("%s%s%s", b->own_prefix, XD_FLEET_REPORTS_DIR,
			  b->report_id);
	put.key.data = (uint8_t *)key;
	put.key.len = strlen(key);
	put.value.data = b->want.data;
	put.value.len = b->want.len;
	put.lease = lease;
	if (xd_etcd_call(b->e, XD_ETCD_PUT_METHOD, &put.base,
			 &etcdserverpb__put_response__descriptor, put_done, b,
			 why, sizeof(why)) == 0) {
		b->putting = true;
		b->sending.len = 0;
		xd_buf_append(&b->sending, b->want.data, b->want.len);
		b->written_lease = lease;
	} else {
		uv_timer_start(&b->pub, on_pub, XD_ETCD_LEASE_RETRY_MS, 0);
	}
	free(key);
}

static void be_publish(struct xd_fleet *f, const uint8_t *text, size_t len)
{
	struct etcd_be *b = be_of(f);

	b->want.len = 0;
	xd_buf_append(&b->want, text, len);
	schedule_put(b);
}

static void lease_changed(void *arg, int64_t id)
{
	struct etcd_be *b = arg;

	free(b->report_id);
	b->report_id = id != 0 ? xd_asprintf("%016" PRIx64, (uint64_t)id) : NULL;
	b->written.len = 0;
	b->written_lease = 0;
	if (id != 0)
		xd_info("rollout: this replica ('%s') reports under '%s%s%s'",
			b->f->replica, b->own_prefix, XD_FLEET_REPORTS_DIR,
			b->report_id);
	schedule_put(b);
	/* reachable or not: the rollout looks again */
	xd_fleet__poke(b->f);
}

/* ---------------- the rest ---------------- */

static bool be_reachable(const struct xd_fleet *f)
{
	const struct etcd_be *b = be_of(f);

	return b->lease != NULL && xd_etcd_lease_id(b->lease) != 0;
}

static const char *be_self_id(const struct xd_fleet *f)
{
	const struct etcd_be *b = be_of(f);

	return b->report_id != NULL ? b->report_id : "";
}

static void be_stop(struct xd_fleet *f)
{
	struct etcd_be *b = be_of(f);

	b->stopped = true;
	if (b->e != NULL)
		xd_etcd_forget(b->e, b);
	xd_etcd_lease_stop(b->lease);
	b->lease = NULL;
	uv_close((uv_handle_t *)&b->pub, NULL);
}

static void be_free(struct xd_fleet *f)
{
	struct etcd_be *b = be_of(f);

	free(b->record_key);
	free(b->own_prefix);
	free(b->report_id);
	xd_buf_free(&b->want);
	xd_buf_free(&b->written);
	xd_buf_free(&b->sending);
	free(b);
}

static const struct xd_fleet_backend etcd_backend = {
	be_write, be_publish, be_reachable, be_self_id, be_stop, be_free,
};

struct xd_fleet *xd_fleet_new_etcd(uv_loop_t *loop, const struct xd_config *cfg,
				   const char *replica, struct xd_etcd_own *own)
{
	struct xd_fleet *f = xd_calloc(1, sizeof(*f));
	struct etcd_be *b = xd_calloc(1, sizeof(*b));
	char *where;

	XD_ASSERT_LOOP();
	b->f = f;
	b->own_prefix = xd_asprintf("%s%s", cfg->etcd.prefix, XD_ETCD_OWN_DIR);
	b->record_key = xd_asprintf("%s%s", b->own_prefix, XD_FLEET_RECORD_NAME);
	uv_timer_init(loop, &b->pub);
	b->pub.data = b;
	where = xd_asprintf("etcd key '%s'", b->record_key);
	xd_fleet__init(f, loop, cfg, replica, &etcd_backend, where, true);
	free(where);
	f->be_state = b;
	own->read = own_read;
	own->changed = own_changed;
	own->anchor = own_anchor;
	own->arg = b;
	return f;
}

void xd_fleet_attach_etcd(struct xd_fleet *f, struct xd_etcd *e)
{
	struct etcd_be *b = be_of(f);

	XD_ASSERT_LOOP();
	XD_ASSERT(b->e == NULL);
	b->e = e;
	b->lease = xd_etcd_lease_start(f->loop, e, f->cfg->etcd.lease_ttl_ms,
				       lease_changed, b);
}
