// SPDX-License-Identifier: GPL-2.0
/*
 * A session's connections ("flows"), from the sender's side. Each message
 * goes on the established connection with the least on its way: sent and
 * not acknowledged, or chosen and not sent yet. A connection that a censor
 * polices or starves is acknowledged slowly or not at all, so it has more
 * and more on its way and gets less and less; one from which nothing at
 * all came for two round trips while its data waited gets none while
 * another may, so that the inner TCP does not resend into a black hole
 * what it lost there. Small messages (the inner TCP's ACKs, pings) go
 * where an acknowledgment is owed, so that a request's answer comes back
 * on the connection the request came on.
 *
 * Every FTV_FLOW_CHECK_MS while joins are up, each end gives up the gaps
 * that losses left in what it received on each connection (which new data
 * would otherwise prompt, faketcp.c), acknowledges with a sealed keepalive
 * the data it got on a connection and has not answered there, asks with
 * one for the acknowledgment of data that has waited two round trips (if
 * a policer dropped only the tail of that data, the peer has seen nothing
 * missing, and would never answer), and the initiator looks for a
 * connection whose data is still unanswered max(2 x SRTT,
 * FTV_FLOW_STALL_MIN_MS) after that first ask, while another one of the
 * session was answered (plus the time the peer takes to acknowledge past
 * a loss, so that a lossy connection is not taken for a stalled one).
 * Such a connection gets no more data: a join is retired
 * (conn.c), the responder is told, and the connect work opens a join in
 * its place; the opener, which cannot be replaced without a key exchange,
 * is left out of the choice, and a new session is
 * asked for. Only sealed messages move these numbers: a segment without a
 * valid tag changes nothing here.
 *
 * Everything here reads a session's list of established connections under
 * RCU; nothing here changes a connection's state (conn.c does).
 */

#include "flow.h"
#include "log.h"
#include "conn.h"
#include "connect.h"
#include "control.h"
#include "device.h"
#include "peer.h"
#include "send.h"
#include "session.h"
#include "timers.h"

#include <linux/ftv.h>
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/timer.h>

/* What @c has on its way, in bytes: a segment not sent yet counts as a
 * full one.
 */
static u32 flow_load(const struct ftv_conn *c)
{
	return (u32)atomic_read(&c->snd_nxt) - (u32)atomic_read(&c->snd_una) +
	       (u32)atomic_read(&c->queued) * FTV_FLOW_SEGMENT;
}

/* Bytes @c sent since it was established. */
static u32 flow_sent(const struct ftv_conn *c)
{
	return (u32)atomic_read(&c->snd_nxt) - READ_ONCE(c->snd_start);
}

/**
 * ftv_flow_received - what the peer sent on @c that arrived
 * @c: an established connection
 *
 * Return: the payload bytes of the messages that opened on it since it
 * was established: what a censor that counts bytes towards us has seen
 * on it, less the headers and what was lost past the censor. Not the
 * TCP stream's length, which the sequence numbers say and anyone on the
 * path could make larger.
 */
u32 ftv_flow_received(const struct ftv_conn *c)
{
	return READ_ONCE(c->rx_auth) - READ_ONCE(c->rx_auth_start);
}

/* Whether @c, a responder's connection with a budget, has room for a
 * message of @len inner bytes and the repair messages FEC sends with it at
 * @k:@m (0 for none): what it sent, what is queued for it (repair
 * messages too: they have not moved snd_nxt yet), each segment's overhead
 * (a superpacket's segments are at most FTV_FLOW_SEGMENT long), and each
 * repair message as long as a segment.
 */
