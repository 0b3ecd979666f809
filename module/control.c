// SPDX-License-Identifier: GPL-2.0
/*
 * Sealed control messages: the messages that carry no inner packet, what
 * each is for, how each is built and where each received one goes. The
 * first plaintext byte of a message is an IP version for a packet and a
 * type (enum ftv_control_type, below 0x10) for these; messages.h has
 * their layouts, as it has every other message's.
 *
 * This file is the one that builds them and the one that reads their
 * type: a received message goes, by the table below, to a handler that
 * takes its fields out and gives them to the room whose subject it is
 * (fec.c, flow.c, connect.c, probe.c, the session). A new type is one
 * row there, its builder here, and what it does in its subject's file.
 * Messages go out through send.c, which seals them as it seals data.
 */

#include "control.h"
#include "conn.h"
#include "connect.h"
#include "fec.h"
#include "flow.h"
#include "messages.h"
#include "peer.h"
#include "probe.h"
#include "send.h"
#include "session.h"

#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/sysfs.h>

/*
 * A sealed message that carries no packet: @len bytes of plaintext, then
 * zero padding to a random length, so that such messages do not all have
 * one telltale size. Return: its plaintext, zeroed, to fill in and send
 * with ftv_send_message(), or NULL.
 */
static void *alloc_padded(unsigned int len, struct sk_buff **skb)
{
	unsigned int pad = get_random_u32() % (FTV_KEEPALIVE_PAD_MAX + 1);

	*skb = ftv_send_message_alloc(len + pad);
	return likely(*skb) ? skb_put_zero(*skb, len + pad) : NULL;
}

static void send_control(struct ftv_conn *about, struct sk_buff *skb);

/**
 * ftv_control_send_loss - tell the peer how much of its traffic is lost
 * @conn: an established connection of the session, under RCU
 * @loss_ppm: the loss, in parts per million
 *
 * A sealed control message (struct ftv_msg_loss), on the connection the
 * sender would choose for a small message: one a budget lets carry it.
 * A module without FEC takes it for a keepalive.
 */
void ftv_control_send_loss(struct ftv_conn *conn, u32 loss_ppm)
{
	struct ftv_msg_loss *msg;
	struct sk_buff *skb;

	msg = alloc_padded(sizeof(*msg), &skb);
	if (unlikely(!msg))
		return;
	msg->type = FTV_CONTROL_LOSS;
	msg->loss_ppm = cpu_to_be32(loss_ppm);
	send_control(conn, skb);
}

/**
 * ftv_control_send_hello - say what this end can do, in a sealed message
 * @conn: a connection whose keys were just set (this is the first
 *	message sealed on it), or one whose peer has not yet shown that it
 *	heard the first (ftv_fec_received()); under RCU
 *
 * struct ftv_msg_hello, on the connection the sender would choose for a
 * small message (@conn itself while it is the session's only one); a
 * module that predates it takes it for a keepalive.
 */
void ftv_control_send_hello(struct ftv_conn *conn)
{
	struct ftv_msg_hello *msg;
	struct sk_buff *skb;
	bool joins;

	msg = alloc_padded(sizeof(*msg), &skb);
	if (unlikely(!msg))
		return;
	msg->type = FTV_CONTROL_HELLO;
	msg->flags = FTV_HELLO_F_FEC | FTV_HELLO_F_OPENINGS | FTV_HELLO_F_BOUND;
	/* A responder takes joins if its session expects some; an
	 * initiator says whether it will open some (a list of endpoints
	 * keeps one up: ftv_peer_flows_wanted()).
	 */
	if (conn->is_initiator)
		joins = READ_ONCE(conn->peer->flows) > 1 ||
			READ_ONCE(conn->peer->endpoints);
	else
		joins = READ_ONCE(conn->session->join.live);
	if (joins)
		msg->flags |= FTV_HELLO_F_JOINS;
	send_control(conn, skb);
}

/* A keepalive's struct ftv_msg_ack, for @conn: a zero first nibble is no
 * IP version, which is how the receiver knows it carries no packet.
 */
static struct sk_buff *alloc_keepalive(struct ftv_conn *conn, u8 flags)
{
	struct ftv_msg_ack *msg;
	struct sk_buff *skb;

