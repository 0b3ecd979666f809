// SPDX-License-Identifier: GPL-2.0
/*
 * Forward error correction for lossy paths: the engine on each connection
 * (struct ftv_fec_conn), and what ftvctl show says of it. The peer keeps
 * the setting (peer.c) and the counters; this file is given them when a
 * connection starts (ftv_fec_conn_init()) and knows nothing else of
 * peers, connections or devices.
 *
 * Sending: the inner GSO superpacket a transmit job carries (queue.c) is
 * cut into groups of at most K data messages, and each group gets
 * ceil(M * k / K) repair messages (fec_code.c), sealed like data, with
 * the counters that follow the group's data messages. Both kinds are
 * reserved together when the job is queued, so a group's counters are
 * consecutive: base .. base + k - 1 for its data, then its repairs. Only
 * the repair message says it is one, inside its sealed plaintext
 * (struct ftv_msg_repair).
 *
 * Receiving: data is delivered the moment it is opened, as always. While
 * the peer sends repair messages, each opened data message is also kept
 * in a ring of slots, by counter; a repair message names its group, and
 * as soon as enough of the group is there the missing data messages are
 * rebuilt and delivered, late but without waiting for anything else. A
 * group still missing data after about a round trip, or whose slots were
 * taken by newer messages, is given up (groups_lost).
 *
 * With "auto", each end measures the loss on what it receives (counters
 * that never arrived) and reports it every FTV_FEC_LOSS_INTERVAL messages
 * in a sealed control message (struct ftv_msg_loss); the sender picks K:M
 * from that, and sends no repair while the path is clean. Both ends must
 * know FEC: each says so in its first sealed message (ftv_fec_hello()),
 * and again with each loss interval until a loss report from the peer
 * shows that it heard (a lossy path loses hellos too, and a connection
 * whose hello was lost would go its whole life without repairs: at 5 %
 * loss, one in ten). A loss report also says that its sender knows FEC.
 * Toward a peer that does not, nothing changes but a few hellos.
 *
 * Repairs help against loss that strikes messages one by one, whatever
 * the rate. A censor's policer drops what exceeds its rate, in runs that
 * take a group's repair messages with its data, and repairs only add to
 * the rate it cuts: the inner TCP then loses more, and slows down. So
 * the receiving end judges what repairs achieve, over the groups they
 * announced: when they rebuild less than a quarter of the groups that
 * lost data, its loss reports say no loss for a while (a hold,
 * growing while repairs stay futile, until they rebuild half). Messages
 * no group covers (lone small ones, such as bare acknowledgments) do not
 * count: no repair was meant for them.
 */

#include "fec.h"
#include "log.h"
#include "fec_code.h"

#include <linux/ftv.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>

enum ftv_fec_limits {
	/* Messages kept for rebuilding; a group spans at most 80. */
	FTV_FEC_SLOTS = 128,
	/* Groups waiting for a missing message at once. */
	FTV_FEC_GROUPS = 16,
	/* Messages between two loss reports: at most the first, or the
	 * second once FTV_FEC_LOSS_PERIOD_MS have gone by, so that a slow
	 * flow (which loss makes slow) still gets its estimate in time.
	 */
	FTV_FEC_LOSS_INTERVAL = 1024,
	FTV_FEC_LOSS_INTERVAL_MIN = 128,
	FTV_FEC_LOSS_PERIOD_MS = 200,
	/* A counter that has not come this long after a later one did is
	 * judged, however few came since: a slow flow does not wait for
	 * FTV_FEC_LOSS_LAG messages. Jitter reorders by milliseconds.
	 */
	FTV_FEC_LOSS_WAIT_MS = 50,
	/* Hellos after the first, one per loss interval, while no loss
	 * report shows that the peer heard one: all eight lost is one
	 * chance in 10^8 at 10 % loss.
	 */
	FTV_FEC_HELLO_REPEATS = 8,
	/* Bounds of how long a group waits, around the round trip. */
	FTV_FEC_WAIT_MIN_MS = 10,
	FTV_FEC_WAIT_MAX_MS = 1000,
	/* Connections of one device that may keep received messages for
	 * rebuilding (about 194 KB each) at once; past that, a connection
	 * goes without rebuilding.
	 */
	FTV_FEC_RX_MAX = 128,
	/* Repairs are judged once this many of the groups they announced
	 * lost data; sooner when they were futile before.
	 */
	FTV_FEC_JUDGE_LOST = 8,
	/* Counters that never came, this many in a row between two groups
	 * a repair announced: a group lost whole, repairs and all (random
	 * loss of 10 % makes such a run once in 10^8).
	 */
	FTV_FEC_RUN = 8,
	/* How far behind the greatest counter received such runs are
	 * looked for: messages reordered on the path come by then.
	 */
	FTV_FEC_GAP_LAG = FTV_FEC_SLOTS / 2,
	FTV_FEC_JUDGE_LOST_AGAIN = 4,
	/* The hold on futile repairs: the first, and the longest; it
	 * grows fourfold each time they are found futile again.
	 */
	FTV_FEC_HOLD_MIN_MS = 2000,
	FTV_FEC_HOLD_MAX_MS = 128000,
};

enum ftv_fec_slot_kind {
	FTV_FEC_EMPTY,
	FTV_FEC_DATA,
	FTV_FEC_REPAIR,
};

/**
 * struct ftv_fec_slot - one received message kept for rebuilding
 * @counter: its counter
 * @len: its length (for a repair message, its block's)
 * @kind: enum ftv_fec_slot_kind
 * @index: a repair message's index in its group
 * @block: its bytes
 */
