// SPDX-License-Identifier: GPL-2.0
/*
 * Transport encryption through the kernel crypto API's
 * rfc7539(chacha20,poly1305). The 96-bit nonce is 32 zero bits followed by
 * the 64-bit little-endian message counter; each key is used by one session
 * in one direction, so (key, counter) never repeats. A message sealed for
 * a join of the session carries the join's number as associated data, so
 * that a message moved from one connection of the session to another
 * does not open there.
 */

#include "crypto.h"
#include "messages.h"

#include <crypto/aead.h>
#include <linux/lockdep.h>
#include <linux/percpu.h>
#include <linux/scatterlist.h>
#include <linux/siphash.h>

#define FTV_AEAD_NAME "rfc7539(chacha20,poly1305)"

/*
 * One request per CPU, big enough for the algorithm's context, so that
 * sealing and opening allocate nothing. Every caller runs with bottom
 * halves off (the transmit path, softirq, or a section that disabled
 * them), so a CPU's request is never in use twice.
 */
enum { FTV_AEAD_REQ_SIZE = 1024 };
static void __percpu *aead_requests;

/**
 * ftv_crypto_alloc - allocate a synchronous AEAD transform holding @key
 * @key: FTV_KEY_SIZE bytes
 *
 * May sleep. Return: the transform or an ERR_PTR.
 */
struct crypto_aead *ftv_crypto_alloc(const u8 *key)
{
	struct crypto_aead *tfm;
	int ret;

	/* Asking for a synchronous implementation lets us seal in xmit. */
	tfm = crypto_alloc_aead(FTV_AEAD_NAME, 0, CRYPTO_ALG_ASYNC);
	if (IS_ERR(tfm))
		return tfm;
	if (sizeof(struct aead_request) + crypto_aead_reqsize(tfm) >
	    FTV_AEAD_REQ_SIZE) {
		pr_err_once("%s needs %u bytes of request context\n",
			    crypto_aead_driver_name(tfm),
			    crypto_aead_reqsize(tfm));
		crypto_free_aead(tfm);
		return ERR_PTR(-EOVERFLOW);
	}
	ret = crypto_aead_setauthsize(tfm, FTV_TAG_SIZE);
	if (!ret)
		ret = crypto_aead_setkey(tfm, key, FTV_KEY_SIZE);
	if (ret) {
		crypto_free_aead(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}

/**
 * ftv_crypto_free - free a transform from ftv_crypto_alloc(); NULL is fine
 * @tfm: the transform
 */
void ftv_crypto_free(struct crypto_aead *tfm)
{
	if (!IS_ERR_OR_NULL(tfm))
		crypto_free_aead(tfm);
}

/*
 * The associated data of a message sealed for connection @bind of its
 * session, in the FTV_BIND_SIZE bytes before @data: le64(@bind). None for
 * the connection that opened the session (0), whose messages are what
 * they were before joins had numbers bound to them. Return: its length.
 */
static unsigned int bind_ad(u8 *data, u32 bind)
{
	if (!bind)
		return 0;
	put_unaligned_le64(bind, data - FTV_BIND_SIZE);
	return FTV_BIND_SIZE;
}

static int crypt(struct crypto_aead *tfm, u64 counter, u8 *data,
		 unsigned int in_len, unsigned int out_len, u32 bind,
		 bool enc)
{
	unsigned int ad = bind_ad(data, bind);
	struct aead_request *req;
	struct scatterlist sg;
	u8 iv[12] = { 0 };

	lockdep_assert_preemption_disabled();
	req = this_cpu_ptr(aead_requests);
	aead_request_set_tfm(req, tfm);
	put_unaligned_le64(counter, iv + 4);
	sg_init_one(&sg, data - ad, ad + max(in_len, out_len));
	aead_request_set_callback(req, 0, NULL, NULL);
	aead_request_set_ad(req, ad);
	aead_request_set_crypt(req, &sg, &sg, in_len, iv);
	return enc ? crypto_aead_encrypt(req) : crypto_aead_decrypt(req);
}

/**
 * ftv_crypto_seal - encrypt @data in place and append the tag
 * @tfm: transform for this direction
 * @counter: the message counter (nonce)
 * @data: @len bytes of plaintext followed by FTV_TAG_SIZE bytes of room,
 *	and preceded by FTV_BIND_SIZE bytes that the message's counter
 *	takes afterwards (they are overwritten)
 * @len: plaintext length
 * @bind: the number of the connection it goes on in its session (0: the
 *	opener): a message opens only on the connection it was sealed for
 *
 * Return: 0 or a negative errno.
 */
int ftv_crypto_seal(struct crypto_aead *tfm, u64 counter, u8 *data,
		    unsigned int len, u32 bind)
{
	return crypt(tfm, counter, data, len, len + FTV_TAG_SIZE, bind,
		     true);
}

/**
 * ftv_crypto_open - authenticate and decrypt @data in place
 * @tfm: transform for this direction
 * @counter: the message counter (nonce)
 * @data: ciphertext followed by the tag, preceded by FTV_BIND_SIZE bytes
 *	that may be overwritten (the counter's, read already)
 * @sealed_len: ciphertext plus tag length
 * @bind: the number of the connection it came on in its session
 *
 * Return: 0, -EBADMSG if authentication failed, or another negative errno.
 */
int ftv_crypto_open(struct crypto_aead *tfm, u64 counter, u8 *data,
		    unsigned int sealed_len, u32 bind)
{
	if (unlikely(sealed_len < FTV_TAG_SIZE))
		return -EBADMSG;
	return crypt(tfm, counter, data, sealed_len, sealed_len, bind,
		     false);
}

/**
 * ftv_crypto_counter_mask - what a message counter is XORed with on the wire
 * @key: the direction's counter key
 * @sealed: the first 16 bytes of the sealed payload (ciphertext or tag)
 *
 * Return: the mask. It depends on the ciphertext, which never repeats, so
 * the counter looks as random on the wire as the rest of the payload.
 */
u64 ftv_crypto_counter_mask(const siphash_key_t *key, const u8 *sealed)
{
	return siphash_2u64(get_unaligned_le64(sealed),
			    get_unaligned_le64(sealed + 8), key);
}

/**
 * ftv_crypto_init - allocate the per-CPU requests
 *
 * Return: 0 or -ENOMEM.
 */
int __init ftv_crypto_init(void)
{
	aead_requests = __alloc_percpu(FTV_AEAD_REQ_SIZE,
				       __alignof__(struct aead_request));
	return aead_requests ? 0 : -ENOMEM;
}

/**
 * ftv_crypto_uninit - free them
 */
void ftv_crypto_uninit(void)
{
	free_percpu(aead_requests);
}