static bool flow_room(const struct ftv_conn *c, u32 budget, unsigned int len,
		      u8 k, u8 m)
{
	unsigned int segs = max(1U, DIV_ROUND_UP(len, FTV_FLOW_SEGMENT));
	u32 cost = len + segs * FTV_FLOW_OVERHEAD;

	cost += ftv_fec_repairs(segs, k, m) *
		(FTV_FLOW_SEGMENT + FTV_FLOW_OVERHEAD);
	return flow_sent(c) + (u32)atomic_read(&c->queued) *
	       (FTV_FLOW_SEGMENT + FTV_FLOW_OVERHEAD) + cost <= budget;
}

/**
 * ftv_flow_may_send - whether @c may carry @len more bytes now
 * @c: an established connection
 * @len: a message's inner length
 *
 * Not before a join's first message went (ftv_control_send_opening()): a
 * censor judges a connection by it. Not once the initiator found it stalled or
 * spent; on the responder, not past the budget the initiator gave it: a
 * censor that freezes a connection after so many bytes towards the client
 * never sees it cross.
 */
bool ftv_flow_may_send(const struct ftv_conn *c, unsigned int len)
{
	u32 budget = READ_ONCE(c->budget);

	/* Pairs with the release in ftv_conn_join_opened(): a message
	 * queued after this is queued after the opening.
	 */
	if (unlikely(smp_load_acquire(&c->opening)))
		return false;
	if (c->is_initiator)
		return !READ_ONCE(c->stalled) && !READ_ONCE(c->spent);
	return !budget || flow_room(c, budget, len, 0, 0);
}

/**
 * ftv_flow_repairs_fit - whether FEC's repair messages for a message of
 *	@len inner bytes fit in @c's budget too
 * @c: the connection ftv_flow_pick() chose for it
 * @len: its inner length
 * @k: K of the repairs FEC planned for it (ftv_fec_plan())
 * @m: their M
 *
 * Repair messages cross a censor's byte count like any other: before
 * they counted, a connection of a lossy session went past its budget by
 * what FEC added. A message they do not fit goes without them (the last
 * of a connection's budget, or repairs for a loss so high that one packet
 * and its repairs are more than a budget). The K:M is the one the message
 * goes with: until 2026-12-02 it was the session's last, and the first
 * message after the peer's loss rose (a new session's, 0:0 before) took
 * a connection past its budget by seven repair messages.
 */
bool ftv_flow_repairs_fit(const struct ftv_conn *c, unsigned int len, u8 k,
			  u8 m)
{
	u32 budget = READ_ONCE(c->budget);

	return c->is_initiator || !budget || flow_room(c, budget, len, k, m);
}

/* Whether a message with a packet sent on @c is not reported yet: the
 * peer's keepalives on @c say which counters arrived there (struct
 * ftv_msg_ack), where nobody on the path can change it, as the TCP
 * header's acknowledgment number could be.
 */
static bool flow_unreported(const struct ftv_conn *c)
{
	return READ_ONCE(c->data_high) > READ_ONCE(c->acked_high);
}

/* The session's round trip for judging its connections: what the
 * peer's keepalives' echoes measure, never the TCP timestamps, which
 * anyone on the path could change (a round trip made 5 s long put a stall
 * verdict off by 10 s). Before the first echo it is 0: the first ask
 * goes at the next check and brings one, and a verdict needs another
 * connection's report after its patience, which a long path delays as
 * much.
 */
static u32 flow_srtt_ms(const struct ftv_session *s)
{
	return READ_ONCE(s->ack_srtt_ms);
}

/* How long a connection of @s may wait without a word before it looks
 * cut off: twice the session's round trip and a check more.
 */
static unsigned long flow_suspect_wait(const struct ftv_session *s)
{
	return msecs_to_jiffies(2 * flow_srtt_ms(s) + FTV_FLOW_CHECK_MS);
}

