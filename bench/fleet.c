/*
 * fleet: a fleet of simulated Envoys against an xDS server.
 *
 * Opens N ADS streams (SotW or delta), each on its own connection with
 * its own node id, subscribes the way Envoy does (wildcard CDS; EDS for
 * the EDS clusters it learns; wildcard LDS once its clusters are warm;
 * RDS for the route configurations its listeners' HttpConnectionManagers
 * name), ACKs every response, and measures:
 *
 *   - how long until every client holds a full configuration;
 *   - for each --trigger command (e.g. rewrite a snapshot, SIGHUP xdsd),
 *     how long until every client has ACKed the new versions;
 *   - bytes received, the server's RSS (--server-pid) and its CPU time.
 *
 * "Converged", for one trigger: let the types that changed be those for
 * which any client's last ACKed state differs from what it had ACKed when
 * the trigger ran. A client's state of a type is the version_info of the
 * response it ACKed last (SotW), or the set of (name, version) pairs it
 * holds when it sends its last ACK (delta). The new state of a changed
 * type is the one most clients ACKed once the fleet went quiet (nothing
 * received for --settle seconds); every client must have ACKed exactly
 * that state, with no response left un-ACKed. A client's convergence
 * latency is the time from the start of the trigger command to the
 * sending of its ACK of the last changed type (so it includes the
 * server's reload). A fleet that is not converged when --timeout expires
 * fails the run.
 *
 * Responses are parsed straight from the protobuf wire format, and only
 * the fields a subscription depends on: Cluster name (1), type (2),
 * eds_cluster_config (3) .service_name (2); ClusterLoadAssignment
 * cluster_name (1); Listener name (1), filter_chains (3),
 * default_filter_chain (25), api_listener (19) .api_listener (1);
 * FilterChain filters (3); Filter typed_config (4); HttpConnectionManager
 * rds (3) .route_config_name (2); RouteConfiguration name (1).
 *
 * --threads threads (2), each polling its own completion queue; a client
 * lives on one of them. Its state is guarded by its own mutex, which the
 * main thread takes to measure.
 *
 * Output: one line of key=value pairs on stdout; progress on stderr.
 * Exit status: 0 when every client got its configuration and converged
 * after every trigger, 1 otherwise, 2 on bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transport/abseil.h"

#define MAX_TRIGGERS 8
#define MAX_THREADS 16

/* ------------------------------------------------------------------ */
/* Resource types                                                      */

enum rt { CDS, EDS, LDS, RDS, NT };

static const char *const type_url[NT] = {
	"type.googleapis.com/envoy.config.cluster.v3.Cluster",
	"type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
	"type.googleapis.com/envoy.config.listener.v3.Listener",
	"type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
};
static const char *const type_name[NT] = {"cds", "eds", "lds", "rds"};

static const char HCM_URL[] =
	"type.googleapis.com/envoy.extensions.filters.network."
	"http_connection_manager.v3.HttpConnectionManager";

static const char ADS_SOTW[] =
	"/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
static const char ADS_DELTA[] =
	"/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fleet: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		die("out of memory");
	return p;
}

static void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);

	if (p == NULL)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		die("out of memory");
	return p;
}

static char *xstrndup(const void *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return mix64(h ^ n);
}

/* ------------------------------------------------------------------ */
/* Protobuf wire format                                                */

struct pb_rd {
	const uint8_t *p, *end;
};

struct pb_field {
	uint32_t num;
	int wt;            /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
	uint64_t v;        /* varint value */
	const uint8_t *data;
	size_t len;        /* length-delimited payload */
};

static bool pb_varint(struct pb_rd *r, uint64_t *v)
{
	uint64_t x = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return false;
		uint8_t b = *r->p++;

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* 1: a field; 0: end of message; -1: malformed. */
static int pb_next(struct pb_rd *r, struct pb_field *f)
{
	uint64_t key, n;

	if (r->p >= r->end)
		return 0;
	if (!pb_varint(r, &key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	switch (f->wt) {
	case 0:
		return pb_varint(r, &f->v) ? 1 : -1;
	case 1:
		if (r->end - r->p < 8)
			return -1;
		r->p += 8;
		return 1;
	case 5:
		if (r->end - r->p < 4)
			return -1;
		r->p += 4;
		return 1;
	case 2:
		if (!pb_varint(r, &n) || n > (uint64_t)(r->end - r->p))
			return -1;
		f->data = r->p;
		f->len = (size_t)n;
		r->p += n;
		return 1;
	default:
		return -1;
	}
}

static struct pb_rd pb_sub(const uint8_t *data, size_t len)
{
	struct pb_rd r = {data, data + len};

	return r;
}

struct pb_wr {
	uint8_t *buf;
	size_t len, cap;
};

static void pbw_need(struct pb_wr *w, size_t n)
{
	if (w->len + n <= w->cap)
		return;
	while (w->len + n > w->cap)
		w->cap = w->cap ? w->cap * 2 : 256;
	w->buf = xrealloc(w->buf, w->cap);
}

static void pbw_varint(struct pb_wr *w, uint64_t v)
{
	pbw_need(w, 10);
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		w->buf[w->len++] = b | (v ? 0x80 : 0);
	} while (v);
}

static void pbw_bytes(struct pb_wr *w, uint32_t num, const void *p, size_t n)
{
	pbw_varint(w, (uint64_t)num << 3 | 2);
	pbw_varint(w, n);
	pbw_need(w, n);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void pbw_str(struct pb_wr *w, uint32_t num, const char *s)
{
	if (s != NULL && *s)
		pbw_bytes(w, num, s, strlen(s));
}

static bool span_eq(const uint8_t *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

/* ------------------------------------------------------------------ */
/* A string-keyed hash map (linear probing, backward-shift deletion)   */

struct sm_ent {
	char *key;         /* owned; NULL: empty slot */
	uint32_t klen;
	uint64_t h;
	uint64_t ver;      /* resource version hash (delta) */
	char *aux;         /* owned: a cluster's EDS name, a listener's RDS names ('\n'-joined) */
};

struct smap {
	struct sm_ent *e;
	uint32_t cap, len;
};

static struct sm_ent *sm_slot(const struct smap *m, const char *k, size_t n,
			      uint64_t h)
{
	uint32_t mask = m->cap - 1;

	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		struct sm_ent *e = &m->e[i];

		if (e->key == NULL ||
		    (e->h == h && e->klen == n && memcmp(e->key, k, n) == 0))
			return e;
	}
}

static struct sm_ent *sm_find(const struct smap *m, const char *k, size_t n)
{
	struct sm_ent *e;

	if (m->cap == 0)
		return NULL;
	e = sm_slot(m, k, n, hash_bytes(k, n));
	return e->key ? e : NULL;
}

static void sm_grow(struct smap *m)
{
	struct sm_ent *old = m->e;
	uint32_t ocap = m->cap;

	m->cap = ocap ? ocap * 2 : 8;
	m->e = xcalloc(m->cap, sizeof(*m->e));
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i].key)
			*sm_slot(m, old[i].key, old[i].klen, old[i].h) = old[i];
	free(old);
}

/* The entry for k, inserted (ver 0, aux NULL) if absent. */
static struct sm_ent *sm_put(struct smap *m, const char *k, size_t n,
			     bool *created)
{
	uint64_t h = hash_bytes(k, n);
	struct sm_ent *e;

	if ((m->len + 1) * 4 > m->cap * 3)
		sm_grow(m);
	e = sm_slot(m, k, n, h);
	*created = e->key == NULL;
	if (*created) {
		e->key = xstrndup(k, n);
		e->klen = (uint32_t)n;
		e->h = h;
		e->ver = 0;
		e->aux = NULL;
		m->len++;
	}
	return e;
}

static void sm_del_ent(struct smap *m, struct sm_ent *e)
{
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)(e - m->e), j = i;

	free(e->key);
	free(e->aux);
	for (;;) {
		j = (j + 1) & mask;
		if (m->e[j].key == NULL)
			break;
		uint32_t k = (uint32_t)m->e[j].h & mask;
		/* entry j stays if its home k lies cyclically in (i, j] */
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);

		if (!stays) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	memset(&m->e[i], 0, sizeof(m->e[i]));
	m->len--;
}