struct ftv_fec_slot {
	u64 counter;
	u16 len;
	u8 kind;
	u8 index;
	u8 block[FTV_FEC_MAX_LEN];
};

/**
 * struct ftv_fec_group - a group a repair message announced
 * @base: counter of its first data message
 * @k: its data messages
 * @m: its repair messages
 * @missing: data messages it lacked when last looked at, not counting
 *	those whose slots newer messages took (they may have come)
 * @pending: still missing data, not given up yet
 * @deadline: jiffies after which it is given up
 */
struct ftv_fec_group {
	u64 base;
	u8 k;
	u8 m;
	u8 missing;
	bool pending;
	unsigned long deadline;
};

/**
 * struct ftv_fec_rx - what the receive side keeps, per connection
 * @slot: messages by counter modulo FTV_FEC_SLOTS
 * @group: groups that may still be rebuilt
 */
struct ftv_fec_rx {
	struct ftv_fec_slot slot[FTV_FEC_SLOTS];
	struct ftv_fec_group group[FTV_FEC_GROUPS];
};

/*
 * What "auto" uses for a loss rate (after its margin): K:M such that, for
 * independent losses, at most about 2 in 10^5 data messages stay lost
 * after rebuilding (the binomial tail of each K + M). Inner TCP's rate
 * goes as 1 / sqrt(loss it sees), and each loss left halves its window:
 * that much keeps it near its lossless rate on a path of tens of ms.
 * A small group needs more than its share of M for that (a lone packet
 * with one repair message is lost with odds p^2): m_small is its least.
 * Slowed down by loss, TCP sends mostly small groups, and without it
 * stays slow.
 */
static const struct {
	u32 loss_ppm;
	u8 k;
	u8 m;
	u8 m_small;
} auto_table[] = {
	{ 100, 0, 0, 0 },
	{ 2000, 32, 2, 1 },
	{ 5000, 32, 3, 1 },
	{ 10000, 32, 4, 2 },
	{ 20000, 32, 5, 2 },
	{ 30000, 32, 7, 3 },
	{ 50000, 32, 9, 3 },
	{ 80000, 24, 10, 4 },
	{ 100000, 24, 12, 4 },
	{ 150000, 16, 13, 5 },
	{ U32_MAX, 16, 16, 7 },
};

/**
 * ftv_fec_snapshot - what ftvctl show says of a peer's FEC
 * @fc: the FEC state of the peer's current connection, or NULL
 * @setting: the peer's setting (ftv_fec_pack())
 * @st: the peer's counters
 * @snap: receives the figures
 *
 * The caller keeps @fc's connection from going for the call.
 */
void ftv_fec_snapshot(const struct ftv_fec_conn *fc, u32 setting,
		      struct ftv_fec_stats *st, struct ftv_fec_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	if (fc && READ_ONCE(fc->peer_has_fec) &&
	    ftv_fec_unpack(setting).mode != FTV_FEC_OFF) {
		snap->active = true;
		snap->k = READ_ONCE(fc->k);
		snap->m = READ_ONCE(fc->m);
		snap->loss_ppm = READ_ONCE(fc->peer_loss_ppm);
	}
	snap->repair_sent = atomic64_read(&st->repair_sent);
	snap->rebuilt = atomic64_read(&st->rebuilt);
	snap->groups_lost = atomic64_read(&st->groups_lost);
}

static void alloc_work(struct work_struct *work)
{
	struct ftv_fec_conn *fc = container_of(work, struct ftv_fec_conn,
					       alloc_work);
	struct ftv_fec_rx *rx;

	if (!atomic_add_unless(fc->rx_count, 1, FTV_FEC_RX_MAX))
		return;
	rx = kvzalloc(sizeof(*rx), GFP_KERNEL);
	if (!rx) {
		atomic_dec(fc->rx_count);
		return;
	}
	ftv_dev_dbg(fc->dev, "FEC state of %u:%u created\n",
		    ntohs(fc->local_port), ntohs(fc->remote_port));
	/* Pairs with the acquire in rx_of(). */
	smp_store_release(&fc->rx, rx);
}

/* Free the receive state, which no receive job uses any more. */
static void free_rx(struct ftv_fec_conn *fc)
{
	cancel_work_sync(&fc->alloc_work);
	if (fc->rx) {
		kvfree(fc->rx);
		fc->rx = NULL;
		atomic_dec(fc->rx_count);
		ftv_dev_dbg(fc->dev, "FEC state of %u:%u destroyed\n",
			    ntohs(fc->local_port), ntohs(fc->remote_port));
	}
}

/**
 * ftv_fec_conn_init - FEC state of a new connection
 * @fc: the connection's
 * @st: its peer's counters, which outlive the connection; the loss
 *	estimates start from the last ones of the peer's
 * @setting: its peer's setting (ftv_fec_pack()), read as it changes
 * @rx_count: its device's count of receive states (at most
 *	FTV_FEC_RX_MAX), which outlives the connection
 * @dev: its device, for messages
 * @local_port: the connection's local port, for messages
 * @remote_port: its remote port
 */
void ftv_fec_conn_init(struct ftv_fec_conn *fc, struct ftv_fec_stats *st,
		       const u32 *setting, atomic_t *rx_count,
		       struct net_device *dev, __be16 local_port,
		       __be16 remote_port)
{
	fc->stats = st;
	fc->setting = setting;
	fc->rx_count = rx_count;
	fc->dev = dev;
	fc->local_port = local_port;
	fc->remote_port = remote_port;
	fc->hellos_left = FTV_FEC_HELLO_REPEATS;
	INIT_WORK(&fc->alloc_work, alloc_work);
	fc->peer_loss_ppm = READ_ONCE(st->last_peer_loss_ppm);
	fc->loss_ppm = READ_ONCE(st->last_loss_ppm);
	fc->hold_ms = READ_ONCE(st->last_hold_ms);
	fc->held_until = jiffies + msecs_to_jiffies(fc->hold_ms);
	fc->holding = fc->hold_ms;
}

