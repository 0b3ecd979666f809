#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Path outage and reconnection. While C pings S, R drops
# everything (netem loss 100% on both its links) for 20 s. The module
# takes data that goes unanswered for 5 s as a dead path and dials again
# (a new connection from a new source port, SYN retransmitted every
# second, a new attempt every 5 s); once R forwards again, one of those
# attempts completes its TCP handshake and key exchange and traffic flows
# within 10 s, with no user action. Before that: a path that works but
# goes quiet (S pinged C last) must not be taken for dead.
#
# Then the server goes away and comes back with the same keys: its
# device is deleted while C pings, and created and configured anew once
# C has started dialling again. Both ends run in one kernel here, so
# unloading the module would take C's device too; deleting S's device
# drops what an unload drops on S's side (its connections, sessions and
# the device's SYN-cookie key; the host stack answers C's segments with
# RSTs meanwhile), which is what C sees when the server's module is
# reloaded. Again traffic flows within 10 s of its return.
#
#   ns C (initiator)         ns R (router)                  ns S (responder)
#   +--------------------+  +--------------------------+   +--------------------+
#   | ping 10.9.0.2      |  | netem loss 100% on vethc |   | ftv0 10.9.0.2      |
#   | ftv0 10.9.0.1      |  |   and veths for 20 s     |   |   :51820, deleted  |
#   | in/out: ct state   |  | forward: ct state        |   |   and re-created   |
#   |   invalid drop     |  |   invalid drop           |   | in/out: ct state   |
#   |                    |  | masquerade out of veths  |   |   invalid drop     |
#   | veth0 192.168.10.2 |--| vethc 192.168.10.1       |   |                    |
#   |                    |  |   tcpdump (SYNs)         |   |                    |
#   |                    |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   +--------------------+  +--------------------------+   +--------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

OUTAGE=20

for tool in nft tc tcpdump; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 11
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
paths_nat || ktap_bail "cannot set up NAT on R"
paths_strict_router || ktap_bail "cannot set up R's conntrack rules"
paths_strict_endpoints "$C" "$S" || ktap_bail "cannot set up the endpoints' rules"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
pub_c=$(pubkey_of c)
pub_s=$(pubkey_of s)
tmpdir

mark=$(kmsg_mark)
if connect_ping "$C" 10.9.0.2; then
	ktap_ok "C reaches S"
else
	ktap_fail "C reaches S"
	ktap_bail "no tunnel"
fi
port0=$(paths_client_ports "$mark" | tail -n 1)
ktap_diag "C's connection is from port $port0"

# A path that works but goes quiet is not a dead one. When S's pings end,
# the last message was C's reply: S answers it with a keepalive (after
# 2 s), so C must not take the path for dead and dial again.
mark=$(kmsg_mark)
nsx "$S" ping -q -c 3 -i 0.2 -W 1 10.9.0.1 >/dev/null 2>&1
redial() { [ -n "$(paths_client_ports "$mark")" ]; }
if wait_for 8 redial; then
	ktap_fail "a quiet path is not taken for dead: no new connection 8 s after S's pings"
	dmesg_since "$mark" | grep ftv | ktap_diag
else
	ktap_ok "a quiet path is not taken for dead: no new connection 8 s after S's pings"
fi
hs0=$(ftv_peer_json "$C" ftv0 "$pub_s" 'p["last_handshake"]')

show_state()
{
	nsx "$C" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	nsx "$S" "$FTVCTL" show ftv0 2>&1 | ktap_diag
}

elapsed()
{
	awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", e - s }'
}

# ---- the outage
# Not through nsx, so that $! is tcpdump itself.
ip netns exec "$R" tcpdump -n -U -i vethc -w "$FTV_TMP/syn.pcap" \
	"tcp port $FTV_PORT and tcp[tcpflags] & tcp-syn != 0" \
	2>"$FTV_TMP/tcpdump.err" &
tpid=$!
bg_track "$tpid"
capturing() { grep -q "listening on" "$FTV_TMP/tcpdump.err"; }
wait_for 10 capturing || ktap_bail "tcpdump did not start: $(cat "$FTV_TMP/tcpdump.err")"

