/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One session over several connections: which connection a message goes
 * on, and which connection stopped working (flow.c).
 */

#ifndef _FTV_FLOW_H
#define _FTV_FLOW_H

#include <linux/types.h>

struct ftv_conn;
struct ftv_msg_ack;
struct ftv_session;
struct timer_list;

enum ftv_flow_limits {
	/* How often a session with joins up looks at its connections. */
	FTV_FLOW_CHECK_MS = 50,
	/* A connection whose data goes unanswered for twice the session's
	 * smoothed round trip, and at least this long, and FTV_TCP_GAP_MS
	 * and two checks more, after a keepalive asked for it, while another
	 * connection of its session is answered, is stalled.
	 */
	FTV_FLOW_STALL_MIN_MS = 200,
	/* A responder's join on which nothing came for this long, while
	 * the peer spoke on another connection of the session, is asked
	 * about, as often: a live one answers, and one the initiator gave
	 * up tells again that it is gone (its JOIN_GONE may have been
	 * lost).
	 */
	FTV_FLOW_IDLE_ASK_MS = 1000,
	/* A check this late says our own CPU was held up, not the path:
	 * no connection is judged on it.
	 */
	FTV_FLOW_CHECK_LATE_MS = 3 * FTV_FLOW_CHECK_MS,
	/* A message this small (an inner ACK, a ping) goes, if it can, on
	 * a connection that owes the peer an acknowledgment.
	 */
	FTV_FLOW_SMALL = 256,
	/* What a segment not sent yet counts for in a connection's load. */
	FTV_FLOW_SEGMENT = 1448,
	/* What a message costs on the wire beyond its inner bytes, at most
	 * (headers, the message's own, the tag), for the budgets.
	 */
	FTV_FLOW_OVERHEAD = 128,
	/* A connection that froze after carrying this much or more was not
	 * cut by a censor that counts bytes: rotate auto learns nothing.
	 */
	FTV_FLOW_LEARN_MAX = 1024 * 1024,
	/* Nor after carrying less than this: see flow_learn(). */
	FTV_FLOW_LEARN_MIN = 8192,
	/* rotate auto learns when a second freeze within this many seconds
	 * of the last comes after about as many bytes.
	 */
	FTV_FLOW_FREEZE_WINDOW_S = 60,
	/* A keepalive's echo held longer than this, or a round trip from
	 * one longer than this, is no round trip sample (FEC's bound on
	 * the timestamps' samples too).
	 */
	FTV_FLOW_ECHO_MAX_MS = 10000,
};

struct ftv_conn *ftv_flow_pick(struct ftv_conn *conn, unsigned int len);
bool ftv_flow_may_send(const struct ftv_conn *c, unsigned int len);
bool ftv_flow_repairs_fit(const struct ftv_conn *c, unsigned int len, u8 k,
			  u8 m);
void ftv_flow_data_sent(struct ftv_conn *conn, u64 end);
void ftv_flow_ack_fill(struct ftv_conn *conn, struct ftv_msg_ack *msg);
void ftv_flow_ack_received(struct ftv_conn *conn, const struct ftv_msg_ack *msg);
void ftv_flow_established(struct ftv_conn *conn);
void ftv_flow_watch(struct ftv_session *s);
unsigned int ftv_flow_unusable(struct ftv_session *s);
u32 ftv_flow_received(const struct ftv_conn *c);
void ftv_flow_budget_given(struct ftv_conn *conn, u32 index, u32 budget);
void ftv_flow_check(struct timer_list *timer);
bool ftv_flow_selftest(void);

#endif /* _FTV_FLOW_H */
