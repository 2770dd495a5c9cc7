/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl push DIR: a snapshot directory checked as `xdsd --check`
 * checks it (snapshot/loader.h, the same code; with --envoy PATH, by
 * that Envoy too, envoy/verdict.h), then written to the
 * etcd prefix the xdsd replicas read (`source: etcd`) in one
 * transaction: a put of every snapshot file as <prefix><name>, and a
 * delete of every other key under the prefix, so that the prefix holds
 * exactly the directory. Replicas see one change, at one revision, and
 * reload once. A directory with any error writes nothing.
 *
 * The transaction holds only if no key under the prefix changed since
 * it was read (a compare of every key's mod revision): a push racing
 * another reads again, up to PUSH_TRIES times. xdsd's own keys under
 * the prefix ("<prefix>.xdsd/", etcd/etcd.h: the rollout's record and
 * the replicas' reports, which the replicas write as they serve) are
 * neither compared nor deleted.
 *
 * The calls are gRPC core's, made synchronous: each on a completion
 * queue of its own that this thread plucks; the call's deadline
 * (--timeout) bounds the wait. The etcd endpoints are tried in turn
 * until one answers.
 *
 * Settings: the command line's, else with -c those of xdsd.yaml's
 * `etcd:` section and `schema`, else the defaults (127.0.0.1:2379,
 * /xdsd/snapshots/, plaintext).
 */
#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "etcd/kv.pb-c.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/etcd.h"
#include "etcd/wire.h"
#include "schema/schema.h"
#include "snapshot/loader.h"
#include "util/address.h"
#include "util/clock.h"
#include "util/xalloc.h"
#include "rollout/record.h"
#include "xdsctl/ctl.h"
#include "xdsctl/push.h"
#include "xdsctl/local.h"

#define DEFAULT_ENDPOINT "127.0.0.1:2379"
/* reads and transactions when the prefix keeps changing under them */
#define PUSH_TRIES 3

/* ---------------- one synchronous call ---------------- */

int xc_push_unary(const struct push *p, grpc_channel *ch, const char *method,
		 const ProtobufCMessage *req,
		 const ProtobufCMessageDescriptor *d, ProtobufCMessage **resp,
		 char *why, size_t len)
{
	grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
	gpr_timespec deadline = gpr_time_add(
		gpr_now(GPR_CLOCK_MONOTONIC),
		gpr_time_from_millis(p->o->timeout_ms, GPR_TIMESPAN));
	grpc_call *call = grpc_channel_create_call(
		ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
		grpc_slice_from_static_string(method), NULL, deadline, NULL);
	grpc_metadata_array head, trailing;
	grpc_byte_buffer *recv = NULL;
	grpc_status_code status = GRPC_STATUS_UNKNOWN;
	grpc_slice details = grpc_empty_slice();
	grpc_event ev;
	grpc_op ops[6];
	grpc_call_error err;
	int tag, rc = XC_OK;

	grpc_metadata_array_init(&head);
	grpc_metadata_array_init(&trailing);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = xd_etcd_pack(req);
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &head;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = &recv;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &trailing;
	ops[5].data.recv_status_on_client.status = &status;
	ops[5].data.recv_status_on_client.status_details = &details;
	err = grpc_call_start_batch(call, ops, 6, &tag, NULL);
	/* only misuse makes it refuse */
	XD_ASSERT_INFO(err == GRPC_CALL_OK, "etcd %s: batch error %d", method, err);
	/* the call's deadline ends it, so this wait ends too */
	ev = grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME),
					 NULL);
	XD_ASSERT_INFO(ev.type == GRPC_OP_COMPLETE && ev.tag == &tag,
		       "etcd %s: event %d", method, (int)ev.type);
	grpc_byte_buffer_destroy(ops[1].data.send_message.send_message);
	*resp = NULL;
	if (status == GRPC_STATUS_OK) {
		*resp = xd_etcd_unpack(d, recv);
		recv = NULL;
		if (*resp == NULL) {
			snprintf(why, len, "an answer that does not parse");
			rc = XC_UNREACHABLE;
		}
	} else {
		xd_etcd_status_text(status, details, why, len);
		rc = status == GRPC_STATUS_UNAVAILABLE ||
				     status == GRPC_STATUS_DEADLINE_EXCEEDED ?
			     XC_UNREACHABLE :
			     XC_FAILED;
	}
	grpc_byte_buffer_destroy(recv);
	grpc_slice_unref(details);
	grpc_metadata_array_destroy(&head);
	grpc_metadata_array_destroy(&trailing);
	grpc_call_unref(call);
	grpc_completion_queue_shutdown(cq);
	/* nothing else is on the queue: the pluck sees it shut down */
	ev = grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME),
					 NULL);
	XD_ASSERT(ev.type == GRPC_QUEUE_SHUTDOWN);
	grpc_completion_queue_destroy(cq);
	return rc;
}

