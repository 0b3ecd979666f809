// SPDX-License-Identifier: GPL-2.0
/* Included at the end of shape.c in debug builds. */

#include <linux/random.h>
#include <linux/string.h>

/**
 * ftv_shape_selftest - shape and read back messages of every length a
 *	handshake message has, check that every byte is printable, and that
 *	random bytes are not taken for a shaped message
 *
 * Return: true if all of that holds.
 */
bool __init ftv_shape_selftest(void)
{
	u8 in[200], out[FTV_SHAPED_LEN(200)], back[200];
	unsigned int len, n, i;
	bool ok = true;
	int got;

	for (len = 1; len <= sizeof(in) && ok; ++len) {
		get_random_bytes(in, len);
		n = ftv_shape_encode(in, len, out);
		for (i = 0; i < n; ++i)
			ok &= out[i] >= 0x20 && out[i] <= 0x7e;
		got = ftv_shape_decode(out, n, back);
		ok &= n == FTV_SHAPED_LEN(len) && got == len &&
		      !memcmp(in, back, len);
		if (!ok)
			pr_err("shape self-test: %u bytes: failed\n", len);
	}
	/* A handshake message as it is sent unshaped: random bytes. */
	for (i = 0; i < 100 && ok; ++i) {
		get_random_bytes(in, 48);
		if (ftv_shape_decode(in, 48, back) >= 0) {
			pr_err("shape self-test: random bytes read as shaped\n");
			ok = false;
		}
	}
	/* Read in place, as the receive path does: an unshaped message
	 * whose first bytes happen to be in the alphabet (a few in every
	 * hundred random ones are) must come back as it was.
	 */
	for (i = 0; i < 1000 && ok; ++i) {
		get_random_bytes(in, 120);
		n = ftv_shape_encode(in, 3, out);
		memcpy(in, out, n);
		memcpy(back, in, 120);
		if (ftv_shape_decode(back, 120, back) >= 0 ||
		    memcmp(in, back, 120)) {
			pr_err("shape self-test: an unshaped message was changed in place\n");
			ok = false;
		}
	}
	/* And a shaped one read in place is the message. */
	for (len = 1; len <= 150 && ok; ++len) {
		get_random_bytes(in, len);
		n = ftv_shape_encode(in, len, back);
		got = ftv_shape_decode(back, n, back);
		if (got != len || memcmp(in, back, len)) {
			pr_err("shape self-test: %u bytes read in place: failed\n",
			       len);
			ok = false;
		}
	}
	if (ok)
		pr_info("shape self-tests: pass\n");
	return ok;
}
