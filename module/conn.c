// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: one fake TCP connection per session, found by its outer
 * 4-tuple in the device's connection table. When a newer connection
 * replaces it, it lingers for a while so that segments still in flight are
 * swallowed quietly instead of reaching the host stack (which would answer
 * them with RSTs).
 *
 * This file owns a connection's life: its table, its states and what
 * each costs. Every change of ->state goes through ftv_conn_set_state(),
 * under the device's conn_lock (it asserts it), which also guards the
 * connection table, each peer's list of its connections and the device's
 * list of retired ones. Opening connections (connect.c) changes state
 * only through the three functions conn_state.h declares for it:
 *
 *  from              to              when                         caller
 *  NEW               SYN_SENT        an initiator is published     connect.c
 *  SYN_SENT          HANDSHAKE_SENT  its SYN-ACK arrived           handshake.c
 *  HANDSHAKE_SENT    ESTABLISHED     the response authenticated    peer.c
 *  NEW               RESPONDING      an initiation authenticated   peer.c
 *  RESPONDING        ESTABLISHED     the response went out         listen.c
 *  NEW               SYN_SENT        an initiator's join is        connect.c
 *                                    published
 *  SYN_SENT          ESTABLISHED     a join's SYN-ACK arrived      handshake.c
 *  NEW               JOIN_RECEIVED   a SYN's join token was        connect.c
 *                                    expected, within the peer's   (listen.c)
 *                                    rate and the session's cap
 *  JOIN_RECEIVED     ESTABLISHED     a message sealed for the      connect.c
 *                                    join opened on it, and        (open.c)
 *                                    acknowledged our SYN-ACK
 *  SYN_SENT to
 *  ESTABLISHED       RETIRED         replaced, or the attempt      peer.c,
 *                                    was given up; a join, when    timers.c,
 *                                    its session's opener retires  connect.c
 *                                    or dies
 *  ESTABLISHED       RETIRED         a probe's join, once the      connect.c
 *                                    peer's first message on it    (open.c,
 *                                    opened (or its SYN was        handshake.c)
 *                                    answered, by a peer that
 *                                    does not answer joins)
 *  ESTABLISHED       RETIRED         a probe's join whose answer   gc
 *                                    was due and did not come
 *                                    within FTV_JOIN_TIMEOUT_MS
 *  RETIRED           LINGER          FTV_RETIRED_KEYS_MS passed;   gc
 *                                    keys freed after RCU
 *  any but NEW       DEAD            lingered FTV_LINGER_MS (gc),  gc, peer.c,
 *                                    or its peer was removed or    device.c
 *                                    reset, or the device closed;
 *                                    a join not up within
 *                                    FTV_JOIN_TIMEOUT_MS (gc), or
 *                                    retired before it came up;
 *  RETIRED, LINGER   DEAD            the oldest retired of a peer, retire_locked()
 *                                    whose FTV_PEER_RETIRED_MAX
 *                                    are, as it retires one more
 *  NEW               (freed)         the creator gave up           ftv_conn_free()
 *  DEAD              (freed)         an RCU grace period later     free_work
 *
 * A session (session.c) is carried by the connection its key exchange ran
 * on, its opener, and by the connections that joined it later (join.c
 * makes their tokens). They share one fate: when the opener retires or
 * dies, its live joins retire with it, listed ahead of it for the gc, so
 * that every connection of the session lingers before the opener's keys
 * work wipes the session's keys.
 *
 * Lifetimes: a connection holds a reference on its peer, so conn->peer is
 * valid for as long as the connection is, and one on its session, so
 * conn->session is too; removing a peer also kills all of
 * its connections, whatever their state, so that none of them is found
 * afterwards. The device counts its connections and waits for the count
 * to reach zero before it goes (ftv_conn_wait_all()). A published
 * connection is only ever used under RCU (or with bottom halves off): it
 * is freed a grace period after it was unhashed, and once no job holds it
 * any more: packets being sealed or opened on other CPUs (queue.c) count
 * in conn->jobs, and the connection's keys and memory wait for that count
 * to reach zero (wait_jobs()). Nobody queues a job for a connection once
 * it lingers, so after the grace period the count only goes down.
 */

