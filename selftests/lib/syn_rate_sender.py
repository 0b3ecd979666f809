#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""SYNs with valid tokens (ftvtoken.py), at a given rate, and their replay.

  syn_rate_sender.py SRC DST PORT PUBKEY COUNT RATE [psk=FILE] [replay=N]

Makes COUNT SYNs from SRC (IPv4) to DST:PORT, each from its own source
port with its own token under the responder's public key PUBKEY (base64)
and the pre-shared key in FILE (none if not given), all made before the
first one is sent; sends them at RATE a second through a raw socket; and
counts the SYN-ACKs that come back for them, until 2 s after the last.
Then it sends the first N of them again, unchanged (replays), and counts
the SYN-ACKs those get. Prints one line:

  sent COUNT in SECONDS s answered A replayed N answered R

Standard library only (see forgetcp.py).
"""

import os
import random
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ftvtoken  # noqa: E402
from forgetcp import checksum  # noqa: E402


def syn(src, dst, sport, dport, isn, tsval):
    opts = struct.pack("!BBHBBBBII", 2, 4, 1460, 4, 2, 8, 10, tsval, 0) + \
        b"\x01\x03\x03\x07"
    tcp = struct.pack("!HHIIBBHHH", sport, dport, isn, 0,
                      ((20 + len(opts)) // 4) << 4, 0x02, 64240, 0, 0) + opts
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp),
                     random.randrange(65536), 0x4000, 64, 6, 0, src, dst)
    return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + tcp


def synacks(rx, responder, us, port, want, deadline):
    """Our source ports in want that got a SYN-ACK before deadline, and at
    least those whose SYN-ACK rx holds already, even if deadline is past."""
    got = set()
    while len(got) < len(want):
        left = deadline - time.monotonic()
        readable = select.select([rx], [], [], min(max(left, 0), 0.1))[0]
        while readable:
            try:
                pkt = rx.recv(65535)
            except BlockingIOError:
                break
            ihl = (pkt[0] & 0xf) * 4
            if pkt[12:16] != responder or pkt[16:20] != us or \
                    len(pkt) < ihl + 14:
                continue
            sport, dport = struct.unpack_from("!HH", pkt, ihl)
            flags = pkt[ihl + 13]
            if sport == port and flags & 0x12 == 0x12 and dport in want:
                got.add(dport)
        if left <= 0:
            break
    return got


def main(argv):
    if len(argv) < 7:
        print(__doc__, file=sys.stderr)
        return 2
    src = socket.inet_aton(argv[1])
    dst = socket.inet_aton(argv[2])
    port, count, rate = int(argv[3]), int(argv[5]), float(argv[6])
    public_key = ftvtoken.read_key(argv[4])
    opt = dict(a.split("=", 1) for a in argv[7:])
    psk = bytes(32)
    if "psk" in opt:
        with open(opt["psk"]) as f:
            psk = ftvtoken.read_key(f.read().strip())
    replay = int(opt.get("replay", 0))

    step = ftvtoken.step_of(time.time())
    sports = random.sample(range(10000, 60000), count)
    pkts = []
    for sport in sports:
        tsval = random.getrandbits(32)
        isn = ftvtoken.token_isn(public_key, psk, tsval, step)
        pkts.append(syn(src, dst, sport, port, isn, tsval))

    tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    rx.setblocking(False)
    # SO_RCVBUFFORCE (root) goes past net.core.rmem_max, which would
    # hold SO_RCVBUF to about 330 small packets.
    rx.setsockopt(socket.SOL_SOCKET,
                  getattr(socket, "SO_RCVBUFFORCE", 33), 8 << 20)
    answered = set()
    want = set(sports)
    start = time.monotonic()
    for i, pkt in enumerate(pkts):
        # Read the answers even when behind the schedule (a slow kernel,
        # a debug one), or they pile up in rx until it overflows.
        delay = start + i / rate - time.monotonic()
        answered |= synacks(rx, dst, src, port, want,
                            time.monotonic() + max(delay, 0))
        tx.sendto(pkt, (argv[2], 0))
    took = time.monotonic() - start
    answered |= synacks(rx, dst, src, port, want - answered,
                        time.monotonic() + 2)

    again = set(sports[:replay])
    for pkt in pkts[:replay]:
        tx.sendto(pkt, (argv[2], 0))
    replayed = synacks(rx, dst, src, port, again, time.monotonic() + 2)
    print("sent %d in %.2f s answered %d replayed %d answered %d" %
          (count, took, len(answered), replay, len(replayed)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
