// SPDX-License-Identifier: GPL-2.0
/* Included at the end of fec_code.c in debug builds. */

#include <linux/random.h>

enum { SELFTEST_BLOCK = 61, SELFTEST_MAX_K = 6, SELFTEST_MAX_M = 3 };

struct fec_selftest {
	u8 orig[SELFTEST_MAX_K][SELFTEST_BLOCK];
	u8 rep[SELFTEST_MAX_M][SELFTEST_BLOCK];
	u8 work[SELFTEST_MAX_K][SELFTEST_BLOCK];
	u8 rwork[SELFTEST_MAX_M][SELFTEST_BLOCK];
};

/* Lose the blocks in @lost (a bit per block: data first, then repair)
 * and rebuild; true if every data block comes back.
 */
static bool __init try_pattern(struct fec_selftest *t, unsigned int k,
			       unsigned int m, const unsigned int *len,
			       unsigned long lost)
{
	unsigned int dlen[SELFTEST_MAX_K], index[SELFTEST_MAX_M];
	u8 *data[SELFTEST_MAX_K], *rep[SELFTEST_MAX_M];
	unsigned int i, n = 0;

	for (i = 0; i < k; ++i) {
		data[i] = t->work[i];
		if (lost & BIT(i)) {
			dlen[i] = 0;
			memset(t->work[i], 0xa5, SELFTEST_BLOCK);
		} else {
			dlen[i] = len[i];
			memcpy(t->work[i], t->orig[i], SELFTEST_BLOCK);
		}
	}
	for (i = 0; i < m; ++i) {
		if (lost & BIT(k + i))
			continue;
		memcpy(t->rwork[n], t->rep[i], SELFTEST_BLOCK);
		rep[n] = t->rwork[n];
		index[n++] = i;
	}
	if (ftv_fec_code_decode(k, data, dlen, SELFTEST_BLOCK, index, rep, n))
		return false;
	for (i = 0; i < k; ++i)
		if (memcmp(t->work[i], t->orig[i], SELFTEST_BLOCK))
			return false;
	return true;
}

/**
 * ftv_fec_code_selftest - encode groups of 1 to 6 data and 1 to 3 repair
 *	blocks of random lengths, then rebuild them from every pattern of
 *	at most m lost blocks
 *
 * Return: true if every pattern rebuilt the group.
 */
bool __init ftv_fec_code_selftest(void)
{
	unsigned int k, m, i, len[SELFTEST_MAX_K], patterns = 0;
	struct fec_selftest *t;
	unsigned long lost;
	bool ok = true;
	u8 *data[SELFTEST_MAX_K];

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return false;
	for (k = 1; k <= SELFTEST_MAX_K; ++k) {
		for (m = 1; m <= SELFTEST_MAX_M; ++m) {
			memset(t->orig, 0, sizeof(t->orig));
			for (i = 0; i < k; ++i) {
				len[i] = 1 + get_random_u32() % SELFTEST_BLOCK;
				get_random_bytes(t->orig[i], len[i]);
				data[i] = t->orig[i];
			}
			len[get_random_u32() % k] = SELFTEST_BLOCK;
			for (i = 0; i < m; ++i)
				ftv_fec_code_encode(k, i, data, len, SELFTEST_BLOCK,
						    t->rep[i]);
			for (lost = 0; lost < BIT(k + m); ++lost) {
				if (hweight_long(lost) > m)
					continue;
				++patterns;
				if (!try_pattern(t, k, m, len, lost)) {
					pr_err("fec self-test %u:%u, lost %#lx: failed\n",
					       k, m, lost);
					ok = false;
				}
			}
		}
	}
	/* More lost than repair blocks: refused, not guessed. */
	for (i = 0; i < 3; ++i)
		len[i] = SELFTEST_BLOCK;
	if (try_pattern(t, 3, 1, len, BIT(0) | BIT(1))) {
		pr_err("fec self-test: rebuilt two blocks from one repair\n");
		ok = false;
	}
	kfree(t);
	if (ok)
		pr_info("fec self-tests: pass (%u loss patterns)\n", patterns);
	return ok;
}