#include "conn.h"
#include "conn_state.h"
#include "control.h"
#include "device.h"
#include "event.h"
#include "flow.h"
#include "log.h"
#include "peer.h"
#include "segment.h"
#include "send.h"
#include "timers.h"
#include "token.h"

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/wait_bit.h>
#include <net/ip.h>
#include <net/net_namespace.h>

static const struct rhashtable_params conn_params = {
	.key_len = sizeof(struct ftv_tuple),
	.key_offset = offsetof(struct ftv_conn, tuple),
	.head_offset = offsetof(struct ftv_conn, hash),
	.automatic_shrinking = true,
};

static bool state_live(int state)
{
	return state >= FTV_CONN_SYN_SENT && state <= FTV_CONN_ESTABLISHED;
}

/* Put @conn in its session's list of established connections, or take
 * it out. It stays valid for a grace period after it is taken out: it is
 * freed only a grace period after it is unhashed, later still.
 */
static void set_up_locked(struct ftv_conn *conn, bool up)
{
	struct ftv_session *s = conn->session;
	unsigned int i;

	lockdep_assert_held(&conn->device->conn_lock);
	for (i = 0; i < FTV_SESSION_FLOWS; i++) {
		struct ftv_conn *c = rcu_dereference_protected(s->up[i],
				lockdep_is_held(&conn->device->conn_lock));

		if (up && !c) {
			rcu_assign_pointer(s->up[i], conn);
			return;
		}
		if (!up && c == conn) {
			RCU_INIT_POINTER(s->up[i], NULL);
			return;
		}
	}
}

static bool state_retired(int state)
{
	return state == FTV_CONN_RETIRED || state == FTV_CONN_LINGER;
}

/* Put @conn, a join, in its session's list of live joins, or take it
 * out.
 */
static void set_live_locked(struct ftv_conn *conn, bool live)
{
	lockdep_assert_held(&conn->device->conn_lock);
	if (live)
		list_add_tail(&conn->join_entry, &conn->session->live_joins);
	else
		list_del_init(&conn->join_entry);
}

/* Put @conn in its peer's list of retired connections, oldest first, or
 * take it out.
 */
static void set_retired_locked(struct ftv_conn *conn, bool retired)
{
	struct ftv_peer *peer = conn->peer;

	lockdep_assert_held(&conn->device->conn_lock);
	if (retired) {
		list_add_tail(&conn->retired_entry, &peer->retired);
		peer->conns_retired++;
	} else {
		list_del_init(&conn->retired_entry);
		peer->conns_retired--;
	}
}

/**
 * ftv_conn_set_state - the one writer of a connection's state
 * @conn: the connection
 * @state: its new state, a move the table at the top of this file has
 *
 * It also counts the session's live joins and keeps their list, keeps
 * the list of those established, with the opener, and counts the peer's
 * connections that retired and are not yet dead. Called under the
 * device's conn_lock, here and in connect.c only (conn_state.h).
 */
void ftv_conn_set_state(struct ftv_conn *conn, enum ftv_conn_state state)
{
	bool was = state_live(conn->state), is = state_live(state);
	bool was_up = conn->state == FTV_CONN_ESTABLISHED;
	bool is_up = state == FTV_CONN_ESTABLISHED;
	bool was_retired = state_retired(conn->state);
	struct ftv_session *s = conn->session;

	lockdep_assert_held(&conn->device->conn_lock);
	if (conn->join_index && was != is) {
		s->joins += is ? 1 : -1;
		set_live_locked(conn, is);
	}
	if (conn->join_index && was_up != is_up)
		WRITE_ONCE(s->joins_up, s->joins_up + (is_up ? 1 : -1));
	if (was_up != is_up)
		set_up_locked(conn, is_up);
	if (is_up && !was_up)
		ftv_flow_established(conn);
	if (was_retired != state_retired(state))
		set_retired_locked(conn, !was_retired);
	WRITE_ONCE(conn->state, state);
}

/* Until no job holds @conn (queue.c): they end without sleeping. */
static void wait_jobs(struct ftv_conn *conn)
{
	wait_var_event(&conn->jobs, !atomic_read(&conn->jobs));
}

