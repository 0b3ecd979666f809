#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Configuration files against the real kernel: setconf, the showconf ->
# setconf round trip, syncconf adding and removing a peer while another
# peer's session lives on, setconf ending sessions, and ftvctl monitor
# seeing the session come up.
#
#   ns A (initiator)                 ns B (responder)            ns C
#   ftv0 10.9.0.1/24                 ftv0 10.9.0.2/24            ftv0: a copy
#    setconf a.conf:                  setconf b.conf:            of A made
#    peer b, endpoint B:51820,        peer a, 10.9.0.1/32        from A's
#    10.9.0.2/32, keepalive 25,       (+ peer c, 10.9.0.3/32,    showconf
#    flows 3, rotate 64m
#   veth0 10.0.0.1 ----------------- veth0 10.0.0.2              (no link)
#                                     for a while)
#
# A session is the same session when B still has A's endpoint with the
# same source port (a new connection comes from a new port) and both sides
# the same last_handshake.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 19
ftv_require
ftv_use_debug_module

# Sessions are renewed after rekey_after_seconds (120 s by default), which
# a slow VM can reach during the test; renewal is not what is tested here.
params=/sys/module/ftv/parameters
echo 3600 >"$params/reject_after_seconds"
echo 3000 >"$params/rekey_after_seconds"
kmark=$(kmsg_mark)

pair_underlay 4 || ktap_bail "cannot set up the underlay"
ns_create C || ktap_bail "cannot create namespace C"
if ! ftv_keypair a || ! ftv_keypair b || ! ftv_keypair c; then
	ktap_bail "cannot make keys"
fi
for ns in "$A" "$B" "$C"; do
	ip -n "$ns" link add name ftv0 type ftv || ktap_bail "cannot create ftv0"
done
for i in 1 2; do
	ns=$A
	[ "$i" = 2 ] && ns=$B
	if ! ip -n "$ns" addr add "10.9.0.$i/24" dev ftv0 ||
	   ! ip -n "$ns" link set ftv0 up; then
		ktap_bail "cannot address ftv0"
	fi
done

umask 077
cat >"$FTV_TMP/a.conf" <<EOF
[Interface]
PrivateKey = $(cat "$FTV_TMP/a.key")
FwMark = 0x42

[Peer]
PublicKey = $(pubkey_of b)
Endpoint = 10.0.0.2:$FTV_PORT
AllowedIPs = 10.9.0.2/32
PersistentKeepalive = 25
Flows = 3
Rotate = 64m
EOF
cat >"$FTV_TMP/b.conf" <<EOF
[Interface]
PrivateKey = $(cat "$FTV_TMP/b.key")
ListenPort = $FTV_PORT

[Peer]
PublicKey = $(pubkey_of a)
AllowedIPs = 10.9.0.1/32
EOF
# b.conf and a third peer, c
cp "$FTV_TMP/b.conf" "$FTV_TMP/b+c.conf"
cat >>"$FTV_TMP/b+c.conf" <<EOF

[Peer]
PublicKey = $(pubkey_of c)
PresharedKey = $("$FTVCTL" genpsk | tee "$FTV_TMP/c.psk")
AllowedIPs = 10.9.0.3/32, fd09::3/128
EOF

# same_session DESC BEFORE AFTER : ktap_eq, with what the kernel and the
# monitor saw meanwhile when they differ
same_session()
{
	ktap_eq "$@" && return 0
	ktap_diag "events seen by B:"
	ktap_diag <"$FTV_TMP/events"
	ktap_diag "kernel log:"
	dmesg_since "$kmark" | grep -i ftv | tail -n 40 | ktap_diag
	return 1
}

# session NS PUB : what identifies the session with peer PUB in NS
session()
{
	ftv_peer_json "$1" ftv0 "$2" \
		'"%s %s %s" % (p["last_handshake"], p["endpoint"], p["state"])'
}

# config_view NS : the device's configuration as show --json has it
config_view()
{
	ftv_json "$1" ftv0 'json.dumps([d["public_key"], d["listen_port"], d["fwmark"],
		sorted([p["public_key"], p["endpoint"], sorted(p["allowed_ips"]),
			p["persistent_keepalive"], p["flows"], p["rotate"]]
			for p in d["peers"])])'
}

# ---- setconf

nsx "$B" "$FTVCTL" setconf ftv0 "$FTV_TMP/b.conf" ||
	ktap_bail "setconf refused a valid file"
