/* SPDX-License-Identifier: Apache-2.0 */
#include "rollout/record.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/common.h"
#include "util/xalloc.h"

#define FORMAT 1

static const char *const state_names[XD_ROLLOUT_STATES] = {
	[XD_ROLLOUT_IDLE] = "idle",         [XD_ROLLOUT_CANARY] = "canary",
	[XD_ROLLOUT_BAKING] = "baking",     [XD_ROLLOUT_PROMOTED] = "promoted",
	[XD_ROLLOUT_FAILED] = "failed",     [XD_ROLLOUT_ABORTED] = "aborted",
};

const char *xd_rollout_state_name(enum xd_rollout_state s)
{
	XD_ASSERT((unsigned)s < XD_ROLLOUT_STATES);
	return state_names[s];
}

bool xd_rollout_state_active(enum xd_rollout_state s)
{
	return s == XD_ROLLOUT_CANARY || s == XD_ROLLOUT_BAKING;
}

void xd_rollout_fingerprint(struct xd_snapshot *const *snaps, size_t n,
			    char out[XD_ROLLOUT_PRINT_LEN + 1])
{
	XXH3_state_t *h = XXH3_createState();

	XD_ASSERT(h != NULL);
	XXH3_64bits_reset(h);
	for (size_t i = 0; i < n; i++) {
		const char *k = xd_snapshot_key(snaps[i]);
		const char *v = xd_snapshot_version(snaps[i]);

		XD_ASSERT_INFO(i == 0 || strcmp(xd_snapshot_key(snaps[i - 1]), k) < 0,
			       "fingerprint of snapshots out of order at '%s'", k);
		/* with their NULs: "ab"+"c" is not "a"+"bc" */
		XXH3_64bits_update(h, k, strlen(k) + 1);
		XXH3_64bits_update(h, v, strlen(v) + 1);
	}
	snprintf(out, XD_ROLLOUT_PRINT_LEN + 1, "%016llx",
		 (unsigned long long)XXH3_64bits_digest(h));
	XXH3_freeState(h);
}

/* ---------------- lists and texts ---------------- */

void xd_rollout_text_set(char **field, const char *text)
{
	size_t len = strlen(text != NULL ? text : "");

	free(*field);
	*field = xd_strndup(text != NULL ? text : "",
			    len < XD_ROLLOUT_TEXT_MAX ? len : XD_ROLLOUT_TEXT_MAX);
}

void xd_rollout_list_add(char ***list, size_t *n, size_t max, size_t *total,
			 const char *text)
{
	if (total != NULL)
		(*total)++;
	if (*n >= max)
		return;
	*list = xd_reallocarray(*list, *n + 1, sizeof(**list));
	(*list)[*n] = NULL;
	xd_rollout_text_set(&(*list)[*n], text);
	(*n)++;
}

static void list_free(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* ---------------- the record ---------------- */

void xd_rollout_record_clear(struct xd_rollout_record *r)
{
	free(r->trigger);
	free(r->by);
	free(r->reason);
	list_free(r->keys, r->nkeys);
	list_free(r->uncovered, r->nuncovered);
	memset(r, 0, sizeof(*r));
}

void xd_rollout_record_copy(struct xd_rollout_record *to,
			    const struct xd_rollout_record *from)
{
	xd_rollout_record_clear(to);
	*to = *from;
	to->trigger = to->by = to->reason = NULL;
	to->keys = to->uncovered = NULL;
	to->nkeys = to->nuncovered = 0;
	xd_rollout_text_set(&to->trigger, from->trigger);
	xd_rollout_text_set(&to->by, from->by);
	xd_rollout_text_set(&to->reason, from->reason);
	to->keys_total = 0;
	for (size_t i = 0; i < from->nkeys; i++)
		xd_rollout_list_add(&to->keys, &to->nkeys, XD_ROLLOUT_KEYS_MAX,
				    NULL, from->keys[i]);
	to->keys_total = from->keys_total;
	for (size_t i = 0; i < from->nuncovered; i++)
		xd_rollout_list_add(&to->uncovered, &to->nuncovered,
				    XD_ROLLOUT_KEYS_MAX, NULL, from->uncovered[i]);
}

static json_t *list_json(char *const *list, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(list[i]));
	return a;
}

/* Appends `j` (taken) as text to `out`. */
static void dump(json_t *j, struct xd_buf *out)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);

	XD_ASSERT(text != NULL); /* only for lack of memory */
	xd_buf_append(out, text, strlen(text));
	free(text);
	json_decref(j);
}

