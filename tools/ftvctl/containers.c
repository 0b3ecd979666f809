// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "containers.h"

void device_add_peer(struct device *dev, struct peer *peer)
{
	if (dev->last_peer)
		dev->last_peer->next = peer;
	else
		dev->first_peer = peer;
	dev->last_peer = peer;
}

void peer_add_allowedip(struct peer *peer, struct allowedip *ip)
{
	if (peer->last_allowedip)
		peer->last_allowedip->next = ip;
	else
		peer->first_allowedip = ip;
	peer->last_allowedip = ip;
}

/* Keys are wiped before the memory goes back to the allocator. */
void peer_free(struct peer *peer)
{
	struct allowedip *ip, *next_ip;

	if (!peer)
		return;
	for (ip = peer->first_allowedip; ip; ip = next_ip) {
		next_ip = ip->next;
		free(ip);
	}
	free(peer->endpoints);
	sodium_memzero(peer, sizeof(*peer));
	free(peer);
}

/* Frees @dev and every device chained after it. */
void devices_free(struct device *dev)
{
	struct device *next_dev;
	struct peer *peer, *next_peer;

	for (; dev; dev = next_dev) {
		next_dev = dev->next;
		for (peer = dev->first_peer; peer; peer = next_peer) {
			next_peer = peer->next;
			peer_free(peer);
		}
		sodium_memzero(dev, sizeof(*dev));
		free(dev);
	}
}

_Static_assert(sizeof(((struct peer_index *)0)->hash_key) ==
	       crypto_shorthash_KEYBYTES, "the index's key is SipHash's");
_Static_assert(crypto_shorthash_BYTES == sizeof(uint64_t),
	       "SipHash gives 64 bits");

void peer_index_init(struct peer_index *idx)
{
	memset(idx, 0, sizeof(*idx));
	randombytes_buf(idx->hash_key, sizeof(idx->hash_key));
}

static size_t key_hash(const struct peer_index *idx, const uint8_t *key)
{
	uint64_t hash;

	crypto_shorthash((unsigned char *)&hash, key, FTV_KEY_LEN,
			 idx->hash_key);
	return hash;
}

/* The slot of @key, or the empty one where it would go. */
static struct peer **index_slot(const struct peer_index *idx,
				const uint8_t *key)
{
	size_t i = key_hash(idx, key) & idx->mask;

	while (idx->slots[i] &&
	       memcmp(idx->slots[i]->public_key, key, FTV_KEY_LEN))
		i = (i + 1) & idx->mask;
	return &idx->slots[i];
}

static int index_grow(struct peer_index *idx)
{
	size_t old_size = idx->slots ? idx->mask + 1 : 0, i;
	size_t size = old_size ? old_size * 2 : 64;
	struct peer **old = idx->slots;

	idx->slots = calloc(size, sizeof(*idx->slots));
	if (!idx->slots) {
		idx->slots = old;
		return -ENOMEM;
	}
	idx->mask = size - 1;
	for (i = 0; i < old_size; i++)
		if (old[i])
			*index_slot(idx, old[i]->public_key) = old[i];
	free(old);
	return 0;
}

int peer_index_add(struct peer_index *idx, struct peer *peer)
{
	if ((!idx->slots || 2 * (idx->count + 1) > idx->mask + 1) &&
	    index_grow(idx))
		return -ENOMEM;
	*index_slot(idx, peer->public_key) = peer;
	idx->count++;
	return 0;
}

int peer_index_build(struct peer_index *idx, const struct device *dev)
{
	struct peer *peer;

	peer_index_init(idx);
	for (peer = dev->first_peer; peer; peer = peer->next) {
		if (peer_index_add(idx, peer)) {
			peer_index_free(idx);
			return -ENOMEM;
		}
	}
	return 0;
}

struct peer *peer_index_find(const struct peer_index *idx,
			     const uint8_t public_key[FTV_KEY_LEN])
{
	return idx->slots ? *index_slot(idx, public_key) : NULL;
}

void peer_index_free(struct peer_index *idx)
{
	free(idx->slots);
	idx->slots = NULL;
	idx->count = 0;
}

