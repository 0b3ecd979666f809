#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer cannot make the server send to an address that is not its own.
# A join's SYN names its source address; until 2026-12-02 the responder
# brought the join up on its first sealed message, acknowledged or not,
# and then sent there: data (a new flow is the least loaded), keepalives
# every 50 ms, a probe's padding. A peer that put a victim's address in
# its SYN (or a router that rewrote it) turned the server into a
# reflector, and the victim's RSTs change nothing at ftv. Now a join is up
# only once a message sealed for it acknowledges the SYN-ACK, which only
# whoever receives at that address has seen.
#  - C's debug build has join_skip_synack: its join does not wait for a
#    SYN-ACK, it takes itself for up as its SYN goes and sends its first
#    message with an acknowledgment it made up;
#  - R rewrites the source address of that join's segments (not the
#    opener's) to V's, without state, as a peer forging its source would;
#  - with S pinging C and C asking S to pad 100 kB on the join, V
#    receives from S's ftv the SYN-ACK and nothing else (what the host
#    answers once S gave the join up, RSTs, it answers any sender), no
#    segment with payload; S never brings the join up (its session's
#    flows stay 1), and the tunnel works throughout.
#
#   ns C (flows 2)            ns R (router)                    ns S (:51820)
#   ftv0 10.9.0.1  ---------  the join's source -> V  --------  ftv0 10.9.0.2
#   192.168.10.2              vethv 203.0.113.1                 198.51.100.2
#                                  |
#                             ns V 203.0.113.9 (tcpdump)

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

V_ADDR=203.0.113.9
PROBE="$FTV_ROOT/selftests/lib/ftvprobe.py"

ktap_plan 5
ftv_require
require_tools nft tcpdump
ftv_use_debug_module

kmark=$(kmsg_mark)
paths_topology || ktap_bail "cannot set up the namespaces"
ns_create V || ktap_bail "cannot make V"
veth_pair "$R" vethv "$V" veth0 || ktap_bail "no cable to V"
ip -n "$R" addr add 203.0.113.1/24 dev vethv
ip -n "$V" addr add "$V_ADDR/24" dev veth0
ip -n "$V" route add default via 203.0.113.1
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
opener=$(paths_client_ports "$kmark" | head -n 1)
[ -n "$opener" ] || ktap_bail "C's opener's port is not in the kernel log"

# R: the join's segments come from V's address.
nsx "$R" nft -f - <<EOF || ktap_bail "cannot set up R's rewriting"
table ip reflect {
	chain pre {
		type filter hook prerouting priority -300;
		ip saddr $C_LAN4 tcp dport $FTV_PORT tcp sport != $opener ip saddr set $V_ADDR
	}
}
EOF
tmpdir
capture "$V" veth0 "$FTV_TMP/v.pcap" "tcp and src host $S_PUB4" ||
	ktap_bail "tcpdump did not start on V"
bg_ping "$S" 10.9.0.1 s
echo 1 >/sys/module/ftv/parameters/join_skip_synack
defer "echo 0 >/sys/module/ftv/parameters/join_skip_synack"
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 2 ||
	ktap_bail "ftvctl peer set ... flows 2 failed"
c_flows_up_is() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]')" = "$1" ]; }
if ! wait_for 10 c_flows_up_is 2; then
	ktap_diag "C never took its join for up"
fi
# C asks S to pad on the join (number 1).
nsx "$C" "$PYTHON" "$PROBE" ftv0 "$S_KEY" pad --index 1 --bytes 100000 \
	--rate 8000 --wait 3 >"$FTV_TMP/pad.json" 2>&1
ktap_diag "the pad's answer: $(head -c 300 "$FTV_TMP/pad.json")"
# What S does with the join shows within its join timeout (3 s) and two
# of its 50 ms ticks; C gives its side up as it goes unanswered. Watched
# for 6 s, or until S brings it up.
s_joined() { [ "$(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["flows_up"]')" -gt 1 ]; }
wait_for 6 s_joined
capture_stop
bg_ping_stop s
# ftv's own segments, and the host's RSTs: once S gave the join up, what
# C still sends on its tuple is the host's, which answers each with a
# RST, as for any port nothing listens on (one for one, and to whoever
# sends them).
ftv_sent=$(tcpdump -n -r "$FTV_TMP/v.pcap" "tcp[tcpflags] & tcp-rst == 0" 2>/dev/null | wc -l)
rsts=$(tcpdump -n -r "$FTV_TMP/v.pcap" "tcp[tcpflags] & tcp-rst != 0" 2>/dev/null | wc -l)
data=$(tcpdump -n -r "$FTV_TMP/v.pcap" "tcp[tcpflags] & tcp-rst == 0 and (ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2)) > 0" 2>/dev/null | wc -l)
tcpdump -n -r "$FTV_TMP/v.pcap" 2>/dev/null | head -n 8 | ktap_diag
ktap_eq "V gets no segment with payload from S (data, keepalives, padding)" 0 "$data"
ktap_result "V gets nothing from S's ftv but the SYN-ACK ($ftv_sent; and $rsts RSTs from S's host)" \
	"$([ "$ftv_sent" -le 1 ]; echo $?)"
ktap_eq "S never brings the join up: its session has one flow up" 1 \
	"$(ftv_peer_json "$S" ftv0 "$C_KEY" 'p["flows_up"]')"
ktap_result "S's pings to C went on (answered: $PING_GOT of $PING_SENT)" \
	"$([ "$PING_GOT" -ge $((PING_SENT - 2)) ]; echo $?)"
ktap_result "the tunnel works" "$(ping_ok "$C" 10.9.0.2; echo $?)"

ktap_finish