void xd_rollout_record_write(const struct xd_rollout_record *r,
			     struct xd_buf *out)
{
	json_t *j = json_object();

	XD_ASSERT_INFO(r->state != XD_ROLLOUT_IDLE, "rollout record %llu idle",
		       (unsigned long long)r->id);
	json_object_set_new(j, "format", json_integer(FORMAT));
	json_object_set_new(j, "id", json_integer((json_int_t)r->id));
	json_object_set_new(j, "state", json_string(state_names[r->state]));
	json_object_set_new(j, "candidate", json_string(r->candidate));
	json_object_set_new(j, "stable", json_string(r->stable));
	json_object_set_new(j, "stable_revision", json_integer(r->stable_revision));
	json_object_set_new(j, "started", json_integer(r->started_ms));
	json_object_set_new(j, "baking_since", json_integer(r->baking_ms));
	json_object_set_new(j, "ended", json_integer(r->ended_ms));
	json_object_set_new(j, "now", json_boolean(r->now));
	json_object_set_new(j, "rollback", json_boolean(r->rollback));
	json_object_set_new(j, "trigger", json_string(r->trigger ? r->trigger : ""));
	json_object_set_new(j, "by", json_string(r->by ? r->by : ""));
	json_object_set_new(j, "reason", json_string(r->reason ? r->reason : ""));
	json_object_set_new(j, "keys", list_json(r->keys, r->nkeys));
	json_object_set_new(j, "keys_total", json_integer((json_int_t)r->keys_total));
	json_object_set_new(j, "uncovered", list_json(r->uncovered, r->nuncovered));
	dump(j, out);
}

/* ---------------- reading ---------------- */

/* What reading one value needs: its object, and the first thing wrong. */
struct rd {
	json_t *o;
	char *why;
	size_t wlen;
	bool bad;
};

static bool bad(struct rd *rd, const char *what, const char *key)
{
	if (!rd->bad)
		snprintf(rd->why, rd->wlen, "%s '%s'", what, key);
	rd->bad = true;
	return false;
}

static int64_t rd_int(struct rd *rd, json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		bad(rd, "not a non-negative integer:", key);
		return 0;
	}
	return json_integer_value(v);
}

static bool rd_bool(struct rd *rd, json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL)
		return false;
	if (!json_is_boolean(v))
		return bad(rd, "not true or false:", key);
	return json_is_true(v);
}

/* A string member (NULL when absent and !required). */
static const char *rd_str(struct rd *rd, json_t *o, const char *key,
			  bool required)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL && !required)
		return NULL;
	if (!json_is_string(v)) {
		bad(rd, required && v == NULL ? "missing" : "not a string:", key);
		return NULL;
	}
	return json_string_value(v);
}

static void rd_text(struct rd *rd, json_t *o, const char *key, char **field)
{
	xd_rollout_text_set(field, rd_str(rd, o, key, false));
}

static void rd_print(struct rd *rd, json_t *o, const char *key,
		     char out[XD_ROLLOUT_PRINT_LEN + 1], bool required)
{
	const char *s = rd_str(rd, o, key, required);
	size_t len = s != NULL ? strlen(s) : 0;

	out[0] = '\0';
	if (s == NULL)
		return;
	if ((len != 0 || required) &&
	    (len != XD_ROLLOUT_PRINT_LEN ||
	     strspn(s, "0123456789abcdef") != XD_ROLLOUT_PRINT_LEN)) {
		bad(rd, "not 16 hex digits:", key);
		return;
	}
	memcpy(out, s, len + 1);
}

static void rd_list(struct rd *rd, json_t *o, const char *key, char ***list,
		    size_t *n, size_t max)
{
	json_t *a = json_object_get(o, key), *v;
	size_t i;

	if (a == NULL)
		return;
	if (!json_is_array(a)) {
		bad(rd, "not a list:", key);
		return;
	}
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			bad(rd, "not a list of strings:", key);
			return;
		}
		xd_rollout_list_add(list, n, max, NULL, json_string_value(v));
	}
}

