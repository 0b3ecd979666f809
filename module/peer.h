/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_PEER_H
#define _FTV_PEER_H

#include "fec.h"
#include "messages.h"
#include "probe.h"
#include "token.h"

#include <linux/atomic.h>
#include <linux/ftv.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>

struct ftv_device;
struct ftv_conn;
struct ftv_tuple;

/**
 * struct ftv_drops - drop counters, one per reason
 * @count: indexed by the reason's netlink attribute (enum ftv_drops_attr,
 *	the spec's one list of reasons); FTV_DROPS_A_UNSPEC and
 *	FTV_DROPS_A_PAD stay zero
 */
struct ftv_drops {
	atomic64_t count[FTV_DROPS_A_MAX + 1];
};

static inline void ftv_drops_inc(struct ftv_drops *drops,
				 enum ftv_drops_attr reason)
{
	atomic64_inc(&drops->count[reason]);
}

/* Drop a received segment for @reason: counted there and in rx_errors. */
static inline void ftv_drops_skb(struct ftv_drops *drops,
				 enum ftv_drops_attr reason,
				 struct net_device *dev, struct sk_buff *skb)
{
	ftv_drops_inc(drops, reason);
	DEV_STATS_INC(dev, rx_errors);
	kfree_skb(skb);
}

/**
 * struct ftv_endpoint - where a peer's outer segments go
 * @addr: generic view; family AF_UNSPEC when unknown
 * @addr4: the IPv4 address and port
 * @addr6: the IPv6 address and port
 */
struct ftv_endpoint {
	union {
		struct sockaddr addr;
		struct sockaddr_in addr4;
		struct sockaddr_in6 addr6;
	};
};

/**
 * struct ftv_endpoints - the endpoints a dialling peer tries in turn
 * @count: how many of @ep are used, 2 to FTV_MAX_ENDPOINTS (one endpoint
 *	needs no list: ftv_peer.endpoint holds it alone)
 * @ep: the endpoints, in the order they are tried
 */
struct ftv_endpoints {
	unsigned int count;
	struct ftv_endpoint ep[FTV_MAX_ENDPOINTS];
};

/**
 * struct ftv_peer - a remote end of the tunnel
 * @device: owning device
 * @peer_list: entry in ftv_device.peer_list
 * @pubkey_hash: entry in ftv_device.peer_hashtable
 * @allowedips_list: this peer's nodes in the allowed-ips trie
 * @public_key: the peer's static public key
 * @lock: protects @preshared_key, @endpoint, @endpoints, @endpoint_index,
 *	@latest_timestamp, @is_dead,
 *	@pending and @conn (which connections the peer points at: they are
 *	linked, replaced and unlinked only under it, and killed only under
 *	it too); taken in softirq, so always with BHs off; the device's
 *	conn_lock nests inside it
 * @preshared_key: mixed into every handshake; zero when unset
 * @endpoint: configured or last authenticated address of the peer; with
 *	@endpoints, the current one of them (where new sessions go)
 * @endpoint_configured: the endpoint was configured, so this side dials
 * @endpoints: NULL, or the configured list when it has more than one
 *	endpoint; owned by the peer (replaced and freed only by peer.c's
 *	setters, freed with the peer), read only under @lock
 * @endpoint_index: which of @endpoints is @endpoint
 * @latest_timestamp: newest handshake timestamp accepted from the peer
 * @conn: the established connection, or NULL; a published connection
 *	that conn.c frees only after it is unlinked from here
 * @pending: connection this side is opening, or NULL; likewise
 * @conns: every published connection of the peer, whatever its state,
 *	under the device's conn_lock; removing the peer kills them all
 * @token: the token key of @preshared_key, when one is set
 * @fec_setting: enum ftv_fec_mode | K << 8 | M << 16 (ftv_fec_pack()),
 *	set by ftv_peer_set_fec()
 * @fec_stats: FEC's counters for this peer
 * @staged: packets waiting for a session
 * @connect_work: opens a connection from process context
 * @connect_timer: gives up on @pending after a timeout
 * @keepalive_timer: sends keepalives when persistent keepalive is on
 * @dead_timer: notices when what we send goes unanswered
 * @reply_timer: answers received data we have not answered otherwise
 * @sent_since_rx: something went out since data last came in
 * @last_received: jiffies of the last authenticated message
 * @path_dead: what we send has gone unanswered, or no longer leaves from
 *	where the session's connection was opened; a new connection is due
 * @had_session: a session was established since the last loss, so the
 *	next one is a renewal
 * @persistent_keepalive: keepalive interval in seconds; 0 = off
 * @flows: fake TCP connections to keep up per session when dialling, 1 to
 *	FTV_MAX_FLOWS; written by ftv_peer_set_flows() only, read with
 *	READ_ONCE() (only the first carries data yet: docs/design-flows.md)
 * @last_sent: jiffies when data was last sent
 * @rx_bytes: inner bytes received
 * @tx_bytes: inner bytes sent
 * @rotations: connections of its sessions given up and replaced, having
 *	stalled or carried their budget (flow.c)
 * @rotate: FTV_ROTATE_OFF, FTV_ROTATE_AUTO or the bytes a connection may
 *	carry towards us before it is replaced; written by
 *	ftv_peer_set_rotate() only, read with READ_ONCE()
 * @rotate_learned: auto: the budget learned from connections that froze
 *	(0 before), for the sessions we open; flow.c
 * @froze_after: auto: what the last connection that froze had carried,
 *	until a second one confirms it (flow.c)
 * @froze_at: jiffies of @froze_after
 * @budget_told: responder: the budget the initiator last gave a
 *	connection, for the connections it has not given one yet (flow.c)
 * @retired: of @conns, those retired or lingering, in the order they
 *	retired, under the device's conn_lock; at most
 *	FTV_PEER_RETIRED_MAX (conn.c)
 * @conns_retired: how many, likewise
 * @join_tat: responder: when the peer's rate of joins is whole again
 *	(conn.c, FTV_JOIN_RATE), under the device's conn_lock
 * @join_open_tat: initiator: likewise for the joins this end opens,
 *	under @lock
 * @last_handshake: wall-clock seconds of the last completed handshake
 * @drops: drops attributed to this peer
 * @reset_seen: the last RST or FIN ignored on one of its connections:
 *	its ftv_segment_ip_mark() in the low 32 bits, the connection's
 *	@heard_ip then in the high 32 (receive.c); 0 before one; written and
 *	read whole with WRITE_ONCE() and READ_ONCE()
 * @probe: probes of the path to the peer, the asks and the padding
 *	(probe.c)
 * @internal_id: number for debug messages
 * @is_dead: set once removal starts; nothing new is scheduled or
 *	installed after it
 * @refcount: held by the device while the peer is configured, by each of
 *	its connections, and by lookups that leave RCU to sleep
 * @rcu: frees the peer after readers are done
 */
