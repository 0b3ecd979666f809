#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Netlink fuzzer for the ftv family, for the selftests.

  nlfuzz_requests.py IFNAME SECONDS SEED

For SECONDS, sends random requests of the family's own commands for the
device IFNAME (or for none, or another one): random attribute trees built
from the family's attribute spaces, with values of the right type or of
any length, attributes the family does not know, nests that are not
nests, peers with up to thousands of allowed-ips, and dumps. Requests that
only a valid configuration would pass are mixed in, so that the device
keeps peers to remove and dump.

Prints "requests N accepted N rejected N silent N" at the end, then one
line per rejection without an extack message ("silent"): the command,
errno and the request's attributes in hex. Exit status 0 if every
rejection carried a message, 1 otherwise.
"""

import os
import random
import socket
import struct
import sys
import time

import ftvnl


def rand_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def value(rng, typ, name):
    """A payload for an attribute of type typ: right most of the time."""
    if rng.random() < 0.25:
        return rand_bytes(rng, rng.choice([0, 1, 2, 3, 4, 5, 7, 8, 16, 31,
                                           32, 33, 64, rng.randrange(300)]))
    if typ == "u8":
        return struct.pack("=B", rng.choice([0, 1, 32, 33, 128, 129, 255]))
    if typ == "u16":
        if name == "family":
            return struct.pack("=H", rng.choice([socket.AF_INET,
                                                 socket.AF_INET6, 0, 99]))
        return struct.pack("=H", rng.choice([0, 1, 51820, 65535,
                                             rng.randrange(65536)]))
    if typ == "u32":
        return struct.pack("=I", rng.choice([0, 1, 2, 0xffffffff,
                                             rng.getrandbits(32)]))
    if typ == "u64":
        return struct.pack("=Q", rng.getrandbits(64))
    if typ == "str":
        return rng.choice([b"ftv0\0", b"ftv1\0", b"lo\0", b"\0",
                           b"x" * 20 + b"\0", b"ftv0"])
    if typ == "ip":
        return rand_bytes(rng, rng.choice([4, 16]))
    return rand_bytes(rng, rng.choice([32, 32, 32, 0, 31, 33]))


def tree(rng, space, depth):
    """Attributes of a random selection of space's names."""
    out = b""
    names = list(space.by_name)
    for _ in range(rng.randrange(0, 6)):
        roll = rng.random()
        if roll < 0.05:
            # a type the family does not know
            out += ftvnl.nla(rng.choice([0, 60, 200, 0x3fff]),
                             rand_bytes(rng, rng.randrange(12)))
            continue
        if not names:
            break
        name = rng.choice(names)
        typ = space.types.get(name, "bin")
        num = space.by_name[name]
        if typ == "nest" and depth < 4:
            child = space.nests[name]
            if name == "allowedips" and rng.random() < 0.1:
                # up to 1,500: an attribute's length is 16 bits
                body = b"".join(allowedip(rng, child.nests["allowedip"],
                                          child.by_name["allowedip"])
                                for _ in range(rng.randrange(1, 1500)))
            else:
                body = tree(rng, child, depth + 1)
            flag = ftvnl.NLA_F_NESTED if rng.random() < 0.9 else 0
            if len(body) > 65000:
                continue
            out += ftvnl.nla(num | flag, body)
        elif typ == "nest":
            out += ftvnl.nla(num, rand_bytes(rng, rng.randrange(40)))
        else:
            out += ftvnl.nla(num, value(rng, typ, name))
    return out


def allowedip(rng, space, num):
    fam = rng.choice([socket.AF_INET, socket.AF_INET6])
    addr = rand_bytes(rng, 4 if fam == socket.AF_INET else 16)
    body = (ftvnl.nla(space.by_name["family"], struct.pack("=H", fam)) +
            ftvnl.nla(space.by_name["ipaddr"], addr) +
            ftvnl.nla(space.by_name["cidr_mask"],
                      struct.pack("=B", rng.randrange(0, 130))))
    return ftvnl.nla(num | ftvnl.NLA_F_NESTED, body)


def valid_peer(rng, root, ifname):
    """A well-formed new_peer request, so that there is something to
    remove and dump."""
    peer = root.nests["peer"]
    aips = peer.nests["allowedips"]
    body = ftvnl.nla(peer.by_name["public_key"], rand_bytes(rng, 32))
    if rng.random() < 0.5:
        body += ftvnl.nla(peer.by_name["preshared_key"], rand_bytes(rng, 32))
    body += ftvnl.nla(peer.by_name["allowedips"] | ftvnl.NLA_F_NESTED,
                      b"".join(allowedip(rng, aips.nests["allowedip"],
                                         aips.by_name["allowedip"])
                               for _ in range(rng.randrange(1, 20))))
    return (ftvnl.nla(root.by_name["ifname"], ifname.encode() + b"\0") +
            ftvnl.nla(root.by_name["peer"] | ftvnl.NLA_F_NESTED, body))


def main(argv):
    ifname, seconds, seed = argv[1], float(argv[2]), int(argv[3])
    rng = random.Random(seed)
    root, cmds = ftvnl.load_spaces(ftvnl.UAPI)
    nl = ftvnl.Netlink()
    family = ftvnl.resolve(nl, "ftv")
    ifattr = ftvnl.nla(root.by_name["ifname"], ifname.encode() + b"\0")
    # peer_event is the kernel's notification: the generic netlink core
    # refuses it (EOPNOTSUPP) before ftv sees it, with nothing to say.
    names = sorted(c for c in cmds if c != "peer_event")
    stats = {"requests": 0, "accepted": 0, "rejected": 0, "silent": 0}
    silent = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cmd_name = rng.choice(names)
        cmd = cmds[cmd_name]
        flags = ftvnl.NLM_F_REQUEST | ftvnl.NLM_F_ACK
        roll = rng.random()
        if cmd_name == "new_peer" and roll < 0.3:
            attrs = valid_peer(rng, root, ifname)
        elif roll < 0.8:
            attrs = ifattr + tree(rng, root, 0)
        else:
            attrs = tree(rng, root, 0)
        if cmd_name == "get_device":
            flags |= ftvnl.NLM_F_DUMP
        try:
            nl.request(family, flags, cmd, 1, attrs)
        except OSError:
            # too big for a netlink message: nothing reached the kernel
            continue
        stats["requests"] += 1
        err, tlvs = 0, {}
        for typ, rflags, payload in nl.replies():
            if typ == ftvnl.NLMSG_ERROR:
                err, tlvs = ftvnl.parse_error(rflags, payload)
                break
            if typ == ftvnl.NLMSG_DONE:
                if len(payload) >= 4:
                    err = -struct.unpack_from("=i", payload)[0]
                    if rflags & ftvnl.NLM_F_ACK_TLVS:
                        for atyp, val in ftvnl.parse_attrs(payload[4:]):
                            tlvs[atyp & ftvnl.NLA_TYPE_MASK] = val
                break
        if not err:
            stats["accepted"] += 1
        elif ftvnl.NLMSGERR_ATTR_MSG in tlvs:
            stats["rejected"] += 1
        else:
            stats["silent"] += 1
            silent.append("%s %s %s" % (cmd_name, ftvnl.errno_name(err),
                                        attrs[:200].hex()))
    print(" ".join("%s %d" % kv for kv in stats.items()))
    for line in silent[:20]:
        print("silent", line)
    return 1 if silent else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
