#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An attacker on the path, for the selftests of what one may and may not
do to an ftv session (docs/threat-model.md).

  ftvmitm.py IF_C IF_S PORT mac_c=MAC mac_s=MAC [RULE...]

Runs in the router between a client C (behind IF_C) and a server S
(behind IF_S, listening on PORT) and forwards their TCP segments to and
from PORT itself, frame by frame, so that it can drop, keep, change and
make them; the caller has the kernel drop those segments in its forward
path (nft) so that each goes once. IPv4 only. A superpacket (GSO, as
veth hands them over) is cut into its segments, each with its own
sequence number, IP ID and checksums, as a NIC would. Every segment sent
gets a TTL one lower and correct checksums.

Connections are numbered in the order C's SYNs come, from 0 (the first,
which opens the session). RULEs:

  steal=N         drop the SYN of connection N and keep its token (the
                  ISN and timestamp): a join's SYN, whose token is fresh
                  at S since it never got there; prints
                  "stolen N SPORT ISN TSVAL"
  hold=1          drop the first segment with payload C sends on
                  connection 0 once a token is stolen, and keep it: a
                  sealed message that S never saw
  inject=join     once a token and a message are kept: send S the stolen
                  SYN from a new source port Q, answer S's SYN-ACK with
                  the kept message as the first data on Q (seq the
                  token's ISN + 1, ack S's ISN + 1), and watch what S
                  sends on Q for watch=SECONDS (default 3); prints
                  "injected Q synack yes|no data N" (N: S's segments on Q
                  with payload)
  inject=syn@M    once a token is kept and C's first payload on connection
                  M has gone on: send S the stolen SYN from connection M's
                  source port; prints "injected M answer synack|rst|none"
                  for what S answered to it within watch=SECONDS
  inject=syn@new  likewise, after C's first payload on the last connection
                  C opened, from a new source port
  blackhole=N:DIR drop every segment with payload on connection N, in DIR
                  c2s (from C) or s2c (from S), and count them (those
                  longer than 200 bytes apart: data, not keepalives)
  acklie=N:DIR    on connection N, every segment the other way than DIR
                  acknowledges all that was sent in DIR there (the end of
                  the highest segment): with blackhole=N:DIR, the sender
                  would take what it sent into the hole for delivered
  seqshift=N:D:K  every K-th segment with payload from S on connection N
                  (* for every one) has D added to its sequence number
  tsecr=N:D       every segment from S on connection N (* for every one)
                  echoes a timestamp D ms older than it did

On SIGINT or SIGTERM it prints one line of counts and exits:
  "forwarded F dropped D blackholed B" and, for each connection, the bytes
  of payload it forwarded each way.