/**
 * ftv_fec_conn_uninit - free it
 * @fc: the FEC state of a connection nothing uses any more
 *
 * May sleep.
 */
void ftv_fec_conn_uninit(struct ftv_fec_conn *fc)
{
	free_rx(fc);
}

/**
 * ftv_fec_conn_retire - free a retired connection's receive state early
 * @fc: the FEC state of a connection that opens nothing any more: its
 *	keys are going, and no receive job holds it
 *
 * It would otherwise stay through the minute a connection lingers. May
 * sleep.
 */
void ftv_fec_conn_retire(struct ftv_fec_conn *fc)
{
	free_rx(fc);
}

static struct ftv_fec_config setting_of(const struct ftv_fec_conn *fc)
{
	return ftv_fec_unpack(READ_ONCE(*fc->setting));
}

/**
 * ftv_fec_plan - the K:M of a transmit job
 * @fc: its connection's FEC state
 * @segs: data messages in the job
 * @k: receives K, 0 for no repair at all
 * @m: receives M
 *
 * Only when both ends know FEC and the peer's setting is not off. The
 * caller has checked that every message of the job, and a repair message
 * as long, fit, and that a lone packet is worth protecting.
 */
void ftv_fec_plan(struct ftv_fec_conn *fc, unsigned int segs, u8 *k, u8 *m)
{
	struct ftv_fec_config cfg = setting_of(fc);
	u32 loss;
	int i;

	*k = 0;
	*m = 0;
	if (!segs || cfg.mode == FTV_FEC_OFF || !READ_ONCE(fc->peer_has_fec))
		return;
	if (cfg.mode == FTV_FEC_FIXED) {
		*k = cfg.data;
		*m = cfg.repair;
	} else {
		/* A margin over what was measured: loss comes in spells. */
		loss = READ_ONCE(fc->peer_loss_ppm);
		loss += loss / 2;
		for (i = 0; loss >= auto_table[i].loss_ppm; ++i)
			;
		*k = auto_table[i].k;
		*m = auto_table[i].m;
	}
	if (READ_ONCE(fc->k) != *k || READ_ONCE(fc->m) != *m) {
		WRITE_ONCE(fc->k, *k);
		WRITE_ONCE(fc->m, *m);
	}
}

/**
 * ftv_fec_group_size - data messages in one group of a job
 * @n: the job's data messages
 * @k: K
 * @g: the group's index
 *
 * A job's n messages make ceil(n / K) groups as even as can be, earlier
 * groups the larger.
 *
 * Return: the group's data messages.
 */
unsigned int ftv_fec_group_size(unsigned int n, unsigned int k,
				unsigned int g)
{
	unsigned int groups = DIV_ROUND_UP(n, k);

	return n / groups + (g < n % groups);
}

/**
 * ftv_fec_group_repair - repair messages of a group of @kg data messages
 * @kg: the group's data messages
 * @k: K
 * @m: M
 *
 * Return: ceil(M * kg / K), or for one of auto's K:M at least its
 * m_small, which a small group needs to be as safe as a whole one.
 */
unsigned int ftv_fec_group_repair(unsigned int kg, unsigned int k,
				  unsigned int m)
{
	unsigned int mg = DIV_ROUND_UP(m * kg, k), i;

	/* One of auto's K:M: a small group gets its least. */
	for (i = 1; i < ARRAY_SIZE(auto_table); ++i)
		if (auto_table[i].k == k && auto_table[i].m == m)
			mg = max_t(unsigned int, mg, auto_table[i].m_small);
	return min_t(unsigned int, mg, FTV_FEC_CODE_MAX_REPAIR);
}

/**
 * ftv_fec_repairs - repair messages of a whole job
 * @n: the job's data messages
 * @k: K, 0 for none
 * @m: M
 *
 * Return: how many.
 */
unsigned int ftv_fec_repairs(unsigned int n, unsigned int k, unsigned int m)
{
	unsigned int g, total = 0;

	if (!k || !n)
		return 0;
	for (g = 0; g < DIV_ROUND_UP(n, k); ++g)
		total += ftv_fec_group_repair(ftv_fec_group_size(n, k, g), k,
					      m);
	return total;
}

/**
 * ftv_fec_repair - build one repair message of a group
 * @members: the group's data messages: linear plaintexts
 * @kg: how many
 * @mg: the group's repair messages
 * @j: which one to build
 * @headroom: room to leave in front, for the headers it gets sealed
 *
 * Return: an skb with the repair message's plaintext and room to seal
 * it, or NULL.
 */
struct sk_buff *ftv_fec_repair(struct sk_buff *const members[],
			       unsigned int kg, unsigned int mg,
			       unsigned int j, unsigned int headroom)
{
	unsigned int len[FTV_FEC_CODE_MAX_DATA], block_len = 0, i;
	u8 *data[FTV_FEC_CODE_MAX_DATA];
	struct ftv_msg_repair *msg;
	struct sk_buff *skb;

	for (i = 0; i < kg; ++i) {
		data[i] = members[i]->data;
		len[i] = members[i]->len;
		block_len = max(block_len, len[i]);
	}
	skb = alloc_skb(headroom + FTV_FEC_REPAIR_HLEN + block_len +
			FTV_TAG_SIZE, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, headroom);
	msg = skb_put(skb, FTV_FEC_REPAIR_HLEN + block_len);
	msg->type = FTV_CONTROL_REPAIR;
	msg->data = kg;
	msg->repair = mg;
	msg->index = j;
	ftv_fec_code_encode(kg, j, data, len, block_len, msg->block);
	return skb;
}