static int rd_open(struct rd *rd, const void *text, size_t len, char *why,
		   size_t wlen)
{
	json_error_t err;

	rd->why = why;
	rd->wlen = wlen;
	rd->bad = false;
	rd->o = NULL;
	if (len > XD_ROLLOUT_VALUE_MAX) {
		snprintf(why, wlen, "%zu bytes, more than %u", len,
			 XD_ROLLOUT_VALUE_MAX);
		return -1;
	}
	rd->o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (rd->o == NULL || !json_is_object(rd->o)) {
		snprintf(why, wlen, "not a JSON object%s%s",
			 rd->o == NULL ? ": " : "", rd->o == NULL ? err.text : "");
		json_decref(rd->o);
		rd->o = NULL;
		return -1;
	}
	if (rd_int(rd, rd->o, "format") != FORMAT && !rd->bad) {
		snprintf(why, wlen, "format %lld, not %d (a newer xdsd's?)",
			 (long long)rd_int(rd, rd->o, "format"), FORMAT);
		rd->bad = true;
	}
	return rd->bad ? -1 : 0;
}

int xd_rollout_record_read(struct xd_rollout_record *r, const void *text,
			   size_t len, char *why, size_t wlen)
{
	struct rd rd;
	const char *state;
	size_t s;

	memset(r, 0, sizeof(*r));
	if (rd_open(&rd, text, len, why, wlen) != 0) {
		json_decref(rd.o);
		return -1;
	}
	r->id = (uint64_t)rd_int(&rd, rd.o, "id");
	state = rd_str(&rd, rd.o, "state", true);
	for (s = XD_ROLLOUT_CANARY; state != NULL && s < XD_ROLLOUT_STATES; s++)
		if (strcmp(state, state_names[s]) == 0)
			break;
	if (state != NULL && s == XD_ROLLOUT_STATES)
		bad(&rd, "no such state:", state);
	r->state = state != NULL && s < XD_ROLLOUT_STATES ?
			   (enum xd_rollout_state)s : XD_ROLLOUT_FAILED;
	rd_print(&rd, rd.o, "candidate", r->candidate, true);
	rd_print(&rd, rd.o, "stable", r->stable, false);
	r->stable_revision = rd_int(&rd, rd.o, "stable_revision");
	r->started_ms = rd_int(&rd, rd.o, "started");
	r->baking_ms = rd_int(&rd, rd.o, "baking_since");
	r->ended_ms = rd_int(&rd, rd.o, "ended");
	r->now = rd_bool(&rd, rd.o, "now");
	r->rollback = rd_bool(&rd, rd.o, "rollback");
	rd_text(&rd, rd.o, "trigger", &r->trigger);
	rd_text(&rd, rd.o, "by", &r->by);
	rd_text(&rd, rd.o, "reason", &r->reason);
	rd_list(&rd, rd.o, "keys", &r->keys, &r->nkeys, XD_ROLLOUT_KEYS_MAX);
	r->keys_total = (size_t)rd_int(&rd, rd.o, "keys_total");
	if (r->keys_total < r->nkeys)
		r->keys_total = r->nkeys;
	rd_list(&rd, rd.o, "uncovered", &r->uncovered, &r->nuncovered,
		XD_ROLLOUT_KEYS_MAX);
	json_decref(rd.o);
	if (rd.bad) {
		xd_rollout_record_clear(r);
		return -1;
	}
	return 0;
}

/* ---------------- reports ---------------- */

static const char *const health_names[] = {
	"unknown", "serving", "degraded", "not_serving",
};

const char *xd_replica_health_name(enum xd_replica_health h)
{
	return (size_t)h < sizeof(health_names) / sizeof(health_names[0]) ?
		       health_names[h] : "unknown";
}

static void nack_clear(struct xd_rollout_nack *n)
{
	free(n->node_id);
	free(n->node_cluster);
	free(n->type);
	free(n->version);
	free(n->message);
}

void xd_rollout_report_clear(struct xd_rollout_report *r)
{
	free(r->replica);
	free(r->xds);
	free(r->admin);
	free(r->version);
	free(r->health_why);
	for (size_t i = 0; i < r->nkeys; i++)
		free(r->keys[i].key);
	free(r->keys);
	list_free(r->waiting, r->nwaiting);
	list_free(r->stuck, r->nstuck);
	for (size_t i = 0; i < r->nnack_list; i++)
		nack_clear(&r->nack_list[i]);
	free(r->nack_list);
	for (size_t i = 0; i < r->nnodes; i++)
		free(r->nodes[i].key);
	free(r->nodes);
	memset(r, 0, sizeof(*r));
}

