#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Open many fresh ftv connections to one peer, from one process.

  shape_open.py DEV PEER_KEY_FILE ENDPOINT_IP PORT INNER_IP COUNT

Run in the initiator's namespace. COUNT times: remove the peer (whose
public key is in PEER_KEY_FILE, base64) from DEV and add it back with
the endpoint ENDPOINT_IP:PORT and INNER_IP/32 as its allowed IP, over
generic netlink through ftvnl.py's encoder, then send a UDP datagram to
INNER_IP port 7 through the tunnel and wait for the echo (the other end
runs one). A new peer has no session, so each round opens a new
connection (new source port, new key exchange), and the echo says that
both opening messages got through. Forking ftvctl thousands of times
would cost minutes under emulation.

The responder takes at most 20 initiations a second from one address;
rounds start no faster than that, and a round without an echo after a
few tries is counted as failed. Prints "ROUNDS ECHOED FAILED"; exits 1
if fewer than 99 % of the rounds were echoed.
"""

import base64
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ftvnl  # noqa: E402

# The responder's limit is 20 per second per source; stay under it.
MIN_INTERVAL = 1 / 18
TRIES = 8
WAIT = 0.5


def echoed(sock, inner, i):
    """Send round i's datagram until its echo comes back."""
    msg = b"ftvopen %d" % i
    for _ in range(TRIES):
        sock.sendto(msg, (inner, 7))
        deadline = time.monotonic() + WAIT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            try:
                data = sock.recv(64)
            except socket.timeout:
                break
            if data == msg:
                return True
    return False


def main():
    dev, keyfile, endpoint, port, inner, count = sys.argv[1:7]
    count = int(count)
    with open(keyfile) as f:
        key = "b64:" + base64.b64encode(
            base64.b64decode(f.read().strip())).decode()
    nl = ftvnl.Netlink()
    root, cmds = ftvnl.load_spaces(ftvnl.UAPI)
    family = ftvnl.resolve(nl, "ftv")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer = ["ifname=" + dev, "peer{", "public_key=" + key]
    add = peer + ["endpoint_ipv4=" + endpoint, "endpoint_port=" + port,
                  "allowedips{", "allowedip{", "family=inet",
                  "ipaddr=" + inner, "cidr_mask=32", "}", "}", "}"]
    ok = failed = 0
    last = 0.0
    for i in range(count):
        wait = last + MIN_INTERVAL - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        last = time.monotonic()
        ftvnl.acked(nl, family, cmds["del_peer"], root, peer + ["}"])
        if ftvnl.acked(nl, family, cmds["new_peer"], root, add):
            failed += 1
            continue
        if echoed(sock, inner, i):
            ok += 1
        else:
            failed += 1
    print(count, ok, failed)
    return ok * 100 >= count * 99


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
