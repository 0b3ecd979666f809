#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# No fixed byte patterns: over a capture of more than a thousand
# payloads in both directions (sealed data, keepalives and, since sessions
# are renewed every 10 messages here, well over a hundred key exchange
# messages), no byte position holds one value in more than a fifth of the
# payloads, and neither do the key exchange messages alone. Key exchange
# messages and keepalives come in many lengths.
#
#   ns A (initiator)                             ns B (responder)
#   +---------------------------+               +---------------------------+
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24 :51820  |
#   +---------------------------+               |  tcpdump                  |
#                                               +---------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

PKT="$FTV_ROOT/selftests/lib/ftvpkt.py"
PARAMS=/sys/module/ftv/parameters
MAX_SHARE=0.20

ktap_plan 6
ftv_require
ftv_use_debug_module
command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"

old_rekey=$(cat "$PARAMS/rekey_after_messages")
defer "echo $old_rekey >$PARAMS/rekey_after_messages"
echo 10 >"$PARAMS/rekey_after_messages"

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir

ip netns exec "$B" tcpdump -n -U -i veth0 -w "$FTV_TMP/all.pcap" tcp 2>/dev/null &
tcpdump_pid=$!
bg_track "$tcpdump_pid"
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"
nsx "$A" ping -q -c 1200 -i 0.01 -W 1 10.9.0.2 >"$FTV_TMP/ping" 2>&1
# Idle with keepalives every second: padded keepalives, both ways.
pub_a=$(pubkey_of a)
pub_b=$(pubkey_of b)
nsx "$A" "$FTVCTL" peer set ftv0 "$pub_b" persistent-keepalive 1
nsx "$B" "$FTVCTL" peer set ftv0 "$pub_a" persistent-keepalive 1
before=$(ftv_peer_json "$A" ftv0 "$pub_b" 'p["rx_bytes"]')
# An echo request is 84 bytes, sealed 108, in a 160-byte IPv4 packet;
# B sends nothing else of another size but key exchange and keepalives.
keepalives()
{
	[ "$(tcpdump -n -r "$FTV_TMP/all.pcap" \
		"src host 10.0.0.2 and tcp[tcpflags] & tcp-push != 0 and ip[2:2] != 160" \
		2>/dev/null | wc -l)" -ge "$1" ]
}
n0=$(tcpdump -n -r "$FTV_TMP/all.pcap" "src host 10.0.0.2 and tcp[tcpflags] & tcp-push != 0 and ip[2:2] != 160" 2>/dev/null | wc -l)
wait_for 60 keepalives $((n0 + 10)) || ktap_diag "fewer than 10 keepalives from B"
kill "$tcpdump_pid"
wait "$tcpdump_pid" 2>/dev/null
ktap_diag "$(grep -E 'packets transmitted' "$FTV_TMP/ping")"
ktap_eq "keepalives deliver no bytes" "$before" \
	"$(ftv_peer_json "$A" ftv0 "$pub_b" 'p["rx_bytes"]')"

pairs=10.0.0.1,10.0.0.2,10.0.0.2,10.0.0.1
check_share()
{
	local desc=$1 min=$2 out n share where
	shift 2
	out=$("$PYTHON" -S "$PKT" stats "$FTV_TMP/all.pcap" "$pairs" 64 "$@")
	read -r n share where <<<"$out"
	if [ "${n:-0}" -ge "$min" ] &&
	   awk -v s="$share" -v m="$MAX_SHARE" 'BEGIN { exit !(s < m) }'; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc"
	fi
	ktap_diag "$n payloads; most common value at any of the first 64 positions: share $share (position $where)"
}
check_share "no near-constant byte in $((1000))+ payloads" 1000
check_share "no near-constant byte in 100+ key exchange messages" 100 first

lengths() { "$PYTHON" -S "$PKT" lengths "$FTV_TMP/all.pcap" "$@"; }
count_lengths() { lengths "$@" | wc -l; }
n=$(count_lengths 10.0.0.1 10.0.0.2 first)
if [ "$n" -ge 10 ]; then
	ktap_ok "initiations come in many lengths ($n)"
else
	ktap_fail "initiations come in many lengths ($n)"
fi
n=$(count_lengths 10.0.0.2 10.0.0.1 first)
if [ "$n" -ge 10 ]; then
	ktap_ok "responses come in many lengths ($n)"
else
	ktap_fail "responses come in many lengths ($n)"
fi
# After the key exchange, B sends only echo replies (84 + 24 bytes) and
# keepalives.
n=$(lengths 10.0.0.2 10.0.0.1 rest | grep -vxc 108)
if [ "$n" -ge 3 ]; then
	ktap_ok "keepalives come in several lengths ($n)"
else
	ktap_fail "keepalives come in several lengths ($n)"
fi

ktap_finish