# B listens for events before A, which connects at once (it has an
# endpoint and keepalives), is configured; the first session must show up.
nsx "$B" "$FTVCTL" monitor ftv0 --json >"$FTV_TMP/events" 2>&1 &
bg_track $!
wait_for 5 netlink_subscribed "$B" || ktap_diag "no sign yet that B's monitor listens"
if nsx "$A" "$FTVCTL" setconf ftv0 "$FTV_TMP/a.conf"; then
	got=$(ftv_json "$A" ftv0 '"%s %d %s %s %d %d %s" % (d["public_key"],
		d["fwmark"], d["peers"][0]["endpoint"], d["peers"][0]["allowed_ips"],
		d["peers"][0]["persistent_keepalive"], d["peers"][0]["flows"],
		d["peers"][0]["rotate"])')
	ktap_eq "setconf: the device is what the file says" \
		"$(pubkey_of a) 66 10.0.0.2:$FTV_PORT ['10.9.0.2/32'] 25 3 67108864" "$got"
else
	ktap_bail "setconf refused a valid file"
fi

if connect_ping "$A" 10.9.0.2; then
	ktap_ok "A pings B through the tunnel set up by setconf"
else
	ktap_fail "A pings B through the tunnel set up by setconf"
	nsx "$A" "$FTVCTL" show 2>&1 | ktap_diag
fi

if wait_for 5 grep -q '"event": "established"' "$FTV_TMP/events" &&
   "$PYTHON" - "$FTV_TMP/events" "$(pubkey_of a)" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
e = [e for e in ev if e["event"] == "established"][0]
assert e["interface"] == "ftv0" and e["peer"] == sys.argv[2], e
assert e["endpoint"].startswith("10.0.0.1:"), e
PY
then
	ktap_ok "monitor --json: B sees the session with A established"
else
	ktap_fail "monitor --json: B sees the session with A established"
	ktap_diag <"$FTV_TMP/events"
fi

# ---- showconf and the round trip

nsx "$B" "$FTVCTL" showconf ftv0 >"$FTV_TMP/b.shown" 2>"$FTV_TMP/err"
if grep -qxF "PrivateKey = $(cat "$FTV_TMP/b.key")" "$FTV_TMP/b.shown"; then
	ktap_ok "showconf prints the private key (it is the configuration)"
else
	ktap_fail "showconf prints the private key (it is the configuration)"
	ktap_diag <"$FTV_TMP/err"
fi

nsx "$A" "$FTVCTL" showconf ftv0 >"$FTV_TMP/a.shown"
nsx "$C" "$FTVCTL" setconf ftv0 "$FTV_TMP/a.shown"
ktap_eq "setconf(showconf(A)) in C is A again" "$(config_view "$A")" "$(config_view "$C")"
ktap_eq "showconf of the copy is showconf of A" "$(cat "$FTV_TMP/a.shown")" \
	"$(nsx "$C" "$FTVCTL" showconf ftv0 2>&1)"

# ---- syncconf keeps what it does not touch

before_b=$(session "$B" "$(pubkey_of a)")
before_a=$(session "$A" "$(pubkey_of b)")
ktap_diag "B's session with A: $before_b"

nsx "$B" "$FTVCTL" syncconf ftv0 "$FTV_TMP/b.conf"
same_session "syncconf with the same file: A's session unchanged" \
	"$before_b" "$(session "$B" "$(pubkey_of a)")"

if nsx "$B" "$FTVCTL" syncconf ftv0 "$FTV_TMP/b+c.conf"; then
	got=$(ftv_peer_json "$B" ftv0 "$(pubkey_of c)" 'sorted(p["allowed_ips"])')
	ktap_eq "syncconf adds peer c" "['10.9.0.3/32', 'fd09::3/128']" "$got"
else
	ktap_fail "syncconf adds peer c"
fi
same_session "... and A's session on B is untouched" \
	"$before_b" "$(session "$B" "$(pubkey_of a)")"

psk=$(cat "$FTV_TMP/c.psk")
if nsx "$B" "$FTVCTL" showconf ftv0 | grep -qxF "PresharedKey = $psk" &&
   ! nsx "$B" "$FTVCTL" show ftv0 | grep -qF "$psk" &&
   ! nsx "$B" "$FTVCTL" show ftv0 --json | grep -qF "$psk"; then
	ktap_ok "peer c's pre-shared key: in showconf, never in show"
else
	ktap_fail "peer c's pre-shared key: in showconf, never in show"
fi