/* Round trip samples from the timestamps the peer echoes. */
static void sample_rtt(struct ftv_fec_conn *fc, u32 tsval, u32 tsecr)
{
	u32 rtt = tsval - tsecr;

	if (rtt > FTV_FEC_WAIT_MAX_MS * 10)
		return;
	WRITE_ONCE(fc->srtt_ms,
		   fc->srtt_ms ? (7 * fc->srtt_ms + rtt) / 8 : rtt);
}

static struct ftv_fec_rx *rx_of(struct ftv_fec_conn *fc)
{
	/* Pairs with the release in alloc_work(). */
	return smp_load_acquire(&fc->rx);
}

static struct ftv_fec_slot *slot_of(struct ftv_fec_rx *rx, u64 counter)
{
	return &rx->slot[counter % FTV_FEC_SLOTS];
}

/* Whether message @counter never came: its slot is empty or holds an
 * older message (a newer one in it says nothing of @counter).
 */
static bool never_came(struct ftv_fec_rx *rx, u64 counter)
{
	const struct ftv_fec_slot *slot = slot_of(rx, counter);

	return slot->kind == FTV_FEC_EMPTY || slot->counter < counter;
}

/* The receive state is there: groups from the next counter on are
 * judged. Data of earlier ones came before it, and was not kept.
 */
static void rx_begun(struct ftv_fec_conn *fc)
{
	if (!fc->judge_from)
		fc->judge_from = fc->greatest + 1;
}

static void judge_reset(struct ftv_fec_conn *fc)
{
	fc->judge_lost = 0;
	fc->judge_rebuilt = 0;
}

/* Whether loss reports say no loss for now. */
static bool held(const struct ftv_fec_conn *fc)
{
	return fc->hold_ms && time_before(jiffies, fc->held_until);
}

/* Repairs that rebuild less than a quarter of the groups that lost data
 * are held back; after a hold, only repairs that rebuild half of them end
 * it. Behind a policer they rebuild a few per cent, on random loss about
 * all of them; but one lucky group of the four judged after a hold is a
 * quarter, and would send the repairs out again into the policer.
 */
static void judge_repairs(struct ftv_fec_conn *fc)
{
	unsigned int part = fc->hold_ms ? 2 : 4;

	if (part * fc->judge_rebuilt >= fc->judge_lost) {
		fc->hold_ms = 0;
	} else {
		fc->hold_ms = clamp_t(u32, 4 * fc->hold_ms,
				      FTV_FEC_HOLD_MIN_MS, FTV_FEC_HOLD_MAX_MS);
		fc->held_until = jiffies + msecs_to_jiffies(fc->hold_ms);
		fc->holding = true;
		ftv_dev_dbg(fc->dev, "repairs on %u:%u rebuilt %u of %u groups that lost data: none asked for %u ms\n",
			    ntohs(fc->local_port), ntohs(fc->remote_port),
			    fc->judge_rebuilt, fc->judge_lost, fc->hold_ms);
	}
	WRITE_ONCE(fc->stats->last_hold_ms, fc->hold_ms);
	judge_reset(fc);
}

static void judge_count(struct ftv_fec_conn *fc, unsigned int lost,
			unsigned int rebuilt)
{
	fc->judge_lost += lost;
	fc->judge_rebuilt += rebuilt;
	if (fc->judge_lost >= (fc->hold_ms ? FTV_FEC_JUDGE_LOST_AGAIN :
			       FTV_FEC_JUDGE_LOST))
		judge_repairs(fc);
}

/* Whether what this end dropped itself and no judged loss was matched
 * with yet covers @lost missing messages; if so, they are matched now.
 * A job dropped whole when the receive queue is full takes a superpacket's
 * messages, a group's data or its repairs among them, and leaves a run of
 * counters that never came: repairs cannot help there, and a receiver
 * that cannot keep up would take such groups for the repairs' failure
 * and hold back the repairs that protect it. Only this step subtracts;
 * drops are added from any CPU.
 */
static bool judge_dropped_here(struct ftv_fec_conn *fc, unsigned int lost)
{
	if (atomic_read(&fc->judge_dropped) < (int)lost)
		return false;
	atomic_sub(lost, &fc->judge_dropped);
	return true;
}

/* @group, which a repair message announced, is done with: @lost of its
 * data messages were missing, @rebuilt of them came back. Not while held,
 * when its repairs are those the peer sent before it heard; nor a group
 * that began before the receive state was there; nor one whose missing
 * messages this end dropped itself.
 */
static void group_judged(struct ftv_fec_conn *fc,
			 const struct ftv_fec_group *group, unsigned int lost,
			 unsigned int rebuilt)
{
	if (!lost || held(fc) || group->base < fc->judge_from)
		return;
	if (!rebuilt && judge_dropped_here(fc, lost))
		return;
	/* By groups, not messages: a run that takes a whole group's data
	 * (netem dropping a superpacket) counts once among many rebuilt.
	 */
	judge_count(fc, 1, !!rebuilt);
}

