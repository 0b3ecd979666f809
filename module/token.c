// SPDX-License-Identifier: GPL-2.0
/*
 * SYN tokens. A prober that connects to the listen port must find what it
 * finds at any port: the host's own answer. So the responder takes only
 * SYNs that prove their sender knows its public key (and the pre-shared
 * key, when one is set). The proof rides in the ISN, which every SYN has:
 *
 *   K     = SHA-256("ftv SYN token v1" || responder public key || PSK)[0..16)
 *   TSval = now_ms + a random offset, as Linux's timestamps
 *   ISN   = SipHash(K, TSval || now_s / 10)	(low 32 bits)
 *
 * The responder tries its clock's 10-second step and the 6 either side:
 * a forged SYN has one chance in 2^32 / 13 (and one per key) to pass.
 * Nothing of the 4-tuple is in the hash: NAT rewrites the initiator's
 * address and port, and port forwarding the responder's, so neither side
 * knows the tuple the other sees. A token is single use instead: the
 * responder remembers those it took for as long as they could pass the
 * clock check, and a replay (from anywhere) goes on to the host.
 */

#include "token.h"
#include "conn.h"
#include "device.h"
#include "peer.h"

#include <crypto/sha2.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

struct token_input {
	u32 tsval;
	u32 step;
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
	struct sha256_state state;
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

static u32 token_isn(const siphash_key_t *key, u32 tsval, u32 step)
{
	const struct token_input in = { .tsval = tsval, .step = step };

	return siphash(&in, sizeof(in), key);
}

static u32 now_step(void)
{
	return ktime_get_real_seconds() / FTV_TOKEN_STEP_S;
}

/**
 * ftv_token_make - the ISN and timestamp value of an initiator's SYN
 * @key: ftv_token_key() of the responder's public key and the PSK
 * @isn: the initial sequence number
 * @tsval: the SYN's timestamp value; later ones advance from it at 1 kHz
 */
void ftv_token_make(const siphash_key_t *key, u32 *isn, u32 *tsval)
{
	*tsval = jiffies_to_msecs(jiffies) + get_random_u32();
	*isn = token_isn(key, *tsval, now_step());
}

/**
 * ftv_token_check - whether a SYN carries a token from one of @keys
 * @keys: the responder's keys
 * @isn: the SYN's sequence number
 * @tsval: its timestamp value
 *
 * Return: true if the ISN is the token of @tsval under one of @keys at a
 * time within FTV_TOKEN_WINDOW_STEPS steps of our clock.
 */
bool ftv_token_check(const struct ftv_token_keys *keys, u32 isn, u32 tsval)
{
	u32 now = now_step(), step;
	unsigned int i;

	for (i = 0; i < keys->n; i++)
		for (step = now - FTV_TOKEN_WINDOW_STEPS;
		     step != now + FTV_TOKEN_WINDOW_STEPS + 1; step++)
			if (isn == token_isn(&keys->key[i], tsval, step))
				return true;
	return false;
}

static void keys_free_rcu(struct rcu_head *rcu)
{
	kfree_sensitive(container_of(rcu, struct ftv_token_keys, rcu));
}

/**
 * ftv_token_update_keys - recompute the keys SYN tokens are checked with
 * @fdev: the device, after its private key or a peer's PSK changed, or a
 *	peer came or went
 *
 * On failure to allocate, the old keys stay.
 */
void ftv_token_update_keys(struct ftv_device *fdev)
{
	static const u8 no_psk[FTV_KEY_SIZE];
	struct ftv_token_keys *keys, *old;
	struct ftv_identity identity;
	u8 psk[FTV_KEY_SIZE];
	struct ftv_peer *peer;
	unsigned int i, n;

	lockdep_assert_held(&fdev->device_update_lock);
	keys = NULL;
	if (!ftv_device_copy_identity(fdev, &identity))
		goto replace;
	keys = kzalloc(struct_size(keys, key, fdev->num_peers + 1),
		       GFP_KERNEL);
	if (!keys)
		goto out;
	ftv_token_key(&keys->key[0], identity.public_key, no_psk);
	n = 1;
	list_for_each_entry(peer, &fdev->peer_list, peer_list) {
		spin_lock_bh(&peer->lock);
		memcpy(psk, peer->preshared_key, sizeof(psk));
		spin_unlock_bh(&peer->lock);
		if (!memcmp(psk, no_psk, sizeof(psk)))
			continue;
		ftv_token_key(&keys->key[n], identity.public_key, psk);
		for (i = 1; i < n; i++)
			if (!memcmp(&keys->key[i], &keys->key[n],
				    sizeof(keys->key[n])))
				break;
		if (i == n)
			n++;
	}
	keys->n = n;
replace:
	old = rcu_replace_pointer(fdev->token_keys, keys,
				  lockdep_is_held(&fdev->device_update_lock));
	if (old)
		call_rcu(&old->rcu, keys_free_rcu);
out:
	memzero_explicit(psk, sizeof(psk));
	memzero_explicit(&identity, sizeof(identity));
}

/**
 * ftv_token_free_keys - free the keys of a device that is going away
 * @fdev: the device; no reader may be left
 */
void ftv_token_free_keys(struct ftv_device *fdev)
{
	kfree_sensitive(rcu_dereference_protected(fdev->token_keys, true));
}

/**
 * ftv_token_cache_create - an empty cache of tokens seen
 *
 * Return: the cache, or NULL.
 */
struct ftv_token_cache *ftv_token_cache_create(void)
{
	struct ftv_token_cache *cache = kvzalloc(sizeof(*cache), GFP_KERNEL);

	if (cache) {
		spin_lock_init(&cache->lock);
		get_random_bytes(&cache->key, sizeof(cache->key));
	}
	return cache;
}

/**
 * ftv_token_cache_free - free a cache
 * @cache: the cache, or NULL
 */
void ftv_token_cache_free(struct ftv_token_cache *cache)
{
	kvfree(cache);
}

/**
 * ftv_token_cache_seen - note a valid token, or find that it was seen
 * @cache: the device's cache
 * @isn: the SYN's sequence number
 * @tsval: its timestamp value
 *
 * A token stays for twice the window, which covers every time at which it
 * can still pass the clock check. When a bucket is full of live tokens
 * (only holders of a key can fill one) the oldest makes room.
 *
 * Return: true if the same SYN was seen before: a replay.
 */
bool ftv_token_cache_seen(struct ftv_token_cache *cache, u32 isn, u32 tsval)
{
	const struct token_input in = { .tsval = tsval, .step = isn };
	u64 fp = siphash(&in, sizeof(in), &cache->key);
	unsigned int bucket = fp % FTV_TOKEN_CACHE_BUCKETS, i, victim = 0;
	unsigned long now = jiffies;
	bool seen = false;

	spin_lock_bh(&cache->lock);
	for (i = 0; i < FTV_TOKEN_CACHE_WAYS; i++) {
		if (cache->slot[bucket][i].fingerprint == fp &&
		    time_before(now, cache->slot[bucket][i].expires)) {
			seen = true;
			goto out;
		}
		if (time_before(cache->slot[bucket][i].expires,
				cache->slot[bucket][victim].expires))
			victim = i;
	}
	cache->slot[bucket][victim].fingerprint = fp;
	cache->slot[bucket][victim].expires =
		now + (2 * FTV_TOKEN_WINDOW_STEPS + 2) * FTV_TOKEN_STEP_S * HZ;
out:
	spin_unlock_bh(&cache->lock);
	return seen;
}

#ifdef DEBUG
#include "selftest/token.c"
#endif
