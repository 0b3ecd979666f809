// SPDX-License-Identifier: GPL-2.0
/*
 * Probes of the path to a peer. The module gives the primitives and
 * ftvctl runs the steps and judges what they show: a step asks the peer,
 * in a sealed control message like any other (a PROBE_ASK, padded to the
 * length the step wants to learn about), to say what arrived of the ask
 * (an echo) or to send so many bytes of padding on one connection of the
 * session at a given rate (pad), and the peer answers with a PROBE_TELL on
 * the connection the ask came on. A pad may also be spread over every
 * connection of the session that is up, one message each in turn, so
 * that the asker can tell a limit per connection from one on the path.
 * Padding is keepalive padding: a module
 * that predates probes ignores asks as it ignores every control message it
 * does not know, and an observer sees a tunnel that carries traffic.
 *
 * Only a configured peer can ask, since only its session's keys seal an
 * ask; and each end keeps one peer's probe work to a budget: FTV_PROBE_ANSWERS
 * answers and FTV_PROBE_MAX_BYTES of padding, each refilled over
 * FTV_PROBE_WINDOW_S seconds, padding at FTV_PROBE_MAX_RATE at most, one
 * pad at a time (a new one replaces what is left of the last). An ask
 * over it is not served (a pad gets all it asks for or nothing) and is
 * counted (the peer's probe_limited drop). So a peer that asks without
 * pause gets no more than one budget at once and one more each window:
 * its padding costs this end the sealing of at most FTV_PROBE_MAX_BYTES
 * a minute, after the first. The two limits are rate limits of the
 * generic cell rate kind: each records the time at which its budget is
 * whole again, and an ask may bring that time no later than one window
 * from now.
 *
 * Lifetime: the probe is part of its peer. Its work is the one thing that
 * outlives the call that armed it; ftv_probe_stop() (the peer's removal,
 * after it is dead) sets @stopped under the lock the arming holds, then
 * cancels the work, so nothing runs on a peer that is gone.
 */

#include "probe.h"
#include "conn.h"
#include "control.h"
#include "device.h"
#include "flow.h"
#include "peer.h"
#include "send.h"
#include "session.h"

#include <linux/ftv.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <net/dst.h>

#define PROBE_WINDOW_NS ((u64)FTV_PROBE_WINDOW_S * NSEC_PER_SEC)
#define PROBE_NS_PER_ANSWER (PROBE_WINDOW_NS / FTV_PROBE_ANSWERS)
#define PROBE_NS_PER_BYTE (PROBE_WINDOW_NS / FTV_PROBE_MAX_BYTES)

static void probe_pad_work(struct work_struct *work);

/**
 * ftv_probe_init - a peer's probe, with nothing asked and nothing owed
 * @probe: the probe, zeroed with its peer
 */
void ftv_probe_init(struct ftv_probe *probe)
{
	spin_lock_init(&probe->lock);
	INIT_DELAYED_WORK(&probe->pad_work, probe_pad_work);
}

/**
 * ftv_probe_stop - stop the padding for good; the peer is dead
 * @probe: the probe
 */
void ftv_probe_stop(struct ftv_probe *probe)
{
	spin_lock_bh(&probe->lock);
	probe->stopped = true;
	probe->pad_left = 0;
	spin_unlock_bh(&probe->lock);
	cancel_delayed_work_sync(&probe->pad_work);
}

/* The connections of the peer's session that are established and carry
 * data (not a join that waits for its first message to go, or for the
 * peer's answer), into @conns (FTV_SESSION_FLOWS of room); valid until
 * the caller's RCU read section (BH flavour) ends. Return: how many.
 */
