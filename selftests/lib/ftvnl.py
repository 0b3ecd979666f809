#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Raw generic netlink client for the ftv family, for the selftests.

It builds whatever attributes it is told to, including ones the kernel
must reject (wrong lengths, unknown types, truncated headers), sends one
request with NETLINK_EXT_ACK and NETLINK_CAP_ACK set, and prints what
came back: the errno and the extack message and offset. Only the
standard library is used.

Usage:
  ftvnl.py [options] COMMAND [ATTR...]
  ftvnl.py --resolve FAMILY

COMMAND is get_device, set_device, new_peer, set_peer, del_peer (from
enum ftv_cmd in module/uapi/linux/ftv.h) or a number.

ATTR is one of
  NAME=VALUE          attribute with NAME's usual type
  NAME:TYPE=VALUE     attribute with an explicit type
  NUMBER:TYPE=VALUE   attribute type given as a number
  NAME{ ... }         a nested attribute; '}' is its own argument
NAME is the attribute's enum name in lower case without its prefix
(ifname, private_key, peer, public_key, endpoint_ipv4, allowedips,
allowedip, family, ipaddr, cidr_mask, ...); which enum applies depends on
the nest it is in.

TYPE and VALUE:
  u8 u16 u32 u64      an integer (0x.. allowed); family also takes
                      inet / inet6
  str                 a NUL-terminated string;  strn: without the NUL
  bin                 hex:0011..  b64:BASE64  rand:N (N random bytes)
                      file:PATH (a base64 key file, as ftvctl genkey
                      writes)  zero:N
  ip                  an IPv4 or IPv6 address, packed
  flag                no payload (VALUE ignored)

Output, one "key=value" per line:
  errno=0 | errno=EINVAL      (errno_num=22 follows)
  msg=...                     extack message, if any
  offs=N  attr=PATH           extack offset and the attribute there
  miss_type=N                 NLMSGERR_ATTR_MISS_TYPE, if any
Dumps (--dump) print the decoded attributes of every reply first.

Exit status: 0 request acknowledged, 1 the kernel returned an error,
2 usage or local error.

  ftvnl.py --batch

reads requests from stdin, each its argument count and its arguments
(options included), all NUL-terminated, and answers each with what a
call with those arguments would print (stderr too), then a line
"--end STATUS". A python start costs a second or more under emulation;
test_netlink.sh sends its seventy requests through one process.
"""

import argparse
import base64
import errno
import os
import re
import socket
import struct
import sys

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_CAP_ACK = 10
NETLINK_EXT_ACK = 11

NLM_F_REQUEST = 0x01
NLM_F_MULTI = 0x02
NLM_F_ACK = 0x04
NLM_F_DUMP = 0x300
NLM_F_CAPPED = 0x100
NLM_F_ACK_TLVS = 0x200

NLMSG_ERROR = 2
NLMSG_DONE = 3

NLMSGERR_ATTR_MSG = 1
NLMSGERR_ATTR_OFFS = 2
NLMSGERR_ATTR_COOKIE = 3
NLMSGERR_ATTR_POLICY = 4
NLMSGERR_ATTR_MISS_TYPE = 5
NLMSGERR_ATTR_MISS_NEST = 6

GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2

NLA_F_NESTED = 0x8000
NLA_TYPE_MASK = 0x3fff

UAPI = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "..", "..", "module", "uapi", "linux", "ftv.h")


class UsageError(Exception):
    pass


def align4(n):
    return (n + 3) & ~3


# ------------------------------------------------------------ the uapi

def parse_enums(path):
    """Return {enum_name: [(NAME, value), ...]} from a C header."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    enums = {}
    for m in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\}", text, flags=re.S):
        value = 0
        entries = []
        for item in m.group(2).split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                name, expr = (s.strip() for s in item.split("=", 1))
                expr = re.sub(r"(\d+)U\b", r"\1", expr)
                for prev, val in entries:
                    expr = re.sub(r"\b%s\b" % prev, str(val), expr)
                try:
                    value = int(eval(expr, {"__builtins__": {}}))
                except Exception:
                    continue
            else:
                name = item
            entries.append((name, value))
            value += 1
        enums[m.group(1)] = entries
    return enums