/* ---------------- the transaction ---------------- */

static bool pushed(const struct push *p, const ProtobufCBinaryData *key)
{
	for (size_t i = 0; i < p->nputs; i++)
		if (strlen(p->puts[i].key) == key->len &&
		    memcmp(p->puts[i].key, key->data, key->len) == 0)
			return true;
	return false;
}

bool xc_push_own_key(const struct push *p, const ProtobufCBinaryData *key)
{
	size_t plen = strlen(p->prefix), olen = strlen(XD_ETCD_OWN_DIR);

	return key->len >= plen + olen &&
	       memcmp(key->data, p->prefix, plen) == 0 &&
	       memcmp(key->data + plen, XD_ETCD_OWN_DIR, olen) == 0;
}

/* `cmp`: no key of [key, end) changed after `revision`. */
static void unchanged_since(Etcdserverpb__Compare *cmp,
			    const ProtobufCBinaryData *key,
			    const ProtobufCBinaryData *end, int64_t revision)
{
	etcdserverpb__compare__init(cmp);
	cmp->result = ETCDSERVERPB__COMPARE__COMPARE_RESULT__Less;
	cmp->target = ETCDSERVERPB__COMPARE__COMPARE_TARGET__Mod;
	cmp->key = *key;
	cmp->range_end = *end;
	cmp->target_union_case = ETCDSERVERPB__COMPARE__TARGET_UNION_MOD_REVISION;
	cmp->mod_revision = revision + 1;
}

/* The Txn of every put, and of a delete of each key of `now` (the
 * prefix's keys at its revision) that no file gives; held only if no
 * key under the prefix but xdsd's own ([key, own) and [own_end, end))
 * changed after that revision. With --now, the rollout's record too,
 * promoted, in the same revision as the change. Its ops point into
 * `p`, `now` and the arrays given (puts: one more than the files),
 * which must outlive it. */
