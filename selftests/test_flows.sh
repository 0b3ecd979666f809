#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One session over several fake TCP connections: with "flows 4", C keeps
# three more connections up beside the one its key exchange ran on. Each
# joins the session with a token in its SYN (module/join.c), without a
# key exchange of its own; a router with stateful, strict conntrack
# between the ends must see four valid, established TCP connections.
#  - flows 1 (the default) opens one connection; "peer set ... flows 4"
#    on the running session opens three joins, and R's conntrack lists
#    four established connections to S's listen port, none invalid;
#  - S made one session and four connections for it, and C's show says
#    four are up; ftvctl monitor on each end prints a flow_up event for
#    each join, one of them with flows_up 4;
#  - data crosses the tunnel intact, spread over all four connections
#    (each carried at least a tenth of C's bytes, by R's conntrack);
#  - a join SYN replayed from another address gets the host's RST and no
#    connection, and S counts it (join_replayed);
#  - with rotate 12k, 256 KB from S to C make C give connections up as
#    they carry their budget: its monitor prints flow_rotated events, the
#    highest count in them what C's show counts as rotations;
#  - removing the peer on C, then deleting both devices, frees every
#    connection and session (the pr_debug pairs; under KASAN on the debug
#    kernel, no use after free);
#  - with the debug build's joins_max lowered to 2 on S, flows 4 gets
#    three connections up (S refuses the third join and counts it,
#    flows_refused), and C's show says so (flows_up 3);
#  - a renewal (the debug build's rekey_after_seconds) makes a new
#    session, which gets its own four connections up.
#
#   ns C (initiator)          ns R (router)                    ns S (responder)
#   +--------------------+   +------------------------------+  +--------------------+
#   | ftv0 10.9.0.1      |   | netem delay 10ms each way    |  | ftv0 10.9.0.2      |
#   |   flows 4          |   | ct state invalid drop,       |  |   :51820           |
#   | veth0 192.168.10.2 |---|   no mid-stream pick-up      |--| veth0 198.51.100.2 |
#   +--------------------+   | conntrack -L; ftvpkt (replay)|  +--------------------+
#                            +------------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

PKT="$FTV_ROOT/selftests/lib/ftvpkt.py"

ktap_plan 17
ftv_require
for tool in conntrack tcpdump nc tc; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done

kmark=$(kmsg_mark)
# R counts bytes per connection, for the share each flow carried.
paths_censor 10ms || ktap_bail "cannot set up the namespaces and R"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
capture "$R" veths "$FTV_TMP/r.pcap" "tcp port $FTV_PORT" ||
	ktap_bail "tcpdump did not start"

# established : connections to S's listen port that R's conntrack has as
# established
established()
{
	nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" --state ESTABLISHED 2>/dev/null |
		grep -c "dport=$FTV_PORT"
}
established_is() { [ "$(established)" -eq "$1" ]; }
# flows_up : C's count of its session's connections that are up
flows_up() { ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]'; }
flows_up_is() { [ "$(flows_up)" = "$1" ]; }
# s_made KIND : S's pr_debug lines "KIND 51820:... created" since the mark
s_made() { dmesg_since "$kmark" | grep -c "ftv: ftv0: $1 $FTV_PORT:[0-9]* created"; }

connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
wait_for 5 established_is 1
ktap_eq "flows 1: R's conntrack lists one established connection" 1 "$(established)"

# Each end listens for peer events before the joins open.
declare -A MONITOR_PIDS
for end in c s; do
	ns=$C
	[ "$end" = s ] && ns=$S
	# Not through nsx, so that $! is ftvctl itself.
	ip netns exec "$ns" "$FTVCTL" monitor ftv0 --json >"$FTV_TMP/events.$end" 2>&1 &
	MONITOR_PIDS[$end]=$!
	bg_track "$!"
	wait_for 5 netlink_subscribed "$ns" || ktap_diag "no sign yet that the monitor in $end listens"
done

nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 4 ||
	ktap_bail "ftvctl peer set ... flows 4 failed"
if wait_for 20 established_is 4; then
	ktap_ok "flows 4: R's conntrack lists four established connections"
else
	ktap_fail "flows 4: R's conntrack lists four established connections"
	nsx "$R" conntrack -L -p tcp 2>/dev/null | ktap_diag
