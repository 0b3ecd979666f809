#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check what ftv put on the wire, from a pcap of the underlay link.

  wirecheck.py PCAP ADDR_A ADDR_B PORT_B

A is the initiator, B the responder listening on PORT_B. Prints one line
per check, "PASS name: detail" or "FAIL name: detail", then "# ..." notes.
The link's own housekeeping is not ftv's traffic and is left out: ARP,
and the ICMPv6 of neighbour discovery (133-137) and multicast listener
discovery (130-132, 143). Everything else must be TCP between A and B.

Checks: only_tcp, handshake, syn_options, synack_options, no_rst, seq,
acks, timestamps. Standard library only; classic pcap (tcpdump -w).
"""

import ipaddress
import struct
import sys

SYN, ACK, RST, FIN = 0x02, 0x10, 0x04, 0x01
OPT_NAMES = {2: "MSS", 3: "WS", 4: "SACK_PERM", 5: "SACK", 8: "TS"}
LINK_ICMPV6 = {130, 131, 132, 133, 134, 135, 136, 137, 143}


class Seg:
    def __init__(self, n, ts, src, dst, tcp, payload_len):
        self.n, self.ts = n, ts
        self.src, self.dst = src, dst
        (self.sport, self.dport, self.seq, self.ack, off_flags,
         self.win) = struct.unpack_from("!HHIIHH", tcp)
        hlen = (off_flags >> 12) * 4
        self.flags = off_flags & 0x3f
        self.len = payload_len - hlen
        self.opts = parse_options(tcp[20:hlen])

    def flagstr(self):
        return "".join(c for bit, c in ((SYN, "S"), (FIN, "F"), (RST, "R"),
                                        (0x08, "P"), (ACK, "."))
                       if self.flags & bit) or "none"

    def __str__(self):
        return "#%d %s:%d > %s:%d [%s] seq %d ack %d len %d" % (
            self.n, self.src, self.sport, self.dst, self.dport,
            self.flagstr(), self.seq, self.ack, self.len)


def parse_options(data):
    opts = {}
    i = 0
    while i < len(data):
        kind = data[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(data) or data[i + 1] < 2:
            opts["bad"] = True
            break
        opts[kind] = data[i + 2:i + data[i + 1]]
        i += data[i + 1]
    return opts


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise SystemExit("FAIL pcap: %s is not a classic pcap file" % path)
    linktype = struct.unpack_from(end + "I", data, 20)[0]
    off = 24
    while off + 16 <= len(data):
        sec, usec, incl, _orig = struct.unpack_from(end + "IIII", data, off)
        yield (sec, usec), linktype, data[off + 16:off + 16 + incl]
        off += 16 + incl


def l3(linktype, frame):
    """(ethertype, l3 bytes) for Ethernet and Linux cooked captures."""
    if linktype == 1:
        etype, off = struct.unpack_from("!H", frame, 12)[0], 14
        while etype in (0x8100, 0x88a8):
            etype, off = struct.unpack_from("!H", frame, off + 2)[0], off + 4
        return etype, frame[off:]
    if linktype == 113:
        return struct.unpack_from("!H", frame, 14)[0], frame[16:]
    if linktype == 276:
        return struct.unpack_from("!H", frame, 0)[0], frame[20:]
    raise SystemExit("FAIL pcap: link type %d not handled" % linktype)


def main():
    path, a, b, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    a, b = str(ipaddress.ip_address(a)), str(ipaddress.ip_address(b))
    segs, others, ignored = [], [], {}

    for n, (ts, linktype, frame) in enumerate(read_pcap(path), 1):
        etype, pkt = l3(linktype, frame)
        if etype == 0x0806:
            ignored["ARP"] = ignored.get("ARP", 0) + 1
            continue
        if etype == 0x0800 and len(pkt) >= 20:
            ihl = (pkt[0] & 0xf) * 4
            total = struct.unpack_from("!H", pkt, 2)[0]
            proto = pkt[9]
            src = str(ipaddress.ip_address(pkt[12:16]))
            dst = str(ipaddress.ip_address(pkt[16:20]))
            l4, l4len = pkt[ihl:total], total - ihl
        elif etype == 0x86dd and len(pkt) >= 40:
            plen = struct.unpack_from("!H", pkt, 4)[0]
            proto = pkt[6]
            src = str(ipaddress.ip_address(pkt[8:24]))
            dst = str(ipaddress.ip_address(pkt[24:40]))
            l4, l4len = pkt[40:40 + plen], plen
            while proto in (0, 43, 60) and len(l4) >= 8:
                ext = (l4[1] + 1) * 8
                proto, l4, l4len = l4[0], l4[ext:], l4len - ext
            if proto == 58 and l4 and l4[0] in LINK_ICMPV6:
                ignored["ICMPv6 ND/MLD"] = ignored.get("ICMPv6 ND/MLD", 0) + 1
                continue
        else:
            others.append("#%d ethertype 0x%04x" % (n, etype))
            continue
        if proto != 6 or {src, dst} != {a, b}:
            others.append("#%d %s > %s protocol %d" % (n, src, dst, proto))
            continue
        segs.append(Seg(n, ts, src, dst, l4, l4len))
    # In the order they were sent, which is the order of their stamps:
    # the capture is on A's link, and what B sent from two CPUs reaches
    # it through veth's per-CPU backlogs, which may hand it over in the
    # other order; the stamp is taken as B's veth hands each one over
    # (netif_rx), before that.
    segs.sort(key=lambda seg: (seg.ts, seg.n))

    results = []

    def check(name, ok, detail):
        results.append("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))

    check("only_tcp", not others and segs,
          "%d TCP segments between %s and %s, %d other packets%s" % (
              len(segs), a, b, len(others),
              (": " + "; ".join(others[:5])) if others else ""))

    # A retransmitted SYN repeats the first one; collapse it for the
    # handshake check and say so.
    hs = []
    for s in segs:
        if (hs and s.flags & SYN and hs[-1].flags & SYN and
                s.seq == hs[-1].seq and s.src == hs[-1].src):
            continue
        hs.append(s)
        if len(hs) == 3:
            break
    problems = []
    if len(hs) < 3:
        problems.append("fewer than 3 TCP segments")
    else:
        syn, synack, ack = hs
        if syn.flags & (SYN | ACK | RST | FIN) != SYN or syn.src != a:
            problems.append("first is not a SYN from A: %s" % syn)
        if syn.dport != port:
            problems.append("SYN not to port %d: %s" % (port, syn))
        if (synack.flags & (SYN | ACK | RST | FIN) != SYN | ACK or
                synack.src != b or synack.ack != (syn.seq + 1) % 2**32):
            problems.append("second is not B's SYN-ACK of it: %s" % synack)
        if (ack.flags & (SYN | ACK | RST) != ACK or ack.src != a or
                ack.ack != (synack.seq + 1) % 2**32 or
                ack.seq != (syn.seq + 1) % 2**32):
            problems.append("third is not A's ACK of the SYN-ACK: %s" % ack)
    check("handshake", not problems,
          "; ".join(problems) or " / ".join(str(s) for s in hs))

    for name, idx in (("syn_options", 0), ("synack_options", 1)):
        if len(hs) > idx and hs[idx].flags & SYN:
            have = {k for k in hs[idx].opts if isinstance(k, int)}
            missing = {2, 4, 8, 3} - have
            check(name, not missing,
                  "options %s%s" % (
                      ",".join(OPT_NAMES.get(k, str(k)) for k in sorted(have)),
                      ("; missing " + ",".join(OPT_NAMES[k] for k in
                                               sorted(missing)))
                      if missing else ""))
        else:
            check(name, False, "no such segment")

    rsts = [str(s) for s in segs if s.flags & RST]
    check("no_rst", not rsts, "; ".join(rsts[:5]) or "no RST in %d segments"
          % len(segs))

    # Per direction, each segment starts where the previous one ended.
    bad, nxt, last_syn = [], {}, {}
    for s in segs:
        key = (s.src, s.sport, s.dst, s.dport)
        if s.flags & SYN and last_syn.get(key) == s.seq:
            continue        # retransmitted SYN
        if key in nxt and s.seq != nxt[key]:
            bad.append("%s: expected seq %d" % (s, nxt[key]))
        nxt[key] = (s.seq + s.len + (1 if s.flags & SYN else 0) +
                    (1 if s.flags & FIN else 0)) % 2**32
        if s.flags & SYN:
            last_syn[key] = s.seq
    data = sum(s.len for s in segs)
    check("seq", not bad and data > 0, "; ".join(bad[:5]) or
          "%d payload bytes in %d segments, no gaps or overlaps" %
          (data, len(segs)))

    # Each side acknowledges no more than the other has sent, and never
    # less than it did before.
    bad, sent_end, last_ack = [], {}, {}
    for s in segs:
        key = (s.src, s.sport, s.dst, s.dport)
        rkey = (s.dst, s.dport, s.src, s.sport)
        end = (s.seq + s.len + (1 if s.flags & (SYN | FIN) else 0)) % 2**32
        if key not in sent_end or (end - sent_end[key]) % 2**32 < 2**31:
            sent_end[key] = end
        if s.flags & ACK and rkey in sent_end:
            if (sent_end[rkey] - s.ack) % 2**32 >= 2**31:
                bad.append("%s acks beyond the peer's %d" % (s, sent_end[rkey]))
            if key in last_ack and (s.ack - last_ack[key]) % 2**32 >= 2**31:
                bad.append("%s: ack went back from %d" % (s, last_ack[key]))
            last_ack[key] = s.ack
    check("acks", not bad, "; ".join(bad[:5]) or
          "every ACK within the peer's data and non-decreasing")

    bad, last_ts = [], {}
    for s in segs:
        key = (s.src, s.sport, s.dst, s.dport)
        ts = s.opts.get(8)
        if ts is None or len(ts) != 8:
            bad.append("%s: no timestamp option" % s)
            continue
        tsval = struct.unpack("!I", ts[:4])[0]
        if key in last_ts and (tsval - last_ts[key]) % 2**32 >= 2**31:
            bad.append("%s: TSval %d went back from %d" % (s, tsval,
                                                          last_ts[key]))
        last_ts[key] = tsval
    check("timestamps", not bad, "; ".join(bad[:5]) or
          "every segment has TSval/TSecr, TSval never decreases")

    print("\n".join(results))
    for what, count in sorted(ignored.items()):
        print("# left out as the link's own traffic: %d %s" % (count, what))
    return 0 if all(r.startswith("PASS") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
