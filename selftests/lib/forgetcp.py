#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Forge segments and ICMP errors into a running TCP connection.

  forgetcp.py IFACE KIND [src=ADDR] [dst=ADDR] [sport=N] [dport=N]
              [timeout=SECONDS] [mtu=N] [tsval=N] [to=ADDR] [from=ADDR]
              [ttl=N] [ipid=N]

KIND is one of
  rst, fin   an in-window RST or FIN, as described below
  ack        a pure ACK with the next sequence number, carrying the
             timestamp value tsval=N (default 0x5eed1e55)
  badsum     a data segment with the next sequence number and a wrong
             TCP checksum (the payload is as long as the captured one)
  redirect   the captured segment again, unchanged but for its destination
             address, which becomes to=ADDR (checksums fixed up)
  icmp       an ICMP error back to the captured segment's sender: IPv4
             "fragmentation needed" or ICMPv6 "packet too big" with
             mtu=N (default 1280), from from=ADDR (default: the
             segment's destination), quoting the segment's IP header and
             first 8 TCP bytes with the sequence number of the byte after
             it: one the sender has sent and not yet seen acknowledged
  icmpforged the same, quoting a sequence number 2^31 away from it, as
             an off-path forger who knows the ports but not the sequence
             numbers would

Waits (up to the timeout, default 10 s) for the next TCP segment with
payload that IFACE sees, in either direction, from src to dst with those
ports (each one only if given). Then it sends out of IFACE, in the same
direction and with the same Ethernet and IP addresses and ports, a
segment with RST|ACK or FIN|ACK whose sequence number is the one that
comes right after the captured segment's payload (the next byte the
receiver expects: as much in-window as a segment can be) and whose
acknowledgment and window are the captured ones. A FIN carries the
captured timestamps, as a Linux stack's would; a RST carries none.
Its TTL (hop limit) is the captured one's unless ttl=N is given; an IPv4
segment's IP ID is random unless ipid=N is given.

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
FIN, RST, PSH, ACK = 0x01, 0x04, 0x08, 0x10
KINDS = ("rst", "fin", "ack", "badsum", "redirect", "icmp", "icmpforged")


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
        tcp, tcp_len, iphdr = pkt[ihl:total], total - ihl, pkt[:ihl]
    elif etype == ETH_P_IPV6 and len(pkt) >= 40 and pkt[6] == 6:
        plen = struct.unpack_from("!H", pkt, 4)[0]
        src, dst, ttl = pkt[8:24], pkt[24:40], pkt[7]
        tcp, tcp_len, iphdr = pkt[40:40 + plen], plen, pkt[:40]
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
        "ip": iphdr, "tcp": tcp,
    }


def timestamps_at(opts):
    """Where the timestamp option's two values start in opts, or None."""
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
            return i + 2
        i += opts[i + 1]
    return None


def timestamps(opts):
    """The timestamp option's 8 bytes of values, or None."""
    at = timestamps_at(opts)
    return None if at is None else opts[at:at + 8]


def ip_header(etype, src, dst, ttl, proto, length, ident=None):
    if ident is None:
        ident = random.randrange(65536)
    if etype == ETH_P_IP:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + length,
                         ident, 0x4000, ttl, proto, 0, src, dst)
        return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return struct.pack("!IHBB16s16s", 6 << 28, length, proto, ttl, src, dst)


def pseudo_header(etype, src, dst, proto, length):
    if etype == ETH_P_IP:
        return src + dst + struct.pack("!BBH", 0, proto, length)
    return src + dst + struct.pack("!IxxxB", length, proto)


