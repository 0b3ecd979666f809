#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Addresses and routes that change under a running tunnel, the cases
# WireGuard's own netns.sh replays, over IPv4 and IPv6 underlays:
#
#  1. the local address A sends from is removed and another added on the
#     same interface (a new DHCP lease, a renumbered LAN): A follows;
#  2. B has two addresses (or one on another interface, a dummy behind a
#     route) and A dials each in turn (its peer made anew each time):
#     B answers from the one dialled;
#  3. A's route to B gains a lower-metric route out of another interface
#     with its own preferred source: A moves to it, and B's endpoint for
#     A becomes that source;
#  4. one ftv device's peer endpoint lies inside another ftv device's
#     network (a tunnel in a tunnel): traffic flows through both.
#
#   ns A (initiator)                           ns B (responder)
#   +----------------------------+            +----------------------------+
#   | ftv0 10.9.0.1 fd09::1      |            | ftv0 10.9.0.2 fd09::2      |
#   | veth1 10.0.0.1 fd00:aa::1  |------------| veth2 10.0.0.2 fd00:aa::2  |
#   | veth3 10.0.0.3 (case 3)    |------------| veth4 (case 3)             |
#   +----------------------------+            +----------------------------+
#
# A reconnects for each change (a fake TCP connection is bound to its
# 4-tuple); each step allows it three seconds, where WireGuard takes its
# next packet: a new connection and key exchange take one round trip
# here, and the limit is well under ftv's five-second dead-path timer, so
# a pass means the change was noticed, not timed out.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

FOLLOW=3

ktap_plan 15
ftv_require

ns_create A B || ktap_bail "cannot create namespaces"
veth_pair "$A" veth1 "$B" veth2 || ktap_bail "cannot create veth"
nsx "$A" sysctl -qw net.ipv4.conf.veth1.promote_secondaries=1
{ ftv_keypair a && ftv_keypair b; } || ktap_bail "cannot make keys"
{ ftv_dev "$A" 1 && ftv_dev "$B" 2; } || ktap_bail "cannot create ftv0"
nsx "$A" "$FTVCTL" set ftv0 private-key "$FTV_TMP/a.key" \
	listen-port "$FTV_PORT" || ktap_bail "cannot configure A"
nsx "$B" "$FTVCTL" set ftv0 private-key "$FTV_TMP/b.key" \
	listen-port "$FTV_PORT" || ktap_bail "cannot configure B"
nsx "$A" "$FTVCTL" peer add ftv0 "$(pubkey_of b)" \
	allowed-ips 10.9.0.2/32,fd09::2/128 || ktap_bail "cannot add B to A"
nsx "$B" "$FTVCTL" peer add ftv0 "$(pubkey_of a)" \
	allowed-ips 10.9.0.1/32,fd09::1/128 || ktap_bail "cannot add A to B"
pub_a=$(pubkey_of a)
pub_b=$(pubkey_of b)

# dial EP : A's peer for B made anew with endpoint EP: its next session
# goes there (a session that works stays where it is when only the
# endpoint changes)
dial()
{
	nsx "$A" "$FTVCTL" peer del ftv0 "$pub_b"
	nsx "$A" "$FTVCTL" peer add ftv0 "$pub_b" endpoint "$1" \
		allowed-ips 10.9.0.2/32,fd09::2/128
}

# follows NS ADDR : NS's ping of ADDR answered within $FOLLOW seconds
follows()
{
	wait_for "$FOLLOW" ping_ok "$1" "$2"
}

show_both()
{
	nsx "$A" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	nsx "$B" "$FTVCTL" show ftv0 2>&1 | ktap_diag
}

# step NAME NS ADDR : a test line: NS reaches ADDR through the tunnel
step()
{
	if follows "$2" "$3"; then
		ktap_ok "$1"
	else
		ktap_fail "$1"
		ktap_diag "no answer from $3 within $FOLLOW s"
		show_both
	fi
}

