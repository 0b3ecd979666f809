#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Forged responses. An initiator waiting for the response to its
# initiation opens whatever arrives at the response's sequence number:
# two X25519 operations each, in softirq, for anyone who sees the
# connection. B here is no ftv at all but resp_flood_responder.py, which answers A's
# SYN with a SYN-ACK, waits for A's initiation and then sends 500 forged
# responses at once. A holds them to the handshake rate limit (20 a
# second from one address, bursts of 10), as the listen port holds
# initiations: most are refused unopened (A's peer counts them as
# ratelimited), and only the first few cost the X25519 work and fail
# authentication (bad_auth).
#
#   ns A (initiator)                             ns B (fake responder)
#   +---------------------------+               +---------------------------+
#   | ping 10.9.0.2 (to dial)   |               | resp_flood_responder.py: SYN-ACK, then |
#   | ftv0 10.9.0.1/24          |               |   500 forged responses    |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24         |
#   +---------------------------+               +---------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

RESP="$FTV_ROOT/selftests/lib/resp_flood_responder.py"
COUNT=500

ktap_plan 3
ftv_require

pair_underlay 4 || ktap_bail "cannot set up the underlay"
tmpdir
if ! { ftv_keypair a && ftv_keypair b; }; then
	ktap_bail "no keys"
fi
ftv_dev "$A" 1 || ktap_bail "no ftv0 in A"
if ! { nsx "$A" "$FTVCTL" set ftv0 private-key "$FTV_TMP/a.key" &&
       nsx "$A" "$FTVCTL" peer add ftv0 "$(pubkey_of b)" \
		endpoint "10.0.0.2:$FTV_PORT" allowed-ips 10.9.0.2/32; }; then
	ktap_bail "cannot configure A"
fi

nsx "$B" "$PYTHON" "$RESP" 10.0.0.2 "$FTV_PORT" "$COUNT" 20 >"$FTV_TMP/resp" 2>&1 &
resp=$!
bg_track "$resp"
# Something to send makes A dial; the fake responder answers the first SYN.
ip netns exec "$A" ping -q -c 8 -i 0.5 -W 1 10.9.0.2 >/dev/null 2>&1 &
bg_track $!
wait "$resp"
rc=$?
out=$(cat "$FTV_TMP/resp")
ktap_diag "resp_flood_responder.py: $out"
ktap_result "the fake responder sent its forged responses" "$rc"

drop() { ftv_peer_json "$A" ftv0 "$(pubkey_of b)" "p[\"drops\"].get(\"$1\", 0)"; }
# The last of them are still being counted as the segments drain.
counted() { [ $(($(drop ratelimited) + $(drop bad_auth))) -ge $((COUNT * 9 / 10)) ]; }
wait_for 10 counted
limited=$(drop ratelimited)
auth=$(drop bad_auth)
ktap_diag "A: ratelimited $limited, bad_auth $auth"
ktap_result "A refused most of them unopened ($limited of $COUNT ratelimited)" \
	"$([ "$limited" -ge $((COUNT * 8 / 10)) ]; echo $?)"
ktap_result "and opened at most a burst's worth and what the rate allows ($auth)" \
	"$([ "$auth" -le $((COUNT / 10)) ]; echo $?)"

ktap_finish
