// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: one fake TCP connection per session, found by its outer
 * 4-tuple in the device's connection table. When a newer connection
 * replaces it, it lingers for a while so that segments still in flight are
 * swallowed quietly instead of reaching the host stack (which would answer
 * them with RSTs).
 *
 * This file owns a connection's life. Every change of ->state happens
 * here, under the device's conn_lock (set_state() asserts it), which also
 * guards the connection table, each peer's list of its connections and the
 * device's list of retired ones:
 *
 *  from              to              when                         caller
 *  NEW               SYN_SENT        an initiator is published     ftv_conn_open()
 *  SYN_SENT          HANDSHAKE_SENT  its SYN-ACK arrived           handshake.c
 *  HANDSHAKE_SENT    ESTABLISHED     the response authenticated    peer.c
 *  NEW               RESPONDING      an initiation authenticated   peer.c
 *  RESPONDING        ESTABLISHED     the response went out         listen.c
 *  NEW               SYN_SENT        an initiator's join is        connect
 *                                    published                     work
 *  SYN_SENT          ESTABLISHED     a join's SYN-ACK arrived      handshake.c
 *  NEW               JOIN_RECEIVED   a SYN's join token was        listen.c
 *                                    expected, within the peer's
 *                                    rate and the session's cap
 *  JOIN_RECEIVED     ESTABLISHED     a message sealed for the      open.c
 *                                    join opened on it, and
 *                                    acknowledged our SYN-ACK
 *  SYN_SENT to
 *  ESTABLISHED       RETIRED         replaced, or the attempt      peer.c,
 *                                    was given up; a join, when    timers.c
 *                                    its session's opener retires
 *                                    or dies
 *  ESTABLISHED       RETIRED         a probe's join, once the      open.c,
 *                                    peer's first message on it    handshake.c
 *                                    opened (or its SYN was
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
#include "log.h"
#include "device.h"
#include "flow.h"
#include "netlink.h"
#include "peer.h"
#include "segment.h"
#include "token.h"
#include "send.h"
#include "timers.h"

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

/*
 * Joins one responder's session takes at once. Debug builds let a test
 * lower it below what an initiator may ask for (flows 8), to see the
 * refusal.
 */
#ifdef DEBUG
static unsigned int joins_max = FTV_JOINS_MAX;
module_param(joins_max, uint, 0644);
MODULE_PARM_DESC(joins_max, "Joins one session takes at once");
#else
static const unsigned int joins_max = FTV_JOINS_MAX;
#endif

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

/* The one writer of ->state; it also counts the session's live joins
 * and keeps their list, keeps the list of those established, with the
 * opener, and counts the peer's connections that retired and are not
 * yet dead.
 */
static void set_state(struct ftv_conn *conn, enum ftv_conn_state state)
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
	set_state(conn, FTV_CONN_RETIRED);
	/* Off the joining list, if it was a join coming up. */
	list_move_tail(&conn->gc_entry, &fdev->conn_retired);
}

/* Retire @conn, a live join, for good: its peer is told or told us. */
static void retire_join_locked(struct ftv_conn *conn)
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
	set_state(conn, FTV_CONN_DEAD);
	rhashtable_remove_fast(&fdev->conn_table, &conn->hash, conn_params);
	list_del_init(&conn->peer_entry);
	list_del_init(&conn->gc_entry);
	queue_rcu_work(ftv_wq, &conn->free_work);
}

/* Make @conn findable, in @state. A connection that has the same tuple
 * (the peer reused a port while the old one lingered) goes: its segments
 * could not be told from the new one's.
 */
static bool publish_locked(struct ftv_conn *conn, enum ftv_conn_state state)
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
	set_state(conn, state);
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
			set_state(conn, FTV_CONN_ESTABLISHED);
			joined = true;
		} else {
			set_state(conn, FTV_CONN_HANDSHAKE_SENT);
		}
	}
	spin_unlock_bh(&fdev->conn_lock);
	/* The receive hook (softirq), no lock held. A probe's join is no
	 * flow: it goes again at once.
	 */
	if (joined && !conn->probe_join)
		ftv_netlink_notify(conn->peer, FTV_EVENT_FLOW_UP);
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
			set_state(conn, FTV_CONN_ESTABLISHED);
	} else {
		/* A responder sends nothing before its response: data
		 * overtaking it would reach an initiator that cannot open
		 * it yet.
		 */
		ok = publish_locked(conn, FTV_CONN_RESPONDING);
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
		set_state(conn, FTV_CONN_ESTABLISHED);
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
 * ftv_conn_flows_up - how many connections carry @conn's session now
 * @conn: a peer's current connection, under RCU
 *
 * Return: 0 unless @conn is established; then 1 and its session's joins
 * that are up.
 */
unsigned int ftv_conn_flows_up(const struct ftv_conn *conn)
{
	if (READ_ONCE(conn->state) != FTV_CONN_ESTABLISHED)
		return 0;
	return 1 + READ_ONCE(conn->session->joins_up);
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
			retire_join_locked(conn);
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
	set_state(conn, FTV_CONN_LINGER);
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
		ftv_send_join_gone(unanswered[i], unanswered[i]->join_index);
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
}

static int bind_port(struct socket *sock, const struct ftv_tuple *tuple,
		     u16 port)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = tuple->local,
		.sin6_port = htons(port),
	};
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = tuple->local.s6_addr32[0],
		.sin_port = htons(port),
	};

	if (tuple->family == AF_INET)
		return kernel_bind(sock, (struct sockaddr *)&sin, sizeof(sin));
	return kernel_bind(sock, (struct sockaddr *)&sin6, sizeof(sin6));
}