	msg = alloc_padded(sizeof(*msg), &skb);
	if (unlikely(!msg))
		return NULL;
	msg->type = FTV_CONTROL_ACK;
	msg->flags = flags;
	ftv_flow_ack_fill(conn, msg);
	return skb;
}

/**
 * ftv_control_send_keepalive - send a sealed message that carries no packet
 * @conn: an established connection
 *
 * It says what came on @conn (struct ftv_msg_ack), padded to a random
 * length, and asks nothing: the peer does not answer it.
 */
void ftv_control_send_keepalive(struct ftv_conn *conn)
{
	struct sk_buff *skb = alloc_keepalive(conn, 0);

	if (likely(skb))
		ftv_send_message(conn, skb, false);
}

/**
 * ftv_control_send_session_keepalive - a keepalive for the session, not for one
 *	of its connections
 * @conn: the peer's current connection, under RCU
 *
 * On the connection the sender would choose for a small message: a
 * budget that keeps anything more off @conn keeps this off too.
 */
void ftv_control_send_session_keepalive(struct ftv_conn *conn)
{
	struct ftv_conn *via = ftv_flow_pick(conn, 0);

	if (via)
		ftv_control_send_keepalive(via);
}

/**
 * ftv_control_send_ask - send a keepalive that asks the peer to report
 * @conn: an established connection whose data waits for a report
 *	(flow.c)
 */
void ftv_control_send_ask(struct ftv_conn *conn)
{
	struct sk_buff *skb = alloc_keepalive(conn, FTV_ACK_F_ASK);

	if (likely(skb))
		ftv_send_message(conn, skb, false);
}

/**
 * ftv_control_send_opening - send a join's first message, a keepalive, before any
 *	other goes on it
 * @conn: a join, established, whose ->opening keeps the sender's choice
 *	(ftv_flow_pick()) off it until this is queued (conn.c clears it):
 *	the session's transmit queue sends in the order jobs were queued
 *
 * It goes shaped (shape.c) when @conn's opening is to be and the peer
 * said that it reads shaped openings of joins: a censor that judges each
 * connection's first message then sees what it sees at the opening of a
 * session.
 */
void ftv_control_send_opening(struct ftv_conn *conn)
{
	struct sk_buff *skb = alloc_keepalive(conn, 0);

	if (likely(skb))
		ftv_send_message(conn, skb, conn->shape_opening &&
				 READ_ONCE(conn->session->peer_reads_openings));
}

/* A control message about @about's session, on the connection the sender
 * would choose for a small message.
 */
static void send_control(struct ftv_conn *about, struct sk_buff *skb)
{
	struct ftv_conn *via = ftv_flow_pick(about, 0);

	if (unlikely(!via)) {
		kfree_skb(skb);
		return;
	}
	ftv_send_message(via, skb, false);
}

#ifdef DEBUG
/*
 * Debug builds let a test lose the next this many JOIN_GONEs, as a censor
 * that drops the connection one went on loses it: the responder must
 * still hear that the join is gone (connect.c, ftv_conn_join_gone_again()).
 */
static atomic_t join_gone_lose = ATOMIC_INIT(0);

static int join_gone_lose_set(const char *val, const struct kernel_param *kp)
{
	int n, ret = kstrtoint(val, 0, &n);

	if (ret)
		return ret;
	if (n < 0)
		return -EINVAL;
	atomic_set(&join_gone_lose, n);
	return 0;
}

static int join_gone_lose_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&join_gone_lose));
}

static const struct kernel_param_ops join_gone_lose_ops = {
	.set = join_gone_lose_set,
	.get = join_gone_lose_get,
};
module_param_cb(join_gone_lose, &join_gone_lose_ops, NULL, 0644);
MODULE_PARM_DESC(join_gone_lose, "Lose the next this many JOIN_GONEs");

static bool debug_join_gone_lost(u32 index)
{
	if (atomic_add_unless(&join_gone_lose, -1, 0)) {
		pr_debug("JOIN_GONE for join %u lost (debug)\n", index);
		return true;
	}
	return false;
}
#else
static inline bool debug_join_gone_lost(u32 index)
{
	return false;
}
#endif

/* A JOIN_GONE naming the join numbered @index, or NULL. */
static struct sk_buff *build_join_gone(u32 index)
{
	struct ftv_msg_join_gone *msg;
	struct sk_buff *skb;

