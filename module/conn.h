/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_CONN_H
#define _FTV_CONN_H

#include "faketcp.h"
#include "session.h"

#include <linux/in6.h>
#include <linux/rhashtable-types.h>
#include <net/dst_cache.h>
#include <linux/skbuff.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

struct ftv_device;
struct ftv_peer;
struct ftv_segment;
struct socket;

/*
 * A connection's life; conn.c is the only writer, under the device's
 * conn_lock (the table at the top of conn.c says who moves it where).
 */
enum ftv_conn_state {
	FTV_CONN_NEW,			/* allocated, nobody can find it */
	FTV_CONN_SYN_SENT,		/* initiator, waiting for SYN-ACK */
	FTV_CONN_HANDSHAKE_SENT,	/* initiator, waiting for the response */
	FTV_CONN_RESPONDING,		/* responder, response not yet sent */
	FTV_CONN_JOIN_RECEIVED,		/* responder, a join: nothing opened
					 * on it yet
					 */
	FTV_CONN_ESTABLISHED,		/* keys in use */
	FTV_CONN_RETIRED,		/* replaced; still opens late data */
	FTV_CONN_LINGER,		/* keys gone; swallows late segments */
	FTV_CONN_DEAD,			/* unhashed; freed after a grace period */
};

/**
 * struct ftv_conn - one fake TCP connection and the session it carries
 * @hash: entry in ftv_device.conn_table, under its conn_lock
 * @peer_entry: entry in ftv_peer.conns, under the device's conn_lock
 * @gc_entry: entry in ftv_device.conn_joining while a join is coming
 *	up, then in ftv_device.conn_retired once retired, under the
 *	device's conn_lock
 * @join_entry: a join's entry in its session's list of live joins
 *	(ftv_session.live_joins), under the device's conn_lock
 * @retired_entry: entry in its peer's list of connections retired or
 *	lingering (ftv_peer.retired), under the device's conn_lock
 * @device: owning device; it waits for every connection to be freed
 *	before it goes (ftv_conn_wait_all())
 * @peer: peer the connection belongs to; the connection holds a
 *	reference on it, dropped when the connection is freed
 * @tuple: outer addresses and ports
 * @state: enum ftv_conn_state; written only by conn.c, under the
 *	device's conn_lock; read locklessly
 * @is_initiator: this side sent the SYN
 * @port: initiator: a kernel socket bound to our address and port, so
 *	that the host neither gives the port to a socket of its own nor
 *	has it already; NULL for a responder (the listen port)
 * @snd_nxt: sequence number of our next payload byte
 * @snd_una: the oldest of our bytes the peer has not acknowledged in an
 *	authenticated segment; ICMP errors must quote a byte from here on
 * @rcv: how much of the peer's data arrived; its ACK number goes into
 *	everything we send
 * @acked: that ACK number as of the last segment we sent
 * @ts_recent: latest timestamp value from an authenticated segment of
 *	the peer, echoed back
 * @ts_offset: random offset of our timestamp clock
 * @peer_mss: the MSS option of the peer's SYN or SYN-ACK, as routers on
 *	the path may have lowered it (0: none came); written before the
 *	connection is published, or under the device's conn_lock in
 *	SYN_SENT, and read by the sending path (path_room(), send.c)
 * @syn_tsval: initiator: the SYN's timestamp value, part of its token
 * @ip_id: IPv4 identification counter
 * @xmit_lock: keeps numbering and sending of segments in one order
 * @xmit_cpu: the CPU holding @xmit_lock, or -1
 * @dst_cache: the outer route
 * @rcv_first: sequence number of the peer's first payload byte: where the
 *	response starts, on an initiator's opener; where the first sealed
 *	message, the join's opening, starts, on a join (receive.c)
 * @session: the session this connection carries (session.c); the
 *	connection holds a reference on it, taken when it is created
 * @join_index: 0 for the connection that opened its session (its key
 *	exchange ran on it); the join's number for one that joined it
 * @queued: segments (repair messages included) the sender chose this
 *	connection for and that have not left yet (flow.c)
 * @heard_at: jiffies when an authenticated segment last came on it
 * @idle_asked_at: responder: jiffies when its join was last asked about
 *	for having heard nothing while the rest of its session did (flow.c)
 * @probed_at: jiffies of the first keepalive that asked the peer to
 *	report data waiting on it since @reported_since (flow.c)
 * @heard_ip: ftv_segment_ip_mark() of the last authenticated segment
 *	that began a receive job (0 before one), written by its serial
 *	step (open.c); what an ignored RST or FIN is set beside (receive.c)
 * @rx_sealed: payload bytes of the authenticated messages without a
 *	packet (padding, keepalives, control) that came on it, written
 *	only by its session's serial step (open.c), read by probes
 * @rx_auth: payload bytes of every authenticated message that came on
 *	it, written only by its session's serial step (open.c): what the
 *	peer sent on it that arrived, which no header field can inflate
 * @rx_auth_start: @rx_auth when it was established
 * @rx_high: one past the greatest counter that opened on it, written only
 *	by its session's serial step; our keepalives report it (flow.c)
 * @report_due: a message opened on it that the peer wants reported (any
 *	but a keepalive that did not ask) since our last keepalive there
 * @ack_echo: the timestamp of the peer's last keepalive that came on it,
 *	echoed in ours (struct ftv_msg_ack)
 * @ack_echo_at: jiffies when it came
 * @acked_high: the greatest @high the peer's keepalives on it reported:
 *	our messages below that arrived there or were passed over
 * @data_high: one past the counter of the last message with a packet
 *	sent on it (flow.c)
 * @reported_since: jiffies when @acked_high last moved, or when data went
 *	out with nothing waiting for a report before it (flow.c)
 * @owes: it received a packet that nothing sent on it acknowledged yet
 * @stalled: the initiator found it stalled; nothing new goes on it
 * @rotating: initiator: it carried half its @budget; a successor is wanted
 * @spent: initiator: it carried its @budget; nothing new goes on it
 * @probe_join: initiator: a probe's join, opened to learn whether a new
 *	connection gets through; spent from the start, and given up once up
 * @opening: a join whose first message (send.c, ftv_control_send_opening()) has
 *	not gone yet, or, on an initiator's, whose peer has not answered it
 *	yet (@answer_due): nothing else is sent on it before (flow.c)
 * @shape_opening: that first message goes shaped (shape.c)
 * @answer_due: initiator: a probe's join whose peer answers joins (its
 *	hello said so, when the SYN-ACK came); it waits on the device's
 *	joining list for the answer, and is given up without it
 * @budget: the bytes the responder may send on it, as the initiator
 *	drew them (0: no limit; flow.c)
 * @budget_told: initiator: @budget was told to the responder
 * @snd_start: @snd_nxt when it was established
 * @rcv_start: the ACK number when it was established
 * @jobs: queued jobs, and CPUs handing them on (queue.c); the
 *	connection's keys and memory are freed only once it is zero
 * @created: jiffies at creation, for timeouts
 * @retired_until: jiffies after which a retired connection's keys go
 * @linger_until: jiffies after which a lingering connection is freed
 * @gone_told: initiator: jiffies (| 1) when a retired join last told the
 *	responder again that it is gone (connect.c), 0 before
 * @keys_work: frees the keys of a retired connection after a grace period
 * @free_work: frees the connection after an RCU grace period
 */
