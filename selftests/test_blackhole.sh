#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A 1400-byte link behind the router, and no ICMP from the router (it
# drops every "fragmentation needed" and "packet too big", as many
# mobile, PPPoE and nested-tunnel paths do). ftv's outer segments carry
# DF, so a segment too big for the link vanishes, and nothing on the path
# says why: only the MSS options of the SYN and SYN-ACK can.
#
# 1. S's own link is the small one (R's veths and S's veth0 at 1400), no
#    MSS clamping on R: S announces the MSS its route takes (1360), C
#    sizes its segments to it. Checked: the SYN-ACK's option, and 4 MB
#    each way, intact, within 60 s each, with default settings; over an
#    IPv4 and an IPv6 underlay.
# 2. The small link is in the middle of the path (R's veths at 1400, S's
#    veth0 at 1500: R's side drops what S sends larger), and R clamps the
#    MSS of SYNs to its route MTU (both directions, as nftables' rt mtu
#    takes the smaller of the way out and the way back), like a PPPoE
#    router: both ends only learn it from the clamped options, S from
#    the SYN, which its stateless SYN-ACK carries in its ISN's low bits
#    (module/listen.c), C from the SYN-ACK. 4 MB each way within 60 s.
#
# Until 2026-12-02 ftv announced 1460 whatever its route and ignored the
# peer's option: 4 MB from C to S never arrived in either case.
#
#   ns C (initiator)         ns R (router, drops ICMP)      ns S (responder)
#   +--------------------+  +--------------------------+   +--------------------+
#   | ftv0 10.9.0.1      |  | (2: MSS clamp, rt mtu)   |   | ftv0 10.9.0.2      |
#   |                    |  |                          |   |   :51820           |
#   | veth0 192.168.10.2 |--| vethc 192.168.10.1       |   |                    |
#   |   mtu 1500         |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   |                    |  |   mtu 1400               |   |   1: 1400, 2: 1500 |
#   +--------------------+  +--------------------------+   +--------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

LINK_MTU=1400
MB=4
setups=0

for tool in nc nft tcpdump; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 8
ftv_require
tmpdir
random_file data "$MB"

# setup UNDERLAY S_MTU CLAMP : the topology with R's veths at LINK_MTU,
# S's veth0 at S_MTU, ICMP errors dropped on R (forwarded and its own),
# and with CLAMP=1 R's MSS clamping; then the tunnel
setup()
{
	paths_topology || return 1
	ip -n "$R" link set veths mtu "$LINK_MTU" || return 1
	ip -n "$S" link set veth0 mtu "$2" || return 1
	nsx "$R" nft -f - <<NFT || return 1
table inet noicmp {
	chain forward {
		type filter hook forward priority filter; policy accept;
		icmp type destination-unreachable counter drop
		icmpv6 type packet-too-big counter drop
	}
	chain output {
		type filter hook output priority filter; policy accept;
		icmp type destination-unreachable counter drop
		icmpv6 type packet-too-big counter drop
	}
}
NFT
	if [ "$3" = 1 ]; then
		nsx "$R" nft -f - <<NFT || return 1
table inet clamp {
	chain forward {
		type filter hook forward priority mangle; policy accept;
		tcp flags syn tcp option maxseg size set rt mtu
	}
}
NFT
	fi
	# A file of its own each time: capture waits for its "listening on".
	# Immediate mode, as the capture ends right after the ping: packets
	# still in a ring block tcpdump had not read when it was stopped
	# were never written ("9 packets received by filter", 0 captured).
	SYNS=$FTV_TMP/syn$((++setups)).pcap
	capture "$R" vethc "$SYNS" --immediate-mode "tcp port $FTV_PORT" ||
		return 1
	paths_ftv "$1" || return 1
	connect_ping "$C" 10.9.0.2 || return 1
	capture_stop
}

teardown()
{
	ip netns del "$C"
	ip netns del "$R"
	ip netns del "$S"
}

# synack_mss : the MSS option of S's SYN-ACK as C received it
synack_mss()
{
	tcpdump -n -r "$SYNS" 2>/dev/null | grep -F 'Flags [S.]' |
		sed -n 's/.*mss \([0-9]*\).*/\1/p' | head -n 1
}

# both_ways WHAT : MB MiB from C to S and from S to C, 60 s each
both_ways()
{
	if transfer "$C" "$S" 10.9.0.2 5001 "$FTV_TMP/data" 60; then
		ktap_ok "$1: $MB MB from C to S arrive intact within 60 s"
	else
		ktap_fail "$1: $MB MB from C to S arrive intact within 60 s"
	fi
	if transfer "$S" "$C" 10.9.0.1 5002 "$FTV_TMP/data" 60; then
		ktap_ok "$1: $MB MB from S to C arrive intact within 60 s"
	else
		ktap_fail "$1: $MB MB from S to C arrive intact within 60 s"
	fi
}

# ---- 1: S's own link is small, no clamp
setup 4 "$LINK_MTU" 0 || ktap_bail "cannot set up case 1"
ktap_eq "S's link is small: its SYN-ACK announces MSS $((LINK_MTU - 40))" \
	$((LINK_MTU - 40)) "$(synack_mss)"
both_ways "S's link small, no clamp, IPv4 underlay"
teardown

setup 6 "$LINK_MTU" 0 || ktap_bail "cannot set up case 1 over IPv6"
ktap_eq "over IPv6, S's SYN-ACK announces MSS $((LINK_MTU - 60))" \
	$((LINK_MTU - 60)) "$(synack_mss)"
if transfer "$C" "$S" 10.9.0.2 5001 "$FTV_TMP/data" 60; then
	ktap_ok "S's link small, no clamp, IPv6 underlay: $MB MB from C to S arrive intact within 60 s"
else
	ktap_fail "S's link small, no clamp, IPv6 underlay: $MB MB from C to S arrive intact within 60 s"
fi
teardown

# ---- 2: the small link in the middle, R clamps
setup 4 1500 1 || ktap_bail "cannot set up case 2"
ktap_eq "R clamped S's SYN-ACK to MSS $((LINK_MTU - 40))" \
	$((LINK_MTU - 40)) "$(synack_mss)"
both_ways "small link in the middle, R clamps"
dropped=$(nsx "$R" nft list table inet noicmp |
	awk '/counter/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }')
ktap_diag "ICMP errors R dropped: $dropped"

ktap_finish