	if (debug_join_gone_lost(index))
		return NULL;
	msg = alloc_padded(sizeof(*msg), &skb);
	if (unlikely(!msg))
		return NULL;
	msg->type = FTV_CONTROL_JOIN_GONE;
	msg->index = cpu_to_le32(index);
	return skb;
}

/**
 * ftv_control_send_join_gone - tell the responder that a join was given up
 * @about: a connection of the session, under RCU: the initiator's join,
 *	retired
 * @index: the join's number
 *
 * Sent on another connection of the session, the one the sender would
 * choose for a small message.
 */
void ftv_control_send_join_gone(struct ftv_conn *about, u32 index)
{
	struct sk_buff *skb = build_join_gone(index);

	if (likely(skb))
		send_control(about, skb);
}

/**
 * ftv_control_send_join_gone_here - tell the responder on the join itself
 * @join: the initiator's join, retired, under RCU: one the peer's last
 *	message just came on, so that it carries both ways
 *
 * A JOIN_GONE on another connection is lost if a censor drops that one
 * (a join it blocked after its opening looks up to the initiator until
 * data on it goes unanswered, and is the least loaded meanwhile).
 */
void ftv_control_send_join_gone_here(struct ftv_conn *join)
{
	struct sk_buff *skb = build_join_gone(join->join_index);

	if (likely(skb))
		ftv_send_message(join, skb, false);
}

/**
 * ftv_control_send_budget - give the responder a connection's budget
 * @conn: the initiator's connection, under RCU
 */
void ftv_control_send_budget(struct ftv_conn *conn)
{
	struct ftv_msg_budget *msg;
	struct sk_buff *skb;

	msg = alloc_padded(sizeof(*msg), &skb);
	if (unlikely(!msg))
		return;
	msg->type = FTV_CONTROL_BUDGET;
	msg->index = cpu_to_le32(conn->join_index);
	msg->bytes = cpu_to_le32(READ_ONCE(conn->budget));
	send_control(conn, skb);
}

/**
 * ftv_control_send_probe_tell - answer a probe's ask
 * @conn: the connection the ask came on, under RCU
 * @tell: the answer
 */
void ftv_control_send_probe_tell(struct ftv_conn *conn,
				 const struct ftv_msg_probe_tell *tell)
{
	struct sk_buff *skb;
	void *msg;

	msg = alloc_padded(sizeof(*tell), &skb);
	if (likely(msg)) {
		memcpy(msg, tell, sizeof(*tell));
		ftv_send_message(conn, skb, false);
	}
}

/**
 * ftv_control_send_padded - send a probe's message padded to a length
 * @conn: the connection, under RCU
 * @msg: what goes first (a probe's ask), or NULL for padding only
 * @msg_len: its length
 * @len: the plaintext length, at least @msg_len; zero bytes after @msg,
 *	as a keepalive's
 */
void ftv_control_send_padded(struct ftv_conn *conn, const void *msg,
			     unsigned int msg_len, unsigned int len)
{
	struct sk_buff *skb = ftv_send_message_alloc(len);
	void *p;

	if (unlikely(!skb))
		return;
	p = skb_put_zero(skb, len);
	if (msg)
		memcpy(p, msg, msg_len);
	ftv_send_message(conn, skb, false);
}

/* A repair message: FEC rebuilds what it can of its group. */
static void accept_repair(struct ftv_conn *conn, struct sk_buff *skb,
			  const struct ftv_control_rx *rx)
{
	ftv_fec_rebuild(&conn->session->fec,
			READ_ONCE(conn->state) <= FTV_CONN_ESTABLISHED,
			rx->counter, skb, rx->rebuilt, rx->arg);
}

static void accept_loss(struct ftv_conn *conn, struct sk_buff *skb,
			const struct ftv_control_rx *rx)
{
	ftv_fec_loss_report(&conn->session->fec, skb);
}

/* What the peer can do: each flag, once seen, holds for the session. */
static void accept_hello(struct ftv_conn *conn, struct sk_buff *skb,
			 const struct ftv_control_rx *rx)
{
	struct ftv_session *s = conn->session;
	u8 flags;

	ftv_fec_hello(&s->fec, skb);
	if (skb->len < sizeof(struct ftv_msg_hello))
		return;
	flags = skb->data[offsetof(struct ftv_msg_hello, flags)];
	if ((flags & FTV_HELLO_F_OPENINGS) &&
	    !READ_ONCE(s->peer_reads_openings))
		WRITE_ONCE(s->peer_reads_openings, true);
	if ((flags & FTV_HELLO_F_BOUND) && !READ_ONCE(s->peer_reports))
		WRITE_ONCE(s->peer_reports, true);
	/* Joins only with a peer that binds them to their numbers: an
	 * older one's would not open here, nor ours there.
	 */
	if ((flags & FTV_HELLO_F_JOINS) && (flags & FTV_HELLO_F_BOUND))
		ftv_conn_peer_joins(conn);
}

