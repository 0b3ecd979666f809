/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A session: one key exchange and everything that hangs off its keys.
 * A session is counted: each connection that carries it holds a
 * reference (conn->session). For now each connection creates its own,
 * and is its only holder; the count is there so that several fake TCP
 * connections can come to share one (docs/design-flows.md).
 */

#ifndef _FTV_SESSION_H
#define _FTV_SESSION_H

#include "cell.h"
#include "fec.h"
#include "join.h"
#include "noise.h"
#include "queue.h"
#include "reorder.h"
#include "replay.h"
#include "shape.h"

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/skbuff.h>
#include <linux/siphash.h>
#include <linux/timer.h>

struct crypto_aead;
struct ftv_conn;

/**
 * struct ftv_session - the keys of one key exchange, and what uses them
 * @keyed: the keys are set (ftv_session_keyed())
 * @confirmed: the peer proved it has the keys (for the initiator, the
 *	response did; for the responder, the first data)
 * @send_counter: next nonce for @send_tfm
 * @send_tfm: AEAD keyed for our direction
 * @recv_tfm: AEAD keyed for the peer's direction
 * @send_hp: masks the counters we send
 * @recv_hp: unmasks the counters we receive
 * @join_key: makes the tokens of the connections that join the session
 * @replay: replay window for @recv_tfm's counters
 * @handshake: key exchange state while it runs
 * @init_msg: initiator: the prepared initiation payload, shaped if the
 *	device shapes openings (shape.c)
 * @init_len: its length on the wire
 * @early: initiator: payloads that arrived before the response and may be
 *	data that overtook it; opened once the keys are installed
 * @tx_queue: jobs being sealed, in the order they are to leave
 * @rx_queue: jobs being opened, in the order they are to be delivered
 * @cell: the device's NAPI cell the session delivers through
 * @fec: forward error correction (fec.c)
 * @established: jiffies when the keys were installed, for the renewal
 *	and reject limits
 * @dev: the device, for the debug messages that count sessions
 * @join: responder: the join tokens it expects, once the initiator's
 *	hello said it will open joins; changed under the device's conn_lock
 * @opener: the connection that opened the session, while it is live;
 *	under the device's conn_lock (joins find their peer through it)
 * @joins: connections that joined the session and are live, under the
 *	device's conn_lock; at most FTV_JOINS_MAX
 * @live_joins: those joins, listed (ftv_conn.join_entry), likewise
 * @joins_up: those of them that are established, likewise
 * @join_next: initiator: the number the next join takes, under the
 *	peer's lock
 * @joins_lost: initiator: joins given up in a row without an answer, up
 *	to FTV_JOIN_AHEAD, when the responder expects none of the next
 *	numbers and no join is opened any more; under the device's
 *	conn_lock
 * @joins_deferred: initiator: a join it wanted was not opened, to keep
 *	to the peer's rate (FTV_JOIN_RATE); its tick asks again
 * @peer_reports: the peer's hello said that it reports what came on
 *	each connection in its keepalives (FTV_HELLO_F_BOUND): only then
 *	are its connections judged by them (flow.c)
 * @peer_takes_joins: initiator: the responder's hello said it takes joins
 *	bound to their numbers (FTV_HELLO_F_JOINS and FTV_HELLO_F_BOUND)
 * @peer_reads_openings: the peer's hello said that it reads a join's first
 *	message shaped, and answers a join it takes at once
 * @up: the session's connections that are established (its opener and
 *	its joins), in no order; written under the device's conn_lock,
 *	read under RCU by the sender's choice (ftv_flow_pick())
 * @pick: turns the choice among equals
 * @reorder_lock: guards @reorder
 * @reorder: received messages put back in counter order, once a join of
 *	the session is up (NULL before; reorder.c)
 * @reorder_gap: the counter a gap was waited for when @reorder_timer was
 *	armed
 * @reorder_timer: gives a gap up after FTV_REORDER_HOLD_MS
 * @acked_at: jiffies when a keepalive of the peer's last reported a new
 *	message of ours arrived, on any of the session's connections
 *	(flow.c)
 * @ack_srtt_ms: the round trip the peer's keepalives' echoes measure,
 *	smoothed; 0 before the first (flow.c)
 * @flow_timer: looks at the connections while a join is up (flow.c)
 * @checked_at: jiffies of @flow_timer's last run (flow.c)
 * @jobs: holds on the session's queues: each queued job's, and a crypt
 *	worker's while it marks a job done (queue.c); the keys and the
 *	session wait for zero
 * @refcount: held by each connection that carries the session
 */