static void build_txn(const struct push *p, const Etcdserverpb__RangeResponse *now,
		      const ProtobufCBinaryData *key, const ProtobufCBinaryData *own,
		      const ProtobufCBinaryData *own_end,
		      const ProtobufCBinaryData *end,
		      Etcdserverpb__TxnRequest *txn, Etcdserverpb__Compare *cmp,
		      Etcdserverpb__RequestOp *ops, Etcdserverpb__PutRequest *puts,
		      Etcdserverpb__DeleteRangeRequest *dels, size_t *ndeleted)
{
	size_t n = 0;

	unchanged_since(&cmp[0], key, own, now->header->revision);
	unchanged_since(&cmp[1], own_end, end, now->header->revision);
	for (size_t i = 0; i < p->nputs; i++, n++) {
		etcdserverpb__put_request__init(&puts[i]);
		puts[i].key.data = (uint8_t *)p->puts[i].key;
		puts[i].key.len = strlen(p->puts[i].key);
		puts[i].value.data = (uint8_t *)p->puts[i].text;
		puts[i].value.len = p->puts[i].len;
		etcdserverpb__request_op__init(&ops[n]);
		ops[n].request_case = ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_PUT;
		ops[n].request_put = &puts[i];
	}
	if (p->record_key != NULL) {
		Etcdserverpb__PutRequest *r = &puts[p->nputs];

		etcdserverpb__put_request__init(r);
		r->key.data = (uint8_t *)p->record_key;
		r->key.len = strlen(p->record_key);
		r->value.data = p->record.data;
		r->value.len = p->record.len;
		etcdserverpb__request_op__init(&ops[n]);
		ops[n].request_case = ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_PUT;
		ops[n].request_put = r;
		n++;
	}
	*ndeleted = 0;
	for (size_t i = 0; i < now->n_kvs; i++) {
		Etcdserverpb__DeleteRangeRequest *del = &dels[*ndeleted];

		if (pushed(p, &now->kvs[i]->key) || xc_push_own_key(p, &now->kvs[i]->key))
			continue;
		etcdserverpb__delete_range_request__init(del);
		del->key = now->kvs[i]->key;
		etcdserverpb__request_op__init(&ops[n]);
		ops[n].request_case = ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE;
		ops[n].request_delete_range = del;
		n++;
		(*ndeleted)++;
	}
	txn->n_compare = 2;
	txn->n_success = n;
}

/*
 * One try on `ch`: the prefix's keys read, then the transaction.
 * XC_OK (*revision set), XC_UNREACHABLE or XC_FAILED with why, or -1:
 * the prefix changed in between.
 */
static int try_push(const struct push *p, grpc_channel *ch, int64_t *revision,
		    size_t *ndeleted, char *why, size_t len)
{
	Etcdserverpb__RangeRequest range = ETCDSERVERPB__RANGE_REQUEST__INIT;
	Etcdserverpb__TxnRequest txn = ETCDSERVERPB__TXN_REQUEST__INIT;
	Etcdserverpb__RangeResponse *now;
	Etcdserverpb__TxnResponse *done;
	ProtobufCBinaryData key, end, own, own_end;
	Etcdserverpb__Compare cmp[2], *cmps[2] = {&cmp[0], &cmp[1]};
	char *own_text;
	Etcdserverpb__RequestOp *ops, **opp;
	Etcdserverpb__PutRequest *puts;
	Etcdserverpb__DeleteRangeRequest *dels;
	size_t nops;
	int rc;

	key.data = (uint8_t *)(void *)p->prefix;
	key.len = strlen(p->prefix);
	end.data = (uint8_t *)xd_etcd_range_end(p->prefix, &end.len);
	own_text = xd_asprintf("%s%s", p->prefix, XD_ETCD_OWN_DIR);
	own.data = (uint8_t *)own_text;
	own.len = strlen(own_text);
	own_end.data = (uint8_t *)xd_etcd_range_end(own_text, &own_end.len);
	range.key = key;
	range.range_end = end;
	range.keys_only = true;
	rc = xc_push_unary(p, ch, XD_ETCD_RANGE_METHOD, &range.base,
		   &etcdserverpb__range_response__descriptor,
		   (ProtobufCMessage **)&now, why, len);
	if (rc == XC_OK && now->header == NULL) {
		snprintf(why, len, "a Range answer without its header");
		protobuf_c_message_free_unpacked(&now->base, NULL);
		rc = XC_UNREACHABLE;
	}
	if (rc != XC_OK) {
		free(end.data);
		free(own_text);
		free(own_end.data);
		return rc;
	}
	nops = p->nputs + now->n_kvs + 1;
	ops = xd_calloc(nops, sizeof(*ops));
	opp = xd_calloc(nops, sizeof(*opp));
	puts = xd_calloc(p->nputs + 1, sizeof(*puts));
	dels = xd_calloc(now->n_kvs + 1, sizeof(*dels));
	build_txn(p, now, &key, &own, &own_end, &end, &txn, cmp, ops, puts, dels,
		  ndeleted);
	for (size_t i = 0; i < txn.n_success; i++)
		opp[i] = &ops[i];
	txn.compare = cmps;
	txn.success = opp;
	rc = xc_push_unary(p, ch, XD_ETCD_TXN_METHOD, &txn.base,
		   &etcdserverpb__txn_response__descriptor,
		   (ProtobufCMessage **)&done, why, len);
	if (rc == XC_OK) {
		if (!done->succeeded)
			rc = -1;
		else if (done->header != NULL)
			*revision = done->header->revision;
		protobuf_c_message_free_unpacked(&done->base, NULL);
	}
	protobuf_c_message_free_unpacked(&now->base, NULL);
	free(ops);
	free(opp);
	free(puts);
	free(dels);
	free(end.data);
	free(own_text);
	free(own_end.data);
	return rc;
}

