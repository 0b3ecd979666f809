// SPDX-License-Identifier: GPL-2.0
/*
 * Included at the end of token.c in debug builds. The known answers come
 * from selftests/ftvtoken.py, written from docs/protocol.md:
 *   key = token_key(bytes(range(32)), bytes(range(32, 64)))
 *   token_isn(key, 0x12345678, 0x0abcdef0)
 *   token_isn(token_key(bytes(range(32))), 0xfffffffe, 175000000)
 */

static bool __init token_known_answers(void)
{
	u8 pub[FTV_KEY_SIZE], psk[FTV_KEY_SIZE];
	siphash_key_t key;
	unsigned int i;

	for (i = 0; i < FTV_KEY_SIZE; i++) {
		pub[i] = i;
		psk[i] = FTV_KEY_SIZE + i;
	}
	ftv_token_key(&key, pub, psk);
	if (key.key[0] != 0xe7e99cf937c1d63bULL ||
	    key.key[1] != 0x3e664ff2c95b616fULL ||
	    token_isn(&key, 0x12345678, 0x0abcdef0) != 0xd6a3b15e)
		return false;
	memset(psk, 0, sizeof(psk));
	ftv_token_key(&key, pub, psk);
	return token_isn(&key, 0xfffffffe, 175000000) == 0x71d947fb;
}

/* A token made now passes, once; a neighbour of it, a stale one and one
 * under another key do not.
 */
static bool __init token_round_trip(struct ftv_token_keys *keys,
				    struct ftv_token_cache *cache)
{
	u32 isn, tsval;

	ftv_token_make(&keys->key[1], &isn, &tsval);
	if (!ftv_token_check(keys, isn, tsval) ||
	    ftv_token_check(keys, isn ^ 1, tsval) ||
	    ftv_token_check(keys, isn, tsval + 1) ||
	    ftv_token_cache_seen(cache, isn, tsval) ||
	    !ftv_token_cache_seen(cache, isn, tsval))
		return false;
	isn = token_isn(&keys->key[1], tsval,
			now_step() - FTV_TOKEN_WINDOW_STEPS - 1);
	if (ftv_token_check(keys, isn, tsval))
		return false;
	keys->n = 1;
	ftv_token_make(&keys->key[1], &isn, &tsval);
	return !ftv_token_check(keys, isn, tsval);
}

/**
 * ftv_token_selftest - check token derivation, checks and the replay cache
 *
 * Return: true if every case behaves as expected.
 */
bool __init ftv_token_selftest(void)
{
	static const u8 no_psk[FTV_KEY_SIZE];
	struct ftv_token_cache *cache;
	struct ftv_token_keys *keys;
	u8 pub[FTV_KEY_SIZE];
	bool ok;

	keys = kzalloc(struct_size(keys, key, 2), GFP_KERNEL);
	cache = ftv_token_cache_create();
	ok = keys && cache;
	if (ok) {
		get_random_bytes(pub, sizeof(pub));
		ftv_token_key(&keys->key[0], pub, no_psk);
		get_random_bytes(&keys->key[1], sizeof(keys->key[1]));
		keys->n = 2;
		ok = token_known_answers() && token_round_trip(keys, cache);
	}
	kfree(keys);
	ftv_token_cache_free(cache);
	if (ok)
		pr_info("token self-tests: pass\n");
	else
		pr_err("token self-tests: failed\n");
	return ok;
}