struct ftv_session {
	bool keyed;
	bool confirmed;
	atomic64_t send_counter;
	struct crypto_aead *send_tfm;
	struct crypto_aead *recv_tfm;
	siphash_key_t send_hp;
	siphash_key_t recv_hp;
	siphash_key_t join_key;
	struct ftv_replay replay;
	struct ftv_handshake handshake;
	u8 init_msg[FTV_SHAPED_LEN(FTV_INIT_MAX)];
	unsigned int init_len;
	struct sk_buff_head early;
	struct ftv_serial tx_queue;
	struct ftv_serial rx_queue;
	struct ftv_cell *cell;
	struct ftv_fec_conn fec;
	unsigned long established;
	struct net_device *dev;
	struct ftv_join_window join;
	struct ftv_conn *opener;
	unsigned int joins;
	struct list_head live_joins;
	unsigned int joins_up;
	u32 join_next;
	unsigned int joins_lost;
	bool joins_deferred;
	bool peer_reports;
	bool peer_takes_joins;
	bool peer_reads_openings;
	struct ftv_conn __rcu *up[FTV_SESSION_FLOWS];
	atomic_t pick;
	spinlock_t reorder_lock; /* the ring below */
	struct ftv_reorder *reorder;
	u64 reorder_gap;
	struct timer_list reorder_timer;
	unsigned long acked_at;
	u32 ack_srtt_ms;
	struct timer_list flow_timer;
	unsigned long checked_at;
	atomic_t jobs;
	struct kref refcount;
};

/**
 * struct ftv_session_links - what a session is given when it is set up
 * @cell: the NAPI cell to deliver through
 * @cpu: the CPU that hands sealed jobs on
 * @fec_stats: the peer's FEC counters
 * @fec_setting: the peer's FEC setting
 * @fec_rx_count: the device's count of FEC receive states
 * @dev: the device, for FEC's messages
 * @local_port: our outer port, for FEC's messages
 * @remote_port: the peer's outer port, likewise
 */
struct ftv_session_links {
	struct ftv_cell *cell;
	int cpu;
	struct ftv_fec_stats *fec_stats;
	const u32 *fec_setting;
	atomic_t *fec_rx_count;
	struct net_device *dev;
	__be16 local_port;
	__be16 remote_port;
};

struct ftv_session *ftv_session_create(const struct ftv_session_links *links,
				       gfp_t gfp);
struct ftv_session *ftv_session_get(struct ftv_session *s);
void ftv_session_put(struct ftv_session *s);
int ftv_session_prepare_keys(struct ftv_session *s);
int ftv_session_set_keys(struct ftv_session *s, struct ftv_session_keys *keys);
void ftv_session_wipe_keys(struct ftv_session *s);
void ftv_session_started(struct ftv_session *s);
bool ftv_session_rekey_due(const struct ftv_session *s, u64 counter);
bool ftv_session_expired(const struct ftv_session *s, u64 counter);
void ftv_session_deliver(struct ftv_session *s, u64 counter,
			 struct sk_buff *skb, struct sk_buff_head *deliver);
void ftv_session_deliver_done(struct ftv_session *s);

static inline bool ftv_session_keyed(const struct ftv_session *s)
{
	/* Pairs with the release in ftv_session_set_keys(). */
	return smp_load_acquire(&s->keyed);
}

#endif /* _FTV_SESSION_H */