grpc_channel *xc_push_channel(const struct push *p, const char *endpoint)
{
	grpc_arg args[] = {
		{.type = GRPC_ARG_INTEGER,
		 .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
		 .value.integer = XC_PUSH_MAX_RESPONSE},
	};
	grpc_channel_args ca = {sizeof(args) / sizeof(args[0]), args};

	return grpc_channel_create(endpoint, p->creds, &ca);
}

/* The push to one endpoint: tried again while the prefix changes. */
static int push_to(const struct push *p, const char *endpoint)
{
	grpc_channel *ch = xc_push_channel(p, endpoint);
	int64_t revision = 0;
	size_t deleted = 0;
	char why[512];
	int rc = -1;

	for (int i = 0; i < PUSH_TRIES && rc == -1; i++)
		rc = try_push(p, ch, &revision, &deleted, why, sizeof(why));
	grpc_channel_destroy(ch);
	if (rc == XC_OK)
		printf("pushed %zu file%s to %s under '%s', %zu key%s deleted: revision %lld\n",
		       p->nputs, p->nputs == 1 ? "" : "s", endpoint, p->prefix,
		       deleted, deleted == 1 ? "" : "s", (long long)revision);
	if (rc == XC_OK && p->o->now)
		printf("with --now: every replica serves it to every node at once, without canaries or a bake (rollout %lld, %s)\n",
		       (long long)revision, p->print);
	else if (rc == -1)
		xc_error("etcd %s: the keys under '%s' changed while pushing, %d times; nothing written",
			 endpoint, p->prefix, PUSH_TRIES);
	else
		xc_error("etcd %s: %s%s", endpoint, why,
			 rc == XC_FAILED ? "; nothing written" : "");
	return rc == -1 ? XC_FAILED : rc;
}

/* ---------------- settings and the directory ---------------- */

/* Splits "a:1,b:2" (--etcd) into the endpoints. */
static void split_endpoints(struct push *p, const char *list)
{
	char *copy = xd_strdup(list), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t != NULL;
	     t = strtok_r(NULL, ",", &save)) {
		p->split = xd_reallocarray(p->split, p->nsplit + 1,
					   sizeof(*p->split));
		p->split[p->nsplit++] = xd_strdup(t);
	}
	free(copy);
	p->endpoints = p->split;
	p->nendpoints = p->nsplit;
}

/* xdsd.yaml (-c), then the command line over it. XC_OK or XC_USAGE. */
static int settings(struct push *p)
{
	const struct xc_opts *o = p->o;
	const char *list;
	int rc = xc_settings(o, &p->cfg);

	if (rc != XC_OK)
		return rc;
	list = o->etcd;
	if (list == NULL && p->cfg.etcd.nendpoints == 0)
		list = DEFAULT_ENDPOINT;
	if (list == NULL) {
		p->endpoints = p->cfg.etcd.endpoints;
		p->nendpoints = p->cfg.etcd.nendpoints;
	} else {
		split_endpoints(p, list);
		if (p->nendpoints == 0)
			return xc_usage_error("--etcd '%s': no endpoint", list);
	}
	/* the configuration's were checked as it loaded */
	for (size_t i = 0; i < p->nsplit; i++) {
		const char *why = xd_address_error(p->split[i]);

		if (why != NULL || strncmp(p->split[i], "unix:", 5) == 0)
			return xc_usage_error("etcd endpoint '%s': %s", p->split[i],
					      why != NULL ? why : "a host:port address");
	}
	p->prefix = o->prefix != NULL ? o->prefix : p->cfg.etcd.prefix;
	if (p->prefix[0] == '\0')
		return xc_usage_error("--prefix: the empty prefix would be every key of etcd");
	return XC_OK;
}