class Space:
    """One attribute space: names, numbers, default types, nests."""

    def __init__(self, name, entries, prefix):
        self.name = name
        self.by_name = {}
        self.by_num = {}
        for cname, val in entries:
            if not cname.startswith(prefix) or cname.startswith("__"):
                continue
            short = cname[len(prefix):].lower()
            if short in ("unspec", "max", "last"):
                continue
            self.by_name[short] = val
            self.by_num.setdefault(val, short)
        self.types = {}
        self.nests = {}


DEFAULT_TYPES = {
    "ifindex": "u32", "ifname": "str", "private_key": "bin",
    "public_key": "bin", "preshared_key": "bin", "listen_port": "u16",
    "fwmark": "u32", "flags": "u32", "endpoint_ipv4": "ip",
    "endpoint_ipv6": "ip", "endpoint_port": "u16",
    "persistent_keepalive": "u16", "last_handshake": "u64",
    "rx_bytes": "u64", "tx_bytes": "u64", "state": "u8",
    "family": "u16", "ipaddr": "ip", "cidr_mask": "u8",
    "shape": "u8", "fec_mode": "u8",
    "fec_data": "u8", "fec_repair": "u8", "flows": "u8",
    "flows_up": "u8", "rotations": "u64", "rotate": "u32",
    "ipv4": "ip", "ipv6": "ip", "port": "u16",
}


def load_spaces(path):
    enums = parse_enums(path)

    def space(enum, prefix):
        return Space(enum, enums.get(enum, []), prefix)

    dev = space("ftv_device_attr", "FTV_A_")
    peer = space("ftv_peer_attr", "FTV_PEER_A_")
    aip = space("ftv_allowedip_attr", "FTV_ALLOWEDIP_A_")
    drops = space("ftv_drops_attr", "FTV_DROPS_A_")
    # FTV_A_PEERS and FTV_PEER_A_ALLOWEDIPS hold a list of nests whose
    # type is FTV_A_PEER / FTV_PEER_A_ALLOWEDIP.
    peers = Space("peers", [("peer", dev.by_name.get("peer", 0))], "")
    aips = Space("allowedips", [("allowedip",
                                 peer.by_name.get("allowedip", 0))], "")
    # FTV_PEER_A_ENDPOINTS is an indexed array: its nests are numbered
    # from 1 and written entry1{ ... } entry2{ ... }.
    ep = space("ftv_endpoint_attr", "FTV_ENDPOINT_A_")
    eps = Space("endpoints", [("entry%d" % i, i) for i in range(1, 10)], "")
    for s in (dev, peer, aip, drops, peers, aips, ep, eps):
        for n in s.by_name:
            s.types[n] = DEFAULT_TYPES.get(n, "bin")
    # Every drop reason is a u64 counter, whatever reasons there are.
    for n in drops.by_name:
        drops.types[n] = "u64" if n != "pad" else "bin"
    dev.nests = {"peer": peer, "peers": peers, "drops": drops}
    peers.nests = {"peer": peer}
    peer.nests = {"allowedips": aips, "allowedip": aip, "drops": drops,
                  "endpoints": eps}
    aips.nests = {"allowedip": aip}
    eps.nests = {n: ep for n in eps.by_name}
    for s in (dev, peers, peer, aips, eps):
        for n in s.nests:
            s.types[n] = "nest"
    cmds = {}
    for cname, val in enums.get("ftv_cmd", []):
        if cname.startswith("FTV_CMD_") and cname not in ("FTV_CMD_MAX",
                                                          "FTV_CMD_UNSPEC"):
            cmds[cname[len("FTV_CMD_"):].lower()] = val
    return dev, cmds


# ------------------------------------------------------------ encoding