static unsigned int probe_up(struct ftv_peer *peer, struct ftv_conn **conns)
{
	struct ftv_conn *conn = rcu_dereference_bh(peer->conn);
	unsigned int i, n = 0;

	for (i = 0; conn && i < FTV_SESSION_FLOWS; i++) {
		struct ftv_conn *c = rcu_dereference_bh(conn->session->up[i]);

		if (!c || READ_ONCE(c->state) != FTV_CONN_ESTABLISHED)
			continue;
		/* Pairs with ftv_conn_join_opened(), as in flow.c. */
		if (!smp_load_acquire(&c->opening))
			conns[n++] = c;
	}
	return n;
}

/* The established connection numbered @index (0: the session's opener),
 * or NULL; under RCU (BH flavour).
 */
static struct ftv_conn *probe_conn(struct ftv_peer *peer, u32 index)
{
	struct ftv_conn *up[FTV_SESSION_FLOWS];
	unsigned int i, n = probe_up(peer, up);

	for (i = 0; i < n; i++)
		if (up[i]->join_index == index)
			return up[i];
	return NULL;
}

/* The MTU of @c's outer route now, 0 without one; under RCU (BH
 * flavour). icmp.c lowers it when an ICMP error proves it saw one of our
 * segments; a path that drops those errors leaves it at the link's.
 */
static u32 probe_path_mtu(struct ftv_conn *c)
{
	struct ftv_tuple tuple = c->tuple;
	struct dst_entry *dst;
	u32 mtu;

	dst = ftv_send_conn_route(c, &tuple);
	if (IS_ERR(dst))
		return 0;
	mtu = dst_mtu(dst);
	dst_release(dst);
	return mtu;
}

/**
 * ftv_probe_conns - the connections of the peer's session that are up
 * @peer: the peer
 * @conns: filled with their numbers and what came on each
 * @max: room in @conns
 *
 * Return: how many were filled in.
 */
unsigned int ftv_probe_conns(struct ftv_peer *peer,
			     struct ftv_probe_conn *conns, unsigned int max)
{
	struct ftv_conn *up[FTV_SESSION_FLOWS];
	unsigned int i, n;

	rcu_read_lock_bh();
	n = min(probe_up(peer, up), max);
	for (i = 0; i < n; i++) {
		conns[i].index = up[i]->join_index;
		conns[i].rx_bytes = READ_ONCE(up[i]->rx_sealed);
		conns[i].path_mtu = probe_path_mtu(up[i]);
		conns[i].rx_stream = ftv_flow_received(up[i]);
	}
	rcu_read_unlock_bh();
	return n;
}

/**
 * ftv_probe_join_up - a join that a probe opened came up
 * @probe: the peer's probe
 * @index: the join's number in its session
 */
void ftv_probe_join_up(struct ftv_probe *probe, u32 index)
{
	spin_lock_bh(&probe->lock);
	probe->joins_up[probe->n_joins_up++ % FTV_PROBE_JOINS] = index;
	spin_unlock_bh(&probe->lock);
}

/**
 * ftv_probe_joins_up - the last joins a probe opened that came up
 * @probe: the peer's probe
 * @joins: filled with their numbers, oldest first
 *
 * Return: how many, FTV_PROBE_JOINS at most.
 */
unsigned int ftv_probe_joins_up(struct ftv_probe *probe,
				u32 joins[FTV_PROBE_JOINS])
{
	unsigned int i, n, first;

	spin_lock_bh(&probe->lock);
	n = min_t(unsigned int, probe->n_joins_up, FTV_PROBE_JOINS);
	first = probe->n_joins_up - n;
	for (i = 0; i < n; i++)
		joins[i] = probe->joins_up[(first + i) % FTV_PROBE_JOINS];
	spin_unlock_bh(&probe->lock);
	return n;
}

/* Take @units from a limit at @per_unit ns each, if it has them all: the
 * limit's time @at may move no later than a window past @now. Return:
 * whether it had them.
 */
static bool probe_take(u64 *at, u64 now, u64 per_unit, u32 units)
{
	u64 from = max(*at, now);

	if (from + units * per_unit > now + PROBE_WINDOW_NS)
		return false;
	*at = from + units * per_unit;
	return true;
}