/* Everything a connection owns, and the connection. May sleep. */
static void conn_release(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;

	wait_jobs(conn);
	ftv_session_put(conn->session);
	dst_cache_destroy(&conn->dst_cache);
	if (conn->port)
		sock_release(conn->port);
	ftv_dev_dbg(fdev->dev, "connection %u:%u destroyed\n",
		    ntohs(conn->tuple.local_port), ntohs(conn->tuple.remote_port));
	ftv_peer_put(conn->peer);
	kfree_sensitive(conn);
	/* The device may go as soon as the count reaches zero. */
	if (atomic_dec_and_test(&fdev->conn_count))
		wake_up_var(&fdev->conn_count);
}

/* A retired connection's keys are no longer needed: wipe them. */
static void conn_keys_work(struct work_struct *work)
{
	struct ftv_conn *conn = container_of(to_rcu_work(work),
					     struct ftv_conn, keys_work);

	/* No job is queued for a lingering connection after the grace
	 * period; those queued before it are done in a moment.
	 */
	wait_jobs(conn);
	ftv_session_wipe_keys(conn->session);
}

static void conn_free_work(struct work_struct *work)
{
	struct ftv_conn *conn = container_of(to_rcu_work(work),
					     struct ftv_conn, free_work);

	flush_rcu_work(&conn->keys_work);
	conn_release(conn);
}

/* A new session for a connection that opens one. */
static struct ftv_session *session_create(struct ftv_device *fdev,
					  struct ftv_peer *peer,
					  const struct ftv_tuple *tuple,
					  gfp_t gfp)
{
	struct ftv_session_links links = {
		/* Sent from one CPU, delivered through that CPU's cell. */
		.cpu = ftv_device_serial_cpu(fdev),
		.fec_stats = &peer->fec_stats,
		.fec_setting = &peer->fec_setting,
		.fec_rx_count = &fdev->fec_rx_count,
		.dev = fdev->dev,
		.local_port = tuple->local_port,
		.remote_port = tuple->remote_port,
	};

	links.cell = per_cpu_ptr(fdev->cells, links.cpu);
	return ftv_session_create(&links, gfp);
}

/**
 * ftv_conn_create - allocate a connection that is not yet visible
 * @fdev: owning device
 * @peer: peer it belongs to; the connection takes a reference
 * @tuple: outer addresses and ports as seen from this side
 * @session: the session it joins (the connection takes a reference), or
 *	NULL for a connection that opens a session of its own
 * @gfp: allocation flags
 *
 * Return: the connection, in state NEW, or NULL.
 */
struct ftv_conn *ftv_conn_create(struct ftv_device *fdev,
				 struct ftv_peer *peer,
				 const struct ftv_tuple *tuple,
				 struct ftv_session *session, gfp_t gfp)
{
	struct ftv_conn *conn;

	conn = kzalloc(sizeof(*conn), gfp);
	if (!conn)
		return NULL;
	if (dst_cache_init(&conn->dst_cache, gfp))
		goto free_conn;
	/* Taken last: a failure before it has no session to put, which
	 * could sleep.
	 */
	if (session)
		conn->session = ftv_session_get(session);
	else
		conn->session = session_create(fdev, peer, tuple, gfp);
	if (!conn->session)
		goto free_dst;
	conn->device = fdev;
	conn->peer = ftv_peer_get(peer);
	conn->tuple = *tuple;
	conn->state = FTV_CONN_NEW;
	conn->created = jiffies;
	spin_lock_init(&conn->xmit_lock);
	ftv_faketcp_rcv_init(&conn->rcv);
	conn->xmit_cpu = -1;
	INIT_LIST_HEAD(&conn->peer_entry);
	INIT_LIST_HEAD(&conn->gc_entry);
	INIT_LIST_HEAD(&conn->join_entry);
	INIT_LIST_HEAD(&conn->retired_entry);
	INIT_RCU_WORK(&conn->keys_work, conn_keys_work);
	INIT_RCU_WORK(&conn->free_work, conn_free_work);
	atomic_inc(&fdev->conn_count);
	ftv_dev_dbg(fdev->dev, "connection %u:%u created\n",
		    ntohs(tuple->local_port), ntohs(tuple->remote_port));
	return conn;

free_dst:
	dst_cache_destroy(&conn->dst_cache);
free_conn:
	kfree(conn);
	return NULL;
}

