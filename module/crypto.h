/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_CRYPTO_H
#define _FTV_CRYPTO_H

#include <linux/siphash.h>
#include <linux/types.h>

struct crypto_aead;

int ftv_crypto_init(void);
void ftv_crypto_uninit(void);
struct crypto_aead *ftv_crypto_alloc(const u8 *key);
void ftv_crypto_free(struct crypto_aead *tfm);
int ftv_crypto_seal(struct crypto_aead *tfm, u64 counter, u8 *data,
		    unsigned int len, u32 bind);
int ftv_crypto_open(struct crypto_aead *tfm, u64 counter, u8 *data,
		    unsigned int sealed_len, u32 bind);
u64 ftv_crypto_counter_mask(const siphash_key_t *key, const u8 *sealed);

#endif /* _FTV_CRYPTO_H */
