/* SPDX-License-Identifier: Apache-2.0 */
#include "rollout/canaries.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "protocol/sub.h"
#include "util/clock.h"
#include "util/loop_thread.h"
#include "util/text.h"
#include "util/xalloc.h"

bool xd_canary_rule(void *arg, const struct xd_client *c)
{
	const struct xd_config *cfg = arg;
	const char *id = c->node_id != NULL ? c->node_id : "";
	const char *cluster = c->node_cluster != NULL ? c->node_cluster : "";

	if (!cfg->rollout.on)
		return false;
	for (size_t i = 0; i < cfg->rollout.ncanary; i++) {
		const char *g = cfg->rollout.canary[i];

		if (strncmp(g, "cluster:", 8) == 0 ? xd_text_glob(g + 8, cluster) :
						    xd_text_glob(g, id))
			return true;
	}
	return cfg->rollout.percent > 0 &&
	       XXH3_64bits(id, strlen(id)) % 100 < cfg->rollout.percent;
}

/* The entry of `id`, or where it would go (entries sorted by id: a
 * binary search, as canaries may be many). */
static size_t find(const struct xd_canaries *c, uint64_t id, bool *found)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].stream_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < c->n && c->v[lo].stream_id == id;
	return lo;
}

static void entry_clear(struct xd_canary *k)
{
	free(k->node_id);
	free(k->key);
	free(k->peer);
	xd_snapshot_unref(k->serving);
	memset(k, 0, sizeof(*k));
}

/* What the view says of the stream now. */
static void entry_fill(struct xd_canary *k, const struct xd_client_view *v,
		       uint64_t now_mono)
{
	struct xd_snapshot *base =
		v->snapshot != NULL ?
			xd_snapshot_base((struct xd_snapshot *)v->snapshot) :
			NULL;
	uint64_t oldest = xd_client_view_oldest(v);

	if (k->node_id == NULL || strcmp(k->node_id, v->node_id) != 0) {
		free(k->node_id);
		k->node_id = xd_strdup(v->node_id);
	}
	if (k->key == NULL || strcmp(k->key, v->key) != 0) {
		free(k->key);
		k->key = xd_strdup(v->key);
	}
	if (k->peer == NULL)
		k->peer = xd_strdup(v->peer != NULL ? v->peer : "");
	if (base != k->serving) {
		xd_snapshot_unref(k->serving);
		k->serving = base != NULL ? xd_snapshot_ref(base) : NULL;
	}
	k->ntypes = v->ntypes;
	k->pending = k->nacked = k->waits = false;
	for (size_t i = 0; i < v->ntypes; i++) {
		if (v->types[i].pending_since_ms != 0)
			k->waits = true; /* a response in flight */
		if (v->types[i].sync == XD_SUB_PENDING)
			k->pending = true;
		else if (v->types[i].sync == XD_SUB_NACKED)
			k->nacked = true;
	}
	k->pending_since = now_mono - (oldest < now_mono ? oldest : now_mono);
}

void xd_canaries_note(struct xd_canaries *c, const struct xd_sessions_event *ev)
{
	const struct xd_client_view *v = ev->view;
	bool found;
	size_t i;

	XD_ASSERT_LOOP();
	i = find(c, v->stream_id, &found);
	if (ev->kind == XD_SESSIONS_GONE) {
		if (!found)
			return;
		entry_clear(&c->v[i]);
		memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof(*c->v));
		c->n--;
		return;
	}
	if (!found) {
		if (c->n == c->cap) {
			c->cap = c->cap == 0 ? 16 : c->cap * 2;
			c->v = xd_reallocarray(c->v, c->cap, sizeof(*c->v));
		}
		memmove(&c->v[i + 1], &c->v[i], (c->n - i) * sizeof(*c->v));
		memset(&c->v[i], 0, sizeof(c->v[i]));
		c->v[i].stream_id = v->stream_id;
		c->n++;
	}
	entry_fill(&c->v[i], v, xd_mono_ms());
}

void xd_canaries_clear(struct xd_canaries *c)
{
	for (size_t i = 0; i < c->n; i++)
		entry_clear(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

uint64_t xd_canary_waited(const struct xd_canary *k, uint64_t now_mono)
{
	if (!k->waits)
		return 0;
	return now_mono > k->pending_since ? now_mono - k->pending_since : 0;
}
