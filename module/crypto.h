/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_CRYPTO_H
#define _FTV_CRYPTO_H

#include <linux/types.h>

struct crypto_aead;

int ftv_crypto_init(void);
void ftv_crypto_uninit(void);
struct crypto_aead *ftv_crypto_alloc(const u8 *key);
void ftv_crypto_free(struct crypto_aead *tfm);
int ftv_crypto_seal(struct crypto_aead *tfm, u64 counter, u8 *data,
		    unsigned int len);
int ftv_crypto_open(struct crypto_aead *tfm, u64 counter, u8 *data,
		    unsigned int sealed_len);

#endif /* _FTV_CRYPTO_H */
