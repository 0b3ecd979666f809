#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ftv-quick up and down, twice over.
#
# 1. A client and a server on one link, both brought up by ftv-quick from a
#    file: addresses, MTU, a route for an allowed-ips prefix, hooks; a ping
#    through; down leaves nothing.
#
#   ns A (client)                              ns B (server)
#   ftvq0 10.9.0.2/24 fd09::2/64, MTU 1380      ftvq0 10.9.0.1/24 fd09::1/64
#    peer B: endpoint 10.0.0.2:51820,           :51820, peer A: 10.9.0.2/32,
#    10.9.0.0/24 fd09::/64 10.77.0.0/16          fd09::2/128
#   veth0 10.0.0.1 ---------------------------- veth0 10.0.0.2
#
# 2. A full-tunnel client (AllowedIPs 0.0.0.0/0, ::/0) behind a router:
#    the server's address is reached only by the client's default route,
#    which the tunnel takes over, so the outer segments must leave by the
#    fwmark and policy rules or loop into the tunnel. 192.0.2.1 lives on
#    the server and the router knows no route to it: only the tunnel does.
#
#   ns C (client)          ns R (router)                  ns S (server)
#   ftvq0 10.9.0.2/32      forwards, no route             ftvq0 10.9.0.1/24
#   c0 10.0.1.2 ---------- r0 10.0.1.1  r1 10.0.2.1 ----- s0 10.0.2.2
#   default via 10.0.1.1   to 10.9/16 or 192.0.2/24      dummy0 192.0.2.1/32
#                                                         default via 10.0.2.1

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

QUICK=${FTV_QUICK:-$FTV_ROOT/tools/ftv-quick/ftv-quick}
# ftv-quick runs ftvctl from PATH, as it would once installed.
PATH=$(dirname "$FTVCTL"):$PATH
export PATH

ktap_plan 26
ftv_require
[ -x "$QUICK" ] || ktap_bail "ftv-quick not found at $QUICK"

# quick NS CMD FILE : ftv-quick in NS, its output kept in $FTV_TMP/quick.log
quick()
{
	nsx "$1" "$QUICK" "$2" "$3" >"$FTV_TMP/quick.log" 2>&1
}

quick_check()
{
	local desc=$1

	shift
	if quick "$@"; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc"
		ktap_diag <"$FTV_TMP/quick.log"
	fi
}

# gone NS : no ftvq0, no route through it, no rule of ftv-quick
# shellcheck disable=SC2317 # called through ktap_check
gone()
{
	local left

	left=$(ip -n "$1" -o link show ftvq0 2>/dev/null
	       ip -n "$1" -4 route show table all | grep ftvq0
	       ip -n "$1" -6 route show table all | grep ftvq0
	       ip -n "$1" -4 rule show | grep 'fwmark\|suppress_prefixlength'
	       ip -n "$1" -6 rule show | grep 'fwmark\|suppress_prefixlength')
	[ -z "$left" ] && return 0
	echo "left behind:"
	echo "$left"
	return 1
}

tmpdir
umask 077
if ! ftv_keypair a || ! ftv_keypair b; then
	ktap_bail "cannot make keys"
fi
mkdir "$FTV_TMP/a" "$FTV_TMP/b" "$FTV_TMP/c" "$FTV_TMP/s"

# ---- 1. two namespaces

pair_underlay 4 || ktap_bail "cannot set up the underlay"

cat >"$FTV_TMP/b/ftvq0.conf" <<EOF
[Interface]
PrivateKey = $(cat "$FTV_TMP/b.key")
ListenPort = $FTV_PORT
Address = 10.9.0.1/24, fd09::1/64

[Peer]
PublicKey = $(pubkey_of a)
AllowedIPs = 10.9.0.2/32, fd09::2/128
EOF
cat >"$FTV_TMP/a/ftvq0.conf" <<EOF
[Interface]
PrivateKey = $(cat "$FTV_TMP/a.key")
Address = 10.9.0.2/24
Address = fd09::2/64
MTU = 1380
PostUp = echo up > $FTV_TMP/hook.%i
PreDown = ip link show %i > /dev/null && echo pre-down >> $FTV_TMP/hook.%i
PostDown = ! ip link show %i 2> /dev/null && echo post-down >> $FTV_TMP/hook.%i

[Peer]
PublicKey = $(pubkey_of b)
Endpoint = 10.0.0.2:$FTV_PORT
AllowedIPs = 10.9.0.0/24, fd09::/64
AllowedIPs = 10.77.0.0/16
PersistentKeepalive = 25
EOF

