/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_DEVICE_H
#define _FTV_DEVICE_H

#include "allowedips.h"
#include "cell.h"
#include "peer.h"
#include "queue.h"
#include "ratelimiter.h"
#include "token.h"

#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/netdevice.h>
#include <linux/siphash.h>
#include <linux/workqueue.h>

struct ftv_conn;
struct ftv_tuple;

/**
 * struct ftv_identity - the device's static key pair
 * @private_key: clamped X25519 private key
 * @public_key: its public key
 * @token_key: the key SYN tokens without a pre-shared key are made with
 *	(token.c)
 * @rcu: for freeing after readers in the receive path are done
 */
struct ftv_identity {
	u8 private_key[FTV_KEY_SIZE];
	u8 public_key[FTV_KEY_SIZE];
	siphash_key_t token_key;
	struct rcu_head rcu;
};

/**
 * struct ftv_device - private data of an ftv net_device
 * @dev: the net_device
 * @creating_net: namespace whose network carries the outer segments; not
 *	refcounted: cleared (RTNL) when that namespace goes away, after
 *	which the device closes and waits for its connections, which are
 *	all that use it (read under RCU, or with a reference taken by
 *	maybe_get_net())
 * @device_list: entry in the creating namespace's device list (RCU)
 * @close_entry: entry in the list of devices whose creating namespace
 *	is going away, private to its pre_exit
 * @device_update_lock: serialises configuration; protects @peer_list,
 *	@num_peers, @num_psk_peers, @listen_port, @fwmark and writes to the
 *	peer and token tables below
 * @peer_list: all peers
 * @num_peers: length of @peer_list
 * @num_psk_peers: peers with a pre-shared key (in @psk_tokens)
 * @peer_hashtable: peers by public key (RCU readers)
 * @conn_lock: protects @conn_table, @conn_retired, @conns_closed, every
 *	connection's state and every peer's list of connections (conn.c);
 *	taken inside a peer's lock, never around it
 * @conn_table: connections by outer 4-tuple (RCU readers)
 * @join_table: the join tokens the responder's sessions expect (join.c;
 *	RCU readers, windows changed under @conn_lock)
 * @conn_retired: retired connections, oldest first, for the gc
 * @conn_joining: joins not yet up, for the gc to give up on
 * @conn_count: connections allocated and not yet freed
 * @fec_rx_count: connections holding FEC receive state (fec.c), at most
 *	FTV_FEC_RX_MAX
 * @conns_closed: no connection is published any more
 * @allowedips: inner address to peer routing trie
 * @identity: static key pair, NULL until a private key is set
 * @listen_port: TCP port the device accepts connections on; 0 = none
 * @fwmark: mark set on outer segments
 * @shape: shape the openings of connections (docs/protocol.md)
 * @generation: changes with every change of the configuration, so that a
 *	dump spanning one can say it was interrupted; taken from one 64-bit
 *	counter for all devices (ftv_device_changed()), which never comes
 *	round, so that a value names one state of one device's peer list
 * @cookie_key: key for stateless SYN-ACK sequence numbers
 * @psk_tokens: token keys of the peers with a pre-shared key, by tag
 *	(RCU readers)
 * @token_cache: SYN tokens seen lately, refused when they come again;
 *	allocated once the device first listens, never replaced
 * @handshake_queue: received handshake initiations for @handshake_work
 * @handshake_work: processes @handshake_queue in process context
 * @gc_work: frees lingering connections
 * @encrypt_queue: transmit jobs waiting for a CPU to seal them
 * @decrypt_queue: receive jobs waiting for a CPU to open them
 * @cells: NAPI contexts that deliver opened packets, one per
 *	possible CPU; each connection uses its sending CPU's
 * @next_cpu: counts connections, which send from the online CPUs in turn
 * @ratelimiter: bounds handshake work caused by strangers
 * @drops: drops not attributable to a peer
 * @peer_next_id: id for debug messages
 */
struct ftv_device {
	struct net_device *dev;
	struct net *creating_net;
	struct list_head device_list;
	struct list_head close_entry;
	struct mutex device_update_lock; /* configuration, see above */
	struct list_head peer_list;
	unsigned int num_peers;
	unsigned int num_psk_peers;
	DECLARE_HASHTABLE(peer_hashtable, 11);
	spinlock_t conn_lock; /* connections' states and tables, see above */
	struct rhashtable conn_table;
	struct rhashtable join_table;
	struct list_head conn_retired;
	struct list_head conn_joining;
	atomic_t conn_count;
	atomic_t fec_rx_count;
	bool conns_closed;
	struct ftv_allowedips allowedips;
	struct ftv_identity __rcu *identity;
	u16 listen_port;
	u32 fwmark;
	bool shape;
	u64 generation;
	siphash_key_t cookie_key;
	struct rhltable psk_tokens;
	struct ftv_token_cache *token_cache;
	struct sk_buff_head handshake_queue;
	struct work_struct handshake_work;
	struct delayed_work gc_work;
	struct ftv_crypt_queue encrypt_queue;
	struct ftv_crypt_queue decrypt_queue;
	struct ftv_cell __percpu *cells;
	atomic_t next_cpu;
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
struct ftv_identity *ftv_identity_new(const u8 private_key[FTV_KEY_SIZE]);
int ftv_device_set_identity(struct ftv_device *fdev,
			    struct ftv_identity *identity);
int ftv_device_serial_cpu(struct ftv_device *fdev);
void ftv_device_changed(struct ftv_device *fdev);
bool ftv_device_find_owner(struct list_head *devices,
			   const struct ftv_tuple *tuple,
			   struct ftv_device **fdev, struct ftv_conn **conn);

#endif /* _FTV_DEVICE_H */
