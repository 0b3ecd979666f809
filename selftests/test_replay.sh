#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay protection and authentication of data segments.
# Ten of A's data segments are captured on B's side but kept from B's
# module by a netdev ingress rule; injected afterwards in reverse order
# they must all be delivered (reordering within the window is fine). Sent
# again they must all be dropped as replays, and with one bit flipped as
# failed authentication, with nothing delivered to B's inner network.
#
#   ns A (initiator)                             ns B (responder)
#   +---------------------------+               +---------------------------+
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24 :51820  |
#   |  ftvpkt.py injects here   |               |  tcpdump, nft ingress     |
#   +---------------------------+               +---------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

PKT="$FTV_ROOT/selftests/lib/ftvpkt.py"
N=10

ktap_plan 8
ftv_require
ftv_use_debug_module
command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"
command -v nft >/dev/null || ktap_skip_all "nft is not installed"

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"

# While B's module is kept from A's segments, A's pings go unanswered:
# past dead_after_ms A would take the path for dead and dial again, and the
# held segments would belong to a session already replaced. The hold is
# not meant to look like an outage. Nor may the session be renewed while
# the test runs (it takes over four minutes under the debug kernel, past
# the two after which A renews): a replaced session's segments are
# swallowed uncounted once it lingers, and no failed authentication
# would be seen.
PARAMS=/sys/module/ftv/parameters
for p in dead_after_ms rekey_after_seconds reject_after_seconds; do
	[ -w "$PARAMS/$p" ] || ktap_bail "no writable $p parameter"
	defer "echo $(cat "$PARAMS/$p") >$PARAMS/$p"
done
echo 3700 >"$PARAMS/reject_after_seconds"
echo 3600 >"$PARAMS/rekey_after_seconds"
echo 120000 >"$PARAMS/dead_after_ms"

pub_a=$(pubkey_of a)
peer_a() { ftv_peer_json "$B" ftv0 "$pub_a" "$1"; }
rx_packets() { nsx "$B" cat /sys/class/net/ftv0/statistics/rx_packets; }

# Keep A's segments from B's module: netdev ingress runs before it, and
# tcpdump sees packets before ingress.
nsx "$B" nft -f - <<NFT || ktap_bail "cannot add the nft ingress rule"
table netdev hold {
	chain in {
		type filter hook ingress device veth0 priority 0;
		ip saddr 10.0.0.1 tcp dport $FTV_PORT drop
	}
}
NFT
# Not through nsx, so that $! is tcpdump itself.
# Only segments as big as the pings': a keepalive A sends meanwhile (at
# most 63 bytes of padding) carries no packet and would not be delivered.
ip netns exec "$B" tcpdump -n -U -i veth0 -w "$FTV_TMP/held.pcap" \
	"src host 10.0.0.1 and tcp dst port $FTV_PORT and greater 500" 2>/dev/null &
tcpdump_pid=$!
bg_track "$tcpdump_pid"
captured() { [ "$(stat -c %s "$FTV_TMP/held.pcap" 2>/dev/null || echo 0)" -gt 24 ]; }
wait_for 10 captured || true
nsx "$A" ping -q -c "$N" -s 600 -i 0.2 -W 1 10.9.0.2 >/dev/null 2>&1
have()
{
	[ "$(tcpdump -n -r "$FTV_TMP/held.pcap" 'tcp[tcpflags] & tcp-push != 0' 2>/dev/null | wc -l)" -ge "$N" ]
}
wait_for 10 have
kill "$tcpdump_pid" 2>/dev/null
wait "$tcpdump_pid" 2>/dev/null
nsx "$B" nft delete table netdev hold

rx0=$(rx_packets)
replay0=$(peer_a 'p["drops"]["replay"]')
ktap_check "$N held segments injected in reverse order" \
	nsx "$A" "$PYTHON" -S "$PKT" replay "$FTV_TMP/held.pcap" veth0 10.0.0.1 10.0.0.2 "$N" reverse
delivered() { [ "$(rx_packets)" -ge $((rx0 + N)) ]; }
if wait_for 10 delivered; then
	ktap_ok "all $N reordered segments delivered to B's ftv0"
else
	ktap_fail "all $N reordered segments delivered to B's ftv0"
	ktap_diag "rx_packets before $rx0, now $(rx_packets)"
fi

rx1=$(rx_packets)
bytes1=$(peer_a 'p["rx_bytes"]')
ktap_check "the same $N segments injected again" \
	nsx "$A" "$PYTHON" -S "$PKT" replay "$FTV_TMP/held.pcap" veth0 10.0.0.1 10.0.0.2 "$N"
replayed() { [ "$(peer_a 'p["drops"]["replay"]')" -ge $((replay0 + N)) ]; }
if wait_for 10 replayed; then
	ktap_ok "B counts $N replays"
else
	ktap_fail "B counts $N replays"
	ktap_diag "replay drops before $replay0, now $(peer_a 'p["drops"]["replay"]')"
fi
ktap_eq "replays deliver nothing (rx_packets, rx_bytes unchanged)" \
	"$rx1 $bytes1" "$(rx_packets) $(peer_a 'p["rx_bytes"]')"

auth0=$(peer_a 'p["drops"]["bad_auth"]')
ktap_check "the segments injected with one bit flipped" \
	nsx "$A" "$PYTHON" -S "$PKT" bitflip "$FTV_TMP/held.pcap" veth0 10.0.0.1 10.0.0.2 "$N"
flipped() { [ "$(peer_a 'p["drops"]["bad_auth"]')" -ge $((auth0 + N)) ]; }
if wait_for 10 flipped; then
	ktap_ok "B counts $N authentication failures"
else
	ktap_fail "B counts $N authentication failures"
	ktap_diag "bad_auth before $auth0, now $(peer_a 'p["drops"]["bad_auth"]')"
fi
ktap_eq "bit-flipped segments deliver nothing" \
	"$rx1 $bytes1" "$(rx_packets) $(peer_a 'p["rx_bytes"]')"

ktap_finish
