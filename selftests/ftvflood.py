#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Forged key exchanges for the ftv selftests.

  ftvflood.py SRC DST PORT COUNT

Opens COUNT real TCP connections from SRC to DST:PORT (so each passes the
SYN cookie check, as an attacker that receives at its address would), sends
100 to 200 random bytes on each (a forged initiation), and resets it.
Prints the number of initiations sent and the seconds it took.
"""

import fcntl
import os
import selectors
import socket
import struct
import sys
import time

BATCH = 64
SIOCOUTQNSD = 0x894B  # bytes queued on a TCP socket but not sent yet


def unsent(s):
    try:
        return struct.unpack("i", fcntl.ioctl(s, SIOCOUTQNSD,
                                              b"\0" * 4))[0]
    except OSError:
        return 0


def one_batch(src, dst, port, n):
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.bind((src, 0))
        s.setblocking(False)
        s.connect_ex((dst, port))
        sel.register(s, selectors.EVENT_WRITE)
        socks.append(s)
    sent = 0
    deadline = time.monotonic() + 5
    pending = len(socks)
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            sel.unregister(s)
            pending -= 1
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                try:
                    s.send(os.urandom(100 + os.urandom(1)[0] % 101))
                    sent += 1
                except OSError:
                    pass
    # A reset discards what is still queued: close only once every
    # forgery has left, so that each one sent is one that B received.
    deadline = time.monotonic() + 2
    while any(unsent(s) for s in socks) and time.monotonic() < deadline:
        time.sleep(0.001)
    for s in socks:
        s.close()
    return sent


def main():
    src, dst, port, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        int(sys.argv[4])
    start = time.monotonic()
    sent = 0
    while sent < count:
        sent += one_batch(src, dst, port, min(BATCH, count - sent))
    print(sent, "%.1f" % (time.monotonic() - start))


if __name__ == "__main__":
    main()
