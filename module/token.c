// SPDX-License-Identifier: GPL-2.0
/*
 * SYN tokens. A prober that connects to the listen port must find what it
 * finds at any port: the host's own answer. So the responder takes only
 * SYNs that prove their sender knows its public key (and the peer's
 * pre-shared key, when one is set). The proof rides in the ISN, which every
 * SYN has (docs/protocol.md, section 1.6, has the derivations):
 *
 *   K0    = the token key of the responder's public key and no PSK
 *   Kp    = the token key of the responder's public key and a PSK
 *   TSval = now_ms + a random offset, as Linux's timestamps
 *   v     = SipHash(K0, TSval || now_s / 10)
 *   ISN   = low 32 bits of v                               (no PSK)
 *   ISN   = (tag(Kp) ^ bits 32..47 of v) << 16
 *           | low 16 bits of SipHash(Kp, TSval || now_s / 10)  (a PSK)
 *
 * The responder tries its clock's 10-second step and the 6 either side.
 * With a PSK, the masked tag names the key to try, so the work per SYN is
 * the same however many pre-shared keys the peers have: 13 SipHashes and
 * table lookups, plus one SipHash per key whose tag matches by chance.
 * Nothing of the 4-tuple is in the hash: NAT rewrites the initiator's
 * address and port, and port forwarding the responder's, so neither side
 * knows the tuple the other sees. A token is single use instead: the
 * responder remembers those it took for as long as they could pass the
 * clock check, and a replay (from anywhere) goes on to the host.
 */

#include "token.h"
#include "device.h"
#include "peer.h"

#include <crypto/sha2.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

struct token_input {
	u32 tsval;
	u32 step;
};

static const struct rhashtable_params psk_params = {
	.key_len = sizeof(u16),
	.key_offset = offsetof(struct ftv_token_psk, tag),
	.head_offset = offsetof(struct ftv_token_psk, node),
	.automatic_shrinking = true,
};

/**
 * ftv_token_key - the token key for a responder and a pre-shared key
 * @key: the key
 * @public_key: the responder's static public key
 * @preshared_key: the pre-shared key, all zeros when none is set
 */
void ftv_token_key(siphash_key_t *key, const u8 public_key[FTV_KEY_SIZE],
		   const u8 preshared_key[FTV_KEY_SIZE])
{
	static const char label[] = "ftv SYN token v1";
	u8 digest[SHA256_DIGEST_SIZE];
	struct ftv_compat_sha256 state;
	__le64 half[2];

	sha256_init(&state);
	sha256_update(&state, label, sizeof(label) - 1);
	sha256_update(&state, public_key, FTV_KEY_SIZE);
	sha256_update(&state, preshared_key, FTV_KEY_SIZE);
	sha256_final(&state, digest);
	memcpy(half, digest, sizeof(half));
	key->key[0] = le64_to_cpu(half[0]);
	key->key[1] = le64_to_cpu(half[1]);
	memzero_explicit(digest, sizeof(digest));
	memzero_explicit(half, sizeof(half));
}

static u64 token_hash(const siphash_key_t *key, u32 tsval, u32 step)
{
	const struct token_input in = { .tsval = tsval, .step = step };

	return siphash(&in, sizeof(in), key);
}

/* What a SYN with a pre-shared key names it by: "tag!" under its key. */
static u16 token_tag(const siphash_key_t *key)
{
	return siphash_1u32(0x21676174, key);
}

static u32 psk_isn(u64 v, const siphash_key_t *psk_key, u32 tsval, u32 step)
{
	u16 masked = token_tag(psk_key) ^ (u16)(v >> 32);

	return (u32)masked << 16 | (u16)token_hash(psk_key, tsval, step);
}

static u32 now_step(void)
{
	return ktime_get_real_seconds() / FTV_TOKEN_STEP_S;
}

/**
 * ftv_token_make - the ISN and timestamp value of an initiator's SYN
 * @responder_public: the responder's static public key
 * @preshared_key: the peer's pre-shared key, all zeros for none
 * @isn: the initial sequence number
 * @tsval: the SYN's timestamp value; later ones advance from it at 1 kHz
 */
