// SPDX-License-Identifier: GPL-2.0
/* Included at the end of fec.c in debug builds. */

#include <linux/etherdevice.h>

/* Feed @fc the counters from @from to @to, in order. */
static void __init loss_feed(struct ftv_fec_conn *fc, u64 from, u64 to)
{
	for (; from <= to; ++from)
		ftv_fec_received(fc, from, 0, 0, false);
}

/* Feed the judge of repairs @n groups announced by repairs, each of which
 * lost @lost of its data and had none rebuilt.
 */
static void __init judge_feed(struct ftv_fec_conn *fc, unsigned int n,
			      unsigned int lost)
{
	struct ftv_fec_group group = { .base = 100, .k = 16, .m = 4 };

	while (n--)
		group_judged(fc, &group, lost, 0);
}

/* Message @counter arrives (its slot says so), and runs are looked for. */
static void __init gap_arrive(struct ftv_fec_conn *fc, u64 from, u64 to)
{
	struct ftv_fec_rx *rx = rx_of(fc);
	struct ftv_fec_slot *slot;

	for (; from <= to; ++from) {
		slot = slot_of(rx, from);
		slot->counter = from;
		slot->kind = FTV_FEC_DATA;
		fc->greatest = max(fc->greatest, from);
		gap_judged(fc, rx);
	}
}

/* Runs of counters that never came: one the path only reordered (110
 * comes before 100 to 109, as netem's reorder sends it ahead) is none;
 * ten counters that never come are one. Until 2026-12-01 the first was
 * judged as soon as a group after it was done with.
 */
static bool __init gap_selftest(struct ftv_fec_conn *c)
{
	bool ok = true;

	alloc_work(&c->alloc_work);
	if (!rx_of(c))
		return false;
	c->judge_from = 1;
	gap_arrive(c, 1, 99);
	gap_arrive(c, 110, 110);
	gap_arrive(c, 100, 109);
	gap_arrive(c, 111, 399);
	if (c->judge_lost) {
		pr_err("loss self-test: a reordered run judged as lost whole\n");
		ok = false;
	}
	gap_arrive(c, 400, 419);
	gap_arrive(c, 430, 600);
	if (c->judge_lost != 1) {
		pr_err("loss self-test: a run of 10 lost judged as %u groups\n",
		       c->judge_lost);
		ok = false;
	}
	return ok;
}

/*
 * The judge of repairs: groups whose data this end dropped itself (its
 * queue was full) are no evidence against repairs; as many groups lost on
 * the path, none rebuilt, are.
 */
static bool __init judge_selftest(struct net_device *dev)
{
	struct ftv_fec_stats st = {};
	atomic_t rx_count = ATOMIC_INIT(0);
	struct ftv_fec_conn *c;
	bool ok = true;
	u32 setting = 0;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return false;
	ftv_fec_conn_init(c, &st, &setting, &rx_count, dev, 0, 0);
	c->judge_from = 1;
	/* Eight groups of four lost to 32 segments dropped here. */
	ftv_fec_dropped_here(c, 32);
	judge_feed(c, FTV_FEC_JUDGE_LOST, 4);
	if (c->hold_ms) {
		pr_err("loss self-test: groups our own drops emptied held the repairs back\n");
		ok = false;
	}
	judge_feed(c, FTV_FEC_JUDGE_LOST, 4);
	if (!c->hold_ms) {
		pr_err("loss self-test: %u groups lost on the path, none rebuilt, did not hold the repairs back\n",
		       FTV_FEC_JUDGE_LOST);
		ok = false;
	}
	ftv_fec_conn_uninit(c);
	/* A fresh connection, with no hold to start from. */
	memset(c, 0, sizeof(*c));
	st.last_hold_ms = 0;
	ftv_fec_conn_init(c, &st, &setting, &rx_count, dev, 0, 0);
	ok &= gap_selftest(c);
	ftv_fec_conn_uninit(c);
	kfree(c);
	return ok;
}

/*
 * The loss estimate, interval by interval. Jobs this end drops when its
 * queue is full are counted as they are dropped, ahead of the messages
 * queued before them; the gap they leave shows only when a later message
 * comes, in the next interval. Neither interval may count them as the
 * path's loss; a gap nobody dropped here must still count. And the judge
 * of repairs (judge_selftest()).
 */
/* Counters @from to @to in blocks of 1 to @most_block, sizes from a
 * simple generator seeded with @seed, each block backwards: every message
 * but one of each block comes after later ones, by uneven amounts, as
 * jitter delivers them. Return: the highest loss estimate on the way.
 */
