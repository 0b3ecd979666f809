#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Forward error correction on a lossy path. netem on both ends of
# the cable loses 5 %, then 10 %, of the segments, duplicates 1 % and sends
# 10 % ahead of the others (which wait 2 ms). First with the cable's
# offloads off, so that netem drops wire segments, one message each, from
# the first byte on, whatever ftv sends; then the 5 % case again with
# every offload at its default, as users run it: a job that carries
# repair messages leaves as wire packets then too, while one without
# (before the loss is measured) leaves as a superpacket that netem drops
# whole. With "fec auto" (the default) each end measures the loss of what
# it receives, reports it, and the other adds repair messages; the
# receiver rebuilds what was lost. Checked: 8 MB arrive intact at each
# loss rate, repair messages were sent and data rebuilt from them, ftvctl
# show says FEC is active with the K:M in use, lone packets (pings) are
# protected too, and neither end ever found the repairs futile (the loss
# is random, and they rebuild it: test_censor.sh has a policer's, which
# they do not); with "fec off" on B, A (on auto) sends B no repair,
# for B would rebuild nothing from it; and with "fec off" on A, A sends
# no repair message at all.
# No router: netem on each end's own cable holds and loses ftv's segments
# after they have left ftv, as a router's would (a delay there stalled
# ftv just as one on a router did); test_pacing.sh and test_longpath.sh
# put the delay on a router.
#
#   ns A (initiator)                             ns B (responder)
#   +---------------------------+               +---------------------------+
#   | nc -N 10.9.0.2 5001       |               | nc -l 5001 | sha256sum    |
#   | ftv0 10.9.0.1/24          |               | ftv0 10.9.0.2/24          |
#   | veth0 10.0.0.1/24         |---------------| veth0 10.0.0.2/24 :51820  |
#   |  offloads off, then on; netem: delay 2ms loss 5%/10% duplicate 1%    |
#   |  reorder 10%                                                         |
#   +---------------------------+               +---------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

SIZE_MB=8

for tool in nc tc ethtool; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 16
ftv_require

kmark=$(kmsg_mark)

pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
pub_a=$(pubkey_of a)
pub_b=$(pubkey_of b)
# offloads on|off : the cable's TSO, GSO, GRO and checksumming
offloads()
{
	local ns
	for ns in "$A" "$B"; do
		nsx "$ns" ethtool -K veth0 tso "$1" gso "$1" gro "$1" tx "$1" \
			>/dev/null || return 1
	done
}
offloads off || ktap_bail "cannot turn the cable's offloads off"

# impair LOSS : netem on both ends
impair()
{
	local ns
	for ns in "$A" "$B"; do
		netem "$ns" veth0 delay 2ms loss "$1%" duplicate 1% reorder 10% ||
			return 1
	done
}

# stat NS KEY PEER FIELD : a number from NS's ftvctl show --json
fec_stat()
{
	ftv_peer_json "$1" ftv0 "$2" "p[\"fec_stats\"][\"$3\"]" 2>/dev/null
}

impair 5 || ktap_bail "cannot set up netem"
if connect_ping "$A" 10.9.0.2 60; then
	ktap_ok "the tunnel comes up on the lossy path"
else
	ktap_fail "the tunnel comes up on the lossy path"
	ktap_bail "no tunnel"
fi

random_file data "$SIZE_MB"
# lossy_transfer LOSS WHAT : $SIZE_MB MB at LOSS % each way, rebuilt from
# repair messages
lossy_transfer()
{
	local before after

	impair "$1" || ktap_bail "cannot change netem"
	before=$(fec_stat "$B" "$pub_a" rebuilt)
	if transfer "$A" "$B" 10.9.0.2 5001 "$FTV_TMP/data" 600; then
		ktap_ok "$2: $SIZE_MB MB arrive intact"
	else
		ktap_fail "$2: $SIZE_MB MB arrive intact"
	fi
	after=$(fec_stat "$B" "$pub_a" rebuilt)
	if [ "${after:-0}" -gt "${before:-0}" ]; then
		ktap_ok "$2: B rebuilt $((after - before)) lost messages"
	else
		ktap_fail "$2: B rebuilt lost messages"
		nsx "$A" "$FTVCTL" show ftv0 2>&1 | ktap_diag
		nsx "$B" "$FTVCTL" show ftv0 2>&1 | ktap_diag
	fi
}
lossy_transfer 5 "5 % loss, offloads off"
lossy_transfer 10 "10 % loss, offloads off"
sent=$(fec_stat "$A" "$pub_b" repair_sent)
if [ "${sent:-0}" -gt 0 ]; then
	ktap_ok "A sent $sent repair messages"