static void sm_clear(struct smap *m)
{
	for (uint32_t i = 0; i < m->cap; i++) {
		free(m->e[i].key);
		free(m->e[i].aux);
	}
	free(m->e);
	memset(m, 0, sizeof(*m));
}

/*
 * A set of name hashes, to find a name given twice in one response
 * (S11; Envoy NACKs a delta response naming a resource twice, even once
 * in resources and once in removed_resources).
 */
struct hset {
	uint64_t *v;      /* 0: empty slot */
	uint32_t cap, len;
};

/* False if h was already there. */
static bool hset_add(struct hset *s, uint64_t h)
{
	uint32_t mask;

	h |= 1;                               /* never 0 */
	if ((s->len + 1) * 2 > s->cap) {
		struct hset n = {NULL, s->cap ? s->cap * 2 : 64, 0};

		n.v = xcalloc(n.cap, sizeof(*n.v));
		for (uint32_t i = 0; i < s->cap; i++)
			if (s->v[i])
				hset_add(&n, s->v[i]);
		free(s->v);
		*s = n;
	}
	mask = s->cap - 1;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		if (s->v[i] == h)
			return false;
		if (s->v[i] == 0) {
			s->v[i] = h;
			s->len++;
			return true;
		}
	}
}

#define SM_EACH(m, ent) \
	for (struct sm_ent *ent = (m)->e; ent < (m)->e + (m)->cap; ent++) \
		if (ent->key != NULL)

/* ------------------------------------------------------------------ */
/* Options and global state                                            */

enum mode { SOTW, DELTA };

static struct {
	const char *target;
	char *grpc_target;
	int clients;
	enum mode mode;
	const char *node_prefix;
	const char *cluster;
	int threads;
	const char *trigger[MAX_TRIGGERS];
	int ntriggers;
	double timeout, settle, hold, rate;
	long server_pid;
	bool verbose;
	const char *label;
	int trace;         /* client whose messages are logged; -1: none */
} opt = {
	.trace = -1,
	.clients = 1000,
	.mode = SOTW,
	.node_prefix = "fleet",
	.cluster = "default",
	.threads = 2,
	.timeout = 120,
	.settle = 1,
	.hold = 0,
	.rate = 0,
	.server_pid = 0,
};

/*
 * One completion queue per polling thread; client i uses queue i mod
 * threads. Debian builds gRPC without NDEBUG, and then every completion
 * searches its queue's list of outstanding operations linearly
 * (cq_check_tag): with 10,000 streams on one queue that search was 13%
 * of the simulator's CPU time. Splitting the streams over the threads'
 * queues divides it, and keeps each client on one thread.
 */
static grpc_completion_queue *cqs[MAX_THREADS];

/* counters shared by every thread */
static _Atomic uint64_t g_last_rx;      /* now_ns() of the last message */
static _Atomic uint64_t g_rx_msgs, g_rx_bytes;
static _Atomic uint64_t g_resp[NT];
static _Atomic uint64_t g_dups[NT];     /* unchanged resends nobody asked for */
static _Atomic uint64_t g_unsub;        /* resources never subscribed to */
static _Atomic uint64_t g_unknown;      /* responses of a type never asked for */
static _Atomic uint64_t g_bad;          /* malformed responses */
static _Atomic uint64_t g_twice;        /* responses naming a resource twice */
static _Atomic uint64_t g_configured;   /* clients holding a full config */
static _Atomic uint64_t g_failed;       /* streams that ended */
static _Atomic int64_t g_ops;           /* batches in flight */
static _Atomic int g_fail_logged;
static _Atomic bool g_stopping;       /* calls cancelled on purpose */

/* ------------------------------------------------------------------ */
/* Clients                                                             */

struct client;

enum tag_kind { TAG_START, TAG_SEND, TAG_RECV, TAG_STATUS };

struct tag {
	struct client *c;
	enum tag_kind kind;
};

/* Per resource type state of one client's stream. */
struct tstate {
	bool started;     /* a request of this type was sent */
	bool want;        /* a request is due */
	bool sub_dirty;   /* subscription changed since the last response */
	bool unacked;     /* a response waits for its ACK */
	struct smap sub;  /* EDS/RDS: names subscribed */
	struct smap sent; /* delta: names the server was told about */
	struct smap held; /* resources held (delta: ver = version hash) */
	uint64_t digest;  /* delta: xor over held of mix(name, version) */
	char *version;    /* SotW: version_info of the latest response */
	char *nonce;      /* SotW: nonce of the latest response */
	char **nq;        /* delta: nonces to ACK, oldest first */
	uint32_t nq_len, nq_cap;
	uint32_t acks;
	uint64_t ack_state;  /* state at the last ACK (SotW: hash of version) */
	uint64_t ack_at;     /* when an ACK last changed ack_state */
	uint64_t base_state; /* ack_state when the trigger ran */
};

struct client {
	pthread_mutex_t mu;
	int idx;
	grpc_channel *ch;
	grpc_call *call;
	struct tag t_start, t_send, t_recv, t_status;
	grpc_byte_buffer *rbb, *sbb;
	grpc_metadata_array imd, tmd;
	grpc_status_code status;
	grpc_slice details;
	bool send_busy, dead, node_sent;
	uint8_t *node;
	size_t node_len;
	struct tstate t[NT];
	uint64_t t_begin, t_full;
	uint64_t rx_bytes, rx_base;
};

static struct client *clients;
static uint64_t t_prog;   /* program start, for --trace */

static void trace(const struct client *c, const char *fmt, ...)
{
	va_list ap;

	if (c->idx != opt.trace)
		return;
	fprintf(stderr, "%9.3f client %d: ", (double)(now_ns() - t_prog) / 1e9, c->idx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void start_batch(struct client *c, const grpc_op *ops, size_t n,
			struct tag *t)
{
	grpc_call_error err;

	atomic_fetch_add(&g_ops, 1);
	err = grpc_call_start_batch(c->call, ops, n, t, NULL);
	if (err != GRPC_CALL_OK)
		die("client %d: start_batch failed (%d)", c->idx, (int)err);
}

static void encode_node(struct client *c)
{
	struct pb_wr w = {0};
	char id[256];

	snprintf(id, sizeof(id), "%s-%d", opt.node_prefix, c->idx);
	pbw_str(&w, 1, id);
	pbw_str(&w, 2, opt.cluster);
	pbw_str(&w, 6, "xdsd-fleet");
	c->node = w.buf;
	c->node_len = w.len;
}

/* ---------------- what is held, what is subscribed ---------------- */

static uint64_t res_mix(const struct sm_ent *e)
{
	return mix64(e->h ^ mix64(e->ver + 0x9e3779b97f4a7c15ULL));
}

static void held_set(struct tstate *ts, struct sm_ent *e, uint64_t ver,
		     bool created)
{
	if (!created)
		ts->digest ^= res_mix(e);
	e->ver = ver;
	ts->digest ^= res_mix(e);
}

static void held_del(struct tstate *ts, struct sm_ent *e)
{
	ts->digest ^= res_mix(e);
	sm_del_ent(&ts->held, e);
}

static bool sets_equal(const struct smap *a, const struct smap *b)
{
	if (a->len != b->len)
		return false;
	SM_EACH(a, e)
		if (!sm_find(b, e->key, e->klen))
			return false;
	return true;
}

/*
 * The names of type `dst` that the resources held of type `src` need
 * (clusters' EDS names; listeners' RDS names). A new set replaces the
 * subscription and schedules a request; resources no longer subscribed
 * are dropped, as Envoy drops them.
 */
static void derive_sub(struct client *c, enum rt src, enum rt dst)
{
	struct tstate *ts = &c->t[dst];
	struct smap next = {0};
	bool created;

	SM_EACH(&c->t[src].held, e) {
		const char *p = e->aux;

		while (p != NULL && *p) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);

			if (n)
				sm_put(&next, p, n, &created);
			p = nl ? nl + 1 : NULL;
		}
	}
	if (sets_equal(&next, &ts->sub)) {
		sm_clear(&next);
		return;
	}
	sm_clear(&ts->sub);
	ts->sub = next;
	for (uint32_t i = 0; i < ts->held.cap;) {
		struct sm_ent *e = &ts->held.e[i];

		/* deletion shifts a later entry into slot i: look again */
		if (e->key && !sm_find(&ts->sub, e->key, e->klen))
			held_del(ts, e);
		else
			i++;
	}
	if (ts->started || ts->sub.len > 0) {
		ts->want = true;
		ts->sub_dirty = true;
	}
}