/* Whether @c looks cut off: its data has waited for @wait
 * (flow_suspect_wait()) and the peer reported none of it, while another
 * connection of the session had its reported. It gets no new data while
 * another may (ftv_flow_pick()): the inner TCP would send its
 * retransmissions into the same hole, and lose them again. A policed or
 * lossy connection still brings some of our messages, which the peer
 * reports, and is not taken for one; one that brings the peer's own
 * segments and none of ours is (until 2026-12-02 anything heard on it
 * counted, and a one-way hole, or a path that forged the acknowledgment
 * numbers, kept it chosen). The stall verdict (flow_overdue()) waits
 * longer, to be sure.
 */
static bool flow_suspect(const struct ftv_conn *c, unsigned long now,
			 unsigned long wait)
{
	unsigned long since = READ_ONCE(c->reported_since);

	return time_after(now, since + wait) &&
	       time_after(READ_ONCE(c->session->acked_at), since) &&
	       flow_unreported(c);
}

/**
 * ftv_flow_pick - the connection of @conn's session to send a message on
 * @conn: the peer's current connection, under RCU (bottom halves off)
 * @len: the message's inner length
 *
 * Return: the established connection with the least on its way, in turn
 * among equals, and one that does not look cut off (flow_suspect()) if
 * there is one; for a small message, one that owes an acknowledgment if
 * there is one. @conn when its session has no join up and no budget
 * applies to it; NULL when every connection has carried its budget.
 */
struct ftv_conn *ftv_flow_pick(struct ftv_conn *conn, unsigned int len)
{
	struct ftv_session *s = conn->session;
	bool small = len <= FTV_FLOW_SMALL;
	struct ftv_conn *best = NULL, *c;
	unsigned int i, start, rank, best_rank = 0;
	unsigned long now = jiffies, wait;
	u32 least = U32_MAX, load;

	if (!READ_ONCE(s->joins_up) && !READ_ONCE(conn->budget) &&
	    !READ_ONCE(conn->spent))
		return conn;
	wait = flow_suspect_wait(s);
	start = atomic_inc_return(&s->pick);
	for (i = 0; i < FTV_SESSION_FLOWS; i++) {
		c = rcu_dereference_bh(s->up[(start + i) % FTV_SESSION_FLOWS]);
		if (!c || !ftv_flow_may_send(c, len))
			continue;
		/* What matters first, then next, before the load. */
		rank = 2 * !flow_suspect(c, now, wait) +
		       (small && READ_ONCE(c->owes));
		if (rank < best_rank)
			continue;
		load = flow_load(c);
		if (rank > best_rank || load < least) {
			best = c;
			least = load;
			best_rank = rank;
		}
	}
	if (!best && READ_ONCE(conn->state) != FTV_CONN_ESTABLISHED)
		return conn;
	return best;
}

/**
 * ftv_flow_data_sent - @conn sent a message that carries a packet
 * @conn: the connection
 * @end: one past the last counter it went with
 *
 * Starts the stall clock if nothing was waiting for the peer's report.
 * Keepalives do not: the peer owes them nothing.
 */
void ftv_flow_data_sent(struct ftv_conn *conn, u64 end)
{
	if (!flow_unreported(conn))
		WRITE_ONCE(conn->reported_since, jiffies);
	if (end > READ_ONCE(conn->data_high))
		WRITE_ONCE(conn->data_high, end);
}

/**
 * ftv_flow_ack_fill - what a keepalive on @conn says
 * @conn: the connection it goes on
 * @msg: the message, its type set
 */
void ftv_flow_ack_fill(struct ftv_conn *conn, struct ftv_msg_ack *msg)
{
	u64 high = READ_ONCE(conn->rx_high);
	u32 echo = READ_ONCE(conn->ack_echo);

	msg->tsval = cpu_to_le32(ftv_conn_tsval(conn));
	msg->high = cpu_to_le64(high);
	if (echo) {
		msg->echo = cpu_to_le32(echo);
		msg->held = cpu_to_le32(jiffies_to_msecs(jiffies -
					READ_ONCE(conn->ack_echo_at)));
	}
	if (READ_ONCE(conn->report_due))
		WRITE_ONCE(conn->report_due, false);
}