/*
 * Take a local port for @tuple as the host would for a connect(): a random
 * even port of the namespace's ephemeral range, held by a kernel socket
 * bound to it for as long as the connection lives. The host then never
 * hands the port to a socket of its own, and a port a socket of its own
 * already has is never ours.
 */
static struct socket *reserve_port(struct ftv_tuple *tuple, struct net *net)
{
	int low, high, tries, ret;
	struct socket *sock;
	u32 range, port;

	ret = sock_create_kern(net, tuple->family, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (ret)
		return ERR_PTR(ret);
	inet_get_local_port_range(net, &low, &high);
	range = max(high - low + 1, 2) & ~1;
	ret = -EADDRINUSE;
	for (tries = 0; tries < 32 && ret == -EADDRINUSE; tries++) {
		port = (low + (get_random_u32() % range)) & ~1U;
		if (port < low || port > high ||
		    inet_is_local_reserved_port(net, port))
			continue;
		ret = bind_port(sock, tuple, port);
	}
	if (ret) {
		sock_release(sock);
		return ERR_PTR(ret);
	}
	tuple->local_port = htons(port);
	return sock;
}

/*
 * The creating namespace, with a reference, unless it is going away: its
 * pre_exit closes the device and waits for our connections, which it can
 * only do for those that exist by then.
 */
static struct net *get_creating_net(struct ftv_device *fdev)
{
	struct net *net;

	rcu_read_lock();
	net = READ_ONCE(fdev->creating_net);
	if (net)
		net = maybe_get_net(net);
	rcu_read_unlock();
	return net;
}

/* The SYN's token, our clocks, and the initiation, ready to go. */
static int prepare_handshake(struct ftv_conn *conn,
			     const struct ftv_identity *identity)
{
	struct ftv_session *s = conn->session;
	u8 msg[FTV_INIT_MAX];
	struct ftv_peer *peer = conn->peer;
	u8 psk[FTV_KEY_SIZE];
	unsigned int pad;
	u32 isn;
	int ret;

	/* The SYN's ISN and timestamp carry the token the responder
	 * checks; our timestamp clock runs on from the SYN's.
	 */
	spin_lock_bh(&peer->lock);
	memcpy(psk, peer->preshared_key, sizeof(psk));
	spin_unlock_bh(&peer->lock);
	ftv_token_make(peer->public_key, psk, &isn, &conn->syn_tsval);
	memzero_explicit(psk, sizeof(psk));
	atomic_set(&conn->snd_nxt, isn + 1);
	atomic_set(&conn->snd_una, isn);
	atomic_set(&conn->ip_id, get_random_u32());
	conn->ts_offset = conn->syn_tsval - jiffies_to_msecs(jiffies);
	ret = ftv_session_prepare_keys(s);
	if (ret)
		return ret;
	ret = ftv_noise_create_init(peer, identity, &s->handshake,
				    (struct ftv_msg_init *)msg);
	if (ret)
		return ret;
	pad = ftv_noise_pad(msg + sizeof(struct ftv_msg_init));
	if (READ_ONCE(peer->device->shape)) {
		s->init_len = ftv_shape_encode(msg, sizeof(struct ftv_msg_init) +
					       pad, s->init_msg);
	} else {
		s->init_len = sizeof(struct ftv_msg_init) + pad;
		memcpy(s->init_msg, msg, s->init_len);
	}
	memzero_explicit(msg, sizeof(msg));
	return 0;
}

/*
 * An initiator's connection for @tuple, from a port of its own (which
 * fills in @tuple's local port), opening a session or joining @session.
 * Return: it, in state NEW, or NULL.
 */
static struct ftv_conn *create_initiator(struct ftv_peer *peer,
					 struct ftv_tuple *tuple,
					 struct net *net,
					 struct ftv_session *session)
{
	struct ftv_conn *conn;
	struct socket *port;