fi
ktap_eq "R's strict firewall found no segment invalid" 0 "$(paths_invalid_drops "$R")"
wait_for 5 flows_up_is 4
ktap_eq "C's show says four flows are up (flows_up)" 4 "$(flows_up)"
ktap_eq "S made one session and four connections for it" "1 4" \
	"$(s_made session) $(s_made connection)"

# events END KIND PEER : the flows_up and rotations of END's monitor's KIND
# events about PEER, "flows_up/rotations" each
events()
{
	"$PYTHON" - "$FTV_TMP/events.$1" "$2" "$3" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(" ".join("%s/%s" % (e["flows_up"], e["rotations"]) for e in ev
               if e["event"] == sys.argv[2] and e["peer"] == sys.argv[3]))
PY
}
# joins_told END PEER : END's monitor printed a flow_up for each of the
# three joins, with rotations 0 and 2 to 4 flows up, one of them 4 (two
# joins that come up at once may both count the other, and their events
# may arrive in either order)
joins_told()
{
	local ev
	ev=$(events "$1" flow_up "$2")
	[[ "$ev" =~ ^[234]/0\ [234]/0\ [234]/0$ && " $ev " == *" 4/0 "* ]]
}
for end in c s; do
	key=$S_KEY
	[ "$end" = s ] && key=$C_KEY
	if wait_for 5 joins_told "$end" "$key"; then
		ktap_ok "monitor on $end: a flow_up for each join, one with flows_up 4"
	else
		ktap_fail "monitor on $end: a flow_up for each join, one with flows_up 4"
		ktap_diag <"$FTV_TMP/events.$end"
	fi
done

# shares : the bytes C sent on each connection to S's listen port, as a
# share of their sum, smallest first
shares()
{
	nsx "$R" conntrack -L -p tcp --dport "$FTV_PORT" 2>/dev/null |
		sed -n 's/.*dport='"$FTV_PORT"' packets=[0-9]* bytes=\([0-9]*\).*/\1/p' |
		awk '{ b[NR] = $1; t += $1 } END { for (i = 1; i <= NR; i++) printf "%.2f\n", t ? b[i] / t : 0 }' |
		sort -n | tr '\n' ' '
}
random_file data 4
if transfer "$C" "$S" 10.9.0.2 5001 "$FTV_TMP/data" 120; then
	ktap_ok "4 MB cross the tunnel intact with four flows up"
else
	ktap_fail "4 MB cross the tunnel intact with four flows up"
fi
share=$(shares)
ktap_diag "shares of C's bytes per connection: $share"
ktap_result "the transfer went over all four connections (each at least 0.10)" \
	"$(awk -v s="$share" 'BEGIN { n = split(s, a, " "); ok = n == 4; for (i = 1; i <= n; i++) if (a[i] < 0.10) ok = 0; exit !ok }'; echo $?)"
capture_stop

# ---- a join's SYN, replayed from R's own address
tcpdump -n -r "$FTV_TMP/r.pcap" -w "$FTV_TMP/syns.pcap" \
	"src host $C_LAN4 and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" 2>/dev/null
replayed() { ftv_json "$S" ftv0 'd["drops"].get("join_replayed", 0)'; }
before=$(s_made connection)
capture "$S" veth0 "$FTV_TMP/replay.pcap" "host $R_PUB4 and tcp port $FTV_PORT" ||
	ktap_bail "tcpdump did not start"
# The first SYN opened the session; the last one is a join's.
nsx "$R" "$PYTHON" -S "$PKT" syn "$FTV_TMP/syns.pcap" veths "$R_PUB4" last ||
	ktap_diag "could not replay the join's SYN"
wait_for 10 answered_in "$FTV_TMP/replay.pcap" "$S_PUB4"
capture_stop
ktap_eq "the replayed join SYN gets the host's RST, no SYN-ACK, no connection" \
	"1 0 $before" "$(answers_in "$FTV_TMP/replay.pcap" "$S_PUB4") $(s_made connection)"
ktap_eq "S counts the replayed join (join_replayed)" 1 "$(replayed)"

