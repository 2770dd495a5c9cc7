/* SPDX-License-Identifier: Apache-2.0 */
#include "etcd/etcd.h"

#include <grpc/support/time.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etcd/kv.pb-c.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/kvmap.h"
#include "etcd/wire.h"
#include "transport/tag.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/debounce.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/* Where the source is; moved only by move(). */
enum state {
	RANGING,  /* the Range call is under way */
	WATCHING, /* the Watch call is */
	WAITING,  /* neither: the backoff timer runs */
	STOPPED,  /* stopped: what is under way ends, nothing starts */
};

static const char *const state_names[] = {"ranging", "watching", "waiting",
					  "stopped"};

/* One call and the batches of it under way. */
struct call {
	grpc_call *call; /* NULL: none */
	int batches;     /* started and not yet completed */
	grpc_metadata_array md, trailing;
	grpc_status_code status;
	grpc_slice details;
	grpc_byte_buffer *recv;
	bool ended; /* no more messages will arrive */
};

/*
 * The map of the keys read (kvmap.h) and what reading it needs: shared
 * by the source and the load holding a take of it, either of which may
 * end first (references atomic: a load drops its own on the thread
 * pool). The map is the running load's alone.
 */
struct store {
	atomic_uint refs;
	struct xd_kvmap map;
	char *prefix;
};

/* What a reload takes from the source on the loop thread (take()) and
 * reads on the thread pool (read()). */
struct taken {
	struct store *store;
	struct xd_kvchanges changes; /* since the last take */
	char *not_read;              /* why nothing was read yet; NULL: read */
};

/* An own key read in a page of the Range, kept until it is whole. */
struct own_copy {
	char *name;
	uint8_t *value;
	size_t len;
	int64_t mod_revision, lease;
};

static void store_unref(struct store *st)
{
	if (st == NULL ||
	    atomic_fetch_sub_explicit(&st->refs, 1, memory_order_acq_rel) != 1)
		return;
	xd_kvmap_clear(&st->map);
	free(st->prefix);
	free(st);
}

struct xd_etcd {
	uv_loop_t *loop;
	grpc_completion_queue *cq;
	const struct xd_config *cfg;
	struct xd_reloader *reloader;
	/* the owner's, kept up to date; its revision is the map's, the
	 * one the watch resumes from */
	struct xd_etcd_health *health;
	grpc_channel_credentials *creds;
	grpc_channel *channel; /* to the health's endpoint; NULL between
				* tries */
	enum state state;

	/* the prefix as etcd's key range [key, end), for Range and Watch */
	ProtobufCBinaryData key, end;

	struct store *store;
	/* What the next reload takes: the changes since the last take,
	 * each complete (a whole Range, whole revisions). */
	struct xd_kvchanges pending;
	/* A Range under way, page by page at one revision (range_rev, 0
	 * before its first page): the keys read so far, from range_from
	 * on, XD_ETCD_PAGE_KEYS at most a page, fewer when values are
	 * large (page_keys). Moved to `pending` once whole, so that no
	 * reload ever reads half a prefix. */
	struct xd_kvchanges paged;
	int64_t range_rev, range_changed;
	ProtobufCBinaryData range_from;
	uint32_t page_keys;
	size_t pages, range_keys;
	/* The events of a revision that etcd sends in fragments (a large
	 * transaction), until its last fragment: a reload never reads
	 * half a transaction either. */
	struct xd_kvchanges fragments;
	size_t changed;       /* of those, the ones a reload reads */
	int64_t frag_rev;     /* the newest revision among them */
	/* The revision of the newest change to the snapshot keys (not to
	 * xdsd's own, nor to keys no reload reads): of a put or delete
	 * the watch brought, or the newest key of a Range. Never goes
	 * back. */
	int64_t changed_at, frag_changed;
	bool need_range;      /* the map must be read whole again */
	bool loaded;          /* a Range has been read whole */
	/* why the watch is being cancelled (compaction, cancelled by
	 * etcd): said by the retry instead of the call's CANCELLED */
	char cancel_why[256];
	uint64_t backoff_ms;  /* the next wait after a failure */

	struct call range, watch;
	struct xd_tag t_range, t_wsend, t_wstatus, t_wmsg;
	/* the one-message calls of those who write (xd_etcd_call) */
	struct xd_etcd_calls *calls;

	/* xdsd's own keys ("<prefix>.xdsd/"), for `own` (has_own): read
	 * first at start (own_read), at own_rev; the first Range of the
	 * snapshots at `anchor` (own.anchor's, 0: the newest), while
	 * `anchored`; a full Range's own keys until it is whole */
	struct xd_etcd_own own;
	bool has_own, own_read, anchored;
	int64_t own_rev, anchor;
	ProtobufCBinaryData own_key, own_end;
	struct own_copy *own_paged;
	size_t n_own_paged, cap_own_paged;
	/* armed at start for dial_timeout when a last good state may be
	 * kept (state_dir): etcd not read by then, that state is served */
	uv_timer_t retry, fallback;
	struct xd_debounce quiet; /* the reload after changes */
	int open_handles; /* of the timers: freed at 0 once stopped */
};

static void move(struct xd_etcd *e, enum state to, const char *why)
{
	static const bool allowed[4][4] = {
		[RANGING] = {[WATCHING] = true, [WAITING] = true, [STOPPED] = true},
		[WATCHING] = {[WAITING] = true, [RANGING] = true, [STOPPED] = true},
		[WAITING] = {[RANGING] = true, [WATCHING] = true, [STOPPED] = true},
	};

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(allowed[e->state][to], "etcd source: %s -> %s (%s)",
		       state_names[e->state], state_names[to], why);
	xd_debug("etcd: %s -> %s (%s)", state_names[e->state],
		 state_names[to], why);
	e->state = to;
}

