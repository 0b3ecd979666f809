#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A fake responder that answers a SYN and then forges responses.

  resp_flood_responder.py LOCAL_IP PORT COUNT [TIMEOUT]

Run in the responder's namespace, where nothing else answers on PORT
(the host stack's resets are ignored by ftv). It waits for a SYN to
LOCAL_IP:PORT, answers it with a SYN-ACK as a Linux stack would, waits
for the initiator's initiation (its first segment with payload), and
then sends COUNT forged responses as fast as it can: segments at exactly
the sequence number a response must have, with 56 to 112 random bytes,
each of which costs an initiator that checks them two X25519
operations. Prints "COUNT SECONDS"; exits 1 if no SYN or initiation came
within TIMEOUT seconds (default 20).
"""

import os
import random
import select
import socket
import struct
import sys
import time

from forgetcp import timestamps
from ftvflood import segment, ts_options


def synack_options(tsval, tsecr):
    # MSS 1460, SACK permitted, timestamps, NOP, window scale 7
    return b"\x02\x04\x05\xb4\x04\x02\x08\x0a" + \
        struct.pack("!II", tsval, tsecr) + b"\x01\x03\x03\x07"


def next_segment(rx, local, port, deadline, want_payload):
    """(src, sport, seq, ack, tsval, payload length) of the next segment
    to local:port that is a SYN or, with want_payload, carries data."""
    while time.monotonic() < deadline:
        if not select.select([rx], [], [], 0.2)[0]:
            continue
        pkt = rx.recv(65535)
        ihl = (pkt[0] & 0x0f) * 4
        if len(pkt) < ihl + 20 or pkt[16:20] != socket.inet_aton(local):
            continue
        sport, dport, seq, ack, doff, flags = struct.unpack_from(
            "!HHIIBB", pkt, ihl)
        if dport != port:
            continue
        hlen = (doff >> 4) * 4
        plen = len(pkt) - ihl - hlen
        ts = timestamps(pkt[ihl + 20:ihl + hlen])
        tsval = struct.unpack("!I", ts[:4])[0] if ts else 0
        src = socket.inet_ntoa(pkt[12:16])
        if not want_payload and flags & 0x12 == 0x02:
            return src, sport, seq, ack, tsval, plen
        if want_payload and plen > 0 and not flags & 0x02:
            return src, sport, seq, ack, tsval, plen
    return None


def main():
    local, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 20
    deadline = time.monotonic() + timeout
    rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    syn = next_segment(rx, local, port, deadline, False)
    if not syn:
        print("no SYN")
        return 1
    src, sport, their_isn, _, their_ts, _ = syn
    isn = random.getrandbits(32)
    our_ts = random.getrandbits(32)
    tx.sendto(segment(local, src, port, sport, isn,
                      (their_isn + 1) & 0xffffffff, 0x12,
                      synack_options(our_ts, their_ts)), (src, 0))
    init = None
    while time.monotonic() < deadline:
        init = next_segment(rx, local, port, deadline, True)
        if not init or init[1] == sport:
            break
    if not init:
        print("no initiation")
        return 1
    _, _, seq, _, tsval, plen = init
    start = time.monotonic()
    for i in range(count):
        tx.sendto(segment(local, src, port, sport, (isn + 1) & 0xffffffff,
                          (seq + plen) & 0xffffffff, 0x18,
                          ts_options((our_ts + 1 + i) & 0xffffffff, tsval),
                          os.urandom(56 + random.randrange(57))), (src, 0))
    print("%d %.2f" % (count, time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