def encode_value(typ, value, name):
    if typ in ("u8", "u16", "u32", "u64"):
        if name == "family" and value in ("inet", "inet6"):
            value = {"inet": socket.AF_INET, "inet6": socket.AF_INET6}[value]
        fmt = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}[typ]
        try:
            return struct.pack("=" + fmt, int(value, 0)
                               if isinstance(value, str) else value)
        except (ValueError, struct.error) as e:
            raise UsageError("%s: bad %s value %r: %s" % (name, typ, value, e))
    if typ == "str":
        return value.encode() + b"\0"
    if typ == "strn":
        return value.encode()
    if typ == "flag":
        return b""
    if typ == "ip":
        for fam in (socket.AF_INET, socket.AF_INET6):
            try:
                return socket.inet_pton(fam, value)
            except OSError:
                pass
        raise UsageError("%s: not an IP address: %r" % (name, value))
    if typ == "bin":
        kind, _, arg = value.partition(":")
        if kind == "hex":
            return bytes.fromhex(arg)
        if kind == "b64":
            return base64.b64decode(arg)
        if kind == "rand":
            return os.urandom(int(arg))
        if kind == "zero":
            return bytes(int(arg))
        if kind == "file":
            with open(arg) as f:
                return base64.b64decode(f.read().strip())
        raise UsageError("%s: binary value must be hex:, b64:, rand:N, "
                         "zero:N or file:PATH, not %r" % (name, value))
    raise UsageError("%s: unknown type %r" % (name, typ))


def nla(typ, payload):
    """One attribute, padded to 4 bytes."""
    length = 4 + len(payload)
    return (struct.pack("=HH", length, typ) + payload +
            bytes(align4(length) - length))


class Builder:
    """Turns the ATTR arguments into attribute bytes and remembers where
    each attribute starts, to name the one an extack offset points at."""

    def __init__(self, root):
        self.root = root
        self.where = {}

    def build(self, args, base):
        data, rest = self._level(args, self.root, base, "")
        if rest:
            raise UsageError("unbalanced '}'")
        return data

    def _level(self, args, space, offset, path):
        out = b""
        while args:
            arg = args[0]
            if arg == "}":
                return out, args
            args = args[1:]
            if arg.endswith("{"):
                name = arg[:-1]
                typ, sub = self._lookup(space, name)
                inner, args = self._level(args, sub, offset + len(out) + 4,
                                          path + name + "/")
                if not args:
                    raise UsageError("missing '}' after %s{" % name)
                args = args[1:]
                self.where[offset + len(out)] = path + name
                out += nla(typ | NLA_F_NESTED, inner)
                continue
            if "=" not in arg:
                raise UsageError("attribute %r is not NAME=VALUE" % arg)
            key, value = arg.split("=", 1)
            name, _, typename = key.partition(":")
            typ, _ = self._lookup(space, name, nest=False)
            if not typename:
                typename = space.types.get(name) if space else None
                if typename is None or typename == "nest":
                    raise UsageError("%s: give a type (NAME:TYPE=VALUE)"
                                     % name)
            self.where[offset + len(out)] = path + name
            out += nla(typ, encode_value(typename, value, name))
        return out, args

    @staticmethod
    def _lookup(space, name, nest=True):
        if name.isdigit():
            return int(name), None
        if space is None or name not in space.by_name:
            known = ", ".join(sorted(space.by_name)) if space else "none"
            raise UsageError("unknown attribute %r here (known: %s)"
                             % (name, known))
        sub = space.nests.get(name) if nest else None
        return space.by_name[name], sub


# ------------------------------------------------------------ decoding

def parse_attrs(data):
    attrs = []
    while len(data) >= 4:
        length, typ = struct.unpack_from("=HH", data)
        if length < 4 or length > len(data):
            break
        attrs.append((typ, data[4:length]))
        data = data[align4(length):]
    return attrs


def show_value(typ, payload):
    if typ == "nest":
        return None
    if typ in ("u8", "u16", "u32", "u64"):
        size = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}[typ]
        if len(payload) == size:
            fmt = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}[typ]
            return str(struct.unpack("=" + fmt, payload)[0])
    if typ == "str":
        return payload.rstrip(b"\0").decode(errors="replace")
    if typ == "ip" and len(payload) in (4, 16):
        fam = socket.AF_INET if len(payload) == 4 else socket.AF_INET6
        return socket.inet_ntop(fam, payload)
    if len(payload) == 32:
        return "b64:" + base64.b64encode(payload).decode()
    return "hex:" + payload.hex()


