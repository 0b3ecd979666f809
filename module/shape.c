// SPDX-License-Identifier: GPL-2.0
/*
 * Shaped openings. A connection's first payload in each direction,
 * the key exchange's two messages, is as random as the rest, and random
 * first payloads are what fully-encrypted-traffic detectors block (Wu et
 * al., USENIX Security 2023). Shaped, those two messages travel as
 * printable ASCII: six bits of the message in each byte, one of the 64
 * printable characters with the fewest bits set (on average 3.17 of 8;
 * a random byte has 4), no padding character. They meet four of the
 * published exemptions at once (few set bits, the first six bytes
 * printable, more than half printable, more than 20 printable in a row),
 * with no fixed byte anywhere, and keep the messages' random lengths.
 * Nothing after them changes.
 *
 * The receiver needs no setting: a message made only of those characters
 * is shaped (a random initiation, 116 bytes or more, would be with odds
 * below 4^-116), any other is not. Each end shapes what it sends by its
 * own setting alone: a responder that answered in kind would tell a
 * censor who strips an initiation's shaping, by a random-looking answer,
 * what it is.
 */

#include "shape.h"

#include <linux/errno.h>

/* The 38 printable characters with at most three bits set, and the 26
 * lowest of those with four, in order: a value's character.
 */
static const char alphabet[64] =
	" !\"#$%&'()*+,-.012345689:<@ABCDEFGHIJKLMNPQRSTUVXYZ\\`abcdefhijlp";

/* Each printable character's value, 0xff for those not in the alphabet. */
static const u8 values[0x7f - 0x20] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
	0x0c, 0x0d, 0x0e, 0xff, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0xff,
	0x16, 0x17, 0x18, 0xff, 0x19, 0xff, 0xff, 0xff, 0x1a, 0x1b, 0x1c, 0x1d,
	0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0xff,
	0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0xff, 0x30, 0x31, 0x32, 0xff,
	0x33, 0xff, 0xff, 0xff, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0xff,
	0x3b, 0x3c, 0x3d, 0xff, 0x3e, 0xff, 0xff, 0xff, 0x3f, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/**
 * ftv_shape_encode - shape a message
 * @in: the message
 * @len: its length
 * @out: room for FTV_SHAPED_LEN(@len) bytes
 *
 * Return: FTV_SHAPED_LEN(@len), the bytes written.
 */
unsigned int ftv_shape_encode(const u8 *in, unsigned int len, u8 *out)
{
	unsigned int i, n = 0, bits = 0;
	u32 acc = 0;

	for (i = 0; i < len; ++i) {
		acc = acc << 8 | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[n++] = alphabet[(acc >> bits) & 63];
		}
	}
	if (bits)
		out[n++] = alphabet[(acc << (6 - bits)) & 63];
	return n;
}

static int value_of(u8 c)
{
	if (c < 0x20 || c >= 0x7f || values[c - 0x20] == 0xff)
		return -1;
	return values[c - 0x20];
}

/*
 * Whether @in is a shaped message: every byte in the alphabet, a length
 * some message shapes to, and the last character's filling (the bits
 * past the message's last byte, the low ones of its value) zero.
 */
static bool is_shaped(const u8 *in, unsigned int len)
{
	unsigned int i, filling = len * 6 % 8;
	int v = 0;

	if (!len || len % 4 == 1)
		return false;
	for (i = 0; i < len; ++i) {
		v = value_of(in[i]);
		if (v < 0)
			return false;
	}
	return !(v & ((1U << filling) - 1));
}

/**
 * ftv_shape_decode - read a message that may be shaped
 * @in: the bytes received
 * @len: how many
 * @out: room for @len * 3 / 4 bytes; may be @in itself
 *
 * @in is checked whole before anything is written, so that bytes that
 * turn out not to be shaped are left as they came even when @out is @in.
 * Decoding in place is safe: the byte made of characters up to i goes to
 * a place at or before i.
 *
 * Return: the message's length, or -EINVAL if @in is not a shaped message
 * (a byte outside the alphabet, or a length no message shapes to); @out
 * is then untouched.
 */
int ftv_shape_decode(const u8 *in, unsigned int len, u8 *out)
{
	unsigned int i, n = 0, bits = 0;
	u32 acc = 0;

	if (!is_shaped(in, len))
		return -EINVAL;
	for (i = 0; i < len; ++i) {
		acc = acc << 6 | value_of(in[i]);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = acc >> bits;
		}
	}
	return n;
}

/**
 * ftv_shape_read - read back a handshake message in place if it is shaped
 * @buf: the first @len bytes of the payload (those that fit)
 * @len: how many
 * @room: the most bytes of message @buf may get
 *
 * Each character read is written back at or before its place, and
 * nothing is written unless all of @buf is shaped: bytes that are not
 * stay as they came.
 *
 * Return: the message's length.
 */
unsigned int ftv_shape_read(u8 *buf, unsigned int len, unsigned int room)
{
	int n = -EINVAL;

	if (len <= FTV_SHAPED_LEN(room))
		n = ftv_shape_decode(buf, len, buf);
	return n >= 0 ? n : min(len, room);
}

#ifdef DEBUG
#include "selftest/shape.c"
#endif
