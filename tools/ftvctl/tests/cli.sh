#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of ftvctl that need no ftv kernel module: keys, argument errors, the
# "not loaded" message and the rendering of a made-up dump (tests/ipc-test).
# Usage: tests/cli.sh [path/to/ftvctl]    Output: KTAP. Exit: 0 pass, 1 fail.

set -u

FTVCTL=${1:-./ftvctl}
HERE=$(dirname "$0")
# shellcheck source-path=SCRIPTDIR source=../../../selftests/ktap.sh
. "$HERE/../../../selftests/ktap.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# expect_fail DESCRIPTION STDERR-PATTERN -- ARGS...: exit 1, message matches
expect_fail() {
	local what=$1 pattern=$2
	shift 3
	ktap_fails_with "$what" "$pattern" "$FTVCTL" "$@"
}

echo "TAP version 13"

# RFC 7748, section 6.1: Alice's key pair.
alice_priv=$(echo 77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a | xxd -r -p | base64)
alice_pub=$(echo 8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a | xxd -r -p | base64)
[ "$(echo "$alice_priv" | "$FTVCTL" pubkey)" = "$alice_pub" ]
ktap_rc $? "pubkey: RFC 7748 test vector"

key=$("$FTVCTL" genkey)
[ ${#key} = 44 ] && [ "$(printf %s "$key" | base64 -d | wc -c)" = 32 ]
ktap_rc $? "genkey: 44 characters of base64 for 32 bytes"

first=$(printf %s "$key" | base64 -d | xxd -p -c 32 | cut -c1-2)
last=$(printf %s "$key" | base64 -d | xxd -p -c 32 | cut -c63-64)
[ $((0x$first & 7)) = 0 ] && [ $((0x$last & 0xc0)) = 64 ]
ktap_rc $? "genkey: the key is clamped"

if python3 -c 'import cryptography.hazmat.primitives.asymmetric.x25519' 2>/dev/null; then
	pub=$(echo "$key" | "$FTVCTL" pubkey)
	python3 - "$key" "$pub" <<'PY'
import base64, sys
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
k = X25519PrivateKey.from_private_bytes(base64.b64decode(sys.argv[1]))
raw = k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
sys.exit(base64.b64encode(raw).decode() != sys.argv[2])
PY
	ktap_rc $? "pubkey: agrees with python-cryptography"
else
	ktap_skip "pubkey: agrees with python-cryptography" "no module"
fi

psk=$("$FTVCTL" genpsk)
[ ${#psk} = 44 ] && [ "$psk" != "$("$FTVCTL" genpsk)" ]
ktap_rc $? "genpsk: 44 characters, different every time"

(umask 022; "$FTVCTL" genkey >"$TMP/world.key" 2>"$TMP/err")
grep -q "other users can read" "$TMP/err"
ktap_rc $? "genkey: warns about a world-readable output file"

"$FTVCTL" --version | grep -q '^ftvctl [0-9]'
ktap_rc $? "--version prints a version"
"$FTVCTL" --help | grep -q "peer"
ktap_rc $? "--help lists the commands"

expect_fail "unknown command: usage, exit 1" "Usage:" -- frobnicate
expect_fail "pubkey: garbage on stdin" "stdin: not a base64 key" -- pubkey
echo "not a key" >"$TMP/bad.key"
expect_fail "set: a bad key file is named" "$TMP/bad.key: not a base64 key" \
	-- set ftv0 private-key "$TMP/bad.key"
expect_fail "set: a missing key file is named" "$TMP/none: No such file" \
	-- set ftv0 private-key "$TMP/none"
expect_fail "set: port out of range" "'65536' is not a port" \
	-- set ftv0 listen-port 65536
expect_fail "set: fwmark garbage" "'0xzz' is not a firewall mark" \
	-- set ftv0 fwmark 0xzz
expect_fail "set: value missing" "Usage:" -- set ftv0 fwmark
expect_fail "set: unknown option" "unknown option 'mtu'" -- set ftv0 mtu 1400
expect_fail "set: interface name too long" "is not an interface name" \
	-- set ftv0123456789abcdef
expect_fail "peer: bad public key" "'abc' is not a base64 public key" \
	-- peer add ftv0 abc
expect_fail "peer: unknown action" "unknown action 'move'" \
	-- peer move ftv0 "$alice_pub"
expect_fail "peer del: takes no options" "Usage:" \
	-- peer del ftv0 "$alice_pub" endpoint 1.2.3.4:1
expect_fail "peer: bare IPv6 endpoint refused" "is not an endpoint" \
	-- peer add ftv0 "$alice_pub" endpoint fd00::1:51820
expect_fail "peer: endpoint port 0 refused" "is not an endpoint" \
	-- peer add ftv0 "$alice_pub" endpoint 10.0.0.1:0
nine=1.0.0.1:1,1.0.0.2:1,1.0.0.3:1,1.0.0.4:1,1.0.0.5:1,1.0.0.6:1,1.0.0.7:1,1.0.0.8:1,1.0.0.9:1
expect_fail "peer: more than 8 endpoints refused" "endpoints '$nine': more than 8" \
	-- peer add ftv0 "$alice_pub" endpoint "$nine"
expect_fail "peer: empty entry in an endpoint list" "endpoints '1.2.3.4:1,,1.2.3.5:1': empty entry" \
	-- peer add ftv0 "$alice_pub" endpoint 1.2.3.4:1,,1.2.3.5:1
expect_fail "peer: trailing comma in an endpoint list" "empty entry" \
	-- peer set ftv0 "$alice_pub" endpoint 1.2.3.4:1,
expect_fail "peer: bad entry of an endpoint list quoted" "'fd00::1:2' is not an endpoint" \
	-- peer add ftv0 "$alice_pub" endpoint '1.2.3.4:1, fd00::1:2'
expect_fail "peer: port 0 in an endpoint list refused" "'\[fd00::1\]:0' is not an endpoint" \
	-- peer add ftv0 "$alice_pub" endpoint '1.2.3.4:1,[fd00::1]:0'
expect_fail "peer: prefix too long, token quoted" "'10.0.0.0/33': the prefix length" \
	-- peer add ftv0 "$alice_pub" allowed-ips 10.0.0.0/8,10.0.0.0/33
expect_fail "peer: IPv6 prefix too long" "'fd00::/129'" \
	-- peer set ftv0 "$alice_pub" allowed-ips fd00::/129
expect_fail "peer: empty list entry" "empty entry" \
	-- peer add ftv0 "$alice_pub" allowed-ips 10.0.0.1,,10.0.0.2
expect_fail "peer: keepalive out of range" "'65536' is not a keepalive" \
	-- peer add ftv0 "$alice_pub" persistent-keepalive 65536
expect_fail "peer: a bad pre-shared key file is named" "$TMP/bad.key" \
	-- peer add ftv0 "$alice_pub" preshared-key "$TMP/bad.key"
expect_fail "peer: flows 0 refused" "'0' is not a number of flows (1 to 8)" \
	-- peer add ftv0 "$alice_pub" flows 0
expect_fail "peer: flows 9 refused" "'9' is not a number of flows (1 to 8)" \
	-- peer set ftv0 "$alice_pub" flows 9
expect_fail "peer: rotate 4095 refused" "rotate '4095': a budget must be 4096 bytes (4k) to 1073741824 (1g)" \
	-- peer add ftv0 "$alice_pub" rotate 4095
expect_fail "peer: rotate 1 refused (a budget, not auto)" "rotate '1': a budget must be 4096 bytes" \
	-- peer set ftv0 "$alice_pub" rotate 1
expect_fail "peer: rotate 2g refused" "rotate '2g': a budget must be .* to 1073741824 (1g)" \
	-- peer set ftv0 "$alice_pub" rotate 2g
for bad in x 12kb k -4k +4096 " 4096" 4096.5 0x1000 Auto ""; do
	expect_fail "peer: rotate '$bad' refused, quoted" "'$bad' is not a rotate setting (off, auto, or a budget in bytes" \
		-- peer set ftv0 "$alice_pub" rotate "$bad"
done
expect_fail "peer: fec 0:1, K too small" "FEC '0:1': K, the data segments per group, must be 1 to 64" \
	-- peer add ftv0 "$alice_pub" fec 0:1
expect_fail "peer: fec 65:1, K too large" "FEC '65:1': K, .* must be 1 to 64" \
	-- peer set ftv0 "$alice_pub" fec 65:1
expect_fail "peer: fec 4:17, M too large" "FEC '4:17': M, the repair segments per group, must be 1 to 16" \
	-- peer add ftv0 "$alice_pub" fec 4:17
expect_fail "peer: fec 4:0, M too small" "FEC '4:0': M, .* must be 1 to 16" \
	-- peer add ftv0 "$alice_pub" fec 4:0
expect_fail "peer: fec x, not a setting" "'x' is not a FEC setting (off, auto, or K:M" \
	-- peer add ftv0 "$alice_pub" fec x
for bad in 4: :2 4:2:1 -4:2 +4:2 4:0x2 Auto ""; do
	expect_fail "peer: fec '$bad' refused, quoted" "'$bad' is not a FEC setting" \
		-- peer set ftv0 "$alice_pub" fec "$bad"
done
expect_fail "set: shape maybe" "'maybe' is not a shape setting (on or off)" \
	-- set ftv0 shape maybe
expect_fail "probe: no arguments" "Usage: ftvctl probe <interface> <public-key>" -- probe
expect_fail "probe: no public key" "Usage:" -- probe ftv0
expect_fail "probe: no public key, an option" "Usage:" -- probe ftv0 --json
expect_fail "probe: one argument too many" "Usage:" \
	-- probe ftv0 "$alice_pub" extra
expect_fail "probe: unknown option named, usage" "unknown option '--slow'" \
	-- probe ftv0 "$alice_pub" --slow
expect_fail "probe: unknown option, usage" "Usage:" \
	-- probe ftv0 "$alice_pub" --quick --slow
expect_fail "probe: bad public key" "'abc' is not a base64 public key" \
	-- probe ftv0 abc
expect_fail "probe: interface name too long" "is not an interface name" \
	-- probe ftv0123456789abcdef "$alice_pub"
"$FTVCTL" probe --help | grep -q "^Usage: ftvctl probe <interface> <public-key> \[--json\] \[--quick\] \[--apply\]$"
ktap_rc $? "probe --help: usage on stdout, exit 0"

# The usage lines and the completion come from one table: every option
# completion offers is in the usage, and the lines fit 80 columns.
usage_lists_options() {
	local cmd=$1 usage word
	usage=$("$FTVCTL" "$cmd" --help) || return 1
	for word in $("$FTVCTL" --complete "$cmd"); do
		grep -qF "[$word " <<<"$usage" || { echo "# $cmd: no $word"; return 1; }
	done
	awk 'length > 79 { long = 1 } END { exit long }' <<<"$usage"
}
usage_lists_options set && usage_lists_options peer &&
	[ "$("$FTVCTL" --complete peer | wc -w)" -ge 7 ] &&
	[ "$("$FTVCTL" --complete peer flows)" = "1 2 3 4 5 6 7 8" ] &&
	[ "$("$FTVCTL" --complete set private-key)" = "@file" ]
ktap_rc $? "usage and --complete: the same options, from the table"
expect_fail "--complete: an option that is not one" "peer has no option 'mtu'" \
	-- --complete peer mtu

if [ -d /sys/module/ftv ]; then
	ktap_skip "not loaded: message" "the module is loaded"
else
	expect_fail "module not loaded: said so" "the ftv kernel module is not loaded" -- show
	echo "$alice_priv" >"$TMP/alice.key"
	expect_fail "module not loaded: after a valid set" "not loaded" \
		-- set ftv0 private-key "$TMP/alice.key" listen-port 51820 fwmark off
	expect_fail "module not loaded: after a valid peer add" "not loaded" \
		-- peer add ftv0 "$alice_pub" endpoint '[fd00::1]:51820' \
		allowed-ips '10.9.0.2, fd00::2/128' persistent-keepalive off \
		fec 64:16
	for eps in 10.0.0.1:1 '10.0.0.1:1,[fd00::1]:2' ' 10.0.0.1:1 , [fd00::1]:2 ' \
		"${nine%,*}"; do
		expect_fail "module not loaded: after a valid endpoint '$eps'" "not loaded" \
			-- peer set ftv0 "$alice_pub" endpoint "$eps"
	done
	for fec in off auto 1:1 16:2; do
		expect_fail "module not loaded: after a valid fec $fec" "not loaded" \
			-- peer set ftv0 "$alice_pub" fec "$fec"
	done
	for rotate in off auto 4096 12k 12K 1024m 1g; do
		expect_fail "module not loaded: after a valid rotate $rotate" "not loaded" \
			-- peer set ftv0 "$alice_pub" rotate "$rotate"
	done
	for shape in on off; do
		expect_fail "module not loaded: after a valid shape $shape" "not loaded" \
			-- set ftv0 shape "$shape"
	done
	expect_fail "module not loaded: monitor says so" "not loaded" -- monitor
	expect_fail "module not loaded: probe says so" "not loaded" \
		-- probe ftv0 "$alice_pub"
	expect_fail "module not loaded: probe with every option says so" "not loaded" \
		-- probe --json ftv0 --quick "$alice_pub" --apply
fi
expect_fail "monitor: one interface at most" "Usage:" -- monitor ftv0 ftv1

if [ -x "$HERE/ipc-test" ]; then
	"$HERE/ipc-test" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert list(d) == ["ftv0", "ftv\"1"], list(d)
dev = d["ftv0"]
assert list(dev) == ["public_key", "listen_port", "fwmark", "shape", "drops", "peers"]
assert dev["shape"] is True and d["ftv\"1"]["shape"] is None
drops = ["bad_auth", "replay", "malformed", "no_session", "not_allowed", "ratelimited"]
later = ["backlog", "out_of_window"]
assert list(dev["drops"]) == drops + ["icmp_ignored", "syn_refused"] + later + \
	["join_replayed", "flows_refused", "rst", "fin", "probe_limited"]
assert dev["drops"]["icmp_ignored"] == 7
p = dev["peers"]
assert list(p[0]) == ["public_key", "endpoint", "endpoints", "allowed_ips", "persistent_keepalive",
	"last_handshake", "rx_bytes", "tx_bytes", "drops", "state", "fec", "fec_stats",
	"flows", "flows_up", "rotations", "rotate", "resets"]
assert list(p[0]["drops"]) == drops + later + ["flows_refused", "rst", "fin", "probe_limited"]
assert p[0]["endpoint"] == "10.0.0.2:51820" and p[0]["state"] == "established"
assert p[0]["fec"] == "auto" and p[0]["fec_stats"] == {"active": True, "data": 16,
	"repair": 2, "loss_ppm": 8000, "repair_sent": 1234, "rebuilt": 56, "groups_lost": 0}
assert p[1]["fec"] == "8:4" and p[1]["fec_stats"]["active"] is False
assert p[2]["fec"] is None and p[2]["fec_stats"] is None
assert p[0]["flows"] == 4 and p[1]["flows"] == 1 and p[2]["flows"] is None
assert p[0]["flows_up"] == 3 and p[1]["flows_up"] == 0 and p[2]["flows_up"] is None
assert p[0]["rotations"] == 2 and p[1]["rotations"] == 0 and p[2]["rotations"] is None
assert p[0]["rotate"] == 12288 and p[1]["rotate"] == "auto" and p[2]["rotate"] is None
assert p[1]["endpoint"] == "[fd00::1]:443"
assert p[1]["allowed_ips"] == ["fd00::2/128", "10.9.0.3/32"]
assert p[2]["endpoint"] is None and p[2]["allowed_ips"] == []
assert p[0]["endpoints"] == ["10.0.0.2:51820", "[fd00::9]:443"]
assert p[1]["endpoints"] == [] and p[2]["endpoints"] is None
assert p[0]["resets"] == {"ttl": 40, "ip_id": 4242, "peer_ttl": 63, "peer_ip_id": 17}
assert p[1]["resets"] == {"ttl": 9, "ip_id": None, "peer_ttl": None, "peer_ip_id": None}
assert p[2]["resets"] is None
assert d["ftv\"1"]["public_key"] == "" and d["ftv\"1"]["peers"] == []
'
	ktap_rc $? "show --json: valid, keys in the documented order"

	"$HERE/ipc-test" --text >"$TMP/text"
	grep -q "^  latest handshake: 1 minute, [56] seconds ago$" "$TMP/text" &&
	grep -q "^  transfer: 1.23 MiB received, 4.56 MiB sent$" "$TMP/text" &&
	grep -q "^  allowed ips: fd00::2/128, 10.9.0.3/32$" "$TMP/text" &&
	grep -q "^  drops: bad_auth 3, replay 1$" "$TMP/text" &&
	grep -q "^  persistent keepalive: every 25 seconds$" "$TMP/text" &&
	grep -q "^  fwmark: 0x1$" "$TMP/text" &&
	grep -q "^  shape: on$" "$TMP/text" &&
	grep -q "^  drops: replay 2, icmp_ignored 7$" "$TMP/text" &&
	grep -q "^  fec: auto (16:2 now, loss 0.8 %), 1234 repair sent, 56 rebuilt, 0 groups lost$" "$TMP/text" &&
	grep -q "^  fec: 8:4 (peer has no FEC)$" "$TMP/text" &&
	[ "$(grep -c "^  fec: " "$TMP/text")" = 2 ] &&
	grep -q "^  flows: 4, 3 up, 2 replaced$" "$TMP/text" &&
	[ "$(grep -c "^  flows: " "$TMP/text")" = 1 ] &&
	grep -q "^  rotate: 12k$" "$TMP/text" &&
	grep -q "^  last reset: TTL 40, IP ID 4242; the peer's: TTL 63, IP ID 17$" "$TMP/text" &&
	grep -q "^  last reset: TTL 9$" "$TMP/text" &&
	grep -q "^  endpoints: 10.0.0.2:51820, \[fd00::9\]:443$" "$TMP/text" &&
	[ "$(grep -c "^  endpoints: " "$TMP/text")" = 1 ] &&
	[ "$(grep -c "^  rotate: " "$TMP/text")" = 1 ] &&
	! grep -q "private key: [^(]" "$TMP/text"
	ktap_rc $? "show: text output"
fi

if [ -x "$HERE/ipc-test" ]; then
	"$HERE/ipc-test" --events >"$TMP/events"
	key=AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=
	diff -u - "$TMP/events" <<EOF | sed 's/^/# /'
ftv0: peer $key: session established (endpoint 10.0.0.1:51820)
ftv0: peer $key: session rekeyed (endpoint 10.0.0.1:51820)
ftv0: peer $key: endpoint changed to 10.0.0.1:51820
ftv"0: peer $key: session lost
ftv0: peer $key: event 99
ftv0: peer $key: flow up (4 flows up, endpoint 10.0.0.1:51820)
ftv0: peer $key: flow stalled (3 flows up, 7 replaced)
ftv0: peer $key: flow rotated (1 flow up, 1099511627776 replaced, endpoint 10.0.0.1:51820)
ftv0: peer $key: failed over to 10.0.0.1:51820
ftv1: peer $key: session lost
EOF
	ktap_rc "${PIPESTATUS[0]}" "monitor: one line per event"

	IPC_TEST_IFNAME=ftv1 "$HERE/ipc-test" --events >"$TMP/events"
	[ "$(wc -l <"$TMP/events")" = 1 ] && grep -q '^ftv1: ' "$TMP/events"
	ktap_rc $? "monitor: only the interface asked for"

	"$HERE/ipc-test" --events --json | python3 -c '
import json, sys, time
lines = sys.stdin.read().splitlines()
assert len(lines) == 10, lines
ev = [json.loads(l) for l in lines]
for e in ev:
    assert list(e) == ["interface", "event", "peer", "endpoint", "flows_up",
                       "rotations", "time"], e
    assert abs(e["time"] - time.time()) < 60, e
assert [e["event"] for e in ev] == ["established", "rekeyed",
    "endpoint_changed", "lost", "unknown", "flow_up", "flow_stalled",
    "flow_rotated", "failover", "lost"]
assert ev[0]["endpoint"] == "10.0.0.1:51820" and ev[3]["endpoint"] is None
assert ev[3]["interface"] == "ftv\"0"
assert [(e["flows_up"], e["rotations"]) for e in ev] == [(1, 0), (1, 0),
    (1, 0), (None, None), (None, None), (4, 0), (3, 7), (1, 1 << 40), (0, 1),
    (0, 8)]
assert ev[8]["endpoint"] == "10.0.0.1:51820"
'
	ktap_rc $? "monitor --json: one object per line, in the documented shape"
fi

if [ -x "$HERE/probe-test" ]; then
	for path in clean policed shared loss hostile single spent policed-answering \
		mtu-hole mtu-icmp freeze port port-list endpoint openings; do
		"$HERE/probe-test" --json "$path"
	done | python3 -c '
import json, sys
text = sys.stdin.read()
objs, dec, i = [], json.JSONDecoder(), 0
while i < len(text):
    o, i = dec.raw_decode(text, i)
    objs.append(o)
    while i < len(text) and text[i].isspace():
        i += 1
assert len(objs) == 15, len(objs)
(clean, policed, shared, loss, hostile, single, spent, answering, hole, icmp,
    freeze, port, port_list, endpoint, openings) = objs
for o in objs:
    assert list(o) == ["interface", "peer", "answered", "connections",
        "measurements", "verdicts", "recommended", "recommended_mtu",
        "recommended_shape", "seconds", "bytes"], list(o)
    assert list(o["measurements"]) == ["resets", "policing", "loss", "mtu",
        "freeze", "reach", "openings"]
    m = o["measurements"]
    assert list(m["mtu"]) == ["verdict", "measured", "device", "fits", "lost",
        "route_mtu", "icmp", "asks"], list(m["mtu"])
    assert list(m["freeze"]) == ["verdict", "measured", "why", "connections"]
    assert list(m["reach"]) == ["verdicts", "measured", "why", "joins"]
    for j in m["reach"]["joins"]:
        assert list(j) == ["endpoint", "current", "shaped", "up", "ms"], j
    assert list(m["openings"]) == ["verdict", "measured", "why", "shaped",
        "as_is", "device_shape"], list(m["openings"])
    for c in m["freeze"]["connections"]:
        assert list(c) == ["index", "granted", "came", "carried", "froze"], c
    assert list(m["resets"]) == ["verdict", "rst", "fin", "here", "at_peer"]
    assert list(m["policing"]) == ["verdict", "measured", "why", "one", "all"]
    assert list(m["loss"]) == ["verdict", "pad_ppm", "peer_ppm", "rebuilt", "evidence"]
    for c in o["connections"]:
        assert list(c) == ["index", "answered", "rx_bytes"], c
    for v in o["verdicts"]:
        assert list(v) == ["name", "evidence"], v
    for pad in (m["policing"]["one"], m["policing"]["all"]):
        if pad is not None:
            assert list(pad) == ["granted", "came", "seconds", "kbit_s", "connections"]
            for c in pad["connections"]:
                assert list(c) == ["index", "came", "kbit_s"]
assert clean["verdicts"] == [] and clean["recommended"] is None
assert clean["measurements"]["policing"]["why"] == "no rate limit seen up to 8 Mbit/s"
assert clean["measurements"]["policing"]["all"] is None
assert clean["measurements"]["loss"]["pad_ppm"] == 0
assert [v["name"] for v in policed["verdicts"]] == ["per-connection policer"]
assert policed["recommended"] == "flows 4"
assert policed["measurements"]["policing"]["all"]["kbit_s"] == 7887
assert [v["name"] for v in shared["verdicts"]] == ["shared bottleneck"]
assert shared["recommended"] is None
assert [v["name"] for v in loss["verdicts"]] == ["loss"] and loss["recommended"] == "fec auto"
assert 40000 < loss["measurements"]["loss"]["pad_ppm"] < 42000
assert [v["name"] for v in hostile["verdicts"]] == ["connection does not answer", "injected resets"]
assert hostile["measurements"]["resets"]["here"] == {"ttl": 40, "ip_id": 4242, "peer_ttl": 63, "peer_ip_id": 17}
assert hostile["measurements"]["resets"]["at_peer"]["ip_id"] is None
assert [c["answered"] for c in hostile["connections"]] == [True, True, False, True]
assert single["connections"] == [{"index": 0, "answered": None, "rx_bytes": 100000}]
assert single["measurements"]["policing"] == {"verdict": None, "measured": False,
    "why": "the session has one connection (flows 1)", "one": None, "all": None}
assert spent["measurements"]["policing"]["why"].startswith("the peer\x27s probe budget is spent")
assert answering["recommended"] is None
assert clean["recommended_mtu"] is None and clean["measurements"]["mtu"]["lost"] is None
assert [v["name"] for v in hole["verdicts"]] == ["path MTU black hole"]
assert hole["recommended_mtu"] == 1200 and hole["recommended"] is None
assert hole["measurements"]["mtu"]["icmp"] is False
assert [v["name"] for v in icmp["verdicts"]] == ["path MTU below the device\x27s"]
assert icmp["measurements"]["mtu"]["route_mtu"] == 1280
assert [v["name"] for v in freeze["verdicts"]] == ["byte-budget freeze"]
assert freeze["recommended"] == "rotate 11k"
assert [c["froze"] for c in freeze["measurements"]["freeze"]["connections"]] == [True] * 3
assert clean["measurements"]["freeze"]["connections"][0]["froze"] is False
assert single["measurements"]["freeze"]["why"] == "--quick"
assert clean["measurements"]["reach"] == {"verdicts": [], "measured": False,
    "why": "not run", "joins": []}
assert [v["name"] for v in port["verdicts"]] == ["port blocked"]
assert port["recommended"] == "flows 1 rotate off"
assert port["measurements"]["reach"]["verdicts"] == ["port blocked"]
assert port["measurements"]["reach"]["joins"][0] == {"endpoint": "198.51.100.2:51820",
    "current": True, "shaped": None, "up": False, "ms": None}
assert port_list["recommended"] == "endpoint 198.51.100.3:51820"
assert [v["name"] for v in endpoint["verdicts"]] == ["endpoint blocked"]
assert endpoint["measurements"]["reach"]["joins"][0]["ms"] == 41
assert endpoint["measurements"]["reach"]["joins"][2]["up"] is False
assert [v["name"] for v in openings["verdicts"]] == ["openings filtered"]
assert openings["recommended"] is None and openings["recommended_shape"] == "on"
assert openings["measurements"]["openings"] == {"verdict": "openings filtered",
    "measured": True, "why": None, "shaped": {"tried": 2, "up": 2},
    "as_is": {"tried": 2, "up": 0}, "device_shape": False}
assert [j["shaped"] for j in openings["measurements"]["reach"]["joins"]] == [True, False] * 2
assert clean["recommended_shape"] is None
assert clean["measurements"]["openings"]["why"] == "not run"
'
	ktap_rc $? "probe --json: valid, keys in the documented order"

	"$HERE/probe-test" --text policed >"$TMP/probe"
	grep -q "^policing: per-connection policer (one connection: 2143 kbit/s; spread over 4: 7887 kbit/s, of which 0: 1977, 1: 1955, 2: 2008, 3: 1947)$" "$TMP/probe" &&
	tail -n 1 "$TMP/probe" | grep -q "^recommended: ftvctl peer set ftv0 [A-Za-z0-9+/]*= flows 4$" &&
	"$HERE/probe-test" --text clean >"$TMP/probe" &&
	grep -q "^policing: not seen (no rate limit up to 8 Mbit/s: one connection brought all the pad, at 7827 kbit/s)$" "$TMP/probe" &&
	tail -n 1 "$TMP/probe" | grep -q "^nothing found; keep: flows 4, fec auto, rotate auto$" &&
	"$HERE/probe-test" --text single >"$TMP/probe" &&
	grep -q "^policing: not measured, the session has one connection (flows 1)$" "$TMP/probe" &&
	[ "$(wc -l <"$TMP/probe")" = 10 ] &&
	"$HERE/probe-test" --text mtu-hole >"$TMP/probe" &&
	grep -q "^path MTU: path MTU black hole (echoes of 1208 bytes (outer packets of 1284) were lost twice while one of 1200 came; no ICMP error came: the route's MTU is still 1500)$" "$TMP/probe" &&
	tail -n 1 "$TMP/probe" | grep -q "^recommended: ip link set dev ftv0 mtu 1200$"
	ktap_rc $? "probe: text, one line per measurement, the recommendation last"

	# The steps against a simulated peer (probe.c with a make-believe
	# netlink layer), in real time: a few seconds each.
	"$HERE/probe-test" --run clean >"$TMP/probe" 2>"$TMP/err" &&
	[ "$(wc -l <"$TMP/probe")" = 11 ] &&
	grep -q "^path MTU: not seen (an echo of 1420 bytes, the device's MTU, came)$" "$TMP/probe" &&
	grep -q "^freeze: not seen (connection 1 brought [0-9]* of a pad of 500000)$" "$TMP/probe" &&
	grep -q "^answer: the peer answered in [0-9]* ms (connection 0)$" "$TMP/probe" &&
	grep -q "^connections: not seen (each of the 4 up answered: 0 in" "$TMP/probe" &&
	grep -q "^policing: not seen (no rate limit up to 8 Mbit/s: one connection brought all the pad" "$TMP/probe" &&
	grep -q "^took [0-9.]* s and about 1.5 MB$" "$TMP/probe" &&
	grep -q "^reach: not seen (198.51.100.2:51820 (fresh port, shaped) up in [0-9]* ms, 198.51.100.2:51820 (fresh port, as it is) up in [0-9]* ms, 198.51.100.2:51820 (fresh port, shaped) up in [0-9]* ms, 198.51.100.2:51820 (fresh port, as it is) up in [0-9]* ms)$" "$TMP/probe" &&
	grep -q "^openings: not filtered (shaped: 2 of 2 came up; as they are: 2 of 2)$" "$TMP/probe" &&
	grep -q "^nothing found; keep: flows 4, fec auto, rotate auto$" "$TMP/probe" &&
	grep -q "^# 13 asks, 3742880 bytes of budget left, exit 0$" "$TMP/err"
	ktap_rc $? "probe run, clean path: two pads, nothing found"

	"$HERE/probe-test" --run policed --json --apply >"$TMP/probe" 2>"$TMP/err" &&
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert [v["name"] for v in o["verdicts"]] == ["per-connection policer"], o["verdicts"]
assert o["recommended"] == "flows 4"
assert o["seconds"] < 30 and 1000000 < o["bytes"] < 5000000, (o["seconds"], o["bytes"])
assert all(c["answered"] for c in o["connections"])
' "$TMP/probe" &&
	grep -q "^ftvctl: applied: ftvctl peer set ftv0 [A-Za-z0-9+/]*= flows 4$" "$TMP/err" &&
	grep -q "^# applied: flows 4, fec (not) off$" "$TMP/err"
	ktap_rc $? "probe run, policed path: --json, two pads, flows 4 applied"

	"$HERE/probe-test" --run lossy --quick --apply >"$TMP/probe" 2>"$TMP/err" &&
	grep -q "^connections: not measured (--quick); 2 up: 0, 1$" "$TMP/probe" &&
	grep -q "^loss: 2.9 % lost (2.9 % of the pad did not come;" "$TMP/probe" &&
	grep -q "^applied: ftvctl peer set ftv0 [A-Za-z0-9+/]*= fec auto$" "$TMP/probe" &&
	grep -q "^# applied: flows (not) 0, fec auto$" "$TMP/err"
	ktap_rc $? "probe run, lossy path, --quick: loss, fec auto applied"

	"$HERE/probe-test" --run hostile >"$TMP/probe" 2>"$TMP/err" &&
	grep -q "^connections: connection 2 does not answer (no answer within 1 s; 0 in [0-9]* ms, 1 in [0-9]* ms)$" "$TMP/probe" &&
	grep -q "^resets: injected resets (this end counted 2 RSTs, the last with TTL 40 where the peer's segments come with 63: something on the path sent it; none at the peer)$" "$TMP/probe"
	ktap_rc $? "probe run, hostile path: a silent connection, injected resets"

	"$HERE/probe-test" --run mtu-hole --apply >"$TMP/probe" 2>"$TMP/err" &&
	grep -q "^path MTU: path MTU black hole (echoes of 1208 bytes (outer packets of 1284) were lost twice while one of 1204 came; no ICMP error came: the route's MTU is still 1500)$" "$TMP/probe" &&
	grep -q "^policing: not measured, the padding is as long as this device's MTU, which the path does not carry$" "$TMP/probe" &&
	grep -q "^recommended: ip link set dev ftv0 mtu 1204$" "$TMP/probe" &&
	grep -q "^applied: ip link set dev ftv0 mtu 1204$" "$TMP/probe" &&
	grep -q "^# applied: mtu 1204$" "$TMP/err"
	ktap_rc $? "probe run, a 1280-byte path dropping ICMP: black hole, mtu 1204 applied"

	"$HERE/probe-test" --run mtu-icmp --json >"$TMP/probe" 2>"$TMP/err" &&
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert [v["name"] for v in o["verdicts"]] == ["path MTU below the device\x27s"], o["verdicts"]
m = o["measurements"]["mtu"]
assert (m["fits"], m["lost"], m["route_mtu"], m["icmp"]) == (1204, 1208, 1280, True), m
assert o["recommended_mtu"] == 1204
' "$TMP/probe"
	ktap_rc $? "probe run, a 1280-byte path with ICMP: below the device's, mtu 1204"

	"$HERE/probe-test" --run freeze --apply >"$TMP/probe" 2>"$TMP/err" &&
	grep -q "^freeze: byte-budget freeze (connection 1 froze after 16384 bytes towards this end" "$TMP/probe" &&
	grep -q "^policing: not measured, a connection froze (a pad on the first would freeze it)$" "$TMP/probe" &&
	grep -q "^applied: ftvctl peer set ftv0 [A-Za-z0-9+/]*= rotate 12k$" "$TMP/probe"
	ktap_rc $? "probe run, connections frozen after 16 KB: the freeze, rotate 12k applied"

	"$HERE/probe-test" --run port-blocked --apply >"$TMP/probe" 2>"$TMP/err" &&
	grep -q "^reach: port blocked (4 joins from fresh source ports to 198.51.100.2:51820 got no answer in 2.5 s, while the session's connection answered in [0-9]* ms; the peer has no other endpoint: a new session needs a new connection too)$" "$TMP/probe" &&
	grep -q "^applied: ftvctl peer set ftv0 [A-Za-z0-9+/]*= flows 1 rotate off$" "$TMP/probe" &&
	grep -q "^# applied: flows 1, " "$TMP/err"
	ktap_rc $? "probe run, new connections blocked: port blocked, flows 1 rotate off applied"

	"$HERE/probe-test" --run openings --apply >"$TMP/probe" 2>"$TMP/err" &&
	grep -q "^openings: openings filtered (2 of 2 joins whose first message went shaped came up (the first in [0-9]* ms); none of 2 whose first went as it is did in 2.5 s)$" "$TMP/probe" &&
	grep -q "^recommended: ftvctl set ftv0 shape on$" "$TMP/probe" &&
	grep -q "^applied: ftvctl set ftv0 shape on$" "$TMP/probe" &&
	grep -q "^# applied: shape on$" "$TMP/err"
	ktap_rc $? "probe run, openings that look random blocked: openings filtered, shape on applied"

	"$HERE/probe-test" --run spent >"$TMP/probe" 2>"$TMP/err" &&
	grep -q "^policing: not measured, the peer's probe budget is spent (try again in a minute)$" "$TMP/probe"
	ktap_rc $? "probe run, the peer's budget spent: not measured"

	ktap_fails_with "probe run, a module without probes: said so, exit 1" \
		"the peer's module cannot be probed (no answer to a probe)" \
		"$HERE/probe-test" --run mute
	ktap_fails_with "probe run, no session: said so, exit 1" \
		"no session with this peer: bring the tunnel up first" \
		"$HERE/probe-test" --run down
fi

ktap_done