static const char *endpoint(const struct xd_etcd *e)
{
	return e->cfg->etcd.endpoints[e->health->endpoint];
}

/* Healthy: read, and watching since the last failure. */
static void set_healthy(struct xd_etcd *e, bool healthy)
{
	if (e->health->healthy == healthy)
		return;
	e->health->healthy = healthy;
	e->health->since_ms = xd_wall_ms();
}

/* ---------------- calls ---------------- */

static void channel_open(struct xd_etcd *e);

/* A call on the channel (opened first if there is none). */
static void call_open(struct xd_etcd *e, struct call *c, const char *method,
		      gpr_timespec deadline)
{
	XD_ASSERT_INFO(c->call == NULL && c->batches == 0,
		       "etcd %s: a call over one still open", method);
	channel_open(e);
	memset(c, 0, sizeof(*c));
	grpc_metadata_array_init(&c->md);
	grpc_metadata_array_init(&c->trailing);
	c->call = grpc_channel_create_call(e->channel, NULL,
					   GRPC_PROPAGATE_DEFAULTS, e->cq,
					   grpc_slice_from_static_string(method),
					   NULL, deadline, NULL);
}

static void call_batch(struct call *c, const grpc_op *ops, size_t n,
		       struct xd_tag *tag)
{
	grpc_call_error err = grpc_call_start_batch(c->call, ops, n, tag, NULL);

	/* only misuse makes it refuse, and the tag would never come */
	XD_ASSERT_INFO(err == GRPC_CALL_OK, "etcd call batch: error %d", err);
	c->batches++;
}

/* Fills `ops[0]` and `ops[1]` to receive the call's initial metadata
 * and, at its end, its status, into `c`. */
static void ops_head_and_status(struct call *c, grpc_op *ops)
{
	ops[0].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[0].data.recv_initial_metadata.recv_initial_metadata = &c->md;
	ops[1].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[1].data.recv_status_on_client.trailing_metadata = &c->trailing;
	ops[1].data.recv_status_on_client.status = &c->status;
	ops[1].data.recv_status_on_client.status_details = &c->details;
}

static void call_close(struct call *c)
{
	XD_ASSERT_INFO(c->batches == 0, "etcd call closed with %d batches",
		       c->batches);
	grpc_metadata_array_destroy(&c->md);
	grpc_metadata_array_destroy(&c->trailing);
	grpc_slice_unref(c->details);
	grpc_byte_buffer_destroy(c->recv);
	grpc_call_unref(c->call);
	memset(c, 0, sizeof(*c));
}

/* ---------------- the sequence ---------------- */

static void start_range(struct xd_etcd *e);
static void start_watch(struct xd_etcd *e);

static void own_paged_clear(struct xd_etcd *e)
{
	for (size_t i = 0; i < e->n_own_paged; i++) {
		free(e->own_paged[i].name);
		free(e->own_paged[i].value);
	}
	e->n_own_paged = 0;
}

static void maybe_free(struct xd_etcd *e)
{
	if (e->state != STOPPED || e->range.call != NULL ||
	    e->watch.call != NULL || e->open_handles > 0 ||
	    !xd_etcd_calls_idle(e->calls))
		return;
	xd_etcd_calls_free(e->calls);
	own_paged_clear(e);
	free(e->own_paged);
	free(e->own_key.data);
	free(e->own_end.data);
	if (e->channel != NULL)
		grpc_channel_destroy(e->channel);
	grpc_channel_credentials_release(e->creds);
	xd_kvchanges_clear(&e->pending);
	xd_kvchanges_clear(&e->paged);
	xd_kvchanges_clear(&e->fragments);
	store_unref(e->store);
	free(e->range_from.data);
	free(e->key.data);
	free(e->end.data);
	free(e);
}

static void channel_open(struct xd_etcd *e)
{
	grpc_arg args[] = {
		{.type = GRPC_ARG_INTEGER,
		 .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
		 .value.integer = (int)XD_ETCD_MAX_RESPONSE},
		/* a lost etcd is noticed within these, not at the next
		 * change it fails to send */
		{.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_KEEPALIVE_TIME_MS,
		 .value.integer = 10000},
		{.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
		 .value.integer = 5000},
	};
	grpc_channel_args ca = {sizeof(args) / sizeof(args[0]), args};

	if (e->channel == NULL)
		e->channel = grpc_channel_create(endpoint(e), e->creds, &ca);
}

int xd_etcd_call(struct xd_etcd *e, const char *method,
		 const ProtobufCMessage *req,
		 const ProtobufCMessageDescriptor *d, xd_etcd_done_fn done,
		 void *arg, char *why, size_t len)
{
	XD_ASSERT_LOOP();
	if (e->state == STOPPED) {
		snprintf(why, len, "etcd: stopping");
		return -1;
	}
	channel_open(e);
	return xd_etcd_calls_start(e->calls, e->channel, method, req, d,
				   e->cfg->etcd.dial_timeout_ms + XD_ETCD_CALL_MS,
				   0, done, arg, why, len);
}