void ftv_token_make(const u8 responder_public[FTV_KEY_SIZE],
		    const u8 preshared_key[FTV_KEY_SIZE], u32 *isn, u32 *tsval)
{
	static const u8 no_psk[FTV_KEY_SIZE];
	siphash_key_t k0, kp;
	u32 step = now_step();
	u64 v;

	ftv_token_key(&k0, responder_public, no_psk);
	*tsval = jiffies_to_msecs(jiffies) + get_random_u32();
	v = token_hash(&k0, *tsval, step);
	if (!memchr_inv(preshared_key, 0, FTV_KEY_SIZE)) {
		*isn = v;
	} else {
		ftv_token_key(&kp, responder_public, preshared_key);
		*isn = psk_isn(v, &kp, *tsval, step);
		memzero_explicit(&kp, sizeof(kp));
	}
	memzero_explicit(&k0, sizeof(k0));
}

/* Whether a PSK peer's key whose tag @isn names made @isn at @step. */
static bool psk_match(struct ftv_device *fdev, u64 v, u32 isn, u32 tsval,
		      u32 step)
{
	u16 tag = (isn >> 16) ^ (u16)(v >> 32);
	struct ftv_token_psk *psk;
	struct rhlist_head *pos, *list;

	list = rhltable_lookup(&fdev->psk_tokens, &tag, psk_params);
	rhl_for_each_entry_rcu(psk, pos, list, node)
		if ((u16)token_hash(&psk->key, tsval, step) == (u16)isn)
			return true;
	return false;
}

/**
 * ftv_token_check - whether a SYN carries a token for one of our peers
 * @fdev: the device
 * @identity: its static key pair, with the token key of its public key
 * @isn: the SYN's sequence number
 * @tsval: its timestamp value
 * @step: receives the clock step the token was made at
 *
 * A token without a pre-shared key passes only if some peer has none.
 * Call under rcu_read_lock().
 *
 * Return: true if the ISN is the token of @tsval at a time within
 * FTV_TOKEN_WINDOW_STEPS steps of our clock.
 */
bool ftv_token_check(struct ftv_device *fdev,
		     const struct ftv_identity *identity, u32 isn, u32 tsval,
		     u32 *step)
{
	unsigned int psk_peers = READ_ONCE(fdev->num_psk_peers);
	bool plain = READ_ONCE(fdev->num_peers) > psk_peers;
	u32 now = now_step(), s;
	u64 v;

	for (s = now - FTV_TOKEN_WINDOW_STEPS;
	     s != now + FTV_TOKEN_WINDOW_STEPS + 1; s++) {
		v = token_hash(&identity->token_key, tsval, s);
		if ((plain && (u32)v == isn) ||
		    (psk_peers && psk_match(fdev, v, isn, tsval, s))) {
			*step = s;
			return true;
		}
	}
	return false;
}

/**
 * ftv_token_update_peer - recompute @peer's entry after its PSK or the
 *	device's key changed
 * @peer: the peer
 *
 * Return: 0, or -ENOMEM (the peer then has no entry: its SYNs are refused
 * until the next update).
 */
int ftv_token_update_peer(struct ftv_peer *peer)
{
	struct ftv_device *fdev = peer->device;
	struct ftv_token_psk *psk = &peer->token;
	const struct ftv_identity *identity;
	u8 key[FTV_KEY_SIZE];
	int ret = 0;

	lockdep_assert_held(&fdev->device_update_lock);
	ftv_token_remove_peer(peer);
	spin_lock_bh(&peer->lock);
	memcpy(key, peer->preshared_key, sizeof(key));
	spin_unlock_bh(&peer->lock);
	/* The identity changes only under the lock held here. */
	identity = rcu_dereference_protected(fdev->identity,
					     lockdep_is_held(&fdev->device_update_lock));
	if (!memchr_inv(key, 0, sizeof(key)) || !identity)
		goto out;
	ftv_token_key(&psk->key, identity->public_key, key);
	psk->tag = token_tag(&psk->key);
	ret = rhltable_insert(&fdev->psk_tokens, &psk->node, psk_params);
	if (!ret) {
		psk->hashed = true;
		WRITE_ONCE(fdev->num_psk_peers, fdev->num_psk_peers + 1);
	}
out:
	memzero_explicit(key, sizeof(key));
	return ret;
}

/**
 * ftv_token_remove_peer - forget @peer's entry
 * @peer: the peer
 */
void ftv_token_remove_peer(struct ftv_peer *peer)
{
	struct ftv_device *fdev = peer->device;

	lockdep_assert_held(&fdev->device_update_lock);
	if (!peer->token.hashed)
		return;
	rhltable_remove(&fdev->psk_tokens, &peer->token.node, psk_params);
	peer->token.hashed = false;
	WRITE_ONCE(fdev->num_psk_peers, fdev->num_psk_peers - 1);
}

