#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Forge an in-window RST or FIN into a running TCP connection.

  forgetcp.py IFACE rst|fin [src=ADDR] [dst=ADDR] [sport=N] [dport=N]
              [timeout=SECONDS]

Waits (up to the timeout, default 10 s) for the next TCP segment with
payload that IFACE sees, in either direction, from src to dst with those
ports (each one only if given). Then it sends out of IFACE, in the same
direction and with the same Ethernet and IP addresses and ports, a
segment with RST|ACK or FIN|ACK whose sequence number is the one that
comes right after the captured segment's payload (the next byte the
receiver expects: as much in-window as a segment can be) and whose
acknowledgment and window are the captured ones. A FIN carries the
captured timestamps, as a Linux stack's would; a RST carries none.

Prints what it sent, tcpdump-like, and exits 0; exits 1 if nothing
matched in time. Standard library only (a packet socket): scapy takes
tens of seconds just to load on an emulated CPU.
"""

import ipaddress
import random
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86dd
FIN, RST, ACK = 0x01, 0x04, 0x10


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def parse(frame):
    """(ethertype, src, dst, ttl, tcp header fields, payload length) or None"""
    if len(frame) < 14:
        return None
    etype = struct.unpack_from("!H", frame, 12)[0]
    pkt = frame[14:]
    if etype == ETH_P_IP and len(pkt) >= 20 and pkt[9] == 6:
        ihl = (pkt[0] & 0xf) * 4
        total = struct.unpack_from("!H", pkt, 2)[0]
        if struct.unpack_from("!H", pkt, 6)[0] & 0x3fff:
            return None             # a fragment
        src, dst, ttl = pkt[12:16], pkt[16:20], pkt[8]
        tcp, tcp_len = pkt[ihl:total], total - ihl
    elif etype == ETH_P_IPV6 and len(pkt) >= 40 and pkt[6] == 6:
        plen = struct.unpack_from("!H", pkt, 4)[0]
        src, dst, ttl = pkt[8:24], pkt[24:40], pkt[7]
        tcp, tcp_len = pkt[40:40 + plen], plen
    else:
        return None
    if len(tcp) < 20:
        return None
    sport, dport, seq, ack, off, win = struct.unpack_from("!HHIIHH", tcp)
    hlen = (off >> 12) * 4
    return {
        "etype": etype, "src": src, "dst": dst, "ttl": ttl,
        "sport": sport, "dport": dport, "seq": seq, "ack": ack,
        "win": win, "opts": tcp[20:hlen], "len": tcp_len - hlen,
    }


def timestamps(opts):
    i = 0
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if kind == 8 and opts[i + 1] == 10:
            return opts[i + 2:i + 10]
        i += opts[i + 1]
    return None


def forge(frame, seg, kind):
    opts = b""
    ts = timestamps(seg["opts"])
    if kind == "fin" and ts:
        opts = b"\x01\x01\x08\x0a" + ts
    flags = ACK | (RST if kind == "rst" else FIN)
    seq = (seg["seq"] + seg["len"]) % 2**32
    hlen = 20 + len(opts)
    tcp = struct.pack("!HHIIBBHHH", seg["sport"], seg["dport"], seq,
                      seg["ack"], (hlen // 4) << 4, flags, seg["win"], 0,
                      0) + opts
    if seg["etype"] == ETH_P_IP:
        pseudo = seg["src"] + seg["dst"] + struct.pack("!BBH", 0, 6, hlen)
    else:
        pseudo = seg["src"] + seg["dst"] + struct.pack("!IxxxB", hlen, 6)
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    if seg["etype"] == ETH_P_IP:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + hlen,
                         random.randrange(65536), 0x4000, seg["ttl"], 6, 0,
                         seg["src"], seg["dst"])
        ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    else:
        ip = struct.pack("!IHBB16s16s", 6 << 28, hlen, 6, seg["ttl"],
                         seg["src"], seg["dst"])
    return frame[:14] + ip + tcp, seq


def addr(raw):
    return str(ipaddress.ip_address(raw))


def main(argv):
    if len(argv) < 3 or argv[2] not in ("rst", "fin"):
        print(__doc__, file=sys.stderr)
        return 1
    iface, kind = argv[1], argv[2]
    want = dict(a.split("=", 1) for a in argv[3:])
    timeout = float(want.pop("timeout", 10))
    for key in ("src", "dst"):
        if key in want:
            want[key] = ipaddress.ip_address(want[key]).packed
    for key in ("sport", "dport"):
        if key in want:
            want[key] = int(want[key])

    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                         socket.htons(ETH_P_ALL))
    sock.bind((iface, 0))
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            print("no segment from %s matched on %s in %g s" %
                  (" ".join(argv[3:]) or "anywhere", iface, timeout))
            return 1
        frame = sock.recv(65535)
        seg = parse(frame)
        if seg and seg["len"] > 0 and all(seg[k] == v for k, v in want.items()):
            break
    out, seq = forge(frame, seg, kind)
    sock.send(out)
    sock.close()
    print("sent %s:%d > %s:%d [%s] seq %d ack %d win %d, after a segment "
          "with seq %d len %d" % (addr(seg["src"]), seg["sport"],
                                  addr(seg["dst"]), seg["dport"],
                                  "R." if kind == "rst" else "F.", seq,
                                  seg["ack"], seg["win"], seg["seq"],
                                  seg["len"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