int xd_etcd_call_last(struct xd_etcd *e, const char *method,
		      const ProtobufCMessage *req,
		      const ProtobufCMessageDescriptor *d, xd_etcd_done_fn done,
		      void *arg, char *why, size_t len)
{
	XD_ASSERT_LOOP();
	if (e->state == STOPPED) {
		snprintf(why, len, "etcd: stopped");
		return -1;
	}
	channel_open(e);
	return xd_etcd_calls_start(e->calls, e->channel, method, req, d,
				   XD_ETCD_LAST_CALL_MS, XD_ETCD_CALL_LAST, done,
				   arg, why, len);
}

void xd_etcd_forget(struct xd_etcd *e, void *arg)
{
	XD_ASSERT_LOOP();
	xd_etcd_calls_forget(e->calls, arg);
}

/* The last one-message call is over: once stopped, the source may go. */
static void calls_idle(void *arg)
{
	struct xd_etcd *e = arg;

	if (e->state == STOPPED)
		maybe_free(e);
}

static void on_retry(uv_timer_t *t)
{
	struct xd_etcd *e = t->data;

	if (e->state != WAITING)
		return;
	e->health->reconnects++;
	if (e->need_range)
		start_range(e);
	else
		start_watch(e);
}

/* Whether the reloader serves its last good state (etcd not read yet, or
 * read and refused at start). */
static bool serving_last_good(const struct xd_etcd *e)
{
	const struct xd_laststate *s = xd_reloader_laststate(e->reloader);

	return s != NULL && xd_laststate_info(s)->serving;
}

/* Something failed (`why`, logged): try again after the backoff, on the
 * next endpoint, with a new channel. */
static void schedule_retry(struct xd_etcd *e, const char *what,
			   const char *why)
{
	uint64_t wait = e->backoff_ms;

	XD_ASSERT(e->range.call == NULL && e->watch.call == NULL);
	move(e, WAITING, what);
	snprintf(e->health->last_error, sizeof(e->health->last_error),
		 "%s: %s: %s", endpoint(e), what, why);
	e->health->last_error_ms = xd_wall_ms();
	xd_warn("etcd %s: %s: %s; %s, trying again in %.1f s", endpoint(e),
		what, why,
		e->loaded           ? "still serving what was read before" :
		serving_last_good(e) ? "serving the last good state until then" :
				       "no snapshots yet, not ready",
		(double)wait / 1000);
	if (e->channel != NULL)
		grpc_channel_destroy(e->channel);
	e->channel = NULL;
	e->health->endpoint =
		(e->health->endpoint + 1) % e->cfg->etcd.nendpoints;
	set_healthy(e, false);
	e->backoff_ms = e->backoff_ms * 2 > XD_ETCD_BACKOFF_MAX_MS ?
				XD_ETCD_BACKOFF_MAX_MS :
				e->backoff_ms * 2;
	uv_timer_start(&e->retry, on_retry, wait, 0);
}

static void on_quiet(struct xd_debounce *q)
{
	struct xd_etcd *e = q->data;

	if (e->state != STOPPED)
		xd_reload_request(e->reloader, "etcd", NULL, NULL);
}

/*
 * etcd not read within dial_timeout of the start: if a last good state
 * is saved, a reload now fails on that (take() says why) with nothing
 * served, so the reloader serves the saved state instead, loudly
 * (reload.h). Without one, nothing changes: not ready until etcd
 * answers. The tries go on either way; etcd's first good load then
 * replaces the saved state.
 */
static void on_fallback(uv_timer_t *t)
{
	struct xd_etcd *e = t->data;
	const struct xd_laststate *s = xd_reloader_laststate(e->reloader);
	struct stat st;

	XD_ASSERT_LOOP();
	XD_ASSERT(s != NULL); /* armed only with a state directory */
	if (e->state == STOPPED || e->loaded)
		return;
	if (stat(xd_laststate_info(s)->path, &st) != 0) {
		xd_info("etcd prefix '%s' not read within etcd.dial_timeout and no last good state in %s: not ready until etcd answers",
			e->cfg->etcd.prefix, xd_laststate_info(s)->dir);
		return;
	}
	xd_warn("etcd prefix '%s' not read within etcd.dial_timeout (%.1f s): serving the last good state in %s until etcd answers",
		e->cfg->etcd.prefix, (double)e->cfg->etcd.dial_timeout_ms / 1000,
		xd_laststate_info(s)->path);
	xd_reload_request(e->reloader, "etcd", NULL, NULL);
}

/*
 * The reloader's source (reload/source.h), on the loop thread: the changes
 * since the last take, moved, and the store they apply to; before the
 * first Range is whole, why nothing can be read. Costs nothing that
 * grows with the prefix.
 */
static void *take(void *arg, int64_t *revision, int64_t *changed)
{
	struct xd_etcd *e = arg;
	struct taken *t = xd_calloc(1, sizeof(*t));

	XD_ASSERT_LOOP();
	atomic_fetch_add_explicit(&e->store->refs, 1, memory_order_relaxed);
	t->store = e->store;
	if (!e->loaded)
		t->not_read = xd_asprintf("etcd prefix '%s': not read yet: %s",
					  e->cfg->etcd.prefix,
					  e->health->last_error[0] != '\0' ?
						  e->health->last_error :
						  "no answer from etcd yet");
	xd_info("etcd prefix '%s': %zu change%s since the last load handed to the reload%s",
		e->cfg->etcd.prefix, e->pending.n, e->pending.n == 1 ? "" : "s",
		e->pending.reset ? " (the prefix read whole)" : "");
	xd_kvchanges_append(&t->changes, &e->pending);
	/* the changes handed over reach it: whole revisions only */
	*revision = e->loaded ? e->health->revision : 0;
	*changed = e->loaded ? e->changed_at : 0;
	return t;
}