struct ftv_conn {
	struct rhash_head hash;
	struct list_head peer_entry;
	struct list_head gc_entry;
	struct list_head join_entry;
	struct list_head retired_entry;
	struct ftv_device *device;
	struct ftv_peer *peer;
	struct ftv_tuple tuple;
	int state;
	bool is_initiator;
	struct socket *port;
	atomic_t snd_nxt;
	atomic_t snd_una;
	struct ftv_tcp_rcv rcv;
	atomic_t acked;
	atomic_t ts_recent;
	u32 ts_offset;
	u16 peer_mss;
	u32 syn_tsval;
	atomic_t ip_id;
	spinlock_t xmit_lock; /* segments leave in sequence order */
	int xmit_cpu;
	struct dst_cache dst_cache;
	u32 rcv_first;
	struct ftv_session *session;
	u32 join_index;
	atomic_t queued;
	unsigned long heard_at;
	unsigned long idle_asked_at;
	unsigned long probed_at;
	u32 heard_ip;
	u64 rx_sealed;
	u64 rx_auth;
	u64 rx_auth_start;
	u64 rx_high;
	bool report_due;
	u32 ack_echo;
	unsigned long ack_echo_at;
	u64 acked_high;
	u64 data_high;
	unsigned long reported_since;
	bool owes;
	bool stalled;
	bool rotating;
	bool spent;
	bool probe_join;
	bool opening;
	bool shape_opening;
	bool answer_due;
	bool budget_told;
	u32 budget;
	u32 snd_start;
	u32 rcv_start;
	atomic_t jobs;
	unsigned long created;
	unsigned long retired_until;
	unsigned long linger_until;
	unsigned long gone_told;
	struct rcu_work keys_work;
	struct rcu_work free_work;
};

