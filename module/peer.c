// SPDX-License-Identifier: GPL-2.0
/*
 * Peers: creation, lookup by public key, and removal. Lookups run under RCU
 * from the data path; whoever has to sleep with a peer takes a reference.
 * Removal marks the peer dead first, so that nothing re-arms its timers or
 * work once they have been cancelled.
 */

#include "peer.h"
#include "conn.h"
#include "device.h"
#include "event.h"
#include "fec.h"
#include "log.h"
#include "send.h"
#include "timers.h"

#include <linux/ftv.h>
#include <linux/jhash.h>
#include <linux/slab.h>

static u32 pubkey_hash(const u8 public_key[FTV_KEY_SIZE])
{
	return jhash(public_key, FTV_KEY_SIZE, 0);
}

/**
 * ftv_peer_create - add a peer to @fdev
 * @fdev: the device
 * @public_key: the peer's static public key
 *
 * Return: the peer, or an ERR_PTR.
 */
struct ftv_peer *ftv_peer_create(struct ftv_device *fdev,
				 const u8 public_key[FTV_KEY_SIZE])
{
	struct ftv_peer *peer;

	lockdep_assert_held(&fdev->device_update_lock);
	if (fdev->num_peers >= FTV_MAX_PEERS)
		return ERR_PTR(-ENOSPC);
	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return ERR_PTR(-ENOMEM);
	peer->device = fdev;
	memcpy(peer->public_key, public_key, FTV_KEY_SIZE);
	spin_lock_init(&peer->lock);
	INIT_LIST_HEAD(&peer->allowedips_list);
	INIT_LIST_HEAD(&peer->conns);
	INIT_LIST_HEAD(&peer->retired);
	ftv_peer_set_fec(peer, FTV_FEC_AUTO, 0, 0);
	ftv_peer_set_flows(peer, 1);
	ftv_peer_set_rotate(peer, FTV_ROTATE_AUTO);
	skb_queue_head_init(&peer->staged);
	kref_init(&peer->refcount);
	ftv_timers_init(peer);
	ftv_probe_init(&peer->probe);
	peer->internal_id = ++fdev->peer_next_id;
	list_add_tail(&peer->peer_list, &fdev->peer_list);
	ftv_device_changed(fdev);
	hash_add_rcu(fdev->peer_hashtable, &peer->pubkey_hash,
		     pubkey_hash(public_key));
	++fdev->num_peers;
	ftv_dev_dbg(fdev->dev, "peer %llu created\n", peer->internal_id);
	return peer;
}

/**
 * ftv_peer_lookup - find a peer by public key and take a reference
 * @fdev: the device
 * @public_key: the key
 *
 * Return: the peer with a reference held, or NULL.
 */
