/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_DEVICE_H
#define _FTV_DEVICE_H

#include "allowedips.h"
#include "peer.h"
#include "ratelimiter.h"
#include "token.h"

#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/siphash.h>
#include <linux/workqueue.h>
#include <net/gro_cells.h>

/**
 * struct ftv_identity - the device's static key pair
 * @private_key: clamped X25519 private key
 * @public_key: its public key
 * @rcu: for freeing after readers in the receive path are done
 */
struct ftv_identity {
	u8 private_key[FTV_KEY_SIZE];
	u8 public_key[FTV_KEY_SIZE];
	struct rcu_head rcu;
};

/**
 * struct ftv_device - private data of an ftv net_device
 * @dev: the net_device
 * @creating_net: namespace whose network carries the outer segments; not
 *	refcounted, cleared when that namespace goes away
 * @device_list: entry in the creating namespace's device list (RCU)
 * @device_update_lock: serialises configuration; protects @peer_list,
 *	@num_peers, @listen_port, @fwmark and writes to the tables below
 * @peer_list: all peers
 * @num_peers: length of @peer_list
 * @peer_hashtable: peers by public key (RCU readers)
 * @conn_hashtable: connections by outer 4-tuple (RCU readers)
 * @conn_lock: protects writes to @conn_hashtable
 * @allowedips: inner address to peer routing trie
 * @identity: static key pair, NULL until a private key is set
 * @listen_port: TCP port the device accepts connections on; 0 = none
 * @fwmark: mark set on outer segments
 * @cookie_key: key for stateless SYN-ACK sequence numbers
 * @token_keys: keys SYN tokens are checked with; NULL without a private key
 * @token_cache: SYN tokens seen lately, refused when they come again
 * @handshake_queue: received handshake initiations for @handshake_work
 * @handshake_work: processes @handshake_queue in process context
 * @gc_work: frees lingering connections
 * @gro_cells: delivery of decrypted packets
 * @ratelimiter: bounds handshake work caused by strangers
 * @drops: drops not attributable to a peer
 * @peer_next_id: id for debug messages
 */
struct ftv_device {
	struct net_device *dev;
	struct net *creating_net;
	struct list_head device_list;
	struct mutex device_update_lock; /* configuration, see above */
	struct list_head peer_list;
	unsigned int num_peers;
	DECLARE_HASHTABLE(peer_hashtable, 11);
	DECLARE_HASHTABLE(conn_hashtable, 11);
	spinlock_t conn_lock; /* writers of conn_hashtable */
	struct ftv_allowedips allowedips;
	struct ftv_identity __rcu *identity;
	u16 listen_port;
	u32 fwmark;
	siphash_key_t cookie_key;
	struct ftv_token_keys __rcu *token_keys;
	struct ftv_token_cache *token_cache;
	struct sk_buff_head handshake_queue;
	struct work_struct handshake_work;
	struct delayed_work gc_work;
	struct gro_cells gro_cells;
	struct ftv_ratelimiter ratelimiter;
	struct ftv_drops drops;
	u64 peer_next_id;
};

extern struct workqueue_struct *ftv_wq;

int ftv_device_init(void);
void ftv_device_uninit(void);
bool ftv_device_is_ftv(const struct net_device *dev);
bool ftv_device_port_in_use(struct net *net, u16 port,
			    const struct ftv_device *except);
bool ftv_device_copy_identity(struct ftv_device *fdev,
			      struct ftv_identity *out);
void ftv_device_set_identity(struct ftv_device *fdev,
			     const u8 private_key[FTV_KEY_SIZE]);

#endif /* _FTV_DEVICE_H */
