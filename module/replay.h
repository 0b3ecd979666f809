/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_REPLAY_H
#define _FTV_REPLAY_H

#include <linux/spinlock.h>
#include <linux/types.h>

enum ftv_replay_limits {
	FTV_REPLAY_BITS_TOTAL = 8192,
	FTV_REPLAY_BITS_PER_LONG = BITS_PER_LONG,
	FTV_REPLAY_LONGS = FTV_REPLAY_BITS_TOTAL / BITS_PER_LONG,
	/* One word is kept as slack so that sliding never clears in-window
	 * bits; this is how far back a counter is still accepted.
	 */
	FTV_REPLAY_WINDOW = FTV_REPLAY_BITS_TOTAL - BITS_PER_LONG,
};

/**
 * struct ftv_replay - sliding window over received counters
 * @lock: protects the other fields
 * @greatest: highest counter accepted so far, plus one (0 = none yet)
 * @bitmap: ring of seen flags indexed by counter modulo the ring size
 */
struct ftv_replay {
	spinlock_t lock; /* the window below */
	u64 greatest;
	unsigned long bitmap[FTV_REPLAY_LONGS];
};

void ftv_replay_init(struct ftv_replay *replay);
bool ftv_replay_check(struct ftv_replay *replay, u64 counter);

#ifdef DEBUG
bool ftv_replay_selftest(void);
#endif

#endif /* _FTV_REPLAY_H */
