// SPDX-License-Identifier: GPL-2.0
/*
 * The key exchange: the Noise IKpsk2 pattern over X25519, ChaCha20-Poly1305
 * and SHA-256, carried as the first payload of each direction of a fake TCP
 * connection. The initiator knows the responder's static key; its own static
 * key travels encrypted, so a passive observer cannot tell who connects. The
 * responder's ephemeral key makes every session's keys fresh on both sides,
 * which is what keeps nonces from repeating across reconnects and reloads.
 * docs/protocol.md writes out each step.
 */

#include "noise.h"
#include "device.h"
#include "peer.h"

#include <crypto/sha2.h>
#include <linux/ktime.h>
#include <linux/string.h>

static const u8 construction[] = "Noise_IKpsk2_25519_ChaChaPoly_SHA256";
static const u8 identifier[] = "ftv v1 fake-tcp tunnel";

/* HASH(construction) and HASH(that || identifier), the same for everyone. */
static u8 initial_chaining_key[FTV_HASH_SIZE] __ro_after_init;
static u8 initial_hash[FTV_HASH_SIZE] __ro_after_init;

static void hash2(u8 out[FTV_HASH_SIZE], const u8 *a, size_t alen,
		  const u8 *b, size_t blen)
{
	struct sha256_state state;

	sha256_init(&state);
	sha256_update(&state, a, alen);
	sha256_update(&state, b, blen);
	sha256_final(&state, out);
}

static void hmac(u8 out[FTV_HASH_SIZE], const u8 *key, size_t keylen,
		 const u8 *in, size_t inlen)
{
	u8 block[SHA256_BLOCK_SIZE] = { 0 };
	u8 inner[FTV_HASH_SIZE];
	int i;

	if (keylen > SHA256_BLOCK_SIZE)
		sha256(key, keylen, block);
	else
		memcpy(block, key, keylen);
	for (i = 0; i < SHA256_BLOCK_SIZE; ++i)
		block[i] ^= 0x36;
	hash2(inner, block, SHA256_BLOCK_SIZE, in, inlen);
	for (i = 0; i < SHA256_BLOCK_SIZE; ++i)
		block[i] ^= 0x36 ^ 0x5c;
	hash2(out, block, SHA256_BLOCK_SIZE, inner, FTV_HASH_SIZE);
	memzero_explicit(block, sizeof(block));
	memzero_explicit(inner, sizeof(inner));
}

/* HKDF as Noise uses it: up to three outputs from chaining key and input. */
static void kdf(u8 *out1, u8 *out2, u8 *out3, const u8 *input,
		size_t inlen, const u8 chaining_key[FTV_HASH_SIZE])
{
	u8 prk[FTV_HASH_SIZE], t[FTV_HASH_SIZE + 1];

	hmac(prk, chaining_key, FTV_HASH_SIZE, input, inlen);
	t[0] = 1;
	hmac(t, prk, FTV_HASH_SIZE, t, 1);
	memcpy(out1, t, FTV_HASH_SIZE);
	if (out2) {
		t[FTV_HASH_SIZE] = 2;
		hmac(t, prk, FTV_HASH_SIZE, t, FTV_HASH_SIZE + 1);
		memcpy(out2, t, FTV_HASH_SIZE);
	}
	if (out3) {
		t[FTV_HASH_SIZE] = 3;
		hmac(t, prk, FTV_HASH_SIZE, t, FTV_HASH_SIZE + 1);
		memcpy(out3, t, FTV_HASH_SIZE);
	}
	memzero_explicit(prk, sizeof(prk));
	memzero_explicit(t, sizeof(t));
}

static void mix_hash(u8 hash[FTV_HASH_SIZE], const u8 *data, size_t len)
{
	hash2(hash, hash, FTV_HASH_SIZE, data, len);
}

/* ck, k = KDF(ck, DH(private, public)); fails on a low-order point. */
static bool mix_dh(u8 chaining_key[FTV_HASH_SIZE], u8 *key,
		   const u8 private[FTV_KEY_SIZE], const u8 public[FTV_KEY_SIZE])
{
	u8 shared[FTV_KEY_SIZE];
	bool ok;

	ok = curve25519(shared, private, public);
	if (ok)
		kdf(chaining_key, key, NULL, shared, FTV_KEY_SIZE,
		    chaining_key);
	memzero_explicit(shared, sizeof(shared));
	return ok;
}

static void seal(u8 *dst, const u8 *src, size_t len, u8 hash[FTV_HASH_SIZE],
		 const u8 key[FTV_KEY_SIZE])
{
	chacha20poly1305_encrypt(dst, src, len, hash, FTV_HASH_SIZE, 0, key);
	mix_hash(hash, dst, ftv_sealed_len(len));
}

