// SPDX-License-Identifier: GPL-2.0
/* Included at the end of reorder.c in debug builds. */

#include <linux/slab.h>

/*
 * Each step adds one counter (with a packet, or without: a keepalive) or
 * gives the gaps up (FLUSH), and lists the counters whose packets must
 * come out then, in order, ending at END.
 */
#define FLUSH U64_MAX
#define END U64_MAX
/* Where the jumps start: the counter after the steps before them. */
#define JUMP_BASE (8 + FTV_REORDER_SLOTS + 2)

struct reorder_step {
	u64 counter;
	bool packet;
	u64 out[4];
};

static const struct reorder_step reorder_steps[] __initconst = {
	{ 0, true, { 0, END } },
	{ 1, true, { 1, END } },
	{ 3, true, { END } },			/* 2 is missing */
	{ 4, false, { END } },			/* a keepalive, held too */
	{ 2, true, { 2, 3, END } },		/* the gap fills */
	{ 6, true, { END } },
	{ FLUSH, false, { 6, END } },		/* 5 given up */
	{ 5, true, { 5, END } },		/* late: at once */
	{ 7, false, { END } },			/* nothing to release */
	{ 9, true, { END } },
	{ 8 + FTV_REORDER_SLOTS + 1, true, { 9, END } },	/* pushed out */
	{ 8 + FTV_REORDER_SLOTS, true, { END } },
	{ FLUSH, false, { 8 + FTV_REORDER_SLOTS,
			  8 + FTV_REORDER_SLOTS + 1, END } },
	/* A peer's counter jumps far ahead: what is held goes, the rest
	 * of the way costs nothing (jump_checked() counts the steps).
	 */
	{ JUMP_BASE + 1, true, { END } },	/* JUMP_BASE is missing */
	{ JUMP_BASE + 1 + BIT_ULL(32), true, { JUMP_BASE + 1, END } },
	{ FLUSH, false, { JUMP_BASE + 1 + BIT_ULL(32), END } },
	{ JUMP_BASE + BIT_ULL(40), false, { END } },
	{ JUMP_BASE + BIT_ULL(40) + 2, true, { END } },
	{ JUMP_BASE + BIT_ULL(40) + 1, true, { END } },
	{ FLUSH, false, { JUMP_BASE + BIT_ULL(40) + 1,
			  JUMP_BASE + BIT_ULL(40) + 2, END } },
};

static bool __init reorder_step(struct ftv_reorder *r,
				const struct reorder_step *step, size_t n)
{
	struct sk_buff_head out;
	struct sk_buff *skb;
	bool ok = true;
	size_t i = 0;

	__skb_queue_head_init(&out);
	if (step->counter == FLUSH) {
		ftv_reorder_flush(r, &out);
	} else {
		skb = step->packet ? alloc_skb(0, GFP_KERNEL) : NULL;
		if (step->packet && !skb)
			return false;
		if (skb)
			*(u64 *)skb->cb = step->counter;
		ftv_reorder_add(r, step->counter, skb, &out);
	}
	while ((skb = __skb_dequeue(&out)) != NULL) {
		if (i >= ARRAY_SIZE(step->out) || step->out[i] == END ||
		    *(u64 *)skb->cb != step->out[i])
			ok = false;
		++i;
		kfree_skb(skb);
	}
	if (i < ARRAY_SIZE(step->out) && step->out[i] != END)
		ok = false;
	if (!ok)
		pr_err("reorder self-test %zu: failed\n", n + 1);
	return ok;
}

/**
 * ftv_reorder_selftest - check the ring against known sequences
 *
 * Return: true if every step releases what it should, in order.
 */
bool __init ftv_reorder_selftest(void)
{
	struct ftv_reorder *r;
	bool ok = true;
	size_t i;

	r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return false;
	ftv_reorder_init(r, 0);
	for (i = 0; ok && i < ARRAY_SIZE(reorder_steps); i++) {
		u64 steps = r->steps;

		ok = reorder_step(r, &reorder_steps[i], i);
		/* No call moves past more than a ring's worth one by one. */
		if (ok && r->steps - steps > FTV_REORDER_SLOTS) {
			pr_err("reorder self-test %zu: %llu steps\n", i + 1,
			       r->steps - steps);
			ok = false;
		}
	}
	if (ok && (r->held || ftv_reorder_waiting(r))) {
		pr_err("reorder self-test: %u packets left\n", r->held);
		ok = false;
	}
	ftv_reorder_purge(r);
	kfree(r);
	if (ok)
		pr_info("reorder self-tests: pass\n");
	return ok;
}