	port = reserve_port(tuple, net);
	if (IS_ERR(port))
		return NULL;
	conn = ftv_conn_create(peer->device, peer, tuple, session, GFP_KERNEL);
	if (!conn) {
		sock_release(port);
		return NULL;
	}
	conn->port = port;
	conn->is_initiator = true;
	return conn;
}

/* Everything about a new outgoing connection that may sleep. */
static struct ftv_conn *prepare_initiator(struct ftv_peer *peer,
					  const struct ftv_endpoint *ep)
{
	struct ftv_device *fdev = peer->device;
	struct ftv_identity identity;
	struct ftv_conn *conn = NULL;
	struct ftv_tuple tuple;
	struct net *net;

	if (!ftv_device_copy_identity(fdev, &identity))
		return NULL;
	net = get_creating_net(fdev);
	if (!net)
		goto out;
	tuple_from_endpoint(&tuple, ep);
	if (ftv_send_pick_source(fdev, net, &tuple))
		goto out;
	conn = create_initiator(peer, &tuple, net, NULL);
	if (conn && prepare_handshake(conn, &identity)) {
		ftv_conn_free(conn);
		conn = NULL;
	}
out:
	if (net)
		put_net(net);
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
	if (!conn || READ_ONCE(peer->path_dead) || READ_ONCE(conn->stalled))
		return true;
	next = atomic64_read(&conn->session->send_counter);
	return ftv_session_rekey_due(conn->session, next) ||
	       ftv_session_expired(conn->session, next);
}

/* Make @conn the peer's opening connection, unless that is no longer
 * wanted. Return: true if it is.
 */
static bool publish_initiator(struct ftv_peer *peer, struct ftv_conn *conn)
{
	struct ftv_device *fdev = peer->device;
	bool ok;

	spin_lock_bh(&peer->lock);
	ok = !peer->is_dead && !peer->pending && conn_replaceable(peer);
	if (ok) {
		spin_lock(&fdev->conn_lock);
		ok = publish_locked(conn, FTV_CONN_SYN_SENT);
		spin_unlock(&fdev->conn_lock);
	}
	if (ok)
		peer->pending = conn;
	spin_unlock_bh(&peer->lock);
	return ok;
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
		/* No route, port or memory: try again later if it matters. */
		if (READ_ONCE(peer->path_dead) ||
		    !skb_queue_empty_lockless(&peer->staged))
			ftv_timers_connect_started(peer);
		return;
	}

	/* Once published, @conn is only used under RCU: it could be
	 * retired and freed as soon as the peer's lock is dropped.
	 */
	rcu_read_lock_bh();
	busy = !publish_initiator(peer, conn);
	if (!busy)
		ftv_send_syn(conn);
	rcu_read_unlock_bh();
	if (busy) {
		ftv_conn_free(conn);
		return;
	}
	ftv_timers_connect_started(peer);
}

/* The session a window belongs to. */
static struct ftv_session *window_session(struct ftv_join_window *w)
{
	return container_of(w, struct ftv_session, join);
}

/* A peer's joins: FTV_JOIN_RATE a second, FTV_JOIN_BURST at once past
 * that (the generic cell rate algorithm: @tat is when the peer's budget
 * is whole again). Return: whether one more may open now.
 */
static bool join_rate_take(u64 *tat, unsigned int burst)
{
	u64 now = ktime_get_ns(), per = NSEC_PER_SEC / FTV_JOIN_RATE;
	u64 from = max(*tat, now);

	if (from - now > (u64)(burst - 1) * per)
		return false;
	*tat = from + per;
	return true;
}

#ifdef DEBUG
/*
 * Debug builds let a test hold a join's SYN between finding its token
 * and taking it until the handshake worker has installed a session, or
 * this long at most, so that what happens in between (an opener
 * published on the same tuple, the session's window stopped) happens
 * however slow the machine: under emulation a handshake takes longer
 * than any fixed hold a test could pick.
 */
static unsigned int join_take_delay_ms;
module_param(join_take_delay_ms, uint, 0644);
MODULE_PARM_DESC(join_take_delay_ms,
		 "Hold a join's SYN until a session is installed, at most this long");

static atomic_t join_held = ATOMIC_INIT(0);
static atomic_t sessions_installed = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(join_held_wait);

static void debug_join_take_delay(void)
{
	unsigned int ms = min(READ_ONCE(join_take_delay_ms), 5000U);
	int before = atomic_read(&sessions_installed);
	unsigned int waited;

	if (!ms)
		return;
	atomic_inc(&join_held);
	wake_up_all(&join_held_wait);
	for (waited = 0; waited < ms; waited++) {
		if (atomic_read(&sessions_installed) != before)
			break;
		mdelay(1);
	}
	atomic_dec(&join_held);
}

/**
 * ftv_conn_debug_join_wait - wait for a join's SYN to be held
 *	(debug builds: join_take_delay_ms)
 * @ms: the longest wait
 *
 * Woken by the holder itself, not polled: while it holds the SYN, bottom
 * halves are off on its CPU, and a sleeper's timer that went there (an
 * idle CPU's timers do) would only fire once the hold is over.
 *
 * Return: true if one is held.
 */
bool ftv_conn_debug_join_wait(unsigned int ms)
{
	return wait_event_timeout(join_held_wait, atomic_read(&join_held),
				  msecs_to_jiffies(ms));
}

/**
 * ftv_conn_debug_installed - the handshake worker installed a session
 *	(debug builds): a held join's SYN goes on
 */
void ftv_conn_debug_installed(void)
{
	atomic_inc(&sessions_installed);
}
#else
static inline void debug_join_take_delay(void)
{
}
#endif