def dump_attrs(data, space, indent):
    for typ, payload in parse_attrs(data):
        num = typ & NLA_TYPE_MASK
        name = space.by_num.get(num) if space else None
        label = name or str(num)
        vtype = space.types.get(name, "bin") if (space and name) else "bin"
        sub = space.nests.get(name) if (space and name) else None
        if sub is not None:
            print("%s%s:" % ("  " * indent, label))
            dump_attrs(payload, sub, indent + 1)
        else:
            print("%s%s: %s" % ("  " * indent, label,
                                show_value(vtype, payload)))


# ------------------------------------------------------------ netlink

class Netlink:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                  NETLINK_GENERIC)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.sock.bind((0, 0))
        self.seq = 1

    def request(self, family, flags, cmd, version, attrs, tail=b""):
        body = struct.pack("=BBH", cmd, version, 0) + attrs + tail
        self.seq += 1
        msg = struct.pack("=IHHII", 16 + len(body), family, flags,
                          self.seq, 0) + body
        self.sock.send(msg)
        return self.seq

    def replies(self):
        """Yield (type, flags, payload) until an error/ack or DONE."""
        while True:
            data = self.sock.recv(1 << 20)
            while len(data) >= 16:
                length, typ, flags, _seq, _pid = struct.unpack_from(
                    "=IHHII", data)
                if length < 16 or length > len(data):
                    break
                yield typ, flags, data[16:length]
                if typ in (NLMSG_ERROR, NLMSG_DONE):
                    return
                data = data[align4(length):]


def parse_error(flags, payload):
    """(errno, {tlv type: payload}) from an NLMSG_ERROR payload."""
    err = -struct.unpack_from("=i", payload)[0]
    tlvs = {}
    if flags & NLM_F_ACK_TLVS:
        if flags & NLM_F_CAPPED:
            start = 4 + 16
        else:
            orig_len = struct.unpack_from("=I", payload, 4)[0]
            start = 4 + align4(orig_len)
        for typ, val in parse_attrs(payload[start:]):
            tlvs[typ & NLA_TYPE_MASK] = val
    return err, tlvs


def resolve(nl, name):
    attrs = nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0")
    nl.request(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY,
               1, attrs)
    family = None
    for typ, flags, payload in nl.replies():
        if typ == NLMSG_ERROR:
            err, tlvs = parse_error(flags, payload)
            if err:
                raise OSError(err, "resolving family %r: %s" % (
                    name, tlvs.get(NLMSGERR_ATTR_MSG, b"").rstrip(b"\0")
                    .decode() or os.strerror(err)))
            break
        for atyp, val in parse_attrs(payload[4:]):
            if atyp == CTRL_ATTR_FAMILY_ID:
                family = struct.unpack("=H", val[:2])[0]
    if family is None:
        raise OSError(errno.ENOENT, "family %r not found" % name)
    return family


# Where Python's errno module picks another alias for a number than the
# kernel's sources use.
KERNEL_ERRNO_NAMES = {errno.EOPNOTSUPP: "EOPNOTSUPP", errno.EAGAIN: "EAGAIN",
                      errno.EDEADLK: "EDEADLK"}


def acked(nl, family, cmd, root, args):
    """Send one request built from ATTR-style args (see above) and wait
    for its acknowledgment; return its errno (0 for success, -1 for no
    answer). For scripts that send many requests from one process."""
    attrs = Builder(root).build(args, 20)
    nl.request(family, NLM_F_REQUEST | NLM_F_ACK, cmd, 1, attrs)
    for typ, flags, payload in nl.replies():
        if typ == NLMSG_ERROR:
            return parse_error(flags, payload)[0]
    return -1


def errno_name(err):
    return KERNEL_ERRNO_NAMES.get(err) or errno.errorcode.get(err, str(err))


