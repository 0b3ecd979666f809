#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer that opens joins of its session and gives each up at once, as
# fast as it can, pins no more on the responder than the documented
# bound (docs/threat-model.md): until 2026-12-02 each join it gave up
# lingered for a minute, outside the cap of 16 joins, and nothing limited
# the rate, so a loop of {join SYN, JOIN_GONE} left a connection and its
# per-CPU route cache behind per round, and other peers' handshakes waited
# on the device's lock behind walks of thousands of them. Now joins are
# taken at most FTV_JOIN_RATE (50) a second per peer, twice a burst of 16,
# and a peer keeps at most FTV_PEER_RETIRED_MAX (1024) connections
# retired or lingering: one more retires the oldest early.
#  - A1 runs the debug build's join_flood for 60 s: every 20 ms or so its
#    connect work sends 2 join SYNs of its session, each from a port of
#    no connection, and gives each up with a JOIN_GONE (about twice what
#    B takes: the numbers B refuses stay in its window, and it takes as
#    many as it may);
#  - meanwhile B's connections alive (created less destroyed, its
#    pr_debug pairs) never exceed 1024 + 16 + 8: the retired ones, a
#    session's live joins, and A1's and A2's openers;
#  - B refused the joins past the rate and counted them (ratelimited);
#  - A2, another peer of B's, starts a new session three times during
#    the flood: each time its first ping is answered within a second;
#  - after the flood both tunnels work, and every connection is freed.
#
# No router: what is tested is B's own state. star_ftv gives each peer
# a cable of its own to B, as the other tests of the responder's limits.
#
#   ns A1 (flooder, flows 2) --- ns B (responder, :51820) --- ns A2

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FLOOD_S=${FTV_JOIN_FLOOD_S:-60}
BOUND=$((1024 + 16 + 8))

ktap_plan 8
ftv_require
ftv_use_debug_module

kmark=$(kmsg_mark)
star_ftv 2 || ktap_bail "cannot set up the star"
B_KEY=$(pubkey_of b)
nsx "$A1" "$FTVCTL" peer set ftv0 "$B_KEY" flows 2 ||
	ktap_bail "ftvctl peer set ... flows 2 failed"
flows_up_is() { [ "$(ftv_peer_json "$A1" ftv0 "$B_KEY" 'p["flows_up"]')" = "$1" ]; }
wait_for 20 flows_up_is 2 || ktap_bail "A1's join did not come up"

B_INUM=$(stat -L -c %i "/run/netns/$B")
# b_alive : B's connections created less those destroyed since the mark
b_alive()
{
	dmesg | awk -v m="$kmark" -v n="net:[$B_INUM]:" '
		found && index($0, n) && / connection [0-9]+:[0-9]+ created/ { c++ }
		found && index($0, n) && / connection [0-9]+:[0-9]+ destroyed/ { d++ }
		index($0, m) { found = 1 }
		END { print c - d }'
}

# a2_renew : A2 starts a new session, and its first ping is answered
# within a second (the key exchange and the ping's round trip)
a2_renew()
{
	nsx "$A2" "$FTVCTL" peer del ftv0 "$B_KEY" &&
		nsx "$A2" "$FTVCTL" peer add ftv0 "$B_KEY" \
			endpoint "10.0.2.2:$FTV_PORT" allowed-ips 10.9.0.2/32 &&
		ip netns exec "$A2" ping -q -c 1 -W 1 10.9.0.2 >/dev/null 2>&1
}

echo 2 >/sys/module/ftv/parameters/join_flood
defer "echo 0 >/sys/module/ftv/parameters/join_flood"
# More flows wanted: A1's connect work runs, and from then on runs again
# after each round of the flood.
nsx "$A1" "$FTVCTL" peer set ftv0 "$B_KEY" flows 3 ||
	ktap_bail "ftvctl peer set ... flows 3 failed"
max=0
renewed=0
start=$SECONDS
while [ $((SECONDS - start)) -lt "$FLOOD_S" ]; do
	n=$(b_alive)
	[ "$n" -gt "$max" ] && max=$n
	elapsed=$((SECONDS - start))
	# Three new sessions of A2's, about 15, 30 and 45 s in.
	if [ "$renewed" -lt 3 ] && [ "$elapsed" -ge $(((renewed + 1) * FLOOD_S / 4)) ]; then
		if a2_renew; then
			renewed=$((renewed + 1))
		else
			ktap_diag "A2's new session: no answer within a second, $elapsed s in"
			renewed=$((renewed + 10))
		fi
	fi
	sleep 1
done
echo 0 >/sys/module/ftv/parameters/join_flood
ktap_diag "B's connections alive at most: $max (bound $BOUND)"
limited=$(ftv_peer_json "$B" ftv0 "$(pubkey_of a1)" 'p["drops"].get("ratelimited", 0)')
ktap_diag "B refused $limited joins over A1's rate"
ktap_result "B's connections alive stay within $BOUND during the flood" \
	"$([ "$max" -le "$BOUND" ]; echo $?)"
ktap_result "B refused joins past A1's rate and counted them (ratelimited)" \
	"$([ "${limited:-0}" -gt 0 ]; echo $?)"
ktap_eq "A2's three new sessions each answered its first ping within a second" \
	3 "$renewed"
ktap_result "A1's tunnel works after the flood" \
	"$(wait_for 10 ping_ok "$A1" 10.9.0.2; echo $?)"
ktap_result "A2's tunnel works after the flood" \
	"$(ping_ok "$A2" 10.9.0.2; echo $?)"
stalls=$(dmesg_since "$kmark" |
	grep -E "rcu.*(stall|detected)|soft lockup|blocked for more than" | head -n 3)
ktap_eq "no RCU stall, soft lockup or blocked task logged" "" "$stalls"

for ns in "$A1" "$A2" "$B"; do
	ip -n "$ns" link del ftv0
done
objects_balanced "$kmark" 60
ktap_eq "no kernel report of a write into freed memory" "" "$(freed_memory_reports "$kmark")"

ktap_finish