/*
 * The asker's side of a pad: what the peer pads on a connection that a
 * censor froze, or past a policer, is lost on purpose, and the session's
 * loss estimate must not take it for the path's (FEC would then send the
 * peer's data with repairs sized to it: after a freeze step, so many that
 * a connection's budget held one packet). The estimate before the first
 * pad is kept, and the stop goes back to it (probe_stop_told()).
 */
static void probe_pad_asked(struct ftv_probe *probe, struct ftv_conn *conn)
{
	spin_lock_bh(&probe->lock);
	if (!probe->padding_asked) {
		probe->padding_asked = true;
		probe->loss_before = READ_ONCE(conn->session->fec.loss_ppm);
	}
	spin_unlock_bh(&probe->lock);
}

/*
 * The peer stopped padding (its answer to our stop came on @conn, after
 * all of the padding): forget the loss since the first pad, and tell the
 * peer the estimate now rather than at the end of the next interval.
 */
static void probe_stop_told(struct ftv_probe *probe, struct ftv_conn *conn)
{
	struct ftv_fec_conn *fec = &conn->session->fec;
	bool asked;
	u32 before;

	spin_lock_bh(&probe->lock);
	asked = probe->padding_asked;
	before = probe->loss_before;
	probe->padding_asked = false;
	spin_unlock_bh(&probe->lock);
	if (!asked)
		return;
	ftv_fec_forget_loss(fec, before);
	if (READ_ONCE(fec->peer_has_fec))
		ftv_control_send_loss(conn, ftv_fec_loss_to_report(fec));
}

/**
 * ftv_probe_send - send the peer one probe step
 * @peer: the peer
 * @step: the step; FTV_PROBE_READ sends nothing
 * @nonce: set to the ask's nonce (0 for a read)
 *
 * Return: 0, or -ENOTCONN when the session or the connection named is
 * not up.
 */
int ftv_probe_send(struct ftv_peer *peer, const struct ftv_probe_request *step,
		   u32 *nonce)
{
	struct ftv_msg_probe_ask ask = {
		.type = FTV_CONTROL_PROBE_ASK,
		.step = step->step,
		.index = cpu_to_le32(step->index),
		.bytes = cpu_to_le32(step->bytes),
		.rate = cpu_to_le32(step->rate),
	};
	struct ftv_conn *conn;
	int ret = 0;

	*nonce = 0;
	if (step->step == FTV_PROBE_READ)
		return 0;
	*nonce = get_random_u32() | 1;
	ask.nonce = cpu_to_le32(*nonce);
	rcu_read_lock_bh();
	/* A pad over every connection is asked for on the opener. */
	conn = probe_conn(peer, step->index == FTV_PROBE_INDEX_ALL ? 0 :
			      step->index);
	if (conn) {
		if (step->step == FTV_PROBE_PAD)
			probe_pad_asked(&peer->probe, conn);
		ftv_control_send_padded(conn, &ask, sizeof(ask),
					max_t(u32, step->length,
					      sizeof(ask)));
	} else {
		ret = -ENOTCONN;
	}
	rcu_read_unlock_bh();
	return ret;
}

/**
 * ftv_probe_told - the peer's last answer to one of our asks
 * @peer: the peer
 * @tell: set to the answer
 *
 * Return: whether one came.
 */
bool ftv_probe_told(struct ftv_peer *peer, struct ftv_msg_probe_tell *tell)
{
	struct ftv_probe *probe = &peer->probe;
	bool told;

	spin_lock_bh(&probe->lock);
	told = probe->told;
	*tell = probe->tell;
	spin_unlock_bh(&probe->lock);
	return told;
}

/* Start padding: @bytes at @rate_kbit on the connection numbered @index,
 * in place of what was left of the last pad.
 */