/* On the thread pool: the changes applied to the map, and the snapshot
 * files the map holds now. */
static int read_taken(void *self XD_UNUSED, void *arg,
		      struct xd_parsed_cache *parsed XD_UNUSED,
		      struct xd_snapkey **keys, size_t *n, int64_t *at_ms,
		      struct xd_diag *diag)
{
	struct taken *t = arg;
	size_t before = xd_diag_total(diag);

	xd_kvmap_apply(&t->store->map, &t->changes);
	*keys = NULL;
	*n = 0;
	if (t->not_read != NULL)
		xd_diag_add(diag, "%s", t->not_read);
	else
		xd_kvmap_snapshot_keys(&t->store->map, t->store->prefix, keys,
				       n, diag);
	store_unref(t->store);
	free(t->not_read);
	free(t);
	*at_ms = 0;
	return xd_diag_total(diag) == before ? 0 : -1;
}

/* What the source knows of itself (xd_etcd_health), as every source
 * says it. */
static void health(const void *self, struct xd_source_health *out)
{
	const struct xd_etcd *e = self;
	const struct xd_etcd_health *h = e->health;

	XD_ASSERT_LOOP();
	memset(out, 0, sizeof(*out));
	out->name = "etcd";
	out->up = h->healthy;
	out->since_ms = h->since_ms;
	snprintf(out->last_error, sizeof(out->last_error), "%s", h->last_error);
	out->last_error_ms = h->last_error_ms;
	out->revision = h->revision;
}

static const struct xd_snapsource_ops etcd_source = {
	.name = "etcd",
	.take = take,
	.read = read_taken,
	.read_done = NULL, /* its health is its own: the calls' */
	.health = health,
	.stop = NULL,      /* its owner stops it: the fleet writes through it */
};

struct xd_snapsource xd_etcd_source(struct xd_etcd *e)
{
	return (struct xd_snapsource){&etcd_source, e};
}

/*
 * Notes a key read or changed into `to`, when a reload would read it:
 * keys whose names a snapshot directory would not count (a lock, a
 * heartbeat, a README beside the snapshots) are left out, and are no
 * change. A value over the limit of a snapshot file is noted by its
 * size, and fails every reload while it is there, from a Range or a
 * watch alike, as a file that large fails a load of the directory.
 */
static bool note(struct xd_etcd *e, struct xd_kvchanges *to,
		 const Mvccpb__KeyValue *kv, bool deleted)
{
	size_t plen = e->key.len;
	char *name;
	bool counts;

	if (memchr(kv->key.data, '\0', kv->key.len) != NULL) {
		xd_warn("etcd: a key with a NUL byte under the prefix is ignored");
		return false;
	}
	if (kv->key.len < plen || memcmp(kv->key.data, e->key.data, plen) != 0)
		return false; /* outside the prefix: not asked for */
	name = xd_strndup((const char *)kv->key.data + plen, kv->key.len - plen);
	counts = xd_snapshot_name_counts(name);
	free(name);
	if (!counts)
		return false;
	if (deleted) {
		xd_kvchanges_delete(to, (const char *)kv->key.data, kv->key.len);
		return true;
	}
	if (kv->value.len > XD_SNAPSHOT_MAX_FILE)
		xd_error("etcd key '%.*s': %zu bytes: larger than the limit of %u MiB; reloads fail until it is smaller",
			 (int)kv->key.len, (const char *)kv->key.data,
			 kv->value.len, XD_SNAPSHOT_MAX_FILE >> 20);
	xd_kvchanges_put(to, (const char *)kv->key.data, kv->key.len,
			 kv->value.data, kv->value.len);
	return true;
}

/* ---------------- xdsd's own keys ---------------- */

/* Whether `key` is one of xdsd's own ("<prefix>.xdsd/..."). */
static bool is_own(const struct xd_etcd *e, const ProtobufCBinaryData *key)
{
	return e->has_own && key->len > e->own_key.len &&
	       memcmp(key->data, e->own_key.data, e->own_key.len) == 0 &&
	       memchr(key->data, '\0', key->len) == NULL;
}

/* `kv` (an own key) as the follower reads it; its name is copied into
 * `name` (malloc'd, the caller frees it). */
static struct xd_etcd_own_kv own_kv(const struct xd_etcd *e,
				    const Mvccpb__KeyValue *kv, bool deleted,
				    char **name)
{
	*name = xd_strndup((const char *)kv->key.data + e->own_key.len,
			   kv->key.len - e->own_key.len);
	return (struct xd_etcd_own_kv){
		.name = *name,
		.value = deleted ? NULL : kv->value.data,
		.len = deleted ? 0 : kv->value.len,
		.mod_revision = kv->mod_revision,
		.lease = kv->lease,
		.deleted = deleted,
	};
}

/* The own keys of a page of a Range at the newest revision, kept until
 * it is whole. */
static void own_collect(struct xd_etcd *e, const Mvccpb__KeyValue *kv)
{
	struct own_copy *c;

	e->own_paged = xd_grow(e->own_paged, &e->cap_own_paged,
			       e->n_own_paged + 1, sizeof(*e->own_paged));
	c = &e->own_paged[e->n_own_paged++];
	c->name = xd_strndup((const char *)kv->key.data + e->own_key.len,
			     kv->key.len - e->own_key.len);
	c->value = xd_malloc(kv->value.len + 1);
	memcpy(c->value, kv->value.data, kv->value.len);
	c->len = kv->value.len;
	c->mod_revision = kv->mod_revision;
	c->lease = kv->lease;
}