Standard library only (packet sockets), like forgetcp.py.
"""

import os
import random
import select
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from forgetcp import checksum, timestamps_at  # noqa: E402

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
SOL_PACKET = 263
PACKET_VNET_HDR = 15
VNET_HDR = struct.Struct("<BBHHHH")     # flags gso_type hdr_len gso_size ...
SYN, RST, ACK, PSH = 0x02, 0x04, 0x10, 0x08


def mac(text):
    return bytes(int(x, 16) for x in text.split(":"))


def iface_mac(name):
    with open("/sys/class/net/%s/address" % name) as f:
        return mac(f.read().strip())


class Seg:
    """One IPv4 TCP segment, its headers taken apart."""

    def __init__(self, ip):
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack_from("!H", ip, 2)[0] or len(ip)
        self.ip = bytearray(ip[:ihl])
        tcp = ip[ihl:total]
        hlen = (tcp[12] >> 4) * 4
        self.tcp = bytearray(tcp[:hlen])
        self.payload = bytes(tcp[hlen:])
        self.src, self.dst = bytes(self.ip[12:16]), bytes(self.ip[16:20])
        self.sport, self.dport, self.seq, self.ack = \
            struct.unpack_from("!HHII", self.tcp)
        self.flags = self.tcp[13]

    def ts(self):
        """(tsval, tsecr, offset of tsval in the TCP header) or None."""
        opts = bytes(self.tcp[20:])
        at = timestamps_at(opts)
        if at is None or at + 8 > len(opts):
            return None
        tsval, tsecr = struct.unpack_from("!II", opts, at)
        return tsval, tsecr, 20 + at

    def set(self, seq=None, ack=None, tsecr=None):
        if seq is not None:
            self.seq = seq % 2**32
        if ack is not None:
            self.ack = ack % 2**32
        struct.pack_into("!II", self.tcp, 4, self.seq, self.ack)
        if tsecr is not None:
            t = self.ts()
            if t:
                struct.pack_into("!I", self.tcp, t[2] + 4, tsecr % 2**32)

    def wire(self, ident=None, ttl_down=True):
        """The IP packet, checksums made right."""
        ip = bytearray(self.ip)
        struct.pack_into("!H", ip, 2, len(ip) + len(self.tcp) + len(self.payload))
        if ident is not None:
            struct.pack_into("!H", ip, 4, ident % 65536)
        if ttl_down and ip[8] > 1:
            ip[8] -= 1
        ip[10:12] = b"\0\0"
        struct.pack_into("!H", ip, 10, checksum(bytes(ip)))
        tcp = bytearray(self.tcp)
        tcp[16:18] = b"\0\0"
        seg = bytes(tcp) + self.payload
        pseudo = self.src + self.dst + struct.pack("!BBH", 0, 6, len(seg))
        struct.pack_into("!H", tcp, 16, checksum(pseudo + seg))
        return bytes(ip) + bytes(tcp) + self.payload


def split(ip, gso_size):
    """The segments of a superpacket, as the NIC would cut it."""
    first = Seg(ip)
    if not gso_size or len(first.payload) <= gso_size:
        return [(first, None)]
    ident = struct.unpack_from("!H", first.ip, 4)[0]
    out = []
    for i, off in enumerate(range(0, len(first.payload), gso_size)):
        s = Seg(bytes(first.ip) + bytes(first.tcp))
        s.payload = first.payload[off:off + gso_size]
        s.set(seq=first.seq + off)
        last = off + gso_size >= len(first.payload)
        if not last:
            s.tcp[13] &= ~PSH & 0xFF
        s.flags = s.tcp[13]
        out.append((s, ident + i))
    return out


def highest(end, seg):
    """The end of the highest segment of a direction, @seg's or @end."""
    new = (seg.seq + len(seg.payload)) % 2**32
    if end is None or (new - end) % 2**32 < 2**31:
        return new
    return end


class Conn:
    def __init__(self, number, sport):
        self.number = number
        self.sport = sport
        self.bytes = [0, 0]        # forwarded payload bytes, c2s and s2c
        self.s_end = None          # end of S's highest segment
        self.c_end = None          # end of C's highest segment
        self.s_data = 0            # S's segments with payload (seqshift)
        self.first_payload = False