static void probe_pad_start_locked(struct ftv_probe *probe, u32 index,
				   u32 bytes, u32 rate_kbit)
{
	lockdep_assert_held(&probe->lock);
	probe->pad_index = index;
	probe->pad_left = bytes;
	probe->pad_rate = rate_kbit * (1000 / 8);
	probe->pad_credit = 0;
	probe->pad_at = ktime_get();
	if (!probe->stopped)
		mod_delayed_work(system_percpu_wq, &probe->pad_work, 0);
}

/* The padding an ask may have, all of it or none, and the pad it
 * starts. Return: the bytes granted.
 */
static u32 probe_pad_grant_locked(struct ftv_peer *peer,
				  const struct ftv_msg_probe_ask *ask, u64 now)
{
	struct ftv_probe *probe = &peer->probe;
	u32 want = min_t(u32, le32_to_cpu(ask->bytes), FTV_PROBE_MAX_BYTES);
	u32 rate = clamp_t(u32, le32_to_cpu(ask->rate), 1, FTV_PROBE_MAX_RATE);

	lockdep_assert_held(&probe->lock);
	if (!want)
		return 0;
	if (!probe_take(&probe->bytes_at, now, PROBE_NS_PER_BYTE, want)) {
		ftv_drops_inc(&peer->drops, FTV_DROPS_A_PROBE_LIMITED);
		return 0;
	}
	probe_pad_start_locked(probe, le32_to_cpu(ask->index), want, rate);
	return want;
}

/**
 * ftv_probe_asked - serve an ask that came on @conn, within the limits
 * @conn: the connection it came on, from its serial step
 * @skb: the ask's plaintext (struct ftv_msg_probe_ask and padding)
 *
 * The answer goes on the same connection.
 */
void ftv_probe_asked(struct ftv_conn *conn, struct sk_buff *skb)
{
	struct ftv_peer *peer = conn->peer;
	struct ftv_probe *probe = &peer->probe;
	struct ftv_msg_probe_tell tell = {
		.type = FTV_CONTROL_PROBE_TELL,
		.length = cpu_to_le32(skb->len),
		.index = cpu_to_le32(conn->join_index),
	};
	struct ftv_msg_probe_ask ask;
	u64 now = ktime_get_ns();
	u64 reset = READ_ONCE(peer->reset_seen);
	u32 granted = 0;

	if (skb_copy_bits(skb, 0, &ask, sizeof(ask)))
		return;
	spin_lock_bh(&probe->lock);
	if (!probe_take(&probe->answers_at, now, PROBE_NS_PER_ANSWER, 1)) {
		spin_unlock_bh(&probe->lock);
		ftv_drops_inc(&peer->drops, FTV_DROPS_A_PROBE_LIMITED);
		return;
	}
	if (ask.step == FTV_PROBE_PAD)
		granted = probe_pad_grant_locked(peer, &ask, now);
	else if (ask.step == FTV_PROBE_STOP)
		probe->pad_left = 0;
	tell.left = cpu_to_le32(probe->pad_left);
	spin_unlock_bh(&probe->lock);
	tell.step = ask.step;
	tell.nonce = ask.nonce;
	tell.bytes = cpu_to_le32(granted);
	tell.reset = cpu_to_le32(lower_32_bits(reset));
	tell.reset_heard = cpu_to_le32(upper_32_bits(reset));
	ftv_control_send_probe_tell(conn, &tell);
}

/**
 * ftv_probe_answered - keep the peer's answer to one of our asks
 * @conn: the connection it came on, from its serial step
 * @skb: its plaintext (struct ftv_msg_probe_tell and padding)
 */
void ftv_probe_answered(struct ftv_conn *conn, struct sk_buff *skb)
{
	struct ftv_probe *probe = &conn->peer->probe;
	struct ftv_msg_probe_tell tell;

	if (skb_copy_bits(skb, 0, &tell, sizeof(tell)))
		return;
	spin_lock_bh(&probe->lock);
	probe->tell = tell;
	probe->told = true;
	spin_unlock_bh(&probe->lock);
	if (tell.step == FTV_PROBE_STOP)
		probe_stop_told(probe, conn);
}

