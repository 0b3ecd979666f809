#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One server, three clients: the server picks the peer by allowed-ips,
# counts each peer's traffic apart, and drops a packet whose inner source
# belongs to another peer.
#
#                     ns SW: bridge br0
#          +-------------+-------------+-------------+
#          |             |             |             |
#   ns S: veth0     ns C1: veth0  ns C2: veth0  ns C3: veth0
#   10.0.0.1        10.0.0.11     10.0.0.12     10.0.0.13
#   ftv0 10.9.0.1   ftv0 10.9.0.2 ftv0 10.9.0.3 ftv0 10.9.0.4
#   :51820          peer S: endpoint 10.0.0.1:51820,
#   peers Ci:       allowed-ips 10.9.0.0/24
#   allowed-ips 10.9.0.(i+1)/32
#
# Clients connect first (only they know an endpoint); then the server can
# reach each of them.

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 13
ftv_require

CLIENTS="1 2 3"

# underlay NS PORTNAME ADDR : NS's veth0 on the bridge with ADDR/24
underlay()
{
	veth_pair "$1" veth0 "$SW" "$2" &&
		ip -n "$SW" link set "$2" master br0 &&
		ip -n "$1" addr add "$3/24" dev veth0
}

client_ns()
{
	local var="C$1"
	echo "${!var}"
}

setup_server()
{
	underlay "$S" p0 10.0.0.1 &&
		ftv_keypair s && ftv_dev "$S" 1 &&
		nsx "$S" "$FTVCTL" set ftv0 private-key "$FTV_TMP/s.key" \
			listen-port "$FTV_PORT"
}

# setup_client I : no listen port; it only connects out
setup_client()
{
	local i=$1 ns

	ns=$(client_ns "$i")
	underlay "$ns" "p$i" "10.0.0.1$i" &&
		ftv_keypair "c$i" && ftv_dev "$ns" $((i + 1)) &&
		nsx "$ns" "$FTVCTL" set ftv0 private-key "$FTV_TMP/c$i.key" &&
		nsx "$ns" "$FTVCTL" peer add ftv0 "$(pubkey_of s)" \
			endpoint "10.0.0.1:$FTV_PORT" allowed-ips 10.9.0.0/24 &&
		nsx "$S" "$FTVCTL" peer add ftv0 "$(pubkey_of "c$i")" \
			allowed-ips "10.9.0.$((i + 1))/32"
}

ns_create SW S C1 C2 C3 || ktap_bail "cannot create namespaces"
if ! ip -n "$SW" link add name br0 type bridge ||
   ! ip -n "$SW" link set br0 up; then
	ktap_bail "cannot create the bridge"
fi
setup_server || ktap_bail "cannot set up the server"
for i in $CLIENTS; do
	setup_client "$i" || ktap_bail "cannot set up client $i"
done

for i in $CLIENTS; do
	if connect_ping "$(client_ns "$i")" 10.9.0.1; then
		ktap_ok "client $i pings the server"
	else
		ktap_fail "client $i pings the server"
	fi
done
for i in $CLIENTS; do
	ktap_check "the server pings client $i" \
		nsx "$S" ping -c 2 -i 0.2 -W 2 "10.9.0.$((i + 1))"
done

# rx_of I PYEXPR : PYEXPR over client I's peer p on the server
rx_of()
{
	ftv_peer_json "$S" ftv0 "$(pubkey_of "c$1")" "$2"
}

all=$(for i in $CLIENTS; do rx_of "$i" 'p["rx_bytes"] > 0'; done | sort -u)
ktap_eq "every client's peer on the server has received bytes" True "$all"

# 5 x 1000 bytes of ICMP from client i must land on peer i and nowhere
# else; the others may see at most a keepalive or two.
for i in $CLIENTS; do
	declare -A before=()
	for j in $CLIENTS; do
		before[$j]=$(rx_of "$j" 'p["rx_bytes"]')
	done
	nsx "$(client_ns "$i")" ping -q -c 5 -i 0.2 -W 2 -s 1000 10.9.0.1 >/dev/null
	good=1
	diag=
	for j in $CLIENTS; do
		delta=$(($(rx_of "$j" 'p["rx_bytes"]') - ${before[$j]:-0}))
		diag="$diag peer$j+$delta"
		if [ "$j" = "$i" ]; then
			[ "$delta" -ge 5000 ] || good=0
		else
			[ "$delta" -lt 1000 ] || good=0
		fi
	done
	ktap_result "traffic from client $i is counted on its peer only" $((1 - good))
	[ "$good" = 1 ] || ktap_diag "rx_bytes deltas:$diag"
	unset before
done

# Client 1 claims client 2's inner address.
nsx "$C1" ip addr add 10.9.0.3/32 dev ftv0
rx2=$(rx_of 2 'p["rx_bytes"]')
out=$(nsx "$C1" ping -c 3 -W 1 -I 10.9.0.3 10.9.0.1 2>&1)
if grep -q "100% packet loss" <<<"$out"; then
	ktap_ok "client 1 spoofing client 2's inner address gets no answer"
else
	ktap_fail "client 1 spoofing client 2's inner address gets no answer"
	ktap_diag <<<"$out"
fi
na=$(rx_of 1 'p["drops"]["not_allowed"]' 2>&1)
if [[ "$na" =~ ^[0-9]+$ ]] && [ "$na" -ge 1 ]; then
	ktap_ok "the server counts it in client 1's drops.not_allowed ($na)"
else
	ktap_fail "the server counts it in client 1's drops.not_allowed"
	ktap_diag "not_allowed: $na"
	nsx "$S" "$FTVCTL" show ftv0 2>&1 | ktap_diag
fi
ktap_eq "client 2's peer on the server received nothing from it" \
	"$rx2" "$(rx_of 2 'p["rx_bytes"]')"

ktap_finish
