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

#include <crypto/algapi.h>
#include <crypto/sha2.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/string.h>

static const u8 construction[] = "Noise_IKpsk2_25519_ChaChaPoly_SHA256";
static const u8 identifier[] = "ftv v1 fake-tcp tunnel";

/* HASH(construction) and HASH(that || identifier), the same for everyone. */
static u8 initial_chaining_key[FTV_HASH_SIZE] __ro_after_init;
static u8 initial_hash[FTV_HASH_SIZE] __ro_after_init;

static void hash2(u8 out[FTV_HASH_SIZE], const u8 *a, size_t alen,
		  const u8 *b, size_t blen)
{
	struct ftv_compat_sha256 state;

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
/* HKDF as Noise uses it: out[i] = HMAC(prk, out[i - 1] || i + 1), for as
 * many outputs as @out has before its first NULL (at most @n).
 */
static void kdf_n(u8 *const out[], unsigned int n, const u8 *input,
		  size_t inlen, const u8 chaining_key[FTV_HASH_SIZE])
{
	u8 prk[FTV_HASH_SIZE], t[FTV_HASH_SIZE + 1];
	unsigned int i;

	hmac(prk, chaining_key, FTV_HASH_SIZE, input, inlen);
	t[0] = 1;
	hmac(t, prk, FTV_HASH_SIZE, t, 1);
	memcpy(out[0], t, FTV_HASH_SIZE);
	for (i = 1; i < n && out[i]; i++) {
		t[FTV_HASH_SIZE] = i + 1;
		hmac(t, prk, FTV_HASH_SIZE, t, FTV_HASH_SIZE + 1);
		memcpy(out[i], t, FTV_HASH_SIZE);
	}
	memzero_explicit(prk, sizeof(prk));
	memzero_explicit(t, sizeof(t));
}

static void kdf(u8 *out1, u8 *out2, u8 *out3, const u8 *input,
		size_t inlen, const u8 chaining_key[FTV_HASH_SIZE])
{
	u8 *const out[] = { out1, out2, out3 };

	kdf_n(out, ARRAY_SIZE(out), input, inlen, chaining_key);
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

/*
 * A fresh ephemeral key pair. X25519 ignores the top bit of a public key,
 * which is always clear in an honest one; it is set at random so that
 * every byte of the handshake looks uniformly random. Both ends hash the
 * bytes as sent.
 */
static bool make_ephemeral(u8 private[FTV_KEY_SIZE], u8 public[FTV_KEY_SIZE])
{
	curve25519_generate_secret(private);
	if (!curve25519_generate_public(public, private))
		return false;
	public[FTV_KEY_SIZE - 1] |= get_random_u32() & 0x80;
	return true;
}

/*
 * The message layer works on plain keys so that the debug self-test can
 * drive it with fixed inputs; the functions further down add peers,
 * locking and randomness.
 */

static bool init_create(struct ftv_handshake *hs, struct ftv_msg_init *msg,
			const u8 responder_public[FTV_KEY_SIZE],
			const struct ftv_identity *initiator,
			const u8 timestamp[FTV_TIMESTAMP_SIZE])
{
	u8 key[FTV_KEY_SIZE];
	bool ok;

	handshake_start(hs, responder_public);
	mix_ephemeral(hs, msg->ephemeral);
	ok = mix_dh(hs->chaining_key, key, hs->ephemeral_private,
		    responder_public);
	if (ok) {
		seal(msg->sealed_static, initiator->public_key, FTV_KEY_SIZE,
		     hs->hash, key);
		ok = mix_dh(hs->chaining_key, key, initiator->private_key,
			    responder_public);
	}
	if (ok)
		seal(msg->sealed_timestamp, timestamp, FTV_TIMESTAMP_SIZE,
		     hs->hash, key);
	memzero_explicit(key, sizeof(key));
	return ok;
}

/* First half of reading an initiation: who claims to be sending it. */
static bool init_open_static(struct ftv_handshake *hs,
			     const struct ftv_msg_init *msg,
			     const struct ftv_identity *responder,
			     u8 initiator_public[FTV_KEY_SIZE])
{
	u8 key[FTV_KEY_SIZE];
	bool ok;

	handshake_start(hs, responder->public_key);
	mix_ephemeral(hs, msg->ephemeral);
	ok = mix_dh(hs->chaining_key, key, responder->private_key,
		    msg->ephemeral) &&
	     unseal(initiator_public, msg->sealed_static, FTV_KEY_SIZE,
		    hs->hash, key);
	memzero_explicit(key, sizeof(key));
	return ok;
}

/* Second half: proof that the sender holds that static key. */
static bool init_open_timestamp(struct ftv_handshake *hs,
				const struct ftv_msg_init *msg,
				const struct ftv_identity *responder,
				const u8 initiator_public[FTV_KEY_SIZE],
				u8 timestamp[FTV_TIMESTAMP_SIZE])
{
	u8 key[FTV_KEY_SIZE];
	bool ok;

	ok = mix_dh(hs->chaining_key, key, responder->private_key,
		    initiator_public) &&
	     unseal(timestamp, msg->sealed_timestamp, FTV_TIMESTAMP_SIZE,
		    hs->hash, key);
	memzero_explicit(key, sizeof(key));
	if (ok)
		memcpy(hs->remote_ephemeral, msg->ephemeral, FTV_KEY_SIZE);
	return ok;
}

/* ck, tau, k = KDF3(ck, psk); h = HASH(h || tau). */
static void mix_psk(struct ftv_handshake *hs, const u8 psk[FTV_KEY_SIZE],
		    u8 key[FTV_KEY_SIZE])
{
	u8 tau[FTV_HASH_SIZE];

	kdf(hs->chaining_key, tau, key, psk, FTV_KEY_SIZE, hs->chaining_key);
	mix_hash(hs->hash, tau, FTV_HASH_SIZE);
	memzero_explicit(tau, sizeof(tau));
}

/*
 * The session's keys: one AEAD key per direction, one SipHash key per
 * direction that masks the message counter (see docs/protocol.md), and
 * the key of the session's join tokens (join.c).
 */
static void split(struct ftv_handshake *hs, struct ftv_session_keys *keys,
		  bool initiator)
{
	u8 first[FTV_KEY_SIZE], second[FTV_KEY_SIZE], hp[FTV_HASH_SIZE];
	u8 join[FTV_HASH_SIZE];
	u8 *const out[] = { first, second, hp, join };

	kdf_n(out, ARRAY_SIZE(out), NULL, 0, hs->chaining_key);
	memcpy(keys->send, initiator ? first : second, FTV_KEY_SIZE);
	memcpy(keys->recv, initiator ? second : first, FTV_KEY_SIZE);
	memcpy(&keys->send_hp, initiator ? hp : hp + 16, 16);
	memcpy(&keys->recv_hp, initiator ? hp + 16 : hp, 16);
	memcpy(&keys->join, join, sizeof(keys->join));
	memzero_explicit(join, sizeof(join));
	memzero_explicit(first, sizeof(first));
	memzero_explicit(second, sizeof(second));
	memzero_explicit(hp, sizeof(hp));
	memzero_explicit(hs, sizeof(*hs));
}

static bool resp_create(struct ftv_handshake *hs, struct ftv_msg_resp *msg,
			const u8 initiator_public[FTV_KEY_SIZE],
			const u8 psk[FTV_KEY_SIZE],
			struct ftv_session_keys *keys)
{
	u8 key[FTV_KEY_SIZE];
	bool ok;

	mix_ephemeral(hs, msg->ephemeral);
	ok = mix_dh(hs->chaining_key, NULL, hs->ephemeral_private,
		    hs->remote_ephemeral) &&
	     mix_dh(hs->chaining_key, NULL, hs->ephemeral_private,
		    initiator_public);
	if (ok) {
		mix_psk(hs, psk, key);
		seal(msg->sealed_nothing, NULL, 0, hs->hash, key);
		split(hs, keys, false);
	}
	memzero_explicit(key, sizeof(key));
	memzero_explicit(hs, sizeof(*hs));
	return ok;
}

static bool resp_open(struct ftv_handshake *hs, const struct ftv_msg_resp *msg,
		      const struct ftv_identity *initiator,
		      const u8 psk[FTV_KEY_SIZE], struct ftv_session_keys *keys)
{
	u8 key[FTV_KEY_SIZE];
	bool ok;

	mix_ephemeral(hs, msg->ephemeral);
	ok = mix_dh(hs->chaining_key, NULL, hs->ephemeral_private,
		    msg->ephemeral) &&
	     mix_dh(hs->chaining_key, NULL, initiator->private_key,
		    msg->ephemeral);
	if (ok) {
		mix_psk(hs, psk, key);
		ok = unseal(NULL, msg->sealed_nothing, 0, hs->hash, key);
	}
	if (ok)
		split(hs, keys, true);
	memzero_explicit(key, sizeof(key));
	return ok;
}

static void read_psk(struct ftv_peer *peer, u8 psk[FTV_KEY_SIZE])
{
	spin_lock_bh(&peer->lock);
	memcpy(psk, peer->preshared_key, FTV_KEY_SIZE);
	spin_unlock_bh(&peer->lock);
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
	u8 timestamp[FTV_TIMESTAMP_SIZE];

	timestamp_now(timestamp);
	if (make_ephemeral(hs->ephemeral_private, msg->ephemeral) &&
	    init_create(hs, msg, peer->public_key, identity, timestamp))
		return 0;
	memzero_explicit(hs, sizeof(*hs));
	return -EINVAL;
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
 * ftv_noise_consume_init - open an initiation's static key
 * @identity: our static key pair
 * @msg: the message
 * @hs: receives the state needed to go on
 * @initiator: receives the initiator's static public key, for the caller
 *	to look its peer up by
 *
 * The first half of authenticating an initiation; the second,
 * ftv_noise_consume_init_peer(), needs the peer that key names.
 *
 * Return: false if the message does not authenticate.
 */
bool ftv_noise_consume_init(const struct ftv_identity *identity,
			    const struct ftv_msg_init *msg,
			    struct ftv_handshake *hs,
			    u8 initiator[FTV_KEY_SIZE])
{
	return init_open_static(hs, msg, identity, initiator);
}

/**
 * ftv_noise_consume_init_peer - finish authenticating an initiation
 * @peer: the peer whose key ftv_noise_consume_init() opened
 * @identity: our static key pair
 * @msg: the message
 * @hs: the state from ftv_noise_consume_init(); receives what is needed
 *	to answer
 *
 * Return: false if the timestamp does not authenticate or is not newer
 * than the last one @peer sent.
 */
bool ftv_noise_consume_init_peer(struct ftv_peer *peer,
				 const struct ftv_identity *identity,
				 const struct ftv_msg_init *msg,
				 struct ftv_handshake *hs)
{
	u8 timestamp[FTV_TIMESTAMP_SIZE];

	return init_open_timestamp(hs, msg, identity, peer->public_key,
				   timestamp) &&
	       timestamp_advance(peer, timestamp);
}

/**
 * ftv_noise_create_resp - answer an authenticated initiation
 * @peer: the initiator
 * @hs: state from ftv_noise_consume_init_peer(); zeroed on return
 * @msg: receives the response
 * @keys: receives the session's keys
 *
 * Return: 0, or -EINVAL if a Diffie-Hellman result was zero.
 */
int ftv_noise_create_resp(struct ftv_peer *peer, struct ftv_handshake *hs,
			  struct ftv_msg_resp *msg,
			  struct ftv_session_keys *keys)
{
	u8 psk[FTV_KEY_SIZE];
	bool ok;

	read_psk(peer, psk);
	ok = make_ephemeral(hs->ephemeral_private, msg->ephemeral) &&
	     resp_create(hs, msg, peer->public_key, psk, keys);
	memzero_explicit(psk, sizeof(psk));
	memzero_explicit(hs, sizeof(*hs));
	return ok ? 0 : -EINVAL;
}

/**
 * ftv_noise_consume_resp - authenticate the response, derive session keys
 * @peer: the responder
 * @identity: our static key pair
 * @hs: state from ftv_noise_create_init(); left alone, so that a forged
 *	response does not spoil the real one
 * @msg: the response
 * @keys: receives the session's keys
 *
 * Return: 0 or -EBADMSG.
 */
int ftv_noise_consume_resp(struct ftv_peer *peer,
			   const struct ftv_identity *identity,
			   const struct ftv_handshake *hs,
			   const struct ftv_msg_resp *msg,
			   struct ftv_session_keys *keys)
{
	struct ftv_handshake tmp = *hs;
	u8 psk[FTV_KEY_SIZE];
	bool ok;

	read_psk(peer, psk);
	ok = resp_open(&tmp, msg, identity, psk, keys);
	memzero_explicit(&tmp, sizeof(tmp));
	memzero_explicit(psk, sizeof(psk));
	return ok ? 0 : -EBADMSG;
}

/**
 * ftv_noise_pad - the random padding of a handshake message
 * @pad: room for FTV_HANDSHAKE_PAD_MAX bytes
 *
 * Random bytes of a random length, so that handshake messages have no
 * telltale size. Nothing in them means anything: what each end can do
 * (FEC) is said in its first sealed message (struct ftv_msg_hello), where
 * nobody can strip or forge it.
 *
 * Return: its length, FTV_HANDSHAKE_PAD_MIN to FTV_HANDSHAKE_PAD_MAX.
 */
unsigned int ftv_noise_pad(u8 *pad)
{
	unsigned int len = FTV_HANDSHAKE_PAD_MIN + get_random_u32() %
			   (FTV_HANDSHAKE_PAD_MAX - FTV_HANDSHAKE_PAD_MIN + 1);

	get_random_bytes(pad, len);
	return len;
}

/**
 * ftv_noise_init - compute the protocol's constant starting values
 *
 * Return: 0, or -ENOTRECOVERABLE if a debug build's self-test fails.
 */
int __init ftv_noise_init(void)
{
	sha256(construction, sizeof(construction) - 1, initial_chaining_key);
	hash2(initial_hash, initial_chaining_key, FTV_HASH_SIZE, identifier,
	      sizeof(identifier) - 1);
#ifdef DEBUG
	if (!ftv_noise_selftest())
		return -ENOTRECOVERABLE;
#endif
	return 0;
}

#ifdef DEBUG
#include "selftest/noise.c"
#endif
