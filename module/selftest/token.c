// SPDX-License-Identifier: GPL-2.0
/*
 * Included at the end of token.c in debug builds. The known answers come
 * from selftests/lib/ftvtoken.py, written from docs/protocol.md:
 *   pub = bytes(range(32)); psk = bytes(range(32, 64))
 *   token_key(pub, psk)
 *   token_isn(pub, psk, 0x12345678, 0x0abcdef0)
 *   token_isn(pub, bytes(32), 0xfffffffe, 175000000)
 */

static bool __init token_known_answers(void)
{
	u8 pub[FTV_KEY_SIZE], psk[FTV_KEY_SIZE];
	siphash_key_t k0, kp;
	unsigned int i;

	for (i = 0; i < FTV_KEY_SIZE; i++) {
		pub[i] = i;
		psk[i] = FTV_KEY_SIZE + i;
	}
	ftv_token_key(&kp, pub, psk);
	memset(psk, 0, sizeof(psk));
	ftv_token_key(&k0, pub, psk);
	return kp.key[0] == 0xe7e99cf937c1d63bULL &&
	       kp.key[1] == 0x3e664ff2c95b616fULL &&
	       token_tag(&kp) == 0x24b4 &&
	       psk_isn(token_hash(&k0, 0x12345678, 0x0abcdef0), &kp,
		       0x12345678, 0x0abcdef0) == 0xe5b2b15e &&
	       (u32)token_hash(&k0, 0xfffffffe, 175000000) == 0x71d947fb;
}

/* A device with two peers, one of them with @psk, checking under @pub. */
static bool __init token_round_trip(struct ftv_device *fdev,
				    struct ftv_identity *id,
				    struct ftv_token_psk *entry,
				    struct ftv_token_cache *cache)
{
	static const u8 no_psk[FTV_KEY_SIZE];
	u8 pub[FTV_KEY_SIZE], psk[FTV_KEY_SIZE];
	u32 isn, tsval, step;
	bool ok;

	get_random_bytes(pub, sizeof(pub));
	get_random_bytes(psk, sizeof(psk));
	ftv_token_key(&id->token_key, pub, no_psk);
	ftv_token_key(&entry->key, pub, psk);
	entry->tag = token_tag(&entry->key);
	if (rhltable_insert(&fdev->psk_tokens, &entry->node, psk_params))
		return false;
	fdev->num_peers = 2;
	fdev->num_psk_peers = 1;

	ftv_token_make(pub, psk, &isn, &tsval);
	ok = ftv_token_check(fdev, id, isn, tsval, &step) &&
	     step == now_step() &&
	     !ftv_token_check(fdev, id, isn ^ 1, tsval, &step) &&
	     !ftv_token_check(fdev, id, isn, tsval + 1, &step) &&
	     !ftv_token_cache_seen(cache, isn, tsval, step) &&
	     ftv_token_cache_seen(cache, isn, tsval, step);
	/* A token without the PSK, made with the right public key, passes
	 * only while some peer has no PSK.
	 */
	ftv_token_make(pub, no_psk, &isn, &tsval);
	ok = ok && ftv_token_check(fdev, id, isn, tsval, &step);
	fdev->num_peers = 1;
	ok = ok && !ftv_token_check(fdev, id, isn, tsval, &step);
	/* Too old a step fails. */
	isn = token_hash(&id->token_key, tsval,
			 now_step() - FTV_TOKEN_WINDOW_STEPS - 1);
	fdev->num_peers = 2;
	ok = ok && !ftv_token_check(fdev, id, isn, tsval, &step);
	rhltable_remove(&fdev->psk_tokens, &entry->node, psk_params);
	memzero_explicit(psk, sizeof(psk));
	return ok;
}

/*
 * 70,000 live tokens, what 1,000 SYNs a second leave in the cache: every
 * new one is taken (a false "seen" refuses a genuine SYN: at most a
 * couple, from 24-bit fingerprints), and nearly every one of them seen
 * again is a replay (the few buckets that overflowed forgot their
 * oldest).
 */
static bool __init token_cache_capacity(struct ftv_token_cache *cache)
{
	enum { N = 70000 };
	u32 step = now_step(), i, first = 0, again = 0;

	for (i = 0; i < N; i++) {
		first += ftv_token_cache_seen(cache, i, ~i, step);
		cond_resched();
	}
	for (i = 0; i < N; i++)
		again += ftv_token_cache_seen(cache, i, ~i, step);
	pr_info("token cache: %u of %u new tokens taken for replays, %u of them recognised again\n",
		first, N, again);
	if (first > 2 || again < N - N / 1000)
		return false;
	/* A token whose step left the window is forgotten. */
	return !ftv_token_cache_seen(cache, N, 0,
				     step - FTV_TOKEN_WINDOW_STEPS - 1) &&
	       !ftv_token_cache_seen(cache, N, 0,
				     step - FTV_TOKEN_WINDOW_STEPS - 1);
}

/**
 * ftv_token_selftest - check token derivation, checks and the replay cache
 *
 * Return: true if every case behaves as expected.
 */
bool __init ftv_token_selftest(void)
{
	struct ftv_token_cache *cache;
	struct ftv_token_psk *entry;
	struct ftv_identity *id;
	struct ftv_device *fdev;
	bool ok = false;

	fdev = kzalloc(sizeof(*fdev), GFP_KERNEL);
	id = kzalloc(sizeof(*id), GFP_KERNEL);
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	cache = kvzalloc(sizeof(*cache), GFP_KERNEL);
	if (fdev && id && entry && cache && !ftv_token_init(fdev)) {
		spin_lock_init(&cache->lock);
		get_random_bytes(&cache->key, sizeof(cache->key));
		rcu_read_lock();
		ok = token_known_answers() &&
		     token_round_trip(fdev, id, entry, cache);
		rcu_read_unlock();
		ok = ok && token_cache_capacity(cache);
		rhltable_destroy(&fdev->psk_tokens);
	}
	kvfree(cache);
	kfree(entry);
	kfree_sensitive(id);
	kfree(fdev);
	if (ok)
		pr_info("token self-tests: pass\n");
	else
		pr_err("token self-tests: failed\n");
	return ok;
}
