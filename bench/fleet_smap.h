/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A string-keyed hash map (linear probing, backward-shift deletion), for
 * what a client subscribes to, has told the server and holds; and a set
 * of name hashes, for a name given twice in one response.
 *
 * Ownership: a map owns its entries' keys, vstr and aux strings, and frees
 * them on deletion and in sm_clear; a set owns its array. Start both
 * from {0}. Not thread-safe: the owner of a map guards it.
 */
#ifndef BENCH_FLEET_SMAP_H
#define BENCH_FLEET_SMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sm_ent {
	char *key;         /* owned; NULL: empty slot */
	uint32_t klen;
	uint64_t h;
	uint64_t ver;      /* resource version hash (delta) */
	char *vstr;        /* owned: the version itself, when kept (--failover) */
	char *aux;         /* owned: a cluster's EDS name, a listener's RDS names ('\n'-joined) */
};

struct smap {
	struct sm_ent *e;
	uint32_t cap, len;
};

struct sm_ent *sm_find(const struct smap *m, const char *k, size_t n);
/* The entry for k, inserted (ver 0, aux NULL) if absent. */
struct sm_ent *sm_put(struct smap *m, const char *k, size_t n, bool *created);
/* Frees e's key, vstr and aux; a later entry may move into e's slot. */
void sm_del_ent(struct smap *m, struct sm_ent *e);
/* Frees every entry and the table; m is empty and reusable. */
void sm_clear(struct smap *m);

#define SM_EACH(m, ent) \
	for (struct sm_ent *ent = (m)->e; ent < (m)->e + (m)->cap; ent++) \
		if (ent->key != NULL)

/*
 * A set of name hashes, to find a name given twice in one response
 * (rule S11; Envoy NACKs a delta response naming a resource twice, even
 * once in resources and once in removed_resources). The caller frees v.
 */
struct hset {
	uint64_t *v;      /* 0: empty slot */
	uint32_t cap, len;
};

/* False if h was already there. */
bool hset_add(struct hset *s, uint64_t h);

#endif
