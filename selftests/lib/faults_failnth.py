#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every allocation of ftv's control operations, failed one at a time.

  faults_failnth.py [OPERATION...]

Run as root in a namespace of its own, on a kernel with fault injection
(CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC) whose
failslab and fail_page_alloc do not skip allocations that may sleep
(ignore-gfp-wait set to N: test_faults.sh does that; ignore-gfp-highmem
stays Y, so that this process's own page faults are never failed).

For each operation, N = 1, 2, ...: the request is built, then
/proc/thread-self/fail-nth is set to N, the request sent from this
thread (the kernel handles it inside the send) and fail-nth read back at
once: 0 means the Nth allocation of this thread (in the netlink core or
in ftv) was failed. The walk ends with the first N past
the operation's last allocation, when the operation succeeds untouched.
After every failed allocation:

  - a request that failed with no extack message is listed (the netlink
    core's own allocations fail that way);
  - the state must be whole: the operation took effect or it did not
    (a peer exists with all its allowed IPs and settings, or does not;
    a device exists and answers GET_DEVICE, or does not), and GET_DEVICE
    and a dump still work;
  - the same request, sent again without a fault, must succeed.

An error whose effect is there all the same (device create and delete,
peer add, setconf) must be ENOBUFS: the operation was done and only the
netlink core's acknowledgement could not be allocated.

Then the state is put back for the next N. Prints one line per
operation, "OP: N points, E errors (K with extack), R retried, S
absorbed, L answers lost", the points whose errors had no extack
message, and "FAIL: ..." lines for every breach; exits 1 if there was
one, 2 if the walk could not start.
"""

import base64
import errno
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ftvnl  # noqa: E402

NETLINK_ROUTE = 0
RTM_NEWLINK = 16
RTM_DELLINK = 17
NLM_F_CREATE = 0x400
NLM_F_EXCL = 0x200
IFLA_IFNAME = 3
IFLA_LINKINFO = 18
IFLA_INFO_KIND = 1

DEV = "ftvf0"
MAX_POINTS = 2000

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


class FailNth:
    """This thread's fail-nth, kept open so that arming it costs no
    allocation between the write and the request."""

    def __init__(self):
        self.fd = os.open("/proc/thread-self/fail-nth", os.O_RDWR)

    def arm(self, n):
        os.pwrite(self.fd, b"%d" % n, 0)

    def fired(self):
        left = int(os.pread(self.fd, 32, 0).strip() or b"0")
        if left:
            os.pwrite(self.fd, b"0", 0)
        return left == 0

    def disarm(self):
        os.pwrite(self.fd, b"0", 0)


def rtnl_request(msgtype, flags, body):
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    sock.bind((0, 0))
    msg = struct.pack("=IHHII", 16 + len(body), msgtype,
                      ftvnl.NLM_F_REQUEST | ftvnl.NLM_F_ACK | flags, 1, 0)
    return sock, msg + body


def rtnl_ack(sock):
    while True:
        data = sock.recv(65536)
        while len(data) >= 16:
            length, typ, flags, _, _ = struct.unpack_from("=IHHII", data)
            if typ == ftvnl.NLMSG_ERROR:
                err, tlvs = ftvnl.parse_error(flags, data[16:length])
                return err, tlvs
            data = data[ftvnl.align4(length):]


def link_body(kind):
    ifinfo = struct.pack("=BxHiII", 0, 0, 0, 0, 0)
    attrs = ftvnl.nla(IFLA_IFNAME, DEV.encode() + b"\0")
    if kind:
        attrs += ftvnl.nla(IFLA_LINKINFO | ftvnl.NLA_F_NESTED,
                           ftvnl.nla(IFLA_INFO_KIND, kind.encode()))
    return ifinfo + attrs


class Ftv:
    def __init__(self):
        self.root, self.cmds = ftvnl.load_spaces(ftvnl.UAPI)
        self.nl = ftvnl.Netlink()
        self.family = ftvnl.resolve(self.nl, "ftv")
        self.keys = [base64.b64encode(os.urandom(32)).decode()
                     for _ in range(4)]

    def send(self, cmd, args, dump=False, fnth=None, n=0):
        """Send one request, with the Nth allocation failed if FNTH is
        given; return (errno, extack message, whether it was failed)."""
        attrs = ftvnl.Builder(self.root).build(args, 20)
        flags = ftvnl.NLM_F_REQUEST | ftvnl.NLM_F_ACK
        if dump:
            flags |= ftvnl.NLM_F_DUMP
        fired = False
        try:
            if fnth:
                fnth.arm(n)
            try:
                self.nl.request(self.family, flags, self.cmds[cmd], 1,
                                attrs)
            finally:
                fired = fnth.fired() if fnth else False
        except OSError as e:
            return e.errno, None, fired
        err, msg = self.answer()
        return err, msg, fired

    def answer(self):
        err, msg = 0, None
        try:
            for typ, flags, payload in self.nl.replies():
                if typ in (ftvnl.NLMSG_ERROR, ftvnl.NLMSG_DONE):
                    if typ == ftvnl.NLMSG_ERROR:
                        err, tlvs = ftvnl.parse_error(flags, payload)
                    else:
                        err, tlvs = (-struct.unpack_from("=i", payload)[0]
                                     if len(payload) >= 4 else 0), {}
                    m = tlvs.get(ftvnl.NLMSGERR_ATTR_MSG)
                    msg = m.rstrip(b"\0").decode() if m else None
                    break
        except OSError as e:
            return e.errno, None
        return err, msg

    def peers(self):
        """{public key (base64): number of allowed IPs}, or None."""
        attrs = ftvnl.Builder(self.root).build(["ifname=" + DEV], 20)
        self.nl.request(self.family, ftvnl.NLM_F_REQUEST, self.cmds[
            "get_device"], 1, attrs)
        out = {}
        self.port = None
        a_port = self.root.by_name["listen_port"]
        a_peers = self.root.by_name["peers"]
        pspace = self.root.nests["peer"]
        a_key = pspace.by_name["public_key"]
        a_aips = pspace.by_name["allowedips"]
        for typ, _, payload in self.nl.replies():
            if typ == ftvnl.NLMSG_ERROR:
                err, _ = ftvnl.parse_error(_, payload)
                return None if err else out
            for atyp, val in ftvnl.parse_attrs(payload[4:]):
                if atyp & ftvnl.NLA_TYPE_MASK == a_port:
                    self.port = struct.unpack("=H", val[:2])[0]
                if atyp & ftvnl.NLA_TYPE_MASK != a_peers:
                    continue
                for _, peer in ftvnl.parse_attrs(val):
                    key, n = None, 0
                    for ptyp, pval in ftvnl.parse_attrs(peer):
                        t = ptyp & ftvnl.NLA_TYPE_MASK
                        if t == a_key:
                            key = base64.b64encode(pval).decode()
                        elif t == a_aips:
                            n = len(ftvnl.parse_attrs(pval))
                    out[key] = n
            break
        return out


def exists():
    return os.path.exists("/sys/class/net/" + DEV)


def peer_args(key, aips, more=()):
    args = ["ifname=" + DEV, "peer{", "public_key=b64:" + key,
            "endpoint_ipv4=192.0.2.7", "endpoint_port=51820"]
    args += list(more)
    args += ["allowedips{"]
    for i in range(aips):
        args += ["allowedip{", "family=inet", "ipaddr=10.%d.%d.0" % (
            50 + i // 200, i % 200), "cidr_mask=24", "}"]
    args += ["}", "}"]
    return args


def walk(name, op, check, restore, fnth, took=None):
    """Fail each allocation of op() in turn (see the top of the file).
    TOOK, if given, says whether the operation's effect is there: an
    error with the effect there is only a lost answer (ENOBUFS: the
    netlink core could not allocate the acknowledgement), which needs no
    retry."""
    points = errors = extacked = absorbed = retried = lost = 0
    bare = []
    for n in range(1, MAX_POINTS + 1):
        err, msg, in_ftv, fired = op(fnth, n)
        if not fired:
            if err:
                fail("%s: failed with errno %d and no fault (%s)"
                     % (name, err, msg))
            restore()
            break
        points += 1
        why = check(err == 0)
        if why:
            fail("%s: allocation %d: %s" % (name, n, why))
        if not err:
            absorbed += 1
        elif took and took():
            if err == errno.ENOBUFS:
                lost += 1
            else:
                fail("%s: allocation %d: failed (errno %d, %s) but took "
                     "effect" % (name, n, err, msg))
        else:
            errors += 1
            if msg:
                extacked += 1
            elif in_ftv:
                bare.append(n)
            err2, msg2, _, _ = op(None, 0)
            if err2:
                fail("%s: allocation %d: the retry failed too (errno %d, "
                     "%s)" % (name, n, err2, msg2))
            else:
                retried += 1
        restore()
    else:
        fail("%s: still failing after %d allocations" % (name, MAX_POINTS))
    print("%s: %d points, %d errors (%d with extack), %d retried, %d "
          "absorbed, %d answers lost" % (name, points, errors, extacked,
                                         retried, absorbed, lost),
          flush=True)
    if bare:
        # The netlink core's own allocations (the request's skb, the
        # attribute table) fail without a message.
        print("%s: errors without an extack message at points %s"
              % (name, " ".join(map(str, bare))), flush=True)


def main():
    wanted = set(sys.argv[1:])
    fnth = FailNth()
    fnth.disarm()

    def rtnl(msgtype, flags, kind, fn=None, n=0):
        sock, msg = rtnl_request(msgtype, flags, link_body(kind))
        fired = False
        try:
            try:
                if fn:
                    fn.arm(n)
                sock.send(msg)
            finally:
                fired = fn.fired() if fn else False
            err, tlvs = rtnl_ack(sock)
        except OSError as e:
            return e.errno, None, False, fired
        finally:
            sock.close()
        m = tlvs.get(ftvnl.NLMSGERR_ATTR_MSG)
        # Device creation and removal go through the rtnetlink core,
        # which reports most failures without an extack message: only
        # whether the state is whole is judged.
        return err, m.rstrip(b"\0").decode() if m else None, False, fired

    def link_add(fn=None, n=0):
        return rtnl(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, "ftv", fn, n)

    def link_del(fn=None, n=0):
        return rtnl(RTM_DELLINK, 0, None, fn, n)

    def ensure_dev():
        if not exists():
            err, msg, _, _ = link_add()
            if err:
                raise SystemExit("cannot create %s: %d %s" % (DEV, err, msg))

    def gone():
        if exists():
            link_del()

    ftv = None

    def device_whole(done):
        if done and not exists():
            return "reported success but there is no device"
        if exists() and Ftv().peers() is None:
            return "the device exists but GET_DEVICE fails"
        return None

    if not wanted or "link_add" in wanted:
        gone()
        walk("link_add", link_add, device_whole, gone, fnth, exists)
    if not wanted or "link_del" in wanted:
        ensure_dev()
        walk("link_del", link_del,
             lambda done: "reported success but the device is still there"
             if done and exists() else device_whole(False),
             ensure_dev, fnth, lambda: not exists())

    ensure_dev()
    ftv = Ftv()
    priv = base64.b64encode(os.urandom(32)).decode()

    def genl(cmd, args, dump=False):
        def op(fn, n):
            err, msg, fired = ftv.send(cmd, args, dump, fn, n)
            return err, msg, True, fired
        return op

    def no_check(done):
        return None if ftv.peers() is not None else "GET_DEVICE fails"

    device_ops = [
        ("set_private_key", ["ifname=" + DEV, "private_key=b64:" + priv]),
        ("set_listen_port", ["ifname=" + DEV, "listen_port=51999"]),
        ("set_shape", ["ifname=" + DEV, "shape=0"]),
    ]
    for name, args in device_ops:
        if not wanted or name in wanted:
            walk(name, genl("set_device", args), no_check, lambda: None,
                 fnth)

    key = ftv.keys[0]

    def peer_gone():
        ftv.send("del_peer", ["ifname=" + DEV, "peer{",
                              "public_key=b64:" + key, "}"])

    def peer_whole(done):
        p = ftv.peers()
        if p is None:
            return "GET_DEVICE fails"
        if done and p.get(key) != 8:
            return "reported success but the peer has %s allowed IPs" % (
                p.get(key),)
        if key in p and p[key] != 8:
            return "half a peer: %d of 8 allowed IPs" % p[key]
        return None

    if not wanted or "peer_add" in wanted:
        peer_gone()
        walk("peer_add", genl("new_peer", peer_args(
            key, 8, ["fec_mode=2", "fec_data=8", "fec_repair=2"])),
            peer_whole, peer_gone, fnth,
            lambda: key in (ftv.peers() or {}))

    def peer_back():
        peer_gone()
        ftv.send("new_peer", peer_args(key, 4))

    def peer_set_whole(done):
        p = ftv.peers()
        if p is None:
            return "GET_DEVICE fails"
        if key not in p:
            return "the peer is gone"
        if p[key] not in (4, 8):
            return "allowed IPs half replaced: %d" % p[key]
        if done and p[key] != 8:
            return "reported success but %d allowed IPs" % p[key]
        return None

    if not wanted or "peer_set" in wanted:
        peer_back()
        walk("peer_set", genl("set_peer", peer_args(
            key, 8, ["flags=1", "fec_mode=1"])), peer_set_whole, peer_back,
            fnth)
        peer_gone()

    # setconf: ftvctl sends the device's settings with "replace peers",
    # then each peer in its own request (peer_add above): this is the
    # first request, on a device with three peers.
    conf = ["ifname=" + DEV, "flags=1", "listen_port=51998",
            "private_key=b64:" + base64.b64encode(os.urandom(32)).decode()]

    def conf_whole(done):
        p = ftv.peers()
        if p is None:
            return "GET_DEVICE fails"
        if done and (p or ftv.port != 51998):
            return "reported success but peers %s, port %s" % (
                sorted(p), ftv.port)
        if p and (sorted(p) != sorted(ftv.keys[1:]) or ftv.port == 51998):
            return "half applied: peers %s, port %s" % (sorted(p), ftv.port)
        if not p and ftv.port != 51998:
            return "half applied: peers gone, port %s" % ftv.port
        return None

    def conf_back():
        ftv.send("set_device", ["ifname=" + DEV, "flags=1",
                                "listen_port=51999"])
        for k in ftv.keys[1:]:
            ftv.send("new_peer", peer_args(k, 3))

    def conf_took():
        return ftv.peers() == {} and ftv.port == 51998

    if not wanted or "setconf" in wanted:
        conf_back()
        walk("setconf", genl("set_device", conf), conf_whole, conf_back,
             fnth, conf_took)

    if not wanted or "dump" in wanted:
        conf_back()
        walk("dump", genl("get_device", ["ifname=" + DEV], dump=True),
             no_check, lambda: None, fnth)

    gone()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