struct ftv_peer {
	struct ftv_device *device;
	struct list_head peer_list;
	struct hlist_node pubkey_hash;
	struct list_head allowedips_list;
	u8 public_key[FTV_KEY_SIZE];
	spinlock_t lock; /* handshake and endpoint state, see above */
	u8 preshared_key[FTV_KEY_SIZE];
	struct ftv_endpoint endpoint;
	bool endpoint_configured;
	u8 endpoint_index;
	struct ftv_endpoints *endpoints;
	u8 latest_timestamp[FTV_TIMESTAMP_SIZE];
	struct ftv_conn __rcu *conn;
	struct ftv_conn *pending;
	struct list_head conns;
	struct ftv_token_psk token;
	u32 fec_setting;
	struct ftv_fec_stats fec_stats;
	struct sk_buff_head staged;
	struct work_struct connect_work;
	struct timer_list connect_timer;
	struct timer_list keepalive_timer;
	struct timer_list dead_timer;
	struct timer_list reply_timer;
	bool sent_since_rx;
	unsigned long last_received;
	bool path_dead;
	bool had_session;
	u16 persistent_keepalive;
	u8 flows;
	unsigned long last_sent;
	atomic64_t rx_bytes;
	atomic64_t tx_bytes;
	atomic64_t rotations;
	u32 rotate;
	u32 rotate_learned;
	u32 froze_after;
	unsigned long froze_at;
	u32 budget_told;
	struct list_head retired;
	unsigned int conns_retired;
	u64 join_tat;
	u64 join_open_tat;
	time64_t last_handshake;
	struct ftv_drops drops;
	u64 reset_seen;
	struct ftv_probe probe;
	u64 internal_id;
	bool is_dead;
	struct kref refcount;
	struct rcu_head rcu;
};

struct ftv_peer *ftv_peer_create(struct ftv_device *fdev,
				 const u8 public_key[FTV_KEY_SIZE]);
void ftv_peer_remove(struct ftv_peer *peer);
void ftv_peer_remove_all(struct ftv_device *fdev);
struct ftv_peer *ftv_peer_lookup(struct ftv_device *fdev,
				 const u8 public_key[FTV_KEY_SIZE]);
struct ftv_peer *ftv_peer_get_maybe_zero(struct ftv_peer *peer);
void ftv_peer_put(struct ftv_peer *peer);
int ftv_peer_set_psk(struct ftv_peer *peer, const u8 *psk);
void ftv_peer_set_keepalive(struct ftv_peer *peer, u16 seconds);
void ftv_peer_set_fec(struct ftv_peer *peer, u8 mode, u8 data, u8 repair);
void ftv_peer_set_flows(struct ftv_peer *peer, u8 flows);
void ftv_peer_set_rotate(struct ftv_peer *peer, u32 rotate);
void ftv_peer_set_endpoint(struct ftv_peer *peer,
			   const struct ftv_endpoint *endpoint);
void ftv_peer_set_endpoints(struct ftv_peer *peer,
			    struct ftv_endpoints *list);
bool ftv_endpoint_is_tuple(const struct ftv_endpoint *ep,
			   const struct ftv_tuple *tuple);
bool ftv_peer_endpoint_failed(struct ftv_peer *peer,
			      const struct ftv_tuple *tried);
unsigned int ftv_peer_flows_wanted(struct ftv_peer *peer);
void ftv_peer_stage_packet(struct ftv_peer *peer, struct sk_buff *skb);
void ftv_peer_flush_staged(struct ftv_peer *peer);
void ftv_peer_reset_session(struct ftv_peer *peer);
bool ftv_peer_install_conn(struct ftv_peer *peer, struct ftv_conn *conn,
			   bool prefer_pending);
void ftv_peer_confirm(struct ftv_peer *peer, struct ftv_conn *conn);
void ftv_peer_lost(struct ftv_peer *peer);

/* Another reference, for a holder of one (or of the device's lock). */
static inline struct ftv_peer *ftv_peer_get(struct ftv_peer *peer)
{
	kref_get(&peer->refcount);
	return peer;
}

#endif /* _FTV_PEER_H */