/* A responder's join of @s, for the SYN @seg, published and on the
 * joining list; or NULL.
 */
static struct ftv_conn *join_create_locked(struct ftv_device *fdev,
					   struct ftv_session *s,
					   const struct ftv_segment *seg,
					   u32 index)
{
	struct ftv_conn *conn, *opener = s->opener;
	u32 isn = get_random_u32();

	lockdep_assert_held(&fdev->conn_lock);
	if (!opener)
		return NULL;
	if (s->joins >= READ_ONCE(joins_max)) {
		ftv_drops_inc(&opener->peer->drops, FTV_DROPS_A_FLOWS_REFUSED);
		return NULL;
	}
	conn = ftv_conn_create(fdev, opener->peer, &seg->tuple, s, GFP_ATOMIC);
	if (!conn)
		return NULL;
	conn->join_index = index;
	conn->opening = true;
	conn->shape_opening = READ_ONCE(fdev->shape);
	conn->rcv_first = seg->seq + 1;
	/* Our SYN-ACK's ISN is unacknowledged until the peer's first
	 * message acknowledges it from the SYN's address
	 * (ftv_conn_join_up()).
	 */
	atomic_set(&conn->snd_nxt, isn + 1);
	atomic_set(&conn->snd_una, isn);
	ftv_faketcp_rcv_reset(&conn->rcv, seg->seq + 1);
	atomic_set(&conn->ts_recent, seg->opts.tsval);
	atomic_set(&conn->ip_id, get_random_u32());
	conn->ts_offset = get_random_u32();
	conn->peer_mss = seg->opts.mss;
	if (!publish_locked(conn, FTV_CONN_JOIN_RECEIVED)) {
		/* Freeing puts the session, which may sleep. */
		queue_rcu_work(ftv_wq, &conn->free_work);
		return NULL;
	}
	list_add_tail(&conn->gc_entry, &fdev->conn_joining);
	return conn;
}

/* Take the token @e holds, if it is still @token and the peer of its
 * session may open a join now; then the join. Return: it, or NULL.
 */
static struct ftv_conn *join_take_locked(struct ftv_device *fdev,
					 struct ftv_join_entry *e, u64 token,
					 const struct ftv_segment *seg)
{
	struct ftv_join_window *w = e->window;
	enum ftv_join_result taken;
	struct ftv_session *s;
	u32 index;

	lockdep_assert_held(&fdev->conn_lock);
	taken = ftv_join_check(e, token);
	if (taken == FTV_JOIN_REPLAYED)
		ftv_drops_inc(&fdev->drops, FTV_DROPS_A_JOIN_REPLAYED);
	if (taken != FTV_JOIN_OK)
		return NULL;
	/* Expected means live, and a live window's session has its opener.
	 * Over the peer's rate, the token stays where it was: a refused SYN
	 * costs no slide of the window.
	 */
	s = window_session(w);
	if (!join_rate_take(&s->opener->peer->join_tat,
			    2 * FTV_JOIN_BURST)) {
		ftv_drops_inc(&s->opener->peer->drops,
			      FTV_DROPS_A_RATELIMITED);
		return NULL;
	}
	if (ftv_join_take(e, token, &index) != FTV_JOIN_OK)
		return NULL;
	return join_create_locked(fdev, s, seg, index);
}

/**
 * ftv_conn_join_take - take a SYN that joins a session, and answer it
 * @fdev: the device
 * @seg: a SYN to the listen port that no connection has
 *
 * Call under rcu_read_lock(). The token must still be expected when the
 * join is made, under the lock; the join is refused past its session's
 * cap (FTV_JOINS_MAX, counted as flows_refused) and past its peer's rate
 * (FTV_JOIN_RATE a second, counted as ratelimited), or without memory.
 * The new connection opens nothing until a sealed message for it opens
 * on it, acknowledging the SYN-ACK (ftv_conn_join_up()).
 *
 * Return: true if the SYN was taken and answered; false leaves it to the
 * host, which answers it as it answers any SYN: whatever is not a join
 * must look the same to a prober, a token that a join took before (a
 * replay: counted as join_replayed) and one that was expected when the
 * SYN came but no longer is when it is taken among them.
 */
bool ftv_conn_join_take(struct ftv_device *fdev, const struct ftv_segment *seg)
{
	struct ftv_conn *conn = NULL;
	struct ftv_join_entry *e;
	u64 token;

	if (!seg->opts.has_ts)
		return false;
	token = ftv_join_syn_token(seg->seq, seg->opts.tsval);
	e = ftv_join_lookup(&fdev->join_table, token);
	if (!e)
		return false;
	debug_join_take_delay();
	/* The window is live while its opener is, which holds the session:
	 * found under RCU, its memory is there; under the lock, the slot is
	 * checked again.
	 */
	spin_lock_bh(&fdev->conn_lock);
	conn = join_take_locked(fdev, e, token, seg);
	spin_unlock_bh(&fdev->conn_lock);
	if (!conn)
		return false;
	ftv_send_join_synack(conn);
	return true;
}