# ---- rotate 12k: C gives connections up as they carry their budget
rotations() { ftv_peer_json "$C" ftv0 "$S_KEY" 'p["rotations"]'; }
# last_given_up : the highest rotations of C's monitor's flow_rotated and
# flow_stalled events, if there is a flow_rotated and each says how many
# flows are up (a successor comes up before its predecessor is given up:
# more than four may be) and counts itself
last_given_up()
{
	"$PYTHON" - "$FTV_TMP/events.c" "$S_KEY" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [e for e in ev if e["peer"] == sys.argv[2] and
      e["event"] in ("flow_rotated", "flow_stalled")]
rot = [e for e in ev if e["event"] == "flow_rotated"]
assert rot and all(isinstance(e["flows_up"], int) and e["rotations"] >= 1
                   for e in rot), rot
print(max(e["rotations"] for e in ev))
PY
}
told_all() { [ "$(last_given_up)" = "$(rotations)" ]; }
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" rotate 12k ||
	ktap_bail "ftvctl peer set ... rotate 12k failed"
head -c $((256 * 1024)) /dev/urandom >"$FTV_TMP/down"
transfer "$S" "$C" 10.9.0.1 5002 "$FTV_TMP/down" 120 ||
	ktap_diag "256 KB from S to C did not arrive intact"
if wait_for 5 told_all; then
	ktap_ok "rotate 12k: C's monitor prints flow_rotated, its highest count show's rotations ($(rotations))"
else
	ktap_fail "rotate 12k: C's monitor prints flow_rotated, its highest count show's rotations ($(rotations))"
	ktap_diag "highest count in an event: $(last_given_up 2>&1 | tail -n 1)"
	tail -n 20 "$FTV_TMP/events.c" | ktap_diag
fi
for end in c s; do
	kill "${MONITOR_PIDS[$end]}" 2>/dev/null
	wait "${MONITOR_PIDS[$end]}" 2>/dev/null
done

# ---- the peer goes while its joins are up, then both devices
nsx "$C" "$FTVCTL" peer del ftv0 "$S_KEY" ||
	ktap_bail "ftvctl peer del failed"
nsx "$S" "$FTVCTL" peer del ftv0 "$C_KEY" ||
	ktap_bail "ftvctl peer del failed"
ip -n "$C" link del ftv0
ip -n "$S" link del ftv0
objects_balanced "$kmark" 30
ktap_eq "no kernel report of a write into freed memory" "" "$(freed_memory_reports "$kmark")"

# ---- a responder that takes two joins per session (debug build)
ftv_use_debug_module
kmark=$(kmsg_mark)
echo 2 >/sys/module/ftv/parameters/joins_max
nsx "$R" conntrack -F >/dev/null 2>&1
paths_ftv 4 || ktap_bail "cannot configure ftv again"
# paths_ftv made new keys.
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 4 ||
	ktap_bail "ftvctl peer set ... flows 4 failed"
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel on the debug build"
refused() { ftv_peer_json "$S" ftv0 "$C_KEY" 'p["drops"].get("flows_refused", 0)'; }
refused_some() { [ "$(refused)" -ge 1 ]; }
# Under the debug kernel, CI once saw no refusal within 20 s, for a
# cause not found yet: a longer wait, and what both ends show if none
# comes.
wait_for 30 refused_some
wait_for 10 flows_up_is 3
flows_up=$(flows_up)
refusal=$(refused_some && echo yes || echo no)
ktap_eq "joins_max 2: S refuses the third join and counts it; C has 3 flows up" \
	"yes 3" "$refusal $flows_up"
if [ "$refusal" = no ]; then
	nsx "$S" "$FTVCTL" show ftv0 | ktap_diag
	nsx "$C" "$FTVCTL" show ftv0 | ktap_diag
fi
ktap_eq "joins_max 2: R's conntrack lists three established connections" 3 "$(established)"

# ---- a renewal: the new session opens joins of its own
echo 16 >/sys/module/ftv/parameters/joins_max
rekey=$(cat /sys/module/ftv/parameters/rekey_after_seconds)
echo 3 >/sys/module/ftv/parameters/rekey_after_seconds
# renewed : a ping through the tunnel, and S has made a second session
renewed() { ping_ok "$C" 10.9.0.2; [ "$(s_made session)" -ge 2 ]; }
wait_for 30 renewed
echo "$rekey" >/sys/module/ftv/parameters/rekey_after_seconds
wait_for 20 flows_up_is 4
ktap_eq "after a renewal, S made a second session and C has four flows up" \
	"yes 4" "$([ "$(s_made session)" -ge 2 ] && echo yes || echo no) $(flows_up)"

ktap_finish