/* A round trip from a keepalive's echo: our clock now, less the echoed
 * time, less what the peer held it. Only sealed numbers go into it.
 */
static void flow_ack_rtt(struct ftv_conn *conn, const struct ftv_msg_ack *msg)
{
	struct ftv_session *s = conn->session;
	u32 echo = le32_to_cpu(msg->echo), held = le32_to_cpu(msg->held);
	u32 rtt, srtt;

	if (!echo || held > FTV_FLOW_ECHO_MAX_MS)
		return;
	rtt = ftv_conn_tsval(conn) - echo - held;
	if (rtt > FTV_FLOW_ECHO_MAX_MS)
		return;
	srtt = READ_ONCE(s->ack_srtt_ms);
	/* 0 means none: a round trip under a millisecond counts as one. */
	rtt = max(rtt, 1U);
	WRITE_ONCE(s->ack_srtt_ms, srtt ? (7 * srtt + rtt) / 8 : rtt);
}

/**
 * ftv_flow_ack_received - a keepalive of the peer's opened on @conn
 * @conn: the connection, from its session's serial receive step
 * @msg: what it says
 *
 * It says which of our messages arrived on @conn, and gives a round trip
 * sample: what the initiator's stall verdict is made of. One that asks
 * is answered at once, on @conn: the peer waits for it, and this end's
 * tick may not run (a responder whose joins never came up).
 */
void ftv_flow_ack_received(struct ftv_conn *conn, const struct ftv_msg_ack *msg)
{
	u64 high = le64_to_cpu(msg->high);
	unsigned long now = jiffies;

	/* Never past what went: a report beyond it is no evidence. */
	high = min_t(u64, high, atomic64_read(&conn->session->send_counter));
	if (high > READ_ONCE(conn->acked_high)) {
		WRITE_ONCE(conn->acked_high, high);
		WRITE_ONCE(conn->reported_since, now);
		if (READ_ONCE(conn->session->acked_at) != now)
			WRITE_ONCE(conn->session->acked_at, now);
	}
	flow_ack_rtt(conn, msg);
	WRITE_ONCE(conn->ack_echo, le32_to_cpu(msg->tsval) ?: 1);
	WRITE_ONCE(conn->ack_echo_at, now);
	if ((msg->flags & FTV_ACK_F_ASK) &&
	    READ_ONCE(conn->state) == FTV_CONN_ESTABLISHED &&
	    ftv_flow_may_send(conn, 0))
		ftv_control_send_keepalive(conn);
}

/* How long @c's data may wait for the peer's report: twice the session's
 * smoothed round trip (flow_srtt_ms()), at least FTV_FLOW_STALL_MIN_MS,
 * plus the peer's tick, on which it reports, and our own to see it, and
 * FTV_TCP_GAP_MS more: until 2026-12-02 the verdict waited for TCP
 * acknowledgments, which wait that long past a gap (faketcp.c), and a
 * report is not let come any sooner to be judged.
 */
static unsigned long flow_patience(const struct ftv_conn *c)
{
	u32 ms = 2 * flow_srtt_ms(c->session);

	return msecs_to_jiffies(max_t(u32, ms, FTV_FLOW_STALL_MIN_MS) +
				FTV_TCP_GAP_MS + 2 * FTV_FLOW_CHECK_MS);
}

/* Whether @c's data has waited, unanswered, longer than @wait
 * (flow_suspect_wait()): time to ask the peer with a keepalive, whatever
 * else came on it.
 */
static bool flow_unanswered(const struct ftv_conn *c, unsigned long now,
			    unsigned long wait)
{
	return flow_unreported(c) &&
	       time_after(now, READ_ONCE(c->reported_since) + wait);
}

/* Ask the peer, with a keepalive on @c, to acknowledge what it got there;
 * the first ask since @c's data began to wait starts the stall clock.
 */