int ftv_conn_table_init(struct ftv_device *fdev);
void ftv_conn_table_uninit(struct ftv_device *fdev);
struct ftv_conn *ftv_conn_create(struct ftv_device *fdev,
				 struct ftv_peer *peer,
				 const struct ftv_tuple *tuple,
				 struct ftv_session *session, gfp_t gfp);
void ftv_conn_free(struct ftv_conn *conn);
bool ftv_conn_synack(struct ftv_conn *conn, u32 ack, u32 seq,
		     const struct ftv_tcp_options *opts);
bool ftv_conn_install(struct ftv_conn *conn);
void ftv_conn_responded(struct ftv_conn *conn);
void ftv_conn_retire(struct ftv_conn *conn);
void ftv_conn_peer_joins(struct ftv_conn *conn);
void ftv_conn_kill(struct ftv_conn *conn);
void ftv_conn_kill_peer(struct ftv_peer *peer);
struct ftv_conn *ftv_conn_lookup(struct ftv_device *fdev,
				 const struct ftv_tuple *tuple);
void ftv_conn_gc(struct ftv_device *fdev);
void ftv_conn_reset_routes(struct ftv_device *fdev);
void ftv_conn_close_device(struct ftv_device *fdev);
void ftv_conn_wait_all(struct ftv_device *fdev);
u32 ftv_conn_tsval(const struct ftv_conn *conn);
bool ftv_conn_acked(struct ftv_conn *conn, u32 ack);
bool ftv_conn_sent_seq(const struct ftv_conn *conn, u32 seq);

/* A message opened on @conn that the peer wants to hear of (flow.c). */
static inline void ftv_conn_report_due(struct ftv_conn *conn)
{
	if (!READ_ONCE(conn->report_due))
		WRITE_ONCE(conn->report_due, true);
}

static inline bool ftv_tuple_equal(const struct ftv_tuple *a,
				   const struct ftv_tuple *b)
{
	return a->local_port == b->local_port &&
	       a->remote_port == b->remote_port && a->family == b->family &&
	       ipv6_addr_equal(&a->local, &b->local) &&
	       ipv6_addr_equal(&a->remote, &b->remote);
}

/**
 * ftv_conn_flows_up - how many connections carry @conn's session now
 * @conn: a peer's current connection, under RCU
 *
 * Return: 0 unless @conn is established; then 1 and its session's joins
 * that are up.
 */
static inline unsigned int ftv_conn_flows_up(const struct ftv_conn *conn)
{
	if (READ_ONCE(conn->state) != FTV_CONN_ESTABLISHED)
		return 0;
	return 1 + READ_ONCE(conn->session->joins_up);
}

#endif /* _FTV_CONN_H */