/**
 * ftv_conn_free - free a connection that was never published
 * @conn: a connection in state NEW; its keys are zeroed with it
 *
 * May sleep.
 */
void ftv_conn_free(struct ftv_conn *conn)
{
	WARN_ON_ONCE(READ_ONCE(conn->state) != FTV_CONN_NEW);
	conn_release(conn);
}

/* The session takes no more joins once its opener is no longer live:
 * its tokens leave the device's table now, a grace period before the
 * session can be freed.
 */
static void stop_joins_locked(struct ftv_conn *conn)
{
	struct ftv_session *s = conn->session;

	lockdep_assert_held(&conn->device->conn_lock);
	if (conn->join_index)
		return;
	ftv_join_window_stop(&s->join);
	s->opener = NULL;
}

static void kill_locked(struct ftv_conn *conn);

/* No new data on @conn: it opens what is in flight, then lingers. A peer
 * has at most FTV_PEER_RETIRED_MAX connections retired or lingering at
 * once (one that opens joins and gives them up as fast as it may would
 * otherwise pin thousands): past that, the one that retired first goes
 * now, and what still comes on it goes to the host, which answers the
 * peer with a RST. It has had the longest to see its last segments.
 */
static void retire_locked(struct ftv_conn *conn, unsigned long keys_until,
			  unsigned long linger_until)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_peer *peer = conn->peer;

	lockdep_assert_held(&fdev->conn_lock);
	/* A join that never came up carried nothing, and its address was
	 * never shown to be the peer's: nothing is opened on it, nor sent.
	 */
	if (conn->state == FTV_CONN_JOIN_RECEIVED) {
		kill_locked(conn);
		return;
	}
	if (peer->conns_retired >= FTV_PEER_RETIRED_MAX) {
		struct ftv_conn *oldest = list_first_entry(&peer->retired,
							   struct ftv_conn,
							   retired_entry);

		ftv_dev_dbg_ratelimited(fdev->dev, "peer %llu: %u connections retired; %u:%u goes early\n",
					peer->internal_id, peer->conns_retired,
					ntohs(oldest->tuple.local_port),
					ntohs(oldest->tuple.remote_port));
		kill_locked(oldest);
	}
	conn->retired_until = keys_until;
	conn->linger_until = linger_until;
	ftv_conn_set_state(conn, FTV_CONN_RETIRED);
	/* Off the joining list, if it was a join coming up. */
	list_move_tail(&conn->gc_entry, &fdev->conn_retired);
}

/**
 * ftv_conn_retire_join_locked - retire a live join for good
 * @conn: the join; its peer is told, or told us
 *
 * Under the device's conn_lock (conn_state.h).
 */
void ftv_conn_retire_join_locked(struct ftv_conn *conn)
{
	unsigned long now = jiffies;

	lockdep_assert_held(&conn->device->conn_lock);
	retire_locked(conn, now + msecs_to_jiffies(FTV_RETIRED_KEYS_MS),
		      now + msecs_to_jiffies(FTV_LINGER_MS));
}

/* The opener @conn retires or dies: so do its session's live joins, on
 * the gc's list ahead of it. Their retirement may kill the peer's oldest
 * retired connection (retire_locked()), never a live one: a walk of the
 * peer's list that kills starts from its head each time
 * (ftv_conn_kill_peer()); the gc's walk of the retired kills only those
 * whose joins retired long before.
 */
static void retire_joins_locked(struct ftv_conn *conn, unsigned long keys_until,
				unsigned long linger_until)
{
	struct ftv_session *s = conn->session;
	struct ftv_conn *join, *tmp;

	lockdep_assert_held(&conn->device->conn_lock);
	if (conn->join_index)
		return;
	/* At most FTV_JOINS_MAX: each leaves the list as it retires. */
	list_for_each_entry_safe(join, tmp, &s->live_joins, join_entry)
		retire_locked(join, keys_until, linger_until);
}

