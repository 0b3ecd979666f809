#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MTU and path MTU discovery. On a 1500-byte path: ftv0's default
# MTU is 1400 (1500 - 40 - 32 - 24 - 4: the larger outer IP header, TCP
# with timestamps, counter and tag, and a FEC repair message's header); a
# packet of exactly that size passes
# with DF set, for IPv4 and IPv6 inside, and one byte more is refused by
# the sender's stack ("message too long"); the outer segments carry DF
# (IPv4) or are never fragmented (IPv6), and the largest one fits 1500.
#
# Then the C-R link drops to 1400 bytes. C's outer route now allows
# 1400 - outer headers - 56 bytes inside (1324 with IPv4 outside, 1304
# with IPv6): the module answers larger inner packets with ICMP
# fragmentation-needed / packet-too-big carrying that size. S's outer
# route still says 1500; R answers S's large segments with ICMP, which
# the module takes to lower S's outer path MTU, and then S's inner
# senders are told the same way. Checked: inner TCP adapts in both
# directions (3 MB each way arrive intact, starting with no path MTU
# known), both hosts' route caches hold the inner path MTU, and ping -M do
# passes at that size and is refused one byte over. The other remedy,
# a lower MTU on ftv0 itself, needs nothing from ICMP.
#
#   ns C (initiator)         ns R (router, no NAT)          ns S (responder)
#   +--------------------+  +--------------------------+   +--------------------+
#   | ftv0 10.9.0.1      |  |                          |   | ftv0 10.9.0.2      |
#   |   fd09::1 mtu 1400 |  |                          |   |   fd09::2 :51820   |
#   | veth0 192.168.10.2 |--| vethc 192.168.10.1       |   |                    |
#   |   mtu 1500 -> 1400 |  |   mtu 1500 -> 1400       |   |                    |
#   |                    |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   |                    |  |   tcpdump                |   |   mtu 1500         |
#   +--------------------+  +--------------------------+   +--------------------+
#
# UNDERLAY=6 (test_mtu6.sh) dials S at [2001:db8:100::2]:51820: the
# outer header is 40 bytes, so 1400 inside makes 1496 outside.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

UNDERLAY=${UNDERLAY:-4}
U="(IPv$UNDERLAY underlay)"
DEV_MTU=1400
LINK_MTU=1400
if [ "$UNDERLAY" = 6 ]; then OUTER_IP=40; else OUTER_IP=20; fi
OVERHEAD=$((OUTER_IP + 32 + 24))
LIMIT=$((LINK_MTU - OVERHEAD))

for tool in nc tcpdump; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 18
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
paths_ftv "$UNDERLAY" || ktap_bail "cannot configure ftv with ftvctl"
tmpdir

mtu_of() { ip -n "$1" -o link show dev "$2" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }
ktap_eq "ftv0's default MTU is $DEV_MTU on both ends" "$DEV_MTU $DEV_MTU" \
	"$(mtu_of "$C" ftv0) $(mtu_of "$S" ftv0)"

capture "$R" veths "$FTV_TMP/wire.pcap" -s 96 \
	"tcp port $FTV_PORT or (ip6 and ip6[6] = 44)" ||
	ktap_bail "tcpdump did not start: $(cat "$FTV_TMP/wire.pcap.err")"

connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"

# ping_size NS FAMILY ADDR SIZE : ping -M do with SIZE bytes of payload
ping_size()
{
	nsx "$1" ping "-$2" -M "do" -c 2 -i 0.2 -W 2 -s "$4" "$3"
}

# refused NS FAMILY ADDR SIZE MTU : the sender's stack refuses SIZE,
# naming MTU
refused()
{
	local out

	out=$(ping_size "$@" 2>&1) && { echo "$out"; return 1; }
	grep -qE "message too long, mtu[=:] ?$5" <<<"$out" || { echo "$out"; return 1; }
}

ktap_check "an IPv4 packet of $DEV_MTU bytes passes with DF set $U" \
	ping_size "$C" 4 10.9.0.2 $((DEV_MTU - 28))
ktap_check "an IPv6 packet of $DEV_MTU bytes passes $U" \
	ping_size "$C" 6 fd09::2 $((DEV_MTU - 48))
ktap_check "one byte more is refused: message too long (IPv4) $U" \
	refused "$C" 4 10.9.0.2 $((DEV_MTU - 27)) "$DEV_MTU"
ktap_check "one byte more is refused: message too long (IPv6) $U" \
	refused "$C" 6 fd09::2 $((DEV_MTU - 47)) "$DEV_MTU"
nsx "$S" ping -q -M "do" -c 2 -i 0.2 -W 2 -s $((DEV_MTU - 28)) 10.9.0.1 >/dev/null 2>&1

capture_stop
if [ "$UNDERLAY" = 6 ]; then
	frags=$(tcpdump -n -r "$FTV_TMP/wire.pcap" 'ip6 and ip6[6] = 44' 2>/dev/null | wc -l)
	ktap_eq "no outer IPv6 packet is fragmented" 0 "$frags"