/* Runs of counters that never came: groups lost whole, which no repair
 * announced. Only counters FTV_FEC_GAP_LAG behind the greatest received
 * are looked at: a message the path reordered comes after later ones (the
 * test's netem sends a tenth of them 2 ms ahead), and until 2026-12-01
 * a group done with right after such a message took the messages still
 * on their way before it for a run lost whole; under random loss the
 * repairs were then judged futile (rebuilt 2 of 9). Every counter is
 * looked at once, a run carried over from one look to the next.
 */
static void gap_judged(struct ftv_fec_conn *fc, struct ftv_fec_rx *rx)
{
	u64 c = max(fc->gap_next, fc->judge_from), end;
	unsigned int runs = 0, missing = 0;

	if (!fc->judge_from || fc->greatest < FTV_FEC_GAP_LAG)
		return;
	end = fc->greatest + 1 - FTV_FEC_GAP_LAG;
	if (end <= c)
		return;
	/* Only what the ring still says something of. */
	if (end - c > FTV_FEC_SLOTS - FTV_FEC_GAP_LAG) {
		c = end - (FTV_FEC_SLOTS - FTV_FEC_GAP_LAG);
		fc->gap_run = 0;
	}
	fc->gap_next = end;
	if (held(fc)) {
		fc->gap_run = 0;
		return;
	}
	for (; c < end; ++c) {
		if (!never_came(rx, c)) {
			fc->gap_run = 0;
		} else if (++fc->gap_run == FTV_FEC_RUN) {
			++runs;
			missing += fc->gap_run;
		} else if (fc->gap_run > FTV_FEC_RUN) {
			++missing;
		}
	}
	if (runs && !judge_dropped_here(fc, missing))
		judge_count(fc, runs, 0);
}

/* Note that @counter came: in the bitmap of the FTV_FEC_LOSS_LAG counters
 * up to the greatest (bit i is the greatest less i), and in the interval's
 * count if it is one of the interval's counters. One that comes after the
 * interval it belongs to was judged was counted lost; it stays so. A jump
 * of the greatest clears the bitmap at most: no step per counter passed.
 */
static void loss_note(struct ftv_fec_conn *fc, u64 counter)
{
	u64 ahead;

	if (counter > fc->greatest) {
		ahead = counter - fc->greatest;
		if (ahead >= FTV_FEC_LOSS_LAG)
			bitmap_zero(fc->recent, FTV_FEC_LOSS_LAG);
		else
			bitmap_shift_left(fc->recent, fc->recent, ahead,
					  FTV_FEC_LOSS_LAG);
		fc->greatest = counter;
	}
	if (fc->greatest - counter < FTV_FEC_LOSS_LAG)
		__set_bit(fc->greatest - counter, fc->recent);
	if (counter > fc->interval_start)
		++fc->interval_seen;
}

/* The last counter an interval may be judged up to now: FTV_FEC_LOSS_LAG
 * later ones came, or it was the greatest FTV_FEC_LOSS_WAIT_MS ago or more
 * (a mark taken every FTV_FEC_LOSS_WAIT_MS, ready one mark later). Never
 * below @greatest less the lag: the bitmap holds what came after it.
 */
static u64 loss_end(struct ftv_fec_conn *fc)
{
	u64 end = fc->greatest > FTV_FEC_LOSS_LAG ?
		  fc->greatest - FTV_FEC_LOSS_LAG : 0;

	if (time_after_eq(jiffies, fc->mark_at +
			  msecs_to_jiffies(FTV_FEC_LOSS_WAIT_MS))) {
		fc->mark_ready = fc->mark;
		fc->mark = fc->greatest;
		fc->mark_at = jiffies;
	}
	return max(end, fc->mark_ready);
}

/*
 * Of @lost, what the path lost: what we dropped ourselves is not the
 * path's, and repair messages would only add to the load that made us
 * drop it. Its gap may show an interval later (a job dropped whole at
 * the end of one is seen missing when the next message comes); what is
 * left of it is kept while drops go on, and one interval past.
 */
static u64 loss_less_own_drops(struct ftv_fec_conn *fc, u64 lost)
{
	u64 here = atomic_xchg(&fc->dropped_here, 0), used;

	fc->dropped_left += here;
	used = min_t(u64, lost, fc->dropped_left);
	lost -= used;
	fc->dropped_left -= used;
	if (!here && !fc->dropped_last) {
		fc->dropped_left = 0;
		/* Two intervals without a drop: any group the last ones
		 * emptied was given up by now.
		 */
		atomic_sub(atomic_read(&fc->judge_dropped),
			   &fc->judge_dropped);
	}
	fc->dropped_last = here;
	return lost;
}

/* The estimate, after an interval that lost @lost of @advanced. */
static void loss_update(struct ftv_fec_conn *fc, u64 lost, u64 advanced)
{
	u32 ppm;

	/* A peer's counter may jump by 2^40 or more: lost times a million
	 * would not fit in 64 bits.
	 */
	ppm = mul_u64_u64_div_u64(lost, 1000000, advanced);
	if (fc->holding && !held(fc)) {
		/* What the hold saw is the loss without repairs, which
		 * the inner TCP made pushing at a policer; repairs sized to
		 * it would be more of the same.
		 */
		fc->holding = false;
		fc->loss_ppm = 0;
	}
	/* Up at once, down slowly: a repair too few costs the inner TCP
	 * half its window, one too many a few per cent. But a whole
	 * interval without a loss is strong evidence (at 0.5 % loss, 1,024
	 * messages all arrive one time in 170): halve the estimate then,
	 * so that a path that turned clean stops paying for repairs within
	 * a second or so, not ten.
	 */
	if (ppm > fc->loss_ppm)
		ppm = (fc->loss_ppm + 3 * ppm) / 4;
	else if (!lost && advanced >= FTV_FEC_LOSS_INTERVAL)
		ppm = fc->loss_ppm / 2;
	else
		ppm = (7 * fc->loss_ppm + ppm) / 8;
	WRITE_ONCE(fc->loss_ppm, ppm);
	WRITE_ONCE(fc->stats->last_loss_ppm, ppm);
}

