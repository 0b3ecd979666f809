#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A local TCP sender whose packets ftv carries may keep about 8 ms of its
# pacing rate queued on the host (sk_pacing_shift 7), not the one
# millisecond TCP allows by default: a packet waits longer than that in
# ftv (its crypt job, its connection's order), and TCP small queues,
# counting it as queued all the while, held four streams over a 200 ms
# path to half their window. The same budget sizes the sender's TSO
# bursts, which is what this test can see without timing anything: an
# iperf3 stream capped at 20 Mbit/s (SO_MAX_PACING_RATE, --fq-rate) makes
# superpackets of about 2.4 KB per millisecond of budget, so two segments
# (2.7 KB) with the default and about fourteen (19 KB) with ftv's. ftv0's
# capture sees them before they are split; the largest must pass 8 KB.
#
# R delays each packet 10 ms each way: below about half a millisecond of
# round trip TCP adds a whole 64 KB to every burst (tcp_tso_rtt_log), and
# the path would say nothing of the pacing budget.
#
#   ns C                       ns R                   ns S
#   +------------------+      +---------------+      +------------------+
#   | iperf3 -c        |      | forwards;     |      | iperf3 -s        |
#   |  --fq-rate 20M   |      | netem 10 ms   |      |                  |
#   | ftv0 10.9.0.1    |------|               |------| ftv0 10.9.0.2    |
#   +------------------+      +---------------+      +------------------+
#     tcpdump on C's ftv0: the inner superpackets, before ftv seals them

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

RATE=20M
# Past what one millisecond of 20 Mbit/s (2.4 KB, two segments) makes.
BURST_MIN=8000

for tool in iperf3 tcpdump; do
	command -v "$tool" >/dev/null || ktap_skip_all "$tool is not installed"
done
ktap_plan 3
ftv_require

paths_topology || ktap_bail "cannot set up the namespaces"
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
for dev in vethc veths; do
	netem "$R" "$dev" delay 10ms || ktap_bail "cannot set up netem on R's $dev"
done
if connect_ping "$C" 10.9.0.2 60; then
	ktap_ok "C reaches S through the tunnel"
else
	ktap_fail "C reaches S through the tunnel"
	ktap_bail "no tunnel"
fi

tmpdir
ip netns exec "$S" iperf3 -s -1 >"$FTV_TMP/iperf3-server.out" 2>&1 &
bg_track $!
wait_for 10 transfer_listening "$S" 5201 || ktap_bail "iperf3 server did not start"
capture "$C" ftv0 "$FTV_TMP/inner.pcap" -s 96 "tcp dst port 5201" ||
	ktap_bail "tcpdump did not start"
nsx "$C" iperf3 -c 10.9.0.2 -t 3 --fq-rate "$RATE" >"$FTV_TMP/iperf3.out" 2>&1
ktap_result "an iperf3 stream capped at $RATE runs through ftv" $?
capture_stop

largest=$(tcpdump -nr "$FTV_TMP/inner.pcap" 2>/dev/null |
	awk '{ for (i = 1; i < NF; i++) if ($i == "length") { n = $(i + 1) + 0; if (n > m) m = n } } END { print m + 0 }')
ktap_result "the sender's largest superpacket into ftv0: $largest bytes, more than $BURST_MIN" \
	"$([ "$largest" -gt "$BURST_MIN" ]; echo $?)"

ktap_finish