/* ---------------- resource parsing ---------------- */

/* Cluster: name and, for type EDS (3), the name its endpoints go by. */
static bool parse_cluster(const uint8_t *d, size_t n, struct pb_field *name,
			  char **eds)
{
	struct pb_rd r = pb_sub(d, n), r2;
	struct pb_field f, g, svc = {0};
	uint64_t type = 0;
	int rc;

	name->len = 0;
	name->data = NULL;
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wt == 2)
			*name = f;
		else if (f.num == 2 && f.wt == 0)
			type = f.v;
		else if (f.num == 3 && f.wt == 2) {
			r2 = pb_sub(f.data, f.len);
			while ((rc = pb_next(&r2, &g)) == 1)
				if (g.num == 2 && g.wt == 2)
					svc = g;
			if (rc < 0)
				return false;
		}
	}
	if (rc < 0)
		return false;
	*eds = NULL;
	if (type == 3)
		*eds = svc.len ? xstrndup(svc.data, svc.len)
			       : xstrndup(name->data, name->len);
	return true;
}

struct names {
	char *s;
	size_t len, cap;
};

static void names_add(struct names *ns, const uint8_t *p, size_t n)
{
	if (ns->len + n + 2 > ns->cap) {
		ns->cap = (ns->len + n + 2) * 2;
		ns->s = xrealloc(ns->s, ns->cap);
	}
	if (ns->len)
		ns->s[ns->len++] = '\n';
	memcpy(ns->s + ns->len, p, n);
	ns->len += n;
	ns->s[ns->len] = '\0';
}

/* An Any: if it holds an HttpConnectionManager using RDS, its route name. */
static bool parse_hcm_any(const uint8_t *d, size_t n, struct names *ns)
{
	struct pb_rd r = pb_sub(d, n), r2, r3;
	struct pb_field f, g, h, url = {0}, val = {0};
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wt == 2)
			url = f;
		else if (f.num == 2 && f.wt == 2)
			val = f;
	}
	if (rc < 0)
		return false;
	if (!span_eq(url.data, url.len, HCM_URL))
		return true;
	r2 = pb_sub(val.data, val.len);
	while ((rc = pb_next(&r2, &g)) == 1) {
		if (g.num != 3 || g.wt != 2)      /* rds */
			continue;
		r3 = pb_sub(g.data, g.len);
		while ((rc = pb_next(&r3, &h)) == 1)
			if (h.num == 2 && h.wt == 2 && h.len) /* route_config_name */
				names_add(ns, h.data, h.len);
		if (rc < 0)
			return false;
	}
	return rc == 0;
}

static bool parse_filter_chain(const uint8_t *d, size_t n, struct names *ns)
{
	struct pb_rd r = pb_sub(d, n), r2;
	struct pb_field f, g;
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num != 3 || f.wt != 2)          /* filters */
			continue;
		r2 = pb_sub(f.data, f.len);
		while ((rc = pb_next(&r2, &g)) == 1)
			if (g.num == 4 && g.wt == 2 &&    /* typed_config */
			    !parse_hcm_any(g.data, g.len, ns))
				return false;
		if (rc < 0)
			return false;
	}
	return rc == 0;
}

/* Listener: name and the route configurations its HCMs get over RDS. */
static bool parse_listener(const uint8_t *d, size_t n, struct pb_field *name,
			   char **rds)
{
	struct pb_rd r = pb_sub(d, n), r2;
	struct pb_field f, g;
	struct names ns = {0};
	int rc;

	name->len = 0;
	name->data = NULL;
	*rds = NULL;
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.num == 1) {
			*name = f;
		} else if (f.num == 3 || f.num == 25) {
			if (!parse_filter_chain(f.data, f.len, &ns))
				goto bad;
		} else if (f.num == 19) {             /* api_listener */
			r2 = pb_sub(f.data, f.len);
			while ((rc = pb_next(&r2, &g)) == 1)
				if (g.num == 1 && g.wt == 2 &&
				    !parse_hcm_any(g.data, g.len, &ns))
					goto bad;
			if (rc < 0)
				goto bad;
		}
	}
	if (rc < 0)
		goto bad;
	*rds = ns.s;
	return true;
bad:
	free(ns.s);
	return false;
}

/* ClusterLoadAssignment.cluster_name and RouteConfiguration.name: field 1. */
static bool parse_name1(const uint8_t *d, size_t n, struct pb_field *name)
{
	struct pb_rd r = pb_sub(d, n);
	struct pb_field f;
	int rc;

	name->len = 0;
	name->data = NULL;
	while ((rc = pb_next(&r, &f)) == 1)
		if (f.num == 1 && f.wt == 2)
			*name = f;
	return rc == 0;
}

static void twice(struct client *c, enum rt t, const uint8_t *p, size_t n)
{
	if (atomic_fetch_add(&g_twice, 1) < 5)
		fprintf(stderr, "fleet: client %d: a %s response names '%.*s' twice\n",
			c->idx, type_name[t], (int)n, (const char *)p);
}

/*
 * Takes one resource (the Any's value) of type t into the held set,
 * with version hash `ver`. `want_name` (delta) is the Resource's name,
 * when it has one. Returns false when malformed; *changed tells whether
 * the held state changed.
 */
static bool take_resource(struct client *c, enum rt t, const uint8_t *d,
			  size_t n, uint64_t ver, const struct pb_field *rname,
			  struct hset *seen, bool *changed)
{
	struct tstate *ts = &c->t[t];
	struct pb_field name;
	struct sm_ent *e;
	char *aux = NULL;
	bool created, ok;

	switch (t) {
	case CDS:
		ok = parse_cluster(d, n, &name, &aux);
		break;
	case LDS:
		ok = parse_listener(d, n, &name, &aux);
		break;
	default:
		ok = parse_name1(d, n, &name);
		break;
	}
	if (!ok)
		return false;
	if (rname != NULL && rname->len)
		name = *rname;
	if (!hset_add(seen, hash_bytes(name.data, name.len)))
		twice(c, t, name.data, name.len);
	if ((t == EDS || t == RDS) && !sm_find(&ts->sub, (const char *)name.data, name.len)) {
		atomic_fetch_add(&g_unsub, 1);
		free(aux);
		return true;
	}
	e = sm_put(&ts->held, (const char *)name.data, name.len, &created);
	if (created || e->ver != ver) {
		held_set(ts, e, ver, created);
		*changed = true;
	}
	if ((aux == NULL) != (e->aux == NULL) ||
	    (aux != NULL && strcmp(aux, e->aux) != 0))
		*changed = true;
	free(e->aux);
	e->aux = aux;
	return true;
}

static enum rt type_of(const uint8_t *p, size_t n)
{
	for (int t = 0; t < NT; t++)
		if (span_eq(p, n, type_url[t]))
			return (enum rt)t;
	return NT;
}