static void flow_probe(struct ftv_conn *c, unsigned long now)
{
	if (!time_after(READ_ONCE(c->probed_at), READ_ONCE(c->reported_since)))
		WRITE_ONCE(c->probed_at, now);
	ftv_control_send_ask(c);
}

/* Whether @c's data has waited past its patience for the peer's report,
 * counted from the first keepalive that asked for it: a policer that
 * dropped the tail of what @c carried leaves the peer nothing new to
 * report until that keepalive arrives.
 */
static bool flow_overdue(const struct ftv_conn *c, unsigned long now)
{
	unsigned long probed = READ_ONCE(c->probed_at);

	return flow_unreported(c) &&
	       time_after(probed, READ_ONCE(c->reported_since)) &&
	       time_after(now, probed + flow_patience(c));
}

/* Whether @c owes the peer a report: a message of its opened there since
 * the last one, other than a keepalive that asked nothing (or reports
 * would answer reports, on every connection, for ever).
 */
static bool flow_report_due(const struct ftv_conn *c)
{
	return READ_ONCE(c->report_due);
}

/* The budget the initiator gives its connections now: 0 for none. */
static u32 flow_budget(const struct ftv_peer *peer)
{
	u32 rotate = READ_ONCE(peer->rotate);

	if (rotate == FTV_ROTATE_OFF)
		return 0;
	if (rotate == FTV_ROTATE_AUTO)
		return READ_ONCE(peer->rotate_learned);
	return rotate;
}

/* One connection's share of @budget: drawn from its last quarter, so
 * that where connections end is no fingerprint of the setting.
 */
static u32 flow_draw(u32 budget)
{
	return budget - get_random_u32_below(budget / 4 + 1);
}

/* Whether the session's timer has work: joins, or budgets. */
static bool flow_watched(const struct ftv_conn *c)
{
	return READ_ONCE(c->session->joins_up) || READ_ONCE(c->budget) ||
	       (c->is_initiator && flow_budget(c->peer));
}

/**
 * ftv_flow_established - @conn became established (conn.c, which holds
 *	the device's conn_lock)
 * @conn: the connection
 *
 * Counts what it carries from here; a responder's connection takes the
 * budget the initiator last gave, until it is given its own.
 */
void ftv_flow_established(struct ftv_conn *conn)
{
	struct ftv_session *s = conn->session;

	WRITE_ONCE(conn->snd_start, (u32)atomic_read(&conn->snd_nxt));
	WRITE_ONCE(conn->rcv_start, ftv_faketcp_rcv_nxt(&conn->rcv));
	WRITE_ONCE(conn->rx_auth_start, READ_ONCE(conn->rx_auth));
	WRITE_ONCE(conn->heard_at, jiffies);
	WRITE_ONCE(conn->idle_asked_at, jiffies);
	WRITE_ONCE(conn->reported_since, jiffies);
	if (!conn->is_initiator)
		WRITE_ONCE(conn->budget, READ_ONCE(conn->peer->budget_told));
	if (flow_watched(conn) && !timer_pending(&s->flow_timer))
		mod_timer(&s->flow_timer,
			  jiffies + msecs_to_jiffies(FTV_FLOW_CHECK_MS));
}

/**
 * ftv_flow_watch - have the session's tick run within a check
 * @s: a session, held by the caller, that has work for it (a join to
 *	open again that was held back)
 *
 * It runs once at least, and on for as long as it has work.
 */
void ftv_flow_watch(struct ftv_session *s)
{
	if (!timer_pending(&s->flow_timer))
		mod_timer(&s->flow_timer,
			  jiffies + msecs_to_jiffies(FTV_FLOW_CHECK_MS));
}

/**
 * ftv_flow_unusable - connections of @s that are up but wait to be
 *	replaced (stalled, spent, or past half their budget)
 * @s: an initiator's session
 *
 * Return: how many; the connect work opens as many joins more.
 */
