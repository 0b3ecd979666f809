#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ICMP errors about ftv's segments: which ones lower the outer path
# MTU, and on which route.
#
# The security review of 891c642 saw a forged "fragmentation needed"
# that quoted the tunnel's addresses and ports with any sequence number
# clamp C's route to 552 bytes; and with a fwmark set, the MTU was learned
# on the route looked up without the mark, not the one the segments take.
# Linux TCP believes such an ICMP error only if the sequence number it
# quotes lies between the oldest unacknowledged byte and the next byte to
# send; ftv now does the same. From R, forgetcp.py catches one of C's
# data segments and answers it:
#
#  1. quoting a sequence number 2^31 away (an off-path forger knows the
#     ports, not the numbers): C's route is unchanged, C counts the error
#     as ignored (icmp_ignored);
#  2. quoting the next byte C sends (what a router on the path quotes):
#     C's route to S gets the MTU;
#  3. with fwmark 0x42 on C's ftv0, and marked packets routed by table 42:
#     the MTU lands on the marked route, not on the main table's.
#
#   ns C (initiator)          ns R (router, no NAT)          ns S (responder)
#   +---------------------+  +--------------------------+   +--------------------+
#   | ftv0 10.9.0.1       |  |                          |   | ftv0 10.9.0.2      |
#   | veth0 192.168.10.2  |--| vethc 192.168.10.1       |   |   :51820           |
#   |  rule fwmark 0x42   |  |   forgetcp.py: ICMP to C |   |                    |
#   |    -> table 42      |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   +---------------------+  +--------------------------+   +--------------------+
#
# UNDERLAY=6 (test_icmp6.sh) does the same with ICMPv6 "packet too big"
# over an IPv6 underlay.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

UNDERLAY=${UNDERLAY:-4}
U="(IPv$UNDERLAY underlay)"
FORGE="$FTV_ROOT/selftests/lib/forgetcp.py"
if [ "$UNDERLAY" = 6 ]; then
	FAM=-6 C_ADDR=$C_LAN6 R_ADDR=$R_LAN6 S_ADDR=$S_PUB6 NET=2001:db8:100::/64
	MTU1=1400 MTU2=1300 FORGED_MTU=1280
else
	FAM=-4 C_ADDR=$C_LAN4 R_ADDR=$R_LAN4 S_ADDR=$S_PUB4 NET=198.51.100.0/24
	MTU1=1300 MTU2=1280 FORGED_MTU=552
fi

ktap_plan 8
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
paths_ftv "$UNDERLAY" || ktap_bail "cannot configure ftv with ftvctl"
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
# Data keeps flowing from C, so that there is always a segment to quote.
ip netns exec "$C" ping -q -i 0.2 10.9.0.2 >/dev/null 2>&1 &
bg_track $!

# route_mtu [MARK] : the MTU C's route to S holds, or nothing
route_mtu()
{
	ip -n "$C" "$FAM" route get "$S_ADDR" ${1:+mark "$1"} |
		sed -n 's/.* mtu \([0-9]*\).*/\1/p'
}
route_has()
{
	[ "$(route_mtu "$2")" = "$1" ]
}
ignored()
{
	ftv_json "$C" ftv0 'd["drops"]["icmp_ignored"]'
}
# forge KIND MTU : one ICMP error from R about C's next data segment
forge()
{
	nsx "$R" "$PYTHON" "$FORGE" vethc "$1" src="$C_ADDR" dport="$FTV_PORT" \
		mtu="$2" from="$R_ADDR"
}
# forge_genuine MTU [MARK] : a genuine error, until C's route has MTU. A
# router quotes a segment it dropped, which is never acknowledged; ours
# quotes one that went through, and S may acknowledge more than it (C
# pings on) before the error arrives, which makes it stale: try again.
forge_genuine()
{
	local i

	for i in 1 2 3 4 5; do
		forge icmp "$1" || return 1
		wait_for 2 route_has "$1" "${2:-}" && return 0
	done
	return 0
}

before=$(ignored)
ktap_check "R sends C an ICMP error quoting a forged sequence number $U" \
	forge icmpforged "$FORGED_MTU"
counted()
{
	[ "$(ignored)" -gt "$before" ]
}
if wait_for 5 counted; then
	ktap_ok "C counts it as ignored (icmp_ignored $(ignored)) $U"
else
	ktap_fail "C counts it as ignored $U"
	ktap_diag "icmp_ignored: $before before, $(ignored) after"
fi
ktap_eq "C's route to S keeps its MTU $U" "" "$(route_mtu)"

ktap_check "R sends C an ICMP error quoting C's next byte, MTU $MTU1 $U" \
	forge_genuine "$MTU1"
if wait_for 5 route_has "$MTU1"; then
	ktap_ok "C's route to S now has MTU $MTU1 $U"
else
	ktap_fail "C's route to S now has MTU $MTU1 $U"
	ktap_diag "$(ip -n "$C" "$FAM" route get "$S_ADDR")"
fi

# Marked segments take table 42, a route of their own through R.
if ! nsx "$C" ip "$FAM" rule add fwmark 0x42 table 42 ||
   ! nsx "$C" ip "$FAM" route add "$NET" via "$R_ADDR" table 42 ||
   ! nsx "$C" "$FTVCTL" set ftv0 fwmark 0x42; then
	ktap_bail "cannot route C's marked segments by table 42"
fi
ktap_check "with fwmark 0x42, R sends C an ICMP error, MTU $MTU2 $U" \
	forge_genuine "$MTU2" 0x42
if wait_for 5 route_has "$MTU2" 0x42; then
	ktap_ok "the marked route (table 42) has MTU $MTU2 $U"
else
	ktap_fail "the marked route (table 42) has MTU $MTU2 $U"
	ktap_diag "marked: $(ip -n "$C" "$FAM" route get "$S_ADDR" mark 0x42)"
fi
ktap_eq "the main table's route still has MTU $MTU1 $U" "$MTU1" "$(route_mtu)"

ktap_finish