/* The credentials towards etcd: --cacert/--cert/--key, else the
 * configuration's etcd.tls. */
static int credentials(struct push *p)
{
	const struct xc_opts *o = p->o;
	bool given = o->cacert != NULL || o->cert != NULL || o->key != NULL;
	struct xd_etcd_tls_files f = {
		given ? o->cacert : p->cfg.etcd.tls.ca,
		given ? o->cert : p->cfg.etcd.tls.cert,
		given ? o->key : p->cfg.etcd.tls.key,
		given ? "--cacert" : "etcd.tls.ca",
		given ? "--cert" : "etcd.tls.cert",
		given ? "--key" : "etcd.tls.key",
	};
	struct xd_diag diag = XD_DIAG_INIT;

	p->creds = xd_etcd_credentials(&f, &diag);
	if (p->creds == NULL) {
		for (size_t i = 0; i < diag.count; i++)
			xc_error("%s", diag.msgs[i]);
		xd_diag_clear(&diag);
		return XC_USAGE;
	}
	return XC_OK;
}

/* The directory checked as `xdsd --check` does; its files become the
 * puts. XC_OK, or XC_USAGE with every error said (nothing to write). */
static int check_dir(struct push *p, const char *dir, struct xd_snapkey **keys,
		     size_t *nkeys)
{
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_schema *schema = xd_schema_load(p->cfg.schema, &diag);
	size_t skip = strlen(dir) + 1, total;
	struct xd_load load;

	p->schema = schema;
	if (schema == NULL) {
		xd_diag_print(&diag, stderr);
		xd_diag_clear(&diag);
		xc_error("cannot load the Envoy API schema %s (--schema, or 'schema' in xdsd.yaml with -c); nothing written",
			 p->cfg.schema);
		return XC_FAILED;
	}
	xd_load_dir(schema, dir, NULL, 0, &load);
	total = xd_diag_total(&load.diag);
	if (load.rc != 0 || total > 0) {
		xd_diag_print(&load.diag, stderr);
		xc_error("%s: %zu error%s in the snapshots; nothing written to etcd",
			 dir, total, total == 1 ? "" : "s");
		xd_load_free(&load);
		return XC_USAGE;
	}
	/* as --check warns: with xdsd.yaml (-c), under its TLS settings */
	xd_load_warn_open(&load,
			  p->o->config == NULL ? XD_OPEN_UNKNOWN :
						 xd_open_reach_of(&p->cfg),
			  stderr);
	if (p->o->envoy != NULL &&
	    xc_envoy_judge(schema, &load, dir, p->o->envoy,
			   "nothing written to etcd") != XC_OK) {
		xd_load_free(&load);
		return XC_USAGE; /* p->schema is freed with the rest */
	}
	/* a good load keeps the very texts it checked: those are written */
	*keys = load.keys;
	*nkeys = load.nkeys;
	load.keys = NULL;
	load.nkeys = 0;
	/* the set as the replicas will load it: its print names it */
	p->snaps = xd_load_take(&load, &p->nsnaps);
	p->files = load.files;
	xd_rollout_fingerprint(p->snaps, p->nsnaps, p->print);
	xd_load_free(&load);
	for (size_t i = 0; i < *nkeys; i++) {
		for (size_t j = 0; j < (*keys)[i].nfiles; j++) {
			const struct xd_snapfile *f = &(*keys)[i].files[j];

			/* the reader names each file DIR/NAME */
			XD_ASSERT_INFO(strncmp(f->path, dir, skip - 1) == 0 &&
					       f->path[skip - 1] == '/',
				       "push %s: file %s", dir, f->path);
			p->puts = xd_reallocarray(p->puts, p->nputs + 1,
						  sizeof(*p->puts));
			p->puts[p->nputs].key = xd_asprintf("%s%s", p->prefix,
							    f->path + skip);
			p->puts[p->nputs].text = f->text;
			p->puts[p->nputs].len = f->len;
			p->nputs++;
		}
	}
	return XC_OK;
}