/**
 * ftv_fec_received - count an authenticated message for the loss rate
 * @fc: its connection's FEC state
 * @counter: its counter
 * @tsval: the connection's timestamp clock now (ftv_conn_tsval())
 * @tsecr: its timestamp echo
 * @has_ts: @tsecr is valid
 *
 * The loss rate is what did not arrive of the counters the greatest one
 * moved FTV_FEC_LOSS_LAG or more past (or that had FTV_FEC_LOSS_WAIT_MS to
 * come: loss_end()), less what this end dropped itself,
 * over FTV_FEC_LOSS_INTERVAL messages (or fewer, down to
 * FTV_FEC_LOSS_INTERVAL_MIN, once FTV_FEC_LOSS_PERIOD_MS have passed),
 * smoothed: quick to rise, slow to fall but for a whole clean interval.
 * The lag is for reordering: jitter on a path (a Wi-Fi link, link
 * aggregation, netem with jitter) delivers a message after dozens of
 * later ones, and until 2026-12-02 each interval counted those still on
 * their way as lost and the next one, which saw them come, could not
 * take them back: on a clean path with 10 +- 3 ms of jitter the estimate
 * reached 25 % and the sender spent as many repairs as data.
 *
 * Return: what is due to the peer as each interval ends (enum
 * ftv_fec_due): a loss report if it knows FEC, our hello again if it
 * has not shown that it heard one.
 */
unsigned int ftv_fec_received(struct ftv_fec_conn *fc, u64 counter,
			      u32 tsval, u32 tsecr, bool has_ts)
{
	u64 advanced, lost, used, end;
	unsigned int due = 0, ahead;

	if (has_ts)
		sample_rtt(fc, tsval, tsecr);
	if (!fc->interval_seen && !fc->greatest) {
		fc->interval_start = counter;
		fc->interval_began = jiffies;
		fc->mark_at = jiffies;
	}
	loss_note(fc, counter);
	end = loss_end(fc);
	if (end <= fc->interval_start)
		return 0;
	advanced = end - fc->interval_start;
	if (advanced < FTV_FEC_LOSS_INTERVAL_MIN ||
	    (advanced < FTV_FEC_LOSS_INTERVAL &&
	     time_before(jiffies, fc->interval_began +
			 msecs_to_jiffies(FTV_FEC_LOSS_PERIOD_MS))))
		return 0;
	/* What came of the counters up to @end: the bitmap holds those
	 * after it.
	 */
	ahead = bitmap_weight(fc->recent, fc->greatest - end);
	used = fc->interval_seen > ahead ? fc->interval_seen - ahead : 0;
	lost = advanced > used ? advanced - used : 0;
	lost = loss_less_own_drops(fc, lost);
	loss_update(fc, lost, advanced);
	fc->interval_start = end;
	fc->interval_began = jiffies;
	fc->interval_seen = ahead;
	if (READ_ONCE(fc->peer_has_fec))
		due |= FTV_FEC_DUE_LOSS;
	if (fc->hellos_left) {
		--fc->hellos_left;
		due |= FTV_FEC_DUE_HELLO;
	}
	return due;
}

/**
 * ftv_fec_forget_loss - the loss seen since the interval began was not
 *	the path's
 * @fc: the FEC state, from its session's receive serial step (which
 *	ftv_fec_received() runs in too)
 * @ppm: the estimate to go back to, if it is lower
 *
 * The asker of a probe's padding calls it when the padding stopped
 * (probe.c): a new interval begins at the greatest counter received, and
 * the estimate falls back to what it was before the padding.
 */
void ftv_fec_forget_loss(struct ftv_fec_conn *fc, u32 ppm)
{
	fc->interval_start = fc->greatest;
	fc->interval_began = jiffies;
	fc->interval_seen = 0;
	bitmap_zero(fc->recent, FTV_FEC_LOSS_LAG);
	atomic_set(&fc->dropped_here, 0);
	if (ppm < fc->loss_ppm) {
		WRITE_ONCE(fc->loss_ppm, ppm);
		WRITE_ONCE(fc->stats->last_loss_ppm, ppm);
	}
}

/**
 * ftv_fec_loss_to_report - the loss to put in a loss report
 * @fc: the FEC state of the connection it goes on
 *
 * Return: the loss we see on what the peer sends, or 0 if this side lets
 * the peer's repair messages go unused ("fec off") or found them futile
 * (judge_repairs()): a peer on "auto" would otherwise spend bandwidth on
 * repairs that rebuild nothing.
 */
u32 ftv_fec_loss_to_report(const struct ftv_fec_conn *fc)
{
	if (setting_of(fc).mode == FTV_FEC_OFF || held(fc))
		return 0;
	return READ_ONCE(fc->loss_ppm);
}

/**
 * ftv_fec_dropped_here - count received segments this end dropped itself
 * @fc: the FEC state of their connection
 * @segs: how many
 *
 * Segments dropped before they were opened (the connection's receive
 * queue or the device's crypt ring was full) never show up in the loss
 * estimate's count of what arrived; said here, they are not taken for
 * the path's loss. Any CPU may call it.
 */
void ftv_fec_dropped_here(struct ftv_fec_conn *fc, unsigned int segs)
{
	atomic_add(segs, &fc->dropped_here);
	atomic_add(segs, &fc->judge_dropped);
}