/**
 * ftv_conn_join_up - a sealed message of its own opened on a join
 * @conn: a responder's join
 * @flags: the message's TCP flags
 * @ack: its acknowledgment number
 *
 * It is up if the message acknowledges our SYN-ACK, which only whoever
 * receives at the SYN's address has seen: a peer that gave another's
 * address in its SYN gets nothing sent there but that SYN-ACK. Then it
 * answers with its own first message (ftv_send_opening()).
 */
void ftv_conn_join_up(struct ftv_conn *conn, u8 flags, u32 ack)
{
	struct ftv_device *fdev = conn->device;
	bool up;

	spin_lock_bh(&fdev->conn_lock);
	up = conn->state == FTV_CONN_JOIN_RECEIVED && (flags & TCPHDR_ACK) &&
	     ack == (u32)atomic_read(&conn->snd_nxt);
	if (up) {
		atomic_set(&conn->snd_una, ack);
		list_del_init(&conn->gc_entry);
		set_state(conn, FTV_CONN_ESTABLISHED);
	}
	spin_unlock_bh(&fdev->conn_lock);
	if (!up)
		return;
	/* The answer: the initiator learns that the join gets through both
	 * ways, and a censor on the path judges the first message it sees
	 * this way, which goes shaped if the device shapes.
	 */
	ftv_send_opening(conn);
	ftv_conn_join_opened(conn);
	/* The serial receive step: bottom halves off, and only the serial
	 * queue's drain_lock held, which is only ever tried, so nothing
	 * waits for it under the peer's lock.
	 */
	ftv_netlink_notify(conn->peer, FTV_EVENT_FLOW_UP);
}

/**
 * ftv_conn_join_opened - a join's first message is queued: others may
 *	follow it
 * @conn: a join, established
 */
void ftv_conn_join_opened(struct ftv_conn *conn)
{
	/* After the opening's job, in the session's transmit queue. */
	smp_store_release(&conn->opening, false);
}

/**
 * ftv_conn_join_gone - the initiator gave up a join of the session
 * @conn: the responder's connection the news came on
 * @index: the join's number
 *
 * The responder retires its side of it, so that the join no longer counts
 * against the session's FTV_JOINS_MAX and gets no more data.
 */
void ftv_conn_join_gone(struct ftv_conn *conn, u32 index)
{
	struct ftv_device *fdev = conn->device;
	struct ftv_conn *join;

	if (conn->is_initiator || !index)
		return;
	spin_lock_bh(&fdev->conn_lock);
	/* At most FTV_JOINS_MAX: the session's live joins. */
	list_for_each_entry(join, &conn->session->live_joins, join_entry) {
		if (join->join_index == index) {
			retire_join_locked(join);
			break;
		}
	}
	spin_unlock_bh(&fdev->conn_lock);
}

/* Give up an initiator's connection that its flag (stalled or spent) now
 * keeps out of the sender's choice: a join is retired and the responder
 * told, and the connect work opens what replaces it; the opener carries
 * the session and stays. Listeners hear @event once it is counted.
 */
static void give_up(struct ftv_conn *conn, u8 event)
{
	struct ftv_device *fdev = conn->device;
	bool retired = false;

	spin_lock_bh(&fdev->conn_lock);
	if (conn->join_index && conn->state == FTV_CONN_ESTABLISHED) {
		retire_join_locked(conn);
		retired = true;
	}
	spin_unlock_bh(&fdev->conn_lock);
	atomic64_inc(&conn->peer->rotations);
	if (retired)
		ftv_send_join_gone(conn, conn->join_index);
	ftv_timers_want_connection(conn->peer);
	/* The session's flow timer (softirq, under RCU), no lock held. */
	ftv_netlink_notify(conn->peer, event);
}

/**
 * ftv_conn_stalled - an initiator's connection stopped being answered
 *	while others of its session were (flow.c)
 * @conn: the connection, under RCU
 *
 * Nothing new goes on it, and it is given up. The opener cannot be
 * replaced without a key exchange: the connect work makes a new session.
 */
void ftv_conn_stalled(struct ftv_conn *conn)
{
	WRITE_ONCE(conn->stalled, true);
	give_up(conn, FTV_EVENT_FLOW_STALLED);
}

/**
 * ftv_conn_spent - an initiator's connection carried its budget towards
 *	us (flow.c)
 * @conn: the connection, under RCU
 *
 * As a stalled one, but nothing is wrong with it: it must not carry more.
 */
void ftv_conn_spent(struct ftv_conn *conn)
{
	WRITE_ONCE(conn->spent, true);
	give_up(conn, FTV_EVENT_FLOW_ROTATED);
}

