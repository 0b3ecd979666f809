#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of configuration files that need no ftv kernel module: the parser
# and writer (tests/config-test), the requests setconf and syncconf make
# (tests/sync-test, whose make-believe kernel holds a second file), and
# the errors of the real ftvctl.
# Usage: tests/conf.sh [path/to/ftvctl]   Output: KTAP. Exit: 0 pass, 1 fail.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
FTVCTL=${1:-$HERE/../ftvctl}
CONF=$HERE/conf
# shellcheck source-path=SCRIPTDIR source=../../../selftests/ktap.sh
. "$HERE/../../../selftests/ktap.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Keys of tests/conf/server.conf
SERVER_PRIV=dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=
LAPTOP=3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=
OFFICE=EBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8=
SPARE=ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=
PSK=QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=
NEW=MDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk8=

# refused DESCRIPTION PATTERN : $TMP/bad.conf (from stdin) is refused by
# the parser with a message matching PATTERN
refused() {
	cat >"$TMP/bad.conf"
	ktap_fails_with "$1" "$2" "$HERE/config-test" "$TMP/bad.conf"
}

# written_back NAME DESCRIPTION : $TMP/NAME.conf is written back as
# $TMP/NAME.expected says, and what is written reads back the same; two
# cases, "NAME: DESCRIPTION" and "NAME: ... (round trip)"
written_back() {
	"$HERE/config-test" "$TMP/$1.conf" >"$TMP/out" &&
		diff -u "$TMP/$1.expected" "$TMP/out" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] && cmp -s "$TMP/$1.expected" "$TMP/out"
	ktap_rc $? "$2"
	"$HERE/config-test" "$TMP/out" | cmp -s "$TMP/out" -
	ktap_rc $? "${2%%:*}: what is written reads back the same (round trip)"
}

# requests DESCRIPTION EXPECTED ARGS... : sync-test ARGS prints EXPECTED
requests() {
	local what=$1 want=$2 have
	shift 2
	have=$("$HERE/sync-test" "$@" 2>&1)
	if [ "$have" = "$want" ]; then
		ktap_rc 0 "$what"
	else
		printf '# expected:\n%s\n# got:\n%s\n' "$want" "$have"
		ktap_rc 1 "$what"
	fi
}

echo "TAP version 13"

# ---- parser and writer

"$HERE/config-test" "$CONF/server.conf" >"$TMP/out" &&
	diff -u "$CONF/server.expected" "$TMP/out" | sed 's/^/# /'
[ "${PIPESTATUS[0]}" = 0 ] && cmp -s "$CONF/server.expected" "$TMP/out"
ktap_rc $? "parse and write: case, blanks, comments and repeated AllowedIPs"

"$HERE/config-test" "$TMP/out" >"$TMP/again" && cmp -s "$TMP/out" "$TMP/again"
ktap_rc $? "what is written reads back the same (round trip)"

sed 's/$/\r/' "$CONF/server.conf" >"$TMP/crlf.conf"
"$HERE/config-test" "$TMP/crlf.conf" | cmp -s "$CONF/server.expected" -
ktap_rc $? "CRLF line ends are read like LF"

: >"$TMP/empty.conf"
[ "$("$HERE/config-test" "$TMP/empty.conf")" = "[Interface]" ]
ktap_rc $? "an empty file is an empty configuration"

printf '[Interface]\nListenPort = 7\n[Peer]\nPublicKey = %s\nAllowedIPs = 10.1.2.3/8' \
	"$LAPTOP" >"$TMP/noeol.conf"
"$HERE/config-test" "$TMP/noeol.conf" | grep -q '^AllowedIPs = 10.1.2.3/8$'
ktap_rc $? "no newline at the end; an address with host bits is kept as written"

refused "unknown key: file, line and key named" "bad.conf:3: unknown key 'Foo' in \[Interface\]" <<EOF
[Interface]
ListenPort = 1
Foo = bar
EOF
refused "an ftv-quick key is refused, pointing to ftv-quick strip" \
	"bad.conf:2: 'Address' is a key of ftv-quick(8).*ftv-quick strip" <<EOF
