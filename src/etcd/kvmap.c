/* SPDX-License-Identifier: Apache-2.0 */
#include "etcd/kvmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* The index of `key`, or where it would go (*found false). */
static size_t find(const struct xd_kvmap *m, const char *key, size_t klen,
		   int *found)
{
	size_t lo = 0, hi = m->n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t mlen = strlen(m->v[mid].key);
		int c = memcmp(m->v[mid].key, key, mlen < klen ? mlen : klen);

		if (c == 0)
			c = mlen < klen ? -1 : mlen > klen ? 1 : 0;
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void xd_kvmap_put(struct xd_kvmap *m, const char *key, size_t klen,
		  const char *value, size_t len)
{
	int found;
	size_t i = find(m, key, klen, &found);
	struct xd_kv *kv;

	if (!found) {
		m->v = xd_grow(m->v, &m->cap, m->n + 1, sizeof(*m->v));
		memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
		m->n++;
		m->v[i].key = xd_strndup(key, klen);
	} else {
		free(m->v[i].value);
	}
	kv = &m->v[i];
	kv->value = xd_malloc(len + 1);
	memcpy(kv->value, value, len);
	kv->value[len] = '\0';
	kv->len = len;
}

void xd_kvmap_delete(struct xd_kvmap *m, const char *key, size_t klen)
{
	int found;
	size_t i = find(m, key, klen, &found);

	if (!found)
		return;
	free(m->v[i].key);
	free(m->v[i].value);
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
}

void xd_kvmap_clear(struct xd_kvmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].key);
		free(m->v[i].value);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

void xd_kvmap_snapshot_keys(const struct xd_kvmap *m, const char *prefix,
			    struct xd_snapkey **keys, size_t *n,
			    struct xd_diag *diag)
{
	size_t plen = strlen(prefix), nt = 0;
	struct xd_snaptext *t = xd_calloc(m->n + 1, sizeof(*t));

	/* the map is sorted by key, so the names after one prefix are
	 * sorted too */
	for (size_t i = 0; i < m->n; i++) {
		if (strncmp(m->v[i].key, prefix, plen) != 0)
			continue;
		t[nt++] = (struct xd_snaptext){.name = m->v[i].key + plen,
					       .path = m->v[i].key,
					       .text = m->v[i].value,
					       .len = m->v[i].len};
	}
	xd_snapkeys_from_texts(t, nt, keys, n, diag);
	free(t);
	if (*n == 0 && xd_diag_total(diag) == 0)
		xd_diag_add(diag, "etcd prefix '%s': no snapshots (put %sdefault.yaml for every node, or %s<key>.yaml for the nodes of one key)",
			    prefix, prefix, prefix);
}
