// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: one fake TCP connection per session. A connection is found
 * by its outer 4-tuple in the device's hash table. When a newer connection
 * replaces it, it lingers for a while so that segments still in flight are
 * swallowed quietly instead of reaching the host stack (which would answer
 * them with RSTs).
 */

#include "conn.h"
#include "crypto.h"
#include "device.h"
#include "peer.h"
#include "token.h"
#include "send.h"
#include "timers.h"

#include <crypto/aead.h>
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

/*
 * Session lifetime. The side that opened a connection opens a new one (new
 * ports, new handshake, new keys) once a session is this old or has sent
 * this many messages; nobody uses a session past the reject limits. Tests
 * lower them through /sys/module/ftv/parameters; reject must stay above
 * rekey.
 */
static unsigned int rekey_after_seconds = 120;
module_param(rekey_after_seconds, uint, 0644);
MODULE_PARM_DESC(rekey_after_seconds, "Open a new session after this long");

static unsigned int reject_after_seconds = 180;
module_param(reject_after_seconds, uint, 0644);
MODULE_PARM_DESC(reject_after_seconds, "Never use a session older than this");

static unsigned long long rekey_after_messages = 1ULL << 60;
module_param(rekey_after_messages, ullong, 0644);
MODULE_PARM_DESC(rekey_after_messages,
		 "Open a new session after sending this many messages");

static unsigned long long reject_after_messages = FTV_REJECT_AFTER_MESSAGES;
module_param(reject_after_messages, ullong, 0644);
MODULE_PARM_DESC(reject_after_messages,
		 "Never use a key for more messages than this");

static u32 tuple_hash(const struct ftv_tuple *tuple)
{
	return jhash2((__force const u32 *)tuple->remote.s6_addr32, 4,
		      (__force u32)tuple->remote_port << 16 |
		      (__force u32)tuple->local_port);
}

/* A retired connection's keys are no longer needed: wipe them. */
static void conn_keys_work(struct work_struct *work)
{
	struct ftv_conn *conn = container_of(to_rcu_work(work),
					     struct ftv_conn, keys_work);

	ftv_crypto_free(conn->send_tfm);
	ftv_crypto_free(conn->recv_tfm);
	conn->send_tfm = NULL;
	conn->recv_tfm = NULL;
	memzero_explicit(&conn->send_hp, sizeof(conn->send_hp));
	memzero_explicit(&conn->recv_hp, sizeof(conn->recv_hp));
}

static void conn_free_work(struct work_struct *work)
{
	struct ftv_conn *conn = container_of(to_rcu_work(work),
					     struct ftv_conn, free_work);

	flush_rcu_work(&conn->keys_work);

	/* The device may be gone by now: print only what the connection
	 * owns.
	 */
	pr_debug("connection %u:%u destroyed\n",
		 ntohs(conn->tuple.local_port), ntohs(conn->tuple.remote_port));
	ftv_conn_free(conn);
}

/**
 * ftv_conn_create - allocate a connection that is not yet visible
 * @fdev: owning device
 * @peer: peer it belongs to
 * @tuple: outer addresses and ports as seen from this side
 * @gfp: allocation flags
 *
 * Return: the connection or NULL.
 */
struct ftv_conn *ftv_conn_create(struct ftv_device *fdev,
				 struct ftv_peer *peer,
				 const struct ftv_tuple *tuple, gfp_t gfp)
{
	struct ftv_conn *conn;

	conn = kzalloc(sizeof(*conn), gfp);
	if (!conn)
		return NULL;
	if (dst_cache_init(&conn->dst_cache, gfp)) {
		kfree(conn);
		return NULL;
	}
	conn->device = fdev;
	conn->peer = peer;
	conn->tuple = *tuple;
	conn->created = jiffies;
	spin_lock_init(&conn->xmit_lock);
	ftv_tcp_rcv_init(&conn->rcv);
	conn->xmit_cpu = -1;
	ftv_replay_init(&conn->replay);
	skb_queue_head_init(&conn->early);
	INIT_HLIST_NODE(&conn->hash);
	INIT_RCU_WORK(&conn->keys_work, conn_keys_work);
	INIT_RCU_WORK(&conn->free_work, conn_free_work);
	pr_debug("connection %u:%u created\n", ntohs(tuple->local_port),
		 ntohs(tuple->remote_port));
	return conn;
}