/* Whether the peer's current session wants one more join. */
static bool join_wanted(struct ftv_peer *peer, struct ftv_conn *opener)
{
	struct ftv_session *s = opener->session;

	lockdep_assert_held(&peer->lock);
	return !peer->is_dead && opener->is_initiator &&
	       READ_ONCE(opener->state) == FTV_CONN_ESTABLISHED &&
	       READ_ONCE(s->peer_takes_joins) &&
	       READ_ONCE(s->joins) < FTV_JOINS_MAX &&
	       READ_ONCE(s->joins_lost) < FTV_JOIN_AHEAD &&
	       READ_ONCE(s->joins) + 1 <
	       ftv_peer_flows_wanted(peer) + ftv_flow_unusable(s);
}

/* The session of the peer's current connection, with a reference, if it
 * wants one more join; its number and token, and the opener's tuple.
 */
static struct ftv_session *join_reserve(struct ftv_peer *peer, u32 *index,
					u64 *token, struct ftv_tuple *tuple)
{
	struct ftv_session *s = NULL;
	struct ftv_conn *opener;

	spin_lock_bh(&peer->lock);
	opener = rcu_dereference_protected(peer->conn,
					   lockdep_is_held(&peer->lock));
	if (opener && join_wanted(peer, opener)) {
		/* No faster than the responder takes them; the session's
		 * tick asks again (ftv_flow_check()).
		 */
		if (!join_rate_take(&peer->join_open_tat, FTV_JOIN_BURST)) {
			WRITE_ONCE(opener->session->joins_deferred, true);
			ftv_flow_watch(opener->session);
		} else {
			s = ftv_session_get(opener->session);
			*index = ++s->join_next;
			*token = ftv_join_token(&s->join_key, *index);
			*tuple = opener->tuple;
		}
	}
	spin_unlock_bh(&peer->lock);
	return s;
}

/*
 * Whether a probe may open a join of the session @opener carries: one
 * more than the session wants, so long as the responder takes it.
 * Return: 0 or the reason why not.
 */
static int probe_join_allowed(struct ftv_peer *peer, struct ftv_conn *opener)
{
	lockdep_assert_held(&peer->lock);
	if (peer->is_dead || !opener ||
	    READ_ONCE(opener->state) != FTV_CONN_ESTABLISHED)
		return -ENOTCONN;
	if (!opener->is_initiator ||
	    !READ_ONCE(opener->session->peer_takes_joins))
		return -EOPNOTSUPP;
	if (READ_ONCE(opener->session->joins) >= FTV_JOINS_MAX ||
	    READ_ONCE(opener->session->joins_lost) >= FTV_JOIN_AHEAD)
		return -EBUSY;
	return 0;
}

/* @tuple for the peer's endpoint numbered @i: of its list, else its one
 * endpoint. The opener's own, local address and all, when it goes there.
 */
static int probe_join_tuple(struct ftv_peer *peer, struct ftv_conn *opener,
			    u32 i, struct ftv_tuple *tuple)
{
	const struct ftv_endpoints *list = peer->endpoints;
	const struct ftv_endpoint *ep;

	lockdep_assert_held(&peer->lock);
	if (list && i < list->count)
		ep = &list->ep[i];
	else if (!list && !i && peer->endpoint_configured)
		ep = &peer->endpoint;
	else
		return -ERANGE;
	if (ftv_endpoint_is_tuple(ep, &opener->tuple))
		*tuple = opener->tuple;
	else
		tuple_from_endpoint(tuple, ep);
	return 0;
}

/* As join_reserve(), for a probe's join to the endpoint numbered @i:
 * the session, or an ERR_PTR.
 */
static struct ftv_session *probe_join_reserve(struct ftv_peer *peer, u32 i,
					      u32 *index, u64 *token,
					      struct ftv_tuple *tuple)
{
	struct ftv_session *s;
	struct ftv_conn *opener;
	int ret;

	spin_lock_bh(&peer->lock);
	opener = rcu_dereference_protected(peer->conn,
					   lockdep_is_held(&peer->lock));
	ret = probe_join_allowed(peer, opener);
	if (!ret)
		ret = probe_join_tuple(peer, opener, i, tuple);
	/* Last: a join refused for another reason costs no rate. */
	if (!ret && !join_rate_take(&peer->join_open_tat, FTV_JOIN_BURST))
		ret = -EAGAIN;
	if (ret) {
		spin_unlock_bh(&peer->lock);
		return ERR_PTR(ret);
	}
	s = ftv_session_get(opener->session);
	*index = ++s->join_next;
	*token = ftv_join_token(&s->join_key, *index);
	spin_unlock_bh(&peer->lock);
	return s;
}

/* Make the join @conn findable, if its session still wants it (or, a
 * probe's, still may open it).
 */
static bool publish_join(struct ftv_peer *peer, struct ftv_conn *conn,
			 bool probe)
{
	struct ftv_device *fdev = peer->device;
	struct ftv_conn *opener;
	bool ok;

	spin_lock_bh(&peer->lock);
	opener = rcu_dereference_protected(peer->conn,
					   lockdep_is_held(&peer->lock));
	ok = opener && opener->session == conn->session &&
	     (probe ? !probe_join_allowed(peer, opener) :
		      join_wanted(peer, opener));
	if (ok) {
		spin_lock(&fdev->conn_lock);
		ok = publish_locked(conn, FTV_CONN_SYN_SENT);
		if (ok)
			list_add_tail(&conn->gc_entry, &fdev->conn_joining);
		spin_unlock(&fdev->conn_lock);
	}
	spin_unlock_bh(&peer->lock);
	return ok;
}

