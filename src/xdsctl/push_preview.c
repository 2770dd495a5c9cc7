/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdsctl push --dry-run DIR: what the push would change from what etcd
 * holds under the prefix now, and whom it would reach on every replica,
 * writing nothing.
 *
 * The prefix is read (one Range, keys and values, at one revision); its
 * snapshot keys are loaded as a replica loads them (the same loader);
 * the diff of that into the directory (snapshot/diff.h) is printed as
 * `xdsctl diff` prints a dry run. Whom each change reaches is what the
 * replicas report under <prefix>.xdsd/replicas/ (rollout/record.h:
 * their connected nodes and canaries per node key; a replica reports
 * with `rollout:`): the nodes of a key, and for the default snapshot
 * those of node keys with no snapshot of their own before or after.
 * The rollout's record says what the push would meet: a rollout under
 * way is replaced by it.
 */
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/reloads.h"
#include "cache/cache.h"
#include "etcd/etcd.h"
#include "etcd/kv.pb-c.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/wire.h"
#include "snapshot/diff.h"
#include "snapshot/files.h"
#include "snapshot/loader.h"
#include "util/jsonw.h"
#include "util/xalloc.h"
#include "xdsctl/push.h"
#include "xdsctl/show.h"

/* What etcd holds under the prefix. */
struct held {
	int64_t revision;
	struct xd_snaptext *texts;
	size_t ntexts;
	struct xd_rollout_record record;
	bool has_record;
	struct xd_rollout_report *reports;
	size_t nreports;
};

static void held_free(struct held *h)
{
	free(h->texts);
	if (h->has_record)
		xd_rollout_record_clear(&h->record);
	for (size_t i = 0; i < h->nreports; i++)
		xd_rollout_report_clear(&h->reports[i]);
	free(h->reports);
}

/* One key of the Range: a snapshot file, the record, a report, or
 * nothing a replica reads. Its bytes stay in `r`. */
static void take(const struct push *p, struct held *h, const Mvccpb__KeyValue *kv,
		 char **names, size_t *nnames)
{
	size_t plen = strlen(p->prefix), olen = strlen(XD_ETCD_OWN_DIR);
	char *name = xd_strndup((const char *)kv->key.data + plen, kv->key.len - plen);
	char why[256];

	if (xc_push_own_key(p, &kv->key)) {
		const char *own = name + olen;

		if (strcmp(own, "rollout") == 0 && !h->has_record &&
		    xd_rollout_record_read(&h->record, kv->value.data, kv->value.len,
					   why, sizeof(why)) == 0) {
			if (h->record.id == 0)
				h->record.id = (uint64_t)kv->mod_revision;
			h->has_record = true;
		} else if (strncmp(own, "replicas/", 9) == 0) {
			h->reports = xd_reallocarray(h->reports, h->nreports + 1,
						     sizeof(*h->reports));
			if (xd_rollout_report_read(&h->reports[h->nreports],
						   kv->value.data, kv->value.len,
						   why, sizeof(why)) == 0)
				h->nreports++;
		}
		free(name);
		return;
	}
	if (memchr(name, '\0', kv->key.len - plen) != NULL ||
	    !xd_snapshot_name_counts(name)) {
		free(name);
		return;
	}
	h->texts = xd_reallocarray(h->texts, h->ntexts + 1, sizeof(*h->texts));
	names[(*nnames)++] = name;
	/* errors name the etcd key, as a replica's do */
	names[(*nnames)++] = xd_strndup((const char *)kv->key.data, kv->key.len);
	h->texts[h->ntexts++] = (struct xd_snaptext){
		.name = name,
		.path = names[*nnames - 1],
		.text = (const char *)kv->value.data,
		.len = kv->value.len,
	};
}

/* The nodes (`canaries`: the canaries) every replica reports that the
 * change of diff key `key` reaches. */
static size_t reached(const struct held *h, const char *key, bool canaries,
		      struct xd_snapshot *const *before, size_t nb,
		      struct xd_snapshot *const *after, size_t na)
{
	bool def = strcmp(key, XD_CACHE_DEFAULT_KEY) == 0;
	size_t n = 0;

	for (size_t r = 0; r < h->nreports; r++) {
		const struct xd_rollout_report *rep = &h->reports[r];

		for (size_t i = 0; i < rep->nnodes; i++) {
			const char *k = rep->nodes[i].key;
			bool counts = def ? xd_load_find(before, nb, k) == NULL &&
						    xd_load_find(after, na, k) == NULL :
					    strcmp(k, key) == 0;

			if (counts)
				n += canaries ? rep->nodes[i].canaries :
						rep->nodes[i].nodes;
		}
	}
	return n;
}

/* What the push would meet: the replicas, and the rollout of the
 * record. */
static void say_fleet(const struct push *p, const struct held *h,
		      const char *endpoint)
{
	printf("against revision %lld of etcd %s under '%s'; ",
	       (long long)h->revision, endpoint, p->prefix);
	if (h->nreports == 0) {
		printf("no replica reports there (each does with 'rollout:'): whom it reaches is not known\n");
	} else {
		printf("%zu replica%s report%s there:", h->nreports,
		       h->nreports == 1 ? "" : "s", h->nreports == 1 ? "s" : "");
		for (size_t i = 0; i < h->nreports; i++) {
			char *name = xc_safe(h->reports[i].replica,
					     strlen(h->reports[i].replica));

			printf("%s %s", i > 0 ? "," : "", name);
			free(name);
		}
		printf("\n");
	}
	if (h->has_record && xd_rollout_state_active(h->record.state))
		printf("rollout %llu is under way (%s): the push replaces it\n",
		       (unsigned long long)h->record.id,
		       xd_rollout_state_name(h->record.state));
	if (h->has_record && strcmp(h->record.candidate, p->print) == 0 &&
	    h->record.state >= XD_ROLLOUT_FAILED)
		printf("these snapshots are those rollout %llu %s: pushed again, they start a new rollout\n",
		       (unsigned long long)h->record.id,
		       xd_rollout_state_name(h->record.state));
}