struct xd_rollout_key_count *xd_rollout_report_key(struct xd_rollout_report *r,
						   const char *key)
{
	for (size_t i = 0; i < r->nkeys; i++)
		if (strcmp(r->keys[i].key, key) == 0)
			return &r->keys[i];
	if (r->nkeys >= XD_ROLLOUT_KEYS_MAX)
		return NULL;
	r->keys = xd_reallocarray(r->keys, r->nkeys + 1, sizeof(*r->keys));
	memset(&r->keys[r->nkeys], 0, sizeof(r->keys[0]));
	r->keys[r->nkeys].key = xd_strdup(key);
	return &r->keys[r->nkeys++];
}

/* Keeps the earliest XD_ROLLOUT_NACKS_REPORTED, in time order: each
 * replica keeps its first, so that merged they are the fleet's first,
 * and the one that failed a rollout is among them (decide.h). */
static void add_nack(struct xd_rollout_report *r, const struct xd_rollout_nack *n)
{
	struct xd_rollout_nack *k;
	size_t at = r->nnack_list;

	while (at > 0 && r->nack_list[at - 1].at_ms > n->at_ms)
		at--;
	if (at >= XD_ROLLOUT_NACKS_REPORTED)
		return;
	if (r->nnack_list == XD_ROLLOUT_NACKS_REPORTED) {
		/* the newest makes room */
		nack_clear(&r->nack_list[r->nnack_list - 1]);
		r->nnack_list--;
	} else {
		r->nack_list = xd_reallocarray(r->nack_list, r->nnack_list + 1,
					       sizeof(*r->nack_list));
	}
	memmove(&r->nack_list[at + 1], &r->nack_list[at],
		(r->nnack_list - at) * sizeof(*r->nack_list));
	r->nnack_list++;
	k = &r->nack_list[at];
	memset(k, 0, sizeof(*k));
	xd_rollout_text_set(&k->node_id, n->node_id);
	xd_rollout_text_set(&k->node_cluster, n->node_cluster);
	xd_rollout_text_set(&k->type, n->type);
	xd_rollout_text_set(&k->version, n->version);
	xd_rollout_text_set(&k->message, n->message);
	k->at_ms = n->at_ms;
}

static void add_node(struct xd_rollout_report *r, const char *key,
		     size_t nodes, size_t canaries)
{
	for (size_t i = 0; i < r->nnodes; i++)
		if (strcmp(r->nodes[i].key, key) == 0) {
			r->nodes[i].nodes += nodes;
			r->nodes[i].canaries += canaries;
			return;
		}
	r->nodes_total++;
	if (r->nnodes >= XD_ROLLOUT_NODES_MAX)
		return;
	r->nodes = xd_reallocarray(r->nodes, r->nnodes + 1, sizeof(*r->nodes));
	r->nodes[r->nnodes].key = xd_strdup(key);
	r->nodes[r->nnodes].nodes = nodes;
	r->nodes[r->nnodes].canaries = canaries;
	r->nnodes++;
}

void xd_rollout_report_merge(struct xd_rollout_report *to,
			     const struct xd_rollout_report *from)
{
	to->canaries += from->canaries;
	to->answered += from->answered;
	to->nacks += from->nacks;
	for (size_t i = 0; i < from->nkeys; i++) {
		struct xd_rollout_key_count *k =
			xd_rollout_report_key(to, from->keys[i].key);

		if (k == NULL)
			continue;
		k->canaries += from->keys[i].canaries;
		k->acked += from->keys[i].acked;
		k->proven |= from->keys[i].proven;
	}
	for (size_t i = 0; i < from->nwaiting; i++)
		xd_rollout_list_add(&to->waiting, &to->nwaiting,
				    XD_ROLLOUT_NAMES_MAX, NULL, from->waiting[i]);
	to->waiting_total += from->waiting_total;
	for (size_t i = 0; i < from->nstuck; i++)
		xd_rollout_list_add(&to->stuck, &to->nstuck,
				    XD_ROLLOUT_NAMES_MAX, NULL, from->stuck[i]);
	to->stuck_total += from->stuck_total;
	for (size_t i = 0; i < from->nnack_list; i++)
		add_nack(to, &from->nack_list[i]);
	for (size_t i = 0; i < from->nnodes; i++)
		add_node(to, from->nodes[i].key, from->nodes[i].nodes,
			 from->nodes[i].canaries);
	/* those past the bound of `from` are counted, not named */
	if (from->nodes_total > from->nnodes)
		to->nodes_total += from->nodes_total - from->nnodes;
}

