#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Packet tools for the ftv selftests, on scapy (Debian's python3-scapy).

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
  ftvpkt.py syn PCAP IFACE [NEWSRC]
      re-send the first SYN (without ACK) found in PCAP out of IFACE,
      unchanged or from the address NEWSRC (checksums fixed up)
  ftvpkt.py synfields PCAP
      "ISN TSVAL UNIXTIME" of every SYN (without ACK) in PCAP, one per line
  ftvpkt.py lengths PCAP SRC DST [first|rest]
      the distinct payload lengths from SRC to DST, one per line; "first"
      counts only the first payload of each connection, "rest" all others
"""

import collections
import random
import sys

from scapy.all import IP, IPv6, TCP, Ether, rdpcap, sendp  # noqa: E402


def l3(pkt):
    return pkt[IP] if IP in pkt else pkt[IPv6] if IPv6 in pkt else None


def segments(path, pairs):
    for pkt in rdpcap(path):
        ip = l3(pkt)
        if ip is None or TCP not in pkt:
            continue
        if (ip.src, ip.dst) in pairs and len(pkt[TCP].payload):
            yield pkt


def resend(path, iface, src, dst, count, flip, reverse=False):
    pkts = list(segments(path, {(src, dst)}))[:count]
    if reverse:
        pkts.reverse()
    sent = 0
    for pkt in pkts:
        pkt = pkt.copy()
        if flip:
            data = bytearray(bytes(pkt[TCP].payload))
            data[random.randrange(len(data))] ^= 1 << random.randrange(8)
            pkt[TCP].remove_payload()
            pkt[TCP].add_payload(bytes(data))
            if IP in pkt:
                del pkt[IP].len
                del pkt[IP].chksum
            else:
                del pkt[IPv6].plen
        # A capture at the sender holds checksums its device was yet to
        # fill in; on the wire they were right, and so are replays.
        del pkt[TCP].chksum
        sendp(pkt if Ether in pkt else Ether() / pkt, iface=iface,
              verbose=False)
        sent += 1
    print(sent)
    return sent == count


def first_payloads(pkts):
    seen = set()
    for pkt in pkts:
        ip = l3(pkt)
        flow = (ip.src, ip.dst, pkt[TCP].sport, pkt[TCP].dport)
        if flow not in seen:
            seen.add(flow)
            yield pkt


def stats(path, pairs, positions, first=False):
    counts = [collections.Counter() for _ in range(positions)]
    n = 0
    pkts = segments(path, pairs)
    if first:
        pkts = first_payloads(pkts)
    for pkt in pkts:
        data = bytes(pkt[TCP].payload)
        n += 1
        for i, b in enumerate(data[:positions]):
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
    for pkt in rdpcap(path):
        if TCP in pkt and pkt[TCP].flags & 0x12 == 0x02:
            yield pkt


def resend_syn(path, iface, newsrc=None):
    for pkt in syns(path):
        pkt = pkt.copy()
        if newsrc:
            pkt[IP].src = newsrc
            del pkt[IP].chksum
            del pkt[TCP].chksum
        sendp(pkt if Ether in pkt else Ether() / pkt, iface=iface,
              verbose=False)
        return True
    return False


def syn_fields(path):
    for pkt in syns(path):
        ts = dict(pkt[TCP].options).get("Timestamp")
        if ts:
            print(pkt[TCP].seq, ts[0], "%.3f" % float(pkt.time))
    return True


def main(argv):
    cmd = argv[1]
    if cmd == "syn":
        return resend_syn(argv[2], argv[3], argv[4] if len(argv) > 4 else None)
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
        pkts = list(segments(argv[2], {(argv[3], argv[4])}))
        if argv[5:6] == ["first"]:
            pkts = list(first_payloads(pkts))
        elif argv[5:6] == ["rest"]:
            firsts = {id(p) for p in first_payloads(pkts)}
            pkts = [p for p in pkts if id(p) not in firsts]
        for n in sorted({len(p[TCP].payload) for p in pkts}):
            print(n)
        return True
    print(__doc__, file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv) else 1)
