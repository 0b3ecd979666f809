#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer whose message counter jumps far ahead costs the other end no more
# than any message. The replay window takes any counter ahead of it, and
# until 2026-12-02 the reorder ring (module/reorder.c), which a session
# over several connections delivers through, released one slot per
# counter it skipped, bottom halves off: a jump of 2^40 held a CPU in
# softirq for minutes, a stall of the whole host. Now a jump of a ring or
# more releases what is held and moves on at once.
#  - with flows 2, the debug build's counter_jump makes the next message
#    sealed on this host, by either end, jump its counter by 2^40 (the
#    kernel log says so);
#  - C and S keep answering pings through the tunnel, each way, across
#    the jump;
#  - the kernel logs no RCU stall, soft lockup or task blocked meanwhile.
#
#   ns C (initiator)          ns R (router)              ns S (responder)
#   +--------------------+   +------------------------+  +--------------------+
#   | ftv0 10.9.0.1      |   | netem delay 5ms        |  | ftv0 10.9.0.2      |
#   |   flows 2          |   |   each way             |  |   :51820           |
#   | veth0 192.168.10.2 |---|                        |--| veth0 198.51.100.2 |
#   +--------------------+   +------------------------+  +--------------------+

# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC2317 # helpers run via wait_for
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib_paths.sh
. "$(dirname "$0")/lib_paths.sh"
trap cleanup EXIT

JUMP=1099511627776	# 2^40

ktap_plan 5
ftv_require
command -v tc >/dev/null || ktap_skip_all "tc is not installed"
ftv_use_debug_module

kmark=$(kmsg_mark)
paths_topology || ktap_bail "cannot set up the namespaces"
netem "$R" vethc delay 5ms
netem "$R" veths delay 5ms
paths_ftv 4 || ktap_bail "cannot configure ftv with ftvctl"
S_KEY=$(pubkey_of s)
connect_ping "$C" 10.9.0.2 || ktap_bail "no tunnel"
flows_up_is() { [ "$(ftv_peer_json "$C" ftv0 "$S_KEY" 'p["flows_up"]')" = "$1" ]; }
nsx "$C" "$FTVCTL" peer set ftv0 "$S_KEY" flows 2 ||
	ktap_bail "ftvctl peer set ... flows 2 failed"
wait_for 20 flows_up_is 2 || ktap_bail "the join did not come up"

bg_ping "$C" 10.9.0.2 c
bg_ping "$S" 10.9.0.1 s
jumped() { dmesg_since "$kmark" | grep -q "counter jumped by $JUMP"; }
echo "$JUMP" >/sys/module/ftv/parameters/counter_jump
if wait_for 10 jumped; then
	ktap_ok "a message's counter jumped by 2^40"
else
	ktap_fail "a message's counter jumped by 2^40"
fi
# replies NAME : the replies in ping NAME's output so far
replies() { grep -c "bytes from" "$FTV_TMP/ping.$1"; }
c0=$(replies c)
s0=$(replies s)
# more_replies NAME N : ten more than N
more_replies() { [ "$(replies "$1")" -ge $(($2 + 10)) ]; }
if wait_for 20 more_replies c "$c0"; then
	ktap_ok "C's pings to S are answered after the jump"
else
	ktap_fail "C's pings to S are answered after the jump"
fi
if wait_for 20 more_replies s "$s0"; then
	ktap_ok "S's pings to C are answered after the jump"
else
	ktap_fail "S's pings to C are answered after the jump"
fi
bg_ping_stop c
ktap_diag "C's pings: $PING_GOT of $PING_SENT answered"
bg_ping_stop s
ktap_diag "S's pings: $PING_GOT of $PING_SENT answered"
stalls=$(dmesg_since "$kmark" |
	grep -E "rcu.*(stall|detected)|soft lockup|blocked for more than" | head -n 3)
ktap_eq "no RCU stall, soft lockup or blocked task logged" "" "$stalls"
ktap_result "the tunnel still works both ways" \
	"$(ping_ok "$C" 10.9.0.2 && ping_ok "$S" 10.9.0.1; echo $?)"

ktap_finish
