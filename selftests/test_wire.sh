#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What ftv puts on the wire looks like one TCP connection: a capture of
# the underlay during connect and pings is checked by wirecheck.py.
#
#   ns A (initiator)                           ns B (responder)
#   +----------------------------+            +----------------------------+
#   | ftv0 10.9.0.1/24           |            | ftv0 10.9.0.2/24           |
#   | veth0 10.0.0.1/24  tcpdump |------------| veth0 10.0.0.2/24 :51820   |
#   +--------------------^-------+            +----------------------------+
#                        capture (pcap)
#
# ARP and ICMPv6 neighbour/multicast-listener discovery on veth0 belong
# to the underlay link itself, not to ftv, and are left out; everything
# else must be TCP between 10.0.0.1 and 10.0.0.2. Checked: the first three
# segments are SYN, SYN-ACK, ACK; SYN and SYN-ACK carry MSS, SACK-permitted,
# timestamps and window scale; no RST from either host; sequence numbers
# advance by the payload length; ACKs stay within the peer's data; every
# segment has timestamps that never go back.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

CHECKS="only_tcp handshake syn_options synack_options no_rst seq acks timestamps"

command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"
ktap_plan 10
ftv_require

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir

# Not through nsx: $! must be tcpdump's pid (ip netns exec execs it).
ip netns exec "$A" tcpdump -Z root -n -U -i veth0 -w "$FTV_TMP/wire.pcap" \
	2>"$FTV_TMP/tcpdump.err" &
tpid=$!
bg_track "$tpid"
capturing()
{
	grep -q "listening on" "$FTV_TMP/tcpdump.err"
}
wait_for 10 capturing || ktap_bail "tcpdump did not start: $(cat "$FTV_TMP/tcpdump.err")"

ok=0
connect_ping "$A" 10.9.0.2 && ok=1
nsx "$A" ping -q -c 3 -i 0.2 -W 2 -s 1200 10.9.0.2 >/dev/null || ok=0
nsx "$B" ping -q -c 3 -i 0.2 -W 2 10.9.0.1 >/dev/null || ok=0
ktap_result "pings through the tunnel during the capture" $((1 - ok))

kill -INT "$tpid"
stopped()
{
	! kill -0 "$tpid" 2>/dev/null
}
wait_for 10 stopped
wait "$tpid" 2>/dev/null
ktap_diag "$(tail -n 3 "$FTV_TMP/tcpdump.err" | head -n 1)"

result=$("$PYTHON" "$FTV_ROOT/selftests/lib/wirecheck.py" "$FTV_TMP/wire.pcap" \
	10.0.0.1 10.0.0.2 "$FTV_PORT" 2>&1)
wire_ok=1
for c in $CHECKS; do
	line=$(grep -E "^(PASS|FAIL) $c:" <<<"$result")
	case $line in
	PASS*)
		ktap_ok "wire: $c"
		;;
	*)
		wire_ok=0
		ktap_fail "wire: $c"
		ktap_diag "${line:-no result}"
		;;
	esac
done
grep '^#' <<<"$result"
if [ "$wire_ok" = 0 ]; then
	ktap_diag "the capture (tcpdump -r, first 30 packets):"
	tcpdump -n -r "$FTV_TMP/wire.pcap" -c 30 2>/dev/null | ktap_diag
	grep -vE '^(PASS|FAIL|#)' <<<"$result" | ktap_diag
fi

# The host TCP stacks never answered: their RST counters did not move.
rsts=0
for ns in "$A" "$B"; do
	# shellcheck disable=SC2016 # awk program
	n=$(nsx "$ns" awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "OutRsts") c = i; h = 1 } else print $c }' /proc/net/snmp)
	rsts=$((rsts + ${n:-0}))
done
ktap_eq "host TCP stacks sent no RST (TcpOutRsts)" 0 "$rsts"

ktap_finish
