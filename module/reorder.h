/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Putting a session's messages back in counter order when they come over
 * several connections (reorder.c).
 */

#ifndef _FTV_REORDER_H
#define _FTV_REORDER_H

#include <linux/bitops.h>
#include <linux/skbuff.h>
#include <linux/types.h>

enum ftv_reorder_limits {
	/* Messages a session holds back at most, by counter. */
	FTV_REORDER_SLOTS = 512,
};

/**
 * struct ftv_reorder - messages that arrived ahead of a gap
 * @next: the lowest counter not yet released
 * @high: one past the highest counter that arrived
 * @held: packets held now
 * @arrived: which counters from @next on arrived, by counter modulo
 *	FTV_REORDER_SLOTS (a message without a packet counts)
 * @slot: the packets held, likewise
 * @steps: debug builds: counters moved past, one at a time, for the
 *	self-test to check the bound on a call's work
 *
 * Not locked here: its owner serialises the calls.
 */
struct ftv_reorder {
	u64 next;
	u64 high;
	unsigned int held;
	DECLARE_BITMAP(arrived, FTV_REORDER_SLOTS);
	struct sk_buff *slot[FTV_REORDER_SLOTS];
#ifdef DEBUG
	u64 steps;
#endif
};

void ftv_reorder_init(struct ftv_reorder *r, u64 next);
void ftv_reorder_add(struct ftv_reorder *r, u64 counter, struct sk_buff *skb,
		     struct sk_buff_head *out);
void ftv_reorder_flush(struct ftv_reorder *r, struct sk_buff_head *out);
void ftv_reorder_purge(struct ftv_reorder *r);

/* Whether a counter above a gap arrived: something waits for the gap. */
static inline bool ftv_reorder_waiting(const struct ftv_reorder *r)
{
	return r->high > r->next;
}

#ifdef DEBUG
bool ftv_reorder_selftest(void);
#endif

#endif /* _FTV_REORDER_H */
