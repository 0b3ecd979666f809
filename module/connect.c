// SPDX-License-Identifier: GPL-2.0
/*
 * Opening connections. An initiator's connection takes a port of its own
 * as a connect() would, carries the handshake's token in its SYN and its
 * initiation after the SYN-ACK (handshake.c); its session's joins each
 * open from a new port with a single-use token (join.c) and no key
 * exchange; a probe opens one more join to learn whether it gets through.
 * At the responder a join's SYN is taken when its token is expected and
 * the peer is within its rate, and the join is up only once a message
 * sealed for it acknowledges our SYN-ACK from the SYN's address.
 *
 * conn.c owns the state machine; this file moves a connection only
 * through the writers conn_state.h declares, under the device's
 * conn_lock, and what it publishes is only used under RCU afterwards.
 * Everything that may sleep (ports, routes, the initiation) is done
 * before the connection is published, in the peer's connect work.
 */

#include "connect.h"
#include "conn_state.h"
#include "control.h"
#include "device.h"
#include "event.h"
#include "flow.h"
#include "log.h"
#include "noise.h"
#include "peer.h"
#include "probe.h"
#include "segment.h"
#include "send.h"
#include "shape.h"
#include "timers.h"
#include "token.h"

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/random.h>
#include <net/ip.h>
#include <net/ipv6.h>
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
		return ftv_compat_kernel_bind(sock, &sin, sizeof(sin));
	return ftv_compat_kernel_bind(sock, &sin6, sizeof(sin6));
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
		ok = ftv_conn_publish_locked(conn, FTV_CONN_SYN_SENT);
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
	if (!ftv_conn_publish_locked(conn, FTV_CONN_JOIN_RECEIVED)) {
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
 * answers with its own first message (ftv_control_send_opening()).
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
		ftv_conn_set_state(conn, FTV_CONN_ESTABLISHED);
	}
	spin_unlock_bh(&fdev->conn_lock);
	if (!up)
		return;
	/* The answer: the initiator learns that the join gets through both
	 * ways, and a censor on the path judges the first message it sees
	 * this way, which goes shaped if the device shapes.
	 */
	ftv_control_send_opening(conn);
	ftv_conn_join_opened(conn);
	/* The serial receive step: bottom halves off, and only the serial
	 * queue's drain_lock held, which is only ever tried, so nothing
	 * waits for it under the peer's lock.
	 */
	ftv_event_notify(conn->peer, FTV_EVENT_FLOW_UP);
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
			ftv_conn_retire_join_locked(join);
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
		ftv_conn_retire_join_locked(conn);
		retired = true;
	}
	spin_unlock_bh(&fdev->conn_lock);
	atomic64_inc(&conn->peer->rotations);
	if (retired)
		ftv_control_send_join_gone(conn, conn->join_index);
	ftv_timers_want_connection(conn->peer);
	/* The session's flow timer (softirq, under RCU), no lock held. */
	ftv_event_notify(conn->peer, event);
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
		ok = ftv_conn_publish_locked(conn, FTV_CONN_SYN_SENT);
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
	ftv_control_send_opening(conn);
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
	ftv_control_send_join_gone(opener, index);
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
		ftv_conn_retire_join_locked(conn);
		WRITE_ONCE(conn->session->joins_lost, 0);
		retired = true;
	}
	spin_unlock_bh(&fdev->conn_lock);
	if (!retired)
		return;
	ftv_probe_join_up(&conn->peer->probe, conn->join_index);
	ftv_control_send_join_gone_here(conn);
}

/**
 * ftv_conn_join_gone_again - the responder still sends on a join this end
 *	gave up
 * @conn: the initiator's retired join a sealed message just opened on,
 *	under RCU
 *
 * The JOIN_GONE that told of it was lost, or is on its way: it goes again
 * on the join itself, which carried the peer's message, at most once per
 * FTV_JOIN_RETELL_MS. Otherwise the responder would count the join up,
 * against its cap, and send on it, until the session ends.
 */
void ftv_conn_join_gone_again(struct ftv_conn *conn)
{
	unsigned long now = jiffies, last = READ_ONCE(conn->gone_told);

	if (!conn->is_initiator || !conn->join_index)
		return;
	if (last && time_before(now, last +
				msecs_to_jiffies(FTV_JOIN_RETELL_MS)))
		return;
	/* One of the CPUs that open on it at once tells. */
	if (cmpxchg(&conn->gone_told, last, now | 1) != last)
		return;
	ftv_control_send_join_gone_here(conn);
}
