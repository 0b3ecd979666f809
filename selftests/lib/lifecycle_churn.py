#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Add and remove peers in a loop, from one process, for the selftests.

  lifecycle_churn.py DEV COUNT

Adds COUNT peers with random public keys (each with one allowed IP in
10.99.0.0/16) to DEV and removes each right after, over generic netlink
through ftvnl.py's encoder. Forking ftvctl thousands of times would cost
minutes under emulation. Prints "COUNT FAILURES"; exits 1 on any failure.
"""

import base64
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ftvnl  # noqa: E402


def main():
    dev, count = sys.argv[1], int(sys.argv[2])
    nl = ftvnl.Netlink()
    root, cmds = ftvnl.load_spaces(ftvnl.UAPI)
    family = ftvnl.resolve(nl, "ftv")
    failures = 0
    for i in range(count):
        key = "b64:" + base64.b64encode(os.urandom(32)).decode()
        ip = "10.99.%d.%d" % (i // 250, i % 250 + 1)
        peer = ["ifname=" + dev, "peer{", "public_key=" + key]
        add = peer + ["allowedips{", "allowedip{", "family=inet",
                      "ipaddr=" + ip, "cidr_mask=32", "}", "}", "}"]
        if ftvnl.acked(nl, family, cmds["new_peer"], root, add):
            failures += 1
        if ftvnl.acked(nl, family, cmds["del_peer"], root, peer + ["}"]):
            failures += 1
    print(count, failures)
    return failures == 0


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