else
	ktap_fail "A sent repair messages"
fi
ktap_eq "A's FEC is active toward B" True "$(fec_stat "$A" "$pub_b" active)"

# Lone packets are protected too: 200 pings of 1000 bytes, each way at
# 10 % loss, lose about 1 % of requests and 1 % of replies instead of
# 10 % of each.
out=$(nsx "$A" ping -q -c 200 -i 0.05 -W 2 -s 1000 10.9.0.2 2>&1)
lost=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' <<<"$out")
ktap_result "10 % loss each way: 200 lone 1000-byte pings lose ${lost:-?} %, at most 6 %" \
	"$(awk -v l="${lost:-100}" 'BEGIN { print !(l <= 6) }')"

# The K:M is the connection's, set when it plans a job: read right after
# the pings, not after the transfers, which under the debug kernel can
# end past a renewal (a new connection has planned nothing yet: 0:0).
k=$(fec_stat "$A" "$pub_b" data)
if [ "${k:-0}" -gt 0 ]; then
	ktap_ok "A's ftvctl show gives the K:M in use ($k:$(fec_stat "$A" "$pub_b" repair))"
else
	ktap_fail "A's ftvctl show gives the K:M in use"
	nsx "$A" "$FTVCTL" show ftv0 --json 2>&1 | ktap_diag
fi

offloads on || ktap_bail "cannot turn the cable's offloads back on"
lossy_transfer 5 "5 % loss, offloads on"

impair 1 || ktap_bail "cannot change netem"
random_file small 4
# no_repair WHAT CHECK : 4 MB at 1 % loss arrive intact, and A's count of
# repair messages sent does not move
no_repair()
{
	local before

	before=$(fec_stat "$A" "$pub_b" repair_sent)
	if transfer "$A" "$B" 10.9.0.2 5001 "$FTV_TMP/small" 600; then
		ktap_ok "$1, 1 % loss: 4 MB arrive intact"
	else
		ktap_fail "$1, 1 % loss: 4 MB arrive intact"
	fi
	ktap_eq "$1: $2" "$before" "$(fec_stat "$A" "$pub_b" repair_sent)"
}

ktap_eq "random loss: neither end found the repairs futile (kernel log)" 0 \
	"$(dmesg_since "$kmark" | grep -c "groups that lost data: none asked for")"

# ---- fec off on B only: B rebuilds nothing, so its loss reports say
# none, and A, on auto, sends no repair that nobody would use
nsx "$B" "$FTVCTL" peer set ftv0 "$pub_a" fec off ||
	ktap_diag "cannot set fec off on B"
# A report goes as B's loss interval ends: at least 128 messages.
nsx "$A" ping -q -f -c 300 10.9.0.2 >/dev/null
peer_loss_none() { [ "$(fec_stat "$A" "$pub_b" loss_ppm)" = 0 ]; }
wait_for 10 peer_loss_none || ktap_diag "A still hears of loss from B"
no_repair "fec off on B" "A, on auto, sent B no repair message"
nsx "$B" "$FTVCTL" peer set ftv0 "$pub_a" fec auto ||
	ktap_diag "cannot set fec auto on B"

# ---- fec off on A: the same path, and not one repair message from A
nsx "$A" "$FTVCTL" peer set ftv0 "$pub_b" fec off ||
	ktap_diag "cannot set fec off"
no_repair "fec off" "A sent no repair message"

ktap_finish