/* The padding that is due now: the rate's credit since the last time,
 * up to what is left. Return: the bytes to send; 0 ends the pad when
 * nothing is left.
 */
static u32 probe_pad_due_locked(struct ftv_probe *probe)
{
	ktime_t now = ktime_get();
	u64 credit = probe->pad_credit +
		     div_u64((u64)ktime_us_delta(now, probe->pad_at) *
			     probe->pad_rate, USEC_PER_SEC);
	u32 burst = max_t(u32, FTV_PROBE_BURST, probe->pad_rate / 50);
	u32 due;

	lockdep_assert_held(&probe->lock);
	probe->pad_at = now;
	credit = min_t(u64, credit, burst);
	due = min_t(u64, credit, probe->pad_left);
	probe->pad_credit = credit - due;
	probe->pad_left -= due;
	return due;
}

/* Whether padding may go on @c: the peer answers there. Padding is the
 * one thing this end sends on its peer's asking, up to
 * FTV_PROBE_MAX_RATE; what stopped acknowledging it, whatever the
 * reason, gets no more than FTV_PROBE_UNACKED_MAX, and no more than
 * FTV_PROBE_UNHEARD_MAX once a second has passed without a word from it.
 */
static bool probe_pad_answered(const struct ftv_conn *c)
{
	u32 unacked = (u32)atomic_read(&c->snd_nxt) -
		      (u32)atomic_read(&c->snd_una);

	return unacked <= FTV_PROBE_UNHEARD_MAX ||
	       (unacked <= FTV_PROBE_UNACKED_MAX &&
		time_before(jiffies, READ_ONCE(c->heard_at) +
			    msecs_to_jiffies(FTV_PROBE_HEARD_MS)));
}

/* The connections padding for @index goes on now: that one, or every one
 * that is up for FTV_PROBE_INDEX_ALL, so long as the peer answers there.
 * Under RCU (BH flavour). Return: how many.
 */
static unsigned int probe_pad_conns(struct ftv_peer *peer, u32 index,
				    struct ftv_conn **conns)
{
	unsigned int i, n, ok = 0;

	if (index == FTV_PROBE_INDEX_ALL) {
		n = probe_up(peer, conns);
	} else {
		conns[0] = probe_conn(peer, index);
		n = conns[0] ? 1 : 0;
	}
	for (i = 0; i < n; i++)
		if (probe_pad_answered(conns[i]))
			conns[ok++] = conns[i];
	return ok;
}

static void probe_pad_work(struct work_struct *work)
{
	struct ftv_probe *probe = container_of(to_delayed_work(work),
					       struct ftv_probe, pad_work);
	struct ftv_peer *peer = container_of(probe, struct ftv_peer, probe);
	u32 len = max_t(u32, READ_ONCE(peer->device->dev->mtu), 64);
	struct ftv_conn *conns[FTV_SESSION_FLOWS];
	unsigned int i = 0, n;
	u32 due, index;

	spin_lock_bh(&probe->lock);
	due = probe_pad_due_locked(probe);
	index = probe->pad_index;
	spin_unlock_bh(&probe->lock);
	rcu_read_lock_bh();
	n = probe_pad_conns(peer, index, conns);
	while (n && due) {
		u32 bytes = min(len, due);

		/* Spread over every connection: one message each in turn. */
		ftv_control_send_padded(conns[i++ % n], NULL, 0, bytes);
		due -= bytes;
	}
	rcu_read_unlock_bh();
	spin_lock_bh(&probe->lock);
	if (!n)
		probe->pad_left = 0;
	if (probe->pad_left && !probe->stopped)
		schedule_delayed_work(&probe->pad_work, 1);
	spin_unlock_bh(&probe->lock);
}
