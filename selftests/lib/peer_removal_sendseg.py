#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send TCP segments built from scratch, for the ftv selftests.

  peer_removal_sendseg.py SRC DST SPORT DPORT [flags=PA] [len=N] [seq=N] [ack=N]
             [count=N]

Sends count (default 1) segments from SRC:SPORT to DST:DPORT through a raw
IP socket of the calling namespace (IPv4 or IPv6, from the addresses),
with the given TCP flags (letters of FSRPAU; default PA), a payload of
len random bytes (default 100), and random sequence and acknowledgment
numbers unless given. Checksums are correct. Standard library only:
scapy takes tens of seconds just to load on an emulated CPU.
"""

import ipaddress
import os
import random
import socket
import struct
import sys

FLAGS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, "A": 0x10, "U": 0x20}


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def segment(src, dst, sport, dport, flags, payload, seq, ack):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags,
                      502, 0, 0) + payload
    if src.version == 4:
        pseudo = src.packed + dst.packed + struct.pack("!BBH", 0, 6, len(tcp))
    else:
        pseudo = src.packed + dst.packed + struct.pack("!IxxxB", len(tcp), 6)
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    if src.version == 4:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp),
                         random.randrange(65536), 0x4000, 64, 6, 0,
                         src.packed, dst.packed)
        return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + tcp
    return struct.pack("!IHBB16s16s", 6 << 28, len(tcp), 6, 64, src.packed,
                       dst.packed) + tcp


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 1
    src, dst = ipaddress.ip_address(argv[1]), ipaddress.ip_address(argv[2])
    sport, dport = int(argv[3]), int(argv[4])
    opt = dict(a.split("=", 1) for a in argv[5:])
    flags = sum(FLAGS[c] for c in opt.get("flags", "PA"))
    family = socket.AF_INET if src.version == 4 else socket.AF_INET6
    sock = socket.socket(family, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for _ in range(int(opt.get("count", 1))):
        seq = int(opt["seq"]) if "seq" in opt else random.getrandbits(32)
        ack = int(opt["ack"]) if "ack" in opt else random.getrandbits(32)
        payload = os.urandom(int(opt.get("len", 100)))
        sock.sendto(segment(src, dst, sport, dport, flags, payload, seq, ack),
                    (str(dst), 0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
