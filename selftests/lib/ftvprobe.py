#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send probe steps to a peer through the netlink spec, for the selftests.

It drives the module with the kernel's own ynl library (tools/net/ynl of
Linux 6.12) and docs/netlink/ftv.yaml, as ftvctl will: it sends one step
and, with --wait, reads until the peer's answer to that step has come.

Usage:
  ftvprobe.py [--ynl DIR] IFNAME PUBKEY STEP [--index N] [--bytes N]
              [--rate KBIT] [--length N] [--wait SECONDS] [--count N]
              [--until-done]

PUBKEY is base64 (as ftvctl prints keys); STEP is read, echo, pad or stop.
--count sends the step that many times in a row without waiting;
--until-done, after the answer, waits until the peer has sent all its
padding and it has come (the reply then shows the step's answer and the
connections as they are at the end). --index -1 is every connection.

Prints the reply's probe nest as JSON on one line ({"nonce": ...,
"tell": {...}, "conns": [{"index": 0, "rx-bytes": ...}]}); a rejected
request prints "errno=NAME" and "msg=..." and exits 1; no answer within
--wait prints the last reply and exits 2.
"""

import argparse
import base64
import errno
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
YNL = os.path.join(ROOT, ".cache/linux-source-6.12/tools/net/ynl")
SPEC = os.path.join(ROOT, "docs/netlink/ftv.yaml")


def unwrap(probe):
    """The probe nest with ynl's indexed-array wrapping taken off."""
    out = dict(probe)
    out["conns"] = [next(iter(c.values())) for c in probe.get("conns", [])]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ynl", default=YNL)
    ap.add_argument("ifname")
    ap.add_argument("pubkey")
    ap.add_argument("step", choices=["read", "echo", "pad", "stop", "join"])
    for name in ("index", "bytes", "rate", "length"):
        ap.add_argument("--" + name, type=int)
    ap.add_argument("--wait", type=float, default=0)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--until-done", action="store_true")
    args = ap.parse_args()

    sys.path.insert(0, args.ynl)
    # The spec parsed by libyaml where there is one: under emulation the
    # pure-Python parser takes seconds a call.
    import yaml  # pylint: disable=import-outside-toplevel
    if getattr(yaml, "CSafeLoader", None):
        yaml.safe_load = lambda s: yaml.load(s, Loader=yaml.CSafeLoader)
    from lib import YnlFamily, NlError  # pylint: disable=import-outside-toplevel

    # No schema: test_ynl.sh and ynl_check.py validate the spec; each
    # call here would take seconds under emulation to do it again.
    ynl = YnlFamily(SPEC, "")
    key = base64.b64decode(args.pubkey)
    step = {"step": args.step}
    for name in ("index", "bytes", "rate", "length"):
        if getattr(args, name) is not None:
            step[name] = getattr(args, name)
    if step.get("index") == -1:
        step["index"] = 0xffffffff

    def do(probe):
        reply = ynl.do("probe", {"ifname": args.ifname,
                                 "peer": {"public-key": key,
                                          "probe": probe}})
        return unwrap(reply["peer"].get("probe", {}))

    try:
        for _ in range(args.count):
            reply = do(step)
    except NlError as e:
        print(f"errno={errno.errorcode.get(e.error, e.error)}")
        print(f"msg={e.nl_msg.extack.get('msg', '') if e.nl_msg.extack else ''}")
        return 1
    deadline = time.monotonic() + args.wait

    def answered(reply):
        """Read until the answer to @reply's ask came, or the deadline."""
        nonce = reply.get("nonce")
        while args.wait and reply.get("tell", {}).get("nonce") != nonce:
            if time.monotonic() > deadline:
                return reply, False
            time.sleep(0.05)
            reply = do({"step": "read"})
            reply["nonce"] = nonce
        return reply, True

    reply, ok = answered(reply)
    first = reply.get("tell")
    # --until-done: echoes until the peer has no padding left to send,
    # then one more, whose answer comes after what was sent before it.
    while ok and args.until_done:
        echo, ok = answered(do({"step": "echo"}))
        if ok and echo["tell"].get("left") == 0:
            reply, ok = answered(do({"step": "echo"}))
            reply["tell"] = first
            break
        time.sleep(0.1)
    print(json.dumps(reply))
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
