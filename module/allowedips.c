// SPDX-License-Identifier: GPL-2.0
/*
 * Allowed-ips: a path-compressed binary trie per address family. Each node
 * holds a prefix; a child extends its parent's prefix and is chosen by the
 * first bit after it. Lookups walk at most one node per distinct prefix
 * length on the path under RCU; writers hold the device's update lock.
 */

#include "allowedips.h"
#include "peer.h"

#include <linux/slab.h>
#include <linux/socket.h>

static struct kmem_cache *node_cache;

static unsigned int bit_at(const u8 *bits, unsigned int i)
{
	return (bits[i / 8] >> (7 - i % 8)) & 1;
}

/* Number of leading bits, up to @max, that @a and @b share. */
static unsigned int common_bits(const u8 *a, const u8 *b, unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < max / 8 + 1 && n < max; ++i) {
		u8 diff = a[i] ^ b[i];

		if (diff) {
			n += 8 - fls(diff);
			break;
		}
		n += 8;
	}
	return min(n, max);
}

static void copy_masked(u8 *dst, const u8 *src, unsigned int cidr,
			unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; ++i) {
		if (cidr >= 8 * (i + 1))
			dst[i] = src[i];
		else if (cidr > 8 * i)
			dst[i] = src[i] & (0xff << (8 - (cidr - 8 * i)));
		else
			dst[i] = 0;
	}
}

static bool prefix_matches(const struct ftv_allowedips_node *node,
			   const u8 *key)
{
	return common_bits(node->bits, key, node->cidr) == node->cidr;
}

static struct ftv_allowedips_node __rcu **root_of(struct ftv_allowedips *table,
						  int family)
{
	return family == AF_INET ? &table->root4 : &table->root6;
}

static struct ftv_allowedips_node *deref(struct ftv_allowedips *table,
					 struct ftv_allowedips_node __rcu *p)
{
	return rcu_dereference_protected(p,
					 lockdep_is_held(table->update_lock));
}

/* The pointer that points at @node: its parent's child slot or the root. */
static struct ftv_allowedips_node __rcu **
slot_of(struct ftv_allowedips *table, struct ftv_allowedips_node *node)
{
	struct ftv_allowedips_node *parent = node->parent;

	if (!parent)
		return root_of(table, node->bitlen == 32 ? AF_INET : AF_INET6);
	return &parent->bit[deref(table, parent->bit[1]) == node];
}

/**
 * ftv_allowedips_reserve - allocate the nodes a set of insertions needs
 * @reserve: filled with the nodes
 * @prefixes: how many prefixes are to be inserted
 *
 * An insertion takes at most two nodes (the prefix's and a branch), so
 * with the nodes reserved first a change that removes prefixes and adds
 * others cannot fail half-way. What is left is freed by
 * ftv_allowedips_unreserve().
 *
 * Return: 0 or -ENOMEM, with nothing reserved.
 */
int ftv_allowedips_reserve(struct ftv_allowedips_reserve *reserve,
			   unsigned int prefixes)
{
	struct ftv_allowedips_node *node;
	unsigned int i;

	INIT_LIST_HEAD(&reserve->nodes);
	for (i = 0; i < 2 * prefixes; i++) {
		node = kmem_cache_zalloc(node_cache, GFP_KERNEL);
		if (!node) {
			ftv_allowedips_unreserve(reserve);
			return -ENOMEM;
		}
		list_add(&node->peer_list, &reserve->nodes);
	}
	return 0;
}

/**
 * ftv_allowedips_unreserve - free the nodes insertions did not take
 * @reserve: from ftv_allowedips_reserve()
 */
void ftv_allowedips_unreserve(struct ftv_allowedips_reserve *reserve)
{
	struct ftv_allowedips_node *node, *tmp;

	list_for_each_entry_safe(node, tmp, &reserve->nodes, peer_list) {
		list_del(&node->peer_list);
		kmem_cache_free(node_cache, node);
	}
}