void xd_rollout_report_write(const struct xd_rollout_report *r,
			     struct xd_buf *out)
{
	json_t *j = json_object(), *a;

	json_object_set_new(j, "format", json_integer(FORMAT));
	json_object_set_new(j, "replica", json_string(r->replica ? r->replica : ""));
	json_object_set_new(j, "pid", json_integer(r->pid));
	json_object_set_new(j, "started", json_integer(r->started_ms));
	json_object_set_new(j, "xds", json_string(r->xds ? r->xds : ""));
	json_object_set_new(j, "admin", json_string(r->admin ? r->admin : ""));
	json_object_set_new(j, "version", json_string(r->version ? r->version : ""));
	json_object_set_new(j, "revision", json_integer(r->revision));
	json_object_set_new(j, "serving", json_string(r->serving));
	json_object_set_new(j, "health", json_string(xd_replica_health_name(r->health)));
	json_object_set_new(j, "health_why",
			    json_string(r->health_why ? r->health_why : ""));
	json_object_set_new(j, "streams", json_integer((json_int_t)r->streams));
	json_object_set_new(j, "clients", json_integer((json_int_t)r->clients));
	json_object_set_new(j, "rollout", json_integer((json_int_t)r->rollout));
	json_object_set_new(j, "candidate", json_string(r->candidate));
	json_object_set_new(j, "canaries", json_integer((json_int_t)r->canaries));
	json_object_set_new(j, "answered", json_integer((json_int_t)r->answered));
	json_object_set_new(j, "nacks", json_integer((json_int_t)r->nacks));
	a = json_array();
	for (size_t i = 0; i < r->nkeys; i++)
		json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:b}", "key",
						   r->keys[i].key, "canaries",
						   (json_int_t)r->keys[i].canaries,
						   "acked",
						   (json_int_t)r->keys[i].acked,
						   "proven", r->keys[i].proven));
	json_object_set_new(j, "keys", a);
	json_object_set_new(j, "waiting", list_json(r->waiting, r->nwaiting));
	json_object_set_new(j, "waiting_total", json_integer((json_int_t)r->waiting_total));
	json_object_set_new(j, "stuck", list_json(r->stuck, r->nstuck));
	json_object_set_new(j, "stuck_total", json_integer((json_int_t)r->stuck_total));
	a = json_array();
	for (size_t i = 0; i < r->nnack_list; i++) {
		const struct xd_rollout_nack *n = &r->nack_list[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}",
						   "node_id", n->node_id,
						   "node_cluster", n->node_cluster,
						   "type", n->type, "version",
						   n->version, "message",
						   n->message, "at",
						   (json_int_t)n->at_ms));
	}
	json_object_set_new(j, "nack_list", a);
	a = json_array();
	for (size_t i = 0; i < r->nnodes; i++)
		json_array_append_new(a, json_pack("{s:s, s:I, s:I}", "key",
						   r->nodes[i].key, "nodes",
						   (json_int_t)r->nodes[i].nodes,
						   "canaries",
						   (json_int_t)r->nodes[i].canaries));
	json_object_set_new(j, "nodes", a);
	json_object_set_new(j, "nodes_total", json_integer((json_int_t)r->nodes_total));
	dump(j, out);
}

/* The member `key` of `o` as an array (NULL when absent: empty). */
static json_t *rd_array(struct rd *rd, json_t *o, const char *key)
{
	json_t *a = json_object_get(o, key);

	if (a != NULL && !json_is_array(a)) {
		bad(rd, "not a list:", key);
		return NULL;
	}
	return a;
}

static void rd_keys(struct rd *rd, struct xd_rollout_report *r)
{
	json_t *a = rd_array(rd, rd->o, "keys"), *v;
	size_t i;

	json_array_foreach(a, i, v) {
		const char *key = json_is_object(v) ? rd_str(rd, v, "key", true) :
						      NULL;
		struct xd_rollout_key_count *k;

		if (key == NULL) {
			bad(rd, "not a list of keys:", "keys");
			return;
		}
		k = xd_rollout_report_key(r, key);
		if (k == NULL)
			return;
		k->canaries = (size_t)rd_int(rd, v, "canaries");
		k->acked = (size_t)rd_int(rd, v, "acked");
		k->proven = rd_bool(rd, v, "proven");
	}
}