bool endpoint_equal(const union endpoint *a, const union endpoint *b)
{
	if (a->addr.sa_family != b->addr.sa_family)
		return false;
	if (a->addr.sa_family == AF_INET)
		return a->addr4.sin_port == b->addr4.sin_port &&
		       a->addr4.sin_addr.s_addr == b->addr4.sin_addr.s_addr;
	if (a->addr.sa_family == AF_INET6)
		return a->addr6.sin6_port == b->addr6.sin6_port &&
		       !memcmp(&a->addr6.sin6_addr, &b->addr6.sin6_addr,
			       sizeof(a->addr6.sin6_addr));
	return true;
}

bool endpoint_list_equal(const struct endpoint_list *a,
			 const struct endpoint_list *b)
{
	unsigned int i, n = a ? a->count : 0;

	if (n != (b ? b->count : 0))
		return false;
	for (i = 0; i < n; i++)
		if (!endpoint_equal(&a->ep[i], &b->ep[i]))
			return false;
	return true;
}

struct fec peer_fec(const struct peer *peer)
{
	return peer->flags & PEER_HAS_FEC ? peer->fec : FEC_DEFAULT;
}

/* K and M mean something only to a fixed setting. */
bool fec_equal(struct fec a, struct fec b)
{
	return a.mode == b.mode &&
	       (a.mode != FTV_FEC_FIXED ||
		(a.data == b.data && a.repair == b.repair));
}

void fec_to_string(char buf[FEC_STRLEN], struct fec fec)
{
	if (fec.mode == FTV_FEC_OFF)
		strcpy(buf, "off");
	else if (fec.mode == FTV_FEC_AUTO)
		strcpy(buf, "auto");
	else if (fec.mode == FTV_FEC_FIXED)
		snprintf(buf, FEC_STRLEN, "%u:%u", fec.data, fec.repair);
	else
		snprintf(buf, FEC_STRLEN, "mode %u", fec.mode);
}

/* An allowed IP reduced to what the kernel keeps of it; no padding. */
struct prefix {
	uint8_t family;
	uint8_t cidr;
	uint8_t bits[16];
};

static int prefix_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct prefix));
}

static void prefix_from(struct prefix *p, const struct allowedip *ip)
{
	const uint8_t *addr = (const uint8_t *)&ip->ip6;
	int i, len = ip->family == AF_INET ? 4 : 16, left;

	memset(p, 0, sizeof(*p));
	p->family = ip->family == AF_INET ? 4 : 6;
	p->cidr = ip->cidr;
	for (i = 0; i < len; i++) {
		left = ip->cidr - 8 * i;
		if (left >= 8)
			p->bits[i] = addr[i];
		else if (left > 0)
			p->bits[i] = addr[i] & (0xff << (8 - left));
	}
}

/* @peer's prefixes sorted, duplicates dropped; NULL only if out of memory. */
static struct prefix *prefixes_of(const struct peer *peer, size_t *count)
{
	const struct allowedip *ip;
	struct prefix *p;
	size_t n = 0, i, kept;

	for (ip = peer->first_allowedip; ip; ip = ip->next)
		n++;
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p)
		return NULL;
	for (ip = peer->first_allowedip, i = 0; ip; ip = ip->next, i++)
		prefix_from(&p[i], ip);
	qsort(p, n, sizeof(*p), prefix_cmp);
	for (i = 0, kept = 0; i < n; i++)
		if (!kept || prefix_cmp(&p[kept - 1], &p[i]))
			p[kept++] = p[i];
	*count = kept;
	return p;
}

/* Whether the lists are the same prefixes in the same order. */
static bool allowedips_same_order(const struct allowedip *a,
				  const struct allowedip *b)
{
	struct prefix pa, pb;

	for (; a && b; a = a->next, b = b->next) {
		prefix_from(&pa, a);
		prefix_from(&pb, b);
		if (prefix_cmp(&pa, &pb))
			return false;
	}
	return !a && !b;
}

int peer_allowedips_equal(const struct peer *a, const struct peer *b)
{
	struct prefix *pa, *pb;
	size_t na, nb;
	int equal = -ENOMEM;

	/* The common case, one entry each or a file showconf wrote, is cheap. */
	if (allowedips_same_order(a->first_allowedip, b->first_allowedip))
		return 1;
	pa = prefixes_of(a, &na);
	pb = pa ? prefixes_of(b, &nb) : NULL;
	if (pb)
		equal = na == nb && !memcmp(pa, pb, na * sizeof(*pa));
	free(pa);
	free(pb);
	return equal;
}