/* A node for @key/@cidr: from @reserve if there is one, else allocated. */
static struct ftv_allowedips_node *
node_new(const u8 *key, u8 cidr, u8 bitlen,
	 struct ftv_allowedips_reserve *reserve)
{
	struct ftv_allowedips_node *node;

	node = reserve ? list_first_entry_or_null(&reserve->nodes,
						  struct ftv_allowedips_node,
						  peer_list) : NULL;
	if (node) {
		list_del(&node->peer_list);
		memset(node, 0, sizeof(*node));
	} else {
		node = kmem_cache_zalloc(node_cache, GFP_KERNEL);
		if (!node)
			return NULL;
	}
	copy_masked(node->bits, key, cidr, bitlen / 8);
	node->cidr = cidr;
	node->bitlen = bitlen;
	INIT_LIST_HEAD(&node->peer_list);
	return node;
}

static void node_set_peer(struct ftv_allowedips_node *node,
			  struct ftv_peer *peer)
{
	list_move_tail(&node->peer_list, &peer->allowedips_list);
	rcu_assign_pointer(node->peer, peer);
}

/* Put @node where @old was, under @old's parent. */
static void replace_in_slot(struct ftv_allowedips *table,
			    struct ftv_allowedips_node *old,
			    struct ftv_allowedips_node *node)
{
	struct ftv_allowedips_node __rcu **slot = slot_of(table, old);

	node->parent = old->parent;
	rcu_assign_pointer(*slot, node);
}

static int insert(struct ftv_allowedips *table, int family, const u8 *key,
		  u8 cidr, u8 bitlen, struct ftv_peer *peer,
		  struct ftv_allowedips_reserve *reserve)
{
	struct ftv_allowedips_node __rcu **slot = root_of(table, family);
	struct ftv_allowedips_node *node, *parent = NULL, *fresh, *branch;
	unsigned int common;

	for (;;) {
		node = deref(table, *slot);
		if (!node)
			break;
		common = common_bits(node->bits, key, min(node->cidr, cidr));
		if (common == node->cidr && node->cidr == cidr) {
			node_set_peer(node, peer);
			return 0;
		}
		if (common < node->cidr)
			break;
		parent = node;
		slot = &node->bit[bit_at(key, node->cidr)];
	}

	fresh = node_new(key, cidr, bitlen, reserve);
	if (!fresh)
		return -ENOMEM;
	node_set_peer(fresh, peer);
	fresh->parent = parent;
	if (!node) {
		rcu_assign_pointer(*slot, fresh);
		return 0;
	}
	if (common == cidr) {
		/* The new prefix contains @node: it goes above it. Children
		 * are linked before the parent is published, so readers
		 * never see a half-built path.
		 */
		RCU_INIT_POINTER(fresh->bit[bit_at(node->bits, cidr)], node);
		rcu_assign_pointer(*slot, fresh);
		node->parent = fresh;
		return 0;
	}
	/* The prefixes diverge after @common bits: join them in a branch. */
	branch = node_new(key, common, bitlen, reserve);
	if (!branch) {
		list_del(&fresh->peer_list);
		kmem_cache_free(node_cache, fresh);
		return -ENOMEM;
	}
	branch->parent = parent;
	fresh->parent = branch;
	RCU_INIT_POINTER(branch->bit[bit_at(key, common)], fresh);
	RCU_INIT_POINTER(branch->bit[bit_at(node->bits, common)], node);
	rcu_assign_pointer(*slot, branch);
	node->parent = branch;
	return 0;
}

/**
 * ftv_allowedips_insert - route @addr/@cidr to @peer
 * @table: the trie
 * @family: AF_INET or AF_INET6
 * @addr: 4 or 16 bytes, network order; bits past @cidr are ignored
 * @cidr: prefix length, at most 32 or 128
 * @peer: new owner of the prefix (taken from any previous owner)
 * @reserve: nodes from ftv_allowedips_reserve(), or NULL to allocate them
 *
 * Return: 0, -EINVAL for a bad family or length, or -ENOMEM (never with
 * enough nodes reserved).
 */
