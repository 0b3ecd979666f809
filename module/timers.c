// SPDX-License-Identifier: GPL-2.0
/*
 * Per-peer timers: retrying and giving up on a connection that is being
 * opened, and persistent keepalives. Everything checks is_dead before
 * re-arming, so ftv_timers_stop() after the peer is marked dead is final.
 */

#include "timers.h"
#include "conn.h"
#include "connect.h"
#include "control.h"
#include "device.h"
#include "event.h"
#include "log.h"
#include "peer.h"
#include "send.h"

#include <linux/moduleparam.h>

/*
 * How long sent data may go unanswered before the path counts as dead.
 * Tests that hold a peer's segments back on purpose raise it, in debug
 * builds.
 */
#ifdef DEBUG
static unsigned int dead_after_ms = FTV_DEAD_AFTER_MS;
module_param(dead_after_ms, uint, 0644);
MODULE_PARM_DESC(dead_after_ms,
		 "Data unanswered for this long means the path is gone");
#else
static const unsigned int dead_after_ms = FTV_DEAD_AFTER_MS;
#endif

static bool peer_alive(struct ftv_peer *peer)
{
	return !READ_ONCE(peer->is_dead);
}

static void connect_work(struct work_struct *work)
{
	struct ftv_peer *peer = container_of(work, struct ftv_peer,
					     connect_work);

	if (!peer_alive(peer))
		return;
	ftv_conn_open(peer);
	ftv_conn_open_joins(peer);
}

/* Whether the peer's session stalled (every connection at once, flow.c):
 * its packets are dropped, not staged, so nothing else asks to dial.
 */
static bool session_stalled(struct ftv_peer *peer)
{
	struct ftv_conn *conn;

	lockdep_assert_held(&peer->lock);
	conn = rcu_dereference_protected(peer->conn,
					 lockdep_is_held(&peer->lock));
	return conn && READ_ONCE(conn->stalled);
}

/*
 * Abandon an attempt whose SYN went unanswered, or that has taken too long,
 * and dial anew if there is a reason to. A SYN is never sent twice: the
 * responder refuses a SYN token it has seen before (it could be a replay),
 * so the retry is a new connection from a new port, as an application that
 * retries would open. A peer with a list of endpoints tries the next one:
 * a server address that a censor blocks answers no SYN, and the session
 * it carried has already stalled or been found dead by then.
 */
static void connect_expired(struct timer_list *timer)
{
	struct ftv_peer *peer = timer_container_of(peer, timer, connect_timer);
	bool moved = false;
	struct ftv_conn *conn;

	rcu_read_lock_bh();
	spin_lock_bh(&peer->lock);
	conn = peer->pending;
	if (conn && (READ_ONCE(conn->state) == FTV_CONN_SYN_SENT ||
		     time_after(jiffies, conn->created +
				msecs_to_jiffies(FTV_CONNECT_TIMEOUT_MS)))) {
		peer->pending = NULL;
		moved = ftv_peer_endpoint_failed(peer, &conn->tuple);
		ftv_conn_retire(conn);
		conn = NULL;
		if (!skb_queue_empty_lockless(&peer->staged) ||
		    READ_ONCE(peer->persistent_keepalive) ||
		    READ_ONCE(peer->path_dead) ||
		    (moved && session_stalled(peer)))
			ftv_timers_want_connection(peer);
	} else if (!conn && READ_ONCE(peer->path_dead)) {
		/* The last attempt could not even start (no route). */
		ftv_timers_want_connection(peer);
	}
	spin_unlock_bh(&peer->lock);
	if (conn && peer_alive(peer))
		mod_timer(&peer->connect_timer,
			  jiffies + msecs_to_jiffies(FTV_SYN_RETRANSMIT_MS));
	rcu_read_unlock_bh();
	/* A timer, with no lock held: the peer's is taken to tell. */
	if (moved)
		ftv_event_notify(peer, FTV_EVENT_FAILOVER);
}

/* Data went unanswered: the path (a NAT mapping, a middlebox's state, the
 * peer's module) is gone. The side that dials opens a new connection; the
 * old session stays usable until the new one replaces it.
 */
static void dead_expired(struct timer_list *timer)
{
	struct ftv_peer *peer = timer_container_of(peer, timer, dead_timer);

	if (!peer_alive(peer))
		return;
	ftv_dev_dbg_ratelimited(peer->device->dev, "peer %llu: no answer for %u ms\n",
				peer->internal_id, READ_ONCE(dead_after_ms));
	WRITE_ONCE(peer->path_dead, true);
	ftv_peer_lost(peer);
	ftv_timers_want_connection(peer);
}

/**
 * ftv_timers_path_moved - the path to the peer moved from under its session
 * @peer: the peer
 *
 * The route of one of the session's connections no longer leaves from the
 * address that connection was opened from (send.c). As for a dead path:
 * the side that dials opens a new connection, from where the path now
 * leads, and the old session carries on meanwhile if it can.
 */
void ftv_timers_path_moved(struct ftv_peer *peer)
{
	if (!peer_alive(peer) || READ_ONCE(peer->path_dead))
		return;
	ftv_dev_dbg_ratelimited(peer->device->dev, "peer %llu: the path moved\n",
				peer->internal_id);
	WRITE_ONCE(peer->path_dead, true);
	ftv_timers_want_connection(peer);
}