def report(err, tlvs, where):
    if err == 0:
        print("errno=0")
    else:
        print("errno=%s" % errno_name(err))
        print("errno_num=%d" % err)
    if NLMSGERR_ATTR_MSG in tlvs:
        print("msg=%s" % tlvs[NLMSGERR_ATTR_MSG].rstrip(b"\0")
              .decode(errors="replace"))
    if NLMSGERR_ATTR_OFFS in tlvs:
        offs = struct.unpack("=I", tlvs[NLMSGERR_ATTR_OFFS][:4])[0]
        print("offs=%d attr=%s" % (offs, where.get(offs, "?")))
    if NLMSGERR_ATTR_MISS_TYPE in tlvs:
        print("miss_type=%d" % struct.unpack(
            "=I", tlvs[NLMSGERR_ATTR_MISS_TYPE][:4])[0])
    if NLMSGERR_ATTR_MISS_NEST in tlvs:
        print("miss_nest=%d" % struct.unpack(
            "=I", tlvs[NLMSGERR_ATTR_MISS_NEST][:4])[0])


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="raw generic netlink client for the ftv family",
        epilog="See the top of this file for the ATTR syntax.")
    ap.add_argument("--family", default="ftv",
                    help="generic netlink family (default ftv)")
    ap.add_argument("--resolve", metavar="FAMILY",
                    help="print FAMILY's id and exit")
    ap.add_argument("--dump", action="store_true",
                    help="send with NLM_F_DUMP and print the replies")
    ap.add_argument("--no-ack", action="store_true",
                    help="do not set NLM_F_ACK")
    ap.add_argument("--version", type=int, default=1,
                    help="genl header version (default 1)")
    ap.add_argument("--tail", metavar="HEX", default="",
                    help="raw bytes appended after the attributes")
    ap.add_argument("--uapi", default=UAPI, help="path of ftv.h")
    ap.add_argument("command", nargs="?")
    ap.add_argument("attrs", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)

    try:
        nl = Netlink()
        if args.resolve:
            print(resolve(nl, args.resolve))
            return 0
        if not args.command:
            raise UsageError("a command is required")
        root, cmds = load_spaces(args.uapi)
        if args.command.isdigit():
            cmd = int(args.command)
        elif args.command in cmds:
            cmd = cmds[args.command]
        else:
            raise UsageError("unknown command %r (known: %s)" % (
                args.command, ", ".join(sorted(cmds))))
        builder = Builder(root)
        # Attribute offsets are counted from the nlmsghdr, as the kernel
        # reports them: 16 bytes nlmsghdr + 4 bytes genlmsghdr.
        attrs = builder.build(list(args.attrs), 20)
        family = resolve(nl, args.family)
        flags = NLM_F_REQUEST
        if args.dump:
            flags |= NLM_F_DUMP
        if not args.no_ack:
            flags |= NLM_F_ACK
        nl.request(family, flags, cmd, args.version, attrs,
                   bytes.fromhex(args.tail))
    except UsageError as e:
        print("ftvnl: %s" % e, file=sys.stderr)
        return 2
    except OSError as e:
        print("ftvnl: %s" % e, file=sys.stderr)
        return 2

    err, tlvs = 0, {}
    for typ, flags, payload in nl.replies():
        if typ == NLMSG_ERROR:
            err, tlvs = parse_error(flags, payload)
            break
        if typ == NLMSG_DONE:
            # A dump's errors arrive as DONE with a negative int.
            if len(payload) >= 4:
                err = -struct.unpack_from("=i", payload)[0]
                if flags & NLM_F_ACK_TLVS:
                    for atyp, val in parse_attrs(payload[4:]):
                        tlvs[atyp & NLA_TYPE_MASK] = val
            break
        if args.dump:
            print("message cmd=%d" % payload[0])
            dump_attrs(payload[4:], root, 1)
    report(err, tlvs, builder.where)
    return 1 if err else 0


def batch():
    """Answer NUL-separated requests from stdin until it ends."""
    fields, buf = [], b""
    while True:
        while b"\0" in buf:
            field, buf = buf.split(b"\0", 1)
            fields.append(field.decode())
            if len(fields) == int(fields[0]) + 1:
                sys.stderr = sys.stdout
                try:
                    rc = main(fields[1:])
                except SystemExit as e:
                    rc = e.code if isinstance(e.code, int) else 2
                finally:
                    sys.stderr = sys.__stderr__
                print("--end %d" % rc, flush=True)
                fields = []
        chunk = sys.stdin.buffer.read1(65536)
        if not chunk:
            return 0
        buf += chunk


if __name__ == "__main__":
    sys.exit(batch() if sys.argv[1:] == ["--batch"] else main())
