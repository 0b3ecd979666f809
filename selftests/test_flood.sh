#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bounded work for strangers: while A moves a file through its
# tunnel, a stranger at another address who knows B's public key (and so
# can make SYN tokens) completes 10,000 fake TCP handshakes with B's
# listen port and sends a forged initiation on each. The transfer
# must arrive intact, A's session must stay, and B must account for every
# forgery in its device counters: nearly all refused by the rate limit
# before any key exchange work, the rest failing authentication (or, for
# the few whose TCP handshake went stale, no_session).
#
#   ns A                                          ns B (responder)
#   +-------------------------------+            +---------------------------+
#   | nc -> 10.9.0.2 (ftv0 10.9.0.1)|            | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24: tunnel     |------------| veth0 10.0.0.2/24 :51820  |
#   |       10.0.0.3/24: stranger   |            |                           |
#   +-------------------------------+            +---------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

FLOOD="$FTV_ROOT/selftests/lib/ftvflood.py"
FORGED=${FTV_FLOOD_COUNT:-10000}
SIZE_MB=${FTV_FLOOD_MB:-20}
TCP_PORT=5001
PER_SOURCE_RATE=20	# module/ratelimiter.h
PER_SOURCE_BURST=10

ktap_plan 6
ftv_require
command -v nc >/dev/null || ktap_skip_all "nc (netcat-openbsd) is not installed"

pair_underlay 4 || ktap_bail "cannot set up the underlay"
ip -n "$A" addr add 10.0.0.3/24 dev veth0 || ktap_bail "no stranger address"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"
pub_a=$(pubkey_of a)

head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom >"$FTV_TMP/send"
ip netns exec "$B" nc -l "$TCP_PORT" >"$FTV_TMP/recv" &
rpid=$!
bg_track "$rpid"
listening() { nsx "$B" ss -Hltn "sport = :$TCP_PORT" | grep -q .; }
wait_for 10 listening || ktap_bail "nc does not listen in B"

# Under load the receiving CPU's backlog may overflow before any hook runs;
# those packets are counted in /proc/net/softnet_stat instead.
backlog_drops()
{
	local sum=0 _ dropped
	while read -r _ dropped _; do
		sum=$((sum + 16#$dropped))
	done </proc/net/softnet_stat
	echo "$sum"
}
lost0=$(backlog_drops)
ip netns exec "$A" "$PYTHON" "$FLOOD" 10.0.0.3 10.0.0.2 "$FTV_PORT" "$FORGED" \
	"$(pubkey_of b)" >"$FTV_TMP/flood" &
fpid=$!
bg_track "$fpid"
nsx "$A" timeout 600 nc -N 10.9.0.2 "$TCP_PORT" <"$FTV_TMP/send" &
spid=$!
wait "$fpid"
read -r sent secs <"$FTV_TMP/flood"
wait "$spid"
done_rx() { ! kill -0 "$rpid" 2>/dev/null; }
wait_for 120 done_rx

ktap_eq "the transfer arrived intact during the flood" \
	"$(sha256sum <"$FTV_TMP/send" | cut -d' ' -f1)" \
	"$(sha256sum <"$FTV_TMP/recv" | cut -d' ' -f1)"
if [ "${sent:-0}" -ge "$FORGED" ]; then
	ktap_ok "$sent forged initiations sent in $secs s"
else
	ktap_fail "$FORGED forged initiations sent (only ${sent:-0})"
fi
# The forgeries must not reach A's session at all. (Whether A renews it
# during the run depends on the machine's load, via dead-path detection.)
ktap_eq "no forgery reached A's session on B (its drops stay 0)" 0 \
	"$(ftv_peer_json "$B" ftv0 "$pub_a" 'sum(p["drops"].values())')"

counted()
{
	read -r limited auth other < <(ftv_json "$B" ftv0 \
		'"%d %d %d" % (d["drops"]["ratelimited"], d["drops"]["bad_auth"], d["drops"]["no_session"] + d["drops"]["malformed"])')
	lost=$(($(backlog_drops) - lost0))
	[ $((limited + auth + other + lost)) -ge "$sent" ]
}
if wait_for 30 counted; then
	ktap_ok "every forgery is accounted for ($((limited + auth + other + lost)) >= $sent)"
else
	ktap_fail "every forgery is accounted for ($((limited + auth + other + lost)) < $sent)"
fi
ktap_diag "ratelimited $limited, bad_auth $auth, no_session + malformed $other, lost in the backlog $lost"
budget=$(awk -v s="$secs" -v r="$PER_SOURCE_RATE" -v b="$PER_SOURCE_BURST" \
	'BEGIN { printf "%d", (s + 5) * r + b }')
if [ "$auth" -le "$budget" ]; then
	ktap_ok "key exchange work stayed within the rate limit ($auth <= $budget)"
else
	ktap_fail "key exchange work stayed within the rate limit ($auth > $budget)"
fi
ktap_check "the tunnel still answers" ping_ok "$A" 10.9.0.2

ktap_finish
