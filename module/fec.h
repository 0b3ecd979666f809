/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_FEC_H
#define _FTV_FEC_H

#include "messages.h"

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/skbuff.h>
#include <linux/types.h>
#include <linux/workqueue.h>

/* The shortest lone packet FEC protects (send.c): a bare TCP
 * acknowledgment is shorter, and the next one makes good its loss.
 */
#define FTV_FEC_LONE_MIN 128

/* How far the greatest counter received must be past one that has not
 * come for the loss estimate to count it lost, unless it is 50 ms late
 * (fec.c): reordering on the path comes within it.
 */
#define FTV_FEC_LOSS_LAG 1024

struct ftv_fec_rx;
struct net_device;

/**
 * struct ftv_fec_config - a peer's FEC setting
 * @mode: enum ftv_fec_mode
 * @data: K, data segments per group (FTV_FEC_FIXED only)
 * @repair: M, repair segments per group (FTV_FEC_FIXED only)
 */
struct ftv_fec_config {
	u8 mode;
	u8 data;
	u8 repair;
};

/* A setting in one u32, so that it is read and written in one go (the
 * peer keeps it so, peer.c).
 */
static inline u32 ftv_fec_pack(u8 mode, u8 data, u8 repair)
{
	return mode | data << 8 | (u32)repair << 16;
}

static inline struct ftv_fec_config ftv_fec_unpack(u32 packed)
{
	struct ftv_fec_config cfg = {
		.mode = packed,
		.data = packed >> 8,
		.repair = packed >> 16,
	};

	return cfg;
}

/**
 * struct ftv_fec_stats - a peer's FEC counters
 * @repair_sent: repair messages sealed and sent
 * @rebuilt: data messages rebuilt from repair messages
 * @groups_lost: groups given up with data still missing
 * @last_peer_loss_ppm: the loss the peer last reported, and
 * @last_loss_ppm: the loss we last measured, on any of its connections:
 *	where a new connection's estimates start, so that a session renewal
 *	does not leave it unprotected while it measures again
 * @last_hold_ms: the hold on repairs found futile (judge_repairs()),
 *	which a new connection keeps, so that a renewal does not try them
 *	again at once
 */
struct ftv_fec_stats {
	atomic64_t repair_sent;
	atomic64_t rebuilt;
	atomic64_t groups_lost;
	u32 last_peer_loss_ppm;
	u32 last_loss_ppm;
	u32 last_hold_ms;
};

/**
 * struct ftv_fec_snapshot - a peer's FEC as ftvctl show gives it
 * @active: the current connection's peer knows FEC and the setting is
 *	not off; @k, @m and @loss_ppm are then its own
 * @k: K of the last group sent
 * @m: M of the last group sent
 * @loss_ppm: the loss the peer last reported
 * @repair_sent: the peer's counters (struct ftv_fec_stats)
 * @rebuilt: ditto
 * @groups_lost: ditto
 */
struct ftv_fec_snapshot {
	bool active;
	u8 k;
	u8 m;
	u32 loss_ppm;
	u64 repair_sent;
	u64 rebuilt;
	u64 groups_lost;
};

/**
 * struct ftv_fec_conn - FEC on one connection
 * @stats: the peer's counters; the connection holds the peer
 * @setting: the peer's setting (ftv_fec_pack()), read as it changes
 * @rx_count: the device's count of receive states; the device outlives
 *	its connections
 * @dev: the device, for messages
 * @local_port: the connection's local port, for messages
 * @remote_port: its remote port
 * @peer_has_fec: the peer's hello said it knows FEC, or a loss report
 *	from it did
 * @hellos_left: hellos this end may still repeat (ftv_fec_received());
 *	0 once a loss report shows that the peer heard one
 * @k: K of the last group sent (0: none), for ftvctl show
 * @m: M of the last group sent
 * @peer_loss_ppm: the loss the peer last reported, parts per million
 * @loss_ppm: the loss we see on what the peer sends (ppm, smoothed)
 * @interval_start: the last counter of the last loss interval judged;
 *	the current one is of the counters after it
 * @interval_began: jiffies when it began
 * @interval_seen: messages received with its counters
 * @greatest: the greatest counter received
 * @recent: which of the FTV_FEC_LOSS_LAG counters up to @greatest came
 *	(bit i: @greatest - i); those are not judged yet
 * @mark: @greatest when @mark_at was (loss_end())
 * @mark_at: jiffies of the last mark
 * @mark_ready: @mark of the mark before: counters up to it have had at
 *	least FTV_FEC_LOSS_WAIT_MS to come
 * @judge_lost: groups announced by repair messages that lost data, since
 *	repairs were last judged
 * @judge_rebuilt: those of them that repairs rebuilt
 * @judge_from: the first group counter judged: the one after the
 *	greatest received when the receive state was first used (0: not
 *	yet)
 * @gap_next: where the next look for runs of lost counters starts
 * @gap_run: counters in a row that never came, up to @gap_next
 * @hold_ms: how long loss reports say no loss once repairs are judged
 *	futile (0: they were not, or rebuilt since), growing each time
 * @held_until: jiffies until which they say so, if @hold_ms
 * @holding: a hold began and its end was not seen yet: the loss measured
 *	then starts afresh, without what the hold saw
 * @dropped_here: segments of the peer's this end dropped itself (its
 *	queues were full) since the last loss interval ended: not the path's
 *	loss (ftv_fec_dropped_here())
 * @dropped_left: of those, what no gap in the counters has shown yet: a
 *	dropped message is seen missing only once a later one comes, often
 *	in the next interval
 * @dropped_last: @dropped_here of the last interval
 * @judge_dropped: what this end dropped itself that no group judged
 *	(judge_repairs()) has been matched with yet: a group that lost its
 *	data, or a run of counters lost whole, to our own full queue says
 *	nothing of what repairs do on the path
 * @srtt_ms: smoothed round trip time, from TCP timestamps (also the
 *	stall rule's, flow.c: ftv_fec_srtt_ms())
 * @rx: received messages kept for rebuilding, allocated by @alloc_work
 *	once the first valid repair message arrives on a live connection
 *	that negotiated FEC with a peer this side lets use it (set once by
 *	@alloc_work; freed when the connection's keys go, once no receive
 *	job holds it, or with the connection)
 * @alloc_queued: @alloc_work was queued
 * @alloc_work: allocates @rx in process context
 *
 * The first six are set by ftv_fec_conn_init() and only read after.
 * Of the rest, everything but @k, @m and @peer_loss_ppm (the sending
 * side) belongs to the connection's receive serial step (queue.c), one
 * CPU at a time.
 */