/* The Range of the prefix from `endpoint`: XC_OK with `*resp`. */
static int read_prefix(const struct push *p, const char *endpoint,
		       Etcdserverpb__RangeResponse **resp)
{
	Etcdserverpb__RangeRequest range = ETCDSERVERPB__RANGE_REQUEST__INIT;
	grpc_channel *ch = xc_push_channel(p, endpoint);
	char why[512];
	int rc;

	range.key.data = (uint8_t *)(void *)p->prefix;
	range.key.len = strlen(p->prefix);
	range.range_end.data = (uint8_t *)xd_etcd_range_end(p->prefix,
							      &range.range_end.len);
	rc = xc_push_unary(p, ch, XD_ETCD_RANGE_METHOD, &range.base,
			   &etcdserverpb__range_response__descriptor,
			   (ProtobufCMessage **)resp, why, sizeof(why));
	if (rc == XC_OK && (*resp)->header == NULL) {
		protobuf_c_message_free_unpacked(&(*resp)->base, NULL);
		snprintf(why, sizeof(why), "a Range answer without its header");
		rc = XC_UNREACHABLE;
	}
	if (rc != XC_OK)
		xc_error("etcd %s: %s", endpoint, why);
	free(range.range_end.data);
	grpc_channel_destroy(ch);
	return rc;
}

/* The dry run against what `resp` holds. */
static int preview(struct push *p, const char *endpoint,
		   const Etcdserverpb__RangeResponse *resp)
{
	struct held h = {.revision = resp->header->revision};
	char **names = xd_calloc(2 * resp->n_kvs + 1, sizeof(*names));
	size_t nnames = 0, nkeys = 0, nb = 0;
	struct xd_snapkey *keys = NULL;
	struct xd_diag diag = XD_DIAG_INIT;
	struct xd_load load;
	struct xd_snapshot **before = NULL;
	struct xd_reload_record rec = {0};
	struct xd_reach reach = {0};
	struct xd_buf out = XD_BUF_INIT;
	struct xd_jw w;
	json_t *j;
	int rc;

	for (size_t i = 0; i < resp->n_kvs; i++)
		take(p, &h, resp->kvs[i], names, &nnames);
	xd_snapkeys_from_texts(h.texts, h.ntexts, &keys, &nkeys, &diag);
	xd_load_keys(p->schema, keys, nkeys, &diag, NULL, 0, &load);
	if (load.rc == 0) {
		before = xd_load_take(&load, &nb);
	} else if (h.ntexts > 0) {
		xd_diag_print(&load.diag, stderr);
		xc_error("what etcd holds under '%s' does not load (%zu error%s): the diff is from nothing",
			 p->prefix, xd_diag_total(&load.diag),
			 xd_diag_total(&load.diag) == 1 ? "" : "s");
	}
	xd_load_free(&load);
	rec.ok = true;
	rec.dry_run = true;
	rec.trigger = "push --dry-run";
	rec.snapshots = p->nsnaps;
	rec.files = p->files;
	rec.revision = h.revision;
	rec.diff = xd_diff_new(before, nb, p->snaps, p->nsnaps, p->schema);
	rec.changed = rec.diff->nkeys;
	reach.keys = xd_calloc(rec.diff->nkeys + 1, sizeof(*reach.keys));
	reach.rollout = h.nreports > 0;
	for (size_t r = 0; r < h.nreports; r++)
		for (size_t i = 0; i < h.reports[r].nnodes; i++)
			reach.connected += h.reports[r].nodes[i].nodes;
	for (size_t i = 0; i < rec.diff->nkeys; i++) {
		const char *k = rec.diff->keys[i].key;

		reach.keys[i].nodes = reached(&h, k, false, before, nb, p->snaps,
					      p->nsnaps);
		reach.keys[i].canaries = reached(&h, k, true, before, nb, p->snaps,
						 p->nsnaps);
	}
	xd_jw_init(&w, &out);
	xd_reload_record_reach_json(&w, &rec, &reach);
	j = json_loadb((const char *)out.data, out.len, 0, NULL);
	XD_ASSERT(j != NULL); /* written here */
	if (p->o->json) {
		fwrite(out.data, 1, out.len, stdout);
		putchar('\n');
		rc = rec.changed > 0 ? XC_DIFFERS : XC_OK;
	} else {
		say_fleet(p, &h, endpoint);
		rc = xc_diff_show(j, p->o->verbose);
	}
	json_decref(j);
	xd_buf_free(&out);
	free(reach.keys);
	xd_diff_free(rec.diff);
	for (size_t i = 0; i < nb; i++)
		xd_snapshot_unref(before[i]);
	free(before);
	xd_diag_clear(&diag);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	held_free(&h);
	return rc;
}

int xc_push_preview(struct push *p, const char *dir)
{
	Etcdserverpb__RangeResponse *resp = NULL;
	int rc = XC_UNREACHABLE;

	(void)dir; /* checked, its snapshots in p */
	for (size_t i = 0; i < p->nendpoints && rc == XC_UNREACHABLE; i++) {
		rc = read_prefix(p, p->endpoints[i], &resp);
		if (rc == XC_OK) {
			rc = preview(p, p->endpoints[i], resp);
			protobuf_c_message_free_unpacked(&resp->base, NULL);
			return rc;
		}
	}
	return rc == XC_FAILED ? XC_USAGE : rc;
}