/* Hands the own keys collected to the follower, read at `revision`. */
static void own_deliver(struct xd_etcd *e, int64_t revision)
{
	struct xd_etcd_own_kv *kvs =
		xd_calloc(e->n_own_paged + 1, sizeof(*kvs));

	for (size_t i = 0; i < e->n_own_paged; i++)
		kvs[i] = (struct xd_etcd_own_kv){
			.name = e->own_paged[i].name,
			.value = e->own_paged[i].value,
			.len = e->own_paged[i].len,
			.mod_revision = e->own_paged[i].mod_revision,
			.lease = e->own_paged[i].lease,
		};
	e->own_rev = revision;
	e->own.read(e->own.arg, kvs, e->n_own_paged, revision);
	free(kvs);
	own_paged_clear(e);
}

static void begin_pages(struct xd_etcd *e);

/* The own keys read at start: handed over, then the snapshots read at
 * the revision the follower names. */
static void own_read_done(void *arg, const ProtobufCMessage *m,
			  const char *why)
{
	struct xd_etcd *e = arg;
	const Etcdserverpb__RangeResponse *r =
		(const Etcdserverpb__RangeResponse *)m;

	XD_ASSERT_LOOP();
	if (r == NULL || r->header == NULL) {
		schedule_retry(e, "reading xdsd's own keys",
			       why != NULL ? why : "an answer without its header");
		return;
	}
	own_paged_clear(e);
	for (size_t i = 0; i < r->n_kvs; i++)
		if (is_own(e, &r->kvs[i]->key))
			own_collect(e, r->kvs[i]);
	own_deliver(e, r->header->revision);
	e->own_read = true;
	e->anchor = e->own.anchor(e->own.arg);
	if (e->anchor > 0)
		xd_info("etcd %s: reading the snapshots at revision %lld first, as the rollout across replicas says (the newest is %lld)",
			endpoint(e), (long long)e->anchor,
			(long long)r->header->revision);
	begin_pages(e);
}

static void start_page(struct xd_etcd *e);

/* The next page of a Range from `last` on: its key and a NUL, the key
 * right after it. */
static void next_from(struct xd_etcd *e, const ProtobufCBinaryData *last)
{
	free(e->range_from.data);
	e->range_from.len = last->len + 1;
	e->range_from.data = xd_malloc(e->range_from.len);
	memcpy(e->range_from.data, last->data, last->len);
	e->range_from.data[last->len] = 0;
}

/* How many keys the next page asks for: XD_ETCD_PAGE_KEYS, fewer when
 * the last page's values were large, so that a page holds about
 * XD_ETCD_PAGE_BYTES (and the loop's turn that unpacks it, about as
 * much); one at least, up to the message limit. */
static void size_pages(struct xd_etcd *e, size_t keys, size_t bytes)
{
	size_t per = keys > 0 ? bytes / keys + 1 : 1, want;

	want = XD_ETCD_PAGE_BYTES / per;
	e->page_keys = want < 1 ? 1 : want > XD_ETCD_PAGE_KEYS ?
			      XD_ETCD_PAGE_KEYS : (uint32_t)want;
}