/*
 * An initiator's join of @s numbered @index, to @tuple (whose local
 * address is picked if it has none), its SYN ready to go; or NULL. May
 * sleep.
 */
static struct ftv_conn *join_create(struct ftv_peer *peer,
				    struct ftv_session *s,
				    struct ftv_tuple *tuple, u32 index,
				    u64 token, bool probe)
{
	struct ftv_conn *conn = NULL;
	struct net *net;

	net = get_creating_net(peer->device);
	if (!net)
		return NULL;
	if (ipv6_addr_any(&tuple->local) &&
	    ftv_send_pick_source(peer->device, net, tuple))
		goto out;
	conn = create_initiator(peer, tuple, net, s);
	if (!conn)
		goto out;
	conn->join_index = index;
	conn->probe_join = probe;
	conn->spent = probe;
	conn->opening = true;
	conn->shape_opening = READ_ONCE(peer->device->shape);
	/* The token is the SYN's ISN and timestamp, as an opener's is. */
	atomic_set(&conn->snd_nxt, lower_32_bits(token) + 1);
	atomic_set(&conn->snd_una, lower_32_bits(token));
	conn->syn_tsval = upper_32_bits(token);
	conn->ts_offset = conn->syn_tsval - jiffies_to_msecs(jiffies);
	atomic_set(&conn->ip_id, get_random_u32());
out:
	put_net(net);
	return conn;
}

#ifdef DEBUG
/*
 * Debug builds let a test make this end a peer that misbehaves, for the
 * other end to be tested against. join_skip_synack: a join does not wait
 * for its SYN-ACK, it is up as its SYN goes, with a made-up
 * acknowledgment, and its first message follows (a peer that put
 * another's address in its SYN, and would have the responder send there).
 * join_flood: each connect work of a peer whose flows setting is above 1
 * also sends this many join SYNs, each from a port of no connection, and
 * gives each of them up with a JOIN_GONE, then runs again 20 ms later (a
 * peer that would pin joins on the responder: at 2, twice the rate the
 * responder takes them, so that it takes all it may and refuses the
 * rest, and the numbers it refuses never fall out of its window).
 */
static bool join_skip_synack;
module_param(join_skip_synack, bool, 0644);
MODULE_PARM_DESC(join_skip_synack,
		 "Joins take themselves for up as their SYN goes");

static unsigned int join_flood;
module_param(join_flood, uint, 0644);
MODULE_PARM_DESC(join_flood,
		 "Join SYNs and JOIN_GONEs per connect work, peers with flows > 1");

static void debug_join_up_unanswered(struct ftv_conn *conn)
{
	struct ftv_tcp_options opts = { };

	if (!READ_ONCE(join_skip_synack) ||
	    !ftv_conn_synack(conn, atomic_read(&conn->snd_nxt),
			     get_random_u32(), &opts))
		return;
	ftv_send_opening(conn);
	ftv_conn_join_opened(conn);
}

/* One join SYN of @s, to @tuple from a port of no connection, and its
 * JOIN_GONE on @opener.
 */
static void debug_join_flood_one(struct ftv_peer *peer, struct ftv_conn *opener,
				 struct ftv_tuple tuple)
{
	struct ftv_tcp_params params = {
		.flags = TCPHDR_SYN,
		.window = 64240,
		.mss = tuple.family == AF_INET ? 1460 : 1440,
	};
	struct ftv_session *s = opener->session;
	u64 token;
	u32 index;

	spin_lock_bh(&peer->lock);
	index = ++s->join_next;
	token = ftv_join_token(&s->join_key, index);
	spin_unlock_bh(&peer->lock);
	tuple.local_port = htons(32768 + get_random_u32_below(28000));
	params.seq = lower_32_bits(token);
	params.tsval = upper_32_bits(token);
	ftv_send_synack(peer->device, &tuple, &params);
	ftv_send_join_gone(opener, index);
}

static void debug_join_flood(struct ftv_peer *peer)
{
	unsigned int i, n = min(READ_ONCE(join_flood), 16U);
	struct ftv_conn *opener;

	if (!n || READ_ONCE(peer->flows) < 2)
		return;
	rcu_read_lock_bh();
	opener = rcu_dereference_bh(peer->conn);
	if (opener && opener->is_initiator &&
	    READ_ONCE(opener->state) == FTV_CONN_ESTABLISHED &&
	    READ_ONCE(opener->session->peer_takes_joins))
		for (i = 0; i < n; i++)
			debug_join_flood_one(peer, opener, opener->tuple);
	rcu_read_unlock_bh();
	msleep(20);
	ftv_timers_want_connection(peer);
}
#else
static inline void debug_join_up_unanswered(struct ftv_conn *conn)
{
}