struct ftv_fec_conn {
	struct ftv_fec_stats *stats;
	const u32 *setting;
	atomic_t *rx_count;
	struct net_device *dev;
	__be16 local_port;
	__be16 remote_port;
	bool peer_has_fec;
	u8 hellos_left;
	u8 k;
	u8 m;
	u32 peer_loss_ppm;
	u32 loss_ppm;
	u64 interval_start;
	unsigned long interval_began;
	u32 interval_seen;
	u64 greatest;
	DECLARE_BITMAP(recent, FTV_FEC_LOSS_LAG);
	u64 mark;
	unsigned long mark_at;
	u64 mark_ready;
	u32 judge_lost;
	u32 judge_rebuilt;
	u64 judge_from;
	u64 gap_next;
	unsigned int gap_run;
	u32 hold_ms;
	unsigned long held_until;
	bool holding;
	atomic_t dropped_here;
	u32 dropped_left;
	u32 dropped_last;
	atomic_t judge_dropped;
	u32 srtt_ms;
	struct ftv_fec_rx *rx;
	bool alloc_queued;
	struct work_struct alloc_work;
};

/* Receives a data message rebuilt from repair messages (fec.c). */
typedef void (*ftv_fec_rebuilt_t)(void *arg, u64 counter, struct sk_buff *skb);

void ftv_fec_snapshot(const struct ftv_fec_conn *fc, u32 setting,
		      struct ftv_fec_stats *st, struct ftv_fec_snapshot *snap);

void ftv_fec_conn_init(struct ftv_fec_conn *fc, struct ftv_fec_stats *st,
		       const u32 *setting, atomic_t *rx_count,
		       struct net_device *dev, __be16 local_port,
		       __be16 remote_port);
void ftv_fec_conn_uninit(struct ftv_fec_conn *fc);
void ftv_fec_conn_retire(struct ftv_fec_conn *fc);
void ftv_fec_plan(struct ftv_fec_conn *fc, unsigned int segs, u8 *k, u8 *m);
unsigned int ftv_fec_group_size(unsigned int n, unsigned int k,
				unsigned int g);
unsigned int ftv_fec_group_repair(unsigned int kg, unsigned int k,
				  unsigned int m);
unsigned int ftv_fec_repairs(unsigned int n, unsigned int k, unsigned int m);
struct sk_buff *ftv_fec_repair(struct sk_buff *const members[],
			       unsigned int kg, unsigned int mg,
			       unsigned int j, unsigned int headroom);
/* What ftv_fec_received() says is due to the peer. */
enum ftv_fec_due {
	FTV_FEC_DUE_LOSS = BIT(0),	/* a loss report */
	FTV_FEC_DUE_HELLO = BIT(1),	/* our hello, again */
};

unsigned int ftv_fec_received(struct ftv_fec_conn *fc, u64 counter,
			      u32 tsval, u32 tsecr, bool has_ts);
void ftv_fec_hello(struct ftv_fec_conn *fc, const struct sk_buff *skb);
void ftv_fec_dropped_here(struct ftv_fec_conn *fc, unsigned int segs);
void ftv_fec_loss_report(struct ftv_fec_conn *fc, const struct sk_buff *skb);
u32 ftv_fec_loss_to_report(const struct ftv_fec_conn *fc);
void ftv_fec_forget_loss(struct ftv_fec_conn *fc, u32 ppm);
void ftv_fec_keep(struct ftv_fec_conn *fc, u64 counter,
		  const struct sk_buff *skb, ftv_fec_rebuilt_t rebuilt,
		  void *arg);
void ftv_fec_rebuild(struct ftv_fec_conn *fc, bool live, u64 counter,
		     const struct sk_buff *skb, ftv_fec_rebuilt_t rebuilt,
		     void *arg);
void ftv_fec_expire(struct ftv_fec_conn *fc);

/* The smoothed round trip in ms, 0 before a sample; any context. */
static inline u32 ftv_fec_srtt_ms(const struct ftv_fec_conn *fc)
{
	return READ_ONCE(fc->srtt_ms);
}

#ifdef DEBUG
bool ftv_fec_loss_selftest(void);
#endif

#endif /* _FTV_FEC_H */
