#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A join's SYN that meets, between the moment its token is found and the
# moment it is taken, what a session does at the same time. The debug
# build holds it there until S's handshake worker has installed a
# session (join_take_delay_ms on S, the most it waits) and has the worker
# install the session it is working on only while one is held
# (handshake_hold_ms), so that what happens in between happens every
# time, however long the handshake takes (a fixed hold of 500 ms was
# shorter than an emulated handshake in CI on 2026-12-02, and case 2's
# SYN was taken before the window went). R is an attacker on the path
# (ftvmitm.py): it drops a join's SYN of peer Y's session and keeps its
# token.
#  1. R sends the stolen SYN from the port of the connection X, another
#     peer of S's from the same host, opens just then: it is held while
#     X's opener is published on that very tuple, then taken. Until
#     2026-12-02 the join replaced the opener in the connection table and
#     killed it, while S's peer X still pointed at it: a use after free
#     (KASAN on the debug kernel). Now the newcomer loses: S's host
#     answers the SYN with a RST, X's tunnel works, and the kernel reports
#     nothing.
#  2. R sends a stolen SYN of Y's session from a port of its own while Y
#     opens its next session, which stops the window of the last: it is
#     held while the window goes, then found to be no longer expected.
#     Until 2026-12-02 it was judged twice, taken for a join when it came
#     and then, the slot gone, answered with the listen port's cookie
#     SYN-ACK, which told a prober holding a join's SYN that ftv listens.
#     Now what ftv does not take goes to the host, which answers it with
#     a RST as any SYN to a port nothing listens on.
#
#   ns C: ftv0 (X) 10.9.0.1          ns R (ftvmitm.py)         ns S
#         ftv1 (Y) 10.9.1.1  -------  steals Y's join SYN  ----  ftv0 10.9.0.2
#         192.168.10.2                                            :51820

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

PARAMS=/sys/module/ftv/parameters

ktap_plan 6
ftv_require
require_tools nft
ftv_use_debug_module

kmark=$(kmsg_mark)
paths_topology || ktap_bail "cannot set up the namespaces"
tmpdir

# injected : ftvmitm.py made its injection; answer : what S answered
injected() { grep -q "^injected" "$FTV_TMP/mitm.out"; }
answer() { sed -n 's/^injected .* answer \([a-z]*\)$/\1/p' "$FTV_TMP/mitm.out"; }

# X on ftv0 and Y on ftv1 in C, both S's peers.
{ ftv_keypair x && ftv_keypair y && ftv_keypair s; } || ktap_bail "no keys"
ftv_dev "$S" 2 || ktap_bail "no device in S"
ip -n "$S" route add 10.9.1.0/24 dev ftv0
nsx "$S" "$FTVCTL" set ftv0 private-key "$FTV_TMP/s.key" listen-port "$FTV_PORT"
nsx "$S" "$FTVCTL" peer add ftv0 "$(pubkey_of x)" allowed-ips 10.9.0.1/32
nsx "$S" "$FTVCTL" peer add ftv0 "$(pubkey_of y)" allowed-ips 10.9.1.1/32
S_KEY=$(pubkey_of s)
ftv_dev "$C" 1 || ktap_bail "no device in C"
ip -n "$C" link add ftv1 type ftv
ip -n "$C" addr add 10.9.1.1/24 dev ftv1
ip -n "$C" link set ftv1 up
nsx "$C" "$FTVCTL" set ftv0 private-key "$FTV_TMP/x.key"
nsx "$C" "$FTVCTL" set ftv1 private-key "$FTV_TMP/y.key"
# x_peer / y_peer : the device's peer S, anew
x_peer()
{
	nsx "$C" "$FTVCTL" peer add ftv0 "$S_KEY" \
		endpoint "$S_PUB4:$FTV_PORT" allowed-ips 10.9.0.2/32
}
y_peer()
{
	nsx "$C" "$FTVCTL" peer add ftv1 "$S_KEY" \
		endpoint "$S_PUB4:$FTV_PORT" allowed-ips 10.9.0.2/32 \
		persistent-keepalive 1 flows "${1:-1}"
}
y_flows_is() { [ "$(ftv_peer_json "$C" ftv1 "$S_KEY" 'p["flows_up"]')" = "$1" ]; }

