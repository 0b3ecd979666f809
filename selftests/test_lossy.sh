#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Loss, reordering and duplication on the path. netem on both
# ends of the underlay link loses 5% of the segments, sends 25% of them
# ahead of the others (which wait 2 ms) and duplicates 1%. ftv itself
# retransmits nothing: the inner TCP does. The tunnel still comes up
# (SYNs are retransmitted, a lost key exchange is retried with a new
# connection), 20 MB arrive intact, and the duplicated segments are
# caught by the replay window rather than delivered twice.
# No router: netem on each end's own cable holds and loses ftv's segments
# after they have left ftv, as a router's would; test_pacing.sh and
# test_longpath.sh put the delay on a router.
#
#   ns A (initiator)                             ns B (responder)
#   +---------------------------+               +---------------------------+
#   | nc -N 10.9.0.2 5001       |               | nc -l 5001 | sha256sum    |
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24 :51820  |
#   |  netem (both directions): delay 2ms loss 5% duplicate 1% reorder 25% |
#   +---------------------------+               +---------------------------+

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

SIZE_MB=20
IMPAIR="delay 2ms loss 5% duplicate 1% reorder 25%"

for tool in nc tc; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 4
ftv_require

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
for ns in "$A" "$B"; do
	# shellcheck disable=SC2086 # the netem options are words
	netem "$ns" veth0 $IMPAIR || ktap_bail "cannot set up netem ($IMPAIR)"
done
ktap_diag "netem on both ends: $IMPAIR"
pub_a=$(pubkey_of a)

if connect_ping "$A" 10.9.0.2 60; then
	ktap_ok "the tunnel comes up on the impaired path"
else
	ktap_fail "the tunnel comes up on the impaired path"
	nsx "$A" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	ktap_bail "no tunnel"
fi

random_file data "$SIZE_MB"
if transfer "$A" "$B" 10.9.0.2 5001 "$FTV_TMP/data" 600; then
	ktap_ok "$SIZE_MB MB arrive intact"
else
	ktap_fail "$SIZE_MB MB arrive intact"
	nsx "$A" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	nsx "$B" "$FTVCTL" show ftv0 2>&1 | ktap_diag
fi

# qdisc_stat NS FIELD : a counter of veth0's netem qdisc
qdisc_stat()
{
	nsx "$1" tc -s qdisc show dev veth0 |
		awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f || $i == "(" f) { v = $(i + 1); sub(/,$/, "", v); print v; exit } }'
}
dropped=$(qdisc_stat "$A" "dropped")
ktap_diag "netem on A's side: $(nsx "$A" tc -s qdisc show dev veth0 | grep -m1 Sent)"
if [ "${dropped:-0}" -gt 0 ]; then
	ktap_ok "netem really dropped segments ($dropped from A)"
else
	ktap_fail "netem really dropped segments"
fi

replay=$(ftv_peer_json "$B" ftv0 "$pub_a" 'p["drops"]["replay"]' 2>&1)
if [[ "$replay" =~ ^[0-9]+$ ]] && [ "$replay" -gt 0 ]; then
	ktap_ok "B dropped the duplicated segments as replays ($replay)"
else
	ktap_fail "B dropped the duplicated segments as replays"
	ktap_diag "replay drops: $replay"
fi

ktap_finish