int ftv_allowedips_insert(struct ftv_allowedips *table, int family,
			  const void *addr, u8 cidr, struct ftv_peer *peer,
			  struct ftv_allowedips_reserve *reserve)
{
	u8 bitlen = family == AF_INET ? 32 : 128;

	lockdep_assert_held(table->update_lock);
	if ((family != AF_INET && family != AF_INET6) || cidr > bitlen)
		return -EINVAL;
	return insert(table, family, addr, cidr, bitlen, peer, reserve);
}

static void node_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(node_cache,
			container_of(rcu, struct ftv_allowedips_node, rcu));
}

/* Drop @node if it no longer carries a peer and at most one child. */
static void prune(struct ftv_allowedips *table,
		  struct ftv_allowedips_node *node)
{
	struct ftv_allowedips_node *child0, *child1, *child, *parent;

	while (node && !rcu_access_pointer(node->peer)) {
		child0 = deref(table, node->bit[0]);
		child1 = deref(table, node->bit[1]);
		if (child0 && child1)
			return;
		child = child0 ?: child1;
		parent = node->parent;
		if (child)
			replace_in_slot(table, node, child);
		else
			RCU_INIT_POINTER(*slot_of(table, node), NULL);
		call_rcu(&node->rcu, node_free_rcu);
		node = parent;
	}
}

/**
 * ftv_allowedips_remove_by_peer - remove every prefix routed to @peer
 * @table: the trie
 * @peer: the peer
 */
void ftv_allowedips_remove_by_peer(struct ftv_allowedips *table,
				   struct ftv_peer *peer)
{
	struct ftv_allowedips_node *node, *tmp;

	lockdep_assert_held(table->update_lock);
	list_for_each_entry_safe(node, tmp, &peer->allowedips_list,
				 peer_list) {
		list_del_init(&node->peer_list);
		RCU_INIT_POINTER(node->peer, NULL);
		prune(table, node);
	}
}

/**
 * ftv_allowedips_lookup - longest-prefix match
 * @table: the trie
 * @family: AF_INET or AF_INET6
 * @addr: 4 or 16 bytes, network order
 *
 * Call under rcu_read_lock_bh(). Return: the peer, or NULL.
 */
struct ftv_peer *ftv_allowedips_lookup(struct ftv_allowedips *table,
				       int family, const void *addr)
{
	struct ftv_allowedips_node *node;
	struct ftv_peer *best = NULL, *peer;
	const u8 *key = addr;

	node = rcu_dereference_bh(*root_of(table, family));
	while (node && prefix_matches(node, key)) {
		peer = rcu_dereference_bh(node->peer);
		if (peer)
			best = peer;
		if (node->cidr == node->bitlen)
			break;
		node = rcu_dereference_bh(node->bit[bit_at(key, node->cidr)]);
	}
	return best;
}

/**
 * ftv_allowedips_read_node - copy out a node's prefix
 * @node: a node from a peer's allowedips_list
 * @addr: receives 4 or 16 bytes
 * @cidr: receives the prefix length
 *
 * Return: AF_INET or AF_INET6.
 */
int ftv_allowedips_read_node(const struct ftv_allowedips_node *node,
			     u8 addr[16], u8 *cidr)
{
	memcpy(addr, node->bits, node->bitlen / 8);
	*cidr = node->cidr;
	return node->bitlen == 32 ? AF_INET : AF_INET6;
}

/**
 * ftv_allowedips_init - start an empty trie
 * @table: the trie
 * @lock: lock every writer holds
 */
void ftv_allowedips_init(struct ftv_allowedips *table, struct mutex *lock)
{
	RCU_INIT_POINTER(table->root4, NULL);
	RCU_INIT_POINTER(table->root6, NULL);
	table->update_lock = lock;
}

int __init ftv_allowedips_slab_init(void)
{
	node_cache = KMEM_CACHE(ftv_allowedips_node, 0);
	return node_cache ? 0 : -ENOMEM;
}

void ftv_allowedips_slab_uninit(void)
{
	rcu_barrier();
	kmem_cache_destroy(node_cache);
}

#ifdef DEBUG
#include "selftest/allowedips.c"
#endif