quick_check "up: the server" "$B" up "$FTV_TMP/b/ftvq0.conf"
quick_check "up: the client" "$A" up "$FTV_TMP/a/ftvq0.conf"
ktap_diag "what ftv-quick up ran on the client:"
ktap_diag <"$FTV_TMP/quick.log"

ktap_check "up: addresses and MTU set, link up" bash -c "
	ip -n '$A' -o addr show dev ftvq0 | grep -q 'inet 10.9.0.2/24' &&
	ip -n '$A' -o addr show dev ftvq0 | grep -q 'inet6 fd09::2/64' &&
	ip -n '$A' link show ftvq0 | grep -q 'mtu 1380' &&
	ip -n '$A' link show ftvq0 | grep -q '[<,]UP[,>]'"
ktap_check "up: a route for 10.77.0.0/16, none needed for 10.9.0.0/24" bash -c "
	ip -n '$A' route show dev ftvq0 | grep -q '^10.77.0.0/16' &&
	[ \$(ip -n '$A' route show dev ftvq0 | grep -c '^10.9.0.0/24') = 1 ]"
ktap_eq "up: PostUp ran, with %i replaced" "up" "$(cat "$FTV_TMP/hook.ftvq0" 2>&1)"

if connect_ping "$A" 10.9.0.1; then
	ktap_ok "the client pings the server through the tunnel (IPv4)"
else
	ktap_fail "the client pings the server through the tunnel (IPv4)"
	nsx "$A" "$FTVCTL" show 2>&1 | ktap_diag
fi
ktap_check "the client pings the server through the tunnel (IPv6)" \
	wait_for 10 ping_ok "$A" fd09::1

if quick "$A" up "$FTV_TMP/a/ftvq0.conf"; then
	ktap_fail "up: refused when the interface exists"
else
	ktap_check "up: refused when the interface exists" \
		grep -q "ftvq0 already exists" "$FTV_TMP/quick.log"
fi

# save writes the running state back over the file, ftv-quick's keys and
# all: stripped of them, it is what ftvctl showconf prints.
quick_check "save: the server's configuration written back" \
	"$B" save "$FTV_TMP/b/ftvq0.conf"