static inline void debug_join_flood(struct ftv_peer *peer)
{
}
#endif

/* Publish the join @conn and send its SYN, or free it if its session no
 * longer wants it (@probe: may no longer open it). Return: whether it
 * went.
 */
static bool join_start(struct ftv_peer *peer, struct ftv_conn *conn,
		       bool probe)
{
	bool ok;

	/* Once published, @conn is only used under RCU. */
	rcu_read_lock_bh();
	ok = publish_join(peer, conn, probe);
	if (ok) {
		ftv_send_syn(conn);
		debug_join_up_unanswered(conn);
	}
	rcu_read_unlock_bh();
	if (!ok)
		ftv_conn_free(conn);
	return ok;
}

/* An initiator's join, its SYN ready to go; or NULL. May sleep. */
static struct ftv_conn *prepare_join(struct ftv_peer *peer)
{
	struct ftv_conn *conn;
	struct ftv_session *s;
	struct ftv_tuple tuple;
	u32 index;
	u64 token;

	s = join_reserve(peer, &index, &token, &tuple);
	if (!s)
		return NULL;
	conn = join_create(peer, s, &tuple, index, token, false);
	ftv_session_put(s);
	return conn;
}

/**
 * ftv_conn_probe_join - open one more join of the peer's session, for a probe
 * @peer: the peer, whose current session this end opened
 * @endpoint: the number of the endpoint in the peer's list it goes to
 *	(0 without a list: the peer's endpoint)
 * @shape: its first message goes shaped (1) or as it is (0); -1: as the
 *	device's shape setting says
 * @index: set to the join's number in the session
 *
 * The join goes from a fresh source port, as every join does, whether
 * the session wants one more or not: a probe learns from it whether a
 * new connection to that endpoint, opened this way, gets through. It
 * carries no data: if its SYN is answered, its first message brings the
 * peer's side up, and once the peer's answer opens the probe records
 * that it came up, and it is given up as a spent join is
 * (ftv_conn_probe_join_up()); if not, the gc gives it up after
 * FTV_JOIN_TIMEOUT_MS. May sleep.
 *
 * Return: 0; -ENOTCONN without a session, -EOPNOTSUPP when the peer
 * takes no joins or opened the session itself, -EBUSY when the session
 * has FTV_JOINS_MAX or lost FTV_JOIN_AHEAD in a row (the peer expects no
 * more), -EAGAIN past the peer's rate of joins (FTV_JOIN_RATE a second),
 * -ERANGE when there is no such endpoint, -ENOMEM when no port or memory
 * could be had.
 */
int ftv_conn_probe_join(struct ftv_peer *peer, u32 endpoint, int shape,
			u32 *index)
{
	struct ftv_conn *conn;
	struct ftv_session *s;
	struct ftv_tuple tuple;
	u64 token;

	s = probe_join_reserve(peer, endpoint, index, &token, &tuple);
	if (IS_ERR(s))
		return PTR_ERR(s);
	conn = join_create(peer, s, &tuple, *index, token, true);
	ftv_session_put(s);
	if (!conn)
		return -ENOMEM;
	if (shape >= 0)
		conn->shape_opening = shape;
	if (!join_start(peer, conn, true))
		return -ENOTCONN;
	ftv_dev_dbg(peer->device->dev, "peer %llu: probe join %u opened\n",
		    peer->internal_id, *index);
	return 0;
}

/**
 * ftv_conn_open_joins - open the joins the peer's current session lacks
 * @peer: a peer, from its connect work
 *
 * Each join is a fake TCP connection of its own, from a new port, whose
 * SYN's token (join.c) names the session; no key exchange runs on it.
 */
void ftv_conn_open_joins(struct ftv_peer *peer)
{
	struct ftv_conn *conn;
	unsigned int i;

	debug_join_flood(peer);
	for (i = 0; i < FTV_MAX_FLOWS; i++) {
		conn = prepare_join(peer);
		if (!conn || !join_start(peer, conn, false))
			return;
	}
}

/**
 * ftv_conn_probe_join_up - a probe's join came up
 * @conn: the join, under RCU (the receive hook, or the serial receive
 *	step once the peer's first message on it opened)
 *
 * The probe records it; it is retired and the responder told, as for a
 * join that carried its budget, so that a join opened only to see whether
 * it gets through carries nothing and outlives nothing.
 */
void ftv_conn_probe_join_up(struct ftv_conn *conn)
{
	struct ftv_device *fdev = conn->device;
	bool retired = false;

	spin_lock_bh(&fdev->conn_lock);
	if (conn->state == FTV_CONN_ESTABLISHED) {
		/* Off the joining list too, where it waited for the
		 * answer.
		 */
		retire_join_locked(conn);
		WRITE_ONCE(conn->session->joins_lost, 0);
		retired = true;
	}
	spin_unlock_bh(&fdev->conn_lock);
	if (!retired)
		return;
	ftv_probe_join_up(&conn->peer->probe, conn->join_index);
	ftv_send_join_gone(conn, conn->join_index);
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