/* Unhash and free after a grace period. */
static void kill_locked(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;

	lockdep_assert_held(&fdev->conn_lock);
	if (conn->state == FTV_CONN_NEW || conn->state == FTV_CONN_DEAD)
		return;
	stop_joins_locked(conn);
	retire_joins_locked(conn,
			    jiffies + msecs_to_jiffies(FTV_RETIRED_KEYS_MS),
			    jiffies + msecs_to_jiffies(FTV_LINGER_MS));
	ftv_conn_set_state(conn, FTV_CONN_DEAD);
	rhashtable_remove_fast(&fdev->conn_table, &conn->hash, conn_params);
	list_del_init(&conn->peer_entry);
	list_del_init(&conn->gc_entry);
	queue_rcu_work(ftv_wq, &conn->free_work);
}

/**
 * ftv_conn_publish_locked - make a new connection findable
 * @conn: a connection in state NEW
 * @state: the state it is published in
 *
 * A connection that has the same tuple (the peer reused a port while the
 * old one lingered) goes: its segments could not be told from the new
 * one's. Under the device's conn_lock (conn_state.h).
 *
 * Return: true if @conn is in the table now, in @state.
 */
bool ftv_conn_publish_locked(struct ftv_conn *conn, enum ftv_conn_state state)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_conn *old;

	lockdep_assert_held(&fdev->conn_lock);
	if (fdev->conns_closed || conn->state != FTV_CONN_NEW)
		return false;
	old = rhashtable_lookup_fast(&fdev->conn_table, &conn->tuple,
				     conn_params);
	if (old) {
		/* A live one may be what its peer points at (->conn,
		 * ->pending), which only the peer's lock may change, and
		 * this caller need not hold it: a join's SYN that takes the
		 * tuple of an opener published a moment before (it was
		 * looked for before the opener was there) would leave the
		 * peer pointing at a freed connection. The newcomer loses.
		 */
		if (state_live(old->state))
			return false;
		kill_locked(old);
	}
	if (rhashtable_insert_fast(&fdev->conn_table, &conn->hash,
				   conn_params))
		return false;
	list_add_tail(&conn->peer_entry, &conn->peer->conns);
	ftv_conn_set_state(conn, state);
	return true;
}

/* A responder's new session expects its first joins' tokens. If they
 * cannot go into the table (no memory), it takes none, and its hello
 * says so: the initiator keeps to one connection.
 */
static void start_joins_locked(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_session *s = conn->session;

	lockdep_assert_held(&fdev->conn_lock);
	if (!ftv_join_window_start(&s->join, &fdev->join_table,
				   &fdev->conn_lock, &s->join_key))
		s->opener = conn;
}

/**
 * ftv_conn_synack - the initiator's SYN was answered
 * @conn: the connection
 * @ack: the SYN-ACK's acknowledgment number
 * @seq: its sequence number
 * @opts: its options
 *
 * Return: true if @conn was waiting for this SYN-ACK and now waits for the
 * response to its initiation, or, if it is a join, is up.
 */
bool ftv_conn_synack(struct ftv_conn *conn, u32 ack, u32 seq,
		     const struct ftv_tcp_options *opts)
{
	struct ftv_device *fdev = conn->device;
	bool ours, joined = false;

	spin_lock_bh(&fdev->conn_lock);
	ours = conn->state == FTV_CONN_SYN_SENT &&
	       ack == (u32)atomic_read(&conn->snd_nxt);
	if (ours) {
		conn->rcv_first = seq + 1;
		ftv_faketcp_rcv_reset(&conn->rcv, seq + 1);
		atomic_set(&conn->snd_una, ack);
		if (opts->has_ts)
			atomic_set(&conn->ts_recent, opts->tsval);
		WRITE_ONCE(conn->peer_mss, opts->mss);
		if (conn->join_index) {
			/* A join needs no key exchange: it is up. A probe's,
			 * where the peer answers joins, waits on the joining
			 * list until that answer opens
			 * (ftv_conn_probe_join_up()): a path that drops a
			 * join's first message, or the answer, shows so. A
			 * join for data does not wait: with small budgets
			 * (rotate 11k behind a freeze) a round trip more
			 * before each successor carries data took a download
			 * from 1.1 to 0.1 Mbit/s.
			 */
			WRITE_ONCE(conn->answer_due, conn->probe_join &&
				   READ_ONCE(conn->session->peer_reads_openings));
			if (!conn->answer_due) {
				list_del_init(&conn->gc_entry);
				WRITE_ONCE(conn->session->joins_lost, 0);
			}
			ftv_conn_set_state(conn, FTV_CONN_ESTABLISHED);
			joined = true;
		} else {
			ftv_conn_set_state(conn, FTV_CONN_HANDSHAKE_SENT);
		}
	}
	spin_unlock_bh(&fdev->conn_lock);
	/* The receive hook (softirq), no lock held. A probe's join is no
	 * flow: it goes again at once.
	 */
	if (joined && !conn->probe_join)
		ftv_event_notify(conn->peer, FTV_EVENT_FLOW_UP);
	return ours;
}