static void on_range(struct xd_tag *tag, bool ok)
{
	struct xd_etcd *e = xd_container_of(tag, struct xd_etcd, t_range);
	Etcdserverpb__RangeResponse *resp = NULL;
	size_t bytes = 0;
	char why[512];
	bool too_big, compacted;

	e->range.batches--;
	if (ok && e->range.status == GRPC_STATUS_OK) {
		bytes = e->range.recv != NULL ?
				grpc_byte_buffer_length(e->range.recv) : 0;
		resp = (Etcdserverpb__RangeResponse *)xd_etcd_unpack(
			&etcdserverpb__range_response__descriptor,
			e->range.recv);
	} else {
		grpc_byte_buffer_destroy(e->range.recv);
	}
	e->range.recv = NULL;
	too_big = ok && e->range.status == GRPC_STATUS_RESOURCE_EXHAUSTED;
	compacted = ok && e->anchored &&
		    e->range.status == GRPC_STATUS_OUT_OF_RANGE;
	if (!ok)
		snprintf(why, sizeof(why), "the call failed");
	else if (e->range.status != GRPC_STATUS_OK)
		xd_etcd_status_text(e->range.status, e->range.details, why, sizeof(why));
	else if (resp == NULL || resp->header == NULL)
		snprintf(why, sizeof(why), "a response that does not parse");
	call_close(&e->range);
	if (e->state == STOPPED) {
		if (resp != NULL)
			protobuf_c_message_free_unpacked(&resp->base, NULL);
		maybe_free(e);
		return;
	}
	if (compacted) {
		xd_error("etcd %s: revision %lld, which the rollout across replicas serves to every node but its canaries, was compacted away (%s): reading the newest snapshots instead, and the change under way or refused reaches every node of this replica",
			 endpoint(e), (long long)e->anchor, why);
		e->anchor = 0;
		begin_pages(e);
		return;
	}
	if (too_big && e->page_keys > 1) {
		/* a page of large values over the message limit: the same
		 * page again, halved, down to one key */
		e->page_keys /= 2;
		xd_info("etcd %s: a page of the prefix over the limit of %u MiB: asking for %u keys a page",
			endpoint(e), XD_ETCD_MAX_RESPONSE >> 20, e->page_keys);
		start_page(e);
		return;
	}
	if (resp == NULL || resp->header == NULL) {
		if (resp != NULL)
			protobuf_c_message_free_unpacked(&resp->base, NULL);
		xd_kvchanges_clear(&e->paged);
		own_paged_clear(e);
		schedule_retry(e, "reading the prefix", why);
		return;
	}
	if (e->pages == 0) {
		/* the first page: the others are read at its revision (or
		 * at the anchor's) */
		if (e->range_rev == 0)
			e->range_rev = resp->header->revision;
		e->paged.reset = true;
		own_paged_clear(e);
	}
	e->pages++;
	e->range_keys += resp->n_kvs;
	for (size_t i = 0; i < resp->n_kvs; i++) {
		/* an anchored Range's own keys are older than those read */
		if (is_own(e, &resp->kvs[i]->key)) {
			if (!e->anchored)
				own_collect(e, resp->kvs[i]);
		} else if (note(e, &e->paged, resp->kvs[i], false) &&
			   resp->kvs[i]->mod_revision > e->range_changed) {
			e->range_changed = resp->kvs[i]->mod_revision;
		}
	}
	if (resp->more && resp->n_kvs > 0) {
		next_from(e, &resp->kvs[resp->n_kvs - 1]->key);
		size_pages(e, resp->n_kvs, bytes);
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		start_page(e);
		return;
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	/* whole: it supersedes whatever changes were waiting */
	xd_kvchanges_append(&e->pending, &e->paged);
	e->health->revision = e->range_rev;
	if (e->range_changed > e->changed_at)
		e->changed_at = e->range_changed;
	e->need_range = false;
	e->loaded = true;
	if (e->has_own && !e->anchored)
		own_deliver(e, e->range_rev);
	e->anchored = false;
	e->anchor = 0; /* the first read only */
	e->backoff_ms = XD_ETCD_BACKOFF_MIN_MS;
	xd_info("etcd %s: read %zu key%s under '%s' at revision %lld (%zu page%s)",
		endpoint(e), e->range_keys, e->range_keys == 1 ? "" : "s",
		e->cfg->etcd.prefix, (long long)e->health->revision, e->pages,
		e->pages == 1 ? "" : "s");
	xd_reload_request(e->reloader, "etcd", NULL, NULL);
	start_watch(e);
}

/* One page of the Range under way, from range_from on. */
static void start_page(struct xd_etcd *e)
{
	Etcdserverpb__RangeRequest req = ETCDSERVERPB__RANGE_REQUEST__INIT;
	grpc_op ops[6];

	req.key = e->range_from;
	req.range_end = e->end;
	req.limit = e->page_keys;
	req.revision = e->range_rev;
	call_open(e, &e->range, XD_ETCD_RANGE_METHOD,
		  gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
			       gpr_time_from_millis(
				       (int64_t)e->cfg->etcd.dial_timeout_ms,
				       GPR_TIMESPAN)));
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = xd_etcd_pack(&req.base);
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_MESSAGE;
	ops[3].data.recv_message.recv_message = &e->range.recv;
	ops_head_and_status(&e->range, &ops[4]);
	call_batch(&e->range, ops, 6, &e->t_range);
	grpc_byte_buffer_destroy(ops[1].data.send_message.send_message);
}

/* Reads the whole prefix again, page by page from its first key (the
 * own keys first, at start). */
static void start_range(struct xd_etcd *e)
{
	Etcdserverpb__RangeRequest req = ETCDSERVERPB__RANGE_REQUEST__INIT;
	char why[512];

	move(e, RANGING, "reading the prefix");
	if (!e->has_own || e->own_read) {
		begin_pages(e);
		return;
	}
	req.key = e->own_key;
	req.range_end = e->own_end;
	if (xd_etcd_call(e, XD_ETCD_RANGE_METHOD, &req.base,
			 &etcdserverpb__range_response__descriptor,
			 own_read_done, e, why, sizeof(why)) != 0)
		schedule_retry(e, "reading xdsd's own keys", why);
}

/* The pages of the prefix from its first key, at the anchor's revision
 * the first time (0: the newest). */
static void begin_pages(struct xd_etcd *e)
{
	xd_kvchanges_clear(&e->paged);
	own_paged_clear(e);
	e->range_rev = e->loaded ? 0 : e->anchor;
	e->anchored = e->range_rev != 0;
	e->range_changed = 0;
	e->pages = 0;
	e->range_keys = 0;
	e->page_keys = XD_ETCD_PAGE_KEYS;
	free(e->range_from.data);
	e->range_from.len = e->key.len;
	e->range_from.data = xd_malloc(e->key.len + 1);
	memcpy(e->range_from.data, e->key.data, e->key.len);
	start_page(e);
}

/* ---------------- watching ---------------- */

static void watch_read(struct xd_etcd *e)
{
	grpc_op op;

	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &e->watch.recv;
	call_batch(&e->watch, &op, 1, &e->t_wmsg);
}

/* The watch call is over once its three kinds of batches are: then
 * it is closed, and tried again unless stopped. */