# A session whose data goes unanswered is declared dead after 5 s and
# replaced: give that time to happen before looking.
if ping_ok "$A" 10.9.0.2 && sleep 6; then
	same_session "... traffic flows in the same session" \
		"$before_a|$before_b" \
		"$(session "$A" "$(pubkey_of b)")|$(session "$B" "$(pubkey_of a)")"
else
	ktap_fail "... traffic flows in the same session"
fi

nsx "$B" "$FTVCTL" syncconf ftv0 "$FTV_TMP/b.conf"
ktap_eq "syncconf removes peer c" "[\"$(pubkey_of a)\"]" \
	"$(ftv_json "$B" ftv0 'json.dumps([p["public_key"] for p in d["peers"]])')"
same_session "... and A's session on B is untouched" \
	"$before_b" "$(session "$B" "$(pubkey_of a)")"

printf '[Interface]\nListenPort = 1\n[Peer]\nPublicKey = nope\n' >"$FTV_TMP/bad.conf"
if ! out=$(nsx "$B" "$FTVCTL" syncconf ftv0 "$FTV_TMP/bad.conf" 2>&1) &&
   [[ $out == "ftvctl: $FTV_TMP/bad.conf:4: 'nope' is not a base64 public key"* ]] &&
   [ "$(ftv_json "$B" ftv0 'd["listen_port"]')" = "$FTV_PORT" ]; then
	ktap_ok "syncconf: a bad file is refused by line, nothing changes"
else
	ktap_fail "syncconf: a bad file is refused by line, nothing changes"
	ktap_diag "$out"
fi

nsx "$B" "$FTVCTL" syncconf ftv0 - <<EOF
[Interface]
ListenPort = $((FTV_PORT + 1))
[Peer]
PublicKey = $(pubkey_of a)
AllowedIPs = 10.9.0.1/32
EOF
ktap_eq "syncconf: a new listen port, and the private key kept" \
	"$((FTV_PORT + 1)) $(pubkey_of b)" \
	"$(ftv_json "$B" ftv0 '"%d %s" % (d["listen_port"], d["public_key"])')"

# ---- Endpoint lists (issue 27), on C, which has no link: nothing dials
# without traffic or keepalives, so the list is only configuration here.

cat >"$FTV_TMP/list.conf" <<EOF
[Interface]
PrivateKey = $(cat "$FTV_TMP/c.key")

[Peer]
PublicKey = $(pubkey_of b)
Endpoint = 10.0.0.2:$FTV_PORT, [fd00::2]:$((FTV_PORT + 1)) ,10.0.0.3:$FTV_PORT
AllowedIPs = 10.9.0.2/32
EOF
nsx "$C" "$FTVCTL" setconf ftv0 "$FTV_TMP/list.conf"
ktap_eq "setconf: an Endpoint list is the peer's endpoints, the first current" \
	"10.0.0.2:$FTV_PORT 10.0.0.2:$FTV_PORT,[fd00::2]:$((FTV_PORT + 1)),10.0.0.3:$FTV_PORT" \
	"$(ftv_peer_json "$C" ftv0 "$(pubkey_of b)" \
		'p["endpoint"] + " " + ",".join(p["endpoints"])')"
ktap_eq "showconf writes the list back on one Endpoint line" \
	"Endpoint = 10.0.0.2:$FTV_PORT, [fd00::2]:$((FTV_PORT + 1)), 10.0.0.3:$FTV_PORT" \
	"$(nsx "$C" "$FTVCTL" showconf ftv0 | grep '^Endpoint = ')"
sed "s/^Endpoint = .*/Endpoint = 10.0.0.3:$FTV_PORT/" "$FTV_TMP/list.conf" \
	>"$FTV_TMP/one.conf"
nsx "$C" "$FTVCTL" syncconf ftv0 "$FTV_TMP/one.conf"
ktap_eq "syncconf: one Endpoint where the kernel has a list makes a list of one" \
	"10.0.0.3:$FTV_PORT 10.0.0.3:$FTV_PORT" \
	"$(ftv_peer_json "$C" ftv0 "$(pubkey_of b)" \
		'p["endpoint"] + " " + ",".join(p["endpoints"])')"

# ---- setconf starts over

nsx "$B" "$FTVCTL" setconf ftv0 "$FTV_TMP/b.conf"
ktap_eq "setconf replaces the peers: B's peer A has no session" \
	"0 idle" "$(ftv_peer_json "$B" ftv0 "$(pubkey_of a)" \
		'"%d %s" % (p["last_handshake"], p["state"])')"

ktap_finish