/**
 * ftv_conn_install - start using @conn's session
 * @conn: an initiator whose response authenticated, or a new responder
 *
 * The caller (peer.c) holds the peer's lock and makes @conn the peer's
 * current connection if this succeeds.
 *
 * Return: false if @conn is not in a state to be installed, or the device
 * no longer takes connections.
 */
bool ftv_conn_install(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;
	bool ok;

	lockdep_assert_held(&conn->peer->lock);
	spin_lock_bh(&fdev->conn_lock);
	if (conn->is_initiator) {
		ok = conn->state == FTV_CONN_HANDSHAKE_SENT;
		if (ok)
			ftv_conn_set_state(conn, FTV_CONN_ESTABLISHED);
	} else {
		/* A responder sends nothing before its response: data
		 * overtaking it would reach an initiator that cannot open
		 * it yet.
		 */
		ok = ftv_conn_publish_locked(conn, FTV_CONN_RESPONDING);
		if (ok)
			start_joins_locked(conn);
	}
	if (ok)
		ftv_session_started(conn->session);
	spin_unlock_bh(&fdev->conn_lock);
	return ok;
}

/**
 * ftv_conn_responded - the responder's response went out
 * @conn: the connection; unless something replaced it meanwhile, it
 *	is established now
 */
void ftv_conn_responded(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;

	spin_lock_bh(&fdev->conn_lock);
	if (conn->state == FTV_CONN_RESPONDING)
		ftv_conn_set_state(conn, FTV_CONN_ESTABLISHED);
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
	struct ftv_device *fdev = conn->device;

	unsigned long keys_until = jiffies +
				   msecs_to_jiffies(FTV_RETIRED_KEYS_MS);
	unsigned long linger_until = jiffies + msecs_to_jiffies(FTV_LINGER_MS);

	spin_lock_bh(&fdev->conn_lock);
	if (state_live(conn->state)) {
		stop_joins_locked(conn);
		retire_joins_locked(conn, keys_until, linger_until);
		retire_locked(conn, keys_until, linger_until);
	}
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_peer_joins - the responder's hello says it takes joins
 * @conn: the connection it came on
 *
 * An initiator's session may then be joined: the peer's connect work
 * opens as many joins as its flows setting asks for (at least one with a
 * list of endpoints).
 */
void ftv_conn_peer_joins(struct ftv_conn *conn)
{
	struct ftv_session *s = conn->session;

	if (!conn->is_initiator || conn->join_index ||
	    READ_ONCE(s->peer_takes_joins))
		return;
	WRITE_ONCE(s->peer_takes_joins, true);
	/* A list's pointer is only tested here: the connect work decides
	 * under the peer's lock (ftv_peer_flows_wanted()).
	 */
	if (READ_ONCE(conn->peer->flows) > 1 || READ_ONCE(conn->peer->endpoints))
		ftv_timers_want_connection(conn->peer);
}

/**
 * ftv_conn_kill - free @conn now rather than letting it linger
 * @conn: a published connection already unlinked from its peer
 */
void ftv_conn_kill(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;

	spin_lock_bh(&fdev->conn_lock);
	kill_locked(conn);
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_kill_peer - kill every connection of @peer, whatever its state
 * @peer: a peer whose ->conn and ->pending were cleared under its lock
 */
void ftv_conn_kill_peer(struct ftv_peer *peer)
{
	struct ftv_device *fdev = peer->device;

	spin_lock_bh(&fdev->conn_lock);
	/* Each goes off the list; one may take others with it (an
	 * opener's joins retire, and a retirement may kill the oldest
	 * retired), so the walk starts again from the head each time.
	 */
	while (!list_empty(&peer->conns))
		kill_locked(list_first_entry(&peer->conns, struct ftv_conn,
					     peer_entry));
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_lookup - find the connection a received segment belongs to
 * @fdev: the device
 * @tuple: the segment's tuple, seen from this side: both addresses and
 *	both ports must match
 *
 * Call under rcu_read_lock(). Return: the connection or NULL.
 */
struct ftv_conn *ftv_conn_lookup(struct ftv_device *fdev,
				 const struct ftv_tuple *tuple)
{
	return rhashtable_lookup(&fdev->conn_table, tuple, conn_params);
}

/* An initiator's join @conn got no answer: to its SYN (the responder's
 * window of expected numbers did not move, and one number less of it is
 * left), or to its first message (a path that drops new connections'
 * first messages would have the session open joins all along).
 */
static void joins_lost_locked(struct ftv_conn *conn)
{
	struct ftv_session *s = conn->session;

	lockdep_assert_held(&conn->device->conn_lock);
	if (s->joins_lost >= FTV_JOIN_AHEAD)
		return;
	WRITE_ONCE(s->joins_lost, s->joins_lost + 1);
	if (s->joins_lost == FTV_JOIN_AHEAD)
		ftv_dev_dbg(conn->device->dev,
			    "peer %llu: %u joins lost in a row; none more until the next session\n",
			    conn->peer->internal_id, FTV_JOIN_AHEAD);
}

/* Joins left unanswered that one gc run retires, at most. */
#define FTV_GC_UNANSWERED 16

/*
 * Give up on the joins that did not come up in time. An initiator's
 * connect work then opens others, if its session still wants them. A
 * join whose SYN was answered and whose peer's answer did not come (in
 * @unanswered, at most FTV_GC_UNANSWERED a run; the rest wait for the
 * next) may be up on the peer's side: it is retired, and the caller
 * tells the peer. Return: how many are in @unanswered.
 */
static unsigned int gc_joins_locked(struct ftv_device *fdev,
				    unsigned long now,
				    struct ftv_conn **unanswered)
{
	struct ftv_conn *conn, *tmp;
	unsigned int n = 0;

	lockdep_assert_held(&fdev->conn_lock);
	list_for_each_entry_safe(conn, tmp, &fdev->conn_joining, gc_entry) {
		if (time_before(now, conn->created +
				msecs_to_jiffies(FTV_JOIN_TIMEOUT_MS)))
			continue;
		if (conn->state == FTV_CONN_ESTABLISHED) {
			if (n == FTV_GC_UNANSWERED)
				continue;
			ftv_dev_dbg(fdev->dev, "peer %llu: join %u unanswered, given up\n",
				    conn->peer->internal_id, conn->join_index);
			ftv_conn_retire_join_locked(conn);
			unanswered[n++] = conn;
			joins_lost_locked(conn);
			continue;
		}
		if (conn->is_initiator) {
			joins_lost_locked(conn);
			ftv_timers_want_connection(conn->peer);
		}
		kill_locked(conn);
	}
	return n;
}

/* A retired connection whose keys are due: it lingers from now on. The
 * session's keys go with its opener's; its joins are ahead of it on the
 * list, so they linger by then too.
 */
static void linger_locked(struct ftv_conn *conn)
{
	lockdep_assert_held(&conn->device->conn_lock);
	ftv_conn_set_state(conn, FTV_CONN_LINGER);
	if (conn->join_index)
		return;
	WRITE_ONCE(conn->session->keyed, false);
	queue_rcu_work(ftv_wq, &conn->keys_work);
}

/**
 * ftv_conn_gc - move retired connections along: wipe their keys, then free
 *	those that lingered long enough; give up on joins that never came up
 * @fdev: the device
 *
 * Retired connections are listed in the order they retired, so the walk
 * stops at the first whose keys are still due. The device runs it every
 * second: a join that does not come up is given up within a second of
 * its FTV_JOIN_TIMEOUT_MS.
 */
void ftv_conn_gc(struct ftv_device *fdev)
{
	struct ftv_conn *conn, *tmp, *unanswered[FTV_GC_UNANSWERED];
	unsigned long now = jiffies;
	unsigned int i, n;

	/* Those retired here are told of, outside the lock, before a
	 * grace period lets them go.
	 */
	rcu_read_lock_bh();
	spin_lock_bh(&fdev->conn_lock);
	n = gc_joins_locked(fdev, now, unanswered);
	list_for_each_entry_safe(conn, tmp, &fdev->conn_retired, gc_entry) {
		if (time_before(now, conn->retired_until))
			break;
		if (time_after(now, conn->linger_until))
			kill_locked(conn);
		else if (conn->state == FTV_CONN_RETIRED)
			linger_locked(conn);
	}
	spin_unlock_bh(&fdev->conn_lock);
	for (i = 0; i < n; i++)
		ftv_control_send_join_gone(unanswered[i],
					   unanswered[i]->join_index);
	rcu_read_unlock_bh();
}

/**
 * ftv_conn_reset_routes - forget the outer routes every connection cached
 * @fdev: the device, whose fwmark changed: the segments must take the
 *	route of the new mark from the next one on
 */
void ftv_conn_reset_routes(struct ftv_device *fdev)
{
	struct ftv_peer *peer;
	struct ftv_conn *conn;

	lockdep_assert_held(&fdev->device_update_lock);
	spin_lock_bh(&fdev->conn_lock);
	list_for_each_entry(peer, &fdev->peer_list, peer_list)
		list_for_each_entry(conn, &peer->conns, peer_entry)
			dst_cache_reset(&conn->dst_cache);
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_close_device - publish no connection of @fdev from now on
 * @fdev: a device whose outer namespace is going away, or that is
 *	going away itself
 */
void ftv_conn_close_device(struct ftv_device *fdev)
{
	spin_lock_bh(&fdev->conn_lock);
	fdev->conns_closed = true;
	spin_unlock_bh(&fdev->conn_lock);
}

/**
 * ftv_conn_wait_all - wait until every connection of @fdev is freed
 * @fdev: a closed device whose peers' connections were killed
 */
void ftv_conn_wait_all(struct ftv_device *fdev)
{
	wait_var_event(&fdev->conn_count, !atomic_read(&fdev->conn_count));
}

/**
 * ftv_conn_acked - the peer acknowledged our bytes up to @ack
 * @conn: the connection
 * @ack: acknowledgment number of an authenticated segment
 *
 * Moves snd_una forward, never past what was sent.
 *
 * Return: true if it moved.
 */
bool ftv_conn_acked(struct ftv_conn *conn, u32 ack)
{
	int una = atomic_read(&conn->snd_una);

	while (after(ack, (u32)una) &&
	       !after(ack, (u32)atomic_read(&conn->snd_nxt)))
		if (atomic_try_cmpxchg(&conn->snd_una, &una, ack))
			return true;
	return false;
}

/**
 * ftv_conn_sent_seq - whether @seq is a byte we sent and that is not
 *	acknowledged yet, as an ICMP error about our segment must quote
 * @conn: the connection
 * @seq: the quoted sequence number
 *
 * Return: true if snd_una <= @seq <= snd_nxt.
 */
bool ftv_conn_sent_seq(const struct ftv_conn *conn, u32 seq)
{
	u32 una = atomic_read(&conn->snd_una);

	return seq - una <= (u32)atomic_read(&conn->snd_nxt) - una;
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

/**
 * ftv_conn_table_init - set up a device's connection table
 * @fdev: the device
 *
 * Return: 0 or a negative errno.
 */
int ftv_conn_table_init(struct ftv_device *fdev)
{
	int ret;

	spin_lock_init(&fdev->conn_lock);
	INIT_LIST_HEAD(&fdev->conn_retired);
	INIT_LIST_HEAD(&fdev->conn_joining);
	atomic_set(&fdev->conn_count, 0);
	ret = rhashtable_init(&fdev->conn_table, &conn_params);
	if (ret)
		return ret;
	ret = ftv_join_table_init(&fdev->join_table);
	if (ret)
		rhashtable_destroy(&fdev->conn_table);
	return ret;
}

/**
 * ftv_conn_table_uninit - free it; every connection must be gone
 * @fdev: the device
 */
void ftv_conn_table_uninit(struct ftv_device *fdev)
{
	WARN_ON(atomic_read(&fdev->conn_count));
	ftv_join_table_uninit(&fdev->join_table);
	rhashtable_destroy(&fdev->conn_table);
}