unsigned int ftv_flow_unusable(struct ftv_session *s)
{
	unsigned int i, n = 0;
	struct ftv_conn *c;

	rcu_read_lock_bh();
	for (i = 0; i < FTV_SESSION_FLOWS; i++) {
		c = rcu_dereference_bh(s->up[i]);
		if (c && (READ_ONCE(c->stalled) || READ_ONCE(c->spent) ||
			  READ_ONCE(c->rotating)))
			n++;
	}
	rcu_read_unlock_bh();
	return n;
}

/**
 * ftv_flow_budget_given - the initiator gave a connection a budget
 * @conn: the responder's connection the message came on
 * @index: the connection's join number (0: the opener)
 * @budget: the bytes we may send on it
 *
 * It is also the budget of the connections that have none yet: those
 * that come up before their own message arrives.
 */
void ftv_flow_budget_given(struct ftv_conn *conn, u32 index, u32 budget)
{
	struct ftv_session *s = conn->session;
	struct ftv_conn *c;
	unsigned int i;

	if (conn->is_initiator)
		return;
	WRITE_ONCE(conn->peer->budget_told, budget);
	rcu_read_lock_bh();
	for (i = 0; i < FTV_SESSION_FLOWS; i++) {
		c = rcu_dereference_bh(s->up[i]);
		if (c && c->join_index == index) {
			WRITE_ONCE(c->budget, budget);
			break;
		}
	}
	rcu_read_unlock_bh();
}

/* Whether @a and @b bytes are about the same amount: the larger at most
 * a third over the smaller. Connections frozen by a byte count stalled
 * within an eighth of each other in every run seen (12.9-15.9 KB under
 * a 16 KB freeze); a factor of two let two connections taken for stalled
 * behind a per-connection policer (16.2 and 28.9 KB, CI-like run of
 * 2026-12-01) teach a 12 KB budget, and the session then churned
 * through nearly a thousand connections.
 */
static bool flow_alike(u32 a, u32 b)
{
	u64 lo = min(a, b), hi = max(a, b);

	return 3 * hi <= 4 * lo;
}

/* The budget two freezes after @before and @carried bytes teach: three
 * quarters of the smaller, or 0 if they are not alike.
 */
static u32 flow_freeze_budget(u32 before, u32 carried)
{
	if (!before || !flow_alike(before, carried))
		return 0;
	return max_t(u32, min(before, carried) / 4 * 3, FTV_ROTATE_MIN);
}

/* Auto: learn from what connections that froze had carried. A censor
 * that counts bytes freezes every connection after about as many; one
 * connection that stalled once may have met anything else (a policer's
 * burst of drops, a path that went, our own CPU held up), so the budget
 * is learned only when a second freeze within FTV_FLOW_FREEZE_WINDOW_S,
 * after about as many bytes (flow_alike()), confirms the first. One
 * that carried FTV_FLOW_LEARN_MAX or more was not cut by such a censor,
 * and one that carried less than FTV_FLOW_LEARN_MIN had hardly begun and
 * would teach a budget that costs a connection per few kilobytes.
 */
static void flow_learn(struct ftv_peer *peer, u32 carried)
{
	u32 learned = READ_ONCE(peer->rotate_learned), before, budget;
	unsigned long now = jiffies, then;

	if (READ_ONCE(peer->rotate) != FTV_ROTATE_AUTO ||
	    carried < FTV_FLOW_LEARN_MIN || carried >= FTV_FLOW_LEARN_MAX)
		return;
	before = READ_ONCE(peer->froze_after);
	then = READ_ONCE(peer->froze_at);
	WRITE_ONCE(peer->froze_after, carried);
	WRITE_ONCE(peer->froze_at, now);
	budget = flow_freeze_budget(before, carried);
	if (!budget || time_after(now, then + FTV_FLOW_FREEZE_WINDOW_S * HZ))
		return;
	if (!learned || budget < learned) {
		WRITE_ONCE(peer->rotate_learned, budget);
		/* Rare (the budget only falls): not rate-limited. */
		ftv_dev_dbg(peer->device->dev, "peer %llu: connections froze after %u and %u bytes; budget %u\n",
			    peer->internal_id, before, carried, budget);
	}
}

