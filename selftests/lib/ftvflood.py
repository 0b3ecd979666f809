#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Forged key exchanges for the ftv selftests.

  ftvflood.py SRC DST PORT COUNT PUBKEY

Plays COUNT fake TCP handshakes from SRC to DST:PORT with raw sockets, as
a stranger who knows the responder's public key PUBKEY (base64) would:
a SYN with a valid token (ftvtoken.py), then, on the SYN-ACK, the ACK
with 100 to 200 random bytes (a forged initiation). Prints the number of
initiations sent and the seconds it took. Run it from an address of the
namespace's own: its kernel answers the SYN-ACKs with resets, which the
responder ignores (they fall through to its host).
"""

import os
import random
import select
import socket
import struct
import sys
import time

import ftvtoken
from forgetcp import timestamps

BATCH = 64


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def segment(src, dst, sport, dport, seq, ack, flags, opts, payload=b""):
    doff = (20 + len(opts)) // 4
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4,
                      flags, 64240, 0, 0) + opts + payload
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + \
        struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
    csum = checksum(pseudo + tcp)
    tcp = tcp[:16] + struct.pack("!H", csum) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp),
                     random.getrandbits(16), 0x4000, 64,
                     socket.IPPROTO_TCP, 0, socket.inet_aton(src),
                     socket.inet_aton(dst))
    return ip + tcp


def syn_options(tsval):
    # MSS 1460, SACK permitted, timestamps, NOP, window scale 7: Linux's
    return b"\x02\x04\x05\xb4\x04\x02\x08\x0a" + struct.pack("!II", tsval, 0) \
        + b"\x01\x03\x03\x07"


def ts_options(tsval, tsecr):
    return b"\x01\x01\x08\x0a" + struct.pack("!II", tsval, tsecr)


def parse_synack(pkt, src, dst, port):
    """(dport, seq, tsval) of a SYN-ACK from dst:port to src, else None."""
    ihl = (pkt[0] & 0x0f) * 4
    if len(pkt) < ihl + 20 or pkt[9] != socket.IPPROTO_TCP or \
            pkt[12:16] != socket.inet_aton(dst) or \
            pkt[16:20] != socket.inet_aton(src):
        return None
    sport, dport, seq, _, doff, flags = struct.unpack_from("!HHIIBB", pkt,
                                                           ihl)
    if sport != port or flags & 0x12 != 0x12:
        return None
    ts = timestamps(pkt[ihl + 20:ihl + (doff >> 4) * 4])
    tsval = struct.unpack("!I", ts[:4])[0] if ts else 0
    return dport, seq, tsval


def one_batch(tx, rx, src, dst, port, key, n):
    pending = {}
    for sport in random.sample(range(20000, 60000), n):
        tsval = random.getrandbits(32)
        isn = ftvtoken.token_isn(key, bytes(32), tsval,
                                 ftvtoken.step_of(time.time()))
        pending[sport] = (isn, tsval)
        tx.sendto(segment(src, dst, sport, port, isn, 0, 0x02,
                          syn_options(tsval)), (dst, 0))
    sent = 0
    deadline = time.monotonic() + 2
    while pending and time.monotonic() < deadline:
        if not select.select([rx], [], [], 0.2)[0]:
            continue
        while True:
            try:
                pkt = rx.recv(65535)
            except BlockingIOError:
                break
            got = parse_synack(pkt, src, dst, port)
            if not got or got[0] not in pending:
                continue
            sport, their_seq, their_ts = got
            isn, tsval = pending.pop(sport)
            payload = os.urandom(100 + random.randrange(101))
            tx.sendto(segment(src, dst, sport, port, (isn + 1) & 0xffffffff,
                              (their_seq + 1) & 0xffffffff, 0x18,
                              ts_options((tsval + 1) & 0xffffffff, their_ts),
                              payload),
                      (dst, 0))
            sent += 1
    return sent


def main():
    src, dst, port, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        int(sys.argv[4])
    key = ftvtoken.read_key(sys.argv[5])
    tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    rx.setblocking(False)
    start = time.monotonic()
    sent = 0
    tries = 0
    while sent < count and tries < 4 * count:
        n = min(BATCH, count - sent)
        tries += n
        sent += one_batch(tx, rx, src, dst, port, key, n)
    print(sent, "%.1f" % (time.monotonic() - start))


if __name__ == "__main__":
    main()