/**
 * ftv_conn_free - free a connection nobody can reach any more
 * @conn: the connection; its keys are zeroed with it
 */
void ftv_conn_free(struct ftv_conn *conn)
{
	skb_queue_purge(&conn->early);
	dst_cache_destroy(&conn->dst_cache);
	ftv_crypto_free(conn->send_tfm);
	ftv_crypto_free(conn->recv_tfm);
	kfree_sensitive(conn);
}

/**
 * ftv_conn_hash - make @conn findable by its tuple
 * @conn: the connection
 */
void ftv_conn_hash(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;

	spin_lock_bh(&fdev->conn_lock);
	hash_add_rcu(fdev->conn_hashtable, &conn->hash,
		     tuple_hash(&conn->tuple));
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_retire - stop sending on @conn
 * @conn: a connection already unlinked from its peer
 *
 * Data still in flight on it is opened for a while, so that moving to a new
 * session loses nothing; then its keys are wiped, it lingers to swallow
 * late segments, and it is freed.
 */
void ftv_conn_retire(struct ftv_conn *conn)
{
	conn->retired_until = jiffies + msecs_to_jiffies(FTV_RETIRED_KEYS_MS);
	conn->linger_until = jiffies + msecs_to_jiffies(FTV_LINGER_MS);
	WRITE_ONCE(conn->state, FTV_CONN_RETIRED);
}

/**
 * ftv_conn_lookup - find the connection a received segment belongs to
 * @fdev: the device
 * @tuple: the segment's tuple, seen from this side
 *
 * Call under rcu_read_lock(). Return: the connection or NULL.
 */
struct ftv_conn *ftv_conn_lookup(struct ftv_device *fdev,
				 const struct ftv_tuple *tuple)
{
	struct ftv_conn *conn;

	hash_for_each_possible_rcu(fdev->conn_hashtable, conn, hash,
				   tuple_hash(tuple))
		if (ftv_tuple_equal(&conn->tuple, tuple))
			return conn;
	return NULL;
}

static void unhash_and_free(struct ftv_conn *conn)
{
	hash_del_rcu(&conn->hash);
	queue_rcu_work(ftv_wq, &conn->free_work);
}

/**
 * ftv_conn_gc - free lingering connections whose time is up
 * @fdev: the device
 * @all: free every connection regardless of state (device teardown)
 */
void ftv_conn_gc(struct ftv_device *fdev, bool all)
{
	struct hlist_node *tmp;
	struct ftv_conn *conn;
	int bkt;

	spin_lock_bh(&fdev->conn_lock);
	hash_for_each_safe(fdev->conn_hashtable, bkt, tmp, conn, hash) {
		int state = READ_ONCE(conn->state);

		if (all || (state == FTV_CONN_LINGER &&
			    time_after(jiffies, conn->linger_until))) {
			unhash_and_free(conn);
		} else if (state == FTV_CONN_RETIRED &&
			   time_after(jiffies, conn->retired_until)) {
			WRITE_ONCE(conn->state, FTV_CONN_LINGER);
			queue_rcu_work(ftv_wq, &conn->keys_work);
		}
	}
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_unhash - free @conn now rather than letting it linger
 * @conn: a connection already unlinked from its peer
 */
void ftv_conn_unhash(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;

	spin_lock_bh(&fdev->conn_lock);
	if (!hlist_unhashed(&conn->hash))
		unhash_and_free(conn);
	else
		queue_rcu_work(ftv_wq, &conn->free_work);
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_set_keys - key a connection with its session's keys
 * @conn: a connection not yet established
 * @keys: the keys; wiped on return
 *
 * A responder allocates its transforms here, in process context; an
 * initiator allocated them beforehand and only sets the keys, which is
 * allowed in softirq context.
 *
 * Return: 0 or a negative errno.
 */
int ftv_conn_set_keys(struct ftv_conn *conn, struct ftv_session_keys *keys)
{
	int ret = 0;

	if (!conn->send_tfm) {
		conn->send_tfm = ftv_crypto_alloc(keys->send);
		conn->recv_tfm = ftv_crypto_alloc(keys->recv);
		if (IS_ERR(conn->send_tfm) || IS_ERR(conn->recv_tfm))
			ret = -ENOMEM;
	} else {
		ret = crypto_aead_setkey(conn->send_tfm, keys->send,
					 FTV_KEY_SIZE) ?:
		      crypto_aead_setkey(conn->recv_tfm, keys->recv,
					 FTV_KEY_SIZE);
	}
	conn->send_hp = keys->send_hp;
	conn->recv_hp = keys->recv_hp;
	conn->keyed = !ret;
	memzero_explicit(keys, sizeof(*keys));
	return ret;
}

static unsigned long session_age(const struct ftv_conn *conn)
{
	return jiffies - READ_ONCE(conn->established);
}

/**
 * ftv_conn_rekey_due - whether the opener should start a new session
 * @conn: an established connection
 * @counter: the next counter to be sent on it
 *
 * Return: true when the session is old enough or has sent enough.
 */
bool ftv_conn_rekey_due(const struct ftv_conn *conn, u64 counter)
{
	return session_age(conn) >= READ_ONCE(rekey_after_seconds) * HZ ||
	       counter >= READ_ONCE(rekey_after_messages);
}

/**
 * ftv_conn_expired - whether a session's keys must no longer be used
 * @conn: a connection
 * @counter: the counter about to be sent or just received
 *
 * Return: true past the reject limits.
 */
bool ftv_conn_expired(const struct ftv_conn *conn, u64 counter)
{
	return session_age(conn) >= READ_ONCE(reject_after_seconds) * HZ ||
	       counter >= min_t(u64, READ_ONCE(reject_after_messages),
				FTV_REJECT_AFTER_MESSAGES);
}

/**
 * ftv_conn_tsval - our TCP timestamp clock for @conn
 * @conn: the connection
 *
 * Return: milliseconds plus the connection's random offset, as Linux does.
 */
u32 ftv_conn_tsval(const struct ftv_conn *conn)
{
	return jiffies_to_msecs(jiffies) + conn->ts_offset;
}

static void tuple_from_endpoint(struct ftv_tuple *tuple,
				const struct ftv_endpoint *ep)
{
	memset(tuple, 0, sizeof(*tuple));
	tuple->family = ep->addr.sa_family;
	if (tuple->family == AF_INET) {
		tuple->remote.s6_addr32[0] = ep->addr4.sin_addr.s_addr;
		tuple->remote_port = ep->addr4.sin_port;
	} else {
		tuple->remote = ep->addr6.sin6_addr;
		tuple->remote_port = ep->addr6.sin6_port;
	}
	/* A fresh port from the range Linux uses for its own connections,
	 * so every new connection is a new 4-tuple to middleboxes.
	 */
	tuple->local_port = htons(32768 + get_random_u32() % 28232);
}

/* Everything about a new outgoing connection that may sleep. */
static struct ftv_conn *prepare_initiator(struct ftv_peer *peer,
					  const struct ftv_endpoint *ep)
{
	static const u8 no_key[FTV_KEY_SIZE];
	struct ftv_device *fdev = peer->device;
	struct ftv_identity identity;
	struct ftv_tuple tuple;
	siphash_key_t token_key;
	u8 psk[FTV_KEY_SIZE];
	struct ftv_conn *conn;
	unsigned int pad;
	u32 isn;

	if (!ftv_device_copy_identity(fdev, &identity))
		return NULL;
	tuple_from_endpoint(&tuple, ep);
	conn = NULL;
	if (ftv_send_pick_source(fdev, &tuple))
		goto out;
	conn = ftv_conn_create(fdev, peer, &tuple, GFP_KERNEL);
	if (!conn)
		goto out;
	conn->is_initiator = true;
	/* The SYN's ISN and timestamp carry the token the responder
	 * checks; our timestamp clock runs on from the SYN's.
	 */
	spin_lock_bh(&peer->lock);
	memcpy(psk, peer->preshared_key, sizeof(psk));
	spin_unlock_bh(&peer->lock);
	ftv_token_key(&token_key, peer->public_key, psk);
	ftv_token_make(&token_key, &isn, &conn->syn_tsval);
	atomic_set(&conn->snd_nxt, isn + 1);
	atomic_set(&conn->ip_id, get_random_u32());
	conn->ts_offset = conn->syn_tsval - jiffies_to_msecs(jiffies);
	/* Keyed for real when the response arrives, in softirq context,
	 * where allocating a transform is not allowed.
	 */
	conn->send_tfm = ftv_crypto_alloc(no_key);
	conn->recv_tfm = ftv_crypto_alloc(no_key);
	if (IS_ERR(conn->send_tfm) || IS_ERR(conn->recv_tfm) ||
	    ftv_noise_create_init(peer, &identity, &conn->handshake,
				  (struct ftv_msg_init *)conn->init_msg)) {
		ftv_conn_free(conn);
		conn = NULL;
		goto out;
	}
	pad = get_random_u32() % (FTV_HANDSHAKE_PAD_MAX + 1);
	get_random_bytes(conn->init_msg + sizeof(struct ftv_msg_init), pad);
	conn->init_len = sizeof(struct ftv_msg_init) + pad;
	conn->state = FTV_CONN_SYN_SENT;
out:
	memzero_explicit(psk, sizeof(psk));
	memzero_explicit(&token_key, sizeof(token_key));
	memzero_explicit(&identity, sizeof(identity));
	return conn;
}

/* No session, or one that is due to be replaced or whose path died. */
static bool conn_replaceable(struct ftv_peer *peer)
{
	struct ftv_conn *conn;
	u64 next;

	conn = rcu_dereference_protected(peer->conn,
					 lockdep_is_held(&peer->lock));
	if (!conn || READ_ONCE(peer->path_dead))
		return true;
	next = atomic64_read(&conn->send_counter);
	return ftv_conn_rekey_due(conn, next) || ftv_conn_expired(conn, next);
}

/**
 * ftv_conn_open - start a connection to @peer unless one is usable or opening
 * @peer: a peer with a configured endpoint
 *
 * Runs in process context (the peer's connect work).
 */
void ftv_conn_open(struct ftv_peer *peer)
{
	struct ftv_endpoint ep;
	struct ftv_conn *conn;
	bool busy, dial;

	spin_lock_bh(&peer->lock);
	busy = peer->pending || !conn_replaceable(peer);
	ep = peer->endpoint;
	dial = peer->endpoint_configured;
	spin_unlock_bh(&peer->lock);
	if (busy || !dial || ep.addr.sa_family == AF_UNSPEC)
		return;

	conn = prepare_initiator(peer, &ep);
	if (!conn) {
		/* No route or no memory: try again later if it matters. */
		if (READ_ONCE(peer->path_dead) ||
		    !skb_queue_empty_lockless(&peer->staged))
			ftv_timers_connect_started(peer);
		return;
	}

	spin_lock_bh(&peer->lock);
	busy = peer->is_dead || peer->pending || !conn_replaceable(peer);
	if (!busy) {
		peer->pending = conn;
		ftv_conn_hash(conn);
	}
	spin_unlock_bh(&peer->lock);
	if (busy) {
		ftv_conn_free(conn);
		return;
	}
	local_bh_disable();
	ftv_send_syn(conn);
	local_bh_enable();
	ftv_timers_connect_started(peer);
}