/* The initiator's budgets: give each connection its share of the current
 * budget, anew when the budget fell below it; replace those past half of
 * theirs and give up those that carried it.
 */
static void flow_budgets(struct ftv_conn *c, u32 budget)
{
	u32 mine = READ_ONCE(c->budget), received;

	if (budget && (!mine || mine > budget)) {
		mine = flow_draw(budget);
		WRITE_ONCE(c->budget, mine);
		WRITE_ONCE(c->budget_told, false);
	}
	if (!mine)
		return;
	if (!READ_ONCE(c->budget_told)) {
		WRITE_ONCE(c->budget_told, true);
		ftv_control_send_budget(c);
	}
	received = ftv_flow_received(c);
	if (!READ_ONCE(c->rotating) && received >= mine / 2) {
		WRITE_ONCE(c->rotating, true);
		ftv_timers_want_connection(c->peer);
	}
	/* The responder stops short of the budget by up to a message (a
	 * superpacket does not fit): the last eighth counts as spent.
	 */
	if (!READ_ONCE(c->spent) &&
	    received + max_t(u32, 2 * FTV_FLOW_SEGMENT, mine / 8) >= mine)
		ftv_conn_spent(c);
}

/* The evidence for a stall verdict on @c, for the kernel log. */
static void flow_stall_log(const struct ftv_conn *c, unsigned long now)
{
	ftv_dev_dbg_ratelimited(c->device->dev, "peer %llu: connection %u stalled: data unanswered %u ms, asked %u ms ago, last heard %u ms ago, %u bytes on its way, %u received, srtt %u ms\n",
				c->peer->internal_id, c->join_index,
				jiffies_to_msecs(now - READ_ONCE(c->reported_since)),
				jiffies_to_msecs(now - READ_ONCE(c->probed_at)),
				jiffies_to_msecs(now - READ_ONCE(c->heard_at)),
				flow_load(c), ftv_flow_received(c),
				flow_srtt_ms(c->session));
}

/*
 * The @n of @s's @up connections whose data went unanswered: one stalled
 * while others were answered, a censor cut it. All of them at once, with
 * joins: a censor that cuts each after so many bytes, or a path that
 * went; what they carried tells.
 */
static void flow_give_up_stalled(struct ftv_session *s,
				 struct ftv_conn **stalled, unsigned int n,
				 unsigned int up, unsigned long now)
{
	struct ftv_conn *c;
	u32 carried = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		c = stalled[i];
		if (n == up && up > 1) {
			carried = max(carried, ftv_flow_received(c));
		} else if (time_after(READ_ONCE(s->acked_at),
				      READ_ONCE(c->probed_at) +
				      flow_patience(c))) {
			flow_learn(c->peer, ftv_flow_received(c));
		} else {
			continue;
		}
		flow_stall_log(c, now);
		ftv_conn_stalled(c);
	}
	if (carried)
		flow_learn(stalled[0]->peer, carried);
}

/* A keepalive acknowledges what @c owes; on one whose data waits
 * unanswered, it also asks. If a policer dropped only the tail of that
 * data, the peer, which saw nothing missing, now sees the gap, gives it
 * up and answers; from a black hole nothing answers.
 */
static void flow_check_speak(struct ftv_conn *c, bool reports,
			     unsigned long now, unsigned long wait)
{
	if (!ftv_flow_may_send(c, 0))
		return;
	if (reports && flow_unanswered(c, now, wait))
		flow_probe(c, now);
	else if (READ_ONCE(c->owes) || flow_report_due(c))
		ftv_control_send_keepalive(c);
}