/**
 * ftv_fec_hello - the peer says what it can do
 * @fc: the FEC state of the connection it came on
 * @skb: the opened struct ftv_msg_hello, linear
 *
 * Sealed, so that nobody on the path can take FEC away from the two ends
 * (as stripping a flag from a handshake's padding could) or make one end
 * believe the other has it.
 */
void ftv_fec_hello(struct ftv_fec_conn *fc, const struct sk_buff *skb)
{
	const struct ftv_msg_hello *msg = (const void *)skb->data;

	if (skb->len >= sizeof(*msg))
		WRITE_ONCE(fc->peer_has_fec, !!(msg->flags & FTV_HELLO_F_FEC));
}

/**
 * ftv_fec_loss_report - the peer says how much of ours it lost
 * @fc: the FEC state of the connection it came on
 * @skb: the opened struct ftv_msg_loss, linear
 */
void ftv_fec_loss_report(struct ftv_fec_conn *fc, const struct sk_buff *skb)
{
	const struct ftv_msg_loss *msg = (const void *)skb->data;
	u32 ppm;

	if (skb->len < sizeof(*msg))
		return;
	ppm = min_t(u32, be32_to_cpu(msg->loss_ppm), 1000000);
	/* Only a peer that knows FEC, and knows that we do, sends one. */
	fc->hellos_left = 0;
	WRITE_ONCE(fc->peer_has_fec, true);
	WRITE_ONCE(fc->peer_loss_ppm, ppm);
	WRITE_ONCE(fc->stats->last_peer_loss_ppm, ppm);
}

/* The slot holding message @counter of @kind, or NULL. */
static struct ftv_fec_slot *find(struct ftv_fec_rx *rx, u64 counter,
				 u8 kind)
{
	struct ftv_fec_slot *slot = slot_of(rx, counter);

	return slot->kind == kind && slot->counter == counter ? slot : NULL;
}

static void give_up(struct ftv_fec_conn *fc, struct ftv_fec_group *group)
{
	struct ftv_fec_rx *rx = rx_of(fc);

	if (rx)
		gap_judged(fc, rx);
	group->pending = false;
	atomic64_inc(&fc->stats->groups_lost);
	group_judged(fc, group, group->missing, 0);
}

/* Rebuild @group's missing data from its repair messages into the
 * missing messages' own slots.
 */
static int decode(struct ftv_fec_rx *rx, struct ftv_fec_group *group,
		  unsigned int nrep)
{
	unsigned int len[FTV_FEC_CODE_MAX_DATA], idx[FTV_FEC_CODE_MAX_REPAIR];
	u8 *data[FTV_FEC_CODE_MAX_DATA], *rep[FTV_FEC_CODE_MAX_REPAIR];
	unsigned int i, j, n = 0, block_len = 0;
	struct ftv_fec_slot *slot;

	for (j = 0; j < group->m && n < nrep; ++j) {
		slot = find(rx, group->base + group->k + j, FTV_FEC_REPAIR);
		if (!slot)
			continue;
		block_len = slot->len;
		rep[n] = slot->block;
		idx[n++] = slot->index;
	}
	for (i = 0; i < group->k; ++i) {
		u64 counter = group->base + i;

		slot = slot_of(rx, counter);
		if (find(rx, counter, FTV_FEC_DATA)) {
			if (slot->len > block_len)
				return -EINVAL;
			len[i] = slot->len;
		} else {
			/* A newer message took the slot: too late. */
			if (slot->kind != FTV_FEC_EMPTY &&
			    slot->counter > counter)
				return -ETIME;
			len[i] = 0;
		}
		data[i] = slot->block;
	}
	return ftv_fec_code_decode(group->k, data, len, block_len, idx, rep, n);
}

/* Rebuild @group if enough of it is there; hand each rebuilt message to
 * @rebuilt.
 */
static void try_group(struct ftv_fec_conn *fc, struct ftv_fec_rx *rx,
		      struct ftv_fec_group *group, ftv_fec_rebuilt_t rebuilt,
		      void *arg)
{
	unsigned int i, j, missing = 0, nrep = 0, block_len = 0, known = 0;
	struct ftv_fec_slot *slot;
	struct sk_buff *skb;

	for (i = 0; i < group->k; ++i) {
		u64 counter = group->base + i;

		if (find(rx, counter, FTV_FEC_DATA))
			continue;
		++missing;
		known += never_came(rx, counter);
	}
	group->missing = known;
	if (!missing) {
		gap_judged(fc, rx);
		group->pending = false;
		return;
	}
	for (j = 0; j < group->m; ++j) {
		slot = find(rx, group->base + group->k + j, FTV_FEC_REPAIR);
		if (slot) {
			block_len = slot->len;
			++nrep;
		}
	}
	if (nrep < missing)
		return;
	if (decode(rx, group, nrep)) {
		give_up(fc, group);
		return;
	}
	gap_judged(fc, rx);
	group->pending = false;
	group_judged(fc, group, missing, missing);
	for (i = 0; i < group->k; ++i) {
		u64 counter = group->base + i;

		if (find(rx, counter, FTV_FEC_DATA))
			continue;
		slot = slot_of(rx, counter);
		slot->counter = counter;
		slot->kind = FTV_FEC_DATA;
		slot->len = block_len;
		skb = alloc_skb(block_len, GFP_ATOMIC);
		if (!skb)
			continue;
		skb_put_data(skb, slot->block, block_len);
		atomic64_inc(&fc->stats->rebuilt);
		rebuilt(arg, counter, skb);
	}
}

