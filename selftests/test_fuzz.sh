#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet fuzzing: while transfers run through the tunnel, A
# throws a million crafted IPv4 segments (selftests/ftvfuzz.c) at B's
# listen port and at the live connection's 4-tuple: IP headers the IP
# layer refuses, TCP headers cut short, bad data offsets and options, random
# payloads with and without a connection, SYNs, and genuine segments of the
# tunnel replayed or with one bit flipped. The transfers must arrive
# intact, the session must stay the same, the kernel must report nothing,
# and B's counters must account for what ftv should take, exactly, less
# whatever never reached ftv (the receive backlogs' drops, from
# /proc/net/softnet_stat):
#   bad_auth, replay, out_of_window (peer)  every segment on the live
#       tuple: random payloads, genuine segments sent again or with a bit
#       flipped; which of the three depends on where its sequence number
#       falls against the receive window
#   syn_refused (device)  SYNs without a token, which the host answers
# Everything else ftv must leave to the host (token.c): B's other device
# counters do not move. The host's IP and TCP layers drop the junk and
# answer the SYNs with resets.
#
#   ns A (initiator)                             ns B (responder)
#   +---------------------------+               +---------------------------+
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24          |
#   | nc (4 MB transfers)       |               | nc -l | sha256sum         |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24 :51820  |
#   |  ftvfuzz (AF_PACKET)      |               |  tcpdump (genuine)        |
#   +---------------------------+               +---------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FUZZ=$FTV_ROOT/selftests/ftvfuzz
COUNT=${FTV_FUZZ_COUNT:-1000000}
PARAMS=/sys/module/ftv/parameters

ktap_plan 8
ftv_require
ftv_use_debug_module
command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"
[ -x "$FUZZ" ] || ktap_bail "$FUZZ is not built (make -C selftests)"

# One session from start to end: a renewal would move the live tuple.
for p in rekey_after_seconds reject_after_seconds; do
	defer "echo $(cat "$PARAMS/$p") >$PARAMS/$p"
done
echo 3600 >"$PARAMS/reject_after_seconds"
echo 3000 >"$PARAMS/rekey_after_seconds"

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"
mark=$(kmsg_mark)
pub_a=$(pubkey_of a)

# Genuine data segments of the live connection, as B receives them.
ip netns exec "$B" tcpdump -n -U -c 200 -i veth0 -w "$FTV_TMP/genuine.pcap" \
	"src host 10.0.0.1 and tcp dst port $FTV_PORT and greater 200" \
	2>"$FTV_TMP/tcpdump.err" &
tpid=$!
bg_track "$tpid"
capturing() { grep -q "listening on" "$FTV_TMP/tcpdump.err"; }
wait_for 10 capturing || ktap_bail "tcpdump did not start"
nsx "$A" ping -q -c 250 -i 0.01 -s 300 10.9.0.2 >/dev/null 2>&1
captured() { ! kill -0 "$tpid" 2>/dev/null; }
wait_for 10 captured || ktap_bail "fewer than 200 genuine segments captured"