static u32 __init loss_feed_reordered(struct ftv_fec_conn *fc, u64 from,
				      u64 to, unsigned int most_block,
				      u32 seed)
{
	unsigned int block;
	u32 most = 0;
	u64 b, c;

	for (b = from; b <= to; b += block) {
		seed = seed * 1103515245 + 12345;
		block = 1 + (seed >> 16) % most_block;
		for (c = min(b + block - 1, to) + 1; c-- > b;)
			ftv_fec_received(fc, c, 0, 0, false);
		most = max(most, fc->loss_ppm);
	}
	return most;
}

/* A clean path that reorders (netem's jitter does, to dozens of messages
 * at tens of Mbit/s) loses nothing; one that also loses a message in a
 * hundred loses about one per cent. Until 2026-12-02 the first came out
 * as several per cent lost: each interval counted what was still on its
 * way as lost.
 */
static bool __init reorder_selftest(struct ftv_fec_conn *c)
{
	struct ftv_fec_stats st = {};
	atomic_t rx_count = ATOMIC_INIT(0);
	u32 setting = 0, most;
	bool ok = true;
	u64 b;

	ftv_fec_conn_init(c, &st, &setting, &rx_count, NULL, 0, 0);
	most = loss_feed_reordered(c, 1, 20000, 96, 1);
	if (most) {
		pr_err("loss self-test: reordering counted as %u ppm lost\n",
		       most);
		ok = false;
	}
	/* One in a hundred never comes, the rest come reordered. */
	for (b = 20001; b < 60000; b += 100) {
		loss_feed_reordered(c, b, b + 49, 50, b);
		loss_feed_reordered(c, b + 51, b + 99, 49, b + 1);
	}
	if (c->loss_ppm < 5000 || c->loss_ppm > 20000) {
		pr_err("loss self-test: 1 %% lost and reordered gave %u ppm\n",
		       c->loss_ppm);
		ok = false;
	}
	ftv_fec_conn_uninit(c);
	memset(c, 0, sizeof(*c));
	return ok;
}

/* A peer's counter jumps by 2^62: all but one of the counters passed
 * over are lost, which is a million ppm, not what a product past 64 bits
 * would make of it.
 */
static bool __init jump_selftest(struct ftv_fec_conn *c)
{
	loss_feed(c, BIT_ULL(62), BIT_ULL(62));
	if (c->stats->last_loss_ppm < 500000) {
		pr_err("loss self-test: a jump of 2^62 gave %u ppm\n",
		       c->stats->last_loss_ppm);
		return false;
	}
	return true;
}

bool __init ftv_fec_loss_selftest(void)
{
	struct ftv_fec_stats st = {};
	atomic_t rx_count = ATOMIC_INIT(0);
	struct net_device *dev;
	struct ftv_fec_conn *c;
	u32 setting = 0;
	bool ok = true;

	/* Not on the stack: its work item may not be (debugobjects). */
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	/* Never registered: it names the log lines of a hold. */
	dev = alloc_netdev(0, "ftvtest", NET_NAME_UNKNOWN, ether_setup);
	if (!c || !dev) {
		kfree(c);
		if (dev)
			free_netdev(dev);
		return false;
	}
	ok = judge_selftest(dev);
	free_netdev(dev);
	ok = reorder_selftest(c) && ok;
	ftv_fec_conn_init(c, &st, &setting, &rx_count, NULL, 0, 0);
	/* A clean interval: 1 to 1025. */
	loss_feed(c, 1, 1025);
	/* 2061 to 2360 dropped here while 1026 to 2060 wait in the queue;
	 * the interval ends with 2049, before the gap shows.
	 */
	ftv_fec_dropped_here(c, 300);
	loss_feed(c, 1026, 2060);
	loss_feed(c, 2361, 3100);
	if (c->loss_ppm) {
		pr_err("loss self-test: drops of our own counted as %u ppm\n",
		       c->loss_ppm);
		ok = false;
	}
	/* Two clean intervals: what was left of the drops is forgotten. */
	loss_feed(c, 3101, 5200);
	/* 100 counters that never came, with nothing dropped here; judged
	 * once an interval and the lag are past them.
	 */
	loss_feed(c, 5201, 5600);
	loss_feed(c, 5701, 8400);
	if (!c->loss_ppm) {
		pr_err("loss self-test: 100 lost of 1024 not counted\n");
		ok = false;
	}
	ok = jump_selftest(c) && ok;
	ftv_fec_conn_uninit(c);
	kfree(c);
	if (ok)
		pr_info("loss self-tests: pass\n");
	return ok;
}