ktap_check "save: addresses kept, the rest is showconf" bash -c "
	grep -qx 'Address = 10.9.0.1/24' '$FTV_TMP/b/ftvq0.conf' &&
	grep -qx 'Address = fd09::1/64' '$FTV_TMP/b/ftvq0.conf' &&
	[ \"\$(ip netns exec '$B' '$QUICK' strip '$FTV_TMP/b/ftvq0.conf')\" = \
	  \"\$(ip netns exec '$B' '$FTVCTL' showconf ftvq0)\" ]" ||
	ktap_diag <"$FTV_TMP/b/ftvq0.conf"

quick_check "down: the client" "$A" down "$FTV_TMP/a/ftvq0.conf"
ktap_check "down: interface, addresses and routes gone" gone "$A"
ktap_eq "down: PreDown ran with the interface, PostDown without" \
	"up pre-down post-down" "$(xargs <"$FTV_TMP/hook.ftvq0")"
quick_check "down: the server" "$B" down "$FTV_TMP/b/ftvq0.conf"

# An error in the file: named by file and line, nothing left behind.
sed 's/^PersistentKeepalive = 25$/PersistentKeepalive = often/' \
	"$FTV_TMP/a/ftvq0.conf" >"$FTV_TMP/c/ftvq0.conf"
if quick "$A" up "$FTV_TMP/c/ftvq0.conf"; then
	ktap_fail "up: a bad file fails by file and line, leaving nothing"
else
	line=$(grep -n '^PersistentKeepalive' "$FTV_TMP/c/ftvq0.conf" | cut -d: -f1)
	ktap_check "up: a bad file fails by file and line, leaving nothing" bash -c "
		grep -q \"ftvctl: $FTV_TMP/c/ftvq0.conf:$line: 'often' is not a keepalive\" \
			'$FTV_TMP/quick.log' &&
		! ip -n '$A' link show ftvq0 >/dev/null 2>&1" ||
		ktap_diag <"$FTV_TMP/quick.log"
fi

# ---- 2. a full-tunnel client behind a router

ns_create C R S || ktap_bail "cannot create namespaces"
if ! veth_pair "$C" c0 "$R" r0 || ! veth_pair "$R" r1 "$S" s0 ||
   ! ip -n "$C" addr add 10.0.1.2/24 dev c0 ||
   ! ip -n "$R" addr add 10.0.1.1/24 dev r0 ||
   ! ip -n "$R" addr add 10.0.2.1/24 dev r1 ||
   ! ip -n "$S" addr add 10.0.2.2/24 dev s0 ||
   ! ip -n "$C" route add default via 10.0.1.1 ||
   ! ip -n "$S" route add default via 10.0.2.1 ||
   ! nsx "$R" sysctl -q -w net.ipv4.ip_forward=1 ||
   ! ip -n "$S" link add dummy0 type dummy ||
   ! ip -n "$S" addr add 192.0.2.1/32 dev dummy0 ||
   ! ip -n "$S" link set dummy0 up; then
	ktap_bail "cannot set up the routed underlay"
fi

cat >"$FTV_TMP/s/ftvq0.conf" <<EOF
[Interface]
PrivateKey = $(cat "$FTV_TMP/b.key")
ListenPort = $FTV_PORT
Address = 10.9.0.1/24

[Peer]
PublicKey = $(pubkey_of a)
AllowedIPs = 10.9.0.2/32
EOF
cat >"$FTV_TMP/c/ftvq0.conf" <<EOF
[Interface]
PrivateKey = $(cat "$FTV_TMP/a.key")
Address = 10.9.0.2/32

[Peer]
PublicKey = $(pubkey_of b)
Endpoint = 10.0.2.2:$FTV_PORT
AllowedIPs = 0.0.0.0/0, ::/0
PersistentKeepalive = 25
EOF

quick_check "full tunnel: up on the server" "$S" up "$FTV_TMP/s/ftvq0.conf"
quick_check "full tunnel: up on the client" "$C" up "$FTV_TMP/c/ftvq0.conf"
ktap_diag "what ftv-quick up ran on the client:"
ktap_diag <"$FTV_TMP/quick.log"

mark=$(ftv_json "$C" ftvq0 'd["fwmark"]')
hex=$(printf '0x%x' "${mark:-0}")
ktap_check "full tunnel: a fwmark and its policy rules, both families" bash -c "
	[ '${mark:-0}' != 0 ] &&
	ip -n '$C' -4 rule show | grep -q 'not from all fwmark $hex lookup $mark' &&
	ip -n '$C' -4 rule show | grep -q 'lookup main suppress_prefixlength 0' &&
	ip -n '$C' -6 rule show | grep -q 'not from all fwmark $hex lookup $mark' &&
	ip -n '$C' -6 rule show | grep -q 'lookup main suppress_prefixlength 0'"
ktap_check "full tunnel: traffic goes to the tunnel, marked segments to the router" \
	bash -c "
	ip -n '$C' route get 192.0.2.1 | grep -q 'dev ftvq0' &&
	ip -n '$C' route get 10.0.2.2 mark $mark | grep -q 'via 10.0.1.1 dev c0'"

c0_before=$(nsx "$C" cat /sys/class/net/c0/statistics/tx_packets)
if connect_ping "$C" 10.9.0.1; then
	ktap_ok "full tunnel: the client reaches the server through the tunnel"
else
	ktap_fail "full tunnel: the client reaches the server through the tunnel"
	nsx "$C" "$FTVCTL" show 2>&1 | ktap_diag
	ip -n "$C" rule show | ktap_diag
fi
ktap_check "full tunnel: and an address only the tunnel leads to" \
	nsx "$C" ping -c 3 -i 0.2 -W 2 192.0.2.1
# The segments went out on c0, once each: a loop would have sent them
# back into ftvq0, never to the wire.
c0_after=$(nsx "$C" cat /sys/class/net/c0/statistics/tx_packets)
tx=$(ftv_peer_json "$C" ftvq0 "$(pubkey_of b)" '"%d %s" % (p["tx_bytes"], p["state"])')
if [ $((c0_after - c0_before)) -ge 4 ] && [[ $tx == *" established" ]] &&
   [ "${tx%% *}" -gt 0 ]; then
	ktap_ok "full tunnel: the outer segments leave on c0, no loop"
else
	ktap_fail "full tunnel: the outer segments leave on c0, no loop"
	ktap_diag "c0 tx_packets $c0_before -> $c0_after; peer tx_bytes and state: $tx"
fi

quick_check "full tunnel: down on the client" "$C" down "$FTV_TMP/c/ftvq0.conf"
ktap_check "full tunnel: rules, routes and interface gone" gone "$C"
ktap_check "full tunnel: the default route is the router's again" bash -c "
	ip -n '$C' route get 192.0.2.1 | grep -q 'via 10.0.1.1 dev c0'"
quick_check "full tunnel: down on the server" "$S" down "$FTV_TMP/s/ftvq0.conf"

ktap_finish