else
	nodf=$(tcpdump -n -r "$FTV_TMP/wire.pcap" 'ip and ip[6] & 0x40 = 0' 2>/dev/null | wc -l)
	ktap_eq "every outer IPv4 segment has DF set" 0 "$nodf"
fi
# tcpdump -e prints the frame length: the IP packet and 14 bytes of
# Ethernet header.
largest=$(tcpdump -n -e -r "$FTV_TMP/wire.pcap" "tcp port $FTV_PORT" 2>/dev/null |
	sed -n 's/.*, length \([0-9]*\): .*/\1/p' | sort -n | tail -n 1)
ktap_eq "the largest outer packet is $DEV_MTU + $OVERHEAD bytes, within 1500" \
	$((DEV_MTU + OVERHEAD)) $((${largest:-14} - 14))

# ---- a 1400-byte link between C and R
{ ip -n "$C" link set veth0 mtu "$LINK_MTU" &&
	ip -n "$R" link set vethc mtu "$LINK_MTU"; } ||
	ktap_bail "cannot lower the C-R link's MTU"
ktap_diag "C-R link MTU $LINK_MTU: $LIMIT bytes fit inside"

# route_mtu NS ADDR : the path MTU NS's kernel keeps for ADDR, if any
route_mtu()
{
	ip -n "$1" route get "$2" 2>/dev/null | sed -n 's/.* mtu \([0-9]*\).*/\1/p'
}

# S first, which learns the outer path MTU from R's ICMP. Each sender's
# peer advertises an MSS from its own route: C must not know the path MTU
# yet when S sends, nor S when C sends (hence the flush), or no segment
# would be big enough to teach anything.
head -c $((3 * 1024 * 1024)) /dev/urandom >"$FTV_TMP/data"
if transfer "$S" "$C" 10.9.0.1 5002 "$FTV_TMP/data" 60; then
	ktap_ok "inner TCP from S adapts (ICMP from R on the outer path): 3 MB arrive intact"
else
	ktap_fail "inner TCP from S adapts (ICMP from R on the outer path): 3 MB arrive intact"
	if [ "$UNDERLAY" = 6 ]; then c_lan=$C_LAN6; else c_lan=$C_LAN4; fi
	ktap_diag "S's outer route to C: $(ip -n "$S" route get "$c_lan" 2>&1 | tr '\n' ' ')"
fi
ktap_eq "S learnt the inner path MTU to C" "$LIMIT" "$(route_mtu "$S" 10.9.0.1)"
ip -n "$S" route flush cache
if transfer "$C" "$S" 10.9.0.2 5001 "$FTV_TMP/data" 60; then
	ktap_ok "inner TCP from C adapts: 3 MB arrive intact"
else
	ktap_fail "inner TCP from C adapts: 3 MB arrive intact"
fi
ktap_eq "C learnt the inner path MTU to S" "$LIMIT" "$(route_mtu "$C" 10.9.0.2)"

ktap_check "an IPv4 packet of $LIMIT bytes passes with DF set $U" \
	ping_size "$C" 4 10.9.0.2 $((LIMIT - 28))
ktap_check "one byte more is refused: message too long, mtu $LIMIT (IPv4)" \
	refused "$C" 4 10.9.0.2 $((LIMIT - 27)) "$LIMIT"
# The first IPv6 packet over the limit goes out and comes back as an
# ICMPv6 packet-too-big from C's own ftv0.
out=$(ping_size "$C" 6 fd09::2 $((DEV_MTU - 48)) 2>&1)
if grep -qiE "packet too big|message too long" <<<"$out"; then
	ktap_ok "a $DEV_MTU-byte IPv6 packet gets packet-too-big"
else
	ktap_fail "a $DEV_MTU-byte IPv6 packet gets packet-too-big"
	ktap_diag <<<"$out"
fi
ktap_check "an IPv6 packet of $LIMIT bytes passes $U" \
	ping_size "$C" 6 fd09::2 $((LIMIT - 48))
ktap_check "one byte more is refused: message too long, mtu $LIMIT (IPv6)" \
	refused "$C" 6 fd09::2 $((LIMIT - 47)) "$LIMIT"

# ---- the other remedy: ftv0's own MTU. S has sent no IPv6 inside yet,
# so it knows no path MTU for fd09::1: its stack refuses the first packet
# over the device's MTU itself, without an ICMP round.
{ ip -n "$C" link set ftv0 mtu "$LIMIT" && ip -n "$S" link set ftv0 mtu "$LIMIT"; } ||
	ktap_bail "cannot set ftv0's MTU"
ktap_check "with ftv0's MTU at $LIMIT, S's stack refuses one byte more at once (IPv6)" \
	refused "$S" 6 fd09::1 $((LIMIT - 47)) "$LIMIT"
ktap_check "with ftv0's MTU at $LIMIT, $LIMIT-byte IPv6 packets pass from S" \
	ping_size "$S" 6 fd09::1 $((LIMIT - 48))

ktap_finish
