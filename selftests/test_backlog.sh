#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The queue that hands opened packets to the inner stack is bounded. Each
# of B's connections delivers through one CPU's NAPI cell, which polls one
# budget at a time while every CPU's crypt workers may feed it; it holds
# at most three times net.core.netdev_max_backlog packets (that sysctl set
# to 1 here, so that the emulated CPUs overflow it for sure), and what
# would go past that is dropped and counted (the peers' "backlog" drops,
# and rx_dropped). Three peers send B TCP at full rate at once (a GSO
# superpacket's job delivers tens of packets in one go, more than the
# bound of 3 this sysctl gives; 64-byte datagrams arrive one per job and
# the poll that follows each delivery on the same CPU drains them),
# through an inner path made costly by 1,500 rules B's input chain walks
# for every packet. Checked: backlog drops are counted, B's slab memory
# stays within 16 MB of where it started while the flood runs, and B
# still answers pings once it ends.
#
#   ns A1..A3 (initiators)                      ns B (responder)
#   +--------------------------+               +----------------------------+
#   | ftv0 10.9.0.1N/24        |               | ftv0 10.9.0.2/24 :51820    |
#   | iperf3 (TCP)             |               | nft: 1500 rules on input   |
#   | veth0 10.0.N.1/24        |---------------| vethN 10.0.N.2/24          |
#   +--------------------------+               +----------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

BACKLOG=1
FLOOD_S=6
SLAB_MB=16
RULES=1500

for tool in iperf3 nft; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 4
ftv_require

orig=$(sysctl -n net.core.netdev_max_backlog)
defer "sysctl -qw net.core.netdev_max_backlog=$orig"

star_ftv 3 || ktap_bail "cannot set up A1..A3 and B"

# A costly inner path: every datagram walks $RULES rules that do not match.
{
	echo "table inet cost {"
	echo "	chain input { type filter hook input priority filter; policy accept;"
	for i in $(seq 1 "$RULES"); do
		echo "		ip saddr 192.0.2.$((i % 250)) udp dport $((10000 + i)) counter drop"
	done
	echo "	}"
	echo "}"
} | nsx "$B" nft -f - || ktap_bail "cannot load B's rules"

sysctl -qw net.core.netdev_max_backlog="$BACKLOG" ||
	ktap_bail "cannot set netdev_max_backlog"
slab_kb() { awk '/^Slab:/ { print $2 }' /proc/meminfo; }
slab0=$(slab_kb)
ip netns exec "$B" iperf3 -s -D -p 5201 >/dev/null 2>&1
ip netns exec "$B" iperf3 -s -D -p 5202 >/dev/null 2>&1
ip netns exec "$B" iperf3 -s -D -p 5203 >/dev/null 2>&1
up() { nsx "$B" ss -Hltn "sport = :$1" | grep -q .; }
for p in 5201 5202 5203; do
	wait_for 10 up "$p" || ktap_bail "iperf3 does not listen on $p"
done
pids=()
for n in 1 2 3; do
	a=A$n
	ip netns exec "${!a}" iperf3 -c 10.9.0.2 -p "520$n" \
		-t "$FLOOD_S" >"$FTV_TMP/flood.$n" 2>&1 &
	pids+=($!)
	bg_track $!
done
most=$slab0
while kill -0 "${pids[0]}" 2>/dev/null; do
	s=$(slab_kb)
	[ "$s" -gt "$most" ] && most=$s
	sleep 0.2
done
wait "${pids[@]}"
sysctl -qw net.core.netdev_max_backlog="$orig"

drops=$(ftv_json "$B" ftv0 'sum(p["drops"].get("backlog", 0) for p in d["peers"])')
ktap_diag "B's peers dropped $drops packets at the full delivery queue; rx_dropped $(nsx "$B" cat /sys/class/net/ftv0/statistics/rx_dropped)"
ktap_result "the full delivery queue drops and counts (backlog drops $drops)" \
	"$([ "${drops:-0}" -gt 0 ]; echo $?)"
grown=$(((most - slab0) / 1024))
ktap_result "B's slab grew by at most $SLAB_MB MB during the flood ($grown MB)" \
	"$([ "$grown" -le "$SLAB_MB" ]; echo $?)"
ktap_check "B still answers A1's pings" connect_ping "$A1" 10.9.0.2 10
ktap_check "and A3's" connect_ping "$A3" 10.9.0.2 10

ktap_finish