static bool unseal(u8 *dst, const u8 *src, size_t len,
		   u8 hash[FTV_HASH_SIZE], const u8 key[FTV_KEY_SIZE])
{
	if (!chacha20poly1305_decrypt(dst, src, ftv_sealed_len(len), hash,
				      FTV_HASH_SIZE, 0, key))
		return false;
	mix_hash(hash, src, ftv_sealed_len(len));
	return true;
}

/* h and ck before the first message, bound to the responder's static key. */
static void handshake_start(struct ftv_handshake *hs,
			    const u8 responder_static[FTV_KEY_SIZE])
{
	memcpy(hs->chaining_key, initial_chaining_key, FTV_HASH_SIZE);
	memcpy(hs->hash, initial_hash, FTV_HASH_SIZE);
	mix_hash(hs->hash, responder_static, FTV_KEY_SIZE);
}

/* Mix in an ephemeral public key, as sent in the clear. */
static void mix_ephemeral(struct ftv_handshake *hs,
			  const u8 ephemeral[FTV_KEY_SIZE])
{
	mix_hash(hs->hash, ephemeral, FTV_KEY_SIZE);
	kdf(hs->chaining_key, NULL, NULL, ephemeral, FTV_KEY_SIZE,
	    hs->chaining_key);
}

static void timestamp_now(u8 out[FTV_TIMESTAMP_SIZE])
{
	struct timespec64 now;

	ktime_get_real_ts64(&now);
	put_unaligned_be64(now.tv_sec, out);
	put_unaligned_be32(now.tv_nsec, out + 8);
}

/**
 * ftv_noise_create_init - build the initiator's message
 * @peer: the responder
 * @identity: our static key pair
 * @hs: receives the state needed to read the response
 * @msg: receives the message
 *
 * Return: 0, or -EINVAL if a Diffie-Hellman result was zero.
 */
int ftv_noise_create_init(struct ftv_peer *peer,
			  const struct ftv_identity *identity,
			  struct ftv_handshake *hs, struct ftv_msg_init *msg)
{
	u8 key[FTV_KEY_SIZE], timestamp[FTV_TIMESTAMP_SIZE];
	int ret = -EINVAL;

	handshake_start(hs, peer->public_key);
	curve25519_generate_secret(hs->ephemeral_private);
	if (!curve25519_generate_public(msg->ephemeral, hs->ephemeral_private))
		goto out;
	mix_ephemeral(hs, msg->ephemeral);
	if (!mix_dh(hs->chaining_key, key, hs->ephemeral_private,
		    peer->public_key))
		goto out;
	seal(msg->sealed_static, identity->public_key, FTV_KEY_SIZE, hs->hash,
	     key);
	if (!mix_dh(hs->chaining_key, key, identity->private_key,
		    peer->public_key))
		goto out;
	timestamp_now(timestamp);
	seal(msg->sealed_timestamp, timestamp, FTV_TIMESTAMP_SIZE, hs->hash,
	     key);
	ret = 0;
out:
	memzero_explicit(key, sizeof(key));
	return ret;
}

/* Accept @timestamp only if it is newer than any before, so that a
 * recorded initiation cannot be replayed to tear down a live session.
 */
static bool timestamp_advance(struct ftv_peer *peer,
			      const u8 timestamp[FTV_TIMESTAMP_SIZE])
{
	bool newer;

	spin_lock_bh(&peer->lock);
	newer = memcmp(timestamp, peer->latest_timestamp,
		       FTV_TIMESTAMP_SIZE) > 0;
	if (newer)
		memcpy(peer->latest_timestamp, timestamp, FTV_TIMESTAMP_SIZE);
	spin_unlock_bh(&peer->lock);
	return newer;
}

/**
 * ftv_noise_consume_init - authenticate an initiation
 * @fdev: the receiving device
 * @identity: our static key pair
 * @msg: the message
 * @hs: receives the state needed to answer
 *
 * Return: the initiating peer with a reference held, or NULL if the message
 * does not authenticate, names no known peer, or is not newer than the last.
 */
struct ftv_peer *ftv_noise_consume_init(struct ftv_device *fdev,
					const struct ftv_identity *identity,
					const struct ftv_msg_init *msg,
					struct ftv_handshake *hs)
{
	u8 key[FTV_KEY_SIZE], timestamp[FTV_TIMESTAMP_SIZE];
	u8 initiator_static[FTV_KEY_SIZE];
	struct ftv_peer *peer = NULL;