static void watch_maybe_over(struct xd_etcd *e)
{
	char why[512];

	if (e->watch.batches > 0)
		return;
	if (e->cancel_why[0] != '\0')
		snprintf(why, sizeof(why), "%s", e->cancel_why);
	else
		xd_etcd_status_text(e->watch.status, e->watch.details, why,
				    sizeof(why));
	e->cancel_why[0] = '\0';
	call_close(&e->watch);
	if (e->state == STOPPED) {
		maybe_free(e);
		return;
	}
	schedule_retry(e, e->need_range ? "the watch was cancelled" :
					  "the watch ended",
		       why);
}

/* Applies a watch response; false when the watch cannot go on. */
static bool apply(struct xd_etcd *e, const Etcdserverpb__WatchResponse *w)
{
	if (w->compact_revision != 0) {
		xd_warn("etcd %s: revision %lld was compacted away (oldest kept: %lld); reading the prefix again",
			endpoint(e), (long long)e->health->revision + 1,
			(long long)w->compact_revision);
		snprintf(e->cancel_why, sizeof(e->cancel_why),
			 "revision %lld was compacted away (oldest kept: %lld)",
			 (long long)e->health->revision + 1,
			 (long long)w->compact_revision);
		e->need_range = true;
		return false;
	}
	if (w->canceled) {
		xd_warn("etcd %s: the watch was cancelled: %s; reading the prefix again",
			endpoint(e), w->cancel_reason != NULL ? w->cancel_reason : "");
		snprintf(e->cancel_why, sizeof(e->cancel_why), "%.200s",
			 w->cancel_reason != NULL && w->cancel_reason[0] != '\0' ?
				 w->cancel_reason : "cancelled by etcd");
		e->need_range = true;
		return false;
	}
	if (w->created) {
		set_healthy(e, true);
		e->backoff_ms = XD_ETCD_BACKOFF_MIN_MS;
		xd_info("etcd %s: watching '%s' from revision %lld",
			endpoint(e), e->cfg->etcd.prefix,
			(long long)e->health->revision + 1);
	}
	for (size_t i = 0; i < w->n_events; i++) {
		const Mvccpb__Event *ev = w->events[i];
		bool deleted = ev->type == MVCCPB__EVENT__EVENT_TYPE__Delete;

		if (ev->kv == NULL)
			continue;
		if (ev->kv->mod_revision > e->frag_rev)
			e->frag_rev = ev->kv->mod_revision;
		if (is_own(e, &ev->kv->key)) {
			char *name;
			struct xd_etcd_own_kv kv;

			/* replayed from an anchored Range: read already */
			if (ev->kv->mod_revision <= e->own_rev)
				continue;
			kv = own_kv(e, ev->kv, deleted, &name);
			e->own.changed(e->own.arg, &kv);
			free(name);
			continue;
		}
		if (note(e, &e->fragments, ev->kv, deleted)) {
			e->changed++;
			if (ev->kv->mod_revision > e->frag_changed)
				e->frag_changed = ev->kv->mod_revision;
		}
	}
	if (w->fragment)
		return true; /* the rest of the revision follows */
	/* the watch resumes after a revision only once it is whole */
	if (e->frag_rev > e->health->revision)
		e->health->revision = e->frag_rev;
	if (e->frag_changed > e->changed_at)
		e->changed_at = e->frag_changed;
	xd_kvchanges_append(&e->pending, &e->fragments);
	if (e->changed > 0) {
		xd_info("etcd %s: %zu change%s up to revision %lld; reloading once quiet for %llu ms (at most %llu ms after the first)",
			endpoint(e), e->changed, e->changed == 1 ? "" : "s",
			(long long)e->health->revision,
			(unsigned long long)e->quiet.delay_ms,
			(unsigned long long)e->quiet.max_ms);
		xd_debounce_change(&e->quiet);
	}
	e->changed = 0;
	return true;
}

static void on_watch_msg(struct xd_tag *tag, bool ok)
{
	struct xd_etcd *e = xd_container_of(tag, struct xd_etcd, t_wmsg);
	grpc_byte_buffer *bb = e->watch.recv;
	Etcdserverpb__WatchResponse *w;

	e->watch.batches--;
	e->watch.recv = NULL;
	if (!ok || bb == NULL || e->state == STOPPED) {
		grpc_byte_buffer_destroy(bb);
		watch_maybe_over(e);
		return;
	}
	w = (Etcdserverpb__WatchResponse *)xd_etcd_unpack(
		&etcdserverpb__watch_response__descriptor, bb);
	if (w == NULL || !apply(e, w)) {
		if (w == NULL)
			xd_warn("etcd %s: a watch response that does not parse",
				endpoint(e));
		grpc_call_cancel(e->watch.call, NULL);
	} else {
		watch_read(e);
	}
	if (w != NULL)
		protobuf_c_message_free_unpacked(&w->base, NULL);
	watch_maybe_over(e);
}

static void on_watch_sent(struct xd_tag *tag, bool ok XD_UNUSED)
{
	struct xd_etcd *e = xd_container_of(tag, struct xd_etcd, t_wsend);

	e->watch.batches--;
	watch_maybe_over(e);
}

static void on_watch_status(struct xd_tag *tag, bool ok XD_UNUSED)
{
	struct xd_etcd *e = xd_container_of(tag, struct xd_etcd, t_wstatus);

	e->watch.batches--;
	watch_maybe_over(e);
}

