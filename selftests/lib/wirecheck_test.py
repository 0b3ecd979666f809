#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of wirecheck.py's "seq" check, on pcaps written here.

test_wire.sh captures on A's link. Two segments that B sent in order from
two CPUs can reach that capture in the other order (veth hands each CPU's
backlog over on its own), with their stamps still in the order B sent
them; CI saw it once. wirecheck.py takes the segments in the order of
their stamps, so that case passes, while segments that B really sent out
of order (stamped out of order too) still fail. Prints KTAP.
Standard library only.
"""
import os
import struct
import subprocess
import sys
import tempfile

A, B, A_PORT, B_PORT = "10.0.0.1", "10.0.0.2", 46536, 51820
SYN, ACK, PSH = 0x02, 0x10, 0x08
TS = b"\x01\x01\x08\x0a" + struct.pack("!II", 1, 1)
SYN_OPTS = (b"\x02\x04\x05\xb4\x04\x02\x08\x0a" + struct.pack("!II", 1, 0) +
            b"\x01\x03\x03\x07")


def addr(text):
    return bytes(int(x) for x in text.split("."))


def frame(src, dst, sport, dport, flags, seq, ack, opts, payload):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack,
                      (20 + len(opts)) // 4 << 4, flags, 65535, 0, 0)
    tcp += opts + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64,
                     6, 0, addr(src), addr(dst))
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + tcp


def pcap(path, packets):
    """packets: (microseconds, frame) in capture order."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for usec, data in packets:
            f.write(struct.pack("<IIII", 1000 + usec // 10**6,
                                usec % 10**6, len(data), len(data)))
            f.write(data)


def capture(b_first, b_second):
    """A's handshake and request, then B's two answers as given:
    (stamp in microseconds, seq offset, length)."""
    a, b = 1000, 5000
    out = [(10, frame(A, B, A_PORT, B_PORT, SYN, a, 0, SYN_OPTS, b"")),
           (20, frame(B, A, B_PORT, A_PORT, SYN | ACK, b, a + 1, SYN_OPTS,
                      b"")),
           (30, frame(A, B, A_PORT, B_PORT, ACK, a + 1, b + 1, TS, b"")),
           (40, frame(A, B, A_PORT, B_PORT, PSH | ACK, a + 1, b + 1, TS,
                      b"x" * 214))]
    for usec, off, length in (b_first, b_second):
        out.append((usec, frame(B, A, B_PORT, A_PORT, PSH | ACK,
                                b + 1 + off, a + 215, TS, b"y" * length)))
    return out


def seq_line(packets):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "wire.pcap")
        pcap(path, packets)
        out = subprocess.run([sys.executable, os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "wirecheck.py"),
            path, A, B, str(B_PORT)], capture_output=True, text=True).stdout
    return next((line for line in out.splitlines() if " seq:" in line), "")


CASES = [
    ("in order", capture((50, 0, 123), (60, 123, 32)), "PASS"),
    ("sent in order, captured in the other (stamps in order)",
     capture((60, 123, 32), (50, 0, 123)), "PASS"),
    ("sent out of order (stamps out of order too)",
     capture((50, 123, 32), (60, 0, 123)), "FAIL"),
]


def main():
    print("TAP version 13")
    print("1..%d" % len(CASES))
    failed = 0
    for n, (name, packets, want) in enumerate(CASES, 1):
        line = seq_line(packets)
        ok = line.startswith(want + " ")
        failed += not ok
        print("%sok %d wirecheck seq: %s: %s" % ("" if ok else "not ", n,
                                                 name, want))
        if not ok:
            print("# got: %s" % (line or "no seq line"))
    print("# %d passed, %d failed" % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