/**
 * ftv_fec_keep - keep an opened data message for rebuilding its group
 * @fc: its connection's FEC state
 * @counter: its counter
 * @skb: the inner packet, linear
 * @rebuilt: receives each data message this lets us rebuild
 * @arg: for @rebuilt
 *
 * Only once the peer has sent repair messages (and a message too long for
 * any group is not kept). A message that completes what a waiting group
 * needs, having come after its repair messages, rebuilds the rest.
 */
void ftv_fec_keep(struct ftv_fec_conn *fc, u64 counter,
		  const struct sk_buff *skb, ftv_fec_rebuilt_t rebuilt,
		  void *arg)
{
	struct ftv_fec_rx *rx = rx_of(fc);
	struct ftv_fec_group *group;
	struct ftv_fec_slot *slot;
	int i;

	if (!rx || skb->len > FTV_FEC_MAX_LEN)
		return;
	rx_begun(fc);
	slot = slot_of(rx, counter);
	slot->counter = counter;
	slot->kind = FTV_FEC_DATA;
	slot->len = skb->len;
	memcpy(slot->block, skb->data, skb->len);
	for (i = 0; i < FTV_FEC_GROUPS; ++i) {
		group = &rx->group[i];
		if (group->pending && counter >= group->base &&
		    counter < group->base + group->k)
			try_group(fc, rx, group, rebuilt, arg);
	}
}

/* The group @base, or an entry for it: a free one, else the one waiting
 * the longest, which is given up.
 */
static struct ftv_fec_group *group_for(struct ftv_fec_conn *fc,
				       struct ftv_fec_rx *rx, u64 base)
{
	struct ftv_fec_group *group, *victim = NULL;
	int i;

	for (i = 0; i < FTV_FEC_GROUPS; ++i) {
		group = &rx->group[i];
		if (group->k && group->base == base)
			return group;
		if (victim && !victim->pending)
			continue;
		if (!victim || !group->pending ||
		    time_before(group->deadline, victim->deadline))
			victim = group;
	}
	if (victim->pending)
		give_up(fc, victim);
	memset(victim, 0, sizeof(*victim));
	victim->base = base;
	return victim;
}

/**
 * ftv_fec_rebuild - take a repair message, and rebuild what it can
 * @fc: its connection's FEC state
 * @live: the connection is not retired (only a live one gets receive
 *	state)
 * @counter: its counter
 * @skb: the opened struct ftv_msg_repair, linear
 * @rebuilt: receives each data message rebuilt, as an skb of the group's
 *	block length, whose packet says how many of those bytes are its own
 * @arg: for @rebuilt
 */
void ftv_fec_rebuild(struct ftv_fec_conn *fc, bool live, u64 counter,
		     const struct sk_buff *skb, ftv_fec_rebuilt_t rebuilt,
		     void *arg)
{
	const struct ftv_msg_repair *msg = (const void *)skb->data;
	struct ftv_fec_rx *rx = rx_of(fc);
	unsigned int block_len, wait;
	struct ftv_fec_group *group;
	struct ftv_fec_slot *slot;

	if (skb->len < sizeof(*msg) || !msg->data || !msg->repair ||
	    msg->data > FTV_FEC_CODE_MAX_DATA ||
	    msg->repair > FTV_FEC_CODE_MAX_REPAIR ||
	    msg->index >= msg->repair ||
	    counter < msg->data + msg->index)
		return;
	block_len = skb->len - sizeof(*msg);
	if (block_len > FTV_FEC_MAX_LEN)
		return;
	if (!rx) {
		/* The first valid repair message, on a connection that
		 * negotiated FEC, is live and whose peer this side lets use
		 * it: from now on, keep what comes. Nothing else costs the
		 * memory, whatever the peer sends.
		 */
		if (live && !fc->alloc_queued && READ_ONCE(fc->peer_has_fec) &&
		    setting_of(fc).mode != FTV_FEC_OFF) {
			fc->alloc_queued = true;
			queue_work(system_percpu_wq, &fc->alloc_work);
		}
		return;
	}
	rx_begun(fc);
	slot = slot_of(rx, counter);
	slot->counter = counter;
	slot->kind = FTV_FEC_REPAIR;
	slot->index = msg->index;
	slot->len = block_len;
	memcpy(slot->block, msg->block, block_len);

	group = group_for(fc, rx, counter - msg->data - msg->index);
	if (!group->k) {
		wait = clamp_t(unsigned int, fc->srtt_ms,
			       FTV_FEC_WAIT_MIN_MS, FTV_FEC_WAIT_MAX_MS);
		group->k = msg->data;
		group->m = msg->repair;
		group->pending = true;
		group->deadline = jiffies + msecs_to_jiffies(wait);
	}
	if (group->pending && group->k == msg->data &&
	    group->m == msg->repair)
		try_group(fc, rx, group, rebuilt, arg);
}

/**
 * ftv_fec_expire - give up the groups that waited too long
 * @fc: the connection's FEC state
 *
 * A data message that arrives for a pending group is looked at by the
 * next repair message, or here: whatever is still missing after the
 * deadline is lost for good.
 */
void ftv_fec_expire(struct ftv_fec_conn *fc)
{
	struct ftv_fec_rx *rx = rx_of(fc);
	struct ftv_fec_group *group;
	int i;

	if (!rx)
		return;
	for (i = 0; i < FTV_FEC_GROUPS; ++i) {
		group = &rx->group[i];
		if (group->pending && time_after(jiffies, group->deadline))
			give_up(fc, group);
	}
}

#ifdef DEBUG
#include "selftest/fec.c"
#endif