/* ---------------- responses ---------------- */

static void after_response(struct client *c, enum rt t, bool changed)
{
	struct tstate *ts = &c->t[t];

	if (!changed && !ts->sub_dirty)
		atomic_fetch_add(&g_dups[t], 1);
	ts->sub_dirty = false;
	ts->unacked = true;
	ts->want = true;
	atomic_fetch_add(&g_resp[t], 1);
	if (t == CDS)
		derive_sub(c, CDS, EDS);
	else if (t == LDS)
		derive_sub(c, LDS, RDS);
}

static bool on_sotw(struct client *c, const uint8_t *d, size_t n)
{
	struct pb_rd r = pb_sub(d, n), ra;
	struct pb_field f, a, ver = {0}, url = {0}, nonce = {0};
	struct tstate *ts;
	enum rt t;
	struct hset seen = {0};
	bool changed = false;
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.num == 1)
			ver = f;
		else if (f.num == 4)
			url = f;
		else if (f.num == 5)
			nonce = f;
	}
	if (rc < 0)
		return false;
	t = type_of(url.data, url.len);
	if (t == NT || !c->t[t].started) {
		atomic_fetch_add(&g_unknown, 1);
		return true;
	}
	ts = &c->t[t];
	if (ts->version == NULL || !span_eq(ver.data, ver.len, ts->version))
		changed = true;
	free(ts->version);
	free(ts->nonce);
	ts->version = xstrndup(ver.data, ver.len);
	ts->nonce = xstrndup(nonce.data, nonce.len);
	if (t == CDS || t == LDS) {
		/* full state: what is absent is gone */
		sm_clear(&ts->held);
		ts->digest = 0;
	}
	r = pb_sub(d, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		struct pb_field val = {0};

		if (f.num != 2 || f.wt != 2)
			continue;
		ra = pb_sub(f.data, f.len);
		while ((rc = pb_next(&ra, &a)) == 1)
			if (a.num == 2 && a.wt == 2)
				val = a;
		if (rc < 0)
			goto bad;
		/* CDS and LDS are rebuilt whole: their version tells */
		bool rchanged = false;

		if (!take_resource(c, t, val.data, val.len,
				   hash_bytes(val.data, val.len), NULL, &seen,
				   &rchanged))
			goto bad;
		if (t == EDS || t == RDS)
			changed |= rchanged;
	}
	free(seen.v);
	if (rc < 0)
		return false;
	trace(c, "<- %s version %s nonce %s: %u held%s%s", type_name[t],
	      ts->version, ts->nonce, ts->held.len, changed ? "" : " (same version)",
	      ts->sub_dirty ? " (subscription changed)" : "");
	after_response(c, t, changed);
	return true;
bad:
	free(seen.v);
	return false;
}

static void nq_push(struct tstate *ts, const uint8_t *p, size_t n)
{
	if (ts->nq_len == ts->nq_cap) {
		ts->nq_cap = ts->nq_cap ? ts->nq_cap * 2 : 4;
		ts->nq = xrealloc(ts->nq, ts->nq_cap * sizeof(*ts->nq));
	}
	ts->nq[ts->nq_len++] = xstrndup(p, n);
}

static bool on_delta(struct client *c, const uint8_t *d, size_t n)
{
	struct pb_rd r = pb_sub(d, n), rr;
	struct pb_field f, g, url = {0}, nonce = {0};
	struct tstate *ts;
	struct hset seen = {0};
	enum rt t;
	bool changed = false;
	int rc;

	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.num == 4)
			url = f;
		else if (f.num == 5)
			nonce = f;
	}
	if (rc < 0)
		return false;
	t = type_of(url.data, url.len);
	if (t == NT || !c->t[t].started) {
		atomic_fetch_add(&g_unknown, 1);
		return true;
	}
	ts = &c->t[t];
	r = pb_sub(d, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.wt != 2)
			continue;
		if (f.num == 2) {                 /* Resource */
			struct pb_field name = {0}, ver = {0}, any = {0}, val = {0};

			rr = pb_sub(f.data, f.len);
			while ((rc = pb_next(&rr, &g)) == 1) {
				if (g.wt != 2)
					continue;
				if (g.num == 3)
					name = g;
				else if (g.num == 1)
					ver = g;
				else if (g.num == 2)
					any = g;
			}
			if (rc < 0)
				goto bad;
			if (any.data == NULL) {
				if (!hset_add(&seen, hash_bytes(name.data, name.len)))
					twice(c, t, name.data, name.len);
				trace(c, "   %s %.*s: does not exist", type_name[t],
				      (int)name.len, (const char *)name.data);
				/* D8: a name that does not exist */
				struct sm_ent *e = sm_find(&ts->held, (const char *)name.data, name.len);

				if (e) {
					held_del(ts, e);
					changed = true;
				}
				continue;
			}
			rr = pb_sub(any.data, any.len);
			while ((rc = pb_next(&rr, &g)) == 1)
				if (g.num == 2 && g.wt == 2)
					val = g;
			if (rc < 0)
				goto bad;
			if (!take_resource(c, t, val.data, val.len,
					   hash_bytes(ver.data, ver.len), &name,
					   &seen, &changed))
				goto bad;
		} else if (f.num == 6) {          /* removed_resources */
			struct sm_ent *e = sm_find(&ts->held, (const char *)f.data, f.len);

			if (!hset_add(&seen, hash_bytes(f.data, f.len)))
				twice(c, t, f.data, f.len);
			trace(c, "   %s %.*s: removed", type_name[t], (int)f.len,
			      (const char *)f.data);
			if (e) {
				held_del(ts, e);
				changed = true;
			}
		}
	}
	free(seen.v);
	if (rc < 0)
		return false;
	nq_push(ts, nonce.data, nonce.len);
	trace(c, "<- %s nonce %s: %u held%s%s", type_name[t], ts->nq[ts->nq_len - 1],
	      ts->held.len, changed ? "" : " (nothing changed)",
	      ts->sub_dirty ? " (subscription changed)" : "");
	after_response(c, t, changed);
	return true;
bad:
	free(seen.v);
	return false;
}

/* ---------------- requests ---------------- */

static bool covered(const struct tstate *ts)
{
	SM_EACH(&ts->sub, e)
		if (!sm_find(&ts->held, e->key, e->klen))
			return false;
	return true;
}

static bool type_ready(const struct client *c, enum rt t)
{
	const struct tstate *ts = &c->t[t];

	if (t == EDS || t == RDS) {
		if (ts->sub.len == 0)
			return true;
		return ts->acks > 0 && !ts->unacked && covered(ts);
	}
	return ts->acks > 0 && !ts->unacked;
}

/* Envoy's start-up order: listeners once the clusters are warm. */
static void check_progress(struct client *c)
{
	if (c->t_full)
		return;
	if (!c->t[LDS].started && !c->t[LDS].want &&
	    type_ready(c, CDS) && type_ready(c, EDS))
		c->t[LDS].want = true;
	for (int t = 0; t < NT; t++)
		if (!type_ready(c, (enum rt)t))
			return;
	if (c->t[LDS].acks == 0)
		return;
	c->t_full = now_ns();
	atomic_fetch_add(&g_configured, 1);
}

static void note_ack(struct tstate *ts, uint64_t state)
{
	ts->unacked = false;
	ts->acks++;
	if (state != ts->ack_state) {
		ts->ack_state = state;
		ts->ack_at = now_ns();
	}
}