static void accept_join_gone(struct ftv_conn *conn, struct sk_buff *skb,
			     const struct ftv_control_rx *rx)
{
	ftv_conn_join_gone(conn, get_unaligned_le32(skb->data +
			   offsetof(struct ftv_msg_join_gone, index)));
}

static void accept_budget(struct ftv_conn *conn, struct sk_buff *skb,
			  const struct ftv_control_rx *rx)
{
	ftv_flow_budget_given(conn, get_unaligned_le32(skb->data +
			      offsetof(struct ftv_msg_budget, index)),
			      get_unaligned_le32(skb->data +
			      offsetof(struct ftv_msg_budget, bytes)));
}

static void accept_probe_ask(struct ftv_conn *conn, struct sk_buff *skb,
			     const struct ftv_control_rx *rx)
{
	ftv_probe_asked(conn, skb);
}

static void accept_probe_tell(struct ftv_conn *conn, struct sk_buff *skb,
			      const struct ftv_control_rx *rx)
{
	ftv_probe_answered(conn, skb);
}

static void accept_ack(struct ftv_conn *conn, struct sk_buff *skb,
		       const struct ftv_control_rx *rx)
{
	ftv_flow_ack_received(conn, (const struct ftv_msg_ack *)skb->data);
}

/**
 * struct control_type - what is done with a received control message
 * @min_len: shorter, it is taken for padding (a handler that reads no
 *	fixed field, or checks the length itself, has none)
 * @quiet: it is not reported on our next tick; a keepalive says itself
 *	whether it asks (ftv_flow_ack_received()), or reports would answer
 *	reports for ever
 * @accept: its handler, or NULL (a keepalive's padding)
 */
struct control_type {
	unsigned int min_len;
	bool quiet;
	void (*accept)(struct ftv_conn *conn, struct sk_buff *skb,
		       const struct ftv_control_rx *rx);
};

static const struct control_type control_types[] = {
	[FTV_CONTROL_PAD] = { },
	[FTV_CONTROL_REPAIR] = { .accept = accept_repair },
	[FTV_CONTROL_LOSS] = { .accept = accept_loss },
	[FTV_CONTROL_HELLO] = { .accept = accept_hello },
	[FTV_CONTROL_JOIN_GONE] = {
		.min_len = sizeof(struct ftv_msg_join_gone),
		.accept = accept_join_gone,
	},
	[FTV_CONTROL_BUDGET] = {
		.min_len = sizeof(struct ftv_msg_budget),
		.accept = accept_budget,
	},
	[FTV_CONTROL_PROBE_ASK] = { .accept = accept_probe_ask },
	[FTV_CONTROL_PROBE_TELL] = { .accept = accept_probe_tell },
	[FTV_CONTROL_ACK] = {
		.min_len = sizeof(struct ftv_msg_ack),
		.quiet = true,
		.accept = accept_ack,
	},
};

/**
 * ftv_control_accept - act on a control message that opened on @conn
 * @conn: the connection, from its session's serial receive step
 * @skb: the message's plaintext, from its type on; the caller frees it
 * @rx: its counter, and where a rebuilt packet goes
 *
 * A type this end does not know is padding: a newer peer's message that
 * an older end must be able to ignore.
 */
void ftv_control_accept(struct ftv_conn *conn, struct sk_buff *skb,
			const struct ftv_control_rx *rx)
{
	u8 type = skb->len ? skb->data[0] : FTV_CONTROL_PAD;
	const struct control_type *t = NULL;

	if (type < ARRAY_SIZE(control_types))
		t = &control_types[type];
	/* Reported on our next tick (flow.c), before the handler runs:
	 * an answer it sends reports it.
	 */
	if (!t || !t->quiet)
		ftv_conn_report_due(conn);
	if (t && t->accept && skb->len >= t->min_len)
		t->accept(conn, skb, rx);
}