/* The responder asks about each join of @s that has heard nothing for
 * FTV_FLOW_IDLE_ASK_MS while another connection of the session heard
 * something since (@heard, the latest), once per that time: a JOIN_GONE
 * lost on its way would otherwise leave a join the initiator gave up
 * counted up here, and chosen, until the session ends. Nothing is asked
 * while the peer is silent on all of them.
 */
static void flow_ask_idle(struct ftv_session *s, unsigned long heard,
			  unsigned long now)
{
	unsigned long idle = msecs_to_jiffies(FTV_FLOW_IDLE_ASK_MS);
	struct ftv_conn *c;
	unsigned int i;

	for (i = 0; i < FTV_SESSION_FLOWS; i++) {
		c = rcu_dereference_bh(s->up[i]);
		if (!c || c->is_initiator || !c->join_index ||
		    !time_after(heard, READ_ONCE(c->heard_at) + idle) ||
		    !time_after(now, READ_ONCE(c->idle_asked_at) + idle) ||
		    !ftv_flow_may_send(c, 0))
			continue;
		WRITE_ONCE(c->idle_asked_at, now);
		ftv_control_send_ask(c);
	}
}

/**
 * ftv_flow_check - the session's look at its connections
 * @timer: the session's flow_timer
 *
 * Re-arms itself while a join of the session is up; the session's release
 * waits it out.
 */
void ftv_flow_check(struct timer_list *timer)
{
	struct ftv_session *s = timer_container_of(s, timer, flow_timer);
	struct ftv_conn *c, *c_any = NULL, *stalled[FTV_SESSION_FLOWS];
	unsigned int i, up = 0, n = 0;
	unsigned long now = jiffies, wait = flow_suspect_wait(s);
	/* A peer that predates reports is judged by nothing here: its
	 * data would always look unreported.
	 */
	bool reports = READ_ONCE(s->peer_reports);
	bool watched = false, late;
	unsigned long heard = now - MAX_JIFFY_OFFSET / 2;

	late = time_after(now, READ_ONCE(s->checked_at) +
			  msecs_to_jiffies(FTV_FLOW_CHECK_LATE_MS));
	WRITE_ONCE(s->checked_at, now);
	rcu_read_lock_bh();
	for (i = 0; i < FTV_SESSION_FLOWS; i++) {
		c = rcu_dereference_bh(s->up[i]);
		if (!c)
			continue;
		c_any = c;
		watched |= flow_watched(c);
		if (time_after(READ_ONCE(c->heard_at), heard))
			heard = READ_ONCE(c->heard_at);
		/* The peer's last data may have come past a loss. */
		if (ftv_faketcp_rcv_expire(&c->rcv, now))
			WRITE_ONCE(c->owes, true);
		/* Every connection has its budget, one that is overdue too:
		 * until 2026-12-02 an overdue one was given none, and the
		 * responder sent on it without a limit while the verdict
		 * waited.
		 */
		if (c->is_initiator && !READ_ONCE(c->stalled)) {
			up++;
			flow_budgets(c, flow_budget(c->peer));
			if (reports && !late && !READ_ONCE(c->spent) &&
			    flow_overdue(c, now))
				stalled[n++] = c;
		}
		flow_check_speak(c, reports, now, wait);
	}
	flow_give_up_stalled(s, stalled, n, up, now);
	flow_ask_idle(s, heard, now);
	/* A join wanted and held back to keep to the peer's rate. */
	if (READ_ONCE(s->joins_deferred) && c_any) {
		WRITE_ONCE(s->joins_deferred, false);
		ftv_timers_want_connection(c_any->peer);
	}
	rcu_read_unlock_bh();
	if (watched)
		mod_timer(&s->flow_timer,
			  now + msecs_to_jiffies(FTV_FLOW_CHECK_MS));
}

#ifdef DEBUG
#include "selftest/flow.c"
#endif
