/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A string-keyed hash map and a set of hashes (fleet_smap.h). Keys are
 * copied in and owned by the map.
 */
#include <stdlib.h>
#include <string.h>

#include "fleet_smap.h"
#include "fleet_util.h"

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

struct sm_ent *sm_find(const struct smap *m, const char *k, size_t n)
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

struct sm_ent *sm_put(struct smap *m, const char *k, size_t n, bool *created)
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
		e->vstr = NULL;
		e->aux = NULL;
		m->len++;
	}
	return e;
}

void sm_del_ent(struct smap *m, struct sm_ent *e)
{
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)(e - m->e), j = i;

	free(e->key);
	free(e->vstr);
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

void sm_clear(struct smap *m)
{
	for (uint32_t i = 0; i < m->cap; i++) {
		free(m->e[i].key);
		free(m->e[i].vstr);
		free(m->e[i].aux);
	}
	free(m->e);
	memset(m, 0, sizeof(*m));
}

bool hset_add(struct hset *s, uint64_t h)
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