# ---- 1. the stolen SYN on the tuple of X's new opener
# Connections by their SYNs: 0 X's opener, 1 Y's, 2 Y's join (stolen),
# 3 X's next opener.
paths_mitm_start steal=2 inject=syn@3 watch=4 || ktap_bail "ftvmitm did not start"
x_peer || ktap_bail "cannot add X's peer"
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel for X"
y_peer 1 || ktap_bail "cannot add Y's peer"
wait_for 20 y_flows_is 1 || ktap_bail "no session for Y"
# The join is asked for only now, and given up at once once stolen: Y
# sends the join's SYN again 3 s after the first (FTV_JOIN_TIMEOUT_MS),
# and that one would take the place of X's opener below (a run on
# 2026-12-02 that waited for Y's session with flows 2 had it so).
nsx "$C" "$FTVCTL" peer set ftv1 "$S_KEY" flows 2
stolen() { grep -q "^stolen 2 " "$FTV_TMP/mitm.out"; }
wait_for 20 stolen || ktap_bail "Y's join SYN was not stolen"
# No other join of Y's: the next SYN is X's.
nsx "$C" "$FTVCTL" peer set ftv1 "$S_KEY" flows 1
echo 4000 >"$PARAMS/join_take_delay_ms"
echo 5000 >"$PARAMS/handshake_hold_ms"
defer "echo 0 >$PARAMS/join_take_delay_ms; echo 0 >$PARAMS/handshake_hold_ms"
nsx "$C" "$FTVCTL" peer del ftv0 "$S_KEY"
x_peer || ktap_bail "cannot add X's peer again"
connect_ping "$C" 10.9.0.2 20
wait_for 20 injected
ktap_eq "the SYN on X's new opener's tuple gets the host's RST, no join" \
	rst "$(answer)"
paths_mitm_stop
ktap_result "X's tunnel works" "$(wait_for 10 ping_ok "$C" 10.9.0.2; echo $?)"
ktap_eq "no kernel report of a use after free" "" "$(freed_memory_reports "$kmark")"

# ---- 2. a stolen SYN held while its window goes
echo 0 >"$PARAMS/join_take_delay_ms"
echo 0 >"$PARAMS/handshake_hold_ms"
# Connections from here: 0 Y's next join (stolen), 1 Y's next opener.
paths_mitm_start steal=0 inject=syn@new watch=4 || ktap_bail "ftvmitm did not start"
nsx "$C" "$FTVCTL" peer set ftv1 "$S_KEY" flows 2
stolen0() { grep -q "^stolen 0 " "$FTV_TMP/mitm.out"; }
wait_for 20 stolen0 || ktap_bail "Y's join SYN was not stolen"
nsx "$C" "$FTVCTL" peer set ftv1 "$S_KEY" flows 1
echo 4000 >"$PARAMS/join_take_delay_ms"
echo 5000 >"$PARAMS/handshake_hold_ms"
nsx "$C" "$FTVCTL" peer del ftv1 "$S_KEY"
y_peer 1 || ktap_bail "cannot add Y's peer again"
wait_for 20 injected
ktap_eq "the SYN held while its window went gets the host's RST, not ftv's SYN-ACK" \
	rst "$(answer)"
paths_mitm_stop
echo 0 >"$PARAMS/join_take_delay_ms"
echo 0 >"$PARAMS/handshake_hold_ms"
ktap_result "Y's session is up again" "$(wait_for 20 y_flows_is 1; echo $?)"

ip -n "$C" link del ftv0
ip -n "$C" link del ftv1
ip -n "$S" link del ftv0
ktap_eq "no kernel report of a use after free, after it all" "" \
	"$(freed_memory_reports "$kmark")"

ktap_finish