mark=$(kmsg_mark)
{ netem "$R" vethc loss 100% && netem "$R" veths loss 100%; } ||
	ktap_bail "cannot cut the path with netem"
bg_ping "$C" 10.9.0.2 outage
# The outage is what is being tested: it lasts its time.
sleep "$OUTAGE"
bg_ping_stop outage
attempts=$(paths_client_ports "$mark" | wc -l)
netem_off "$R" vethc
netem_off "$R" veths
start=$EPOCHREALTIME
ktap_eq "nothing got through during the $OUTAGE s cut ($PING_SENT pings sent)" 0 "$PING_GOT"

if [ "$attempts" -ge 2 ]; then
	ktap_ok "C dialled again during the cut ($attempts attempts)"
else
	ktap_fail "C dialled again during the cut ($attempts attempts)"
fi

if connect_ping "$C" 10.9.0.2 10; then
	ktap_ok "traffic flows again within 10 s of the restore"
	ktap_diag "after $(elapsed "$start")"
else
	ktap_fail "traffic flows again within 10 s of the restore"
	show_state
fi
ktap_check "S reaches C" nsx "$S" ping -c 3 -i 0.2 -W 1 10.9.0.1

kill -INT "$tpid"
wait "$tpid" 2>/dev/null
# The SYN-ACKs that R passed on to C: handshakes that could complete.
synack_ports=$(tcpdump -n -r "$FTV_TMP/syn.pcap" 2>/dev/null |
	sed -n "s/.* > $C_LAN4\.\([0-9]*\): Flags \[S\.\].*/\1/p" | sort -u)
new=$(grep -vx "$port0" <<<"$synack_ports" | tr '\n' ' ')
if [ -n "$new" ]; then
	ktap_ok "a new TCP handshake from a new source port (was $port0, now $new)"
else
	ktap_fail "a new TCP handshake from a new source port"
	ktap_diag "ports that got a SYN-ACK after the cut: ${synack_ports:-none}; old port $port0"
	tcpdump -n -r "$FTV_TMP/syn.pcap" 2>/dev/null | tail -n 20 | ktap_diag
fi
hs1=$(ftv_peer_json "$C" ftv0 "$pub_s" 'p["last_handshake"]')
if [ "${hs1:-0}" -gt "${hs0:-0}" ]; then
	ktap_ok "C has a new session (last handshake $hs0 -> $hs1)"
else
	ktap_fail "C has a new session (last handshake $hs0 -> $hs1)"
fi

# ---- the server goes away and comes back with the same keys
port1=$(paths_client_ports "$mark" | tail -n 1)
mark=$(kmsg_mark)
bg_ping "$C" 10.9.0.2 restart
ip -n "$S" link del ftv0 || ktap_bail "cannot delete S's device"
dialling() { [ -n "$(paths_client_ports "$mark")" ]; }
if wait_for 15 dialling; then
	ktap_ok "C notices that S is gone and dials again"
else
	ktap_fail "C notices that S is gone and dials again"
fi
{ ftv_dev "$S" 2 && paths_ftv_server; } || ktap_bail "cannot bring S's device back"
start=$EPOCHREALTIME
if connect_ping "$C" 10.9.0.2 10; then
	ktap_ok "traffic flows again within 10 s of S's return"
	ktap_diag "after $(elapsed "$start"); C's ports since S left: $(paths_client_ports "$mark" | tr '\n' ' ')(before: $port1)"
else
	ktap_fail "traffic flows again within 10 s of S's return"
	show_state
fi
bg_ping_stop restart

ep=$(paths_endpoint_of "$S" ftv0 "$pub_c" 2>&1)
hs=$(ftv_peer_json "$S" ftv0 "$pub_c" 'p["last_handshake"]' 2>&1)
if [[ "$ep" =~ ^198\.51\.100\.1:[0-9]+$ ]] && [ "${hs:-0}" -gt 0 ]; then
	ktap_ok "the new server has a session with C ($ep)"
else
	ktap_fail "the new server has a session with C"
	ktap_diag "endpoint: $ep, last handshake: $hs"
fi

ktap_finish
