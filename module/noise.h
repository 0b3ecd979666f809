/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_NOISE_H
#define _FTV_NOISE_H

#include "messages.h"

#include <linux/siphash.h>

struct ftv_device;
struct ftv_identity;
struct ftv_peer;

/**
 * struct ftv_handshake - state of a key exchange between its two messages
 * @hash: running transcript hash (h)
 * @chaining_key: running chaining key (ck)
 * @ephemeral_private: our ephemeral private key (initiator)
 * @remote_ephemeral: the initiator's ephemeral public key (responder)
 */
struct ftv_handshake {
	u8 hash[FTV_HASH_SIZE];
	u8 chaining_key[FTV_HASH_SIZE];
	u8 ephemeral_private[FTV_KEY_SIZE];
	u8 remote_ephemeral[FTV_KEY_SIZE];
};

/**
 * struct ftv_session_keys - the two transport keys of a session
 * @send: AEAD key for what this side sends
 * @recv: AEAD key for what this side receives
 * @send_hp: key that masks the counters this side sends
 * @recv_hp: key that unmasks the counters this side receives
 * @join: key of the session's join tokens, the same at both ends (join.c)
 */
struct ftv_session_keys {
	u8 send[FTV_KEY_SIZE];
	u8 recv[FTV_KEY_SIZE];
	siphash_key_t send_hp;
	siphash_key_t recv_hp;
	siphash_key_t join;
};

int ftv_noise_init(void);
int ftv_noise_create_init(struct ftv_peer *peer,
			  const struct ftv_identity *identity,
			  struct ftv_handshake *hs, struct ftv_msg_init *msg);
bool ftv_noise_consume_init(const struct ftv_identity *identity,
			    const struct ftv_msg_init *msg,
			    struct ftv_handshake *hs,
			    u8 initiator[FTV_KEY_SIZE]);
bool ftv_noise_consume_init_peer(struct ftv_peer *peer,
				 const struct ftv_identity *identity,
				 const struct ftv_msg_init *msg,
				 struct ftv_handshake *hs);
int ftv_noise_create_resp(struct ftv_peer *peer, struct ftv_handshake *hs,
			  struct ftv_msg_resp *msg,
			  struct ftv_session_keys *keys);
int ftv_noise_consume_resp(struct ftv_peer *peer,
			   const struct ftv_identity *identity,
			   const struct ftv_handshake *hs,
			   const struct ftv_msg_resp *msg,
			   struct ftv_session_keys *keys);

unsigned int ftv_noise_pad(u8 *pad);

#ifdef DEBUG
bool ftv_noise_selftest(void);
#endif

#endif /* _FTV_NOISE_H */
