#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Parallel crypto with packets in flight: every CPU seals and
# opens one connection's packets, so a peer's removal or a device's
# deletion finds jobs queued, being sealed or opened, and waiting to be
# sent or delivered in order. Four streams each way keep the queues
# full while:
#  1. B removes A (peer del) and adds it back: traffic resumes;
#  2. A's ftv0 is deleted under the load.
# Before that, 16 MB each way beside three iperf3 streams each way check
# that every byte arrives and that the inner TCP sockets saw nothing out
# of order (TCPOFOQueue: the cable here neither loses nor reorders, so
# only ftv could). Afterwards
# every device, peer and connection created was destroyed (the pr_debug
# lines balance) and the kernel log is clean (run.sh checks it; under the
# debug kernel KASAN and lockdep watch every job's connection).
#
#   ns A (initiator)                  ns B (responder)
#   +--------------------+           +--------------------+
#   | ftv0 10.9.0.1/24   |           | ftv0 10.9.0.2/24   |
#   | veth0 10.0.0.1/24  |-----------| veth0 10.0.0.2/24  |
#   +--------------------+           +--------------------+
#     iperf3 -P 4 both ways through ftv0

# run.sh: shares the VM
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

ktap_plan 8
ftv_require
command -v iperf3 >/dev/null || ktap_skip_all "iperf3 is not installed"

mark=$(kmsg_mark)
pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"

iperf_up() { nsx "$1" ss -Hltn "sport = :$2" | grep -q .; }
nsx "$B" iperf3 -s -D -p 5201 >/dev/null 2>&1
nsx "$A" iperf3 -s -D -p 5202 >/dev/null 2>&1
if ! wait_for 10 iperf_up "$B" 5201 || ! wait_for 10 iperf_up "$A" 5202; then
	ktap_bail "iperf3 does not listen"
fi

tx() { nsx "$1" cat /sys/class/net/ftv0/statistics/tx_bytes; }
# moved NS BYTES : the count of bytes NS's ftv0 sent is past BYTES
moved() { [ "$(tx "$1")" -gt "$2" ]; }

# ofo NS : segments NS's TCP received out of order so far
ofo()
{
	# shellcheck disable=SC2016 # awk's own $i
	ip netns exec "$1" awk '/^TcpExt:/ {
		if (!n) { for (i = 2; i <= NF; i++) name[i] = $i; n = 1; next }
		for (i = 2; i <= NF; i++) if (name[i] == "TCPOFOQueue") print $i
	}' /proc/net/netstat
}

# ---- 1. a transfer each way beside three iperf3 streams each way: the
# bytes and their order
head -c $((16 * 1024 * 1024)) /dev/urandom >"$FTV_TMP/send"
want=$(sha256sum <"$FTV_TMP/send" | awk '{ print $1 }')
ofo_a=$(ofo "$A") ofo_b=$(ofo "$B")
ip netns exec "$B" nc -l 5001 >"$FTV_TMP/recv-b" &
rb=$!
ip netns exec "$A" nc -l 5001 >"$FTV_TMP/recv-a" &
ra=$!
bg_track "$rb"
bg_track "$ra"
nc_up() { nsx "$1" ss -Hltn "sport = :5001" | grep -q .; }
if ! wait_for 10 nc_up "$B" || ! wait_for 10 nc_up "$A"; then
	ktap_bail "nc does not listen"
fi
ip netns exec "$A" iperf3 -c 10.9.0.2 -p 5201 -P 3 -t 8 >/dev/null 2>&1 &
ab=$!
ip netns exec "$B" iperf3 -c 10.9.0.1 -p 5202 -P 3 -t 8 >/dev/null 2>&1 &
ba=$!
bg_track "$ab"
bg_track "$ba"
nsx "$A" timeout 120 nc -N 10.9.0.2 5001 <"$FTV_TMP/send" &
sa=$!
nsx "$B" timeout 120 nc -N 10.9.0.1 5001 <"$FTV_TMP/send" &
sb=$!
wait "$sa" "$sb" "$ab" "$ba"
done_nc() { ! kill -0 "$ra" 2>/dev/null && ! kill -0 "$rb" 2>/dev/null; }
wait_for 60 done_nc || ktap_diag "a receiving nc did not see the end"
ktap_eq "16 MB each way at once, under load, arrive intact (A->B, B->A)" \
	"$want $want" \
	"$(sha256sum <"$FTV_TMP/recv-b" | awk '{ print $1 }') $(sha256sum <"$FTV_TMP/recv-a" | awk '{ print $1 }')"
ktap_eq "nothing reached the inner TCP out of order (A, B)" "0 0" \
	"$(($(ofo "$A") - ofo_a)) $(($(ofo "$B") - ofo_b))"

# ---- 2. the peer goes while both directions are loaded
ip netns exec "$A" iperf3 -c 10.9.0.2 -p 5201 -P 4 -t 60 >/dev/null 2>&1 &
ab=$!
ip netns exec "$B" iperf3 -c 10.9.0.1 -p 5202 -P 4 -t 60 >/dev/null 2>&1 &
ba=$!
bg_track "$ab"
bg_track "$ba"
start=$(tx "$B")
wait_for 30 moved "$B" $((start + 4000000)) ||
	ktap_diag "the load did not get going"
ktap_check "B removes A while four streams run each way" \
	nsx "$B" "$FTVCTL" peer del ftv0 "$(pubkey_of a)"
nsx "$B" "$FTVCTL" peer add ftv0 "$(pubkey_of a)" \
	allowed-ips 10.9.0.1/32,fd09::1/128 || ktap_diag "cannot add A back"
start=$(tx "$B")
ktap_check "traffic resumes once A is B's peer again" \
	wait_for 60 moved "$B" $((start + 4000000))

# ---- 3. A's device goes under the same load
start=$(tx "$A")
wait_for 30 moved "$A" $((start + 4000000)) ||
	ktap_diag "the load did not get going again"
ktap_check "ip link del ftv0 in A while four streams run each way" \
	timeout 60 ip -n "$A" link del ftv0
ktap_check "A's ftv0 is gone" wait_for 20 \
	eval "! ip -n '$A' link show ftv0 >/dev/null 2>&1"
kill "$ab" "$ba" 2>/dev/null
nsx "$B" ip link del ftv0

objects_balanced "$mark" 20
reports=$(freed_memory_reports "$mark")
if [ -z "$reports" ]; then
	ktap_ok "no write into freed memory reported"
else
	ktap_fail "no write into freed memory reported"
	ktap_diag "$reports"
fi

ktap_finish