static void reply_expired(struct timer_list *timer)
{
	struct ftv_peer *peer = timer_container_of(peer, timer, reply_timer);
	struct ftv_conn *conn;

	/* A flag rather than jiffies: a reply can go out in the same jiffy
	 * as the data it answers, or the data in the same jiffy as our own
	 * last message.
	 */
	if (!peer_alive(peer) || READ_ONCE(peer->sent_since_rx))
		return;
	rcu_read_lock_bh();
	conn = rcu_dereference_bh(peer->conn);
	if (conn && READ_ONCE(conn->state) == FTV_CONN_ESTABLISHED)
		ftv_control_send_session_keepalive(conn);
	rcu_read_unlock_bh();
}

static void keepalive_expired(struct timer_list *timer)
{
	struct ftv_peer *peer = timer_container_of(peer, timer, keepalive_timer);
	unsigned int interval = READ_ONCE(peer->persistent_keepalive);
	struct ftv_conn *conn;

	if (!interval || !peer_alive(peer))
		return;
	rcu_read_lock_bh();
	conn = rcu_dereference_bh(peer->conn);
	if (conn && READ_ONCE(conn->state) == FTV_CONN_ESTABLISHED) {
		if (time_after_eq(jiffies, READ_ONCE(peer->last_sent) +
				  (interval - 1) * HZ))
			ftv_control_send_session_keepalive(conn);
	} else {
		ftv_timers_want_connection(peer);
	}
	rcu_read_unlock_bh();
	mod_timer(&peer->keepalive_timer, jiffies + interval * HZ);
}

/**
 * ftv_timers_init - set up a new peer's timers and work
 * @peer: the peer
 */
void ftv_timers_init(struct ftv_peer *peer)
{
	INIT_WORK(&peer->connect_work, connect_work);
	timer_setup(&peer->connect_timer, connect_expired, 0);
	timer_setup(&peer->keepalive_timer, keepalive_expired, 0);
	timer_setup(&peer->dead_timer, dead_expired, 0);
	timer_setup(&peer->reply_timer, reply_expired, 0);
}

/**
 * ftv_timers_stop - stop everything; the peer must already be dead
 * @peer: the peer
 */
void ftv_timers_stop(struct ftv_peer *peer)
{
	timer_delete_sync(&peer->connect_timer);
	timer_delete_sync(&peer->keepalive_timer);
	timer_delete_sync(&peer->dead_timer);
	timer_delete_sync(&peer->reply_timer);
	cancel_work_sync(&peer->connect_work);
	timer_delete_sync(&peer->connect_timer);
}

/**
 * ftv_timers_want_connection - open a connection soon if there is none
 * @peer: the peer
 */
void ftv_timers_want_connection(struct ftv_peer *peer)
{
	if (peer_alive(peer))
		queue_work(ftv_wq, &peer->connect_work);
}

/**
 * ftv_timers_connect_started - a SYN went out for a new connection
 * @peer: the peer
 */
void ftv_timers_connect_started(struct ftv_peer *peer)
{
	if (peer_alive(peer))
		mod_timer(&peer->connect_timer,
			  jiffies + msecs_to_jiffies(FTV_SYN_RETRANSMIT_MS));
}

/**
 * ftv_timers_connected - a session was established
 * @peer: the peer
 */
void ftv_timers_connected(struct ftv_peer *peer)
{
	timer_delete(&peer->connect_timer);
	ftv_timers_keepalive_changed(peer);
}

/**
 * ftv_timers_sent - note that a message went out to @peer
 * @peer: the peer
 * @data: it carried a packet (a keepalive does not)
 *
 * Data that goes unanswered for dead_after_ms means the path is gone.
 */
void ftv_timers_sent(struct ftv_peer *peer, bool data)
{
	unsigned long now = jiffies;

	/* Skip the store when it would not change anything, to keep the
	 * cache line shared between CPUs that transmit at once.
	 */
	if (READ_ONCE(peer->last_sent) != now)
		WRITE_ONCE(peer->last_sent, now);
	if (!READ_ONCE(peer->sent_since_rx))
		WRITE_ONCE(peer->sent_since_rx, true);
	if (data && !timer_pending(&peer->dead_timer) && peer_alive(peer))
		mod_timer(&peer->dead_timer,
			  now + msecs_to_jiffies(READ_ONCE(dead_after_ms)));
}

/**
 * ftv_timers_received - note an authenticated message from @peer
 * @peer: the peer
 * @data: it carried a packet
 *
 * The path works for now; a path once found dead still gets a new
 * connection (the old one's state in middleboxes may be gone). Data we
 * receive but do not answer is answered with a keepalive after
 * FTV_REPLY_AFTER_MS, so that the other side can tell a one-way flow from
 * a dead path.
 */
void ftv_timers_received(struct ftv_peer *peer, bool data)
{
	unsigned long now = jiffies;

	if (READ_ONCE(peer->last_received) != now)
		WRITE_ONCE(peer->last_received, now);
	if (timer_pending(&peer->dead_timer))
		timer_delete(&peer->dead_timer);
	if (!data)
		return;
	if (READ_ONCE(peer->sent_since_rx))
		WRITE_ONCE(peer->sent_since_rx, false);
	if (!timer_pending(&peer->reply_timer) && peer_alive(peer))
		mod_timer(&peer->reply_timer,
			  now + msecs_to_jiffies(FTV_REPLY_AFTER_MS));
}

/**
 * ftv_timers_keepalive_changed - (re)start keepalives after a change
 * @peer: the peer
 */
void ftv_timers_keepalive_changed(struct ftv_peer *peer)
{
	unsigned int interval = READ_ONCE(peer->persistent_keepalive);

	if (!interval)
		timer_delete(&peer->keepalive_timer);
	else if (peer_alive(peer) && !timer_pending(&peer->keepalive_timer))
		mod_timer(&peer->keepalive_timer, jiffies + interval * HZ);
}
