// SPDX-License-Identifier: GPL-2.0
/*
 * The erasure code of ftv's forward error correction: a systematic
 * Cauchy code over GF(2^8). A group's k data blocks (packets, zero-padded
 * to the longest) travel as they are; repair block j is
 *
 *	r_j = sum over i of C[j][i] * d_i
 *
 * with C[j][i] = y_i / (x_j + y_i), x_j = j, y_i = 16 + i: a Cauchy
 * matrix whose columns are scaled so that its first row is all ones.
 * Every square submatrix of a Cauchy matrix is invertible, and scaling
 * keeps it so: any k of the k + m blocks rebuild the group (the code is
 * MDS), and r_0 is a plain XOR, the cheap case that low loss needs.
 *
 * Why not the kernel's lib/reed_solomon: it encodes symbol-wise within
 * one codeword, so protecting packets would mean one codeword per byte
 * position, a call each, and its decoder looks for errors where we know
 * the erasures. The raid6 library's P/Q would serve, but only for m <= 2.
 */

#include "fec_code.h"

#include <crypto/algapi.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

/* x^8 + x^4 + x^3 + x^2 + 1, the usual primitive polynomial. */
#define GF_POLY 0x11d

static u8 gf_exp[512];
static u8 gf_log[256];
/* gf_mul[a][b] = a * b: 64 KiB, one lookup per byte of a block. */
static u8 (*gf_mul)[256];
static u8 coef[FTV_FEC_CODE_MAX_REPAIR][FTV_FEC_CODE_MAX_DATA];

static u8 mul(u8 a, u8 b)
{
	return a && b ? gf_exp[gf_log[a] + gf_log[b]] : 0;
}

static u8 inv(u8 a)
{
	return gf_exp[255 - gf_log[a]];
}

/* dst ^= c * src over n bytes. */
static void mul_add(u8 *dst, const u8 *src, u8 c, unsigned int n)
{
	const u8 *row = gf_mul[c];
	unsigned int i;

	if (!c)
		return;
	if (c == 1) {
		crypto_xor(dst, src, n);
		return;
	}
	for (i = 0; i < n; ++i)
		dst[i] ^= row[src[i]];
}

/* dst = c * src over n bytes. */
static void mul_set(u8 *dst, const u8 *src, u8 c, unsigned int n)
{
	const u8 *row = gf_mul[c];
	unsigned int i;

	if (c == 1) {
		memcpy(dst, src, n);
		return;
	}
	for (i = 0; i < n; ++i)
		dst[i] = row[src[i]];
}

/**
 * ftv_fec_code_encode - compute one repair block of a group
 * @k: data blocks in the group, 1 to FTV_FEC_CODE_MAX_DATA
 * @j: which repair block, 0 to FTV_FEC_CODE_MAX_REPAIR - 1
 * @data: the data blocks
 * @len: their lengths; each counts as zero-padded to @block_len
 * @block_len: the longest of @len
 * @repair: receives the @block_len bytes of repair block @j
 */
void ftv_fec_code_encode(unsigned int k, unsigned int j, u8 *const data[],
			 const unsigned int len[], unsigned int block_len,
			 u8 *repair)
{
	unsigned int i;

	memset(repair, 0, block_len);
	for (i = 0; i < k; ++i)
		mul_add(repair, data[i], coef[j][i], len[i]);
}

/* Invert the n x n matrix @a in place (Gauss-Jordan); false if singular,
 * which a Cauchy submatrix never is.
 */
static bool invert(u8 a[][FTV_FEC_CODE_MAX_REPAIR], unsigned int n)
{
	u8 b[FTV_FEC_CODE_MAX_REPAIR][FTV_FEC_CODE_MAX_REPAIR] = { };
	unsigned int r, c, p;
	u8 f;

	for (r = 0; r < n; ++r)
		b[r][r] = 1;
	for (c = 0; c < n; ++c) {
		for (p = c; p < n && !a[p][c]; ++p)
			;
		if (p == n)
			return false;
		for (r = 0; p != c && r < n; ++r) {
			swap(a[p][r], a[c][r]);
			swap(b[p][r], b[c][r]);
		}
		f = inv(a[c][c]);
		for (r = 0; r < n; ++r) {
			a[c][r] = mul(a[c][r], f);
			b[c][r] = mul(b[c][r], f);
		}
		for (p = 0; p < n; ++p) {
			if (p == c || !a[p][c])
				continue;
			f = a[p][c];
			for (r = 0; r < n; ++r) {
				a[p][r] ^= mul(f, a[c][r]);
				b[p][r] ^= mul(f, b[c][r]);
			}
		}
	}
	memcpy(a, b, sizeof(b[0]) * n);
	return true;
}