[Interface]
Address = 10.9.0.1/24
EOF
refused "a bad value is quoted, with its line" "bad.conf:2: '65536' is not a port" <<EOF
[Interface]
ListenPort = 65536
EOF
refused "a bad allowed IP in a list is quoted" "bad.conf:4: allowed IP '10.0.0.0/33'" <<EOF
[Interface]
[Peer]
PublicKey = $LAPTOP
AllowedIPs = 10.9.0.2/32, 10.0.0.0/33
EOF
refused "[Peer] without a PublicKey: the section's line" "bad.conf:2: \[Peer\] without a PublicKey" <<EOF
[Interface]
[Peer]
AllowedIPs = 10.9.0.2/32
[Peer]
PublicKey = $LAPTOP
EOF
refused "the same peer twice" "bad.conf:4: a second \[Peer\] with PublicKey '$LAPTOP'" <<EOF
[Peer]
PublicKey = $LAPTOP
# again
[Peer]
PublicKey = $LAPTOP
EOF
refused "a key before any section" "bad.conf:2: 'ListenPort' before any section" <<EOF
# nothing yet
ListenPort = 1
EOF
refused "an unknown section" "bad.conf:1: unknown section '\[Interfaces\]'" <<EOF
[Interfaces]
EOF
refused "a malformed section header" "bad.conf:1: malformed section header '\[Peer'" <<EOF
[Peer
EOF
refused "a key in the wrong section" "bad.conf:2: 'PublicKey' belongs in \[Peer\], not in \[Interface\]" <<EOF
[Interface]
publickey = $LAPTOP
EOF
refused "a key given twice" "bad.conf:3: 'ListenPort' given twice" <<EOF
[Interface]
ListenPort = 1
ListenPort = 2
EOF
refused "a second [Interface]" "bad.conf:4: a second \[Interface\] section" <<EOF
[Interface]
[Peer]
PublicKey = $LAPTOP
[Interface]
EOF
refused "a line that is neither" "bad.conf:2: 'ListenPort 1' is neither" <<EOF
[Interface]
ListenPort 1
EOF
refused "a value without a key" "bad.conf:2: a value without a key" <<EOF
[Interface]
 = 1
EOF
refused "a NUL byte" "bad.conf:2: a NUL byte" < <(printf '[Interface]\nListenPort = 1\0\n')

refused "a bad private key is refused ..." "bad.conf:2: PrivateKey is not a base64 key" \
	< <(printf '[Interface]\nPrivateKey = %s\n' "${SERVER_PRIV%=}")
! grep -q "${SERVER_PRIV:0:20}" "$TMP/err"
ktap_rc $? "... without quoting it"

# ---- FEC and Shape

cat >"$TMP/fec.conf" <<EOF
[Interface]
ListenPort = 443
shape = off
[Peer]
PublicKey = $LAPTOP
FEC = 16:2
[Peer]
PublicKey = $OFFICE
fec = auto
[Peer]
PublicKey = $SPARE
FEC=off
EOF
cat >"$TMP/fec.expected" <<EOF
[Interface]
ListenPort = 443
Shape = off

[Peer]
PublicKey = $LAPTOP
FEC = 16:2

[Peer]
PublicKey = $OFFICE

[Peer]
PublicKey = $SPARE
FEC = off
EOF
written_back fec "FEC and Shape: written back, FEC only when not the default auto"

refused "FEC 0:1: K refused, token and line quoted" "bad.conf:3: FEC '0:1': K, the data segments per group, must be 1 to 64" <<EOF
[Peer]
PublicKey = $LAPTOP
FEC = 0:1
EOF
refused "FEC 65:1: K refused" "bad.conf:3: FEC '65:1': K" <<EOF
[Peer]
PublicKey = $LAPTOP
FEC = 65:1
EOF
refused "FEC 4:17: M refused" "bad.conf:3: FEC '4:17': M, the repair segments per group, must be 1 to 16" <<EOF
[Peer]
PublicKey = $LAPTOP
FEC = 4:17
EOF
refused "FEC 4:0: M refused" "bad.conf:3: FEC '4:0': M" <<EOF
[Peer]
PublicKey = $LAPTOP
FEC = 4:0
EOF
refused "FEC x: not a setting" "bad.conf:3: 'x' is not a FEC setting" <<EOF
[Peer]
PublicKey = $LAPTOP
FEC = x
EOF
refused "Shape maybe: not a setting" "bad.conf:2: 'maybe' is not a shape setting (on or off)" <<EOF
[Interface]
Shape = maybe
EOF
refused "FEC belongs in [Peer]" "bad.conf:2: 'FEC' belongs in \[Peer\], not in \[Interface\]" <<EOF
[Interface]
FEC = auto
EOF
refused "Shape belongs in [Interface]" "bad.conf:3: 'Shape' belongs in \[Interface\], not in \[Peer\]" <<EOF
[Peer]
PublicKey = $LAPTOP
Shape = on
EOF

requests "setconf: FEC and Shape are sent as the file gives them" \
"set_device ftv0 listen-port=443 shape=off replace-peers
new_peer key=3p7bfXt9 fec=16:2
new_peer key=EBESExQV fec=auto
new_peer key=ICEiIyQl fec=off" setconf "$TMP/fec.conf"

requests "syncconf: the same FEC and Shape ask for nothing" "" \
	syncconf "$TMP/fec.conf" "$TMP/fec.conf"

cat >"$TMP/fec2.conf" <<EOF
[Interface]
ListenPort = 443
Shape = on
[Peer]
PublicKey = $LAPTOP
FEC = 16:3
[Peer]
PublicKey = $OFFICE
FEC = 8:1
[Peer]
PublicKey = $SPARE
EOF
requests "syncconf: a changed FEC is a change; left out, it goes back to auto" \
"set_device ftv0 shape=on
set_peer key=3p7bfXt9 fec=16:3
set_peer key=EBESExQV fec=8:1
set_peer key=ICEiIyQl fec=auto" syncconf "$TMP/fec.conf" "$TMP/fec2.conf"

requests "syncconf: a file without FEC or Shape asks nothing of a module without them" "" \
	syncconf "$CONF/server.conf" "$CONF/server.conf" --no-fec
sed "/^PublicKey = ${LAPTOP//\//\\/}/a FEC = 16:3" "$CONF/server.conf" >"$TMP/fec3.conf"
requests "syncconf: a module without FEC is given the FEC the file names" \
	"set_peer key=3p7bfXt9 fec=16:3" \
	syncconf "$CONF/server.conf" "$TMP/fec3.conf" --no-fec

# ---- Flows

cat >"$TMP/flows.conf" <<EOF
[Interface]
ListenPort = 443
[Peer]
PublicKey = $LAPTOP
Flows = 4
[Peer]
PublicKey = $OFFICE
flows=1
EOF
cat >"$TMP/flows.expected" <<EOF
[Interface]
ListenPort = 443

[Peer]
PublicKey = $LAPTOP
Flows = 4

[Peer]
PublicKey = $OFFICE
EOF
written_back flows "Flows: written back only when not the default 1"
refused "Flows 0 refused, line quoted" "bad.conf:3: '0' is not a number of flows (1 to 8)" <<EOF
[Peer]
PublicKey = $LAPTOP
Flows = 0
EOF
refused "Flows 9 refused" "bad.conf:3: '9' is not a number of flows (1 to 8)" <<EOF
[Peer]
PublicKey = $LAPTOP
Flows = 9
EOF
requests "setconf: Flows is sent as the file gives it" \
"set_device ftv0 listen-port=443 replace-peers
new_peer key=3p7bfXt9 flows=4
new_peer key=EBESExQV flows=1" setconf "$TMP/flows.conf"
sed 's/^Flows = 4$/Flows = 2/; /^flows=1$/d' "$TMP/flows.conf" >"$TMP/flows2.conf"
requests "syncconf: changed Flows is a change; left out, it goes back to 1" \
	"set_peer key=3p7bfXt9 flows=2" syncconf "$TMP/flows.conf" "$TMP/flows2.conf"
requests "syncconf: a module without flows is given the Flows the file names" \
	"set_peer key=3p7bfXt9 flows=2" \
	syncconf "$TMP/flows.conf" "$TMP/flows2.conf" --no-fec

# ---- Rotate

cat >"$TMP/rotate.conf" <<EOF
[Interface]
ListenPort = 443
[Peer]
PublicKey = $LAPTOP
Rotate = 12288
[Peer]
PublicKey = $OFFICE
rotate=auto
[Peer]
PublicKey = $SPARE
Rotate = off
[Peer]
PublicKey = $NEW
Rotate = 1G
EOF
cat >"$TMP/rotate.expected" <<EOF
[Interface]
ListenPort = 443

[Peer]
PublicKey = $LAPTOP
Rotate = 12k

[Peer]
PublicKey = $OFFICE

[Peer]
PublicKey = $SPARE
Rotate = off

[Peer]
PublicKey = $NEW
Rotate = 1g
EOF
written_back rotate "Rotate: written back only when not the default auto, in k, m or g when exact"
refused "Rotate 4095 refused, line quoted" "bad.conf:3: rotate '4095': a budget must be 4096 bytes (4k) to 1073741824 (1g)" <<EOF
[Peer]
PublicKey = $LAPTOP
Rotate = 4095
EOF
refused "Rotate 1025m refused" "bad.conf:3: rotate '1025m': a budget must be 4096 bytes" <<EOF
[Peer]
PublicKey = $LAPTOP
Rotate = 1025m
EOF
refused "Rotate 12kb refused" "bad.conf:3: '12kb' is not a rotate setting (off, auto, or a budget in bytes" <<EOF
[Peer]
PublicKey = $LAPTOP
Rotate = 12kb
EOF
requests "setconf: Rotate is sent as the file gives it" \
"set_device ftv0 listen-port=443 replace-peers
new_peer key=3p7bfXt9 rotate=12k
new_peer key=EBESExQV rotate=auto
new_peer key=ICEiIyQl rotate=off
new_peer key=MDEyMzQ1 rotate=1g" setconf "$TMP/rotate.conf"
sed 's/^Rotate = 12288$/Rotate = 5000/; /^rotate=auto$/d; /^Rotate = off$/d' \
	"$TMP/rotate.conf" >"$TMP/rotate2.conf"
requests "syncconf: changed Rotate is a change; left out, it goes back to auto" \
"set_peer key=3p7bfXt9 rotate=5000
set_peer key=ICEiIyQl rotate=auto" syncconf "$TMP/rotate.conf" "$TMP/rotate2.conf"
grep -v '^Rotate = \|^rotate=' "$TMP/rotate.conf" >"$TMP/rotate0.conf"
requests "syncconf: a module without rotate is given the Rotate the file names" \
"set_peer key=3p7bfXt9 rotate=5000
set_peer key=MDEyMzQ1 rotate=1g" \
	syncconf "$TMP/rotate0.conf" "$TMP/rotate2.conf" --no-fec

# ---- Endpoint lists

cat >"$TMP/eplist.conf" <<EOF
[Interface]
ListenPort = 443
[Peer]
PublicKey = $LAPTOP
Endpoint = 192.0.2.1:443,[2001:db8::1]:8443 ,  192.0.2.2:443
[Peer]
PublicKey = $OFFICE
Endpoint = 192.0.2.9:443
EOF
cat >"$TMP/eplist.expected" <<EOF
[Interface]
ListenPort = 443

[Peer]
PublicKey = $LAPTOP
Endpoint = 192.0.2.1:443, [2001:db8::1]:8443, 192.0.2.2:443

[Peer]
PublicKey = $OFFICE
Endpoint = 192.0.2.9:443
EOF
written_back eplist "Endpoint: a comma list, IPv4 and IPv6 mixed, written back in order"
refused "Endpoint: more than 8 refused, line quoted" "bad.conf:3: endpoints '.*': more than 8" <<EOF
[Peer]
PublicKey = $LAPTOP
Endpoint = 1.0.0.1:1,1.0.0.2:1,1.0.0.3:1,1.0.0.4:1,1.0.0.5:1,1.0.0.6:1,1.0.0.7:1,1.0.0.8:1,1.0.0.9:1
EOF
refused "Endpoint: an empty entry refused" "bad.conf:3: endpoints '1.0.0.1:1, ,1.0.0.2:1': empty entry" <<EOF
[Peer]
PublicKey = $LAPTOP
Endpoint = 1.0.0.1:1, ,1.0.0.2:1
EOF
refused "Endpoint: a bad entry refused, quoted" "bad.conf:3: '1.0.0.2' is not an endpoint" <<EOF
[Peer]
PublicKey = $LAPTOP
Endpoint = 1.0.0.1:1,1.0.0.2
EOF
requests "setconf: a list is sent as a list, one endpoint as before" \
"set_device ftv0 listen-port=443 replace-peers
new_peer key=3p7bfXt9 endpoints=192.0.2.1:443,[2001:db8::1]:8443,192.0.2.2:443
new_peer key=EBESExQV endpoint=192.0.2.9:443" setconf "$TMP/eplist.conf"
requests "syncconf: the same lists are no change" "" \
	syncconf "$TMP/eplist.conf" "$TMP/eplist.conf"
sed 's/ ,  192.0.2.2:443$//; s/^Endpoint = 192.0.2.9:443$/Endpoint = 192.0.2.9:443, 192.0.2.10:443/' \
	"$TMP/eplist.conf" >"$TMP/eplist2.conf"
requests "syncconf: a list shortened or grown is a change" \
"set_peer key=3p7bfXt9 endpoints=192.0.2.1:443,[2001:db8::1]:8443
set_peer key=EBESExQV endpoints=192.0.2.9:443,192.0.2.10:443" \
	syncconf "$TMP/eplist.conf" "$TMP/eplist2.conf"
sed 's/^Endpoint = 192.0.2.1:443,.*$/Endpoint = 192.0.2.1:443/' \
	"$TMP/eplist.conf" >"$TMP/eplist1.conf"
requests "syncconf: one endpoint where the kernel has a list sets a list of one" \
	"set_peer key=3p7bfXt9 endpoint=192.0.2.1:443" \
	syncconf "$TMP/eplist.conf" "$TMP/eplist1.conf"
requests "syncconf: a module without lists is given the list the file names" \
	"set_peer key=3p7bfXt9 endpoints=192.0.2.1:443,[2001:db8::1]:8443,192.0.2.2:443" \
	syncconf "$TMP/eplist1.conf" "$TMP/eplist.conf" --no-fec

# ---- many peers

# peers N [EXTRA] : a file of N peers with one /32 each; EXTRA is appended
peers() {
	python3 - "$1" <<'PY'
import base64, sys
print("[Interface]\nListenPort = 443")
for i in range(int(sys.argv[1])):
    key = base64.b64encode(i.to_bytes(4, "big") * 8).decode()
    print("[Peer]\nPublicKey = %s\nAllowedIPs = 10.%d.%d.%d/32"
          % (key, i >> 16 & 255, i >> 8 & 255, i & 255))
PY
	[ $# -lt 2 ] || printf '%s\n' "$2"
}

if command -v python3 >/dev/null; then
	peers 100000 >"$TMP/many.conf"
	# Quadratic work would take minutes here; linear work, a second.
	have=$(timeout 20 "$HERE/sync-test" syncconf "$TMP/many.conf" "$TMP/many.conf" 2>&1)
	ktap_rc $? "syncconf: 100,000 peers, read twice and compared in time, nothing to do${have:+: $have}"

	peers 100000 "$(printf '[Peer]\nPublicKey = %s' "$(head -n 4 "$TMP/many.conf" | sed -n 's/^PublicKey = //p')")" \
		>"$TMP/dup.conf"
	ktap_fails_with "a duplicate peer among 100,000 is found" \
		"dup.conf:300003: a second \[Peer\] with PublicKey 'AAAAAAAAAAAA" \
		timeout 20 "$HERE/config-test" "$TMP/dup.conf"

	sed '/^AllowedIPs = 10.1.17.112\/32$/s/$/, 192.0.2.1/' "$TMP/many.conf" >"$TMP/one.conf"
	requests "syncconf: one changed peer among 100,000 is one request" \
"set_peer key=AAERcAAB replace-ips ips=10.1.17.112/32,192.0.2.1/32" \
		syncconf "$TMP/many.conf" "$TMP/one.conf"
else
	ktap_skip "syncconf: 100,000 peers" "no python3"
fi

# ---- the real ftvctl

"$FTVCTL" setconf ftv0 "$TMP/none.conf" 2>"$TMP/err" && false
grep -q "^ftvctl: $TMP/none.conf: No such file" "$TMP/err"
ktap_rc $? "setconf: a missing file is named"

printf '[Interface]\nfoo = 1\n' >"$TMP/foo.conf"
"$FTVCTL" syncconf ftv0 "$TMP/foo.conf" 2>"$TMP/err" && false
[ "$(cat "$TMP/err")" = "ftvctl: $TMP/foo.conf:2: unknown key 'foo' in [Interface]" ]
ktap_rc $? "syncconf: the error is one line, 'ftvctl: FILE:LINE: ...'"

printf '[Interface]\nfoo = 1\n' | "$FTVCTL" setconf ftv0 - 2>"$TMP/err" && false
grep -q "^ftvctl: stdin:2: unknown key" "$TMP/err"
ktap_rc $? "setconf: - reads standard input, called stdin in errors"

"$FTVCTL" setconf ftv0 >/dev/null 2>"$TMP/err" && false
grep -q "Usage: ftvctl setconf <interface> <configuration file>" "$TMP/err"
ktap_rc $? "setconf: usage without a file"

if [ -d /sys/module/ftv ]; then
	ktap_skip "setconf: a valid file gets as far as the kernel" "the module is loaded"
else
	"$FTVCTL" setconf ftv0 "$CONF/server.conf" 2>"$TMP/err" && false
	grep -q "not loaded" "$TMP/err"
	ktap_rc $? "setconf: a valid file gets as far as the kernel"
fi

# ---- what setconf and syncconf ask of the kernel

requests "setconf: replace the peers, then add each" \
"set_device ftv0 private-key=dwdtCnMY listen-port=443 replace-peers
new_peer key=3p7bfXt9 psk=QEFCQ0RF ips=10.9.0.2/32,fd09::2/128
new_peer key=EBESExQV endpoint=[2001:db8::3]:443 keepalive=25 ips=10.9.0.3/32,192.168.3.0/24
new_peer key=ICEiIyQl" setconf "$CONF/server.conf"

requests "syncconf: the same configuration asks for nothing" "" \
	syncconf "$CONF/server.conf" "$CONF/server.conf"

requests "syncconf: a kernel that hides keys is given the pre-shared key only" \
	"set_peer key=3p7bfXt9 psk=QEFCQ0RF" \
	syncconf "$CONF/server.conf" "$CONF/server.conf" --hidden-keys

# The same peers, written another way: reordered, host bits set, the
# private key of the device unchanged, the learned endpoint not in the file.
cat >"$TMP/same.conf" <<EOF
[Interface]
PrivateKey = $SERVER_PRIV
[Peer]
PublicKey = $SPARE
[Peer]
PublicKey = $OFFICE
AllowedIPs = 192.168.3.77/24, 10.9.0.3/32, 10.9.0.3
PersistentKeepalive = 25
[Peer]
PublicKey = $LAPTOP
PresharedKey = $PSK
AllowedIPs = fd09::2/128, 10.9.0.2/32
EOF
requests "syncconf: order, host bits, duplicates and a missing endpoint are no change" "" \
	syncconf "$CONF/server.conf" "$TMP/same.conf"

cat >"$TMP/changed.conf" <<EOF
[Interface]
PrivateKey = $SERVER_PRIV
ListenPort = 8443
[Peer]
PublicKey = $LAPTOP
AllowedIPs = 10.9.0.2/32, fd09::2/128
[Peer]
PublicKey = $OFFICE
AllowedIPs = 10.9.0.3/32, 192.168.3.0/24
Endpoint = [2001:db8::3]:443
PersistentKeepalive = 0
PresharedKey = $PSK
[Peer]
PublicKey = $NEW
AllowedIPs = 10.9.0.9/32
EOF
requests "syncconf: only what differs, removals first, additions last" \
"set_device ftv0 listen-port=8443
del_peer key=ICEiIyQl
set_peer key=3p7bfXt9 remove-psk
set_peer key=EBESExQV psk=QEFCQ0RF keepalive=0
new_peer key=MDEyMzQ1 ips=10.9.0.9/32" syncconf "$CONF/server.conf" "$TMP/changed.conf"

cat >"$TMP/moved.conf" <<EOF
[Interface]
PrivateKey = $(printf 'x%.0s' {1..32} | base64)
[Peer]
PublicKey = $LAPTOP
PresharedKey = $PSK
AllowedIPs = 10.9.0.2/32
Endpoint = 192.0.2.7:443
[Peer]
PublicKey = $OFFICE
AllowedIPs = 10.9.0.3/32, 192.168.3.0/24, fd09::2/128
Endpoint = [2001:db8::3]:443
PersistentKeepalive = 25
[Peer]
PublicKey = $SPARE
EOF
requests "syncconf: a new private key, an endpoint, allowed IPs replaced" \
"set_device ftv0 private-key=eHh4eHh4
set_peer key=3p7bfXt9 endpoint=192.0.2.7:443 replace-ips ips=10.9.0.2/32
set_peer key=EBESExQV replace-ips ips=10.9.0.3/32,192.168.3.0/24,fd09::2/128" \
	syncconf "$CONF/server.conf" "$TMP/moved.conf"

ktap_done