static void build_sotw(struct client *c, enum rt t, struct pb_wr *w)
{
	struct tstate *ts = &c->t[t];

	pbw_str(w, 1, ts->version);
	if (!c->node_sent) {
		pbw_bytes(w, 2, c->node, c->node_len);
		c->node_sent = true;
	}
	if (t == EDS || t == RDS)
		SM_EACH(&ts->sub, e)
			pbw_bytes(w, 3, e->key, e->klen);
	pbw_str(w, 4, type_url[t]);
	pbw_str(w, 5, ts->nonce);
	trace(c, "-> %s version %s nonce %s, %u names%s", type_name[t],
	      ts->version ? ts->version : "", ts->nonce ? ts->nonce : "",
	      ts->sub.len, ts->unacked ? " (ACK)" : "");
	ts->want = false;
	if (ts->unacked)
		note_ack(ts, hash_bytes(ts->version, strlen(ts->version)));
}

static void build_delta(struct client *c, enum rt t, struct pb_wr *w)
{
	struct tstate *ts = &c->t[t];
	bool created;

	if (!c->node_sent) {
		pbw_bytes(w, 1, c->node, c->node_len);
		c->node_sent = true;
	}
	pbw_str(w, 2, type_url[t]);
	if (t == EDS || t == RDS) {
		unsigned nsub = 0, nunsub = 0;

		SM_EACH(&ts->sub, e)
			if (!sm_find(&ts->sent, e->key, e->klen)) {
				pbw_bytes(w, 3, e->key, e->klen);
				nsub++;
			}
		SM_EACH(&ts->sent, e)
			if (!sm_find(&ts->sub, e->key, e->klen)) {
				pbw_bytes(w, 4, e->key, e->klen);
				nunsub++;
			}
		if (nsub || nunsub)
			trace(c, "-> %s subscribe %u, unsubscribe %u",
			      type_name[t], nsub, nunsub);
		sm_clear(&ts->sent);
		SM_EACH(&ts->sub, e)
			sm_put(&ts->sent, e->key, e->klen, &created);
	}
	/* one ACK per response, oldest first, as Envoy sends them */
	if (ts->nq_len) {
		trace(c, "-> %s ACK nonce %s", type_name[t], ts->nq[0]);
		pbw_str(w, 6, ts->nq[0]);
		free(ts->nq[0]);
		memmove(ts->nq, ts->nq + 1, --ts->nq_len * sizeof(*ts->nq));
	}
	ts->want = ts->nq_len > 0;
	if (ts->unacked && ts->nq_len == 0)
		note_ack(ts, ts->digest);
}

/* Starts the next request due, if none is in flight: CDS, EDS, LDS, RDS. */
static void pump(struct client *c)
{
	struct pb_wr w = {0};
	grpc_slice s;
	grpc_op op;
	int t;

	if (c->send_busy || c->dead)
		return;
	check_progress(c);
	for (t = 0; t < NT; t++)
		if (c->t[t].want)
			break;
	if (t == NT)
		return;
	if (opt.mode == SOTW)
		build_sotw(c, (enum rt)t, &w);
	else
		build_delta(c, (enum rt)t, &w);
	c->t[t].started = true;
	check_progress(c);
	s = w.len ? grpc_slice_new(w.buf, w.len, free) : grpc_empty_slice();
	if (!w.len)
		free(w.buf);
	c->sbb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_SEND_MESSAGE;
	op.data.send_message.send_message = c->sbb;
	c->send_busy = true;
	start_batch(c, &op, 1, &c->t_send);
}

static void start_recv(struct client *c)
{
	grpc_op op;

	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &c->rbb;
	start_batch(c, &op, 1, &c->t_recv);
}

static void client_start(struct client *c)
{
	grpc_op ops[2];
	grpc_slice method = grpc_slice_from_static_string(
		opt.mode == SOTW ? ADS_SOTW : ADS_DELTA);

	pthread_mutex_lock(&c->mu);
	c->t_begin = now_ns();
	c->call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS,
					   cqs[c->idx % opt.threads], method, NULL,
					   gpr_inf_future(GPR_CLOCK_REALTIME),
					   NULL);
	if (c->call == NULL)
		die("client %d: cannot create a call", c->idx);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	/* queue until connected instead of failing fast during the storm */
	ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
	ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[1].data.recv_initial_metadata.recv_initial_metadata = &c->imd;
	start_batch(c, ops, 2, &c->t_start);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[0].data.recv_status_on_client.trailing_metadata = &c->tmd;
	ops[0].data.recv_status_on_client.status = &c->status;
	ops[0].data.recv_status_on_client.status_details = &c->details;
	start_batch(c, ops, 1, &c->t_status);
	start_recv(c);
	c->t[CDS].want = true;              /* wildcard */
	pump(c);
	pthread_mutex_unlock(&c->mu);
}

/* ---------------- completions ---------------- */

static void on_recv(struct client *c, bool ok)
{
	grpc_byte_buffer_reader rd;
	grpc_slice all;
	bool good;

	if (!ok || c->rbb == NULL) {
		c->dead = true;              /* the status follows */
		return;
	}
	if (!grpc_byte_buffer_reader_init(&rd, c->rbb))
		die("client %d: cannot read a message", c->idx);
	all = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	grpc_byte_buffer_destroy(c->rbb);
	c->rbb = NULL;
	start_recv(c);

	size_t n = GRPC_SLICE_LENGTH(all);

	c->rx_bytes += n;
	atomic_fetch_add(&g_rx_bytes, n);
	atomic_fetch_add(&g_rx_msgs, 1);
	atomic_store(&g_last_rx, now_ns());
	if (opt.mode == SOTW)
		good = on_sotw(c, GRPC_SLICE_START_PTR(all), n);
	else
		good = on_delta(c, GRPC_SLICE_START_PTR(all), n);
	grpc_slice_unref(all);
	if (!good && atomic_fetch_add(&g_bad, 1) < 5)
		fprintf(stderr, "fleet: client %d: malformed response (%zu bytes)\n",
			c->idx, n);
	pump(c);
}

static void on_status(struct client *c)
{
	c->dead = true;
	if (atomic_load(&g_stopping))
		return;
	atomic_fetch_add(&g_failed, 1);
	if (atomic_fetch_add(&g_fail_logged, 1) < 5) {
		char *d = grpc_slice_to_c_string(c->details);

		fprintf(stderr, "fleet: client %d: stream ended: status %d: %s\n",
			c->idx, (int)c->status, d);
		gpr_free(d);
	}
}

