#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An initiator's local port is its own for as long as the connection
# lives. The security review of 891c642 found that the host
# could give a TCP socket of its own the port ftv picked, toward the same
# peer address and port, and ftv would then take that socket's segments;
# and that ftv could pick a port a host socket already had. ftv now holds
# each initiator port with a kernel socket bound to it, and picks ports
# as connect() does (random, even, from ip_local_port_range).
#
# A's ephemeral range is narrowed to 40000-40003, and a host socket holds
# 40000 before the tunnel opens:
#  1. ftv's connection takes 40002, the only other even port;
#  2. a host bind() to 40002 fails (EADDRINUSE) while the connection
#     lives, and a host connect() to B's listen port gets another port;
#  3. once the connection is gone (the peer removed), 40002 is free again.
#
#   ns A (initiator)                   ns B (responder)
#   +------------------------------+   +-------------------------+
#   | ftv0 10.9.0.1                |   | ftv0 10.9.0.2           |
#   | ip_local_port_range 40000-3  |   |                         |
#   | python: bound to :40000      |   |                         |
#   | veth0 10.0.0.1               |---| veth0 10.0.0.2 :51820   |
#   +------------------------------+   +-------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 5
ftv_require

kmark=$(kmsg_mark)
pair_underlay 4 || ktap_bail "cannot set up the underlay"
nsx "$A" sysctl -qw net.ipv4.ip_local_port_range="40000 40003" ||
	ktap_bail "cannot narrow A's port range"

# bind_port PORT : try a host bind() on A to 10.0.0.1:PORT; prints the
# errno name or "ok"
bind_port()
{
	nsx "$A" "$PYTHON" -c '
import errno, socket, sys
s = socket.socket()
try:
    s.bind(("10.0.0.1", int(sys.argv[1])))
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
' "$1"
}

# Holds 40000 until killed; says "bound" once it does. Probing with
# bind_port before then would race it: the probe's own bind() can take
# 40000 for a moment and make the holder's fail.
tmpdir
held="$FTV_TMP/ports.held"
ip netns exec "$A" "$PYTHON" -c '
import socket, sys, time
s = socket.socket()
s.bind(("10.0.0.1", 40000))
s.listen()
open(sys.argv[1], "w").write("bound\n")
time.sleep(3600)
' "$held" &
bg_track $!
holder_bound()
{
	[ -s "$held" ]
}
holds_40000()
{
	[ "$(bind_port 40000)" = EADDRINUSE ]
}
wait_for 10 holder_bound || ktap_bail "the host socket did not take port 40000"
holds_40000 || ktap_bail "port 40000 is not held after the holder bound it"

pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"
port=$(dmesg_since "$kmark" |
	sed -n "s/.*connection \([0-9]*\):$FTV_PORT created.*/\1/p" | tail -n 1)
ktap_eq "ftv's connection takes port 40002, not the host's 40000" 40002 "$port"

ktap_eq "a host bind() to port 40002 fails while the connection lives" \
	EADDRINUSE "$(bind_port 40002)"

got=$(nsx "$A" "$PYTHON" -c '
import socket
s = socket.socket()
s.setblocking(False)
s.connect_ex(("10.0.0.2", 51820))
print(s.getsockname()[1])
')
if [ -n "$got" ] && [ "$got" != 40002 ] && [ "$got" != 40000 ]; then
	ktap_ok "a host connect() to B's listen port gets another port ($got)"
else
	ktap_fail "a host connect() to B's listen port gets another port"
	ktap_diag "it got '$got'"
fi

nsx "$A" "$FTVCTL" peer del ftv0 "$(pubkey_of b)" || ktap_bail "cannot remove B on A"
freed()
{
	[ "$(bind_port 40002)" = ok ]
}
if wait_for 10 freed; then
	ktap_ok "port 40002 is free again once the connection is gone"
else
	ktap_fail "port 40002 is free again once the connection is gone"
	ktap_diag "bind(40002): $(bind_port 40002)"
fi
ktap_check "A's host still holds 40000" holds_40000

ktap_finish
