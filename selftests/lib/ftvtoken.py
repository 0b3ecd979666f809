#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""SYN tokens (module/token.c) in Python, written from docs/protocol.md,
for the selftests.

  ftvtoken.py check PUBKEY [PSKFILE] < LINES
      reads "ISN TSVAL UNIXTIME" lines (a SYN's sequence number and
      timestamp value, and when it was sent) and prints, per line, "ok" if
      the ISN is the token of TSVAL under the key, "bad" otherwise
  ftvtoken.py randomness < LINES
      reads "ISN TSVAL" lines from distinct connections and prints
      "bits_isn bits_tsval": for each field, the fewest times any one bit
      position was 1 or was 0, over the count, as a fraction (0.5 for a
      perfectly balanced field; a fixed bit gives 0)

As a module, token_isn() and step_of() serve ftvflood.py.
"""

import base64
import hashlib
import struct
import sys
import time

M64 = (1 << 64) - 1
STEP_S = 10          # module/token.h FTV_TOKEN_STEP_S
WINDOW_STEPS = 6     # FTV_TOKEN_WINDOW_STEPS


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M64


def siphash24(k0, k1, data):
    """SipHash-2-4 of data under the key (k0, k1), as the kernel's siphash()."""
    v0 = k0 ^ 0x736f6d6570736575
    v1 = k1 ^ 0x646f72616e646f6d
    v2 = k0 ^ 0x6c7967656e657261
    v3 = k1 ^ 0x7465646279746573

    def rounds(n):
        nonlocal v0, v1, v2, v3
        for _ in range(n):
            v0 = (v0 + v1) & M64
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & M64
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & M64
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & M64
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)

    tail_len = len(data) % 8
    for i in range(0, len(data) - tail_len, 8):
        m = struct.unpack_from("<Q", data, i)[0]
        v3 ^= m
        rounds(2)
        v0 ^= m
    last = (len(data) & 0xff) << 56
    for i, byte in enumerate(data[len(data) - tail_len:]):
        last |= byte << (8 * i)
    v3 ^= last
    rounds(2)
    v0 ^= last
    v2 ^= 0xff
    rounds(4)
    return v0 ^ v1 ^ v2 ^ v3


def token_key(public_key, psk=bytes(32)):
    """The SipHash key of a responder's public key and a pre-shared key."""
    digest = hashlib.sha256(b"ftv SYN token v1" + public_key + psk).digest()
    return struct.unpack("<QQ", digest[:16])


def step_of(unix_time):
    return int(unix_time) // STEP_S


def token_hash(key, tsval, step):
    return siphash24(key[0], key[1],
                     struct.pack("<II", tsval & 0xffffffff,
                                 step & 0xffffffff))


def token_tag(key):
    """What a SYN with a pre-shared key names its key by."""
    return siphash24(key[0], key[1], struct.pack("<I", 0x21676174)) & 0xffff


def token_isn(public_key, psk, tsval, step):
    """The ISN of a SYN to the responder with public_key, for a peer with
    pre-shared key psk (32 zero bytes for none), at clock step step."""
    v = token_hash(token_key(public_key), tsval, step)
    if psk == bytes(32):
        return v & 0xffffffff
    kp = token_key(public_key, psk)
    masked = token_tag(kp) ^ ((v >> 32) & 0xffff)
    return masked << 16 | (token_hash(kp, tsval, step) & 0xffff)


def valid(public_key, psk, isn, tsval, unix_time):
    now = step_of(unix_time)
    return any(token_isn(public_key, psk, tsval, s) == isn
               for s in range(now - WINDOW_STEPS, now + WINDOW_STEPS + 1))


def read_key(b64):
    raw = base64.b64decode(b64)
    if len(raw) != 32:
        sys.exit("ftvtoken.py: a key is 32 bytes of base64")
    return raw


def main(argv):
    if len(argv) >= 3 and argv[1] == "check":
        psk = bytes(32)
        if len(argv) > 3:
            with open(argv[3]) as f:
                psk = read_key(f.read().strip())
        public_key = read_key(argv[2])
        for line in sys.stdin:
            isn, tsval, when = line.split()
            print("ok" if valid(public_key, psk, int(isn), int(tsval),
                                float(when))
                  else "bad")
        return 0
    if len(argv) == 2 and argv[1] == "randomness":
        rows = [tuple(int(v) for v in line.split()[:2])
                for line in sys.stdin if line.strip()]
        if not rows:
            print("0 0")
            return 1
        out = []
        for field in (0, 1):
            worst = 1.0
            for bit in range(32):
                ones = sum((r[field] >> bit) & 1 for r in rows)
                worst = min(worst, ones / len(rows),
                            (len(rows) - ones) / len(rows))
            out.append("%.3f" % worst)
        print(" ".join(out))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