static void *cq_thread(void *arg)
{
	grpc_completion_queue *cq = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(
			cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;

		struct tag *t = ev.tag;
		struct client *c = t->c;

		pthread_mutex_lock(&c->mu);
		switch (t->kind) {
		case TAG_START:
			break;
		case TAG_SEND:
			grpc_byte_buffer_destroy(c->sbb);
			c->sbb = NULL;
			c->send_busy = false;
			if (ev.success)
				pump(c);
			break;
		case TAG_RECV:
			on_recv(c, ev.success);
			break;
		case TAG_STATUS:
			on_status(c);
			break;
		}
		pthread_mutex_unlock(&c->mu);
		atomic_fetch_sub(&g_ops, 1);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The server process                                                  */

static long proc_status_kb(const char *key)
{
	char path[64], line[256];
	FILE *f;
	long v = -1;
	size_t kl = strlen(key);

	if (opt.server_pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/status", opt.server_pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* utime + stime of the server, in seconds; -1 when unknown. */
static double proc_cpu_s(void)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	if (opt.server_pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", opt.server_pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');       /* comm may hold spaces */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU time all processes spent, in seconds (busy jiffies of /proc/stat). */
static double system_busy_s(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (f == NULL)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return -1;
	/* user nice system [idle iowait] irq softirq steal */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
	       (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Context switches of every thread of the server. */
static long proc_switches(void)
{
	char pat[64], line[256];
	glob_t g;
	long total = 0;

	if (opt.server_pid <= 0)
		return -1;
	snprintf(pat, sizeof(pat), "/proc/%ld/task/*/status", opt.server_pid);
	if (glob(pat, 0, NULL, &g) != 0)
		return -1;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "ctxt_switches:"))
				total += strtol(strchr(line, ':') + 1, NULL, 10);
		fclose(f);
	}
	globfree(&g);
	return total;
}

/* ------------------------------------------------------------------ */
/* Measurements                                                        */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n), in ms. */
static double pct_ms(const uint64_t *v, size_t n, double p)
{
	size_t k;

	if (n == 0)
		return -1;
	k = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1e6;
}

static FILE *out;   /* the summary line, built as we go */
static char *out_buf;
static size_t out_len;

static void kv(const char *key, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, " %s=", key);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static bool quiet_since(uint64_t t, uint64_t now)
{
	uint64_t last = atomic_load(&g_last_rx);
	uint64_t q = (uint64_t)(opt.settle * 1e9);

	return now - (last > t ? last : t) >= q;
}

/* Waits until every client holds a full configuration. */
static bool wait_configured(uint64_t t0)
{
	uint64_t deadline = t0 + (uint64_t)(opt.timeout * 1e9), last_print = t0;

	for (;;) {
		uint64_t now = now_ns(), done = atomic_load(&g_configured);

		if (done + atomic_load(&g_failed) >= (uint64_t)opt.clients &&
		    quiet_since(t0, now))
			return done == (uint64_t)opt.clients;
		if (now > deadline)
			return false;
		if (opt.verbose && now - last_print > 1000000000u) {
			fprintf(stderr, "fleet: %" PRIu64 "/%d configured, %" PRIu64 " failed\n",
				done, opt.clients, atomic_load(&g_failed));
			last_print = now;
		}
		sleep_ms(20);
	}
}

static void print_initial(uint64_t t0)
{
	uint64_t *lat = xmalloc(sizeof(uint64_t) * (size_t)opt.clients);
	uint64_t last = 0, maxb = 0;
	size_t n = 0;

	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		pthread_mutex_lock(&c->mu);
		if (c->t_full) {
			lat[n++] = c->t_full - c->t_begin;
			if (c->t_full - t0 > last)
				last = c->t_full - t0;
		}
		if (c->rx_bytes > maxb)
			maxb = c->rx_bytes;
		c->rx_base = c->rx_bytes;
		pthread_mutex_unlock(&c->mu);
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	kv("configured", "%zu", n);
	kv("full_all_ms", "%.1f", (double)last / 1e6);
	kv("full_p50_ms", "%.1f", pct_ms(lat, n, 50));
	kv("full_p99_ms", "%.1f", pct_ms(lat, n, 99));
	kv("full_max_ms", "%.1f", pct_ms(lat, n, 100));
	uint64_t b = atomic_load(&g_rx_bytes);

	kv("init_rx_bytes", "%" PRIu64, b);
	kv("init_rx_bytes_per_client", "%" PRIu64, b / (uint64_t)opt.clients);
	kv("init_rx_bytes_max", "%" PRIu64, maxb);
	kv("init_responses", "%" PRIu64, atomic_load(&g_rx_msgs));
	free(lat);
}

struct vote {
	uint64_t state;
	size_t count;
};

/* The most common ack_state of type t among live clients. */
static struct vote majority(enum rt t)
{
	struct vote v = {0, 0};
	size_t count = 0, live = 0;

	/* Boyer-Moore, then a count of the candidate */
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		if (c->dead)
			continue;
		if (count == 0) {
			v.state = c->t[t].ack_state;
			count = 1;
		} else if (c->t[t].ack_state == v.state) {
			count++;
		} else {
			count--;
		}
	}
	for (int i = 0; i < opt.clients; i++)
		if (!clients[i].dead) {
			live++;
			if (clients[i].t[t].ack_state == v.state)
				v.count++;
		}
	(void)live;
	return v;
}

struct eval {
	bool changed[NT];
	uint64_t expect[NT];
	size_t converged;
	bool any_unacked;
};

/* Called with every client locked. */
static void evaluate(struct eval *ev)
{
	memset(ev, 0, sizeof(*ev));
	for (int t = 0; t < NT; t++) {
		struct vote v = majority((enum rt)t);

		ev->expect[t] = v.state;
		for (int i = 0; i < opt.clients; i++)
			if (!clients[i].dead &&
			    clients[i].t[t].ack_state != clients[i].t[t].base_state)
				ev->changed[t] = true;
	}
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];
		bool ok = !c->dead;

		for (int t = 0; t < NT && ok; t++) {
			if (c->t[t].unacked)
				ev->any_unacked = true;
			if (ev->changed[t] &&
			    (c->t[t].ack_state != ev->expect[t] || c->t[t].unacked))
				ok = false;
		}
		if (ok)
			ev->converged++;
	}
}

static void lock_all(void)
{
	for (int i = 0; i < opt.clients; i++)
		pthread_mutex_lock(&clients[i].mu);
}

static void unlock_all(void)
{
	for (int i = 0; i < opt.clients; i++)
		pthread_mutex_unlock(&clients[i].mu);
}

/* Runs trigger k and measures the convergence that follows. */
static bool run_trigger(int k)
{
	char p[16];
	uint64_t resp0[NT], dup0[NT], rx0, t0, deadline, *lat;
	double cpu0, cpu1;
	struct eval ev;
	bool ok = false;
	int rc;

	snprintf(p, sizeof(p), "u%d_", k + 1);
	lock_all();
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		for (int t = 0; t < NT; t++)
			c->t[t].base_state = c->t[t].ack_state;
		c->rx_base = c->rx_bytes;
	}
	for (int t = 0; t < NT; t++) {
		resp0[t] = atomic_load(&g_resp[t]);
		dup0[t] = atomic_load(&g_dups[t]);
	}
	rx0 = atomic_load(&g_rx_bytes);
	unlock_all();

	cpu0 = proc_cpu_s();
	t0 = now_ns();
	if (opt.verbose)
		fprintf(stderr, "fleet: trigger %d: %s\n", k + 1, opt.trigger[k]);
	rc = system(opt.trigger[k]);
	if (rc != 0) {
		fprintf(stderr, "fleet: trigger %d failed (status %d): %s\n",
			k + 1, rc, opt.trigger[k]);
		kv("u_error", "trigger%d", k + 1);
		return false;
	}
	deadline = t0 + (uint64_t)(opt.timeout * 1e9);
	for (;;) {
		uint64_t now = now_ns();
		bool any = false;

		lock_all();
		evaluate(&ev);
		unlock_all();
		for (int t = 0; t < NT; t++)
			any |= ev.changed[t];
		if (any && ev.converged == (size_t)opt.clients &&
		    quiet_since(t0, now)) {
			ok = true;
			break;
		}
		if (now > deadline)
			break;
		sleep_ms(50);
	}
	cpu1 = proc_cpu_s();

	/* figures */
	lat = xmalloc(sizeof(uint64_t) * (size_t)opt.clients);
	size_t n = 0;
	uint64_t maxb = 0;
	char changed[64] = "", key[64];

	lock_all();
	for (int t = 0; t < NT; t++)
		if (ev.changed[t]) {
			if (*changed)
				strcat(changed, ",");
			strcat(changed, type_name[t]);
		}
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];
		uint64_t worst = 0;
		bool good = !c->dead;

		for (int t = 0; t < NT && good; t++) {
			if (!ev.changed[t])
				continue;
			if (c->t[t].ack_state != ev.expect[t] || c->t[t].unacked)
				good = false;
			else if (c->t[t].ack_at > t0 && c->t[t].ack_at - t0 > worst)
				worst = c->t[t].ack_at - t0;
		}
		if (good)
			lat[n++] = worst;
		if (c->rx_bytes - c->rx_base > maxb)
			maxb = c->rx_bytes - c->rx_base;
	}
	unlock_all();
	qsort(lat, n, sizeof(*lat), cmp_u64);

