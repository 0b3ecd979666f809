/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_ALLOWEDIPS_H
#define _FTV_ALLOWEDIPS_H

#include <linux/in6.h>
#include <linux/list.h>
#include <linux/mutex.h>

struct ftv_peer;

/**
 * struct ftv_allowedips_node - a prefix in the routing trie
 * @peer: owner of the prefix, NULL for a branch-only node
 * @bit: children, chosen by the first bit after @cidr
 * @parent: parent node, NULL at the root
 * @peer_list: entry in the owning peer's allowedips_list
 * @bits: the prefix in network order, zero past @cidr
 * @cidr: prefix length
 * @bitlen: 32 or 128
 * @rcu: frees the node after readers are done
 */
struct ftv_allowedips_node {
	struct ftv_peer __rcu *peer;
	struct ftv_allowedips_node __rcu *bit[2];
	struct ftv_allowedips_node *parent;
	struct list_head peer_list;
	u8 bits[16];
	u8 cidr;
	u8 bitlen;
	struct rcu_head rcu;
};

/**
 * struct ftv_allowedips - longest-prefix-match trie for IPv4 and IPv6
 * @root4: IPv4 trie
 * @root6: IPv6 trie
 * @update_lock: the device's update lock, held by every writer
 */
struct ftv_allowedips {
	struct ftv_allowedips_node __rcu *root4;
	struct ftv_allowedips_node __rcu *root6;
	struct mutex *update_lock; /* held by writers; readers use RCU */
};

/* Nodes allocated ahead of a change that must not fail half-way. */
struct ftv_allowedips_reserve {
	struct list_head nodes;
};

int ftv_allowedips_slab_init(void);
void ftv_allowedips_slab_uninit(void);
void ftv_allowedips_init(struct ftv_allowedips *table, struct mutex *lock);
int ftv_allowedips_reserve(struct ftv_allowedips_reserve *reserve,
			   unsigned int prefixes);
void ftv_allowedips_unreserve(struct ftv_allowedips_reserve *reserve);
int ftv_allowedips_insert(struct ftv_allowedips *table, int family,
			  const void *addr, u8 cidr, struct ftv_peer *peer,
			  struct ftv_allowedips_reserve *reserve);
void ftv_allowedips_remove_by_peer(struct ftv_allowedips *table,
				   struct ftv_peer *peer);
struct ftv_peer *ftv_allowedips_lookup(struct ftv_allowedips *table,
				       int family, const void *addr);
int ftv_allowedips_read_node(const struct ftv_allowedips_node *node,
			     u8 addr[16], u8 *cidr);

#ifdef DEBUG
bool ftv_allowedips_selftest(void);
#endif

#endif /* _FTV_ALLOWEDIPS_H */
