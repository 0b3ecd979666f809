// SPDX-License-Identifier: GPL-2.0
/*
 * Replay protection: a ring of FTV_REPLAY_BITS_TOTAL bits over the counters
 * of one receive key. Counters may arrive out of order (the inner traffic
 * can be reordered on the path), so anything within FTV_REPLAY_WINDOW of the
 * highest counter seen is accepted once.
 */

#include "replay.h"

#include <linux/bitops.h>

/**
 * ftv_replay_init - start an empty window
 * @replay: the window
 */
void ftv_replay_init(struct ftv_replay *replay)
{
	spin_lock_init(&replay->lock);
	replay->greatest = 0;
	bitmap_zero(replay->bitmap, FTV_REPLAY_BITS_TOTAL);
}

/* Clear the words that the window slides over when it advances to @top. */
static void slide(struct ftv_replay *replay, u64 top)
{
	u64 old_word, new_word, steps, i;

	/* An empty window has nothing stale to clear. */
	if (!replay->greatest)
		return;
	old_word = (replay->greatest - 1) / BITS_PER_LONG;
	new_word = top / BITS_PER_LONG;
	steps = min_t(u64, new_word - old_word, FTV_REPLAY_LONGS);
	for (i = 1; i <= steps; ++i)
		replay->bitmap[(old_word + i) % FTV_REPLAY_LONGS] = 0;
}

/**
 * ftv_replay_check - accept @counter once, refuse it if seen or too old
 * @replay: the window
 * @counter: counter of an authenticated message
 *
 * Call only after the message authenticated, so forgeries cannot move the
 * window. Return: true if the message is new and should be delivered.
 */
bool ftv_replay_check(struct ftv_replay *replay, u64 counter)
{
	unsigned long index;
	bool fresh;

	spin_lock_bh(&replay->lock);
	if (counter >= replay->greatest) {
		slide(replay, counter);
		replay->greatest = counter + 1;
	} else if (replay->greatest - counter > FTV_REPLAY_WINDOW) {
		spin_unlock_bh(&replay->lock);
		return false;
	}
	index = counter % FTV_REPLAY_BITS_TOTAL;
	fresh = !test_and_set_bit(index, replay->bitmap);
	spin_unlock_bh(&replay->lock);
	return fresh;
}

#ifdef DEBUG
#include "selftest/replay.c"
#endif