#define KEY(s) (snprintf(key, sizeof(key), "%s%s", p, s), key)
	kv(KEY("changed"), "%s", *changed ? changed : "none");
	kv(KEY("converged"), "%zu", n);
	kv(KEY("conv_p50_ms"), "%.1f", pct_ms(lat, n, 50));
	kv(KEY("conv_p99_ms"), "%.1f", pct_ms(lat, n, 99));
	kv(KEY("conv_max_ms"), "%.1f", pct_ms(lat, n, 100));
	uint64_t b = atomic_load(&g_rx_bytes) - rx0;

	kv(KEY("rx_bytes"), "%" PRIu64, b);
	kv(KEY("rx_bytes_per_client"), "%" PRIu64, b / (uint64_t)opt.clients);
	kv(KEY("rx_bytes_max"), "%" PRIu64, maxb);
	kv(KEY("responses"), "cds:%" PRIu64 "/eds:%" PRIu64 "/lds:%" PRIu64 "/rds:%" PRIu64,
	   atomic_load(&g_resp[CDS]) - resp0[CDS],
	   atomic_load(&g_resp[EDS]) - resp0[EDS],
	   atomic_load(&g_resp[LDS]) - resp0[LDS],
	   atomic_load(&g_resp[RDS]) - resp0[RDS]);
	kv(KEY("dups"), "cds:%" PRIu64 "/eds:%" PRIu64 "/lds:%" PRIu64 "/rds:%" PRIu64,
	   atomic_load(&g_dups[CDS]) - dup0[CDS],
	   atomic_load(&g_dups[EDS]) - dup0[EDS],
	   atomic_load(&g_dups[LDS]) - dup0[LDS],
	   atomic_load(&g_dups[RDS]) - dup0[RDS]);
	if (cpu0 >= 0 && cpu1 >= 0)
		kv(KEY("server_cpu_ms"), "%.0f", (cpu1 - cpu0) * 1000);
#undef KEY
	free(lat);
	if (!ok)
		fprintf(stderr, "fleet: trigger %d: %zu of %d clients converged "
			"within %.0f s (changed: %s)\n", k + 1, n, opt.clients,
			opt.timeout, *changed ? changed : "nothing");
	return ok;
}

/* ------------------------------------------------------------------ */
/* Start-up and shutdown                                               */

static void usage(FILE *f)
{
	fprintf(f,
"usage: fleet --target HOST:PORT [options]\n"
"  --clients N        simulated Envoys, one connection each (1000)\n"
"  --mode sotw|delta  StreamAggregatedResources or DeltaAggregatedResources (sotw)\n"
"  --node-prefix P    node ids are P-0, P-1, ... (fleet)\n"
"  --cluster KEY      node.cluster of every client (default)\n"
"  --threads N        threads, each polling a completion queue (2)\n"
"  --rate R           open R streams per second (0: all at once)\n"
"  --trigger CMD      run CMD once configured, measure convergence (repeatable)\n"
"  --timeout S        give up on a phase after S seconds (120)\n"
"  --settle S         quiet time that ends a phase (1)\n"
"  --hold S           keep the streams open and idle for S seconds at the end\n"
"  --server-pid PID   report the server's RSS and CPU time\n"
"  --label TEXT       copied into the summary line\n"
"  -v, --verbose      progress on stderr\n"
"  --trace I          log every message of client I on stderr\n");
}

static double num_arg(const char *name, const char *s, double min)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end != '\0' || v < min) {
		fprintf(stderr, "fleet: bad value for --%s: '%s'\n", name, s);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{"target", required_argument, NULL, 't'},
		{"clients", required_argument, NULL, 'n'},
		{"mode", required_argument, NULL, 'm'},
		{"node-prefix", required_argument, NULL, 'p'},
		{"cluster", required_argument, NULL, 'k'},
		{"threads", required_argument, NULL, 'T'},
		{"rate", required_argument, NULL, 'r'},
		{"trigger", required_argument, NULL, 'g'},
		{"timeout", required_argument, NULL, 'o'},
		{"settle", required_argument, NULL, 's'},
		{"hold", required_argument, NULL, 'h'},
		{"server-pid", required_argument, NULL, 'P'},
		{"label", required_argument, NULL, 'l'},
		{"verbose", no_argument, NULL, 'v'},
		{"trace", required_argument, NULL, 'X'},
		{"help", no_argument, NULL, 'H'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (ch) {
		case 't': opt.target = optarg; break;
		case 'n': opt.clients = (int)num_arg("clients", optarg, 1); break;
		case 'm':
			if (strcmp(optarg, "sotw") == 0)
				opt.mode = SOTW;
			else if (strcmp(optarg, "delta") == 0)
				opt.mode = DELTA;
			else {
				fprintf(stderr, "fleet: --mode is sotw or delta\n");
				exit(2);
			}
			break;
		case 'p': opt.node_prefix = optarg; break;
		case 'k': opt.cluster = optarg; break;
		case 'T': opt.threads = (int)num_arg("threads", optarg, 1); break;
		case 'r': opt.rate = num_arg("rate", optarg, 0); break;
		case 'g':
			if (opt.ntriggers == MAX_TRIGGERS) {
				fprintf(stderr, "fleet: at most %d triggers\n", MAX_TRIGGERS);
				exit(2);
			}
			opt.trigger[opt.ntriggers++] = optarg;
			break;
		case 'o': opt.timeout = num_arg("timeout", optarg, 0.1); break;
		case 's': opt.settle = num_arg("settle", optarg, 0); break;
		case 'h': opt.hold = num_arg("hold", optarg, 0); break;
		case 'P': opt.server_pid = (long)num_arg("server-pid", optarg, 1); break;
		case 'l': opt.label = optarg; break;
		case 'v': opt.verbose = true; break;
		case 'X': opt.trace = (int)num_arg("trace", optarg, 0); break;
		case 'H': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc || opt.target == NULL) {
		usage(stderr);
		exit(2);
	}
	if (opt.threads > MAX_THREADS)
		opt.threads = MAX_THREADS;
	/* an IPv4 literal skips the DNS resolver */
	size_t lead = strspn(opt.target, "0123456789.");
	if (lead > 0 && opt.target[lead] == ':' && !strchr(opt.target + lead + 1, ':')) {
		opt.grpc_target = xmalloc(strlen(opt.target) + 6);
		sprintf(opt.grpc_target, "ipv4:%s", opt.target);
	} else {
		opt.grpc_target = xstrndup(opt.target, strlen(opt.target));
	}
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < (rlim_t)opt.clients + 64)
		fprintf(stderr, "fleet: warning: open files limited to %lu for %d connections\n",
			(unsigned long)rl.rlim_cur, opt.clients);
}

static grpc_channel *make_channel(void)
{
	grpc_arg args[4];
	grpc_channel_args ca = {.num_args = 4, .args = args};
	grpc_channel_credentials *creds = grpc_insecure_credentials_create();
	grpc_channel *ch;

	memset(args, 0, sizeof(args));
	/* one connection per client, as every Envoy has */
	args[0].type = GRPC_ARG_INTEGER;
	args[0].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
	args[0].value.integer = 1;
	args[1].type = GRPC_ARG_INTEGER;
	args[1].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	args[1].value.integer = -1;
	/* no retry buffering, no channelz: less driver overhead */
	args[2].type = GRPC_ARG_INTEGER;
	args[2].key = (char *)GRPC_ARG_ENABLE_RETRIES;
	args[2].value.integer = 0;
	args[3].type = GRPC_ARG_INTEGER;
	args[3].key = (char *)GRPC_ARG_ENABLE_CHANNELZ;
	args[3].value.integer = 0;
	ch = grpc_channel_create(opt.grpc_target, creds, &ca);
	grpc_channel_credentials_release(creds);
	return ch;
}

