#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ping through the tunnel, IPv4 and IPv6 inside, in both directions, and
# what `ftvctl show` reports afterwards.
#
#   ns A (initiator)                           ns B (responder)
#   +----------------------------+            +----------------------------+
#   | ftv0 10.9.0.1/24 fd09::1/64|            | ftv0 10.9.0.2/24 fd09::2/64|
#   |  peer B: endpoint B:51820  |            |  peer A: no endpoint       |
#   |  allowed 10.9.0.2 fd09::2  |            |  allowed 10.9.0.1 fd09::1  |
#   |                            |            |                            |
#   | veth0 10.0.0.1 fd00::1     |------------| veth0 10.0.0.2 fd00::2     |
#   +----------------------------+            +----------------------------+
#
# UNDERLAY=6 (test_ping6.sh) gives A the IPv6 endpoint [fd00::2]:51820
# instead of 10.0.0.2:51820.
# B cannot send until A has connected, so A pings first.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

UNDERLAY=${UNDERLAY:-4}
U="(IPv$UNDERLAY underlay)"

ktap_plan 13
ftv_require

pair_underlay "$UNDERLAY" || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"

if connect_ping "$A" 10.9.0.2; then
	ktap_ok "A pings B over IPv4 $U"
else
	ktap_fail "A pings B over IPv4 $U"
	ktap_diag "no answer within 30 s"
	nsx "$A" "$FTVCTL" show ftv0 2>&1 | ktap_diag
fi
ktap_check "A pings B over IPv6 $U" \
	nsx "$A" ping -6 -c 3 -i 0.2 -W 2 fd09::2
ktap_check "B pings A over IPv4 $U" \
	nsx "$B" ping -c 3 -i 0.2 -W 2 10.9.0.1
ktap_check "B pings A over IPv6 $U" \
	nsx "$B" ping -6 -c 3 -i 0.2 -W 2 fd09::1
# 1372 bytes of ICMP payload + 8 ICMP + 20 IP = 1400, the MTU
ktap_check "a packet of exactly the MTU passes (DF set) $U" \
	nsx "$A" ping -c 2 -i 0.2 -W 2 -M "do" -s 1372 10.9.0.2

# ---- ftvctl show --json
json=$(nsx "$A" "$FTVCTL" show ftv0 --json 2>&1)
if "$PYTHON" -S -c 'import json, sys; json.loads(sys.argv[1])' "$json" 2>/dev/null; then
	ktap_ok "ftvctl show ftv0 --json is valid JSON"
else
	ktap_fail "ftvctl show ftv0 --json is valid JSON"
	ktap_diag <<<"$json"
fi

# The shape the issue gives, which allows extra fields: every documented
# key must be there with its type; others (peers' "state", the device's
# "ratelimited" drop counter) may be added.
shape=$("$PYTHON" - "$json" <<'PY' 2>&1
import json, sys
j = json.loads(sys.argv[1])
problems = []
def keys(what, obj, want):
    if not isinstance(obj, dict):
        problems.append("%s is %s, not an object" % (what, type(obj).__name__))
        return
    have = set(obj)
    if want - have:
        problems.append("%s lacks %s" % (what, sorted(want - have)))

drops = {"bad_auth", "replay", "malformed", "no_session", "not_allowed"}
keys("top level", j, {"ftv0"})
d = j.get("ftv0", {})
keys("ftv0", d, {"public_key", "listen_port", "fwmark", "drops", "peers"})
keys("ftv0.drops", d.get("drops"), drops)
peers = d.get("peers")
if not isinstance(peers, list) or len(peers) != 1:
    problems.append("peers is not a list of one peer: %r" % (peers,))
else:
    p = peers[0]
    keys("peer", p, {"public_key", "endpoint", "allowed_ips",
                     "persistent_keepalive", "last_handshake", "rx_bytes",
                     "tx_bytes", "drops"})
    keys("peer.drops", p.get("drops"), drops)
    if not isinstance(p.get("allowed_ips"), list):
        problems.append("allowed_ips is not a list")
    for k in ("listen_port", "fwmark"):
        if not isinstance(d.get(k), int):
            problems.append("%s is not a number" % k)
    for k in ("persistent_keepalive", "last_handshake", "rx_bytes", "tx_bytes"):
        if not isinstance(p.get(k), int):
            problems.append("peer %s is not a number" % k)
    for what, dd in (("ftv0.drops", d.get("drops")), ("peer.drops", p.get("drops"))):
        if any(not isinstance((dd or {}).get(k), int) for k in drops):
            problems.append("%s has a counter that is not a number" % what)
    if not all(isinstance(x, str) for x in (d.get("public_key"), p.get("public_key"))):
        problems.append("a public_key is not a string")
    if not (p.get("endpoint") is None or isinstance(p.get("endpoint"), str)):
        problems.append("endpoint is neither a string nor null")
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
)
rc=$?
ktap_result "ftvctl show --json has the documented shape" "$rc"
[ "$rc" -eq 0 ] || ktap_diag <<<"$shape"

