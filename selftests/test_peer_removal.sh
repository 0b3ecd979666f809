#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer's removal ends every connection it had, whatever state
# each is in: the current one, and those that renewals left retired or
# lingering. The security review of 891c642 found the retired and
# lingering ones left in B's connection table after `peer del`, pointing
# at the freed peer; any segment on one of their tuples, junk included,
# then wrote into freed memory (with slub_debug=FZPU: "Poison
# overwritten"). Here:
#
#  1. A renews its session every 2 s (debug module), so B holds several
#     retired connections of A.
#  2. B removes A: within a few seconds B has destroyed every connection
#     it created (pr_debug created/destroyed pairs, B's being those on
#     its listen port).
#  3. Junk on each of A's old tuples then reaches B's host stack, which
#     answers it with a RST, as for any port without a socket; nothing
#     of ftv's takes it.
#     Nothing writes into freed memory meanwhile: under the debug
#     kernel KASAN would say so, and make check boots the stock kernels
#     with slub_debug, whose poisoned objects are validated here.
#  4. The same happens when the whole device goes: a peer of a deleted
#     device leaves nothing behind (kernel log checked by run.sh).
#  5. A re-added peer with the same key connects again.
#
#   ns A (initiator)                ns B (responder, listens on 51820)
#   +-------------------------+     +-------------------------+
#   | ftv0 10.9.0.1           |     | ftv0 10.9.0.2           |
#   | veth0 10.0.0.1          |-----| veth0 10.0.0.2          |
#   |  peer_removal_sendseg.py junk -->    |     |  tcpdump: RSTs it sends |
#   +-------------------------+     +-------------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT

SEND="$FTV_ROOT/selftests/lib/peer_removal_sendseg.py"
PARAMS=/sys/module/ftv/parameters

ktap_plan 8
ftv_require
command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is not installed"
ftv_use_debug_module
echo 2 >"$PARAMS/rekey_after_seconds"
echo 60 >"$PARAMS/reject_after_seconds"

kmark=$(kmsg_mark)
pair_underlay 4 || ktap_bail "cannot set up the underlay"
pair_ftv || ktap_bail "cannot configure ftv with ftvctl"
tmpdir
connect_ping "$A" 10.9.0.2 || ktap_bail "no tunnel"

# B's connections are on its listen port: "connection 51820:P".
b_count()
{
	dmesg_since "$kmark" | grep -c "connection $FTV_PORT:[0-9]* $1"
}
b_all_destroyed()
{
	[ "$(b_count created)" -eq "$(b_count destroyed)" ]
}
# A's ports, oldest first
a_ports()
{
	dmesg_since "$kmark" |
		sed -n "s/.*connection \([0-9]*\):$FTV_PORT created.*/\1/p"
}
renewed()
{
	ip netns exec "$A" ping -q -c 1 -W 1 10.9.0.2 >/dev/null 2>&1
	[ "$(a_ports | wc -l)" -ge 4 ]
}

if wait_for 60 renewed; then
	ktap_ok "A renewed its session $(($(a_ports | wc -l) - 1)) times"
else
	ktap_fail "A renewed its session at least 3 times"
fi
ktap_diag "B: $(b_count created) connections created, $(b_count destroyed) destroyed before the removal"

capture "$B" veth0 "$FTV_TMP/b.pcap" "src host 10.0.0.2 and tcp[tcpflags] & tcp-rst != 0" ||
	ktap_bail "cannot capture on B"
ktap_check "B removes A" nsx "$B" "$FTVCTL" peer del ftv0 "$(pubkey_of a)"
if wait_for 10 b_all_destroyed; then
	ktap_ok "B destroyed every connection it had with A ($(b_count destroyed))"
else
	ktap_fail "B destroyed every connection it had with A"
	ktap_diag "created $(b_count created), destroyed $(b_count destroyed)"
fi

ports=$(a_ports)
n=0
for p in $ports; do
	nsx "$A" "$PYTHON" "$SEND" 10.0.0.1 10.0.0.2 "$p" "$FTV_PORT" \
		flags=PA len=120 count=2
	n=$((n + 1))
done
rsts()
{
	tcpdump -n -r "$FTV_TMP/b.pcap" 2>/dev/null | awk '{ print $5 }' |
		sort -u | wc -l
}
all_answered()
{
	[ "$(rsts)" -ge "$n" ]
}
wait_for 10 all_answered
capture_stop
got=$(rsts)
if [ "$got" -ge "$n" ]; then
	ktap_ok "junk on each of A's $n old tuples reaches B's host stack (RSTs to $got ports)"
else
	ktap_fail "junk on each of A's $n old tuples reaches B's host stack"
	ktap_diag "B answered $got of them with a RST"
fi

if ! freed_memory_checked; then
	ktap_skip "nothing wrote into freed memory" "neither KASAN nor slub_debug in this kernel"
else
	reports=$(freed_memory_reports "$kmark")
	if [ -z "$reports" ]; then
		ktap_ok "nothing wrote into freed memory (the kernel's checker found nothing)"
	else
		ktap_fail "nothing wrote into freed memory"
		while IFS= read -r line; do ktap_diag "$line"; done <<<"$reports"
	fi
fi

# The whole device: A's connections to B and their peer go with ftv0.
ktap_check "A's ftv0 is deleted" ip -n "$A" link del ftv0
a_gone()
{
	[ "$(dmesg_since "$kmark" | grep -c "connection [0-9]*:$FTV_PORT created")" -eq \
	  "$(dmesg_since "$kmark" | grep -c "connection [0-9]*:$FTV_PORT destroyed")" ]
}
if wait_for 10 a_gone; then
	ktap_ok "A destroyed every connection of its deleted ftv0"
else
	ktap_fail "A destroyed every connection of its deleted ftv0"
fi

ftv_dev "$A" 1 || ktap_bail "cannot re-create A's ftv0"
nsx "$A" "$FTVCTL" set ftv0 private-key "$FTV_TMP/a.key" || ktap_bail "cannot key A"
nsx "$A" "$FTVCTL" peer add ftv0 "$(pubkey_of b)" endpoint "$B_ENDPOINT" \
	allowed-ips 10.9.0.2/32 || ktap_bail "cannot add B on A"
nsx "$B" "$FTVCTL" peer add ftv0 "$(pubkey_of a)" allowed-ips 10.9.0.1/32 ||
	ktap_bail "cannot add A on B again"
if connect_ping "$A" 10.9.0.2; then
	ktap_ok "A, removed and added again, reaches B"
else
	ktap_fail "A, removed and added again, reaches B"
fi

ktap_finish