class Mitm:
    def __init__(self, if_c, if_s, port, opts):
        self.port = port
        self.if_c, self.if_s = if_c, if_s
        self.mac = {if_c: (iface_mac(if_c), mac(opts["mac_c"])),
                    if_s: (iface_mac(if_s), mac(opts["mac_s"]))}
        self.socks = {}
        for name in (if_c, if_s):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                              socket.htons(ETH_P_ALL))
            s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
            s.bind((name, 0))
            self.socks[name] = s
        self.out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.conns = {}
        self.order = []
        self.opts = opts
        self.steal = int(opts["steal"]) if "steal" in opts else None
        self.stolen = None          # (sport, isn, tsval, the SYN)
        self.hold = opts.get("hold") == "1"
        self.held = None
        self.inject = opts.get("inject")
        self.injected = False
        self.watch = float(opts.get("watch", 3))
        self.inj = None             # what an injection waits for
        self.blackhole = None
        if "blackhole" in opts:
            n, d = opts["blackhole"].split(":")
            self.blackhole = (int(n), d)
        self.acklie = None
        if "acklie" in opts:
            n, d = opts["acklie"].split(":")
            self.acklie = (int(n), d)
        self.seqshift = None
        if "seqshift" in opts:
            self.seqshift = tuple(-1 if x == "*" else int(x)
                                  for x in opts["seqshift"].split(":"))
        self.tsecr = None
        if "tsecr" in opts:
            self.tsecr = tuple(-1 if x == "*" else int(x)
                               for x in opts["tsecr"].split(":"))
        self.counts = {"forwarded": 0, "dropped": 0, "blackholed": 0,
                       "blackholed_data": 0}

    def say(self, text):
        print(text, flush=True)

    def send(self, iface, seg, ident=None, ttl_down=True):
        own, peer = self.mac[iface]
        frame = peer + own + struct.pack("!H", ETH_P_IP) + \
            seg.wire(ident, ttl_down)
        self.out.sendto(frame, (iface, ETH_P_IP))

    def conn_of(self, seg, from_c):
        sport = seg.sport if from_c else seg.dport
        c = self.conns.get(sport)
        if c is None and from_c and seg.flags & SYN and not seg.flags & ACK:
            c = Conn(len(self.order), sport)
            self.conns[sport] = c
            self.order.append(c)
        return c

    # ---- what C sends
    def from_c(self, seg, ident):
        c = self.conn_of(seg, True)
        if c is None:
            return self.forward(self.if_s, seg, ident)
        if seg.flags & SYN and not seg.flags & ACK and c.number == self.steal \
                and self.stolen is None:
            t = seg.ts()
            self.stolen = (c.sport, seg.seq, t[0] if t else 0, seg)
            self.counts["dropped"] += 1
            self.say("stolen %d %d %d %d" % (c.number, c.sport, seg.seq,
                                             self.stolen[2]))
            return None
        if self.hold and self.stolen and self.held is None and \
                c.number == 0 and seg.payload:
            self.held = seg
            self.counts["dropped"] += 1
            self.say("held %d bytes" % len(seg.payload))
            self.maybe_inject_join()
            return None
        if seg.payload:
            c.c_end = highest(c.c_end, seg)
        if self.blackhole == (c.number, "c2s") and seg.payload:
            self.hole(seg)
            return None
        if self.acklie == (c.number, "s2c") and c.s_end is not None and \
                seg.flags & ACK:
            seg.set(ack=c.s_end)
        if seg.payload:
            c.bytes[0] += len(seg.payload)
        self.forward(self.if_s, seg, ident)
        if seg.payload and not c.first_payload:
            c.first_payload = True
            self.maybe_inject_syn(c)
        return None

    # ---- what S sends
    def from_s(self, seg, ident):
        if self.inj and self.inj.get("sport") == seg.dport:
            self.watched(seg)
            if self.inj.get("swallow"):
                return None
        c = self.conn_of(seg, False)
        if c is None:
            return self.forward(self.if_c, seg, ident)
        if seg.payload:
            c.s_end = highest(c.s_end, seg)
        if self.blackhole == (c.number, "s2c") and seg.payload:
            self.hole(seg)
            return None
        if self.acklie == (c.number, "c2s") and c.c_end is not None and \
                seg.flags & ACK:
            seg.set(ack=c.c_end)
        if self.seqshift and self.seqshift[0] in (c.number, -1) and \
                seg.payload:
            c.s_data += 1
            if c.s_data % self.seqshift[2] == 0:
                seg.set(seq=seg.seq + self.seqshift[1])
                self.counts["shifted"] = self.counts.get("shifted", 0) + 1
        if self.tsecr and self.tsecr[0] in (c.number, -1):
            t = seg.ts()
            if t:
                seg.set(tsecr=t[1] - self.tsecr[1])
        if seg.payload:
            c.bytes[1] += len(seg.payload)
        return self.forward(self.if_c, seg, ident)

    def hole(self, seg):
        self.counts["blackholed"] += 1
        if len(seg.payload) > 200:
            self.counts["blackholed_data"] += 1

    def forward(self, iface, seg, ident):
        self.send(iface, seg, ident)
        self.counts["forwarded"] += 1

    # ---- injections
    def stolen_syn(self, sport):
        syn = self.stolen[3]
        s = Seg(syn.wire(ttl_down=False))
        struct.pack_into("!H", s.tcp, 0, sport)
        s.sport = sport
        return s

    def maybe_inject_join(self):
        if self.inject != "join" or self.injected or not self.held:
            return
        self.injected = True
        q = random.randrange(40000, 60000)
        self.inj = {"sport": q, "swallow": True, "kind": "join",
                    "until": time.monotonic() + self.watch,
                    "synack": None, "data": 0}
        self.send(self.if_s, self.stolen_syn(q), ttl_down=False)

    def maybe_inject_syn(self, c):
        if not self.inject or not self.inject.startswith("syn@") or \
                self.injected or not self.stolen:
            return
        which = self.inject[4:]
        if which != "new" and c.number != int(which):
            return
        if which == "new" and c is not self.order[-1]:
            return
        if which == "new" and c.number <= self.steal:
            return
        self.injected = True
        sport = c.sport if which != "new" else random.randrange(40000, 60000)
        self.inj = {"sport": sport, "swallow": which == "new",
                    "kind": "syn", "until": time.monotonic() + self.watch,
                    "answer": "none", "label": which}
        self.send(self.if_s, self.stolen_syn(sport), ttl_down=False)

    def watched(self, seg):
        inj = self.inj
        isn = self.stolen[1]
        if inj["kind"] == "syn":
            if seg.ack == (isn + 1) % 2**32 and inj["answer"] == "none":
                if seg.flags & SYN and seg.flags & ACK:
                    inj["answer"] = "synack"
                elif seg.flags & RST:
                    inj["answer"] = "rst"
            return
        if seg.flags & SYN and seg.flags & ACK and inj["synack"] is None:
            inj["synack"] = seg
            held = self.held
            s = Seg(held.wire(ttl_down=False))
            struct.pack_into("!H", s.tcp, 0, inj["sport"])
            s.sport = inj["sport"]
            s.set(seq=isn + 1, ack=seg.seq + 1)
            t, ht = seg.ts(), s.ts()
            if t and ht:
                struct.pack_into("!I", s.tcp, ht[2], self.stolen[2] + 1)
                s.set(tsecr=t[0])
            s.tcp[13] = ACK | PSH
            self.send(self.if_s, s, ttl_down=False)
        elif seg.payload:
            inj["data"] += 1

    def inject_done(self):
        inj = self.inj
        if not inj or inj.get("done") or time.monotonic() < inj["until"]:
            return
        inj["done"] = True
        if inj["kind"] == "join":
            self.say("injected %d synack %s data %d" % (
                inj["sport"], "yes" if inj["synack"] else "no", inj["data"]))
        else:
            self.say("injected %s answer %s" % (inj["label"], inj["answer"]))

    # ---- the loop
    def receive(self, iface):
        data = self.socks[iface].recv(70000)
        if len(data) < VNET_HDR.size + 14:
            return
        _, _, _, gso_size, _, _ = VNET_HDR.unpack_from(data)
        frame = data[VNET_HDR.size:]
        if frame[0:6] != self.mac[iface][0] or \
                struct.unpack_from("!H", frame, 12)[0] != ETH_P_IP:
            return
        ip = frame[14:]
        if len(ip) < 40 or ip[9] != 6:
            return
        ihl = (ip[0] & 0x0F) * 4
        sport, dport = struct.unpack_from("!HH", ip, ihl)
        from_c = iface == self.if_c
        if (dport if from_c else sport) != self.port:
            return
        for seg, ident in split(ip, gso_size):
            if from_c:
                self.from_c(seg, ident)
            else:
                self.from_s(seg, ident)

    def report(self):
        parts = ["%s %d" % kv for kv in self.counts.items()]
        for c in self.order:
            parts.append("conn%d %d/%d" % (c.number, c.bytes[0], c.bytes[1]))
        self.say(" ".join(parts))

    def run(self):
        socks = {s: n for n, s in self.socks.items()}
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
        signal.signal(signal.SIGINT, lambda *_: stop.append(1))
        self.say("ready")
        while not stop:
            try:
                ready = select.select(list(socks), [], [], 0.1)[0]
            except InterruptedError:
                continue
            for s in ready:
                self.receive(socks[s])
            self.inject_done()
        self.report()


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    opts = dict(a.split("=", 1) for a in argv[4:])
    Mitm(argv[1], argv[2], int(argv[3]), opts).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
