#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 50 MB of random bytes through the tunnel over an inner TCP connection
# (nc), compared by sha256 on both ends.
#
#   ns A (initiator)                         ns B (responder)
#   +---------------------------+           +---------------------------+
#   | nc -N 10.9.0.2 5001 <file |           | nc -l 5001 >file          |
#   | ftv0 10.9.0.1/24          |           | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |-----------| veth0 10.0.0.2/24         |
#   +---------------------------+           +---------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

SIZE_MB=${FTV_TRANSFER_MB:-50}
TCP_PORT=5001

command -v nc >/dev/null || ktap_skip_all "nc (netcat-openbsd) is not installed"
ktap_plan 4
ftv_require

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir

head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom >"$FTV_TMP/send"
want=$(sha256sum <"$FTV_TMP/send" | awk '{ print $1 }')

ktap_check "the tunnel is up (A pings B)" connect_ping "$A" 10.9.0.2 ||
	ktap_bail "no tunnel, nothing to transfer over"

listening()
{
	nsx "$B" ss -Hltn "sport = :$TCP_PORT" | grep -q .
}

# Not through nsx: a backgrounded function would be a subshell, and $!
# its pid rather than nc's.
ip netns exec "$B" nc -l "$TCP_PORT" >"$FTV_TMP/recv" &
rpid=$!
bg_track "$rpid"
if ! wait_for 10 listening; then
	ktap_bail "nc does not listen in B"
fi

start=$EPOCHREALTIME
if nsx "$A" timeout 300 nc -N 10.9.0.2 "$TCP_PORT" <"$FTV_TMP/send"; then
	ktap_ok "$SIZE_MB MB sent through the tunnel"
else
	ktap_fail "$SIZE_MB MB sent through the tunnel"
fi

# The receiver ends when the sender's FIN arrives.
receiver_done()
{
	! kill -0 "$rpid" 2>/dev/null
}
if wait_for 60 receiver_done; then
	ktap_ok "the receiver saw the end of the stream"
else
	ktap_fail "the receiver saw the end of the stream"
fi
end=$EPOCHREALTIME

got=$(sha256sum <"$FTV_TMP/recv" | awk '{ print $1 }')
size=$(stat -c %s "$FTV_TMP/recv")
if ktap_eq "sha256 of the received bytes matches" "$want" "$got"; then
	ktap_diag "$(awk -v b="$size" -v s="$start" -v e="$end" \
		'BEGIN { printf "%.1f MB in %.1f s, %.1f Mbit/s (emulated CPU: not a benchmark)", b / 1048576, e - s, b * 8 / (e - s) / 1e6 }')"
else
	ktap_diag "received $size bytes of $((SIZE_MB * 1024 * 1024))"
fi

ktap_finish
