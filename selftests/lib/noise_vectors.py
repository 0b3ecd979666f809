#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Known-answer vectors for ftv's key exchange, computed independently.

This re-implements docs/protocol.md section 3 with Python's `cryptography`
package (X25519, ChaCha20-Poly1305) and hashlib/hmac (SHA-256), from fixed
inputs, and prints the expected messages and session keys.

  noise_vectors.py --c          print the C tables for module/selftest/noise.c
  noise_vectors.py --check FILE exit 0 if FILE holds exactly these vectors
"""

import hashlib
import hmac
import re
import sys

from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey, X25519PublicKey)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives import serialization

CONSTRUCTION = b"Noise_IKpsk2_25519_ChaChaPoly_SHA256"
IDENTIFIER = b"ftv v1 fake-tcp tunnel"


def H(*parts):
    return hashlib.sha256(b"".join(parts)).digest()


def hm(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def kdf(ck, data, n):
    t0 = hm(ck, data)
    out, t = [], b""
    for i in range(1, n + 1):
        t = hm(t0, t + bytes([i]))
        out.append(t)
    return out


def clamp(k):
    k = bytearray(k)
    k[0] &= 248
    k[31] = (k[31] & 127) | 64
    return bytes(k)


def priv(label):
    return clamp(H(b"ftv kat " + label))


def pub(k):
    raw = X25519PrivateKey.from_private_bytes(k).public_key()
    return raw.public_bytes(serialization.Encoding.Raw,
                            serialization.PublicFormat.Raw)


def dh(k, p):
    # RFC 7748 ignores the top bit of the peer's u-coordinate.
    p = bytearray(p)
    p[31] &= 127
    return X25519PrivateKey.from_private_bytes(k).exchange(
        X25519PublicKey.from_public_bytes(bytes(p)))


def aead(k, plain, ad):
    return ChaCha20Poly1305(k).encrypt(bytes(12), plain, ad)


def vectors():
    s_i, s_r = priv(b"initiator static"), priv(b"responder static")
    e_i, e_r = priv(b"initiator ephemeral"), priv(b"responder ephemeral")
    psk = H(b"ftv kat psk")
    ts = bytes.fromhex("0000000065f0a1b2075bcd15")
    # The sender sets the ignored top bit at random; the vector sets it on
    # the initiator's key and leaves it clear on the responder's.
    e_i_pub = bytearray(pub(e_i))
    e_i_pub[31] |= 0x80
    e_i_pub = bytes(e_i_pub)
    e_r_pub = pub(e_r)

    ck = H(CONSTRUCTION)
    h = H(H(ck, IDENTIFIER), pub(s_r))
    h = H(h, e_i_pub)
    ck, = kdf(ck, e_i_pub, 1)
    ck, k = kdf(ck, dh(e_i, pub(s_r)), 2)
    sealed_static = aead(k, pub(s_i), h)
    h = H(h, sealed_static)
    ck, k = kdf(ck, dh(s_i, pub(s_r)), 2)
    sealed_ts = aead(k, ts, h)
    h = H(h, sealed_ts)
    init = e_i_pub + sealed_static + sealed_ts

    h = H(h, e_r_pub)
    ck, = kdf(ck, e_r_pub, 1)
    ck, = kdf(ck, dh(e_r, e_i_pub), 1)
    ck, = kdf(ck, dh(e_r, pub(s_i)), 1)
    ck, tau, k = kdf(ck, psk, 3)
    h = H(h, tau)
    resp = e_r_pub + aead(k, b"", h)
    t_ir, t_ri, hp, join = kdf(ck, b"", 4)
    return {
        "kat_initiator_static": s_i, "kat_responder_static": s_r,
        "kat_initiator_ephemeral": e_i, "kat_responder_ephemeral": e_r,
        "kat_initiator_ephemeral_public": e_i_pub, "kat_psk": psk,
        "kat_timestamp": ts, "kat_init": init, "kat_resp": resp,
        "kat_key_i2r": t_ir, "kat_key_r2i": t_ri, "kat_hp": hp,
        "kat_join": join,
    }


def c_tables(v):
    out = []
    for name, data in v.items():
        if out:
            out.append("")
        out.append("static const u8 %s[%d] __initconst = {" % (name,
                                                             len(data)))
        for i in range(0, len(data), 8):
            out.append("\t" + ", ".join("0x%02x" % b for b in data[i:i + 8])
                       + ",")
        out.append("};")
    return "\n".join(out) + "\n"


def check(path):
    text = open(path).read()
    found = {}
    for m in re.finditer(r"static const u8 (\w+)\[\d+\] __initconst = \{"
                         r"([^}]*)\};", text):
        found[m.group(1)] = bytes(int(x, 16) for x in
                                  re.findall(r"0x([0-9a-f]{2})", m.group(2)))
    bad = [k for k, d in vectors().items() if found.get(k) != d]
    for k in bad:
        print("mismatch: %s" % k)
    return not bad


if __name__ == "__main__":
    if sys.argv[1:2] == ["--c"]:
        sys.stdout.write(c_tables(vectors()))
    elif sys.argv[1:2] == ["--check"]:
        sys.exit(0 if check(sys.argv[2]) else 1)
    else:
        for name, data in vectors().items():
            print(name, data.hex())