static void rd_nacks(struct rd *rd, struct xd_rollout_report *r)
{
	json_t *a = rd_array(rd, rd->o, "nack_list"), *v;
	size_t i;

	json_array_foreach(a, i, v) {
		struct xd_rollout_nack n = {0};

		if (!json_is_object(v)) {
			bad(rd, "not a list of NACKs:", "nack_list");
			return;
		}
		n.node_id = (char *)rd_str(rd, v, "node_id", false);
		n.node_cluster = (char *)rd_str(rd, v, "node_cluster", false);
		n.type = (char *)rd_str(rd, v, "type", false);
		n.version = (char *)rd_str(rd, v, "version", false);
		n.message = (char *)rd_str(rd, v, "message", false);
		n.at_ms = rd_int(rd, v, "at");
		add_nack(r, &n);
	}
}

static void rd_nodes(struct rd *rd, struct xd_rollout_report *r)
{
	json_t *a = rd_array(rd, rd->o, "nodes"), *v;
	size_t i;

	json_array_foreach(a, i, v) {
		const char *key = json_is_object(v) ? rd_str(rd, v, "key", true) :
						      NULL;

		if (key == NULL) {
			bad(rd, "not a list of node counts:", "nodes");
			return;
		}
		add_node(r, key, (size_t)rd_int(rd, v, "nodes"),
			 (size_t)rd_int(rd, v, "canaries"));
	}
}

/* "health": a name health_names has; absent: unknown (an older xdsd) */
static void rd_health(struct rd *rd, struct xd_rollout_report *r)
{
	const char *h = rd_str(rd, rd->o, "health", false);

	r->health = XD_REPLICA_UNKNOWN;
	for (size_t i = 0; h != NULL && i < sizeof(health_names) / sizeof(health_names[0]); i++)
		if (strcmp(h, health_names[i]) == 0) {
			r->health = (enum xd_replica_health)i;
			return;
		}
	if (h != NULL)
		bad(rd, "no such health:", h);
}

int xd_rollout_report_read(struct xd_rollout_report *r, const void *text,
			   size_t len, char *why, size_t wlen)
{
	struct rd rd;
	size_t total;

	memset(r, 0, sizeof(*r));
	if (rd_open(&rd, text, len, why, wlen) != 0) {
		json_decref(rd.o);
		return -1;
	}
	rd_text(&rd, rd.o, "replica", &r->replica);
	r->pid = rd_int(&rd, rd.o, "pid");
	r->started_ms = rd_int(&rd, rd.o, "started");
	rd_text(&rd, rd.o, "xds", &r->xds);
	rd_text(&rd, rd.o, "admin", &r->admin);
	rd_text(&rd, rd.o, "version", &r->version);
	r->revision = rd_int(&rd, rd.o, "revision");
	rd_print(&rd, rd.o, "serving", r->serving, false);
	rd_health(&rd, r);
	rd_text(&rd, rd.o, "health_why", &r->health_why);
	r->streams = (size_t)rd_int(&rd, rd.o, "streams");
	r->clients = (size_t)rd_int(&rd, rd.o, "clients");
	r->rollout = (uint64_t)rd_int(&rd, rd.o, "rollout");
	rd_print(&rd, rd.o, "candidate", r->candidate, false);
	r->canaries = (size_t)rd_int(&rd, rd.o, "canaries");
	r->answered = (size_t)rd_int(&rd, rd.o, "answered");
	r->nacks = (uint64_t)rd_int(&rd, rd.o, "nacks");
	rd_keys(&rd, r);
	rd_list(&rd, rd.o, "waiting", &r->waiting, &r->nwaiting,
		XD_ROLLOUT_NAMES_MAX);
	total = (size_t)rd_int(&rd, rd.o, "waiting_total");
	r->waiting_total = total > r->nwaiting ? total : r->nwaiting;
	rd_list(&rd, rd.o, "stuck", &r->stuck, &r->nstuck, XD_ROLLOUT_NAMES_MAX);
	total = (size_t)rd_int(&rd, rd.o, "stuck_total");
	r->stuck_total = total > r->nstuck ? total : r->nstuck;
	rd_nacks(&rd, r);
	rd_nodes(&rd, r);
	total = (size_t)rd_int(&rd, rd.o, "nodes_total");
	if (total > r->nodes_total)
		r->nodes_total = total;
	json_decref(rd.o);
	if (rd.bad) {
		xd_rollout_report_clear(r);
		return -1;
	}
	return 0;
}
