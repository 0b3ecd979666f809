// SPDX-License-Identifier: GPL-2.0
/*
 * The reorder ring. A session's messages carry counters in the order they
 * were sealed; over one connection they arrive in that order (or with
 * gaps, where some were lost), over several they can overtake one
 * another. The ring releases them in counter order: a message is held
 * while a lower counter is missing, and released as soon as the gap
 * fills. What fills a gap may be a message without a packet (a
 * keepalive, a repair, a loss report): it counts as arrived. A gap that
 * never fills is given up by the owner (ftv_reorder_flush(), after a
 * short wait), and a counter FTV_REORDER_SLOTS or more ahead pushes the
 * oldest held messages out. Every call takes at most FTV_REORDER_SLOTS
 * steps, wherever the counter lands. A message that comes after its gap was given
 * up is released at once: late is better than lost for the inner TCP,
 * which has already been told of a loss and takes the data gladly.
 *
 * Replays never get here: the replay window (replay.c) comes first.
 */

#include "reorder.h"

static unsigned int slot_of(u64 counter)
{
	return counter % FTV_REORDER_SLOTS;
}

/**
 * ftv_reorder_init - an empty ring
 * @r: the ring
 * @next: the first counter expected
 */
void ftv_reorder_init(struct ftv_reorder *r, u64 next)
{
	memset(r, 0, sizeof(*r));
	r->next = next;
	r->high = next;
}

/* Release @r->next (its packet, if it has one) and move past it. */
static void release_next(struct ftv_reorder *r, struct sk_buff_head *out)
{
	unsigned int i = slot_of(r->next);

	if (r->slot[i]) {
		__skb_queue_tail(out, r->slot[i]);
		r->slot[i] = NULL;
		--r->held;
	}
	__clear_bit(i, r->arrived);
	++r->next;
#ifdef DEBUG
	++r->steps;
#endif
}

/* Release what is contiguous from @r->next on. */
static void release_run(struct ftv_reorder *r, struct sk_buff_head *out)
{
	while (r->next < r->high && test_bit(slot_of(r->next), r->arrived))
		release_next(r, out);
}

/*
 * @counter is FTV_REORDER_SLOTS or more ahead of @r->next: the oldest held
 * go, gaps and all, until it fits. What is held lies below @r->high, at
 * most FTV_REORDER_SLOTS counters from @r->next, so that is as many steps
 * as this takes however far @counter jumps (the replay window takes any
 * counter ahead of it, and a peer's counter may jump by 2^40): past
 * @r->high nothing is held and @r->next moves at once.
 */
static void make_room(struct ftv_reorder *r, u64 counter,
		      struct sk_buff_head *out)
{
	u64 next = counter - (FTV_REORDER_SLOTS - 1);

	while (r->next < next && r->next < r->high)
		release_next(r, out);
	if (r->next < next) {
		r->next = next;
		r->high = next;
	}
}

/**
 * ftv_reorder_add - a message arrived
 * @r: the ring
 * @counter: its counter, past the replay check
 * @skb: its packet, or NULL for a message that carries none
 * @out: gets the packets released now, in counter order
 */
void ftv_reorder_add(struct ftv_reorder *r, u64 counter, struct sk_buff *skb,
		     struct sk_buff_head *out)
{
	if (counter < r->next) {
		/* Its gap was given up: late, but not lost. */
		if (skb)
			__skb_queue_tail(out, skb);
		return;
	}
	if (counter - r->next >= FTV_REORDER_SLOTS)
		make_room(r, counter, out);
	__set_bit(slot_of(counter), r->arrived);
	if (skb) {
		r->slot[slot_of(counter)] = skb;
		++r->held;
	}
	if (counter >= r->high)
		r->high = counter + 1;
	release_run(r, out);
}

/**
 * ftv_reorder_flush - give up on the gaps: release everything held
 * @r: the ring
 * @out: gets the packets, in counter order
 */
void ftv_reorder_flush(struct ftv_reorder *r, struct sk_buff_head *out)
{
	while (r->next < r->high)
		release_next(r, out);
}

/**
 * ftv_reorder_purge - free what is held
 * @r: a ring nobody adds to any more
 */
void ftv_reorder_purge(struct ftv_reorder *r)
{
	unsigned int i;

	for (i = 0; i < FTV_REORDER_SLOTS; i++) {
		kfree_skb(r->slot[i]);
		r->slot[i] = NULL;
	}
	r->held = 0;
	r->next = r->high;
	bitmap_zero(r->arrived, FTV_REORDER_SLOTS);
}

#ifdef DEBUG
#include "selftest/reorder.c"
#endif