pub_b=$(pubkey_of b)
pub_a=$(pubkey_of a)
hs=$(ftv_peer_json "$A" ftv0 "$pub_b" 'p["last_handshake"]' 2>&1)
now=$(date +%s)
if [[ "$hs" =~ ^[0-9]+$ ]] && [ "$hs" -gt 0 ] && [ "$hs" -le $((now + 5)) ]; then
	ktap_ok "A's peer has a last_handshake time (unix seconds)"
else
	ktap_fail "A's peer has a last_handshake time (unix seconds)"
	ktap_diag "last_handshake: $hs, now: $now"
fi
bytes=$(ftv_peer_json "$A" ftv0 "$pub_b" 'p["rx_bytes"] > 0 and p["tx_bytes"] > 0' 2>&1)
ktap_eq "A's peer counts rx and tx bytes" True "$bytes"
bytes=$(ftv_peer_json "$B" ftv0 "$pub_a" 'p["rx_bytes"] > 0 and p["tx_bytes"] > 0 and p["last_handshake"] > 0' 2>&1)
ktap_eq "B's peer has a handshake and counts rx and tx bytes" True "$bytes"

# B had no endpoint; it learns A's from the connection.
if [ "$UNDERLAY" = 6 ]; then want='^\[fd00::1\]:[0-9]+$'; else want='^10\.0\.0\.1:[0-9]+$'; fi
ep=$(ftv_peer_json "$B" ftv0 "$pub_a" 'p["endpoint"]' 2>&1)
if [[ "$ep" =~ $want ]]; then
	ktap_ok "B shows the endpoint A connected from"
else
	ktap_fail "B shows the endpoint A connected from"
	ktap_diag "endpoint: $ep"
fi

# The key strings themselves must appear nowhere ("private key: (hidden)"
# in the text output is fine) and the JSON has no private key field. (The
# kernel returns keys to CAP_NET_ADMIN callers, as WireGuard does, so that
# showconf can print a configuration; test_netlink checks that nobody else
# may dump.)
leak=0
for ns in "$A" "$B"; do
	for args in "show ftv0" "show ftv0 --json" "show all" "show all --json"; do
		# shellcheck disable=SC2086 # split args on purpose
		out=$(nsx "$ns" "$FTVCTL" $args 2>&1)
		for key in "$FTV_TMP/a.key" "$FTV_TMP/b.key"; do
			if grep -qF -- "$(cat "$key")" <<<"$out"; then
				ktap_diag "private key $(basename "$key") in: ftvctl $args"
				leak=1
			fi
		done
		if [[ "$args" == *--json ]] && grep -qi '"private' <<<"$out"; then
			ktap_diag "a private key field in: ftvctl $args"
			leak=1
		fi
	done
done
ktap_result "no private key in ftvctl show output" "$leak"

rx=$(nsx "$B" cat /sys/class/net/ftv0/statistics/rx_packets)
tx=$(nsx "$A" cat /sys/class/net/ftv0/statistics/tx_packets)
if [ "${rx:-0}" -gt 0 ] && [ "${tx:-0}" -gt 0 ]; then
	ktap_ok "device counters count packets (ip -s link)"
else
	ktap_fail "device counters count packets (ip -s link)"
	ktap_diag "B ftv0 rx_packets=$rx, A ftv0 tx_packets=$tx"
fi

ktap_finish