/**
 * ftv_token_update_all - recompute every entry after the device's key
 *	changed
 * @fdev: the device
 *
 * Return: 0 or the first error.
 */
int ftv_token_update_all(struct ftv_device *fdev)
{
	struct ftv_peer *peer;
	int ret = 0;

	lockdep_assert_held(&fdev->device_update_lock);
	list_for_each_entry(peer, &fdev->peer_list, peer_list)
		ret = ftv_token_update_peer(peer) ?: ret;
	return ret;
}

/**
 * ftv_token_init - the device's table of pre-shared key tokens
 * @fdev: the device
 *
 * Return: 0 or a negative errno.
 */
int ftv_token_init(struct ftv_device *fdev)
{
	return rhltable_init(&fdev->psk_tokens, &psk_params);
}

/**
 * ftv_token_uninit - free the table and the replay cache
 * @fdev: a device that is going away; no reader may be left
 */
void ftv_token_uninit(struct ftv_device *fdev)
{
	rhltable_destroy(&fdev->psk_tokens);
	kvfree(fdev->token_cache);
}

/**
 * ftv_token_cache_enable - give the device its replay cache once it
 *	listens
 * @fdev: the device
 *
 * Return: 0 or -ENOMEM.
 */
int ftv_token_cache_enable(struct ftv_device *fdev)
{
	struct ftv_token_cache *cache;

	lockdep_assert_held(&fdev->device_update_lock);
	if (fdev->token_cache)
		return 0;
	cache = kvzalloc(sizeof(*cache), GFP_KERNEL);
	if (!cache)
		return -ENOMEM;
	spin_lock_init(&cache->lock);
	get_random_bytes(&cache->key, sizeof(cache->key));
	/* Pairs with the acquire in the receive path, which reads the
	 * pointer without the lock: it sees the cache initialised.
	 */
	smp_store_release(&fdev->token_cache, cache);
	return 0;
}

/* A slot's token is still within the window of steps that pass. */
static bool slot_live(u32 slot, u32 now)
{
	s8 age = (u8)now - (u8)slot;

	return slot && age >= -FTV_TOKEN_WINDOW_STEPS &&
	       age <= FTV_TOKEN_WINDOW_STEPS;
}

/* Of two live slots, whether @a's token leaves the window first. */
static bool slot_older(u32 a, u32 b, u32 now)
{
	return (s8)((u8)now - (u8)a) > (s8)((u8)now - (u8)b);
}

/**
 * ftv_token_cache_seen - note a valid token, or find that it was seen
 * @cache: the device's cache
 * @isn: the SYN's sequence number
 * @tsval: its timestamp value
 * @step: the step ftv_token_check() found it was made at
 *
 * A token is remembered until its step leaves the window, which covers
 * every time at which it can still pass the clock check. When a bucket is
 * full of live tokens (only holders of a key can fill one) the one that
 * leaves the window first makes room.
 *
 * Return: true if the same SYN was seen before: a replay.
 */
bool ftv_token_cache_seen(struct ftv_token_cache *cache, u32 isn, u32 tsval,
			  u32 step)
{
	const struct token_input in = { .tsval = tsval, .step = isn };
	u64 h = siphash(&in, sizeof(in), &cache->key);
	u32 *slots = cache->slot[h & (FTV_TOKEN_CACHE_BUCKETS - 1)];
	u32 fp = ((h >> FTV_TOKEN_CACHE_BITS) & 0xffffff) ?: 1;
	u32 entry = fp << 8 | (u8)step, now = now_step();
	unsigned int i, victim = 0;
	bool seen = false;

	spin_lock_bh(&cache->lock);
	for (i = 0; i < FTV_TOKEN_CACHE_WAYS; i++) {
		if (slots[i] >> 8 == fp && slot_live(slots[i], now)) {
			seen = true;
			goto out;
		}
		if (!slot_live(slots[victim], now))
			continue;
		if (!slot_live(slots[i], now) ||
		    slot_older(slots[i], slots[victim], now))
			victim = i;
	}
	slots[victim] = entry;
out:
	spin_unlock_bh(&cache->lock);
	return seen;
}

#ifdef DEBUG
#include "selftest/token.c"
#endif