/**
 * ftv_fec_code_decode - rebuild a group's missing data blocks
 * @k: data blocks in the group
 * @data: the k data blocks; a missing one is a buffer of @block_len bytes
 *	to fill in
 * @len: the present blocks' lengths; 0 marks a missing one
 * @block_len: the group's block length
 * @repair_index: which repair block each of @repair is (j)
 * @repair: repair blocks that arrived, @block_len bytes each; they are
 *	overwritten
 * @nr_repair: how many; at least as many as blocks are missing
 *
 * A rebuilt block is @block_len bytes; the packet inside says how many of
 * them are its own.
 *
 * Return: 0, or -EINVAL if too few repair blocks arrived.
 */
int ftv_fec_code_decode(unsigned int k, u8 *data[], const unsigned int len[],
			unsigned int block_len, const unsigned int repair_index[],
			u8 *const repair[], unsigned int nr_repair)
{
	u8 a[FTV_FEC_CODE_MAX_REPAIR][FTV_FEC_CODE_MAX_REPAIR];
	unsigned int lost[FTV_FEC_CODE_MAX_REPAIR];
	unsigned int e = 0, i, r, t;

	for (i = 0; i < k; ++i) {
		if (len[i])
			continue;
		if (e == nr_repair || e == FTV_FEC_CODE_MAX_REPAIR)
			return -EINVAL;
		lost[e++] = i;
	}
	if (!e)
		return 0;
	/* Take what the present blocks contribute out of e repair blocks:
	 * what is left is the lost blocks' part alone, a e x e system.
	 */
	for (r = 0; r < e; ++r) {
		const u8 *row = coef[repair_index[r]];

		for (i = 0; i < k; ++i)
			if (len[i])
				mul_add(repair[r], data[i], row[i], len[i]);
		for (t = 0; t < e; ++t)
			a[r][t] = row[lost[t]];
	}
	if (!invert(a, e))
		return -EINVAL;
	for (t = 0; t < e; ++t) {
		mul_set(data[lost[t]], repair[0], a[t][0], block_len);
		for (r = 1; r < e; ++r)
			mul_add(data[lost[t]], repair[r], a[t][r], block_len);
	}
	return 0;
}

/**
 * ftv_fec_code_init - the field's tables and the code's coefficients
 *
 * Return: 0 or -ENOMEM.
 */
int __init ftv_fec_code_init(void)
{
	unsigned int i, j, x = 1;

	for (i = 0; i < 255; ++i) {
		gf_exp[i] = x;
		gf_exp[i + 255] = x;
		gf_log[x] = i;
		x <<= 1;
		if (x & 0x100)
			x ^= GF_POLY;
	}
	gf_mul = kvmalloc(256 * 256, GFP_KERNEL);
	if (!gf_mul)
		return -ENOMEM;
	for (i = 0; i < 256; ++i)
		for (j = 0; j < 256; ++j)
			gf_mul[i][j] = mul(i, j);
	for (j = 0; j < FTV_FEC_CODE_MAX_REPAIR; ++j) {
		for (i = 0; i < FTV_FEC_CODE_MAX_DATA; ++i) {
			u8 y = FTV_FEC_CODE_MAX_REPAIR + i;

			coef[j][i] = mul(y, inv(j ^ y));
		}
	}
	return 0;
}

/**
 * ftv_fec_code_uninit - free the multiplication table
 */
void ftv_fec_code_uninit(void)
{
	kvfree(gf_mul);
}

#ifdef DEBUG
#include "selftest/fec_code.c"
#endif
