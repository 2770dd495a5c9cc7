/* SPDX-License-Identifier: Apache-2.0 */
#include "rest/pollers.h"

#include <stdlib.h>
#include <string.h>

#include "util/loop_thread.h"
#include "util/xalloc.h"

struct entry {
	char *node_id, *key, *peer;
	struct xd_rest_poller view; /* its strings point at the above */
};

struct xd_rest_pollers {
	struct entry *entries; /* XD_REST_POLLERS_MAX, the first n used */
	size_t n;
	uint64_t fresh_ms;
	unsigned long long dropped;
};

struct xd_rest_pollers *xd_rest_pollers_new(uint64_t fresh_ms)
{
	struct xd_rest_pollers *ps = xd_calloc(1, sizeof(*ps));

	ps->entries = xd_calloc(XD_REST_POLLERS_MAX, sizeof(*ps->entries));
	ps->fresh_ms = fresh_ms + XD_REST_POLLERS_GRACE_MS;
	return ps;
}

static void entry_clear(struct entry *e)
{
	free(e->node_id);
	free(e->key);
	free(e->peer);
	memset(e, 0, sizeof(*e));
}

void xd_rest_pollers_free(struct xd_rest_pollers *ps)
{
	if (ps == NULL)
		return;
	for (size_t i = 0; i < ps->n; i++)
		entry_clear(&ps->entries[i]);
	free(ps->entries);
	free(ps);
}

/* The entry of (node, key), or NULL; `node_id` is `len` bytes, no
 * more than an entry keeps. */
static struct entry *find(struct xd_rest_pollers *ps, const char *node_id,
			  size_t len, const char *key)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct entry *e = &ps->entries[i];

		if (strncmp(e->node_id, node_id, len) == 0 &&
		    e->node_id[len] == '\0' && strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

/* A free entry: a new one, or the least recently seen, dropped. */
static struct entry *make_room(struct xd_rest_pollers *ps)
{
	size_t oldest = 0;

	if (ps->n < XD_REST_POLLERS_MAX)
		return &ps->entries[ps->n++];
	for (size_t i = 1; i < ps->n; i++)
		if (ps->entries[i].view.last_seen_mono_ms <
		    ps->entries[oldest].view.last_seen_mono_ms)
			oldest = i;
	ps->dropped++;
	entry_clear(&ps->entries[oldest]);
	return &ps->entries[oldest];
}

void xd_rest_pollers_seen(struct xd_rest_pollers *ps, const char *node_id,
			  const char *key, const char *peer,
			  enum xd_rtype type, bool served_default,
			  uint64_t now_mono_ms, int64_t now_wall_ms)
{
	/* a peer picks its node id: what one entry holds is bounded */
	size_t len = strnlen(node_id, XD_REST_POLLERS_ID_MAX);
	struct entry *e;

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(type < XD_RTYPE_COUNT, "rest poller '%.64s': type %d",
		       node_id, (int)type);
	e = find(ps, node_id, len, key);
	if (e == NULL) {
		e = make_room(ps);
		e->node_id = xd_strndup(node_id, len);
		e->key = xd_strdup(key);
		e->view.node_id = e->node_id;
		e->view.key = e->key;
	}
	/* a poller may come back from another address */
	if (e->peer == NULL || strcmp(e->peer, peer) != 0) {
		free(e->peer);
		e->peer = xd_strdup(peer);
		e->view.peer = e->peer;
	}
	/* types asked while fresh; a stale entry starts over */
	if (now_mono_ms - e->view.last_seen_mono_ms > ps->fresh_ms)
		e->view.types = 0;
	e->view.types |= 1u << type;
	e->view.served_default = served_default;
	e->view.last_seen_mono_ms = now_mono_ms;
	e->view.last_seen_wall_ms = now_wall_ms;
}

void xd_rest_pollers_visit(const struct xd_rest_pollers *ps,
			   uint64_t now_mono_ms,
			   void (*fn)(void *ctx, const struct xd_rest_poller *p),
			   void *ctx)
{
	XD_ASSERT_LOOP();
	for (size_t i = 0; i < ps->n; i++) {
		const struct xd_rest_poller *v = &ps->entries[i].view;

		if (now_mono_ms - v->last_seen_mono_ms <= ps->fresh_ms)
			fn(ctx, v);
	}
}

unsigned long long xd_rest_pollers_dropped(const struct xd_rest_pollers *ps)
{
	return ps->dropped;
}