static void shutdown_fleet(pthread_t *th)
{
	uint64_t deadline;

	atomic_store(&g_stopping, true);
	for (int i = 0; i < opt.clients; i++) {
		pthread_mutex_lock(&clients[i].mu);
		if (clients[i].call)
			grpc_call_cancel(clients[i].call, NULL);
		pthread_mutex_unlock(&clients[i].mu);
	}
	deadline = now_ns() + 30000000000ull;
	while (atomic_load(&g_ops) > 0 && now_ns() < deadline)
		sleep_ms(10);
	if (atomic_load(&g_ops) > 0) {
		/* not worth hanging a benchmark over */
		fprintf(stderr, "fleet: %" PRId64 " operations still pending at exit\n",
			atomic_load(&g_ops));
		return;
	}
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		if (c->call)
			grpc_call_unref(c->call);
		grpc_channel_destroy(c->ch);
		grpc_metadata_array_destroy(&c->imd);
		grpc_metadata_array_destroy(&c->tmd);
		grpc_slice_unref(c->details);
		for (int t = 0; t < NT; t++) {
			struct tstate *ts = &c->t[t];

			sm_clear(&ts->sub);
			sm_clear(&ts->sent);
			sm_clear(&ts->held);
			free(ts->version);
			free(ts->nonce);
			for (uint32_t j = 0; j < ts->nq_len; j++)
				free(ts->nq[j]);
			free(ts->nq);
		}
		free(c->node);
		pthread_mutex_destroy(&c->mu);
	}
	for (int i = 0; i < opt.threads; i++)
		grpc_completion_queue_shutdown(cqs[i]);
	for (int i = 0; i < opt.threads; i++) {
		pthread_join(th[i], NULL);
		grpc_completion_queue_destroy(cqs[i]);
	}
	free(clients);
	grpc_shutdown_blocking();
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	uint64_t t0;
	long rss0, rss1, rss2;
	double cpu0, cpu1, busy0, srv0;
	bool ok;
	struct rusage ru;

	t_prog = now_ns();
	parse_args(argc, argv);
	raise_nofile();
	busy0 = system_busy_s();
	srv0 = proc_cpu_s();
	out = open_memstream(&out_buf, &out_len);
	if (out == NULL)
		die("open_memstream: %s", strerror(errno));
	fprintf(out, "fleet");
	if (opt.label)
		kv("label", "%s", opt.label);
	kv("mode", "%s", opt.mode == SOTW ? "sotw" : "delta");
	kv("clients", "%d", opt.clients);

	/* A 10k-connection client serializes on abseil's deadlock-detection
	 * lock (opening 2000 streams: 5.1 s with it, 1.5 s without). */
	xd_abseil_deadlock_detection_off();
	grpc_init();
	for (int i = 0; i < opt.threads; i++) {
		cqs[i] = grpc_completion_queue_create_for_next(NULL);
		if (pthread_create(&th[i], NULL, cq_thread, cqs[i]) != 0)
			die("pthread_create failed");
	}

	clients = xcalloc((size_t)opt.clients, sizeof(*clients));
	for (int i = 0; i < opt.clients; i++) {
		struct client *c = &clients[i];

		pthread_mutex_init(&c->mu, NULL);
		c->idx = i;
		c->t_start = (struct tag){c, TAG_START};
		c->t_send = (struct tag){c, TAG_SEND};
		c->t_recv = (struct tag){c, TAG_RECV};
		c->t_status = (struct tag){c, TAG_STATUS};
		grpc_metadata_array_init(&c->imd);
		grpc_metadata_array_init(&c->tmd);
		c->details = grpc_empty_slice();
		encode_node(c);
	}

	rss0 = proc_status_kb("VmRSS");
	cpu0 = proc_cpu_s();
	t0 = now_ns();
	for (int i = 0; i < opt.clients; i++) {
		if (opt.rate > 0) {
			uint64_t due = t0 + (uint64_t)((double)i / opt.rate * 1e9);
			uint64_t now = now_ns();

			if (due > now)
				sleep_ms((int)((due - now) / 1000000));
		}
		clients[i].ch = make_channel();
		client_start(&clients[i]);
	}
	kv("connect_ms", "%.1f", (double)(now_ns() - t0) / 1e6);
	ok = wait_configured(t0);
	print_initial(t0);
	rss1 = proc_status_kb("VmRSS");
	cpu1 = proc_cpu_s();
	if (cpu0 >= 0 && cpu1 >= 0)
		kv("init_server_cpu_ms", "%.0f", (cpu1 - cpu0) * 1000);
	if (rss0 >= 0) {
		kv("rss_before_kb", "%ld", rss0);
		kv("rss_configured_kb", "%ld", rss1);
		kv("rss_per_stream_kb", "%.1f", (double)(rss1 - rss0) / opt.clients);
	}
	if (!ok)
		fprintf(stderr, "fleet: %" PRIu64 " of %d clients got a full "
			"configuration within %.0f s (%" PRIu64 " streams failed)\n",
			atomic_load(&g_configured), opt.clients, opt.timeout,
			atomic_load(&g_failed));

	for (int k = 0; ok && k < opt.ntriggers; k++)
		ok = run_trigger(k);
	if (opt.ntriggers) {
		rss2 = proc_status_kb("VmRSS");
		if (rss2 >= 0)
			kv("rss_after_kb", "%ld", rss2);
	}
	if (opt.hold > 0 && ok) {
		uint64_t m0 = atomic_load(&g_rx_msgs);
		double c0 = proc_cpu_s(), c1;
		long s0 = proc_switches(), s1;

		if (opt.verbose)
			fprintf(stderr, "fleet: holding %d idle streams for %.0f s\n",
				opt.clients, opt.hold);
		sleep_ms((int)(opt.hold * 1000));
		c1 = proc_cpu_s();
		s1 = proc_switches();
		kv("hold_s", "%.0f", opt.hold);
		kv("hold_responses", "%" PRIu64, atomic_load(&g_rx_msgs) - m0);
		if (c0 >= 0 && c1 >= 0) {
			kv("hold_server_cpu_pct", "%.3f", 100 * (c1 - c0) / opt.hold);
			kv("hold_server_wakeups_per_s", "%.1f", (double)(s1 - s0) / opt.hold);
			kv("hold_rss_kb", "%ld", proc_status_kb("VmRSS"));
		}
	}
	kv("server_hwm_kb", "%ld", proc_status_kb("VmHWM"));
	kv("failed_streams", "%" PRIu64, atomic_load(&g_failed));
	kv("dup_responses", "%" PRIu64, atomic_load(&g_dups[CDS]) +
	   atomic_load(&g_dups[EDS]) + atomic_load(&g_dups[LDS]) +
	   atomic_load(&g_dups[RDS]));
	kv("unsubscribed_resources", "%" PRIu64, atomic_load(&g_unsub));
	kv("unexpected_types", "%" PRIu64, atomic_load(&g_unknown));
	kv("malformed", "%" PRIu64, atomic_load(&g_bad));
	kv("names_twice", "%" PRIu64, atomic_load(&g_twice));
	getrusage(RUSAGE_SELF, &ru);
	kv("fleet_cpu_s", "%.1f", self_cpu_s());
	kv("fleet_rss_kb", "%ld", ru.ru_maxrss);
	/* what neither the fleet nor the server used: other load, noise */
	double busy1 = system_busy_s(), srv1 = proc_cpu_s();
	double other = (busy1 - busy0) - self_cpu_s() - (srv1 - srv0);

	kv("wall_s", "%.1f", (double)(now_ns() - t_prog) / 1e9);
	/* clock-tick rounding can make it slightly negative */
	if (busy0 >= 0 && busy1 >= 0 && srv0 >= 0 && srv1 >= 0)
		kv("other_cpu_s", "%.1f", other > 0 ? other : 0.0);
	kv("result", "%s", ok ? "ok" : "FAIL");
	fclose(out);
	printf("%s\n", out_buf);
	fflush(stdout);
	free(out_buf);

	shutdown_fleet(th);
	free(opt.grpc_target);
	return ok ? 0 : 1;
}
