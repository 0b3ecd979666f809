// SPDX-License-Identifier: GPL-2.0
/*
 * Handshake rate limiting. An initiation reaches the expensive part of the
 * key exchange (four X25519 operations) only if its sender completed the
 * TCP handshake, which proves it receives at its source address, and only
 * if that address and everyone together are within their budgets. A flood
 * from many addresses is bounded by the total, and an established session
 * never needs this path, so it keeps working during one.
 */

#include "ratelimiter.h"

#include <linux/ktime.h>
#include <linux/random.h>

/**
 * ftv_ratelimiter_init - start with full buckets
 * @rl: the rate limiter
 */
void ftv_ratelimiter_init(struct ftv_ratelimiter *rl)
{
	spin_lock_init(&rl->lock);
	get_random_bytes(&rl->key, sizeof(rl->key));
	memset(rl->source, 0, sizeof(rl->source));
	rl->total.tokens = 0;
	rl->total.last = 0;
}

/* Refill @b for the time passed, then take one event's worth of credit. */
static bool take(struct ftv_bucket *b, u64 now, u64 rate, u64 burst)
{
	u64 cost = NSEC_PER_SEC / rate;

	b->tokens = min(b->tokens + (now - b->last), cost * burst);
	b->last = now;
	if (b->tokens < cost)
		return false;
	b->tokens -= cost;
	return true;
}

/**
 * ftv_ratelimiter_allow - whether one more initiation from @source is allowed
 * @rl: the rate limiter
 * @source: the sender's address (IPv4 in the first word)
 *
 * Return: true if within both the per-source and the total budget.
 */
bool ftv_ratelimiter_allow(struct ftv_ratelimiter *rl,
			   const struct in6_addr *source)
{
	u32 index = siphash(source, sizeof(*source), &rl->key) %
		    FTV_RL_BUCKETS;
	u64 now = ktime_get_coarse_boottime_ns();
	struct ftv_bucket *b = &rl->source[index];
	bool ok;

	spin_lock_bh(&rl->lock);
	/* A bucket not seen before starts full. */
	if (!b->last)
		b->last = now - NSEC_PER_SEC;
	if (!rl->total.last)
		rl->total.last = now - NSEC_PER_SEC;
	ok = take(b, now, FTV_RL_PER_SOURCE, FTV_RL_PER_SOURCE_BURST) &&
	     take(&rl->total, now, FTV_RL_TOTAL, FTV_RL_TOTAL_BURST);
	spin_unlock_bh(&rl->lock);
	return ok;
}