	handshake_start(hs, identity->public_key);
	mix_ephemeral(hs, msg->ephemeral);
	if (!mix_dh(hs->chaining_key, key, identity->private_key,
		    msg->ephemeral))
		goto out;
	if (!unseal(initiator_static, msg->sealed_static, FTV_KEY_SIZE,
		    hs->hash, key))
		goto out;
	peer = ftv_peer_lookup(fdev, initiator_static);
	if (!peer)
		goto out;
	if (!mix_dh(hs->chaining_key, key, identity->private_key,
		    peer->public_key) ||
	    !unseal(timestamp, msg->sealed_timestamp, FTV_TIMESTAMP_SIZE,
		  hs->hash, key) ||
	    !timestamp_advance(peer, timestamp)) {
		ftv_peer_put(peer);
		peer = NULL;
		goto out;
	}
	memcpy(hs->remote_ephemeral, msg->ephemeral, FTV_KEY_SIZE);
out:
	memzero_explicit(key, sizeof(key));
	return peer;
}

/* The last step both sides share: mix the pre-shared key, check or make
 * the empty sealed payload, split the transport keys.
 */
static void mix_psk(struct ftv_peer *peer, struct ftv_handshake *hs,
		    u8 key[FTV_KEY_SIZE])
{
	u8 psk[FTV_KEY_SIZE], tau[FTV_HASH_SIZE];

	spin_lock_bh(&peer->lock);
	memcpy(psk, peer->preshared_key, FTV_KEY_SIZE);
	spin_unlock_bh(&peer->lock);
	kdf(hs->chaining_key, tau, key, psk, FTV_KEY_SIZE, hs->chaining_key);
	mix_hash(hs->hash, tau, FTV_HASH_SIZE);
	memzero_explicit(psk, sizeof(psk));
	memzero_explicit(tau, sizeof(tau));
}

static void split(struct ftv_handshake *hs, u8 *first, u8 *second)
{
	kdf(first, second, NULL, NULL, 0, hs->chaining_key);
	memzero_explicit(hs, sizeof(*hs));
}

/**
 * ftv_noise_create_resp - answer an authenticated initiation
 * @peer: the initiator
 * @hs: state from ftv_noise_consume_init(); zeroed on return
 * @msg: receives the response
 * @keys: receives the session's transport keys
 *
 * Return: 0, or -EINVAL if a Diffie-Hellman result was zero.
 */
int ftv_noise_create_resp(struct ftv_peer *peer, struct ftv_handshake *hs,
			  struct ftv_msg_resp *msg,
			  struct ftv_session_keys *keys)
{
	u8 key[FTV_KEY_SIZE];
	int ret = -EINVAL;

	curve25519_generate_secret(hs->ephemeral_private);
	if (!curve25519_generate_public(msg->ephemeral, hs->ephemeral_private))
		goto out;
	mix_ephemeral(hs, msg->ephemeral);
	if (!mix_dh(hs->chaining_key, NULL, hs->ephemeral_private,
		    hs->remote_ephemeral) ||
	    !mix_dh(hs->chaining_key, NULL, hs->ephemeral_private,
		    peer->public_key))
		goto out;
	mix_psk(peer, hs, key);
	seal(msg->sealed_nothing, NULL, 0, hs->hash, key);
	split(hs, keys->recv, keys->send);
	ret = 0;
out:
	memzero_explicit(hs, sizeof(*hs));
	memzero_explicit(key, sizeof(key));
	return ret;
}

/**
 * ftv_noise_consume_resp - authenticate the response, derive session keys
 * @peer: the responder
 * @identity: our static key pair
 * @hs: state from ftv_noise_create_init(); zeroed on success
 * @msg: the response
 * @keys: receives the session's transport keys
 *
 * Return: 0 or -EBADMSG.
 */
int ftv_noise_consume_resp(struct ftv_peer *peer,
			   const struct ftv_identity *identity,
			   struct ftv_handshake *hs,
			   const struct ftv_msg_resp *msg,
			   struct ftv_session_keys *keys)
{
	struct ftv_handshake tmp = *hs;
	u8 key[FTV_KEY_SIZE];
	int ret = -EBADMSG;

	/* Work on a copy: a forged response must not spoil the real one. */
	mix_ephemeral(&tmp, msg->ephemeral);
	if (!mix_dh(tmp.chaining_key, NULL, tmp.ephemeral_private,
		    msg->ephemeral) ||
	    !mix_dh(tmp.chaining_key, NULL, identity->private_key,
		    msg->ephemeral))
		goto out;
	mix_psk(peer, &tmp, key);
	if (!unseal(NULL, msg->sealed_nothing, 0, tmp.hash, key))
		goto out;
	split(&tmp, keys->send, keys->recv);
	memzero_explicit(hs, sizeof(*hs));
	ret = 0;
out:
	memzero_explicit(&tmp, sizeof(tmp));
	memzero_explicit(key, sizeof(key));
	return ret;
}

/**
 * ftv_noise_init - compute the protocol's constant starting values
 *
 * Return: 0.
 */
int __init ftv_noise_init(void)
{
	sha256(construction, sizeof(construction) - 1, initial_chaining_key);
	hash2(initial_hash, initial_chaining_key, FTV_HASH_SIZE, identifier,
	      sizeof(identifier) - 1);
	return 0;
}
