#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Packet tools for the ftv selftests, on the standard library alone.

  ftvpkt.py replay PCAP IFACE SRC DST [N] [reverse]
      re-send the first N (default 1) TCP segments with payload from SRC to
      DST found in PCAP, unchanged but for the TCP checksum, which is made
      right (a capture at the sender may hold what checksum offload was to
      fill in), out of IFACE (last one first if "reverse")
  ftvpkt.py bitflip PCAP IFACE SRC DST [N]
      the same, with one payload bit flipped (TCP checksum fixed up)
  ftvpkt.py stats PCAP SRC,DST[,SRC,DST...] [POSITIONS] [first]
      per byte position of the TCP payloads between those pairs, the share
      of the most common value; prints "count max_share worst_position".
      With "first", only the first payload of each direction of each
      connection: the key exchange messages
  ftvpkt.py syn PCAP IFACE [NEWSRC] [last]
      re-send the first SYN (without ACK) found in PCAP, or the last one,
      out of IFACE, unchanged or from the IPv4 address NEWSRC (checksums
      fixed up)
  ftvpkt.py synfields PCAP
      "ISN TSVAL UNIXTIME" of every SYN (without ACK) in PCAP, one per line
  ftvpkt.py lengths PCAP SRC DST [first|rest]
      the distinct payload lengths from SRC to DST, one per line; "first"
      counts only the first payload of each connection, "rest" all others

PCAP is a capture of an Ethernet device (tcpdump -i DEV -w PCAP), in
microsecond or nanosecond pcap format. The tool once read captures with
scapy, which took half a minute a pass over a few thousand segments under
emulation; a pcap record and the headers it needs are a few struct
unpacks.
"""

import collections
import ipaddress
import random
import socket
import struct
import sys

from forgetcp import checksum, timestamps

ETH_LEN = 14
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
LINKTYPE_ETHERNET = 1


class Segment:
    """One captured TCP segment: its frame and where its parts start."""

    def __init__(self, frame, stamp, ip_off, tcp_off, data_off, version):
        self.frame = bytearray(frame)
        self.time = stamp
        self.ip = ip_off
        self.tcp = tcp_off
        self.data = data_off
        self.version = version

    @property
    def src(self):
        if self.version == 4:
            return str(ipaddress.IPv4Address(bytes(self.frame[self.ip + 12:self.ip + 16])))
        return str(ipaddress.IPv6Address(bytes(self.frame[self.ip + 8:self.ip + 24])))

    @property
    def dst(self):
        if self.version == 4:
            return str(ipaddress.IPv4Address(bytes(self.frame[self.ip + 16:self.ip + 20])))
        return str(ipaddress.IPv6Address(bytes(self.frame[self.ip + 24:self.ip + 40])))

    @property
    def ports(self):
        return struct.unpack_from("!HH", self.frame, self.tcp)

    @property
    def seq(self):
        return struct.unpack_from("!I", self.frame, self.tcp + 4)[0]

    @property
    def flags(self):
        return self.frame[self.tcp + 13]

    @property
    def payload(self):
        return bytes(self.frame[self.data:])

    def set_src4(self, addr):
        self.frame[self.ip + 12:self.ip + 16] = ipaddress.IPv4Address(addr).packed
        self.frame[self.ip + 10:self.ip + 12] = b"\0\0"
        ihl = (self.frame[self.ip] & 0x0F) * 4
        csum = checksum(bytes(self.frame[self.ip:self.ip + ihl]))
        struct.pack_into("!H", self.frame, self.ip + 10, csum)

    def fix_tcp_checksum(self):
        tcp = self.frame[self.tcp:]
        if self.version == 4:
            pseudo = bytes(self.frame[self.ip + 12:self.ip + 20]) + \
                struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
        else:
            pseudo = bytes(self.frame[self.ip + 8:self.ip + 40]) + \
                struct.pack("!IxxxB", len(tcp), socket.IPPROTO_TCP)
        struct.pack_into("!H", self.frame, self.tcp + 16, 0)
        csum = checksum(pseudo + bytes(self.frame[self.tcp:]))
        struct.pack_into("!H", self.frame, self.tcp + 16, csum)


def records(path):
    """(frame, time) of each record of an Ethernet pcap file."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        for endian in ("<", ">"):
            magic = struct.unpack(endian + "I", head[:4])[0]
            if magic in (0xA1B2C3D4, 0xA1B23C4D):
                break
        else:
            raise SystemExit("%s: not a pcap file" % path)
        scale = 1e-6 if magic == 0xA1B2C3D4 else 1e-9
        if struct.unpack(endian + "I", head[20:24])[0] != LINKTYPE_ETHERNET:
            raise SystemExit("%s: not an Ethernet capture" % path)
        rec = struct.Struct(endian + "IIII")
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, frac, incl, _ = rec.unpack(h)
            frame = f.read(incl)
            if len(frame) < incl:
                return
            yield frame, sec + frac * scale