endpoint=$(ftv_peer_json "$B" ftv0 "$pub_a" 'p["endpoint"]')
live_port=${endpoint##*:}
mac=$(nsx "$B" cat /sys/class/net/veth0/address)

peer_drop() { ftv_peer_json "$B" ftv0 "$pub_a" "p['drops']['$1']"; }
backlog_drops()
{
	local n=0 d
	while read -r _ d _; do
		n=$((n + 16#$d))
	done </proc/net/softnet_stat
	echo "$n"
}
tuple_drops()
{
	ftv_peer_json "$B" ftv0 "$pub_a" \
		"sum(p['drops'][k] for k in ('bad_auth', 'replay', 'out_of_window'))"
}
tuple0=$(tuple_drops)
split0="$(peer_drop bad_auth) $(peer_drop replay) $(peer_drop out_of_window)"
dev_drop() { ftv_json "$B" ftv0 "d['drops']['$1']"; }
dev_other() { ftv_json "$B" ftv0 "sum(d['drops'].values()) - d['drops']['syn_refused']"; }
refused0=$(dev_drop syn_refused)
dev0=$(dev_other)
backlog0=$(backlog_drops)

# Transfers one after another until the fuzzer is done.
random_file data 4
(
	i=0
	while [ ! -e "$FTV_TMP/fuzz.done" ]; do
		i=$((i + 1))
		if transfer "$A" "$B" 10.9.0.2 $((5000 + i)) "$FTV_TMP/data" 120 >/dev/null; then
			echo ok >>"$FTV_TMP/transfers"
		else
			echo fail >>"$FTV_TMP/transfers"
		fi
	done
) &
loop=$!
bg_track "$loop"
started() { [ -s "$FTV_TMP/transfers" ] || nsx "$B" ss -Hltn "sport = :5001" | grep -q .; }
wait_for 10 started || ktap_diag "the first transfer did not start"

nsx "$A" "$FUZZ" veth0 "$mac" 10.0.0.1 10.0.0.2 "$FTV_PORT" "$COUNT" \
	"$live_port" "$FTV_TMP/genuine.pcap" >"$FTV_TMP/fuzz.out" 2>&1
rc=$?
touch "$FTV_TMP/fuzz.done"
ktap_diag "ftvfuzz: $(grep -v '^expect' "$FTV_TMP/fuzz.out" | tr '\n' ' ')"
total=$(awk '$1 == "total" { print $2 }' "$FTV_TMP/fuzz.out")
ktap_eq "ftvfuzz sent $COUNT segments" "0 $COUNT" "$rc ${total:-0}"

loop_done() { ! kill -0 "$loop" 2>/dev/null; }
wait_for 150 loop_done || ktap_diag "the last transfer did not end"
ok=$(grep -c '^ok' "$FTV_TMP/transfers" 2>/dev/null)
bad=$(grep -c '^fail' "$FTV_TMP/transfers" 2>/dev/null)
if [ "${ok:-0}" -ge 2 ] && [ "${bad:-0}" -eq 0 ]; then
	ktap_ok "$ok transfers of 4 MB during the fuzzing, all intact"
else
	ktap_fail "$ok transfers of 4 MB during the fuzzing, all intact ($bad failed)"
fi

ktap_eq "the session was not replaced (B's endpoint for A)" "$endpoint" \
	"$(ftv_peer_json "$B" ftv0 "$pub_a" 'p["endpoint"]')"
ktap_check "the tunnel still answers" ping_ok "$A" 10.9.0.2

# accounted NAME WANT GOT : GOT is WANT, less what the backlog dropped
lost=$(($(backlog_drops) - backlog0))
[ "$lost" -gt 0 ] && ktap_diag "$lost frames dropped by receive backlogs before any hook"
accounted()
{
	local want
	want=$(awk -v k="$1" '$1 == "expect" && $2 == k { print $3 }' "$FTV_TMP/fuzz.out")
	if [ -n "$want" ] && [ "$2" -le "$want" ] && [ "$2" -ge $((want - lost)) ]; then
		ktap_ok "$1: $2 counted for $want sent"
	else
		ktap_fail "$1: $2 counted for ${want:-?} sent (backlog drops: $lost)"
	fi
}
accounted tuple $(($(tuple_drops) - tuple0))
ktap_diag "bad_auth replay out_of_window: $split0 before," \
	"$(peer_drop bad_auth) $(peer_drop replay) $(peer_drop out_of_window) after"
accounted syn_refused $(($(dev_drop syn_refused) - refused0))
ktap_eq "everything else was left to the host (B's other device drops unchanged)" \
	0 $(($(dev_other) - dev0))

reports=$(dmesg_since "$mark" | grep -E "BUG|WARNING|Oops|KASAN|kmemleak|refcount_t|RCU|lockdep|general protection")
ktap_eq "the kernel reported nothing during the fuzzing" "" "$reports"

ktap_finish