struct ftv_peer *ftv_peer_lookup(struct ftv_device *fdev,
				 const u8 public_key[FTV_KEY_SIZE])
{
	struct ftv_peer *peer, *found = NULL;

	rcu_read_lock();
	hash_for_each_possible_rcu(fdev->peer_hashtable, peer, pubkey_hash,
				   pubkey_hash(public_key)) {
		if (!memcmp(peer->public_key, public_key, FTV_KEY_SIZE)) {
			found = ftv_peer_get_maybe_zero(peer);
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * ftv_peer_get_maybe_zero - take a reference unless the peer is going away
 * @peer: the peer, found under RCU
 *
 * Return: @peer, or NULL if its last reference is gone or it is dead.
 */
struct ftv_peer *ftv_peer_get_maybe_zero(struct ftv_peer *peer)
{
	if (unlikely(!peer || READ_ONCE(peer->is_dead) ||
		     !kref_get_unless_zero(&peer->refcount)))
		return NULL;
	return peer;
}

static void peer_free_rcu(struct rcu_head *rcu)
{
	struct ftv_peer *peer = container_of(rcu, struct ftv_peer, rcu);

	kfree_sensitive(peer);
}

static void peer_release(struct kref *refcount)
{
	struct ftv_peer *peer = container_of(refcount, struct ftv_peer,
					     refcount);

	ftv_dev_dbg(peer->device->dev, "peer %llu destroyed\n",
		    peer->internal_id);
	skb_queue_purge(&peer->staged);
	/* Nobody reads the list without the peer's lock, or after this. */
	kfree(peer->endpoints);
	call_rcu(&peer->rcu, peer_free_rcu);
}

/**
 * ftv_peer_put - drop a reference
 * @peer: the peer; NULL is fine
 */
void ftv_peer_put(struct ftv_peer *peer)
{
	if (peer)
		kref_put(&peer->refcount, peer_release);
}

/* Unlink the peer's connections and kill every one of them. */
static void drop_conns_locked(struct ftv_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	RCU_INIT_POINTER(peer->conn, NULL);
	peer->pending = NULL;
	ftv_conn_kill_peer(peer);
}

/**
 * ftv_peer_reset_session - end the peer's session; traffic opens a new one
 * @peer: the peer
 */
void ftv_peer_reset_session(struct ftv_peer *peer)
{
	spin_lock_bh(&peer->lock);
	drop_conns_locked(peer);
	spin_unlock_bh(&peer->lock);
}

/* Make the peer unreachable: from the tables, and for its connections. */
static void peer_make_dead(struct ftv_peer *peer)
{
	struct ftv_device *fdev = peer->device;

	lockdep_assert_held(&fdev->device_update_lock);
	ftv_allowedips_remove_by_peer(&fdev->allowedips, peer);
	ftv_token_remove_peer(peer);
	list_del_init(&peer->peer_list);
	ftv_device_changed(fdev);
	hash_del_rcu(&peer->pubkey_hash);
	--fdev->num_peers;
	spin_lock_bh(&peer->lock);
	WRITE_ONCE(peer->is_dead, true);
	drop_conns_locked(peer);
	spin_unlock_bh(&peer->lock);
}

/* After a grace period: nothing can arm the peer's timers or work again. */
static void peer_remove_after_dead(struct ftv_peer *peer)
{
	ftv_timers_stop(peer);
	ftv_probe_stop(&peer->probe);
	ftv_peer_put(peer);
}

/**
 * ftv_peer_remove - unlink a peer and drop the device's reference
 * @peer: the peer
 */
void ftv_peer_remove(struct ftv_peer *peer)
{
	lockdep_assert_held(&peer->device->device_update_lock);
	peer_make_dead(peer);
	/* Every reader that saw the peer alive has finished after this, so
	 * nothing arms its timers or work again once they are stopped.
	 */
	synchronize_net();
	peer_remove_after_dead(peer);
}

/**
 * ftv_peer_remove_all - remove every peer of @fdev
 * @fdev: the device
 *
 * One grace period for all of them, not one each: removing 10^5 peers
 * takes a moment, not half an hour.
 */
void ftv_peer_remove_all(struct ftv_device *fdev)
{
	struct ftv_peer *peer, *tmp;
	LIST_HEAD(dead);

	lockdep_assert_held(&fdev->device_update_lock);
	list_for_each_entry_safe(peer, tmp, &fdev->peer_list, peer_list) {
		peer_make_dead(peer);
		list_add_tail(&peer->peer_list, &dead);
	}
	if (list_empty(&dead))
		return;
	synchronize_net();
	list_for_each_entry_safe(peer, tmp, &dead, peer_list) {
		list_del_init(&peer->peer_list);
		peer_remove_after_dead(peer);
		cond_resched();
	}
}

/**
 * ftv_peer_set_psk - change the peer's pre-shared key
 * @peer: the peer
 * @psk: the key, or NULL to remove it
 *
 * The key is part of the peer's SYN token key (token.c).
 *
 * Return: 0, or -ENOMEM if the token table could not take the new key.
 */
int ftv_peer_set_psk(struct ftv_peer *peer, const u8 *psk)
{
	spin_lock_bh(&peer->lock);
	if (psk)
		memcpy(peer->preshared_key, psk, FTV_KEY_SIZE);
	else
		memzero_explicit(peer->preshared_key, FTV_KEY_SIZE);
	spin_unlock_bh(&peer->lock);
	return ftv_token_update_peer(peer);
}

/* Drop the list; the caller frees what this returns once it unlocks. */
static struct ftv_endpoints *forget_list_locked(struct ftv_peer *peer)
{
	struct ftv_endpoints *old = peer->endpoints;

	lockdep_assert_held(&peer->lock);
	WRITE_ONCE(peer->endpoints, NULL);
	peer->endpoint_index = 0;
	return old;
}

/**
 * ftv_peer_set_endpoint - change where the peer's segments are sent
 * @peer: the peer
 * @endpoint: new endpoint, which replaces a list of them; family
 *	AF_UNSPEC forgets it
 */
void ftv_peer_set_endpoint(struct ftv_peer *peer,
			   const struct ftv_endpoint *endpoint)
{
	struct ftv_endpoints *old;

	spin_lock_bh(&peer->lock);
	old = forget_list_locked(peer);
	peer->endpoint = *endpoint;
	peer->endpoint_configured = endpoint->addr.sa_family != AF_UNSPEC;
	spin_unlock_bh(&peer->lock);
	kfree(old);
}

static bool endpoint_equal(const struct ftv_endpoint *a,
			   const struct ftv_endpoint *b)
{
	if (a->addr.sa_family != b->addr.sa_family)
		return false;
	if (a->addr.sa_family == AF_INET)
		return a->addr4.sin_addr.s_addr == b->addr4.sin_addr.s_addr &&
		       a->addr4.sin_port == b->addr4.sin_port;
	return ipv6_addr_equal(&a->addr6.sin6_addr, &b->addr6.sin6_addr) &&
	       a->addr6.sin6_port == b->addr6.sin6_port;
}

/* Where in @list the peer's current endpoint is, or 0: a list given
 * again (syncconf, a script that repeats itself) keeps the endpoint that
 * works, rather than sending the next session back to one that failed.
 */
static unsigned int list_start_locked(const struct ftv_peer *peer,
				      const struct ftv_endpoints *list)
{
	unsigned int i;

	lockdep_assert_held(&peer->lock);
	if (!peer->endpoint_configured)
		return 0;
	for (i = 0; i < list->count; i++)
		if (endpoint_equal(&list->ep[i], &peer->endpoint))
			return i;
	return 0;
}

/**
 * ftv_peer_set_endpoints - give the peer endpoints to dial in turn
 * @peer: the peer
 * @list: 1 to FTV_MAX_ENDPOINTS endpoints (netlink checked them), from
 *	kmalloc(); the peer owns it from now on
 *
 * The current endpoint stays current if the list has it, else the first
 * becomes current. A list of one is kept as a single endpoint is. A peer
 * whose session is up opens the join that a list keeps up (see
 * ftv_peer_flows_wanted()).
 */
void ftv_peer_set_endpoints(struct ftv_peer *peer,
			    struct ftv_endpoints *list)
{
	struct ftv_endpoints *old;
	unsigned int i;

	spin_lock_bh(&peer->lock);
	i = list_start_locked(peer, list);
	old = forget_list_locked(peer);
	peer->endpoint = list->ep[i];
	peer->endpoint_configured = true;
	if (list->count > 1) {
		peer->endpoint_index = i;
		WRITE_ONCE(peer->endpoints, list);
		list = NULL;
	}
	spin_unlock_bh(&peer->lock);
	kfree(old);
	kfree(list);
	if (rcu_access_pointer(peer->conn))
		ftv_timers_want_connection(peer);
}

/**
 * ftv_endpoint_is_tuple - whether @tuple's remote end is @ep
 * @ep: an endpoint
 * @tuple: a connection's tuple
 *
 * Return: true if the family, address and port are the same.
 */
bool ftv_endpoint_is_tuple(const struct ftv_endpoint *ep,
			   const struct ftv_tuple *tuple)
{
	if (ep->addr.sa_family != tuple->family)
		return false;
	if (tuple->family == AF_INET)
		return ep->addr4.sin_addr.s_addr ==
		       tuple->remote.s6_addr32[0] &&
		       ep->addr4.sin_port == tuple->remote_port;
	return ipv6_addr_equal(&ep->addr6.sin6_addr, &tuple->remote) &&
	       ep->addr6.sin6_port == tuple->remote_port;
}

/**
 * ftv_peer_endpoint_failed - a new session's handshake to @tried went
 *	unanswered
 * @peer: the peer, whose lock the caller holds (timers.c gives the
 *	attempt up under it)
 * @tried: the attempt's tuple
 *
 * If @tried went to the current endpoint of a list, the next one (the
 * first after the last) becomes current: a censor that blocks one server
 * address costs one unanswered handshake, not the session. An endpoint
 * that works stays current, since only a failure moves on. An attempt to
 * an endpoint that is no longer current (the list changed meanwhile)
 * moves nothing.
 *
 * Return: true if the peer moved; the caller reports FTV_EVENT_FAILOVER
 * once the lock is dropped.
 */
bool ftv_peer_endpoint_failed(struct ftv_peer *peer,
			      const struct ftv_tuple *tried)
{
	struct ftv_endpoints *list = peer->endpoints;

	lockdep_assert_held(&peer->lock);
	if (!list || !ftv_endpoint_is_tuple(&peer->endpoint, tried))
		return false;
	peer->endpoint_index = (peer->endpoint_index + 1) % list->count;
	peer->endpoint = list->ep[peer->endpoint_index];
	return true;
}

/**
 * ftv_peer_flows_wanted - connections the peer's session is to keep up
 * @peer: the peer, whose lock the caller holds
 *
 * Its flows setting, but at least two with a list of endpoints: with a
 * join up, both ends acknowledge every FTV_FLOW_CHECK_MS and a blocked
 * address shows within half a second, as every connection stalls at
 * once (flow.c). One connection alone is answered only every
 * FTV_REPLY_AFTER_MS when its traffic runs one way, so its silence means
 * nothing before the path is called dead, 5 s on.
 *
 * Return: 1 to FTV_MAX_FLOWS.
 */
unsigned int ftv_peer_flows_wanted(struct ftv_peer *peer)
{
	unsigned int flows = READ_ONCE(peer->flows);

	lockdep_assert_held(&peer->lock);
	return peer->endpoints ? max(flows, 2U) : flows;
}

/**
 * ftv_peer_set_keepalive - change how often the peer hears from us when
 *	nothing else goes to it
 * @peer: the peer
 * @seconds: the interval, 0 for none
 *
 * A peer given one is dialled at once, so that the keepalives hold its
 * path (a NAT mapping, say) open from now on.
 */
void ftv_peer_set_keepalive(struct ftv_peer *peer, u16 seconds)
{
	WRITE_ONCE(peer->persistent_keepalive, seconds);
	ftv_timers_keepalive_changed(peer);
	if (seconds)
		ftv_timers_want_connection(peer);
}

/**
 * ftv_peer_set_fec - change the peer's forward error correction
 * @peer: the peer
 * @mode: enum ftv_fec_mode
 * @data: K for FTV_FEC_FIXED, else ignored
 * @repair: M for FTV_FEC_FIXED, else ignored
 *
 * Read as it changes by the peer's connections (fec.c).
 */
void ftv_peer_set_fec(struct ftv_peer *peer, u8 mode, u8 data, u8 repair)
{
	if (mode != FTV_FEC_FIXED) {
		data = 0;
		repair = 0;
	}
	WRITE_ONCE(peer->fec_setting, ftv_fec_pack(mode, data, repair));
}

/**
 * ftv_peer_set_flows - change how many fake TCP connections a session
 *	of the peer is to keep up
 * @peer: the peer
 * @flows: 1 to FTV_MAX_FLOWS (netlink's policy checks it)
 */
void ftv_peer_set_flows(struct ftv_peer *peer, u8 flows)
{
	u8 old = READ_ONCE(peer->flows);

	flows = clamp_t(u8, flows, 1, FTV_MAX_FLOWS);
	WRITE_ONCE(peer->flows, flows);
	/* A session up now opens the joins it lacks (none when the peer
	 * is being created: its flows were 0).
	 */
	if (old && flows > old && rcu_access_pointer(peer->conn))
		ftv_timers_want_connection(peer);
}

/**
 * ftv_peer_set_rotate - change when a connection of the peer's sessions
 *	is replaced for what it carried towards the client
 * @peer: the peer
 * @rotate: FTV_ROTATE_OFF, FTV_ROTATE_AUTO or a budget in bytes,
 *	FTV_ROTATE_MIN to FTV_ROTATE_MAX (netlink checks it)
 */
void ftv_peer_set_rotate(struct ftv_peer *peer, u32 rotate)
{
	WRITE_ONCE(peer->rotate, rotate);
}

/* Returns whether the peer moved from a known endpoint. */
static bool learn_endpoint_locked(struct ftv_peer *peer,
				  const struct ftv_tuple *tuple)
{
	struct ftv_endpoint *ep = &peer->endpoint, old = *ep;

	lockdep_assert_held(&peer->lock);
	memset(ep, 0, sizeof(*ep));
	if (tuple->family == AF_INET) {
		ep->addr4.sin_family = AF_INET;
		ep->addr4.sin_addr.s_addr = tuple->remote.s6_addr32[0];
		ep->addr4.sin_port = tuple->remote_port;
	} else {
		ep->addr6.sin6_family = AF_INET6;
		ep->addr6.sin6_addr = tuple->remote;
		ep->addr6.sin6_port = tuple->remote_port;
	}
	return old.addr.sa_family != AF_UNSPEC && memcmp(&old, ep, sizeof(old));
}

/**
 * ftv_peer_stage_packet - hold a packet until the peer has a session
 * @peer: the peer
 * @skb: the packet; ownership passes to the queue
 */
void ftv_peer_stage_packet(struct ftv_peer *peer, struct sk_buff *skb)
{
	struct sk_buff *old = NULL;

	skb_dst_drop(skb);
	spin_lock_bh(&peer->staged.lock);
	if (skb_queue_len(&peer->staged) >= FTV_STAGED_MAX)
		old = __skb_dequeue(&peer->staged);
	__skb_queue_tail(&peer->staged, skb);
	spin_unlock_bh(&peer->staged.lock);
	if (old) {
		DEV_STATS_INC(peer->device->dev, tx_dropped);
		kfree_skb(old);
	}
	ftv_timers_want_connection(peer);
}

/**
 * ftv_peer_flush_staged - send what waited for the session
 * @peer: the peer, which now has an established connection
 */
void ftv_peer_flush_staged(struct ftv_peer *peer)
{
	struct sk_buff_head queue;
	struct sk_buff *skb;

	__skb_queue_head_init(&queue);
	spin_lock_bh(&peer->staged.lock);
	skb_queue_splice_init(&peer->staged, &queue);
	spin_unlock_bh(&peer->staged.lock);
	while ((skb = __skb_dequeue(&queue)) != NULL)
		ftv_send_packet(peer, skb);
}

/* Returns the event to report once the lock is dropped. */
static u8 confirm_locked(struct ftv_peer *peer, struct ftv_conn *conn)
{
	u8 event;

	lockdep_assert_held(&peer->lock);
	WRITE_ONCE(conn->session->confirmed, true);
	peer->last_handshake = ktime_get_real_seconds();
	event = peer->had_session ? FTV_EVENT_REKEYED : FTV_EVENT_ESTABLISHED;
	peer->had_session = true;
	return event;
}

/**
 * ftv_peer_confirm - the responder's session proved itself
 * @peer: the peer
 * @conn: its connection, whose first data just authenticated
 *
 * Until then, a responder cannot tell a working session from one whose
 * initiator could not read the response (a wrong pre-shared key, say).
 */
void ftv_peer_confirm(struct ftv_peer *peer, struct ftv_conn *conn)
{
	u8 event;

	spin_lock_bh(&peer->lock);
	event = confirm_locked(peer, conn);
	spin_unlock_bh(&peer->lock);
	ftv_event_notify(peer, event);
}

/**
 * ftv_peer_lost - report that the path to @peer died
 * @peer: the peer
 */
void ftv_peer_lost(struct ftv_peer *peer)
{
	bool had;

	spin_lock_bh(&peer->lock);
	had = peer->had_session;
	peer->had_session = false;
	spin_unlock_bh(&peer->lock);
	if (had)
		ftv_event_notify(peer, FTV_EVENT_LOST);
}

/**
 * ftv_peer_install_conn - make @conn the peer's session
 * @peer: the peer
 * @conn: a connection whose keys are set
 * @prefer_pending: if this side is opening a connection to the peer at the
 *	same time, keep that one and refuse @conn
 *
 * The replaced connection retires. Return: true if @conn was installed.
 */
bool ftv_peer_install_conn(struct ftv_peer *peer, struct ftv_conn *conn,
			   bool prefer_pending)
{
	u8 event = FTV_EVENT_UNSPEC, moved = FTV_EVENT_UNSPEC;
	struct ftv_conn *old, *abandoned = NULL;

	spin_lock_bh(&peer->lock);
	if (peer->is_dead ||
	    (conn->is_initiator && peer->pending != conn) ||
	    (!conn->is_initiator && peer->pending && prefer_pending) ||
	    !ftv_conn_install(conn)) {
		spin_unlock_bh(&peer->lock);
		return false;
	}
	/* Both sides dialled at once: the lower public key's connection
	 * wins on both ends.
	 */
	if (!conn->is_initiator)
		abandoned = peer->pending;
	peer->pending = NULL;
	old = rcu_dereference_protected(peer->conn,
					lockdep_is_held(&peer->lock));
	rcu_assign_pointer(peer->conn, conn);
	WRITE_ONCE(peer->path_dead, false);
	if (conn->is_initiator)
		event = confirm_locked(peer, conn);
	/* A configured endpoint is where this side dials; keep it. */
	if (!peer->endpoint_configured &&
	    learn_endpoint_locked(peer, &conn->tuple))
		moved = FTV_EVENT_ENDPOINT_CHANGED;
	if (old)
		ftv_conn_retire(old);
	if (abandoned)
		ftv_conn_retire(abandoned);
	spin_unlock_bh(&peer->lock);
	ftv_event_notify(peer, moved);
	ftv_event_notify(peer, event);
	return true;
}
