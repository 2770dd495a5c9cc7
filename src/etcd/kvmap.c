/* SPDX-License-Identifier: Apache-2.0 */
#include "etcd/kvmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static struct xd_kvchange *noted(struct xd_kvchanges *c, const char *key,
				 size_t klen)
{
	struct xd_kvchange *ch;

	c->v = xd_grow(c->v, &c->cap, c->n + 1, sizeof(*c->v));
	ch = &c->v[c->n++];
	memset(ch, 0, sizeof(*ch));
	ch->kv.key = xd_strndup(key, klen);
	return ch;
}

void xd_kvchanges_put(struct xd_kvchanges *c, const char *key, size_t klen,
		      const void *value, size_t len)
{
	struct xd_kvchange *ch = noted(c, key, klen);

	/* too large: the size alone, for the load's error */
	if (len <= XD_SNAPSHOT_MAX_FILE)
		ch->kv.value = xd_snapbytes_new(value, len);
	ch->kv.len = len;
}

void xd_kvchanges_delete(struct xd_kvchanges *c, const char *key,
			 size_t klen)
{
	noted(c, key, klen)->deleted = true;
}

static void kv_free(struct xd_kv *kv)
{
	free(kv->key);
	xd_snapbytes_unref(kv->value);
}

void xd_kvchanges_clear(struct xd_kvchanges *c)
{
	for (size_t i = 0; i < c->n; i++)
		kv_free(&c->v[i].kv);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void xd_kvchanges_append(struct xd_kvchanges *to, struct xd_kvchanges *c)
{
	if (c->reset || to->n == 0) {
		/* what `to` held is superseded by the reset */
		bool reset = c->reset || to->reset;

		xd_kvchanges_clear(to);
		*to = *c;
		to->reset = reset;
		memset(c, 0, sizeof(*c));
		return;
	}
	if (c->n == 0) /* a watch event of xdsd's own keys only: c->v NULL */
		return;
	to->v = xd_grow(to->v, &to->cap, to->n + c->n, sizeof(*to->v));
	memcpy(&to->v[to->n], c->v, c->n * sizeof(*c->v));
	to->n += c->n;
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void xd_kvmap_clear(struct xd_kvmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		kv_free(&m->v[i]);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* By key, then in the order they came: the last of a key is last. */
static int by_key_then_order(const void *a, const void *b)
{
	const struct xd_kvchange *x = *(struct xd_kvchange *const *)a;
	const struct xd_kvchange *y = *(struct xd_kvchange *const *)b;
	int c = strcmp(x->kv.key, y->kv.key);

	return c != 0 ? c : x < y ? -1 : x > y;
}

void xd_kvmap_apply(struct xd_kvmap *m, struct xd_kvchanges *c)
{
	struct xd_kvchange **order;
	struct xd_kv *merged;
	size_t n = 0, i = 0, j = 0;

	if (c->reset)
		xd_kvmap_clear(m);
	if (c->n == 0) {
		xd_kvchanges_clear(c);
		return;
	}
	order = xd_calloc(c->n, sizeof(*order));
	for (size_t k = 0; k < c->n; k++)
		order[k] = &c->v[k];
	qsort(order, c->n, sizeof(*order), by_key_then_order);
	merged = xd_calloc(m->n + c->n, sizeof(*merged));
	while (i < m->n || j < c->n) {
		struct xd_kvchange *ch;
		int cmp;

		if (j == c->n) {
			merged[n++] = m->v[i++];
			continue;
		}
		/* the last change of its key */
		while (j + 1 < c->n &&
		       strcmp(order[j]->kv.key, order[j + 1]->kv.key) == 0)
			j++;
		ch = order[j];
		cmp = i < m->n ? strcmp(m->v[i].key, ch->kv.key) : 1;
		if (cmp < 0) {
			merged[n++] = m->v[i++];
			continue;
		}
		if (cmp == 0)
			kv_free(&m->v[i++]);
		if (!ch->deleted) {
			merged[n++] = ch->kv;
			memset(&ch->kv, 0, sizeof(ch->kv)); /* taken */
		}
		j++;
	}
	free(order);
	free(m->v);
	m->v = merged;
	m->n = n;
	m->cap = m->n + c->n;
	/* the earlier changes of a key, superseded, are freed here */
	xd_kvchanges_clear(c);
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
		const struct xd_kv *kv = &m->v[i];

		if (strncmp(kv->key, prefix, plen) != 0)
			continue;
		t[nt++] = (struct xd_snaptext){
			.name = kv->key + plen,
			.path = kv->key,
			.text = kv->value != NULL ? xd_snapbytes_text(kv->value) : NULL,
			.len = kv->len,
			.bytes = kv->value,
		};
	}
	xd_snapkeys_from_texts(t, nt, keys, n, diag);
	free(t);
	if (*n == 0 && xd_diag_total(diag) == 0)
		xd_diag_add(diag, "etcd prefix '%s': no snapshots (put %sdefault.yaml for every node, or %s<key>.yaml for the nodes of one key)",
			    prefix, prefix, prefix);
}
