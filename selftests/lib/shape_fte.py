#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A detector of fully encrypted traffic, as Wu et al. describe the Great
Firewall's ("How the Great Firewall of China Detects and Blocks Fully
Encrypted Traffic", USENIX Security 2023), run over a capture.

    shape_fte.py CAPTURE.pcap [--min N] [--json]

For every TCP connection in the capture, the first segment with payload
in each direction is judged. A connection's first data packet is exempt
from blocking when it meets any of:

  Ex1  average set bits per byte <= 3.4 or >= 4.6
  Ex2  its first six bytes are printable ASCII (0x20-0x7e)
  Ex3  more than half of its bytes are printable
  Ex4  more than 20 contiguous bytes are printable
  Ex5  it starts like TLS (0x16 or 0x17, 0x03, 0x00-0x09) or like an
       HTTP request (a method and a space)

Besides: over the first 16 bytes of those segments, the share of the most
common value at each position (a fixed byte is a fingerprint of its own),
and how many distinct lengths they have. Prints a summary; exits 0 when
at least --min connections were judged in each direction (default 1),
1 otherwise, 2 on bad input. Judging is printed, not asserted: the
selftest compares the figures with its targets.

Payloads come from tshark, which must be installed.
"""

import argparse
import collections
import json
import subprocess
import sys

PRINTABLE = range(0x20, 0x7f)
METHODS = (b"GET ", b"PUT ", b"POST ", b"HEAD ", b"DELETE ", b"OPTIONS ",
           b"CONNECT ", b"TRACE ", b"PATCH ")


def exemptions(p):
    """The exemption rules (1-5) that payload p meets."""
    met = []
    bits = sum(bin(b).count("1") for b in p) / len(p)
    if bits <= 3.4 or bits >= 4.6:
        met.append(1)
    if len(p) >= 6 and all(b in PRINTABLE for b in p[:6]):
        met.append(2)
    if sum(b in PRINTABLE for b in p) * 2 > len(p):
        met.append(3)
    run = best = 0
    for b in p:
        run = run + 1 if b in PRINTABLE else 0
        best = max(best, run)
    if best > 20:
        met.append(4)
    if (len(p) >= 3 and p[0] in (0x16, 0x17) and p[1] == 0x03 and
            p[2] <= 0x09) or p.startswith(METHODS):
        met.append(5)
    return met


def first_payloads(path):
    """{(stream, direction): payload} for the first data segment of each
    direction of each TCP connection, in capture order. The client is
    whoever sent the SYN; a connection whose SYN was not captured is left
    out."""
    out = subprocess.run(
        ["tshark", "-r", path, "-n", "-o", "tcp.analyze_sequence_numbers:FALSE",
         "-T", "fields", "-e", "tcp.stream", "-e", "tcp.srcport",
         "-e", "tcp.flags", "-e", "tcp.payload"],
        capture_output=True, text=True, check=True).stdout
    client = {}
    first = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) != 4:
            continue
        stream, sport, flags, hexdata = parts
        flags = int(flags, 16)
        if flags & 0x12 == 0x02:
            client.setdefault(stream, sport)
        if not hexdata or stream not in client:
            continue
        direction = "client" if sport == client[stream] else "server"
        key = (stream, direction)
        if key not in first:
            first[key] = bytes.fromhex(hexdata.replace(":", ""))
    return first


def judge(payloads):
    n = len(payloads)
    exempt = [p for p in payloads if exemptions(p)]
    rules = collections.Counter(r for p in payloads for r in exemptions(p))
    positions = []
    for i in range(16):
        vals = collections.Counter(p[i] for p in payloads if len(p) > i)
        total = sum(vals.values())
        if total:
            value, count = vals.most_common(1)[0]
            positions.append({"pos": i, "value": value,
                              "share": count / total})
    worst = max(positions, key=lambda x: x["share"]) if positions else None
    return {
        "connections": n,
        "exempt": len(exempt),
        "exempt_share": len(exempt) / n if n else 0.0,
        "rules": {f"Ex{r}": rules[r] for r in range(1, 6)},
        "worst_position": worst,
        "lengths": len({len(p) for p in payloads}),
        "min_length": min((len(p) for p in payloads), default=0),
        "max_length": max((len(p) for p in payloads), default=0),
    }


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture")
    ap.add_argument("--min", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv[1:])
    try:
        first = first_payloads(args.capture)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"shape_fte.py: cannot read {args.capture}: {e}", file=sys.stderr)
        return 2
    result = {}
    for direction in ("client", "server"):
        result[direction] = judge([p for (s, d), p in sorted(first.items())
                                   if d == direction])
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        for direction, r in result.items():
            w = r["worst_position"] or {"pos": "-", "value": 0, "share": 0}
            print(f"{direction}: {r['connections']} connections, "
                  f"{r['exempt']} exempt ({100 * r['exempt_share']:.2f} %), "
                  f"by rule {r['rules']}; most common byte among the first "
                  f"16: {w['share'] * 100:.1f} % at position {w['pos']} "
                  f"(0x{w['value']:02x}); {r['lengths']} lengths, "
                  f"{r['min_length']} to {r['max_length']} bytes")
    ok = all(r["connections"] >= args.min for r in result.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
