#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A dump whose cursor peer is removed between two of its messages, after
the configuration generation has gone round 2^32.

  dump_cursor.py DEV PEERS PARAMS_DIR

Run in DEV's namespace, with the debug module (whose "generation"
parameter, in PARAMS_DIR, sets the counter every device's generation is
taken from). It adds PEERS peers to DEV (random keys, two allowed IPs
each, so that a dump of them takes several messages), then:

 1. reads the counter G (the device's generation: nothing changes it
    until the dump);
 2. starts a dump of DEV and reads its first message. The kernel builds
    the next message as soon as the first is read, and keeps a cursor to
    the peer the one after it starts with, valid while the device's
    generation is G;
 3. from a second socket removes every peer the first message did not
    hold (the cursor's among them: it is freed), sets the counter to
    G + 2^32 - 1 and makes one more change, so that the device's
    generation is G + 2^32: equal to G in its low 32 bits;
 4. reads the rest of the dump.

A cursor checked against 32 bits of the generation is then trusted and
the dump walks freed memory (KASAN reports it on the debug kernel). A
sound one notices the change and goes on from its index.

Prints "parts=N peers_seen=N intr=0|1 error=ERRNO", and exits 0 if the
dump ended (with NLMSG_DONE or an error), 1 if setting up failed.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ftvnl  # noqa: E402

NLM_F_DUMP_INTR = 0x10


def peer_args(dev, key, i):
    return ["ifname=" + dev, "peer{", "public_key=hex:" + key.hex(),
            "allowedips{",
            "allowedip{", "family=inet", "ipaddr=10.%d.%d.0" % (
                100 + i // 250, i % 250), "cidr_mask=24", "}",
            "allowedip{", "family=inet6", "ipaddr=fd77::%x:0" % i,
            "cidr_mask=112", "}",
            "}", "}"]


def peer_keys(payload, root):
    """The public keys of the peers in one GET_DEVICE message."""
    keys = []
    a_peers = root.by_name["peers"]
    a_key = root.nests["peer"].by_name["public_key"]
    for typ, val in ftvnl.parse_attrs(payload[4:]):
        if typ & ftvnl.NLA_TYPE_MASK != a_peers:
            continue
        for _, peer in ftvnl.parse_attrs(val):
            for ptyp, pval in ftvnl.parse_attrs(peer):
                if ptyp & ftvnl.NLA_TYPE_MASK == a_key:
                    keys.append(pval)
    return keys


def main():
    dev, count, params = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    root, cmds = ftvnl.load_spaces(ftvnl.UAPI)
    nl = ftvnl.Netlink()
    family = ftvnl.resolve(nl, "ftv")
    keys = [os.urandom(32) for _ in range(count)]
    for i, key in enumerate(keys):
        err = ftvnl.acked(nl, family, cmds["new_peer"], root,
                          peer_args(dev, key, i))
        if err:
            print("new_peer %d: errno %d" % (i, err))
            return 1
    gen_path = os.path.join(params, "generation")
    with open(gen_path) as f:
        gen = int(f.read())

    dumper = ftvnl.Netlink()
    attrs = ftvnl.Builder(root).build(["ifname=" + dev], 20)
    dumper.request(family, ftvnl.NLM_F_REQUEST | ftvnl.NLM_F_DUMP,
                   cmds["get_device"], 1, attrs)
    replies = dumper.replies()
    parts, seen, intr, error = 0, [], 0, 0
    # The first message: one recv() is one message of the dump.
    typ, flags, payload = next(replies)
    parts += 1
    intr |= bool(flags & NLM_F_DUMP_INTR)
    first = peer_keys(payload, root)
    seen += first
    if not first or len(first) >= count:
        print("the first message held %d of %d peers: no second part"
              % (len(first), count))
        return 1
    gone = set(first)
    for i, key in enumerate(keys):
        if key in gone:
            continue
        err = ftvnl.acked(nl, family, cmds["del_peer"], root,
                          ["ifname=" + dev, "peer{",
                           "public_key=hex:" + key.hex(), "}"])
        if err:
            print("del_peer %d: errno %d" % (i, err))
            return 1
    with open(gen_path, "w") as f:
        f.write("%d\n" % (gen + (1 << 32) - 1))
    # One more change: the device's generation becomes gen + 2^32.
    err = ftvnl.acked(nl, family, cmds["set_device"], root,
                      ["ifname=" + dev, "fwmark=0"])
    if err:
        print("set_device: errno %d" % err)
        return 1
    for typ, flags, payload in replies:
        intr |= bool(flags & NLM_F_DUMP_INTR)
        if typ == ftvnl.NLMSG_ERROR:
            error = -struct.unpack_from("=i", payload)[0]
            break
        if typ == ftvnl.NLMSG_DONE:
            break
        parts += 1
        seen += peer_keys(payload, root)
    print("parts=%d peers_seen=%d intr=%d error=%d generation=%d"
          % (parts, len(seen), intr, error, gen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