def tcp_segment(seg, src, dst, seq, flags, opts, payload, good_sum=True,
                ttl=None, ident=None):
    hlen = 20 + len(opts)
    tcp = struct.pack("!HHIIBBHHH", seg["sport"], seg["dport"], seq,
                      seg["ack"], (hlen // 4) << 4, flags, seg["win"], 0,
                      0) + opts + payload
    total = checksum(pseudo_header(seg["etype"], src, dst, 6, len(tcp)) + tcp)
    if not good_sum:
        total ^= 0x5a5a
    tcp = tcp[:16] + struct.pack("!H", total) + tcp[18:]
    return ip_header(seg["etype"], src, dst,
                     seg["ttl"] if ttl is None else ttl, 6, len(tcp),
                     ident) + tcp


def icmp_error(frame, seg, quoted_seq, mtu, source):
    """An ICMP error from source to the segment's sender, quoting it."""
    quote = seg["ip"] + seg["tcp"][:4] + struct.pack("!I", quoted_seq)
    if seg["etype"] == ETH_P_IP:
        body = struct.pack("!BBHHH", 3, 4, 0, 0, mtu) + quote
        body = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
        ip = ip_header(ETH_P_IP, source, seg["src"], 64, 1, len(body))
    else:
        body = struct.pack("!BBHI", 2, 0, 0, mtu) + quote
        total = checksum(pseudo_header(ETH_P_IPV6, source, seg["src"], 58,
                                       len(body)) + body)
        body = body[:2] + struct.pack("!H", total) + body[4:]
        ip = ip_header(ETH_P_IPV6, source, seg["src"], 64, 58, len(body))
    # Back the way the segment came: swap the Ethernet addresses.
    return frame[6:12] + frame[0:6] + frame[12:14] + ip + body


def forge(frame, seg, kind, opt):
    """The frame to send and a description of it."""
    nxt = (seg["seq"] + seg["len"]) % 2**32
    ts = timestamps(seg["opts"])
    if kind in ("icmp", "icmpforged"):
        quoted = nxt if kind == "icmp" else (nxt + 2**31) % 2**32
        source = opt.get("from", seg["dst"])
        mtu = int(opt.get("mtu", 1280))
        return (icmp_error(frame, seg, quoted, mtu, source),
                "ICMP too big (mtu %d) from %s quoting seq %d" %
                (mtu, addr(source), quoted))
    if kind == "redirect":
        dst = opt["to"]
        payload = seg["tcp"][(seg["tcp"][12] >> 4) * 4:]
        pkt = tcp_segment(seg, seg["src"], dst, seg["seq"], seg["tcp"][13],
                          seg["opts"], payload)
        return frame[:14] + pkt, "the segment again, to %s" % addr(dst)
    if kind == "ack":
        tsval = int(opt.get("tsval", 0x5eed1e55))
        opts = b"\x01\x01\x08\x0a" + struct.pack("!I", tsval) + \
            (ts[4:] if ts else bytes(4))
        return (frame[:14] + tcp_segment(seg, seg["src"], seg["dst"], nxt,
                                         ACK, opts, b""),
                "[.] seq %d tsval %d" % (nxt, tsval))
    if kind == "badsum":
        opts = b"\x01\x01\x08\x0a" + ts if ts else b""
        payload = bytes(random.randrange(256) for _ in range(seg["len"]))
        return (frame[:14] + tcp_segment(seg, seg["src"], seg["dst"], nxt,
                                         ACK | PSH, opts, payload, False),
                "[P.] seq %d len %d, bad checksum" % (nxt, seg["len"]))
    opts = b""
    if kind == "fin" and ts:
        opts = b"\x01\x01\x08\x0a" + ts
    flags = ACK | (RST if kind == "rst" else FIN)
    ttl = int(opt["ttl"]) if "ttl" in opt else seg["ttl"]
    ident = int(opt["ipid"]) if "ipid" in opt else random.randrange(65536)
    what = "[%s] seq %d ack %d win %d ttl %d" % (
        "R." if kind == "rst" else "F.", nxt, seg["ack"], seg["win"], ttl)
    if seg["etype"] == ETH_P_IP:
        what += " id %d" % ident
    return (frame[:14] + tcp_segment(seg, seg["src"], seg["dst"], nxt, flags,
                                     opts, b"", ttl=ttl, ident=ident), what)


def addr(raw):
    return str(ipaddress.ip_address(raw))


def main(argv):
    if len(argv) < 3 or argv[2] not in KINDS:
        print(__doc__, file=sys.stderr)
        return 1
    iface, kind = argv[1], argv[2]
    want = dict(a.split("=", 1) for a in argv[3:])
    timeout = float(want.pop("timeout", 10))
    opt = {k: want.pop(k) for k in ("mtu", "tsval", "to", "from", "ttl",
                                    "ipid") if k in want}
    for key in ("to", "from"):
        if key in opt:
            opt[key] = ipaddress.ip_address(opt[key]).packed
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
    out, what = forge(frame, seg, kind, opt)
    sock.send(out)
    sock.close()
    print("sent %s:%d > %s:%d %s, after a segment with seq %d len %d" %
          (addr(seg["src"]), seg["sport"], addr(seg["dst"]), seg["dport"],
           what, seg["seq"], seg["len"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