static void start_watch(struct xd_etcd *e)
{
	Etcdserverpb__WatchCreateRequest create =
		ETCDSERVERPB__WATCH_CREATE_REQUEST__INIT;
	Etcdserverpb__WatchRequest req = ETCDSERVERPB__WATCH_REQUEST__INIT;
	grpc_op ops[3];

	move(e, WATCHING, "watching the prefix");
	xd_kvchanges_clear(&e->fragments); /* a revision cut off, resent */
	e->changed = 0;
	e->frag_rev = 0;
	e->frag_changed = 0;
	create.key = e->key;
	create.range_end = e->end;
	create.start_revision = e->health->revision + 1;
	/* a revision too large for one message comes in several */
	create.fragment = true;
	req.request_union_case = ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
	req.create_request = &create;
	call_open(e, &e->watch, XD_ETCD_WATCH_METHOD, gpr_inf_future(GPR_CLOCK_REALTIME));

	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = xd_etcd_pack(&req.base);
	call_batch(&e->watch, ops, 2, &e->t_wsend);
	grpc_byte_buffer_destroy(ops[1].data.send_message.send_message);

	memset(ops, 0, sizeof(ops));
	ops_head_and_status(&e->watch, ops);
	call_batch(&e->watch, ops, 2, &e->t_wstatus);
	watch_read(e);
}

/* ---------------- start and stop ---------------- */

static grpc_channel_credentials *credentials(const struct xd_config *cfg)
{
	struct xd_etcd_tls_files f = {
		cfg->etcd.tls.ca, cfg->etcd.tls.cert, cfg->etcd.tls.key,
		"etcd.tls.ca", "etcd.tls.cert", "etcd.tls.key",
	};
	struct xd_diag diag = XD_DIAG_INIT;
	grpc_channel_credentials *creds = xd_etcd_credentials(&f, &diag);

	for (size_t i = 0; i < diag.count; i++)
		xd_error("%s", diag.msgs[i]);
	xd_diag_clear(&diag);
	return creds;
}

int xd_etcd_start(struct xd_etcd **out, uv_loop_t *loop,
		  grpc_completion_queue *cq, const struct xd_config *cfg,
		  struct xd_reloader *reloader, struct xd_etcd_health *health,
		  const struct xd_etcd_own *own)
{
	struct xd_etcd *e;
	char *own_key;
	grpc_channel_credentials *creds;

	XD_ASSERT_LOOP();
	XD_ASSERT(cfg->etcd.nendpoints > 0); /* config.c requires them */
	creds = credentials(cfg);
	if (creds == NULL) {
		xd_error("cannot use the etcd.tls files; not starting");
		return -1;
	}
	e = xd_calloc(1, sizeof(*e));
	e->loop = loop;
	e->cq = cq;
	e->cfg = cfg;
	e->reloader = reloader;
	e->health = health;
	memset(health, 0, sizeof(*health));
	health->since_ms = xd_wall_ms();
	e->creds = creds;
	e->state = WAITING;
	e->need_range = true;
	e->backoff_ms = XD_ETCD_BACKOFF_MIN_MS;
	e->key.data = (uint8_t *)xd_strdup(cfg->etcd.prefix);
	e->key.len = strlen(cfg->etcd.prefix);
	e->end.data = (uint8_t *)xd_etcd_range_end(cfg->etcd.prefix, &e->end.len);
	e->calls = xd_etcd_calls_new(cq, calls_idle, e);
	if (own != NULL) {
		e->own = *own;
		e->has_own = true;
		own_key = xd_asprintf("%s%s", cfg->etcd.prefix, XD_ETCD_OWN_DIR);
		e->own_key.data = (uint8_t *)own_key;
		e->own_key.len = strlen(own_key);
		e->own_end.data = (uint8_t *)xd_etcd_range_end(own_key,
							       &e->own_end.len);
	}
	e->t_range.done = on_range;
	e->t_wsend.done = on_watch_sent;
	e->t_wstatus.done = on_watch_status;
	e->t_wmsg.done = on_watch_msg;
	uv_timer_init(loop, &e->retry);
	xd_debounce_init(&e->quiet, loop, cfg->watch_delay_ms,
			 cfg->watch_delay_max_ms, on_quiet, e);
	uv_timer_init(loop, &e->fallback);
	e->retry.data = e;
	e->fallback.data = e;
	e->open_handles = 3;
	if (xd_reloader_laststate(reloader) != NULL)
		uv_timer_start(&e->fallback, on_fallback, cfg->etcd.dial_timeout_ms, 0);
	e->store = xd_calloc(1, sizeof(*e->store));
	atomic_init(&e->store->refs, 1);
	e->store->prefix = xd_strdup(cfg->etcd.prefix);
	xd_info("etcd: reading snapshots under '%s' from %s%s", cfg->etcd.prefix,
		endpoint(e), cfg->etcd.nendpoints > 1 ? " (and the other endpoints in turn)" : "");
	start_range(e);
	*out = e;
	return 0;
}

static void handle_closed(uv_handle_t *h)
{
	struct xd_etcd *e = h->data;

	e->open_handles--;
	maybe_free(e);
}

void xd_etcd_stop(struct xd_etcd *e)
{
	if (e == NULL)
		return;
	XD_ASSERT_LOOP();
	if (e->state == STOPPED)
		return;
	move(e, STOPPED, "xdsd is stopping");
	xd_etcd_calls_cancel(e->calls);
	if (e->range.call != NULL)
		grpc_call_cancel(e->range.call, NULL);
	if (e->watch.call != NULL)
		grpc_call_cancel(e->watch.call, NULL);
	uv_close((uv_handle_t *)&e->retry, handle_closed);
	xd_debounce_close(&e->quiet, handle_closed);
	uv_close((uv_handle_t *)&e->fallback, handle_closed);
}