# endpoint_is NAME NS PUB WANT : NS's endpoint for PUB has address WANT
# (its port is the one A dialled from, a new one each time)
endpoint_is()
{
	local got

	got=$(ftv_peer_json "$2" ftv0 "$3" 'p["endpoint"]' 2>&1)
	got=${got%:*}
	got=${got#[}
	got=${got%]}
	if [ "$got" = "$4" ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1"
		ktap_diag "endpoint address $got, expected $4"
	fi
}

# A counts, ahead of ftv's hook, the segments that come from each of B's
# addresses: a session still on the old address would answer from there.
nsx "$A" nft -f - <<NFT || ktap_bail "cannot set up A's counters"
table inet ftvaddr {
	chain pre {
		type filter hook prerouting priority -500;
		ip saddr 10.0.0.1 tcp sport $FTV_PORT counter comment "from 10.0.0.1"
		ip saddr 10.0.0.2 tcp sport $FTV_PORT counter comment "from 10.0.0.2"
		ip6 saddr fd00:aa::1 tcp sport $FTV_PORT counter comment "from fd00:aa::1"
		ip6 saddr fd00:aa::2 tcp sport $FTV_PORT counter comment "from fd00:aa::2"
	}
}
NFT

# from ADDR : segments A received from B's ADDR so far
from()
{
	nft_packets "$A" "inet ftvaddr" "\"from $1\""
}

# ---- 1. the source address is replaced on the same interface
ip -n "$A" addr add 10.0.0.1/24 dev veth1
ip -n "$A" addr add fd00:aa::1/96 dev veth1 nodad
ip -n "$B" addr add 10.0.0.2/24 dev veth2
ip -n "$B" addr add fd00:aa::2/96 dev veth2 nodad
nsx "$A" "$FTVCTL" peer set ftv0 "$pub_b" endpoint "10.0.0.2:$FTV_PORT"
connect_ping "$A" 10.9.0.2 || ktap_diag "no first ping over IPv4"
ip -n "$A" addr add 10.0.0.10/24 dev veth1
ip -n "$A" addr del 10.0.0.1/24 dev veth1
step "IPv4: A follows when its source address is replaced" "$A" 10.9.0.2
endpoint_is "IPv4: B's endpoint for A is A's new address" \
	"$B" "$pub_a" 10.0.0.10
dial "[fd00:aa::2]:$FTV_PORT"
connect_ping "$A" 10.9.0.2 10 || ktap_diag "no first ping over IPv6"
ip -n "$A" addr add fd00:aa::10/96 dev veth1 nodad
ip -n "$A" addr del fd00:aa::1/96 dev veth1
step "IPv6: A follows when its source address is replaced" "$A" 10.9.0.2
endpoint_is "IPv6: B's endpoint for A is A's new address" \
	"$B" "$pub_a" fd00:aa::10

# ---- 2. B answers from the address A dialled
ip -n "$A" addr flush dev veth1
ip -n "$B" addr flush dev veth2
ip -n "$B" addr add 10.0.0.1/24 dev veth2
ip -n "$B" addr add 10.0.0.2/24 dev veth2
ip -n "$B" addr add fd00:aa::1/96 dev veth2 nodad
ip -n "$B" addr add fd00:aa::2/96 dev veth2 nodad
ip -n "$A" addr add 10.0.0.3/24 dev veth1
ip -n "$A" addr add fd00:aa::3/96 dev veth1 nodad
for ep in 10.0.0.1 "[fd00:aa::1]" 10.0.0.2 "[fd00:aa::2]"; do
	addr=${ep#[}
	addr=${addr%]}
	dial "$ep:$FTV_PORT"
	before=$(from "$addr")
	if follows "$A" 10.9.0.2 &&
	   nsx "$A" ping -q -c 3 -i 0.1 -W 1 10.9.0.2 >/dev/null &&
	   [ $(($(from "$addr") - before)) -ge 3 ]; then
		ktap_ok "A dials $addr and B answers from it"
	else
		ktap_fail "A dials $addr and B answers from it"
		ktap_diag "segments from $addr: $before before, $(from "$addr") after"
		show_both
	fi
done
ip -n "$B" link add dummy0 type dummy
ip -n "$B" addr add 10.50.0.1/24 dev dummy0
ip -n "$B" link set dummy0 up
ip -n "$A" route add 10.50.0.0/24 dev veth1
nsx "$B" sysctl -qw net.ipv4.conf.all.rp_filter=0
nsx "$B" sysctl -qw net.ipv4.conf.veth2.rp_filter=0
dial "10.50.0.1:$FTV_PORT"
step "B answers for an address on another interface" "$A" 10.9.0.2
ip -n "$B" link del dummy0
ip -n "$A" addr flush dev veth1
ip -n "$B" addr flush dev veth2
ip -n "$A" route flush dev veth1

# ---- 3. a lower-metric route with its own preferred source
veth_pair "$A" veth3 "$B" veth4 || ktap_bail "cannot create the second veth"
ip -n "$A" addr add 10.0.0.1/24 dev veth1
ip -n "$B" addr add 10.0.0.2/24 dev veth2
ip -n "$A" addr add 10.0.0.3/24 dev veth3
ip -n "$A" route flush dev veth1
ip -n "$A" route flush dev veth3
ip -n "$A" route add 10.0.0.0/24 dev veth1 src 10.0.0.1 metric 2
dial "10.0.0.2:$FTV_PORT"
step "a route with a preferred source: A reaches B" "$A" 10.9.0.2
endpoint_is "B's endpoint for A is that source" "$B" "$pub_a" 10.0.0.1
ip -n "$A" route add 10.0.0.0/24 dev veth3 src 10.0.0.3 metric 1
for ns in "$A" "$B"; do
	nsx "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0
done
nsx "$A" sysctl -qw net.ipv4.conf.veth1.rp_filter=0
nsx "$B" sysctl -qw net.ipv4.conf.veth4.rp_filter=0
step "a lower-metric route added later: A follows it" "$A" 10.9.0.2
endpoint_is "B's endpoint for A is the new route's source" "$B" "$pub_a" \
	10.0.0.3
ip -n "$A" link del veth3

# ---- 4. a tunnel inside a tunnel: ftv1's endpoint is B's address on
# ftv0, over IPv4 and then IPv6; ftv1's segments, ftv0's inner packets,
# are sealed again by ftv0. A megabyte each way through both.
{ ftv_keypair c && ftv_keypair d; } || ktap_bail "cannot make keys"
ip -n "$A" link add ftv1 type ftv
ip -n "$B" link add ftv1 type ftv
ip -n "$A" addr add 10.19.0.1/24 dev ftv1
ip -n "$B" addr add 10.19.0.2/24 dev ftv1
nsx "$A" "$FTVCTL" set ftv1 private-key "$FTV_TMP/c.key" listen-port 5
nsx "$B" "$FTVCTL" set ftv1 private-key "$FTV_TMP/d.key" listen-port 5
nsx "$A" "$FTVCTL" peer add ftv1 "$(pubkey_of d)" allowed-ips 10.19.0.2/32 \
	endpoint 10.9.0.2:5
nsx "$B" "$FTVCTL" peer add ftv1 "$(pubkey_of c)" allowed-ips 10.19.0.1/32
ip -n "$A" link set ftv1 up
ip -n "$B" link set ftv1 up
dial "10.0.0.2:$FTV_PORT"
random_file nested 1
for inner in 10.9.0.2 "[fd09::2]"; do
	nsx "$A" "$FTVCTL" peer del ftv1 "$(pubkey_of d)"
	nsx "$A" "$FTVCTL" peer add ftv1 "$(pubkey_of d)" \
		allowed-ips 10.19.0.2/32 endpoint "$inner:5"
	if connect_ping "$A" 10.19.0.2 10 &&
	   transfer "$A" "$B" 10.19.0.2 5201 "$FTV_TMP/nested" 60 &&
	   transfer "$B" "$A" 10.19.0.1 5202 "$FTV_TMP/nested" 60; then
		ktap_ok "a tunnel inside a tunnel carries traffic, endpoint $inner"
	else
		ktap_fail "a tunnel inside a tunnel carries traffic, endpoint $inner"
		show_both
		nsx "$A" "$FTVCTL" show ftv1 2>&1 | ktap_diag
	fi
done

ktap_finish
