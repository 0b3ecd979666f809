/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_RATELIMITER_H
#define _FTV_RATELIMITER_H

#include <linux/in6.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>

enum ftv_ratelimiter_limits {
	FTV_RL_BUCKETS = 1024,
	/* Initiations per second from one source address, and in all. */
	FTV_RL_PER_SOURCE = 20,
	FTV_RL_PER_SOURCE_BURST = 10,
	FTV_RL_TOTAL = 100,
	FTV_RL_TOTAL_BURST = 50,
};

/**
 * struct ftv_bucket - a token bucket counted in nanoseconds of credit
 * @tokens: credit available
 * @last: when @tokens was last refilled
 */
struct ftv_bucket {
	u64 tokens;
	u64 last;
};

/**
 * struct ftv_ratelimiter - bounds the key-exchange work strangers can cause
 * @lock: protects the buckets
 * @key: hashes source addresses to buckets
 * @total: all sources together
 * @source: per source address; colliding sources share, which only
 *	makes the limit stricter for them
 */
struct ftv_ratelimiter {
	spinlock_t lock; /* the buckets below */
	siphash_key_t key;
	struct ftv_bucket total;
	struct ftv_bucket source[FTV_RL_BUCKETS];
};

void ftv_ratelimiter_init(struct ftv_ratelimiter *rl);
bool ftv_ratelimiter_allow(struct ftv_ratelimiter *rl,
			   const struct in6_addr *source);

#endif /* _FTV_RATELIMITER_H */
