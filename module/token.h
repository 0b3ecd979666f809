/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_TOKEN_H
#define _FTV_TOKEN_H

#include "messages.h"

#include <linux/rcupdate.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>

struct ftv_device;

/**
 * struct ftv_token_keys - the keys a responder checks SYN tokens with
 * @rcu: for freeing after readers in the receive path are done
 * @n: number of keys in @key
 * @key: one without a pre-shared key, then one per distinct pre-shared key
 *	of the device's peers
 */
struct ftv_token_keys {
	struct rcu_head rcu;
	unsigned int n;
	siphash_key_t key[];
};

enum ftv_token_limits {
	FTV_TOKEN_STEP_S = 10,		/* the clock in tokens */
	FTV_TOKEN_WINDOW_STEPS = 6,	/* steps either side that pass */
	FTV_TOKEN_CACHE_BUCKETS = 1024,
	FTV_TOKEN_CACHE_WAYS = 4,
};

/**
 * struct ftv_token_cache - SYN tokens seen lately, to refuse replays
 * @lock: serialises lookups and insertions
 * @key: keys the fingerprints, so that nobody can aim at one bucket
 * @slot: fingerprint and expiry (jiffies) of each token seen
 */
struct ftv_token_cache {
	spinlock_t lock; /* the slots */
	siphash_key_t key;
	struct {
		u64 fingerprint;
		unsigned long expires;
	} slot[FTV_TOKEN_CACHE_BUCKETS][FTV_TOKEN_CACHE_WAYS];
};

void ftv_token_key(siphash_key_t *key, const u8 public_key[FTV_KEY_SIZE],
		   const u8 preshared_key[FTV_KEY_SIZE]);
void ftv_token_make(const siphash_key_t *key, u32 *isn, u32 *tsval);
bool ftv_token_check(const struct ftv_token_keys *keys, u32 isn, u32 tsval);
void ftv_token_update_keys(struct ftv_device *fdev);
void ftv_token_free_keys(struct ftv_device *fdev);
struct ftv_token_cache *ftv_token_cache_create(void);
void ftv_token_cache_free(struct ftv_token_cache *cache);
bool ftv_token_cache_seen(struct ftv_token_cache *cache, u32 isn, u32 tsval);
bool ftv_token_selftest(void);

#endif /* _FTV_TOKEN_H */
