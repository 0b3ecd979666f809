#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A long path with a router, every offload at its default: R holds each
# packet 100 ms each way (netem), a 200 ms round trip such as users see to
# a server abroad. 16 MB go each way through the tunnel, one inner TCP
# stream at a time, and must arrive intact; while each runs, the sender's
# socket is sampled (ss -tin) and must keep more than 64 segments in
# flight at some point. An inner sender held to a few segments per
# one-way delay (what TCP small queues did while the sealed segments on
# an outer superpacket's frag list stayed charged to the inner socket
# until the far end freed them: 16 in flight, 1-3 Mbit/s) fails that,
# whatever the emulated CPU's speed; no time is measured.
#
#   ns C (initiator)         ns R (router)                  ns S (responder)
#   +--------------------+  +--------------------------+   +--------------------+
#   | ftv0 10.9.0.1      |  | netem delay 100ms on     |   | ftv0 10.9.0.2      |
#   |                    |  |   vethc and veths        |   |   :51820           |
#   | veth0 192.168.10.2 |--| vethc 192.168.10.1       |   |                    |
#   |                    |  | veths 198.51.100.1       |---| veth0 198.51.100.2 |
#   +--------------------+  +--------------------------+   +--------------------+
#     nc C -> S, then S -> C, 16 MB each; ss -tin on the sender meanwhile

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

SIZE_MB=16
DELAY=100ms
# More than this many segments in flight at once: a sender not held back.
INFLIGHT_MIN=64

for tool in nc tc ss; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 5
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
for dev in vethc veths; do
	netem "$R" "$dev" delay "$DELAY" limit 100000 ||
		ktap_bail "cannot set up netem on R's $dev"
done
ktap_diag "R: netem delay $DELAY on vethc and veths; offloads: $(nsx "$C" ethtool -k veth0 2>/dev/null |
	awk '/^tcp-segmentation-offload|^generic-segmentation-offload/ { printf "%s %s ", $1, $2 }')"

if connect_ping "$C" 10.9.0.2 60; then
	ktap_ok "C reaches S over the 200 ms path"
else
	ktap_fail "C reaches S over the 200 ms path"
	ktap_bail "no tunnel"
fi

# inflight_sampler NS PORT FILE : until killed, write to FILE the most
# segments NS's TCP sockets to PORT have had unacknowledged in one sample
inflight_sampler()
{
	local most=0 n

	while :; do
		for n in $(nsx "$1" ss -tinH "dport = :$2" 2>/dev/null |
			grep -o 'unacked:[0-9]*' | cut -d: -f2); do
			if [ "$n" -gt "$most" ]; then
				most=$n
				echo "$most" >"$3"
			fi
		done
		sleep 0.1
	done
}

random_file data "$SIZE_MB"
# one_way FROM TO ADDR PORT NAME : the transfer and what its sender kept
# in flight
one_way()
{
	local from=$1 to=$2 addr=$3 port=$4 name=$5 pid most

	echo 0 >"$FTV_TMP/inflight.$name"
	inflight_sampler "$from" "$port" "$FTV_TMP/inflight.$name" &
	pid=$!
	bg_track "$pid"
	if transfer "$from" "$to" "$addr" "$port" "$FTV_TMP/data" 600; then
		ktap_ok "$name: $SIZE_MB MB arrive intact"
	else
		ktap_fail "$name: $SIZE_MB MB arrive intact"
		nsx "$from" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	most=$(cat "$FTV_TMP/inflight.$name")
	ktap_result "$name: the inner sender kept up to $most segments in flight, more than $INFLIGHT_MIN" \
		"$([ "$most" -gt "$INFLIGHT_MIN" ]; echo $?)"
}

one_way "$C" "$S" 10.9.0.2 5001 "C to S"
one_way "$S" "$C" 10.9.0.1 5002 "S to C"

ktap_finish
