/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_TOKEN_H
#define _FTV_TOKEN_H

#include "messages.h"

#include <linux/rhashtable-types.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>

struct ftv_device;
struct ftv_identity;
struct ftv_peer;

enum ftv_token_limits {
	FTV_TOKEN_STEP_S = 10,		/* the clock in tokens */
	FTV_TOKEN_WINDOW_STEPS = 6,	/* steps either side that pass */
	/* The replay cache: 2^15 buckets of 8 tokens, 1 MiB. A token stays
	 * until its step leaves the window, at most 13 steps: at 1,000 SYNs
	 * a second that is about 70,000 live tokens, 27 % of the slots.
	 */
	FTV_TOKEN_CACHE_BITS = 15,
	FTV_TOKEN_CACHE_BUCKETS = 1 << FTV_TOKEN_CACHE_BITS,
	FTV_TOKEN_CACHE_WAYS = 8,
};

/**
 * struct ftv_token_psk - the token key of one peer's pre-shared key
 * @node: entry in ftv_device.psk_tokens, keyed by @tag
 * @tag: 16 bits of a hash of @key; a SYN names it, masked
 * @key: ftv_token_key() of the device's public key and the PSK
 * @hashed: @node is in the table
 */
struct ftv_token_psk {
	struct rhlist_head node;
	u16 tag;
	siphash_key_t key;
	bool hashed;
};

/**
 * struct ftv_token_cache - SYN tokens seen lately, to refuse replays
 * @lock: serialises lookups and insertions
 * @key: keys the fingerprints, so that nobody can aim at one bucket
 * @slot: a 24-bit fingerprint and the low 8 bits of the token's clock
 *	step; 0 is an empty slot
 */
struct ftv_token_cache {
	spinlock_t lock; /* the slots */
	siphash_key_t key;
	u32 slot[FTV_TOKEN_CACHE_BUCKETS][FTV_TOKEN_CACHE_WAYS];
};

void ftv_token_key(siphash_key_t *key, const u8 public_key[FTV_KEY_SIZE],
		   const u8 preshared_key[FTV_KEY_SIZE]);
void ftv_token_make(const u8 responder_public[FTV_KEY_SIZE],
		    const u8 preshared_key[FTV_KEY_SIZE], u32 *isn, u32 *tsval);
bool ftv_token_check(struct ftv_device *fdev,
		     const struct ftv_identity *identity, u32 isn, u32 tsval,
		     u32 *step);
int ftv_token_init(struct ftv_device *fdev);
void ftv_token_uninit(struct ftv_device *fdev);
int ftv_token_update_peer(struct ftv_peer *peer);
void ftv_token_remove_peer(struct ftv_peer *peer);
int ftv_token_update_all(struct ftv_device *fdev);
int ftv_token_cache_enable(struct ftv_device *fdev);
bool ftv_token_cache_seen(struct ftv_token_cache *cache, u32 isn, u32 tsval,
			  u32 step);

#ifdef DEBUG
bool ftv_token_selftest(void);
#endif

#endif /* _FTV_TOKEN_H */
