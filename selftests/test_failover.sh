#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A censor blocks the server address a session rides on; the client moves
# to the next address of its endpoint list, losing at most 3 s of pings.
# R, between C and S, delays each way by 20 ms (a 40 ms round trip) and
# keeps strict conntrack; every offload stays at its default. S has two
# addresses, A1 and A2; C's peer has "endpoint A1:port,A2:port" and the
# default flows 1.
#  - the list is set and read back (show --json: endpoints in order,
#    endpoint the first);
#  - with a list, a session keeps a join up even with flows 1 (flows_up 2),
#    so that a blocked address shows within half a second;
#  - C pings S at 10 Hz; R drops everything to and from A1 mid-run: C's
#    current endpoint becomes A2, R's conntrack has an established
#    connection to A2, and the pings lost add up to 3 s at most;
#  - C's monitor printed a failover event that names A2;
#  - no message failed authentication and none was taken for a replay;
#  - every object created was destroyed.
#
#   ns C (initiator)          ns R (router, censor)              ns S (responder)
#   +--------------------+   +--------------------------------+  +---------------------+
#   | ftv0 10.9.0.1      |   | netem delay 20ms each way      |  | ftv0 10.9.0.2       |
#   |   endpoint A1,A2   |   | ct state invalid drop          |  |   :51820            |
#   | veth0 192.168.10.2 |---| later: A1 dropped both ways    |--| veth0 A1 198.51.100.2|
#   +--------------------+   +--------------------------------+  |       A2 198.51.100.3|
#                                                                 +---------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

ktap_plan 9
ftv_require
for tool in conntrack tc nft ping; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done

A1=$S_PUB4
A2=198.51.100.3
kmark=$(kmsg_mark)
paths_censor 20ms || ktap_bail "cannot set up the namespaces and R"
ip -n "$S" addr add "$A2/24" dev veth0 || ktap_bail "cannot give S a second address"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
C_KEY=$(pubkey_of c)

# C listens for peer events before the list is set.
# Not through nsx, so that $! is ftvctl itself.
ip netns exec "$C" "$FTVCTL" monitor ftv0 --json >"$FTV_TMP/events" 2>&1 &
bg_track "$!"
wait_for 5 netlink_subscribed "$C" || ktap_diag "no sign yet that C's monitor listens"

nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" endpoint "$A1:$FTV_PORT, $A2:$FTV_PORT" ||
	ktap_bail "ftvctl peer set ... endpoint A1,A2 failed"
ktap_eq "the list is read back in order, A1 current (show --json)" \
	"$A1:$FTV_PORT $A1:$FTV_PORT,$A2:$FTV_PORT" \
	"$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["endpoint"] + " " + ",".join(p["endpoints"])')"

endpoint_now() { paths_endpoint_of "$C" ftv0 "$S_KEY"; }
endpoint_is() { [ "$(endpoint_now)" = "$1" ]; }
flows_up_is() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]')" = "$1" ]; }
# established_to ADDR : connections to ADDR:port that R's conntrack has as
# established
established_to()
{
	nsx "$R" conntrack -L -p tcp -d "$1" --dport "$FTV_PORT" --state ESTABLISHED 2>/dev/null |
		grep -c "dport=$FTV_PORT"
}
# auth_drops : messages C and S dropped as forged or replayed
auth_drops()
{
	local c s

	c=$(ftv_peer_json "$C" ftv0 "$S_KEY" \
		'sum(p["drops"].get(k, 0) for k in ("bad_auth", "replay"))')
	s=$(ftv_peer_json "$S" ftv0 "$C_KEY" \
		'sum(p["drops"].get(k, 0) for k in ("bad_auth", "replay"))')
	echo $((c + s))
}

connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
if wait_for 10 flows_up_is 2; then
	ktap_ok "a list keeps a join up with flows 1 (flows_up 2)"
else
	ktap_fail "a list keeps a join up with flows 1 (flows_up 2)"
	nsx "$C" "$FTVCTL" show ftv0 2>&1 | ktap_diag
fi

# ---- pings at 10 Hz; A1 blocked on R after 3 s; 8 s more
ip netns exec "$C" ping -n -i 0.1 -W 1 10.9.0.2 >"$FTV_TMP/ping" 2>&1 &
ping_pid=$!
bg_track "$ping_pid"
sleep 3
nsx "$R" nft -f - <<NFT || ktap_bail "cannot block A1 on R"
table ip censor {
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		ip daddr $A1 counter drop
		ip saddr $A1 counter drop
	}
}
NFT
blocked_at=$(date +%s%N)
if wait_for 10 endpoint_is "$A2:$FTV_PORT"; then
	ktap_ok "C's current endpoint moved to A2"
	ktap_diag "within $((($(date +%s%N) - blocked_at) / 1000000)) ms of the block (as polled)"
else
	ktap_fail "C's current endpoint moved to A2"
	ktap_diag "endpoint: $(endpoint_now)"
	dmesg_since "$kmark" | grep -i ftv | tail -n 30 | ktap_diag
fi
sleep 8
kill -INT "$ping_pid" 2>/dev/null
wait "$ping_pid" 2>/dev/null
read -r sent got < <(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1 \2/p' \
	"$FTV_TMP/ping")
sent=${sent:-0}
got=${got:-0}
# The longest run of sequence numbers that got no reply, in pings.
gap=$(sed -n 's/.*icmp_seq=\([0-9]*\) .*/\1/p' "$FTV_TMP/ping" | sort -n |
	awk 'NR > 1 && $1 - last - 1 > max { max = $1 - last - 1 } { last = $1 } END { print max + 0 }')
ktap_diag "pings: $sent sent, $got answered, longest gap $gap pings"
ktap_result "at most 3 s of pings lost (30 at 10 Hz): lost $((sent - got))" \
	"$([ "$sent" -gt 100 ] && [ $((sent - got)) -le 30 ]; echo $?)"

a2_established() { [ "$(established_to "$A2")" -ge 1 ]; }
if wait_for 5 a2_established; then
	ktap_ok "R's conntrack has an established connection to A2"
else
	ktap_fail "R's conntrack has an established connection to A2"
	nsx "$R" conntrack -L -p tcp 2>/dev/null | ktap_diag
fi

# failover_told : C's monitor printed a failover event for S naming A2
failover_told()
{
	"$PYTHON" - "$FTV_TMP/events" "$S_KEY" "$A2:$FTV_PORT" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
sys.exit(not any(e["event"] == "failover" and e["peer"] == sys.argv[2] and
                 e["endpoint"] == sys.argv[3] for e in ev))
PY
}
if wait_for 5 failover_told; then
	ktap_ok "C's monitor printed a failover event naming A2"
else
	ktap_fail "C's monitor printed a failover event naming A2"
	ktap_diag <"$FTV_TMP/events"
fi
ktap_eq "the list is unchanged, A2 current" \
	"$A2:$FTV_PORT $A1:$FTV_PORT,$A2:$FTV_PORT" \
	"$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["endpoint"] + " " + ",".join(p["endpoints"])')"

ktap_eq "no message failed authentication or was taken for a replay" 0 "$(auth_drops)"
nsx "$R" nft delete table ip censor
ip -n "$C" link del ftv0
ip -n "$S" link del ftv0
objects_balanced "$kmark" 30
ktap_finish