/* --now: the rollout's record that the replicas serve the change by,
 * promoted, its revision (its id, 0 here) the transaction's. */
static void now_record(struct push *p)
{
	struct xd_rollout_record rec = {0};
	char host[256] = "", who[600], why[800];
	const char *user = getenv("USER");

	gethostname(host, sizeof(host) - 1);
	snprintf(who, sizeof(who), "%s@%s", user != NULL ? user : "?", host);
	rec.state = XD_ROLLOUT_PROMOTED;
	memcpy(rec.candidate, p->print, sizeof(rec.candidate));
	rec.now = true;
	rec.started_ms = rec.ended_ms = xd_wall_ms();
	snprintf(why, sizeof(why),
		 "pushed with --now by %s: every node at once, without canaries or a bake",
		 who);
	xd_rollout_text_set(&rec.trigger, "xdsctl push --now");
	xd_rollout_text_set(&rec.by, who);
	xd_rollout_text_set(&rec.reason, why);
	xd_rollout_record_write(&rec, &p->record);
	xd_rollout_record_clear(&rec);
	p->record_key = xd_asprintf("%s%s%s", p->prefix, XD_ETCD_OWN_DIR, "rollout");
}

int xc_push(const struct xc_opts *o, int argc, char **args)
{
	struct push p = {.o = o};
	struct xd_snapkey *keys = NULL;
	size_t nkeys = 0, dlen;
	char *dir;
	int rc;

	if (argc != 1)
		return xc_usage_error("push takes one snapshot directory");
	if (o->now && o->dry_run)
		return xc_usage_error("push: --now or --dry-run, not both");
	dir = xd_strdup(args[0]);
	/* "dir/" and "dir" are the same directory */
	for (dlen = strlen(dir); dlen > 1 && dir[dlen - 1] == '/'; dlen--)
		dir[dlen - 1] = '\0';
	rc = settings(&p);
	if (rc == XC_OK)
		rc = check_dir(&p, dir, &keys, &nkeys);
	if (rc == XC_OK && o->now)
		now_record(&p);
	if (rc == XC_OK) {
		grpc_init();
		rc = credentials(&p);
		if (rc == XC_OK && o->dry_run)
			rc = xc_push_preview(&p, dir);
		/* the endpoints in turn, until one answers */
		for (size_t i = 0; rc == XC_OK && !o->dry_run && i < p.nendpoints; i++) {
			rc = push_to(&p, p.endpoints[i]);
			if (rc != XC_UNREACHABLE)
				break;
			if (i + 1 < p.nendpoints)
				rc = XC_OK;
		}
		if (p.creds != NULL)
			grpc_channel_credentials_release(p.creds);
		grpc_shutdown();
	}
	for (size_t i = 0; i < p.nputs; i++)
		free(p.puts[i].key);
	free(p.puts);
	for (size_t i = 0; i < p.nsplit; i++)
		free(p.split[i]);
	free(p.split);
	for (size_t i = 0; i < p.nsnaps; i++)
		xd_snapshot_unref(p.snaps[i]);
	free(p.snaps);
	xd_schema_free(p.schema);
	free(p.record_key);
	xd_buf_free(&p.record);
	xd_snapdir_free(keys, nkeys);
	xd_config_free(&p.cfg);
	free(dir);
	return rc;
}