def tcp_segments(path):
    """Every TCP segment over IPv4 or IPv6 (no extension headers)."""
    for frame, stamp in records(path):
        if len(frame) < ETH_LEN:
            continue
        ethertype = struct.unpack_from("!H", frame, 12)[0]
        ip = ETH_LEN
        if ethertype == ETH_P_IP and len(frame) >= ip + 20:
            if frame[ip + 9] != socket.IPPROTO_TCP:
                continue
            ihl = (frame[ip] & 0x0F) * 4
            end = ip + struct.unpack_from("!H", frame, ip + 2)[0]
            tcp, version = ip + ihl, 4
        elif ethertype == ETH_P_IPV6 and len(frame) >= ip + 40:
            if frame[ip + 6] != socket.IPPROTO_TCP:
                continue
            end = ip + 40 + struct.unpack_from("!H", frame, ip + 4)[0]
            tcp, version = ip + 40, 6
        else:
            continue
        if len(frame) < tcp + 20 or end > len(frame):
            continue
        data = tcp + (frame[tcp + 12] >> 4) * 4
        if data > end:
            continue
        yield Segment(frame[:end], stamp, ip, tcp, data, version)


def segments(path, pairs):
    for seg in tcp_segments(path):
        if seg.data < len(seg.frame) and (seg.src, seg.dst) in pairs:
            yield seg


def send(frames, iface):
    """Each frame out of iface as it is (no receiving hook on the socket)."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0) as s:
        for frame in frames:
            ethertype = struct.unpack_from("!H", frame, 12)[0]
            s.sendto(frame, (iface, ethertype))


def resend(path, iface, src, dst, count, flip, reverse=False):
    segs = list(segments(path, {(src, dst)}))[:count]
    if reverse:
        segs.reverse()
    for seg in segs:
        if flip:
            i = random.randrange(seg.data, len(seg.frame))
            seg.frame[i] ^= 1 << random.randrange(8)
        # A capture at the sender holds checksums its device was yet to
        # fill in; on the wire they were right, and so are replays.
        seg.fix_tcp_checksum()
    send((bytes(seg.frame) for seg in segs), iface)
    print(len(segs))
    return len(segs) == count


def first_payloads(segs):
    seen = set()
    for seg in segs:
        flow = (seg.src, seg.dst) + seg.ports
        if flow not in seen:
            seen.add(flow)
            yield seg


def stats(path, pairs, positions, first=False):
    counts = [collections.Counter() for _ in range(positions)]
    n = 0
    segs = segments(path, pairs)
    if first:
        segs = first_payloads(segs)
    for seg in segs:
        n += 1
        for i, b in enumerate(seg.payload[:positions]):
            counts[i][b] += 1
    worst, where = 0.0, -1
    for i, c in enumerate(counts):
        total = sum(c.values())
        if total >= 100:
            share = c.most_common(1)[0][1] / total
            if share > worst:
                worst, where = share, i
    print(n, "%.4f" % worst, where)
    return True


def syns(path):
    for seg in tcp_segments(path):
        if seg.flags & 0x12 == 0x02:
            yield seg


def resend_syn(path, iface, newsrc=None, last=False):
    seg = None
    for seg in syns(path):
        if not last:
            break
    if seg is None:
        return False
    if newsrc:
        seg.set_src4(newsrc)
        seg.fix_tcp_checksum()
    send([bytes(seg.frame)], iface)
    return True


def syn_fields(path):
    for seg in syns(path):
        ts = timestamps(bytes(seg.frame[seg.tcp + 20:seg.data]))
        if ts:
            print(seg.seq, struct.unpack("!I", ts[:4])[0], "%.3f" % seg.time)
    return True


def lengths(path, src, dst, which):
    segs = list(segments(path, {(src, dst)}))
    if which == "first":
        segs = list(first_payloads(segs))
    elif which == "rest":
        firsts = {id(s) for s in first_payloads(segs)}
        segs = [s for s in segs if id(s) not in firsts]
    for n in sorted({len(s.frame) - s.data for s in segs}):
        print(n)
    return True


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "syn":
        last = argv[-1] == "last" and len(argv) > 4
        if last:
            argv = argv[:-1]
        return resend_syn(argv[2], argv[3], argv[4] if len(argv) > 4 else None,
                          last)
    if cmd == "synfields":
        return syn_fields(argv[2])
    if cmd in ("replay", "bitflip"):
        n = int(argv[6]) if len(argv) > 6 else 1
        return resend(argv[2], argv[3], argv[4], argv[5], n,
                      cmd == "bitflip", argv[7:8] == ["reverse"])
    if cmd == "stats":
        items = argv[3].split(",")
        pairs = set(zip(items[0::2], items[1::2]))
        return stats(argv[2], pairs, int(argv[4]) if len(argv) > 4 else 64,
                     argv[5:6] == ["first"])
    if cmd == "lengths":
        return lengths(argv[2], argv[3], argv[4], argv[5] if len(argv) > 5 else "")
    print(__doc__, file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv) else 1)
