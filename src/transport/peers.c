/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/peers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/loop_thread.h"
#include "util/xalloc.h"

/* One key of either kind: a connection (whole peer string) with its
 * streams, or an address with its connections. */
struct node {
	char *key;
	size_t count;
	struct node *next;
};

struct map {
	struct node **buckets;
	size_t mask, n;
};

struct xd_peers {
	struct map connections; /* peer -> streams */
	struct map addresses;   /* address -> connections */
	const struct xd_cidr *trusted; /* the configuration's */
	size_t ntrusted;
};

static uint64_t hash(const char *s, size_t len)
{
	return XXH3_64bits(s, len);
}

static struct node **slot(const struct map *m, const char *key, size_t len)
{
	struct node **p = &m->buckets[hash(key, len) & m->mask];

	while (*p != NULL &&
	       !(strlen((*p)->key) == len && memcmp((*p)->key, key, len) == 0))
		p = &(*p)->next;
	return p;
}

static void grow(struct map *m)
{
	size_t size = m->buckets ? (m->mask + 1) * 2 : 64;
	struct node **b = xd_calloc(size, sizeof(*b));

	for (size_t i = 0; m->buckets && i <= m->mask; i++) {
		for (struct node *n = m->buckets[i], *next; n; n = next) {
			next = n->next;
			n->next = b[hash(n->key, strlen(n->key)) & (size - 1)];
			b[hash(n->key, strlen(n->key)) & (size - 1)] = n;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->mask = size - 1;
}

/* The count of `key`, 0 when absent. */
static size_t count(const struct map *m, const char *key, size_t len)
{
	struct node *n = m->buckets ? *slot(m, key, len) : NULL;

	return n != NULL ? n->count : 0;
}

/* Adds `delta` (+1 or -1) to `key`'s count; a key at 0 goes. */
static void add(struct map *m, const char *key, size_t len, int delta)
{
	struct node **p, *n;

	XD_ASSERT(delta == 1 || delta == -1);
	if (m->buckets == NULL || m->n + 1 > 2 * (m->mask + 1))
		grow(m);
	p = slot(m, key, len);
	if (*p == NULL) {
		if (delta < 0)
			return;
		n = xd_calloc(1, sizeof(*n));
		n->key = xd_strndup(key, len);
		*p = n;
		m->n++;
	}
	n = *p;
	if (delta > 0) {
		n->count++;
		return;
	}
	XD_ASSERT_INFO(n->count > 0, "peer '%s'", n->key);
	if (--n->count == 0) {
		*p = n->next;
		free(n->key);
		free(n);
		m->n--;
	}
}

static void map_free(struct map *m)
{
	for (size_t i = 0; m->buckets && i <= m->mask; i++) {
		for (struct node *n = m->buckets[i], *next; n; n = next) {
			next = n->next;
			free(n->key);
			free(n);
		}
	}
	free(m->buckets);
}

/* The address of `peer`: "ipv4:10.0.0.7:40112" -> "ipv4:10.0.0.7",
 * "ipv6:[::1]:5000" -> "ipv6:[::1]". 0 for peers without one (unix). */
static size_t address_len(const char *peer)
{
	const char *colon = strrchr(peer, ':');

	if (strncmp(peer, "ipv4:", 5) != 0 && strncmp(peer, "ipv6:", 5) != 0)
		return 0;
	return colon != NULL && colon > peer + 5 ? (size_t)(colon - peer) : 0;
}

struct xd_peers *xd_peers_new(const struct xd_cidr *trusted,
			      size_t ntrusted)
{
	struct xd_peers *p = xd_calloc(1, sizeof(struct xd_peers));

	XD_ASSERT(ntrusted == 0 || trusted != NULL);
	p->trusted = trusted;
	p->ntrusted = ntrusted;
	return p;
}

/* Whether `peer` is a trusted proxy's (only asked of an address at its
 * limit, so the common case does not parse the peer). */
static bool trusted(const struct xd_peers *p, const char *peer)
{
	struct sockaddr_storage ss;

	return p->ntrusted > 0 && xd_address_from_peer(peer, &ss) &&
	       xd_address_in(p->trusted, p->ntrusted, (struct sockaddr *)&ss);
}

void xd_peers_free(struct xd_peers *p)
{
	if (p == NULL)
		return;
	map_free(&p->connections);
	map_free(&p->addresses);
	free(p);
}

bool xd_peers_open(struct xd_peers *p, const char *peer, size_t max)
{
	size_t alen = address_len(peer), plen = strlen(peer);

	XD_ASSERT_LOOP();
	if (alen == 0)
		return true;
	if (p->connections.buckets == NULL ||
	    count(&p->connections, peer, plen) == 0) {
		/* a connection its address does not hold yet */
		if (max != 0 && p->addresses.buckets != NULL &&
		    count(&p->addresses, peer, alen) >= max &&
		    !trusted(p, peer))
			return false;
		add(&p->addresses, peer, alen, +1);
	}
	add(&p->connections, peer, plen, +1);
	return true;
}

void xd_peers_close(struct xd_peers *p, const char *peer)
{
	size_t alen = address_len(peer), plen = strlen(peer);

	XD_ASSERT_LOOP();
	if (alen == 0 || p->connections.buckets == NULL ||
	    count(&p->connections, peer, plen) == 0)
		return;
	add(&p->connections, peer, plen, -1);
	if (count(&p->connections, peer, plen) == 0)
		add(&p->addresses, peer, alen, -1);
}

size_t xd_peers_streams(const struct xd_peers *p, const char *peer)
{
	if (address_len(peer) == 0 || p->connections.buckets == NULL)
		return 0;
	return count(&p->connections, peer, strlen(peer));
}

size_t xd_peers_connections(const struct xd_peers *p, const char *peer)
{
	size_t alen = address_len(peer);

	if (alen == 0 || p->addresses.buckets == NULL)
		return 0;
	return count(&p->addresses, peer, alen);
}
